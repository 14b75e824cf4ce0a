"""One goldset as one route ran it, decided: what every output (terminal, results, Markdown,
HTML, history) reads, and the one place that says whether that run passed (`status`). What
its lines say of it (its coverage, parts, judge, flakiness) is `wording/runs.py`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from pytest_ragate.decision.floors import Gap, GapKind, Verdict
from pytest_ragate.decision.regressions import Regression
from pytest_ragate.decision.sequential import SequentialOutcome
from pytest_ragate.scoring.agreement import Agreement
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord, repeat_name
from pytest_ragate.scoring.registry import METRICS, run_metrics

RunStatus = Literal["passed", "failed", "nothing_ran", "partial", "not_decided"]
# from the worst: what a run of several goldsets is when none failed
STATUS_ORDER: tuple[RunStatus, ...] = ("failed", "nothing_ran", "partial", "not_decided",
                                       "passed")


@dataclass(kw_only=True)
class GoldsetRun:
    """One goldset as one route ran it: the controller fills it, every output reads it."""

    name: str
    eval_version: str
    records: list[QuestionRecord] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)  # with --ragate-baseline
    route: str = ""  # ragate.toml's node id, or a @ragate.goldset test's
    label: str = ""  # the name, or `name (route)` when two routes ran one goldset
    population: int | None = None  # questions collected; None when unknown (unit tests)
    gaps: list[Gap] = field(default_factory=list)  # questions without a scored result
    anchor_gaps: list[Gap] = field(default_factory=list)
    anchors: list[AnchorOutcome] = field(default_factory=list)  # anchors that ran, in order
    failed_items: list[str] = field(default_factory=list)  # its items that failed
    run_failed: bool = False  # the pytest run as a whole exits non-zero
    soft_gaps: frozenset[str] = frozenset({"deselected"})  # gaps that skip, not fail
    agreements: list[Agreement] = field(default_factory=list)  # the judge against the labels
    repeats: int = 1  # times each question was asked: `population` counts every repeat
    judge: str | None = None  # who decides its judged floors, though no question reached it
    sequential: SequentialOutcome | None = None  # how a sequential goldset was asked
    corpus: dict[str, str] = field(default_factory=dict)  # each document's digest, by id
    # by question id: the documents its expected evidence is in (none while sealed)
    evidence_docs: dict[str, list[str]] = field(default_factory=dict)
    # RAGATE_SEAL_KEY was set but empty (a fork's job): what its sealed questions' line says
    seal_key_empty: bool = False

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    @property
    def status(self) -> RunStatus:
        """What this run was, for every output that names it: FAIL when a floor failed or a
        strict xfail passed, a regression was found, a result is missing, or any item of it
        (or of the run) failed (a report never says PASS for a run that exits non-zero);
        else NOTHING RAN when none of its questions or anchors has a result (every one
        deselected, or skipped: nothing was measured); else PARTIAL when some were
        deselected (-k, -m, --lf: the floors over them were skipped, its figures are a
        part's); else FLOOR NOT DECIDED when a floor was skipped for another reason (an
        optional judged metric without a judge, a sealed goldset set to skip); else PASS
        (an xfail floor that failed as expected is decided). PASS only when every floor
        was decided and passed over every question."""
        bad = (any(v.outcome in ("failed", "xpassed") for v in self.verdicts)
               or any(g.outcome == "failed" for g in self.regressions)
               or bool(self.hard_gaps)
               or bool(self.failed_items) or self.run_failed)
        if bad:
            return "failed"
        if not self.ran:
            return "nothing_ran"
        if any(g.kind == "deselected" for g in [*self.gaps, *self.anchor_gaps]):
            return "partial"
        if any(v.outcome == "skipped" for v in self.verdicts):
            return "not_decided"
        return "passed"

    @property
    def ran(self) -> bool:
        """Whether any of its questions or anchors has a result that is not a skip."""
        return (any(r.status != "skipped" for r in self.records)
                or any(a.outcome != "skipped" for a in self.anchors))

    @property
    def hard_gaps(self) -> list[Gap]:
        """Questions and anchors whose missing result fails the run (not deselected ones)."""
        return [g for g in [*self.gaps, *self.anchor_gaps] if g.kind not in self.soft_gaps]

    @property
    def gap_groups(self) -> list[tuple[GapKind, list[str]]]:
        """The questions without a result, by what happened to them, in `GapKind`'s order."""
        found = [(kind, [g.member for g in self.gaps if g.kind == kind])
                 for kind in get_args(GapKind)]
        return [(kind, members) for kind, members in found if members]

    def named(self, record: QuestionRecord) -> str:
        """How a row is named in the reports: `q07`, or `q07[r2]` when questions repeat."""
        return (repeat_name(record.question_id, record.repeat) if self.repeats > 1
                else record.question_id)

    @property
    def metrics(self) -> list[str]:
        """The run's metrics (registry.run_metrics) that a question has a figure of, for the
        question columns and the by-kind lines; judge_coverage is the judge line's."""
        asked = {m for r in self.records for m in r.scored_on}
        named = [v.floor.metric for v in self.verdicts if not v.floor.anchors]
        return [m for m in run_metrics(asked, named) if METRICS[m].value is not None]


def run_status(runs: Sequence[GoldsetRun], *, failed: bool) -> RunStatus:
    """What the run as a whole was: FAIL when it exits non-zero or stopped early (`failed`)
    or a goldset run failed; NOTHING RAN when no goldset question or anchor ran (`-k`
    matching nothing, every goldset deselected): a run that measured nothing never says
    PASS; PARTIAL when some goldsets ran and another ran nothing or in part; FLOOR NOT
    DECIDED when a goldset's floor was not decided; PASS only when every goldset passed."""
    each = [run.status for run in runs]
    if failed or "failed" in each:
        return "failed"
    if all(status == "nothing_ran" for status in each):  # no goldset at all, too
        return "nothing_ran"
    worst = min(each, key=STATUS_ORDER.index)
    return "partial" if worst == "nothing_ran" else worst
