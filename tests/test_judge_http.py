"""The RAGAS judge through a real pytest run, against a loopback OpenAI-compatible server:
one good answer, a timeout, a 500 and malformed JSON. Every failure is counted; none is
averaged as zero or dropped from the denominators silently."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import esc, junit_cases, results_rows, write_goldset
from tests.openai_stub import OpenAIStub, RowVerdicts, completion, error, ragas_script

pytestmark = pytest.mark.heavy  # the RAGAS judge in a gate: ragas takes seconds to import


QUESTIONS = [("a1", "single_doc"), ("a2", "single_doc"), ("a3", "single_doc"),
             ("a4", "single_doc"), ("u1", "unanswerable")]
SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid.startswith("u"):
            return Answer.abstain()
        ctx = Context(context_id="c1", doc_id="m1", first_unit=0, last_unit=3,
                      text=f"context of {qid}: the budget is twelve euros", distance=0.2)
        return Answer(text=f"answer to {qid}: twelve euros", contexts=[ctx],
                      citations=[Citation(context_id="c1")])
    return answer
'''
GOOD = RowVerdicts(statements=["The budget is twelve euros."], supported=[True],
                   relevant=["context of a1: the budget is twelve euros"],
                   questions=["What about a1?"], reference="gist of a1")


def script(request: dict[str, Any]) -> Any:
    prompt = str(request["messages"][-1]["content"])
    if "u1" in prompt:
        return error(400, "an unanswerable question reached the judge")
    if "a2" in prompt:
        return completion("{}", delay=60.0)  # far past the 3 s judge timeout
    if "a3" in prompt:
        return error(500, "the model crashed")
    if "a4" in prompt:
        return completion("this is not { json")
    return ragas_script({"answer to a1: twelve euros": GOOD})(request)


def test_ragas_judge_over_http_counts_every_failure(pytester: pytest.Pytester,
                                                   openai_stub: OpenAIStub) -> None:
    openai_stub.script = script
    write_goldset(pytester.path / "gs",
                  floors="[floors]\nfaithfulness = 0.5\ncontext_precision = 0.5\n",
                  questions=[{"question_id": q, "kind": k, "question": f"What about {q}?"}
                             for q, k in QUESTIONS],
                  expected=[{"question_id": q, "gist": None if q == "u1" else f"gist of {q}",
                             "evidence": [] if q == "u1" else
                             [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                            for q, _ in QUESTIONS])
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "gs", "-rA", "--ragate-results=r.jsonl",
        "--ragate-judge=ragas:stub-model", "-o", f"ragate_judge_url={openai_stub.url}",
        "-o", "ragate_judge_timeout=3", "--ragate-cache=off", "--ragate-report=report.md",
        "--junitxml=junit.xml")
    rows = {r["question_id"]: r for r in
            results_rows(pytester.path / "r.jsonl")}
    assert rows["a1"]["metrics"]["faithfulness"] == 1.0
    assert rows["a1"]["metrics"]["context_precision"] == pytest.approx(1.0, abs=1e-9)
    assert rows["a1"]["judge_failures"] == {}
    for qid, kind in (("a2", "timeout"), ("a3", "http"), ("a4", "parse")):
        failures = rows[qid]["judge_failures"]
        assert set(failures) == {"faithfulness", "context_precision"}  # what is gated
        assert all(why.startswith(f"{kind}:") for why in failures.values()), failures
        assert all(rows[qid]["metrics"][m] is None for m in failures)  # not a zero
    assert rows["u1"]["judge_failures"] == {} and "faithfulness" not in rows["u1"]["metrics"]
    assert not any("u1" in prompt for prompt in openai_stub.prompts())
    assert rows["a1"]["judge"].startswith("ragas:stub-model@temperature=0")
    # the one verdict the judge gave decides nothing: under judge_coverage, a judged floor
    # is not decided (it passed over a1 alone before)
    floor = junit_cases(pytester.path / "junit.xml")["gs.ragate.toml::floor[faithfulness]"]
    assert floor["outcome"] == "failure"
    message = str(floor["props"]["message"])  # type: ignore[index]
    assert message.startswith(
        "faithfulness: not decided: the judge delivered 1 of 4 verdicts (0.25 < "
        "judge_coverage floor 0.95, xfail or not; none for a2, a3, a4): a floor is not "
        "decided on the verdicts its judge could give · the judge failed on a2: timeout:")
    # and why, each cause once (issue 36 item 4)
    assert "; on a3: http:" in message and "; on a4: parse:" in message
    result.stdout.fnmatch_lines(esc(
        "*judge_coverage 0.25 < floor 0.95 · n=8 verdicts*",
        "FAILED gs/ragate.toml::floor[faithfulness] - *",
        "FAILED gs/ragate.toml::floor[context_precision] - *",
        "FAILED gs/ragate.toml::floor[judge_coverage] - *",
    ))
    assert "judge failures 6" in (pytester.path / "report.md").read_text()
    assert result.ret == 1
    # what RAGAS, instructor, openai or langchain warn while judging is theirs, not the
    # user's: nothing reaches the run's warnings summary or its terminal
    said = result.stdout.str() + result.stderr.str()
    assert "warnings summary" not in said and "Warning:" not in said, said
