"""The adversary against the judges: every verdict is validated and bounded.

A model judge whose replies step outside what its metric defines (an NLI verdict of -1, a
context-precision verdict of 2, a noncommittal flag of "1", a statement list that is not one
or is empty) gets a judge failure naming the field and value, never a score; a judge whose
calls never return (awaiting forever, blocking its thread, a worker thread that never ends,
a `prompt_hash` that hangs) gets a `timeout` failure naming ragate_judge_timeout, and the
pytest process still ends. Each runs through pytest with and without `-n 2`."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.answer import Context
from pytest_ragate.judges.base import JudgeInput, Vacuous
from pytest_ragate.judges.ragas import RagasJudge
from pytest_ragate.judges.runner import JudgeRunner
from tests.conftest import (
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    expect,
    junit_cases,
    rows_of,
    run_pytester,
)
from tests.openai_stub import OpenAIStub, Reply, completion, error, prompt_input
from tests.test_fail_closed import write_many

pytestmark = pytest.mark.heavy  # the RAGAS judge: ragas takes seconds to import

FAILED = pytest.ExitCode.TESTS_FAILED

# --- a model judge's replies outside their schema ------------------------------------------

# answers "answer to qNN" with three contexts "qNN context k"; the right one is the first
SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        contexts = [Context(context_id=f"c{k}", doc_id="m1", first_unit=2 * k,
                            last_unit=2 * k + 1, text=f"{qid} context {k}", distance=0.2)
                    for k in range(3)]
        return Answer(text=f"answer to {qid}", contexts=contexts,
                      citations=[Citation(context_id="c0")])
    return answer
'''
TITLE = re.compile(r'"title": "(StatementGeneratorOutput|NLIStatementOutput|'
                   r'ContextPrecisionOutput|AnswerRelevanceOutput)"')


def statements(qid: str) -> list[str]:
    return [f"{qid} claim {k}" for k in range(3)]


def nli(data: dict[str, Any], verdict: object = 1, only: list[str] | None = None,
        ) -> dict[str, Any]:
    return {"statements": [{"statement": s, "reason": "scripted", "verdict": verdict}
                           for s in (data["statements"] if only is None else only)]}


def useful(data: dict[str, Any], right: object = 1, others: object = 0) -> dict[str, Any]:
    return {"reason": "scripted", "verdict": right if data["context"].endswith("context 0")
            else others}


# Each question's faulty reply, by question id and prompt kind; anything else is answered
# right: every statement supported, the first context useful, the question asked back. On
# today's RAGAS code each of these scores (faithfulness 1.0, context precision 1.0, answer
# relevance ~1.0): RAGAS counts any truthy verdict as a 1 and its reply models coerce "1"
# and true.
FAULTS: dict[tuple[str, str], Callable[[dict[str, Any], int], dict[str, Any]]] = {
    ("q00", "NLIStatementOutput"): lambda d, n: nli(d, -1),  # "contradicted"
    ("q01", "NLIStatementOutput"): lambda d, n: nli(d, 2),
    ("q02", "NLIStatementOutput"): lambda d, n: nli(d, True),
    ("q03", "NLIStatementOutput"): lambda d, n: nli(d, only=d["statements"][:1]),
    ("q04", "NLIStatementOutput"): lambda d, n: nli(d, only=d["statements"][:1] * 3),
    ("q05", "StatementGeneratorOutput"): lambda d, n: {"statements": ["", "q05 claim 1"]},
    ("q06", "ContextPrecisionOutput"): lambda d, n: {  # 0, 2, 0: today 1.0, not 0.5
        "reason": "scripted", "verdict": 2 if d["context"].endswith("context 1") else 0},
    ("q07", "ContextPrecisionOutput"): lambda d, n: useful(d, right="1"),
    ("q08", "AnswerRelevanceOutput"): lambda d, n: {"question": "What about q08?",
                                                    "noncommittal": 0 if n == 0 else -1},
    ("q10", "StatementGeneratorOutput"): lambda d, n: {"statements": []},  # nothing to judge
}
WHY = {
    "q00": ("faithfulness", "invalid: NLIStatementOutput.statements[0].verdict came back -1, "
                            "not 0 or 1 (and 2 more)"),
    "q01": ("faithfulness", "invalid: NLIStatementOutput.statements[0].verdict came back 2, "
                            "not 0 or 1 (and 2 more)"),
    "q02": ("faithfulness", "invalid: NLIStatementOutput.statements[0].verdict came back "
                            "True, not 0 or 1 (and 2 more)"),
    "q03": ("faithfulness", "invalid: NLIStatementOutput.statements came back with 1 "
                            "verdict, not one per statement sent (3)"),
    "q04": ("faithfulness", "invalid: NLIStatementOutput.statements[1].statement came back "
                            "'q04 claim 0', not one of the statements sent (or sent once and "
                            "judged twice)"),
    "q05": ("faithfulness", "invalid: StatementGeneratorOutput.statements[0] came back '', "
                            "not a non-empty string"),
    "q06": ("context_precision", "invalid: ContextPrecisionOutput.verdict came back 2, not 0 "
                                 "or 1"),
    "q07": ("context_precision", "invalid: ContextPrecisionOutput.verdict came back '1', not "
                                 "0 or 1"),
    "q08": ("answer_relevance", "invalid: AnswerRelevanceOutput.noncommittal came back -1, "
                                "not 0 or 1"),
    # no statements from an answer with text: RAGAS would score it, nothing judged
    "q10": ("faithfulness", "empty: stub-model extracted no statements from an answer that "
                            "has text: nothing was judged"),
}


class FaultyModel:
    """The stub's script: RAGAS's prompts answered right, but for FAULTS."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked: dict[tuple[str, str], int] = {}

    def __call__(self, request: dict[str, Any]) -> Reply:
        prompt = str(request["messages"][-1]["content"])
        found = TITLE.search(prompt)
        if found is None:
            return error(400, "not a RAGAS prompt")
        kind, data = found.group(1), prompt_input(prompt)
        qid = re.search(r"q\d\d", json.dumps(data)).group()  # type: ignore[union-attr]
        with self.lock:
            n = self.asked[qid, kind] = self.asked.get((qid, kind), -1) + 1
        fault = FAULTS.get((qid, kind))
        if fault is not None:
            return completion(json.dumps(fault(data, n)))
        replies = {"StatementGeneratorOutput": lambda: {"statements": statements(qid)},
                   "NLIStatementOutput": lambda: nli(data),
                   "ContextPrecisionOutput": lambda: useful(data),
                   "AnswerRelevanceOutput": lambda: {"question": f"What about {qid}?",
                                                     "noncommittal": 0}}
        return completion(json.dumps(replies[kind]()))


JUDGED_FLOORS = ("[floors]\nfaithfulness = 0.8\ncontext_precision = 0.8\n"
                 "answer_relevance = 0.5\n")


@WORKERS
def test_a_model_verdict_outside_its_schema_is_a_judge_failure_never_a_score(
        pytester: pytest.Pytester, openai_stub: OpenAIStub, workers: str) -> None:
    openai_stub.script = FaultyModel()
    write_many(pytester.path / "gs", 11, floors=JUDGED_FLOORS)
    pytester.makeconftest(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", "--ragate-cache=off",
                          "--junitxml=j.xml", "--ragate-report=r.md", "--ragate-history=h.jsonl",
                          "--ragate-judge=ragas:stub-model",
                          "-o", f"ragate_judge_url={openai_stub.url}",
                          "-o", "ragate_judge_timeout=30")
    rows = rows_of(pytester.path / "r.jsonl")
    got = {qid: (metric, rows[qid]["judge_failures"].get(metric))
           for qid, (metric, _) in WHY.items()}
    assert got == WHY
    for qid, (metric, _) in WHY.items():
        assert rows[qid]["metrics"][metric] is None  # not a score, not a zero
        assert len(rows[qid]["judge_failures"]) == 1  # only the faulty field's metric
    assert rows["q09"]["judge_failures"] == {}  # the control: every verdict right, scored
    assert rows["q09"]["metrics"]["faithfulness"] == 1.0
    assert result.ret == FAILED
    expect(result, "FAILED gs/ragate.toml::floor[judge_coverage] - judge_coverage 0.70 < "
                   "floor 0.95 · n=33 verdicts*")  # 23 of 33: the 10 faulty left out
    case = junit_cases(pytester.path / "j.xml")["gs.ragate.toml::floor[judge_coverage]"]
    assert case["outcome"] == "failure"
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()
    history = json.loads((pytester.path / "h.jsonl").read_text())
    assert history["status"] == "failed"
    assert history["floors"]["judge_coverage"]["outcome"] == "failed"


# --- the same rules, one RAGAS judge call at a time ------------------------------------------

class Unit:
    """Any text to one vector: answer relevance's cosine is 1, so only the flag decides."""

    def encode(self, texts: list[str]) -> Any:
        import numpy as np

        return np.ones((len(texts), 2))


def judged(stub: OpenAIStub, qid: str, metric: str) -> object:
    """The RAGAS judge's verdict for question `qid` (its failure, when it raises)."""
    judge = RagasJudge("stub-model", stub.url, timeout=30.0, embedder=Unit())
    contexts = tuple(Context(context_id=f"c{k}", doc_id="m1", first_unit=k, last_unit=k,
                             text=f"{qid} context {k}") for k in range(3))
    item = JudgeInput(qid, f"What about {qid}?", f"answer to {qid}", contexts, "the budget")
    try:
        return asyncio.run(judge.score(item, metric))
    except Exception as failure:
        return str(failure)


@pytest.mark.parametrize("qid", sorted(WHY))
def test_each_faulty_field_fails_its_verdict(openai_stub: OpenAIStub, qid: str) -> None:
    openai_stub.script = FaultyModel()
    metric, why = WHY[qid]
    assert judged(openai_stub, qid, metric) == why


@pytest.mark.parametrize("metric", ["faithfulness", "context_precision", "answer_relevance"])
def test_the_right_replies_still_score(openai_stub: OpenAIStub, metric: str) -> None:
    openai_stub.script = FaultyModel()
    assert judged(openai_stub, "q09", metric) == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("verdict", ["1", 1.0, True])
def test_a_verdict_that_only_looks_like_a_1_is_invalid(openai_stub: OpenAIStub,
                                                       verdict: object) -> None:
    openai_stub.script = lambda r: completion(json.dumps(
        {"reason": "scripted", "verdict": verdict}))
    why = judged(openai_stub, "q01", "context_precision")
    assert why == f"invalid: ContextPrecisionOutput.verdict came back {verdict!r}, not 0 or 1"


def test_a_verdict_cached_under_other_rules_is_asked_again(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    """The checks are part of every RAGAS prompt hash (the cache key): a verdict scored from
    a -1 before they existed is not replayed as a score."""
    from pytest_ragate.judges import ragas

    def hashes() -> dict[str, str]:
        judge = RagasJudge("m", "http://127.0.0.1:9/v1", timeout=1.0, embedder=Unit())
        return {m: judge.prompt_hash(m) for m in RagasJudge.metrics}

    before = hashes()
    monkeypatch.setattr(ragas, "each_once", lambda sent, judged: None)
    after = hashes()
    assert all(after[m] != before[m] for m in RagasJudge.metrics)


# --- a judge of your own: what it returns, and how long it takes -----------------------------

def own_judge(prompt_hash: str, score: str) -> str:
    """A conftest fragment: a `ragate_judge` of your own, asked for faithfulness and context
    precision, whose methods run these bodies (`metric`, `item`, `qid` in scope)."""
    indent = " " * 8
    return f'''
import asyncio, time
from pytest_ragate.judges import Vacuous

class OwnJudge:
    judge_id = "own"
    metrics = ("faithfulness", "context_precision")

    def prompt_hash(self, metric):
{textwrap.indent(textwrap.dedent(prompt_hash).strip(), indent)}
        return "v1"

    async def score(self, item, metric):
        qid = item.question_id
{textwrap.indent(textwrap.dedent(score).strip(), indent)}

@pytest.fixture(scope="session")
def ragate_judge():
    return OwnJudge()
'''


# faithfulness awaits forever (q00), waits on a worker thread that never ends (q01), raises
# a KeyboardInterrupt (q02) or a CancelledError (q03), says vacuous without a reason (q04),
# is 0.9 (q05); context precision is 0.9
STUCK = own_judge("pass", """
    if metric == "faithfulness" and qid == "q00":
        await asyncio.Event().wait()
    if metric == "faithfulness" and qid == "q01":
        await asyncio.to_thread(time.sleep, 3600)
    if metric == "faithfulness" and qid == "q02":
        raise KeyboardInterrupt
    if metric == "faithfulness" and qid == "q03":
        raise asyncio.CancelledError
    if metric == "faithfulness" and qid == "q04":
        return Vacuous(1.0, "")
    return 0.9
""")
# every call blocks its thread: prompt_hash for context precision, score always
BLOCKING = own_judge("""
    if metric == "context_precision":
        time.sleep(3600)
""", """
    time.sleep(3600)
    return 0.9
""")
TIMEOUT = "2"
LATE = f"did not return within {TIMEOUT} s (ragate_judge_timeout)"


def run_own(pytester: pytest.Pytester, workers: str, n: int, judge: str) -> pytest.RunResult:
    write_many(pytester.path / "gs", n, floors="[floors]\nfaithfulness = 0.8\n"
                                               "context_precision = 0.8\n")
    pytester.makeconftest(SYSTEM + judge)
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", "gs", "--ragate-cache=off",
        "--ragate-results=r.jsonl", "--junitxml=j.xml", "-o", f"ragate_judge_timeout={TIMEOUT}",
        timeout=240)  # the safety net: on the code before, these runs never end


@WORKERS
def test_a_judge_that_never_returns_is_bounded_and_the_run_ends(
        pytester: pytest.Pytester, workers: str) -> None:
    result = run_own(pytester, workers, 6, STUCK)
    rows = rows_of(pytester.path / "r.jsonl")
    assert {q: r["judge_failures"].get("faithfulness") for q, r in rows.items()} == {
        "q00": f"timeout: the judge's faithfulness verdict {LATE}",
        "q01": f"timeout: the judge's faithfulness verdict {LATE}",
        "q02": "error: the judge's faithfulness verdict raised KeyboardInterrupt",
        "q03": "error: the judge's faithfulness verdict raised CancelledError",
        "q04": "invalid: faithfulness (vacuous) came back with why='', not a reason in words",
        "q05": None,
    }
    assert rows["q05"]["metrics"]["faithfulness"] == 0.9
    assert all(r["metrics"]["context_precision"] == 0.9 for r in rows.values())
    assert result.ret == FAILED
    expect(result, "PASSED gs/ragate.toml::floor[context_precision]",
           "FAILED gs/ragate.toml::floor[judge_coverage] - judge_coverage 0.58 < floor 0.95*")
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[judge_coverage]"]["outcome"] == "failure"


@WORKERS
def test_a_judge_that_blocks_its_thread_is_bounded_and_the_run_ends(
        pytester: pytest.Pytester, workers: str) -> None:
    result = run_own(pytester, workers, 3, BLOCKING)
    rows = rows_of(pytester.path / "r.jsonl")
    why = [w for r in rows.values() for w in r["judge_failures"].values()]
    assert len(why) == 6  # 3 questions, 2 metrics: every verdict a failure, none a score
    # the verdict, or a prompt_hash call queued on the lane behind a blocked one
    assert all(w.startswith("timeout: the judge's ") and w.endswith(LATE) for w in why), why
    assert f"timeout: the judge's prompt_hash('context_precision') {LATE}" in why
    assert result.ret == FAILED
    expect(result, "FAILED gs/ragate.toml::floor[faithfulness] - nothing scored*",
           "FAILED gs/ragate.toml::floor[judge_coverage] - judge_coverage 0.00 < floor 0.95*")


# --- the runner alone -------------------------------------------------------------------------


class Sleepy:
    judge_id = "sleepy"

    def prompt_hash(self, metric: str) -> str:
        return "p"

    async def score(self, item: JudgeInput, metric: str) -> float:
        await asyncio.sleep(0.1)
        return 0.5


def test_a_slow_queue_is_not_a_timeout(tmp_path: Path) -> None:
    """The bound is on each verdict, not on the time it waits for a request slot: 12 verdicts
    of 0.1 s through one slot take 1.2 s and none times out at 1 s."""
    runner = JudgeRunner(1, None, "off", timeout=1.0)
    items = [JudgeInput(f"q{i}", "q?", "a", ()) for i in range(6)]
    try:
        futures = [runner.submit(Sleepy(), item, ("faithfulness", "context_precision"), "1")
                   for item in items]
        verdicts = [f.result(timeout=30) for f in futures]
    finally:
        runner.close()
    assert all(v.failures == {} for v in verdicts)
    assert all(v.values == {"faithfulness": 0.5, "context_precision": 0.5} for v in verdicts)


def test_a_vacuous_verdict_with_a_reason_is_kept(tmp_path: Path) -> None:
    class Empty(Sleepy):
        async def score(self, item: JudgeInput, metric: str) -> Vacuous:
            return Vacuous(1.0, "no statements")

    runner = JudgeRunner(2, None, "off", timeout=5)
    try:
        verdicts = runner.submit(Empty(), JudgeInput("q1", "q?", "a", ()), ("faithfulness",),
                                 "1").result(timeout=30)
    finally:
        runner.close()
    assert verdicts.values == {"faithfulness": 1.0} and verdicts.vacuous == ["faithfulness"]
