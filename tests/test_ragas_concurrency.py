"""The RAGAS judge under concurrency: every row's answer relevance comes from its own 3
generated questions (RAGAS issue #2324: `ragas.evaluate(llm=ChatOpenAI(...))` scored some rows
from one), the 3 generations overlap in time, the runner's bound counts them as requests, and
the embedding model is loaded before the first answer-relevance verdict."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("ragas")

import ragas
from ragas.metrics.collections import AnswerRelevancy

from pytest_ragate.answer import Context
from pytest_ragate.builtin_system.retrieval import Embedder
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.ragas import RagasJudge
from pytest_ragate.judges.ragas_deferred import DeferredRagasJudge
from pytest_ragate.judges.runner import JudgeRunner
from pytest_ragate.judges.select import from_settings
from pytest_ragate.settings import JudgeSettings
from tests.openai_stub import OpenAIStub, Reply, RowVerdicts, Script, prompt_input, ragas_script

pytestmark = pytest.mark.heavy  # ragas takes seconds to import

METRICS = ("faithfulness", "context_precision", "answer_relevance")
AR_TITLE = '"title": "AnswerRelevanceOutput"'


class InFlight:
    """Wraps a script: each request waits `delay` inside the server thread, and the most
    requests in flight at once (all, and per answer for answer relevance) are recorded."""

    def __init__(self, script: Script, delay: float) -> None:
        self.script = script
        self.delay = delay
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.ar_now: dict[str, int] = {}
        self.ar_most: dict[str, int] = {}
        self.ar_n: dict[str, list[int]] = {}  # the `n` of each answer-relevance request

    def __call__(self, request: dict[str, Any]) -> Reply:
        prompt = str(request["messages"][-1]["content"])
        answer = prompt_input(prompt).get("response") if AR_TITLE in prompt else None
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            if answer is not None:
                self.ar_n.setdefault(answer, []).append(int(request.get("n") or 1))
                self.ar_now[answer] = self.ar_now.get(answer, 0) + 1
                self.ar_most[answer] = max(self.ar_most.get(answer, 0), self.ar_now[answer])
        try:
            time.sleep(self.delay)
            return self.script(request)
        finally:
            with self.lock:
                self.now -= 1
                if answer is not None:
                    self.ar_now[answer] -= 1


def row(i: int) -> tuple[JudgeInput, RowVerdicts]:
    answer = f"Answer {i}: the budget for project {i} is {10 + i} euros."
    contexts = (Context(context_id="c0", doc_id="m", first_unit=0, last_unit=0,
                        text=f"turn {i}: the budget is {10 + i} euros"),
                Context(context_id="c1", doc_id="m", first_unit=1, last_unit=1,
                        text=f"turn {i}: lunch"))
    item = JudgeInput(f"q{i:02d}", f"What is the budget for project {i}?", answer, contexts)
    verdicts = RowVerdicts(
        statements=[f"The budget for project {i} is {10 + i} euros."], supported=[True],
        relevant=[contexts[0].text],
        questions=[f"What is the budget for project {i}?", f"Who pays for project {i}?",
                   "Is the weather nice today?"])
    return item, verdicts


def mean_cosine(embedder: Embedder, question: str, generated: list[str]) -> float:
    vectors = np.vstack([embedder.encode([t]) for t in [question, *generated]]
                        ).astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return float(np.mean(unit[1:] @ unit[0]))


def judge(stub: OpenAIStub, embedder: Embedder) -> RagasJudge:
    return RagasJudge("stub-model", stub.url, api_key=None, timeout=10.0, embedder=embedder)


@pytest.mark.parametrize("honor_n", [True, False], ids=["server-honours-n", "server-ignores-n"])
def test_every_row_is_scored_from_its_own_three_questions(openai_stub: OpenAIStub,
                                                          embedder: Embedder, tmp_path: Path,
                                                          honor_n: bool) -> None:
    """RAGAS #2324: under concurrency, `ragas.evaluate(llm=ChatOpenAI(...))` sent some
    answer-relevance requests with the `n` another metric had just set on the shared client,
    and scored those rows from one question. Here every row gets its 3 questions."""
    rows = [row(i) for i in range(30)]
    verdicts = {v_item.answer: verdicts for v_item, verdicts in rows}
    recorder = InFlight(ragas_script(verdicts, honor_n=honor_n), delay=0.05)
    openai_stub.script = recorder
    runner = JudgeRunner(16, tmp_path, "off")
    shared = judge(openai_stub, embedder)  # one judge for the run, as a session has
    try:
        futures = [runner.submit(shared, item, METRICS, "1") for item, _ in rows]
        results = [future.result(120) for future in futures]
    finally:
        runner.close()
    assert recorder.most <= 16  # the bound is on requests, generations included
    for (item, verdicts), scores in zip(rows, results, strict=True):
        assert scores.failures == {}, item.question_id
        assert verdicts._asked == 3, f"{item.question_id}: {verdicts._asked} generations"
        if honor_n:  # one request per row, and it asked for all 3
            assert recorder.ar_n[item.answer] == [3], item.question_id
        else:  # a request for each question the server did not give
            assert len(recorder.ar_n[item.answer]) == 3, item.question_id
        expected = mean_cosine(embedder, item.question, list(verdicts.questions))
        one = mean_cosine(embedder, item.question, list(verdicts.questions[:1]))
        assert abs(expected - one) > 1e-3  # a row scored from one question would show
        assert scores.values["answer_relevance"] == pytest.approx(expected, abs=1e-9, rel=0)
        assert scores.values["faithfulness"] == 1.0
        assert scores.values["context_precision"] == pytest.approx(1.0)
    assert shared.transport.n_choices is honor_n


@pytest.mark.parametrize("honor_n", [True, False], ids=["server-honours-n", "server-ignores-n"])
def test_the_three_generations_overlap_in_time(openai_stub: OpenAIStub, embedder: Embedder,
                                               tmp_path: Path, honor_n: bool) -> None:
    """The second row's generations (the first taught the judge what the server does with
    `n`) take one request time, not three."""
    (first, first_verdicts), (second, verdicts) = row(0), row(1)
    recorder = InFlight(ragas_script({first.answer: first_verdicts, second.answer: verdicts},
                                     honor_n=honor_n), delay=0.3)
    openai_stub.script = recorder
    runner = JudgeRunner(16, tmp_path, "off")
    shared = judge(openai_stub, embedder)
    try:
        assert runner.submit(shared, first, ["answer_relevance"], "1").result(60).failures == {}
        start = time.perf_counter()
        scores = runner.submit(shared, second, ["answer_relevance"], "1").result(60)
        elapsed = time.perf_counter() - start
    finally:
        runner.close()
    assert scores.failures == {} and verdicts._asked == 3
    if honor_n:
        assert recorder.ar_n[second.answer] == [3]
    else:
        assert recorder.ar_most[second.answer] == 3  # one after another never exceeds 1
    assert elapsed < 2 * 0.3  # sequential generations cannot finish before 0.9 s


@pytest.mark.parametrize("concurrency", [1, 2])
def test_a_small_bound_holds_the_generations_to_it(openai_stub: OpenAIStub, embedder: Embedder,
                                                   tmp_path: Path, concurrency: int) -> None:
    rows = [row(i) for i in range(3)]
    recorder = InFlight(ragas_script({i.answer: v for i, v in rows}), delay=0.05)
    openai_stub.script = recorder
    runner = JudgeRunner(concurrency, tmp_path, "off")
    try:
        results = [runner.submit(judge(openai_stub, embedder), item, METRICS, "1").result(60)
                   for item, _ in rows]
    finally:
        runner.close()
    assert all(r.failures == {} for r in results)
    assert all(v._asked == 3 for _, v in rows)
    assert recorder.most <= concurrency


def test_the_same_prompts_and_score_as_ragas_own_class(openai_stub: OpenAIStub,
                                                       embedder: Embedder) -> None:
    """Generations sent at once ask exactly what RAGAS's AnswerRelevancy asks, and RAGAS's
    class scores the same replies the same."""
    item, verdicts = row(7)
    openai_stub.script = ragas_script({item.answer: verdicts})
    ours = judge(openai_stub, embedder)
    value = asyncio.run(ours.score(item, "answer_relevance"))
    sent = [r["messages"] for r in openai_stub.requests]
    openai_stub.requests.clear()
    plain = AnswerRelevancy(llm=ours.llm, embeddings=ours.embeddings, strictness=3)
    theirs = asyncio.run(plain.ascore(user_input=item.question, response=item.answer)).value
    assert [r["messages"] for r in openai_stub.requests] == sent and len(sent) == 3
    assert value == pytest.approx(theirs, abs=1e-12, rel=0)


@pytest.mark.skipif(ragas.__version__ != "0.4.3", reason="the hash recorded is RAGAS 0.4.3's")
def test_the_answer_relevance_cache_key_is_unchanged(embedder: Embedder) -> None:
    """The prompt hash is computed from RAGAS's own AnswerRelevancy, whose prompts are
    unchanged by fetching the generations concurrently. It changed once since, on purpose:
    with the checks every reply passes (a noncommittal flag of -1 refused), so verdicts
    cached under the lax rules are asked again (tests/test_fail_closed_judges.py)."""
    judge_ = RagasJudge("m", "http://127.0.0.1:9/v1", api_key=None, timeout=1.0,
                        embedder=embedder)
    assert judge_.prompt_hash("answer_relevance") == (
        "01f6b926c20d96c134833c89b5570dbbdfc0f2ad71bde37c39729c4216a41c1b")


@pytest.mark.parametrize(("cache", "loaded"), [("on", True), ("off", True),
                                               ("replay", False)])
def test_the_embedding_model_loads_before_the_first_answer_relevance_verdict(
        cache: str, loaded: bool, tmp_path: Path) -> None:
    """Not when the judge is configured (a run whose verdicts are all cached needs neither
    RAGAS nor the model), nor when RAGAS is built for another metric's verdict (a run that
    gates faithfulness alone never loads it: on a cold machine that is the ONNX export), but
    before the first answer-relevance verdict, outside its time limit; never under replay."""
    fresh = Embedder()
    settings = JudgeSettings(judge="ragas:m", judge_url="http://127.0.0.1:9/v1",
                             cache=cache)  # type: ignore[arg-type]
    built = from_settings(settings, lambda: fresh)
    assert isinstance(built, DeferredRagasJudge) and not fresh.loaded
    runner = JudgeRunner(2, tmp_path, "off" if cache == "replay" else cache)
    item = JudgeInput("q1", "What?", "An answer.", (), reference="gist")
    try:
        other = runner.submit(built, item, ["faithfulness", "context_precision"], "1")
        assert set(other.result(timeout=60).failures) == {"faithfulness", "context_precision"}
        assert built.built and not fresh.loaded  # RAGAS built, the model not loaded
        relevance = runner.submit(built, item, ["answer_relevance"], "1")
        assert set(relevance.result(timeout=60).failures) == {"answer_relevance"}  # port 9
    finally:
        runner.close()
    assert fresh.loaded is loaded
