"""Floors decided over every question's record: value, interval, n, and who computed it.

A floor is decided over its whole population, known at collection: every question of its
goldset (and kind), or every anchor of its kind. A member without a result is a gap, named
in the floor's message. A floor with gaps never passes: it fails when results went missing
(an error, a crash, a skip, a question that never ran, a sealed answer without its key) and
is skipped, with the count, when the user deselected members (-k, -m, --lf).

A floor with nothing to score fails: an empty gate is not a passing gate. So does one scored
on fewer questions than `ragate_min_n`. With `ragate_ci = strict` a floor holds only when
the lower bound of its 95% interval reaches it, not just the point value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.scoring.labelled import judged_values
from pytest_ragate.scoring.power import PassesAt, passes_at
from pytest_ragate.scoring.ppi import MIN_LABELS, Ppi, ppi_mean
from pytest_ragate.scoring.records import (
    MECHANICAL,
    AnchorOutcome,
    QuestionRecord,
    Tally,
    behind,
    tally,
)
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.stats import (
    bootstrap_clusters,
    bootstrap_mean,
    clears,
    wilson,
    wilson_clustered,
)

Outcome = Literal["passed", "failed", "xfailed", "xpassed", "skipped"]
CiMode = Literal["point", "strict"]
GapKind = Literal["errored", "crashed", "lost", "never ran", "skipped", "sealed", "deselected"]
@dataclass(frozen=True)
class Floor:
    """A dataset-level gate: `metric` over questions (of `kind`, when set) must reach `min`,
    or, for an upper-bound floor (`{max = 0.05}`, `upper`), stay at or below it: `min` is
    then the bound from above."""

    metric: str
    min: float
    kind: str | None = None
    xfail: str | None = None
    anchors: bool = False  # over the anchors of `kind` instead of questions
    upper: bool = False  # `{max = …}`: the figure must not exceed `min`

    @property
    def bound(self) -> str:
        """`≥ 0.80`, or `≤ 0.05` for an upper-bound floor: how every report prints it."""
        return f"{'≤' if self.upper else '≥'} {self.min:.2f}"

    @property
    def figure(self) -> str:
        """A table's floor column: `0.80`, or `≤ 0.05` for an upper-bound floor."""
        return self.bound if self.upper else f"{self.min:.2f}"

    @property
    def name(self) -> str:
        if self.anchors:
            return f"floor[anchors:{self.kind}:{self.metric}]"
        return f"floor[{self.kind}:{self.metric}]" if self.kind else f"floor[{self.metric}]"

    @property
    def judged(self) -> bool:
        return METRICS[self.metric].judged



NAMED = 10  # members a message names before it says "and N more"


@dataclass(frozen=True)
class Strictness:
    """How sure a floor must be: `ci` and `min_n` from the gate settings; and whether a
    sealed goldset without its key fails (the default) or skips its floors."""

    ci: CiMode = "point"
    min_n: int = 0
    sealed_without_key: Literal["fail", "skip"] = "fail"


POINT = Strictness()


@dataclass(frozen=True)
class Gap:
    """A member of a floor's population (a question or an anchor) without a result."""

    member: str
    member_kind: str  # the question's (or anchor's) kind, to match kind floors
    kind: GapKind
    why: str = ""


def _named(gaps: Sequence[Gap], detail: bool = True) -> str:
    """`lost q00, q01 (its worker went down); crashed q07 (…)`: members grouped by what
    happened to them, at most NAMED named."""
    groups: dict[tuple[str, str], list[str]] = {}
    for gap in gaps[:NAMED]:
        groups.setdefault((gap.kind, gap.why if detail else ""), []).append(gap.member)
    shown = [f"{kind + ' ' if detail else ''}{', '.join(members)}" + (f" ({why})" if why else "")
             for (kind, why), members in groups.items()]
    more = len(gaps) - NAMED  # the groups are named whole; the members past NAMED counted
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def soft_gaps(strictness: Strictness) -> frozenset[str]:
    """Gaps that skip a floor rather than fail it: the user deselected those members, or
    builds without the seal key skip on purpose."""
    return frozenset({"deselected"} | ({"sealed"} if strictness.sealed_without_key == "skip"
                                       else set()))


def incomplete(floor: Floor, gaps: Sequence[Gap], population: int, unit: str,
               strictness: Strictness, partial: str) -> tuple[Outcome, str] | None:
    """The outcome of a floor whose population is not whole, or None when it is.

    Missing results fail it: what is missing could be exactly what fails. Deselected members
    (and sealed ones, when builds without the key skip on purpose) skip it: the user chose
    not to run them, and a floor decided over a part would pass or fail on that part."""
    mine = [g for g in gaps if floor.kind is None or g.member_kind == floor.kind]
    if not mine:
        return None
    hard = [g for g in mine if g.kind not in soft_gaps(strictness)]
    tail = f" · {partial}" if partial else ""
    if hard:
        sealed = [g for g in hard if g.kind == "sealed"]
        if len(sealed) == len(hard):
            return "failed", (f"sealed: set RAGATE_SEAL_KEY to score {len(sealed)} of "
                              f"{population} {unit} (their expected answers are sealed; for "
                              "builds that cannot have the key, ragate_sealed_without_key = "
                              f"\"skip\" skips this floor instead){tail}")
        return "failed", (f"not decided: {len(hard)} of {population} {unit} have no result: "
                          f"{_named(hard)} · a floor passes only when every member of its "
                          f"population has a result{tail}")
    deselected = [g for g in mine if g.kind == "deselected"]
    sealed = [g for g in mine if g.kind == "sealed"]
    parts = []
    if deselected:
        parts.append(f"{len(deselected)} of {population} {unit} deselected (-k, -m or --lf): "
                     f"{_named(deselected, detail=False)}")
    if sealed:
        parts.append(f"{len(sealed)} sealed and no RAGATE_SEAL_KEY "
                     "(ragate_sealed_without_key = \"skip\")")
    return "skipped", (f"not decided: {'; '.join(parts)}; a floor is decided over its whole "
                       "population: run all of it, or deselect the floor too")


@dataclass(frozen=True)
class Verdict:
    floor: Floor
    goldset: str
    outcome: Outcome
    message: str
    tally: Tally | None = None
    interval: tuple[float, float] | None = None
    computed_by: str = MECHANICAL
    errors: int = 0
    skipped: int = 0
    gaps: int = 0  # members of the population without a result
    passes_at: PassesAt | None = None  # the true value at which this n passes 80% of the time
    figure: float | None = None  # the figure decided on, when it is not the tally's value
    estimate: str = ""  # what that figure is: "ppi", or the agreement statistic
    worst: str = ""  # a failing floor's questions behind it, worst first (metrics.behind)

    @property
    def value(self) -> float | None:
        if self.figure is not None:
            return self.figure
        return self.tally.value if self.tally else None

    @property
    def shown(self) -> str:
        """The value as a report shows it, with its estimate: `0.62 (ppi)`."""
        value = self.value
        text = "—" if value is None else f"{value:.2f}"
        return f"{text} ({self.estimate})" if self.estimate and value is not None else text


def interval_of(t: Tally) -> tuple[float, float] | None:
    """Wilson for proportions, a bootstrap for means; with repeats (`t.clusters`) over
    questions as clusters: Wilson at the design-effect n, a cluster bootstrap."""
    if not t.n:
        return None
    proportion = METRICS[t.metric].aggregate == "proportion"
    if t.clusters:
        return (wilson_clustered(t.k, t.n, t.clusters, t.repeats) if proportion
                else bootstrap_clusters(t.clusters))
    return wilson(t.k, t.n) if proportion else bootstrap_mean(t.values)


def fmt_n(t: Tally | None) -> str:
    """A table's n: `20`, or with repeats `28 questions × 3` (n counts questions)."""
    if t is None:
        return "0"
    return f"{t.questions} questions × {t.repeats}" if t.repeats > 1 else str(t.n)


def fmt_interval(interval: tuple[float, float] | None) -> str:
    return f"[{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "—"


def computed_by(floor: Floor, records: Sequence[QuestionRecord], judge: str | None = None,
                ) -> str:
    """`mechanical`, the judges the records name, else the judge configured (`judge`)."""
    if not floor.judged:
        return MECHANICAL
    judges = sorted({r.judge for r in records if r.judge})
    return ", ".join(judges) or judge or "no judge"


def decide(
    floor: Floor,
    goldset: str,
    records: Sequence[QuestionRecord],
    *,
    judge: str | None = None,
    require_judge: bool = False,
    strictness: Strictness = POINT,
    gaps: Sequence[Gap] = (),
    labels: Mapping[str, float] | None = None,
    stamps: Mapping[str, str] | None = None,
) -> Verdict:
    """The floor's outcome over the records of its goldset (and kind, when it has one).

    `gaps` are the population's members without a scored result (errored ones among them):
    the population is the scored records and the gaps. Without gaps the records are the
    whole population. With `labels` (question id → the human label of this floor's metric,
    `[judge] estimate = "ppi"`) the floor is decided on the prediction-powered estimate;
    `stamps` are the answers those labels were written for (a label of another is stale)."""
    rows = [r for r in records if floor.kind is None or r.kind == floor.kind]
    errors = sum(r.status == "error" for r in rows)
    skipped = sum(r.status == "skipped" for r in rows)
    info = METRICS[floor.metric]
    if floor.judged and judge is None:
        reason = (f"{floor.metric} needs a judge: none configured (--ragate-judge); "
                  "judged floors are skipped")
        outcome: Outcome = "failed" if require_judge else "skipped"
        if require_judge:
            reason += " and --ragate-require-judge is set"
        return Verdict(floor, goldset, outcome, reason, computed_by="no judge")
    mine = [g for g in gaps if floor.kind is None or g.member_kind == floor.kind]
    if mine:
        scored = [r for r in rows if r.status == "scored"]
        t = tally(floor.metric, scored)
        size = len(scored) + len(mine)
        partial = (f"{floor.metric} {t.value:.2f} over the {len(scored)} with a result"
                   if t.value is not None else "")
        found = incomplete(floor, mine, size, "questions", strictness, partial)
        if found is not None:
            by = computed_by(floor, rows, judge)
            return Verdict(floor, goldset, found[0], found[1], t, interval_of(t), by, errors,
                           skipped, gaps=len(mine))
    if rows and skipped == len(rows):
        reason = next(r.error for r in rows if r.error) or "every question was skipped"
        return Verdict(floor, goldset, "skipped", f"{floor.metric}: nothing ran: {reason}",
                       skipped=skipped)
    t = tally(floor.metric, rows)
    by = computed_by(floor, rows, judge)
    notes = []
    if errors:
        notes.append(f"{errors} question{'s' * (errors != 1)} errored, counted as wrong")
    if skipped:
        notes.append(f"{skipped} skipped, not counted")
    if t.failures and info.asked:  # judge_coverage counts its failures as wrong
        notes.append(f"{t.failures} judge failure{'s' * (t.failures != 1)}, not counted")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    scope = f"{floor.kind} questions" if floor.kind else "questions"
    if not t.n:
        unit = f"judged {info.unit}" if info.asked else info.unit
        message = (f"nothing scored: {floor.metric} has no {unit} among {len(rows)} "
                   f"{scope} · floor {floor.bound} · computed by {by}{suffix}")
        return Verdict(floor, goldset, "failed", message, t, None, by, errors, skipped)
    ppi = None
    if labels is not None and info.asked:
        ppi, why = _ppi(floor.metric, rows, labels, stamps)
        if ppi is None:
            message = (f"not decided: the ppi estimate ([judge] estimate = \"ppi\") {why} · "
                       f"{floor.metric} {t.value or 0:.2f} as judged · floor {floor.bound} "
                       f"· computed by {by}{suffix}")
            return Verdict(floor, goldset, "failed", message, t, None, by, errors, skipped,
                           estimate="ppi")
    return _against_floor(floor, goldset, t, by, suffix, errors, skipped, strictness,
                          behind(floor.metric, rows), ppi)


def _ppi(metric: str, rows: Sequence[QuestionRecord], labels: Mapping[str, float],
         stamps: Mapping[str, str] | None = None) -> tuple[Ppi | None, str]:
    """The prediction-powered estimate over `rows` (a question's repeats averaged), or None
    and why not: a labelled question without a verdict (or with a stale label) is named,
    never left out: its error is exactly what the correction would have measured."""
    judged, why = judged_values(metric, rows, stamps)
    missing = sorted(q for q in why if q in labels)
    if missing:
        named = "; ".join(f"{q} ({why[q]})" for q in missing[:NAMED])
        return None, f"needs a verdict for every labelled question: none for {named}"
    pairs = [(judged[q], labels[q]) for q in judged if q in labels]
    found = ppi_mean(list(judged.values()), pairs)
    if found is None:
        return None, (f"needs at least {MIN_LABELS} labelled questions with a verdict here, "
                      f"has {len(pairs)} labelled of {len(judged)} judged (its interval's "
                      f"variance is estimated from the labels: below {MIN_LABELS} a 95% "
                      "interval would cover the truth less than 92% of the time)")
    return found, ""


def decide_anchors(floor: Floor, goldset: str, anchors: Sequence[AnchorOutcome],
                   strictness: Strictness = POINT, gaps: Sequence[Gap] = ()) -> Verdict:
    """A population floor over the anchors of one kind: the share whose check held (an
    XPASS held too). Other kinds, the controls among them, stay out of the population; an
    anchor of the kind without a result is a gap."""
    rows = [a for a in anchors if a.kind == floor.kind]
    held = sum(a.held for a in rows)
    t = Tally(floor.metric, held, len(rows), questions=len(rows))
    mine = [g for g in gaps if g.member_kind == floor.kind]
    if mine:
        partial = f"{t.value:.2f} held over the {t.n} that ran" if t.n else ""
        found = incomplete(floor, mine, len(rows) + len(mine), f"{floor.kind} anchors",
                           strictness, partial)
        if found is not None:
            return Verdict(floor, goldset, found[0], found[1], t, interval_of(t) if t.n
                           else None, MECHANICAL, gaps=len(mine))
    if not t.n:
        return Verdict(floor, goldset, "failed", f"nothing scored: no {floor.kind} anchor ran "
                       f"· floor {floor.bound} · computed by {MECHANICAL}", t)
    return _against_floor(floor, goldset, t, MECHANICAL, f" ({floor.kind} anchors)", 0, 0,
                          strictness)


def _against_floor(floor: Floor, goldset: str, t: Tally, by: str, suffix: str, errors: int,
                   skipped: int, strictness: Strictness, worst: str = "",
                   ppi: Ppi | None = None) -> Verdict:
    """Value (or, when strict, the interval's lower bound) against floor, with n, the
    interval and who computed it; strict xfail aware. A failure names `worst`, the
    questions behind it. With `ppi` the value and interval are the prediction-powered
    estimate's (the judge's own mean shown beside it)."""
    info = METRICS[floor.metric]
    unit = "anchors" if floor.anchors else info.unit
    interval = interval_of(t)
    value = t.value or 0.0
    # power over n independent units: not what a floor over clusters or a bound from above
    # can tell apart, so those say nothing rather than a wrong figure
    power = (None if t.clusters or floor.upper else
             passes_at(info.aggregate, t.n, t.values, floor.min, strictness.ci == "strict"))
    method = "Wilson" if info.aggregate == "proportion" else "bootstrap"
    if t.clusters:
        method += ", questions as clusters"
    if t.clusters and unit == "questions":
        unit = "answers"  # a question asked 3 times is 3 units of its metric
    count = (f"over {t.n}/{t.n + t.failures} judged" if info.judged and info.aggregate == "mean"
             else f"n={t.n} {unit}")
    if t.clusters:
        count += f" of {t.questions} questions × {t.repeats}"
    elif t.repeats > 1:
        count += f" × {t.repeats} repeats"
    figure, estimate = None, ""
    if ppi is not None:
        interval, value, figure, estimate, power = ppi.interval, ppi.value, ppi.value, "ppi", None
        method = "ppi, normal approximation"
        count += (f", {ppi.n_labelled} labelled · ppi: judge {ppi.judge_mean:.2f} − bias "
                  f"{ppi.bias:+.2f} on the labelled" + _no_spread(ppi))
    tail = f"{count} · 95% CI {fmt_interval(interval)} ({method}) · computed by {by}{suffix}"
    if strictness.min_n and t.questions < strictness.min_n:
        who = "anchors" if floor.anchors else "questions"
        message = (f"refusing to gate: {floor.metric} {value:.2f} was scored on {t.questions} "
                   f"{who}, fewer than ragate_min_n = {strictness.min_n} (add questions, or "
                   f"lower ragate_min_n) · floor {floor.bound} · {tail}")
        return Verdict(floor, goldset, "failed", message, t, interval, by, errors, skipped,
                       passes_at=power, figure=figure, estimate=estimate)
    holds = clears(value, interval, floor.min, strictness.ci == "strict", floor.upper)
    sign = ("≤" if holds else ">") if floor.upper else ("≥" if holds else "<")
    mark = " (ppi)" if ppi else ""
    if strictness.ci == "strict" and interval is not None:
        end = f"upper bound {interval[1]:.2f}" if floor.upper else f"lower bound {interval[0]:.2f}"
        figures = (f"{floor.metric} {value:.2f}{mark}, 95% {end} {sign} floor {floor.min:.2f} "
                   f"(ragate_ci = strict) · {tail}")
    else:
        figures = f"{floor.metric} {value:.2f}{mark} {sign} floor {floor.min:.2f} · {tail}"
    if floor.xfail:
        if holds:
            message = (f"[XPASS(strict)] {floor.xfail}: {figures}. The floor now holds: "
                       f"remove its xfail (pytest --ragate-promote) to make it a hard gate")
            return Verdict(floor, goldset, "xpassed", message, t, interval, by, errors, skipped,
                           passes_at=power, figure=figure, estimate=estimate)
        return Verdict(floor, goldset, "xfailed", f"{floor.xfail}: {figures}", t, interval, by,
                       errors, skipped, passes_at=power, figure=figure, estimate=estimate)
    worst = "" if holds else worst
    if worst:
        figures += f" · worst: {worst}"
    return Verdict(floor, goldset, "passed" if holds else "failed", figures, t, interval, by,
                   errors, skipped, passes_at=power, figure=figure, estimate=estimate,
                   worst=worst)


def _no_spread(ppi: Ppi) -> str:
    """What a ppi interval says of a variance that came out 0 (`ppi.spread`)."""
    if not ppi.bounded:
        return ""
    which = {"judged": f"the {ppi.n_all} judge scores", "labelled": f"the {ppi.n_labelled} "
             "labelled errors (judge − human)"}
    return (f" · no spread in {' nor in '.join(which[b] for b in ppi.bounded)}: variance "
            "bounded by the rule of three (95%), not taken as 0")


def kind_counts(metric: str, records: Sequence[QuestionRecord]) -> list[tuple[str, Tally]]:
    """Per-kind tallies in first-seen order, for `single_meeting 7/20 · unanswerable 5/5`."""
    kinds = list(dict.fromkeys(r.kind for r in records))
    return [(kind, tally(metric, [r for r in records if r.kind == kind])) for kind in kinds]


def fmt_counts(counts: list[tuple[str, Tally]]) -> str:
    """`single_meeting 7/20` for proportions, `single_meeting 0.75 (n=2)` for means."""
    return " · ".join(
        f"{kind} {t.k:g}/{t.n}" if METRICS[t.metric].aggregate == "proportion"
        else f"{kind} {t.value:.2f} (n={t.n})"
        for kind, t in counts if t.n)
