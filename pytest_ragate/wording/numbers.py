"""How ragate writes numbers and counts: an interval, a p-value, a shift, a plural, a
floor's bound, a table's n, per-kind counts, a verdict's value with its estimate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ragate.scoring.registry import METRICS, Tally, figure_digits

if TYPE_CHECKING:
    from pytest_ragate.decision.floors import Verdict
    from pytest_ragate.scoring.floor import Floor

NAMED = 10  # members a message names before it says "and N more"
NAMED_WORSE = 10  # questions a failed baseline check names
NAMED_UNDECIDED = 3  # floors a FLOOR NOT DECIDED badge names
NAMED_MISSING = 5  # labelled questions without a verdict an agreement line names


def fmt_interval(interval: tuple[float, float] | None, digits: int = 2) -> str:
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]" if interval else "—"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def fmt_p(p: float | None) -> str:
    """A p-value as the rejudge table shows it: `0.003`, `<0.001`, or a dash."""
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_shift(shift: float | None, interval: tuple[float, float] | None) -> str:
    """`-0.25 [-0.40, -0.10]`, or a dash when no answer was graded by both judges."""
    if shift is None:
        return "—"
    return f"{shift:+.2f} {fmt_interval(interval)}"


def fmt_sig(p: float) -> str:
    """A p-value in two significant digits: `0.018`, `0.0012`, `2.3e-16`."""
    return f"{p:.2g}"


def bound(floor: Floor) -> str:
    """`≥ 0.80`, or `≤ 0.05` for an upper-bound floor: how every report prints a floor."""
    return f"{'≤' if floor.upper else '≥'} {floor.min:.{figure_digits(floor.metric)}f}"


def floor_figure(floor: Floor) -> str:
    """A table's floor column: `0.80`, or `≤ 0.05` for an upper-bound floor."""
    return bound(floor) if floor.upper else f"{floor.min:.2f}"


def shown(verdict: Verdict) -> str:
    """A verdict's value as a report shows it, with its estimate: `0.62 (ppi)`."""
    value = verdict.value
    text = "—" if value is None else f"{value:.{figure_digits(verdict.floor.metric)}f}"
    return f"{text} ({verdict.estimate})" if verdict.estimate and value is not None else text


def fmt_n(t: Tally | None) -> str:
    """A table's n: `20`, with repeats `28 questions × 3` (n counts questions), with
    conversations `20 in 8 conversations` (`40 in 5 conversations and 30 questions` beside
    questions asked alone)."""
    if t is None:
        return "0"
    if t.by == "conversations":
        return f"{t.n}{clusters_of(t).replace(' of ', ' in ', 1)}"
    return f"{t.questions} questions × {t.repeats}" if t.repeats > 1 else str(t.n)


def clusters_of(t: Tally) -> str:
    """What a clustered n is over: ` of 28 questions × 3` (repeats), ` of 8 conversations`
    (or ` of 8 conversations × 3 repeats`); questions asked alone beside conversations are
    questions (` of 5 conversations and 30 questions`), never conversations."""
    if t.by == "conversations":
        alone = t.questions - t.conversations
        return (f" of {plural(t.conversations, 'conversation')}"
                + (f" and {plural(alone, 'question')}" if alone > 0 else "")
                + (f" × {t.repeats} repeats" if t.repeats > 1 else ""))
    return f" of {t.questions} questions × {t.repeats}"


def fmt_counts(counts: list[tuple[str, Tally]]) -> str:
    """`single_doc 7/20` for proportions, `single_doc 0.75 (n=2)` for means."""
    return " · ".join(
        f"{kind} {t.k:g}/{t.n}" if METRICS[t.metric].aggregate == "proportion"
        else f"{kind} {t.value:.{figure_digits(t.metric)}f} (n={t.n})"
        for kind, t in counts if t.n)
