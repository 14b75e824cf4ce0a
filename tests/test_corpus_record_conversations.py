"""A failed regression over a goldset of conversations names the conversations that got
worse whose turns' evidence documents changed, as it names questions outside conversations
(the paired test's units are conversations there: `scoring/pairing._pair_conversations`)."""

from __future__ import annotations

from pytest_ragate.scoring.records import QuestionScores
from tests.test_corpus_record import checks_after_edit


def _turn(conversation: str, right: bool) -> QuestionScores:
    return QuestionScores(evidence_found=[right], abstention_correct=True,
                          conversation=conversation)


def test_a_failed_check_names_the_worse_conversations_whose_evidence_documents_changed(
        ) -> None:
    conversations = [f"c{i:02d}" for i in range(30)]
    ids = {f"{c}-{t}": c for c in conversations for t in (1, 2)}
    then = {q: _turn(c, True) for q, c in ids.items()}
    lost = set(conversations[:12])  # 12 conversations lost their turn 2's span
    now = {q: _turn(c, not (c in lost and q.endswith("-2"))) for q, c in ids.items()}
    # the first three conversations' turn 2 cites document b, which was edited
    docs = {q: ["b" if c in conversations[:3] and q.endswith("-2") else "a"]
            for q, c in ids.items()}
    recall = checks_after_edit(then, now, docs)["evidence_recall"]
    assert recall.outcome == "failed", recall.message
    assert recall.message.endswith(
        "corpus changed since the baseline: 1 document edited, 0 added, 0 removed; possibly "
        "caused by the corpus, not the system: the evidence documents of c00, c01, c02 "
        "changed"), recall.message
