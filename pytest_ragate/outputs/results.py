"""The results file (`--ragate-results`): what a run saw, complete enough to be decided again.

One JSON object per line. The first line (`{"ragate_results": …}`) says which run wrote the
file: ragate's version, the shard (`--ragate-shard i/N`, or none), the settings that shape a
row, and each goldset it ran with its content digest. Then one row per question asked (the
`QuestionRecord`, unchanged: every line with a `question_id` is a row), then each anchor's
outcome (`{"ragate_anchor": …}`) and each item that failed or was lost
(`{"ragate_item": …}`). `ragate decide` (collect/deciding.py) reads these back and decides
the floors as the run itself would have; `ragate calibrate`, `compare` and the baseline read
the rows alone (`read_rows`), so a file written before the header existed still reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragate.files import UnreadableText, read_lines, write_atomic
from pytest_ragate.problems import Problem, problems_from_validation
from pytest_ragate.scoring.metrics import AnchorOutcome, QuestionRecord
from pytest_ragate.scoring.run import GoldsetRun

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


class GoldsetStamp(_Line):
    """One goldset run as a route collected it: what it was, and what of it was left out."""

    route: str
    goldset: str
    eval_version: str
    sha256: str | None
    deselected: list[str] = []  # its items this run deselected (-k, -m): names, not shards'


class Header(_Line):
    format: int
    ragate_version: str
    shard: Shard | None = None
    settings: dict[str, Any]  # the knobs that shape a row: every shard's must be the same
    gate: dict[str, Any] = {}  # the knobs that decide: a later decision may use others
    goldsets: list[GoldsetStamp] = []
    workers_down: list[str] = []
    incomplete: str | None = None  # why the run stopped early: not a whole run's results

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


class _HeaderLine(_Line):
    ragate_results: Header


class _AnchorLine(_Line):
    ragate_anchor: SavedAnchor


class _ItemLine(_Line):
    ragate_item: SavedItem


# a line's kind is its one key (a question row has none of them)
_KINDS: dict[str, type[_Line]] = {next(iter(m.model_fields)): m
                                  for m in (_HeaderLine, _AnchorLine, _ItemLine)}
HEADER_KEY = "ragate_results"


def _dump(model: BaseModel, exclude: Any = None) -> str:
    return json.dumps(model.model_dump(mode="json", exclude=exclude), ensure_ascii=False,
                      sort_keys=True) + "\n"


def results_lines(runs: Sequence[GoldsetRun], header: Header | None = None,
                  anchors: Iterable[SavedAnchor] = (), items: Iterable[SavedItem] = ()) -> str:
    """The header, every run's rows in goldset and question order, then anchors and items."""
    rows = [r.model_dump(mode="json") for run in runs for r in run.records]
    quiet = {HEADER_KEY: {"incomplete"}} if header and header.incomplete is None else None
    return (("" if header is None else _dump(_HeaderLine(ragate_results=header), quiet))
            + "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"
                      for row in rows)
            + "".join(_dump(_AnchorLine(ragate_anchor=a)) for a in anchors)
            + "".join(_dump(_ItemLine(ragate_item=i)) for i in items))


def write_results(path: Path, runs: Sequence[GoldsetRun], header: Header | None = None,
                  anchors: Iterable[SavedAnchor] = (), items: Iterable[SavedItem] = (), *,
                  incomplete: str | None = None) -> None:
    """`incomplete`: why the run stopped early, kept in the header (a file without a
    header gets one that says only that)."""
    if incomplete is not None:
        header = (header or Header(format=FORMAT, ragate_version="", settings={})).model_copy(
            update={"incomplete": incomplete})
    write_atomic(path, results_lines(runs, header, anchors, items))


@dataclass
class ResultsFile:
    path: Path
    header: Header | None = None
    rows: list[tuple[int, QuestionRecord]] = field(default_factory=list)
    anchors: list[SavedAnchor] = field(default_factory=list)
    items: list[SavedItem] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def read_results(path: Path, row_model: type[QuestionRecord] = QuestionRecord) -> ResultsFile:
    """Every line, each validated by its kind; a bad line is a problem naming file, line,
    question id and field, and the rest is still read."""
    found = ResultsFile(path)
    try:
        lines = read_lines(path)
    except UnreadableText as error:
        found.problems.append(error.problem)
        return found
    except OSError as error:
        found.problems.append(Problem(path, "<file>", f"cannot be read ({error.strerror})"))
        return found
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            found.problems.append(Problem(path, "<json>", f"malformed JSON ({error.msg})",
                                          line=number))
            continue
        if not isinstance(raw, dict):
            found.problems.append(Problem(path, "<json>", "not a JSON object", line=number))
            continue
        kind = next((k for k in _KINDS if k in raw), None)
        model = _KINDS[kind] if kind else row_model
        try:
            line = model.model_validate(raw)
        except ValidationError as error:
            qid = raw.get("question_id") if kind is None else None
            found.problems.extend(problems_from_validation(
                error, path, line=number, question_id=qid if isinstance(qid, str) else None))
            continue
        if isinstance(line, _HeaderLine):
            if found.header is not None or found.rows:
                found.problems.append(Problem(path, HEADER_KEY, "a second header, or a header "
                                              "after rows: is this two files joined?",
                                              line=number))
            else:
                found.header = line.ragate_results
        elif isinstance(line, _AnchorLine):
            found.anchors.append(line.ragate_anchor)
        elif isinstance(line, _ItemLine):
            found.items.append(line.ragate_item)
        else:
            found.rows.append((number, line))  # type: ignore[arg-type]
    if found.header is not None and found.header.format != FORMAT:
        found.problems.append(Problem(path, f"{HEADER_KEY}.format", f"format "
                                      f"{found.header.format} is not this ragate's ({FORMAT})",
                                      line=1))
    return found


def read_rows(path: Path, row_model: type[QuestionRecord] = QuestionRecord,
              ) -> tuple[list[tuple[int, QuestionRecord]], list[Problem]]:
    """The question rows of a results file, numbered by line (other lines are skipped)."""
    found = read_results(path, row_model)
    return found.rows, found.problems
