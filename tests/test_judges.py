"""Judged metrics: the formulas on hand-worked cases, the runner's cache and failure rules,
and the fixture judge through a real pytest run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_ragate.answer import Context
from pytest_ragate.judges.base import (
    JudgeFailure,
    JudgeInput,
    Vacuous,
    answer_relevance,
    context_precision,
    faithfulness,
)
from pytest_ragate.judges.fixture import FixtureJudge
from pytest_ragate.judges.runner import JudgeRunner, cache_key
from tests.conftest import FIXTURE_JUDGE_CONFTEST, esc, results_rows, write_goldset
from tests.test_plugin import SYSTEM

# --- formulas ---------------------------------------------------------------------------


@pytest.mark.parametrize(("position", "expected"), [(0, 1.0), (1, 0.5), (2, 1 / 3)])
def test_context_precision_rewards_rank(position: int, expected: float) -> None:
    relevant = [False, False, False]
    relevant[position] = True
    assert context_precision(relevant) == pytest.approx(expected, abs=1e-9)


def test_context_precision_hand_worked() -> None:
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2 = 0.8333…
    assert context_precision([True, False, True]) == pytest.approx(5 / 6, abs=1e-9)
    assert context_precision([False, False]) == 0.0  # nothing relevant
    assert context_precision([]) == 0.0


def test_faithfulness() -> None:
    assert faithfulness([True, True, False]) == pytest.approx(2 / 3)
    assert faithfulness([]) == 1.0  # no statements: nothing unfaithful was said


def test_answer_relevance() -> None:
    q = np.array([1.0, 0.0])
    generated = np.array([[1.0, 0.0], [0.0, 2.0]])  # cosines 1 and 0
    assert answer_relevance(q, generated) == pytest.approx(0.5)
    assert answer_relevance(q, np.zeros((0, 2))) == 0.0  # none generated: 0, not skipped


# --- the runner -------------------------------------------------------------------------


CONTEXTS = (Context(context_id="c1", doc_id="m", first_unit=0, last_unit=1, text="a"),
            Context(context_id="c2", doc_id="m", first_unit=2, last_unit=3, text="b"))


def item(qid: str = "q1", answer: str = "an answer") -> JudgeInput:
    return JudgeInput(qid, f"what about {qid}?", answer, CONTEXTS, reference="gist")


class CountingJudge:
    """A judge with latency that counts its calls and can be told to fail."""

    def __init__(self, judge_id: str = "count-v1", prompt: str = "p1", latency: float = 0.0,
                 fail: dict[str, JudgeFailure] | None = None, value: float = 0.75) -> None:
        self.judge_id = judge_id
        self.prompt = prompt
        self.latency = latency
        self.fail = fail or {}
        self.value = value
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def prompt_hash(self, metric: str) -> str:
        return f"{self.prompt}:{metric}"

    async def score(self, item: JudgeInput, metric: str) -> float:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
            if metric in self.fail:
                raise self.fail[metric]
            return self.value
        finally:
            self.in_flight -= 1


METRICS = ("faithfulness", "context_precision")


def judge_all(runner: JudgeRunner, judge: CountingJudge, n: int = 3, version: str = "1",
              ) -> list[object]:
    futures = [runner.submit(judge, item(f"q{i}"), METRICS, version) for i in range(n)]
    return [f.result(timeout=30) for f in futures]


def test_warm_rerun_makes_zero_judge_calls(tmp_path: Path) -> None:
    judge = CountingJudge()
    cold = JudgeRunner(4, tmp_path, "on")
    first = judge_all(cold, judge)
    cold.close()
    assert judge.calls == 6 and all(not v.cached for v in first)  # type: ignore[attr-defined]
    warm = JudgeRunner(4, tmp_path, "on")
    second = judge_all(warm, judge)
    warm.close()
    assert judge.calls == 6  # nothing new
    assert all(v.cached == list(METRICS) for v in second)  # type: ignore[attr-defined]
    assert [v.values for v in second] == [v.values for v in first]  # type: ignore[attr-defined]


@pytest.mark.parametrize("change", ["eval_version", "judge", "prompt", "inputs"])
def test_any_change_of_the_key_misses(tmp_path: Path, change: str) -> None:
    base = CountingJudge()
    runner = JudgeRunner(4, tmp_path, "on")
    judge_all(runner, base, n=1)
    other = CountingJudge(judge_id="count-v2" if change == "judge" else "count-v1",
                          prompt="p2" if change == "prompt" else "p1")
    version = "2" if change == "eval_version" else "1"
    answer = "another answer" if change == "inputs" else "an answer"
    runner.submit(other, item("q0", answer), METRICS, version).result(timeout=30)
    runner.close()
    assert other.calls == 2
    assert cache_key("1", base, "faithfulness", item("q0")) != cache_key(
        version, other, "faithfulness", item("q0", answer))


def test_replay_with_an_empty_cache_misses_and_says_how_to_fill_it(tmp_path: Path) -> None:
    judge = CountingJudge()
    runner = JudgeRunner(4, tmp_path, "replay")
    verdicts = runner.submit(judge, item(), METRICS, "1").result(timeout=30)
    runner.close()
    assert judge.calls == 0
    assert verdicts.replay_misses == list(METRICS) and not verdicts.values
    assert "--ragate-cache replay" in verdicts.failures["faithfulness"]
    assert "--ragate-cache on" in verdicts.failures["faithfulness"]


def test_failures_are_recorded_never_scored(tmp_path: Path) -> None:
    judge = CountingJudge(fail={"faithfulness": JudgeFailure("timeout", "after 60 s")})
    runner = JudgeRunner(4, tmp_path, "on")
    verdicts = runner.submit(judge, item(), METRICS, "1").result(timeout=30)
    assert verdicts.values == {"context_precision": 0.75}
    assert verdicts.failures == {"faithfulness": "timeout: after 60 s"}
    again = runner.submit(judge, item(), METRICS, "1").result(timeout=30)
    runner.close()
    assert "faithfulness" in again.failures  # a failure is not cached as a verdict


def test_nan_and_judge_bugs_are_failures(tmp_path: Path) -> None:
    runner = JudgeRunner(2, tmp_path, "off")
    nan = runner.submit(CountingJudge(value=float("nan")), item(), METRICS, "1").result(30)
    broken = CountingJudge(fail={"faithfulness": KeyError("statements")})  # type: ignore[dict-item]
    bug = runner.submit(broken, item(), METRICS, "1").result(30)
    runner.close()
    assert nan.values == {} and set(nan.failures) == set(METRICS)
    assert bug.failures["faithfulness"].startswith("error: KeyError")


def test_concurrency_is_bounded_and_overlaps_questions(tmp_path: Path) -> None:
    judge = CountingJudge(latency=0.2)
    runner = JudgeRunner(4, tmp_path, "off")
    start = time.perf_counter()
    judge_all(runner, judge, n=8)  # 16 calls of 0.2 s
    elapsed = time.perf_counter() - start
    runner.close()
    assert judge.max_in_flight == 4
    assert elapsed < 16 * 0.2 / 2  # sequential would take 3.2 s


# --- the fixture judge ------------------------------------------------------------------


class TwoDimEmbedder:
    """Isolates the formula from the model: 'rain' questions point one way, others another."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if "rain" in t else [0.0, 1.0] for t in texts])


def fixture_file(tmp_path: Path) -> Path:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"judge_id": "fixture-v1", "answers": {
        "q1": {"statements": ["a", "b", "c"], "supported": [True, False, True],
               "relevant_contexts": ["c2"], "generated_questions": ["will it rain?",
                                                                    "what is lunch?"]},
        "q2": {"statements": [], "supported": [], "relevant_contexts": [],
               "generated_questions": []},
    }}))
    return path


def test_fixture_judge_scores_exactly(tmp_path: Path) -> None:
    judge = FixtureJudge(fixture_file(tmp_path), TwoDimEmbedder())
    rain = JudgeInput("q1", "does it rain?", "yes", CONTEXTS)

    def run(i: JudgeInput, metric: str) -> float:
        return asyncio.run(judge.score(i, metric))

    assert run(rain, "faithfulness") == pytest.approx(2 / 3)
    assert run(rain, "context_precision") == pytest.approx(0.5)
    assert run(rain, "answer_relevance") == pytest.approx(0.5)
    empty = JudgeInput("q2", "q?", "…", CONTEXTS)
    assert run(empty, "faithfulness") == Vacuous(1.0, "no statements")  # kept, and counted
    assert run(empty, "answer_relevance") == 0.0
    with pytest.raises(JudgeFailure, match="no verdicts for 'q9'"):
        run(JudgeInput("q9", "q?", "a", CONTEXTS), "faithfulness")
    assert judge.judge_id == "fixture:fixture-v1"


def test_fixture_judge_file_errors_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"judge_id": "x", "answers": {
        "q1": {"statements": ["a"], "supported": []}}}))
    with pytest.raises(pytest.UsageError, match="1 statements but 0 supported flags"):
        FixtureJudge(bad, TwoDimEmbedder())
    with pytest.raises(pytest.UsageError, match="cannot read"):
        FixtureJudge(tmp_path / "missing.json", TwoDimEmbedder())


# --- through pytest ---------------------------------------------------------------------

JUDGED_FLOORS = """\
[floors]
citation_accuracy = 0.60
faithfulness = 0.60
context_precision = 0.70
"""

# q1..q3 answer with the contexts of SYSTEM (c0 is the only context each retrieves);
# q4 is unanswerable and abstains: it must never reach the judge.
VERDICTS = {
    "q1": {"statements": ["s1", "s2"], "supported": [True, True], "relevant_contexts": ["c0"],
           "generated_questions": ["What about q1?"]},
    "q2": {"statements": ["s1", "s2"], "supported": [True, False], "relevant_contexts": [],
           "generated_questions": []},
}


@pytest.fixture
def judged_project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_goldset(pytester.path / "gs", floors=JUDGED_FLOORS)
    pytester.makeconftest(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    (pytester.path / "judge.json").write_text(json.dumps({"judge_id": "fixture-v1",
                                                         "answers": VERDICTS}))
    return pytester


def run_judged(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult,
                                                               dict[str, dict[str, object]]]:
    results = pytester.path / "r.jsonl"
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs", "-rA",
                                           "--ragate-judge=fixture:judge.json",
                                           f"--ragate-results={results}", *args)
    rows = {r["question_id"]: r for r in results_rows(results)}
    return result, rows


def test_fixture_judge_through_pytest(judged_project: pytest.Pytester) -> None:
    result, rows = run_judged(judged_project, "--ragate-report=report.md")
    # q3 has no verdicts: a judge failure for each metric asked, excluded and counted
    assert rows["q3"]["judge_failures"].keys() == {"faithfulness", "context_precision"}
    assert rows["q3"]["metrics"]["faithfulness"] is None
    assert rows["q1"]["metrics"]["faithfulness"] == 1.0
    assert rows["q2"]["metrics"]["faithfulness"] == 0.5
    assert rows["q1"]["metrics"]["context_precision"] == pytest.approx(1.0, abs=1e-9)
    # no floor gates answer relevance: not asked, so no embedding model is loaded for it
    judged = {"faithfulness", "context_precision", "answer_relevance"}
    assert all(judged & {*r["metrics"], *r["judge_failures"]} == judged - {"answer_relevance"}
               for q, r in rows.items() if q != "q4")
    assert rows["q4"]["judge_failures"] == {} and rows["q4"]["metrics"].get(
        "faithfulness") is None  # unanswerable: never sent
    assert all(r["judge"] == "fixture:fixture-v1" for r in rows.values())
    # the judge delivered 2 of the 3 verdicts of each metric, fewer than judge_coverage asks:
    # no judged floor is decided on the two it gave (faithfulness passed on them, once)
    result.stdout.fnmatch_lines(esc(
        "*context_precision: not decided: the judge delivered 2 of 3 verdicts (0.67 < "
        "judge_coverage floor 0.95, xfail or not; none for q3)*",
        "*judge_coverage 0.67 < floor 0.95 · n=6 verdicts*",
        "FAILED gs/ragate.toml::floor[faithfulness] - *",
        "FAILED gs/ragate.toml::floor[context_precision] - *",
        "FAILED gs/ragate.toml::floor[judge_coverage] - *",
    ))
    report = (judged_project.path / "report.md").read_text()
    assert ("judge fixture:fixture-v1: 4/6 verdicts, judge failures 2, vacuous 0, cache hits 0"
            in report)
    assert result.ret == 1


def test_judged_rerun_is_served_from_the_cache_and_replay_needs_no_judge(
        judged_project: pytest.Pytester) -> None:
    run_judged(judged_project)
    _, warm = run_judged(judged_project, "--ragate-cache=replay")
    assert warm["q1"]["judge_cached"] == ["faithfulness", "context_precision"]
    assert warm["q1"]["metrics"]["faithfulness"] == 1.0


def test_judged_outcomes_identical_under_xdist(judged_project: pytest.Pytester) -> None:
    serial, rows0 = run_judged(judged_project, "-n", "0", "--ragate-cache=off")
    parallel, rows2 = run_judged(judged_project, "-n", "2", "--ragate-cache=off")
    assert rows0 == rows2
    assert serial.ret == parallel.ret == 1


def test_judge_sharing_the_answerers_weights_is_flagged(pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n")
    pytester.makeconftest(SYSTEM + '''

class SameModelJudge:
    judge_id = "ragas:llama-3-8b@temperature=0"
    model = "llama-3-8b"
    def prompt_hash(self, metric):
        return "p"
    async def score(self, item, metric):
        return 1.0

@pytest.fixture(scope="session")
def ragate_judge():
    return SameModelJudge()
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs",
                                           "-o", "ragate_answerer_model=llama-3-8b",
                                           "--ragate-report=report.md")
    result.stdout.fnmatch_lines(["*warning: judge and answerer share weights (llama-3-8b)*"])
    assert "warning: judge and answerer share weights" in (pytester.path / "report.md"
                                                           ).read_text()


def test_a_judge_cache_dir_can_be_committed_and_replayed_elsewhere(
        judged_project: pytest.Pytester) -> None:
    run_judged(judged_project, "-o", "ragate_judge_cache_dir=ci/verdicts")
    folder = judged_project.path / "ci" / "verdicts"
    assert (folder / "cache.db").is_file()
    assert not (judged_project.path / ".ragate-judge-cache").exists()
    moved = judged_project.path / "checkout" / "verdicts"  # as if committed and cloned
    moved.parent.mkdir()
    folder.rename(moved)
    _, warm = run_judged(judged_project, "--ragate-cache=replay",
                         "-o", f"ragate_judge_cache_dir={moved}")
    assert warm["q1"]["judge_cached"] == ["faithfulness", "context_precision"]
    # replay with an empty cache (the folder moved away) fails the run clearly
    result, cold = run_judged(judged_project, "--ragate-cache=replay",
                              "-o", "ragate_judge_cache_dir=ci/verdicts")
    assert cold["q1"]["judge_failures"]["faithfulness"].startswith("no cached")
    result.stdout.fnmatch_lines(["*no cached faithfulness verdict for q1 from "
                                 "fixture:fixture-v1 (--ragate-cache replay)*"])
    assert result.parseoutcomes()["failed"] >= 3  # q1..q3 each fail their item


def test_a_verdict_cancelled_while_gathering_its_slots_gives_them_back(tmp_path: Path) -> None:
    """A verdict that needs 3 request slots takes them one by one; cancelled half-way (a run
    torn down), it must not keep the ones it took, or later verdicts wait forever."""
    class ThreeAtOnce:
        judge_id = "three@1"

        def prompt_hash(self, metric: str) -> str:
            return "p"

        def requests_at_once(self, metric: str) -> int:
            return 3

        async def score(self, item: JudgeInput, metric: str) -> float:
            return 1.0

    runner = JudgeRunner(3, tmp_path, "off")

    async def scenario() -> tuple[bool, int]:
        await runner._slots.acquire()  # one slot busy: the verdict takes 2 and waits
        task = asyncio.ensure_future(runner._judge_one(ThreeAtOnce(), item("q1"),
                                                       "faithfulness", "1"))
        await asyncio.sleep(0.05)
        waiting = not task.done()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        runner._slots.release()
        return waiting, runner._slots._value

    try:
        waiting, free = asyncio.run_coroutine_threadsafe(scenario(), runner._loop).result(10)
    finally:
        runner.close()
    assert waiting and free == 3
