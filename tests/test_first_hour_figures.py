"""The first hour: a run without floors shows its figures and the floors they suggest
(`ragate suggest` says the same from a saved run), and the Markdown report says why a floor
failed, as the HTML report and the terminal do (with and without `-n 2`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import WORKERS, esc, saved_results, write_goldset
from tests.test_plugin import SYSTEM

RUN = ("-p", "no:cacheprovider", "gs", "--ragate-results=r.jsonl")
# SYSTEM answers q1 right, q2 with the wrong turns, q3 with one of its two spans, abstains
# from q4: abstention 4/4, evidence recall 2/4 spans, citations 2 of 3 answers right
FIGURES = [
    "*citation_accuracy*0.67*[0.03, 1.00]*3*single_doc 0.50 (n=2) · multi_doc "
    "1.00 (n=1)*mechanical*0.00",
    "*abstention_accuracy*1.00*[0.51, 1.00]*4*single_doc 2/2 · multi_doc 1/1 · "
    "unanswerable 1/1*mechanical*0.50",
    "*evidence_recall*0.50*[0.15, 0.85]*4*single_doc 1/2 · multi_doc 1/2*mechanical"
    "*0.15",
]
BLOCK = [
    "[floors]",
    "# each suggested floor is the 95% interval's lower bound (the interval its floor is "
    "decided on) rounded down to 0.05: today's figures clear it, with ragate_ci = strict "
    "too, and a rerun clears it while its figure stays within today's interval",
    "# citation_accuracy = 0.00  (its 95% lower bound is 0 over n=3 cited answers: a floor "
    "there gates nothing)",
    "abstention_accuracy = 0.50",
    "evidence_recall = 0.15",
]


def block_of(lines: list[str]) -> list[str]:
    start = lines.index("[floors]")
    return lines[start:start + len(BLOCK)]


def test_the_suggested_floors_pasted_into_ragate_toml_hold_even_when_strict(
        pytester: pytest.Pytester) -> None:
    """The floors decided over the figures above (the decision is the controller's: -n 0)."""
    write_goldset(pytester.path / "gs", floors="\n".join(BLOCK) + "\n")
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_inprocess(*RUN, "-n", "0", "-o", "ragate_ci=strict")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(esc("*abstention_accuracy*0.50*1.00*[0.51, 1.00]*PASS",
                                    "*evidence_recall*0.15*0.50*[0.15, 0.85]*PASS"))
    assert "[floors]" not in result.stdout.lines  # a goldset with floors is not told again


def suggest(*paths: object) -> tuple[int, list[str]]:
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    out = CliRunner().invoke(main, ["suggest", *map(str, paths)])
    return out.exit_code, out.output.splitlines()


@WORKERS
def test_a_run_without_floors_prints_its_figures_and_ragate_suggest_the_same_from_its_results(
        pytester: pytest.Pytester, workers: str) -> None:
    """One run: the terminal's figures and suggested floors, and `ragate suggest` over the
    results file it saved saying the same."""
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM)
    run = pytester.runpytest_inprocess(*RUN, "-n", workers)
    assert run.ret == pytest.ExitCode.OK
    run.stdout.fnmatch_lines(esc(
        "*= ragate floors =*", "mini: 4 questions: 4 scored",
        "goldset*metric*value*95% interval*n*by kind*computed by*suggested floor",
        *FIGURES, "mini: no floors yet; suggested, to paste into its ragate.toml:"))
    assert not any("faithfulness" in line for line in run.stdout.lines)  # no judge ran
    code, lines = suggest(pytester.path / "r.jsonl")
    assert code == 0, lines
    pytest.LineMatcher(lines).fnmatch_lines(esc(
        "goldset*metric*value*95% interval*n*by kind*computed by*suggested floor", *FIGURES,
        "mini: floors its figures suggest (beside any floors its ragate.toml has), to paste "
        "into its ragate.toml:"))
    assert block_of(lines) == BLOCK == block_of(run.stdout.lines)


def test_ragate_suggest_refuses_a_file_it_cannot_read_or_that_is_not_whole(
        tmp_path: Path) -> None:
    """Over a whole run's file as a gate writes it (`saved_results`: header, rows, trailer),
    broken three ways; no run needed."""
    from pytest_ragate.scoring.records import QuestionRecord

    row = QuestionRecord.model_validate({
        "goldset": "mini", "question_id": "q1", "kind": "single_doc", "index": 0,
        "eval_version": "7", "must_abstain": False, "abstained": False,
        "abstention_correct": True, "evidence_spans": 0})
    saved = tmp_path / "r.jsonl"
    saved.write_text(saved_results([row]))
    assert suggest(saved)[0] == 0  # whole, it is read
    lines = saved.read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(lines[0] + "{not json\n" + "".join(lines[1:]))
    code, out = suggest(bad)
    assert code == 1
    assert any(f"{bad}:2" in line and "malformed JSON" in line for line in out), out
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]))  # no trailer: a file cut short
    code, out = suggest(cut)
    assert code == 1
    assert any(str(cut) in line and "no trailer line" in line for line in out), out
    code, out = suggest(saved, saved)  # the same run twice would count each question twice
    assert code == 1
    assert any("these are not the shards of one run" in line for line in out), out


WORST = ("floor[evidence_recall]: worst: q2 found 0/1 spans; q3 found 1/2 spans",
         "floor[citation_accuracy]: worst: q2 0/1 citations right")


def test_the_markdown_report_lists_the_failing_floors_worst_questions_as_html_and_terminal(
        pytester: pytest.Pytester) -> None:
    """What the three outputs say of one decided run (rows travelling under -n 2 are the
    first test's and the judged one's)."""
    write_goldset(pytester.path / "gs", floors="[floors]\ncitation_accuracy = 0.9\n"
                  "evidence_recall = 0.9\nabstention_accuracy = 0.5\n")
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_inprocess(*RUN, "-n", "0", "--ragate-report=r.md",
                                           "--ragate-html=r.html")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    markdown = (pytester.path / "r.md").read_text()
    html = (pytester.path / "r.html").read_text()
    assert "Why the failing floors failed:" in markdown
    for line in WORST:
        assert f"- {line}\n" in markdown
        assert f"<li>{line}</li>" in html
        assert f"mini: {line}" in result.stdout.lines  # in the ragate floors summary
    assert "floor[abstention_accuracy]: worst" not in markdown  # it held: nothing to explain


@WORKERS
def test_judged_figures_appear_when_a_judge_ran_and_the_markdown_has_the_block(
        pytester: pytest.Pytester, workers: str) -> None:
    import json

    from tests.conftest import FIXTURE_JUDGE_CONFTEST

    write_goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    (pytester.path / "judge.json").write_text(json.dumps({"judge_id": "v", "answers": {
        q: {"statements": ["s"], "supported": [q != "q2"]} for q in ("q1", "q2", "q3")}}))
    result = pytester.runpytest_inprocess(*RUN, "-n", workers, "--ragate-report=r.md",
                                           "--ragate-judge=fixture:judge.json",
                                           "--ragate-cache=off")
    assert result.ret == pytest.ExitCode.OK
    # q2's one statement unsupported: faithfulness 2 of 3 judged answers
    judged = esc("*faithfulness*0.67*[0.03, 1.00]*3*single_doc 0.50 (n=2) · multi_doc "
                 "1.00 (n=1)*fixture:v*0.00",
                 "*judge_coverage*1.00*[0.70, 1.00]*9*fixture:v*0.70")
    result.stdout.fnmatch_lines(judged)
    block = block_of(result.stdout.lines)[:len(BLOCK)]
    assert block == BLOCK
    assert "judge_coverage = 0.70" in result.stdout.lines
    markdown = (pytester.path / "r.md").read_text()
    assert "### Figures (no floors yet)" in markdown
    pytest.LineMatcher(markdown.splitlines()).fnmatch_lines(
        [f"|*{pattern.strip('*')}*|" for pattern in judged])
    assert "```toml\n" + "\n".join(BLOCK) in markdown
