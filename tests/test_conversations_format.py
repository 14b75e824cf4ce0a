"""Conversations in a goldset's files (issue 37 item 1): `conversation` and `turn` on a
question, and the one problem each bad conversation gets from `load_goldset` (what collection
and `ragate validate` both report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets.config import Question
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError, Problem
from tests.conftest import EVIDENCE, expected_rows, write_goldset


def turns(*spec: tuple[str, str | None, int | None]) -> list[dict[str, Any]]:
    """Questions q1..q4 (the shared corpus's answers) with (id, conversation, turn)."""
    kinds = {"q1": "single_doc", "q2": "single_doc", "q3": "multi_doc",
             "q4": "unanswerable"}
    rows = []
    for qid, conversation, turn in spec:
        row: dict[str, Any] = {"question_id": qid, "kind": kinds[qid],
                               "question": f"What about {qid}?"}
        if conversation is not None:
            row["conversation"] = conversation
        if turn is not None:
            row["turn"] = turn
        rows.append(row)
    return rows


def problems(root: Path, questions: list[dict[str, Any]]) -> list[Problem]:
    write_goldset(root, questions=questions,
                  expected=expected_rows({q["question_id"]: EVIDENCE[q["question_id"]]
                                          for q in questions}))
    with pytest.raises(GoldsetError) as info:
        load_goldset(root)
    return info.value.problems


def test_a_conversation_loads_with_its_turns_and_the_others_stay_as_they_were(tmp_path):
    root = write_goldset(tmp_path / "g", questions=turns(
        ("q1", "prices", 1), ("q2", "prices", 2), ("q3", None, None), ("q4", "other", 1)))
    goldset = load_goldset(root)
    assert [(c.question.conversation, c.question.turn) for c in goldset.cases] == [
        ("prices", 1), ("prices", 2), (None, None), ("other", 1)]
    # a question outside conversations dumps as before: the content digest is unchanged
    assert "conversation" not in goldset.cases[2].question.model_dump()
    plain = load_goldset(write_goldset(tmp_path / "plain"))
    assert "turn" not in plain.cases[0].question.model_dump_json()


def test_a_gap_in_the_turns_is_one_problem(tmp_path):
    found = problems(tmp_path, turns(("q1", "prices", 1), ("q2", "prices", 3)))
    assert [(p.field, p.line) for p in found] == [("turn", 1)]
    assert "turns 1, 3: turn 2 missing" in found[0].message


def test_a_conversation_of_one_later_turn_says_its_first_is_missing(tmp_path):
    found = problems(tmp_path, turns(("q1", "prices", 2)))
    assert len(found) == 1 and "turn 1 missing" in found[0].message


def test_a_duplicate_turn_names_both_lines(tmp_path):
    found = problems(tmp_path, turns(("q1", "prices", 1), ("q2", "prices", 1),
                                     ("q3", "prices", 2)))
    assert [(p.field, p.line, p.question_id) for p in found] == [("turn", 2, "q2")]
    assert "has turn 1 twice (first on line 1)" in found[0].message


def test_a_question_in_two_conversations_is_one_problem_not_also_a_duplicate_id(tmp_path):
    found = problems(tmp_path, turns(("q1", "a", 1), ("q1", "b", 1)))
    assert len(found) == 1, [str(p) for p in found]
    assert found[0].field == "conversation" and "of conversation 'a' (line 1)" in str(found[0])


def test_turns_out_of_order_in_the_file(tmp_path):
    found = problems(tmp_path, turns(("q2", "prices", 2), ("q1", "prices", 1)))
    assert len(found) == 1 and found[0].line == 2
    assert "comes after turn 2" in found[0].message


@pytest.mark.parametrize(("row", "says"), [
    ({"turn": 2}, "a turn belongs to a conversation"),
    ({"conversation": "prices"}, "needs its \"turn\""),
    ({"conversation": "prices", "turn": 0}, "greater than or equal to 1"),
    ({"conversation": "prices", "turn": "2"}, "valid integer"),
    ({"conversation": "two words", "turn": 1}, "pattern"),
])
def test_a_malformed_turn_is_one_problem_on_its_line(tmp_path, row, says):
    question = {"question_id": "q1", "kind": "single_doc", "question": "?", **row}
    found = problems(tmp_path, [question])
    assert len(found) == 1 and found[0].line == 1 and says in found[0].message, found


def test_the_history_is_never_read_from_the_file():
    with pytest.raises(ValueError, match="history"):
        Question.model_validate({"question_id": "q", "kind": "k", "question": "?",
                                 "history": []})
    asked = Question.model_validate({"question_id": "q", "kind": "k", "question": "?",
                                     "conversation": "c", "turn": 2}).with_history(())
    assert asked.history == () and "history" not in asked.model_dump()
