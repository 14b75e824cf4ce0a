"""The hybrid retriever (`ragate_retriever = hybrid`): dense and bm25s fused by reciprocal rank,
on one real meeting, and the knob's usage errors and provenance through the plugin."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import results_rows

pytest.importorskip("chromadb")
pytest.importorskip("bm25s")

from pytest_ragate.builtin_system.chunking import Chunk, Chunker
from pytest_ragate.builtin_system.extractive import ExtractiveAnswerer
from pytest_ragate.builtin_system.hybrid import Bm25Index, rrf
from pytest_ragate.builtin_system.retrieval import Embedder, Retriever, open_index
from tests.test_pipeline import (
    MEETING,
    OFF_TOPIC,
    ON_TOPIC,
    meeting_corpus,
    meeting_index_dir,
    one_meeting_goldset,
)

pytestmark = pytest.mark.heavy  # Chroma, bm25s and the embedding model take seconds to import

# "pooches" occurs once in the meeting (turn 19); all-MiniLM-L6-v2 does not rank its chunk in
# the top 5 for this question, bm25 ranks it first among the chunks holding the word
RARE = "Who mentioned pooches?"
RARE_HOME = f"{MEETING}#19-19.p0"


def test_rrf_order_hand_checked() -> None:
    """k=60: a = 1/61, b = 1/62, c = 1/63 + 1/61, d = 1/62; b and d tie on score and on best
    rank (2), and b was seen first."""
    assert rrf([["a", "b", "c"], ["c", "d"]], k=60) == ["c", "a", "b", "d"]
    # k=1: a = 1/2 + 1/4 = .75, b = 1/3 + 1/3 = .667, c = 1/4 + 1/2 = .75: a and c tie on
    # score and best rank (1); a was seen first
    assert rrf([["a", "b", "c"], ["c", "b", "a"]], k=1) == ["a", "c", "b"]
    assert rrf([[], []]) == []


@pytest.fixture(scope="module")
def retrievers(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory,
               ) -> tuple[Retriever, Retriever]:
    index = open_index(meeting_corpus(), Chunker(400), embedder,
                       cache_dir=meeting_index_dir(tmp_path_factory))
    lexical = Bm25Index.build(list(index.chunks.values()))
    return Retriever(index, embedder, 5), Retriever(index, embedder, 5, lexical=lexical)


def test_a_rare_word_only_bm25_finds_is_retrieved_by_hybrid_not_dense(
        retrievers: tuple[Retriever, Retriever]) -> None:
    dense, hybrid = retrievers
    assert RARE_HOME in dense.index.chunks
    assert RARE_HOME not in [c.context_id for c in dense(RARE)]
    assert RARE_HOME in [c.context_id for c in hybrid(RARE)]
    assert hybrid.lexical is not None and hybrid.lexical.rank(RARE)[0] == RARE_HOME


def test_every_fused_context_carries_its_dense_distance(
        retrievers: tuple[Retriever, Retriever]) -> None:
    """A chunk only bm25 found has no distance from the dense query: it is computed, never
    left None (an anchor counts a context without a distance as near)."""
    dense, hybrid = retrievers
    query = hybrid.embed_query(RARE)
    got = hybrid(RARE)
    stored = dense.index.collection.get(ids=[c.context_id for c in got], include=["embeddings"])
    vectors = dict(zip(stored["ids"], stored["embeddings"], strict=True))
    for context in got:
        assert context.distance is not None
        assert context.distance == pytest.approx(
            1.0 - float(np.asarray(vectors[context.context_id]) @ query), abs=1e-5)


def test_hybrid_still_abstains_off_topic(retrievers: tuple[Retriever, Retriever]) -> None:
    _, hybrid = retrievers
    assert ExtractiveAnswerer(hybrid, 0.7, 0.35)(OFF_TOPIC).abstained
    assert not ExtractiveAnswerer(hybrid, 0.7, 0.35)(ON_TOPIC).abstained


def test_a_question_of_stopwords_only_falls_back_to_the_dense_ranking(
        retrievers: tuple[Retriever, Retriever]) -> None:
    dense, hybrid = retrievers
    assert hybrid.lexical is not None and hybrid.lexical.rank("the of and") == []
    assert ([c.context_id for c in hybrid("the of and")]
            == [c.context_id for c in dense("the of and")])


def test_a_bad_retriever_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("-o", "ragate_retriever=sparse", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragate_retriever: Input should be 'dense' or 'hybrid'*"])
    pytester.makeini("[pytest]\nragate_retriever = bm25\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragate_retriever: Input should be 'dense' or 'hybrid'*"])


def _one_meeting_goldset(pytester: pytest.Pytester) -> None:
    """`gs/`: one Tiron meeting, the rare-word question and an off-topic must-abstain one."""
    one_meeting_goldset(pytester.path / "gs", "rare", RARE, "pooches", (19, 19))


def test_the_run_names_the_hybrid_retriever(pytester: pytest.Pytester,
                                           tmp_path_factory: pytest.TempPathFactory,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragate_retriever = hybrid`: terminal, rows and Markdown report say which retriever ran,
    and the rows' knobs carry it, so a dense and a hybrid run are never read as one another.
    The bm25 index is built once per process and corpus, not per question. Under -n 0 only:
    what xdist changes (the controller names what its workers ran) is the same whichever way
    hybrid was chosen, held by tests/test_first_hour_hybrid.py's default run under -n 2."""
    builds: list[int] = []
    build = Bm25Index.build

    def counting(_cls: type[Bm25Index], chunks: list[Chunk]) -> Bm25Index:
        builds.append(len(chunks))
        return build(chunks)

    monkeypatch.setattr(Bm25Index, "build", classmethod(counting))
    _one_meeting_goldset(pytester)
    index_dir = meeting_index_dir(tmp_path_factory)  # the module's retrievers' index: warm
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "gs", "-o", f"ragate_index_dir={index_dir}",
        "-o", "ragate_retriever=hybrid", "--ragate-results=r.jsonl", "--ragate-report=r.md",
        "--ragate-builtin-system", "-n", "0")
    label = "built-in hybrid retriever (all-MiniLM-L6-v2 (onnx) + bm25s, RRF k=60)"
    result.stdout.fnmatch_lines([f"*retriever: {label}*"])
    rows = {r["question_id"]: r for r in
            results_rows(pytester.path / "r.jsonl")}
    assert set(rows) == {"rare", "mercury"}
    for row in rows.values():
        assert row["retriever"] == label
        assert row["knobs"]["retriever"] == "hybrid" and row["knobs"]["rrf_k"] == 60
    assert rows["rare"]["evidence_ranks"][0] is not None
    assert label in (pytester.path / "r.md").read_text()
    assert len(builds) == 1  # two questions, one corpus: one build
