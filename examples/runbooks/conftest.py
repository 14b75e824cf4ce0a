"""An on-call team's own RAG system over its runbooks and HR policies, as a team would bring
it: paragraphs in a Haystack `InMemoryDocumentStore`, ranked by Haystack's
`InMemoryBM25Retriever` (rank only: a BM25 score has no scale, so the contexts carry no
distance), an extractive answer that cites the paragraphs it quotes, and a lexical abstention
rule. ragate gates it; nothing here is ragate's built-in pipeline."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from pytest_ragate import Answer, Citation, Context, split_paragraphs
from pytest_ragate.adapters import from_haystack

DOCS = Path(__file__).parent / "docs"
TOP_K = 3
MIN_SHARED = 2  # a paragraph is quoted only if it shares this many content words with the question
STEM = 5  # words compared on their first 5 letters: "renews", "renewed", "renewal" are one word
STOPWORDS = frozenset((
    "a", "an", "and", "are", "can", "day", "days", "do", "does", "for", "from", "get", "how",
    "i", "if", "in", "is", "it", "many", "much", "my", "of", "on", "or", "the", "to", "we",
    "what", "when", "where", "which", "who", "why", "with"))  # "day(s)": every policy counts them


def content_words(text: str) -> set[str]:
    """The words of `text` that carry its meaning, cut to a common stem."""
    return {word[:STEM] for word in re.findall(r"[a-z0-9]+", text.lower())
            if word not in STOPWORDS and len(word) > 2}


def best_sentence(question: set[str], paragraph: str) -> str:
    """The sentence of `paragraph` that shares the most words with the question."""
    sentences = re.split(r"(?<=\.)\s+", paragraph.strip())
    return max(sentences, key=lambda sentence: len(question & content_words(sentence)))


@pytest.fixture(scope="session")
def runbook_store() -> InMemoryDocumentStore:
    """One Haystack Document per paragraph, numbered the way ragate numbers units
    (`split_paragraphs`), so the goldset's evidence and the store agree."""
    store = InMemoryDocumentStore()
    store.write_documents([
        Document(id=f"{path.stem}#{unit}", content=text,
                 meta={"doc_id": path.stem, "first_unit": unit, "last_unit": unit})
        for path in sorted(DOCS.iterdir())
        for unit, text in enumerate(split_paragraphs(path.read_text(encoding="utf-8")))])
    return store


@pytest.fixture(scope="session")
def ragate_retriever(runbook_store: InMemoryDocumentStore) -> Callable[[str], list[Context]]:
    """BM25 over the paragraphs, best first. Named `ragate_retriever` so that every results
    row and report names it as the retriever that ran."""
    bm25 = InMemoryBM25Retriever(runbook_store, top_k=TOP_K)

    def retrieve(question: str) -> list[Context]:
        return from_haystack(bm25.run(query=question)["documents"], score="none")

    return retrieve


@pytest.fixture(scope="session")
def ragate_system(ragate_retriever: Callable[[str], list[Context]]) -> Callable[[str], Answer]:
    """Quote the best sentence of each retrieved paragraph that shares `MIN_SHARED` content
    words with the question, citing it; abstain when none does."""

    def answer(question: str) -> Answer:
        contexts = ragate_retriever(question)
        words = content_words(question)
        quoted = [c for c in contexts if not c.text.startswith("#")  # a title answers nothing
                  and len(words & content_words(c.text)) >= MIN_SHARED]
        knobs = {"top_k": TOP_K, "min_shared": MIN_SHARED}
        if not quoted:
            return Answer.abstain(contexts, knobs=knobs)
        quotes = [best_sentence(words, c.text) for c in quoted]
        return Answer(text=" ".join(quotes), contexts=contexts,
                      citations=[Citation(context_id=c.context_id, quote=q)
                                 for c, q in zip(quoted, quotes, strict=True)],
                      knobs=knobs)

    return answer
