"""An adversary against the gate: systems, judges, inputs and faults that try to turn a run
green that should not be, each run with and without `-n 2` and held to its exit status and
message. A green gate means every member of every floor's population has a result; nothing
here may pass by being skipped (none of these tests skips itself)."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets.sealed import Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from tests.conftest import (
    BASE_TOML,
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    WORKERS_SHARED,
    both_routes,
    esc,
    expect,
    junit_cases,
    results_rows,
    rows_of,
    run_command,
    run_pytester,
    said,
    write_goldset,
)
from tests.test_plugin import SYSTEM

USAGE, INTERRUPTED = pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED


def collection_failed(workers: str) -> pytest.ExitCode:
    """A collection error stops plain pytest (2); under xdist the run reports it and exits 1."""
    return INTERRUPTED if workers == "0" else pytest.ExitCode.TESTS_FAILED


def write_many(root: Path, n: int, floors: str) -> None:
    """A goldset of n answerable questions q00.. whose evidence is m1 turns 2-3."""
    write_goldset(root, floors=floors, questions=[
        {"question_id": f"q{i:02d}", "kind": "single_doc", "question": f"What about "
         f"q{i:02d}?"} for i in range(n)], expected=[
        {"question_id": f"q{i:02d}", "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(n)])


# A system whose behaviour per question id is a line of Python in BEHAVIOUR (default: cite
# the right context once). `right` and `wrong` are contexts of m1 turns 2-3 and 8-9.
PLANNED = '''
import os, signal, time
import pytest
from pytest_ragate import Answer, Citation, Context

right = Context(context_id="right", doc_id="m1", first_unit=2, last_unit=3, text="the budget",
                distance=0.2)
wrong = Context(context_id="wrong", doc_id="m1", first_unit=8, last_unit=9, text="lunch",
                distance=0.3)

def cite(*contexts, times=1):
    return Answer(text="an answer", contexts=list(dict.fromkeys(contexts)),
                  citations=[Citation(context_id=c.context_id) for c in contexts] * times)

BEHAVIOUR = {behaviour}

@pytest.fixture
def ragate_system():
    def answer(text):
        with open("ran.txt", "a") as log:
            log.write(text + "\\n")
        qid = text.split()[-1].rstrip("?")
        return eval(BEHAVIOUR.get(qid, "cite(right)"))
    return answer
'''


def planned(behaviour: dict[str, str]) -> str:
    return PLANNED.format(behaviour=repr(behaviour))


# --- 1. a crashed worker --------------------------------------------------------------------

def scripted_judge(score_body: str, preamble: str = "") -> str:
    """A conftest fragment: a `ragate_judge` asked for faithfulness only, whose `score` runs
    `score_body` (with `item` and `metric` in scope)."""
    body = textwrap.indent(textwrap.dedent(score_body).strip(), " " * 8)
    return f"""
{preamble}
class ScriptedJudge:
    judge_id = "scripted"
    metrics = ("faithfulness",)
    def prompt_hash(self, metric):
        return "v1"
    async def score(self, item, metric):
{body}

@pytest.fixture(scope="session")
def ragate_judge():
    return ScriptedJudge()
"""


# verdicts that take a while, so questions wait (reports held) while others run
SLOW_JUDGE = scripted_judge("""
    import asyncio
    await asyncio.sleep(0.4)
    return 0.9
""")


@WORKERS
def test_a_crashed_worker_fails_the_gate_and_names_the_question(
        pytester: pytest.Pytester, workers: str) -> None:
    write_many(pytester.path / "gs", 22,
               floors="[floors]\nabstention_accuracy = 0.5\nfaithfulness = 0.5\n")
    pytester.makeconftest(planned({"q07": "os.kill(os.getpid(), signal.SIGKILL)"})
                          + SLOW_JUDGE)
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", "--junitxml=j.xml",
                          "--ragate-report=r.md", "--ragate-history=h.jsonl", "--ragate-cache=off",
                          process=True)
    if workers == "0":  # the one process died with the question: nothing can claim a pass
        assert result.ret not in (0, 1) and not (pytester.path / "r.jsonl").exists()
        assert not (pytester.path / "j.xml").exists()
        return
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result,
        "*crashed q07 (worker 'gw*' crashed while running 'gs/ragate.toml::q07')*",
        "FAILED gs/ragate.toml::q07 - *crashed*",
        "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: * of 22 questions "
        "have no result*",
    )
    rows = rows_of(pytester.path / "r.jsonl")
    assert sorted(rows) == [f"q{i:02d}" for i in range(22)]  # every question has its row
    assert rows["q07"]["status"] == "error" and "crashed" in rows["q07"]["error"]
    scored = [q for q, r in rows.items() if r["status"] == "scored"]
    assert "q21" in scored and len(scored) >= 14  # the rest still ran, on a new worker
    lost = [q for q, r in rows.items() if r["status"] == "error" and q != "q07"]
    for qid in lost:  # a held report lost with its worker is a failed test, not a silence
        result.stdout.fnmatch_lines([f"FAILED gs/ragate.toml::{qid} - no result: *"])
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[abstention_accuracy]"]["outcome"] == "failure"
    assert cases["gs.ragate.toml::q07"]["outcome"] == "error"  # xdist reports a crash so
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()
    line = json.loads((pytester.path / "h.jsonl").read_text())
    assert line["status"] == "failed" and line["gaps"]["crashed"] == ["q07"]
    assert line["floors"]["abstention_accuracy"]["outcome"] == "failed"


# --- 2. sealed answers without the key -------------------------------------------------------

@WORKERS
def test_a_sealed_goldset_without_its_key_fails(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    root = write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.1\n")
    pytester.makeconftest(SYSTEM)
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    monkeypatch.delenv("RAGATE_SEAL_KEY", raising=False)
    result = run_pytester(pytester, workers, "gs", "--ragate-report=r.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result,
        "FAILED gs/ragate.toml::floor[evidence_recall] - sealed: set RAGATE_SEAL_KEY to score "
        "4 of 4 questions*")
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()


def test_a_sealed_goldset_without_its_key_skips_when_told_and_passes_with_it(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a run told to skip says, and the key's run passing: the controller's reporting
    of what the test above decides under -n 0 and -n 2 (here at -n 0)."""
    root = write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.1\n")
    pytester.makeconftest(SYSTEM)
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    workers = "0"
    # a fork's job: the secret it cannot see is set but empty; told to skip, it skips, and
    # says the key is empty in its header, its summary and every report's coverage line
    monkeypatch.setenv("RAGATE_SEAL_KEY", "")
    skipped = run_pytester(pytester, workers, "gs", "--ragate-report=r.md",
                           "-o", "ragate_sealed_without_key=skip")
    assert skipped.ret == pytest.ExitCode.OK
    expect(skipped,
        "SKIPPED * not decided: 4 sealed and no RAGATE_SEAL_KEY "
        "(ragate_sealed_without_key = \"skip\")*")
    said = [line for line in skipped.outlines if line.startswith("ragate: RAGATE_SEAL_KEY is "
                                                                 "set but empty")]
    assert len(said) == 2 and "floors skipped" in said[0]  # the header and the summary
    report = (pytester.path / "r.md").read_text()
    assert "4 sealed (q1, q2, q3, q4; RAGATE_SEAL_KEY is set but empty)" in report
    # skipped, not decided: no output says PASS (issue 38), none says FAIL either
    assert "Run: **NOTHING RAN**" in report

    monkeypatch.setenv("RAGATE_SEAL_KEY", "s3cret")
    assert run_pytester(pytester, workers, "gs").ret == pytest.ExitCode.OK


# --- 3. repeated citations ------------------------------------------------------------------

@WORKERS
def test_repeating_a_right_citation_cannot_outvote_the_wrong_ones(
        pytester: pytest.Pytester, workers: str) -> None:
    write_many(pytester.path / "gs", 6, floors="[floors]\ncitation_accuracy = 0.5\n")
    pytester.makeconftest(planned({"q00": "cite(right, times=50)",
                                   **{f"q0{i}": "cite(wrong)" for i in range(1, 6)}}))
    result = run_pytester(pytester, workers, "gs", "--ragate-ci=strict", "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*citation_accuracy 0.17, 95% lower bound 0.00 < floor 0.50 "
                                 "(ragate_ci = strict) · n=6 cited answers*"])
    loud = rows_of(pytester.path / "r.jsonl")["q00"]
    assert (loud["citations"], loud["duplicate_citations"]) == (1, 49)


# --- 4. judges that score out of range: 13.'s odd-judge (a model judge that finds nothing to
# judge, RAGAS's empty statement list: q10 of tests/test_fail_closed_judges.py's run) ---------

ODD_JUDGE = scripted_judge("return ODD[item.question_id]", preamble="""
ODD = {"q00": 1.5, "q01": float("inf"), "q02": -0.5, "q03": "0.7", "q04": True,
       "q05": float("nan")}
""")


# --- 6. contexts outside the corpus, pools that hold everything: 13. ----------------------------

EVERYTHING = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture
def ragate_system():
    """Returns every turn of every document, the evidence last: a pool that 'finds' it all."""
    def answer(text):
        first = [("m2", t) for t in range(5)]  # no evidence among the first five
        turns = first + [(d, t) for d, n in (("m1", 12), ("m2", 12), ("m3", 6))
                         for t in range(n) if (d, t) not in first]
        contexts = [Context(context_id=f"{d}:{t}", doc_id=d, first_unit=t, last_unit=t,
                            distance=0.1) for d, t in turns]
        if text.endswith("q4?"):
            return Answer.abstain(contexts)
        return Answer(text="x", contexts=contexts,
                      citations=[Citation(context_id=contexts[0].context_id)])
    return answer
'''


# --- 7. outputs that collide or cannot be written ----------------------------------------------

COLLISIONS = {
    "results is the junit file": (["--ragate-results=out/a", "--junitxml=out/a"],
                                  "--junitxml and --ragate-results all write"),
    "report is the html": (["--ragate-report=a.md", "--ragate-html=a.md"],
                           "--ragate-report and --ragate-html all write"),
    "history is the results file": (["--ragate-history=h.jsonl", "--ragate-results=h.jsonl"],
                                    "--ragate-results and --ragate-history all write"),
    "the baseline is overwritten": (["--ragate-baseline=base.jsonl",
                                     "--ragate-results=base.jsonl"],
                                    "--ragate-baseline base.jsonl is also written by "
                                    "--ragate-results"),
    "a directory": (["--ragate-results=adir"], "is a directory"),
    "under a file": (["--ragate-report=afile/report.md"], "is a file, not a folder"),
}


@WORKERS
@pytest.mark.parametrize("case", COLLISIONS, ids=list(COLLISIONS))
def test_outputs_that_collide_or_cannot_be_written_stop_the_run_first(
        pytester: pytest.Pytester, workers: str, case: str) -> None:
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(planned({}))
    (pytester.path / "adir").mkdir()
    (pytester.path / "afile").write_text("")
    (pytester.path / "base.jsonl").write_text(json.dumps({
        "goldset": "mini", "question_id": "q1", "kind": "single_doc", "index": 0,
        "must_abstain": False, "evidence_spans": 1, "eval_version": "7"}) + "\n")
    args, message = COLLISIONS[case]
    result = run_pytester(pytester, workers, "gs", *args)
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"*{message}*"])
    assert not (pytester.path / "ran.txt").exists()  # found before any question was asked


# --- 8. one goldset, two routes (one name, two goldsets: 12.) -----------------------------------

@WORKERS
def test_one_folder_through_two_routes_is_two_runs_never_pooled(
        pytester: pytest.Pytester, workers: str) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nabstention_accuracy = 0.5\n")
    both_routes(pytester, planned({"q4": "Answer.abstain()"}))
    result = run_pytester(pytester, workers, "gs", "test_rag.py", "--ragate-history=h.jsonl")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*mini (gs/ragate.toml)*abstention_accuracy*0.50*1.00*4*",
                                 "*mini (test_rag.py::test_mine)*abstention_accuracy*0.50*"
                                 "1.00*4*"])
    lines = [json.loads(x) for x in (pytester.path / "h.jsonl").read_text().splitlines()]
    assert sorted(line["route"] for line in lines) == ["gs/ragate.toml",
                                                      "test_rag.py::test_mine"]
    assert all(line["questions"] == 4 for line in lines)


# --- 10. the built-in parts are never used in place of the user's: 13.'s anchor folders -------

ANCHORS = [
    {"anchor_id": "found", "kind": "retrieval_miss", "claim": "the budget",
     "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 3}, "xfail": "was missed"},
    {"anchor_id": "missed", "kind": "retrieval_miss", "claim": "the colour",
     "evidence": {"doc_id": "m2", "first_unit": 5, "last_unit": 6}, "xfail": "still missed"},
]


# --- 11. weak spots ---------------------------------------------------------------------------

@WORKERS
@pytest.mark.parametrize("spec, says", [
    ("fixtur:judge.json", "--ragate-judge 'fixtur:judge.json': expected fixture:PATH or "
                          "ragas:MODEL"),
    ("fixture:missing.json", "--ragate-judge fixture:missing.json: cannot read the fixture "
                             "judge file (No such file or directory)"),
    ("fixture:yes.json", "yes.json: answers.q1.supported[0]: Input should be a valid "
                         "boolean"),
    ("fixture:bom.json", "bom.json: the file starts with a UTF-8 byte-order mark (BOM)"),
], ids=["typo", "missing", "yes-for-true", "bom"])
def test_a_bad_judge_is_one_usage_error_before_anything_runs(
        pytester: pytest.Pytester, workers: str, spec: str, says: str) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n")
    pytester.makeconftest(planned({}))
    verdicts = {"judge_id": "v", "answers": {"q1": {"statements": ["s"], "supported": ["yes"]}}}
    (pytester.path / "yes.json").write_text(json.dumps(verdicts))
    (pytester.path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(
        {"judge_id": "v", "answers": {}}).encode())
    result = run_pytester(pytester, workers, "gs", f"--ragate-judge={spec}")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(esc(f"*{says}*"))
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (pytester.path / "ran.txt").exists()


@WORKERS
def test_deselected_questions_skip_the_floor_and_say_how_many(pytester: pytest.Pytester,
                                                              workers: str) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\ncitation_accuracy = 0.5\n")
    pytester.makeconftest(planned({"q2": "cite(wrong)", "q3": "cite(wrong)",
                                   "q4": "Answer.abstain()"}))
    result = run_pytester(pytester, workers, "gs", "-k", "q1 or floor", "--ragate-report=r.md")
    assert result.ret == pytest.ExitCode.OK  # a skip: the user chose the part, and is told
    expect(result,
        "SKIPPED * not decided: 3 of 4 questions deselected (-k or -m): q2, q3, q4; a "
        "floor is decided over its whole population*")
    assert "4 questions: 1 scored, 3 deselected (q2, q3, q4)" in (pytester.path / "r.md"
                                                                  ).read_text()


@WORKERS
def test_every_output_agrees_when_a_question_fails_and_the_floors_hold(
        pytester: pytest.Pytester, workers: str) -> None:
    """`question_outcome = "assert"`: a wrong answer fails its item while every floor holds.
    The exit status is 1, so no report may say PASS."""
    write_goldset(pytester.path / "gs", toml='question_outcome = "assert"\n' + BASE_TOML,
                  floors="[floors]\nabstention_accuracy = 0.5\n")
    pytester.makeconftest(planned({
        "q2": "cite(wrong)", "q4": "Answer.abstain()",
        "q3": "cite(Context(context_id='c', doc_id='m1', first_unit=0, last_unit=0))"}))
    result = run_pytester(pytester, workers, "gs", "--junitxml=j.xml", "--ragate-report=r.md",
                          "--ragate-html=r.html", "--ragate-history=h.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, "PASSED gs/ragate.toml::floor[abstention_accuracy]",
                                    "FAILED gs/ragate.toml::q2 - *q2 is wrong*")
    failures = [c for c in ET.parse(pytester.path / "j.xml").getroot().iter("failure")]
    assert len(failures) == 1
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()
    html = (pytester.path / "r.html").read_text()
    assert '<h1>ragate report <span class="badge o-failed">FAIL</span></h1>' in html
    assert json.loads((pytester.path / "h.jsonl").read_text())["status"] == "failed"


def test_ragate_compare_refuses_to_compare_a_run_with_itself(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({
        "goldset": "g", "question_id": "q1", "kind": "single_doc", "index": 0,
        "must_abstain": False, "evidence_spans": 1, "eval_version": "1"}) + "\n")
    (tmp_path / "link.jsonl").symlink_to(results)
    for baseline in (results, tmp_path / "link.jsonl"):
        refused = CliRunner().invoke(main, ["compare", str(baseline), str(results)])
        assert refused.exit_code == 1
        assert "are the same file: a run compared with itself can show no change" in (
            refused.output)


@pytest.mark.parametrize("change, field, says", [
    (lambda rows: rows[0]["evidence"][0].update(first_unit=True), "evidence[0].first_unit",
     "Input should be a valid integer"),
    (lambda rows: rows[0]["evidence"][0].update(last_unit="3"), "evidence[0].last_unit",
     "Input should be a valid integer"),
    (lambda rows: rows[0].update(gist=1), "gist", "Input should be a valid string"),
], ids=["true for a turn", "a string for a turn", "a number for a gist"])
def test_a_value_of_the_wrong_type_is_rejected_not_coerced(
        tmp_path: Path, change: Any, field: str, says: str) -> None:
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError
    from tests.conftest import expected_rows

    rows = expected_rows()
    change(rows)
    root = write_goldset(tmp_path / "gs", expected=rows)
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    [problem] = caught.value.problems
    assert (problem.line, problem.question_id, problem.field) == (1, "q1", field)
    assert says in problem.message


def test_a_kind_typo_and_a_floor_for_an_absent_kind_fail_validate(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from tests.conftest import question_rows

    typo = write_goldset(tmp_path / "typo", questions=question_rows(
        [("q1", "singel_doc"), ("q2", "single_meeting"), ("q3", "multi_doc"),
         ("q4", "unanswerable")]), floors="[floors.kind.cross_meeting]\nevidence_recall = 0.5\n"
        "citation_accuracy = 0.5\n")
    absent = write_goldset(tmp_path / "absent", floors='kinds = ["policy"]\n[floors.kind.policy]\n'
                           "evidence_recall = 0.5\n")
    for root, field, says in (
            (typo, "questions.jsonl:1: kind", "'singel_doc' (1 question) is not a known "
             "kind (single_doc, multi_doc, unanswerable) and not declared in "
             "[questions] mix or kinds"),
            # a kind's name before 0.1: one error per cause, naming the new name
            (typo, "questions.jsonl:2: kind", "'single_meeting' (1 question) was renamed "
             "'single_doc'"),
            (typo, "ragate.toml: floors.kind.cross_meeting", "kind 'cross_meeting' was renamed "
             "'multi_doc'\n"),
            (absent, "ragate.toml: floors.kind.policy.evidence_recall",
             "no question has kind 'policy'")):
        result = CliRunner().invoke(main, ["validate", str(root)])
        assert result.exit_code == 1
        assert f"{field}: {says}" in result.output, result.output


@WORKERS
def test_vacuous_verdicts_are_kept_and_counted_in_every_report(pytester: pytest.Pytester,
                                                             workers: str) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n")
    pytester.makeconftest(planned({"q4": "Answer.abstain()"}) + FIXTURE_JUDGE_CONFTEST)
    verdicts = {q: {"statements": [], "supported": []} for q in ("q1", "q2", "q3")}
    (pytester.path / "judge.json").write_text(json.dumps({"judge_id": "v",
                                                          "answers": verdicts}))
    result = run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json",
                          "--ragate-report=r.md", "--ragate-results=r.jsonl", "--ragate-cache=off")
    expect(result, "*judge fixture:v: 6/6 verdicts, judge failures 0, vacuous 3, cache hits 0*")
    report = (pytester.path / "r.md").read_text()
    assert "vacuous 3" in report and report.count("vacuous: faithfulness") == 3
    assert rows_of(pytester.path / "r.jsonl")["q1"]["judge_vacuous"] == ["faithfulness"]
    assert result.ret == pytest.ExitCode.OK


@WORKERS
def test_a_decorated_test_never_passes_anchor_floors_it_did_not_check(
        pytester: pytest.Pytester, workers: str) -> None:
    """Anchors are the file route's. A @ragate.goldset test lists the goldset's anchor floors
    as skipped, with where they are decided; collected beside it, the file route fails them."""
    write_goldset(pytester.path / "gs", anchors=ANCHORS,
                  floors="[floors.anchors.retrieval_miss]\nevidence_recall = 1.0\n")
    both_routes(pytester, planned({}))
    alone = run_pytester(pytester, workers, "test_rag.py", "-m", "rag_gate")  # asked: -n 2
    assert alone.ret == pytest.ExitCode.OK
    expect(alone, "SKIPPED * not decided here: anchors are checked where the goldset's "
                  "ragate.toml is collected*")
    both = run_pytester(pytester, workers, "test_rag.py", "gs")
    assert both.ret == pytest.ExitCode.TESTS_FAILED  # `missed` is not in the system's pool
    expect(both, "FAILED gs/ragate.toml::floor[anchors:retrieval_miss:evidence_recall] - "
                 "evidence_recall 0.50 < floor 1.00*")


# --- 12. goldsets that cannot be collected: one run holds them all --------------------------------
# Each folder is a goldset wrong in its own way, under a name of its own (only a and b share
# one); a collection error names its folder, so each case reads its own line of the one run
# per worker count.

LATIN1_QUESTION = b'{"question_id": "q1", "kind": "single_doc", "question": "Caf\xe9?"}\n'
LATIN1_TURN = b'{"doc_id": "m1", "unit": 0, "text": "ok"}\n{"doc_id": "m1", "unit": 1, ' \
    b'"text": "na\xefve"}\n'

# folder -> the file written over, its bytes, and what the error says after the file's path
NOT_UTF8 = {
    "latin1-question": (
        "questions.jsonl", LATIN1_QUESTION,
        f"is not UTF-8: byte 0xe9 at line 1, column {LATIN1_QUESTION.index(0xE9) + 1} (save "
        "it as UTF-8)"),
    "bom": ("expected.jsonl", b"\xef\xbb\xbf" + b'{"question_id": "q1"}\n',
            "starts with a UTF-8 byte-order mark (BOM): save it as UTF-8 without a BOM"),
    "utf16": ("ragate.toml", b"\xff\xfe" + BASE_TOML.replace('"mini"', '"utf16"').encode(
        "utf-16-le"), "starts with a UTF-16 byte-order mark (BOM)"),
    "latin1-corpus": (
        "corpus/meetings.jsonl", LATIN1_TURN,
        f"is not UTF-8: byte 0xef at line 2, column "
        f"{LATIN1_TURN.splitlines()[1].index(0xEF) + 1}"),
}
# half of a surrogate pair as a JSON escape: a goldset's text is refused where it is, never changed
HALF_PAIR = b'{"question_id": "q1", "kind": "single_doc", "question": "2 euros \\ud83d?"}\n'
EMPTY = {"empty-corpus": "corpus.paths: the corpus has no documents",
         "no-questions": "questions.file: has no questions"}


def named(folder: str) -> str:
    return BASE_TOML.replace('name = "mini"', f'name = "{folder}"')


@pytest.fixture(scope="module")
def uncollectable(workers: str, tmp_path_factory: pytest.TempPathFactory,
                  ) -> tuple[Path, pytest.LineMatcher, int]:
    """The run the cases below share (one per worker count): its folder, what it printed and
    its exit status."""
    root = tmp_path_factory.mktemp(f"uncollectable-n{workers}")
    for folder, (where, data, _) in NOT_UTF8.items():
        (write_goldset(root / folder, toml=named(folder)) / where).write_bytes(data)
    write_goldset(root / "empty-corpus", toml=named("empty-corpus"), corpus=[], questions=[],
                  expected=[], floors="[floors]\nabstention_accuracy = 1.0\n")
    write_goldset(root / "no-questions", toml=named("no-questions"), questions=[],
                  expected=[], floors="[floors]\nabstention_accuracy = 1.0\n")
    write_goldset(root / "a")
    write_goldset(root / "b")
    (write_goldset(root / "half-pair", toml=named("half-pair")) / "questions.jsonl").write_bytes(
        HALF_PAIR)
    (root / "conftest.py").write_text(planned({}))
    done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv",
                       *NOT_UTF8, *EMPTY, "a", "b", "half-pair")
    return root, pytest.LineMatcher(done.stdout.splitlines()), done.returncode


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
@pytest.mark.parametrize("folder", list(NOT_UTF8))
def test_a_file_that_is_not_utf8_names_itself_and_what_is_wrong(
        uncollectable: tuple[Path, pytest.LineMatcher, int], workers: str, folder: str) -> None:
    _, stdout, ret = uncollectable
    assert ret == collection_failed(workers)
    where, _, says = NOT_UTF8[folder]
    stdout.fnmatch_lines([f"*/{folder}/{where}: <file>: {says}*"])
    stdout.fnmatch_lines([f"ERROR {folder}/ragate.toml*"])  # its own error, not another's


@pytest.mark.heavy
@WORKERS_SHARED
@pytest.mark.parametrize("folder", list(EMPTY))
def test_an_empty_corpus_or_question_set_is_a_collection_error(
        uncollectable: tuple[Path, pytest.LineMatcher, int], workers: str, folder: str) -> None:
    _, stdout, ret = uncollectable
    assert ret == collection_failed(workers)
    stdout.fnmatch_lines([f"*/{folder}/*: {EMPTY[folder]}*"])
    stdout.fnmatch_lines([f"ERROR {folder}/ragate.toml*"])


@pytest.mark.heavy
@WORKERS_SHARED
def test_half_a_surrogate_pair_in_a_goldset_file_says_where_and_what_to_do(
        uncollectable: tuple[Path, pytest.LineMatcher, int], workers: str) -> None:
    """Issue 46 item 1, the goldset's side: its author's text is refused, one line that says
    where, never changed (nor a parser's "unexpected end of hex escape")."""
    _, stdout, ret = uncollectable
    assert ret == collection_failed(workers)
    column = HALF_PAIR.index(b"\\ud83d") + 1
    stdout.fnmatch_lines([f"*/half-pair/questions.jsonl:1: <json>: column {column}: \\ud83d is "
                          "half of a surrogate pair (an emoji or a rare character cut in two), "
                          "which no text can hold: write the whole character, or remove the "
                          "half*", "ERROR half-pair/ragate.toml*"])


@pytest.mark.heavy
@WORKERS_SHARED
def test_two_goldsets_with_one_name_are_a_collection_error(
        uncollectable: tuple[Path, pytest.LineMatcher, int], workers: str) -> None:
    root, stdout, ret = uncollectable
    assert ret == collection_failed(workers)
    stdout.fnmatch_lines([f"*two goldsets are named 'mini': {root / 'a'} (collected by "
                          f"a/ragate.toml) and {root / 'b'} (collected by b/ragate.toml)*"])


# --- 13. faulty systems and judges: one run holds them all ---------------------------------------
# Each folder is a goldset (named as its folder) whose own conftest.py holds its system (and
# judge): a fault and what it says are its goldset's items and rows, so each case reads its own
# of the one run per worker count (with ragate_system_timeout = 3 for the folder that sleeps: long
# enough that no other folder's system meets it on a busy machine).

# distances: q1, q2 and q3 each return a context whose distance is no number
BAD_DISTANCES = {"float('nan')": "q1", "float('inf')": "q2", "True": "q3"}
FAULTY = {
    # plain dicts, so the check is ragate's and not the system's own Context(...)
    "distances": ("[floors]\nabstention_accuracy = 0.5\n", planned({
        qid: "{'text': 'x', 'citations': [{'context_id': 'c'}], 'contexts': [{'context_id': "
             f"'c', 'doc_id': 'm1', 'first_unit': 2, 'last_unit': 3, 'distance': {distance}}}]}}"
        for distance, qid in BAD_DISTANCES.items()})),
    "outside": ("[floors]\nevidence_recall = 0.5\n", planned({
        "q1": "cite(Context(context_id='all', doc_id='m1', first_unit=0, last_unit=10**9))",
        "q2": "cite(Context(context_id='x', doc_id='mX', first_unit=0, last_unit=1))",
        "q3": "cite(right)", "q4": "Answer.abstain()"})),
    "timeout": ("[floors]\nabstention_accuracy = 0.5\n", planned({"q2": "time.sleep(30)"})),
    "xfail": ('[floors]\nevidence_recall = { min = 0.99, xfail = "known misses" }\n',
              planned({"q3": "1 / 0", "q4": "Answer.abstain()"})),
    "everything": ('[floors]\nevidence_recall = 0.9\n"evidence_recall@5" = 0.9\n'
                   '"mrr@10" = 0.5\n', EVERYTHING),
    # half a surrogate pair in an answer and a context (q1), in the system's error (q2) and
    # in the judge's reply (q3): replaced and counted, never a crash
    "odd-text": ("[floors]\nfaithfulness = 0.5\n", planned({
        "q1": "Answer(text='2 euros \\ud83d', contexts=[Context(context_id='right', "
              "doc_id='m1', first_unit=2, last_unit=3, text='\\udc00 budget')], "
              "citations=[Citation(context_id='right')])",
        "q2": "exec('raise RuntimeError(\"boom \\\\ud800\")')"}) + scripted_judge(r"""
        if item.question_id == "q3":
            raise ValueError("the judge replied \ud83d")
        return 0.9""")),
}
# the user's system finds the budget (m1 2-3) for every text, never the colour (m2 5-6)
ANCHORED = {  # folder -> its anchors, floors and conftest
    "anchors": (ANCHORS, "", planned({})),
    "anchor-pool": ([{**ANCHORS[1], "xfail": None}], "",
                    planned({}).replace('"cite(right)"', '"Answer.abstain()"')),
    "anchor-raises": (ANCHORS, '[floors.anchors.retrieval_miss]\nevidence_recall = '
                      '{ min = 0.9, xfail = "misses" }\n', planned({}) + """
@pytest.fixture
def ragate_retriever():
    def retrieve(claim):
        raise ConnectionError("the vector store is down")
    return retrieve
"""),
}
WHAT_IT_IMPORTS = """
def pytest_sessionfinish(session):
    import sys
    heavy = [m for m in ("pytest_ragate.builtin_system.retrieval", "chromadb") if m in sys.modules]
    with open("modules.txt", "a") as out:
        out.write(" ".join(heavy or ["clean"]) + "\\n")
"""


@dataclass(frozen=True)
class Faulty:
    """What the shared run printed, its exit status, its rows by (goldset, question), its
    JUnit cases, Markdown report and history lines by goldset, and what each of its processes
    had imported when it ended."""

    stdout: pytest.LineMatcher
    ret: int
    rows: dict[tuple[str, str], dict[str, Any]]
    cases: dict[str, dict[str, object]]
    markdown: str
    history: dict[str, dict[str, Any]]
    loaded: list[str]
    html: str


@pytest.fixture(scope="module")
def faulty(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Faulty:
    root = tmp_path_factory.mktemp(f"faulty-n{workers}")
    for folder, (floors, system) in FAULTY.items():
        write_goldset(root / folder, toml=named(folder), floors=floors)
        (root / folder / "conftest.py").write_text(system)
    write_many(root / "odd-judge", 6, floors="[floors]\nfaithfulness = 0.8\n")
    toml = root / "odd-judge" / "ragate.toml"
    toml.write_text(toml.read_text().replace('name = "mini"', 'name = "odd-judge"'))
    (root / "odd-judge" / "conftest.py").write_text(planned({}) + ODD_JUDGE)
    for folder, (anchors, floors, system) in ANCHORED.items():
        write_goldset(root / folder, toml=named(folder), floors=floors, anchors=anchors)
        (root / folder / "conftest.py").write_text(system)
    (root / "conftest.py").write_text(WHAT_IT_IMPORTS)
    done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", *FAULTY,
                       "odd-judge", *ANCHORED, "--ragate-results=r.jsonl", "--junitxml=j.xml",
                       "--ragate-report=r.md", "--ragate-history=h.jsonl", "--ragate-cache=off",
                       "--ragate-html=r.html", "-o", "ragate_system_timeout=3")
    rows = {(r["goldset"], r["question_id"]): r for r in results_rows(root / "r.jsonl")
            if not r.get("reasked")}
    history = [json.loads(line) for line in (root / "h.jsonl").read_text().splitlines()]
    return Faulty(pytest.LineMatcher(done.stdout.splitlines()), done.returncode, rows,
                  junit_cases(root / "j.xml"), (root / "r.md").read_text(encoding="utf-8"),
                  {line["goldset"]: line for line in history},
                  (root / "modules.txt").read_text().split(),
                  (root / "r.html").read_text(encoding="utf-8"))


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_judge_score_that_is_not_a_number_in_0_1_is_a_judge_failure(faulty: Faulty,
                                                                      workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
        "FAILED odd-judge/ragate.toml::floor[faithfulness] - nothing scored*",
        "FAILED odd-judge/ragate.toml::floor[judge_coverage] - judge_coverage 0.00 < floor "
        "0.95*")
    rows = {q: r for (g, q), r in faulty.rows.items() if g == "odd-judge"}
    assert sorted(rows) == [f"q{i:02d}" for i in range(6)]
    assert all(r["metrics"]["faithfulness"] is None for r in rows.values())
    why = {q: r["judge_failures"]["faithfulness"] for q, r in rows.items()}
    assert why["q00"] == "invalid: faithfulness came back 1.5, outside [0, 1]"
    assert why["q01"] == "invalid: faithfulness came back inf, outside [0, 1]"
    assert why["q03"] == "invalid: faithfulness came back as str '0.7', not a number"
    assert why["q04"] == "invalid: faithfulness came back as bool True, not a number"
    assert why["q05"].startswith("invalid:")


@pytest.mark.heavy
@WORKERS_SHARED
def test_half_a_surrogate_pair_is_replaced_and_counted_never_a_crash(faulty: Faulty,
                                                                   workers: str) -> None:
    """Issue 46 item 1: the run ends with its verdicts and every output written (the results
    file, JUnit, both reports, the history), each odd character shown as U+FFFD."""
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED  # other folders fail; none crashed
    said(faulty.stdout, "PASSED odd-text/ragate.toml::q1", "FAILED odd-text/ragate.toml::q2 - "
         "RuntimeError: boom \ufffd", "*odd-text: the judge failed on q3: *the judge replied "
         "\ufffd*")
    rows = {q: r for (g, q), r in faulty.rows.items() if g == "odd-text"}
    assert rows["q1"]["answer_text"] == "2 euros \ufffd" and rows["q1"]["unencodable"] == 2
    assert rows["q2"]["status"] == "error" and rows["q2"]["unencodable"] == 1
    assert rows["q3"]["judge_failures"]["faithfulness"].endswith("the judge replied \ufffd")
    assert rows["q3"]["unencodable"] == 1 and rows["q1"]["metrics"]["faithfulness"] == 0.9
    assert faulty.cases["odd-text.ragate.toml::q1"]["props"]["unencodable"] == "2"
    assert "2 euros \ufffd" in faulty.markdown and "2 euros \ufffd" in faulty.html
    assert faulty.history["odd-text"]["status"] == "failed"


@pytest.mark.heavy
@WORKERS_SHARED
def test_contexts_outside_the_corpus_are_errors_on_their_rows(faulty: Faulty,
                                                              workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
        "FAILED outside/ragate.toml::q1 - *all: units 0–1000000000 run past the end of m1 "
        "(units 0–11)*",
        "FAILED outside/ragate.toml::q2 - *x: document 'mX' is not in the corpus*",
        "FAILED outside/ragate.toml::floor[evidence_recall] - not decided: 2 of 4 questions "
        "have no result: errored q1*")
    rows = faulty.rows
    assert rows["outside", "q1"]["status"] == rows["outside", "q2"]["status"] == "error"
    assert rows["outside", "q1"]["evidence_spans_found"] == 0


@pytest.mark.heavy
@WORKERS_SHARED
@pytest.mark.parametrize("distance", list(BAD_DISTANCES))
def test_a_distance_that_is_no_number_is_an_error_on_its_row(faulty: Faulty, workers: str,
                                                             distance: str) -> None:
    qid = BAD_DISTANCES[distance]
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout, f"FAILED distances/ragate.toml::{qid} - *{qid}: the system returned "
         "a malformed answer (dict): contexts.0.distance: *")
    assert faulty.rows["distances", qid]["status"] == "error"


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_system_past_its_timeout_is_an_error_on_its_row(faulty: Faulty, workers: str,
                                                          ) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
        "FAILED timeout/ragate.toml::q2 - *q2: the system did not answer within 3 s "
        "(ragate_system_timeout)",
        "FAILED timeout/ragate.toml::floor[abstention_accuracy] - not decided: 1 of 4 "
        "questions*")
    assert faulty.rows["timeout", "q2"]["status"] == "error"


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_errored_question_fails_a_strict_xfail_floor_too(faulty: Faulty, workers: str,
                                                            ) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
        "FAILED xfail/ragate.toml::floor[evidence_recall] - not decided: 1 of 4 questions "
        "have no result: errored q3 (ZeroDivisionError: division by zero)*")
    assert faulty.cases["xfail.ragate.toml::floor[evidence_recall]"]["outcome"] == "failure"


@pytest.mark.heavy
@WORKERS_SHARED
def test_evidence_recall_at_k_does_not_reward_returning_everything(faulty: Faulty,
                                                                   workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
         "PASSED everything/ragate.toml::floor[evidence_recall]",
         "FAILED everything/ragate.toml::floor[evidence_recall@5] - evidence_recall@5 0.00 < "
         "floor 0.90 · n=4 spans*")
    assert {r["contexts"] for (g, _), r in faulty.rows.items() if g == "everything"} == {30}
    assert "median 30, min 30, max 30" in faulty.markdown  # the other folders return 1 or 0


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_rank_metric_floor_reads_each_questions_first_relevant_context(faulty: Faulty,
                                                                          workers: str) -> None:
    """Issue 48 item 3: q1's evidence is first found at rank 8, q3's at 6, q2's past the
    first 10; q4 (unanswerable) is not applicable. The row keeps each context's gain."""
    said(faulty.stdout,
         "FAILED everything/ragate.toml::floor[mrr@10] - mrr@10 0.10 < floor 0.50 · n=3 "
         "questions with evidence*worst: q2 mrr@10 0.00: no relevant context in the first 10; "
         "q1 mrr@10 0.12: first relevant context at rank 8; q3 mrr@10 0.17: first relevant "
         "context at rank 6*")
    rows = {q: r for (g, q), r in faulty.rows.items() if g == "everything"}
    assert rows["q1"]["context_gains"] == [0.0] * 7 + [1.0, 1.0]
    assert "context_gains" not in rows["q4"]  # unanswerable: no context is relevant
    props = faulty.cases["everything.ragate.toml::q1"]["props"]
    assert props["context_gains"] == "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]"


@pytest.mark.heavy
@WORKERS_SHARED
def test_anchors_check_the_pool_of_the_users_own_system(faulty: Faulty, workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
         "XFAIL anchors/ragate.toml::anchor[missed] - still missed",
         "FAILED anchors/ragate.toml::anchor[found] - [XPASS(strict)] was missed*holds now*",
         "*anchors: system: ragate_system (anchors/conftest.py:*) · retriever: inside the "
         "system*")
    assert "system: ragate_system (anchors/conftest.py:" in faulty.markdown
    assert faulty.history["anchors"]["system"].startswith("ragate_system (anchors/conftest.py:")
    # the built-in retriever was never imported, in any process of the run: no model, no index
    assert faulty.loaded and set(faulty.loaded) == {"clean"}


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_anchor_names_the_users_pool_and_how_to_supply_a_retriever(faulty: Faulty,
                                                                      workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    said(faulty.stdout,
         "FAILED anchor-pool/ragate.toml::anchor[missed] - *anchor missed: evidence m2 units "
         "5-6 is not in the pool: nothing (pool: the contexts returned by ragate_system "
         "(anchor-pool/conftest.py:*)); your ragate_system returned no contexts for the "
         "claim*override `ragate_retriever`*")


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_anchor_whose_retriever_raises_is_an_error_not_a_known_miss(faulty: Faulty,
                                                                       workers: str) -> None:
    assert faulty.ret == pytest.ExitCode.TESTS_FAILED
    # the one cause is shown in full once, for whichever anchor reported first (under -n 2
    # their order of arrival), and the floor names both
    said(faulty.stdout,
         "FAILED anchor-raises/ragate.toml::anchor[*] - ConnectionError: the vector store is "
         "down",
         "FAILED anchor-raises/ragate.toml::floor[anchors:retrieval_miss:evidence_recall] - "
         "not decided: 2 of 2 retrieval_miss anchors have no result: errored found, missed*")
