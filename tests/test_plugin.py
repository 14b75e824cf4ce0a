"""The plugin end to end through pytester: items, floors, outputs, and xdist identity."""

from __future__ import annotations

import pytest

from tests.conftest import esc, junit_cases, results_rows, untimed, write_goldset

SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

PLAN = {  # question id -> (cited context turns, extra retrieved contexts)
    "q1": [("m1", 2, 3)],          # right
    "q2": [("m1", 0, 1)],          # wrong turns
    "q3": [("m1", 0, 0)],          # one of two spans
}

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid not in PLAN:
            return Answer.abstain()
        contexts = [Context(context_id=f"c{i}", doc_id=d, first_unit=a, last_unit=b,
                            text="...", distance=0.25 + i / 10)
                    for i, (d, a, b) in enumerate(PLAN[qid])]
        return Answer(text="an answer", contexts=contexts,
                      citations=[Citation(context_id=c.context_id) for c in contexts])
    return answer
'''

FLOORS = """\
[floors]
citation_accuracy = 0.60
evidence_recall = 0.90
abstention_accuracy = 1.0
faithfulness = 0.8

[floors.kind.unanswerable]
abstention_accuracy = 1.0
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_goldset(pytester.path / "gs", floors=FLOORS)
    pytester.makeconftest(SYSTEM)
    return pytester


def test_goldset_items_and_floor_outcomes(project: pytest.Pytester) -> None:
    result = project.runpytest("-v", "-p", "no:cacheprovider", "gs")
    result.assert_outcomes(passed=7, failed=3)
    result.stdout.fnmatch_lines(esc(
        "gs/ragate.toml::q1 PASSED*",
        "gs/ragate.toml::q4 PASSED*",
        "gs/ragate.toml::floor[citation_accuracy] PASSED*",
        "gs/ragate.toml::floor[evidence_recall] FAILED*",
        "gs/ragate.toml::floor[abstention_accuracy] PASSED*",
        "gs/ragate.toml::floor[faithfulness] FAILED*",
        "gs/ragate.toml::floor[unanswerable:abstention_accuracy] PASSED*",
        "gs/ragate.toml::floor[judge_coverage] FAILED*",
        "*evidence_recall 0.50 < floor 0.90 · n=4 spans · 95% CI [0.15, 0.85] (Wilson) · "
        "computed by mechanical*",
        "*ragate floors*",
        "*goldset*metric*floor*value*95% interval*n*by kind*computed by*outcome*",
        "*mini*citation_accuracy*0.60*0.67*[0.03, 1.00]*3*single_doc 0.50 (n=2) · "
        "multi_doc 1.00 (n=1)*mechanical*PASS*",
    ))
    assert result.ret == 1


def test_all_items_carry_rag_gate_and_judged_floors_slow(project: pytest.Pytester) -> None:
    fast = project.runpytest("-p", "no:cacheprovider", "-m", "rag_gate and not slow", "gs")
    fast.assert_outcomes(passed=7, failed=1, deselected=2)
    slow = project.runpytest("-p", "no:cacheprovider", "-m", "slow", "gs", "-rf")
    slow.assert_outcomes(failed=2, deselected=8)
    slow.stdout.fnmatch_lines(["*faithfulness needs a judge: none configured (--ragate-judge):"
                               " a judged floor is not decided without one*"])


def test_keyword_selection_of_floors(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "no:cacheprovider", "-k", "q1 or citation", "gs", "-v",
                               "-rs")
    # a floor is decided over its whole population, never over the part that was selected:
    # q1's one right citation alone would pass it
    result.assert_outcomes(passed=1, skipped=1, deselected=8)
    result.stdout.fnmatch_lines(esc(
        "*floor[citation_accuracy] SKIPPED*",
        "*not decided: 3 of 4 questions deselected (-k or -m): q2, q3, q4; a floor is "
        "decided over its whole population*"))
    assert result.ret == 0


def test_collect_only_lists_questions_and_floors(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q", "-p", "no:cacheprovider", "gs")
    result.stdout.fnmatch_lines(esc(
        "gs/ragate.toml::q1", "gs/ragate.toml::q2", "gs/ragate.toml::q3", "gs/ragate.toml::q4",
        "gs/ragate.toml::floor[citation_accuracy]",
        "gs/ragate.toml::floor[unanswerable:abstention_accuracy]",
        "gs/ragate.toml::floor[judge_coverage]",
        "10 tests collected*",
    ))


def test_a_goldset_names_the_judged_metrics_a_run_without_a_judge_skips(
        project: pytest.Pytester) -> None:
    """`[judge] optional` in ragate.toml skips faithfulness's floors without a judge (and the
    judge_coverage floor that gates them); --ragate-require-judge fails them anyway."""
    toml = project.path / "gs" / "ragate.toml"
    toml.write_text(toml.read_text().replace("[floors]", '[judge]\noptional = ["faithfulness"]'
                                             "\n\n[floors]", 1))
    result = project.runpytest("-p", "no:cacheprovider", "gs", "-rs")
    result.assert_outcomes(passed=7, failed=1, skipped=2)
    result.stdout.fnmatch_lines(["*faithfulness needs a judge: none configured (--ragate-judge)"
                                 "; skipped: its metric is named optional*"])
    required = project.runpytest("-p", "no:cacheprovider", "--ragate-require-judge", "gs")
    required.assert_outcomes(passed=7, failed=3)
    required.stdout.fnmatch_lines(["*faithfulness needs a judge*--ragate-require-judge is set*"])
    toml.write_text(toml.read_text().replace('optional = ["faithfulness"]',
                                             'optional = ["faithfulnes"]'))
    typo = project.runpytest("-p", "no:cacheprovider", "gs")
    typo.stdout.fnmatch_lines(["*judge.optional*faithfulnes: not a judged metric*"
                               "faithfulnes: did you mean faithfulness?*"])
    assert typo.ret != 0


def run_outputs(pytester: pytest.Pytester, tag: str, *args: str,
                ) -> tuple[int, str, str, dict[str, dict[str, object]]]:
    results, report, junit = (pytester.path / f"{tag}.{ext}" for ext in ("jsonl", "md", "xml"))
    run = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "gs", f"--junitxml={junit}", f"--ragate-results={results}",
        f"--ragate-report={report}", *args)
    return run.ret, untimed(results.read_text()), untimed(report.read_text()), junit_cases(junit)


def test_xdist_gives_identical_outcomes_figures_and_files(project: pytest.Pytester) -> None:
    serial = run_outputs(project, "n0", "-n", "0")
    parallel = run_outputs(project, "n2", "-n", "2")
    assert serial[0] == parallel[0] == 1  # evidence_recall fails, the rest hold
    assert serial[1] == parallel[1]       # results JSONL, byte for byte
    assert serial[2] == parallel[2]       # Markdown report, byte for byte
    assert serial[3] == parallel[3]       # every testcase's outcome and properties
    cases = serial[3]
    assert cases["gs.ragate.toml::floor[evidence_recall]"]["outcome"] == "failure"
    assert cases["gs.ragate.toml::floor[citation_accuracy]"]["outcome"] == "passed"
    assert len(results_rows(serial[1])) == 4
    results_rows_and_junit_properties(*serial)


def results_rows_and_junit_properties(ret: int, results: str, report: str,
                                      cases: dict[str, dict[str, object]]) -> None:
    """What one run of `project` (the xdist test's, whose two runs agree) wrote: its rows,
    JUnit properties and Markdown means."""
    assert ret == 1
    rows = {row["question_id"]: row for row in results_rows(results)}
    assert rows["q2"]["citations"] == 1 and rows["q2"]["citations_correct"] == 0
    assert rows["q3"]["evidence_spans"] == 2 and rows["q3"]["evidence_spans_found"] == 1
    assert rows["q4"]["abstained"] is True and rows["q4"]["must_abstain"] is True
    assert rows["q1"]["nearest_distance"] == 0.25
    assert rows["q1"]["eval_version"] == "7" and rows["q1"]["judge"] is None
    for key in ("goldset", "kind", "abstention_correct", "metrics", "knobs"):
        assert key in rows["q1"]
    props = cases["gs.ragate.toml::q3"]["props"]
    assert props["evidence_recall"] == "0.5" and props["citations"] == "1"
    assert props["abstained"] == "false" and props["goldset"] == "mini"
    floor = cases["gs.ragate.toml::floor[evidence_recall]"]["props"]
    assert floor["value"] == "0.5" and floor["computed_by"] == "mechanical"
    lines = report.splitlines()
    header = [c.strip() for c in next(x for x in lines if x.startswith("| question")).split("|")]
    mean = [c.strip() for c in next(x for x in lines if x.startswith("| **mean**")).split("|")]
    means = dict(zip(header, mean, strict=True))
    assert means["citation_accuracy (mechanical)"] == "0.67"
    assert means["abstention_accuracy (mechanical)"] == "1.00"
    assert means["evidence_recall (mechanical)"] == "0.50"
    assert "single_doc 1/2 · multi_doc 1/2" in report  # evidence recall by kind
    assert "citation_accuracy (mechanical)" in report


def test_question_outcome_assert_fails_wrong_questions(pytester: pytest.Pytester) -> None:
    from tests.conftest import BASE_TOML

    write_goldset(pytester.path / "gs", toml='question_outcome = "assert"\n' + BASE_TOML)
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest("-p", "no:cacheprovider", "gs")
    result.assert_outcomes(passed=3, failed=1)  # q3 cites one of its two spans: not wrong
    result.stdout.fnmatch_lines(["*q2 is wrong: 1 of 1 citations wrong*"])


def test_system_error_fails_its_question_and_its_floors(pytester: pytest.Pytester,
                                                           ) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nabstention_accuracy = 0.5\n")
    pytester.makeconftest(SYSTEM.replace("    def answer(text):\n", """    def answer(text):
        if text.endswith("q2?"):
            raise TimeoutError("the RAG service did not answer")
"""))
    result = pytester.runpytest("-p", "no:cacheprovider", "gs", "--ragate-results=r.jsonl")
    # the floor (3/3 over the rest) is not decided over a population with a hole in it
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(["*TimeoutError: the RAG service did not answer*",
                                 "*not decided: 1 of 4 questions have no result: errored q2 "
                                 "(TimeoutError: the RAG service did not answer)*"])
    rows = results_rows(pytester.path / "r.jsonl")
    q2 = next(r for r in rows if r["question_id"] == "q2")
    assert q2["status"] == "error" and "TimeoutError" in q2["error"]
    assert q2["abstention_correct"] is False


def test_malformed_answer_fails_the_question(pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs")
    pytester.makeconftest('''
import pytest

@pytest.fixture
def ragate_system():
    return lambda text: {"text": "x", "citations": [{"context_id": "c1"}], "abstained": True}
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "gs")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*q1: the system returned a malformed answer (dict)*",
                                 "*an abstaining answer carries no citations*"])


def test_decorator_route_with_user_fixture_and_floor_override(pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "goldsets" / "mini",
                  floors="[floors]\ncitation_accuracy = 0.99\nabstention_accuracy = 0.5\n")
    pytester.makeconftest(SYSTEM.replace("def ragate_system", "def my_rag"))
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("goldsets/mini")
@ragate.floor(citation_accuracy=0.60)
@ragate.floor(kind="single_doc", evidence_recall={"min": 0.9, "xfail": "known miss"})
def test_mini(ragate_question, my_rag):
    assert ragate_question.kind in {"single_doc", "multi_doc", "unanswerable"}
    return my_rag(ragate_question.question)
''')
    result = pytester.runpytest("-v", "-p", "no:cacheprovider", "test_rag.py")
    result.stdout.fnmatch_lines(esc(
        "test_rag.py::test_mini[q1] PASSED*",
        "test_rag.py::test_mini::floor[citation_accuracy] PASSED*",
        "test_rag.py::test_mini::floor[abstention_accuracy] PASSED*",
        "test_rag.py::test_mini::floor[single_doc:evidence_recall] XFAIL*",
    ))
    result.assert_outcomes(passed=6, xfailed=1)


@pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])
def test_async_system_and_async_decorated_test(pytester: pytest.Pytester, workers: str) -> None:
    """An `async def` system (file route) and an `async def` @ragate.goldset test awaiting
    one are scored like sync ones: same rows, same outcomes."""
    write_goldset(pytester.path / "gs", floors="[floors]\ncitation_accuracy = 0.60\n")
    async_system = SYSTEM.replace("    def answer(text):", "    async def answer(text):\n"
                                  "        await asyncio.sleep(0)").replace(
        "import pytest\n", "import asyncio\nimport pytest\n", 1)
    assert "async def answer" in async_system and "await asyncio.sleep(0)" in async_system
    pytester.makeconftest(async_system)
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("gs")
@ragate.floor(citation_accuracy=0.60)
async def test_mine(ragate_question, ragate_system):
    return await ragate_system(ragate_question.question)
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", workers, "-rA",
                                           "-W", "error::RuntimeWarning", "gs", "test_rag.py",
                                           "--ragate-results=r.jsonl")
    for line in ("PASSED gs/ragate.toml::q1", "PASSED test_rag.py::test_mine[q1]"):
        result.stdout.fnmatch_lines(esc(line))
    result.assert_outcomes(passed=10)
    rows = results_rows(pytester.path / "r.jsonl")
    by_route: dict[str, dict[str, dict[str, object]]] = {}
    for row in rows:
        by_route.setdefault(row["route"], {})[row["question_id"]] = {
            k: v for k, v in row.items() if k not in ("route", "system")}
    assert set(by_route) == {"gs/ragate.toml", "test_rag.py::test_mine"}
    file_rows, test_rows = by_route["gs/ragate.toml"], by_route["test_rag.py::test_mine"]
    assert set(file_rows) == set(test_rows) == {"q1", "q2", "q3", "q4"}
    assert {(q, k) for q in file_rows for k in file_rows[q]
            if file_rows[q][k] != test_rows[q].get(k)} == set()
    assert by_route["gs/ragate.toml"]["q1"]["citations_correct"] == 1
    assert by_route["gs/ragate.toml"]["q4"]["abstained"] is True


def test_decorator_route_missing_goldset_is_a_collection_error(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("goldsets/nowhere")
def test_x(ragate_question):
    return None
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # the test module sits in the rootdir: the one folder searched is named once
    result.stdout.fnmatch_lines([f"*test_x: goldset 'goldsets/nowhere' not found under "
                                 f"{pytester.path}"])
    assert f"{pytester.path} or {pytester.path}" not in result.stdout.str()
