"""Reading `--ragate-baseline`: a results file, a history file, or one line of one, as the
per-question scores `regression.check_run` compares this run with. Every way it can be
unreadable or partial is a `BaselineError`, a usage error raised before any question runs.

A regression check pairs every question, so a baseline must have asked every question of its
goldset: a results file is read through `saved_runs.read_saved` (its trailer, its signature
when RAGATE_RESULTS_KEY is set) and refused unless whole (`saved_runs.require_whole`: not a
shard, nothing deselected, no sequential stop, not interrupted); from a history file each
goldset's candidates are the lines that asked every question (and, with the key, are
signed), and `PATH:LINE` naming another line is refused.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pydantic import ConfigDict

from pytest_ragate.outputs import signing
from pytest_ragate.outputs.history import fmt_sha, fmt_time
from pytest_ragate.outputs.results import HEADER_KEY
from pytest_ragate.outputs.saved_runs import (
    HistoryRead,
    SavedLine,
    SavedRunError,
    history_lines,
    numbered_lines,
    read_saved,
    require_whole,
)
from pytest_ragate.scoring.pairing import BaselineRun
from pytest_ragate.scoring.records import QuestionRecord

# a partial run scored only some questions: paired with it, a run's drop on every other
# question would go unseen
WHOLE = ("a regression check pairs every question, and a partial run is no baseline: give "
         "a run that asked every question")


class BaselineError(Exception):
    """The baseline cannot be read: a usage error, raised before any question runs."""


class _ResultsRow(QuestionRecord):
    """A results row of this or a later ragate (unknown fields are ignored)."""

    model_config = ConfigDict(extra="ignore")


def load_baseline(spec: str, root: Path | None = None) -> list[BaselineRun]:
    """`PATH` (a results file or a history file) or `PATH:LINE` (one line of a history file);
    a relative PATH not found from here is looked for under `root` (pytest's rootdir, where
    an ini value is written from).

    From a history file, each goldset's candidates are its lines in file order; `check` takes
    the last one of the current eval_version."""
    path, line_no = baseline_location(spec, root)
    if not path.is_file():
        raise BaselineError(f"--ragate-baseline {spec}: no such file")
    try:
        numbered = numbered_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"--ragate-baseline {spec}: cannot read it ({error})") from None
    if line_no is not None:
        numbered = [(i, text) for i, text in numbered if i == line_no]
        if not numbered:
            raise BaselineError(f"--ragate-baseline {spec}: {path} has no line {line_no}")
    if not numbered:
        raise BaselineError(f"--ragate-baseline {spec}: the file is empty")
    first = _json(path, *numbered[0])
    if "question_id" in first or HEADER_KEY in first:
        if line_no is not None:
            raise BaselineError(f"--ragate-baseline {spec}: :LINE picks a history line; "
                                f"{path} is a results file (pass it whole)")
        return _from_results(path)
    return _from_history(path, numbered, named=line_no is not None)


def baseline_location(spec: str, root: Path | None = None) -> tuple[Path, int | None]:
    """The file a baseline spec names, and its `:LINE` when it has one."""
    path = _locate(spec, root)
    if not path.is_file() and ":" in spec:
        head, _, tail = spec.rpartition(":")
        if tail.isdigit() and _locate(head, root).is_file():
            return _locate(head, root), int(tail)
    return path, None


def _locate(spec: str, root: Path | None) -> Path:
    path = Path(spec)
    if root is not None and not path.is_absolute() and not path.exists():
        return root / path
    return path


def _json(path: Path, line: int, text: str) -> dict[str, object]:
    try:
        row = json.loads(text)
    except json.JSONDecodeError as error:
        raise BaselineError(f"--ragate-baseline: {path}:{line}: not JSON ({error.msg})") from None
    if not isinstance(row, dict):
        raise BaselineError(f"--ragate-baseline: {path}:{line}: not a JSON object")
    return row


def _from_results(path: Path) -> list[BaselineRun]:
    try:
        saved = read_saved(path, _ResultsRow)
        require_whole(saved, WHOLE)
    except SavedRunError as error:
        raise BaselineError(f"--ragate-baseline: {error}") from None
    if not saved.rows:
        raise BaselineError(f"--ragate-baseline: {path}: its run asked no question (nothing "
                            f"ran): {WHOLE}")
    runs: dict[str, BaselineRun] = {}
    judges: dict[str, set[str]] = {}  # by goldset: who graded its rows
    corpora = {stamp.goldset: stamp.corpus for stamp in saved.header.goldsets}
    for line, row in saved.rows:
        run = runs.setdefault(row.goldset, BaselineRun(goldset=row.goldset,
                                                       eval_version=row.eval_version,
                                                       scores={}, results=str(path),
                                                       source=f"results file {path}",
                                                       corpus=corpora.get(row.goldset)))
        if row.judge:
            judges.setdefault(row.goldset, set()).add(row.judge)
        if row.eval_version != run.eval_version:
            raise BaselineError(f"--ragate-baseline: {path}:{line}: goldset {row.goldset} "
                                f"mixes eval_version {run.eval_version} and {row.eval_version}")
        if row.repeat == 1:  # with repeats, each question's first one: one pair a question
            run.scores[row.question_id] = row.scores()
    return [replace(run, judges=tuple(sorted(judges.get(name, ())))) for name, run in runs.items()]


def _from_history(path: Path, numbered: list[tuple[int, str]], named: bool
                  ) -> list[BaselineRun]:
    """Each readable line that asked every question of its goldset, in file order (`named`:
    the one line `PATH:LINE` picked, refused unless it did)."""
    read = history_lines(path, numbered)
    if read.forged:
        raise BaselineError(f"--ragate-baseline: {path}:{read.forged[0]}: "
                            + signing.wrongly_signed("the history line"))
    if named and read.torn:
        raise BaselineError(f"--ragate-baseline: {path}:{read.torn[0]}: neither a results "
                            "row nor a history line")
    whole = [line for line in read.lines if not line.extent.parts]
    passed_over = [line for line in read.lines if line.extent.parts]
    if named and passed_over:
        [line] = passed_over
        raise BaselineError(f"--ragate-baseline: history line {line.where}: "
                            f"{'; '.join(line.extent.why())}: {WHOLE}")
    if not whole:
        raise BaselineError(f"--ragate-baseline: {path}: {_none_whole(read, passed_over)}")
    return [_baseline_run(line) for line in whole]


def _none_whole(read: HistoryRead, passed_over: list[SavedLine]) -> str:
    """Why no line of the history can be a baseline."""
    if len(read.torn) == 1 and not read.lines and not read.unsigned:
        return f"line {read.torn[0]}: neither a results row nor a history line"
    said = [f"history line {line.where}: {'; '.join(line.extent.why())}"
            for line in passed_over[-3:]]
    if read.unsigned:
        said.append(signing.unsigned(f"history line {read.unsigned[-1]}") + (
            f" (and {len(read.unsigned) - 1} more)" if len(read.unsigned) > 1 else ""))
    if not said:
        return "no readable history line"
    return f"no line asked every question of its goldset: {'; '.join(said)}; {WHOLE}"


def _baseline_run(line: SavedLine) -> BaselineRun:
    entry = line.entry
    when = f"{fmt_time(entry.time)}, git {fmt_sha(entry.git_sha)}"
    return BaselineRun(goldset=entry.goldset, eval_version=entry.eval_version,
                       scores=dict(entry.scores), judges=tuple(entry.judges or ()),
                       source=f"history line {line.where} ({when})", corpus=entry.corpus)
