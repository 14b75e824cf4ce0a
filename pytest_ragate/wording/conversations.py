"""How a conversation reads in the reports (issue 37 item 5): its turns in order, each with
its question, the answer this run's system gave it and ✓ or ✗ by the per-answer checks
`conversation_success` reads (`QuestionRecord.wrong`: an errored turn is ✗ too), and the turn
where a conversation went wrong. The HTML report, each turn's JUnit `<system-out>` and the
Markdown worst list all ask here. The texts are the records' own, redacted already as every
kept text is (`redaction.py`); nothing here reads anything else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.registry import conversation_turns

RIGHT, WRONG, NOT_ASKED = "✓", "✗", "–"
WORST_SHOWN = 5  # conversations named in a worst list; the rest are counted


@dataclass(frozen=True)
class Turn:
    """One turn as the reports show it."""

    turn: int
    question_id: str
    mark: str  # RIGHT, WRONG, or NOT_ASKED (skipped: its sequential goldset was decided)
    question: str
    answer: str
    wrong: tuple[str, ...]


def turn_of(record: QuestionRecord) -> Turn:
    if record.status == "skipped":
        mark, answer = NOT_ASKED, f"(not asked: {record.error or 'skipped'})"
    else:
        mark = WRONG if record.wrong else RIGHT
        answer = ("(abstained)" if record.abstained else
                  f"(no answer: {record.error})" if record.status == "error" else
                  record.answer_text or "(no text)")
    return Turn(turn=record.turn or 0, question_id=record.question_id, mark=mark,
                question=record.question or record.question_id, answer=answer,
                wrong=() if record.status != "scored" else tuple(record.wrong))


def why_wrong(record: QuestionRecord) -> str:
    """An errored turn's error (its other checks never ran), else its failed checks."""
    return f"error: {record.error}" if record.status == "error" else "; ".join(record.wrong)


def in_order(turns: Sequence[QuestionRecord]) -> list[QuestionRecord]:
    return sorted(turns, key=lambda r: r.turn or 0)


def name_of(record: QuestionRecord) -> str:
    """`ebike`, or `ebike[r2]` for a later repeat of it."""
    return f"{record.conversation}" + (f"[r{record.repeat}]" if record.repeat > 1 else "")


def first_wrong(turns: Sequence[QuestionRecord]) -> QuestionRecord | None:
    return next((r for r in in_order(turns) if r.status != "skipped" and r.wrong), None)


def heading(turns: Sequence[QuestionRecord]) -> str:
    """`conversation ebike: 3 turns, went wrong at turn 2` (or `right at every turn`)."""
    ordered = in_order(turns)
    wrong = first_wrong(ordered)
    return (f"conversation {name_of(ordered[0])}: {len(ordered)} "
            f"turn{'s' if len(ordered) != 1 else ''}, "
            + ("right at every turn" if wrong is None else f"went wrong at turn {wrong.turn}"))


def turn_lines(record: QuestionRecord) -> list[str]:
    """`turn 2 ✗ And a helmet? (ebike-2)`, its answer, and why it is wrong."""
    t = turn_of(record)
    lines = [f"turn {t.turn} {t.mark} {t.question} ({t.question_id})", f"  answer: {t.answer}"]
    if t.wrong:
        lines.append(f"  wrong: {'; '.join(t.wrong)}")
    return lines


def conversation_text(turns: Sequence[QuestionRecord]) -> str:
    """A conversation as a person reads it: its heading, then its turns in order."""
    ordered = in_order(turns)
    return "\n".join([heading(ordered), *[line for r in ordered for line in turn_lines(r)]]) + "\n"


def so_far(earlier: Sequence[QuestionRecord], record: QuestionRecord) -> str:
    """A turn's JUnit `<system-out>` head: its conversation up to and including it (the
    earlier turns this process reported), a blank line, then the turn's own account follows;
    nothing for a question outside conversations."""
    if record.conversation is None:
        return ""
    return conversation_text([*earlier, record]) + "\n"


def went_wrong(turns: Sequence[QuestionRecord]) -> str | None:
    """`ebike went wrong at turn 2 (ebike-2: answered but should abstain)`."""
    wrong = first_wrong(turns)
    if wrong is None:
        return None
    return (f"{name_of(wrong)} went wrong at turn {wrong.turn} ({wrong.question_id}: "
            f"{why_wrong(wrong)})")


def conversations(records: Sequence[QuestionRecord]) -> list[list[QuestionRecord]]:
    """Each conversation's turns (one repeat of it), in order, in first-seen order."""
    return [in_order(turns) for turns in conversation_turns(records).values()]


def wrong_conversations(records: Sequence[QuestionRecord]) -> list[str]:
    """The worst list's conversation line: those that went wrong, earliest turn first:
    `conversations that went wrong: c2 went wrong at turn 1 (…); ebike … (2 more)`."""
    wrong = sorted(((first.turn or 0, line) for turns in conversations(records)
                    if (first := first_wrong(turns)) is not None
                    and (line := went_wrong(turns)) is not None), key=lambda x: x[0])
    if not wrong:
        return []
    shown = "; ".join(line for _, line in wrong[:WORST_SHOWN])
    more = f" (and {len(wrong) - WORST_SHOWN} more)" if len(wrong) > WORST_SHOWN else ""
    return [f"conversations that went wrong, {len(wrong)} of {len(conversations(records))}: "
            f"{shown}{more}"]
