"""Why did the gate fail? Said where people look: the floor's message, the JUnit test case's
`<system-out>`, the rows and the reports (with and without `-n 2`)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import WORKERS, both_routes, esc, results_rows, write_goldset
from tests.test_anchors import ANCHORS, RETRIEVER
from tests.test_plugin import FLOORS, SYSTEM


def junit_testcases(path: Path) -> dict[str, ET.Element]:
    return {f"{c.get('classname')}::{c.get('name')}": c
            for c in ET.parse(path).getroot().iter("testcase")}


@WORKERS
def test_floors_name_their_worst_questions_and_junit_reads_like_a_report(
        pytester: pytest.Pytester, workers: str) -> None:
    """The floors' messages, each question's JUnit case and the reports say why; the same
    run's anchors are a table of the Markdown and HTML reports (`anchors_in_the_reports`)."""
    write_goldset(pytester.path / "gs", floors=FLOORS, anchors=ANCHORS)
    pytester.makeconftest(SYSTEM + RETRIEVER)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", workers, "gs",
                                           "--junitxml=j.xml", "--ragate-results=r.jsonl",
                                           "--ragate-report=r.md", "--ragate-html=r.html")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # evidence recall 2/4: q2 found none of its span, q3 one of its two
    result.stdout.fnmatch_lines(esc("*evidence_recall 0.50 < floor 0.90 · n=4 spans*· worst: "
                                    "q2 found 0/1 spans; q3 found 1/2 spans"))
    cases = junit_testcases(pytester.path / "j.xml")
    floor = cases["gs.ragate.toml::floor[evidence_recall]"]
    assert "worst: q2 found 0/1 spans; q3 found 1/2 spans" in floor.find("failure").text
    props = {p.get("name"): p.get("value") for p in floor.iter("property")}
    assert props["n"] == "4"  # a count, written as an integer
    out = cases["gs.ragate.toml::q2"].find("system-out").text
    *lines, bill = out.splitlines()
    assert lines == [
        "question: What about q2?",
        "answer: an answer",
        "  ✗ [m1 · units 0–1]",
        "expected:",
        "  [m2 · units 5–5 · A]",
        "abstention right · citations 0/1 right · evidence 0/1 found (ranks —) in 1 contexts",
    ]
    assert re.fullmatch(r"latency \d+\.\d\d s", bill), bill  # the clock's: not pinned
    assert cases["gs.ragate.toml::q4"].find("system-out").text.startswith(
        "question: What about q4?\nanswer: (abstained)\nexpected: none, must abstain\n")
    row = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}["q3"]
    assert row["question"] == "What about q3?"
    assert row["expected"] == ["[m1 · units 0–0 · B]", "[m3 · units 4–5 · B, A]"]
    report = (pytester.path / "r.md").read_text()
    assert "| q3         | What about q3? |" in report
    assert "[m1 · units 0–0 · B] [m3 · units 4–5 · B, A]" in report
    html = (pytester.path / "r.html").read_text()
    assert '<div class="small qtext">What about q3?</div>' in html
    anchors_in_the_reports(report, html)  # `fixed` now holds: a strict XPASS


def anchors_in_the_reports(report: str, html: str) -> None:
    """The anchors' table in the Markdown report, and the HTML's."""
    section = report[report.index("### Anchors"):]
    table = [[cell.strip() for cell in line.split("|")[1:-1]]
             for line in section.splitlines() if line.startswith("| ")]
    assert table[0] == ["anchor", "kind", "outcome", "claim", "strict xfail", "why"]
    by_id = {row[0]: row for row in table[2:]}
    assert by_id["missed"][1:5] == ["retrieval_miss", "XFAIL", "the colour is red",
                                    "still missed"]
    assert "evidence m1 units 8-9 is not in the pool" in by_id["missed"][5]
    assert by_id["fixed"][2] == "XPASS(strict)" and by_id["control"][2] == "PASS"
    assert '<table class="anchors">' in html and "<code>missed</code>" in html


@WORKERS
def test_a_fixture_verdict_stamped_for_another_answer_is_stale(pytester: pytest.Pytester,
                                                               workers: str) -> None:
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from tests.conftest import FIXTURE_JUDGE_CONFTEST

    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n")
    pytester.makeconftest(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    judge = pytester.path / "judge.json"
    judge.write_text(json.dumps({"judge_id": "v", "answers": {
        q: {"statements": ["s"], "supported": [True]} for q in ("q1", "q2", "q3")}}))
    args = ["-p", "no:cacheprovider", "-n", workers, "gs", "--ragate-judge=fixture:judge.json",
            "--ragate-cache=off", "--ragate-results=r.jsonl"]
    assert pytester.runpytest_inprocess(*args).ret == pytest.ExitCode.OK
    stamped = CliRunner().invoke(main, ["stamp", str(pytester.path / "r.jsonl"),
                                        "--verdicts", str(judge)])
    assert stamped.exit_code == 0 and "stamped 3 verdicts" in stamped.output
    if workers == "0":  # the contrast (same answers, fresh stamps), in one process
        assert pytester.runpytest_inprocess(*args).ret == pytest.ExitCode.OK

    pytester.makeconftest(SYSTEM.replace('text="an answer"', 'text="a new answer" if qid == '
                                         '"q2" else "an answer"') + FIXTURE_JUDGE_CONFTEST)
    changed = pytester.runpytest_inprocess(*args)
    assert changed.ret == pytest.ExitCode.TESTS_FAILED
    changed.stdout.fnmatch_lines(esc("*judge_coverage 0.67 < floor 0.95*worst: q2 2 judge "
                                     "failed (stale)"))
    row = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}["q2"]
    assert row["metrics"]["faithfulness"] is None
    assert row["judge_failures"]["faithfulness"].startswith(
        "stale: stale fixture verdict: judge.json judged another answer to 'q2'")


def test_the_console_says_which_goldsets_it_collected_and_how_many_items(
        pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs", floors=FLOORS)
    both_routes(pytester, SYSTEM)
    result = pytester.runpytest("-p", "no:cacheprovider", "gs", "test_rag.py", "-k",
                                "not q4", "--collect-only")
    result.stdout.fnmatch_lines(["ragate: mini (gs/ragate.toml): 3 questions, 6 floors",
                                 "ragate: mini (test_rag.py::test_mine): 3 questions, 6 floors"])
