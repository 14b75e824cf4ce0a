"""The bill through real pytest runs (`-n 0` and `-n 2`): a latency floor that a fast system
passes and a slow tail fails, a cost floor with and without the system's reported cost, the
RAGAS judge's requests and tokens against the loopback OpenAI stub (none on a fully cached
rerun), the totals in every output, and an old results file without the fields still
decided by `ragate decide`."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    WORKERS,
    expect,
    junit_cases,
    results_rows,
    rows_of,
    run_here,
    run_pytester,
    write_goldset,
)
from tests.openai_stub import OpenAIStub, Reply, RowVerdicts, ragas_script, words
from tests.test_judge_http import GOOD
from tests.test_judge_http import SYSTEM as JUDGED_SYSTEM

pytestmark = pytest.mark.heavy  # judged runs through the RAGAS judge: ragas takes seconds to import

N = 60  # the fewest answers with a 95% upper bound of p95 is 59

SLOW_SYSTEM = '''
import time
import pytest
from pytest_ragate import Answer, Citation, Context

SLOW = {slow!r}  # question ids that take SLOW_S to answer

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        time.sleep({slow_s} if qid in SLOW else 0.01)
        ctx = Context(context_id="c1", doc_id="m1", first_unit=2, last_unit=3, text="...")
        return Answer(text="an answer", contexts=[ctx], citations=[Citation(context_id="c1")])
    return answer
'''


def sixty(root: Path, floors: str) -> None:
    write_goldset(root, floors=floors,
                  questions=[{"question_id": f"q{i:02d}", "kind": "single_doc",
                              "question": f"What about q{i:02d}?"} for i in range(N)],
                  expected=[{"question_id": f"q{i:02d}", "gist": "the budget",
                             "evidence": [{"doc_id": "m1", "first_unit": 2,
                                           "last_unit": 3}]} for i in range(N)])


OUTPUTS = ("--ragate-results=r.jsonl", "--ragate-report=report.md", "--ragate-html=report.html",
           "--ragate-history=history.jsonl", "--junitxml=junit.xml")


SLOW_TAIL = ("q07", "q31", "q52")


@pytest.mark.parametrize(("slow", "workers"), [((), "0"), (SLOW_TAIL, "0"), (SLOW_TAIL, "2")],
                         ids=["fast-n0", "slow-tail-n0", "slow-tail-n2"])
def test_a_latency_floor_passes_a_fast_system_and_fails_a_slow_tail(
        pytester: pytest.Pytester, workers: str, slow: tuple[str, ...]) -> None:
    """3 of 60 answers at 0.8 s: the point p95 (the 57th answer) is fast, the 95% upper
    bound (the 60th) is not, and the floor fails on the bound. The slow tail, a way to pass
    wrongly, under both worker counts; the fast system under one: each answer's latency is
    measured where it is asked and travels in its row, which the slow tail holds under -n 2
    (with the bill in every output), and the floor is decided from the rows alone."""
    sixty(pytester.path / "gs", "[floors]\nlatency_p95_s = { max = 0.5 }\n")
    pytester.makeconftest(SLOW_SYSTEM.format(slow=set(slow), slow_s=0.8))
    result = run_pytester(pytester, workers, "gs", *OUTPUTS)
    rows = rows_of(pytester.path / "r.jsonl", timed=True)
    assert all(0.01 <= r["latency_s"] < (1.5 if q in slow else 0.5) for q, r in rows.items())
    assert all(rows[q]["latency_s"] >= 0.8 for q in slow)
    floor = junit_cases(pytester.path / "junit.xml")["gs.ragate.toml::floor[latency_p95_s]"]
    message = str(floor["props"]["message"])  # type: ignore[index]
    if slow:
        assert result.ret == 1 and floor["outcome"] == "failure"
        assert re.match(r"latency_p95_s 0\.\d\d s, 95% upper bound 0\.8\d > ", message), message
        assert "> floor 0.50 (a quantile is decided on its bound)" in message
        named = message.partition(" · worst: ")[2].split("; ")
        assert sorted(words.split()[0] for words in named) == sorted(slow), message
    else:
        assert result.ret == 0 and floor["outcome"] == "passed", result.stdout.str()
        assert "≤ floor 0.50 (a quantile is decided on its bound)" in message
    assert "n=60 answered questions" in message
    line = json.loads((pytester.path / "history.jsonl").read_text().splitlines()[-1])
    bill = line["bill"]
    assert bill["answers"] == N and bill["latency_p95_s"] >= 0.01
    assert bill["judge_requests"] == 0 and "system_cost" not in bill
    report = (pytester.path / "report.md").read_text()
    assert re.search(rf"- bill: {N} answers, latency p50 0\.\d\d s, p95 ", report)
    assert "| latency (s) " in report
    html = (pytester.path / "report.html").read_text()
    assert "<th class=\"num\">latency (s)</th>" in html and f"bill: {N} answers" in html
    result.stdout.fnmatch_lines([f"mini: bill: {N} answers, latency p50 *"])


COST_SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context, Usage

UNPRICED = {unpriced!r}

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        usage = Usage(prompt_tokens=100, completion_tokens=20,
                      cost=None if qid in UNPRICED else 0.002)
        if qid == "q4":
            return Answer.abstain(usage=usage)
        turns = {{"q1": (2, 3), "q2": (5, 5), "q3": (0, 0)}}[qid]
        ctx = Context(context_id="c1", doc_id="m1" if qid != "q2" else "m2",
                      first_unit=turns[0], last_unit=turns[1], text="...")
        return Answer(text="an answer", contexts=[ctx], citations=[Citation(context_id="c1")],
                      usage=usage)
    return answer
'''


@pytest.mark.parametrize(("unpriced", "workers"), [((), "0"), (("q2",), "0"), (("q2",), "2")],
                         ids=["priced-n0", "q2-unpriced-n0", "q2-unpriced-n2"])
def test_cost_per_question_with_and_without_a_reported_cost(
        pytester: pytest.Pytester, workers: str, unpriced: tuple[str, ...]) -> None:
    """A cost not reported leaves the floor not decided (a way to pass wrongly): under both
    worker counts. The priced run under one: each answer's usage travels in its row, which
    the unpriced case holds under -n 2 (q1's), and the sum is made from the rows alone."""
    write_goldset(pytester.path / "gs", floors="[floors]\ncost_per_question = { max = 0.01 }\n")
    pytester.makeconftest(COST_SYSTEM.format(unpriced=set(unpriced)))
    result = run_pytester(pytester, workers, "gs", *OUTPUTS)
    rows = rows_of(pytester.path / "r.jsonl")
    assert rows["q1"]["usage"] == {"prompt_tokens": 100, "completion_tokens": 20,
                                   "cost": 0.002}
    assert rows["q4"]["usage"]["cost"] == (None if "q4" in unpriced else 0.002)
    floor = junit_cases(pytester.path / "junit.xml")["gs.ragate.toml::floor[cost_per_question]"]
    message = str(floor["props"]["message"])  # type: ignore[index]
    report = (pytester.path / "report.md").read_text()
    if unpriced:
        assert result.ret == 1 and floor["outcome"] == "failure"
        assert message.startswith("not decided: 1 of 4 answered questions reported no cost"
                                  " (Answer.usage.cost;"), message
        assert ": q2 · " in message
        assert "system 400+80 tokens, cost not reported for 1" in report
    else:
        assert result.ret == 0 and floor["outcome"] == "passed", result.stdout.str()
        assert message.startswith("cost_per_question $0.0020 ≤ floor 0.0100 · n=4 "), message
        assert "system 400+80 tokens, $0.0080" in report and "total $0.0080" in report
        line = json.loads((pytester.path / "history.jsonl").read_text())
        assert line["bill"]["total_cost"] == pytest.approx(0.008)


# --- the judge's tokens, through RAGAS and the stub -----------------------------------------

JUDGED = [("a1", "single_doc"), ("u1", "unanswerable")]
PRICE_IN, PRICE_OUT = 3.0, 15.0  # US dollars per million tokens


def judged_run(pytester: pytest.Pytester, stub: OpenAIStub, workers: str) -> pytest.RunResult:
    return run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl",
                        "--ragate-report=report.md", "--ragate-history=history.jsonl",
                        "--ragate-judge=ragas:stub-model", "-o", f"ragate_judge_url={stub.url}",
                        "-o", "ragate_judge_cache_dir=verdicts", "--ragate-cache=on",
                        "-o", f"ragate_judge_price_in={PRICE_IN}",
                        "-o", f"ragate_judge_price_out={PRICE_OUT}")


@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="needs ragas")
def test_the_ragas_judges_requests_and_tokens_and_none_when_cached(
        pytester: pytest.Pytester, openai_stub: OpenAIStub) -> None:
    """Under one worker count (-n 0; under -n 2 each worker imports RAGAS, ~4 s of CPU): a
    question's judge requests, tokens and cost are counted in the process that judges it and
    travel in its row, which test_a_judges_usage_that_is_no_count_is_unreported_and_named[n2]
    holds under -n 2 (judge_requests, judge_tokens, judge_cost of its rows); a fully cached
    run asks nothing under -n 2 in tests/test_judge_cache_warm.py; the bill's totals are made
    from the rows alone."""
    replies: list[dict[str, Any]] = []
    script = ragas_script({"answer to a1: twelve euros": GOOD})

    def answered(request: dict[str, Any]) -> Any:
        reply = script(request)
        replies.append(reply.body)
        return reply

    openai_stub.script = answered
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n",
                  questions=[{"question_id": q, "kind": k, "question": f"What about {q}?"}
                             for q, k in JUDGED],
                  expected=[{"question_id": q, "gist": None if q == "u1" else f"gist of {q}",
                             "evidence": [] if q == "u1" else
                             [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                            for q, _ in JUDGED])
    pytester.makeconftest(JUDGED_SYSTEM)  # a1 answered, u1 abstained
    first = judged_run(pytester, openai_stub, "0")
    assert first.ret == 0, first.stdout.str()
    row = rows_of(pytester.path / "r.jsonl")["a1"]
    prompt = sum(words(m["content"]) for r in openai_stub.requests for m in r["messages"])
    completion = sum(words(c["message"]["content"]) for b in replies for c in b["choices"])
    assert row["judge_requests"] == len(openai_stub.requests) >= 3
    assert row["judge_tokens"] == {"prompt": prompt, "completion": completion}
    assert row["judge_cost"] == pytest.approx((prompt * PRICE_IN + completion * PRICE_OUT)
                                              / 1e6)
    assert "judge_requests" not in rows_of(pytester.path / "r.jsonl")["u1"]  # abstained
    asked = len(openai_stub.requests)
    again = judged_run(pytester, openai_stub, "0")
    assert again.ret == 0 and len(openai_stub.requests) == asked  # nothing asked
    cached = rows_of(pytester.path / "r.jsonl")["a1"]
    assert "judge_requests" not in cached and "judge_tokens" not in cached
    assert cached["judge_cost"] == 0.0
    # answer relevance is gated by no floor here: not asked (registry.verdicts_needed)
    assert sorted(cached["judge_cached"]) == ["context_precision", "faithfulness"]
    report = (pytester.path / "report.md").read_text()
    assert "judge 0 requests, 0+0 tokens, 2 cached verdicts (no request), $0.0000" in report
    first_line, second_line = (json.loads(line) for line in
                               (pytester.path / "history.jsonl").read_text().splitlines())
    assert first_line["bill"]["judge_requests"] == asked
    assert first_line["bill"]["judge_prompt_tokens"] == prompt
    assert (second_line["bill"]["judge_requests"], second_line["bill"]["judge_cached"]) == (0, 2)


# a judge's usage that breaks the rule a system's is held to: per question, what the stub
# reports for every request it answers about it (a1's usage is counted, as a real API's)
WRONG_USAGE = {"a2": {"prompt_tokens": -5, "completion_tokens": 3},
               "a3": {"prompt_tokens": 7, "completion_tokens": True},
               "a4": {"prompt_tokens": 7, "completion_tokens": 3, "cost": -0.5}}
PRICED_SYSTEM = JUDGED_SYSTEM.replace(
    "return Answer(", "return Answer(usage={'prompt_tokens': 1, 'completion_tokens': 1, "
    "'cost': 0.001}, ")


@WORKERS
@pytest.mark.skipif(importlib.util.find_spec("ragas") is None, reason="needs ragas")
def test_a_judges_usage_that_is_no_count_is_unreported_and_named(
        pytester: pytest.Pytester, openai_stub: OpenAIStub, workers: str) -> None:
    """Negative, boolean or a negative cost: the request's tokens are not counted (not 0,
    not clamped), so a priced judge's cost of the question is unknown and the cost floor is
    not decided over it; one line names the judge and the field."""
    asked = ("a1", *WRONG_USAGE)
    rows = {f"answer to {q}: twelve euros": RowVerdicts(
        statements=["The budget is twelve euros."], supported=[True],
        relevant=[f"context of {q}: the budget is twelve euros"],
        questions=[f"What about {q}?"], reference=f"gist of {q}") for q in asked}
    script = ragas_script(rows)

    def answered(request: dict[str, Any]) -> Any:
        reply = script(request)
        prompt = str(request["messages"][-1]["content"])
        wrong = next((usage for q, usage in WRONG_USAGE.items() if q in prompt), None)
        return reply if wrong is None else Reply(reply.status, {**reply.body, "usage": wrong})

    openai_stub.script = answered
    write_goldset(pytester.path / "gs", floors="[floors]\ncost_per_question = { max = 1 }\n",
                  questions=[{"question_id": q, "kind": "single_doc",
                              "question": f"What about {q}?"} for q in asked],
                  expected=[{"question_id": q, "gist": f"gist of {q}", "evidence": [
                      {"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for q in asked])
    pytester.makeconftest(PRICED_SYSTEM)
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl",
                          "--ragate-judge=ragas:stub-model", "--ragate-cache=off",
                          "-o", f"ragate_judge_url={openai_stub.url}",
                          "-o", "ragate_judge_price_in=1", "-o", "ragate_judge_price_out=1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    found = rows_of(pytester.path / "r.jsonl")
    assert "unreported" not in found["a1"]["judge_tokens"] and found["a1"]["judge_cost"] > 0
    invalid = {q: found[q]["judge_tokens"]["invalid"] for q in WRONG_USAGE}
    assert invalid == {"a2": {"prompt_tokens": "must be 0 or more, not -5"},
                       "a3": {"completion_tokens": "must be an integer, not bool True"},
                       "a4": {"cost": "must be 0 or more, not -0.5"}}
    assert all(found[q]["judge_tokens"]["unreported"] == found[q]["judge_requests"]
               for q in WRONG_USAGE)
    expect(result,
           "FAILED gs/ragate.toml::floor[cost_per_question] - not decided: 3 of 4 answered "
           "questions reported no cost *: a2, a3, a4*",
           "ragate: the judge ragas:stub-model* reported a usage whose prompt_tokens must be 0 "
           "or more, not -5 (1 question: a2): its tokens are not counted*",
           "ragate: the judge ragas:stub-model* reported a usage whose completion_tokens must "
           "be an integer, not bool True (1 question: a3)*",
           "ragate: the judge ragas:stub-model* reported a usage whose cost must be 0 or more, "
           "not -0.5 (1 question: a4)*")


# --- an old results file ---------------------------------------------------------------------

BILL_FIELDS = ("latency_s", "usage", "judge_requests", "judge_tokens", "judge_cost")


def as_before_the_bill(path: Path) -> None:
    """The results file as a ragate before the bill wrote it: no bill field in any row, and
    its trailer vouching for those bytes."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    body = ""
    for line in lines[:-1]:
        for name in BILL_FIELDS:
            line.pop(name, None)
        body += json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n"
    trailer = lines[-1]
    trailer["ragate_trailer"]["sha256"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(body + json.dumps(trailer, sort_keys=True) + "\n", encoding="utf-8")


def test_an_old_results_file_without_the_bill_still_decides(pytester: pytest.Pytester) -> None:
    """Its floors are decided as before; a latency floor over it fails, naming the rows that
    carry no latency, rather than pass on nothing. The run and `ragate decide` in this
    process (`run_here`): the process boundary is not the point."""
    root = pytester.path
    sixty(root / "gs", "[floors]\nabstention_accuracy = 1.0\nlatency_p95_s = { max = 5 }\n")
    (root / "conftest.py").write_text(SLOW_SYSTEM.format(slow=set(), slow_s=0.0))
    ran = pytester.runpytest_inprocess("gs", "-p", "no:cacheprovider",
                                       "--ragate-results=r.jsonl")
    assert ran.ret == 0, ran.stdout.str()
    fresh = run_here(pytester, "decide", "r.jsonl", "--", "gs", "-p", "no:cacheprovider",
                        "--junitxml=fresh.xml")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    as_before_the_bill(root / "r.jsonl")
    assert not any(set(BILL_FIELDS) & set(r) for r in results_rows(root / "r.jsonl",
                                                                     timed=True))
    old = run_here(pytester, "decide", "r.jsonl", "--", "gs", "-p", "no:cacheprovider",
                      "--junitxml=old.xml")
    cases = junit_cases(root / "old.xml")
    assert cases["gs.ragate.toml::floor[abstention_accuracy]"]["outcome"] == "passed"
    latency = cases["gs.ragate.toml::floor[latency_p95_s]"]
    assert old.returncode == 1 and latency["outcome"] == "failure", old.stdout
    message = str(latency["props"]["message"])  # type: ignore[index]
    assert message.startswith("not decided: 60 of 60 answered questions have no measured "
                              "latency (a row from before ragate measured it): q00, q01"), message
