"""The files a decided run leaves: the results JSONL, the history line, the Markdown report and
the HTML report, written on the controller in that order (the history's deltas go into the
reports, and its lines, ours included, into the HTML trends).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragate.outputs.reports import write_markdown, write_results
from pytest_ragate.scoring.run import GoldsetRun
from pytest_ragate.settings import RunSettings

if TYPE_CHECKING:
    from pytest_ragate.outputs.history import HistoryLine


@dataclass
class Written:
    """What the history said: each goldset's change since its last run (for the reports),
    notes for the terminal, and, when this run's lines were appended, the history's lines
    with them (None when nothing was appended)."""

    deltas: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    history: list[HistoryLine] | None = None


def write_outputs(run: RunSettings, runs: Sequence[GoldsetRun], *, rootdir: Path,
                  cut_short: bool, failed: bool, ci: str) -> Written:
    """Every output asked for; `cut_short` (-x, --maxfail) keeps the run out of the
    history, `failed` (the run exits non-zero) keeps the reports from saying PASS."""
    if run.results:
        write_results(Path(run.results), runs)
    written = record_history(run.history, runs, rootdir, cut_short)
    if run.report:
        write_markdown(Path(run.report), runs, written.deltas, failed)
    if run.html:
        from pytest_ragate.outputs import history
        from pytest_ragate.outputs import html as html_report  # matplotlib: only when asked

        lines = written.history
        if lines is None:  # nothing appended: the history as it stands
            past = Path(run.history) if run.history else None
            lines = history.read_history(past) if past and past.is_file() else []
        html_report.write_html(Path(run.html), runs, history=lines, ci=ci, run_failed=failed)
    return written


def record_history(path: str | None, runs: Sequence[GoldsetRun], rootdir: Path,
                   cut_short: bool) -> Written:
    """One appended line per goldset run with records; a run cut short stays out."""
    scored = [run for run in runs if run.records]
    if not path or not scored:
        return Written()
    if cut_short:
        return Written(notes=["history not written: the run was cut short"])
    from pytest_ragate.outputs import history

    try:
        done = history.record(Path(path), scored, rootdir)
    except history.HistoryError as error:
        return Written(notes=[str(error)])
    return Written(done.deltas, list(done.problems), done.history)
