"""Concluding a run that has goldsets: the reports' records and anchor outcomes validated,
the run decided (`decision.py`), reported (`reporter.py`), written (`outputs/writers.py`)
and promoted. The controller (`controller.py`) makes one only once a goldset has shown up.
"""

from __future__ import annotations

from collections.abc import Iterable
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
from pytest_ragate.collect.wire import Collected
from pytest_ragate.goldsets.promotion import Promotion, promote_anchors, promote_floors, summary
from pytest_ragate.outputs.baseline import BaselineError, load_baseline
from pytest_ragate.outputs.writers import Written, write_outputs
from pytest_ragate.scoring.gates import Floor, Strictness
from pytest_ragate.scoring.metrics import AnchorOutcome, QuestionRecord
from pytest_ragate.scoring.run import GoldsetRun
from pytest_ragate.settings import Settings

Location = tuple[str, int | None, str]


class Conclusion:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.arrived = Arrived()
        self.collected: Collected | None = None
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

    def add_record(self, report: pytest.TestReport, row: dict[str, Any]) -> None:
        record = self.arrived.records[report.nodeid] = QuestionRecord.model_validate(row)
        if report.when == "call":
            reporter.junit_text(self.config, report, record)

    def add_anchor(self, report: pytest.TestReport, row: dict[str, Any]) -> None:
        self.arrived.anchors[report.nodeid] = AnchorOutcome.model_validate(row)

    def add_collected(self, description: Collected | dict[str, Any]) -> None:
        """Every process collects the same items: the first description is the run's."""
        if self.collected is None:
            self.collected = Collected.model_validate(description)

    def conclude(self, session: pytest.Session, selected: list[pytest.Item] | None,
                 started: dict[str, Location], failed: dict[str, tuple[str, str]],
                 down: list[str]) -> None:
        if selected is not None:
            self.add_collected(collected(selected))
        self.arrived.started = started
        self.arrived.failed = {nodeid: Failure(*f) for nodeid, f in failed.items()}
        self.arrived.down = down
        self.decision = decide_run(self.collected, self.arrived, self.rules)
        reporter.report_decision(self.config, self.decision, started)
        run_failed = bool(session.testsfailed) or bool(session.shouldfail)
        for run in self.runs:
            run.run_failed = run_failed
        self.written = write_outputs(
            self.settings.run, self.runs, rootdir=self.config.rootpath,
            cut_short=bool(session.shouldstop or session.shouldfail), failed=run_failed,
            ci=self.settings.gate.ci)
        if self.settings.run.promote:
            self.promotion = promote(self.arrived.anchors.values(), self.decision.floors)

    def terminal_summary(self, terminalreporter: Any) -> None:
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
