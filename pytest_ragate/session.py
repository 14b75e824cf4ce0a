"""The controller: gathers every question's record, decides the floors, writes the outputs.

It lives only where reports from all workers arrive (the main process, or the xdist
controller), like pytest's LogXML. Floors, and the regression checks against a baseline
(`::regression[<metric>]`), are reported as synthetic test reports sent through
`pytest_runtest_logreport`, so the terminal, JUnit and the exit status treat them as tests.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.gates import Strictness, decide, decide_anchors
from pytest_ragate.goldset import Floor
from pytest_ragate.metrics import QuestionRecord
from pytest_ragate.promotion import Promotion, promote_anchors, promote_floors
from pytest_ragate.promotion import summary as promotion_summary
from pytest_ragate.questions import RECORD_ATTR
from pytest_ragate.regression import (
    BaselineError,
    BaselineRun,
    Regression,
    check_run,
    load_baseline,
)
from pytest_ragate.reports import (
    GoldsetRun,
    floors_table,
    regressions_table,
    write_markdown,
    write_results,
)
from pytest_ragate.settings import read_settings

WIRE_FLOORS = "ragate_floors"
ANCHOR_ATTR = "ragate_anchor"


class Controller:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, QuestionRecord] = {}
        self.floors: dict[str, dict[str, Any]] = {}
        self.runs: list[GoldsetRun] = []
        self.anchors: dict[str, dict[str, Any]] = {}
        self.promotion_lines: list[str] = []
        self.history_deltas: dict[str, list[str]] = {}
        self.history_notes: list[str] = []
        gate = read_settings(config).gate
        self.strictness = Strictness(gate.ci, gate.min_n)
        self.baseline: list[BaselineRun] | None = None
        if gate.baseline:
            try:
                self.baseline = load_baseline(gate.baseline, config.rootpath)
            except BaselineError as error:
                raise pytest.UsageError(str(error)) from None

    def add_floors(self, wire: list[dict[str, Any]]) -> None:
        for spec in wire:
            self.floors.setdefault(spec["nodeid"], spec)

    # -- hooks ------------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every worker's reports pass through here; keep the ragate records they carry."""
        row = getattr(report, RECORD_ATTR, None)
        if row is not None:
            self.records[report.nodeid] = QuestionRecord.model_validate(row)
        anchor = getattr(report, ANCHOR_ATTR, None)
        if anchor is not None:
            self.anchors[report.nodeid] = anchor

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: take the floors it kept after -k/-m selection."""
        output = getattr(node, "workeroutput", None) or {}
        self.add_floors(output.get(WIRE_FLOORS, []))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self.config.option.collectonly:
            self.runs = self.decide()
            self.report_floors()
            self.write_outputs(session)
            if self.config.getoption("ragate_promote"):
                self.promotion_lines = self.promote()
        return result

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.promotion_lines:
            terminalreporter.write_sep("=", "ragate promote")
            for line in self.promotion_lines:
                terminalreporter.write_line(line)
        if any(run.regressions for run in self.runs):
            terminalreporter.write_sep("=", "ragate regressions against the baseline")
            terminalreporter.write_line(regressions_table(self.runs, "simple"))
        if not any(run.verdicts for run in self.runs):
            return
        terminalreporter.write_sep("=", "ragate floors")
        terminalreporter.write_line(floors_table(self.runs, "simple"))
        for run in self.runs:
            for line in run.judge_lines:
                terminalreporter.write_line(f"{run.name}: {line}",
                                            yellow=line.startswith("warning"))
        for name in ("results", "report", "html", "history"):
            path = self.config.getoption(f"ragate_{name}")
            if path:
                terminalreporter.write_line(f"ragate {name}: {path}")
        for note in self.history_notes:
            terminalreporter.write_line(f"ragate history: {note}", yellow=True)

    # -- work -------------------------------------------------------------------------------

    def decide(self) -> list[GoldsetRun]:
        runs: dict[str, GoldsetRun] = {}
        for record in sorted(self.records.values(), key=lambda r: (r.goldset, r.index)):
            runs.setdefault(record.goldset, GoldsetRun(record.goldset, record.eval_version))
            runs[record.goldset].records.append(record)
        require = self.config.getoption("ragate_require_judge")
        for spec in self.floors.values():
            run = runs.setdefault(spec["goldset"], GoldsetRun(spec["goldset"],
                                                              spec["eval_version"]))
            floor = Floor(spec["metric"], spec["min"], spec["kind"], spec["xfail"],
                          spec["anchors"])
            if floor.anchors:
                anchors = [a for a in self.anchors.values() if a["goldset"] == run.name]
                verdict = decide_anchors(floor, run.name, anchors, self.strictness)
            else:
                judge = next((r.judge for r in run.records if r.judge), None)
                verdict = decide(floor, run.name, run.records, judge=judge,
                                 require_judge=require, strictness=self.strictness)
            run.verdicts.append(verdict)
            spec["verdict"] = verdict
        if self.baseline is not None:
            self.check_regressions(runs)
        return [runs[name] for name in sorted(runs)]

    def check_regressions(self, runs: dict[str, GoldsetRun]) -> None:
        assert self.baseline is not None
        gate = read_settings(self.config).gate
        for run in runs.values():
            if run.records:
                current = {r.question_id: r.scores() for r in run.records}
                run.regressions = check_run(run.name, run.eval_version, current,
                                            self.baseline, alpha=gate.alpha, min_n=gate.min_n)

    def regression_node(self, goldset: str) -> tuple[str, tuple[str, int | None, str]]:
        """Where a goldset's regression checks sit: beside its floors (`path::` or
        `path::test_fn::`), else beside its questions."""
        spec = next((s for s in self.floors.values() if s["goldset"] == goldset), None)
        if spec is not None:
            return spec["nodeid"].rpartition("floor[")[0], tuple(spec["location"])
        nodeid = next(n for n, r in self.records.items() if r.goldset == goldset)
        if nodeid.endswith("]") and "[" in nodeid.rpartition("::")[2]:
            base = nodeid[:nodeid.rindex("[")] + "::"  # a @ragate.goldset test: test_fn[qid]
        else:
            base = nodeid.rpartition("::")[0] + "::"
        path = base.partition("::")[0]
        return base, (path, None, "")

    def report_floors(self) -> None:
        for spec in self.floors.values():
            verdict = spec["verdict"]
            props = [("floor", verdict.floor.min), ("message", verdict.message),
                     ("computed_by", verdict.computed_by)]
            if verdict.interval is not None:
                props += [("ci_low", float(verdict.interval[0])),
                          ("ci_high", float(verdict.interval[1]))]
            if verdict.value is not None:
                props.append(("value", float(verdict.value)))
            if verdict.tally is not None:
                props.append(("n", float(verdict.tally.n)))
            self.send(spec["nodeid"], tuple(spec["location"]), spec["keywords"],
                      verdict.outcome, verdict.message, props, verdict.floor.xfail)
        for run in self.runs:
            for check in run.regressions:
                self.report_regression(check)

    def report_regression(self, check: Regression) -> None:
        base, location = self.regression_node(check.goldset)
        name = f"regression[{check.metric}]"
        props: list[tuple[str, str | float]] = [("test", check.test), ("message", check.message),
                                                ("pairs", float(check.pairs))]
        for key in ("baseline", "current", "p_value"):
            value = getattr(check, key)
            if value is not None:
                props.append((key, float(value)))
        self.send(base + name, (location[0], location[1], name), ["rag_gate", name],
                  check.outcome, check.message, props, None)

    def send(self, nodeid: str, location: tuple[Any, ...], keywords: list[str], outcome: str,
             message: str, props: list[tuple[str, Any]], xfail: str | None) -> None:
        """One synthetic test case: setup, call and teardown reports, as a worker sends."""
        hook = self.config.hook
        phase = {"xfailed": "skipped", "xpassed": "failed"}.get(outcome, outcome)
        extra: dict[str, Any] = {"wasxfail": xfail} if outcome == "xfailed" else {}
        longrepr: Any = None
        if phase == "failed":
            longrepr = message
        elif phase == "skipped":
            longrepr = (str(location[0]), (location[1] or 0) + 1, message)
        hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        for when, phase_outcome, repr_ in (("setup", "passed", None), ("call", phase, longrepr),
                                           ("teardown", "passed", None)):
            report = pytest.TestReport(
                nodeid, location, dict.fromkeys(keywords, 1), phase_outcome, repr_, when,
                user_properties=props if when == "teardown" else [],
                **(extra if when == "call" else {}))
            hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)

    def promote(self) -> list[str]:
        """Rewrite the xfail of every anchor and floor that XPASSed in this run."""
        promoted: list[Promotion] = []
        by_file: dict[str, list[str]] = {}
        for row in self.anchors.values():
            if row["outcome"] == "xpassed":
                by_file.setdefault(row["path"], []).append(row["anchor_id"])
        for path, ids in by_file.items():
            promoted += promote_anchors(Path(path), ids)
        floors: dict[str, list[Floor]] = {}
        by_hand, not_run = [], []
        for spec in self.floors.values():
            verdict = spec["verdict"]
            if not verdict.floor.xfail:
                continue
            name = f"{spec['goldset']}::{verdict.floor.name}"
            if verdict.outcome == "skipped":
                not_run.append(name)
            elif verdict.outcome == "xpassed" and spec["config_path"] is None:
                by_hand.append(spec["nodeid"])
            elif verdict.outcome == "xpassed":
                floors.setdefault(spec["config_path"], []).append(verdict.floor)
        for path, keys in floors.items():
            promoted += promote_floors(Path(path), keys)
        return promotion_summary(promoted, not_run, by_hand)

    def write_outputs(self, session: pytest.Session) -> None:
        results = self.config.getoption("ragate_results")
        if results:
            write_results(Path(results), self.runs)
        self.record_history(session)
        report = self.config.getoption("ragate_report")
        if report:
            write_markdown(Path(report), self.runs, self.history_deltas)
        html = self.config.getoption("ragate_html")
        if html:
            from pytest_ragate import history, html_report  # matplotlib: only when asked

            past = self.config.getoption("ragate_history")
            lines = history.read_history(Path(past)) if past and Path(past).is_file() else []
            html_report.write_html(Path(html), self.runs, history=lines,
                                   ci=read_settings(self.config).gate.ci)

    def record_history(self, session: pytest.Session) -> None:
        """One appended line per goldset run; a run cut short (-x, --maxfail) stays out."""
        path = self.config.getoption("ragate_history")
        runs = [run for run in self.runs if run.records]
        if not path or not runs:
            return
        if session.shouldstop or session.shouldfail:
            self.history_notes = ["history not written: the run was cut short"]
            return
        from pytest_ragate import history

        try:
            done = history.record(Path(path), runs, self.config.rootpath)
        except history.HistoryError as error:
            self.history_notes = [str(error)]
            return
        self.history_deltas, self.history_notes = done.deltas, list(done.problems)
