"""Why an item failed or was skipped, in one line: the one rule every path asks.

A question's row (`error`), an anchor's outcome, and the controller's account of every failed
report (the `why` a results file keeps, and a decision replays) all take the line from here,
so a question that errored says the same thing in each of them, with and without xdist.

The line is the one pytest's own short summary shows (`FAILED id - ValueError: boom`): the
first line of the crash message pytest keeps with the report (`longrepr.reprcrash`: the
exception as `ExceptionInfo.exconly` writes it), which crosses from an xdist worker with the
report. A skip's reason is its own line. A report without a crash message (a crashed
worker's, a strict XPASS, a failure ragate wrote as text) says it in its text; a repr with
neither (a fixture that was not found) is said by the call's exception where the item ran,
and by its text where only the report arrived.
"""

from __future__ import annotations

import pytest


def failure_line(report: pytest.TestReport | pytest.CollectReport,
                 excinfo: pytest.ExceptionInfo[BaseException] | None = None) -> str:
    """The line that says why `report`'s item failed or was skipped (its outcome, when
    nothing says more); `excinfo`, the call's exception where the item ran, if at hand."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = str(crash.message)
    elif excinfo is not None:
        text = excinfo.exconly()
    else:
        text = "" if longrepr is None else str(longrepr)
    return _first_line(text) or report.outcome


def summary_line(text: object) -> str:
    """The line of a text that says what happened, for what is no item's report: an
    exception that stopped the run, a worker's error (a traceback ends with it)."""
    lines = str(text).strip().splitlines()
    return lines[-1].strip() if lines else ""


def _first_line(text: str) -> str:
    lines = text.strip("\n").splitlines()
    return lines[0] if lines else ""
