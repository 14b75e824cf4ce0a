"""The adapters, against the real LangChain, LlamaIndex and Haystack classes (installed from
the registry through the `langchain`, `llamaindex` and `haystack` extras)."""

from __future__ import annotations

from pathlib import Path

import pytest
from haystack.dataclasses import Document as HaystackDocument
from langchain_core.documents import Document as LangchainDocument
from llama_index.core.schema import NodeWithScore, TextNode

from pytest_ragate.adapters import (
    AdapterError,
    corpus_of,
    from_haystack,
    from_langchain,
    from_llamaindex,
)
from pytest_ragate.answer import Context
from pytest_ragate.goldsets.corpus import Corpus
from tests.conftest import touched_units

pytestmark = pytest.mark.heavy  # haystack, LlamaIndex and LangChain take seconds to import

META = {"doc_id": "returns", "first_unit": 2, "last_unit": 3, "source": "returns.md"}


def test_langchain_documents_and_scored_pairs() -> None:
    doc = LangchainDocument(page_content="Refunds take five days.", metadata=META, id="r#2")
    plain, scored = from_langchain([doc]), from_langchain([(doc, 0.25)], score="distance")
    assert (plain[0].context_id, plain[0].doc_id, plain[0].first_unit, plain[0].last_unit,
            plain[0].text, plain[0].distance) == ("r#2", "returns", 2, 3,
                                                  "Refunds take five days.", None)
    assert scored[0].distance == 0.25  # Chroma and FAISS scores are distances
    assert from_langchain([(doc, 0.75)], score="similarity")[0].distance == 0.25
    anonymous = LangchainDocument(page_content="x", metadata=META)
    assert from_langchain([anonymous])[0].context_id == "returns:2-3"


def test_llamaindex_nodes_with_scores() -> None:
    node = TextNode(text="Refunds take five days.", id_="node-7", metadata=META)
    [context] = from_llamaindex([NodeWithScore(node=node, score=0.9)], score="similarity")
    assert (context.context_id, context.doc_id, context.first_unit, context.last_unit) == (
        "node-7", "returns", 2, 3)
    assert context.distance == pytest.approx(0.1)  # a similarity, turned into a distance
    assert context.text == "Refunds take five days."


def test_haystack_documents() -> None:
    doc = HaystackDocument(content="Refunds take five days.", meta=META, score=0.8, id="h1")
    [context] = from_haystack([doc], score="similarity")
    assert (context.context_id, context.doc_id, context.first_unit, context.distance) == (
        "h1", "returns", 2, pytest.approx(0.2))
    [by_key] = from_haystack([doc], id_key="source", score="similarity")
    assert by_key.context_id == "returns.md"


def test_custom_keys_and_a_missing_key_named() -> None:
    doc = LangchainDocument(page_content="x", metadata={"file": "faq", "start": 0, "end": 1})
    [context] = from_langchain([doc], doc_id_key="file", first_key="start", last_key="end")
    assert (context.doc_id, context.first_unit, context.last_unit) == ("faq", 0, 1)
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


# --- chunks with character offsets and no units ---------------------------------------------

HANDBOOK = Path(__file__).parent.parent / "examples" / "handbook"


@pytest.fixture(scope="module")
def handbook_corpus() -> Corpus:
    return corpus_of(HANDBOOK / "goldset")


def _hold_to_reference(corpus: Corpus, contexts: list[Context], offsets: list[tuple[int, int]],
                       ) -> list[int]:
    """Each context's units are the units its characters touch (tests.conftest's reference);
    returns how many units each spans."""
    widths = []
    for context, (start, end) in zip(contexts, offsets, strict=True):
        document = corpus[context.doc_id]
        text = document.laid_out()[0]
        touched = touched_units(text, [t.text for t in document.turns], start, end)
        assert (context.first_unit, context.last_unit) == (touched[0], touched[-1]), context
        assert context.text == text[start:end]
        widths.append(len(touched))
    return widths


@pytest.mark.heavy  # LlamaIndex's sentence tokenizer loads NLTK: seconds
def test_llamaindex_sentence_splitter_nodes_map_to_their_units(handbook_corpus: Corpus,
                                                               ) -> None:
    """The recipe of docs/your-system.md: the handbook read by SimpleDirectoryReader, split by
    the default SentenceSplitter into chunks that cross paragraphs, each node's units found
    from its start_char_idx/end_char_idx."""
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.node_parser import SentenceSplitter

    documents = SimpleDirectoryReader(
        input_files=sorted((HANDBOOK / "docs").iterdir()),
        file_metadata=lambda path: {"doc_id": Path(path).stem}).load_data()
    nodes = SentenceSplitter(chunk_size=64, chunk_overlap=16).get_nodes_from_documents(
        documents)
    contexts = from_llamaindex([NodeWithScore(node=n, score=0.5) for n in nodes],
                               score="similarity", corpus=handbook_corpus)
    widths = _hold_to_reference(handbook_corpus, contexts,
                                [(n.start_char_idx, n.end_char_idx) for n in nodes])
    assert len(nodes) > 6 and max(widths) >= 2, widths  # chunks across paragraphs, too


def test_langchain_splitter_chunks_map_to_their_units(handbook_corpus: Corpus) -> None:
    """LangChain's RecursiveCharacterTextSplitter with add_start_index=True over the
    handbook's files: each chunk's units from its start_index."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    paths = sorted((HANDBOOK / "docs").iterdir())
    chunks = RecursiveCharacterTextSplitter(chunk_size=150, chunk_overlap=40,
                                            add_start_index=True).create_documents(
        [p.read_text(encoding="utf-8") for p in paths],
        metadatas=[{"doc_id": p.stem} for p in paths])
    contexts = from_langchain(chunks, corpus=handbook_corpus)
    offsets = [(c.metadata["start_index"], c.metadata["start_index"] + len(c.page_content))
               for c in chunks]
    widths = _hold_to_reference(handbook_corpus, contexts, offsets)
    assert max(widths) >= 2 and min(widths) == 1, widths
    assert contexts[0].context_id == "app:0-0"


def test_offsets_into_another_text_are_refused(handbook_corpus: Corpus) -> None:
    """Offsets one character off, or taken in a text read otherwise
    (CRLF line ends, a reader that rewrote the file), would name other units: refused, with
    both texts shown."""
    text = handbook_corpus["returns"].laid_out()[0]
    start = text.index("Refunds go back")
    chunk = text[start:start + 40]

    def node(begin: int, content: str = chunk) -> NodeWithScore:
        made = TextNode(text=content, metadata={"doc_id": "returns"}, start_char_idx=begin,
                        end_char_idx=begin + len(content))
        return NodeWithScore(node=made, score=None)

    [context] = from_llamaindex([node(start)], corpus=handbook_corpus)
    assert (context.first_unit, context.last_unit) == (3, 3)
    with pytest.raises(AdapterError, match=r"LlamaIndex node 1: its text is not the corpus's "
                       rf"at characters {start + 1}\.\.{start + 41} of 'returns' \(the chunk: "
                       r"'Refunds go back"):
        from_llamaindex([node(start + 1)], corpus=handbook_corpus)
    with pytest.raises(AdapterError, match="run past the end of its text"):
        from_llamaindex([node(len(text) - 10)], corpus=handbook_corpus)
    with pytest.raises(AdapterError, match=r"metadata has no 'first_unit', 'last_unit', and "
                       rf"it carries character offsets \({start}\.\.{start + 40} of 'returns'\)"
                       r": pass corpus=corpus_of\(GOLDSET\)"):
        from_llamaindex([node(start)])
    crlf = LangchainDocument(page_content="Refunds go back to the card\r\nyou paid with.",
                             metadata={"doc_id": "returns", "start_index": start})
    with pytest.raises(AdapterError, match="LangChain result 1: its text is not the corpus's"):
        from_langchain([crlf], corpus=handbook_corpus)
    elsewhere = LangchainDocument(page_content="x", metadata={"doc_id": "faq",
                                                               "start_index": 0})
    with pytest.raises(AdapterError, match="document 'faq' is not in the corpus"):
        from_langchain([elsewhere], corpus=handbook_corpus)
