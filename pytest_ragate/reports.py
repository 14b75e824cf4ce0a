"""What a run leaves behind: the results JSONL, the Markdown report, the terminal table.

All three are rendered on the controller from the same records and verdicts, in goldset and
question order, so `-n 0` and `-n N` write the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from tabulate import tabulate

from pytest_ragate.files import write_atomic
from pytest_ragate.gates import (
    NAMED,
    Gap,
    GapKind,
    Verdict,
    fmt_counts,
    fmt_interval,
    kind_counts,
)
from pytest_ragate.metrics import MECHANICAL, QuestionRecord, fmt_some
from pytest_ragate.registry import METRICS, run_metrics
from pytest_ragate.regression import Regression
from pytest_ragate.wire import AnchorOutcome

OUTCOME_WORDS = {"passed": "PASS", "failed": "FAIL", "xfailed": "XFAIL",
                 "xpassed": "XPASS(strict)", "skipped": "SKIP"}
GAP_ORDER = get_args(GapKind)


@dataclass
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
        return f"{total} questions: {', '.join(parts)}"

    @property
    def parts(self) -> list[str]:
        """Which system, retriever and judge answered, as the rows record them."""
        def seen(values: list[str | None]) -> str:
            found = sorted({v for v in values if v})
            return "; ".join(found) if found else "—"

        judges = sorted({f"{r.judge} from {r.judge_from or '?'}" for r in self.records
                         if r.judge})
        return [f"system: {seen([r.system for r in self.records])}",
                f"retriever: {seen([r.retriever for r in self.records])}",
                f"judge: {'; '.join(judges) if judges else 'none'}"]

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
        return lines

    @property
    def metrics(self) -> list[str]:
        """The run's metrics (registry.run_metrics) that a question has a figure of, for the
        question columns and the by-kind lines; judge_coverage is the judge line's."""
        asked = {m for r in self.records for m in r.judge_attempted}
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


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A figure as every report shows it; a missing one is a dash."""
    return "—" if value is None else f"{value:.{digits}f}"


def results_lines(runs: Sequence[GoldsetRun]) -> str:
    rows = [r.model_dump(mode="json") for run in runs for r in run.records]
    return "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)


def write_results(path: Path, runs: Sequence[GoldsetRun]) -> None:
    write_atomic(path, results_lines(runs))


def floors_table(runs: Sequence[GoldsetRun], tablefmt: str) -> str:
    rows = []
    for run in runs:
        for v in run.verdicts:
            rows.append([
                run.label, v.floor.name.removeprefix("floor[").removesuffix("]"),
                f"{v.floor.min:.2f}", fmt_num(v.value), fmt_interval(v.interval),
                v.tally.n if v.tally else 0,
                fmt_counts(kind_counts(v.floor.metric, run.records)) if v.floor.kind is None
                else "", v.computed_by, OUTCOME_WORDS[v.outcome],
            ])
    headers = ["goldset", "metric", "floor", "value", "95% interval", "n", "by kind",
               "computed by", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def regressions_table(runs: Sequence[GoldsetRun], tablefmt: str) -> str:
    rows = [[run.label, c.metric, fmt_num(c.baseline), fmt_num(c.current),
             "—" if c.delta is None else f"{c.delta:+.2f}", c.pairs, c.test,
             "—" if c.p_value is None else f"{c.p_value:.3g}", OUTCOME_WORDS[c.outcome]]
            for run in runs for c in run.regressions]
    headers = ["goldset", "metric", "baseline", "now", "change", "paired questions", "test",
               "p", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def _question_rows(run: GoldsetRun) -> tuple[list[str], list[list[str]]]:
    metrics = run.metrics
    headers = ["question", "text", "kind", "status", "abstained", "citations ok",
               "expected evidence", "evidence found", "contexts", "nearest distance",
               *[f"{m} ({metric_source(run, m)})" for m in metrics], "judge"]
    rows = []
    for r in run.records:
        repeats = f", {r.duplicate_citations} repeated" if r.duplicate_citations else ""
        expected = ("sealed" if r.expected is None else " ".join(r.expected)
                    or "none: must abstain")
        rows.append([
            r.question_id, _cell(r.question or ""), r.kind,
            r.status if r.status != "scored" else "",
            "" if r.abstained is None else ("yes" if r.abstained else "no")
            + ("" if r.abstention_correct else " ✗"),
            f"{r.citations_correct}/{r.citations}" + (" (uncited)" if r.uncited else "")
            + repeats, _cell(expected),
            f"{r.evidence_spans_found}/{r.evidence_spans}", str(r.contexts),
            fmt_num(r.nearest_distance), *[fmt_num(_value(r, m)) for m in metrics],
            "; ".join([f"{m} failed ({why})" for m, why in r.judge_failures.items()]
                      + ([f"vacuous: {', '.join(r.judge_vacuous)}"] if r.judge_vacuous else [])
                      + ([f"cached: {', '.join(r.judge_cached)}"] if r.judge_cached else [])),
        ])
    means = []
    for m in metrics:
        values = [v for r in run.records if (v := _value(r, m)) is not None]
        means.append(fmt_num(sum(values) / len(values)) if values else "—")
    rows.append(["**mean**", "", "", "", "", "", "", "", "", "", *means, ""])
    return headers, rows


ANCHOR_HEADERS = ["anchor", "kind", "outcome", "claim", "strict xfail", "why"]
ANCHOR_WORDS = {**OUTCOME_WORDS, "error": "ERROR"}


def anchor_rows(run: GoldsetRun) -> list[list[str]]:
    """Each anchor's outcome (and each anchor that has none, with why), for the reports."""
    rows = [[a.anchor_id, a.kind, ANCHOR_WORDS["error" if a.error else a.outcome],
             _cell(a.claim or ""), _cell(a.xfail or ""), _cell(a.error or a.why or "")]
            for a in run.anchors]
    ran = {a.anchor_id for a in run.anchors}
    rows += [[g.member, g.member_kind, g.kind.upper(), "", "", _cell(g.why)]
             for g in run.anchor_gaps if g.member not in ran]
    return rows


def _cell(text: str) -> str:
    """Text in one Markdown table cell: one line, no column break."""
    return " ".join(text.split()).replace("|", "\\|")


def question_text(record: QuestionRecord) -> str:
    """One question's outcome as a person reads it: what CI systems show from a JUnit test
    case's `<system-out>` (few show `<properties>`)."""
    lines = [f"question: {record.question or record.question_id}"]
    if record.status != "scored":
        lines.append(f"{record.status}: {record.error or ''}")
    if record.abstained:
        lines.append("answer: (abstained)")
    elif record.abstained is not None:
        lines.append(f"answer: {record.answer_text or '(no text)'}")
    for c in record.cited:
        quote = f' "{c.quote}"' if c.quote else ""
        lines.append(f"  {'✓' if c.correct else '✗'} {c.label}{quote}")
    if record.uncited:
        lines.append("  (no citation)")
    if record.duplicate_citations:
        lines.append(f"  ({record.duplicate_citations} repeated citations counted once)")
    if record.expected is None:
        lines.append("expected: sealed")
    elif not record.expected:
        lines.append("expected: none, must abstain")
    else:
        lines += ["expected:", *[f"  {label}" for label in record.expected]]
    if record.abstained is not None:
        ranks = ", ".join("—" if k is None else str(k) for k in record.evidence_ranks)
        lines.append(f"abstention {'right' if record.abstention_correct else 'wrong'} · "
                     f"citations {record.citations_correct}/{record.citations} right · "
                     f"evidence {record.evidence_spans_found}/{record.evidence_spans} found"
                     + (f" (ranks {ranks})" if ranks else "")
                     + f" in {record.contexts} contexts")
    judged = [f"{m} {v:.2f}" for m, v in record.metrics.items()
              if v is not None and METRICS[m].judged]
    if judged:
        lines.append(f"judged by {record.judge}: {' · '.join(judged)}")
    lines += [f"judge failed: {m}: {why}" for m, why in record.judge_failures.items()]
    return "\n".join(lines) + "\n"


def _value(record: QuestionRecord, metric: str) -> float | None:
    """A question's own figure of a metric: stored, or (evidence_recall@K) from its ranks."""
    value = METRICS[metric].value
    return None if value is None else value(metric, record)


def metric_source(run: GoldsetRun, metric: str) -> str:
    """Who computed a metric's figures: `mechanical`, or the judges that gave its verdicts."""
    if not METRICS[metric].judged:
        return MECHANICAL
    return ", ".join(sorted({r.judge for r in run.records if r.judge})) or "judge"


def badge(status: str) -> str:
    return "**PASS**" if status == "passed" else "**FAIL**"


def markdown(runs: Sequence[GoldsetRun],
             deltas: Mapping[str, list[str]] | None = None, run_failed: bool = False) -> str:
    overall = "failed" if run_failed or any(run.status == "failed" for run in runs) else "passed"
    parts = ["# ragate report", "", f"Run: {badge(overall)}"
             + ("" if overall == "passed" else " (the pytest run exits non-zero)"), ""]
    for run in runs:
        reason = run.status_reason
        parts += [f"## {run.label} (eval_version {run.eval_version}) {badge(run.status)}", ""]
        if reason:
            parts += [f"FAIL: {reason}.", ""]
        parts += [f"{run.coverage_line()}.", ""]
        parts += [f"- {line}" for line in [*run.parts, run.pool_line()]]
        parts.append("")
        since = (deltas or {}).get(run.route or run.name) or (deltas or {}).get(run.name)
        if since:
            parts += ["### Since the last run", "", *[f"- {line}" for line in since], ""]
        parts += [f"- {line}" for line in run.judge_lines]
        if run.judge_lines:
            parts.append("")
        if run.verdicts:
            parts += ["### Floors", "", floors_table([run], "github"), ""]
        if run.regressions:
            parts += ["### Against the baseline", "", regressions_table([run], "github"), "",
                      *[f"- {c.metric}: {c.message}" for c in run.regressions], ""]
        parts += ["### By kind", ""]
        for metric in run.metrics:
            counts = fmt_counts(kind_counts(metric, run.records))
            if counts:
                parts.append(f"- {metric} ({metric_source(run, metric)}): {counts}")
        uncited = [r.question_id for r in run.records if r.uncited]
        parts.append(f"- answered without a citation: {len(uncited)}"
                     + (f" ({', '.join(uncited)})" if uncited else ""))
        headers, rows = _question_rows(run)
        parts += ["", "### Questions", "", tabulate(rows, headers=headers, tablefmt="github",
                                                     disable_numparse=True), ""]
        if run.anchors or run.anchor_gaps:
            parts += ["### Anchors", "", tabulate(anchor_rows(run), headers=ANCHOR_HEADERS,
                                                  tablefmt="github", disable_numparse=True), ""]
    parts += ["Figures marked *mechanical* are computed from turn ranges alone; judged figures "
              "name the judge that produced them.", ""]
    return "\n".join(parts)


def write_markdown(path: Path, runs: Sequence[GoldsetRun],
                   deltas: Mapping[str, list[str]] | None = None,
                   run_failed: bool = False) -> None:
    write_atomic(path, markdown(runs, deltas, run_failed))
