"""A family of slice floors decided together: every slice of one key gated on one metric
(`[floors.slices.lang] abstention_accuracy = 0.85` made one floor per value of `lang`), each
slice its own verdict, their shortfall tests corrected across the family (scoring/slices.py).

A slice is first held to the rules of every floor (floors.py): a judged floor without a judge,
a member without a result (a gap: failed, or skipped when deselected), nothing that ran,
nothing scored, fewer questions than `ragate_min_n`. The slices past those are decided
together by `slices.decide_slices`: one that holds passes, one that misses fails, and one too
small to tell either way fails, or is skipped when `ragate_slice_insufficient = skip`, saying
about how many questions would decide it. Never a silent pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.decision.floors import (
    Gap,
    Outcome,
    Scored,
    Unjudged,
    Verdict,
    outcome_of,
    scored_or_settled,
    unread,
)
from pytest_ragate.decision.rules import POINT, SliceRules, Strictness
from pytest_ragate.decision.said import Topic, said
from pytest_ragate.scoring.figures import Counted
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.slices import (
    CORRECTIONS,
    SliceFigure,
    decide_slices,
    family_size,
)


def family_of(floor: Floor) -> tuple[str, str] | None:
    """The family a slice floor is decided in: its key and metric (None: not a slice)."""
    return (floor.slice[0], floor.metric) if floor.slice else None


def decide_family(floors: Sequence[Floor], goldset: str, records: Sequence[QuestionRecord], *,
                  judge: str | None = None, unjudged: Unjudged = "fail",
                  strictness: Strictness = POINT, gaps: Sequence[Gap] = (),
                  rules: SliceRules | None = None,
                  coverage: float | None = None) -> dict[Floor, Verdict]:
    """Each slice floor of one family (one key, one metric) and its verdict. `coverage` is
    the goldset's judge_coverage floor, which a judged slice's own verdicts must reach."""
    rules = rules or SliceRules()
    verdicts: dict[Floor, Verdict] = {}
    tested_ones: dict[str, tuple[Floor, Scored]] = {}
    values = [_value(f) for f in floors]
    if len(set(values)) < len(values):  # one floor per slice, or a verdict would be lost
        raise ValueError(f"a family holds one floor per slice, not {sorted(values)}")
    for floor in floors:
        settled = _settled(floor, goldset, records, judge, unjudged, strictness, gaps)
        if isinstance(settled, Scored) and coverage is not None:
            settled = unread(floor, goldset, coverage, settled) or settled
        if isinstance(settled, Verdict):
            verdicts[floor] = settled
        else:
            tested_ones[_value(floor)] = (floor, settled)
    if not tested_ones:
        return verdicts
    figures = decide_slices({v: f for v, (f, _) in tested_ones.items()},
                            {v: x.tally for v, (_, x) in tested_ones.items()},
                            alpha=rules.alpha, correction=rules.correction)
    tested = family_size(figures)
    for figure in figures:
        floor, scored = tested_ones[figure.value]
        verdicts[floor] = _decided(floor, goldset, figure, scored.counted, tested, rules)
    return verdicts


def _value(floor: Floor) -> str:
    assert floor.slice is not None
    return floor.slice[1]


def _settled(floor: Floor, goldset: str, records: Sequence[QuestionRecord], judge: str | None,
             unjudged: Unjudged, strictness: Strictness, gaps: Sequence[Gap],
             ) -> Verdict | Scored:
    """The verdict of a slice the rules of every floor settle before its test (no judge,
    gaps, nothing ran or scored: `floors.scored_or_settled`; too few questions), else its
    rows and tally, to be decided."""
    scored = scored_or_settled(floor, goldset, records, judge=judge,
                               unjudged=unjudged, strictness=strictness, gaps=gaps)
    if isinstance(scored, Verdict):
        return scored
    t, counted = scored.tally, scored.counted
    if strictness.min_n and t.questions < strictness.min_n:
        return Verdict(floor=floor, goldset=goldset, outcome="failed",
                       said=said(Topic.SLICE_TOO_FEW, floor, t, strictness.min_n), tally=t,
                       computed_by=counted.computed_by, errors=counted.errors,
                       skipped=counted.skipped)
    return scored


def _decided(floor: Floor, goldset: str, figure: SliceFigure, counted: Counted, tested: int,
             rules: SliceRules) -> Verdict:
    """A slice's verdict from its call in the family (`counted`: who computed its figure)."""
    outcome = _outcome(floor, figure, rules)
    key = floor.slice[0] if floor.slice else ""
    undecided = ("short" if _short(floor, figure) else rules.insufficient
                 ) if figure.call == "insufficient" and not floor.xfail else None
    message = said(Topic.SLICE_DECIDED, floor, key, figure, tested=tested,
                   correction=rules.correction, alpha=rules.alpha, undecided=undecided)
    return Verdict(floor=floor, goldset=goldset, outcome=outcome, said=message,
                   tally=figure.tally, interval=figure.interval,
                   computed_by=counted.computed_by, errors=counted.errors,
                   skipped=counted.skipped, slice_call=figure.call, needs=figure.needs,
                   correction=CORRECTIONS[rules.correction])


def _outcome(floor: Floor, figure: SliceFigure, rules: SliceRules) -> Outcome:
    """holds passes, misses fails (a strict xfail slice: xpassed, xfailed); insufficient is
    failed or skipped by the setting (xfailed when the slice is an xfail), but failed
    whatever the setting when its interval lies wholly on the wrong side of the floor."""
    if figure.call != "insufficient":
        return outcome_of(floor, figure.call)
    if floor.xfail:
        return "xfailed"
    if _short(floor, figure):
        return "failed"
    return "skipped" if rules.insufficient == "skip" else "failed"


def _short(floor: Floor, figure: SliceFigure) -> bool:
    """An insufficient slice whose 95% interval excludes the floor from the wrong side: not
    significantly short after the correction across its key (the betting test over
    questions' rates, with repeats, is far weaker than the interval), but not a slice too
    small to decide, which is one whose interval spans the floor."""
    if figure.interval is None:
        return False
    low, high = figure.interval
    return low > floor.min if floor.upper else high < floor.min
