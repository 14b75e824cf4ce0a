"""A goldset's floors decided together from its rows plus the rules (`decide_floors`): the one
entry point every path that decides a floor reaches, through `run_decision.decide_run` (the
gate at -n 0 or -n 2, `ragate decide` over saved results, `ragate rejudge` under either judge).

Each floor is decided by its own rule: a slice floor with its family (one key, one metric:
the correction spans it; `slice_floors.py`), `judge_agreement` over the labelled questions
(`agreement_floor.py`), an anchor floor over the anchors that were checked, a floor of a
sequential goldset that stopped by its test (`sequential.py`), any other over its whole
population (`floors.py`, on the prediction-powered estimate where the goldset asks for it).
A floor that depends on another is not decided while that other does not hold, xfail or not:
a judged floor (whole, kind, slice) whose judge delivered fewer of its own verdicts than the
goldset's judge_coverage floor asks (`floors.unread`), and any judged floor of a judge the
goldset's labels do not vouch for (`agreement_floor.vouched`, held to its judge_agreement
floor), and a rubric's floor where the labels do not vouch for the judge on that rubric
(`agreement_floor.on_rubric`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from pytest_ragate.decision.agreement_floor import decide_agreement, on_rubric, vouched
from pytest_ragate.decision.floors import (
    Gap,
    Unjudged,
    Verdict,
    decide,
    decide_anchors,
    of_population,
)
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.pass_rate_floor import decide_pass_rate
from pytest_ragate.decision.population import Population
from pytest_ragate.decision.rules import Rules
from pytest_ragate.decision.said import Topic, said
from pytest_ragate.decision.sequential import Stopping, stopped_verdict
from pytest_ragate.decision.slice_floors import decide_family, family_of
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.figures import computed_by
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pass_rate import PASS_RATE
from pytest_ragate.scoring.records import MECHANICAL
from pytest_ragate.scoring.registry import METRICS


def decide_floors(floors: Sequence[Floor], run: GoldsetRun, population: Population,
                  rules: Rules, stopping: Stopping | None = None) -> dict[Floor, Verdict]:
    """Every floor of one goldset run (its rows, gaps, anchors, judge and agreements in
    `run`, what its goldset says of labels and anchors in `population`), in `floors`' order."""
    coverage = coverage_of(floors, population)
    unjudged = unjudged_of(floors, population, rules)
    families = _families(floors, run, rules, coverage, unjudged)
    verdicts: dict[Floor, Verdict] = {}
    for floor in floors:
        # a slice floor is decided with its family, never alone by the rule of a whole floor
        verdict = (families[floor] if floor.slice else _decide_floor(
            floor, run, population, rules, stopping, coverage, unjudged(floor.metric)))
        # a rubric's floor the labels do not vouch for is said once, by its own rubric
        rubric = on_rubric(verdict, run.agreements, population.agreement_min, run.judge,
                           rules.strictness.strict)
        verdicts[floor] = rubric if rubric is not verdict else vouched(
            verdict, run.agreements, population.agreement_min, run.judge,
            rules.strictness.strict)
    return said_once(verdicts, [*run.gaps, *run.anchor_gaps])


def said_once(verdicts: dict[Floor, Verdict], gaps: Sequence[Gap]) -> dict[Floor, Verdict]:
    """Each long cause of a gap (a stale question's whole evidence report) said in full by
    the first floor whose message holds it; every later floor refers to that one instead
    (`stale evidence software (said at floor[evidence_recall])`: `wording/said.said_once`)."""
    if not any(gap.why for gap in gaps):
        return verdicts
    texts = tuple(v.said for v in verdicts.values())
    names = tuple(floor.name for floor in verdicts)
    return {floor: replace(v, said=said(Topic.SAID_ONCE, i, texts, names, tuple(gaps)))
            for i, (floor, v) in enumerate(verdicts.items())}


def unjudged_of(floors: Sequence[Floor], population: Population, rules: Rules,
                ) -> Callable[[str], Unjudged]:
    """What a judged floor of `metric` does in a run without a judge: it fails, naming the
    flag, unless the goldset (`[judge] optional`) or the ini file (`ragate_judge_optional`)
    names its metric optional, when it is skipped, or --ragate-require-judge is set, when it
    fails anyway. The metrics about the judge (judge_coverage, judge_agreement) are optional
    when every judged metric of the goldset's floors is."""
    optional = set(rules.judge_optional) | set(population.judge_optional)
    asked = {f.metric for f in floors if METRICS[f.metric].asked}
    if asked and asked <= optional:
        optional |= {"judge_coverage", AGREEMENT}

    def unjudged(metric: str) -> Unjudged:
        if metric not in optional:
            return "fail"
        return "required" if rules.require_judge else "skip"

    return unjudged


def coverage_of(floors: Sequence[Floor], population: Population) -> float | None:
    """The judge_coverage floor every judged floor's own verdicts are held to: the goldset's
    (selected or not: deselecting it does not free the judged floors), else the route's;
    an xfail one too (an expected shortfall of the judge does not make its verdicts enough)."""
    if population.coverage_min is not None:
        return population.coverage_min
    return next((f.min for f in floors if f.metric == "judge_coverage" and f.kind is None
                 and f.slice is None and not f.anchors), None)


def _decide_floor(floor: Floor, run: GoldsetRun, population: Population, rules: Rules,
                  stopping: Stopping | None, coverage: float | None,
                  unjudged: Unjudged) -> Verdict:
    if (stopping is not None and stopping.stopped and floor.name in stopping.tracks
            and not [g for g in of_population(floor, run.gaps) if g.kind not in run.soft_gaps]):
        rows = {r.question_id: r for r in run.records}
        return stopped_verdict(floor, run.name, stopping, rows,
                               computed_by(floor, run.records, run.judge))
    if floor.anchors and not population.checks_anchors:
        return Verdict(floor=floor, goldset=run.name, outcome="skipped",
                       said=said(Topic.ANCHORS_ELSEWHERE), computed_by=MECHANICAL)
    if floor.anchors:  # over the anchors that were checked; the others are gaps
        return decide_anchors(floor, run.name, [a for a in run.anchors if a.checked],
                              strictness=rules.strictness, gaps=run.anchor_gaps)
    if floor.metric == AGREEMENT:
        return decide_agreement(floor, run.name, run.agreements, judge=run.judge,
                                unjudged=unjudged,
                                strictness=rules.strictness, gaps=run.gaps,
                                labelled=frozenset(x.question_id for x in population.labels))
    if floor.metric == PASS_RATE:
        return decide_pass_rate(floor, run.name, run.records, judge=run.judge,
                                unjudged=unjudged, strictness=rules.strictness, gaps=run.gaps)
    labels = stamps = None
    if population.estimate == "ppi" and floor.metric in {x.metric for x in population.labels}:
        labels = {x.question_id: x.value for x in population.labels if x.metric == floor.metric}
        stamps = population.stamps(floor.metric)
    return decide(floor, run.name, run.records, judge=run.judge,
                  unjudged=unjudged, strictness=rules.strictness, gaps=run.gaps,
                  labels=labels, stamps=stamps, coverage=coverage)


def _families(floors: Sequence[Floor], run: GoldsetRun, rules: Rules,
              coverage: float | None, unjudged: Callable[[str], Unjudged],
              ) -> dict[Floor, Verdict]:
    """The verdict of every slice floor: each family (the slices of one key on one metric)
    decided together, its tests corrected across it, a judged slice held to the goldset's
    judge_coverage floor on its own verdicts."""
    families: dict[tuple[str, str], list[Floor]] = {}
    for floor in floors:
        if (family := family_of(floor)) is not None:
            families.setdefault(family, []).append(floor)
    verdicts: dict[Floor, Verdict] = {}
    for (_, metric), family in families.items():
        verdicts.update(decide_family(family, run.name, run.records, judge=run.judge,
                                      unjudged=unjudged(metric),
                                      strictness=rules.strictness, gaps=run.gaps,
                                      rules=rules.slices, coverage=coverage))
    return verdicts
