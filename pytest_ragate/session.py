"""The controller: gathers every question's record, decides the floors, writes the outputs.

It lives only where reports from all workers arrive (the main process, or the xdist
controller), like pytest's LogXML. Floors, and the regression checks against a baseline
(`::regression[<metric>]`), are reported as synthetic test reports sent through
`pytest_runtest_logreport`, so the terminal, JUnit and the exit status treat them as tests.

Before deciding, it reconciles what arrived with what was collected (`wire.Collected`):
every selected question and anchor either has a result or is a gap (errored, crashed, lost
with a crashed worker, never ran, skipped, sealed, deselected), and floors are decided over
that whole population (`gates.incomplete`).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.gates import (
    Gap,
    Strictness,
    Verdict,
    decide,
    decide_anchors,
    soft_gaps,
)
from pytest_ragate.goldset import Floor
from pytest_ragate.items import collected
from pytest_ragate.metrics import MECHANICAL, QuestionRecord
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
    question_text,
    regressions_table,
    write_markdown,
    write_results,
)
from pytest_ragate.settings import read_settings
from pytest_ragate.wire import WORKEROUTPUT_KEY, Collected, FloorSpec, Member, Population

ANCHOR_ATTR = "ragate_anchor"
ANCHORS_ELSEWHERE = ("not decided here: anchors are checked where the goldset's ragate.toml is "
                     "collected (pytest <its folder>), not in a @ragate.goldset test")


def summary_line(text: object) -> str:
    """The line of a failure that says what happened (a traceback ends with it)."""
    lines = str(text).strip().splitlines()
    return lines[-1].strip() if lines else ""


CRASH_PHASE = "???"  # the `when` of the report xdist makes for an item its worker died in


class Controller:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.records: dict[str, QuestionRecord] = {}  # by node id
        self.anchors: dict[str, dict[str, Any]] = {}  # by node id
        self.collected: Collected | None = None
        self.selected: list[pytest.Item] | None = None  # this process's items, when it collects
        self.started: dict[str, tuple[str, int | None, str]] = {}  # node id -> location
        self.failed: dict[str, tuple[str, str]] = {}  # node id -> (phase, why) of a failure
        self.down: list[str] = []  # xdist workers that went down with an error
        self.runs: list[GoldsetRun] = []
        self.promotion_lines: list[str] = []
        self.history_deltas: dict[str, list[str]] = {}
        self.history_notes: list[str] = []
        gate = read_settings(config).gate
        self.strictness = Strictness(gate.ci, gate.min_n, gate.sealed_without_key)
        self.baseline: list[BaselineRun] | None = None
        if gate.baseline:
            try:
                self.baseline = load_baseline(gate.baseline, config.rootpath)
            except BaselineError as error:
                raise pytest.UsageError(str(error)) from None

    def add_collected(self, collected: Collected) -> None:
        """Every process collects the same items: the first description is the run's."""
        if self.collected is None:
            self.collected = collected

    @property
    def floors(self) -> list[FloorSpec]:
        return list(self.collected.floors) if self.collected else []

    # -- hooks ------------------------------------------------------------------------------

    def pytest_runtest_logstart(self, nodeid: str, location: tuple[str, int | None, str],
                                ) -> None:
        self.started[nodeid] = location

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every worker's reports pass through here; keep the ragate records they carry, and
        why any report failed (xdist's report of a crashed worker carries no record)."""
        row = getattr(report, RECORD_ATTR, None)
        if row is not None:
            record = self.records[report.nodeid] = QuestionRecord.model_validate(row)
            if report.when == "call":
                self.junit_text(report, record)
        anchor = getattr(report, ANCHOR_ATTR, None)
        if anchor is not None:
            self.anchors[report.nodeid] = anchor
        if report.failed and not hasattr(report, "wasxfail"):
            self.failed.setdefault(report.nodeid, (report.when or "", summary_line(
                report.longrepr)))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: take its description of the collection. A worker that
        crashed sends none; the others (and its replacement) do."""
        output = getattr(node, "workeroutput", None) or {}
        if WORKEROUTPUT_KEY in output:
            self.add_collected(Collected.model_validate(output[WORKEROUTPUT_KEY]))
        if error:
            gateway = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.down.append(f"{gateway}: {summary_line(error)}")

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        result = yield
        if not self.config.option.collectonly:
            if self.selected is not None:
                self.add_collected(collected(self.selected))
            self.report_undescribed()
            self.runs = self.decide()
            self.report_floors()
            failed = bool(session.testsfailed) or bool(session.shouldfail)
            routes = self._routes()
            for run in self.runs:
                run.failed_items = sorted(n for n in self.failed if routes.get(n) == run.route)
                run.run_failed = failed
            self.write_outputs(session, failed)
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
        if not self.runs:
            return
        terminalreporter.write_sep("=", "ragate floors")
        for run in self.runs:
            terminalreporter.write_line(f"{run.label}: {' · '.join(run.parts)}")
            line = f"{run.label}: {run.coverage_line()}"
            terminalreporter.write_line(line, red=bool(run.hard_gaps))
        for note in self.down:
            terminalreporter.write_line(f"ragate: xdist worker down: {note}", red=True)
        if any(run.verdicts for run in self.runs):
            terminalreporter.write_line(floors_table(self.runs, "simple"))
        for run in self.runs:
            for line in run.judge_lines:
                terminalreporter.write_line(f"{run.label}: {line}",
                                            yellow=line.startswith("warning"))
        for name in ("results", "report", "html", "history"):
            path = self.config.getoption(f"ragate_{name}")
            if path:
                terminalreporter.write_line(f"ragate {name}: {path}")
        for note in self.history_notes:
            terminalreporter.write_line(f"ragate history: {note}", yellow=True)

    # -- reconciling what arrived with what was collected ------------------------------------

    def _routes(self) -> dict[str, str]:
        """The route of every question and anchor item that ran (floors are not items of a
        route here: their outcome is counted apart)."""
        return {m.nodeid: p.route
                for p in (self.collected.populations if self.collected else [])
                for m in [*p.questions, *p.anchors] if m.nodeid is not None}

    def _member_record(self, population: Population, member: Member, why: str,
                       ) -> QuestionRecord:
        """An error row for a question whose own report never came (its worker crashed)."""
        return QuestionRecord(
            goldset=population.goldset, route=population.route,
            question_id=member.question_id, question=member.question, kind=member.kind,
            index=member.index,
            status="error", error=why, must_abstain=member.must_abstain,
            evidence_spans=member.evidence_spans, eval_version=population.eval_version,
            expected=member.expected)

    def _question_gaps(self, population: Population) -> tuple[list[QuestionRecord], list[Gap]]:
        records: list[QuestionRecord] = []
        gaps: list[Gap] = []
        for member in population.questions:
            qid, kind = member.question_id, member.kind
            if member.nodeid is None:
                gaps.append(Gap(qid, kind, "deselected"))
                continue
            record = self.records.get(member.nodeid)
            if record is None and member.nodeid in self.failed:
                phase, why = self.failed[member.nodeid]
                record = self._member_record(population, member, why)
                gaps.append(Gap(qid, kind, "crashed" if phase == CRASH_PHASE else "errored",
                                why))
            elif record is None and member.nodeid in self.started:
                why = self.report_lost(member.nodeid)
                record = self._member_record(population, member, f"lost: {why}")
                gaps.append(Gap(qid, kind, "lost", why))
            elif record is None:
                gaps.append(Gap(qid, kind, "never ran"))
                continue
            elif record.status == "error":
                gaps.append(Gap(qid, kind, "errored", record.error or ""))
            elif record.status == "skipped":
                gaps.append(Gap(qid, kind, "sealed") if member.sealed
                            else Gap(qid, kind, "skipped", record.error or ""))
            records.append(record)
        records.sort(key=lambda r: r.index)
        return records, gaps

    def _anchor_gaps(self, population: Population) -> list[Gap]:
        gaps: list[Gap] = []
        for member in population.anchors:
            aid, kind = member.anchor_id, member.kind
            row = self.anchors.get(member.nodeid) if member.nodeid else None
            if member.nodeid is None:
                gaps.append(Gap(aid, kind, "deselected"))
            elif row is not None and row.get("outcome") == "skipped":
                gaps.append(Gap(aid, kind, "skipped", row.get("error") or ""))
            elif row is not None and row.get("error"):
                gaps.append(Gap(aid, kind, "errored", row["error"]))
            elif row is not None:
                continue  # checked: held or not
            elif member.nodeid in self.failed:
                phase, why = self.failed[member.nodeid]
                gaps.append(Gap(aid, kind, "crashed" if phase == CRASH_PHASE else "errored",
                                why))
            elif member.nodeid in self.started:
                gaps.append(Gap(aid, kind, "lost", self.report_lost(member.nodeid)))
            else:
                gaps.append(Gap(aid, kind, "never ran"))
        return gaps

    def junit_text(self, report: pytest.TestReport, record: QuestionRecord) -> None:
        """The question's test case in the JUnit file gets a readable `<system-out>`: CI
        systems show that, while few show `<properties>`."""
        from _pytest.junitxml import bin_xml_escape, xml_key

        xml = self.config.stash.get(xml_key, None)
        if xml is not None:
            element = ET.Element("system-out")
            element.text = bin_xml_escape(question_text(record))
            xml.node_reporter(report).append(element)

    def report_undescribed(self) -> None:
        """Results arrived but no process described its collection (every xdist worker died
        before finishing): no floor can be decided, and that is a failure, not a pass."""
        if self.collected is not None or not (self.records or self.anchors):
            return
        routes = sorted({r.route for r in self.records.values()})
        for route in routes or ["ragate"]:
            message = ("no process returned its collection (its xdist workers went down"
                       + (f": {'; '.join(self.down)}" if self.down else "")
                       + "): the floors of this goldset could not be decided")
            self.send(f"{route}::floors", (route.partition("::")[0], None, "floors"),
                      ["rag_gate"], "failed", message, [("message", message)], None)

    def _anchor_results(self, population: Population) -> list[dict[str, Any]]:
        """The rows of the anchors that ran (held or not, or errored), in file order."""
        return [self.anchors[m.nodeid] for m in population.anchors
                if m.nodeid is not None and m.nodeid in self.anchors]

    def report_lost(self, nodeid: str) -> str:
        """An item that started and never reported fails as a test, as xdist's crashed item
        does: JUnit and the exit status see it, not only the floors. Returns why."""
        why = ("its worker went down before it reported"
               + (f": {'; '.join(self.down)}" if self.down else ""))
        if nodeid not in self.failed:
            message = f"no result: {why}"
            self.send(nodeid, self.started[nodeid], ["rag_gate"], "failed", message,
                      [("message", message)], None)
        return why

    # -- deciding ---------------------------------------------------------------------------

    def decide(self) -> list[GoldsetRun]:
        runs: dict[str, GoldsetRun] = {}
        populations = {p.route: p for p in (self.collected.populations if self.collected
                                            else [])}
        for route, population in populations.items():
            records, gaps = self._question_gaps(population)
            runs[route] = GoldsetRun(population.goldset, population.eval_version, records,
                                     route=route, population=len(population.questions),
                                     gaps=gaps, anchor_gaps=self._anchor_gaps(population),
                                     anchors=self._anchor_results(population),
                                     soft_gaps=soft_gaps(self.strictness))
        for record in self.records.values():  # rows of a route nobody described
            if record.route not in populations:
                runs.setdefault(record.route, GoldsetRun(record.goldset, record.eval_version,
                                                         route=record.route)
                                ).records.append(record)
        require = self.config.getoption("ragate_require_judge")
        for spec in self.floors:
            run = runs[spec.route]
            floor = spec.floor
            if floor.anchors and not populations[spec.route].checks_anchors:
                verdict = Verdict(floor, run.name, "skipped", ANCHORS_ELSEWHERE, None, None,
                                  MECHANICAL)
            elif floor.anchors:  # over the anchors that were checked; the others are gaps
                checked = [a for a in run.anchors if not a.get("error")]
                verdict = decide_anchors(floor, run.name, checked, self.strictness,
                                         run.anchor_gaps)
            else:
                judge = next((r.judge for r in run.records if r.judge), None)
                verdict = decide(floor, run.name, run.records, judge=judge,
                                 require_judge=require, strictness=self.strictness,
                                 gaps=run.gaps)
            run.verdicts.append(verdict)
        names: dict[str, int] = {}
        for run in runs.values():
            names[run.name] = names.get(run.name, 0) + 1
        for run in runs.values():
            run.label = run.name if names[run.name] == 1 else f"{run.name} ({run.route})"
        if self.baseline is not None:
            self.check_regressions(runs)
        return [runs[route] for route in sorted(runs, key=lambda r: (runs[r].name, r))]

    def check_regressions(self, runs: dict[str, GoldsetRun]) -> None:
        assert self.baseline is not None
        gate = read_settings(self.config).gate
        for run in runs.values():
            if run.records:
                current = {r.question_id: r.scores() for r in run.records}
                run.regressions = check_run(run.name, run.eval_version, current,
                                            self.baseline, alpha=gate.alpha, min_n=gate.min_n)

    # -- reporting --------------------------------------------------------------------------

    def regression_node(self, run: GoldsetRun) -> tuple[str, tuple[str, int | None, str]]:
        """Where a goldset's regression checks sit: beside its floors (`path::` or
        `path::test_fn::`), else beside its questions."""
        spec = next((s for s in self.floors if s.route == run.route), None)
        if spec is not None:
            return spec.nodeid.rpartition("floor[")[0], spec.location
        path = run.route.partition("::")[0]
        return run.route + "::", (path, None, "")

    def report_floors(self) -> None:
        verdicts = {(run.route, v.floor): v for run in self.runs for v in run.verdicts}
        for spec in self.floors:
            verdict = verdicts[(spec.route, spec.floor)]
            props: list[tuple[str, str | float]] = [
                ("floor", verdict.floor.min), ("message", verdict.message),
                ("computed_by", verdict.computed_by)]
            if verdict.interval is not None:
                props += [("ci_low", float(verdict.interval[0])),
                          ("ci_high", float(verdict.interval[1]))]
            if verdict.value is not None:
                props.append(("value", float(verdict.value)))
            if verdict.tally is not None:
                props.append(("n", str(verdict.tally.n)))  # a count: written as an integer
            if verdict.gaps:
                props.append(("without_result", str(verdict.gaps)))
            self.send(spec.nodeid, spec.location, spec.keywords, verdict.outcome,
                      verdict.message, props, verdict.floor.xfail)
        for run in self.runs:
            for check in run.regressions:
                self.report_regression(run, check)

    def report_regression(self, run: GoldsetRun, check: Regression) -> None:
        base, location = self.regression_node(run)
        name = f"regression[{check.metric}]"
        props: list[tuple[str, str | float]] = [("test", check.test), ("message", check.message),
                                                ("pairs", str(check.pairs))]
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
        verdicts = {(run.route, v.floor): v for run in self.runs for v in run.verdicts}
        for spec in self.floors:
            verdict = verdicts[(spec.route, spec.floor)]
            if not verdict.floor.xfail:
                continue
            name = f"{spec.goldset}::{verdict.floor.name}"
            if verdict.outcome == "skipped":
                not_run.append(name)
            elif verdict.outcome == "xpassed" and spec.config_path is None:
                by_hand.append(spec.nodeid)
            elif verdict.outcome == "xpassed" and spec.config_path is not None:
                floors.setdefault(spec.config_path, []).append(verdict.floor)
        for path, keys in floors.items():
            promoted += promote_floors(Path(path), keys)
        return promotion_summary(promoted, not_run, by_hand)

    # -- outputs ----------------------------------------------------------------------------

    def write_outputs(self, session: pytest.Session, failed: bool) -> None:
        results = self.config.getoption("ragate_results")
        if results:
            write_results(Path(results), self.runs)
        self.record_history(session)
        report = self.config.getoption("ragate_report")
        if report:
            write_markdown(Path(report), self.runs, self.history_deltas, failed)
        html = self.config.getoption("ragate_html")
        if html:
            from pytest_ragate import history, html_report  # matplotlib: only when asked

            past = self.config.getoption("ragate_history")
            lines = history.read_history(Path(past)) if past and Path(past).is_file() else []
            html_report.write_html(Path(html), self.runs, history=lines,
                                   ci=read_settings(self.config).gate.ci, run_failed=failed)

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
