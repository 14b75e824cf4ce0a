"""Floors, answers and labels that must not pass (issue 22, "Fail closed, round 2"): a judged
floor whose configured judge reached no question, an empty answer, and human labels too few
or too uniform to support an interval. Each case is run through pytest (and, where workers
are involved, under `-n 0` and `-n 2`), and every output is held to the exit status."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets.sealed import Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from pytest_ragate.scoring.ppi import MIN_LABELS, ppi_mean, spread
from pytest_ragate.scoring.stats import Z95
from pytest_ragate.wording.runs import STATUS_WORDS
from tests.conftest import (
    BASE_TOML,
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    WORKERS_SHARED,
    both_routes,
    expect,
    jsonl,
    junit_cases,
    results_rows,
    run_command,
    run_pytester,
    said,
    write_goldset,
)
from tests.test_fail_closed import collection_failed, planned, scripted_judge, write_many
from tests.test_labels import ALL_SUPPORTED, judge_file, write_labelled
from tests.test_plugin import SYSTEM

OUTPUTS = ("--junitxml=j.xml", "--ragate-report=r.md", "--ragate-html=r.html",
           "--ragate-history=h.jsonl", "--ragate-cache=off")
FLOOR = "gs/ragate.toml::floor[faithfulness]"


def verdicts(path: Path, questions: tuple[str, ...] = ("q1", "q2", "q3")) -> None:
    """A fixture judge's file: every statement of these questions supported."""
    answers = {q: {"statements": ["s"], "supported": [True]} for q in questions}
    path.write_text(json.dumps({"judge_id": "v", "answers": answers}))


def outputs_agree(pytester: pytest.Pytester, result: pytest.RunResult, floor: str,
                  outcome: str, *, history: bool = True, status: str = "not_decided") -> None:
    """The exit status, the floor's JUnit case, the Markdown and HTML badges and the history
    line all say the same thing: FAIL (exit 1), or, the floor skipped (exit 0), what the run
    was (`status`: FLOOR NOT DECIDED, or NOTHING RAN), never PASS. A run in which no question
    ran appends no history line (`history=False`)."""
    failed = outcome == "failed"
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK)
    junit = {"failed": "failure", "skipped": "skipped"}[outcome]
    cases = junit_cases(pytester.path / "j.xml")
    assert cases[floor.replace("gs/ragate.toml", "gs.ragate.toml")]["outcome"] == junit
    status = "failed" if failed else status
    word = STATUS_WORDS[status]  # type: ignore[index]
    assert f"Run: **{word}**" in (pytester.path / "r.md").read_text()
    html = (pytester.path / "r.html").read_text()
    assert f'<h1>ragate report <span class="badge o-{status}">{word}</span></h1>' in html
    if not history:
        assert not (pytester.path / "h.jsonl").exists()
        return
    line = json.loads((pytester.path / "h.jsonl").read_text().splitlines()[-1])
    assert line["status"] == status
    name = floor.rpartition("floor[")[2].rstrip("]")
    assert line["floors"][name]["outcome"] == outcome


# --- a judged floor whose configured judge reached no question ---------------------------

JUDGED = "[floors]\nfaithfulness = 0.9\n"


# Folders whose judged floor a configured judge (`--ragate-judge fixture:judge.json`) reached
# through no question, each a goldset named as its folder with its system (and, where it says
# so, its own `ragate_judge`: FIXTURE_JUDGE_CONFTEST reading the same flag) in its conftest.py,
# in one run per worker count (`--ragate-ci=strict`, for the ppi folders below it shares);
# each case reads its own folder's items, JUnit case and history line. The judge's file has
# verdicts for q00..q11 only (the ppi folders'): none for these folders' q1..q4, of which
# only judge-failures' ask it.
SKIP_ALL = {q: "pytest.skip('no index today')" for q in ("q1", "q2", "q3", "q4")}
UNREACHED = {  # folder -> its system, whether it is sealed
    "sealed-builtin": (planned({"q4": "Answer.abstain()"}), True),
    "sealed-conftest": (planned({"q4": "Answer.abstain()"}) + FIXTURE_JUDGE_CONFTEST, True),
    "skips-builtin": (planned(SKIP_ALL), False),
    "skips-conftest": (planned(SKIP_ALL) + FIXTURE_JUDGE_CONFTEST, False),
    "errors": (planned({q: "1 / 0" for q in ("q1", "q2", "q3", "q4")})
               + FIXTURE_JUDGE_CONFTEST, False),
    "judge-failures": (planned({"q4": "Answer.abstain()"}) + FIXTURE_JUDGE_CONFTEST, False),
    "agreement": (planned(SKIP_ALL) + FIXTURE_JUDGE_CONFTEST, False),
}
"""`-builtin`: the judge as `--ragate-judge` builds it (the built-in `ragate_judge`);
`-conftest`: a user's own `ragate_judge` fixture that reads the same flag."""


@dataclass(frozen=True)
class Unreached:
    """What the shared run printed, its exit status, its JUnit cases, reports and history
    lines by goldset."""

    stdout: pytest.LineMatcher
    text: str
    ret: int
    cases: dict[str, dict[str, object]]
    markdown: str
    html: str
    history: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def unreached(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Unreached:
    """The judged floors no judge reached, one folder each, in one run under the default
    `ragate_ci` (point), as most users run."""
    root = tmp_path_factory.mktemp(f"unreached-n{workers}")
    for folder, (system, sealed) in UNREACHED.items():
        floors = JUDGED if folder != "agreement" else (
            '[judge]\nlabels = "labels.jsonl"\n\n[floors]\njudge_agreement = 0.6\n')
        gs = write_goldset(root / folder, toml=BASE_TOML.replace('"mini"', f'"{folder}"'),
                           floors=floors)
        (gs / "conftest.py").write_text(system)
        if sealed:
            seal_goldset(gs, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    (root / "agreement" / "labels.jsonl").write_text(jsonl(
        {"question_id": q, "metric": "faithfulness", "verdict": 1} for q in ("q1", "q2")))
    return shared_run(root, workers, *UNREACHED)


@pytest.fixture(scope="module")
def strict_ppi(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Unreached:
    """The ppi estimates over 2 and over 12 labels that agree with a constant judge, in one
    run under `ragate_ci = strict`."""
    root = tmp_path_factory.mktemp(f"ppi-n{workers}")
    labelled_project(root / "ppi-two", labelled=2)
    labelled_project(root / "ppi-twelve", labelled=12)
    return shared_run(root, workers, "ppi-two", "ppi-twelve", "--ragate-ci=strict")


def shared_run(root: Path, workers: str, *args: str) -> Unreached:
    """pytest over `root` in a process of its own, judged by a constant judge's file (q00..q11:
    none of the unreached folders' questions), with every output."""
    judge_file(root / "judge.json", ALL_SUPPORTED)
    with pytest.MonkeyPatch.context() as env:
        env.delenv("RAGATE_SEAL_KEY", raising=False)
        done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", *args,
                           "--ragate-judge=fixture:judge.json", *OUTPUTS)
    history = [json.loads(line) for line in (root / "h.jsonl").read_text().splitlines()]
    return Unreached(pytest.LineMatcher(done.stdout.splitlines()), done.stdout,
                     done.returncode, junit_cases(root / "j.xml"),
                     (root / "r.md").read_text(), (root / "r.html").read_text(),
                     {line["goldset"]: line for line in history})


def all_say_fail(run: Unreached, folder: str, floor: str = "faithfulness") -> None:
    """`outputs_agree` for one folder of the shared run: the exit status, the floor's JUnit
    case, the reports' badges (the run's, and its goldset's own: other folders fail the run
    too) and its goldset's history line all say FAIL."""
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    assert run.cases[f"{folder}.ragate.toml::floor[{floor}]"]["outcome"] == "failure"
    assert "Run: **FAIL**" in run.markdown
    assert re.search(rf"^## {re.escape(folder)} \(eval_version .*\) \*\*FAIL\*\*$",
                     run.markdown, re.MULTILINE), run.markdown
    assert '<h1>ragate report <span class="badge o-failed">FAIL</span></h1>' in run.html
    assert f'<h2>{folder} <span class="badge o-failed">FAIL</span></h2>' in run.html
    assert run.history[folder]["status"] == "failed"
    assert run.history[folder]["floors"][floor]["outcome"] == "failed"


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
@pytest.mark.parametrize("folder", ["sealed-builtin", "sealed-conftest"])
def test_a_sealed_goldset_without_its_key_fails_its_judged_floor(
        unreached: Unreached, workers: str, folder: str) -> None:
    said(unreached.stdout,
        f"FAILED {folder}/ragate.toml::floor[faithfulness] - sealed: set RAGATE_SEAL_KEY to "
        "score 4 of 4 questions*")
    assert "none configured" not in unreached.text
    all_say_fail(unreached, folder)


@pytest.mark.heavy
@WORKERS_SHARED
@pytest.mark.parametrize("folder", ["skips-builtin", "skips-conftest"])
def test_a_judged_floor_fails_when_every_question_skips(unreached: Unreached, workers: str,
                                                        folder: str) -> None:
    said(unreached.stdout,
        f"FAILED {folder}/ragate.toml::floor[faithfulness] - not decided: 4 of 4 questions "
        "have no result: skipped q1, q2, q3, q4 (Skipped: no index today)*",
        f"{folder}: system: — · retriever: — · judge: fixture:judge.json, reached by no "
        "question",
        f"{folder} *faithfulness *0.90 *—*fixture:judge.json *FAIL")
    assert "none configured" not in unreached.text
    all_say_fail(unreached, folder)


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_judged_floor_fails_when_every_question_errors(unreached: Unreached,
                                                         workers: str) -> None:
    said(unreached.stdout,
        "FAILED errors/ragate.toml::floor[faithfulness] - not decided: 4 of 4 questions have "
        "no result: errored q1, q2, q3, q4 (ZeroDivisionError: division by zero)*")
    assert "none configured" not in unreached.text
    all_say_fail(unreached, "errors")


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_judged_floor_fails_when_every_verdict_is_a_judge_failure(unreached: Unreached,
                                                                    workers: str) -> None:
    said(unreached.stdout,
        "FAILED judge-failures/ragate.toml::floor[faithfulness] - nothing scored: faithfulness "
        "has no judged questions among 4 questions*(3 judge failures, not counted)*")
    all_say_fail(unreached, "judge-failures")


@pytest.mark.heavy
@WORKERS_SHARED
def test_judge_agreement_fails_when_no_labelled_question_reached_the_judge(
        unreached: Unreached, workers: str) -> None:
    said(unreached.stdout,
        "FAILED agreement/ragate.toml::floor[judge_agreement] - not decided: 2 of 2 labelled "
        "questions have no result: skipped q1, q2*")
    assert "none configured" not in unreached.text
    all_say_fail(unreached, "agreement", "judge_agreement")


@WORKERS
def test_a_judged_floor_whose_questions_are_deselected_skips_and_says_so(
        pytester: pytest.Pytester, workers: str) -> None:
    """-k that keeps the floor and none of its questions: the user chose not to run them, a
    skip by the project's rules (docs/reading-a-failure.md), and said as such, not as a
    missing judge."""
    write_goldset(pytester.path / "gs", floors=JUDGED)
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    verdicts(pytester.path / "judge.json")
    result = run_pytester(pytester, workers, "gs", "-k", "floor",
                          "--ragate-judge=fixture:judge.json", *OUTPUTS)
    expect(result, "SKIPPED * not decided: 4 of 4 questions deselected (-k or -m): "
           "q1, q2, q3, q4*")
    assert "none configured" not in result.stdout.str()
    outputs_agree(pytester, result, FLOOR, "skipped", history=False, status="nothing_ran")


@WORKERS
def test_without_a_judge_a_judged_floor_still_says_none_is_configured(
        pytester: pytest.Pytester, workers: str) -> None:
    """The one case that says so: no --ragate-judge, and the questions that ran had none. A
    judged floor written in ragate.toml is then not decided: it fails, naming the flag, and
    every output says FAIL (it was once skipped, and the run green)."""
    write_goldset(pytester.path / "gs", floors=JUDGED)
    pytester.makeconftest(planned({"q4": "Answer.abstain()"}) + FIXTURE_JUDGE_CONFTEST)
    result = run_pytester(pytester, workers, "gs", *OUTPUTS)
    expect(result, "FAILED * faithfulness needs a judge: none configured (--ragate-judge): a "
           "judged floor is not decided without one*")
    outputs_agree(pytester, result, FLOOR, "failed")


@WORKERS
def test_a_users_own_judge_that_no_question_reached_is_not_taken_for_none(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """A `ragate_judge` of the user's own, and no --ragate-judge: what it gives is known only
    from a question that asked it. With every question sealed none did, so its judged floor
    is decided over the gaps (and fails), never skipped as if no judge were configured."""
    root = write_goldset(pytester.path / "gs", floors=JUDGED)
    pytester.makeconftest(planned({}) + scripted_judge("return 1.0"))
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    monkeypatch.delenv("RAGATE_SEAL_KEY", raising=False)
    result = run_pytester(pytester, workers, "gs", *OUTPUTS)
    expect(result, f"FAILED {FLOOR} - sealed: set RAGATE_SEAL_KEY to score 4 of 4 "
           "questions*",
           "mini: system: — · retriever: — · judge: ragate_judge (conftest.py:*), reached by "
           "no question")
    assert "none configured" not in result.stdout.str()
    outputs_agree(pytester, result, FLOOR, "failed")


def test_ragate_decide_holds_a_judged_floor_to_the_judge_the_shards_ran_with(
        pytester: pytest.Pytester) -> None:
    """Shards run with --ragate-judge, every question skipped; `ragate decide` without the
    flag decides with the shards' judge (their header says it), so the floor fails. (The
    built-in `ragate_judge`: a user's own would fail it anyway, as no question asked it.)
    The header is the controller's, and the decision runs at -n 0: the shards run at -n 0."""
    write_goldset(pytester.path / "gs", floors=JUDGED)
    pytester.makeconftest(planned({q: "pytest.skip('no index today')"
                                   for q in ("q1", "q2", "q3", "q4")}))
    verdicts(pytester.path / "judge.json")
    for i in (1, 2):
        shard = run_pytester(pytester, "0", "gs", "--ragate-judge=fixture:judge.json",
                             f"--ragate-shard={i}/2", f"--ragate-results=shards/{i}.jsonl")
        assert shard.ret == pytest.ExitCode.OK
    result = run_pytester(pytester, "0", "gs", "--ragate-decide=shards", *OUTPUTS)
    expect(result, f"FAILED {FLOOR} - not decided: 4 of 4 questions have no result: "
           "skipped q1, q2, q3, q4 (Skipped: no index today)*",
           "mini: system: — · retriever: — · judge: fixture:judge.json, reached by no "
           "question")
    outputs_agree(pytester, result, FLOOR, "failed")


# --- an empty answer is not an answer ------------------------------------------------------

EMPTY = {"q1": "Answer()", "q2": "{}", "q3": "Answer(text='  ', knobs={'top_k': 3})"}


@WORKERS
@pytest.mark.parametrize("route", ["file", "decorated"])
def test_an_empty_answer_is_an_error_on_its_question(pytester: pytest.Pytester, workers: str,
                                                     route: str) -> None:
    """No text, no contexts, no citations, not abstained: counted as answered it would pass
    abstention_accuracy (an answerable question answered) and, judged, be vacuously
    faithful. It is an error on its question, and the floor over it is not decided."""
    write_goldset(pytester.path / "gs", floors="[floors]\nabstention_accuracy = 0.5\n")
    system = planned({**EMPTY, "q4": "Answer.abstain()"})
    both_routes(pytester, system)
    where = "gs/ragate.toml" if route == "file" else "test_rag.py::test_mine"
    result = run_pytester(pytester, workers, where.partition("::")[0], "--ragate-report=r.md",
                          "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # one cause, said once for the three questions (issue 36 item 4): the first one's in full
    expect(result, f"FAILED {where}*q?* - Failed: q?: the system returned an empty answer: no "
           "text, contexts or citations, and not abstained (to decline, return "
           "Answer.abstain())", f"FAILED {where}*q?* and 1 more, as *q?*: *q?*, *q?*")
    expect(result, "FAILED *floor[abstention_accuracy] - not decided: 3 of 4 questions have "
           "no result: errored q1, q2, q3 (Failed: the system returned an empty answer*")
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert [rows[q]["status"] for q in ("q1", "q2", "q3", "q4")] == ["error"] * 3 + ["scored"]
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()


# --- labels that cannot support an interval --------------------------------------------------

def test_ppi_needs_min_labels_and_never_reports_a_point_interval() -> None:
    """2 labels that agree with a constant judge made the interval [1.00, 1.00]: too few
    labels now make no estimate, and a spread of 0 is bounded by the rule of three."""
    assert ppi_mean([1.0] * 4, [(1.0, 1.0)] * 2) is None
    assert ppi_mean([1.0] * 40, [(1.0, 1.0)] * (MIN_LABELS - 1)) is None
    found = ppi_mean([1.0] * 12, [(1.0, 1.0)] * 12)
    assert found is not None and found.bounded == ("judged", "labelled")
    # both spreads 0: each variance is at most p·1² with p = 1 − 0.05^(1/12) (no other value
    # among 12, at 95%), so the half-width is 1.96·√(2p/12)
    p = 1 - 0.05 ** (1 / 12)
    half = Z95 * math.sqrt(2 * p / 12)
    assert found.interval == pytest.approx((1 - half, 1 + half))
    assert half > 0.35
    spread_judge_only = ppi_mean([1.0] * 12, [(1.0, 1.0), (1.0, 0.5)] * 6)
    assert spread_judge_only is not None and spread_judge_only.bounded == ("judged",)


def test_a_spread_of_zero_is_bounded_by_the_farthest_value_and_popoviciu() -> None:
    p = 1 - 0.05 ** (1 / 10)
    assert spread([0.25] * 10, 0.0, 1.0) == pytest.approx((p * 0.75 ** 2, True))
    # a judge 1 below people every time: others lie up to 2 away, p·2² > Popoviciu's 2²/4
    assert spread([-1.0] * 2, -1.0, 1.0) == pytest.approx((1.0, True))
    assert spread([0.0, 1.0], 0.0, 1.0) == (0.5, False)  # a real spread is the sample's


def labelled_project(root: Path, labelled: int, floor: float = 0.8) -> None:
    """12 questions, every answer judged fully faithful (a constant judge: ALL_SUPPORTED,
    the shared run's judge file); the first `labelled` of them labelled faithful by people:
    perfect agreement, no spread at all. A goldset named as its folder."""
    write_labelled(root, f"[floors]\nfaithfulness = {floor}\n",
                   [{"question_id": f"q{i:02d}", "metric": "faithfulness", "verdict": 1}
                    for i in range(labelled)],
                   judge='[judge]\nlabels = "labels.jsonl"\nestimate = "ppi"\n')
    toml = root / "ragate.toml"
    toml.write_text(toml.read_text().replace('name = "mini"', f'name = "{root.name}"'))
    (root / "conftest.py").write_text(planned({}) + FIXTURE_JUDGE_CONFTEST)


@pytest.mark.heavy
@WORKERS_SHARED
def test_two_labels_agreeing_with_a_constant_judge_do_not_pass_a_strict_ppi_floor(
        strict_ppi: Unreached, workers: str) -> None:
    said(strict_ppi.stdout,
         "FAILED ppi-two/ragate.toml::floor[faithfulness] - not decided: the ppi estimate "
         "([judge] estimate = \"ppi\") needs at least 10 labelled questions with a verdict "
         "here, has 2 labelled of 12 judged*")
    assert "[1.00, 1.00]" not in strict_ppi.text
    all_say_fail(strict_ppi, "ppi-two")


@pytest.mark.heavy
@WORKERS_SHARED
def test_labels_without_spread_widen_the_ppi_interval_and_say_so(strict_ppi: Unreached,
                                                                 workers: str) -> None:
    said(strict_ppi.stdout,
         "FAILED ppi-twelve/ragate.toml::floor[faithfulness] - faithfulness 1.00 (ppi), 95% "
         "lower bound 0.62 < floor 0.80 (ragate_ci = strict) · over 12/12 judged, 12 labelled "
         "· ppi: judge 1.00 − bias +0.00 on the labelled · no spread in the 12 judge scores "
         "nor in the 12 labelled errors (judge − human): variance bounded by the rule of "
         "three (95%), not taken as 0 · 95% CI [0.62, 1.38] (ppi, normal approximation)*")
    all_say_fail(strict_ppi, "ppi-twelve")


@WORKERS
def test_a_verdict_of_true_in_a_labels_file_is_refused(pytester: pytest.Pytester,
                                                       workers: str) -> None:
    write_labelled(pytester.path / "gs", "[floors]\nfaithfulness = 0.8\n",
                   '{"question_id": "q00", "metric": "faithfulness", "verdict": true}\n'
                   '{"question_id": "q01", "metric": "faithfulness", "verdict": 1.0}\n'
                   '{"question_id": "q02", "metric": "faithfulness", "verdict": 1}\n')
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "judge.json", ALL_SUPPORTED)
    result = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json")
    assert result.ret == collection_failed(workers)
    expect(result, "*labels.jsonl:1: [q00] verdict: *a verdict is 0 or 1, not true*",
           "*labels.jsonl:2: [q01] verdict: *a verdict is 0 or 1, not 1.0*")
    assert "labels.jsonl:3" not in result.stdout.str()
    assert "passed" not in result.parseoutcomes()


@pytest.mark.parametrize(("workers", "ci"), [("0", "point"), ("0", "strict"), ("2", "strict")],
                         ids=["n0-point", "n0-strict", "n2-strict"])
def test_two_labels_cannot_vouch_for_a_judge(pytester: pytest.Pytester, workers: str,
                                             ci: str) -> None:
    """`judge_agreement` over 2 labels the judge agrees with: kappa 1.00 with no interval
    (most resamples of 2 pairs are one class) passed, even under ragate_ci = strict. The
    labels' verdicts travel from -n 2's workers once (strict); the interval is the
    controller's, the same for either ci, at -n 0."""
    write_labelled(pytester.path / "gs", "[floors]\njudge_agreement = 0.6\n",
                   [{"question_id": "q00", "metric": "faithfulness", "verdict": 1},
                    {"question_id": "q01", "metric": "faithfulness", "verdict": 0}])
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "judge.json", {**ALL_SUPPORTED, "q01": [False, False]})
    result = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json",
                          f"--ragate-ci={ci}", *OUTPUTS)
    floor = "gs/ragate.toml::floor[judge_agreement]"
    expect(result, f"FAILED {floor} - judge not calibrated: faithfulness: kappa 1.00 — on 2 "
           "labelled questions: fewer than 10 labelled questions with a verdict, too few to "
           "bound the agreement*")
    outputs_agree(pytester, result, floor, "failed")


@WORKERS
def test_a_judge_agreeing_with_every_label_gets_no_point_interval(
        pytester: pytest.Pytester, workers: str) -> None:
    """12 labels, half of them 0, every one matched by the judge: every bootstrap resample
    gives kappa 1.00, and [1.00, 1.00] passed a strict `judge_agreement = 0.6`. No
    disagreement among 12 bounds its rate below 1 − 0.05^(1/12) only, so kappa's lower bound
    is (0.05^(1/12) − 0.5) / 0.5 = 0.56 with these marginals: strict fails, point holds."""
    labels = [{"question_id": f"q{i:02d}", "metric": "faithfulness", "verdict": i % 2}
              for i in range(12)]
    write_labelled(pytester.path / "gs", "[floors]\njudge_agreement = 0.6\n", labels)
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "judge.json",
               {f"q{i:02d}": [bool(i % 2), bool(i % 2)] for i in range(12)})
    floor = "gs/ragate.toml::floor[judge_agreement]"
    strict = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json",
                          "--ragate-ci=strict", *OUTPUTS)
    expect(strict, f"FAILED {floor} - judge not calibrated: kappa lower bound 0.56 "
           "(kappa 1.00 [0.56, 1.00]) < 0.60 on 12 labelled questions (faithfulness)*")
    outputs_agree(pytester, strict, floor, "failed")
    if workers == "0":  # the same verdicts decided at the point (the controller's: -n 0 once)
        point = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json",
                             "--ragate-ci=point")
        assert point.ret == pytest.ExitCode.OK, point.stdout.str()[-2000:]


@WORKERS
@pytest.mark.parametrize("floors", ["", JUDGED], ids=["no-floor", "judged-floor-no-judge"])
def test_a_skipped_question_no_floor_covers_still_fails_the_run(
        pytester: pytest.Pytester, workers: str, floors: str) -> None:
    """The reports and history said FAIL for a question without a result while the run
    exited 0, because no floor decided over it (none at all, or a judged floor skipped for
    want of a judge): the exit status agrees now. A judged floor without a judge now fails
    itself (not decided), so the run fails on it before the gap's own line is needed."""
    write_many(pytester.path / "gs", 4, floors=floors)
    pytester.makeconftest(planned({"q01": 'pytest.skip("not today")'}))
    result = run_pytester(pytester, workers, "gs", *OUTPUTS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
    expect(result, "mini: 4 questions: 3 scored, 1 skipped (q01)",
           "mini: the run fails: no floor covers the questions or anchors without a result, "
           "and a missing result is never a pass" if not floors else
           "FAILED * faithfulness needs a judge: none configured (--ragate-judge)*")
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()
    line = json.loads((pytester.path / "h.jsonl").read_text().splitlines()[-1])
    assert line["status"] == "failed"


# --- a rerun of the last failures (pytest's cache) ----------------------------------------------


@pytest.mark.parametrize(("workers", "flag"), [("0", "--lf"), ("2", "--lf"), ("0", "--sw")],
                         ids=["n0-lf", "n2-lf", "n0-sw"])
def test_a_rerun_of_the_last_failures_never_skips_a_floor_to_green(
        pytester: pytest.Pytester, workers: str, flag: str) -> None:
    """After a failed floor, `--lf` (or `--sw`, which goes on from it) reruns the floor's item
    without its questions: they are missing results, not left out, so the floor fails naming
    the flag (it was skipped, exit 0). `--ff` reruns everything and decides it as the first run
    did. Pytest's cache is on here (it is off in run_pytester)."""
    write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.9\n")
    pytester.makeconftest(SYSTEM)

    def run(*args: str) -> pytest.RunResult:  # in this process: the cache is a folder's
        return pytester.runpytest_inprocess("-n", workers, "-rA", "gs", *args)

    first = run(flag) if flag == "--sw" else run()
    assert first.ret == pytest.ExitCode.TESTS_FAILED, first.stdout.str()
    again = run(flag)
    assert again.ret == pytest.ExitCode.TESTS_FAILED, again.stdout.str()
    again.stdout.fnmatch_lines([f"not decided: * questions have no result: deselected *({flag} "
                                "reran the last failures only*"])
    if flag == "--lf":
        everything = run("--ff")
        assert everything.ret == pytest.ExitCode.TESTS_FAILED
        everything.stdout.fnmatch_lines(["evidence_recall 0.50 < floor 0.90*"])
