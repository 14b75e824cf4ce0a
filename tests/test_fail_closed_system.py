"""Fail closed, the user's system: the built-in pipeline never stands in for it unasked, a hung
system has a default bound, a question id never takes another item's name, `ragate init`
writes nothing unless it succeeds, and a worker that dies tearing down is not blamed on a
floor. Each case is played by an adversary through pytest or the `ragate` CLI, under `-n 0`
and `-n 2` where xdist workers are involved, and none of these tests skips itself."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.items.provenance import defines_fixture
from pytest_ragate.items.timeouts import SystemTimeout, call_with_timeout
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import repeat_name
from pytest_ragate.settings import GateSettings
from tests.conftest import (
    BASE_TOML,
    EVIDENCE,
    QUESTIONS,
    WORKERS,
    expect,
    expected_rows,
    junit_cases,
    question_rows,
    rows_of,
    run_pytester,
    system_test_in_tests,
    write_goldset,
)
from tests.test_fail_closed import planned

BUILTIN_TOML = BASE_TOML.replace("[corpus]", 'system = "builtin"\n\n[corpus]')
LOW_FLOOR = "[floors]\nabstention_accuracy = 0.0\n"  # the built-in pipeline passes it

# the user's system, under a misspelled name: it would pass, had it been picked up
MISSPELLED = '''
import pytest
from pytest_ragate import Answer


@pytest.fixture
def ragate_sytem():
    return lambda question: Answer.abstain()
'''

ANCHORS = [
    {"anchor_id": "a1", "kind": "retrieval_miss", "claim": "the budget is twelve euros",
     "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 3},
     "xfail": "a known miss"},
]


def n(workers: str) -> tuple[str, ...]:
    """Under -n 2, one goldset's items on one worker, so its floor is that worker's last
    item (xdist's default deal would make that a coin toss)."""
    return ("--dist", "loadfile") if workers == "2" else ()


def no_system_line(name: str, near: str = "") -> str:
    hint = f" (did you mean ragate_system? {near})" if near else ""
    return (f"ERROR gs/ragate.toml::{name} - MissingSystem: {name}: no ragate_system in "
            f"scope{hint}; the built-in pipeline answers only where asked for: `system = "
            "\"builtin\"` in the goldset's ragate.toml, or --ragate-builtin-system")


# --- 1. the built-in pipeline only where asked for -------------------------------------------


@WORKERS
def test_a_misspelled_system_fixture_is_an_error_that_names_it(pytester: pytest.Pytester,
                                                                workers: str) -> None:
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR)
    pytester.makeconftest(MISSPELLED)
    result = run_pytester(pytester, workers, "gs", "--junitxml=j.xml", "--ragate-results=r.jsonl",
                          "--ragate-report=r.md", "--ragate-history=h.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the first question's error in full, the other three said once (tests/test_said_once.py)
    expect(result, no_system_line("q?", "conftest.py:5 defines ragate_sytem"),
           "ERROR gs/ragate.toml::q? and 2 more, as q?: q?, q?, q?",
           "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: 4 of 4 "
           "questions have no result*")
    summary = [line for line in result.outlines if line.startswith("ragate: no ragate_system")]
    assert summary == [  # one line for the run, however many items
        "ragate: no ragate_system in scope for 4 items of gs/ragate.toml, which errored. "
        "Define your system as a `ragate_system` fixture in a conftest.py over the goldset "
        "(docs/your-system.md), or opt in to the built-in pipeline: `system = \"builtin\"` "
        "in the goldset's ragate.toml, or --ragate-builtin-system"]
    assert "Traceback" not in result.stdout.str() and "embedding" not in result.stdout.str()
    cases = junit_cases(pytester.path / "j.xml")
    assert {cases[f"gs.ragate.toml::q{i}"]["outcome"] for i in range(1, 5)} == {"error"}
    assert cases["gs.ragate.toml::floor[abstention_accuracy]"]["outcome"] == "failure"
    rows = rows_of(pytester.path / "r.jsonl")
    assert {r["status"] for r in rows.values()} == {"error"}
    assert rows["q1"]["error"].startswith("MissingSystem: q1: no ragate_system in scope")
    assert "Run: **FAIL**" in (pytester.path / "r.md").read_text()
    assert json.loads((pytester.path / "h.jsonl").read_text())["status"] == "failed"


@WORKERS
def test_a_misspelled_system_over_40_questions_is_said_once_across_the_floors(
        pytester: pytest.Pytester, workers: str) -> None:
    """Issue 36 item 4, measured: the whole output of a misspelled `ragate_system` over 40
    questions is under 8 KB. The first floor's failure names the cause, the others point at
    it (issue 46: a cause many floors share is said once in full), and each counts the
    questions (the FAILURES section printed 8,384 bytes, each floor repeating ten of the 40
    errors, now 1,562); pytest's ERRORS section and short summary show the first question's
    error and say the others once (the whole output 19,384 bytes at -n 0 and 21,551 at
    -n 2, now 4,717 and 4,661). Each question is still an error in JUnit and in the counts."""
    write_goldset(pytester.path / "gs", questions=[
        {"question_id": f"q{i:02d}", "kind": "single_doc", "question": f"q{i}?"}
        for i in range(40)], expected=[{"question_id": f"q{i:02d}", "gist": "g", "evidence": [
            {"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(40)],
        floors="[floors]\nabstention_accuracy = 0.0\ncitation_accuracy = 0.5\n"
               "evidence_recall = 0.5\n")
    pytester.makeconftest(MISSPELLED)
    result = pytester.runpytest_subprocess("gs", "-p", "no:cacheprovider", "-n", workers,
                                           "--ragate-report=r.md", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = "\n".join(result.outlines + result.errlines)
    assert len(out.encode()) < 8000, len(out.encode())
    assert result.parseoutcomes() == {"failed": 3, "errors": 40}
    assert out.count("ERROR at setup of mini::q") == 1
    result.stdout.fnmatch_lines(["ERROR gs/ragate.toml::q* and 38 more, as q*: q*"])
    failures = out.partition("= FAILURES =")[2].partition("ragate: ")[0]
    sections = failures.split("mini::floor[")[1:]
    assert len(sections) == 3
    first, *others = sections  # the cause in full once; the other floors point at it
    assert first.count("no ragate_system in scope") == 1
    for section in others:
        assert "no ragate_system in scope" not in section
        assert f"(said at floor[{first.partition(']')[0]}])" in section
    for section in sections:
        assert "errored q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 30 more" in section
    assert len(failures.encode()) < 2000
    assert (pytester.path / "r.md").read_text().count(
        "MissingSystem: no ragate_system in scope") <= 3  # once a floor, not 40 times
    cases = junit_cases(pytester.path / "j.xml")
    assert [cases[f"gs.ragate.toml::q{i:02d}"]["outcome"] for i in range(40)] == ["error"] * 40


@WORKERS
def test_without_any_system_anchors_and_decorated_tests_are_errors_too(
        pytester: pytest.Pytester, workers: str) -> None:
    """An anchor would check the built-in retriever's pool: an error, never its strict xfail
    (the xfail is for a failed check). A `@ragate.goldset` test asking for `ragate_system`
    gets no built-in one either."""
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR, anchors=ANCHORS)
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("gs")
def test_mine(ragate_question, ragate_system):
    return ragate_system(ragate_question.question)
''')
    result = run_pytester(pytester, workers, "gs", "test_rag.py", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, no_system_line("*"), "ERROR gs/ragate.toml::* and 3 more, as *",
           "ragate: 5 items of gs/ragate.toml errored at setup for one cause, *; they are *"
           "anchor[a1]*",
           "ERROR test_rag.py::test_mine[q?] - MissingSystem: test_mine[q?]: no ragate_system "
           "in scope; *", "ERROR test_rag.py::test_mine[q?] and 2 more, as test_mine[q?]: *",
           "ragate: no ragate_system in scope for 5 items of gs/ragate.toml, 4 items of "
           "test_rag.py, which errored.*")
    assert "XFAIL" not in result.stdout.str()
    assert junit_cases(pytester.path / "j.xml")["gs.ragate.toml::anchor[a1]"]["outcome"] \
        == "error"


def test_a_system_out_of_the_tests_reach_is_named_with_how_to_share_it(
        pytester: pytest.Pytester) -> None:
    """ragate_system in the goldset's folder answers the goldset's items, and no test
    elsewhere: a `@ragate.goldset` test under tests/ that asks for it is told where it is
    and where a conftest.py would share it."""
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR)
    (pytester.path / "gs" / "conftest.py").write_text(planned({}))
    system_test_in_tests(pytester.path, "gs")
    result = run_pytester(pytester, "0", "gs", "tests")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    line = defines_fixture(pytester.path / "gs" / "conftest.py")
    expect(result, "PASSED gs/ragate.toml::q1*",
           "ERROR tests/test_rag.py::test_mine[q1] - MissingSystem: test_mine[q1]: no "
           f"ragate_system in scope; gs/conftest.py:{line} defines one, which pytest applies "
           "only to tests under gs/: move it to a conftest.py in a folder above both, such "
           "as conftest.py; the built-in pipeline answers only where asked for*")


@pytest.mark.parametrize("how, workers", [("toml", "0"), ("flag", "2")])
def test_the_built_in_pipeline_answers_where_asked_for(pytester: pytest.Pytester, how: str,
                                                       workers: str) -> None:
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR,
                  toml=BUILTIN_TOML if how == "toml" else BASE_TOML)
    flag = ("--ragate-builtin-system",) if how == "flag" else ()
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", *flag)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    expect(result, "mini: system: built-in extractive answerer · retriever: built-in *")
    assert {r["status"] for r in rows_of(pytester.path / "r.jsonl").values()} == {"scored"}


def test_a_system_of_yours_that_asks_for_the_built_in_retriever_keeps_it(
        pytester: pytest.Pytester) -> None:
    holding = [{k: v for k, v in a.items() if k != "xfail"} for a in ANCHORS]
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR, anchors=holding)
    pytester.makeconftest('''
import pytest
from pytest_ragate import Answer

@pytest.fixture
def ragate_system(ragate_retriever):
    return lambda question: Answer(text="", contexts=ragate_retriever(question), citations=[],
                                   abstained=True)
''')
    result = run_pytester(pytester, "0", "gs", "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    expect(result, "mini: system: ragate_system (conftest.py:4) · retriever: built-in *",
           "PASSED gs/ragate.toml::anchor[a1]")
    assert {r["status"] for r in rows_of(pytester.path / "r.jsonl").values()} == {"scored"}


def test_system_in_ragate_toml_is_builtin_or_nothing(tmp_path: Path) -> None:
    write_goldset(tmp_path / "gs", toml=BASE_TOML.replace("[corpus]",
                                                          'system = "mine"\n\n[corpus]'))
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "gs")])
    assert result.exit_code == 1
    assert f"{tmp_path / 'gs' / 'ragate.toml'}: system: Input should be 'builtin'" \
        in result.output


def test_opting_in_leaves_the_goldset_digest_alone(tmp_path: Path) -> None:
    """`ragate decide` holds results to the goldset by its digest: saying who answers is not
    a change of what is asked."""
    from pytest_ragate.goldsets.loader import load_goldset

    plain = load_goldset(write_goldset(tmp_path / "a"))
    opted = load_goldset(write_goldset(tmp_path / "b", toml=BUILTIN_TOML))
    assert opted.config.system == "builtin" and plain.config.system is None
    assert plain.content_sha256 == opted.content_sha256


# --- 2. a hung system has a default bound ----------------------------------------------------


def test_the_system_timeout_is_on_by_default(pytester: pytest.Pytester) -> None:
    assert GateSettings().system_timeout == 300.0
    help_text = pytester.runpytest("--help").stdout.str()
    assert "before the item is an error; 0 for no limit (default: 300.0)" \
        in " ".join(help_text.split())
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR)
    pytester.makeconftest(planned({}))
    run_pytester(pytester, "0", "gs", "--ragate-results=r.jsonl")
    header = json.loads((pytester.path / "r.jsonl").read_text().splitlines()[0])
    assert header["ragate_results"]["settings"]["system_timeout"] == 300.0  # what bounded it


@WORKERS
def test_an_anchor_whose_system_hangs_is_an_error_past_the_timeout(
        pytester: pytest.Pytester, workers: str) -> None:
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR, anchors=ANCHORS)
    pytester.makeconftest(planned({"euros": "time.sleep(4) or cite(right)"}))
    result = run_pytester(pytester, workers, "gs", "-o", "ragate_system_timeout=0.5")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, "FAILED gs/ragate.toml::anchor[a1] - *SystemTimeout: anchor a1: the system "
           "did not answer within 0.5 s (ragate_system_timeout)")
    assert "XFAIL" not in result.stdout.str()  # a hang is not the anchor's known miss


class OuterAlarm(Exception):
    pass


def _outer_alarm(signum: int, frame: object) -> None:
    raise OuterAlarm


@pytest.mark.parametrize("outer, fires", [(0.2, "outer"), (1.5, "later")])
def test_an_alarm_set_outside_still_fires(outer: float, fires: str) -> None:
    """pytest-timeout's signal method arms SIGALRM around the test: the system's bound, now on
    by default, neither cancels nor outlasts it."""
    previous = signal.signal(signal.SIGALRM, _outer_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, outer)
        if fires == "outer":  # the outer alarm comes first and interrupts the call
            with pytest.raises(OuterAlarm):
                call_with_timeout(lambda: time.sleep(1), 5, "inner")
            return
        call_with_timeout(lambda: time.sleep(0.1), 5, "inner")  # done before either
        with pytest.raises(SystemTimeout):
            call_with_timeout(lambda: time.sleep(1), 0.2, "inner")
        with pytest.raises(OuterAlarm):  # and the outer one is armed again after
            time.sleep(3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- 3. a question id is never another item's name -------------------------------------------

RESERVED = {
    "floor": Floor("abstention_accuracy", 0.0).name,
    "kind floor": Floor("abstention_accuracy", 0.0, kind="unanswerable").name,
    "anchor": "anchor[a1]",
    "repeat": repeat_name("q1", 2),
    "regression": "regression[citation_accuracy]",
    "floors": "floors",
    "node id": "q1::x",
}


def _with_id(root: Path, qid: str, **more: object) -> Path:
    questions = [(qid if q == "q4" else q, k) for q, k in QUESTIONS]
    evidence = {(qid if q == "q4" else q): v for q, v in EVIDENCE.items()}
    return write_goldset(root, questions=question_rows(questions),
                         expected=expected_rows(evidence), **more)  # type: ignore[arg-type]


@pytest.mark.parametrize("qid", list(RESERVED.values()), ids=list(RESERVED))
def test_ragate_validate_refuses_an_item_name_as_a_question_id(tmp_path: Path,
                                                               qid: str) -> None:
    _with_id(tmp_path / "gs", qid)
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "gs")])
    assert result.exit_code == 1
    where = f"{tmp_path / 'gs' / 'questions.jsonl'}:4: [{qid}] question_id: {qid!r} "
    problems = [line for line in result.output.splitlines() if str(tmp_path) in line]
    assert len(problems) == 1 and problems[0].startswith(where), result.output
    assert "rename the question" in problems[0]


@WORKERS
@pytest.mark.parametrize("kind", ["floor", "anchor"])
def test_a_question_named_like_a_floor_or_anchor_is_a_collection_error(
        pytester: pytest.Pytester, workers: str, kind: str) -> None:
    """Today's duplicate node ids made `decide` stop with an INTERNALERROR."""
    qid = RESERVED[kind]
    _with_id(pytester.path / "gs", qid, floors=LOW_FLOOR,
             anchors=ANCHORS if kind == "anchor" else None)
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, workers, "gs")
    assert result.ret in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.TESTS_FAILED)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    article = "an" if kind == "anchor" else "a"
    expect(result, f"*questions.jsonl:4: [{qid}] question_id: '{qid}' is the name of "
           f"{article} {kind} item: the question's item would share its node id; rename the "
           "question")


# --- 4. `ragate init` writes nothing unless it succeeds --------------------------------------


def test_init_over_an_unreadable_corpus_writes_nothing_and_a_retry_works(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("One paragraph.\n")
    (docs / "latin.txt").write_bytes(b"caf\xe9\n")
    runner = CliRunner()
    failed = runner.invoke(main, ["init", str(tmp_path / "gs"), "--corpus", str(docs / "*")])
    assert failed.exit_code == 1
    assert "latin.txt: <file>: is not UTF-8" in failed.output
    assert f"nothing written to {tmp_path / 'gs'}" in failed.output
    assert "wrote" not in failed.output and not (tmp_path / "gs").exists()
    (docs / "latin.txt").write_text("café\n", encoding="utf-8")
    retried = runner.invoke(main, ["init", str(tmp_path / "gs"), "--corpus", str(docs / "*")])
    assert retried.exit_code == 0, retried.output
    assert sorted(p.name for p in (tmp_path / "gs").iterdir()) == [
        "conftest.py", "expected.jsonl", "questions.jsonl", "ragate.toml"]


def test_init_into_a_folder_that_exists_leaves_it_as_it_was(tmp_path: Path) -> None:
    (tmp_path / "gs").mkdir()
    (tmp_path / "gs" / "conftest.py").write_text("# mine\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "empty.md").write_text("\n\n")
    result = CliRunner().invoke(main, ["init", str(tmp_path / "gs"), "--corpus",
                                       str(tmp_path / "docs" / "*")])
    assert result.exit_code == 1 and "document 'empty' is empty" in result.output
    assert [p.name for p in (tmp_path / "gs").iterdir()] == ["conftest.py"]
    assert (tmp_path / "gs" / "conftest.py").read_text() == "# mine\n"


# --- 5. a worker dying at teardown is not blamed on a floor ----------------------------------

DYING = '''
import os
import pytest
from pytest_ragate import Answer

@pytest.fixture(scope="session")
def ragate_system():
    yield lambda question: Answer.abstain()
    {teardown}
'''


def test_a_worker_dying_at_teardown_is_not_blamed_on_a_floor(
        pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR)
    pytester.makeconftest(DYING.format(teardown="os._exit(3)"))
    result = run_pytester(pytester, "2", "gs", *n("2"), "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, "ERROR gs/ragate.toml::q* - worker 'gw*' crashed while tearing down after "
           "'gs/ragate.toml::q*' (its session or module fixtures, or a plugin's clean-up)")
    floor_lines = [line for line in result.outlines
                   if line.split(" ")[0] in ("PASSED", "FAILED", "ERROR")
                   and "floor[abstention_accuracy]" in line]
    assert floor_lines == ["PASSED gs/ragate.toml::floor[abstention_accuracy]"]  # once
    assert "crashed while running 'gs/ragate.toml::floor" not in result.stdout.str()
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[abstention_accuracy]"]["outcome"] == "passed"
    assert "error" in {case["outcome"] for case in cases.values()}


@WORKERS
def test_a_teardown_that_fails_after_the_last_question_fails_the_run(
        pytester: pytest.Pytester, workers: str) -> None:
    """Its floor was the last item, whose reports are not logged: the failure vanished."""
    write_goldset(pytester.path / "gs", floors=LOW_FLOOR)
    pytester.makeconftest(DYING.format(teardown="raise RuntimeError('teardown broke')"))
    result = run_pytester(pytester, workers, "gs", *n(workers), "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expect(result, "ERROR gs/ragate.toml::q4 - RuntimeError: teardown broke",
           "PASSED gs/ragate.toml::floor[abstention_accuracy]")
    assert "ERROR gs/ragate.toml::floor" not in result.stdout.str()
