"""A floor that depends on another is not decided while that other does not hold, whether or
not the other is an xfail: a judged floor (whole, of a kind, of a slice) over a population
whose judge delivered fewer of its verdicts than the judge_coverage floor asks, and every
judged floor of a judge the labels do not vouch for (judge_agreement). Issue case:
`judge_coverage = { min = 0.95, xfail = "…" }` with a judge that answered 1 of 12 let
faithfulness pass over 1 judged answer, CI [1.00, 1.00], exit 0."""

from __future__ import annotations

import pytest

from pytest_ragate.decision.population import (
    Collected,
    FloorSpec,
    LabelSpec,
    Member,
    Population,
)
from pytest_ragate.decision.run_decision import Arrived, Decision, decide_run
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord

ROUTE = "gs/ragate.toml"
JUDGE = "fixture:judge"
IDS = [f"q{i:02d}" for i in range(12)]
LANG = {q: "en" if i % 2 else "de" for i, q in enumerate(IDS)}
JUDGED = [Floor("faithfulness", 0.5), Floor("faithfulness", 0.5, kind="single_doc"),
          Floor("faithfulness", 0.5, slice=("lang", "de")),
          Floor("faithfulness", 0.5, slice=("lang", "en"))]
XFAIL = "the judge times out on long answers"


def member(qid: str) -> Member:
    return Member(question_id=qid, question="?", kind="single_doc", tags={"lang": LANG[qid]},
                  index=int(qid[1:]), nodeid=f"{ROUTE}::{qid}", sealed=False,
                  must_abstain=False, evidence_spans=1)


def row(qid: str, answered: bool) -> QuestionRecord:
    return QuestionRecord(
        goldset="gs", route=ROUTE, question_id=qid, kind="single_doc", tags={"lang": LANG[qid]},
        index=int(qid[1:]), must_abstain=False, abstained=False, abstention_correct=True,
        evidence_spans=1, eval_version="1", judge=JUDGE, answer_text="an answer",
        metrics={"faithfulness": 1.0} if answered else {},
        judge_failures={} if answered else {"faithfulness": "timeout"})


def decided(floors: list[Floor], answered: int, *, coverage_min: float | None = None,
            labels: list[LabelSpec] | None = None,
            agreement_min: float | None = None) -> Decision:
    """The run over 12 questions whose judge answered the first `answered` of them."""
    population = Population(route=ROUTE, goldset="gs", eval_version="1",
                            questions=[member(q) for q in IDS], anchors=[], judge=JUDGE,
                            coverage_min=coverage_min, labels=labels or [],
                            agreement_min=agreement_min)
    specs = [FloorSpec(nodeid=f"{ROUTE}::{f.name}", location=(ROUTE, 0, f.name), route=ROUTE,
                       goldset="gs", eval_version="1", floor=f, keywords=[]) for f in floors]
    arrived = Arrived(records={f"{ROUTE}::{q}": row(q, i < answered) for i, q in enumerate(IDS)})
    return decide_run(Collected(floors=specs, populations=[population]), arrived)


def outcomes(decision: Decision) -> dict[str, tuple[str, str]]:
    return {d.spec.floor.name: (d.verdict.outcome, d.verdict.message) for d in decision.floors}


@pytest.mark.parametrize("xfail", [XFAIL, None], ids=["coverage-xfail", "coverage-floor"])
def test_a_judge_that_answered_1_of_12_decides_no_judged_floor(xfail: str | None) -> None:
    found = outcomes(decided([*JUDGED, Floor("judge_coverage", 0.95, xfail=xfail)], 1))
    assert found["floor[judge_coverage]"][0] == ("xfailed" if xfail else "failed")
    for floor in JUDGED:
        outcome, message = found[floor.name]
        assert outcome == "failed", (floor.name, message)
    for name, said in [("floor[faithfulness]", "delivered 1 of 12 verdicts (0.08 < "),
                       ("floor[single_doc:faithfulness]", "delivered 1 of 12 verdicts of "),
                       ("floor[lang=de:faithfulness]", "delivered 1 of 6 verdicts of lang=de")]:
        assert "not decided" in found[name][1] and said in found[name][1], found[name][1]
        assert "judge_coverage floor 0.95" in found[name][1]
    # the English half got no verdict at all: nothing scored, which fails too
    assert found["floor[lang=en:faithfulness]"][1].startswith("nothing scored")


def test_a_deselected_coverage_floor_still_holds_the_judged_floors() -> None:
    """`-k faithfulness` leaves the coverage floor out of the run, not out of the rules."""
    found = outcomes(decided(JUDGED, 1, coverage_min=0.95))
    assert {name: o for name, (o, _) in found.items()} == dict.fromkeys(
        [f.name for f in JUDGED], "failed")


def test_a_judge_that_answered_enough_is_decided_on_its_verdicts() -> None:
    found = outcomes(decided([JUDGED[0], Floor("judge_coverage", 0.9, xfail=XFAIL)], 12))
    assert found["floor[faithfulness]"][0] == "passed"
    assert found["floor[judge_coverage]"][0] == "xpassed"  # it holds: remove its xfail


def test_an_xfail_agreement_floor_does_not_free_the_judged_floors() -> None:
    """People say every answer is unfaithful; the judge says 1.0: not calibrated, so the
    judged floors fail whether or not judge_agreement is itself an xfail."""
    labels = [LabelSpec(question_id=q, metric="faithfulness", value=0.0, binary=True)
              for q in IDS]
    floors = [JUDGED[0], Floor("judge_agreement", 0.6, xfail="labels are new")]
    found = outcomes(decided(floors, 12, labels=labels, agreement_min=0.6))
    assert found["floor[judge_agreement]"][0] == "xfailed"
    outcome, message = found["floor[faithfulness]"]
    assert outcome == "failed" and message.startswith("judge not calibrated"), message
