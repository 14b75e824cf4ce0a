"""Issue 38's cases end to end: a saved run is read through its one reader by the gate and
the commands, and a partial run is never decided or shown as whole. One real run per case
(the gate with and without `-n 2` where its controller writes or reads what is checked); the
cases at the lowest level are in tests/test_saved_runs.py and tests/test_run_status.py.

1-2. a baseline edited (two rows, the trailer kept) or cut (15 of 40 rows, no trailer):
     the gate used it, and passed a run that dropped 20 questions; now a usage error
     before anything runs (a configure-time error: workers do not matter).
3.   a history whose last line is a `-k` run's: the gate paired with it and passed while the
     20 questions it did not ask all regressed; now it pairs with the last whole line.
4.   `ragate rejudge` over a `-k` run and over a sequential run that stopped early: it
     predicted "no change", exit 0; now the unasked questions are named as not judged.
5.   a `-k floor` run badged PASS; now no output says PASS (the exit status, JUnit, the
     terminal, the reports, the history). A `-k` run of part of the goldset (PARTIAL) is
     case 3's second run; `-k nomatch` is tests/test_fail_closed_outputs.py's and `--lf`
     after a failed floor tests/test_fail_closed_floors.py's.
and issue 39's case 6: with RAGATE_RESULTS_KEY set, an unsigned file is refused by the gate
(`--ragate-baseline`) and by `ragate decide`.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import FIXTURE_JUDGE_CONFTEST, WORKERS, run_here, run_pytester
from tests.test_fail_closed import planned, write_many
from tests.test_rejudge import N as JUDGED_N
from tests.test_rejudge import rejudge
from tests.test_rejudge import write_project as judged_project
from tests.test_sequential import paced

pytestmark = pytest.mark.heavy

N = 40
# right unless RAGATE_TEST_DROP says "abstain on q20..q39" (a regression the floor misses)
DROPPING = {f"q{i:02d}": "(Answer.abstain([]) if os.environ.get('RAGATE_TEST_DROP') and "
                         f"{i} >= 20 else cite(right))" for i in range(N)}
FLOORS = "[floors]\ncitation_accuracy = 0.40\n"
OUTPUTS = ("--ragate-report=out/r.md", "--ragate-html=out/r.html", "--junitxml=out/j.xml",
           "--ragate-history=out/h.jsonl")


def project(pytester: pytest.Pytester, floors: str = FLOORS) -> None:
    write_many(pytester.path / "gs", N, floors)
    pytester.makeconftest(planned(DROPPING))


def said(pytester: pytest.Pytester) -> dict[str, str]:
    """What each output of a run says of it."""
    out = pytester.path / "out"
    junit = ET.parse(out / "j.xml").getroot()
    found = {"md": (out / "r.md").read_text(), "html": (out / "r.html").read_text(),
             "junit": json.dumps({p.get("name"): p.get("value") for p in junit.iter("property")
                                  if (p.get("name") or "").startswith("ragate-")})}
    history = out / "h.jsonl"
    found["history"] = history.read_text() if history.exists() else ""
    return found


def no_pass_anywhere(pytester: pytest.Pytester, badge: str) -> None:
    outputs = said(pytester)
    assert "**PASS**" not in outputs["md"] and ">PASS<" not in outputs["html"]
    word, _, why = badge.partition(": ")
    assert f"Run: **{word}**: {why}\n" in outputs["md"], outputs["md"][:300]
    assert badge in outputs["html"]
    assert badge in outputs["junit"], outputs["junit"]
    for line in outputs["history"].splitlines():
        assert json.loads(line)["status"] != "passed"


# --- cases 1 and 2: a baseline edited or cut ---------------------------------------------------


def test_an_edited_or_cut_baseline_is_a_usage_error(pytester: pytest.Pytester) -> None:
    project(pytester)
    base = run_pytester(pytester, "0", "gs", "--ragate-results=base.jsonl")
    assert base.ret == 0, base.stdout.str()
    lines = (pytester.path / "base.jsonl").read_text().splitlines(keepends=True)
    edited = list(lines)
    for n in (21, 22):  # two rows made wrong, the trailer kept
        edited[n] = edited[n].replace('"abstention_correct": true', '"abstention_correct": false')
    (pytester.path / "edited.jsonl").write_text("".join(edited))
    (pytester.path / "cut.jsonl").write_text("".join(lines[:16]))  # the header and 15 rows
    for damaged, why in (("edited", "ragate_trailer.sha256: the lines before the trailer are "
                                    "not those it was written after"),
                         ("cut", "ragate_trailer: no trailer line")):
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs",
                                               f"--ragate-baseline={damaged}.jsonl")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"ERROR: --ragate-baseline: {damaged}.jsonl*: {why}*"])


# --- case 3: a history whose last line asked part of the goldset -------------------------------


@WORKERS
def test_a_history_baseline_skips_a_line_that_deselected_questions(
        pytester: pytest.Pytester, workers: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole run, then a `-k` run of q00..q19 (its line records 20 of 40 deselected), then
    a run that drops q20..q39 to abstentions: paired with the `-k` line it passed (20 pairs,
    none changed); paired with the whole line it fails."""
    project(pytester)
    history = "--ragate-history=h.jsonl"
    assert run_pytester(pytester, workers, "gs", history).ret == 0
    k = run_pytester(pytester, workers, "gs", history, "-k", "floor or q0 or q1",
                     "--ragate-report=k.md")
    assert k.ret == 0, k.stdout.str()
    assert ("Run: **PARTIAL**: mini: 20 of 40 questions deselected (-k or -m)\n"
            in (pytester.path / "k.md").read_text())
    lines = [json.loads(x) for x in (pytester.path / "h.jsonl").read_text().splitlines()]
    assert [x["status"] for x in lines] == ["passed", "partial"]
    assert len(lines[1]["gaps"]["deselected"]) == 20 and lines[1]["population"] == N
    monkeypatch.setenv("RAGATE_TEST_DROP", "1")
    result = run_pytester(pytester, workers, "gs", "--ragate-baseline=h.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    result.stdout.fnmatch_lines([
        "*regression?abstention_accuracy? FAILED*",
        "*significant drop: abstention_accuracy 1.00 → 0.50*history line h.jsonl:1 *"])


# --- case 4: rejudge over part of a run --------------------------------------------------------


@WORKERS
def test_rejudge_of_a_k_run_names_the_questions_it_did_not_judge(
        pytester: pytest.Pytester, workers: str) -> None:
    """The unasked questions are named as not judged, and every floor counting one is not
    decided under either judge: rejudge decides through the gate's own decide_run over the
    run's population, in which the deselected questions are gaps, so the floor is skipped
    under both judges, never passed."""
    judged_project(pytester)
    k = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:current.json",
                     "--ragate-results=res.jsonl", "-k", "floor or q0 or q1")
    assert k.ret == 0, k.stdout.str()
    unasked = JUDGED_N - 20
    result = rejudge(pytester, "--judge", "fixture:same.json")
    assert result.exit_code == 1, result.output
    assert (f"- not judged: {unasked} questions the run never asked (goldset mini: {unasked} "
            f"of {JUDGED_N} questions deselected (-k, -m or --lf): q20, q21, q22, q23); "
            "neither judge graded them") in result.output
    assert result.output.splitlines()[-1].startswith(
        "ragate rejudge: the judge change moves the gate (1 reason)")
    [comparison] = json.loads(rejudge(pytester, "--judge", "fixture:same.json",
                                      "--json").output)
    assert comparison["not_judged"].startswith(f"not judged: {unasked} questions")
    floors = {f["floor"]: (f["current"], f["candidate"]) for f in comparison["floors"]}
    assert "floor[faithfulness]" in floors, floors
    assert all("passed" not in outcomes for outcomes in floors.values()), floors


SEQUENTIAL_RUN = ("--ragate-sequential", "on", "--ragate-sequential-seed", "7")
SEQUENTIAL_N = 100
# low enough (judge_coverage too) that every floor is decided well before the last question,
# so that asking those questions again (the drift check) costs less than asking the rest
SEQUENTIAL_FLOOR = "[floors]\nfaithfulness = 0.3\njudge_coverage = 0.5\n"


def test_rejudge_of_a_sequential_run_that_stopped_early(pytester: pytest.Pytester) -> None:
    """A sequential run that stopped before its last question: the candidate is held to the
    questions asked, and the rest are named as not judged. Answers are paced (as
    tests/test_sequential.py's), so the stop is found before the last question even when
    the machine is busy and verdicts come late."""
    write_many(pytester.path / "gs", SEQUENTIAL_N, SEQUENTIAL_FLOOR)
    toml = pytester.path / "gs" / "ragate.toml"  # 100 questions: too few for the default
    toml.write_text("sequential_gaps = 0.5\n" + toml.read_text())  # bound ever to stop
    pytester.makeconftest(planned(paced({}, SEQUENTIAL_N)) + FIXTURE_JUDGE_CONFTEST)
    qids = [f"q{i:02d}" for i in range(SEQUENTIAL_N)]
    (pytester.path / "current.json").write_text(json.dumps({"judge_id": "current", "answers": {
        q: {"statements": ["s"], "supported": [True]} for q in qids}}))
    (pytester.path / "same.json").write_text(json.dumps({"judge_id": "same", "answers": {
        q: {"statements": ["s"], "supported": [True]} for q in qids}}))
    ran = run_pytester(pytester, "0", "gs", "--ragate-judge=fixture:current.json",
                       "--ragate-results=res.jsonl", *SEQUENTIAL_RUN)
    assert ran.ret == 0, ran.stdout.str()
    rows = [json.loads(x) for x in (pytester.path / "res.jsonl").read_text().splitlines()
            if '"question_id"' in x]
    skipped = [r["question_id"] for r in rows if r["status"] == "skipped"]
    assert 0 < len(skipped) < SEQUENTIAL_N, "the run asked every question: no early stop"
    result = rejudge(pytester, "--judge", "fixture:same.json")
    assert result.exit_code == 1, result.output
    assert (f"- not judged: {len(skipped)} questions the run never asked (goldset mini: a "
            f"sequential run that stopped after asking {SEQUENTIAL_N - len(skipped)} of "
            f"{SEQUENTIAL_N} questions (--ragate-sequential)") in result.output


# --- case 5: a run in which nothing ran, or part ran, writes no PASS anywhere ------------------


@WORKERS
def test_a_k_floor_run_writes_no_pass(pytester: pytest.Pytester, workers: str) -> None:
    """Every question deselected, the floor skipped: NOTHING RAN in every output (`-k`
    matching nothing is tests/test_fail_closed_outputs.py's; `--lf` after a failed floor
    fails it, tests/test_fail_closed_floors.py)."""
    project(pytester)
    floor = run_pytester(pytester, workers, "gs", "-k", "floor", *OUTPUTS)
    assert floor.ret == 0 and "1 skipped" in floor.stdout.str()  # the floor: not decided
    badge = "NOTHING RAN: mini: 40 of 40 questions deselected (-k or -m)"
    no_pass_anywhere(pytester, badge)
    floor.stdout.fnmatch_lines(["mini: NOTHING RAN: 40 of 40 questions deselected*not a PASS*"])


# --- issue 39, case 6: with the key, unsigned files are refused --------------------------------


def test_with_the_key_an_unsigned_file_is_refused_and_a_signed_one_read(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project(pytester)
    assert run_pytester(pytester, "0", "gs", "--ragate-results=plain.jsonl").ret == 0
    monkeypatch.setenv("RAGATE_RESULTS_KEY", "a key for tests")
    signed = run_pytester(pytester, "0", "gs", "--ragate-results=signed.jsonl",
                          "--ragate-baseline=plain.jsonl")
    assert signed.ret == pytest.ExitCode.USAGE_ERROR
    signed.stderr.fnmatch_lines(["ERROR: --ragate-baseline: plain.jsonl: "
                                 "ragate_trailer.signature: the file is not signed, and "
                                 "RAGATE_RESULTS_KEY is set*"])
    assert run_pytester(pytester, "0", "gs", "--ragate-results=signed.jsonl").ret == 0
    assert '"signature": "' in (pytester.path / "signed.jsonl").read_text().splitlines()[-1]
    assert "a key for tests" not in (pytester.path / "signed.jsonl").read_text()
    decided = run_here(pytester, "decide", "signed.jsonl", "--", "gs",
                       RAGATE_RESULTS_KEY="a key for tests")
    assert decided.returncode == 0, decided.stdout + decided.stderr
    wrong = run_here(pytester, "decide", "signed.jsonl", "--", "gs",
                     RAGATE_RESULTS_KEY="another key")
    assert wrong.returncode == 1 and "signature is not RAGATE_RESULTS_KEY's" in wrong.stdout
