"""`--ragate-baseline` across a judge change: a judged metric compared across two judges
measures the judges, so its check fails (exit 1) until the run accepts its new judge with
`--ragate-accept-judge`, which skips it and marks the new judge's segment in the history; the
next run under that judge compares normally. Mechanical checks are compared either way. The
adversary: a lenient candidate judge that would hide a real drop of the system cannot pass a
baseline check without the flag. Gate runs with and without `-n 2`, each test's first run
under judge `a` shared per worker count (`based`); the rule itself, the baseline's judges and
the flips across a segment as units.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pytest_ragate.decision.regressions import RunJudge, check_run
from pytest_ragate.outputs.baseline import load_baseline
from pytest_ragate.outputs.history import FloorOutcome, HistoryLine, JudgeSegment, flip_report
from pytest_ragate.scoring.pairing import BaselineRun
from pytest_ragate.scoring.records import QuestionRecord, QuestionScores
from tests.conftest import (
    FIXTURE_JUDGE_CONFTEST,
    WORKERS_SHARED,
    run_here,
    run_pytester,
    saved_results,
    write_goldset,
)
from tests.test_fail_closed import planned

N = 24
IDS = [f"q{i:02d}" for i in range(N)]
USAGE = pytest.ExitCode.USAGE_ERROR


def write_project(pytester: pytest.Pytester, behaviour: dict[str, str] | None = None) -> None:
    """24 questions the system answers alike in every run (unless `behaviour` says otherwise),
    a faithfulness floor of 0.6, and four fixture judges: `a` (every statement supported),
    `b` (two of three: harsher, the floor still holds), `a_after` (judge `a` on answers that
    really got worse: half the questions one of three) and `lenient` (every statement)."""
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.6\n", questions=[
        {"question_id": q, "kind": "single_doc", "question": f"What about {q}?"}
        for q in IDS], expected=[
        {"question_id": q, "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for q in IDS])
    pytester.makeconftest(planned(behaviour or {}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "judge_a.json", "a", lambda i: [True] * 3)
    judge_file(pytester.path / "judge_b.json", "b", lambda i: [True, True, False])
    judge_file(pytester.path / "a_after.json", "a", lambda i: [True, i % 2 == 0, i % 2 == 0])
    judge_file(pytester.path / "lenient.json", "lenient", lambda i: [True] * 3)


def judge_file(path: Path, judge_id: str, supported: object) -> None:
    path.write_text(json.dumps({"judge_id": judge_id, "answers": {
        q: {"statements": ["s1", "s2", "s3"], "supported": supported(i)}  # type: ignore[operator]
        for i, q in enumerate(IDS)}}))


def gate(pytester: pytest.Pytester, workers: str, judge: str, *args: str) -> pytest.RunResult:
    return run_pytester(pytester, workers, "gs", f"--ragate-judge=fixture:{judge}", *args)


def outcome_of(result: pytest.RunResult, check: str) -> str:
    """The verbose line's word for one regression check (`PASSED`, `FAILED`, `SKIPPED`), as
    one process (`NODE WORD`) and xdist (`[gw0] [ 50%] WORD NODE`) write it."""
    node = f"gs/ragate.toml::regression[{check}]"
    words = {word for line in result.stdout.lines for word in ("PASSED", "FAILED", "SKIPPED")
             if f"{node} {word}" in line or line.endswith(f"{word} {node}")}
    assert len(words) == 1, result.stdout.str()
    return words.pop()


def history(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


ONE_RUN = pytest.mark.parametrize("workers", ["0"], ids=["n0"])
"""A test held under one worker count: its runs ask the same questions as another test's at
both (the judge change, the flag), and what it adds is decided from the saved files alone."""


@pytest.fixture(scope="module")
def based_runs() -> dict[str, Path]:
    """The baseline run (`based`) once per worker count for the module: each one's folder."""
    return {}


@pytest.fixture
def based(pytester: pytest.Pytester, workers: str, based_runs: dict[str, Path],
          tmp_path_factory: pytest.TempPathFactory) -> pytest.Pytester:
    """pytester's folder holding `write_project`'s project gated under judge `a` with
    `-n workers`, its results in base.jsonl and its history line in h.jsonl: run by the first
    test that asks, copied into every later test's own folder (which it may change)."""
    if workers in based_runs:
        shutil.copytree(based_runs[workers], pytester.path, dirs_exist_ok=True)
        return pytester
    write_project(pytester)
    base = gate(pytester, workers, "judge_a.json", "--ragate-results=base.jsonl",
                "--ragate-history=h.jsonl")
    assert base.ret == pytest.ExitCode.OK, base.stdout.str()
    based_runs[workers] = tmp_path_factory.mktemp(f"based-n{workers}")
    shutil.copytree(pytester.path, based_runs[workers], dirs_exist_ok=True)
    return pytester


# --- through pytest ----------------------------------------------------------------------------


@WORKERS_SHARED
def test_a_judge_change_fails_the_judged_check_though_the_system_did_not_change(
        based: pytest.Pytester, workers: str) -> None:
    pytester = based
    result = gate(pytester, workers, "judge_b.json", "--ragate-baseline=base.jsonl")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert outcome_of(result, "faithfulness") == "FAILED"
    assert ("FAILED gs/ragate.toml::regression[faithfulness] - faithfulness not compared "
            "across judges: results file base.jsonl was judged by fixture:a, this run by "
            "fixture:b; a judge change is a gate decision, not a regression of the system: run "
            "`ragate rejudge base.jsonl --judge fixture:judge_b.json` to see what it moves, and "
            "accept it with --ragate-accept-judge fixture:b") in result.stdout.lines, out
    assert "significant drop: faithfulness" not in out  # the judges' shift is no regression
    # the floor holds under the harsher judge, and the mechanical checks were compared
    assert "PASSED gs/ragate.toml::floor[faithfulness]" in result.stdout.lines
    mechanical = [line for line in result.stdout.lines if "::regression[" in line
                  and line.split()[0].isupper() and "across judges" not in line]
    assert mechanical and all(line.startswith("PASSED") for line in mechanical), out


@ONE_RUN
def test_an_accepted_judge_starts_a_segment_and_the_next_run_compares_normally(
        based: pytest.Pytester) -> None:
    """Under one worker count: whether a judged check is skipped, and the history line that
    marks the segment, are decided and written by the one process that decides the gate from
    every row (xdist's controller); that the accepted judge's check is skipped under -n 2 is
    test_an_accepted_judge_still_gates_the_mechanical_checks[n2]'s."""
    pytester = based  # h.jsonl: the run under judge a
    accepted = gate(pytester, "0", "judge_b.json", "--ragate-baseline=h.jsonl",
                    "--ragate-history=h.jsonl", "--ragate-accept-judge=fixture:b")
    out = accepted.stdout.str()
    assert accepted.ret == pytest.ExitCode.OK, out
    assert outcome_of(accepted, "faithfulness") == "SKIPPED"
    assert "judge change accepted (--ragate-accept-judge fixture:b)" in out
    lines = history(pytester.path / "h.jsonl")
    assert "judge_segment" not in lines[0] and lines[0]["judges"] == ["fixture:a"]
    assert lines[1]["judges"] == ["fixture:b"]
    assert lines[1]["judge_segment"] == {"accepted": ["fixture:b"], "replaces": ["fixture:a"]}
    # the next run under b is paired with the accepted line: compared, no change
    following = gate(pytester, "0", "judge_b.json", "--ragate-baseline=h.jsonl",
                     "--ragate-history=h.jsonl")
    assert following.ret == pytest.ExitCode.OK, following.stdout.str()
    assert outcome_of(following, "faithfulness") == "PASSED"
    table = [line.split() for line in following.stdout.lines if line.startswith("mini ")]
    assert ["mini", "faithfulness", "0.67", "0.67", "+0.00", "24"] in [r[:6] for r in table]
    assert "judge_segment" not in history(pytester.path / "h.jsonl")[2]


@WORKERS_SHARED
def test_an_accepted_judge_still_gates_the_mechanical_checks(
        based: pytest.Pytester, workers: str) -> None:
    pytester = based
    # the system now cites the wrong context for 16 of 24 questions
    write_project(pytester, {q: "cite(wrong)" for q in IDS[:16]})
    result = gate(pytester, workers, "judge_b.json", "--ragate-baseline=base.jsonl",
                  "--ragate-accept-judge=fixture:b")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert outcome_of(result, "faithfulness") == "SKIPPED"
    dropped = [line for line in result.stdout.lines if line.startswith("FAILED")
               and "::regression[" in line]
    assert dropped and "significant drop" in out, out


@ONE_RUN
def test_a_lenient_judge_cannot_hide_a_real_drop_without_the_flag(
        based: pytest.Pytester) -> None:
    pytester = based
    # the same judge sees the drop of the system's answers ...
    same = gate(pytester, "0", "a_after.json", "--ragate-baseline=base.jsonl")
    assert same.ret == pytest.ExitCode.TESTS_FAILED
    assert outcome_of(same, "faithfulness") == "FAILED"
    assert "significant drop: faithfulness 1.00 → 0.67" in same.stdout.str()
    # ... which a lenient candidate would hide (1.00 → 1.00): the change is refused instead
    lenient = gate(pytester, "0", "lenient.json", "--ragate-baseline=base.jsonl")
    assert lenient.ret == pytest.ExitCode.TESTS_FAILED, lenient.stdout.str()
    assert outcome_of(lenient, "faithfulness") == "FAILED"
    assert "no change: faithfulness" not in lenient.stdout.str()
    assert "this run by fixture:lenient" in lenient.stdout.str()


@WORKERS_SHARED
def test_the_flag_naming_another_judge_is_a_usage_error(
        based: pytest.Pytester, workers: str) -> None:
    pytester = based
    (pytester.path / "ran.txt").unlink()
    result = gate(pytester, workers, "judge_b.json", "--ragate-baseline=base.jsonl",
                  "--ragate-accept-judge=fixture:c")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*--ragate-accept-judge fixture:c names another judge than "
                                 "this run's: this run is judged by fixture:b*"])
    assert not (pytester.path / "ran.txt").exists()  # refused before any question ran
    # the judge's spec names it too, as --ragate-judge spells it
    spec = gate(pytester, workers, "judge_b.json", "--ragate-baseline=base.jsonl",
                "--ragate-accept-judge=fixture:judge_b.json")
    assert spec.ret == pytest.ExitCode.OK, spec.stdout.str()


def test_the_flag_in_the_ini_file_or_without_a_baseline_is_refused(
        pytester: pytest.Pytester) -> None:
    write_project(pytester)
    pytester.makeini("[pytest]\nragate_accept_judge = fixture:b\n")
    ini = gate(pytester, "0", "judge_b.json", "--ragate-baseline=base.jsonl")
    assert ini.ret == USAGE
    ini.stderr.fnmatch_lines(["*ragate_accept_judge in the ini file would accept every future "
                              "judge change silently*"])
    flagged = gate(pytester, "0", "judge_b.json", "--ragate-baseline=base.jsonl",
                   "--ragate-accept-judge=fixture:b")  # the flag does not make it right
    assert flagged.ret == USAGE
    pytester.makeini("[pytest]\n")
    alone = gate(pytester, "0", "judge_b.json", "--ragate-accept-judge=fixture:b")
    assert alone.ret == USAGE
    alone.stderr.fnmatch_lines(["*--ragate-accept-judge accepts a judge change against a "
                                "baseline: give --ragate-baseline too*"])


@ONE_RUN
def test_the_flag_without_a_judge_change_says_it_was_not_needed(
        based: pytest.Pytester) -> None:
    pytester = based
    result = gate(pytester, "0", "judge_a.json", "--ragate-baseline=base.jsonl",
                  "--ragate-accept-judge=fixture:a")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert outcome_of(result, "faithfulness") == "PASSED"
    assert [line for line in result.stdout.lines if "was not needed" in line] == [
        "ragate: --ragate-accept-judge fixture:a was not needed: no judged check changed judge "
        "against the baseline"]


@ONE_RUN
def test_ragate_decide_follows_the_same_rule(based: pytest.Pytester) -> None:
    pytester = based
    assert gate(pytester, "0", "judge_b.json", "--ragate-results=now.jsonl").ret == 0

    def decide(*flags: str) -> subprocess.CompletedProcess[str]:
        return run_here(pytester, "decide", "now.jsonl", "--", "gs", "-rA",
                           "--ragate-baseline=base.jsonl", *flags)

    refused = decide()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "faithfulness not compared across judges" in refused.stdout
    accepted = decide("--ragate-accept-judge=fixture:b")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "judge change accepted (--ragate-accept-judge fixture:b)" in accepted.stdout
    # a name no row of the decided files carries accepts nothing: the judged check fails
    wrong = decide("--ragate-accept-judge=fixture:c")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert "--ragate-accept-judge fixture:c names another judge than this run's" in wrong.stdout
    # `ragate compare` of the two files: the same decide mode, its own option
    compared = run_here(pytester, "compare", "base.jsonl", "now.jsonl")
    assert compared.returncode == 1, compared.stdout + compared.stderr
    assert "faithfulness not compared across judges" in compared.stdout
    compared = run_here(pytester, "compare", "--accept-judge", "fixture:b", "base.jsonl",
                        "now.jsonl")
    assert compared.returncode == 0, compared.stdout + compared.stderr


# --- the rule ----------------------------------------------------------------------------------


def scores(**fields: object) -> QuestionScores:
    return QuestionScores.model_validate(fields)


BASE = {f"q{i}": scores(verdicts={"faithfulness": 1.0}, abstention_correct=True)
        for i in range(30)}
NOW = {f"q{i}": scores(verdicts={"faithfulness": 0.5}, abstention_correct=i >= 10)
       for i in range(30)}


def baseline(*judges: str) -> list[BaselineRun]:
    return [BaselineRun(goldset="g", eval_version="1", scores=BASE, source="the baseline",
                        judges=judges)]


def checks(base: list[BaselineRun], judge: RunJudge) -> dict[str, tuple[str, str]]:
    return {g.metric: (g.outcome, g.message)
            for g in check_run("g", "1", NOW, base, alpha=0.05, min_n=0, judge=judge)}


def test_across_a_judge_change_the_judged_check_fails_and_the_mechanical_one_is_compared(
        ) -> None:
    found = checks(baseline("fixture:a"), RunJudge(names=("fixture:b",)))
    outcome, message = found["faithfulness"]
    assert outcome == "failed" and "not compared across judges" in message
    assert ("`ragate rejudge RESULTS --judge fixture:b` on the baseline run's results file"
            in message)
    # the system's own drop is still found: 10 right→wrong
    outcome, message = found["abstention_accuracy"]
    assert outcome == "failed" and message.startswith("significant drop: abstention_accuracy")


@pytest.mark.parametrize(("accept", "outcome"), [
    ("fixture:b", "skipped"), ("fixture:b.json", "skipped"), ("fixture:a", "failed"),
    ("b", "failed")])
def test_the_flag_accepts_this_runs_judge_by_its_id_or_spec_only(accept: str,
                                                                  outcome: str) -> None:
    judge = RunJudge(names=("fixture:b",), spec="fixture:b.json", accept=accept)
    found = checks(baseline("fixture:a"), judge)
    assert found["faithfulness"][0] == outcome
    assert found["abstention_accuracy"][0] == "failed"  # compared whatever the flag says


@pytest.mark.parametrize(("base", "names"), [
    ((), ("fixture:b",)),  # a mechanical baseline
    (("fixture:a",), ()),  # a run no judge graded
    (("fixture:a",), ("fixture:a",)),  # the same judge
])
def test_no_judge_change_compares_as_before(base: tuple[str, ...],
                                            names: tuple[str, ...]) -> None:
    found = checks(baseline(*base), RunJudge(names=names))
    assert found["faithfulness"][0] == "failed"
    assert found["faithfulness"][1].startswith("significant drop: faithfulness 1.00 → 0.50")


def test_a_ragas_judge_is_named_by_its_model_with_or_without_its_sampling() -> None:
    judge = RunJudge(names=("ragas:gpt-4o@temperature=0",), spec="ragas:gpt-4o")
    assert judge.is_named("ragas:gpt-4o") and judge.is_named("ragas:gpt-4o@temperature=0")
    assert judge.is_named("ragas:gpt-4o@temperature=0.5")  # the model decides, not sampling
    assert not judge.is_named("ragas:gpt-4o-mini") and not judge.is_named("gpt-4o")
    assert not RunJudge(names=("fixture:x",)).is_named("fixture:y")


def test_a_baseline_knows_its_judges_from_results_rows_and_history_lines(
        tmp_path: Path) -> None:
    row = {"goldset": "g", "question_id": "q1", "kind": "single_doc", "index": 0,
           "eval_version": "1", "must_abstain": False, "abstained": False,
           "abstention_correct": True, "evidence_spans": 0}
    results = tmp_path / "res.jsonl"
    results.write_text(saved_results([
        QuestionRecord.model_validate({**row, "judge": "fixture:a"}),
        QuestionRecord.model_validate({**row, "question_id": "q2"})]))
    [run] = load_baseline(str(results))
    assert run.judges == ("fixture:a",) and run.results == str(results)
    line = HistoryLine(time=datetime(2026, 1, 1, tzinfo=UTC), goldset="g", eval_version="1",
                       judges=["fixture:b"], status="passed")
    old = json.loads(line.model_dump_json())
    del old["judges"]  # a line written before lines named their judge
    path = tmp_path / "h.jsonl"
    path.write_text(line.model_dump_json() + "\n" + json.dumps(old) + "\n")
    first, second = load_baseline(str(path))
    assert first.judges == ("fixture:b",) and second.judges == ()
    assert first.results is None


# --- flips across a segment --------------------------------------------------------------------


def run_line(i: int, judge: str, outcome: str, segment: bool = False) -> HistoryLine:
    return HistoryLine(
        time=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=i), goldset="g",
        eval_version="1", judges=[judge], outcomes={}, floors={
            "faithfulness": FloorOutcome(min=0.6, outcome=outcome, judged=True),
            "abstention_accuracy": FloorOutcome(min=0.6, outcome=outcome)},
        judge_segment=JudgeSegment(accepted=[judge], replaces=["fixture:a"]) if segment
        else None)


def test_a_judged_floor_changing_outcome_across_a_segment_is_no_flip() -> None:
    history = [run_line(0, "fixture:a", "passed"), run_line(1, "fixture:a", "passed")]
    current = run_line(2, "fixture:b", "failed", segment=True)
    flipped = {f.member for f in flip_report(current, history).flipped}
    # the mechanical floor flipped; the judged one changed with the judge
    assert flipped == {"floor[abstention_accuracy]"}
    # within the new segment, a judged floor's change is a flip again
    later = run_line(3, "fixture:b", "passed")
    flipped = {f.member for f in flip_report(later, [*history, current]).flipped}
    assert flipped == {"floor[abstention_accuracy]", "floor[faithfulness]"}
