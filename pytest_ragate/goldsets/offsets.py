"""Character offsets in a corpus document's text, as the units they fall in.

A splitter (LlamaIndex's `SentenceSplitter`, LangChain's text splitters with
`add_start_index=True`) says where each chunk lies in the text it split: characters start..end,
end excluded. Evidence and contexts are unit ranges, so a chunk's units are the ones its
characters touch: the first unit whose text ends after `start`, through the last one that
begins before `end`. The whitespace between units belongs to none, so a chunk that ends on a
unit's last character, or on the blank line after it, does not reach the next unit, and one
that begins on the whitespace before a unit begins with that unit. The document's text and
its units' places in it are the corpus reader's own (`Document.laid_out`), so the arithmetic is
never done twice by two rules.

`occurrences` finds a phrase in a document the way a person reads it: case and the layout of
whitespace (line breaks, the blank lines between units) ignored; each place it is found is
mapped back to the document's characters, and so to its units.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from pytest_ragate.goldsets.corpus import Document, Span


class OffsetError(ValueError):
    """Offsets that name no unit of the document; the message says which and why."""


def units_of(document: Document, start: int, end: int, *, unit: str = "unit") -> Span:
    """(first, last), inclusive: the units characters `start`..`end` (end excluded) of the
    document's text touch. OffsetError for an empty or reversed range, one past the end of
    the text, or one that holds only the whitespace between units."""
    text, spans = document.laid_out()
    where = f"characters {start}..{end} of {document.doc_id!r}"
    if start < 0 or end <= start:
        raise OffsetError(f"{where}: not a range of characters (start ≥ 0, end > start; end "
                          "is excluded)")
    if end > len(text):
        raise OffsetError(f"{where} run past the end of its text ({len(text)} characters): "
                          "were the offsets taken in another text than the corpus reads?")
    first = bisect.bisect_right([e for _, e in spans], start)
    last = bisect.bisect_left([s for s, _ in spans], end) - 1
    if first > last:
        raise OffsetError(f"{where} hold no {unit}, only the whitespace between {unit}s")
    return first, last


@dataclass(frozen=True, kw_only=True)
class Occurrence:
    """One place a phrase was found: its characters in the document's text and its units."""

    start: int
    end: int
    first: int
    last: int


def _folded(text: str) -> tuple[str, list[int]]:
    """`text` with case folded and every run of whitespace made one space, and for each of
    its characters the position in `text` it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        if char.isspace():
            if chars and chars[-1] != " ":
                chars.append(" ")
                origin.append(i)
            continue
        for folded in char.casefold():
            chars.append(folded)
            origin.append(i)
    return "".join(chars), origin


def occurrences(document: Document, phrase: str) -> list[Occurrence]:
    """Every place `phrase` is found in the document (case and whitespace layout ignored),
    in order, overlapping ones too, with the units each touches."""
    wanted, _ = _folded(phrase.strip())
    if not wanted:
        raise OffsetError("the phrase is empty")
    text, _ = document.laid_out()
    folded, origin = _folded(text)
    found: list[Occurrence] = []
    at = folded.find(wanted)
    while at >= 0:
        start, end = origin[at], origin[at + len(wanted) - 1] + 1
        first, last = units_of(document, start, end)
        found.append(Occurrence(start=start, end=end, first=first, last=last))
        at = folded.find(wanted, at + 1)
    return found
