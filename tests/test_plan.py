"""`ragate plan`: what a run would ask, given the judge cache, asking nothing.

A cold cache plans every judge request; after a run, the same answers plan none; a changed
goldset makes the index's keys stale; a bad judge spec or goldset path is one error; the plan
reaches no server (its judge URL refuses connections, the stub sees no request)."""

from __future__ import annotations

import contextlib
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pytest_ragate.cli import main
from pytest_ragate.judges.plan import token_counter
from tests.conftest import run_pytester
from tests.openai_stub import OpenAIStub, ragas_script
from tests.test_judge_cache_warm import IDS, SYSTEM, goldset, verdicts

pytestmark = pytest.mark.heavy  # plans the RAGAS judge's requests: ragas takes seconds to import


REQUESTS_PER_ANSWER = 2 + 1 + 1  # faithfulness, context precision (1 context), relevance


def planned(root: Path, *args: str) -> Result:
    """`ragate plan ARGS` run from `root` (where it looks for the ini file)."""
    with contextlib.chdir(root):
        return CliRunner().invoke(main, ["plan", *args], catch_exceptions=False)


def plan_json(root: Path, *args: str) -> dict[str, Any]:
    result = planned(root, "--json", *args)
    assert result.exit_code == 0, result.output
    found: dict[str, Any] = json.loads(result.output)
    return found


def project(root: Path, url: str = "http://127.0.0.1:9/v1") -> None:
    """A goldset of 3 questions and an ini file naming a judge whose URL refuses
    connections (port 9: discard, closed on loopback)."""
    goldset(root)
    (root / "pytest.ini").write_text(f"[pytest]\nragate_judge = ragas:stub-model\n"
                                     f"ragate_judge_url = {url}\n"
                                     "ragate_judge_cache_dir = judge-cache\n")


@pytest.mark.heavy
def test_a_warm_cache_plans_no_judge_request_for_unchanged_answers(
        pytester: pytest.Pytester, openai_stub: OpenAIStub) -> None:
    openai_stub.script = ragas_script(verdicts(), honor_n=True)
    project(pytester.path)
    pytester.makeconftest(SYSTEM)
    root = pytester.path
    cold = plan_json(root, str(root / "gs"), "--contexts", "1")
    assert cold["total"]["system_calls"] == len(IDS)
    for figure in ("changed", "unchanged"):  # nothing cached: both are every request
        assert cold["total"][figure]["requests"] == REQUESTS_PER_ANSWER * len(IDS)
        assert cold["total"][figure]["cached"] == 0
    assert cold["total"]["changed"]["prompt_tokens"] > 0

    run = run_pytester(pytester, "0", "gs", "-o", f"ragate_judge_url={openai_stub.url}")
    run.assert_outcomes(passed=len(IDS) + 3)
    asked = len(openai_stub.requests)
    assert asked == REQUESTS_PER_ANSWER * len(IDS), [
        (r.get("n"), r["messages"][-1]["content"][-300:]) for r in openai_stub.requests]

    warm = plan_json(root, str(root / "gs"))
    assert warm["total"]["unchanged"] == {"requests": 0, "verdicts": 3 * len(IDS),
                                          "cached": 3 * len(IDS), "prompt_tokens": 0,
                                          "completion_tokens": 0, "cost_usd": None}
    assert warm["total"]["changed"]["requests"] == REQUESTS_PER_ANSWER * len(IDS)
    assert warm["total"]["indexed"] == len(IDS)
    assert len(openai_stub.requests) == asked  # the plan asked nothing

    text = planned(root, str(root / "gs"))
    assert text.exit_code == 0 and "unchanged answers" in text.output
    assert "ragate caches no answers" in text.output

    (root / "gs" / "ragate.toml").write_text((root / "gs" / "ragate.toml").read_text()
                                             .replace('eval_version = "7"',
                                                      'eval_version = "8"'))
    stale = plan_json(root, str(root / "gs"))  # every key changes with the eval_version
    assert stale["total"]["unchanged"]["requests"] == REQUESTS_PER_ANSWER * len(IDS)
    assert stale["total"]["indexed"] == 0
    # the last answers and contexts still stand in for the next: the prompts estimated are
    # the prompts the run sent, but for the NLI step's statements (the model's, not guessed)
    count, _ = token_counter("stub-model")
    sent = sum(sum(count(m["content"]) + 3 for m in r["messages"]) + 3
               for r in openai_stub.requests)
    assert stale["total"]["unchanged"]["prompt_tokens"] == pytest.approx(sent, rel=0.02)


def test_a_cold_cache_plans_every_request_and_its_cost(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"the plan opened a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)  # no network, whatever asks
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    project(tmp_path)
    found = plan_json(tmp_path, str(tmp_path / "gs"), "--contexts", "4", "--repeat", "2",
                      "--price-in", "1.5", "--price-out", "6")
    total = found["total"]
    assert total["questions"] == len(IDS) and total["system_calls"] == 2 * len(IDS)
    assert total["judged_answers"] == 2 * len(IDS)
    unchanged = total["unchanged"]
    assert unchanged["requests"] == (2 + 4 + 1) * 2 * len(IDS) and unchanged["cached"] == 0
    assert unchanged["cost_usd"] == pytest.approx(
        (unchanged["prompt_tokens"] * 1.5 + unchanged["completion_tokens"] * 6) / 1e6)
    assert found["judge"] == "ragas:stub-model@temperature=0"
    assert not (tmp_path / "judge-cache").exists()  # a plan creates no cache folder
    # a goldset that gates faithfulness alone asks no answer relevance: the plan counts the
    # requests the run would send (registry.verdicts_needed)
    toml = tmp_path / "gs" / "ragate.toml"
    toml.write_text(toml.read_text().replace("answer_relevance = 0.0\n", ""))
    found = plan_json(tmp_path, str(tmp_path / "gs"), "--contexts", "4", "--repeat", "2")
    assert found["total"]["unchanged"]["requests"] == (2 + 4) * 2 * len(IDS)


def test_the_ini_file_sets_the_prices(tmp_path: Path) -> None:
    project(tmp_path)
    with (tmp_path / "pytest.ini").open("a") as ini:
        ini.write("ragate_judge_price_in = 2\nragate_judge_price_out = 0\n")
    total = plan_json(tmp_path, "gs")["total"]["changed"]
    assert total["cost_usd"] == pytest.approx(total["prompt_tokens"] * 2 / 1e6)


def test_a_fixture_judge_and_no_judge_plan_no_request(tmp_path: Path) -> None:
    goldset(tmp_path)
    none = plan_json(tmp_path, "gs")
    assert none["judge"] == "none" and none["total"]["system_calls"] == len(IDS)
    assert none["total"]["changed"]["requests"] == 0
    assert none["total"]["judged_answers"] == 0
    fixture = plan_json(tmp_path, "gs", "--judge", "fixture:verdicts.jsonl")
    assert fixture["total"]["judged_answers"] == len(IDS)
    assert fixture["total"]["changed"]["requests"] == 0
    assert fixture["total"]["changed"]["prompt_tokens"] == 0


@pytest.mark.parametrize("spec", ["gpt-4o", "ragas", "fixture:", "openai:gpt-4o",
                                  "openai:gpt-sk-0123456789abcdefXYZ"])
def test_an_unknown_judge_spec_is_one_error(tmp_path: Path, spec: str) -> None:
    """Named as given, but for a key in it (masked as every output masks one)."""
    goldset(tmp_path)
    result = planned(tmp_path, "gs", "--judge", spec)
    assert result.exit_code == 1
    shown = spec.replace("sk-0123456789abcdefXYZ", "***")
    assert result.output.strip().splitlines() == [
        f"Error: --judge {shown!r}: expected fixture:PATH or ragas:MODEL (or ragas with "
        "ragate_judge_model)"]


def test_a_bad_goldset_path_is_one_error(tmp_path: Path) -> None:
    missing = planned(tmp_path, "nowhere")
    assert missing.exit_code == 2 and "'nowhere' does not exist" in missing.output
    (tmp_path / "empty").mkdir()
    empty = planned(tmp_path, "empty")
    assert empty.exit_code == 1
    assert empty.output.strip() == "Error: no ragate.toml under empty"
    goldset(tmp_path)
    (tmp_path / "gs" / "questions.jsonl").write_text('{"question_id": "a1"}\n')
    broken = planned(tmp_path, "gs")
    assert broken.exit_code == 1 and len(broken.output.strip().splitlines()) == 1
    assert "not a valid goldset" in broken.output and "questions.jsonl" in broken.output


def test_one_price_without_the_other_is_refused(tmp_path: Path) -> None:
    project(tmp_path)
    done = planned(tmp_path, "gs", "--price-in", "1.5")
    assert done.exit_code == 1 and "prices go together" in done.output
