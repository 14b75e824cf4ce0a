"""Sentence-level retrieval rescue: pulling in the home chunks of the best-matching sentences.

A chunk's embedding averages everything said in it, so a chunk holding one decisive sentence
can rank below chatty neighbours. The rescue looks at sentences instead, on two paths: the
semantic one (a chunk's best sentence cosine must reach a floor) and the lexical one (content
words shared with the query, which catches wording the embedding misses). Their candidates are
merged round-robin so the cap starves neither, and added after the retrieved pool — nothing
already retrieved is moved or relabelled.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_ragate.builtin_system.normalize import fold

# Function words that carry no topic; short on purpose (content words decide the lexical path)
_STOPWORDS = """
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i if in into is it its just me more most my
no nor not now of off on once only or other our ours out over own same she should so some
such than that the their theirs them then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your
yours yeah okay ok oh well like so um uh mm hmm right yes gonna wanna kind sort thing things
something anything really think know mean get got going go said say says one two
"""
STOPWORDS = frozenset(_STOPWORDS.split())


def content_tokens(text: str) -> frozenset[str]:
    return frozenset(w for w in fold(text).split() if len(w) > 2 and w not in STOPWORDS)


@dataclass(frozen=True)
class RescueSettings:
    semantic_floor: float = 0.45   # a chunk's best sentence cosine must reach this
    lexical_overlap: float = 0.5   # share of the query's content words a sentence must hold
    lexical_min_words: int = 2     # and at least this many of them
    cap: int = 6                   # rescued chunks per query and document at most
    cap_fraction: float = 0.30     # ... and at most this share of the document's chunks
    front_matter_penalty: float = 0.0  # subtracted from a document's first chunk's scores

    def knobs(self) -> dict[str, float | int]:
        return {"rescue_semantic_floor": self.semantic_floor,
                "rescue_lexical_overlap": self.lexical_overlap, "rescue_cap": self.cap,
                "rescue_cap_fraction": self.cap_fraction,
                "rescue_front_matter_penalty": self.front_matter_penalty}


@dataclass
class SentenceRescue:
    """Built once per index: every stored sentence's home chunk and content words."""

    settings: RescueSettings
    sentence_collection: Any
    chunks_per_doc: dict[str, int]
    first_chunk: dict[str, str]
    _home: list[str] = field(default_factory=list)
    _doc: list[str] = field(default_factory=list)
    _words: list[frozenset[str]] = field(default_factory=list)
    _by_word: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))

    def __post_init__(self) -> None:
        got = self.sentence_collection.get(include=["documents", "metadatas"])
        for i, (text, meta) in enumerate(zip(got["documents"], got["metadatas"], strict=True)):
            self._home.append(str(meta["chunk_id"]))
            self._doc.append(str(meta["doc_id"]))
            words = content_tokens(text)
            self._words.append(words)
            for word in words:
                self._by_word[word].append(i)

    def _penalty(self, chunk_id: str, doc_id: str) -> float:
        return self.settings.front_matter_penalty if self.first_chunk.get(doc_id) == chunk_id \
            else 0.0

    def semantic(self, query: np.ndarray, depth: int = 60) -> list[tuple[str, str, float]]:
        """(chunk, doc, best sentence cosine) over the floor, best first."""
        n = min(depth, len(self._home))
        if n == 0:
            return []
        hit = self.sentence_collection.query(query_embeddings=[query.tolist()], n_results=n,
                                             include=["distances", "metadatas"])
        best: dict[str, tuple[str, float]] = {}
        for meta, distance in zip(hit["metadatas"][0], hit["distances"][0], strict=True):
            chunk, doc = str(meta["chunk_id"]), str(meta["doc_id"])
            score = 1.0 - float(distance) - self._penalty(chunk, doc)
            if score >= self.settings.semantic_floor and score > best.get(chunk, ("", -9))[1]:
                best[chunk] = (doc, score)
        return sorted(((c, d, s) for c, (d, s) in best.items()), key=lambda x: (-x[2], x[0]))

    def lexical(self, query: str) -> list[tuple[str, str, float]]:
        """(chunk, doc, best share of the query's content words) over the bar, best first."""
        words = content_tokens(query)
        if len(words) < self.settings.lexical_min_words:
            return []
        counts: dict[int, int] = defaultdict(int)
        for word in words:
            for i in self._by_word.get(word, ()):
                counts[i] += 1
        best: dict[str, tuple[str, float]] = {}
        for i, shared in counts.items():
            if shared < self.settings.lexical_min_words:
                continue
            chunk, doc = self._home[i], self._doc[i]
            score = shared / len(words) - self._penalty(chunk, doc)
            if score >= self.settings.lexical_overlap and score > best.get(chunk, ("", -9))[1]:
                best[chunk] = (doc, score)
        return sorted(((c, d, s) for c, (d, s) in best.items()), key=lambda x: (-x[2], x[0]))

    def rescue(self, query: str, embedding: np.ndarray, pool: Iterable[str]) -> list[str]:
        """Chunk ids to add after `pool`, round-robin over both paths, capped per document."""
        taken = set(pool)
        per_doc: dict[str, int] = defaultdict(int)
        added: list[str] = []
        paths = [iter(self.semantic(embedding)), iter(self.lexical(query))]
        while paths and len(added) < self.settings.cap:
            for path in list(paths):
                for chunk, doc, _score in path:
                    limit = min(self.settings.cap, round(self.settings.cap_fraction
                                                         * self.chunks_per_doc.get(doc, 0)))
                    if chunk in taken or per_doc[doc] >= limit:
                        continue
                    taken.add(chunk)
                    per_doc[doc] += 1
                    added.append(chunk)
                    break
                else:
                    paths.remove(path)
                if len(added) >= self.settings.cap:
                    break
        return added
