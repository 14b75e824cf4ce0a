"""Reading `--ragate-baseline`: a results file, a history file, or one line of one, as the
per-question scores `regression.check_run` compares this run with. Every way it can be
unreadable is a `BaselineError`, a usage error raised before any question runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import ConfigDict, ValidationError

from pytest_ragate.outputs.history import HistoryLine, fmt_sha, fmt_time
from pytest_ragate.outputs.results import HEADER_KEY, read_results
from pytest_ragate.scoring.pairing import BaselineRun
from pytest_ragate.scoring.records import QuestionRecord

# a sequential run that stopped early scored only the questions it asked: paired with it, a
# run's drop on every other question would go unseen
STOPPED = ("a sequential run that stopped before its last question (--ragate-sequential) is "
           "no baseline: a regression check pairs every question, and it asked only some; "
           "give a run that asked every question")


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
        raw = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"--ragate-baseline {spec}: cannot read it ({error})") from None
    numbered = [(i, text) for i, text in enumerate(raw, 1) if text.strip()]
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
    return _from_history(path, numbered)


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
    found = read_results(path, _ResultsRow)
    refused = found.problems or found.unvouched  # a file cut short is refused like a shard
    if refused:
        first = refused[0]
        raise BaselineError(f"--ragate-baseline: {first} (expected a --ragate-results file or "
                            "a --ragate-history file)")
    runs: dict[str, BaselineRun] = {}
    judges: dict[str, set[str]] = {}  # by goldset: who graded its rows
    for line, row in found.rows:
        run = runs.setdefault(row.goldset, BaselineRun(goldset=row.goldset,
                                                       eval_version=row.eval_version,
                                                       scores={}, results=str(path),
                                                       source=f"results file {path}"))
        if row.judge:
            judges.setdefault(row.goldset, set()).add(row.judge)
        if row.eval_version != run.eval_version:
            raise BaselineError(f"--ragate-baseline: {path}:{line}: goldset {row.goldset} "
                                f"mixes eval_version {run.eval_version} and {row.eval_version}")
        if row.not_needed:
            raise BaselineError(f"--ragate-baseline: {path}:{line}: {STOPPED} (question "
                                f"{row.question_id} was not asked)")
        if row.repeat == 1:  # with repeats, each question's first one: one pair a question
            run.scores[row.question_id] = row.scores()
    return [replace(run, judges=tuple(sorted(judges.get(name, ())))) for name, run in runs.items()]


def _from_history(path: Path, numbered: Sequence[tuple[int, str]]) -> list[BaselineRun]:
    """Each readable line that asked every question of its goldset, in file order."""
    runs = []
    stopped: list[str] = []
    for line, text in numbered:
        try:
            entry = HistoryLine.model_validate_json(text)
        except ValidationError:
            if len(numbered) == 1:
                raise BaselineError(f"--ragate-baseline: {path}:{line}: neither a results row "
                                    "nor a history line") from None
            continue  # a torn history line: the history reader skips it too
        if entry.sequential is not None and entry.sequential.get("stopped"):
            stopped.append(f"{path}:{line}")
            continue  # a candidate only if it asked every question
        when = f"{fmt_time(entry.time)}, git {fmt_sha(entry.git_sha)}"
        runs.append(BaselineRun(goldset=entry.goldset, eval_version=entry.eval_version,
                                scores=dict(entry.scores), judges=tuple(entry.judges or ()),
                                source=f"history line {path}:{line} ({when})"))
    if not runs and stopped:
        raise BaselineError(f"--ragate-baseline: history line {', '.join(stopped)}: {STOPPED}")
    if not runs:
        raise BaselineError(f"--ragate-baseline: {path}: no readable history line")
    return runs
