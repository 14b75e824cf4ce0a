"""A run's badge (`decision/goldset_run`: `GoldsetRun.status`, `run_status`; worded by
`wording/runs.py`), as every output says it: PASS only when every floor was decided and
passed over every question; NOTHING RAN, PARTIAL or FLOOR NOT DECIDED otherwise, in the
Markdown and HTML reports, the history line's status, JUnit and the terminal (issue 38 case
5, the badge parts: a `-k floor` run that scored nothing badged PASS). Decided goldset runs
built by hand; a run with no goldset at all is tests/test_html_report.py's, the end-to-end
runs are in tests/test_partial_runs.py."""

from __future__ import annotations

import pytest

from pytest_ragate.decision.floors import Gap, Verdict
from pytest_ragate.decision.goldset_run import GoldsetRun, run_status
from pytest_ragate.outputs.history import build_line
from pytest_ragate.outputs.html import render_html
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.wording.runs import STATUS_WORDS, badge_of, run_why, status_badge
from tests.test_saved_runs import row

FLOOR = Floor("citation_accuracy", 0.5)


def verdict(outcome: str, message: str = "") -> Verdict:
    return Verdict(floor=FLOOR, goldset="mini", outcome=outcome,  # type: ignore[arg-type]
                   said=message)


def run(asked: int, deselected: int = 0, outcome: str = "passed",
        name: str = "mini") -> GoldsetRun:
    return GoldsetRun(name=name, eval_version="7", route=f"{name}/ragate.toml",
                      records=[row(i) for i in range(asked)], population=asked + deselected,
                      gaps=[Gap(member=f"q{i:02d}", member_kind="single_doc",
                                kind="deselected") for i in range(asked, asked + deselected)],
                      verdicts=[verdict(outcome)])


CASES = {
    "whole": (run(40), "passed", "PASS"),
    "failed": (run(40, outcome="failed"), "failed", "FAIL"),
    "-k floor": (run(0, 40, "skipped"), "nothing_ran",
                 "NOTHING RAN: 40 of 40 questions deselected (-k or -m)"),
    "-k q0": (run(10, 30, "skipped"), "partial",
              "PARTIAL: 30 of 40 questions deselected (-k or -m)"),
    "no judge": (run(40, outcome="skipped"), "not_decided",
                 "FLOOR NOT DECIDED: floor[citation_accuracy]"),
    "xfailed": (run(40, outcome="xfailed"), "passed", "PASS"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_goldset_says_what_it_was(case: str) -> None:
    decided, status, badge = CASES[case]
    assert (decided.status, badge_of(decided)) == (status, badge)
    assert build_line(decided, git=None).status == status
    word = STATUS_WORDS[status]
    md = markdown([decided])
    assert f"## mini (eval_version 7) **{word}**" in md
    if status not in ("passed", "failed"):
        assert f"\n{badge}.\n" in md
    html = render_html([decided])
    assert f'<h2>mini <span class="badge o-{status}">{word}</span></h2>' in html


def test_the_whole_run_is_its_worst_goldset() -> None:
    """A goldset that ran nothing beside one that passed: the run is PARTIAL, not PASS (its
    floors were not all decided)."""
    mixed = [run(40), run(0, 40, "skipped", name="other")]
    status = run_status(mixed, failed=False)
    assert status_badge(status, run_why(mixed, status)) == (
        "PARTIAL: other: NOTHING RAN: 40 of 40 questions deselected (-k or -m)")
    assert markdown(mixed).splitlines()[2] == f"Run: **PARTIAL**: {run_why(mixed, status)}"
    assert run_status(mixed, failed=True) == "failed"
    assert run_status([run(40), run(40, name="b")], failed=False) == "passed"


def test_pass_and_fail_say_what_they_said_before() -> None:
    """A whole run's outputs are as they were: `Run: **PASS**`, `Run: **FAIL** (the pytest
    run exits non-zero)`, and no notice."""
    assert markdown([run(40)]).splitlines()[2] == "Run: **PASS**"
    assert markdown([run(40)], run_failed=True).splitlines()[2] == (
        "Run: **FAIL** (the pytest run exits non-zero)")
    html = render_html([run(40)])
    assert 'data-run-status' not in html and "o-passed" in html
