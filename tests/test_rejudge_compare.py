"""The comparison behind `ragate rejudge` (scoring/rejudge.py's shifts, decision/rejudge.py's
floors, through rejudging.py's arrivals of the saved rows), on rows built in memory: a
candidate that grades alike calls nothing significant, a shift on one kind is found on that
kind, an answer the candidate could not grade is a change (fail closed), and a floor decided
by both judges (the gate's own decision) says when its outcome would change."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from pytest_ragate.commands.rejudging import saved_arrivals, with_rows
from pytest_ragate.decision.population import (
    Collected,
    FloorSpec,
    LabelSpec,
    Member,
    Population,
)
from pytest_ragate.decision.rejudge import Comparison, compare_judges
from pytest_ragate.decision.rules import DEFAULT_RULES, Rules
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.rejudge import Regraded, RowKey, judge_shifts, regraded_rows
from pytest_ragate.wording.rejudge import changes

LabelsOf = Mapping[str, tuple[Mapping[str, float], bool]]


def rejudged(*, rows: Sequence[QuestionRecord], candidate_judge: str,
             regraded: Mapping[RowKey, Regraded], metrics: Sequence[str],
             floors: Sequence[Floor], labels: LabelsOf | None = None,
             rules: Rules = DEFAULT_RULES, population: Population | None = None,
             ) -> Comparison:
    """`ragate rejudge`'s comparison of one route's saved `rows` (a population of every
    question they name, unless given) under the candidate's verdicts `regraded`."""
    route = rows[0].route
    labels = labels or {}
    population = population or Population(
        route=route, goldset="gs", eval_version="1",
        questions=[Member(question_id=r.question_id, repeat=r.repeat, question="?",
                          kind=r.kind, tags=r.tags, index=r.index,
                          nodeid=f"{route}::{r.question_id}", sealed=False,
                          must_abstain=r.must_abstain, evidence_spans=r.evidence_spans)
                   for r in rows],
        anchors=[], labels=[LabelSpec(question_id=q, metric=m, value=v, binary=binary)
                            for m, (values, binary) in labels.items() for q, v in values.items()],
        agreement_min=next((f.min for f in floors if f.metric == AGREEMENT), None))
    collected = Collected(floors=[FloorSpec(nodeid=f"{route}::{f.name}", location=(route, 0, ""),
                                            route=route, goldset="gs", eval_version="1",
                                            floor=f, keywords=[]) for f in floors],
                          populations=[population])
    current = saved_arrivals(population, rows, [], [])
    return compare_judges(
        goldset="gs", collected=collected, current=current,
        candidate=with_rows(current, regraded_rows(rows, candidate_judge, regraded)),
        rules=rules, shifts=judge_shifts(metrics, rows, regraded, floors),
        candidate_judge=candidate_judge)


KIND = {f"q{i:02d}": "single_doc" if i % 2 else "policy" for i in range(20)}


def row(qid: str, faithfulness: float) -> QuestionRecord:
    return QuestionRecord(goldset="gs", question_id=qid, kind=KIND[qid],
                          index=int(qid[1:]), must_abstain=False, abstained=False,
                          abstention_correct=True, evidence_spans=1, eval_version="1",
                          judge="fixture:current", metrics={"faithfulness": faithfulness},
                          answer_text="an answer")


ROWS = [row(q, 0.9) for q in KIND]


def regraded(value: dict[str, float | None]) -> dict[tuple[str, int], Regraded]:
    return {(q, 1): Regraded(values={"faithfulness": v}) if v is not None else
            Regraded(failures={"faithfulness": "timeout: no verdict within 60 s"})
            for q, v in value.items()}


def test_a_candidate_that_grades_alike_changes_nothing() -> None:
    found = rejudged(rows=ROWS, candidate_judge="fixture:same",
                    regraded=regraded(dict.fromkeys(KIND, 0.9)), metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.8)])
    assert changes(found) == []
    assert [(s.name, s.shift, s.significant) for s in found.shifts] == [
        ("faithfulness", 0.0, False), ("policy:faithfulness", 0.0, False),
        ("single_doc:faithfulness", 0.0, False)]
    assert [(f.floor.name, f.current, f.candidate) for f in found.floors] == [
        ("floor[faithfulness]", "passed", "passed")]


def test_a_shift_on_one_kind_is_found_on_that_kind_and_moves_its_floor() -> None:
    harsh = {q: 0.5 if KIND[q] == "single_doc" else 0.9 for q in KIND}
    found = rejudged(rows=ROWS, candidate_judge="fixture:harsh",
                    regraded=regraded(harsh), metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.6),
                            Floor("faithfulness", 0.8, kind="single_doc")])
    by_name = {s.name: s for s in found.shifts}
    kind = by_name["single_doc:faithfulness"]
    assert kind.significant and (kind.passed_to_failed, kind.failed_to_passed) == (10, 0)
    assert kind.p_mcnemar == 2 / 2 ** 10
    assert not by_name["policy:faithfulness"].significant
    floors = {f.floor.name: (f.current, f.candidate) for f in found.floors}
    assert floors == {"floor[faithfulness]": ("passed", "passed"),
                      "floor[single_doc:faithfulness]": ("passed", "failed")}
    assert changes(found)[0] == ("floor[single_doc:faithfulness] would change: passed under "
                                "the current judge, failed under the candidate")


def test_a_small_shift_on_few_answers_is_reported_but_not_significant() -> None:
    # two answers move a little: the paired tests cannot tell it from noise (Holm, 0.05)
    some = {q: (0.85 if q in ("q00", "q01") else 0.9) for q in KIND}
    found = rejudged(rows=ROWS, candidate_judge="fixture:near",
                    regraded=regraded(some), metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.6)])
    whole = found.shifts[0]
    assert whole.moved == 2 and whole.flips == () and not whole.significant
    assert whole.p_bootstrap is not None and whole.p_bootstrap > 0.05
    assert changes(found) == []


def test_an_answer_the_candidate_could_not_grade_is_a_change_never_paired_away() -> None:
    lost = {q: (None if q == "q03" else 0.9) for q in KIND}
    found = rejudged(rows=ROWS, candidate_judge="fixture:flaky",
                    regraded=regraded(lost), metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.6)])
    whole = found.shifts[0]
    assert whole.n == 19 and whole.unregraded == (("q03", "timeout: no verdict within 60 s"),)
    assert changes(found) == ["faithfulness: the candidate judge gave no verdict on 1 answer "
                             "the current judge graded: q03 (timeout: no verdict within 60 s)"]
    after = {r.question_id: r for r in regraded_rows(ROWS, "fixture:flaky", regraded(lost))}
    assert after["q03"].metrics == {} and "faithfulness" in after["q03"].judge_failures


def test_floors_are_held_to_the_labels_as_the_run_holds_them() -> None:
    # people say the single_doc answers are unfaithful: the current judge (0.9 everywhere)
    # is not calibrated, so the run fails its judged floors; the candidate agrees with them
    labels = {"faithfulness": ({q: float(k == "policy") for q, k in KIND.items()},
                               True)}
    harsh = {q: 0.4 if KIND[q] == "single_doc" else 0.9 for q in KIND}
    found = rejudged(rows=ROWS, candidate_judge="fixture:harsh",
                    regraded=regraded(harsh), metrics=["faithfulness"], labels=labels,
                    floors=[Floor("faithfulness", 0.6), Floor("judge_agreement", 0.6)])
    assert {f.floor.name: (f.current, f.candidate) for f in found.floors} == {
        "floor[faithfulness]": ("failed", "passed"),
        "floor[judge_agreement]": ("failed", "passed")}
    [pair] = found.agreements
    assert (pair.current.statistic, pair.candidate.value) == ("kappa", 1.0)


def tagged_rows(n: int = 60) -> list[QuestionRecord]:
    """n judged rows, a third tagged lang=de, the rest lang=en, every answer scored 1.0."""
    return [QuestionRecord(goldset="gs", question_id=f"t{i:02d}", kind="single_doc",
                           tags={"lang": "de" if i % 3 == 0 else "en"}, index=i,
                           must_abstain=False, abstained=False, abstention_correct=True,
                           evidence_spans=1, eval_version="1", judge="fixture:current",
                           metrics={"faithfulness": 1.0}, answer_text="an answer")
            for i in range(n)]


def test_slice_floors_are_decided_under_both_judges_as_the_run_decides_them() -> None:
    """A candidate harsh on the German answers only: the German slice floor, decided with its
    family (holds: its interval clears the floor; then a significant miss), would change."""
    rows = tagged_rows()
    harsh = {(r.question_id, 1): Regraded(values={
        "faithfulness": 0.2 if r.tags["lang"] == "de" else 1.0}) for r in rows}
    floors = [Floor("faithfulness", 0.7, slice=("lang", "de")),
              Floor("faithfulness", 0.7, slice=("lang", "en"))]
    found = rejudged(rows=rows, candidate_judge="fixture:harsh", regraded=harsh,
                    metrics=["faithfulness"], floors=floors)
    outcomes = {f.floor.name: (f.current, f.candidate) for f in found.floors}
    assert outcomes == {"floor[lang=de:faithfulness]": ("passed", "failed"),
                        "floor[lang=en:faithfulness]": ("passed", "passed")}


def test_a_candidate_with_the_current_judges_id_keeps_each_judges_own_agreement() -> None:
    """The same judge id at another URL: the current judge's agreement with the labels is its
    own, not overwritten by the candidate's (they were once keyed by judge id)."""
    labels = {"faithfulness": ({q: 1.0 for q in KIND}, False)}
    worse = regraded(dict.fromkeys(KIND, 0.1))
    found = rejudged(rows=ROWS, candidate_judge="fixture:current",
                    regraded=worse, metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.6)], labels=labels)
    pair = found.agreements[0]
    assert (pair.current.mae, pair.candidate.mae) == (pytest.approx(0.1), 0.9), pair
    assert [(f.current, f.candidate) for f in found.floors] == [("passed", "failed")]


def test_a_metric_neither_judge_graded_is_a_change_not_a_pass() -> None:
    # the current judge failed on every answer (a timeout), and so does the candidate:
    # nothing was compared, and two failed floors agreeing is no evidence they grade alike
    failed = [r.model_copy(update={"metrics": {}, "judge_failures": {"faithfulness": "timeout"}})
              for r in ROWS]
    found = rejudged(rows=failed, candidate_judge="fixture:flaky",
                    regraded=regraded(dict.fromkeys(KIND)), metrics=["faithfulness"],
                    floors=[Floor("faithfulness", 0.6)])
    assert found.shifts[0].n == 0
    assert changes(found) == ["faithfulness: no answer was graded by both judges: nothing to "
                             "hold the candidate to"]
