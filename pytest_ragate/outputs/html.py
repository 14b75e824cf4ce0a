"""`--ragate-html PATH`: one self-contained HTML page per run, for people rather than CI.

It shows what the Markdown report shows (floors with intervals, per-kind figures, every
question) plus the pictures that make a gate arguable: per-kind bars against the floors, the
nearest-distance calibration picture and the trend over the history of the same
eval_version. Plots are matplotlib SVG inlined in the page, and a Content-Security-Policy
forbids every fetch, so the file opens anywhere (a CI artifact, an e-mail) and shows the same.

The output is deterministic: no render time, fixed SVG ids and hash salt, records in goldset
and question order; so `-n 0` and `-n N` write the same bytes. matplotlib and jinja2 are
imported here only, and this module only when `--ragate-html` is given.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
import matplotlib
from markupsafe import Markup
from matplotlib.figure import Figure as MplFigure
from matplotlib.ticker import MaxNLocator

from pytest_ragate.decision.floors import Verdict
from pytest_ragate.decision.goldset_run import GoldsetRun, run_status
from pytest_ragate.decision.regressions import Regression
from pytest_ragate.files import write_atomic
from pytest_ragate.outputs.history import (
    HistoryLine,
    build_line,
    delta_lines,
    fmt_knob,
    fmt_sha,
    fmt_time,
)
from pytest_ragate.outputs.reports import (
    ANCHOR_HEADERS,
    TAG_HEADERS,
    anchor_rows,
    bill_cells,
    billed_columns,
    incomplete_notice,
    metric_source,
    question_bill,
    run_bill_line,
    slice_cells,
    tag_rows,
    worst_lines,
)
from pytest_ragate.outputs.slice_tables import SliceTable, slice_tables
from pytest_ragate.outputs.text_cells import tags_text
from pytest_ragate.scoring.figures import interval_of, kind_counts
from pytest_ragate.scoring.records import QuestionRecord, Tally, fmt_num, tally
from pytest_ragate.scoring.registry import METRICS, figure_digits
from pytest_ragate.wording.conversations import conversations, first_wrong, heading, turn_of
from pytest_ragate.wording.floors import OUTCOME_WORDS
from pytest_ragate.wording.numbers import floor_figure, fmt_counts, fmt_interval, fmt_n, shown
from pytest_ragate.wording.runs import (
    FAILED_NOTE,
    STATUS_WORDS,
    badge_of,
    lines_of,
    run_why,
    status_badge,
    status_why,
)
from pytest_ragate.wording.slices import slices_title

TEMPLATE = "report.html.j2"
# Okabe-Ito: distinguishable with the common colour-vision deficiencies
BLUE, ORANGE, VERMILION, GREY, BLACK = "#0072B2", "#E69F00", "#D55E00", "#6b6b6b", "#222222"
RC = {
    "svg.hashsalt": "pytest-ragate",  # stable clip-path and marker ids: identical bytes per run
    "svg.fonttype": "none",  # text stays text: smaller, searchable, uses the viewer's fonts
    "text.parse_math": False,  # a `$` in a kind name is a dollar sign, not mathtext
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # the time of a line never written; never shown
_CI_WORDS = {
    "point": "a floor holds when its value reaches it",
    "strict": "a floor holds only when the lower bound of its 95% interval reaches it",
}


@dataclass(frozen=True)
class Plot:
    """One inlined SVG figure; `key` is stable so tests and readers can find it."""

    key: str
    title: str
    svg: Markup


@dataclass
class Trend:
    """The history of one goldset at the run's eval_version, oldest first."""

    points: list[dict[str, Any]] = field(default_factory=list)
    plots: list[Plot] = field(default_factory=list)
    deltas: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --- SVG ---------------------------------------------------------------------------------------

_PROLOGUE = re.compile(r"\A.*?(?=<svg[\s>])", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^")]+)')


def _svg(fig: MplFigure, key: str, label: str) -> Markup:
    """The figure as an inline <svg>: no XML prologue or metadata (they name URLs), ids
    prefixed with `key` so several plots in one page never share an id."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = _METADATA.sub("", _PROLOGUE.sub("", buffer.getvalue(), count=1), count=1)
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", key) + "-"
    ids = set(_ID.findall(text))
    text = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = _REF.sub(lambda m: m.group(1) + (prefix if m.group(2) in ids else "") + m.group(2),
                    text)
    label = str(Markup.escape(label))
    text = text.replace("<svg ", f'<svg class="plot" role="img" aria-label="{label}" ', 1)
    return Markup(text.strip())  # matplotlib escapes the text it writes


def _figure(width: float, height: float, **margins: float) -> MplFigure:
    """A pyplot-free figure (nothing global is created, nothing leaks between plots) with
    fixed margins: a layout engine would draw every figure twice."""
    fig = MplFigure(figsize=(width, height))
    fig.subplots_adjust(**{"left": 0.12, "right": 0.97, "top": 0.88, "bottom": 0.14,
                           **margins})
    return fig


# --- plots -------------------------------------------------------------------------------------


def _count_label(t: Tally) -> str:
    if not t.n:
        return "n=0"
    if METRICS[t.metric].aggregate == "proportion":
        return f"{t.k:g}/{t.n}"
    return f"n={t.n}"


def kind_plot(run: GoldsetRun, metric: str, key: str) -> Plot:
    """All questions, then one bar per kind, with 95% intervals; the floors as red lines (a
    kind floor only over its kind's bar)."""
    bars: list[tuple[str, Tally]] = [("all", tally(metric, run.records)),
                                     *kind_counts(metric, run.records)]
    floors = [v.floor for v in run.verdicts
              if v.floor.metric == metric and not v.floor.anchors]
    tilt = len(bars) > 3 or max(len(kind) for kind, _ in bars) > 14
    fig = _figure(4.0, 2.8, bottom=0.3 if tilt else 0.14)
    ax = fig.add_subplot()
    for x, (kind, t) in enumerate(bars):
        colour = GREY if kind == "all" else BLUE
        interval = interval_of(t)
        if t.value is None or interval is None:
            ax.text(x, 0.03, "n=0", ha="center", va="bottom", color=GREY)
            continue
        low, high = max(0.0, t.value - interval[0]), max(0.0, interval[1] - t.value)
        ax.bar(x, t.value, width=0.62, color=colour, alpha=0.85)
        ax.errorbar(x, t.value, yerr=[[low], [high]], fmt="none", ecolor=BLACK, capsize=3,
                    linewidth=1)
        ax.text(x, min(interval[1] + 0.02, 1.08), _count_label(t), ha="center", va="bottom",
                fontsize=7.5, color=BLACK)
    kinds = [kind for kind, _ in bars]
    title = f"{metric} ({metric_source(run, metric)})"
    for floor in floors:
        over = floor.kind or (floor.slice[1] if floor.slice and floor.slice[0] == "kind"
                              else None)  # a kind floor, or a slice floor of the key `kind`
        if over is None and floor.slice is None:
            ax.axhline(floor.min, color=VERMILION, linestyle="--", linewidth=1.2)
            title += f" · floor {floor_figure(floor)}"
        elif over in kinds:
            x = kinds.index(over)
            ax.hlines(floor.min, x - 0.42, x + 0.42, color=VERMILION, linestyle=":",
                      linewidth=1.6)
    ax.set_xticks(range(len(bars)), kinds, rotation=25 if tilt else 0,
                  ha="right" if tilt else "center", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(bars) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_title(title, loc="left")
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)
    return Plot(key, metric, _svg(fig, key, f"{metric} by question kind"))


# a slice's mark by its call: colour and shape, so the calls read without colour too
_CALL_MARKS: dict[str | None, tuple[str, str]] = {
    "misses": (VERMILION, "X"), "insufficient": (ORANGE, "D"), "holds": (BLUE, "o"),
    None: (GREY, "s")}


def slice_plot(table: SliceTable, key: str) -> Plot:
    """Each slice's value with its 95% interval against its floor, worst first (the table's
    order); a failing slice's name in red."""
    rows = table.rows
    tilt = len(rows) > 6 or max(len(row.value) for row in rows) > 8
    # wide enough for the slices and for the title (about 0.08 in a character at 9.5 pt)
    width = min(9.0, max(4.8, 1.6 + 0.4 * len(rows), 0.8 + 0.08 * len(table.head)))
    fig = _figure(width, 2.8, left=0.1, bottom=0.3 if tilt else 0.14)
    ax = fig.add_subplot()
    floors = {row.verdict.floor.min for row in rows}
    if len(floors) == 1:
        ax.axhline(floors.pop(), color=VERMILION, linestyle="--", linewidth=1.2)
    for x, row in enumerate(rows):
        v, (colour, marker) = row.verdict, _CALL_MARKS[row.call]
        if len(floors) > 1:  # a named slice with its own floor: each under its own segment
            ax.hlines(v.floor.min, x - 0.4, x + 0.4, color=VERMILION, linestyle="--",
                      linewidth=1.2)
        if v.value is None or v.interval is None:
            ax.text(x, 0.03, "n=0", ha="center", va="bottom", color=GREY)
            continue
        low, high = max(0.0, v.value - v.interval[0]), max(0.0, v.interval[1] - v.value)
        ax.errorbar(x, v.value, yerr=[[low], [high]], fmt=marker, color=colour,
                    ecolor=colour, markersize=6, capsize=3, linewidth=1.2)
        if v.tally is not None:
            ax.text(x, min(v.interval[1] + 0.02, 1.08), _count_label(v.tally), ha="center",
                    va="bottom", fontsize=7.5, color=BLACK)
    ax.set_xticks(range(len(rows)), [row.value for row in rows], rotation=25 if tilt else 0,
                  ha="right" if tilt else "center", rotation_mode="anchor")
    for label, row in zip(ax.get_xticklabels(), rows, strict=True):
        if row.failing:
            label.set_color(VERMILION)
            label.set_fontweight("bold")
    ax.set_xlim(-0.6, len(rows) - 0.4)
    ax.set_ylim(0, 1.12)
    ax.set_title(table.head, loc="left")
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    ax.set_axisbelow(True)
    return Plot(key, table.head, _svg(fig, key, slices_title(table.head)))


def slice_view(table: SliceTable, key: str) -> dict[str, Any]:
    """One key's slice table and plot, in display form."""
    return {
        "key": table.key,
        "metric": table.metric,
        "title": slices_title(table.head),
        "rows": [{"cells": slice_cells(row), "outcome": row.verdict.outcome,
                  "word": OUTCOME_WORDS[row.verdict.outcome], "failing": row.failing,
                  "message": row.verdict.message} for row in table.rows],
        "plot": slice_plot(table, key),
    }


def max_distance_of(records: Sequence[QuestionRecord]) -> tuple[float | None, str | None]:
    """The one max_distance the records were answered with, or why there is no line."""
    values = sorted({v for r in records if (v := r.knobs.get("max_distance")) is not None},
                    key=str)
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if not values:
        return None, "no record carries a max_distance knob: no threshold line"
    if len(values) > 1:
        shown = ", ".join(str(v) for v in values)
        return None, f"the records carry several max_distance values ({shown}): no threshold line"
    if not numbers:
        return None, f"max_distance {values[0]!r} is not a number: no threshold line"
    return float(numbers[0]), None


def calibration_plot(run: GoldsetRun, key: str) -> tuple[Plot | None, list[str]]:
    """Nearest retrieved distance of answerable vs unanswerable questions, and the cut: the
    picture that says whether max_distance can separate them at all."""
    rows = [r for r in run.records if r.nearest_distance is not None]
    notes: list[str] = []
    missing = len(run.records) - len(rows)
    if missing:
        notes.append(f"{missing} question{'s' * (missing != 1)} without a nearest distance "
                     "(nothing retrieved, no distances, or not run) are not shown")
    if not rows:
        return None, notes
    cut, why = max_distance_of(run.records)
    if why:
        notes.append(why)
    answerable = [r.nearest_distance for r in rows if not r.must_abstain]
    unanswerable = [r.nearest_distance for r in rows if r.must_abstain]
    values = [v for v in answerable + unanswerable if v is not None]
    low, high = min(values), max(values)
    if cut is not None:
        low, high = min(low, cut), max(high, cut)
    if math.isclose(low, high):
        low, high = low - 0.05, high + 0.05
    edges = [low + (high - low) * i / 24 for i in range(25)]
    fig = _figure(7.6, 2.8, left=0.07, right=0.68, bottom=0.17)
    ax = fig.add_subplot()
    for data, colour, name, hatch in ((answerable, BLUE, "answerable", None),
                                      (unanswerable, ORANGE, "must abstain", "//")):
        wrong = sum(1 for r in rows if r.must_abstain == (name == "must abstain")
                    and not r.abstention_correct)
        if data:  # translucent fill plus a solid outline: both shapes stay readable
            ax.hist(data, bins=edges, histtype="stepfilled", color=colour, alpha=0.4,
                    hatch=hatch, label=f"{name} (n={len(data)}, {wrong} "
                    f"{'abstained' if name == 'answerable' else 'answered'})")
            ax.hist(data, bins=edges, histtype="step", color=colour, linewidth=1.4)
    if cut is not None:
        ax.axvline(cut, color=BLACK, linestyle="--", linewidth=1.2,
                   label=f"max_distance {cut:g}")
    ax.set_xlabel("nearest retrieved distance (lower is closer)")
    ax.set_ylabel("questions")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(frameon=False, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("calibration: nearest distance by answerability", loc="left")
    if not unanswerable:
        notes.append("no unanswerable question has a distance: the cut is unconstrained from "
                     "above")
    return Plot(key, "calibration", _svg(fig, key, "nearest distance histogram")), notes


def _same_run(line: HistoryLine, current: HistoryLine) -> bool:
    """Whether `line` is this run's own line (the session appends before writing HTML)."""
    skip = {"time", "git_sha", "format"}
    return (line.model_dump(mode="json", exclude=skip)
            == current.model_dump(mode="json", exclude=skip))


def trend(run: GoldsetRun, history: Sequence[HistoryLine], key: str,
          current: HistoryLine | None = None) -> Trend:
    """This goldset's runs at this eval_version, with this run last, and a plot per metric.
    `current` is this run's own line, when the caller has built it already."""
    result = Trend()
    if not history:
        return result
    current = current or build_line(run, git=None, time=_EPOCH)
    same = [line for line in history
            if line.goldset == run.name and line.eval_version == run.eval_version
            and (not run.route or line.route is None or line.route == run.route)]
    other = [line for line in history
             if line.goldset == run.name and line.eval_version != run.eval_version]
    labelled: list[tuple[HistoryLine, bool]] = [(line, True) for line in same]
    if same and _same_run(same[-1], current):
        mine, before = same[-1], same[:-1]
    else:
        labelled.append((current, False))
        mine, before = current, same
        result.notes.append("this run is not in the history (not recorded): shown last")
    result.deltas = delta_lines(mine, before[-1] if before else None, other)
    metrics = [m for m in current.metrics if any(
        (f := line.metrics.get(m)) is not None and f.value is not None for line, _ in labelled)]
    for i, (line, recorded) in enumerate(labelled, start=1):
        result.points.append({
            "index": i,
            "time": fmt_time(line.time) if recorded else "this run (not recorded)",
            "sha": fmt_sha(line.git_sha) if recorded else "—",
            "questions": line.questions,
            "values": [fmt_num(f.value if (f := line.metrics.get(m)) else None) for m in metrics],
        })
    result.plots = [_trend_plot(run, metric, labelled, f"{key}-{metric}") for metric in metrics]
    return result


def _trend_plot(run: GoldsetRun, metric: str, lines: list[tuple[HistoryLine, bool]],
                key: str) -> Plot:
    xs = list(range(1, len(lines) + 1))
    ys = [f.value if (f := line.metrics.get(metric)) and f.value is not None else math.nan
          for line, _ in lines]
    fig = _figure(4.0, 2.3, bottom=0.2)
    ax = fig.add_subplot()
    ax.plot(xs, ys, color=BLUE, marker="o", markersize=3.5, linewidth=1.3)
    if not math.isnan(ys[-1]):
        ax.plot([xs[-1]], [ys[-1]], marker="o", markersize=7, color=BLUE, fillstyle="none")
    for v in run.verdicts:
        if (v.floor.metric == metric and v.floor.kind is None and not v.floor.anchors
                and v.floor.slice is None):
            ax.axhline(v.floor.min, color=VERMILION, linestyle="--", linewidth=1.1)
    ax.set_xlim(0.5, len(xs) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(len(xs), 10)))
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("run")
    ax.set_title(metric, loc="left")
    ax.grid(axis="y", linewidth=0.4, alpha=0.5)
    return Plot(key, metric, _svg(fig, key, f"{metric} over the runs"))


# --- tables ------------------------------------------------------------------------------------


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def floor_row(run: GoldsetRun, v: Verdict) -> dict[str, Any]:
    return {
        "metric": v.floor.label,
        "floor": floor_figure(v.floor),
        "value": shown(v),
        "interval": fmt_interval(v.interval, figure_digits(v.floor.metric)),
        "n": fmt_n(v.tally),
        "passes_at": "—" if v.passes_at is None else str(v.passes_at),
        "by_kind": fmt_counts(kind_counts(v.floor.metric, run.records))
        if v.floor.kind is None and not v.floor.anchors and v.floor.slice is None else "",
        "computed_by": v.computed_by,
        "outcome": v.outcome,
        "word": OUTCOME_WORDS[v.outcome],
        "message": v.message,
    }


def question_row(run: GoldsetRun, r: QuestionRecord, metrics: Sequence[str],
                 billed: tuple[bool, bool] = (False, False)) -> dict[str, Any]:
    """Everything a reader needs to judge one answer, in display form (`metrics`: the run's,
    read once by the caller: `run.metrics` walks every row; `billed`: whether the table has
    a latency and a cost column)."""
    ranks = ", ".join("—" if rank is None else str(rank) for rank in r.evidence_ranks)
    return {
        "id": run.named(r),
        "question": r.question,
        "kind": r.kind,
        "tags": tags_text(r.tags),
        "status": r.status,
        "error": r.error,
        "wrong": r.wrong,
        "answer_check": r.answer_check.line if r.answer_check is not None else "",
        "abstained": None if r.abstained is None else r.abstained,
        "must_abstain": r.must_abstain,
        "abstention_correct": r.abstention_correct,
        "answer": r.answer_text,
        "cited": r.cited,
        "uncited": r.uncited,
        "citations": f"{r.citations_correct}/{r.citations}",
        "expected": r.expected,
        "moved": list(r.evidence_moved or ()),  # scored where its pinned text is now
        "evidence": f"{r.evidence_spans_found}/{r.evidence_spans}",
        "ranks": ranks,
        "nearest": fmt_num(r.nearest_distance, 3),
        "metrics": [fmt_num(r.metrics.get(m)) for m in metrics],
        "judge_failures": _grouped(r.judge_failures),
        "judge_cached": r.judge_cached,
        "judge_vacuous": r.judge_vacuous,
        "bill": bill_cells(r, *billed),
        "bill_line": question_bill(r) if r.latency_s is not None or r.judge_requests else "",
    }


def conversation_view(turns: Sequence[QuestionRecord]) -> dict[str, Any]:
    """A conversation as the report shows it: its heading and its turns in order."""
    return {"heading": heading(turns), "wrong": first_wrong(turns) is not None,
            "turns": [turn_of(r) for r in turns]}


def _grouped(failures: dict[str, str]) -> list[tuple[str, str]]:
    """`faithfulness, context_precision → timeout`: one line per distinct reason."""
    by_why: dict[str, list[str]] = {}
    for metric, why in failures.items():
        by_why.setdefault(why, []).append(metric)
    return [(", ".join(metrics), why) for why, metrics in by_why.items()]


def regression_row(g: Regression) -> dict[str, Any]:
    return {"metric": g.metric, "test": g.test, "pairs": g.pairs, "baseline": fmt_num(g.baseline),
            "current": fmt_num(g.current), "delta": "—" if g.delta is None else f"{g.delta:+.2f}",
            "p": _p(g.p_value), "detects": "—" if g.detects is None else f"{g.detects:.2f}",
            "outcome": g.outcome, "word": OUTCOME_WORDS[g.outcome],
            "message": g.message}


def _anchor(index: int, name: str) -> str:
    return f"gs{index}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def run_view(index: int, run: GoldsetRun, history: Sequence[HistoryLine],
             flips: Sequence[str] = ()) -> dict[str, Any]:
    key = _anchor(index, run.name)
    metrics = run.metrics
    counts = {s: sum(r.status == s for r in run.records) for s in ("scored", "error", "skipped")}
    outcomes = {word: sum(OUTCOME_WORDS[v.outcome] == word for v in run.verdicts)
                for word in OUTCOME_WORDS.values()}
    calibration, calibration_notes = calibration_plot(run, f"{key}-calibration")
    uncited = [run.named(r) for r in run.records if r.uncited]
    line = build_line(run, git=None, time=_EPOCH)  # this run as history sees it
    billed = billed_columns(run)
    said = lines_of(run)
    return {
        "knobs": [(name, fmt_knob(value)) for name, value in line.knobs.items()],
        "anchor": key,
        "name": run.label,
        "eval_version": run.eval_version,
        "questions": run.population if run.population is not None else len(run.records),
        "counts": counts,
        "coverage": said.coverage,
        "parts": [*said.parts, said.pool],
        "status_reason": said.status_reason,
        "outcomes": {w: n for w, n in outcomes.items() if n},
        "status": run.status,
        "status_why": badge_of(run) if status_why(run) else "",
        "regressions_failed": sum(g.outcome == "failed" for g in run.regressions),
        "floors": [floor_row(run, v) for v in run.verdicts],
        "worst": worst_lines(run),
        "slices": [slice_view(table, f"{key}-slices-{i}-{table.key}-{table.metric}")
                   for i, table in enumerate(slice_tables(run), start=1)],
        "regressions": [regression_row(g) for g in run.regressions],
        "judge_lines": said.judge,
        "bill_line": run_bill_line(run),
        "bill_headers": [*(["latency (s)"] * billed[0]), *(["cost"] * billed[1])],
        "flaky_lines": [*said.flaky, *said.answers, *said.moved],
        "by_kind": [(m, metric_source(run, m), fmt_counts(kind_counts(m, run.records)))
                    for m in metrics],
        "uncited": uncited,
        "by_tag": tag_rows(run.records, metrics),
        "tag_headers": TAG_HEADERS,
        "kind_plots": [kind_plot(run, m, f"{key}-kinds-{m}") for m in metrics]
        if run.records else [],
        "calibration": calibration,
        "calibration_notes": calibration_notes,
        "trend": trend(run, history, f"{key}-trend", line),
        "flips": list(flips),  # the history's flip lines: the span counted, then each member
        "metrics": [(m, metric_source(run, m)) for m in metrics],
        "conversations": [conversation_view(turns) for turns in conversations(run.records)],
        "rows": [question_row(run, r, metrics, billed) for r in run.records],
        "anchors": anchor_rows(run),
        "anchor_headers": ANCHOR_HEADERS,
    }


# --- the page ----------------------------------------------------------------------------------


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_ragate", "templates"),
        autoescape=True,  # answers are arbitrary text: every value is escaped unless Markup
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(runs: Sequence[GoldsetRun], *, history: Sequence[HistoryLine] = (),
                ci: str = "point", run_failed: bool = False,
                flips: Mapping[str, Sequence[str]] | None = None,
                incomplete: str | None = None) -> str:
    """The whole page as a string: pure, so tests can render without touching a file.
    `flips` are the history's flip lines by route (or goldset name); `incomplete`, why the
    run stopped early."""
    flips = flips or {}
    with matplotlib.rc_context(RC):
        views = [run_view(i, run, history, flips.get(run.route or run.name)
                          or flips.get(run.name) or ())
                 for i, run in enumerate(runs, start=1)]
    overall = run_status(runs, failed=run_failed or incomplete is not None)
    why = run_why(runs, overall)
    return _environment().get_template(TEMPLATE).render(
        runs=views, ci=ci, ci_words=_CI_WORDS.get(ci, ci), has_history=bool(history),
        overall=overall, status_words=STATUS_WORDS, failed_note=FAILED_NOTE,
        overall_why=status_badge(overall, why) if why else "",
        incomplete=None if incomplete is None else incomplete_notice(incomplete),
        plots=sum(len(v["kind_plots"]) + (v["calibration"] is not None)
                  + len(v["trend"].plots) + len(v["slices"]) for v in views))


def write_html(path: Path, runs: Sequence[GoldsetRun], *, history: Sequence[HistoryLine],
               ci: str, run_failed: bool = False,
               flips: Mapping[str, Sequence[str]] | None = None,
               incomplete: str | None = None) -> None:
    write_atomic(path, render_html(runs, history=history, ci=ci, run_failed=run_failed,
                                   flips=flips, incomplete=incomplete))
