"""What LangChain, LlamaIndex and Haystack retrievers return, as ragate `Context`s.

Every team keeps the document id and the unit (turn, paragraph) range of a chunk under its own
metadata keys, so the keys are arguments; a missing one is an error that names it and the keys
the chunk does have. Each adapter needs its library (`pip install 'pytest-ragate[langchain]'`,
`[llamaindex]`, `[haystack]`), imported only when the adapter is called.

Scores: a vector store's "score" is a distance for some (Chroma, FAISS through LangChain) and a
similarity for others (LlamaIndex, Haystack). `score` says which; a similarity s becomes the
distance 1 - s, which is the cosine distance when s is a cosine similarity.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pytest_ragate.answer import Context

ScoreKind = Literal["distance", "similarity"]


class AdapterError(ValueError):
    """A retrieved chunk that cannot become a Context; the message says which key is missing."""


def _library(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"this adapter needs {module.split('.')[0]}: pip install "
                          f"'pytest-ragate[{extra}]'") from error


def _context(metadata: Mapping[str, Any], text: str, native_id: str | None,
             score: float | None, *, doc_id_key: str, first_key: str, last_key: str,
             id_key: str | None, score_kind: ScoreKind, where: str) -> Context:
    missing = [k for k in (doc_id_key, first_key, last_key) if k not in metadata]
    if id_key is not None and id_key not in metadata:
        missing.append(id_key)
    if missing:
        raise AdapterError(f"{where}: metadata has no {', '.join(map(repr, missing))} (it has "
                           f"{', '.join(map(repr, sorted(metadata))) or 'no keys'}); pass "
                           "doc_id_key=, first_key=, last_key= naming yours")
    doc_id, first, last = metadata[doc_id_key], metadata[first_key], metadata[last_key]
    context_id = str(metadata[id_key]) if id_key is not None else (
        native_id or f"{doc_id}:{first}-{last}")
    distance = None
    if score is not None:
        distance = float(score) if score_kind == "distance" else 1.0 - float(score)
    return Context(context_id=context_id, doc_id=str(doc_id), first_turn=first, last_turn=last,
                   text=text, distance=distance)


def from_langchain(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                   first_key: str = "first_unit", last_key: str = "last_unit",
                   id_key: str | None = None, score: ScoreKind = "distance") -> list[Context]:
    """LangChain `Document`s (`similarity_search`) or `(Document, score)` pairs
    (`similarity_search_with_score`), in rank order. The context id is the document's `id`,
    else `metadata[id_key]`, else `doc:first-last`."""
    documents = _library("langchain_core.documents", "langchain")
    contexts = []
    for rank, result in enumerate(results, 1):
        document, value = result if isinstance(result, tuple) else (result, None)
        if not isinstance(document, documents.Document):
            raise AdapterError(f"result {rank}: expected a langchain Document, got "
                               f"{type(document).__name__}")
        contexts.append(_context(document.metadata, document.page_content, document.id, value,
                                 doc_id_key=doc_id_key, first_key=first_key,
                                 last_key=last_key, id_key=id_key, score_kind=score,
                                 where=f"LangChain result {rank}"))
    return contexts


def from_llamaindex(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                    first_key: str = "first_unit", last_key: str = "last_unit",
                    id_key: str | None = None, score: ScoreKind = "similarity",
                    ) -> list[Context]:
    """LlamaIndex `NodeWithScore`s (a retriever's `retrieve()`), in rank order. The context
    id is the node's `node_id` unless `id_key` names a metadata key."""
    schema = _library("llama_index.core.schema", "llamaindex")
    contexts = []
    for rank, result in enumerate(results, 1):
        if not isinstance(result, schema.NodeWithScore):
            raise AdapterError(f"result {rank}: expected a llama_index NodeWithScore, got "
                               f"{type(result).__name__}")
        node = result.node
        contexts.append(_context(node.metadata, node.get_content(), node.node_id, result.score,
                                 doc_id_key=doc_id_key, first_key=first_key,
                                 last_key=last_key, id_key=id_key, score_kind=score,
                                 where=f"LlamaIndex node {rank}"))
    return contexts


def from_haystack(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                  first_key: str = "first_unit", last_key: str = "last_unit",
                  id_key: str | None = None, score: ScoreKind = "similarity",
                  ) -> list[Context]:
    """Haystack `Document`s (a retriever's `documents` output), in rank order. The context id
    is the document's `id` unless `id_key` names a `meta` key."""
    dataclasses = _library("haystack.dataclasses", "haystack")
    contexts = []
    for rank, document in enumerate(results, 1):
        if not isinstance(document, dataclasses.Document):
            raise AdapterError(f"result {rank}: expected a haystack Document, got "
                               f"{type(document).__name__}")
        contexts.append(_context(document.meta, document.content or "", document.id,
                                 document.score, doc_id_key=doc_id_key, first_key=first_key,
                                 last_key=last_key, id_key=id_key, score_kind=score,
                                 where=f"Haystack document {rank}"))
    return contexts
