"""Deciding a run: what was collected, what arrived and what failed go in; every goldset run
with its gaps, floor verdicts and regression checks comes out.

Pure: no pytest, no files, no hooks. The controller (`controller.py`) gathers the inputs from
pytest's hooks and hands the outcome to the reporter (`reporting.py`) and the writers
(`outputs/writers.py`), so the rules of a floor decided over its whole population are plain
values in and plain values out.

Before deciding, what arrived is reconciled with what was collected (`population.Collected`): every
selected question and anchor either has a result or is a gap (errored, crashed, lost with a
crashed worker, never ran, skipped, sealed, deselected), and floors are decided over that
whole population (`floors.missing_of`), each goldset's by the one entry point that decides
a goldset's floors from its rows plus the rules (`goldset_floors.decide_floors`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from pytest_ragate.decision.floors import Gap, GapKind, Verdict, soft_gaps
from pytest_ragate.decision.goldset_floors import decide_floors
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.margins import Margins
from pytest_ragate.decision.population import Collected, FloorSpec, Member, Population
from pytest_ragate.decision.regressions import Regression, RunJudge, check_run
from pytest_ragate.decision.rules import DEFAULT_RULES, Rules
from pytest_ragate.decision.said import Topic, said
from pytest_ragate.decision.sequential import Stopping, outcome
from pytest_ragate.scoring.agreement import Agreement, agree
from pytest_ragate.scoring.pairing import BaselineRun
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord


@dataclass(frozen=True, kw_only=True)
class Failure:
    """An item's failed report: its phase (`when`), the line that says what happened, and
    whether its worker died running it (xdist's `pytest_handlecrashitem` says so)."""

    phase: str
    why: str
    crashed: bool = False

    @property
    def gap(self) -> GapKind:
        return "crashed" if self.crashed else "errored"


@dataclass(kw_only=True)
class Arrived:
    """What the reports brought, by node id, as the controller gathers it from the hooks."""

    records: dict[str, QuestionRecord] = field(default_factory=dict)
    anchors: dict[str, AnchorOutcome] = field(default_factory=dict)
    failed: dict[str, Failure] = field(default_factory=dict)  # the first failure of each
    started: dict[str, tuple[str, int | None, str]] = field(default_factory=dict)  # location
    down: list[str] = field(default_factory=list)  # xdist workers that went down, and why


@dataclass(frozen=True, kw_only=True)
class FloorDecision:
    """A collected floor and its verdict."""

    spec: FloorSpec
    verdict: Verdict


@dataclass(kw_only=True)
class Decision:
    runs: list[GoldsetRun] = field(default_factory=list)  # by goldset name, then route
    floors: list[FloorDecision] = field(default_factory=list)  # in collection order
    lost: list[str] = field(default_factory=list)  # started, never reported: each fails
    lost_why: str = ""
    undescribed: list[str] = field(default_factory=list)  # routes no process described
    undescribed_why: str = ""


def decide_run(collected: Collected | None, arrived: Arrived, rules: Rules = DEFAULT_RULES,
               ) -> Decision:
    """Every goldset run of this session, decided over the populations collected."""
    decision = Decision(lost_why="its worker went down before it reported" + _down(arrived))
    if collected is None and (arrived.records or arrived.anchors):
        # results arrived but no process described its collection (every xdist worker died
        # before finishing): no floor can be decided, and that is a failure, not a pass
        decision.undescribed = sorted({r.route for r in arrived.records.values()}) or ["ragate"]
        decision.undescribed_why = ("no process returned its collection (its xdist workers "
                                    f"went down{_down(arrived)}): the floors of this goldset "
                                    "could not be decided")
    populations = {p.route: p for p in (collected.populations if collected else [])}
    runs: dict[str, GoldsetRun] = {}
    stoppings: dict[str, Stopping] = {}
    for route, population in populations.items():
        stopping = _replayed(population, collected, arrived, rules)
        if stopping is not None:
            stoppings[route] = stopping
        records, gaps = _question_gaps(population, arrived, decision, rules,
                                       stopping.not_needed if stopping else frozenset())
        runs[route] = GoldsetRun(name=population.goldset,
                                 eval_version=population.eval_version, records=records,
                                 route=route, population=len(population.questions), gaps=gaps,
                                 repeats=population.repeats,
                                 anchor_gaps=_anchor_gaps(population, arrived, decision,
                                                          rules),
                                 anchors=[arrived.anchors[m.nodeid] for m in population.anchors
                                          if m.nodeid is not None
                                          and m.nodeid in arrived.anchors],
                                 soft_gaps=soft_gaps(rules.strictness),
                                 sequential=(outcome(stopping, population.sequential)
                                             if stopping and population.sequential else None),
                                 corpus=population.corpus,
                                 evidence_docs={m.question_id: m.evidence_docs
                                                for m in population.questions
                                                if m.evidence_docs})
    for record in arrived.records.values():  # rows of a route nobody described
        if record.route not in populations:
            runs.setdefault(record.route, GoldsetRun(name=record.goldset,
                                                     eval_version=record.eval_version,
                                                     route=record.route)
                            ).records.append(record)
    for route, population in populations.items():
        runs[route].agreements = _agreements(population, runs[route])
        runs[route].judge = _judge(runs[route], population)
    order = {spec.nodeid: i for i, spec in enumerate(collected.floors if collected else [])}
    for route, population in populations.items():
        specs = [spec for spec in (collected.floors if collected else []) if spec.route == route]
        verdicts = decide_floors([spec.floor for spec in specs], runs[route], population,
                                 rules, stoppings.get(route))
        runs[route].verdicts = [verdicts[spec.floor] for spec in specs]
        decision.floors += [FloorDecision(spec=spec, verdict=verdicts[spec.floor])
                            for spec in specs]
    decision.floors.sort(key=lambda d: order[d.spec.nodeid])
    names: dict[str, int] = {}
    for run in runs.values():
        names[run.name] = names.get(run.name, 0) + 1
    failed = {*arrived.failed, *decision.lost}
    routes = {m.nodeid: p.route for p in populations.values()
              for m in [*p.questions, *p.anchors] if m.nodeid is not None}
    for run in runs.values():
        run.label = run.name if names[run.name] == 1 else f"{run.name} ({run.route})"
        run.failed_items = sorted(n for n in failed if routes.get(n) == run.route)
        if rules.baseline is not None and run.records:
            population = populations.get(run.route)
            run.regressions = run_regressions(run, rules.baseline, rules,
                                              judge_spec=population.judge if population
                                              else None,
                                              margins=population.margins if population
                                              else None)
    decision.runs = [runs[route] for route in sorted(runs, key=lambda r: (runs[r].name, r))]
    return decision


def run_regressions(run: GoldsetRun, baseline: Sequence[BaselineRun], rules: Rules, *,
                    judge_spec: str | None, margins: Margins | None = None,
                    ) -> list[Regression]:
    """The run against the baseline, one pair per question: with repeats, its first repeat
    (the one a history line and a baseline keep), never its repeats as pairs of their own.
    The judge its rows name is held to the baseline's (`regression.judge_change`), with the
    judge `judge_spec` configures and the one `rules` accept; a metric the goldset's
    `margins` name is held to its margin."""
    current = {r.question_id: r.scores() for r in run.records if r.repeat == 1}
    judge = RunJudge(names=tuple(sorted({r.judge for r in run.records if r.judge})),
                     spec=judge_spec, accept=rules.accept_judge)
    found = check_run(run.name, run.eval_version, current, baseline, alpha=rules.alpha,
                      min_n=rules.strictness.min_n, judge=judge, corpus=run.corpus,
                      evidence_docs=run.evidence_docs, margins=margins)
    if run.repeats > 1:
        found = [replace(g, said=said(Topic.REPEATS_UNPAIRED, g.said)) for g in found]
    return found


def _narrowed(rules: Rules) -> str:
    """Why a member deselected by pytest's cache (`--lf`, `--sw`) is missing, not left out
    (empty when the user deselected it): the cause its floors name, as an error is."""
    flag = rules.strictness.narrowed_by
    return (f"{flag} reran the last failures only: a floor is decided over its whole "
            f"population, so run its goldset in full (without {flag}) to decide it"
            ) if flag else ""


def _down(arrived: Arrived) -> str:
    return f": {'; '.join(arrived.down)}" if arrived.down else ""


def _replayed(population: Population, collected: Collected | None, arrived: Arrived,
              rules: Rules) -> Stopping | None:
    """A sequential route's floor tests, fed its rows (a question whose report never came
    but failed, as its error row) and its rows asked again to check a stop, as the live run
    fed them; None when not sequential."""
    floors = [f.floor for f in (collected.floors if collected else [])
              if f.route == population.route]
    stopping = Stopping.of(population, floors, min_n=rules.strictness.min_n)
    if stopping is None:
        return None
    rows: dict[str, QuestionRecord] = {}
    for member in population.questions:
        record = arrived.records.get(member.nodeid) if member.nodeid else None
        failure = arrived.failed.get(member.nodeid) if member.nodeid else None
        if record is None and failure is not None:
            record = _error_record(population, member, failure.why)
        if record is not None:
            rows[member.item_name] = record
    again = {r.question_id: r for r in arrived.records.values()
             if r.reasked and r.route == population.route}
    return stopping.replay(rows, again).unless_all_asked(rows)


def _judge(run: GoldsetRun, population: Population) -> str | None:
    """Who judges this route's floors: the judge its rows name; else the one --ragate-judge
    configures, though no question reached it (sealed, skipped, errored: its judged floors
    are then decided over those gaps, never skipped for want of a judge); else the user's own
    `ragate_judge` fixture when no question asked it what it gives. None only when no judge
    is configured: no --ragate-judge, and a question that asked the fixture got none."""
    named = next((r.judge for r in run.records if r.judge), None)
    if named or population.judge:
        return named or population.judge
    asked = any(r.status == "scored" for r in run.records)
    if population.judge_fixture is None or asked:
        return None
    return f"ragate_judge ({population.judge_fixture})"


def _agreements(population: Population, run: GoldsetRun) -> list[Agreement]:
    """The judge against each labelled metric, when a judge ran; none without one."""
    if not population.labels or not any(r.judge for r in run.records):
        return []
    metrics = list(dict.fromkeys(label.metric for label in population.labels))
    return [agree(m, {x.question_id: x.value for x in population.labels if x.metric == m},
                  next(x.binary for x in population.labels if x.metric == m), run.records,
                  population.stamps(m))
            for m in metrics]


def _error_record(population: Population, member: Member, why: str) -> QuestionRecord:
    """An error row for a question whose own report never came (its worker crashed)."""
    return population.row(member, status="error", error=why)


def _question_gaps(population: Population, arrived: Arrived, decision: Decision,
                   rules: Rules, not_needed: frozenset[str] = frozenset(),
                   ) -> tuple[list[QuestionRecord], list[Gap]]:
    records: list[QuestionRecord] = []
    gaps: list[Gap] = []
    for member in population.questions:
        qid, kind, nodeid = member.item_name, member.kind, member.nodeid
        gap = partial(Gap, member=qid, member_kind=kind, member_tags=member.tags)
        if nodeid is None:
            gaps.append(gap(kind="deselected", why=_narrowed(rules)))
            continue
        record = arrived.records.get(nodeid)
        failure = arrived.failed.get(nodeid)
        if record is None and failure is not None:
            record = _error_record(population, member, failure.why)
            gaps.append(gap(kind=failure.gap, why=failure.why))
        elif record is None and nodeid in arrived.started:
            decision.lost.append(nodeid)
            record = _error_record(population, member, f"lost: {decision.lost_why}")
            gaps.append(gap(kind="lost", why=decision.lost_why))
        elif record is None:
            gaps.append(gap(kind="never ran"))
            continue
        elif record.status == "error":
            gaps.append(gap(kind="stale evidence" if record.stale_evidence else "errored",
                            why=record.error or ""))
        elif record.status == "skipped" and qid in not_needed and record.not_needed:
            pass  # its goldset was decided before it: not asked, and not missing
        elif record.status == "skipped":
            gaps.append(gap(kind="sealed") if member.sealed
                        else gap(kind="skipped",
                                 why=record.error or ""))
        records.append(record)
    records.sort(key=lambda r: (r.index, r.repeat))
    return records, gaps


def _anchor_gaps(population: Population, arrived: Arrived, decision: Decision,
                 rules: Rules) -> list[Gap]:
    gaps: list[Gap] = []
    for member in population.anchors:
        aid, kind, nodeid = member.anchor_id, member.kind, member.nodeid
        outcome = arrived.anchors.get(nodeid) if nodeid else None
        if nodeid is None:
            gaps.append(Gap(member=aid, member_kind=kind, kind="deselected",
                            why=_narrowed(rules)))
        elif outcome is not None and outcome.outcome == "skipped":
            gaps.append(Gap(member=aid, member_kind=kind, kind="skipped",
                            why=outcome.error or ""))
        elif outcome is not None and outcome.error:
            gaps.append(Gap(member=aid, member_kind=kind, kind="errored", why=outcome.error))
        elif outcome is not None:
            continue  # checked: held or not
        elif nodeid in arrived.failed:
            failure = arrived.failed[nodeid]
            gaps.append(Gap(member=aid, member_kind=kind, kind=failure.gap, why=failure.why))
        elif nodeid in arrived.started:
            decision.lost.append(nodeid)
            gaps.append(Gap(member=aid, member_kind=kind, kind="lost", why=decision.lost_why))
        else:
            gaps.append(Gap(member=aid, member_kind=kind, kind="never ran"))
    return gaps
