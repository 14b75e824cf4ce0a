"""The adapters, against the real LangChain, LlamaIndex and Haystack classes (installed from
the registry through the `langchain`, `llamaindex` and `haystack` extras)."""

from __future__ import annotations

import pytest
from haystack.dataclasses import Document as HaystackDocument
from langchain_core.documents import Document as LangchainDocument
from llama_index.core.schema import NodeWithScore, TextNode

from pytest_ragate.adapters import AdapterError, from_haystack, from_langchain, from_llamaindex

META = {"doc_id": "returns", "first_unit": 2, "last_unit": 3, "source": "returns.md"}


def test_langchain_documents_and_scored_pairs() -> None:
    doc = LangchainDocument(page_content="Refunds take five days.", metadata=META, id="r#2")
    plain, scored = from_langchain([doc]), from_langchain([(doc, 0.25)], score="distance")
    assert (plain[0].context_id, plain[0].doc_id, plain[0].first_turn, plain[0].last_turn,
            plain[0].text, plain[0].distance) == ("r#2", "returns", 2, 3,
                                                  "Refunds take five days.", None)
    assert scored[0].distance == 0.25  # Chroma and FAISS scores are distances
    assert from_langchain([(doc, 0.75)], score="similarity")[0].distance == 0.25
    anonymous = LangchainDocument(page_content="x", metadata=META)
    assert from_langchain([anonymous])[0].context_id == "returns:2-3"


def test_llamaindex_nodes_with_scores() -> None:
    node = TextNode(text="Refunds take five days.", id_="node-7", metadata=META)
    [context] = from_llamaindex([NodeWithScore(node=node, score=0.9)], score="similarity")
    assert (context.context_id, context.doc_id, context.first_turn, context.last_turn) == (
        "node-7", "returns", 2, 3)
    assert context.distance == pytest.approx(0.1)  # a similarity, turned into a distance
    assert context.text == "Refunds take five days."


def test_haystack_documents() -> None:
    doc = HaystackDocument(content="Refunds take five days.", meta=META, score=0.8, id="h1")
    [context] = from_haystack([doc], score="similarity")
    assert (context.context_id, context.doc_id, context.first_turn, context.distance) == (
        "h1", "returns", 2, pytest.approx(0.2))
    [by_key] = from_haystack([doc], id_key="source", score="similarity")
    assert by_key.context_id == "returns.md"


def test_custom_keys_and_a_missing_key_named() -> None:
    doc = LangchainDocument(page_content="x", metadata={"file": "faq", "start": 0, "end": 1})
    [context] = from_langchain([doc], doc_id_key="file", first_key="start", last_key="end")
    assert (context.doc_id, context.first_turn, context.last_turn) == ("faq", 0, 1)
    with pytest.raises(AdapterError, match=r"LangChain result 1: metadata has no 'doc_id', "
                       r"'first_unit', 'last_unit' \(it has 'end', 'file', 'start'\)"):
        from_langchain([doc])
    node = TextNode(text="x", metadata={"doc_id": "faq"})
    with pytest.raises(AdapterError, match="LlamaIndex node 1: metadata has no 'first_unit'"):
        from_llamaindex([NodeWithScore(node=node, score=None)])


def test_something_else_is_refused_by_name() -> None:
    with pytest.raises(AdapterError, match="expected a langchain Document, got dict"):
        from_langchain([{"page_content": "x"}])
    with pytest.raises(AdapterError, match="expected a haystack Document, got Document"):
        from_haystack([LangchainDocument(page_content="x", metadata=META)])
