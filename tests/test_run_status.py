"""A run's badge (decision/run_status.py), as every output says it: PASS only when every floor
was decided and passed over every question; NOTHING RAN, PARTIAL or FLOOR NOT DECIDED
otherwise, in the Markdown and HTML reports, the history line's status, JUnit and the
terminal (issue 38 case 5, the badge parts: `-k nomatch` and a `-k floor` run that scored
nothing badged PASS). Decided goldset runs built by hand; the end-to-end runs are in
tests/test_partial_runs.py."""

from __future__ import annotations

import pytest

from pytest_ragate.decision.run_status import Status, goldset_status, overall_status
from pytest_ragate.outputs.history import build_line
from pytest_ragate.outputs.html import render_html
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.scoring.gates import Floor, Gap, Verdict
from pytest_ragate.scoring.run import GoldsetRun
from tests.test_saved_runs import row

FLOOR = Floor("citation_accuracy", 0.5)


def verdict(outcome: str, message: str = "") -> Verdict:
    return Verdict(floor=FLOOR, goldset="mini", outcome=outcome,  # type: ignore[arg-type]
                   message=message)


def run(asked: int, deselected: int = 0, outcome: str = "passed",
        name: str = "mini") -> GoldsetRun:
    return GoldsetRun(name=name, eval_version="7", route=f"{name}/ragate.toml",
                      records=[row(i) for i in range(asked)], population=asked + deselected,
                      gaps=[Gap(member=f"q{i:02d}", member_kind="single_meeting",
                                kind="deselected") for i in range(asked, asked + deselected)],
                      verdicts=[verdict(outcome)])


CASES = {
    "whole": (run(40), Status.PASSED, "PASS"),
    "failed": (run(40, outcome="failed"), Status.FAILED, "FAIL"),
    "-k floor": (run(0, 40, "skipped"), Status.NOTHING_RAN,
                 "NOTHING RAN: 40 of 40 questions deselected (-k, -m or --lf)"),
    "-k q0": (run(10, 30, "skipped"), Status.PARTIAL,
              "PARTIAL: 30 of 40 questions deselected (-k, -m or --lf)"),
    "no judge": (run(40, outcome="skipped"), Status.NOT_DECIDED,
                 "FLOOR NOT DECIDED: floor[citation_accuracy]"),
    "xfailed": (run(40, outcome="xfailed"), Status.PASSED, "PASS"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_goldset_says_what_it_was(case: str) -> None:
    decided, status, badge = CASES[case]
    said = goldset_status(decided)
    assert (said.status, said.badge) == (status, badge)
    assert build_line(decided, git=None).status == status.value
    md = markdown([decided])
    assert f"## mini (eval_version 7) **{status.word}**" in md
    if not said.sure:
        assert f"\n{badge}.\n" in md
    html = render_html([decided])
    assert f'<h2>mini <span class="badge o-{status.css}">{status.word}</span></h2>' in html


def test_a_run_in_which_nothing_ran_writes_no_pass_anywhere() -> None:
    """`-k nomatch`: no goldset run at all."""
    md, html = markdown([]), render_html([])
    assert "PASS" not in md and "PASS" not in html
    assert "Run: **NOTHING RAN**: no goldset question ran" in md
    assert 'ragate report <span class="badge o-skipped">NOTHING RAN</span>' in html
    assert "NOTHING RAN: no goldset question ran." in html


def test_the_whole_run_is_its_worst_goldset() -> None:
    mixed = [run(40), run(0, 40, "skipped", name="other")]
    said = overall_status(mixed, failed=False)
    assert said.badge == ("PARTIAL: other: NOTHING RAN: 40 of 40 questions deselected "
                          "(-k, -m or --lf)")
    assert markdown(mixed).splitlines()[2] == f"Run: **PARTIAL**: {said.why}"
    assert overall_status(mixed, failed=True).status is Status.FAILED
    assert overall_status([run(40), run(40, name="b")], failed=False).badge == "PASS"


def test_pass_and_fail_say_what_they_said_before() -> None:
    """A whole run's outputs are as they were: `Run: **PASS**`, `Run: **FAIL** (the pytest
    run exits non-zero)`, and no notice."""
    assert markdown([run(40)]).splitlines()[2] == "Run: **PASS**"
    assert markdown([run(40)], run_failed=True).splitlines()[2] == (
        "Run: **FAIL** (the pytest run exits non-zero)")
    html = render_html([run(40)])
    assert 'data-run-status' not in html and "o-passed" in html
