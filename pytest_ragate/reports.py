"""What a run leaves behind: the results JSONL, the Markdown report, the terminal table.

All three are rendered on the controller from the same records and verdicts, in goldset and
question order, so `-n 0` and `-n N` write the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate

from pytest_ragate.files import write_atomic
from pytest_ragate.gates import Verdict, fmt_counts, fmt_interval, kind_counts
from pytest_ragate.metrics import MECHANICAL, METRICS, QUESTION_METRICS, QuestionRecord
from pytest_ragate.regression import Regression

OUTCOME_WORDS = {"passed": "PASS", "failed": "FAIL", "xfailed": "XFAIL",
                 "xpassed": "XPASS(strict)", "skipped": "SKIP"}


@dataclass
class GoldsetRun:
    name: str
    eval_version: str
    records: list[QuestionRecord] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    regressions: list[Regression] = field(default_factory=list)  # with --ragate-baseline

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
        lines = [f"judge {', '.join(judges)}: {attempted - failures}/{attempted} verdicts, "
                 f"judge failures {failures}, cache hits {cached}"]
        shared = sorted({r.judge_model for r in self.records
                         if r.judge_model and r.judge_model == r.answerer_model})
        if shared:
            lines.append(f"warning: judge and answerer share weights ({', '.join(shared)}): "
                         "judged figures may favour the answerer")
        return lines

    @property
    def metrics(self) -> list[str]:
        """Mechanical metrics always; judged ones only when some row asked for them."""
        judged = {m for r in self.records for m in r.judge_attempted}
        return [m for m, info in QUESTION_METRICS.items() if not info.judged or m in judged]


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
                run.name, v.floor.name.removeprefix("floor[").removesuffix("]"),
                f"{v.floor.min:.2f}", fmt_num(v.value), fmt_interval(v.interval),
                v.tally.n if v.tally else 0,
                fmt_counts(kind_counts(v.floor.metric, run.records)) if v.floor.kind is None
                else "", v.computed_by, OUTCOME_WORDS[v.outcome],
            ])
    headers = ["goldset", "metric", "floor", "value", "95% interval", "n", "by kind",
               "computed by", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def regressions_table(runs: Sequence[GoldsetRun], tablefmt: str) -> str:
    rows = [[run.name, c.metric, fmt_num(c.baseline), fmt_num(c.current),
             "—" if c.delta is None else f"{c.delta:+.2f}", c.pairs, c.test,
             "—" if c.p_value is None else f"{c.p_value:.3g}", OUTCOME_WORDS[c.outcome]]
            for run in runs for c in run.regressions]
    headers = ["goldset", "metric", "baseline", "now", "change", "paired questions", "test",
               "p", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def _question_rows(run: GoldsetRun) -> tuple[list[str], list[list[str]]]:
    metrics = run.metrics
    headers = ["question", "kind", "status", "abstained", "citations ok", "evidence found",
               "nearest distance", *[f"{m} ({metric_source(run, m)})" for m in metrics], "judge"]
    rows = []
    for r in run.records:
        rows.append([
            r.question_id, r.kind, r.status if r.status != "scored" else "",
            "" if r.abstained is None else ("yes" if r.abstained else "no")
            + ("" if r.abstention_correct else " ✗"),
            f"{r.citations_correct}/{r.citations}" + (" (uncited)" if r.uncited else ""),
            f"{r.evidence_spans_found}/{r.evidence_spans}",
            fmt_num(r.nearest_distance), *[fmt_num(r.metrics.get(m)) for m in metrics],
            "; ".join([f"{m} failed ({why})" for m, why in r.judge_failures.items()]
                      + ([f"cached: {', '.join(r.judge_cached)}"] if r.judge_cached else [])),
        ])
    means = []
    for m in metrics:
        values = [v for r in run.records if (v := r.metrics.get(m)) is not None]
        means.append(fmt_num(sum(values) / len(values)) if values else "—")
    rows.append(["**mean**", "", "", "", "", "", "", *means, ""])
    return headers, rows


def metric_source(run: GoldsetRun, metric: str) -> str:
    """Who computed a metric's figures: `mechanical`, or the judges that gave its verdicts."""
    if not METRICS[metric].judged:
        return MECHANICAL
    return ", ".join(sorted({r.judge for r in run.records if r.judge})) or "judge"


def markdown(runs: Sequence[GoldsetRun],
             deltas: Mapping[str, list[str]] | None = None) -> str:
    parts = ["# ragate report", ""]
    for run in runs:
        parts += [f"## {run.name} (eval_version {run.eval_version})", ""]
        status = {s: sum(r.status == s for r in run.records) for s in ("scored", "error",
                                                                         "skipped")}
        parts += [f"{len(run.records)} questions: {status['scored']} scored, "
                  f"{status['error']} errored, {status['skipped']} skipped.", ""]
        since = (deltas or {}).get(run.name)
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
    parts += ["Figures marked *mechanical* are computed from turn ranges alone; judged figures "
              "name the judge that produced them.", ""]
    return "\n".join(parts)


def write_markdown(path: Path, runs: Sequence[GoldsetRun],
                   deltas: Mapping[str, list[str]] | None = None) -> None:
    write_atomic(path, markdown(runs, deltas))
