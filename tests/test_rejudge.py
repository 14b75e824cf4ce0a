"""`ragate rejudge` through its command line: a gate run writes a results file under the
current fixture judge, and the command re-grades the saved answers under a candidate judge.
The adversary: a candidate that is harsher on one kind of question only, while the whole
floor still holds, is caught (exit 1) with the flipped questions named; a candidate that
agrees exits 0; a results file written before rows kept the judged contexts is one error;
a sealed goldset's gist and a judge URL's credential never reach an output. The gate runs
with and without `-n 2`: the tests that read the plain project's results share one gate run per
worker count (`gated`). The command runs in this process (`main`, through click's runner): what
it says is all a test reads of it, and tests/test_fail_closed_secrets.py runs it in a process of
its own."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from tests.conftest import (
    BASE_TOML,
    FIXTURE_JUDGE_CONFTEST,
    TWELVE_EUROS,
    WORKERS_SHARED,
    both_routes,
    jsonl,
    run_pytester,
    write_goldset,
)
from tests.openai_stub import OpenAIStub
from tests.test_fail_closed import planned

N = 24  # q00..q23: even ones policy (a declared kind), odd ones single_doc
KINDS = {f"q{i:02d}": "policy" if i % 2 == 0 else "single_doc" for i in range(N)}
GIST = "the zebra budget"  # every question's expected answer: sealed in one test
FLOORS = "[floors]\nfaithfulness = 0.6\n"
KINDS_DECLARED = 'kinds = ["policy"]\n'  # under [questions], where BASE_TOML ends


def write_project(pytester: pytest.Pytester, labels: bool = False) -> None:
    judge = '[judge]\nlabels = "labels.jsonl"\n' if labels else ""
    write_goldset(pytester.path / "gs", floors=f"{KINDS_DECLARED}{judge}\n{FLOORS}", questions=[
        {"question_id": q, "kind": k, "question": f"What about {q}?"} for q, k in KINDS.items()],
        expected=[{"question_id": q, "gist": GIST,
                   "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                  for q in KINDS])
    if labels:  # people say the single_doc answers are half unfaithful, as `harsh` does
        (pytester.path / "gs" / "labels.jsonl").write_text(jsonl(
            {"question_id": q, "metric": "faithfulness", "verdict": int(k == "policy")}
            for q, k in KINDS.items()))
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "current.json", "current", lambda q: [True] * 3)
    judge_file(pytester.path / "same.json", "same", lambda q: [True] * 3)
    # harsher on single_doc answers only: 1/3 each, under the floor; the whole stays 2/3
    judge_file(pytester.path / "harsh.json", "harsh",
               lambda q: [True] + [KINDS[q] == "policy"] * 2)


def judge_file(path: Path, judge_id: str, supported: object) -> None:
    path.write_text(json.dumps({"judge_id": judge_id, "answers": {
        q: {"statements": ["s1", "s2", "s3"], "supported": supported(q)}  # type: ignore[operator]
        for q in KINDS}}))


def gate(pytester: pytest.Pytester, workers: str) -> None:
    result = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:current.json",
                          "--ragate-results=res.jsonl")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


ONE_RUN = pytest.mark.parametrize("workers", ["0"], ids=["n0"])
"""A test of what the command makes of the files it is given (a usage error, files of other
runs or goldsets beside them), over the plain project's results as `-n 0` wrote them: as it
was before the run was shared, under one worker count."""


@pytest.fixture(scope="module")
def gated_runs() -> dict[str, Path]:
    """The plain project (`write_project`) gated once per worker count for the module: each
    worker count's folder, kept after its first test."""
    return {}


@pytest.fixture
def gated(pytester: pytest.Pytester, workers: str, gated_runs: dict[str, Path],
          tmp_path_factory: pytest.TempPathFactory) -> pytest.Pytester:
    """pytester's folder holding the plain project and its res.jsonl, written by a gate under
    `-n workers`: run by the first test that asks, copied into every later test's own folder
    (which it may change)."""
    if workers in gated_runs:
        shutil.copytree(gated_runs[workers], pytester.path, dirs_exist_ok=True)
        return pytester
    write_project(pytester)
    gate(pytester, workers)
    gated_runs[workers] = tmp_path_factory.mktemp(f"gated-n{workers}")
    shutil.copytree(pytester.path, gated_runs[workers], dirs_exist_ok=True)
    return pytester


class Result:
    """What the command said (stdout and stderr together, as a person sees them) and its
    exit status."""

    def __init__(self, output: str, exit_code: int) -> None:
        self.output = output
        self.exit_code = exit_code


def ragate(root: Path, *args: str) -> Result:
    """The `ragate` command under `root`, in this process (an exception it raises fails the
    test rather than read as an exit status)."""
    with contextlib.chdir(root):
        done = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return Result(done.output, done.exit_code)


def rejudge(pytester: pytest.Pytester, *args: str) -> Result:
    return ragate(pytester.path, "rejudge", "res.jsonl", "--cache-dir", "jc", *args)


@WORKERS_SHARED
def test_a_judge_harsher_on_one_kind_only_moves_the_gate(gated: pytest.Pytester) -> None:
    pytester = gated
    result = rejudge(pytester, "--judge", "fixture:harsh.json")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    # the whole floor still holds under both judges: only the kind's shift gives it away
    assert any(line.split()[:4] == ["floor[faithfulness]", "passed", "passed", "same"]
               for line in lines), result.output
    kind = next(line for line in lines if line.startswith("single_doc:faithfulness"))
    assert "-0.67" in kind and kind.split()[-1] == "yes", result.output
    single = next(line for line in lines if line.startswith("policy:faithfulness"))
    assert "+0.00" in single and single.split()[-1] == "no"
    assert "flipped faithfulness: q01 1.00→0.33, q03 1.00→0.33" in result.output
    assert "single_doc:faithfulness shifted -0.67 under the candidate judge" in result.output
    assert lines[-1].startswith("ragate rejudge: the judge change moves the gate")

    as_json = rejudge(pytester, "--judge", "fixture:harsh.json", "--json")
    assert as_json.exit_code == 1
    [comparison] = json.loads(as_json.output)
    by_name = {(s["kind"], s["metric"]): s for s in comparison["shifts"]}
    whole = by_name[(None, "faithfulness")]
    assert (whole["n"], whole["passed_to_failed"]) == (N, N // 2)
    assert whole["shift"] == pytest.approx(-1 / 3)
    assert whole["p_mcnemar"] == 2 / 2 ** (N // 2)  # exact: 12 discordant pairs, all one way
    assert [f["name"] for f in whole["flips"]] == [f"q{i:02d}" for i in range(1, N, 2)]
    assert comparison["current_judge"] == "fixture:current"
    assert comparison["candidate_judge"] == "fixture:harsh"


def test_a_judge_that_agrees_exits_0_and_labels_are_compared_side_by_side(
        pytester: pytest.Pytester) -> None:
    write_project(pytester, labels=True)
    gate(pytester, "0")  # no judge_agreement floor: the labels hold no floor back
    same = rejudge(pytester, "--judge", "fixture:same.json")
    assert same.exit_code == 0, same.output
    assert "flipped" not in same.output
    assert same.output.splitlines()[-1] == (
        "ragate rejudge: no floor's outcome changes and no shift is significant at alpha 0.05 "
        "(Holm-corrected)")
    # the labels side with the harsh judge: its kappa is 1, the current judge's 0
    harsh = rejudge(pytester, "--judge", "fixture:harsh.json")
    assert harsh.exit_code == 1
    assert ("labels, faithfulness: current kappa 0.00 [0.00, 0.00]; candidate kappa 1.00"
            in harsh.output), harsh.output


def without_judged_contexts(path: Path) -> None:
    """The results file as a run before rows kept their judged contexts wrote it: rows
    without them, the trailer vouching for the lines as they now are."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    body = []
    for line in lines[:-1]:
        row = json.loads(line)
        row.pop("judged_contexts", None)
        body.append(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    trailer = json.loads(lines[-1])
    trailer["ragate_trailer"]["sha256"] = hashlib.sha256("".join(body).encode()).hexdigest()
    path.write_text("".join(body) + json.dumps(trailer, sort_keys=True) + "\n",
                    encoding="utf-8")


@WORKERS_SHARED
def test_an_old_results_file_is_one_error_that_says_what_to_do(gated: pytest.Pytester) -> None:
    pytester = gated
    without_judged_contexts(pytester.path / "res.jsonl")
    result = rejudge(pytester, "--judge", "fixture:harsh.json")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "Error: res.jsonl: line 2 (q00): this results file keeps no judged contexts (written "
        "before `ragate rejudge` existed); run the gate once more with --ragate-results and "
        "rejudge that file"]


@ONE_RUN
def test_usage_errors_are_one_line_and_exit_2(gated: pytest.Pytester) -> None:
    pytester = gated
    bad = rejudge(pytester, "--judge", "nonsense")
    assert bad.exit_code == 2
    assert bad.output.strip() == ("Error: --judge 'nonsense': expected fixture:PATH or "
                                  "ragas:MODEL (or ragas with ragate_judge_model)")
    (pytester.path / "torn.jsonl").write_text("{not json\n")
    torn = ragate(pytester.path, "rejudge", "torn.jsonl", "--judge", "fixture:same.json")
    assert torn.exit_code == 2 and torn.output.count("\n") == 1, torn.output
    assert "torn.jsonl" in torn.output and "malformed JSON" in torn.output


def test_a_sealed_gist_and_a_url_credential_never_reach_an_output(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(pytester)
    monkeypatch.setenv("RAGATE_SEAL_KEY", "a passphrase for the test")
    sealed = ragate(pytester.path, "seal", "gs")
    assert sealed.exit_code == 0, sealed.output
    assert not (pytester.path / "gs" / "expected.jsonl").exists()
    gate(pytester, "0")
    secret = "s3cret-pass"
    url = f"http://user:{secret}@127.0.0.1:9/v1"
    outputs = [(pytester.path / "res.jsonl").read_text()]
    for args in (["--judge", "fixture:harsh.json", "--judge-url", url],
                 ["--judge", "fixture:harsh.json", "--json", "--judge-url", url]):
        found = rejudge(pytester, *args)
        assert found.exit_code == 1, found.output
        outputs.append(found.output)
    # without the key the reference cannot be read: refused, not graded without it
    monkeypatch.delenv("RAGATE_SEAL_KEY")
    locked = rejudge(pytester, "--judge", "fixture:harsh.json", "--judge-url", url)
    assert locked.exit_code == 2
    assert "the goldset is sealed: set RAGATE_SEAL_KEY" in locked.output
    outputs.append(locked.output)
    for text in outputs:
        assert "zebra" not in text and secret not in text


# --- the RAGAS judge against two scripted servers ------------------------------------------

RAGAS_QUESTIONS = ("a1", "a2", "a3", "a4")


def ragas_verdicts(unsupported: set[str]) -> Any:
    from tests.openai_stub import RowVerdicts, ragas_script

    return ragas_script({f"answer to {q}: twelve euros": RowVerdicts(
        statements=[f"The budget of {q} is twelve euros."], supported=[q not in unsupported],
        relevant=[f"context of {q}: the budget is twelve euros"],
        questions=[f"What about {q}?"], reference=GIST) for q in RAGAS_QUESTIONS})


def judged_by_model_a(pytester: pytest.Pytester, stub: OpenAIStub, *args: str) -> None:
    """A goldset of RAGAS_QUESTIONS run once with `ragas:model-a` at `stub`, every answer
    supported; its results in res.jsonl."""
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.8\n", questions=[
        {"question_id": q, "kind": "single_doc", "question": f"What about {q}?"}
        for q in RAGAS_QUESTIONS], expected=[
        {"question_id": q, "gist": GIST,
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
        for q in RAGAS_QUESTIONS])
    pytester.makeconftest(TWELVE_EUROS)
    stub.script = ragas_verdicts(set())
    ran = run_pytester(pytester, "0", "gs", "--ragate-results=res.jsonl",
                       "--ragate-judge=ragas:model-a", "-o", f"ragate_judge_url={stub.url}", *args)
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()


# checked without importing RAGAS here: imported in a test, after pytester has restored
# sys.modules around an in-process run, numpy (which RAGAS imports) refuses to load twice
NEEDS_RAGAS = pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                                 reason="needs pytest-ragate[ragas]")


@NEEDS_RAGAS
def test_the_ragas_judge_against_two_servers(pytester: pytest.Pytester, openai_stub: OpenAIStub,
                                             caplog: pytest.LogCaptureFixture) -> None:
    from tests.openai_stub import OpenAIStub as Stub

    judged_by_model_a(pytester, openai_stub)
    asked_before = len(openai_stub.requests)
    secret = "s3cret-pass"
    with Stub(ragas_verdicts({"a3", "a4"})) as candidate:
        url = candidate.url.replace("http://", f"http://user:{secret}@")
        result = rejudge(pytester, "--judge", "ragas:model-b", "--judge-url", url)
        assert candidate.requests  # the candidate was asked; the current server was not
    assert len(openai_stub.requests) == asked_before
    assert result.exit_code == 1, result.output
    assert any(line.split()[:4] == ["floor[faithfulness]", "passed", "failed", "CHANGES"]
               for line in result.output.splitlines()), result.output
    assert "flipped faithfulness: q" not in result.output
    assert "flipped faithfulness: a3 1.00→0.00, a4 1.00→0.00" in result.output
    # in a process of its own, a library's warning would be on the command's stderr
    assert secret not in result.output + caplog.text and "zebra" not in result.output


@NEEDS_RAGAS
def test_the_same_model_at_another_server_is_graded_afresh(pytester: pytest.Pytester,
                                                          openai_stub: OpenAIStub) -> None:
    """A verdict's cache key names the judge (`ragas:model-a`), not its server: a candidate
    of the same name at another URL must be asked, not served the current verdicts."""
    from tests.openai_stub import OpenAIStub as Stub

    judged_by_model_a(pytester, openai_stub, "-o", "ragate_judge_cache_dir=verdicts")
    with Stub(ragas_verdicts({"a3", "a4"})) as candidate:
        result = rejudge(pytester, "--judge", "ragas:model-a", "--judge-url", candidate.url,
                         "--cache-dir", "verdicts")
        assert candidate.requests  # asked, though the cache holds model-a's verdicts
    assert result.exit_code == 1, result.output
    assert "flipped faithfulness: a3 1.00→0.00, a4 1.00→0.00" in result.output


# --- adversaries: what must not pass as "no change" -----------------------------------------


@WORKERS_SHARED
def test_a_candidate_that_grades_no_answer_moves_the_gate(gated: pytest.Pytester) -> None:
    """A candidate that fails on every answer (its file has no verdict for any) compares
    nothing: that is not "no change", it is every answer ungraded and the floor lost."""
    pytester = gated
    (pytester.path / "mute.json").write_text(json.dumps({"judge_id": "mute", "answers": {}}))
    result = rejudge(pytester, "--judge", "fixture:mute.json")
    assert result.exit_code == 1, result.output
    assert any(line.split()[:4] == ["floor[faithfulness]", "passed", "failed", "CHANGES"]
               for line in result.output.splitlines()), result.output
    assert "faithfulness: the candidate judge gave no verdict on 24 answers" in result.output


def test_a_run_no_judge_graded_is_refused_not_called_unchanged(
        pytester: pytest.Pytester) -> None:
    """Results of a run without a judge hold no verdict to hold the candidate to: refused,
    never "no floor's outcome changes" over a comparison of nothing."""
    write_goldset(pytester.path / "gs", floors=KINDS_DECLARED, questions=[
        {"question_id": q, "kind": k, "question": f"What about {q}?"} for q, k in KINDS.items()],
        expected=[{"question_id": q, "gist": GIST,
                   "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                  for q in KINDS])
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "harsh.json", "harsh", lambda q: [True, False, False])
    ran = run_pytester(pytester, "0", "gs", "--ragate-results=res.jsonl")
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
    result = rejudge(pytester, "--judge", "fixture:harsh.json")
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        "Error: no saved answer was graded by a judge (the run had no --ragate-judge, or "
        "every question abstained or failed): nothing to hold the candidate judge to"]


@WORKERS_SHARED
def test_the_rows_of_a_goldset_come_from_one_run(gated: pytest.Pytester) -> None:
    """A second copy of the results (or another run's) doubles or mixes the rows a shift is
    tested over; one shard alone is part of the run: each refused. Every shard of the run
    together is the run itself (the shards at -n 0: the command reads their rows, which are
    a shard's whatever its worker count; the whole run's were written under -n workers)."""
    pytester = gated
    whole = rejudge(pytester, "--judge", "fixture:harsh.json", "--json")
    (pytester.path / "copy.jsonl").write_text((pytester.path / "res.jsonl").read_text())
    twice = rejudge(pytester, "copy.jsonl", "--judge", "fixture:same.json")
    assert twice.exit_code == 2, twice.output
    assert twice.output.strip() == (
        "Error: goldset mini (gs/ragate.toml): these are not the shards of one run: "
        "res.jsonl (the run), copy.jsonl (the run) (give one run's files at a time: either "
        "its one results file, or each of its --ragate-shard files)")
    for i in (1, 2):
        ran = run_pytester(pytester, "0", "gs", "--ragate-judge=fixture:current.json",
                           f"--ragate-shard={i}/2", f"--ragate-results=s{i}.jsonl")
        assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
    alone = ragate(pytester.path, "rejudge", "s1.jsonl", "--judge", "fixture:harsh.json")
    assert alone.exit_code == 2, alone.output
    assert alone.output.strip() == (
        "Error: goldset mini (gs/ragate.toml): shard 2/2 missing: given s1.jsonl (shard 1/2)")
    doubled = ragate(pytester.path, "rejudge", "s1.jsonl", "s1.jsonl", "s2.jsonl",
                     "res.jsonl", "--judge", "fixture:harsh.json")
    assert doubled.exit_code == 2, doubled.output
    assert "these are not the shards of one run" in doubled.output
    both = ragate(pytester.path, "rejudge", "s1.jsonl", "s2.jsonl", "--json",
                  "--judge", "fixture:harsh.json")
    assert both.exit_code == 1, both.output
    assert json.loads(both.output)[0]["floors"] == json.loads(whole.output)[0]["floors"]
    assert json.loads(both.output)[0]["shifts"][0]["n"] == N


@ONE_RUN
def test_each_goldset_is_decided_as_its_own_run_decided_it(gated: pytest.Pytester) -> None:
    """Two runs' results, of two goldsets: each floor is decided under the `ragate_ci` its
    own run wrote (strict for the second), not the first file's."""
    pytester = gated  # res.jsonl: the first goldset's run
    write_goldset(pytester.path / "gs2", toml=BASE_TOML.replace('"mini"', '"other"'),
                  floors=KINDS_DECLARED + FLOORS, questions=[
                      {"question_id": q, "kind": k, "question": f"What about {q}?"}
                      for q, k in KINDS.items()],
                  expected=[{"question_id": q, "gist": GIST, "evidence": [
                      {"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for q in KINDS])
    ran = run_pytester(pytester, "0", "gs2", "--ragate-judge=fixture:current.json",
                       "--ragate-ci=strict", "--ragate-results=strict.jsonl")
    assert (pytester.path / "strict.jsonl").is_file(), ran.stdout.str()
    alone = ragate(pytester.path, "rejudge", "strict.jsonl", "--judge", "fixture:harsh.json",
                   "--json")
    together = rejudge(pytester, "strict.jsonl", "--judge", "fixture:harsh.json", "--json")
    strict = [c for c in json.loads(together.output) if c["goldset"] == "other"]
    assert strict[0]["floors"] == json.loads(alone.output)[0]["floors"], together.output
    floors = {f["floor"]: (f["current"], f["candidate"]) for f in strict[0]["floors"]}
    assert floors["floor[faithfulness]"] == ("passed", "failed")  # strict: 0.67's bound < 0.6


@WORKERS_SHARED
def test_a_results_file_its_trailer_does_not_vouch_for_is_refused(
        gated: pytest.Pytester) -> None:
    """A row edited after the run (the trailer's sha256 no longer matches), a file cut
    short (no trailer): each one line, exit 2, nothing compared."""
    pytester = gated
    lines = (pytester.path / "res.jsonl").read_text().splitlines(keepends=True)
    edited = [line.replace('"faithfulness": 1.0', '"faithfulness": 0.5') for line in lines]
    assert edited != lines
    (pytester.path / "edited.jsonl").write_text("".join(edited))
    (pytester.path / "cut.jsonl").write_text("".join(lines[:-4]))
    for name, why in (("edited.jsonl", "their sha256 differs"), ("cut.jsonl", "cut short")):
        found = ragate(pytester.path, "rejudge", name, "--judge", "fixture:same.json")
        assert found.exit_code == 2 and found.output.count("\n") == 1, found.output
        assert found.output.startswith(f"Error: {name}") and why in found.output, found.output


def test_two_routes_of_one_goldset_are_two_comparisons(pytester: pytest.Pytester) -> None:
    """A run of the goldset's file and of a `@ragate.goldset` test saves each question
    twice, once per route, as two runs of it: each compared on its own rows (n 24, not 48
    answers paired as if there were twice as many), labelled with its route as the run
    labels it."""
    write_project(pytester)
    both_routes(pytester, planned({}) + FIXTURE_JUDGE_CONFTEST)
    ran = run_pytester(pytester, "0", "gs", "test_rag.py", "--ragate-results=res.jsonl",
                       "--ragate-judge=fixture:current.json")
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
    found = rejudge(pytester, "--judge", "fixture:harsh.json", "--json")
    assert found.exit_code == 1, found.output
    assert [(c["goldset"], c["shifts"][0]["n"]) for c in json.loads(found.output)] == [
        ("mini (gs/ragate.toml)", N), ("mini (test_rag.py::test_mine)", N)]


@ONE_RUN
def test_a_goldset_changed_since_any_of_its_rows_were_written_is_refused(
        gated: pytest.Pytester) -> None:
    """Two runs, one per route, with the goldset edited between them: the goldset as it is
    now matches the second run's rows only, and the first's (res.jsonl, the goldset's file
    route) would be graded against references and floors they were not written under."""
    pytester = gated
    both_routes(pytester, planned({}) + FIXTURE_JUDGE_CONFTEST)
    questions = pytester.path / "gs" / "questions.jsonl"
    questions.write_text(questions.read_text().replace("What about q05?", "And q05?"))
    ran = run_pytester(pytester, "0", "test_rag.py", "--ragate-results=test.jsonl",
                       "--ragate-judge=fixture:current.json")
    assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
    found = ragate(pytester.path, "rejudge", "res.jsonl", "test.jsonl", "--judge",
                   "fixture:same.json", "--goldset", "gs")
    assert found.exit_code == 2, found.output
    assert "the goldset changed since the results were written" in found.output


def test_shards_given_twice_or_graded_by_two_judges_are_refused(
        pytester: pytest.Pytester) -> None:
    """A shard's copy beside it pairs its answers twice; shards whose rows two judges graded
    have no one current judge to hold the candidate to."""
    write_project(pytester)
    for i, judge in ((1, "current"), (2, "same")):
        ran = run_pytester(pytester, "0", "gs", f"--ragate-judge=fixture:{judge}.json",
                           f"--ragate-shard={i}/2", f"--ragate-results=s{i}.jsonl")
        assert ran.ret == pytest.ExitCode.OK, ran.stdout.str()
    (pytester.path / "copy.jsonl").write_text((pytester.path / "s1.jsonl").read_text())
    twice = ragate(pytester.path, "rejudge", "s1.jsonl", "copy.jsonl", "s2.jsonl",
                   "--judge", "fixture:harsh.json")
    assert twice.exit_code == 2, twice.output
    assert twice.output.strip() == (
        "Error: goldset mini (gs/ragate.toml): shard 1/2 given twice: s1.jsonl and "
        "copy.jsonl")
    mixed = ragate(pytester.path, "rejudge", "s1.jsonl", "s2.jsonl", "--judge",
                   "fixture:harsh.json")
    assert mixed.exit_code == 2, mixed.output
    assert mixed.output.strip() == (
        "Error: goldset mini (gs/ragate.toml): its rows were graded by different judges "
        "(fixture:current, fixture:same): rejudge one run's results, graded by one current "
        "judge")
