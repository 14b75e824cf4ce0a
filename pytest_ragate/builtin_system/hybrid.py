"""The lexical half of the hybrid retriever: bm25s over the dense index's own chunks, and the
reciprocal rank fusion of the two rankings.

Why: on the shipped goldsets a dense ranking misses the chunks a question names by a rare
word (a name, a product, a figure) that all-MiniLM-L6-v2 smooths away, and bm25 misses the
paraphrases the dense ranking finds; fusing by rank needs no score calibration between them
(benchmarks/retrieval_recall.py measures both alone and fused).

The bm25 index is built in memory from the chunks, once per process and corpus (the pipeline
keeps it beside the dense index): it is cheap to build (well under a second for the shipped
corpora) and depends only on the chunk texts, so it needs no disk cache of its own.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from pytest_ragate.builtin_system.chunking import Chunk
from pytest_ragate.builtin_system.normalize import fold

STOPWORDS = "en"  # bm25s's short English list (Lucene's 33 words)
RRF_K = 60  # the constant of Cormack et al. (2009), as in the benchmark
FUSION_DEPTH = 100  # each ranking is cut here before fusion
H = TypeVar("H", bound=Hashable)


def rrf(rankings: Sequence[Sequence[H]], k: int = RRF_K) -> list[H]:
    """Reciprocal rank fusion: score = sum over rankings of 1 / (k + rank), rank 1-based.
    Ties go to the better best rank, then to the first ranking's order (so the result does
    not depend on hashing)."""
    score: dict[H, float] = {}
    best: dict[H, int] = {}
    first_seen: dict[H, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
            first_seen.setdefault(item, len(first_seen))
    return sorted(score, key=lambda i: (-score[i], best[i], first_seen[i]))


@dataclass
class Bm25Index:
    """bm25s (Lucene variant, k1 1.5, b 0.75, English stopwords, no stemming) over
    `fold(chunk.embed_text)`; queries are folded the same way."""

    chunk_ids: list[str]
    model: Any

    @classmethod
    def build(cls, chunks: Sequence[Chunk]) -> Bm25Index:
        import bm25s  # the [embed] extra's; the retriever module imports this one always

        tokens = bm25s.tokenize([fold(c.embed_text) for c in chunks], stopwords=STOPWORDS,
                                return_ids=False, show_progress=False)
        model = bm25s.BM25()
        model.index(tokens, show_progress=False)
        return cls([c.chunk_id for c in chunks], model)

    def rank(self, query: str, depth: int = FUSION_DEPTH) -> list[str]:
        """Chunk ids by bm25 score, best first, ties in corpus order; chunks scoring zero are
        left out (they share no term with the query)."""
        import bm25s

        tokens = bm25s.tokenize([fold(query)], stopwords=STOPWORDS, return_ids=False,
                                show_progress=False)[0]
        tokens = [t for t in tokens if t]
        if not tokens or not self.chunk_ids:
            return []
        scores = np.asarray(self.model.get_scores(tokens))
        order = np.argsort(-scores, kind="stable")[:depth]
        return [self.chunk_ids[int(i)] for i in order if scores[int(i)] > 0]
