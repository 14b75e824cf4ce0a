"""What a slice floor says (`decision/slice_floors.py`, `scoring/slices.py`): its figure, interval
and shortfall test across its key, why it is not decided, and how a key's slices are titled
and summed up in the reports and the terminal (`outputs/slice_tables.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ragate.scoring import intervals
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import Tally, figure_digits, fmt_figure
from pytest_ragate.wording.numbers import NAMED, clusters_of, fmt_interval, fmt_sig, plural

if TYPE_CHECKING:
    from pytest_ragate.scoring.floor import Floor
    from pytest_ragate.scoring.slices import Correction, SliceFigure


# --- a floor over the slices of a key (scoring/slices.py) ------------------------------------

ADJUSTED_BY: dict[str, str] = {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted"}


def slice_name(key: str, value: str) -> str:
    """`lang=de`: a slice as its floor's name and every message say it."""
    return f"{key}={value}"


def _slice_against(floor: Floor, figure: SliceFigure) -> str:
    """`abstention_accuracy 0.71 < floor 0.85`: the slice's value on its side of the floor."""
    value, digits = figure.tally.value, figure_digits(floor.metric)
    if value is None:
        return f"{floor.metric}: nothing scored"
    below = value > floor.min if floor.upper else value < floor.min
    sign = (">" if below else "≤") if floor.upper else ("<" if below else "≥")
    return f"{floor.metric} {fmt_figure(floor.metric, value)} {sign} floor {floor.min:.{digits}f}"


def _slice_interval(floor: Floor, figure: SliceFigure) -> str:
    method = intervals.method(figure.tally)
    if method != "Wilson":  # slices.slice_interval
        method += ", at least Wilson's over the scores' sum"
    return (f"95% CI {fmt_interval(figure.interval, figure_digits(floor.metric))} "
            f"({method})")


def slice_needs(floor: Floor, figure: SliceFigure) -> str:
    """`insufficient n: needs about 66`, or why no n is named."""
    if figure.needs is not None:
        return f"insufficient n: needs about {figure.needs}"
    if not figure.tally.n:
        return "insufficient n: nothing of this slice was scored"
    if figure.tally.value == floor.min:
        return "insufficient n: its value is on the floor, no n would decide it"
    return "insufficient n: too few values or no spread to say how many would decide it"


def slice_message(floor: Floor, key: str, figure: SliceFigure, *, tested: int,
                  correction: Correction, alpha: float) -> str:
    """One slice's verdict: `lang=de abstention_accuracy 0.71 < floor 0.85 · n=42 · 95% CI
    [0.56, 0.83] (Wilson) · shortfall p=0.0034 (exact binomial), Holm-adjusted over 6 slices
    of lang: 0.02 ≤ 0.05`; `tested` is how many of the key's slices had a test."""
    head = f"{slice_name(key, figure.value)} {_slice_against(floor, figure)}"
    if figure.p_value is None or figure.adjusted is None:
        return f"{head} · n=0 · {slice_needs(floor, figure)}"
    count = f"n={figure.tally.n}" + (clusters_of(figure.tally) if figure.tally.clusters else "")
    sign = "≤" if figure.adjusted <= alpha else ">"
    test = (f"shortfall p={fmt_sig(figure.p_value)} ({figure.test}), "
            f"{ADJUSTED_BY[correction]} over {plural(tested, 'slice')} of {key}: "
            f"{fmt_sig(figure.adjusted)} {sign} {alpha:g}")
    text = f"{head} · {count} · {_slice_interval(floor, figure)} · {test}"
    if figure.call == "holds":
        end = "upper" if floor.upper else "lower"
        return f"{text} · holds: its 95% {end} bound clears the floor"
    if figure.call == "misses":
        return f"{text} · misses: significantly {'above' if floor.upper else 'below'} the floor"
    return f"{text} · {slice_needs(floor, figure)}"


def slice_decided(floor: Floor, key: str, figure: SliceFigure, *, tested: int,
                  correction: Correction, alpha: float, undecided: str | None) -> str:
    """A slice's verdict (`slice_message`) and, when its n does not decide it (`undecided`),
    what that does: "short" (its interval wholly on the wrong side), else the setting."""
    message = slice_message(floor, key, figure, tested=tested, correction=correction,
                            alpha=alpha)
    if undecided is None:
        return message
    return f"{message} · " + (slice_short(floor) if undecided == "short"
                              else slice_insufficient(undecided))


def slice_too_few(floor: Floor, t: Tally, min_n: int) -> str:
    """A slice scored on fewer questions than `ragate_min_n`: refused, as any floor is."""
    return (f"{floor.name}: refused: {plural(t.questions, 'question')} scored, fewer than "
            f"ragate_min_n = {min_n}")


def slice_short(floor: Floor) -> str:
    """An insufficient slice whose interval lies wholly on the wrong side of its floor."""
    side = "above" if floor.upper else "below"
    return (f"failed: its 95% interval lies wholly {side} the floor; not significant after the "
            "correction, but not a slice too small to decide (whatever "
            "ragate_slice_insufficient says)")


def slice_insufficient(setting: str) -> str:
    """What an insufficient slice does, by `ragate_slice_insufficient`."""
    if setting == "skip":
        return "skipped: ragate_slice_insufficient = skip (an undecided slice is not a pass)"
    return ("failed: a slice its n cannot decide is not a pass (ragate_slice_insufficient = "
            "skip skips it instead)")


# --- a key's slices in the reports and the terminal (outputs/slice_tables.py) ---------------


def slice_floors(key: str, metric: str, bound: str, overrides: Sequence[tuple[str, str]]) -> str:
    """`abstention_accuracy ≥ 0.85`, with the slices whose own floor differs:
    `abstention_accuracy ≥ 0.85; lang=de ≥ 0.90`."""
    return "; ".join([f"{metric} {bound}",
                      *[f"{slice_name(key, value)} {own}" for value, own in overrides]])


def slices_head(key: str, floors: str, correction: str | None) -> str:
    """`slices of lang (abstention_accuracy ≥ 0.85, Holm)`: how a key's slices are titled."""
    return f"slices of {key} ({floors}{f', {correction}' if correction else ''})"


def slices_title(head: str) -> str:
    """A report's slice table and plot: `slices of lang (…), worst first`."""
    return f"{head}, worst first"


def slice_call_cell(call: str | None, needs: int | None, *, n: int, on_floor: bool) -> str:
    """A slice table's call: `holds`, `misses`, `insufficient n: needs about 66` (or why no
    n is named); `—` for a slice floor decided without a call (its message says why)."""
    if call != "insufficient":
        return call or "—"
    if needs is not None:
        return f"insufficient n: needs about {needs}"
    if not n:
        return "insufficient n: nothing scored"
    return "insufficient n: on the floor, no n decides it" if on_floor else (
        "insufficient n: too few values or no spread to say how many")


def slices_summary(head: str, *, misses: Sequence[str], undecided: Sequence[str],
                   insufficient: Sequence[tuple[str, int | None]], holds: int) -> str:
    """The terminal's line for a key: `slices of lang (abstention_accuracy ≥ 0.85, Holm):
    1 misses (de), 1 insufficient (fr: needs about 66), 4 hold`."""
    parts = [f"{len(misses)} misses" + (f" ({fmt_some(misses, NAMED)})" if misses else "")]
    if undecided:
        parts.append(f"{len(undecided)} undecided ({fmt_some(undecided, NAMED)})")
    if insufficient:
        named = [value if needs is None else f"{value}: needs about {needs}"
                 for value, needs in insufficient]
        parts.append(f"{len(insufficient)} insufficient ({fmt_some(named, NAMED)})")
    parts.append(f"{holds} {'holds' if holds == 1 else 'hold'}")
    return f"{head}: {', '.join(parts)}"





def not_sliceable(metric: str) -> str:
    """Why `metric` cannot be a slice floor (`scoring/slices.sliceable`)."""
    return (f"{metric} cannot be a slice floor: slice floors decide shares in [0, 1] (a "
            "proportion, or a mean of per-question scores), and its figure is not one")
