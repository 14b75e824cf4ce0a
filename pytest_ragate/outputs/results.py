"""The results file (`--ragate-results`): what a run saw, complete enough to be decided again.

One JSON object per line. The first line (`{"ragate_results": …}`) says which run wrote the
file: ragate's version, the shard (`--ragate-shard i/N`, or none), the settings that shape a
row, and each goldset it ran with its content digest. Then one row per question asked (the
`QuestionRecord`, unchanged: every line with a `question_id` is a row; a sequential goldset's
questions asked again to check its stop follow its rows, marked `reasked`, and are kept apart
from them when read: no reader of rows counts them), then each anchor's
outcome (`{"ragate_anchor": …}`), each goldset item that failed or was lost
(`{"ragate_item": …}`) and each other test of the run that failed (`{"ragate_test": …}`).
The last line, the trailer (`{"ragate_trailer": …}`), vouches for the file's completeness:
it counts the rows, anchor, item and test lines and holds the sha256 of the exact bytes of
every line before it, and says when the run that wrote it stopped early (`incomplete`); with
`RAGATE_RESULTS_KEY` set, it is signed too (`signing.py`: tamper evidence, which the digest
alone is not). This module writes and parses the file; every command and option that reads
one reads it through `saved_runs.py`, which holds it to its trailer and signature and says
what part of its run it holds.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.files import UnreadableText, read_text, write_atomic
from pytest_ragate.outputs import signing
from pytest_ragate.problems import Problem, problems_from_validation
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord

FORMAT = 1


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Shard(_Line):
    """Shard `index` of `count` (1-based), as `--ragate-shard index/count` names it."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    @model_validator(mode="after")
    def _within(self) -> Shard:
        if self.index > self.count:
            raise ValueError(f"shard {self.index} of {self.count}: the index is at most the count")
        return self

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`2/3` → Shard(2, 3); ValueError naming what is wrong otherwise."""
        head, slash, tail = text.strip().partition("/")
        if not slash or not head.strip().isdigit() or not tail.strip().isdigit():
            raise ValueError(f"{text!r} is not i/N (e.g. 2/3: the second of three shards)")
        try:
            return cls(index=int(head), count=int(tail))
        except ValidationError as error:
            raise ValueError(f"{text!r}: {error.errors()[0]['msg'].removeprefix('Value error, ')}"
                             ) from None

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def _none(value: object) -> bool:
    return value is None


class GoldsetStamp(_Line):
    """One goldset run as a route collected it: what it was, and what of it was left out."""

    route: str
    goldset: str
    eval_version: str
    sha256: str | None
    deselected: list[str] = []  # its items this run deselected (-k, -m): names, not shards'
    # a sequential goldset's order seed and error budget (`decision/sequential.py`); a
    # goldset asked in collection order has none in its stamp
    sequential: dict[str, int | float] | None = Field(None, exclude_if=_none)
    # each corpus document's digest, by id (a baseline read from this file is held to it);
    # absent from files written before it
    corpus: dict[str, str] | None = Field(None, exclude_if=_none)


class Header(_Line):
    format: int
    ragate_version: str
    shard: Shard | None = None
    settings: dict[str, Any]  # the knobs that shape a row: every shard's must be the same
    gate: dict[str, Any] = {}  # the knobs that decide: a later decision may use others
    goldsets: list[GoldsetStamp] = []
    workers_down: list[str] = []

    @property
    def where(self) -> str:
        return f"shard {self.shard}" if self.shard else "the run"


class SavedAnchor(_Line):
    nodeid: str
    route: str
    outcome: AnchorOutcome


class SavedItem(_Line):
    """A question or anchor item that failed (`phase`, `why`: its report's), or started and
    never reported (`lost`). `row` says whether the run had the item's own row (a question
    whose worker crashed has one made up for it, which a decision makes again)."""

    nodeid: str
    route: str
    name: str  # `q07`, `q07[r2]` or `anchor[a1]`
    phase: str = ""
    why: str = ""
    lost: bool = False
    row: bool = True


class SavedTest(_Line):
    """A test of the run that is no goldset's (an ordinary test) and failed, or errored in
    its setup or teardown (`phase`): a decision fails with it, as the run did."""

    nodeid: str
    location: tuple[str, int | None, str]
    phase: str
    why: str


class Trailer(_Line):
    """The file's last line: how many rows, anchor, item and test lines come before it, the
    sha256 of the exact bytes of every line before it, and why the run that wrote the file
    stopped early (None: it ran to its end)."""

    rows: int = Field(ge=0)
    anchors: int = Field(ge=0)
    items: int = Field(ge=0)
    tests: int = Field(ge=0)
    sha256: str
    incomplete: str | None = None
    # HMAC-SHA256 of the rest, with RAGATE_RESULTS_KEY set; left out without
    signature: str | None = Field(None, exclude_if=_none)

    def signed_text(self) -> str:
        """What the signature is of: the trailer line without it (its counts, the digest of
        every line before it, and `incomplete`), so it vouches for the whole file."""
        return _dump(_TrailerLine(ragate_trailer=self.model_copy(update={"signature": None})))

    def counted(self) -> str:
        """`300 rows, 10 anchor lines, 1 item line, 0 test lines`."""
        return ", ".join(f"{n} {what}{'' if n == 1 else 's'}" for n, what in (
            (self.rows, "row"), (self.anchors, "anchor line"), (self.items, "item line"),
            (self.tests, "test line")))


class _HeaderLine(_Line):
    ragate_results: Header


class _AnchorLine(_Line):
    ragate_anchor: SavedAnchor


class _ItemLine(_Line):
    ragate_item: SavedItem


class _TestLine(_Line):
    ragate_test: SavedTest


class _TrailerLine(_Line):
    ragate_trailer: Trailer


# a line's kind is its one key (a question row has none of them)
_KINDS: dict[str, type[_Line]] = {
    next(iter(m.model_fields)): m
    for m in (_HeaderLine, _AnchorLine, _ItemLine, _TestLine, _TrailerLine)}
HEADER_KEY = "ragate_results"
TRAILER_KEY = "ragate_trailer"


# `json.dumps(row, ensure_ascii=False, sort_keys=True)`, its encoder made once, not per row
_ROW_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def _dump(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json"), ensure_ascii=False, sort_keys=True) + "\n"


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def results_lines(runs: Sequence[GoldsetRun], header: Header | None = None,
                  anchors: Iterable[SavedAnchor] = (),
                  items: Iterable[SavedItem | SavedTest] = (), *,
                  incomplete: str | None = None, key: bytes | None = None) -> str:
    """The header, every run's rows in goldset and question order, then anchors, goldset
    items and other tests, and the trailer that vouches for them (`incomplete`: why the run
    stopped early, when it did), signed with `key` when one is given."""
    rows = [r.row_json() for run in runs
            for r in (*run.records, *(run.sequential.reasked if run.sequential else ()))]
    anchors, items = list(anchors), list(items)
    tests = [i for i in items if isinstance(i, SavedTest)]
    goldset_items = [i for i in items if isinstance(i, SavedItem)]
    body = (("" if header is None else _dump(_HeaderLine(ragate_results=header)))
            + "".join(_ROW_JSON(row) + "\n" for row in rows)
            + "".join(_dump(_AnchorLine(ragate_anchor=a)) for a in anchors)
            + "".join(_dump(_ItemLine(ragate_item=i)) for i in goldset_items)
            + "".join(_dump(_TestLine(ragate_test=t)) for t in tests))
    trailer = Trailer(rows=len(rows), anchors=len(anchors), items=len(goldset_items),
                      tests=len(tests), sha256=_digest(body), incomplete=incomplete)
    if key is not None:
        trailer = trailer.model_copy(update={
            "signature": signing.signature(key, trailer.signed_text())})
    return body + _dump(_TrailerLine(ragate_trailer=trailer))


def write_results(path: Path, runs: Sequence[GoldsetRun], header: Header | None = None,
                  anchors: Iterable[SavedAnchor] = (),
                  items: Iterable[SavedItem | SavedTest] = (), *,
                  incomplete: str | None = None) -> None:
    """The file, signed when RAGATE_RESULTS_KEY is set."""
    write_atomic(path, results_lines(runs, header, anchors, items, incomplete=incomplete,
                                     key=signing.results_key()))


@dataclass
class ResultsFile:
    """A results file as parsed: its lines by kind, `problems` (bad lines), and
    `unvouched`: what the trailer does not vouch for (no trailer: a file cut short or
    written by an older ragate; or one edited, reordered, appended to). No reader takes a
    file with either (`saved_runs.py`, which also checks the signature and says what part
    of its run the file holds)."""

    path: Path
    header: Header | None = None
    rows: list[tuple[int, QuestionRecord]] = field(default_factory=list)
    # rows of questions asked again to check a sequential stop (`QuestionRecord.reasked`)
    reasked: list[tuple[int, QuestionRecord]] = field(default_factory=list)
    anchors: list[SavedAnchor] = field(default_factory=list)
    items: list[SavedItem] = field(default_factory=list)
    tests: list[SavedTest] = field(default_factory=list)
    trailer: Trailer | None = None
    trailer_line: int | None = None
    problems: list[Problem] = field(default_factory=list)
    unvouched: list[Problem] = field(default_factory=list)


def _lines(text: str) -> list[str]:
    """Each line with its own line end, split on '\\n' only (as `files.read_lines`), so the
    trailer's digest is over the exact text before it."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def read_results(path: Path, row_model: type[QuestionRecord] = QuestionRecord) -> ResultsFile:
    """Every line, each validated by its kind; a bad line is a problem naming file, line,
    question id and field, and the rest is still read. The trailer is held to the lines
    before it. The parser: commands and options read results files through
    `saved_runs.read_saved` (tests/test_architecture.py holds that)."""
    found = ResultsFile(path)
    try:
        text = read_text(path)
    except UnreadableText as error:
        found.problems.append(error.problem)
        return found
    except OSError as error:
        found.problems.append(Problem(path, "<file>", f"cannot be read ({error.strerror})"))
        return found
    lines = _lines(text)
    at = 0  # the trailer's line
    for number, raw in enumerate(lines, start=1):
        line = _read_line(found, number, raw.removesuffix("\n").removesuffix("\r"), row_model)
        if isinstance(line, _TrailerLine) and found.trailer is None:
            found.trailer, found.trailer_line = line.ragate_trailer, number
            at = number
        elif found.trailer is None:
            _keep(found, number, line)
    if found.header is not None and found.header.format != FORMAT:
        found.problems.append(Problem(path, f"{HEADER_KEY}.format", f"format "
                                      f"{found.header.format} is not this ragate's ({FORMAT})",
                                      line=1))
    if not found.problems:
        found.unvouched = _vouch(found, "".join(lines[:at - 1]), at, len(lines) - at)
    return found


def _read_line(found: ResultsFile, number: int, text: str, row_model: type[QuestionRecord],
               ) -> BaseModel | None:
    """One line as its model, or None (blank, or a problem kept in `found`)."""
    path = found.path
    if not text.strip():
        return None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        found.problems.append(Problem(path, "<json>", f"malformed JSON ({error.msg})",
                                      line=number))
        return None
    if not isinstance(raw, dict):
        found.problems.append(Problem(path, "<json>", "not a JSON object", line=number))
        return None
    kind = next((k for k in _KINDS if k in raw), None)
    model = _KINDS[kind] if kind else row_model
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        qid = raw.get("question_id") if kind is None else None
        found.problems.extend(problems_from_validation(
            error, path, line=number, question_id=qid if isinstance(qid, str) else None))
        return None


def _keep(found: ResultsFile, number: int, line: BaseModel | None) -> None:
    """A line before the trailer, kept by its kind."""
    if isinstance(line, _HeaderLine):
        if found.header is not None or found.rows:
            found.problems.append(Problem(found.path, HEADER_KEY, "a second header, or a "
                                          "header after rows: is this two files joined?",
                                          line=number))
        else:
            found.header = line.ragate_results
    elif isinstance(line, _AnchorLine):
        found.anchors.append(line.ragate_anchor)
    elif isinstance(line, _ItemLine):
        found.items.append(line.ragate_item)
    elif isinstance(line, _TestLine):
        found.tests.append(line.ragate_test)
    elif isinstance(line, QuestionRecord):
        (found.reasked if line.reasked else found.rows).append((number, line))


def _vouch(found: ResultsFile, body: str, line: int, after: int) -> list[Problem]:
    """What the trailer (on `line`, followed by `after` lines) does not vouch for, once per
    cause: no trailer, lines after it, or lines before it other than those it counted and
    digested. (A run that stopped early is vouched for as such: `Trailer.incomplete`.)"""
    path, trailer = found.path, found.trailer
    if trailer is None:
        return [Problem(path, TRAILER_KEY, "no trailer line, which ends every results file "
                        "this ragate writes: the file was cut short (an upload or copy that "
                        "stopped at a line end) or an older ragate wrote it; give the "
                        "whole file, as its run wrote it")]
    if after:
        return [Problem(path, TRAILER_KEY, f"{after} line{'s' * (after > 1)} after the "
                        "trailer: lines were appended, or files joined", line=line + 1)]
    have = Trailer(rows=len(found.rows) + len(found.reasked), anchors=len(found.anchors),
                   items=len(found.items),
                   tests=len(found.tests), sha256=_digest(body))
    if have.counted() != trailer.counted():
        return [Problem(path, TRAILER_KEY, f"the trailer counts {trailer.counted()}; the "
                        f"lines before it are {have.counted()}: lines were lost or added",
                        line=line)]
    if have.sha256 != trailer.sha256:
        return [Problem(path, f"{TRAILER_KEY}.sha256", "the lines before the trailer are not "
                        "those it was written after (their sha256 differs): a line was "
                        "edited, reordered or replaced", line=line)]
    return []


class NoResultsFile(ValueError):
    """A results spec that names no file: a usage error of whoever was given it."""


def results_paths(specs: Sequence[str], root: Path) -> list[Path]:
    """Files, folders (their `*.jsonl`) and globs, each found as given, then from the
    rootdir, once each in order (`ragate decide` and `ragate rejudge` read them so); one that
    names nothing raises NoResultsFile naming it."""
    import glob

    paths: list[Path] = []
    for spec in specs:
        found: list[Path] = []
        for base in (None, root):  # as given (shown so), then from the rootdir
            path = Path(spec) if base is None else base / spec
            if glob.has_magic(spec):
                found = [Path(p) for p in sorted(glob.glob(str(path)))]
            elif path.is_dir():
                found = sorted(path.glob("*.jsonl"))
            elif path.is_file():
                found = [path]
            if found:
                break
        if not found:
            raise NoResultsFile(f"{spec}: no results file there")
        paths += [p for p in found if p not in paths]
    return paths
