"""Saved runs as the commands read them: through the one reader (`outputs/saved_runs.py`),
held to the project's `ragate_results_signed`, and refused in one line naming the file when
they hold part of a run where a command sums a goldset up."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytest_ragate.commands.project import read_project

if TYPE_CHECKING:
    from pytest_ragate.outputs.saved_runs import Part, SavedFile
    from pytest_ragate.scoring.records import QuestionRecord

# why a command that sums a goldset up (a threshold, a floor's n, a suggested floor) reads
# only a run that asked every question: over part of it, the figure is a subset's
WHOLE_RUN = ("its figures would be those of part of the goldset: give the results of a run "
             "that asked every question (for a sharded run, `ragate decide`'s "
             "--ragate-results)")


def signed_reads(what: str) -> None:
    """A project whose saved runs are signed (`ragate_results_signed = true` in the
    configuration pytest reads from here) reads one only with RAGATE_RESULTS_KEY set, as the
    gate and `ragate decide` do: without the key nothing would be checked."""
    import os

    from pytest_ragate.settings import RESULTS_KEY_ENV
    from pytest_ragate.wording.settings import results_unsigned_reads

    if read_project().results_signed and not os.environ.get(RESULTS_KEY_ENV):
        raise click.UsageError(results_unsigned_reads(what))


def saved_file(results: Path, whole: bool = True) -> SavedFile:
    """A results file through the one reader of saved runs (`outputs/saved_runs.py`): its
    trailer, its signature with RAGATE_RESULTS_KEY set, and (`whole`) the whole run; one
    line naming the file and what is wrong otherwise."""
    from pytest_ragate.outputs.saved_runs import SavedRunError, read_saved

    signed_reads(f"ragate {click.get_current_context().info_name} {results}")
    try:
        saved = read_saved(results)
    except SavedRunError as error:
        raise click.ClickException(str(error)) from None
    if whole:
        hold_whole(saved)
    return saved


def hold_whole(saved: SavedFile, allow: frozenset[Part] = frozenset()) -> None:
    """Refused, in one line, unless it holds its whole run (but for the parts `allow`ed)."""
    from pytest_ragate.outputs.saved_runs import SavedRunError, require_whole

    try:
        require_whole(saved, WHOLE_RUN, allow=allow)
    except SavedRunError as error:
        raise click.ClickException(str(error)) from None


def scored_rows(results: Path) -> dict[str, list[QuestionRecord]]:
    """The scored rows of a whole run's results file by goldset, or an error saying why
    there are none."""
    by_goldset: dict[str, list[QuestionRecord]] = {}
    for _, row in saved_file(results).rows:
        if row.status == "scored":
            by_goldset.setdefault(row.goldset, []).append(row)
    if not by_goldset:
        raise click.ClickException(f"no scored rows in {results}")
    return by_goldset


def whole_run_rows(paths: tuple[Path, ...]) -> list[QuestionRecord]:
    """The question rows of one whole run: its results file, or each of its shard files
    once; a file that cannot be read, that its trailer (or signature) does not vouch for, or
    that holds part of its run (shards missing, questions deselected, a sequential stop, a
    run interrupted) is refused by name, as is a question twice."""
    from pytest_ragate.outputs.saved_runs import Part, shard_problems

    files = [saved_file(path, whole=False) for path in paths]
    shards = shard_problems([f.found for f in files])
    if shards:
        raise click.ClickException(f"{shards[0]}: {WHOLE_RUN}")
    for saved in files:
        hold_whole(saved, allow=frozenset({Part.SHARD}))
    rows: list[QuestionRecord] = []
    seen: dict[tuple[str, str, int], str] = {}
    for saved in files:
        path = saved.path
        for line, record in saved.rows:
            key = (record.goldset, record.question_id, record.repeat)
            where = f"{path}:{line}"
            if key in seen:
                raise click.ClickException(
                    f"{where}: [{record.question_id}] question_id: goldset {record.goldset} "
                    f"has this question already at {seen[key]}: give each run's results once")
            seen[key] = where
            rows.append(record)
    if not rows:
        raise click.ClickException(f"no question rows in {', '.join(map(str, paths))}")
    return rows
