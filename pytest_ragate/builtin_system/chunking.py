"""Consecutive turns packed into chunks under a character budget.

A chunk knows the exact turn range it came from, which is all a citation is scored on; a turn
is split only when it alone exceeds the budget, and its pieces keep that turn's number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from pytest_ragate.answer import format_label
from pytest_ragate.builtin_system.normalize import fold, normalize
from pytest_ragate.goldsets.corpus import Corpus, Document, Turn
from pytest_ragate.settings import DEFAULT_BUDGET

_BREAK = re.compile(r"(?<=[.!?])\s+|\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
MIN_SENTENCE_WORDS = 4


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    first_unit: int
    last_unit: int
    text: str  # raw turn texts, one per line
    speakers: tuple[str, ...] = ()
    t_start: float | None = None
    t_end: float | None = None

    @property
    def label(self) -> str:
        """`[meeting · speaker · mm:ss–mm:ss]`, with what the corpus has."""
        return format_label(self.doc_id, self.speakers, self.t_start, self.t_end)

    @property
    def embed_text(self) -> str:
        return normalize(self.text)

    @property
    def sentences(self) -> list[str]:
        """Its sentences in the display rendering, each long enough to say something: what
        the extractive answerer quotes and the sentence rescue matches."""
        found = []
        for turn in self.text.split("\n"):
            for raw in _SENTENCE_END.split(turn):
                sentence = normalize(raw)
                if len(fold(sentence).split()) >= MIN_SENTENCE_WORDS:
                    found.append(sentence)
        return found


def _pieces(text: str, budget: int) -> list[str]:
    """An over-long turn cut at sentence or word boundaries into runs under the budget."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > budget:
        window = text[start:start + budget + 1]
        cuts = [m.end() for m in _BREAK.finditer(window) if 0 < m.start() <= budget]
        sentence_cuts = [c for c in cuts if window[:c].rstrip()[-1:] in ".!?"]
        cut = (sentence_cuts or cuts or [budget])[-1]
        pieces.append(text[start:start + cut].strip())
        start += cut
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


@dataclass(frozen=True)
class Chunker:
    """Packs turns under `budget` characters of normalised text (what gets embedded)."""

    budget: int = DEFAULT_BUDGET

    def __post_init__(self) -> None:
        if self.budget < 20:
            raise ValueError(f"chunk budget {self.budget} is too small (at least 20 characters)")

    @property
    def settings(self) -> dict[str, int | str]:
        return {"chunker": "turn-packing", "chunk_budget": self.budget}

    def chunk_document(self, doc: Document) -> Iterator[Chunk]:
        group: list[tuple[int, Turn]] = []
        size = 0
        for index, turn in enumerate(doc.turns):
            length = len(normalize(turn.text))
            if length == 0:
                if group:
                    group.append((index, turn))  # an empty turn rides along; it costs nothing
                continue
            if length > self.budget:
                if group:
                    yield self._chunk(doc, group)
                    group, size = [], 0
                for k, piece in enumerate(_pieces(turn.text, self.budget)):
                    yield self._chunk(doc, [(index, Turn(piece, turn.speaker, turn.t_start,
                                                         turn.t_end))], piece=k)
                continue
            if group and size + 1 + length > self.budget:
                yield self._chunk(doc, group)
                group, size = [], 0
            group.append((index, turn))
            size += length + (1 if size else 0)
        if group:
            yield self._chunk(doc, group)

    def chunk(self, corpus: Corpus) -> list[Chunk]:
        return [c for doc in corpus.documents.values() for c in self.chunk_document(doc)]

    @staticmethod
    def _chunk(doc: Document, group: list[tuple[int, Turn]], piece: int | None = None) -> Chunk:
        first, last = group[0][0], group[-1][0]
        turns = [t for _, t in group]
        speakers = tuple(dict.fromkeys(t.speaker for t in turns if t.speaker))
        starts = [t.t_start for t in turns if t.t_start is not None]
        ends = [t.t_end for t in turns if t.t_end is not None]
        suffix = f".p{piece}" if piece is not None else ""
        return Chunk(
            chunk_id=f"{doc.doc_id}#{first}-{last}{suffix}", doc_id=doc.doc_id,
            first_unit=first, last_unit=last, text="\n".join(t.text for t in turns),
            speakers=speakers, t_start=min(starts) if starts else None,
            t_end=max(ends) if ends else None)
