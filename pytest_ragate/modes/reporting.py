"""What the controller tells pytest and the person reading the run.

Floors, regression checks (`::regression[<metric>]`) and items that never reported are sent
as synthetic test reports through `pytest_runtest_logreport`, setup, call and teardown as a
worker sends them, so the terminal, JUnit and the exit status treat them as tests. Each
question's JUnit test case gets a readable `<system-out>`. The terminal summary lists the
floors, the regressions, the judge, the outputs written and what `--ragate-promote` did.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_ragate.decision.floors import Verdict
from pytest_ragate.decision.goldset_run import GoldsetRun, run_status
from pytest_ragate.decision.regressions import Regression
from pytest_ragate.decision.run_decision import Decision, FloorDecision
from pytest_ragate.outputs.reports import (
    corpus_lines,
    figures_table,
    floors_table,
    incomplete_notice,
    question_text,
    regressions_table,
    run_bill_line,
    run_figures,
    run_slices,
    suggestion_lines,
    tag_table,
    worst_lines,
)
from pytest_ragate.outputs.slice_tables import slice_tables
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.runs import badge_of, lines_of, run_why, status_badge, status_why
from pytest_ragate.wording.slices import slice_name

Location = tuple[str, int | None, str]


def send(config: pytest.Config, nodeid: str, location: Location, keywords: Sequence[str],
         outcome: str, message: str, props: list[tuple[str, Any]], xfail: str | None, *,
         phase: str = "call", text: QuestionRecord | None = None) -> None:
    """One synthetic test case: setup, call and teardown reports, as a worker sends. An
    outcome in `phase` "setup" is the setup's (an error, or a skip: no call report follows);
    `text`, a question's record, becomes the case's readable `<system-out>` in JUnit."""
    hook = config.hook
    result = {"xfailed": "skipped", "xpassed": "failed"}.get(outcome, outcome)
    extra: dict[str, Any] = {"wasxfail": xfail} if outcome == "xfailed" else {}
    longrepr: Any = None
    if result == "failed":
        longrepr = message
    elif result == "skipped":
        longrepr = (str(location[0]), (location[1] or 0) + 1, message)
    if phase == "setup":
        phases = [("setup", result, longrepr, extra)]
    else:
        phases = [("setup", "passed", None, {}), ("call", result, longrepr, extra)]
    phases.append(("teardown", "passed", None, {}))
    hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
    for when, phase_outcome, repr_, more in phases:
        report = pytest.TestReport(
            nodeid, location, dict.fromkeys(keywords, 1), phase_outcome, repr_, when,
            user_properties=props if when == "teardown" else [], **more)
        if text is not None and when == phases[-2][0]:
            junit_text(config, report, text)
        hook.pytest_runtest_logreport(report=report)
    hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)


def report_decision(config: pytest.Config, decision: Decision,
                    started: Mapping[str, Location]) -> None:
    """Every synthetic test case of a decided run, in this order: goldsets nobody described,
    items that started and never reported, floors, regression checks."""
    for route in decision.undescribed:
        message = decision.undescribed_why
        send(config, f"{route}::floors", (route.partition("::")[0], None, "floors"),
             ["rag_gate"], "failed", message, [("message", message)], None)
    for nodeid in decision.lost:
        # as xdist's crashed item does: JUnit and the exit status see it, not only the floors
        message = f"no result: {decision.lost_why}"
        send(config, nodeid, started[nodeid], ["rag_gate"], "failed", message,
             [("message", message)], None)
    for floor in decision.floors:
        report_floor(config, floor)
    for run in decision.runs:
        for check in run.regressions:
            report_regression(config, run, check, decision.floors)


def report_floor(config: pytest.Config, decided: FloorDecision) -> None:
    spec, verdict = decided.spec, decided.verdict
    send(config, spec.nodeid, spec.location, spec.keywords, verdict.outcome, verdict.message,
         floor_properties(verdict), spec.floor.xfail)


def floor_properties(verdict: Verdict) -> list[tuple[str, str | float]]:
    """A floor's JUnit properties: its bound, message, who computed it, value, interval and
    n; a slice floor's also say which slice, its call and, when insufficient, the n it needs."""
    floor = verdict.floor
    props: list[tuple[str, str | float]] = [
        ("floor", floor.min), *([("floor_bound", "max")] if floor.upper else []),
        ("message", verdict.message),
        ("computed_by", verdict.computed_by)]
    if verdict.interval is not None:
        props += [("ci_low", float(verdict.interval[0])), ("ci_high", float(verdict.interval[1]))]
    if verdict.value is not None:
        props.append(("value", float(verdict.value)))
    if verdict.tally is not None:
        props.append(("n", str(verdict.tally.n)))  # a count: written as an integer
    if verdict.gaps:
        props.append(("without_result", str(verdict.gaps)))
    if floor.slice is not None:
        props.append(("slice", slice_name(*floor.slice)))
        if verdict.slice_call is not None:
            props.append(("call", verdict.slice_call))
        if verdict.needs is not None:
            props.append(("needs", str(verdict.needs)))
    return props


def regression_node(run: GoldsetRun, floors: Sequence[FloorDecision]) -> tuple[str, Location]:
    """Where a goldset's regression checks sit: beside its floors (`path::` or
    `path::test_fn::`), else beside its questions."""
    spec = next((d.spec for d in floors if d.spec.route == run.route), None)
    if spec is not None and spec.beside:
        return spec.beside, spec.location
    path = run.route.partition("::")[0]
    return run.route + "::", (path, None, "")


def report_regression(config: pytest.Config, run: GoldsetRun, check: Regression,
                      floors: Sequence[FloorDecision]) -> None:
    base, location = regression_node(run, floors)
    name = f"regression[{check.metric}]"
    props: list[tuple[str, str | float]] = [("test", check.test), ("message", check.message),
                                            ("pairs", str(check.pairs))]
    for key in ("baseline", "current", "p_value"):
        value = getattr(check, key)
        if value is not None:
            props.append((key, float(value)))
    send(config, base + name, (location[0], location[1], name), ["rag_gate", name],
         check.outcome, check.message, props, None)


def junit_case(config: pytest.Config, report: pytest.TestReport, record: QuestionRecord,
               earlier: Sequence[QuestionRecord] = (),
               props: list[tuple[str, str | float]] | None = None,
               ) -> list[tuple[str, str | float]]:
    """What a question adds to its JUnit test case, written here only, by the process that
    concludes the run, from the record its reports brought (the judged one, once its verdicts
    are in): its figures as properties (a skipped question's none), after any the test
    recorded itself, on the report that brought the record and on its teardown report, which
    pytest's JUnit writer reads them from (`report.user_properties`, pytest's public route);
    and, on its call's report, a readable
    `<system-out>` (`junit_text`). Returns the properties, for the teardown report (`props`:
    the same, made once)."""
    if props is None:
        props = record.junit_properties() if record.status != "skipped" else []
    report.user_properties = [*report.user_properties, *props]
    if report.when == "call":
        junit_text(config, report, record, earlier)
    return props


def junit_text(config: pytest.Config, report: pytest.TestReport,
               record: QuestionRecord, earlier: Sequence[QuestionRecord] = ()) -> None:
    """The question's test case in the JUnit file gets a readable `<system-out>`: CI
    systems show that, while few show `<properties>`. A turn of a conversation's starts with
    its conversation so far (`earlier`: the turns before it that have reported), in order
    with answers and ✓/✗, so its last turn's reads as the whole conversation. pytest writes
    a `<system-out>` only from captured output, and only when `junit_logging` asks for it:
    no public route, so through its JUnit writer (`pytest_internals.xml_key`)."""
    from pytest_ragate.items.pytest_internals import xml_escape, xml_key
    from pytest_ragate.wording.conversations import so_far

    xml = config.stash.get(xml_key, None)
    if xml is not None:
        element = ET.Element("system-out")
        element.text = xml_escape(so_far(earlier, record) + question_text(record))
        xml.node_reporter(report).append(element)


def junit_incomplete(config: pytest.Config, why: str) -> None:
    """A run that stopped early says so in its JUnit file too: a `ragate-incomplete`
    property of the test suite (the floors' cases are there, failed by what never ran)."""
    junit_property(config, "ragate-incomplete", incomplete_notice(why))


def junit_status(config: pytest.Config, runs: Sequence[GoldsetRun]) -> None:
    """A run that was not decided whole says what it was in its JUnit file too: a
    `ragate-status` property of the test suite (`NOTHING RAN: …`, `PARTIAL: …`, `FLOOR NOT
    DECIDED: …`), beside the skipped floors' cases; nothing for a PASS or a FAIL."""
    status = run_status(runs, failed=False)
    why = run_why(runs, status)
    if why:
        junit_property(config, "ragate-status", status_badge(status, why))


def junit_property(config: pytest.Config, name: str, value: str) -> None:
    from pytest_ragate.items.pytest_internals import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is not None:
        xml.add_global_property(name, value)


@dataclass(frozen=True)
class Outputs:
    """The outputs asked for by name, and how the run left them: `incomplete` (why the run
    stopped early: written marked INCOMPLETE, the history not appended), `unwritten` (why
    none was written)."""

    paths: Mapping[str, str]
    incomplete: str | None = None
    unwritten: str | None = None

    def lines(self) -> list[tuple[str, bool]]:
        """Each output's terminal line, and whether it is said in red."""
        if self.unwritten:
            return [(f"ragate {name}: {path} not written: {self.unwritten}", True)
                    for name, path in self.paths.items()]
        if self.incomplete is None:
            return [(f"ragate {name}: {path}", False) for name, path in self.paths.items()]
        found = [(f"ragate {name}: {path} " + ("not appended to" if name == "history"
                                              else "written marked INCOMPLETE"), True)
                 for name, path in self.paths.items()]
        return [(f"ragate: {incomplete_notice(self.incomplete)}", True), *found]


def terminal_summary(terminalreporter: Any, runs: Sequence[GoldsetRun], *,
                     down: Sequence[str], promotion: Sequence[str],
                     outputs: Outputs, history_notes: Sequence[str],
                     flips: Mapping[str, Sequence[str]] | None = None,
                     gaps_fail: Sequence[str] = ()) -> None:
    """`flips` are the history's flip lines by goldset label (`outputs/history.py`);
    `gaps_fail` the goldsets whose missing results alone fail the run."""
    write = terminalreporter.write_line
    if promotion:
        terminalreporter.write_sep("=", "ragate promote")
        for line in promotion:
            write(line)
    if any(run.regressions for run in runs):
        terminalreporter.write_sep("=", "ragate regressions against the baseline")
        write(regressions_table(runs, "simple"))
        for line in corpus_lines(runs):
            write(line, yellow=True)
    if not runs:
        for line, red in outputs.lines():
            write(line, red=red)
        return
    terminalreporter.write_sep("=", "ragate floors")
    for run in runs:
        said = lines_of(run)
        write(f"{run.label}: {' · '.join(said.parts)}")
        write(f"{run.label}: {said.coverage}", red=bool(run.hard_gaps))
        if status_why(run):
            write(f"{run.label}: {badge_of(run)}: not a PASS, its floors were not all decided "
                  "over every question", yellow=True)
        if run.label in gaps_fail:
            write(f"{run.label}: the run fails: no floor covers the questions or anchors "
                  "without a result, and a missing result is never a pass", red=True)
    for note in down:
        write(f"ragate: xdist worker down: {note}", red=True)
    if any(run.verdicts for run in runs):
        write(floors_table(runs, "simple"))
    for run in runs:
        for line in worst_lines(run):
            write(f"{run.label}: {line}", red=True)
        for table in slice_tables(run):
            failing = any(row.failing for row in table.rows)
            write(f"{run.label}: {table.summary()}", red=failing,
                  yellow=not failing and len(table.called("holds")) < len(table.rows))
    figures_before_floors(write, runs)
    for run in runs:
        said = lines_of(run)
        for line in said.judge:
            write(f"{run.label}: {line}", yellow=line.startswith("warning"))
        if billed := run_bill_line(run):
            write(f"{run.label}: {billed}")
        for line in said.flaky:
            write(f"{run.label}: {line}", yellow=not line.startswith("flaky: 0 "))
        for line in said.answers:
            write(f"{run.label}: {line}", yellow=line.startswith("unsure"))
        for line in said.moved:
            write(f"{run.label}: {line}", yellow=True)
    for line, red in outputs.lines():
        write(line, red=red)
    for label, lines in (flips or {}).items():
        for line in lines:
            write(f"{label}: {line}", yellow=" flipped " in line)
    for note in history_notes:
        write(f"ragate history: {note}", yellow=True)


def figures_before_floors(write: Any, runs: Sequence[GoldsetRun], *,
                          floors_known: bool = True) -> None:
    """A goldset without floors shows every figure it can score, and the floors they
    suggest, ready to paste (`ragate suggest`, which reads no ragate.toml: `floors_known`
    False)."""
    found = run_figures(runs)
    if not found:
        return
    write(figures_table(found, "simple"))
    for run, figs in found:
        by_tag = tag_table(run.records, [f.metric for f in figs], "simple")
        if by_tag:
            write(f"{run.label}: by tag (information; a slice floor decides its own):")
            write(by_tag)
        for line in suggestion_lines(run.label, figs, run_slices(run, figs),
                                     floors_known=floors_known):
            write(line)


def shard_summary(terminalreporter: Any, shard: Any, runs: Sequence[GoldsetRun], *,
                  outputs: Outputs, down: Sequence[str]) -> None:
    """A shard decides nothing: say what it ran, and where its results wait for `ragate
    decide`."""
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", f"ragate shard {shard}")
    for run in runs:
        errors = [r for r in run.records if r.status == "error"]
        anchors = f", {len(run.anchors)} anchor{'s' * (len(run.anchors) != 1)}"
        write(f"{run.label}: {len(run.records)} of {run.population} question items here"
              + (anchors if run.anchors else "")
              + (f", {len(errors)} errored" if errors else ""), red=bool(errors))
    for note in down:
        write(f"ragate: xdist worker down: {note}", red=True)
    write(f"floors: not decided in a shard; run `ragate decide` over every shard's results "
          f"({shard.count} files)")
    for line, red in outputs.lines():
        write(line, red=red)
