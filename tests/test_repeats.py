"""Repeats (`repeat = N`): each question asked N times as its own item, floors decided over
every answer with the question as the unit of sampling, and the metrics over repeats
(pass^k, pass@k, flaky_rate). The adversaries here try to pass a floor on repeats that
should not: a flaky system, one right on its first repeat only, repeats counted as new
questions, a missing repeat; each through pytester with and without `-n 2`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.answer import Context
from pytest_ragate.decision.floors import decide
from pytest_ragate.decision.rules import Strictness
from pytest_ragate.goldsets.floors_table import parse_floors
from pytest_ragate.goldsets.promotion import promote_floors
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.runner import cache_key
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.figures import interval_of
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.scoring.registry import METRICS, needs_repeats, pass_k
from pytest_ragate.scoring.stats import (
    bootstrap_clusters,
    bootstrap_mean,
    clears,
    clustered_n,
    wilson,
    wilson_clustered,
)
from pytest_ragate.wording.numbers import bound
from tests.conftest import (
    BASE_TOML,
    WORKERS,
    both_routes,
    expect,
    junit_cases,
    results_rows,
    run_pytester,
    saved_results,
    write_goldset,
)
from tests.test_fail_closed import collection_failed

# --- the interval treats the question as the unit ---------------------------------------------


def test_the_hand_worked_case_is_as_wide_as_two_questions() -> None:
    """Two questions, 10 repeats, one always right and one never: p = 10/20; the cluster
    variance Σ(k_i − p·n_i)²/n² = (25 + 25)/400 = 0.125 against the binomial 0.25/20 =
    0.0125 is a design effect of 10: an effective n of 2, the interval of two questions."""
    clusters = [(10.0, 10.0), (0.0, 10.0)]
    assert clustered_n(10, 20, clusters, repeats=10) == pytest.approx(2.0)
    assert wilson_clustered(10, 20, clusters, repeats=10) == pytest.approx(wilson(1, 2))
    as_if_independent = wilson(10, 20)
    assert as_if_independent[0] > 0.29  # 20 answers as 20 questions: far narrower
    assert wilson(1, 2)[0] < 0.1


def test_repeats_never_narrow_the_interval_below_one_repeat() -> None:
    """Ten questions each right in all 3 repeats: no spread to measure, so the design effect
    is the repeats, and the interval is ten questions' (Wilson 10/10), not thirty's."""
    clusters = [(3.0, 3.0)] * 10
    assert wilson_clustered(30, 30, clusters, repeats=3) == pytest.approx(wilson(10, 10))
    # independently flaky questions still count at most one answer per question
    coins = [(2.0, 3.0), (1.0, 3.0)] * 5
    assert clustered_n(15, 30, coins, repeats=3) <= 10


def test_the_cluster_bootstrap_resamples_questions() -> None:
    values = [1.0] * 10 + [0.0] * 10
    assert bootstrap_clusters([(10.0, 10.0), (0.0, 10.0)]) == (0.0, 1.0)  # two questions
    low, high = bootstrap_mean(values)  # 20 independent values
    assert low > 0.2 and high < 0.8


def record(qid: str, repeat: int, right: bool, index: int = 0) -> QuestionRecord:
    return QuestionRecord(goldset="g", question_id=qid, repeat=repeat, kind="single_doc",
                          index=index, must_abstain=False, abstained=not right,
                          abstention_correct=right, evidence_spans=0, eval_version="1")


def test_a_tally_over_repeats_keeps_each_question_as_a_cluster() -> None:
    rows = [record("a", r, True, 0) for r in (1, 2, 3)] + [record("b", r, r == 1, 1)
                                                           for r in (1, 2, 3)]
    t = tally("abstention_accuracy", rows)
    assert (t.k, t.n, t.questions, t.repeats) == (4, 6, 2, 3)
    assert t.clusters == ((3, 3.0), (1, 3.0))
    once = tally("abstention_accuracy", [record("a", 1, True), record("b", 1, False, 1)])
    assert once.clusters == () and interval_of(once) == wilson(1, 2)  # as before repeats


def test_strict_repeats_do_not_pass_what_their_questions_cannot() -> None:
    """Ten questions right in every one of 3 repeats: 30 independent answers would clear a
    strict 0.75 (Wilson 30/30 from 0.89); ten questions do not (from 0.72)."""
    rows = [record(f"q{i}", r, True, i) for i in range(10) for r in (1, 2, 3)]
    assert wilson(30, 30)[0] >= 0.75
    verdict = decide(Floor("abstention_accuracy", 0.75), "g", rows,
                     strictness=Strictness(ci="strict"))
    assert verdict.outcome == "failed"
    assert "95% lower bound 0.72 < floor 0.75" in verdict.message
    assert "n=30 answers of 10 questions × 3" in verdict.message
    assert verdict.passes_at is None  # no figure over independent units for clusters


# --- pass^k, pass@k, flaky_rate ---------------------------------------------------------------


def test_the_unbiased_estimators() -> None:
    assert pass_k("^", 3, 3, 3) == 1 and pass_k("^", 3, 2, 3) == 0
    assert pass_k("^", 2, 2, 4) == pytest.approx(1 / 6)  # C(2,2)/C(4,2)
    assert pass_k("@", 1, 1, 3) == pytest.approx(1 / 3)
    assert pass_k("@", 2, 1, 3) == pytest.approx(1 - 1 / 3)  # 1 − C(2,2)/C(3,2)
    assert pass_k("@", 3, 0, 3) == 0 and pass_k("^", 3, 3, 2) == 0  # fewer repeats than k
    assert needs_repeats("pass^3") == 3 and needs_repeats("flaky_rate") == 2
    assert needs_repeats("abstention_accuracy") == 1


def test_right_on_the_first_repeat_only_fails_pass_k_and_is_flaky() -> None:
    rows = [record(f"q{i}", r, r == 1, i) for i in range(4) for r in (1, 2, 3)]
    assert decide(Floor("pass^3", 0.5), "g", rows).outcome == "failed"
    assert decide(Floor("pass@3", 0.5), "g", rows).outcome == "passed"  # one right is enough
    flaky = decide(Floor("flaky_rate", 0.05, upper=True), "g", rows)
    assert flaky.outcome == "failed" and flaky.value == 1.0
    assert "flaky_rate 1.00 > floor 0.05" in flaky.message
    assert "worst: q0 right 1 of 3" in flaky.message


def test_metrics_over_repeats_cannot_be_measured_on_one() -> None:
    rows = [record("a", 1, True), record("b", 1, False, 1)]
    verdict = decide(Floor("flaky_rate", 0.05, upper=True), "g", rows)
    assert verdict.outcome == "failed" and "nothing scored" in verdict.message


def test_upper_bound_floors() -> None:
    assert clears(0.04, (0.0, 0.2), 0.05, strict=False, upper=True)
    assert not clears(0.04, (0.0, 0.2), 0.05, strict=True, upper=True)  # upper bound 0.2
    assert bound(Floor("flaky_rate", 0.05, upper=True)) == "≤ 0.05"
    floors = parse_floors({"flaky_rate": {"max": 0.05}, "pass^3": 0.5}, Path("ragate.toml"))
    assert floors == [Floor("flaky_rate", 0.05, upper=True), Floor("pass^3", 0.5)]
    for bad in ({"min": 0.1, "max": 0.2}, {"xfail": "why"}):
        with pytest.raises(GoldsetError, match="exactly one of them"):
            parse_floors({"flaky_rate": bad}, Path("ragate.toml"))
    assert "pass@2" in METRICS and "flaky_rate" in METRICS and "pass^0" not in METRICS


def test_promoting_a_max_floor_keeps_its_bound(tmp_path: Path) -> None:
    config = tmp_path / "ragate.toml"
    config.write_text('[floors]\nflaky_rate = { max = 0.05, xfail = "flaky" }\n')
    done = promote_floors(config, [Floor("flaky_rate", 0.05, xfail="flaky", upper=True)])
    assert len(done) == 1
    assert config.read_text() == "[floors]\nflaky_rate = {max = 0.05}\n"
    assert parse_floors({"flaky_rate": {"max": 0.05}}, config)[0].upper


# --- rows and the judge cache -------------------------------------------------------------------


def test_a_row_asked_once_has_no_repeat_field() -> None:
    assert "repeat" not in record("a", 1, True).model_dump(mode="json")
    assert record("a", 2, True).model_dump(mode="json")["repeat"] == 2
    assert "repeat" not in dict(record("a", 1, True).junit_properties())


class _Judge:
    judge_id = "j"
    model = None

    def prompt_hash(self, metric: str) -> str:
        return "v1"


def test_the_judge_cache_key_differs_per_repeat_and_not_for_one() -> None:
    ctx = (Context(context_id="c", doc_id="d", first_unit=0, last_unit=0, text="t"),)
    once = JudgeInput("q1", "Q?", "A.", ctx)
    keys = [cache_key("1", _Judge(), "faithfulness",  # type: ignore[arg-type]
                      JudgeInput("q1", "Q?", "A.", ctx, repeat=r)) for r in (1, 2, 3)]
    assert len(set(keys)) == 3
    assert keys[0] == cache_key("1", _Judge(), "faithfulness", once)  # type: ignore[arg-type]


# --- through pytest -----------------------------------------------------------------------------

REPEATED = '''
import pytest
from pytest_ragate import Answer, Citation, Context

right = Context(context_id="right", doc_id="m1", first_unit=2, last_unit=3, text="the budget",
                distance=0.2)
wrong = Context(context_id="wrong", doc_id="m1", first_unit=8, last_unit=9, text="lunch",
                distance=0.3)

def cite(context):
    return Answer(text="an answer", contexts=[context],
                  citations=[Citation(context_id=context.context_id)])

BEHAVIOUR = {behaviour}

@pytest.fixture
def ragate_system(ragate_repeat):
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        repeat = ragate_repeat
        return eval(BEHAVIOUR.get(qid, "cite(right)"))
    return answer
'''


def repeated(behaviour: dict[str, str]) -> str:
    """A system that sees which repeat it answers (`ragate_repeat`), as one seeding its
    sampling per call would; its behaviour per question is a line of Python."""
    return REPEATED.format(behaviour=repr(behaviour))


def write_repeated(root: Path, n: int, floors: str, repeat: int | None = 3) -> None:
    toml = (BASE_TOML.replace('eval_version = "7"\n', f'eval_version = "7"\nrepeat = {repeat}\n')
            if repeat else BASE_TOML)
    write_goldset(root, toml=toml, floors=floors, questions=[
        {"question_id": f"q{i:02d}", "kind": "single_doc", "question": f"What about "
         f"q{i:02d}?"} for i in range(n)], expected=[
        {"question_id": f"q{i:02d}", "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(n)])


def rows(path: Path) -> list[dict[str, Any]]:
    return results_rows(path)


@WORKERS
def test_a_flaky_system_is_named_and_fails_its_flaky_floor(pytester: pytest.Pytester,
                                                           workers: str) -> None:
    """Right on odd repeats, wrong on even ones, for two of five questions: flaky in both
    routes, in the floor, the terminal, the Markdown and HTML reports, and JUnit. Right on
    the first repeat, those two are not right in all three: pass^3 is 3 of 5, under its floor
    (what test_right_on_the_first_repeat_only_fails_pass_k_and_is_flaky decides over rows,
    here through a run)."""
    write_repeated(pytester.path / "gs", 5, "[floors]\nabstention_accuracy = 0.5\n"
                   "flaky_rate = { max = 0.05 }\n\"pass^3\" = 0.7\n")
    both_routes(pytester, repeated({q: "cite(right) if repeat % 2 else cite(wrong)"
                                    for q in ("q01", "q03")}))
    result = run_pytester(pytester, workers, "--ragate-results=r.jsonl", "--ragate-report=r.md",
                          "--junitxml=j.xml", "--ragate-history=h.jsonl", "--ragate-html=r.html")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result,
           "PASSED gs/ragate.toml::q01[r2]",
           "PASSED test_rag.py::test_mine[q03[r3]]",
           "FAILED gs/ragate.toml::floor[flaky_rate] - flaky_rate 0.40 > floor 0.05 · n=5 "
           "questions asked twice or more × 3 repeats*worst: q01 right 2 of 3; q03 right 2 of 3",
           "FAILED test_rag.py::test_mine::floor[flaky_rate] - flaky_rate 0.40 > floor 0.05*",
           "FAILED gs/ragate.toml::floor[pass^3] - pass^3 0.60 < floor 0.70*",
           "FAILED test_rag.py::test_mine::floor[pass^3] - pass^3 0.60 < floor 0.70*",
           "*(gs/ragate.toml): flaky: 2 of 5 questions right in some repeats and wrong in "
           "others (over 3 repeats): q01 right 2 of 3, q03 right 2 of 3",
           "*(gs/ragate.toml): 5 questions × 3 repeats = 15 answers: 15 scored*")
    result.stdout.fnmatch_lines(["*flaky_rate*≤ 0.05*0.40*5 questions × 3*FAIL*"])
    written = [r for r in rows(pytester.path / "r.jsonl") if r["route"] == "gs/ragate.toml"]
    assert sorted((r["question_id"], r.get("repeat", 1)) for r in written) == sorted(
        (f"q{i:02d}", k) for i in range(5) for k in (1, 2, 3))
    report = (pytester.path / "r.md").read_text()
    assert re.search(r"\| flaky_rate +\| ≤ 0\.05 +\| 0\.40 .*\| 5 questions × 3 +\|", report)
    assert "q01 right 2 of 3, q03 right 2 of 3" in report
    assert "| q01[r2]    |" in report
    html = (pytester.path / "r.html").read_text()
    assert "q01 right 2 of 3, q03 right 2 of 3" in html and "≤ 0.05" in html
    cases = junit_cases(pytester.path / "j.xml")
    assert {f"gs.ragate.toml::q01[r{k}]" for k in (1, 2, 3)} <= set(cases)
    flaky = cases["gs.ragate.toml::floor[flaky_rate]"]
    assert flaky["outcome"] == "failure" and flaky["props"]["floor_bound"] == "max"
    line = json.loads((pytester.path / "h.jsonl").read_text().splitlines()[0])
    assert line["repeats"] == 3 and line["questions"] == 5 and len(line["scores"]) == 5
    assert line["floors"]["flaky_rate"] == {"min": 0.05, "outcome": "failed", "upper": True}


def test_repeats_do_not_narrow_a_strict_interval(pytester: pytest.Pytester) -> None:
    """Ten questions right every time, three repeats, strict 0.75: thirty independent
    answers would pass (Wilson lower bound 0.89), ten questions do not (0.72). The decision
    over the rows is test_strict_repeats_do_not_pass_what_their_questions_cannot's; this run
    checks `--ragate-ci=strict` and the repeat setting reach it (in one process: the rows of
    repeats travelling from xdist workers are test_a_flaky_system_is_named_...'s)."""
    workers = "0"
    write_repeated(pytester.path / "gs", 10, "[floors]\nabstention_accuracy = 0.75\n")
    pytester.makeconftest(repeated({}))
    result = run_pytester(pytester, workers, "gs", "--ragate-ci=strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result,
           "FAILED gs/ragate.toml::floor[abstention_accuracy] - abstention_accuracy 1.00, "
           "95% lower bound 0.72 < floor 0.75 (ragate_ci = strict) · n=30 answers of 10 "
           "questions × 3 · 95% CI [0.72, 1.00] (Wilson, questions as clusters)*")
    once = run_pytester(pytester, workers, "gs", "--ragate-ci=strict", "-o", "ragate_repeat=1")
    expect(once, "PASSED gs/ragate.toml::q07",
           "FAILED gs/ragate.toml::floor[abstention_accuracy] - abstention_accuracy 1.00, "
           "95% lower bound 0.72 < floor 0.75 (ragate_ci = strict) · n=10 questions · 95% CI "
           "[0.72, 1.00] (Wilson)*")


@WORKERS
def test_a_missing_repeat_fails_the_floor_by_name(pytester: pytest.Pytester,
                                                  workers: str) -> None:
    write_repeated(pytester.path / "gs", 3, "[floors]\nabstention_accuracy = 0.1\n")
    pytester.makeconftest(repeated({"q01": "cite(right) if repeat != 2 else 1 / 0"}))
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: 1 of 9 "
           "questions have no result: errored q01[r2]*")
    failed = [r for r in rows(pytester.path / "r.jsonl") if r["status"] == "error"]
    assert [(r["question_id"], r.get("repeat", 1)) for r in failed] == [("q01", 2)]


@WORKERS
def test_deselecting_one_repeat_skips_the_floor(pytester: pytest.Pytester,
                                                workers: str) -> None:
    write_repeated(pytester.path / "gs", 3, "[floors]\nabstention_accuracy = 0.1\n")
    pytester.makeconftest(repeated({}))
    result = run_pytester(pytester, workers, "gs", "-k", "not q01[r2]")
    assert result.ret == pytest.ExitCode.OK
    expect(result, "SKIPPED * not decided: 1 of 9 questions deselected (-k or -m): "
           "q01[r2]*")


@WORKERS
def test_a_floor_over_more_repeats_than_asked_is_a_collection_error(
        pytester: pytest.Pytester, workers: str) -> None:
    write_repeated(pytester.path / "gs", 3, '[floors]\n"pass^3" = 0.5\n'
                   "flaky_rate = { max = 0.05 }\n[floors.question]\npass_rate = 0.8\n",
                   repeat=None)
    pytester.makeconftest(repeated({}))
    result = run_pytester(pytester, workers, "gs")
    assert result.ret == collection_failed(workers)
    expect(result, "*ragate.toml: floors.question.pass_rate: a pass rate of 0.8 over 3 "
           "questions needs repeat ≥ 19 (a question right in all of them is then shown at "
           "or above 0.8, Holm across the questions, alpha 0.05), and this run asks each "
           "question 1 time*",
           "*ragate.toml: floors.pass^3: pass^3 needs repeat ≥ 3, and this run asks "
           "each question 1 time*",
           "*ragate.toml: floors.flaky_rate: flaky_rate needs repeat ≥ 2*")
    if workers != "0":  # the refusal's path under xdist is the run above; the rest is one
        return          # process's (the decision of the repeat setting, not of the workers)
    two = run_pytester(pytester, workers, "gs", "-o", "ragate_repeat=2")
    assert two.ret == collection_failed(workers)
    expect(two, "*floors.pass^3: pass^3 needs repeat ≥ 3, and this run asks each question 2 "
           "times*")
    # 19 repeats decide the pass rate over 3 questions (strict would show each ≥ 0.8 too:
    # tests/test_pass_rate.py); every floor is measured and holds
    enough = run_pytester(pytester, workers, "gs", "-o", "ragate_repeat=19")
    assert enough.ret == pytest.ExitCode.OK
    expect(enough, "PASSED gs/ragate.toml::floor[question_pass_rate]*")


JUDGE_BY_REPEAT = '''
class RepeatJudge:
    """A judge whose verdict says which repeat it judged; with RAGATE_TEST_JUDGE_DOWN set
    it raises instead, so only the cache can answer."""
    judge_id = "by-repeat"
    metrics = ("faithfulness",)
    def prompt_hash(self, metric):
        return "v1"
    async def score(self, item, metric):
        import os
        if os.environ.get("RAGATE_TEST_JUDGE_DOWN"):
            raise RuntimeError("the judge is down")
        return item.repeat / 10

@pytest.fixture(scope="session")
def ragate_judge():
    return RepeatJudge()
'''


@WORKERS
def test_replay_replays_each_repeats_own_verdict(pytester: pytest.Pytester,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 workers: str) -> None:
    write_repeated(pytester.path / "gs", 2, "[floors]\nfaithfulness = 0.1\n")
    pytester.makeconftest(repeated({}) + JUDGE_BY_REPEAT)
    first = run_pytester(pytester, workers, "gs", "-o", "ragate_judge_cache_dir=jc",
                         "--ragate-results=a.jsonl")
    assert first.ret == pytest.ExitCode.OK
    monkeypatch.setenv("RAGATE_TEST_JUDGE_DOWN", "1")
    again = run_pytester(pytester, workers, "gs", "-o", "ragate_judge_cache_dir=jc",
                         "--ragate-cache=replay", "--ragate-results=b.jsonl")
    assert again.ret == pytest.ExitCode.OK
    for name in ("a.jsonl", "b.jsonl"):
        verdicts = {(r["question_id"], r.get("repeat", 1)): r["metrics"]["faithfulness"]
                    for r in rows(pytester.path / name)}
        assert verdicts == {(q, k): k / 10 for q in ("q00", "q01") for k in (1, 2, 3)}
    assert all(r["judge_cached"] == ["faithfulness"] for r in rows(pytester.path / "b.jsonl"))


def test_a_failing_floor_names_the_repeat_behind_it() -> None:
    rows = [record(f"q{i}", r, r == 1, i) for i in range(2) for r in (1, 2)]
    verdict = decide(Floor("abstention_accuracy", 0.9), "g", rows)
    assert verdict.outcome == "failed"
    assert "worst: q0[r2] abstained, should answer; q1[r2] abstained" in verdict.message


def test_a_baseline_with_repeats_pairs_each_questions_first_repeat(tmp_path: Path) -> None:
    """One pair per question: a results file's later repeats are not pairs of their own."""
    from pytest_ragate.outputs.baseline import load_baseline

    results = tmp_path / "r.jsonl"
    results.write_text(saved_results(record("a", r, r == 1) for r in (1, 2, 3)))
    (run_,) = load_baseline(str(results))
    assert list(run_.scores) == ["a"] and run_.scores["a"].abstention_correct


def test_ragate_power_says_nothing_wrong_of_repeats_or_an_upper_bound(tmp_path: Path) -> None:
    """Its "passes at" and "n needed" figures assume independent units from below: over
    questions with repeats, and for a `max` floor, it prints "—" rather than a wrong figure."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    root = write_goldset(tmp_path / "gs", toml=BASE_TOML.replace(
        'eval_version = "7"\n', 'eval_version = "7"\nrepeat = 3\n'),
        floors="[floors]\nabstention_accuracy = 0.5\nflaky_rate = { max = 0.5 }\n")
    results = tmp_path / "r.jsonl"
    results.write_text(saved_results(
        record(f"q{i}", r, bool(i) or r == 1, i).model_copy(update={"goldset": "mini"})
        for i in range(8) for r in (1, 2, 3)))
    got = CliRunner().invoke(main, ["power", str(root), "--results", str(results)])
    assert got.exit_code == 0, got.output
    lines = {x.split()[0]: x.split() for x in got.output.splitlines()[2:]}
    assert lines["abstention_accuracy"] == ["abstention_accuracy", "0.50", "0.92", "8",
                                           "questions", "×", "3", "—", "—"]
    assert lines["flaky_rate"] == ["flaky_rate", "≤", "0.50", "0.12", "8", "questions", "×",
                                   "3", "—", "—"]


def test_last_failed_reruns_the_repeat_that_failed(pytester: pytest.Pytester) -> None:
    """`q01[r2]` is a name with brackets, like `floor[x]`: pytest 9 keys `--lf` by the
    parsed node id, and a failed repeat must be found again there."""
    write_repeated(pytester.path / "gs", 3, "[floors]\nabstention_accuracy = 0.1\n")
    pytester.makeconftest(repeated({"q01": "cite(right) if repeat != 2 else 1 / 0"}))
    first = pytester.runpytest_inprocess("gs")
    assert first.ret == pytest.ExitCode.TESTS_FAILED
    again = pytester.runpytest_inprocess("gs", "--lf", "-rA", "-vv")
    expect(again, "FAILED gs/ragate.toml::q01[r2] - ZeroDivisionError*")
    again.assert_outcomes(failed=2)  # the repeat, and its floor: a result is missing
    # the repeats --lf did not rerun are missing, not deselected by the user (issue 33)
    expect(again, "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: 9 of 9 "
           "questions have no result: deselected q00[r1], * (--lf reran the last failures "
           "only: *); errored q01[r2]*")


def test_min_n_counts_questions_not_answers() -> None:
    rows = [record(f"q{i}", r, True, i) for i in range(3) for r in (1, 2, 3)]
    verdict = decide(Floor("abstention_accuracy", 0.5), "g", rows,
                     strictness=Strictness(min_n=5))
    assert verdict.outcome == "failed"
    assert "was scored on 3 questions, fewer than ragate_min_n = 5" in verdict.message


def test_a_baseline_check_with_repeats_pairs_questions_once(pytester: pytest.Pytester) -> None:
    """Nine answers of three questions are three pairs, not nine, and the check says so."""
    write_repeated(pytester.path / "gs", 3, "[floors]\nabstention_accuracy = 0.1\n")
    pytester.makeconftest(repeated({}))
    assert run_pytester(pytester, "0", "gs",
                        "--ragate-results=base.jsonl").ret == pytest.ExitCode.OK
    result = run_pytester(pytester, "0", "gs", "--ragate-baseline=base.jsonl",
                          "--ragate-report=r.md")
    assert result.ret == pytest.ExitCode.OK
    report = (pytester.path / "r.md").read_text()
    assert ("abstention_accuracy 1.00 → 1.00 over 3 paired questions" in report
            and "repeat 1 of each question paired: repeats are not pairs of their own" in report)
