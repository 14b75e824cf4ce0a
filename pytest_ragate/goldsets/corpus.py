"""Corpora as documents of numbered units (turns, paragraphs, lines), read from the
supported formats.

A turn's index is its 0-based position in the source file and its text is kept byte for byte:
every expected evidence span and every citation is a position in these files.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragate.answer import format_label
from pytest_ragate.files import UnreadableText, read_jsonl, read_lines, read_text
from pytest_ragate.problems import Problem, problems_from_validation


@dataclass(frozen=True)
class Turn:
    text: str
    speaker: str | None = None
    t_start: float | None = None
    t_end: float | None = None


def span_label(doc_id: str, turns: Iterable[Turn], numbers: tuple[int, int] | None = None,
               unit: str = "unit") -> str:
    """The label of a run of turns: its speakers in order of appearance, first start to
    last end (and its turn numbers, when given)."""
    turns = list(turns)
    starts = [t.t_start for t in turns if t.t_start is not None]
    ends = [t.t_end for t in turns if t.t_end is not None]
    return format_label(doc_id, list(dict.fromkeys(t.speaker for t in turns if t.speaker)),
                        min(starts) if starts else None, max(ends) if ends else None, numbers,
                        unit)


Span = tuple[int, int]  # characters start..end (end excluded) of a document's text


@dataclass(frozen=True)
class Document:
    doc_id: str
    turns: tuple[Turn, ...]
    source: Path
    broken: bool = False
    # the text the units were cut from and where each lies in it (the documents formats);
    # None for a transcript, whose text is its turns joined by newlines (`laid_out`)
    text: str | None = field(default=None, repr=False, compare=False)
    spans: tuple[Span, ...] | None = field(default=None, repr=False, compare=False)

    def laid_out(self) -> tuple[str, tuple[Span, ...]]:
        """The document's text and where each unit lies in it: the file's text (`documents`)
        or the line's `text` (`documents-jsonl`) as it is, else the turns joined by newlines
        (a tiron `.txt` file's own lines; a segments or QMSum transcript)."""
        if self.text is not None and self.spans is not None:
            return self.text, self.spans
        spans, at = [], 0
        for turn in self.turns:
            spans.append((at, at + len(turn.text)))
            at += len(turn.text) + 1
        return "\n".join(t.text for t in self.turns), tuple(spans)

    def label(self, first_unit: int, last_unit: int, numbered: bool = False,
              unit: str = "unit") -> str:
        """The span's label; units past the end are left out (validation reports them)."""
        return span_label(self.doc_id, self.turns[first_unit:last_unit + 1],
                          (first_unit, last_unit) if numbered else None, unit)


@dataclass
class Corpus:
    """Documents by id. `complete` is False when some source could not be read, and `broken`
    names documents that failed to load: checks against them would only repeat the error."""

    documents: dict[str, Document]
    broken: set[str] = field(default_factory=set)
    complete: bool = True
    unit: str = "unit"  # what a numbered position is called, in every corpus

    def knows(self, doc_id: str) -> bool:
        """Whether a check of `doc_id` against this corpus can be trusted."""
        return doc_id in self.documents or (self.complete and doc_id not in self.broken)

    def __len__(self) -> int:
        return len(self.documents)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.documents

    def __getitem__(self, doc_id: str) -> Document:
        return self.documents[doc_id]

    def outside(self, contexts: Iterable[Any], shown: int = 5) -> list[str]:
        """Why contexts do not point into this corpus (an unknown document, turns past its
        end), at most `shown` of them named: a context the corpus does not hold cannot be
        scored against evidence spans, and one covering a whole document would find every
        span in it."""
        problems = []
        for c in contexts:
            doc = self.documents.get(c.doc_id)
            if doc is None:
                problems.append(f"{c.context_id}: document {c.doc_id!r} is not in the corpus")
            elif c.last_unit >= len(doc.turns):
                problems.append(f"{c.context_id}: {self.unit}s {c.first_unit}–{c.last_unit} run "
                                f"past the end of {c.doc_id} ({self.unit}s 0–"
                                f"{len(doc.turns) - 1})")
        if len(problems) > shown:
            problems = [*problems[:shown], f"and {len(problems) - shown} more"]
        return problems

    @cached_property
    def document_digests(self) -> dict[str, str]:
        """Each document's digest (its id, texts, speakers, times; the first 16 hex digits
        of a SHA-256: 64 bits, to tell an edited document from its last run's), by id: what
        results files, history lines and baselines keep of the corpus."""
        return {doc_id: hashlib.sha256(json.dumps(
            [doc_id, [[t.text, t.speaker, t.t_start, t.t_end] for t in doc.turns]],
            ensure_ascii=False).encode()).hexdigest()[:16]
            for doc_id, doc in sorted(self.documents.items())}

    @cached_property
    def content_hash(self) -> str:
        """Digest of what was read (ids, texts, speakers, times), not of file names: caches
        keyed on it follow the content, whichever files carried it."""
        digest = hashlib.sha256()
        for doc_id in sorted(self.documents):
            digest.update(json.dumps([doc_id, [[t.text, t.speaker, t.t_start, t.t_end]
                                               for t in self.documents[doc_id].turns]],
                                     ensure_ascii=False).encode())
        return digest.hexdigest()


# --- file formats -------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class _TironSegment(_Strict):
    t_start: float
    t_end: float
    speaker: str


class _TironSpeakers(_Strict):
    meeting_id: str
    segments: list[_TironSegment]


class _QmsumTurn(_Strict):
    speaker: str
    content: str


class _QmsumMeeting(_Strict):
    meeting_transcripts: list[_QmsumTurn]


class _Segment(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    doc_id: str
    unit: int
    text: str
    speaker: str | None = None
    t_start: float | None = None
    t_end: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, value: object) -> object:
        if isinstance(value, dict) and "turn" in value:
            raise ValueError("turn was renamed unit")
        return value


def _read_tiron(path: Path) -> tuple[list[Document], list[Problem]]:
    try:
        speakers = _TironSpeakers.model_validate_json(read_text(path))
    except ValidationError as error:
        return [], problems_from_validation(error, path)
    txt = path.with_name(path.name.removesuffix(".speakers.json") + ".txt")
    if not txt.is_file():
        return [], [Problem(path, "segments", f"paired text file {txt.name} not found")]
    lines = read_lines(txt)
    if len(lines) != len(speakers.segments):
        message = (
            f"{len(speakers.segments)} segments but {txt.name} has {len(lines)} lines; "
            "they pair line by line"
        )
        return [], [Problem(path, "segments", message)]
    turns = tuple(
        Turn(text, s.speaker, s.t_start, s.t_end)
        for text, s in zip(lines, speakers.segments, strict=True)
    )
    return [Document(speakers.meeting_id, turns, path)], []


def _read_qmsum(path: Path) -> tuple[list[Document], list[Problem]]:
    try:
        meeting = _QmsumMeeting.model_validate_json(read_text(path))
    except ValidationError as error:
        return [], problems_from_validation(error, path)
    turns = tuple(Turn(t.content, t.speaker) for t in meeting.meeting_transcripts)
    return [Document(path.stem, turns, path)], []


def _read_segments(path: Path) -> tuple[list[Document], list[Problem]]:
    rows, problems = read_jsonl(path, _Segment)
    by_doc: dict[str, list[Turn]] = {}
    broken: set[str] = set()
    for lineno, seg in rows:
        if seg.doc_id in broken:
            continue  # its first gap is reported; every later unit would repeat it
        turns = by_doc.setdefault(seg.doc_id, [])
        if seg.unit != len(turns):
            message = (
                f"expected unit {len(turns)} of {seg.doc_id!r} (units are 0-based, "
                f"consecutive, in file order), got {seg.unit}"
            )
            problems.append(Problem(path, "unit", message, line=lineno))
            broken.add(seg.doc_id)
            continue
        turns.append(Turn(seg.text, seg.speaker, seg.t_start, seg.t_end))
    docs = [Document(doc_id, tuple(turns), path, broken=doc_id in broken)
            for doc_id, turns in by_doc.items()]
    return docs, problems


class _DocumentRow(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    doc_id: Annotated[str, Field(min_length=1)]
    text: str


_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")
_NEWLINE = re.compile(r"\n")


def _stripped(text: str, start: int, end: int) -> list[Span]:
    """Where text[start:end] lies without its surrounding whitespace; nothing when blank."""
    part = text[start:end]
    kept = part.strip()
    if not kept:
        return []
    lead = start + len(part) - len(part.lstrip())
    return [(lead, lead + len(kept))]


def _spans_between(separator: re.Pattern[str], text: str) -> list[Span]:
    spans, start = [], 0
    for found in separator.finditer(text):
        spans += _stripped(text, start, found.start())
        start = found.end()
    return spans + _stripped(text, start, len(text))


def paragraph_spans(text: str) -> list[Span]:
    """Where each paragraph unit lies in `text`: blocks separated by blank lines, each
    without its surrounding whitespace (characters start..end, end excluded)."""
    return _spans_between(_BLANK_LINE, text)


def line_spans(text: str) -> list[Span]:
    """Where each line unit lies in `text`: every non-blank line, stripped."""
    return _spans_between(_NEWLINE, text)


def split_paragraphs(text: str) -> list[str]:
    """Units separated by blank lines; each unit without its surrounding whitespace."""
    return [text[start:end] for start, end in paragraph_spans(text)]


def split_lines(text: str) -> list[str]:
    """Every non-blank line is a unit."""
    return [text[start:end] for start, end in line_spans(text)]


UNIT_SPANS: dict[str, Callable[[str], list[Span]]] = {"paragraph": paragraph_spans,
                                                      "line": line_spans}
Units = Literal["paragraph", "line"]


def _document(doc_id: str, text: str, path: Path, units: Units) -> Document:
    """A document of the documents formats: its units and where each lies in its text."""
    spans = tuple(UNIT_SPANS[units](text))
    return Document(doc_id, tuple(Turn(text[a:b]) for a, b in spans), path, text=text,
                    spans=spans)


def _read_document_file(path: Path, units: Units) -> tuple[list[Document], list[Problem]]:
    """A `.md` or `.txt` file is one document, named by its file name without the suffix."""
    return [_document(path.stem, read_text(path), path, units)], []


def _read_documents_jsonl(path: Path, units: Units) -> tuple[list[Document], list[Problem]]:
    """One `{"doc_id", "text"}` line per document."""
    rows, problems = read_jsonl(path, _DocumentRow, id_field="doc_id")
    return [_document(row.doc_id, row.text, path, units) for _, row in rows], problems


Reader = Callable[[Path], tuple[list[Document], list[Problem]]]
READERS: dict[str, Reader] = {
    "tiron": _read_tiron,
    "qmsum": _read_qmsum,
    "segments-jsonl": _read_segments,
    "documents": _read_document_file,  # type: ignore[dict-item]  # take `units` too
    "documents-jsonl": _read_documents_jsonl,  # type: ignore[dict-item]
}
DOCUMENT_FORMATS = frozenset({"documents", "documents-jsonl"})
FORMATS_DOC = "see docs/goldsets.md#corpus-formats"  # every format's fields, described


def expand_globs(base: Path, patterns: Iterable[str], config_path: Path,
                 ) -> tuple[list[Path], list[Problem]]:
    """Every pattern must match at least one file: an empty corpus is an error, not a pass."""
    paths: list[Path] = []
    problems: list[Problem] = []
    for i, pattern in enumerate(patterns):
        matches = sorted(glob.glob(str(base / pattern), recursive=True))
        files = [Path(m) for m in matches if Path(m).is_file()]
        if not files:
            problems.append(
                Problem(config_path, f"corpus.paths[{i}]", f"{pattern!r} matches no file")
            )
        paths.extend(f for f in files if f not in paths)
    return paths, problems


def load_corpus(base: Path, patterns: list[str], fmt: str, config_path: Path,
                units: Units = "paragraph") -> tuple[Corpus, list[Problem]]:
    """The corpus and every problem met reading it; what loaded is kept for later checks.
    `units` splits the documents formats (paragraphs or lines); the transcript formats come
    in turns."""
    paths, problems = expand_globs(base, patterns, config_path)
    reader = READERS.get(fmt)
    if reader is None:
        known = ", ".join(READERS)
        problems.append(
            Problem(config_path, "corpus.format", f"unknown format {fmt!r} (known: {known}; "
                    f"{FORMATS_DOC})"))
        return Corpus({}, complete=False), problems
    if fmt in DOCUMENT_FORMATS:
        reader = functools.partial(reader, units=units)  # type: ignore[call-arg]
    documents: dict[str, Document] = {}
    broken: set[str] = set()
    complete = not problems
    for path in paths:
        try:
            docs, found = reader(path)
        except UnreadableText as error:
            docs, found = [], [error.problem]
        except (OSError, json.JSONDecodeError) as error:
            docs, found = [], [Problem(path, "<file>", f"cannot read: {error}")]
        problems.extend(dataclasses.replace(f, message=f"{f.message} (format {fmt}: "
                                            f"{FORMATS_DOC})") for f in found)
        complete = complete and not found
        for doc in docs:
            if doc.broken:
                broken.add(doc.doc_id)
            elif doc.doc_id in documents:
                other = documents[doc.doc_id].source
                problems.append(
                    Problem(path, "doc_id", f"document {doc.doc_id!r} also defined in {other}")
                )
            elif not doc.turns:
                problems.append(Problem(doc.source, "doc_id", f"document {doc.doc_id!r} is "
                                        "empty: it can hold no evidence"))
                complete = False
            else:
                documents[doc.doc_id] = doc
    if paths and not documents and not problems:
        problems.append(Problem(config_path, "corpus.paths", f"the corpus has no documents "
                                f"({len(paths)} file{'s' * (len(paths) != 1)} read as {fmt!r}): "
                                "a goldset over nothing can pass nothing"))
    return Corpus(documents, broken=broken, complete=complete), problems
