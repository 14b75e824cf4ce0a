"""A run whose every verdict is cached never imports RAGAS (nor openai, instructor,
langchain, or Chroma for the embedder it would use): its keys come from the prompt-hash memo
in the judge cache folder, kept under the versions of ragas and pydantic; the first miss
imports RAGAS and asks. A memo entry from another version is never used, and replay still
fails on a miss. The cold run that fills the cache runs in this process (what it imports is not
asked: this process holds RAGAS already); the warm runs each in a process of its own, whose
imports are the point."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.judges import ragas_deferred
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.cache_index import MEMO_PREFIX
from pytest_ragate.judges.ragas_deferred import DeferredRagasJudge
from pytest_ragate.judges.runner import JudgeRunner
from pytest_ragate.judges.select import from_settings
from pytest_ragate.settings import JudgeSettings
from tests.conftest import TWELVE_EUROS, WORKERS, results_rows, run_pytester, write_goldset
from tests.openai_stub import OpenAIStub, RowVerdicts, ragas_script

pytest.importorskip("ragas")

pytestmark = pytest.mark.heavy  # ragas takes seconds to import

IDS = ("a1", "a2", "a3")
SYSTEM = '''
import json, os, sys

HEAVY = ("ragas", "openai", "instructor", "langchain", "langchain_core", "chromadb")
CONTROL = "pytest_ragate"  # imported by every process of a run: the probe sees imports

def pytest_sessionfinish(session):
    """Each process (the controller and every xdist worker) says what it imported."""
    where = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"imported-{where}.json", "w") as out:
        json.dump({name: name in sys.modules for name in (*HEAVY, CONTROL)}, out)
''' + TWELVE_EUROS


def verdicts() -> dict[str, RowVerdicts]:
    return {f"answer to {q}: twelve euros": RowVerdicts(
        statements=[f"The budget of {q} is twelve euros."], supported=[True],
        relevant=[f"context of {q}: the budget is twelve euros"],
        questions=[f"What about {q}?"], reference=f"gist of {q}") for q in IDS}


def goldset(root: Path) -> None:
    """Its floors gate answer relevance too: every verdict metric is asked (and its embedder
    used), as a goldset that gates none would be."""
    write_goldset(root / "gs", floors="[floors]\nfaithfulness = 0.5\nanswer_relevance = 0.0\n",
                  questions=[{"question_id": q, "kind": "single_doc",
                              "question": f"What about {q}?"} for q in IDS],
                  expected=[{"question_id": q, "gist": f"gist of {q}",
                             "evidence": [{"doc_id": "m1", "first_unit": 2,
                                           "last_unit": 3}]} for q in IDS])


def imported(root: Path) -> dict[str, dict[str, bool]]:
    """What each process of the last run (`main`, `gw0`, ...) imported of HEAVY, from the
    probe's files (removed); the probe's control, an import every process makes, is checked
    and left out."""
    found = {p.stem.removeprefix("imported-"): json.loads(p.read_text())
             for p in root.glob("imported-*.json")}
    for p in root.glob("imported-*.json"):
        p.unlink()
    assert found and all(p.pop("pytest_ragate") for p in found.values()), found
    return found


def judged_rows(root: Path, name: str) -> dict[str, Any]:
    return {r["question_id"]: (r["metrics"], r["judge_failures"], r["answer_text"])
            for r in results_rows(root / name)}


@pytest.mark.heavy
@WORKERS
def test_a_warm_run_never_imports_ragas(pytester: pytest.Pytester, openai_stub: OpenAIStub,
                                        workers: str) -> None:
    """The cache filled by a run under `-n workers` (its workers write it under -n 2), then
    read by a warm run under the same worker count. Replay under -n 0 only: it differs from
    the warm run only on a miss, and there is none; one process plays every part of the run
    there, so an import anywhere in it would show."""
    openai_stub.script = ragas_script(verdicts(), honor_n=True)
    goldset(pytester.path)
    pytester.makeconftest(SYSTEM)
    args = ("gs", "--ragate-judge=ragas:stub-model", "-o", f"ragate_judge_url={openai_stub.url}",
            "-o", "ragate_judge_cache_dir=judge-cache")
    cold = run_pytester(pytester, workers, *args, "--ragate-results=cold.jsonl")
    cold.assert_outcomes(passed=len(IDS) + 3)  # and judge_coverage
    asked = len(openai_stub.requests)
    assert asked == 4 * len(IDS)  # statements, NLI, 1 context, 1 answer relevance (n=3)
    # this process (`main`) held RAGAS before; xdist's workers are processes of their own,
    # which imported it to ask
    ran_here = imported(pytester.path)
    assert workers == "0" or any(p["ragas"] for name, p in ran_here.items() if name != "main")

    warm = run_pytester(pytester, workers, *args, "--ragate-results=warm.jsonl",
                        process=True)
    warm.assert_outcomes(passed=len(IDS) + 3)  # and judge_coverage
    assert len(openai_stub.requests) == asked  # nothing asked
    assert not any(any(p.values()) for p in imported(pytester.path).values())
    cold_rows = judged_rows(pytester.path, "cold.jsonl")
    assert cold_rows == judged_rows(pytester.path, "warm.jsonl")
    assert all(set(m) >= {"faithfulness", "context_precision", "answer_relevance"}
               and not failed for m, failed, _ in cold_rows.values())

    if workers == "0":
        replay = run_pytester(pytester, workers, *args, "--ragate-cache=replay",
                              "--ragate-results=replay.jsonl", process=True)
        replay.assert_outcomes(passed=len(IDS) + 3)  # and judge_coverage
        assert judged_rows(pytester.path, "replay.jsonl") == cold_rows
        assert not any(any(p.values()) for p in imported(pytester.path).values())


class Unit:
    model_id = "unit-embedder"

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        return np.ones((len(texts), 2)) / np.sqrt(2)


def deferred() -> DeferredRagasJudge:
    settings = JudgeSettings(judge="ragas:m", judge_url="http://127.0.0.1:9/v1",
                             judge_timeout=1.0, cache="replay")  # replay: no warming
    judge = from_settings(settings, Unit)
    assert isinstance(judge, DeferredRagasJudge)
    return judge


ITEM = JudgeInput("q1", "What?", "An answer.", (), reference="gist")


def prompt_hash(runner: JudgeRunner, judge: DeferredRagasJudge, metric: str) -> str:
    """The hash the runner keys `metric`'s verdicts by, from its memo or the judge."""
    return asyncio.run_coroutine_threadsafe(runner._prompt_hash(judge, metric),
                                            runner._loop).result()


def keys(runner: JudgeRunner, judge: DeferredRagasJudge) -> list[str]:
    from pytest_ragate.judges.runner import cache_key

    return [cache_key("1", judge, m, ITEM, prompt=prompt_hash(runner, judge, m))
            for m in judge.metrics]


def test_the_memo_serves_the_hash_without_building_the_judge(tmp_path: Path) -> None:
    from pytest_ragate.judges.runner import cache_key

    runner = JudgeRunner(2, tmp_path, "on")
    try:
        first = deferred()
        cold = keys(runner, first)
        assert first.built  # the memo was empty: RAGAS computed the hashes
        assert cold == [cache_key("1", first, m, ITEM) for m in first.metrics]
        second = deferred()
        assert keys(runner, second) == cold and not second.built
    finally:
        runner.close()


@pytest.mark.parametrize("distribution", ["ragas", "pydantic"])
def test_a_memo_entry_of_another_version_is_never_used(tmp_path: Path, distribution: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    runner = JudgeRunner(2, tmp_path, "on")
    try:
        assert runner.cache is not None
        judge, stale = deferred(), "f" * 64
        real = ragas_deferred.installed_version
        with monkeypatch.context() as patched:
            patched.setattr(ragas_deferred, "installed_version",
                            lambda name: "0.0.0-other" if name == distribution else real(name))
            other = judge.prompt_version("faithfulness")
            assert '"0.0.0-other"' in other
            runner.cache.set(MEMO_PREFIX + other, stale)
            assert prompt_hash(runner, judge, "faithfulness") == stale  # its own version's
        assert not judge.built
        assert prompt_hash(runner, judge, "faithfulness") == judge.judge().prompt_hash(
            "faithfulness") != stale
    finally:
        runner.close()


def test_replay_still_fails_on_a_miss_and_builds_nothing(tmp_path: Path) -> None:
    """With the hashes memoised but no verdict cached, replay fails every verdict as a miss
    without building RAGAS: it spends nothing, as before."""
    filling = JudgeRunner(2, tmp_path, "on")
    try:
        keys(filling, deferred())  # memo filled, no verdict stored
    finally:
        filling.close()
    runner = JudgeRunner(2, tmp_path, "replay")
    judge = deferred()
    try:
        verdicts = runner.submit(judge, ITEM, judge.metrics, "1").result(timeout=60)
        assert sorted(verdicts.replay_misses) == sorted(judge.metrics)
        assert verdicts.values == {} and not judge.built and runner.calls == 0
    finally:
        runner.close()
