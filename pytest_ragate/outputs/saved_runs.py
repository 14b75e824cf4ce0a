"""The one reader of saved runs: results files (`--ragate-results`) and history lines
(`--ragate-history`), for every command and option that reads one.

`--ragate-baseline`, `ragate decide`, `rejudge`, `compare`, `suggest`, `calibrate`, `power
--results`, `ragate stamp` reads a results file through `read_saved`,
and a history file's lines through `history_lines`. Each checks what the file says of itself:

- a results file must parse (every line by its kind), have its header, and end in a trailer
  that counts and digests every line before it (`results.py`): a file cut short, edited,
  reordered, appended to or without its trailer is refused with one line naming the file and
  what is wrong, whoever reads it;
- with `RAGATE_RESULTS_KEY` set, a results file or history line must carry the key's
  signature (`signing.py`): an unsigned or wrongly signed one is refused, since the digest
  alone is a completeness check that anyone who edits a row can recompute;
- and each says what part of its run it holds, typed (`Extent`, `Part`), never a string to
  parse: whole (every question of every goldset asked), one shard's slice, questions
  deselected (-k, -m, --lf), a sequential goldset that stopped before its last question, or
  a run interrupted before its end.

What a reader does with a partial run is its own rule (docs/ci.md, "Saved runs"): a
baseline, `compare`, `suggest`, `calibrate` and `power` refuse one (`require_whole`);
`decide` and `rejudge` take the shards and deselections a run had and refuse an interrupted
run; the stamps take what was answered.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from pytest_ragate.outputs import signing
from pytest_ragate.outputs.history import HistoryLine
from pytest_ragate.outputs.results import (
    TRAILER_KEY,
    Header,
    ResultsFile,
    Shard,
    read_results,
)
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.records import QuestionRecord


class SavedRunError(Exception):
    """A saved run no reader may take, in one line naming the file and what is wrong."""


class Part(enum.Enum):
    """What makes a saved run less than whole."""

    SHARD = "shard"  # one shard's slice of a sharded run (--ragate-shard)
    DESELECTED = "deselected"  # questions deselected by -k, -m or --lf
    SEQUENTIAL = "sequential"  # a sequential goldset stopped before its last question
    INTERRUPTED = "interrupted"  # the run stopped early (-x, --maxfail, Ctrl-C, ...)
    UNRECORDED = "unrecorded"  # a history line of an older ragate: what it asked is unknown


@dataclass(frozen=True, kw_only=True)
class GoldsetExtent:
    """What one goldset route of a saved run asked: its question items (each repeat one),
    those deselected, and, for a sequential goldset that stopped early, those it left
    unasked (named in a results file; counted in a history line)."""

    route: str
    goldset: str
    population: int | None  # question items collected (None: an older history line)
    deselected: tuple[str, ...] = ()
    not_asked: tuple[str, ...] = ()
    stopped: tuple[int, int] | None = None  # (asked, of) when a sequential run stopped
    recorded: bool = True  # False: an older history line that does not say

    @property
    def parts(self) -> frozenset[Part]:
        found = {Part.DESELECTED: bool(self.deselected), Part.SEQUENTIAL: bool(self.stopped),
                 Part.UNRECORDED: not self.recorded}
        return frozenset(part for part, holds in found.items() if holds)

    @property
    def unasked(self) -> tuple[str, ...]:
        """The question items this run did not ask: deselected, or left by a stop."""
        return (*self.deselected, *self.not_asked)

    def why(self) -> list[str]:
        """`goldset mini: 20 of 40 questions deselected (-k, -m or --lf)`, one per part."""
        said = []
        of = "" if self.population is None else f" of {self.population}"
        if self.deselected:
            said.append(f"goldset {self.goldset}: {len(self.deselected)}{of} questions "
                        "deselected (-k, -m or --lf)")
        if self.stopped:
            asked, total = self.stopped
            said.append(f"goldset {self.goldset}: a sequential run that stopped after "
                        f"asking {asked} of {total} questions (--ragate-sequential)")
        if not self.recorded:
            said.append(f"goldset {self.goldset}: written by an older ragate, which did not "
                        "record whether every question was asked")
        return said


@dataclass(frozen=True, kw_only=True)
class Extent:
    """What part of its run a saved run holds: typed, for each reader's own rule."""

    goldsets: tuple[GoldsetExtent, ...] = ()
    shard: Shard | None = None
    interrupted: str | None = None  # why the run stopped early, when it did

    @property
    def parts(self) -> frozenset[Part]:
        found = {p for g in self.goldsets for p in g.parts}
        if self.shard is not None:
            found.add(Part.SHARD)
        if self.interrupted is not None:
            found.add(Part.INTERRUPTED)
        return frozenset(found)

    @property
    def whole(self) -> bool:
        """Every question of every goldset asked, by a run that ran to its end."""
        return not self.parts

    def of(self, route: str) -> GoldsetExtent | None:
        return next((g for g in self.goldsets if g.route == route), None)

    def why(self, parts: frozenset[Part] | None = None) -> str:
        """What makes it partial (`parts`: only those), in one clause."""
        wanted = self.parts if parts is None else parts
        said = []
        if Part.INTERRUPTED in wanted:
            said.append(f"the run that wrote it stopped early ({self.interrupted})")
        if Part.SHARD in wanted and self.shard is not None:
            said.append(f"shard {self.shard} of a sharded run, which holds only its slice "
                        "of the questions (`ragate decide` over every shard writes the "
                        "whole run's --ragate-results)")
        said += [why for g in self.goldsets for why in g.why()
                 if g.parts & wanted]
        return "; ".join(said)


@dataclass(frozen=True, kw_only=True)
class SavedFile:
    """A results file every reader may take: parsed, held to its trailer and (with the key)
    its signature, and what part of its run it holds."""

    found: ResultsFile
    extent: Extent

    @property
    def path(self) -> Path:
        return self.found.path

    @property
    def header(self) -> Header:
        assert self.found.header is not None  # read_saved refuses a file without one
        return self.found.header

    @property
    def rows(self) -> list[tuple[int, QuestionRecord]]:
        return self.found.rows


# --- results files ---------------------------------------------------------------------------


def read_saved(path: Path, row_model: type[QuestionRecord] = QuestionRecord, *,
               key: bytes | None = None, env: Mapping[str, str] | None = None) -> SavedFile:
    """The results file at `path`, or a SavedRunError naming it and what is wrong (the
    first problem, and how many more); `key` (else RAGATE_RESULTS_KEY from `env`, else
    from the environment) is the signing key its signature must match."""
    found = read_results(path, row_model)
    problems = file_problems(found, key=key if key is not None else signing.results_key(env))
    if problems:
        raise SavedRunError(first_of(problems))
    return SavedFile(found=found, extent=extent_of(found))


def read_saved_files(paths: Sequence[Path], *, env: Mapping[str, str] | None = None,
                     ) -> tuple[list[ResultsFile], list[str]]:
    """Each file as parsed (those refused too, so that files can be held to each other), and
    why no reader may take them, every problem of each once per cause, a run that stopped
    early included: what `ragate decide` and `ragate rejudge` refuse."""
    key = signing.results_key(env)
    found = [read_results(path) for path in paths]
    problems = []
    for parsed in found:
        mine = file_problems(parsed, key=key)
        if not mine and parsed.trailer is not None and parsed.trailer.incomplete is not None:
            mine = [interrupted_problem(parsed)]
        problems += mine
    return found, problems


def file_problems(found: ResultsFile, *, key: bytes | None) -> list[str]:
    """Why no reader may take this file, once per cause: its bad lines; else no header;
    else what its trailer does not vouch for; else, with a key, its signature."""
    if found.problems:
        return [str(p) for p in found.problems]
    if found.header is None:
        return [f"{found.path}: no header line: not a results file written by this ragate "
                "(--ragate-results), or cut short"]
    if found.unvouched:
        return [str(p) for p in found.unvouched]
    if key is not None:
        return _signature_problems(found, key)
    return []


def _signature_problems(found: ResultsFile, key: bytes) -> list[str]:
    trailer = found.trailer
    assert trailer is not None  # vouched for: it has one
    what = f"{found.path}: {TRAILER_KEY}.signature: the file"
    if trailer.signature is None:
        return [signing.unsigned(what)]
    if not signing.signed_by(key, trailer.signed_text(), trailer.signature):
        return [signing.wrongly_signed(what)]
    return []


def extent_of(found: ResultsFile) -> Extent:
    """What part of its run a vouched-for file holds, from its header, rows and trailer."""
    header, trailer = found.header, found.trailer
    by_route: dict[str, list[QuestionRecord]] = {}
    for _, row in found.rows:
        by_route.setdefault(row.route, []).append(row)
    goldsets = []
    for stamp in header.goldsets if header else []:
        rows = by_route.get(stamp.route, [])
        deselected = tuple(n for n in stamp.deselected if not n.startswith("anchor["))
        not_asked = tuple(_name(r) for r in rows if r.not_needed)
        goldsets.append(GoldsetExtent(
            route=stamp.route, goldset=stamp.goldset, population=len(rows) + len(deselected),
            deselected=deselected, not_asked=not_asked,
            stopped=(len(rows) - len(not_asked), len(rows)) if not_asked else None))
    return Extent(goldsets=tuple(goldsets), shard=header.shard if header else None,
                  interrupted=trailer.incomplete if trailer else None)


def _name(row: QuestionRecord) -> str:
    return row.question_id if row.repeat == 1 else f"{row.question_id}[r{row.repeat}]"


def interrupted_problem(found: ResultsFile) -> str:
    """Why a run that stopped early is refused where a whole run is needed."""
    assert found.trailer is not None and found.trailer.incomplete is not None
    return str(Problem(found.path, f"{TRAILER_KEY}.incomplete", "the run that wrote it "
                       f"stopped early ({found.trailer.incomplete}): its results are not a "
                       "whole run's", line=found.trailer_line))


def require_whole(saved: SavedFile, use: str, *,
                  allow: frozenset[Part] = frozenset()) -> None:
    """A SavedRunError unless the file holds its whole run (but for the parts `allow`ed):
    `{path}: {what makes it partial}: {use}`, where `use` says why this reader needs it
    whole."""
    parts = saved.extent.parts - allow
    if parts:
        raise SavedRunError(f"{saved.path}: {saved.extent.why(parts)}: {use}")


def shard_problems(files: Sequence[ResultsFile]) -> list[str]:
    """What makes these files (those with a header) not one run's: a whole run's file with
    another, shards of different splits, a shard given twice or missing. None: one whole
    file, or each shard of one run once."""
    files = [f for f in files if f.header is not None]
    if not files:
        return []
    sharded = [f for f in files if f.header.shard is not None]  # type: ignore[union-attr]
    whole = [f for f in files if f.header.shard is None]  # type: ignore[union-attr]
    if whole and (sharded or len(whole) > 1):
        return ["these are not the shards of one run: " + ", ".join(map(where, files))
                + " (give one run's files at a time: either its one results file, or each of "
                "its --ragate-shard files)"]
    if not sharded:
        return []
    counts = sorted({f.header.shard.count for f in sharded})  # type: ignore[union-attr]
    if len(counts) > 1:
        return ["shards of different splits: " + ", ".join(map(where, sharded))]
    count, problems = counts[0], []
    by_index: dict[int, list[ResultsFile]] = {}
    for f in sharded:
        by_index.setdefault(f.header.shard.index, []).append(f)  # type: ignore[union-attr]
    for index, found in sorted(by_index.items()):
        if len(found) > 1:
            problems.append(f"shard {index}/{count} given twice: "
                            + " and ".join(str(f.path) for f in found))
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
    if missing:
        problems.append(f"shard{'s' * (len(missing) > 1)} {', '.join(missing)} missing: "
                        f"given {', '.join(map(where, sharded))}")
    return problems


def where(saved: SavedFile | ResultsFile) -> str:
    """`shards/1.jsonl (shard 1/3)`, or `out/results.jsonl (the run)`."""
    found = saved.found if isinstance(saved, SavedFile) else saved
    return f"{found.path} ({found.header.where})" if found.header else str(found.path)


def first_of(problems: Sequence[str]) -> str:
    more = len(problems) - 1
    return problems[0] + (f" (and {more} more problem{'s' * (more > 1)})" if more > 0 else "")


# --- history lines ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SavedLine:
    """One readable history line, where it is, and what part of its goldset it asked."""

    path: Path
    line: int
    entry: HistoryLine
    extent: GoldsetExtent

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(kw_only=True)
class HistoryRead:
    """A history file's readable lines, in file order, and the lines that could not be
    taken: torn (unparseable: skipped, as the history's own reader skips them), unsigned
    while the key is set (passed over), or wrongly signed (no reader takes the file)."""

    lines: list[SavedLine] = field(default_factory=list)
    torn: list[int] = field(default_factory=list)
    unsigned: list[int] = field(default_factory=list)
    forged: list[int] = field(default_factory=list)


def numbered_lines(text: str) -> list[tuple[int, str]]:
    """A saved file's non-blank lines with their numbers, split on "\\n" only, as they were
    written (a JSON string may hold U+2028, which `str.splitlines` would split on)."""
    return [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), 1)
            if line.strip()]


def history_lines(path: Path, numbered: Sequence[tuple[int, str]], *,
                  key: bytes | None = None, env: Mapping[str, str] | None = None,
                  ) -> HistoryRead:
    """The history lines given (line number, text), each parsed, held to the signing key
    (`key`, else RAGATE_RESULTS_KEY), and told what part of its goldset it asked."""
    key = key if key is not None else signing.results_key(env)
    read = HistoryRead()
    for number, text in numbered:
        unsigned_text, claimed = signing.split_signed_line(text.strip())
        try:
            entry = HistoryLine.model_validate_json(unsigned_text)
        except ValidationError:
            read.torn.append(number)
            continue
        if key is not None and claimed is None:
            read.unsigned.append(number)
            continue
        if key is not None and claimed is not None and not signing.signed_by(
                key, unsigned_text, claimed):
            read.forged.append(number)
            continue
        read.lines.append(SavedLine(path=path, line=number, entry=entry,
                                    extent=line_extent(entry)))
    return read


def line_extent(entry: HistoryLine) -> GoldsetExtent:
    """What a history line says its run asked of its goldset: the questions deselected
    (`gaps`), and a sequential stop (`sequential`); a line written before ragate kept the
    run's gaps says nothing of either."""
    sequential = entry.sequential or {}
    stopped = (int(sequential.get("asked", 0)), int(sequential.get("of", 0))) \
        if sequential.get("stopped") else None
    return GoldsetExtent(route=entry.route or "", goldset=entry.goldset,
                         population=entry.population,
                         deselected=tuple(entry.gaps.get("deselected", ())), stopped=stopped,
                         recorded="status" in entry.model_fields_set)
