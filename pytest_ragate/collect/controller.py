"""The controller: holds what pytest's hooks bring, and once the loop ends has the run decided
(`decision.py`), reported (`reporter.py`), written (`outputs/writers.py`) and promoted.

It lives only where reports from all workers arrive (the main process, or the xdist
controller), like pytest's LogXML.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.collect import reporter
from pytest_ragate.collect.decision import (
    Arrived,
    Decision,
    Failure,
    FloorDecision,
    Rules,
    decide_run,
)
from pytest_ragate.collect.items import collected
from pytest_ragate.collect.wire import (
    ANCHOR_ATTR,
    RECORD_ATTR,
    WORKEROUTPUT_KEY,
    Collected,
)
from pytest_ragate.goldsets.promotion import Promotion, promote_anchors, promote_floors, summary
from pytest_ragate.outputs.baseline import BaselineError, load_baseline
from pytest_ragate.outputs.writers import Written, write_outputs
from pytest_ragate.scoring.gates import Floor, Strictness
from pytest_ragate.scoring.metrics import AnchorOutcome, QuestionRecord
from pytest_ragate.scoring.run import GoldsetRun
from pytest_ragate.settings import read_settings


def summary_line(text: object) -> str:
    """The line of a failure that says what happened (a traceback ends with it)."""
    lines = str(text).strip().splitlines()
    return lines[-1].strip() if lines else ""


class Controller:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = settings = read_settings(config)
        self.arrived = Arrived()
        self.collected: Collected | None = None
        self.selected: list[pytest.Item] | None = None  # this process's items, when it collects
        self.decision = Decision()
        self.promotion: list[str] = []
        self.written = Written()
        gate = settings.gate
        baseline = None
        if gate.baseline:
            try:
                baseline = load_baseline(gate.baseline, config.rootpath)
            except BaselineError as error:
                raise pytest.UsageError(str(error)) from None
        self.rules = Rules(Strictness(gate.ci, gate.min_n, gate.sealed_without_key),
                           settings.run.require_judge, baseline, gate.alpha)

    @property
    def runs(self) -> list[GoldsetRun]:
        return self.decision.runs

    def add_collected(self, collected: Collected) -> None:
        """Every process collects the same items: the first description is the run's."""
        if self.collected is None:
            self.collected = collected

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str],
                                ) -> None:
        self.arrived.started[nodeid] = location

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every worker's reports pass through here; keep the ragate records they carry, and
        why any report failed (xdist's report of a crashed worker carries no record)."""
        row = getattr(report, RECORD_ATTR, None)
        if row is not None:
            record = self.arrived.records[report.nodeid] = QuestionRecord.model_validate(row)
            if report.when == "call":
                reporter.junit_text(self.config, report, record)
        anchor = getattr(report, ANCHOR_ATTR, None)
        if anchor is not None:
            self.arrived.anchors[report.nodeid] = AnchorOutcome.model_validate(anchor)
        if report.failed and not hasattr(report, "wasxfail"):
            self.arrived.failed.setdefault(report.nodeid, Failure(
                report.when or "", summary_line(report.longrepr)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: take its description of the collection. A worker that
        crashed sends none; the others (and its replacement) do."""
        output = getattr(node, "workeroutput", None) or {}
        if WORKEROUTPUT_KEY in output:
            self.add_collected(Collected.model_validate(output[WORKEROUTPUT_KEY]))
        if error:
            gateway = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.arrived.down.append(f"{gateway}: {summary_line(error)}")

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self.config.option.collectonly:
            if self.selected is not None:
                self.add_collected(collected(self.selected))
            self.decision = decide_run(self.collected, self.arrived, self.rules)
            reporter.report_decision(self.config, self.decision, self.arrived.started)
            failed = bool(session.testsfailed) or bool(session.shouldfail)
            for run in self.runs:
                run.run_failed = failed
            self.written = write_outputs(
                self.settings.run, self.runs, rootdir=self.config.rootpath,
                cut_short=bool(session.shouldstop or session.shouldfail), failed=failed,
                ci=self.settings.gate.ci)
            if self.settings.run.promote:
                self.promotion = promote(self.arrived.anchors.values(), self.decision.floors)
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        reporter.terminal_summary(terminalreporter, self.runs, down=self.arrived.down,
                                  promotion=self.promotion,
                                  outputs=self.settings.run.outputs,
                                  history_notes=self.written.notes)


def promote(anchors: Iterable[AnchorOutcome], floors: Iterable[FloorDecision]) -> list[str]:
    """Rewrite the xfail of every anchor and floor that XPASSed in this run; say what was
    done, what was not run, and what must be promoted by hand."""
    promoted: list[Promotion] = []
    by_file: dict[str, list[str]] = {}
    for anchor in anchors:
        if anchor.outcome == "xpassed":
            by_file.setdefault(anchor.path, []).append(anchor.anchor_id)
    for path, ids in by_file.items():
        promoted += promote_anchors(Path(path), ids)
    by_config: dict[str, list[Floor]] = {}
    by_hand, not_run = [], []
    for spec, verdict in ((d.spec, d.verdict) for d in floors):
        if not spec.floor.xfail:
            continue
        name = f"{spec.goldset}::{spec.floor.name}"
        if verdict.outcome == "skipped":
            not_run.append(name)
        elif verdict.outcome == "xpassed" and spec.config_path is None:
            by_hand.append(spec.nodeid)
        elif verdict.outcome == "xpassed" and spec.config_path is not None:
            by_config.setdefault(spec.config_path, []).append(spec.floor)
    for path, keys in by_config.items():
        promoted += promote_floors(Path(path), keys)
    return summary(promoted, not_run, by_hand)
