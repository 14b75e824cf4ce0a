"""A judge held to the goldset's human labels: `floor[judge_agreement]` decided over the
labelled questions (`decide_agreement`), every judged floor of a goldset whose labels do
not vouch for its judge failed, whatever that judge says (`vouched`), and a rubric's floor
not decided unless people vouch for the judge on that rubric (`on_rubric`).

The agreement itself (kappa, Spearman, their intervals, the labelled questions without a
verdict) is a statistic, `scoring/agreement.py`; here is the rule: a judge is calibrated when
every labelled question has a verdict, at least `MIN_LABELS` do, and the statistic (under
`ragate_ci = strict`, the lower bound of its interval) reaches the floor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from pytest_ragate.decision.floors import (
    Gap,
    Unjudged,
    Verdict,
    missing_of,
    outcome_of,
    without_judge,
)
from pytest_ragate.decision.rules import POINT, Strictness
from pytest_ragate.decision.said import Said, Topic, said
from pytest_ragate.scoring.agreement import AGREEMENT, Agreement
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.ppi import MIN_LABELS
from pytest_ragate.scoring.registry import METRICS, Tally
from pytest_ragate.scoring.stats import clears

Shortfall = Literal["unverdicted", "too few", "no interval", "below"]


def calibrated(agreement: Agreement, floor: float, strict: bool) -> bool:
    """The judge agrees well enough: every labelled question has a verdict, there are at
    least MIN_LABELS of them (a bootstrap over fewer resamples too few distinct sets to show
    how far the statistic could move: 35 from 4 questions), and the statistic (when strict,
    the lower bound of an interval it has) reaches the floor."""
    return (not agreement.missing and agreement.value is not None
            and agreement.n >= MIN_LABELS and (agreement.interval is not None or not strict)
            and clears(agreement.value, agreement.interval, floor, strict))


def shortfall(a: Agreement, floor: float, strict: bool) -> Shortfall | None:
    """Why one labelled metric's agreement does not vouch for the judge, or None when it
    does: a labelled question without a verdict (or no statistic at all), too few labels to
    bound it, no interval under `ragate_ci = strict`, or a statistic below the floor."""
    if calibrated(a, floor, strict):
        return None
    if a.missing or a.value is None or not a.n:
        return "unverdicted"
    if a.n < MIN_LABELS:
        return "too few"
    if strict and a.interval is None:
        return "no interval"
    return "below"


def uncalibrated(agreements: Sequence[Agreement], floor: float, strict: bool) -> Said | None:
    """Why the judged floors of a goldset cannot pass (no labelled question with a verdict,
    or each labelled metric's `shortfall`), or None when every labelled metric's agreement
    reaches `judge_agreement` (`wording/agreement.not_calibrated` says it)."""
    short = tuple((a, why) for a in agreements if (why := shortfall(a, floor, strict)))
    if agreements and not short:
        return None
    return said(Topic.NOT_CALIBRATED, short, floor, strict)


def _rank(a: Agreement, strict: bool) -> tuple[int, float]:
    """The worst agreement first: one without a statistic, then the lowest (strictly, the
    lowest interval bound)."""
    value = a.interval[0] if strict and a.interval else a.value
    return (0 if a.missing or value is None else 1, value if value is not None else 0.0)


def decide_agreement(floor: Floor, goldset: str, agreements: Sequence[Agreement], *,
                     judge: str | None, unjudged: Unjudged = "fail",
                     strictness: Strictness = POINT, gaps: Sequence[Gap] = (),
                     labelled: frozenset[str] = frozenset()) -> Verdict:
    """`floor[judge_agreement]`: the worst labelled metric's statistic against the floor,
    with its interval and n; a labelled question without a verdict fails it, a deselected
    one skips it (a floor is decided over its whole population: the labelled questions)."""
    if judge is None:
        return without_judge(floor, goldset, unjudged)
    missing = missing_of([g for g in gaps if g.member in labelled], len(labelled),
                         "labelled questions", strictness)
    if missing is not None:
        return Verdict(floor=floor, goldset=goldset, outcome=missing.outcome,
                       said=said(Topic.INCOMPLETE, missing,
                                 said(Topic.AGREEMENT_LINES, tuple(agreements))),
                       computed_by=judge, gaps=missing.count)
    if not agreements:
        return Verdict(floor=floor, goldset=goldset, outcome="failed",
                       said=said(Topic.NOTHING_LABELLED, floor, judge), computed_by=judge)
    worst = min(agreements, key=lambda a: _rank(a, strictness.strict))
    why = uncalibrated(agreements, floor.min, strictness.strict)
    message = said(Topic.AGREEMENT_AGAINST_FLOOR, floor, worst, tuple(agreements),
                   holds=why is None, strict=strictness.strict, judge=judge, why=why)
    return Verdict(floor=floor, goldset=goldset,
                   outcome=outcome_of(floor, "holds" if why is None else "misses"),
                   said=message,
                   tally=Tally(metric=AGREEMENT, k=(worst.value or 0.0) * worst.n, n=worst.n,
                               questions=worst.n),
                   interval=worst.interval, computed_by=judge, figure=worst.value,
                   estimate=f"{worst.statistic}, {worst.metric}")


def vouched(verdict: Verdict, agreements: Sequence[Agreement], agreement_min: float | None,
            judge: str | None, strict: bool) -> Verdict:
    """A judged floor's verdict, failed when the goldset's labels do not vouch for its judge
    (`judge_agreement` below its floor): such a judge decides nothing, whatever it says."""
    floor = verdict.floor
    if (agreement_min is None or not floor.judged or judge is None
            or verdict.outcome == "skipped" or floor.metric == AGREEMENT or floor.anchors):
        return verdict
    why = uncalibrated(agreements, agreement_min, strict)
    if why is None:
        return verdict
    return replace(verdict, outcome="failed", said=said(Topic.JOINED, why, verdict.said))


def on_rubric(verdict: Verdict, agreements: Sequence[Agreement], agreement_min: float | None,
              judge: str | None, strict: bool) -> Verdict:
    """A rubric's floor, decided only where the judge was checked against people on that
    rubric: human labels of it (at least `MIN_LABELS` with a verdict) whose agreement with
    the judge reaches the goldset's judge_agreement floor. Otherwise the floor is not
    decided, and fails, saying what it needs: a judge grading criteria no person has held it
    to decides nothing, whatever it says."""
    floor = verdict.floor
    if (judge is None or verdict.outcome == "skipped" or floor.anchors
            or floor.metric not in METRICS or not METRICS[floor.metric].rubric):
        return verdict
    agreement = next((a for a in agreements if a.metric == floor.metric), None)
    if (agreement is not None and agreement_min is not None
            and calibrated(agreement, agreement_min, strict)):
        return verdict
    why = said(Topic.RUBRIC_NOT_CALIBRATED, floor.metric, agreement, agreement_min,
               MIN_LABELS, strict=strict,
               shortfall=None if agreement is None or agreement_min is None
               else shortfall(agreement, agreement_min, strict))
    return replace(verdict, outcome="failed", said=said(Topic.JOINED, why, verdict.said))
