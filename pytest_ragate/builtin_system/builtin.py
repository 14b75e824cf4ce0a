"""The embedded default pipeline's per-process objects: embedder, indexes, answerer.

The heavy parts (torch, chromadb) are imported only when a fixture first asks for them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.builtin_system.chunking import Chunker
from pytest_ragate.goldsets.corpus import Corpus
from pytest_ragate.settings import PipelineSettings, read_settings

if TYPE_CHECKING:
    from pytest_ragate.builtin_system.extractive import ExtractiveAnswerer
    from pytest_ragate.builtin_system.hybrid import Bm25Index
    from pytest_ragate.builtin_system.rescue import SentenceRescue
    from pytest_ragate.builtin_system.retrieval import ChunkIndex, Embedder, QueryVectors, Retriever

PIPELINE_KEY = pytest.StashKey["Pipeline"]()

def _require_bm25s() -> None:
    """The hybrid retriever (the default) needs bm25s; without it every question errors, it
    never falls back to the dense retriever."""
    try:
        import bm25s  # noqa: F401
    except ImportError as error:
        raise ImportError("the built-in hybrid retriever (the default) needs bm25s: pip install "
                          "'pytest-ragate[embed]', or choose the dense one with "
                          "ragate_retriever = dense in the ini file") from error


@dataclass
class Pipeline:
    """One per process: the embedder and the indexes it opened, shared by every item."""

    config: pytest.Config
    settings: PipelineSettings
    _embedder: Embedder | None = None
    indexes: dict[tuple[str, str], ChunkIndex] = field(default_factory=dict)
    rescues: dict[str, SentenceRescue] = field(default_factory=dict)
    lexical: dict[str, Bm25Index] = field(default_factory=dict)  # per index key, built once
    _queries: QueryVectors | None = None
    _prefetched: bool = False

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from pytest_ragate.builtin_system.retrieval import Embedder

            self._embedder = Embedder(threads=self._fair_share(),
                                      encoder=self.settings.encoder,
                                      cache_dir=self.cache_dir())
        return self._embedder

    def retriever_label(self) -> str:
        """The built-in retriever as the run's provenance names it, with the encoder that
        embedded (and, after a fallback, why it is not ONNX Runtime)."""
        if self.settings.retriever == "hybrid":
            from pytest_ragate.builtin_system.hybrid import RRF_K

            return (f"built-in hybrid retriever (all-MiniLM-L6-v2 ({self.embedder.label}) + "
                    f"bm25s, RRF k={RRF_K})")
        return f"built-in Chroma retriever (all-MiniLM-L6-v2, {self.embedder.label})"

    def _fair_share(self) -> int | None:
        """Under xdist, each worker gets its share of the cores: N workers each running
        torch on every core spin against each other and run several times slower."""
        workerinput = getattr(self.config, "workerinput", None)
        if not workerinput:
            return None
        workers = int(workerinput.get("workercount", 1))
        return max(1, (os.cpu_count() or 1) // workers)

    def cache_dir(self) -> Path:
        if self.settings.index_dir:
            return Path(self.settings.index_dir)
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            return Path(cache.mkdir("ragate-index"))
        return self.config.rootpath / ".ragate-index"

    def chunker(self) -> Chunker:
        return Chunker(self.settings.chunk_budget)

    def index(self, corpus: Corpus, chunker: Chunker) -> ChunkIndex:
        from pytest_ragate.builtin_system.retrieval import index_key, open_index

        key = (index_key(corpus, chunker, self.embedder.model_id, self.embedder.encoder_id),
               self.settings.chroma_url or "")
        if key not in self.indexes:
            with self._terminal() as stream:
                progress = _ProgressBar(stream, f"ragate: embedding {len(corpus)} documents")
                try:
                    self.indexes[key] = open_index(
                        corpus, chunker, self.embedder, cache_dir=self.cache_dir(),
                        url=self.settings.chroma_url, progress=progress)
                finally:
                    progress.close()
        return self.indexes[key]

    @property
    def queries(self) -> QueryVectors:
        if self._queries is None:
            from pytest_ragate.builtin_system.retrieval import QueryVectors

            self._queries = QueryVectors(self.cache_dir() / "queries", self.embedder)
        return self._queries

    def retriever(self, corpus: Corpus, chunker: Chunker,
                  known: Callable[[], Sequence[str]] | None = None) -> Retriever:
        """`known()`: every query the session's items will ask (questions and anchor claims),
        asked for once per process and embedded in one batch instead of one model call per
        item."""
        from pytest_ragate.builtin_system.hybrid import FUSION_DEPTH, RRF_K, Bm25Index
        from pytest_ragate.builtin_system.retrieval import Retriever

        if self.settings.retriever == "hybrid":  # before embedding: without bm25s, fail fast
            _require_bm25s()
        index = self.index(corpus, chunker)
        if known is not None and not self._prefetched:
            self._prefetched = True
            self.queries.prefetch(known())
        knobs: dict[str, Any] = {**chunker.settings, "retriever": self.settings.retriever,
                                 "rescue": self.settings.rescue}
        lexical = None
        if self.settings.retriever == "hybrid":
            lexical = self.lexical.get(index.key)
            if lexical is None:
                lexical = self.lexical[index.key] = Bm25Index.build(list(index.chunks.values()))
            knobs.update({"rrf_k": RRF_K, "fusion_depth": FUSION_DEPTH})
        rescue = None
        if self.settings.rescue:
            rescue = self.rescues.get(index.key)
            if rescue is None:
                rescue = self.rescues[index.key] = self._rescue(index)
            knobs.update(rescue.settings.knobs())
        return Retriever(index, self.embedder, self.settings.top_k, knobs=knobs, rescue=rescue,
                         queries=self.queries, lexical=lexical)

    def _rescue(self, index: ChunkIndex) -> SentenceRescue:
        from collections import Counter

        from pytest_ragate.builtin_system.rescue import RescueSettings, SentenceRescue

        s = self.settings
        chunks = list(index.chunks.values())
        first: dict[str, str] = {}
        for chunk in chunks:
            first.setdefault(chunk.doc_id, chunk.chunk_id)
        return SentenceRescue(
            RescueSettings(s.rescue_semantic_floor, s.rescue_lexical_overlap, 2, s.rescue_cap,
                           s.rescue_cap_fraction, s.rescue_front_matter_penalty),
            index.sentence_collection, dict(Counter(c.doc_id for c in chunks)), first)

    def system(self, retriever: Retriever) -> ExtractiveAnswerer:
        """The built-in answerer over the built-in retriever: it reads that retriever's
        sentence vectors and cosine distances, which a retriever of your own does not have."""
        from pytest_ragate.builtin_system.extractive import ExtractiveAnswerer
        from pytest_ragate.builtin_system.retrieval import Retriever

        if not isinstance(retriever, Retriever):
            raise TypeError("the built-in ragate_system answers over the built-in retriever "
                            "only (it abstains on its cosine distances and quotes its "
                            "sentences): override ragate_system too when you override "
                            f"ragate_retriever (got {type(retriever).__name__})")
        return ExtractiveAnswerer(retriever, self.settings.max_distance, self.settings.support)

    @contextmanager
    def _terminal(self) -> Iterator[Any]:
        """Lift pytest's capture while an index builds, so its progress bar is seen."""
        capman = self.config.pluginmanager.getplugin("capturemanager")
        with nullcontext() if capman is None else capman.global_and_fixture_disabled():
            yield sys.stderr


class _ProgressBar:
    """A tqdm bar that appears only when embedding actually happens (a cold index)."""

    def __init__(self, stream: Any, description: str) -> None:
        self.stream = stream
        self.description = description
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.description, unit="chunk", file=self.stream,
                            leave=True, mininterval=0.5)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def pipeline(config: pytest.Config) -> Pipeline:
    found = config.stash.get(PIPELINE_KEY, None)
    if found is None:
        found = config.stash[PIPELINE_KEY] = Pipeline(config, read_settings(config).pipeline)
    return found
