"""The default system under test: an extractive answerer over the default retriever.

It answers only with sentences it read, cites the contexts they came from with verbatim
quotes, and abstains when retrieval found nothing close or no sentence supports an answer.
It is a baseline to gate, not a model: every threshold is a knob recorded on each row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pytest_ragate.answer import Answer, Citation, Context, Knob
from pytest_ragate.builtin_system import follow_up_query
from pytest_ragate.builtin_system.normalize import quote_matches
from pytest_ragate.builtin_system.retrieval import Retriever


@dataclass
class ExtractiveAnswerer:
    retriever: Retriever
    max_distance: float
    support: float
    max_sentences: int = 2

    @property
    def knobs(self) -> dict[str, Knob]:
        return {**self.retriever.knobs, "top_k": self.retriever.top_k,
                "max_distance": self.max_distance, "support_threshold": self.support,
                "max_sentences": self.max_sentences,
                "embedding_model": self.retriever.embedder.model_id}

    def __call__(self, question: str) -> Answer:
        history = getattr(question, "history", ())  # a conversation's turn (`ragate.Asked`)
        question = follow_up_query(history[-1].question if history else None, str(question))
        query = self.retriever.embed_query(question)
        contexts = self.retriever.search(query, self.retriever.top_k, question)
        pool = Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        if any(c.distance is None for c in contexts):
            raise ValueError(f"the built-in answerer abstains past max_distance "
                             f"{self.max_distance} and needs every context's distance; without "
                             "one: " + ", ".join(c.context_id for c in contexts
                                                 if c.distance is None))
        nearest = pool.nearest_distance
        if nearest is None or nearest > self.max_distance:
            return pool
        near = {c.context_id: c for c in contexts
                if c.distance is not None and c.distance <= self.max_distance}
        candidates = self.retriever.index.sentences(list(near))
        if not candidates:
            return Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        scores = np.vstack([s.vector for s in candidates]) @ query
        order = np.argsort(-scores, kind="stable")
        picked: list[tuple[str, Context]] = []
        for i in order[: self.max_sentences]:
            if scores[i] < self.support:
                break
            sentence, context = candidates[int(i)].text, near[candidates[int(i)].chunk_id]
            if quote_matches(sentence, context.text):
                picked.append((sentence, context))
        if not picked:
            return Answer(abstained=True, contexts=contexts, knobs=self.knobs)
        return Answer(text=" ".join(s for s, _ in picked), contexts=contexts,
                      citations=[Citation(context_id=c.context_id, quote=s) for s, c in picked],
                      knobs=self.knobs)
