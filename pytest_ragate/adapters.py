"""What LangChain, LlamaIndex and Haystack retrievers return, as ragate `Context`s.

Every team keeps the document id and the unit (turn, paragraph) range of a chunk under its own
metadata keys, so the keys are arguments; a missing one is an error that names it and the keys
the chunk does have. Each adapter needs its library (`pip install 'pytest-ragate[langchain]'`,
`[llamaindex]`, `[haystack]`), imported only when the adapter is called.

Scores: what a retriever calls its score is a distance for some (Chroma, FAISS through
LangChain), a similarity for others (LlamaIndex and Haystack embedding retrievers) and a rank
score with no scale for lexical ones (BM25). Nothing in a result says which, so nothing is
guessed: results that carry a score need `score=` to say what it is ("distance",
"similarity", or "none" to keep no distance), and results without scores need nothing. A
similarity s (a cosine, from -1 to 1) becomes the distance 1 - s; a score that cannot be what
`score=` says (a negative distance, a similarity past 1) is refused by name.

Units: a chunk whose metadata carries no unit range but whose splitter recorded where it lies
in its document (LlamaIndex's `start_char_idx`/`end_char_idx`, LangChain's `start_index`) is
mapped to the units those characters touch (`goldsets/offsets.py`), given the goldset's
corpus (`corpus=corpus_of(GOLDSET)`); the corpus's text at those characters must be the
chunk's, or the offsets were taken in another text and would name other units.

History: a turn of a conversation is asked with its earlier turns (`Asked.history`: each
turn's question and the answer this system gave it in this run). `langchain_history`,
`llamaindex_history` and `haystack_history` give them as the library's chat messages (a
user message per question, an assistant message per answer, in order), for a prompt's
history placeholder, a chat engine's `chat_history` or a chat generator's messages; a
question that is no turn, or a first turn, has none.
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pytest_ragate.answer import ROUNDING, Context

if TYPE_CHECKING:
    from pytest_ragate.answer import Earlier
    from pytest_ragate.goldsets.corpus import Corpus

ScoreKind = Literal["distance", "similarity", "none"]
SCORE_KINDS = ("score='distance' (lower is closer: Chroma, FAISS), 'similarity' (higher is "
               "closer: a cosine from -1 to 1, kept as the distance 1 - s) or 'none' (a "
               "rank-only retriever such as BM25: no distance)")


class AdapterError(ValueError):
    """A retrieved chunk that cannot become a Context; the message says which key is missing."""


def _library(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"this adapter needs {module.split('.')[0]}: pip install "
                          f"'pytest-ragate[{extra}]'") from error


Offsets = tuple[int, int]  # a chunk's characters start..end (end excluded) in its document


def _context(metadata: Mapping[str, Any], text: str, native_id: str | None,
             score: float | None, offsets: Offsets | None, *, doc_id_key: str,
             first_key: str, last_key: str, id_key: str | None,
             score_kind: ScoreKind | None, corpus: Corpus | None, where: str) -> Context:
    has_units = first_key in metadata and last_key in metadata
    missing = [k for k in (doc_id_key, *((first_key, last_key) if offsets is None else ()))
               if k not in metadata]
    if id_key is not None and id_key not in metadata:
        missing.append(id_key)
    if missing:
        raise AdapterError(f"{where}: metadata has no {', '.join(map(repr, missing))} (it has "
                           f"{', '.join(map(repr, sorted(metadata))) or 'no keys'}); pass "
                           "doc_id_key=, first_key=, last_key= naming yours")
    doc_id = metadata[doc_id_key]
    if has_units:
        first, last = metadata[first_key], metadata[last_key]
    else:
        assert offsets is not None
        first, last = _units(str(doc_id), offsets, text, corpus, where,
                             f"metadata has no {first_key!r}, {last_key!r}")
    context_id = str(metadata[id_key]) if id_key is not None else (
        native_id or f"{doc_id}:{first}-{last}")
    return Context(context_id=context_id, doc_id=str(doc_id), first_unit=first, last_unit=last,
                   text=text, distance=_distance(score, score_kind, where))


def _units(doc_id: str, offsets: Offsets, text: str, corpus: Corpus | None, where: str,
           no_units: str) -> tuple[int, int]:
    """The units a chunk's character offsets fall in, in the corpus's own document, whose
    text there must be the chunk's: offsets into another text would name other units."""
    from pytest_ragate.goldsets.offsets import OffsetError, units_of

    start, end = offsets
    if corpus is None:
        raise AdapterError(f"{where}: {no_units}, and it carries character offsets ({start}.."
                           f"{end} of {doc_id!r}): pass corpus=corpus_of(GOLDSET) "
                           "(pytest_ragate.adapters) to map them to units")
    if doc_id not in corpus:
        raise AdapterError(f"{where}: document {doc_id!r} is not in the corpus (it has "
                           f"{', '.join(map(repr, sorted(corpus.documents)[:5]))}"
                           f"{', …' if len(corpus) > 5 else ''})")
    document = corpus[doc_id]
    try:
        first, last = units_of(document, start, end, unit=corpus.unit)
    except OffsetError as error:
        raise AdapterError(f"{where}: {error}") from None
    there = document.laid_out()[0][start:end]
    if there != text:
        raise AdapterError(f"{where}: its text is not the corpus's at characters {start}..{end}"
                           f" of {doc_id!r} (the chunk: {_clip(text)}; the corpus: "
                           f"{_clip(there)}): split the documents' text as the corpus reads "
                           "it (docs/your-system.md, \"Chunks with character offsets\")")
    return first, last


def _clip(text: str, size: int = 40) -> str:
    return repr(text if len(text) <= size else text[:size] + "…")


def corpus_of(goldset: str | Path) -> Corpus:
    """The corpus of a goldset (its folder or `ragate.toml`), read as collection reads it:
    what `corpus=` maps a chunk's character offsets against. AdapterError when the corpus
    cannot be read."""
    from pytest_ragate.goldsets.loader import load_goldset_corpus
    from pytest_ragate.problems import GoldsetError

    try:
        return load_goldset_corpus(Path(goldset))
    except GoldsetError as error:
        raise AdapterError(f"the corpus of {goldset} cannot be read:\n{error}") from None


def _distance(score: object, kind: ScoreKind | None, where: str) -> float | None:
    """The distance a result's score stands for, as `kind` says; never a guess."""
    if kind == "none":
        return None
    if score is None:
        if kind is None:
            return None
        raise AdapterError(f"{where} carries no score, and score={kind!r} says it has one: "
                           "pass score='none' for results without scores")
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        raise AdapterError(f"{where}: its score {score!r} is not a number")
    value = float(score)
    if kind is None:
        raise AdapterError(f"{where} carries a score ({value:g}) and nothing says what it is: "
                           f"pass {SCORE_KINDS}")
    if kind == "distance" and value < -ROUNDING:
        raise AdapterError(f"{where}: score {value:g} is no distance (a distance is 0 or more, "
                           f"lower is closer); pass {SCORE_KINDS}")
    if kind == "similarity" and not -1.0 - ROUNDING <= value <= 1.0 + ROUNDING:
        raise AdapterError(f"{where}: score {value:g} is no similarity (a cosine runs from -1 "
                           "to 1; a BM25 or dot-product score has no such scale and no "
                           f"distance in it); pass {SCORE_KINDS}")
    return value if kind == "distance" else 1.0 - value


# metadata, text, native id, score, character offsets
Fields = tuple[Mapping[str, Any], str, str | None, float | None, Offsets | None]


def _adapt(results: Iterable[Any], kind: type, expected: str, fields: Any, where: str,
           keys: dict[str, Any]) -> list[Context]:
    """One Context per result in rank order; `fields(result)` gives metadata, text, native
    id and score of a result already known to be a `kind`."""
    if keys["score_kind"] not in (None, *get_args(ScoreKind)):
        raise AdapterError(f"score={keys['score_kind']!r} is none of {SCORE_KINDS}")
    contexts = []
    for rank, result in enumerate(results, 1):
        item = result[0] if isinstance(result, tuple) else result
        if not isinstance(item, kind):
            raise AdapterError(f"result {rank}: expected {expected}, got "
                               f"{type(item).__name__}")
        metadata, text, native_id, score, offsets = fields(result)
        contexts.append(_context(metadata, text, native_id, score, offsets,
                                 where=f"{where} {rank}", **keys))
    return contexts


def from_langchain(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                   first_key: str = "first_unit", last_key: str = "last_unit",
                   id_key: str | None = None, score: ScoreKind | None = None,
                   corpus: Corpus | None = None) -> list[Context]:
    """LangChain `Document`s (`similarity_search`) or `(Document, score)` pairs
    (`similarity_search_with_score`: a distance for Chroma and FAISS, a similarity for
    `InMemoryVectorStore` and `..._with_relevance_scores`; say which), in rank order. The
    context id is the document's `id`, else `metadata[id_key]`, else `doc:first-last`.
    Without the unit keys, a chunk a text splitter made with `add_start_index=True` is
    mapped to its units by its `start_index` in the `corpus` (`corpus_of`)."""
    documents = _library("langchain_core.documents", "langchain")

    def fields(result: Any) -> Fields:
        document, value = result if isinstance(result, tuple) else (result, None)
        start = document.metadata.get("start_index")
        offsets = None if not isinstance(start, int) or isinstance(start, bool) else (
            start, start + len(document.page_content))
        return document.metadata, document.page_content, document.id, value, offsets

    return _adapt(results, documents.Document, "a langchain Document", fields,
                  "LangChain result", _keys(doc_id_key, first_key, last_key, id_key, score,
                                            corpus))


def from_llamaindex(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                    first_key: str = "first_unit", last_key: str = "last_unit",
                    id_key: str | None = None, score: ScoreKind | None = None,
                    corpus: Corpus | None = None) -> list[Context]:
    """LlamaIndex `NodeWithScore`s (a retriever's `retrieve()`: a similarity for a vector
    index, a rank score for BM25; say which), in rank order. The context id is the node's
    `node_id` unless `id_key` names a metadata key. Without the unit keys, a node a node
    parser made (`start_char_idx`, `end_char_idx`) is mapped to its units in the `corpus`
    (`corpus_of`)."""
    schema = _library("llama_index.core.schema", "llamaindex")

    def fields(result: Any) -> Fields:
        node = result.node
        start, end = getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)
        offsets = (start, end) if isinstance(start, int) and isinstance(end, int) else None
        return node.metadata, node.get_content(), node.node_id, result.score, offsets

    return _adapt(results, schema.NodeWithScore, "a llama_index NodeWithScore", fields,
                  "LlamaIndex node", _keys(doc_id_key, first_key, last_key, id_key, score,
                                           corpus))


def from_haystack(results: Iterable[Any], *, doc_id_key: str = "doc_id",
                  first_key: str = "first_unit", last_key: str = "last_unit",
                  id_key: str | None = None, score: ScoreKind | None = None,
                  ) -> list[Context]:
    """Haystack `Document`s (a retriever's `documents` output: a similarity for an embedding
    retriever, a BM25 score for `InMemoryBM25Retriever`; say which), in rank order. The
    context id is the document's `id` unless `id_key` names a `meta` key."""
    dataclasses = _library("haystack.dataclasses", "haystack")

    def fields(result: Any) -> Fields:
        return result.meta, result.content or "", result.id, result.score, None

    return _adapt(results, dataclasses.Document, "a haystack Document", fields,
                  "Haystack document", _keys(doc_id_key, first_key, last_key, id_key, score,
                                             None))


def _keys(doc_id_key: str, first_key: str, last_key: str, id_key: str | None,
          score: ScoreKind | None, corpus: Corpus | None) -> dict[str, Any]:
    return dict(doc_id_key=doc_id_key, first_key=first_key, last_key=last_key, id_key=id_key,
                score_kind=score, corpus=corpus)


def _earlier(question: str) -> tuple[Earlier, ...]:
    """The earlier turns a `ragate_system` was given with its question (`Asked.history`);
    none for a plain `str`."""
    if not isinstance(question, str):
        raise AdapterError(f"expected the question a ragate_system is called with (a str, "
                           f"pytest_ragate.Asked for a turn), got {type(question).__name__}")
    return tuple(getattr(question, "history", ()))


def langchain_history(question: str) -> list[Any]:
    """The earlier turns of `question` as LangChain messages, in order: a `HumanMessage` per
    question, an `AIMessage` per answer this system gave it (for a `MessagesPlaceholder`, or
    `InMemoryChatMessageHistory(messages=...)`)."""
    messages = _library("langchain_core.messages", "langchain")
    return [message for e in _earlier(question)
            for message in (messages.HumanMessage(e.question), messages.AIMessage(e.answer.text))]


def llamaindex_history(question: str) -> list[Any]:
    """The earlier turns of `question` as LlamaIndex `ChatMessage`s, in order (user, then
    assistant), for a chat engine's `chat(question, chat_history=...)`."""
    llms = _library("llama_index.core.llms", "llamaindex")
    return [llms.ChatMessage(role=role, content=text) for e in _earlier(question)
            for role, text in ((llms.MessageRole.USER, e.question),
                               (llms.MessageRole.ASSISTANT, e.answer.text))]


def haystack_history(question: str) -> list[Any]:
    """The earlier turns of `question` as Haystack `ChatMessage`s, in order (`from_user`,
    then `from_assistant`), for a chat generator's `messages`."""
    dataclasses = _library("haystack.dataclasses", "haystack")
    chat = dataclasses.ChatMessage
    return [message for e in _earlier(question)
            for message in (chat.from_user(e.question), chat.from_assistant(e.answer.text))]
