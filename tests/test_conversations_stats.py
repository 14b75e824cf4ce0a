"""The conversation as the unit of a goldset's statistics (issue 37 item 3): clustered tallies
and their intervals, `conversation_success`, turn-position floors, and a sequential run that
asks whole conversations and stops only between them. Pure functions, no pytest run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.population import Member, Population, SequentialPlan
from pytest_ragate.decision.sequential import Stopping, asking_order
from pytest_ragate.goldsets.config import Question
from pytest_ragate.goldsets.floors_table import parse_floors
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.intervals import interval, method
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.scoring.stats import (
    t_quantile,
    wilson,
    wilson_clustered,
    wilson_conversations,
)
from pytest_ragate.wording.numbers import fmt_n
from tests.conftest import write_goldset


def row(qid: str, conversation: str | None, turn: int | None, *, right: bool = True,
        status: str = "scored") -> QuestionRecord:
    return QuestionRecord.model_validate({
        "goldset": "g", "question_id": qid, "kind": "single_doc", "index": 0,
        "must_abstain": False, "evidence_spans": 1, "eval_version": "1", "status": status,
        "conversation": conversation, "turn": turn, "abstention_correct": right,
        "citations": 1, "citations_correct": int(right), "error": "boom" * (status == "error")})


def conversations(spec: dict[str, list[bool]]) -> list[QuestionRecord]:
    return [row(f"{c}-{t}", c, t, right=r) for c, turns in spec.items()
            for t, r in enumerate(turns, start=1)]


def test_a_tally_over_turns_keeps_each_conversation_as_a_cluster() -> None:
    rows = [*conversations({"a": [True, True, True], "b": [True, False, False],
                            "c": [True, True]}), row("solo", None, None)]
    t = tally("abstention_accuracy", rows)
    assert (t.k, t.n, t.by, t.questions, t.repeats, t.conversations) == (
        7, 9, "conversations", 4, 1, 3)
    assert sorted(t.clusters) == [(1.0, 1.0), (1.0, 3.0), (2.0, 2.0), (3.0, 3.0)]
    assert interval(t) == wilson_conversations(7, 9, t.clusters, 1)
    assert method(t) == "Wilson, conversations as clusters"
    assert fmt_n(t) == "9 in 3 conversations and 1 question"  # a question alone is none
    assert fmt_n(tally("abstention_accuracy", rows[:8])) == "8 in 3 conversations"
    # wider than the naive interval over turns, and than the uncorrected clustered one
    naive, plain, ours = wilson(7, 9), wilson_clustered(7, 9, t.clusters, 1), interval(t)
    assert ours[0] < plain[0] <= naive[0] and ours[1] > plain[1] >= naive[1]


def test_a_goldset_without_conversations_is_tallied_as_before() -> None:
    t = tally("abstention_accuracy", [row(f"q{i}", None, None) for i in range(5)])
    assert (t.clusters, t.by) == ((), "questions") and interval(t) == wilson(5, 5)


def test_the_t_quantile() -> None:
    assert t_quantile(1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile(2) == pytest.approx(4.3027, abs=1e-4)
    assert t_quantile(19) == pytest.approx(2.0930, abs=1e-4)
    assert t_quantile(199) == pytest.approx(1.9720, abs=1e-4)


def test_conversation_success_counts_conversations_right_at_every_turn() -> None:
    rows = conversations({"a": [True, True], "b": [True, False], "c": [True, True]})
    rows.append(row("d-1", "d", 1, status="error"))
    t = tally("conversation_success", [*rows, row("solo", None, None)])
    assert (t.k, t.n) == (2, 4)  # b has a wrong turn, d an errored one; solo is no conversation
    from pytest_ragate.scoring.records import worst_first

    assert [w for _, w in worst_first("conversation_success", rows)] == [
        "b-2 (turn 2 of b): answered but should abstain; 1 of 1 citations wrong"]


def test_turn_position_floors_are_the_turn_slice(tmp_path: Path) -> None:
    floors = parse_floors({"turn": {"1": {"citation_accuracy": 0.9},
                                    "later": {"abstention_accuracy": 0.8}}}, tmp_path)
    assert [(f.metric, f.slice, f.name) for f in floors] == [
        ("citation_accuracy", ("turn", "1"), "floor[turn=1:citation_accuracy]"),
        ("abstention_accuracy", ("turn", "later"), "floor[turn=later:abstention_accuracy]")]
    with pytest.raises(GoldsetError, match=r"floors.turn.2: a turn position's floors are"):
        parse_floors({"turn": {"2": {"citation_accuracy": 0.9}}}, tmp_path)
    turn = {"question_id": "q", "kind": "k", "question": "?", "conversation": "c"}
    assert Question.model_validate({**turn, "turn": 1}).slices["turn"] == "1"
    assert Question.model_validate({**turn, "turn": 3}).slices["turn"] == "later"
    with pytest.raises(ValueError, match="a slice of its own"):
        Question.model_validate({**turn, "turn": 1, "tags": {"turn": "x"}})


def _turns(*spec: tuple[str, str | None, int | None]) -> list[dict[str, Any]]:
    kinds = {"q1": "single_doc", "q2": "single_doc", "q3": "multi_doc",
             "q4": "unanswerable"}
    return [{"question_id": q, "kind": kinds[q], "question": "?",
             **({"conversation": c, "turn": t} if c else {})} for q, c, t in spec]


def test_a_conversation_success_floor_needs_conversations_and_the_whole_goldset(
        tmp_path: Path) -> None:
    plain = write_goldset(tmp_path / "plain", floors="[floors]\nconversation_success = 0.5\n")
    with pytest.raises(GoldsetError, match="no question is a turn of a conversation"):
        load_goldset(plain)
    kinds = write_goldset(tmp_path / "kinds", questions=_turns(
        ("q1", "c", 1), ("q2", "c", 2), ("q3", None, None), ("q4", None, None)),
        floors="[floors.kind.single_doc]\nconversation_success = 0.5\n")
    with pytest.raises(GoldsetError, match="over whole conversations: \\[floors\\], not of a"):
        load_goldset(kinds)
    fine = write_goldset(tmp_path / "fine", questions=_turns(
        ("q1", "c", 1), ("q2", "c", 2), ("q3", None, None), ("q4", None, None)),
        floors="[floors]\nconversation_success = 0.5\n[floors.turn.later]\n"
        "abstention_accuracy = 0.5\n")
    assert [f.name for f in load_goldset(fine).floors] == [
        "floor[conversation_success]", "floor[turn=later:abstention_accuracy]"]


def _population(turns: int, conversations: int) -> Population:
    members = [Member(question_id=f"c{c}-{t}", question="?", kind="k", index=i, nodeid=None,
                      sealed=False, must_abstain=True, evidence_spans=0,
                      conversation=f"c{c}", turn=t)
               for i, (c, t) in enumerate((c, t) for c in range(conversations)
                                          for t in range(1, turns + 1))]
    return Population(route="gs/ragate.toml", goldset="g", eval_version="1",
                      questions=members, anchors=[],
                      sequential=SequentialPlan(seed=7, alpha=0.05, gaps=0.9))


def test_a_sequential_run_asks_whole_conversations_in_turn_order() -> None:
    population = _population(3, 40)
    names = [m.item_name for m in population.questions]
    units = {n: n.split("-")[0] for n in names}
    order = asking_order(7, population.route, names, units)
    assert sorted(order) == sorted(names) and order != names
    for i in range(0, len(order), 3):  # each conversation's turns together, in order
        assert order[i:i + 3] == [f"{order[i].split('-')[0]}-{t}" for t in (1, 2, 3)]
    # without units the order is the one a goldset without conversations always had
    assert asking_order(7, population.route, names) == asking_order(7, population.route,
                                                                     names, {})


def test_a_sequential_stop_falls_between_conversations() -> None:
    population = _population(3, 60)
    stopping = Stopping.of(population, [Floor("abstention_accuracy", 0.5)])
    assert stopping is not None and stopping.halted is None
    for name in stopping.order:
        member = next(m for m in population.questions if m.item_name == name)
        stopping.offer(name, row(name, member.conversation, member.turn, right=True)
                       .model_copy(update={"must_abstain": True, "abstained": True}))
        if stopping.recheck is not None:
            break
    assert stopping.recheck is not None, "every floor decided, the stop is re-checked"
    assert stopping.recheck.asked % 3 == 0  # never mid-conversation
    track = next(iter(stopping.tracks.values()))  # one observation per conversation
    assert track.test.population == 60 and track.bound == 3
    assert track.shares == [(3.0, 3)] * (stopping.recheck.asked // 3)
    again = stopping.recheck.names
    for i in range(0, len(again), 3):
        assert [n.split("-")[1] for n in again[i:i + 3]] == ["1", "2", "3"]


def test_the_paired_regression_check_pairs_conversations() -> None:
    from pytest_ragate.decision.regressions import check
    from pytest_ragate.scoring.pairing import pair
    from pytest_ragate.scoring.stats import BOOTSTRAP

    then = {r.question_id: r.scores() for r in conversations(
        {f"c{i}": [True, True, True] for i in range(30)})}
    now = {r.question_id: r.scores() for r in conversations(
        {f"c{i}": [True, i >= 12, i >= 12] for i in range(30)})}
    paired = pair("abstention_accuracy", then, now)
    assert paired.by_conversation and paired.questions == 30
    assert paired.dropped == tuple(f"c{i}" for i in range(12))
    assert paired.ratios[0] == (3.0, 3.0, 1.0, 3.0)  # a conversation's three turns, one pair
    found = check("g", "abstention_accuracy", then, now, alpha=0.05)
    assert found.test == BOOTSTRAP and found.outcome == "failed"
    assert "over 30 paired conversations (paired bootstrap" in found.message
    assert "worse: c0, c1" in found.message
    # questions asked alone beside conversations are paired as questions, not conversations
    solo = {f"s{i}": row(f"s{i}", None, None).scores() for i in range(3)}
    mixed = check("g", "abstention_accuracy", {**then, **solo}, {**now, **solo}, alpha=0.05)
    assert "over 30 paired conversations and 3 questions (paired bootstrap" in mixed.message
    # history lines of questions outside conversations are as before
    assert "conversation" not in row("q", None, None).scores().model_dump()
