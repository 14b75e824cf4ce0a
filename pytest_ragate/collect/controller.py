"""The controller: gathers what every worker's reports bring, and once the loop ends has the
run concluded (`concluding.py`: decided, reported, written, promoted).

It lives only where reports from all workers arrive (the main process, or the xdist
controller), like pytest's LogXML, and is registered in every run: the xdist controller
collects nothing, so it cannot know in advance whether a run has goldsets. So this module is
light. It keeps, as plain values, what every run has (which items started, which failed and
why, which workers went down), and makes the `Conclusion` (the one import of the deciding,
reporting and writing parts) once a goldset shows up: a record, an anchor outcome, a
worker's description of its goldsets, a selected goldset item, or a ragate output to write.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.collect.keys import (
    ANCHOR_ATTR,
    NO_SYSTEM_ATTR,
    RECORD_ATTR,
    WORKEROUTPUT_KEY,
    is_goldset_item,
)
from pytest_ragate.settings import read_settings

if TYPE_CHECKING:
    from pytest_ragate.collect.concluding import Conclusion

Location = tuple[str, int | None, str]


def summary_line(text: object) -> str:
    """The line of a failure that says what happened (a traceback ends with it)."""
    lines = str(text).strip().splitlines()
    return lines[-1].strip() if lines else ""


def _worker_id(report: pytest.TestReport) -> str | None:
    """The xdist worker a report came from (`gw0`), None in a run without xdist."""
    return getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)


class Controller:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = settings = read_settings(config)
        self.selected: list[pytest.Item] | None = None  # this process's items, when it collects
        self.started: dict[str, Location] = {}
        self.failed: dict[str, tuple[str, str]] = {}  # node id -> (phase, why), the first
        self.down: list[str] = []  # xdist workers that went down, and why
        self.no_system: dict[str, int] = {}  # goldset file -> items that had no system
        self.last_on: dict[str, str] = {}  # xdist worker -> the last item it reported
        self.conclusion: Conclusion | None = None
        if settings.gate.baseline or settings.run.outputs or settings.run.promote:
            self.concluding()  # a bad baseline is a usage error before anything runs

    def concluding(self) -> Conclusion:
        if self.conclusion is None:
            from pytest_ragate.collect.concluding import Conclusion

            self.conclusion = Conclusion(self.config, self.settings)
        return self.conclusion

    def pytest_runtest_logstart(self, nodeid: str, location: Location) -> None:
        self.started[nodeid] = location

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every worker's reports pass through here; keep the ragate records they carry, and
        why any report failed (xdist's report of a crashed worker carries no record)."""
        row = getattr(report, RECORD_ATTR, None)
        if row is not None:
            self.concluding().add_record(report, row)
            delattr(report, RECORD_ATTR)  # kept as a QuestionRecord now, not twice
        anchor = getattr(report, ANCHOR_ATTR, None)
        if anchor is not None:
            self.concluding().add_anchor(report, anchor)
        worker = _worker_id(report)
        if worker is not None:
            self.last_on[worker] = report.nodeid
        route = getattr(report, NO_SYSTEM_ATTR, None)
        if route is not None:
            self.no_system[route] = self.no_system.get(route, 0) + 1
        if report.failed and not hasattr(report, "wasxfail"):
            self.failed.setdefault(report.nodeid, (report.when or "",
                                                   summary_line(report.longrepr)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        """A worker that died while running a floor died tearing down what earlier items set
        up (a floor does nothing, and logs no start: `items.run_floor`). The crash is the
        last item's that worker reported, at its teardown, or the worker's when none did:
        never the floor's, which the controller decides and reports once."""
        if crashitem in self.started:
            return
        worker = _worker_id(report) or "a worker"
        last = self.last_on.get(worker)
        report.when = "teardown"
        if last is None:
            report.nodeid = report.location[0]
            report.longrepr = (f"worker {worker!r} crashed while tearing down, before any item "
                               "it ran reported")
            return
        report.nodeid, report.location = last, self.started.get(last, report.location)
        report.longrepr = (f"worker {worker!r} crashed while tearing down after {last!r} (its "
                           "session or module fixtures, or a plugin's clean-up)")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: take its description of the collection. A worker that
        crashed sends none; the others (and its replacement) do."""
        output = getattr(node, "workeroutput", None) or {}
        if WORKEROUTPUT_KEY in output:
            self.concluding().add_collected(output[WORKEROUTPUT_KEY])
        if error:
            gateway = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.down.append(f"{gateway}: {summary_line(error)}")

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if self.config.option.collectonly:
            return result
        if self.settings.run.decide:  # `ragate decide`: saved results, not this session's
            from pytest_ragate.collect.deciding import DECIDE_KEY

            deciding = self.config.stash[DECIDE_KEY]
            if not deciding.problems:
                self.concluding().conclude_saved(session, deciding)
            return result
        if self.selected is not None and any(map(is_goldset_item, self.selected)):
            self.concluding()
        if self.conclusion is not None:
            self.conclusion.conclude(session, self.selected, self.started, self.failed,
                                     self.down)
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.no_system:
            from pytest_ragate.collect.provenance import missing_summary

            terminalreporter.write_line(missing_summary(self.no_system), red=True, bold=True)
        if self.conclusion is not None:
            self.conclusion.terminal_summary(terminalreporter)
        if self.settings.run.decide:
            from pytest_ragate.collect.deciding import DECIDE_KEY

            for note in self.config.stash[DECIDE_KEY].notes:
                terminalreporter.write_line(f"ragate decide: {note}", yellow=True)
