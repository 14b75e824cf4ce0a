"""A cause many goldset items share, said once (issue 36 item 4): the grouping and its lines
(`wording/causes.py`) as pure functions, the pytest contract it relies on
(`pytest_internals.said_once`), and one run per case that pytest would have printed per
question: a system that raises the same exception for every question. (A misspelled
`ragate_system` over 40 questions is tests/test_fail_closed_system.py's size check.)"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_ragate.decision.floors import decide
from pytest_ragate.items import pytest_internals as internals
from pytest_ragate.scoring.figures import judge_failure_causes
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.causes import Failed, judge_failed, shared_causes, without_member
from tests.conftest import junit_cases, write_goldset

MISSING = ("MissingSystem: {q}: no ragate_system in scope (did you mean ragate_system? "
           "conftest.py:6 defines ragate_sytem)")


def failure(nodeid: str, why: str, when: str = "setup") -> Failed:
    return Failed(nodeid=nodeid, when=when, why=why)


def test_items_that_share_a_cause_are_one_group_in_the_order_they_reported() -> None:
    failures = [failure(f"gs/ragate.toml::q{i:02d}", MISSING.format(q=f"q{i:02d}"))
                for i in (3, 0, 1, 2)]
    [shared] = shared_causes(failures)
    assert shared.nodeids == ("gs/ragate.toml::q03", "gs/ragate.toml::q00",
                              "gs/ragate.toml::q01", "gs/ragate.toml::q02")
    assert shared.others == shared.nodeids[1:]  # the first is the one shown in full
    assert shared.cause == ("MissingSystem: no ragate_system in scope (did you mean "
                            "ragate_system? conftest.py:6 defines ragate_sytem)")


def test_a_cause_is_shared_within_one_file_and_one_phase_only() -> None:
    boom = "ConnectionError: http://localhost:8000: connection refused"
    failures = [failure("a/ragate.toml::q1", boom, "call"),
                failure("b/ragate.toml::q1", boom, "call"),  # another goldset
                failure("a/ragate.toml::q2", boom, "setup"),  # another phase
                failure("a/ragate.toml::q3", "ValueError: other", "call"),  # another cause
                failure("a/ragate.toml::q4", boom, "call")]
    assert [(s.where, s.when, s.nodeids) for s in shared_causes(failures)] == [
        ("a/ragate.toml", "call", ("a/ragate.toml::q1", "a/ragate.toml::q4"))]
    assert shared_causes(failures[:4]) == []  # an error nobody shares is shown as pytest does


def test_a_member_is_taken_out_of_its_cause_by_its_whole_name_only() -> None:
    assert without_member("MissingSystem: q1: no system for q10", "q1") == \
        "MissingSystem: no system for q10"
    assert without_member("MissingSystem: test_mine[q1]: none", "test_mine[q1]") == \
        "MissingSystem: none"
    assert without_member("KeyError: 'x'", "q1") == "KeyError: 'x'"
    assert without_member("Failed: q1: empty", "test_mine[q1]") == "Failed: empty"
    assert without_member("Failed: q01[r2]: empty", "q01[r2]") == "Failed: empty"


def test_the_lines_say_the_cause_once_with_the_count_and_the_first_names() -> None:
    [errored] = shared_causes(
        failure(f"gs/ragate.toml::q{i:02d}", MISSING.format(q=f"q{i:02d}")) for i in range(40))
    line = errored.line()
    assert line.startswith("ragate: 40 items of gs/ragate.toml errored at setup for one cause, "
                           "shown once above at gs/ragate.toml::q00: MissingSystem: no "
                           "ragate_system in scope")
    assert "they are q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 30 more (each one " \
           "its own error in JUnit and the results file)" in line
    assert errored.summary_line() == ("ERROR gs/ragate.toml::q01 and 38 more, as q00: q01, q02, "
                                      "q03, q04, q05, q06, q07, q08, q09, q10 and 29 more")
    [failed] = shared_causes(failure(f"gs/ragate.toml::q{i}", "RuntimeError: " + "x" * 400,
                                     "call") for i in range(2))
    assert "2 items of gs/ragate.toml failed for one cause" in failed.line()
    assert "x" * 100 + "…; they are q0, q1 (each one its own failure in JUnit" in failed.line()
    assert len(failed.line()) < 400  # the first item's entry has the whole cause
    assert failed.summary_line() == "FAILED gs/ragate.toml::q1 and 0 more, as q0: q1"


# --- the contract with pytest ---------------------------------------------------------------

SAID_ONCE_PLUGIN = '''
import pytest
from pytest_ragate.items.pytest_internals import said_once

def seen(terminalreporter, when):
    stats = terminalreporter.stats
    names = [r.nodeid.partition("::")[2] for r in stats["failed"] + stats["error"]]
    terminalreporter.write_line(f"SEEN {when}: {' '.join(names)}")

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    with said_once(terminalreporter, {("test_it.py::test_two", "call"),
                                      ("test_it.py::test_four", "setup"),
                                      ("test_it.py::test_one", "teardown")}):
        seen(terminalreporter, "inside")
        result = yield
    seen(terminalreporter, "after")
    return result
'''


def test_said_once_hides_reports_from_pytests_sections_only_while_they_print(
        pytester: pytest.Pytester) -> None:
    """pytest's ERRORS and FAILURES sections and its short summary print the reports in
    `TerminalReporter.stats`, and its counts line counts them after the summary hook. A
    report is hidden by its node id and phase: test_one's call failure is not its teardown."""
    pytester.makeconftest(SAID_ONCE_PLUGIN)
    pytester.makepyfile(test_it="""
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("set-up broke")

def test_one():
    assert False, "one"
def test_two():
    assert False, "two"
def test_three(broken):
    pass
def test_four(broken):
    pass
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "-rfE")
    result.stdout.fnmatch_lines(["SEEN inside: test_one test_three",
                                 "SEEN after: test_one test_two test_three test_four"])
    text = result.stdout.str().partition("SEEN inside")[2].partition("SEEN after")[0]
    assert "_ test_one _" in text and "ERROR at setup of test_three" in text
    assert "FAILED test_it.py::test_one" in text and "ERROR test_it.py::test_three" in text
    assert "test_two" not in text and "test_four" not in text  # no section, no summary line
    outcomes = result.parseoutcomes()
    assert (outcomes["failed"], outcomes["errors"]) == (2, 2)  # both counted
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_said_once_without_pytests_stats_is_a_loud_error() -> None:
    with (pytest.raises(internals.PytestChanged, match=r"TerminalReporter\.stats"),
          internals.said_once(SimpleNamespace(), {("x", "call")})):
        pass  # pragma: no cover


# --- end to end -------------------------------------------------------------------------------

RAISING = '''
import pytest


@pytest.fixture
def ragate_system():
    def system(question):
        raise ConnectionError("http://localhost:8000/answer: connection refused")
    return system
'''


def test_a_system_that_raises_for_every_question_is_shown_once(
        pytester: pytest.Pytester) -> None:
    """40 questions fail with one exception: pytest printed each one's traceback and summary
    line (39,712 bytes in all); now the first in full and the others once (4,250 bytes).
    Each is still a failure in JUnit and in the counts line."""
    write_goldset(pytester.path / "gs", questions=[
        {"question_id": f"q{i:02d}", "kind": "single_doc", "question": f"q{i}?"}
        for i in range(40)], expected=[{"question_id": f"q{i:02d}", "gist": "g", "evidence": [
            {"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(40)],
        floors="[floors]\nabstention_accuracy = 0.0\n")
    pytester.makeconftest(RAISING)
    result = pytester.runpytest_subprocess("gs", "-p", "no:cacheprovider", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = "\n".join(result.outlines + result.errlines)
    assert len(out.encode()) < 8000, len(out.encode())
    assert out.count("raise ConnectionError") == 1  # one traceback, not 40
    assert result.parseoutcomes() == {"failed": 41}  # 40 questions and the floor
    result.stdout.fnmatch_lines([
        "ragate: 40 items of gs/ragate.toml failed for one cause, shown once above at "
        "gs/ragate.toml::q00: ConnectionError: http://localhost:8000/answer: connection "
        "refused; they are q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 30 more *",
        "FAILED gs/ragate.toml::q01 and 38 more, as q00: q01, q02, *"])
    cases = junit_cases(pytester.path / "j.xml")
    assert [cases[f"gs.ragate.toml::q{i:02d}"]["outcome"] for i in range(40)] == \
        ["failure"] * 40


# --- a judge that is down ----------------------------------------------------------------------

DOWN = "http: gpt-4o-mini at http://127.0.0.1:9/v1: cannot connect: Connection error."


def judged_row(qid: str, why: str | None) -> QuestionRecord:
    """A question whose faithfulness verdict the judge gave, or failed to give (`why`)."""
    return QuestionRecord(
        goldset="gs", route="gs/ragate.toml", question_id=qid, kind="single_doc",
        index=int(qid[1:]), must_abstain=False, abstained=False, abstention_correct=True,
        evidence_spans=1, eval_version="1", judge="ragas:m", answer_text="an answer",
        metrics={} if why else {"faithfulness": 1.0},
        judge_failures={"faithfulness": why} if why else {})


def test_a_judge_that_is_down_is_one_cause_in_each_judged_floor() -> None:
    """40 verdicts the judge could not give, for one reason: each judged floor says the
    reason once, with the count and the first names (it said "40 judge failures, not
    counted" and no reason; the reason was only in the results file)."""
    rows = [judged_row(f"q{i:02d}", DOWN) for i in range(38)]
    rows += [judged_row("q38", "timeout: no verdict within 60 s"), judged_row("q39", None)]
    assert judge_failure_causes(rows) == (
        (DOWN, tuple(f"q{i:02d}" for i in range(38))), ("timeout: no verdict within 60 s",
                                                         ("q38",)))
    said = ("the judge failed on q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 28 "
            f"more: {DOWN}; on q38: timeout: no verdict within 60 s")
    for floor in (Floor("faithfulness", 0.5), Floor("judge_coverage", 0.95)):
        message = decide(floor, "mini", rows, judge="ragas:m").message
        assert message.count("cannot connect") == 1 and said in message, message
        assert len(message.encode()) < 800
    unread = decide(Floor("faithfulness", 0.5), "mini", rows, judge="ragas:m",
                    coverage=0.95).message
    assert "not decided: the judge delivered 1 of 40 verdicts" in unread and said in unread
    assert judge_failed([(f"cause {i}", ["q1"]) for i in range(5)]).endswith(
        "on q1: cause 2; and 2 more causes")
