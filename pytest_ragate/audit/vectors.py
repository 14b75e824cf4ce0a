"""The embedding the audit's rules ask: all-MiniLM-L6-v2 as the built-in pipeline loads it
(`pipeline/retrieval.Embedder`, offline, from the packaged weights), each text's vector kept
on disk by its normalised text (`QueryVectors`, the cache the pipeline keeps its queries in),
so an audit run again embeds only what changed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pytest_ragate.audit.evidence import Embed


def cached_embed(cache_dir: Path) -> Embed:
    """A function from texts to unit vectors, kept under `cache_dir/queries`."""
    from pytest_ragate.pipeline.retrieval import Embedder, QueryVectors

    vectors = QueryVectors(cache_dir / "queries", Embedder(cache_dir=cache_dir))

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), np.float32)
        vectors.prefetch(texts)
        return np.stack([vectors.get(t) for t in texts])

    return embed
