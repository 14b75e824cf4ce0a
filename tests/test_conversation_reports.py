"""A conversation reads as a conversation in the reports (issue 37 item 5): its turns in
order with their answers and ✓/✗ in the HTML report and in each turn's JUnit
`<system-out>`, and the worst list names the conversation and the turn where it went wrong.
Pure functions on hand-built records; the JUnit text of a real run is checked in
tests/test_conversation_names.py, on the run that compares names across -n 0 and -n 2."""

from __future__ import annotations

from typing import Any

from pytest_ragate.outputs.html import render_html
from pytest_ragate.outputs.reports import markdown, worst_lines
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.conversations import (
    conversation_text,
    so_far,
    went_wrong,
    wrong_conversations,
)
from tests.test_html_report import EVIL, make_run, rec


def turn(conversation: str, number: int, *, right: bool = True, **extra: Any) -> QuestionRecord:
    given: dict[str, Any] = {"correct": int(right), "answer": f"answer {number}", **extra}
    return rec(f"{conversation}-{number}", index=number, conversation=conversation,
               turn=number, question=f"question {number}?", **given)


def test_a_conversation_reads_in_order_with_answers_and_marks() -> None:
    turns = [turn("ebike", 3), turn("ebike", 1), turn("ebike", 2, right=False)]
    assert conversation_text(turns) == (
        "conversation ebike: 3 turns, went wrong at turn 2\n"
        "turn 1 ✓ question 1? (ebike-1)\n  answer: answer 1\n"
        "turn 2 ✗ question 2? (ebike-2)\n  answer: answer 2\n  wrong: 1 of 1 citations wrong\n"
        "turn 3 ✓ question 3? (ebike-3)\n  answer: answer 3\n")
    assert went_wrong(turns) == "ebike went wrong at turn 2 (ebike-2: 1 of 1 citations wrong)"
    assert went_wrong([turn("c", 1), turn("c", 2)]) is None


def test_an_errored_or_abstaining_turn_says_what_happened() -> None:
    errored = turn("c", 2, status="error", error="ZeroDivisionError: boom")
    abstained = turn("c", 1, abstained=True, cited=0, correct=0)
    text = conversation_text([errored, abstained])
    assert "turn 1 ✗ question 1? (c-1)\n  answer: (abstained)\n" \
           "  wrong: abstained but should answer\n" in text
    assert "turn 2 ✗ question 2? (c-2)\n  answer: (no answer: ZeroDivisionError: boom)\n" in text
    assert went_wrong([errored]) == "c went wrong at turn 2 (c-2: error: ZeroDivisionError: boom)"


def test_a_turns_junit_text_starts_with_its_conversation_so_far() -> None:
    assert so_far([], rec("q1")) == ""
    text = so_far([turn("ebike", 1)], turn("ebike", 2, right=False))
    assert text.startswith("conversation ebike: 2 turns, went wrong at turn 2\nturn 1 ✓")
    assert text.endswith("  wrong: 1 of 1 citations wrong\n\n")


def test_the_worst_list_names_conversations_and_turns_earliest_first() -> None:
    records = [turn("a", 1), turn("a", 2), turn("a", 3, right=False),
               turn("b", 1, right=False), turn("b", 2, right=False), turn("c", 1)]
    assert wrong_conversations(records) == [
        "conversations that went wrong, 2 of 3: b went wrong at turn 1 (b-1: 1 of 1 "
        "citations wrong); a went wrong at turn 3 (a-3: 1 of 1 citations wrong)"]
    many = [turn(f"c{i}", 1, right=False) for i in range(7)]
    assert wrong_conversations(many)[0].endswith("(and 2 more)")
    run = make_run(records, [Floor("citation_accuracy", 0.9)])
    assert worst_lines(run)[-1] == wrong_conversations(records)[0]
    assert f"- {wrong_conversations(records)[0]}" in markdown([run])
    assert worst_lines(make_run(records, [Floor("citation_accuracy", 0.1)])) == []


def test_the_html_report_shows_each_conversation_in_order_escaped() -> None:
    records = [turn("ebike", 2, right=False), turn("ebike", 1, answer=EVIL), rec("q9")]
    html = render_html([make_run(records, [Floor("citation_accuracy", 0.9)])])
    section = html[html.index("<h3>Conversations</h3>"):html.index("<h3>Questions</h3>")]
    assert "conversation ebike: 2 turns, went wrong at turn 2" in section
    assert section.index("ebike-1") < section.index("ebike-2") and "q9" not in section
    assert "<script>" not in html and "&lt;script&gt;" in section
    assert "<details class=\"conversation\" open>" in section
    assert "<h3>Conversations</h3>" not in render_html([make_run([rec("q1")])])
