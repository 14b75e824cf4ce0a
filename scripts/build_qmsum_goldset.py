"""Build the `qmsum-val` goldset from the QMSum validation meetings copied into the project.

Why this exists: the goldset's questions and expected answers must be derived mechanically and
reproducibly from the unmodified QMSum files in `goldsets/corpora/qmsum-val/`, so that anyone can
check that every expected evidence span is exactly QMSum's own `relevant_text_span` annotation
(0-based, end inclusive, a position in `meeting_transcripts`) and regenerate the goldset byte for
byte. Hand-editing `questions.jsonl` / `expected.jsonl` is not the way to change them: change this
script and re-run it.

For every meeting file, in sorted filename order (document id = file stem), each entry of
`specific_query_list` becomes one `single_doc` question:

- `questions.jsonl`: `{"question_id", "kind", "question"}` (never a gist or evidence);
- `expected.jsonl`:  `{"question_id", "gist", "evidence": [{"doc_id", "first_unit",
  "last_unit"}]}`, spans sorted by turn and de-duplicated.

A span that is malformed or points outside its meeting stops the build with a non-zero exit that
names the file and the 1-based query index.

Usage: python scripts/build_qmsum_goldset.py [--corpus DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT / "goldsets" / "corpora" / "qmsum-val"
DEFAULT_OUT = REPO_ROOT / "goldsets" / "qmsum-val"
KIND = "single_doc"


class GoldsetError(Exception):
    """A QMSum file cannot be turned into a valid goldset entry."""


@dataclass(frozen=True, order=True)
class Span:
    """An inclusive, 0-based range of turns in one meeting."""

    first_unit: int
    last_unit: int

    def as_json(self, meeting_id: str) -> dict[str, Any]:
        """The span as one `evidence` entry of an expected answer."""
        return {
            "doc_id": meeting_id,
            "first_unit": self.first_unit,
            "last_unit": self.last_unit,
        }

    @property
    def length(self) -> int:
        """Number of turns covered (both ends included)."""
        return self.last_unit - self.first_unit + 1


@dataclass(frozen=True)
class Question:
    """One goldset question with its expected answer."""

    question_id: str
    meeting_id: str
    question: str
    gist: str
    spans: tuple[Span, ...]

    def question_line(self) -> dict[str, Any]:
        """The `questions.jsonl` row: no gist, no evidence."""
        return {"question_id": self.question_id, "kind": KIND, "question": self.question}

    def expected_line(self) -> dict[str, Any]:
        """The `expected.jsonl` row."""
        return {
            "question_id": self.question_id,
            "gist": self.gist,
            "evidence": [span.as_json(self.meeting_id) for span in self.spans],
        }


def _turn(value: object, where: str) -> int:
    """Parse one end of a QMSum span: a decimal string (an int is tolerated)."""
    if isinstance(value, bool):
        raise GoldsetError(f"{where}: span bound {value!r} is not a decimal turn index")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdecimal():
        return int(value.strip())
    raise GoldsetError(f"{where}: span bound {value!r} is not a decimal turn index")


def _spans(raw: object, n_turns: int, where: str) -> tuple[Span, ...]:
    """Validate QMSum spans against the meeting length; sort them and drop duplicates."""
    if not isinstance(raw, list) or not raw:
        raise GoldsetError(f"{where}: relevant_text_span must be a non-empty list, got {raw!r}")
    spans: set[Span] = set()
    for pair in raw:
        if not isinstance(pair, list) or len(pair) != 2:
            raise GoldsetError(f"{where}: span {pair!r} is not a [first, last] pair")
        first, last = _turn(pair[0], where), _turn(pair[1], where)
        if not 0 <= first <= last < n_turns:
            raise GoldsetError(
                f"{where}: span [{first}, {last}] is outside 0 <= first <= last < {n_turns} "
                f"(the meeting has {n_turns} turns)"
            )
        spans.add(Span(first, last))
    return tuple(sorted(spans))


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    """A required, non-empty string field, stripped."""
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise GoldsetError(f"{where}: {key!r} is missing or empty")
    return value.strip()


def load_meeting(path: Path) -> list[Question]:
    """Turn one QMSum meeting file into its questions, in file order."""
    stem = path.stem
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GoldsetError(f"{path}: cannot read meeting JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise GoldsetError(f"{path}: top level is not an object")
    transcripts = data.get("meeting_transcripts")
    queries = data.get("specific_query_list")
    if not isinstance(transcripts, list) or not transcripts:
        raise GoldsetError(f"{path}: meeting_transcripts is missing or empty")
    if not isinstance(queries, list):
        raise GoldsetError(f"{path}: specific_query_list is missing")
    questions: list[Question] = []
    for index, entry in enumerate(queries, start=1):
        where = f"{path} specific_query_list[{index - 1}] (query {index})"
        if not isinstance(entry, dict):
            raise GoldsetError(f"{where}: entry is not an object")
        questions.append(
            Question(
                question_id=f"{stem}-q{index:02d}",
                meeting_id=stem,
                question=_text(entry, "query", where),
                gist=_text(entry, "answer", where),
                spans=_spans(entry.get("relevant_text_span"), len(transcripts), where),
            )
        )
    return questions


def _dump_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as UTF-8 JSON lines with LF endings (deterministic bytes)."""
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def build(corpus: Path, out: Path) -> tuple[int, list[Question]]:
    """Read every meeting under `corpus`, write the goldset halves into `out`.

    Returns the number of meeting files read and the questions written.
    """
    files = sorted(corpus.glob("*.json"), key=lambda p: p.name)
    if not files:
        raise GoldsetError(f"{corpus}: no meeting *.json files found")
    questions: list[Question] = []
    for path in files:
        questions.extend(load_meeting(path))
    ids = [q.question_id for q in questions]
    if len(set(ids)) != len(ids):
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        raise GoldsetError(f"duplicate question ids: {duplicates}")
    _dump_jsonl(out / "questions.jsonl", [q.question_line() for q in questions])
    _dump_jsonl(out / "expected.jsonl", [q.expected_line() for q in questions])
    return len(files), questions


def report(questions: list[Question], n_meetings: int) -> str:
    """Human-readable counts and span-length statistics."""
    lengths = [span.length for q in questions for span in q.spans]
    multi = sum(1 for q in questions if len(q.spans) > 1)
    lines = [
        f"meetings:  {n_meetings}",
        f"questions: {len(questions)}",
        f"spans:     {len(lengths)} ({multi} questions with more than one span)",
    ]
    if lengths:
        lines.append(
            "span length in turns: "
            f"min {min(lengths)} / median {statistics.median(lengths):g} / max {max(lengths)}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description="Build the qmsum-val goldset from QMSum meetings.")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="QMSum meeting JSONs")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="goldset directory")
    args = parser.parse_args(argv)
    try:
        n_meetings, questions = build(args.corpus, args.out)
    except GoldsetError as exc:
        print(f"build_qmsum_goldset: error: {exc}", file=sys.stderr)
        return 1
    print(report(questions, n_meetings))
    print(f"wrote {args.out / 'questions.jsonl'} and {args.out / 'expected.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
