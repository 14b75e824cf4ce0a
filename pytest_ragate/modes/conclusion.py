"""Concluding a run that has goldsets: the reports' records and anchor outcomes validated,
the run decided (`run_decision.py`), reported (`reporting.py`), written (`outputs/writers.py`)
and promoted. The mode's controller (`controller.py`) makes one only once a goldset has shown
up, and says which steps its mode takes (`gate.py`, `shard.py`, `decide_saved.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import Collected, anchor_name
from pytest_ragate.decision.rules import rules_of
from pytest_ragate.decision.run_decision import (
    Arrived,
    Decision,
    Failure,
    FloorDecision,
    decide_run,
)
from pytest_ragate.goldsets.promotion import Promotion, promote_anchors, promote_floors, summary
from pytest_ragate.items.collection import collected
from pytest_ragate.items.xdist_worker import worker_of
from pytest_ragate.modes import reporting as reporter
from pytest_ragate.modes.saved_lines import decision_settings, saved_lines
from pytest_ragate.outputs.reports import incomplete_notice
from pytest_ragate.outputs.results import Shard
from pytest_ragate.outputs.writers import Saved, Written, write_ci_files, write_outputs
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.flips import Flips
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from pytest_ragate.settings import SEAL_KEY_ENV, Settings, set_but_empty
from pytest_ragate.wording.baseline import accept_judge_unneeded

if TYPE_CHECKING:
    from pytest_ragate.outputs.github import GateView
    from pytest_ragate.outputs.history import FlipReport

Location = tuple[str, int | None, str]


# pytest's cache narrowing a run to its last failures: the flag and its option's dest
NARROWING = (("--lf", "lf"), ("--sw", "stepwise"), ("--sw-skip", "stepwise_skip"))


def narrowed_by(config: pytest.Config) -> str | None:
    """The flag with which pytest's cache narrows this run to its last failures (`--lf`,
    `--sw`), or None: then a goldset member it deselects is a missing result, and its floors
    fail rather than skip (`--ff` only reorders, and deselects nothing)."""
    return next((flag for flag, dest in NARROWING if config.getoption(dest, None)), None)


def _case_of(report: pytest.TestReport) -> tuple[str, str | None]:
    """Which test case a report is of, as pytest's JUnit writer tells: its node id, and the
    xdist worker it came from (None in a run without xdist)."""
    return report.nodeid, worker_of(report)


class Conclusion:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.arrived = Arrived()
        self.collected: Collected | None = None
        self.decision: Decision | None = None  # once decided (`decide`)
        self.promotion: list[str] = []
        self.promoted: frozenset[str] = frozenset()  # node ids of the items promoted
        self.written = Written()
        self.incomplete: str | None = None  # why the run stopped early, when it did
        self.unwritten: str | None = None  # why no output was written, when none was
        self.gaps_fail: list[str] = []  # goldsets whose missing results alone fail the run
        self.invalid_lines: list[Problem] = []  # invalid goldsets' lines (the CI's findings)
        self.concluded = False
        # each conversation's turns reported so far, by goldset, route, conversation, repeat
        # and whether asked again (`earlier_turns`)
        self.turns: dict[tuple[str, str, str, int, bool], dict[int, QuestionRecord]] = {}
        # the questions whose record came and whose teardown report has not: `close_case`
        self.open_cases: dict[tuple[str, str | None],
                              tuple[QuestionRecord, list[tuple[str, str | float]]]] = {}
        gate = settings.gate
        baseline = None
        if gate.baseline:
            # the reader of saved runs, loaded only by a run that reads one
            from pytest_ragate.outputs.baseline import BaselineError, load_baseline

            try:
                baseline = load_baseline(gate.baseline, config.rootpath)
            except BaselineError as error:
                raise pytest.UsageError(str(error)) from None
        self.rules = rules_of(decision_settings(settings), baseline=baseline,
                              narrowed_by=narrowed_by(config))

    @property
    def runs(self) -> list[GoldsetRun]:
        return self.decision.runs if self.decision is not None else []

    def add_record(self, report: pytest.TestReport, row: dict[str, Any]) -> None:
        """A question's record, off the report that brought it (its call's, or the setup's
        that failed or skipped it): kept, and its JUnit test case written, now and on the
        question's teardown report (`close_case`)."""
        record = self.arrived.records[report.nodeid] = QuestionRecord.from_wire(row)
        earlier = self.earlier_turns(record) if report.when == "call" else []
        props = reporter.junit_case(self.config, report, record, earlier)
        self.open_cases[_case_of(report)] = (record, props)

    def close_case(self, report: pytest.TestReport) -> None:
        """A question's teardown report gets its JUnit properties before pytest's JUnit
        writer closes the question's test case with them (a question whose record never
        came writes nothing: the decision counts it missing)."""
        case = self.open_cases.pop(_case_of(report), None)
        if case is not None:
            reporter.junit_case(self.config, report, case[0], props=case[1])

    def earlier_turns(self, record: QuestionRecord) -> list[QuestionRecord]:
        """The turns of a turn's conversation (the same repeat, asked the same way) that
        reported before it: what its JUnit text shows before its own account."""
        if record.conversation is None or record.turn is None:
            return []
        turns = self.turns.setdefault((record.goldset, record.route, record.conversation,
                                       record.repeat, record.reasked), {})
        turns[record.turn] = record
        return [turns[t] for t in sorted(turns) if t < record.turn]

    def add_anchor(self, report: pytest.TestReport, row: dict[str, Any]) -> None:
        self.arrived.anchors[report.nodeid] = AnchorOutcome.model_validate(row)

    def add_collected(self, description: Collected | dict[str, Any]) -> None:
        """Every process collects the same items: the first description is the run's."""
        if self.collected is None:
            self.collected = Collected.model_validate(description)

    def gather(self, *, selected: list[pytest.Item] | None, started: dict[str, Location],
               failed: dict[str, tuple[str, str]], crashed: set[str], down: list[str],
               ) -> None:
        """What the controller gathered from this run's reports: the items this process
        selected (when it collected), which started, which failed (phase, why), which
        crashed with their worker, and which workers went down."""
        if selected is not None:
            self.add_collected(collected(selected))
        self.arrived.started = started
        self.arrived.failed = {nodeid: Failure(phase=phase, why=why, crashed=nodeid in crashed)
                               for nodeid, (phase, why) in failed.items()}
        self.arrived.down = down

    def decide(self, session: pytest.Session, *, incomplete: str | None = None) -> None:
        """The run decided over what was collected and what arrived, and every synthetic
        test case reported (`incomplete`: why the loop stopped early)."""
        self.incomplete, self.concluded = incomplete, True
        self.decision = decide_run(self.collected, self.arrived, self.rules)
        if set_but_empty(os.environ, SEAL_KEY_ENV):  # a fork's job: every summary says it
            for run in self.decision.runs:
                run.seal_key_empty = True
        reporter.report_decision(self.config, self.decision, self.arrived.started)
        if incomplete is not None:
            reporter.junit_incomplete(self.config, incomplete)
        if self.settings.run.shard is None:  # a shard decides nothing: its slice is all
            reporter.junit_status(self.config, self.runs)

    def fail_on_gaps(self, session: pytest.Session) -> None:
        """A question or anchor without a result (skipped, sealed without its key, ...) that
        no floor covers still fails the run: the reports and history say FAIL for it, and
        the exit status agrees (a gate and a decision ask it; a shard decides nothing: its
        decision counts the gap)."""
        if session.testsfailed:
            return
        self.gaps_fail = [run.label for run in self.runs if run.hard_gaps]
        if self.gaps_fail:
            session.testsfailed += 1

    def saved(self, *, shard: Shard | None = None, row_knobs: dict[str, Any] | None = None,
              ) -> Saved:
        """What the results file keeps beside the decided rows (`saved_lines.py`)."""
        lost = self.decision.lost if self.decision is not None else []
        return saved_lines(self.settings, self.collected, self.arrived, lost,
                           shard=shard, row_knobs=row_knobs)

    def write(self, session: pytest.Session, saved: Saved | None) -> None:
        """Every output asked for, then promotion; `saved` None: the outputs were never held
        to the goldsets' files (no process finished collecting), so none is written."""
        run_failed = (bool(session.testsfailed) or bool(session.shouldfail)
                      or self.incomplete is not None)
        for run in self.runs:
            run.run_failed = run_failed
        if saved is None:
            self.unwritten = ("no process finished collecting, so they could not be held to "
                              "the goldsets' files")
            return
        incomplete = self.incomplete
        self.written = write_outputs(
            self.settings.run, self.runs, rootdir=self.config.rootpath,
            cut_short=incomplete is not None or bool(session.shouldstop or session.shouldfail),
            failed=run_failed, ci=self.settings.gate.ci,
            flip_window=self.settings.gate.flip_window, saved=saved, incomplete=incomplete)
        if self.settings.run.comment or self.settings.run.gitlab_metrics \
                or self.settings.run.codequality:
            write_ci_files(self.settings.run, self.view())
        if self.settings.run.promote and incomplete is not None:
            self.promotion = [f"ragate: nothing promoted: {incomplete_notice(incomplete)}"]
        elif self.settings.run.promote:
            check = (FlipCheck.of(self.runs, self.written.flips) if self.settings.run.history
                     else FlipCheck(history=False))
            decided = self.decision.floors if self.decision is not None else []
            promoted = promote(self.arrived.anchors.items(), decided, check,
                               force=self.settings.run.promote_flipped)
            self.promotion, self.promoted = promoted.lines, promoted.nodeids

    def settle_promoted(self, session: pytest.Session, failures: Mapping[str, int]) -> None:
        """A promoting run whose only failures were the strict XPASSes it promoted exits 0,
        and says so: what failed now holds as a hard assertion. Its reports, JUnit and
        history keep what the run saw against the files it read (XPASS)."""
        if not settled_by_promotion(self.promoted, failures, session.testsfailed):
            return
        n = len(self.promoted)
        self.promotion.append(f"ragate: exit 0: this run's only failure{'s' * (n != 1)} "
                              f"{'were the' if n != 1 else 'was the'} {n} strict xfail"
                              f"{'s' * (n != 1)} it promoted (its reports and JUnit record "
                              f"{'them' if n != 1 else 'it'} as XPASS)")
        session.testsfailed = 0

    def view(self, *, exit_status: int | None = None, shard: str | None = None) -> GateView:
        """The run as its CI outputs show it (`modes/ci_views.py`)."""
        from pytest_ragate.modes.ci_views import gate_view

        return gate_view(self.config, self.runs, self.collected, problems=self.invalid_lines,
                         exit_status=exit_status, incomplete=self.incomplete,
                         deltas=self.written.deltas, written=self.settings.run.outputs,
                         shard=shard)

    def outputs(self) -> reporter.Outputs:
        """The outputs asked for, and how this run left them."""
        return reporter.Outputs(self.settings.run.outputs, incomplete=self.incomplete,
                                unwritten=self.unwritten)

    def terminal_summary(self, terminalreporter: Any) -> None:
        if not self.concluded:
            return  # stopped before its loop (a usage error, --collect-only)
        reporter.terminal_summary(terminalreporter, self.runs, down=self.arrived.down,
                                  promotion=self.promotion, outputs=self.outputs(),
                                  history_notes=self.written.notes, gaps_fail=self.gaps_fail,
                                  flips={run.label: lines for run in self.runs
                                         if (lines := self.flip_lines(run))})
        accept = self.rules.accept_judge
        if accept and not any(g.judge_change for run in self.runs for g in run.regressions):
            terminalreporter.write_line(accept_judge_unneeded(accept), yellow=True)

    def flip_lines(self, run: GoldsetRun) -> list[str]:
        """The history's flip lines of one run, for the terminal."""
        report = (self.written.flips or {}).get(run.route or run.name)
        return report.lines() if report is not None else []


@dataclass(frozen=True)
class FlipCheck:
    """What promotion knows of flips: nothing without `--ragate-history`; with it, each
    goldset's members by (goldset, `anchor[id]` / `floor[name]`), or None when the history
    could not be read (then nothing is promoted unless forced: fail closed)."""

    history: bool
    flipped: dict[tuple[str, str], Flips] | None = None

    @classmethod
    def of(cls, runs: Iterable[GoldsetRun], reports: dict[str, FlipReport] | None) -> FlipCheck:
        if reports is None:
            return cls(history=True)
        found: dict[tuple[str, str], Flips] = {}
        for run in runs:
            report = reports.get(run.route or run.name)
            for member in report.members if report is not None else []:
                key = (run.name, member.member)
                if key not in found or member.flips > found[key].flips:
                    found[key] = member  # two routes of one goldset: the more flips
        return cls(history=True, flipped=found)

    def refusal(self, goldset: str, member: str) -> str | None:
        """Why this XPASSing anchor or floor is not promoted, or None."""
        if not self.history:
            return None
        if self.flipped is None:
            return f"{goldset}::{member} not promoted: its flips could not be checked"
        found = self.flipped.get((goldset, member))
        if found is None or not found.unsettled:
            return None
        return (f"{goldset}::{member} not promoted: flipped {found.flips} of the last "
                f"{found.runs} runs ({found.path()})")


@dataclass(frozen=True)
class Promoted:
    """What `--ragate-promote` said, and the node ids of the items it promoted."""

    lines: list[str]
    nodeids: frozenset[str]


def promote(anchors: Iterable[tuple[str, AnchorOutcome]], floors: Iterable[FloorDecision],
            flips: FlipCheck, *, force: bool = False) -> Promoted:
    """Rewrite the xfail of every anchor and floor (by node id) that XPASSed in this run and
    has not flipped more than once within the window (unless forced); say what was done,
    what was refused and why, what was not run, and what must be promoted by hand."""
    promoted: list[Promotion] = []
    refused: list[str] = []
    forced: list[str] = []
    nodes: dict[tuple[str, str], list[str]] = {}  # (file, anchor[id] / floor[...]) -> node ids

    def allowed(goldset: str, member: str) -> bool:
        why = flips.refusal(goldset, member)
        if why is not None:
            (forced if force else refused).append(why)
        return why is None or force

    by_file: dict[str, list[str]] = {}
    for nodeid, anchor in anchors:
        name = anchor_name(anchor.anchor_id)
        if anchor.outcome == "xpassed" and allowed(anchor.goldset, name):
            by_file.setdefault(anchor.path, []).append(anchor.anchor_id)
            nodes.setdefault((str(Path(anchor.path)), name), []).append(nodeid)
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
        elif verdict.outcome != "xpassed" or not allowed(spec.goldset, spec.floor.name):
            continue
        elif spec.config_path is None:
            by_hand.append(spec.nodeid)
        else:
            by_config.setdefault(spec.config_path, []).append(spec.floor)
            nodes.setdefault((str(Path(spec.config_path)), spec.floor.name), []).append(
                spec.nodeid)
    for path, keys in by_config.items():
        promoted += promote_floors(Path(path), keys)
    return Promoted(summary(promoted, not_run, by_hand, refused=refused, forced=forced,
                            checked=flips.history),
                    frozenset(n for p in promoted for n in nodes.get((str(p.path), p.what), [])))


def settled_by_promotion(promoted: frozenset[str], failures: Mapping[str, int],
                         testsfailed: int) -> bool:
    """Whether every failure of the run was a strict XPASS this run promoted: each promoted
    item failed once (its call), nothing else failed (no other item, no collection error,
    no gap that failed the run: those count in `testsfailed` without a failed item here)."""
    return (bool(promoted) and set(failures) <= promoted
            and all(n == 1 for n in failures.values())
            and sum(failures.values()) == testsfailed)
