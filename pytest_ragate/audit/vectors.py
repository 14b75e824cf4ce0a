"""The embedding the audit's rules ask: all-MiniLM-L6-v2 as the built-in pipeline loads it
(`builtin_system/retrieval.Embedder`, offline, from the packaged weights), each text's vector kept
on disk by its normalised text (`QueryVectors`, the cache the pipeline keeps its queries in),
so an audit run again embeds only what changed. A sealed goldset's texts are embedded in
memory only: the cache is keyed by the text itself, and its gists (and which corpus windows
are its evidence) are sealed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pytest_ragate.audit.evidence import Embed

WIDTH = 384  # all-MiniLM-L6-v2's vectors


class AuditEmbedding:
    """One model for every goldset of an audit: `embed(sealed)` is the goldset's `Embed`,
    kept under `cache_dir/queries` unless the goldset is sealed."""

    def __init__(self, cache_dir: Path) -> None:
        from pytest_ragate.builtin_system.retrieval import Embedder, QueryVectors

        self._embedder = Embedder(cache_dir=cache_dir)
        self._vectors = QueryVectors(cache_dir / "queries", self._embedder)

    def _kept(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, WIDTH), np.float32)
        self._vectors.prefetch(texts)
        return np.stack([self._vectors.get(t) for t in texts])

    def _in_memory(self, texts: Sequence[str]) -> np.ndarray:
        from pytest_ragate.builtin_system.normalize import normalize

        if not texts:
            return np.zeros((0, WIDTH), np.float32)
        return self._embedder.encode([normalize(t) for t in texts]).astype(np.float32)

    def embed(self, sealed: bool) -> Embed:
        return self._in_memory if sealed else self._kept


def cached_embed(cache_dir: Path) -> Embed:
    """A function from texts to unit vectors, kept under `cache_dir/queries` (never give it
    a sealed goldset's texts: `AuditEmbedding`)."""
    return AuditEmbedding(cache_dir).embed(sealed=False)
