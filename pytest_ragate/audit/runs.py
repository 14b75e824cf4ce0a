"""Saved runs as the audit reads them: each question's outcome in every results file and
history line of its goldset, read through the one reader of saved runs
(`outputs/saved_runs.py`), and the rule over them: a question every run got right, or every
run got wrong, separates nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.outputs.saved_runs import (
    SavedRunError,
    history_lines,
    numbered_lines,
    read_saved,
)
from pytest_ragate.scoring.flips import RIGHT, WRONG, question_outcome
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording import audit as wording

MIN_RUNS = 2  # one run says nothing of what separates runs


class RunsError(Exception):
    """A saved run no reader may take, in one line naming it and what is wrong."""


@dataclass(kw_only=True)
class Runs:
    """A goldset's saved runs: each question's outcome per run (`right`, `wrong`, `right c
    of N`, `error`, `skipped`), and the rows of the last results file (a slice's value)."""

    outcomes: dict[str, list[str]] = field(default_factory=dict)
    runs: int = 0
    rows: list[QuestionRecord] = field(default_factory=list)


def read_runs(goldset: str, results: Sequence[Path], history: Sequence[Path]) -> Runs:
    """Every results file and history line of `goldset`, held to their trailers and
    signatures; a file no reader may take is a RunsError."""
    found = Runs()
    for path in results:
        try:
            saved = read_saved(path)
        except SavedRunError as error:
            raise RunsError(str(error)) from None
        rows = [row for _, row in saved.rows if row.goldset == goldset]
        if not rows:
            continue
        found.runs += 1
        found.rows = rows
        by_id: dict[str, list[QuestionRecord]] = {}
        for row in rows:
            by_id.setdefault(row.question_id, []).append(row)
        for qid, group in by_id.items():
            found.outcomes.setdefault(qid, []).append(question_outcome(group))
    for path in history:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise RunsError(f"{path}: cannot read: {error}") from None
        read = history_lines(path, numbered_lines(text))
        if read.forged:
            raise RunsError(f"{path}:{read.forged[0]}: a history line whose signature does "
                            "not match RAGATE_RESULTS_KEY")
        for line in read.lines:
            if line.entry.goldset != goldset or not line.entry.outcomes:
                continue
            found.runs += 1
            for qid, seen in line.entry.outcomes.items():
                found.outcomes.setdefault(qid, []).append(seen.outcome)
    return found


def _settled(outcome: str) -> str | None:
    """`right` or `wrong` for an answer all right or all wrong (repeats too); else None."""
    if outcome in (RIGHT, WRONG):
        return outcome
    if outcome.startswith(f"{RIGHT} "):
        right, _, total = outcome.removeprefix(f"{RIGHT} ").partition(" of ")
        if right == "0":
            return WRONG
        if right == total:
            return RIGHT
    return None


def never_separates(runs: Runs, where: dict[str, tuple[Path, int]]) -> list[Finding]:
    """Each question of `where` (id → file and line) that every one of at least MIN_RUNS
    runs got right, or every one got wrong."""
    found = []
    for qid, (path, line) in where.items():
        seen = [_settled(o) for o in runs.outcomes.get(qid, [])]
        if len(seen) >= MIN_RUNS and len(set(seen)) == 1 and seen[0] is not None:
            found.append(finding("never_separates", wording.never_separates(seen[0], len(seen)),
                                 path=path, line=line, question_id=qid, measure=len(seen)))
    return found
