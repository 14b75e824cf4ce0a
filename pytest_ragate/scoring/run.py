"""One goldset as one route ran it, decided: what every output (terminal, results, Markdown,
HTML, history) reads, and the one place that says whether that run passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from pytest_ragate.scoring.agreement import Agreement
from pytest_ragate.scoring.gates import Gap, GapKind, Verdict
from pytest_ragate.scoring.messages import (
    NAMED,
    agreement_line,
    says_not_needed,
    sequential_part,
)
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord, fmt_some, repeat_name
from pytest_ragate.scoring.registry import METRICS, flaky_questions, run_metrics
from pytest_ragate.scoring.regression import Regression
from pytest_ragate.scoring.stopping import SequentialOutcome

GAP_ORDER = get_args(GapKind)


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

    def __post_init__(self) -> None:
        self.label = self.label or self.name

    @property
    def status(self) -> str:
        """FAIL when a floor failed or a strict xfail passed, a regression was found, a
        result is missing, or any item of it (or of the run) failed: a report never says
        PASS for a run that exits non-zero."""
        bad = (any(v.outcome in ("failed", "xpassed") for v in self.verdicts)
               or any(g.outcome == "failed" for g in self.regressions)
               or bool(self.hard_gaps)
               or bool(self.failed_items) or self.run_failed)
        return "failed" if bad else "passed"

    @property
    def status_reason(self) -> str:
        """Why the badge says FAIL, in one line; empty when it says PASS."""
        why = []
        failed = sum(v.outcome == "failed" for v in self.verdicts)
        if failed:
            why.append(f"{failed} floor{'s' * (failed != 1)} failed")
        if any(v.outcome == "xpassed" for v in self.verdicts):
            why.append("a strict xfail floor passed")
        regressions = sum(g.outcome == "failed" for g in self.regressions)
        if regressions:
            why.append(f"{regressions} significant regression{'s' * (regressions != 1)}")
        if self.hard_gaps:
            why.append(f"{len(self.hard_gaps)} without a result")
        if self.failed_items:
            n = len(self.failed_items)
            why.append(f"{n} item{'s' * (n != 1)} failed")
        if not why and self.run_failed:
            why.append("the run failed elsewhere")
        return ", ".join(why) if self.status == "failed" else ""

    @property
    def hard_gaps(self) -> list[Gap]:
        """Questions and anchors whose missing result fails the run (not deselected ones)."""
        return [g for g in [*self.gaps, *self.anchor_gaps] if g.kind not in self.soft_gaps]

    def coverage_line(self) -> str:
        """`22 questions: 19 scored, 1 errored, 1 crashed, 1 never ran (q09)`."""
        total = self.population if self.population is not None else len(self.records)
        scored = sum(r.status == "scored" for r in self.records)
        parts = [f"{scored} scored"]
        for kind in GAP_ORDER:
            named = [g.member for g in self.gaps if g.kind == kind]
            if named:
                parts.append(f"{len(named)} {kind} ({fmt_some(named, NAMED)})")
        if self.sequential is not None:
            s = self.sequential
            skipped = sum(r.status == "skipped" and says_not_needed(r.error)
                          for r in self.records)
            parts.append(sequential_part(skipped=skipped, asked=s.asked, seed=s.seed,
                                         alpha=s.alpha, stopped=s.stopped, why=s.why))
        if self.repeats > 1:
            return (f"{total // self.repeats} questions × {self.repeats} repeats = {total} "
                    f"answers: {', '.join(parts)}")
        return f"{total} questions: {', '.join(parts)}"

    def flaky_lines(self) -> list[str]:
        """With repeats: how many questions came out differently between repeats, and which
        (`q07 right 2 of 3`); nothing when each question was asked once."""
        if self.repeats < 2:
            return []
        flaky = flaky_questions(self.records)
        asked = len({r.question_id for r in self.records if r.status != "skipped"})
        head = (f"flaky: {len(flaky)} of {asked} questions right in some repeats and wrong in "
                f"others (over {self.repeats} repeats)")
        return [head + (f": {fmt_some(flaky, NAMED)}" if flaky else "")]

    def named(self, record: QuestionRecord) -> str:
        """How a row is named in the reports: `q07`, or `q07[r2]` when questions repeat."""
        return (repeat_name(record.question_id, record.repeat) if self.repeats > 1
                else record.question_id)

    @property
    def parts(self) -> list[str]:
        """Which system, retriever and judge answered, as the rows record them."""
        def seen(values: list[str | None]) -> str:
            found = sorted({v for v in values if v})
            return "; ".join(found) if found else "—"

        judges = sorted({f"{r.judge} from {r.judge_from or '?'}" for r in self.records
                         if r.judge})
        judge = ("; ".join(judges) if judges else
                 f"{self.judge}, reached by no question" if self.judge else "none")
        return [f"system: {seen([r.system for r in self.records])}",
                f"retriever: {seen([r.retriever for r in self.records])}",
                f"judge: {judge}"]

    @property
    def judge_lines(self) -> list[str]:
        """Who judged, how often it failed or was served from the cache, and whether it
        shares weights with the answerer."""
        judges = sorted({r.judge for r in self.records if r.judge})
        if not judges:
            return []
        failures = sum(len(r.judge_failures) for r in self.records)
        attempted = sum(len(r.judge_attempted) for r in self.records)
        cached = sum(len(r.judge_cached) for r in self.records)
        vacuous = sum(len(r.judge_vacuous) for r in self.records)
        lines = [f"judge {', '.join(judges)}: {attempted - failures}/{attempted} verdicts, "
                 f"judge failures {failures}, vacuous {vacuous}, cache hits {cached}"]
        shared = sorted({r.judge_model for r in self.records
                         if r.judge_model and r.judge_model == r.answerer_model})
        if shared:
            lines.append(f"warning: judge and answerer share weights ({', '.join(shared)}): "
                         "judged figures may favour the answerer")
        lines += [f"judge agreement with the labels, {agreement_line(a)}" for a in self.agreements]
        ppi = sorted({v.floor.metric for v in self.verdicts if v.estimate == "ppi"})
        if ppi:
            lines.append(f"judged floors decided on the ppi estimate (judge mean corrected by "
                         f"the labels): {', '.join(ppi)}")
        return lines

    @property
    def metrics(self) -> list[str]:
        """The run's metrics (registry.run_metrics) that a question has a figure of, for the
        question columns and the by-kind lines; judge_coverage is the judge line's."""
        asked = {m for r in self.records for m in r.scored_on}
        named = [v.floor.metric for v in self.verdicts if not v.floor.anchors]
        return [m for m in run_metrics(asked, named) if METRICS[m].value is not None]

    def pool_line(self) -> str:
        """How many contexts the answers came with: evidence recall over a pool of 50 is not
        recall over a pool of 5."""
        sizes = sorted(r.contexts for r in self.records if r.status == "scored")
        if not sizes:
            return "contexts per answer: —"
        middle = sizes[len(sizes) // 2] if len(sizes) % 2 else (
            sizes[len(sizes) // 2 - 1] + sizes[len(sizes) // 2]) / 2
        return (f"contexts per answer (the pool evidence recall is measured in): median "
                f"{middle:g}, min {sizes[0]}, max {sizes[-1]}")
