"""The judged correctness metrics: RAGAS 0.4.3's `AnswerCorrectness` and `FactualCorrectness`
over an OpenAI-compatible server, and the fixture judge giving the same numbers from a file;
each model reply held to its shape; asked only where a goldset wants them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_ragate.judges.base import (
    JudgeFailure,
    JudgeInput,
    answer_correctness,
    cosine,
    factual_correctness,
    statement_f1,
)
from pytest_ragate.judges.fixture import FixtureJudge
from pytest_ragate.scoring.registry import asked_metrics, requested_metrics, verdict_metrics
from tests.openai_stub import OpenAIStub, Reply, completion, error, prompt_input

pytest.importorskip("ragas")

from pytest_ragate.judges.ragas import RagasJudge

pytestmark = pytest.mark.heavy  # ragas takes seconds to import

QUESTION = "What did the kick-off fix for the remote?"
ANSWER = "The remote sells for 25 euros. It has a blue case."
REFERENCE = "The remote sells for 25 euros. It costs 12.50 euros to make."
ANSWER_STATEMENTS = ["The remote sells for 25 euros.", "The remote has a blue case."]
REFERENCE_STATEMENTS = ["The remote sells for 25 euros.", "It costs 12.50 euros to make."]
CLAIMS = {ANSWER: ["The remote sells for 25 euros.", "The remote has a blue case."],
          REFERENCE: ["The remote sells for 25 euros.", "The remote costs 12.50 euros."]}
# claim -> supported by the other text (answer claims by the reference, and the reverse)
SUPPORTED = {"The remote sells for 25 euros.": True, "The remote has a blue case.": False,
             "The remote costs 12.50 euros.": False}


class Embedder:
    """Deterministic vectors: no model to load."""

    model_id = "tiny"

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0, float(len(t)), float(t.count("e"))] for t in texts])


def row(**kwargs: Any) -> JudgeInput:
    return JudgeInput("q1", QUESTION, kwargs.pop("answer", ANSWER), (),
                      reference=kwargs.pop("reference", REFERENCE))


def script(request: dict[str, Any], *, classification: dict | None = None,
           statements: list[str] | None = None, claims_twice: bool = False) -> Reply:
    """RAGAS's correctness prompts, answered from the verdicts above."""
    prompt = str(request["messages"][-1]["content"])
    data = prompt_input(prompt)
    if '"title": "StatementGeneratorOutput"' in prompt:
        said = ANSWER_STATEMENTS if data["answer"] == ANSWER else REFERENCE_STATEMENTS
        return completion(json.dumps({"statements": said if statements is None
                                      else statements}))
    if '"title": "ClassificationWithReason"' in prompt:
        return completion(json.dumps(classification or {
            "TP": [{"statement": ANSWER_STATEMENTS[0], "reason": "in the reference"}],
            "FP": [{"statement": ANSWER_STATEMENTS[1], "reason": "not in it"}],
            "FN": [{"statement": REFERENCE_STATEMENTS[1], "reason": "missed"}]}))
    if '"title": "ClaimDecompositionOutput"' in prompt:
        return completion(json.dumps({"claims": CLAIMS[data["response"]]}))
    if '"title": "NLIStatementOutput"' in prompt:
        judged = list(data["statements"]) + (data["statements"][:1] if claims_twice else [])
        return completion(json.dumps({"statements": [
            {"statement": s, "reason": "scripted", "verdict": int(SUPPORTED[s])}
            for s in judged]}))
    return error(400, "the script does not know this prompt")


def ragas_judge(stub: OpenAIStub) -> RagasJudge:
    return RagasJudge("stub-model", stub.url, api_key=None, timeout=5.0, embedder=Embedder())


def fixture_judge(tmp_path: Path, **verdicts: Any) -> FixtureJudge:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"judge_id": "same", "answers": {"q1": verdicts}}))
    return FixtureJudge(path, Embedder())


SAME = {"correct_statements": ANSWER_STATEMENTS[:1],
        "incorrect_statements": ANSWER_STATEMENTS[1:],
        "missed_statements": REFERENCE_STATEMENTS[1:],
        "claims_supported": [True, False], "reference_claims_covered": [True, False]}


@pytest.mark.heavy  # RAGAS's first request starts `uname` (the OpenAI client's platform)
def test_ragas_and_the_fixture_judge_compute_the_same_correctness(
        tmp_path: Path, openai_stub: OpenAIStub) -> None:
    openai_stub.script = script
    ragas, fixture = ragas_judge(openai_stub), fixture_judge(tmp_path, **SAME)
    similarity = cosine(*Embedder().encode([ANSWER, REFERENCE]))
    expected = {"answer_correctness": 0.75 * statement_f1(1, 1, 1) + 0.25 * similarity,
                "factual_correctness": 0.5}
    for metric, value in expected.items():
        theirs = asyncio.run(ragas.score(row(), metric))
        ours = asyncio.run(fixture.score(row(), metric))
        assert theirs == pytest.approx(ours, abs=1e-9) == pytest.approx(value, abs=1e-9)
    references = [p for p in openai_stub.prompts() if REFERENCE in p]
    assert references  # the gist went to the judge as its reference, and only there


@pytest.mark.parametrize(("metric", "replies", "kind"), [
    ("answer_correctness", {"statements": []}, "empty"),
    ("answer_correctness", {"classification": {
        "TP": [{"statement": ANSWER_STATEMENTS[0], "reason": "x"}] * 2,
        "FP": [], "FN": []}}, "invalid"),
    ("answer_correctness", {"classification": {
        "TP": [{"statement": ANSWER_STATEMENTS[0], "reason": "x"}],
        "FP": [{"statement": ANSWER_STATEMENTS[1], "reason": "x"}],
        "FN": [{"statement": "Something nobody said.", "reason": "x"}]}}, "invalid"),
    ("factual_correctness", {"claims_twice": True}, "invalid"),
])
@pytest.mark.heavy
def test_a_reply_outside_its_shape_fails_the_verdict(openai_stub: OpenAIStub, metric: str,
                                                     replies: dict, kind: str) -> None:
    """A model that extracts nothing (RAGAS: a perfect match), or counts a true statement
    twice, or invents a missed one, or judges a claim twice, gives no score."""
    openai_stub.script = lambda request: script(request, **replies)
    with pytest.raises(JudgeFailure) as caught:
        asyncio.run(ragas_judge(openai_stub).score(row(), metric))
    assert caught.value.kind == kind, caught.value


def test_the_fixture_judge_fails_without_its_verdicts_or_a_reference(tmp_path: Path) -> None:
    judge = fixture_judge(tmp_path, statements=[], supported=[])
    for metric in ("answer_correctness", "factual_correctness"):
        with pytest.raises(JudgeFailure) as caught:
            asyncio.run(judge.score(row(), metric))
        assert caught.value.kind == "missing"
        with pytest.raises(JudgeFailure) as caught:
            asyncio.run(fixture_judge(tmp_path, **SAME).score(row(reference=None), metric))
        assert caught.value.kind == "missing" and "reference" in caught.value.message


def test_the_formulas_are_ragas_own() -> None:
    assert statement_f1(0, 0, 0) == 1.0 and statement_f1(0, 0, 2) == 0.0
    assert answer_correctness(2, 0, 0, 1.0) == pytest.approx(1.0)
    assert factual_correctness([True, True, False], [True]) == 0.8
    assert factual_correctness([False], [False]) == 0.0


def test_correctness_is_asked_only_where_a_goldset_asks_for_it() -> None:
    assert "answer_correctness" not in asked_metrics()
    assert {"answer_correctness", "factual_correctness"} <= set(verdict_metrics())
    assert requested_metrics(["faithfulness", "factual_correctness", "answer_match"]) == (
        "factual_correctness",)
