"""`conversation_success` in a goldset asked more than once (`repeat`): each repeat of a
conversation is one unit, and a conversation's repeats are its cluster; the design effect's
least is its repeats, not its turns times its repeats."""

from __future__ import annotations

from pytest_ragate.scoring.intervals import interval
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.scoring.stats import wilson_conversations
from pytest_ragate.wording.numbers import fmt_n


def turn(conversation: int, turn: int, repeat: int, right: bool) -> QuestionRecord:
    return QuestionRecord.model_validate({
        "goldset": "g", "question_id": f"c{conversation}-{turn}", "kind": "single_doc",
        "index": 0, "must_abstain": False, "evidence_spans": 1, "eval_version": "1",
        "conversation": f"c{conversation}", "turn": turn, "repeat": repeat,
        "abstention_correct": right, "citations": 1, "citations_correct": int(right)})


def test_conversation_success_over_repeats_clusters_by_conversation() -> None:
    # 10 conversations of 3 turns, each asked 3 times; c0 and c1 went wrong once, at turn 3
    rows = [turn(c, t, r, right=not (c < 2 and t == 3 and r == 1))
            for c in range(10) for r in (1, 2, 3) for t in (1, 2, 3)]
    t = tally("conversation_success", rows)
    assert (t.k, t.n, t.questions, t.repeats, t.by) == (28, 30, 10, 3, "conversations")
    assert fmt_n(t) == "30 in 10 conversations × 3 repeats"
    assert interval(t) == wilson_conversations(28, 30, t.clusters, 3)
    assert interval(t)[0] > 0.55  # not the interval of 10 units × 9 (its lower bound 0.41)
