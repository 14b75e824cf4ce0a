"""One verdict, whichever path reaches it: the gate's `decide_run`, and `ragate rejudge`'s
prediction of what the gate would decide with the candidate judge (issue: a candidate that
loses 6 of the 20 verdicts of `lang=en` was predicted to pass that slice's floor, which the
gate with that judge fails: the slice's judge coverage is 14/20)."""

from __future__ import annotations

from pytest_ragate.decision.population import Collected, FloorSpec, Member, Population
from pytest_ragate.decision.run_decision import Arrived, decide_run
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.rejudge import Regraded
from tests.test_rejudge_compare import rejudged

ROUTE = "gs/ragate.toml"
LANGS = {f"q{i:03d}": "en" if i < 20 else "de" for i in range(120)}
FLOORS = [Floor("faithfulness", 0.7, slice=("lang", "en")),
          Floor("faithfulness", 0.7, slice=("lang", "de")),
          Floor("judge_coverage", 0.95)]
LOST = {f"q{i:03d}" for i in range(6)}  # 6 of the 20 English answers: 14/20 delivered


def member(qid: str) -> Member:
    return Member(question_id=qid, question=f"what is {qid}?", kind="single_doc",
                  tags={"lang": LANGS[qid]}, index=int(qid[1:]), nodeid=f"{ROUTE}::{qid}",
                  sealed=False, must_abstain=False, evidence_spans=1)


def row(qid: str, judge: str, lost: bool = False) -> QuestionRecord:
    return QuestionRecord(
        goldset="gs", route=ROUTE, question_id=qid, kind="single_doc",
        tags={"lang": LANGS[qid]}, index=int(qid[1:]), must_abstain=False, abstained=False,
        abstention_correct=True, evidence_spans=1, eval_version="1", judge=judge,
        metrics={} if lost else {"faithfulness": 1.0},
        judge_failures={"faithfulness": "timeout"} if lost else {}, answer_text="an answer")


def gate(rows: list[QuestionRecord]) -> dict[str, str]:
    collected = Collected(
        floors=[FloorSpec(nodeid=f"{ROUTE}::{f.name}", location=(ROUTE, 0, f.name),
                          route=ROUTE, goldset="gs", eval_version="1", floor=f,
                          keywords=["rag_gate"]) for f in FLOORS],
        populations=[Population(route=ROUTE, goldset="gs", eval_version="1",
                                questions=[member(q) for q in LANGS], anchors=[])])
    arrived = Arrived(records={f"{ROUTE}::{r.question_id}": r for r in rows})
    return {d.spec.floor.name: d.verdict.outcome
            for d in decide_run(collected, arrived).floors}


def test_rejudge_predicts_the_verdict_the_gate_reaches_with_the_candidate() -> None:
    current = [row(q, "fixture:current") for q in LANGS]
    candidate = [row(q, "fixture:candidate", q in LOST) for q in LANGS]
    regraded = {(r.question_id, 1): Regraded(values=r.metrics, failures=r.judge_failures)
                for r in candidate}
    predicted = rejudged(rows=current, candidate_judge="fixture:candidate",
                         regraded=regraded, metrics=["faithfulness"], floors=FLOORS)
    by_gate = gate(candidate)
    assert by_gate["floor[lang=en:faithfulness]"] == "failed"  # 14/20 < 0.95
    assert by_gate["floor[judge_coverage]"] == "passed"  # 114/120 = 0.95
    assert {f.floor.name: f.current for f in predicted.floors} == {
        k: v for k, v in gate(current).items() if k in {f.floor.name for f in predicted.floors}}
    assert {f.floor.name: f.candidate for f in predicted.floors} == {
        k: v for k, v in by_gate.items() if k in {f.floor.name for f in predicted.floors}}
