"""`ragate decide`'s results files, read and held to each other.

Which files the arguments name (files, folders, globs), and why they cannot be decided
together: a file its trailer does not vouch for, shards missing, doubled or of different
splits, and anything that makes their rows not comparable (ragate versions, row settings,
goldset contents, judges, systems, retrievers, `Answer.knobs`). Decide-only: a gate or a
shard never imports it (tests/test_modes.py).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.outputs.results import (
    GoldsetStamp,
    NoResultsFile,
    ResultsFile,
    results_paths,
)
from pytest_ragate.outputs.saved_runs import read_saved_files, shard_problems, where
from pytest_ragate.scoring.records import QuestionRecord

NAMED = 5  # members named in one refusal line before "and N more"


def expand(specs: Sequence[str], root: Path) -> list[Path]:
    """The results files the specs name (`outputs.results.results_paths`); one that names
    nothing is a usage error."""
    try:
        return results_paths(specs, root)
    except NoResultsFile as error:
        raise pytest.UsageError(f"--ragate-decide {error}") from None


def read_files(specs: Sequence[str], root: Path) -> tuple[list[ResultsFile], list[str]]:
    """Every results file named, and why they cannot be decided: each file's own problems
    (`saved_runs.read_saved_files`: bad lines, no header, what its trailer or signature does
    not vouch for, a run that stopped early), then what makes them not one run's results."""
    files, problems = read_saved_files(expand(specs, root))
    return files, problems + check_files(files)


def check_files(files: Sequence[ResultsFile]) -> list[str]:
    """What makes these files not one run's results: shards missing, doubled or mixed, and
    anything that differs between them that would make their rows not comparable."""
    read = [f for f in files if f.header is not None]
    if not read:
        return []  # each file's own problem says why (`read_files`)
    problems = shard_problems(read)
    problems += _differ(read, "ragate version", lambda h: h.ragate_version)
    knobs = sorted({k for f in read for k in f.header.settings})  # type: ignore[union-attr]
    for knob in knobs:
        problems += _differ(read, f"ragate_{knob}", lambda h, k=knob: h.settings.get(k))
    stamps: dict[str, list[tuple[ResultsFile, GoldsetStamp]]] = defaultdict(list)
    for f in read:
        for stamp in f.header.goldsets:  # type: ignore[union-attr]
            stamps[stamp.route].append((f, stamp))
    for route, found in stamps.items():
        name = found[0][1].goldset
        for what, value in (("eval_version", lambda s: s.eval_version),
                            ("goldset content (questions, expected answers, corpus, anchors, "
                             "labels)", lambda s: (s.sha256 or "")[:12])):
            seen = {value(s) for _, s in found}
            if len(seen) > 1:
                problems.append(f"goldset {name} ({route}): {what} differs between shards: "
                                + ", ".join(f"{value(s)} in {where(f)}" for f, s in found))
    for what, part in (("judges", lambda r: _join(r.judge, r.judge_model)),
                       ("systems", lambda r: r.system), ("retrievers", lambda r: r.retriever)):
        problems += _differ_rows(read, what, part)
    for knob in sorted({k for f in read for _, r in f.rows for k in r.knobs}):
        problems += _differ_rows(read, f"values of the knob {knob} (Answer.knobs)",
                                 lambda r, k=knob: _knob(r, k))
    return problems


def _knob(row: QuestionRecord, name: str) -> str | None:
    """A scored row's `Answer.knobs[name]` as its system reported it (`-` when it reported
    none); None for a row with no answer."""
    if row.status != "scored":
        return None
    return json.dumps(row.knobs[name]) if name in row.knobs else "-"


def _join(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return " ".join(kept) or None


def _differ(files: Sequence[ResultsFile], what: str, value: Any) -> list[str]:
    seen = {repr(value(f.header)) for f in files}
    if len(seen) < 2:
        return []
    return [f"the shards ran with different {what}: "
            + ", ".join(f"{value(f.header)!r} in {where(f)}" for f in files)]


def _differ_rows(files: Sequence[ResultsFile], what: str, part: Any) -> list[str]:
    """A judge, system, retriever or knob value that answered one goldset route's rows in
    one shard and not in another (a shard with no row of that route has nothing to
    compare)."""
    seen: dict[str, dict[Path, list[str]]] = defaultdict(dict)
    for f in files:
        by_route: dict[str, set[str]] = defaultdict(set)
        for _, row in f.rows:
            value = part(row)
            if value:
                by_route[row.route].add(value)
        for route, values in by_route.items():
            seen[route][f.path] = sorted(values)
    problems = []
    for route, by_file in seen.items():
        if len({tuple(v) for v in by_file.values()}) > 1:
            problems.append(f"the shards' rows of {route} name different {what}: "
                            + "; ".join(f"{' | '.join(by_file[f.path])} in {where(f)}"
                                        for f in files if f.path in by_file))
    return problems


def named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
