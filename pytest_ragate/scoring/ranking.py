"""Rank-aware retrieval measures of one ranked list: reciprocal rank, hit, precision and nDCG
at a depth k, as IR defines them (and `ranx` computes them: tests/test_rank_metrics.py).

A ranked list is given as each position's gain, in rank order: 0 for a context that is not
relevant, and for a relevant one the share of it that is evidence, in (0, 1]
(`records.EvidenceIndex.gains`). Reciprocal rank, hit and precision read only whether a
gain is above 0; nDCG reads the gains. A leaf module: plain Python only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def reciprocal_rank(gains: Sequence[float], k: int) -> float:
    """1 / the rank of the first relevant context among the first k; 0 when none is."""
    return next((1.0 / rank for rank, g in enumerate(gains[:k], 1) if g > 0), 0.0)


def hit(gains: Sequence[float], k: int) -> float:
    """1 when some context among the first k is relevant, else 0."""
    return 1.0 if any(g > 0 for g in gains[:k]) else 0.0


def precision(gains: Sequence[float], k: int) -> float:
    """The relevant contexts among the first k, over k (a list shorter than k is not
    forgiven its missing places, as trec_eval and ranx count it)."""
    return sum(g > 0 for g in gains[:k]) / k


def dcg(gains: Sequence[float], k: int) -> float:
    """Discounted cumulative gain of the first k: the sum of gain / log2(rank + 1)."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains[:k], 1))


def ndcg(gains: Sequence[float], ideal: Sequence[float], k: int) -> float:
    """DCG of the first k over the DCG of the best ordering of `ideal` (every gain a
    relevant item could have, in any order); 0 when the ideal has no gain."""
    best = dcg(sorted(ideal, reverse=True), k)
    return dcg(gains, k) / best if best > 0 else 0.0


def ideal_gains(gains: Sequence[float], spans: int) -> list[float]:
    """The ideal ranking of a question with `spans` pieces of evidence: each piece retrieved
    as one context that is all evidence (gain 1), ranked first; where the list holds more
    relevant contexts than that, their gains (best first) fill the places after, so the
    ideal is never worse than the list itself (nDCG <= 1, and retrieving a span in pieces is
    measured against its pieces, not rewarded past 1)."""
    found = sorted((g for g in gains if g > 0), reverse=True)
    return [max(1.0 if i < spans else 0.0, found[i] if i < len(found) else 0.0)
            for i in range(max(spans, len(found)))]
