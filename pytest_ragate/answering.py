"""The default system under test: an extractive answerer over the default retriever.

It answers only with sentences it read, cites the contexts they came from with verbatim
quotes, and abstains when retrieval found nothing close or no sentence supports an answer.
It is a baseline to gate, not a model: every threshold is a knob recorded on each row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from pytest_ragate.answer import Answer, Citation, Context, Knob
from pytest_ragate.normalize import fold, normalize, quote_matches
from pytest_ragate.retrieval import Retriever

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
MIN_WORDS = 4

DEFAULT_MAX_DISTANCE = 0.6
DEFAULT_SUPPORT = 0.45
DEFAULT_MAX_SENTENCES = 2


def sentences(context: Context) -> list[str]:
    """The context's sentences, each normalised for display and long enough to say something."""
    found = []
    for turn in context.text.split("\n"):
        for raw in _SENTENCE_END.split(turn):
            sentence = normalize(raw)
            if len(fold(sentence).split()) >= MIN_WORDS:
                found.append(sentence)
    return found


@dataclass
class ExtractiveAnswerer:
    retriever: Retriever
    max_distance: float = DEFAULT_MAX_DISTANCE
    support: float = DEFAULT_SUPPORT
    max_sentences: int = DEFAULT_MAX_SENTENCES

    @property
    def knobs(self) -> dict[str, Knob]:
        return {**self.retriever.knobs, "top_k": self.retriever.top_k,
                "max_distance": self.max_distance, "support_threshold": self.support,
                "max_sentences": self.max_sentences,
                "embedding_model": self.retriever.embedder.model_id}

    def __call__(self, question: str) -> Answer:
        query = self.retriever.embed_query(question)
        contexts = self.retriever.search(query, self.retriever.top_k)
        nearest = min((c.distance for c in contexts if c.distance is not None), default=None)
        if nearest is None or nearest > self.max_distance:
            return Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        candidates = [(s, c) for c in contexts if (c.distance or 0.0) <= self.max_distance
                      for s in sentences(c)]
        if not candidates:
            return Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        vectors = self.retriever.embedder.encode([s for s, _ in candidates])
        scores = vectors @ query
        order = np.argsort(-scores, kind="stable")
        picked: list[tuple[str, Context]] = []
        for i in order[: self.max_sentences]:
            if scores[i] < self.support:
                break
            sentence, context = candidates[int(i)]
            if quote_matches(sentence, context.text):
                picked.append((sentence, context))
        if not picked:
            return Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        return Answer(text=" ".join(s for s, _ in picked), contexts=contexts,
                      citations=[Citation(context_id=c.context_id, quote=s) for s, c in picked],
                      knobs=self.knobs)
