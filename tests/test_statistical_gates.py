"""Gates that know how sure they are: strict intervals, a minimum n, and paired regression
checks against a baseline, on hand-built records with hand-computed figures."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_ragate.decision.floors import decide, decide_anchors
from pytest_ragate.decision.regressions import check, check_run
from pytest_ragate.decision.rules import Strictness
from pytest_ragate.outputs.baseline import BaselineError, load_baseline
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord, QuestionScores
from tests.conftest import run_here, run_pytester, saved_results, untimed, write_goldset


def abstention_rows(right: int, wrong: int, kind: str = "unanswerable",
                    prefix: str = "q") -> list[QuestionRecord]:
    """`right` questions that abstained correctly, `wrong` that answered when they should not."""
    return [QuestionRecord(goldset="g", question_id=f"{prefix}{i}", kind=kind, index=i,
                           eval_version="1", must_abstain=True, abstained=i < right,
                           abstention_correct=i < right, evidence_spans=0)
            for i in range(right + wrong)]


# --- ragate_ci = strict ------------------------------------------------------------------------


def test_strict_ci_passes_only_when_the_lower_bound_clears_the_floor() -> None:
    rows = abstention_rows(7, 13)  # 7/20 = 0.35, Wilson [0.181, 0.567]
    floor = Floor("abstention_accuracy", 0.30)
    point = decide(floor, "g", rows)
    assert point.outcome == "passed"
    strict = decide(floor, "g", rows, strictness=Strictness(ci="strict"))
    assert strict.outcome == "failed"
    assert ("abstention_accuracy 0.35, 95% lower bound 0.18 < floor 0.30 (ragate_ci = strict)"
            in strict.message)
    assert "95% CI [0.18, 0.57] (Wilson)" in strict.message
    # a floor under the lower bound holds in both modes
    assert decide(Floor("abstention_accuracy", 0.18), "g", rows,
                  strictness=Strictness(ci="strict")).outcome == "passed"


def test_strict_ci_xfail_floor_xpasses_only_on_the_lower_bound() -> None:
    rows = abstention_rows(19, 1)  # 0.95, Wilson lower bound 0.764
    floor = Floor("abstention_accuracy", 0.80, xfail="known gap")
    assert decide(floor, "g", rows).outcome == "xpassed"
    assert decide(floor, "g", rows, strictness=Strictness(ci="strict")).outcome == "xfailed"


def test_min_n_refuses_to_gate_on_too_few_questions() -> None:
    rows = abstention_rows(5, 0)
    floor = Floor("abstention_accuracy", 0.5)
    refused = decide(floor, "g", rows, strictness=Strictness(min_n=6))
    assert refused.outcome == "failed"
    assert refused.message.startswith("refusing to gate: abstention_accuracy 1.00 was scored "
                                      "on 5 questions, fewer than ragate_min_n = 6")
    assert decide(floor, "g", rows, strictness=Strictness(min_n=5)).outcome == "passed"


def test_min_n_counts_questions_not_citations() -> None:
    # 3 answered questions with 4 citations each: n = 12 citations but 3 questions
    rows = [QuestionRecord(goldset="g", question_id=f"q{i}", kind="single_doc", index=i,
                           eval_version="1", must_abstain=False, abstained=False,
                           abstention_correct=True, citations=4, citations_correct=4,
                           evidence_spans=1, evidence_spans_found=1) for i in range(3)]
    verdict = decide(Floor("citation_accuracy", 0.5), "g", rows,
                     strictness=Strictness(min_n=4))
    assert verdict.outcome == "failed" and "scored on 3 questions" in verdict.message


def test_min_n_applies_to_anchor_populations() -> None:
    anchors = [AnchorOutcome(goldset="g", anchor_id=f"a{i}", kind="retrieval_miss", claim="c",
                             path="anchors.jsonl", line=i + 1, outcome="passed")
               for i in range(3)]
    floor = Floor("hold_rate", 0.5, kind="retrieval_miss", anchors=True)
    assert decide_anchors(floor, "g", anchors).outcome == "passed"
    refused = decide_anchors(floor, "g", anchors, Strictness(min_n=10))
    assert refused.outcome == "failed" and "scored on 3 anchors" in refused.message


# --- paired regression checks ------------------------------------------------------------------


def scores(**fields: object) -> QuestionScores:
    return QuestionScores.model_validate(fields)


def test_mcnemar_regression_fails_a_significant_drop_with_its_p_value() -> None:
    # 10 questions went right→wrong, 2 wrong→right, 28 stayed right: p = 158/4096 = 0.0386
    base = {f"q{i}": scores(abstention_correct=i >= 2) for i in range(40)}
    now = {f"q{i}": scores(abstention_correct=not (2 <= i < 12)) for i in range(40)}
    result = check("g", "abstention_accuracy", base, now, alpha=0.05)
    assert result.outcome == "failed"
    assert result.p_value == pytest.approx(158 / 4096)
    assert result.baseline == pytest.approx(38 / 40) and result.current == pytest.approx(30 / 40)
    assert result.message.startswith(
        "significant drop: abstention_accuracy 0.95 → 0.75 over 40 paired questions "
        "(McNemar (exact): 10 right→wrong, 2 wrong→right of 40 questions, p = 0.0386 < α 0.05)")
    # the same drop at α = 0.01 is reported, with its p, and passes
    lenient = check("g", "abstention_accuracy", base, now, alpha=0.01)
    assert lenient.outcome == "passed"
    assert lenient.message.startswith("drop not significant:") and "p = 0.0386 ≥ α 0.01" in (
        lenient.message)


def test_mcnemar_regression_pairs_evidence_spans_not_questions() -> None:
    # 6 questions × 2 spans; now the second span of each is lost: 6 right→wrong, p = 0.03125
    base = {f"q{i}": scores(evidence_found=[True, True]) for i in range(6)}
    now = {f"q{i}": scores(evidence_found=[True, False]) for i in range(6)}
    result = check("g", "evidence_recall", base, now, alpha=0.05)
    assert (result.outcome, result.pairs) == ("failed", 6)
    assert result.p_value == pytest.approx(0.03125)
    assert "6 right→wrong, 0 wrong→right of 12 spans" in result.message


def test_bootstrap_regression_on_judged_scores_and_unpaired_questions() -> None:
    base = {f"q{i}": scores(verdicts={"faithfulness": 1.0}) for i in range(30)}
    now = {f"q{i}": scores(verdicts={"faithfulness": 0.5 if i < 15 else 1.0})
           for i in range(30)}
    now["extra"] = scores(verdicts={"faithfulness": 0.0})  # not in the baseline: not paired
    now["q0"] = scores(judge_failures=["faithfulness"])  # no verdict now: not paired
    result = check("g", "faithfulness", base, now, alpha=0.05)
    assert result.test == "paired bootstrap" and result.pairs == 29
    assert result.current == pytest.approx((14 * 0.5 + 15) / 29)
    assert result.outcome == "failed" and result.p_value is not None and result.p_value < 0.01
    assert "1 question in only one run or skipped, not paired" in result.message


def test_small_noisy_change_passes_and_min_n_refuses() -> None:
    base = {f"q{i}": scores(abstention_correct=True) for i in range(8)}
    now = {**base, "q0": scores(abstention_correct=False)}
    result = check("g", "abstention_accuracy", base, now, alpha=0.05)
    assert result.outcome == "passed" and result.p_value == 1.0
    refused = check("g", "abstention_accuracy", base, now, alpha=0.05, min_n=10)
    assert refused.outcome == "failed"
    assert "8 paired questions are fewer than ragate_min_n = 10" in refused.message


def test_check_run_needs_the_same_goldset_and_eval_version() -> None:
    rows = abstention_rows(3, 0)
    from pytest_ragate.scoring.pairing import BaselineRun

    other = BaselineRun(goldset="g", eval_version="0",
                        scores={r.question_id: r.scores() for r in rows}, source="results file x")
    current = {r.question_id: r.scores() for r in rows}
    skipped = check_run("g", "1", current, [other], alpha=0.05, min_n=0)
    assert [c.metric for c in skipped] == ["citation_accuracy", "abstention_accuracy",
                                           "evidence_recall"]
    assert {c.outcome for c in skipped} == {"skipped"}
    assert "the baseline ran eval_version 0, this run 1: not comparable" in skipped[0].message
    missing = check_run("h", "1", current, [other], alpha=0.05, min_n=0)
    assert "the baseline has no run of goldset h" in missing[0].message


# --- reading a baseline ------------------------------------------------------------------------


def test_baseline_from_a_results_file(tmp_path: Path) -> None:
    """Rows of a later ragate, with a field this one does not know, still pair."""
    rows = abstention_rows(2, 1)
    path = tmp_path / "results.jsonl"
    lines = saved_results(rows).splitlines(keepends=True)
    lines[1:-1] = [json.dumps({**json.loads(line), "future_field": 1}) + "\n"
                   for line in lines[1:-1]]
    trailer = json.loads(lines[-1])
    trailer["ragate_trailer"]["sha256"] = hashlib.sha256(
        "".join(lines[:-1]).encode()).hexdigest()
    path.write_text("".join(lines[:-1]) + json.dumps(trailer) + "\n")
    [run] = load_baseline(str(path))
    assert (run.goldset, run.eval_version, sorted(run.scores)) == ("g", "1", ["q0", "q1", "q2"])
    assert run.scores["q2"].abstention_correct is False


def test_baseline_from_history_lines_picks_the_last_or_the_named_line(tmp_path: Path) -> None:
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.outputs.history import build_line

    path = tmp_path / "history.jsonl"
    first = build_line(GoldsetRun(name="g", eval_version="1", records=abstention_rows(3, 0)),
                       git=None)
    second = build_line(GoldsetRun(name="g", eval_version="1", records=abstention_rows(1, 2)),
                        git=None)
    path.write_text(first.model_dump_json() + "\n" + second.model_dump_json() + "\n")
    runs = load_baseline(str(path))
    now = {r.question_id: r.scores() for r in abstention_rows(3, 0)}
    [_, latest, _] = check_run("g", "1", now, runs, alpha=0.05, min_n=0)
    assert latest.baseline == pytest.approx(1 / 3) and f"{path}:2" in latest.message
    [_, named, _] = check_run("g", "1", now, load_baseline(f"{path}:1"), alpha=0.05, min_n=0)
    assert named.baseline == 1.0 and f"{path}:1" in named.message


@pytest.mark.parametrize(("content", "expected"), [
    (None, "no such file"),
    ("", "the file is empty"),
    ("{not json\n", "not JSON"),
    ('{"question_id": "q1"}\n', "goldset: Field required"),
    ('{"time": "x"}\n', "neither a results row nor a history line"),
])
def test_unreadable_baselines_say_why(tmp_path: Path, content: str | None,
                                      expected: str) -> None:
    path = tmp_path / "base.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(BaselineError, match=expected):
        load_baseline(str(path))


def test_a_history_line_number_past_the_end_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text("{}\n")
    with pytest.raises(BaselineError, match="has no line 5"):
        load_baseline(f"{path}:5")


# --- end to end --------------------------------------------------------------------------------

DRIFTING_SYSTEM = '''
import os
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture
def ragate_system():
    """Abstains on every question, unless RAGATE_TEST_DRIFT makes it answer them all."""
    def answer(text):
        context = Context(context_id="c0", doc_id="m1", first_unit=0, last_unit=0, text="...",
                          distance=0.3)
        if os.environ.get("RAGATE_TEST_DRIFT"):
            return Answer(text="made up", contexts=[context],
                          citations=[Citation(context_id="c0")])
        return Answer.abstain([context])
    return answer
'''


def unanswerable_project(pytester: pytest.Pytester, floors: str) -> None:
    """12 must-abstain questions and DRIFTING_SYSTEM: right on all 12, or with the drift
    switched on, wrong on all 12."""
    questions = [{"question_id": f"u{i:02d}", "kind": "unanswerable",
                  "question": f"What about u{i:02d}?"} for i in range(12)]
    expected = [{"question_id": f"u{i:02d}", "evidence": []} for i in range(12)]
    write_goldset(pytester.path / "gs", questions=questions, expected=expected, floors=floors)
    pytester.makeconftest(DRIFTING_SYSTEM)


def test_baseline_regression_is_a_test_case_with_its_p_value(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    unanswerable_project(pytester, "[floors]\nabstention_accuracy = 0.5\n")
    base = pytester.runpytest("-p", "no:cacheprovider", "gs", "--ragate-results=base.jsonl",
                              "--ragate-history=h.jsonl")
    base.assert_outcomes(passed=13)

    monkeypatch.setenv("RAGATE_TEST_DRIFT", "1")
    outputs = {}
    for label, extra in (("n0", []), ("n2", ["-n", "2"])):
        result = pytester.runpytest_inprocess(  # -n 2 starts its own worker processes
            "-p", "no:cacheprovider", "gs", "-rA", "--ragate-baseline=base.jsonl",
            f"--junitxml={label}.xml", f"--ragate-report={label}.md",
            f"--ragate-results={label}.jsonl", *extra)
        # the floor fails (0/12), and so does the regression check: 12 right→wrong;
        # citations (none in the baseline) and evidence (no spans) have nothing to compare
        result.assert_outcomes(passed=12, failed=2, skipped=2)
        result.stdout.fnmatch_lines([
            "*significant drop: abstention_accuracy 1.00 → 0.00 over 12 paired questions "
            "(McNemar (exact): 12 right→wrong, 0 wrong→right of 12 questions, "
            "p = 0.000488 < α 0.05) · against results file base.jsonl · right→wrong: u00, u01, "
            "u02, u03, u04, u05, u06, u07, u08, u09 and 2 more",
            "*ragate regressions against the baseline*",
            "*SKIPPED*citation_accuracy: nothing to compare*",
            "FAILED gs/ragate.toml::regression?abstention_accuracy? - significant drop*",
        ])
        outputs[label] = (untimed((pytester.path / f"{label}.md").read_text()),
                          (pytester.path / f"{label}.xml").read_text().count("regression["))
    assert outputs["n0"] == outputs["n2"]
    assert "### Against the baseline" in outputs["n0"][0]

    # the same check against the history line written by the first run
    from_history = pytester.runpytest("-p", "no:cacheprovider", "gs",
                                      "--ragate-baseline=h.jsonl", "-o", "ragate_min_n=20")
    from_history.assert_outcomes(passed=12, failed=2, skipped=2)
    from_history.stdout.fnmatch_lines(["*refusing to gate*12 paired questions are fewer than "
                                       "ragate_min_n = 20*h.jsonl:1*"])

    # `ragate compare` over the same two runs (the decide mode, its --min-n as ragate_min_n)
    compared = run_here(pytester, "compare", "--min-n", "20", "h.jsonl", "n0.jsonl")
    assert compared.returncode == 1, compared.stdout
    pytest.LineMatcher(compared.stdout.splitlines()).fnmatch_lines([
        "refusing to gate: abstention_accuracy 1.00 → 0.00*12 paired questions are fewer "
        "than ragate_min_n = 20*h.jsonl:1*"])

    # with a margin (`[regression] max_drop`) the gate and `ragate compare` hold the metric to
    # "no worse than the baseline by more than 0.05": 1.00 → 0.00 is worse, surely
    config = pytester.path / "gs" / "ragate.toml"
    config.write_text(config.read_text()
                      + "\n[regression]\nmax_drop = { abstention_accuracy = 0.05 }\n")
    worse = ("*worse than the margin: abstention_accuracy 1.00 → 0.00 over 12 paired questions "
             "(change -1.000, 95% upper bound *< -0.05 = -max_drop) · against *base.jsonl*"
             "got worse: u00, u01*")
    for workers in ("0", "2"):  # under xdist the controller holds the margin and the rows
        margin = run_pytester(pytester, workers, "gs", "--ragate-baseline=base.jsonl")
        margin.assert_outcomes(passed=12, failed=2, skipped=2)
        margin.stdout.fnmatch_lines([worse])


def test_a_bad_baseline_is_a_usage_error_before_anything_runs(pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs")
    result = pytester.runpytest("-p", "no:cacheprovider", "gs", "--ragate-baseline=nope.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragate-baseline nope.jsonl: no such file*"])


def test_ragate_ci_strict_from_the_ini_file(pytester: pytest.Pytester) -> None:
    # 12/12 abstain: value 1.00, Wilson lower bound 12 / (12 + 1.96²) = 0.76
    unanswerable_project(pytester, "[floors]\nabstention_accuracy = 0.8\n")
    point = pytester.runpytest("-p", "no:cacheprovider", "gs")
    point.assert_outcomes(passed=13)
    pytester.makeini("[pytest]\nragate_ci = strict\n")
    strict = pytester.runpytest("-p", "no:cacheprovider", "gs")
    strict.assert_outcomes(passed=12, failed=1)
    strict.stdout.fnmatch_lines(["*abstention_accuracy 1.00, 95% lower bound 0.76 < floor 0.80 "
                                 "(ragate_ci = strict)*"])
    bad = pytester.runpytest("-p", "no:cacheprovider", "gs", "--ragate-ci=sure")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*ragate_ci: Input should be 'point' or 'strict'*"])


def test_a_relative_baseline_is_found_from_the_rootdir_too(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           ) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "base.jsonl").write_text(saved_results(abstention_rows(2, 0)))
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # pytest run from a subfolder; the ini names runs/base.jsonl
    with pytest.raises(BaselineError, match="no such file"):
        load_baseline("runs/base.jsonl")
    [run] = load_baseline("runs/base.jsonl", root=tmp_path)
    assert sorted(run.scores) == ["q0", "q1"]
    with pytest.raises(BaselineError, match=":LINE picks a history line"):
        load_baseline("runs/base.jsonl:1", root=tmp_path)  # found, but a results file


def test_decorator_route_regressions_sit_beside_its_floors(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    """With floors (`mini`), `test_fn::regression[...]` sits beside `test_fn::floor[...]`;
    without (`bare`), it is still named after the test function. One run of both."""
    unanswerable_project(pytester, "[floors]\nabstention_accuracy = 0.5\n")
    (pytester.path / "gs").rename(pytester.path / "mini")
    unanswerable_project(pytester, "")
    toml = pytester.path / "gs" / "ragate.toml"
    toml.write_text(toml.read_text().replace('name = "mini"', 'name = "bare"'))
    (pytester.path / "gs").rename(pytester.path / "bare")
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("mini")
def test_mini(ragate_question, ragate_system):
    return ragate_system(ragate_question.question)

@ragate.goldset("bare")
def test_bare(ragate_question, ragate_system):
    return ragate_system(ragate_question.question)
''')
    pytester.runpytest("-p", "no:cacheprovider", "test_rag.py", "--ragate-results=base.jsonl")
    monkeypatch.setenv("RAGATE_TEST_DRIFT", "1")
    result = pytester.runpytest("-p", "no:cacheprovider", "-v", "test_rag.py",
                                "--ragate-baseline=base.jsonl")
    result.stdout.fnmatch_lines(["test_rag.py::test_mini::regression?abstention_accuracy? "
                                 "FAILED*"])
    result.stdout.fnmatch_lines(["test_rag.py::test_bare::regression?abstention_accuracy? "
                                 "FAILED*"])
    result.stdout.fnmatch_lines(["test_rag.py::test_mini::floor?abstention_accuracy? FAILED*"])
