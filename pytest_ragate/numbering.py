"""`ragate units`: a goldset's corpus documents with their unit numbers, and the units that
hold a phrase, so evidence is written by reading, not by counting paragraphs.

Both read the corpus as collection does (`load_goldset_corpus`), and a phrase is found as
`goldsets/offsets.py` finds it (case and whitespace layout ignored), each place it is found
given as the evidence line to paste into `expected.jsonl`.
"""

from __future__ import annotations

import difflib
import json
import textwrap
from pathlib import Path

from pytest_ragate.goldsets.corpus import Corpus, Document
from pytest_ragate.goldsets.offsets import occurrences

SHOWN = 72  # characters of a unit shown beside a found phrase


class UnknownDocument(LookupError):
    """A document id the corpus does not hold; the message names close ones."""


def document_of(corpus: Corpus, doc_id: str) -> Document:
    """The document, or UnknownDocument naming the ids close to `doc_id`."""
    if doc_id in corpus:
        return corpus[doc_id]
    close = difflib.get_close_matches(doc_id, list(corpus.documents), n=3, cutoff=0.6)
    hint = (f"did you mean {', '.join(close)}?" if close else
            f"it has {', '.join(sorted(corpus.documents)[:5])}"
            + (", …" if len(corpus) > 5 else ""))
    raise UnknownDocument(f"no document {doc_id!r} in the corpus ({len(corpus)} documents; "
                          f"{hint})")


def overview(corpus: Corpus, root: Path) -> list[str]:
    """One line per document: its id, how many units, and its file."""
    return [f"{doc.doc_id}: {len(doc.turns)} {corpus.unit}s ({_shown_path(doc.source, root)})"
            for doc in corpus.documents.values()]


def numbered(corpus: Corpus, document: Document, root: Path) -> list[str]:
    """The document unit by unit, each led by its number (a speaker, when it has one)."""
    width = len(str(len(document.turns) - 1))
    lines = [f"{document.doc_id}: {len(document.turns)} {corpus.unit}s, numbered from 0 "
             f"({_shown_path(document.source, root)})"]
    for number, turn in enumerate(document.turns):
        text = f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
        first, *rest = text.splitlines() or [""]
        lines.append(f"{number:>{width}}  {first}")
        lines += [f"{'':>{width}}  {line}" for line in rest]
    return lines


def found(corpus: Corpus, documents: list[Document], phrase: str) -> list[str]:
    """Each place `phrase` is found in `documents`: its units, the text there and the
    evidence that names them; empty when it is found nowhere."""
    lines: list[str] = []
    for document in documents:
        text, _ = document.laid_out()
        for place in occurrences(document, phrase):
            units = (f"{corpus.unit} {place.first}" if place.first == place.last
                     else f"{corpus.unit}s {place.first}-{place.last}")
            evidence = {"doc_id": document.doc_id, "first_unit": place.first,
                        "last_unit": place.last}
            lines += [f"{document.doc_id} {units}: {_around(text, place.start, place.end)}",
                      f"  {json.dumps(evidence)}"]
    return lines


def _around(text: str, start: int, end: int) -> str:
    """The found text with a little of what surrounds it, on one line."""
    before = " ".join(text[max(0, start - 20):start].split())
    after = " ".join(text[end:end + 20].split())
    middle = " ".join(text[start:end].split())
    shown = textwrap.shorten(middle, SHOWN, placeholder=" …")
    return f"…{before} «{shown}» {after}…"


def _shown_path(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)
