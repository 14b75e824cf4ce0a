"""The files a decided run leaves: the results JSONL, the history line, the Markdown report and
the HTML report, written on the controller in that order (the history's deltas go into the
reports, and its lines, ours included, into the HTML trends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs.reports import write_markdown
from pytest_ragate.outputs.results import Header, SavedAnchor, SavedItem, SavedTest, write_results
from pytest_ragate.settings import RunSettings

if TYPE_CHECKING:
    from pytest_ragate.outputs.history import FlipReport, HistoryLine


@dataclass
class Written:
    """What the history said: each goldset's change since its last run and its flips across
    runs (for the reports and promotion; `flips` is None when they could not be checked),
    notes for the terminal, and, when this run's lines were appended, the history's lines
    with them (None when nothing was appended)."""

    deltas: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    history: list[HistoryLine] | None = None
    flips: dict[str, FlipReport] | None = None


@dataclass(frozen=True)
class Saved:
    """What the results file keeps beside the rows, so the run can be decided again."""

    header: Header
    anchors: Sequence[SavedAnchor] = ()
    items: Sequence[SavedItem | SavedTest] = ()  # goldset items, then other failed tests


def write_outputs(run: RunSettings, runs: Sequence[GoldsetRun], *, rootdir: Path,
                  cut_short: bool, failed: bool, ci: str, flip_window: int,
                  saved: Saved | None = None, incomplete: str | None = None) -> Written:
    """Every output asked for; `cut_short` (-x, --maxfail) keeps the run out of the
    history, `failed` (the run exits non-zero) keeps the reports from saying PASS, and
    `incomplete` (why the run stopped early) marks every file written INCOMPLETE."""
    if run.results:
        if saved is None:
            write_results(Path(run.results), runs, incomplete=incomplete)
        else:
            write_results(Path(run.results), runs, saved.header, saved.anchors, saved.items,
                          incomplete=incomplete)
    written = record_history(run.history, runs, rootdir, cut_short, flip_window,
                             incomplete=incomplete)
    flip_lines = {key: report.lines() for key, report in (written.flips or {}).items()}
    if run.report:
        write_markdown(Path(run.report), runs, written.deltas, failed, flip_lines,
                       incomplete=incomplete)
    if run.html:
        from pytest_ragate.outputs import history
        from pytest_ragate.outputs import html as html_report  # matplotlib: only when asked

        lines = written.history
        if lines is None:  # nothing appended: the history as it stands
            past = Path(run.history) if run.history else None
            lines = history.read_history(past) if past and past.is_file() else []
        html_report.write_html(Path(run.html), runs, history=lines, ci=ci, run_failed=failed,
                               flips=flip_lines, incomplete=incomplete)
    return written


def record_history(path: str | None, runs: Sequence[GoldsetRun], rootdir: Path,
                   cut_short: bool, flip_window: int, *,
                   incomplete: str | None = None) -> Written:
    """One appended line per goldset run with records; a run cut short stays out. Every run
    with records or anchors has its flips counted, against the history as it stands when
    nothing was appended (promotion reads them). When the history can be neither appended
    to nor read, `flips` stays None: not checked."""
    scored = [run for run in runs if run.records]
    checked = [run for run in runs if run.records or run.anchors]
    if not path or not checked:
        return Written()
    from pytest_ragate.outputs import history

    written = Written(flips={})
    if cut_short and scored:
        written.notes.append("history not written: the run was cut short"
                             + (f" ({incomplete})" if incomplete else ""))
    elif scored:
        try:
            done = history.record(Path(path), scored, rootdir, window=flip_window)
        except history.HistoryError as error:
            written.notes.append(str(error))
        else:
            written = Written(done.deltas, list(done.problems), done.history, done.flips)
            checked = [run for run in checked if not run.records]
    if checked:
        try:
            more = history.assess(Path(path), checked, flip_window)
        except OSError as error:
            written.notes.append(f"{path}: could not be read to count flips ({error})")
            written.flips = None
        else:
            written.flips = {**(written.flips or {}), **more}
    return written
