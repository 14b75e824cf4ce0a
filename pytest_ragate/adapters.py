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


Fields = tuple[Mapping[str, Any], str, str | None, float | None]  # metadata, text, id, score


def _adapt(results: Iterable[Any], kind: type, expected: str, fields: Any, where: str,
           keys: dict[str, Any]) -> list[Context]:
    """One Context per result in rank order; `fields(result)` gives metadata, text, native
    id and score of a result already known to be a `kind`."""
    contexts = []
    for rank, result in enumerate(results, 1):
        item = result[0] if isinstance(result, tuple) else result
        if not isinstance(item, kind):
            raise AdapterError(f"result {rank}: expected {expected}, got "
                               f"{type(item).__name__}")
        metadata, text, native_id, score = fields(result)
        contexts.append(_context(metadata, text, native_id, score, where=f"{where} {rank}",
                                 **keys))
    return contexts


def from_langchain(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                   first_key: str = "first_unit", last_key: str = "last_unit",
                   id_key: str | None = None, score: ScoreKind = "distance") -> list[Context]:
    """LangChain `Document`s (`similarity_search`) or `(Document, score)` pairs
    (`similarity_search_with_score`), in rank order. The context id is the document's `id`,
    else `metadata[id_key]`, else `doc:first-last`."""
    documents = _library("langchain_core.documents", "langchain")

    def fields(result: Any) -> Fields:
        document, value = result if isinstance(result, tuple) else (result, None)
        return document.metadata, document.page_content, document.id, value

    return _adapt(results, documents.Document, "a langchain Document", fields,
                  "LangChain result", dict(doc_id_key=doc_id_key, first_key=first_key,
                                           last_key=last_key, id_key=id_key, score_kind=score))


def from_llamaindex(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                    first_key: str = "first_unit", last_key: str = "last_unit",
                    id_key: str | None = None, score: ScoreKind = "similarity",
                    ) -> list[Context]:
    """LlamaIndex `NodeWithScore`s (a retriever's `retrieve()`), in rank order. The context
    id is the node's `node_id` unless `id_key` names a metadata key."""
    schema = _library("llama_index.core.schema", "llamaindex")

    def fields(result: Any) -> Fields:
        return result.node.metadata, result.node.get_content(), result.node.node_id, \
            result.score

    return _adapt(results, schema.NodeWithScore, "a llama_index NodeWithScore", fields,
                  "LlamaIndex node", dict(doc_id_key=doc_id_key, first_key=first_key,
                                          last_key=last_key, id_key=id_key, score_kind=score))


def from_haystack(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                  first_key: str = "first_unit", last_key: str = "last_unit",
                  id_key: str | None = None, score: ScoreKind = "similarity",
                  ) -> list[Context]:
    """Haystack `Document`s (a retriever's `documents` output), in rank order. The context id
    is the document's `id` unless `id_key` names a `meta` key."""
    dataclasses = _library("haystack.dataclasses", "haystack")

    def fields(result: Any) -> Fields:
        return result.meta, result.content or "", result.id, result.score

    return _adapt(results, dataclasses.Document, "a haystack Document", fields,
                  "Haystack document", dict(doc_id_key=doc_id_key, first_key=first_key,
                                            last_key=last_key, id_key=id_key, score_kind=score))
