"""The decision step alone: collected populations, arrived results and failures in, runs with
their gaps and verdicts out, with no pytest run."""

from __future__ import annotations

import ast
from pathlib import Path

from pytest_ragate.decision import run_decision as decision
from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import run_status
from pytest_ragate.decision.population import (
    AnchorMember,
    Collected,
    FloorSpec,
    Member,
    Population,
)
from pytest_ragate.decision.rules import DEFAULT_RULES, Rules, Strictness, rules_of
from pytest_ragate.decision.run_decision import Arrived, Failure, decide_run
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from pytest_ragate.wording.floors import ANCHORS_ELSEWHERE

ROUTE = "gs/ragate.toml"


def member(qid: str, *, kind: str = "single", index: int = 0,
           selected: bool = True) -> Member:
    return Member(question_id=qid, question=f"what is {qid}?", kind=kind, index=index,
                  nodeid=f"{ROUTE}::{qid}" if selected else None, sealed=False,
                  must_abstain=False, evidence_spans=1, expected=["[d · turns 0–1]"])


def spec(floor: Floor, route: str = ROUTE) -> FloorSpec:
    return FloorSpec(nodeid=f"{route}::{floor.name}", location=("gs/ragate.toml", 0, "x"),
                     route=route, goldset="mini", eval_version="7", floor=floor,
                     keywords=["rag_gate"], config_path="gs/ragate.toml")


def population(questions: list[Member], anchors: list[AnchorMember] | None = None,
               checks_anchors: bool = True) -> Population:
    return Population(route=ROUTE, goldset="mini", eval_version="7", questions=questions,
                      anchors=anchors or [], checks_anchors=checks_anchors)


def scored(m: Member, found: bool = True) -> QuestionRecord:
    return QuestionRecord(goldset="mini", route=ROUTE, question_id=m.question_id,
                          question=m.question, kind=m.kind, index=m.index, must_abstain=False,
                          abstained=False, abstention_correct=True, evidence_spans=1,
                          evidence_spans_found=int(found), evidence_ranks=[1 if found else None],
                          metrics={"evidence_recall": float(found)}, eval_version="7")


def anchor(anchor_id: str, outcome: str = "passed", error: str | None = None,
           ) -> AnchorOutcome:
    return AnchorOutcome(goldset="mini", anchor_id=anchor_id, kind="retrieval_miss",
                         claim="c", path="gs/anchors.jsonl", line=1, outcome=outcome,
                         error=error)


def node(m: Member | AnchorMember) -> str:
    assert m.nodeid is not None
    return m.nodeid


RECALL = Floor("evidence_recall", 0.5)


def test_every_member_with_a_result_passes_the_floor() -> None:
    q1, q2 = member("q1"), member("q2", index=1)
    arrived = Arrived(records={node(q): scored(q) for q in (q1, q2)})
    done = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1, q2])]),
                      arrived)
    [run] = done.runs
    assert [r.question_id for r in run.records] == ["q1", "q2"]
    assert run.gaps == [] and done.lost == [] and run.failed_items == []
    [floor] = done.floors
    assert floor.spec.floor == RECALL and floor.verdict.outcome == "passed"
    assert run.verdicts == [floor.verdict]


def test_a_crashed_member_is_a_crashed_gap_with_an_error_row_and_fails_the_floor() -> None:
    q1, q2 = member("q1"), member("q2", index=1)
    arrived = Arrived(records={node(q1): scored(q1)},
                      failed={node(q2): Failure(phase="???", why="worker 'gw1' crashed",
                                                crashed=True)},
                      started={node(q2): (ROUTE, 1, "q2")})
    done = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1, q2])]),
                      arrived)
    [run] = done.runs
    assert [(g.member, g.kind, g.why) for g in run.gaps] == [
        ("q2", "crashed", "worker 'gw1' crashed")]
    error = run.records[1]
    assert (error.question_id, error.status, error.error) == ("q2", "error",
                                                              "worker 'gw1' crashed")
    assert done.lost == []  # xdist already reported it failed: nothing more to send
    assert run.failed_items == [node(q2)]
    assert done.floors[0].verdict.outcome == "failed"
    assert done.floors[0].verdict.message.startswith(
        "not decided: 1 of 2 questions have no result: crashed q2 (worker 'gw1' crashed)")


def test_an_errored_report_is_an_errored_gap() -> None:
    q1 = member("q1")
    arrived = Arrived(failed={node(q1): Failure(phase="setup", why="fixture blew up")})
    done = decide_run(Collected(floors=[], populations=[population([q1])]), arrived)
    assert [(g.kind, g.why) for g in done.runs[0].gaps] == [("errored", "fixture blew up")]


def test_a_deselected_member_skips_the_floor() -> None:
    q1, q2 = member("q1"), member("q2", index=1, selected=False)
    arrived = Arrived(records={node(q1): scored(q1)})
    done = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1, q2])]),
                      arrived)
    [run] = done.runs
    assert [(g.member, g.kind) for g in run.gaps] == [("q2", "deselected")]
    assert run.hard_gaps == []
    verdict = done.floors[0].verdict
    assert verdict.outcome == "skipped"
    assert "1 of 2 questions deselected (-k or -m): q2" in verdict.message


def test_a_member_that_started_and_never_reported_is_lost_and_reported() -> None:
    q1, q2, q3 = member("q1"), member("q2", index=1), member("q3", index=2)
    arrived = Arrived(records={node(q1): scored(q1)},
                      started={node(q2): (ROUTE, 1, "q2")},
                      down=["gw0: worker crashed"])
    done = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1, q2, q3])]),
                      arrived)
    [run] = done.runs
    why = "its worker went down before it reported: gw0: worker crashed"
    assert done.lost == [node(q2)] and done.lost_why == why
    assert [(g.member, g.kind, g.why) for g in run.gaps] == [("q2", "lost", why),
                                                            ("q3", "never ran", "")]
    assert [r.question_id for r in run.records] == ["q1", "q2"]  # q3 has no row at all
    assert run.records[1].error == f"lost: {why}"
    assert run.failed_items == [node(q2)]  # it is sent as a failure
    assert done.floors[0].verdict.outcome == "failed"


def test_anchor_floors_count_only_checked_anchors_and_errors_are_gaps() -> None:
    members = [AnchorMember(anchor_id=a, kind="retrieval_miss", nodeid=f"{ROUTE}::anchor[{a}]")
               for a in ("held", "xpass", "miss", "broken")]
    outcomes = [anchor("held"), anchor("xpass", "xpassed"), anchor("miss", "xfailed"),
                anchor("broken", "failed", error="ConnectionError: down")]
    arrived = Arrived(anchors={node(m): o for m, o in zip(members, outcomes, strict=True)})
    floor = Floor("evidence_recall", 0.6, kind="retrieval_miss", anchors=True)
    done = decide_run(Collected(floors=[spec(floor)], populations=[population([], members)]),
                      arrived)
    [run] = done.runs
    assert [a.anchor_id for a in run.anchors] == ["held", "xpass", "miss", "broken"]
    assert [(g.member, g.kind, g.why) for g in run.anchor_gaps] == [
        ("broken", "errored", "ConnectionError: down")]
    verdict = done.floors[0].verdict
    assert verdict.outcome == "failed"  # a gap never passes
    assert verdict.tally is not None and (verdict.tally.k, verdict.tally.n) == (2, 3)


def test_a_decorated_route_skips_anchor_floors() -> None:
    q1 = member("q1")
    floor = Floor("hold_rate", 0.9, kind="retrieval_miss", anchors=True)
    done = decide_run(Collected(floors=[spec(floor)],
                                populations=[population([q1], checks_anchors=False)]),
                      Arrived(records={node(q1): scored(q1)}))
    verdict = done.floors[0].verdict
    assert (verdict.outcome, verdict.message) == ("skipped", ANCHORS_ELSEWHERE)


def test_results_without_a_collection_cannot_be_decided() -> None:
    q1 = member("q1")
    done = decide_run(None, Arrived(records={node(q1): scored(q1)},
                                    down=["gw0: boom", "gw1: boom"]))
    assert done.undescribed == [ROUTE]
    assert done.undescribed_why == ("no process returned its collection (its xdist workers "
                                    "went down: gw0: boom; gw1: boom): the floors of this "
                                    "goldset could not be decided")
    assert [r.question_id for r in done.runs[0].records] == ["q1"] and done.floors == []
    assert decide_run(None, Arrived()).undescribed == []  # nothing arrived: nothing to say


def test_a_judged_floor_without_a_judge_fails_unless_its_metric_is_optional() -> None:
    """Not decided, so failed naming --ragate-judge; skipped only where the ini file
    (`ragate_judge_optional`) or the goldset (`[judge] optional`) names its metric, and failed
    even then under --ragate-require-judge. The judge_coverage floor follows the judged
    floors it gates: optional once every judged metric of the goldset is."""
    q1 = member("q1")
    floors = [Floor("faithfulness", 0.8), Floor("judge_coverage", 0.95)]
    collected = Collected(floors=[spec(f) for f in floors], populations=[population([q1])])
    arrived = Arrived(records={node(q1): scored(q1)})

    def outcomes(rules: Rules = DEFAULT_RULES, optional: tuple[str, ...] = ()) -> list[str]:
        found = collected.model_copy(update={"populations": [
            p.model_copy(update={"judge_optional": list(optional)})
            for p in collected.populations]})
        return [d.verdict.outcome for d in decide_run(found, arrived, rules).floors]

    failed = decide_run(collected, arrived).floors[0].verdict
    assert failed.outcome == "failed" and "--ragate-judge" in failed.message
    assert "-m \"not slow\"" in failed.message and "[judge] optional" in failed.message
    assert outcomes() == ["failed", "failed"]
    assert outcomes(rules_of({"judge_optional": "faithfulness"})) == ["skipped", "skipped"]
    assert outcomes(optional=("faithfulness",)) == ["skipped", "skipped"]
    assert outcomes(optional=("answer_relevancy",)) == ["failed", "failed"]
    required = rules_of({"judge_optional": "faithfulness", "require_judge": True})
    assert outcomes(required) == ["failed", "failed"]
    refused = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1])]),
                         arrived, Rules(strictness=Strictness(min_n=5)))
    assert refused.floors[0].verdict.message.startswith("refusing to gate")


def test_two_routes_of_one_goldset_are_labelled_by_route() -> None:
    q1 = member("q1")
    other = Population(route="test_rag.py::test_mine", goldset="mini", eval_version="7",
                       questions=[q1.model_copy(update={"nodeid": "test_rag.py::test_mine[q1]"})],
                       anchors=[], checks_anchors=False)
    done = decide_run(Collected(floors=[], populations=[population([q1]), other]), Arrived())
    assert [run.label for run in done.runs] == ["mini (gs/ragate.toml)",
                                                "mini (test_rag.py::test_mine)"]


def test_the_decision_step_imports_no_pytest() -> None:
    tree = ast.parse(Path(decision.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert not {name for name in imported if name.split(".")[0] in ("pytest", "_pytest")}


def test_a_member_pytests_cache_deselected_is_missing_not_left_out() -> None:
    """`--lf`/`--sw` rerun the last failures only: the questions they deselect are missing
    results of the floor (failed, naming the flag), where `-k` or `-m` leave them out
    (skipped): a rerun never turns a failed floor green by deciding it over nothing."""
    q1, q2 = member("q1"), member("q2", selected=False)
    collected = Collected(floors=[spec(RECALL)], populations=[population([q1, q2])])
    arrived = Arrived(records={node(q1): scored(q1)})
    chosen = decide_run(collected, arrived).floors[0].verdict
    assert chosen.outcome == "skipped" and "deselected (-k or -m)" in chosen.message
    narrowed = decide_run(collected, arrived, rules_of({}, narrowed_by="--lf"))
    verdict = narrowed.floors[0].verdict
    assert verdict.outcome == "failed", verdict.message
    assert verdict.message.startswith("not decided: 1 of 2 questions have no result: deselected "
                                      "q2 (--lf reran the last failures only: a floor is "
                                      "decided over its whole population, so run its goldset "
                                      "in full (without --lf) to decide it)")
    assert narrowed.runs[0].status == "failed"


def test_a_run_that_measured_nothing_is_never_a_pass() -> None:
    """`-k` matching nothing leaves no goldset run; `-k` matching only the floors leaves a
    run whose every question is deselected (its floors skipped). Neither measured anything,
    so neither says PASS (the reports said `Run: **PASS**`); beside a goldset that ran, the
    run is PARTIAL (its floors were not all decided), and a run that exits non-zero is a
    FAIL either way."""
    assert run_status([], failed=False) == "nothing_ran"
    assert run_status([], failed=True) == "failed"
    q1 = member("q1", selected=False)
    floors_only = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q1])]),
                             Arrived())
    [run] = floors_only.runs
    assert floors_only.floors[0].verdict.outcome == "skipped"
    assert run.status == "nothing_ran" and run_status([run], failed=False) == "nothing_ran"
    q2 = member("q2")
    ran = decide_run(Collected(floors=[spec(RECALL)], populations=[population([q2])]),
                     Arrived(records={node(q2): scored(q2)}))
    assert ran.runs[0].status == "passed"
    assert run_status([run, *ran.runs], failed=False) == "partial"
    anchored = decide_run(Collected(floors=[], populations=[population(
        [q1], [AnchorMember(anchor_id="a1", kind="retrieval_miss",
                            nodeid=f"{ROUTE}::anchor[a1]")])]),
        Arrived(anchors={f"{ROUTE}::anchor[a1]": anchor("a1")}))
    # an anchor that ran measured something (not NOTHING RAN); q1 was deselected: PARTIAL
    assert anchored.runs[0].status == "partial"


def test_a_cause_many_questions_share_is_said_once_with_their_count() -> None:
    """Issue 36 item 4: one misspelt fixture errors 40 questions, each error naming its
    question. The floor names the cause once, with the first ten ids and how many more, and
    each other cause once too (its message was 2,701 bytes over 40 such errors, every one
    repeated; the same errors in every floor)."""
    why = ("MissingSystem: {q}: no ragate_system in scope (did you mean ragate_system? "
           "conftest.py:6 defines ragate_sytem); the built-in pipeline answers only where "
           "asked for")
    gaps = [Gap(member=f"q{i:02d}", member_kind="single_doc", kind="errored",
                why=why.format(q=f"q{i:02d}")) for i in range(38)]
    gaps += [Gap(member=q, member_kind="single_doc", kind="lost",
                 why="its worker went down") for q in ("q38", "q39")]
    message = decide(Floor("citation_accuracy", 0.5), "mini", [], gaps=gaps).message
    assert message.count("no ragate_system in scope") == 1
    assert ("not decided: 40 of 40 questions have no result: errored q00, q01, q02, q03, q04, "
            "q05, q06, q07, q08, q09 and 28 more (MissingSystem: no ragate_system in scope "
            "(did you mean") in message
    assert "; lost q38, q39 (its worker went down) · " in message
    assert len(message.encode()) < 600
    one = decide(Floor("citation_accuracy", 0.5), "mini", [], gaps=gaps[:1]).message
    assert "errored q00 (MissingSystem: q00: no ragate_system in scope" in one  # as it was
