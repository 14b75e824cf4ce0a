"""The first hour on your own system: a run that ran no goldset says why and how to run them;
a system that returns no `ragate.Answer` gets one line per question and one for the run; a
goldset's messages call its positions by its own word (`units` for documents, `turns` for
transcripts). Through pytest, under `-n 0` and `-n 2`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_ragate.wording.floors import not_judged_metrics
from pytest_ragate.wording.xdist import not_gated
from tests.conftest import (
    QUESTIONS,
    WORKERS,
    expect,
    jsonl,
    rows_of,
    run_pytester,
    write_goldset,
)
from tests.test_documents import handbook
from tests.test_fail_closed import planned

FLOOR = "[floors]\nabstention_accuracy = 0.5\n"
HINT = "ragate: no goldset ran: this run selected no ragate item"


def outside_testpaths(pytester: pytest.Pytester) -> None:
    """A project whose tests live in tests/ (its testpaths) and whose goldset, with the
    user's system in the root conftest.py, lives in goldsets/."""
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text("def test_fine():\n    pass\n")
    write_goldset(pytester.path / "goldsets", floors=FLOOR)
    pytester.makeconftest(planned({}))


def hints(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if line.startswith("ragate: no goldset ran")]


# --- 1. say why nothing ran ------------------------------------------------------------------


@WORKERS
def test_a_marker_run_that_selects_nothing_says_where_the_goldsets_are(
        pytester: pytest.Pytester, workers: str) -> None:
    outside_testpaths(pytester)
    result = run_pytester(pytester, workers, "-m", "rag_gate")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED  # pytest's own 5 stays 5
    assert hints(result) == [
        f"{HINT}, and the rootdir has goldsets at goldsets/ragate.toml. Run them with "
        "`pytest goldsets/ -m rag_gate`, or add their folders to `testpaths`"]
    # the command it gives runs the goldset (without xdist: what -n 2 changes is the hint's,
    # above; a goldset's path run under -n 2 is every shared -n 2 gate's)
    if workers == "2":
        return
    ran = run_pytester(pytester, workers, "goldsets/", "-m", "rag_gate")
    assert ran.ret == pytest.ExitCode.OK
    ran.assert_outcomes(passed=5)
    assert hints(ran) == []


# each process writes the ragate plugins registered in it (its modes are named `ragate-*`)
REGISTERED = '''

def pytest_unconfigure(config):
    name = getattr(config, "workerinput", {}).get("workerid", "main")
    names = [n for n, _ in config.pluginmanager.list_name_plugin() if n and n.startswith("ragate-")]
    (config.rootpath / f"registered-{name}.txt").write_text(" ".join(sorted(names)))
'''


@WORKERS
def test_a_plain_run_that_asks_for_no_goldset_is_left_alone(
        pytester: pytest.Pytester, workers: str) -> None:
    """Inert until asked: a run that neither asks for goldsets nor collects one gets no
    ragate mode in any process, xdist's own scheduler and no ragate line (no hint either:
    it did not ask); a node-id run likewise."""
    outside_testpaths(pytester)
    pytester.makeconftest(planned({}) + REGISTERED)
    for args in ((), ("tests/test_unit.py::test_fine",)):
        result = run_pytester(pytester, workers, *args)
        assert result.ret == pytest.ExitCode.OK
        result.assert_outcomes(passed=1)
        assert [line for line in result.outlines if line.startswith("ragate")] == []
        registered = sorted(pytester.path.glob("registered-*.txt"))
        assert len(registered) == (3 if workers == "2" else 1)
        assert {path.read_text() for path in registered} == {""}
    if workers == "2":
        assert "scheduling tests via LoadScheduling" in result.outlines


@WORKERS
def test_no_hint_without_goldsets_or_when_a_goldset_ran(pytester: pytest.Pytester,
                                                       workers: str) -> None:
    pytester.makepyfile(test_unit="def test_fine():\n    pass\n")
    # hidden folders, virtual environments and node_modules are not searched
    for hidden in (".venv/lib/pkg", "node_modules/pkg", ".tox/py/gs", "venv/gs"):
        write_goldset(pytester.path / hidden)
    result = run_pytester(pytester, workers)
    assert result.ret == pytest.ExitCode.OK and hints(result) == []
    write_goldset(pytester.path / "gs", floors=FLOOR)
    pytester.makeconftest(planned({q: "1/0" for q, _ in QUESTIONS}))
    # a plain run did not ask, but it collects the goldset under the rootdir: it is gated
    # (under -n 2 too: the controller's paths reach it), and its floor fails closed
    ran = run_pytester(pytester, workers)
    assert ran.ret == pytest.ExitCode.TESTS_FAILED and hints(ran) == []
    expect(ran, "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: 4 of 4 "
           "questions have no result*")
    # and a knob it refuses is its usage error, in one line, as in a run that asked
    pytester.makeini("[pytest]\nragate_judge_optional = nonsense\n")
    refused = run_pytester(pytester, workers)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in refused.errlines if line] == [
        "ERROR: " + not_judged_metrics("ragate_judge_optional", ["nonsense"])]


def test_an_unasked_xdist_run_whose_goldset_its_controller_cannot_see_is_refused(
        pytester: pytest.Pytester) -> None:
    """Fail closed: under -n, a run that did not ask and whose paths hold no ragate.toml has
    no gate on its controller; a `@ragate.goldset` test its workers collect is refused in one
    line (a usage error: pytest's JUnit file is not written either), never run with its
    floors undecided."""
    outside_testpaths(pytester)
    (pytester.path / "tests" / "test_rag.py").write_text(
        "import pytest_ragate as ragate\n\n\n@ragate.goldset('../goldsets')\n"
        "def test_mine(ragate_question, ragate_system):\n"
        "    return ragate_system(ragate_question.question)\n")
    result = run_pytester(pytester, "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.outlines if line.startswith("pytest-ragate:")] == [
        not_gated("tests/test_rag.py::test_mine")]
    assert "passed" not in result.outlines[-1] and hints(result) == []


def test_the_search_is_bounded_and_names_the_first_few(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text("def test_fine():\n    pass\n")
    for name in ("a", "b", "c", "d/deeper"):
        write_goldset(pytester.path / "sets" / name)
    write_goldset(pytester.path)  # one at the rootdir itself, found first
    result = run_pytester(pytester, "0", "-m", "rag_gate")
    assert hints(result) == [
        f"{HINT}, and the rootdir has goldsets at ragate.toml, sets/a/ragate.toml, "
        "sets/b/ragate.toml (the first 3 found). Run them with `pytest ragate.toml sets/a/ "
        "sets/b/ -m rag_gate`, or add their folders to `testpaths`"]


# --- 2. one clear line per mistake -----------------------------------------------------------

MALFORMED = {"q1": "'Paris is the capital of France, as everyone knows'", "q2": "['a', 'b']",
             "q3": "Answer(text='x', contexts=3)", "q4": "{'txt': 'x'}"}


@WORKERS
def test_a_malformed_answer_is_one_line_per_question_and_one_for_the_run(
        pytester: pytest.Pytester, workers: str) -> None:
    write_goldset(pytester.path / "gs", floors=FLOOR)
    pytester.makeconftest(planned(MALFORMED))
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the floor fails: nothing scored
    expect(result,
           "FAILED gs/ragate.toml::q1 - MalformedAnswer: q1: the system returned str "
           "('Paris is the...veryone knows'), expected ragate.Answer (or a dict of its "
           "fields)",
           "FAILED gs/ragate.toml::q2 - MalformedAnswer: q2: the system returned list "
           "(['a', 'b']), expected ragate.Answer (or a dict of its fields)",
           "FAILED gs/ragate.toml::q3 - MalformedAnswer: q3: the system built a malformed "
           "Answer: contexts: Input should be a valid list",
           "FAILED gs/ragate.toml::q4 - MalformedAnswer: q4: the system returned a malformed "
           "answer (dict): txt: Extra inputs are not permitted (an Answer's fields: text, "
           "abstained, citations, contexts, knobs, confidence, usage)",
           "FAILED gs/ragate.toml::floor[abstention_accuracy] - not decided: 4 of 4 "
           "questions have no result*")
    out = result.stdout.str()
    for noise in ("validation error", "Traceback", "During handling", "errors.pydantic.dev",
                  "input_value"):
        assert noise not in out
    for q in ("q1", "q2", "q3", "q4"):  # each question's failure section is its one line
        at = result.outlines.index(next(line for line in result.outlines
                                        if line.startswith("_") and f" mini::{q} " in line))
        section = [line for line in result.outlines[at + 1:at + 4]
                   if not line.startswith("[gw")]  # xdist names the worker first
        assert section[0].startswith(f"{q}: the system {'built' if q == 'q3' else 'returned'} ")
        assert section[1].startswith("_")
    summary = [line for line in result.outlines if line.startswith("ragate: 4 questions")]
    assert summary == [
        "ragate: 4 questions: the system returned a dict with wrong fields (1), a malformed "
        "Answer (1), list (1), str (1), expected ragate.Answer (or a dict of its fields) "
        "(docs/your-system.md)"]
    rows = rows_of(pytester.path / "r.jsonl")
    assert {rows[q]["status"] for q in rows} == {"error"}
    assert rows["q2"]["error"].startswith("MalformedAnswer: q2: the system returned list")


def test_a_system_returning_str_everywhere_gets_one_summary_line(
        pytester: pytest.Pytester) -> None:
    """An anchor's claim answered with a str is its one line too, never pydantic's traceback
    (the run's summary line counts the questions; counted from rows that travel from -n 2's
    workers in the test above, here at -n 0)."""
    write_goldset(pytester.path / "gs", floors=FLOOR, anchors=[
        {"anchor_id": "a1", "kind": "retrieval_miss", "claim": "the budget is three euros",
         "evidence": {"doc_id": "m1", "first_unit": 3, "last_unit": 3}}])
    pytester.makeconftest(planned({q: "'Paris'" for q in ("q1", "q2", "q3", "q4", "euros")}))
    result = run_pytester(pytester, "0", "gs")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert [line for line in result.outlines if line.startswith("ragate: 4 questions")] == [
        "ragate: 4 questions: the system returned str, expected ragate.Answer (or a dict of "
        "its fields) (docs/your-system.md)"]
    expect(result, "FAILED gs/ragate.toml::anchor[a1] - MalformedAnswer: anchor a1: the system "
           "returned str ('Paris'), expected ragate.Answer (or a dict of its fields)")
    out = result.stdout.str()
    for noise in ("validation error", "Traceback", "errors.pydantic.dev", "input_value"):
        assert noise not in out


# --- 3. one vocabulary -----------------------------------------------------------------------

DOC_SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture
def ragate_system():
    def answer(text):
        wrong = Context(context_id="c", doc_id="returns", first_unit=3, last_unit=3, text="x")
        return Answer(text="an answer", contexts=[wrong], citations=[Citation(context_id="c")])
    return answer
'''


def system_out(path: Path) -> dict[str, str]:
    return {case.get("name", ""): "".join(e.text or "" for e in case.iter("system-out"))
            for case in ET.parse(path).getroot().iter("testcase")}


def test_a_documents_goldset_says_units_in_its_system_out_and_anchors(
        pytester: pytest.Pytester) -> None:
    """Wording of one run's outputs (the same under -n 2: at -n 0)."""
    root = handbook(pytester.path / "gs", '[anchors]\nfile = "anchors.jsonl"\n')
    (root / "anchors.jsonl").write_text(jsonl([
        {"anchor_id": "a1", "kind": "retrieval_miss", "claim": "refunds take five days",
         "evidence": {"doc_id": "returns", "first_unit": 2, "last_unit": 2}}]))
    pytester.makeconftest(DOC_SYSTEM)
    result = run_pytester(pytester, "0", "gs", "--junitxml=j.xml")
    out = system_out(pytester.path / "j.xml")["refund"]
    assert "✗ [returns · units 3–3]" in out and "  [returns · units 2–2]" in out
    assert not re.search(r"\bturns?\b", out)
    expect(result, "FAILED gs/ragate.toml::anchor[a1] - *evidence returns units 2-2 is not in "
           "the pool*")
    assert not re.search(r"\bturns?\b", "\n".join(line for line in result.outlines
                                                  if "anchor[a1]" in line))


@pytest.mark.parametrize("anchor", [False, True], ids=["expected", "anchor"])
def test_an_evidence_error_names_the_goldsets_own_field(pytester: pytest.Pytester,
                                                        anchor: bool) -> None:
    extra = '[anchors]\nfile = "anchors.jsonl"\n' if anchor else ""
    expected = None if anchor else [
        {"question_id": "refund", "gist": "g",
         "evidence": [{"doc_id": "returns", "first_unit": 2, "last_unit": 9}]},
        {"question_id": "both", "gist": "g", "evidence": [{"doc_id": "returns"},
                                                          {"doc_id": "shipping"}]},
        {"question_id": "chunk", "gist": "g",
         "evidence": [{"context_id": "returns#3", "doc_id": "returns"}]},
        {"question_id": "warranty", "gist": None, "evidence": []}]
    root = handbook(pytester.path / "gs", extra, expected=expected)
    if anchor:
        (root / "anchors.jsonl").write_text(jsonl([
            {"anchor_id": "a1", "kind": "retrieval_miss", "claim": "c",
             "evidence": {"doc_id": "returns", "first_unit": 2, "last_unit": 9}}]))
    pytester.makeconftest(DOC_SYSTEM)
    result = run_pytester(pytester, "0", "gs")
    out = result.stdout.str()
    assert "last_unit" in out and "last_turn" not in out and not re.search(r"\bturns?\b", out)
    assert "units 0..3" in out
