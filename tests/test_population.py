"""The population alone (decision/population.py), the one owner of what identifies an item:
its name within its route, the shard that asks it, and what its results row says before the
question is asked. Every other module asks it; these tests hold what they are told."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from pytest_ragate.decision import population as pop
from pytest_ragate.decision.population import (
    NOT_ON_THE_ROW,
    AnchorMember,
    Collected,
    Member,
    Population,
    anchor_name,
    asked_row,
    deal,
    node_shards,
    population_shards,
    question_name,
)
from pytest_ragate.decision.run_decision import Arrived, decide_run
from pytest_ragate.goldsets.labels import Label
from pytest_ragate.goldsets.loader import Case, Goldset, load_goldset
from pytest_ragate.scoring.records import QuestionRecord, repeat_name
from tests.conftest import write_goldset

ROUTE = "gs/ragate.toml"
ANCHORS = [{"anchor_id": "a1", "kind": "retrieval_miss", "claim": "the budget is 2 euros",
            "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 2}},
           {"anchor_id": "a2", "kind": "off_topic_control", "claim": "the weather in Lima"}]
PACKAGE = Path(pop.__file__).parents[1]


@pytest.fixture
def goldset(tmp_path: Path) -> Goldset:
    return load_goldset(write_goldset(tmp_path / "gs", anchors=ANCHORS))


def cases(goldset: Goldset, repeats: int = 1) -> list[Case]:
    return [c for case in goldset.cases for c in case.repeated(repeats)]


def collect(goldset: Goldset, repeats: int = 1, *, selected: set[str] | None = None,
            decorated: bool = False, route: str = ROUTE) -> Population:
    """A route's population as `items/collection.collected` builds it: every item name that
    is in `selected` (all, when None) runs as `ROUTE::name`."""
    names = [c.item_name for c in cases(goldset, repeats)]
    names += [anchor_name(e.anchor.anchor_id) for e in goldset.anchors]
    nodeids = {n: f"{route}::{n}" for n in names if selected is None or n in selected}
    return Population.of(route, goldset, cases(goldset, repeats),
                         None if decorated else [e.anchor for e in goldset.anchors], nodeids,
                         repeats=repeats)


# --- names ---------------------------------------------------------------------------------


def test_a_question_is_named_by_its_id_and_a_repeat_by_the_one_repeat_format() -> None:
    assert question_name("q07", 1, 1) == "q07"
    assert question_name("q07", 2, 3) == "q07[r2]" == repeat_name("q07", 2)
    assert anchor_name("a1") == "anchor[a1]"


def test_a_case_and_its_member_are_named_as_the_population_names_them(goldset: Goldset,
                                                                        ) -> None:
    for repeats in (1, 3):
        population = collect(goldset, repeats)
        assert [m.item_name for m in population.questions] == [
            question_name(c.question.question_id, c.repeat, c.repeats)
            for c in cases(goldset, repeats)] == [c.item_name for c in cases(goldset, repeats)]
        assert [a.item_name for a in population.anchors] == ["anchor[a1]", "anchor[a2]"]
    assert collect(goldset, 3).questions[1].item_name == "q1[r2]"
    # a member built by hand (the tests of the decision do) is named by its question id
    assert Member(question_id="q9", question="?", kind="k", index=0, nodeid=None, sealed=False,
                  must_abstain=False, evidence_spans=0).item_name == "q9"
    assert AnchorMember(anchor_id="x", kind="retrieval_miss", nodeid=None).item_name == (
        "anchor[x]")


def test_only_the_population_builds_an_anchor_name() -> None:
    """`anchor[...]` is written once, in decision/population.py: every other module asks
    `anchor_name` (a string that merely starts so, in a message or a docstring, is text)."""
    building = sorted({str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                       for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                       if isinstance(node, ast.JoinedStr) and _builds_anchor_name(node)})
    assert building == ["decision/population.py"]


def _builds_anchor_name(node: ast.JoinedStr) -> bool:
    """`f"anchor[{...}]"`, wherever it stands in an f-string."""
    return any(isinstance(part, ast.Constant) and str(part.value).endswith("anchor[")
               and isinstance(after, ast.FormattedValue)
               for part, after in zip(node.values, node.values[1:], strict=False))


# --- the population of a route ---------------------------------------------------------------


def test_a_route_collects_every_case_and_anchor_with_the_node_id_it_runs_as(
        goldset: Goldset) -> None:
    population = collect(goldset, selected={"q1", "q3", "anchor[a2]"})
    assert (population.goldset, population.eval_version, population.sha256) == (
        "mini", "7", goldset.content_sha256)
    assert [(m.item_name, m.nodeid) for m in population.questions] == [
        ("q1", f"{ROUTE}::q1"), ("q2", None), ("q3", f"{ROUTE}::q3"), ("q4", None)]
    assert [(a.item_name, a.kind, a.nodeid) for a in population.anchors] == [
        ("anchor[a1]", "retrieval_miss", None),
        ("anchor[a2]", "off_topic_control", f"{ROUTE}::anchor[a2]")]
    assert population.checks_anchors
    q3 = population.questions[2]
    assert (q3.kind, q3.index, q3.must_abstain, q3.evidence_spans, q3.sealed) == (
        "multi_doc", 2, False, 2, False)
    assert population.questions[3].must_abstain and population.questions[3].evidence_spans == 0
    assert q3.expected == cases(goldset)[2].expected_labels


def test_a_decorated_route_checks_no_anchor(goldset: Goldset) -> None:
    population = collect(goldset, decorated=True)
    assert population.anchors == [] and not population.checks_anchors
    assert len(population.questions) == 4


def test_a_route_keeps_the_goldset_labels_field_by_field(goldset: Goldset) -> None:
    labels = [Label(question_id="q1", metric="faithfulness", value=1.0, binary=True,
                    answer_sha256="ab"), Label(question_id="q2", metric="answer_relevance",
                                               value=0.5, binary=False)]
    population = Population.of(ROUTE, goldset, cases(goldset), [], {}, labels=labels)
    assert [label.model_dump() for label in population.labels] == [
        {"question_id": "q1", "metric": "faithfulness", "value": 1.0, "binary": True,
         "answer_sha256": "ab"},
        {"question_id": "q2", "metric": "answer_relevance", "value": 0.5, "binary": False,
         "answer_sha256": None}]


def test_a_collected_population_crosses_the_wire_unchanged(goldset: Goldset) -> None:
    found = Collected(floors=[], populations=[collect(goldset, 2, selected={"q1[r2]"})])
    assert Collected.model_validate(found.model_dump(mode="json")) == found


# --- the deal --------------------------------------------------------------------------------


def test_the_deal_is_pinned() -> None:
    """Saved shards are decided later, perhaps by another version: the deal must not move."""
    assert deal(ROUTE, ["q1", "q2", "q3", "q4", "q5"], ["anchor[a1]", "anchor[a2]"], 3) == {
        "q1": 2, "q2": 3, "q3": 3, "q4": 1, "q5": 2, "anchor[a1]": 1, "anchor[a2]": 2}
    assert deal(ROUTE, ["q1[r1]", "q1[r2]", "q2[r1]", "q2[r2]"], [], 2) == {
        "q1[r1]": 1, "q1[r2]": 2, "q2[r1]": 2, "q2[r2]": 1}


def test_the_deal_is_balanced_stable_and_blind_to_order() -> None:
    questions = [f"q{i:03d}" for i in range(100)]
    anchors = [anchor_name(f"a{i}") for i in range(10)]
    for count in (1, 2, 3, 7):
        shards = deal(ROUTE, questions, anchors, count)
        for names in (questions, anchors):
            sizes = Counter(shards[n] for n in names)
            assert set(sizes) == set(range(1, count + 1))
            assert max(sizes.values()) - min(sizes.values()) <= 1
        assert deal(ROUTE, questions[::-1], anchors[::-1], count) == shards
        assert deal(ROUTE, questions, anchors, count) == shards


def test_a_population_is_dealt_over_its_item_names(goldset: Goldset) -> None:
    """The shard's selection (by node id), the results header and `ragate decide` (by name)
    ask one deal, over the names of every case and anchor of the goldset."""
    for repeats in (1, 2):
        population = collect(goldset, repeats)
        by_name = population_shards(population, 3)
        assert by_name == deal(ROUTE, [c.item_name for c in cases(goldset, repeats)],
                               ["anchor[a1]", "anchor[a2]"], 3)
        assert node_shards(population, 3) == {f"{ROUTE}::{n}": s for n, s in by_name.items()}


def test_the_deal_is_blind_to_selection_and_to_the_other_goldsets(goldset: Goldset,
                                                                  tmp_path: Path) -> None:
    whole = population_shards(collect(goldset), 3)
    part = collect(goldset, selected={"q2", "anchor[a1]"})
    assert population_shards(part, 3) == whole  # -k deselects; it does not re-deal
    assert node_shards(part, 3) == {f"{ROUTE}::q2": whole["q2"],
                                    f"{ROUTE}::anchor[a1]": whole["anchor[a1]"]}
    other = load_goldset(write_goldset(tmp_path / "other", toml=(
        'name = "other"\neval_version = "1"\n[corpus]\npaths = ["corpus/*.jsonl"]\n'
        'format = "segments-jsonl"\n[questions]\nfile = "questions.jsonl"\n'
        'expected = "expected.jsonl"\n')))
    both = Collected(floors=[], populations=[collect(goldset),
                                             collect(other, route="other/ragate.toml")])
    assert population_shards(both.populations[0], 3) == whole


def test_a_decorated_route_deals_its_questions_as_the_file_route_does(goldset: Goldset,
                                                                     ) -> None:
    file_route = population_shards(collect(goldset), 2)
    decorated = population_shards(collect(goldset, decorated=True), 2)
    assert decorated == {n: s for n, s in file_route.items() if not n.startswith("anchor[")}


# --- the base row ---------------------------------------------------------------------------


def test_the_base_row_is_the_member_stamped_by_its_population(goldset: Goldset) -> None:
    population = collect(goldset, 2)
    member = population.questions[5]  # q3, its second repeat
    row = population.row(member, status="error", error="boom")
    assert row == QuestionRecord(
        goldset="mini", route=ROUTE, question_id="q3", repeat=2, question="What about q3?",
        kind="multi_doc", index=2, status="error", error="boom", must_abstain=False,
        evidence_spans=2, eval_version="7", goldset_sha256=goldset.content_sha256,
        expected=member.expected)
    on_the_row = set(Member.model_fields) - NOT_ON_THE_ROW
    assert on_the_row <= set(QuestionRecord.model_fields)  # a Member field is a row field
    dumped = member.model_dump(exclude=NOT_ON_THE_ROW)
    assert {name: getattr(row, name) for name in dumped} == dumped
    # a field a member leaves out when empty (untagged: no `tags`) is empty on the row too
    assert all(not getattr(row, name) for name in on_the_row - set(dumped))


def test_a_question_asked_and_a_question_collected_have_one_base_row(goldset: Goldset,
                                                                      ) -> None:
    """The row of a question its item scored (`items/questions.base_record`) and the error
    row of one whose report never came (`decide_run`) start from the same fields."""
    for repeats in (1, 2):
        population = collect(goldset, repeats)
        for case, member in zip(cases(goldset, repeats), population.questions, strict=True):
            assert asked_row(case, ROUTE, status="skipped", error="sealed") == (
                population.row(member, status="skipped", error="sealed"))


def test_a_field_added_to_member_reaches_both_rows(goldset: Goldset,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A new row field is a Member field (and a QuestionRecord one), filled where a question's
    row fields are made from its case (`row_fields`): nothing else to edit for the scored row
    and the crash's row, both made by the row's one constructor."""

    class Wider(Member):
        answerer_model: str | None = None  # stands for the new field

    plain = pop.row_fields
    monkeypatch.setattr(pop, "Member", Wider)
    monkeypatch.setattr(pop, "row_fields", lambda case: {
        **plain(case), "answerer_model": f"model of {case.question.question_id}"})
    population = collect(goldset)
    q2 = population.questions[1]
    assert asked_row(cases(goldset)[1], ROUTE).answerer_model == "model of q2"
    assert population.row(q2).answerer_model == "model of q2"
    assert set(Member.model_fields) == set(plain(cases(goldset)[1])) | NOT_ON_THE_ROW
    started = {m.nodeid: (ROUTE, None, m.item_name) for m in population.questions
               if m.nodeid is not None}
    [run] = decide_run(Collected(floors=[], populations=[population]),
                       Arrived(started=started)).runs
    assert [(r.question_id, r.status, r.answerer_model) for r in run.records] == [
        (q, "error", f"model of {q}") for q in ("q1", "q2", "q3", "q4")]


# --- the row on the wire -------------------------------------------------------------------


def test_a_workers_row_crosses_as_its_json_text_and_is_not_dumped_again(
        goldset: Goldset, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's row rides on its report as JSON text (`items/questions._send`), decoded
    once for every reader (`keys.row_of`); the controller validates it and keeps that JSON
    as the row's own (`QuestionRecord.from_wire`): the same row, not dumped a second time."""
    import json

    from pytest_ragate.items.keys import RECORD_ATTR, row_of

    record = asked_row(goldset.cases[0], ROUTE, abstained=False, citations=2,
                       citations_correct=1, metrics={"citation_accuracy": 0.5},
                       judge_failures={"faithfulness": "timed out"}, latency_s=0.25,
                       answer_text="It was 12 euros — «agreed».")
    report = pytest.TestReport(f"{ROUTE}::q1", (ROUTE, None, "q1"), {}, "passed", None,
                               "call")
    setattr(report, RECORD_ATTR, json.dumps(record.row_json()))
    row = row_of(report)
    assert row == record.row_json() and row_of(report) is row  # decoded once
    assert QuestionRecord.from_wire(record.row_json()) is record  # this process's own
    back = QuestionRecord.from_wire(row)
    assert back == record
    monkeypatch.setattr(QuestionRecord, "model_dump",
                        lambda *args, **kwargs: pytest.fail("the row was dumped again"))
    assert back.row_json() == row
