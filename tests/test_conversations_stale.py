"""A turn whose pinned evidence is stale is not asked (items/questions.py): the later turns
of its conversation are not asked either, and say that it was stale, not that it never ran."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_pytester, write_goldset
from tests.test_conversations_runs import SYSTEM

# a pin no text of the corpus has: the span it pins is stale
STALE_PIN = {"digest": "sha256:" + "0" * 64, "chars": 12, "quote": "edited since",
             "before": "sha256:" + "1" * 64, "after": "sha256:" + "2" * 64}


def test_the_turn_after_a_stale_one_names_the_stale_evidence(
        pytester: pytest.Pytester) -> None:
    questions = [{"question_id": f"c1-{t}", "kind": "single_doc",
                  "question": f"And then c1-{t}?", "conversation": "c1", "turn": t}
                 for t in (1, 2)]
    expected = [{"question_id": "c1-1", "gist": "g", "evidence": [
                    {"doc_id": "m1", "first_unit": 2, "last_unit": 3, "pin": STALE_PIN}]},
                {"question_id": "c1-2", "gist": "g", "evidence": [
                    {"doc_id": "m2", "first_unit": 5, "last_unit": 5}]}]
    write_goldset(pytester.path / "gs", questions=questions, expected=expected,
                  floors="[floors]\ncitation_accuracy = 0.5\n")
    pytester.makeconftest(SYSTEM)
    run_pytester(pytester, "0", "gs", "--ragate-results=r.jsonl")
    rows = {r["question_id"]: r for r in map(json.loads, (pytester.path / "r.jsonl")
                                              .read_text().splitlines())
            if "question_id" in r}
    assert rows["c1-1"]["stale_evidence"] is True
    assert rows["c1-2"]["status"] == "error"
    said = rows["c1-2"]["error"]
    assert "turn 1 of conversation 'c1' has no answer (c1-1: " in said
    assert "stale evidence" in said and "did not run in this process" not in said, said
