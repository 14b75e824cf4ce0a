"""The embedded default pipeline with its real parts: MiniLM weights, Chroma, one meeting."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import results_rows, untimed

pytest.importorskip("chromadb")
pytest.importorskip("sentence_transformers")

from pytest_ragate.builtin_system.chunking import Chunker
from pytest_ragate.builtin_system.extractive import ExtractiveAnswerer
from pytest_ragate.builtin_system.normalize import quote_matches
from pytest_ragate.builtin_system.retrieval import (
    ChunkIndex,
    Embedder,
    Retriever,
    index_key,
    open_index,
)
from pytest_ragate.goldsets.corpus import Corpus, load_corpus

pytestmark = pytest.mark.heavy  # Chroma and the embedding model take seconds to import

TIRON = Path(__file__).parent.parent / "goldsets" / "corpora" / "tiron"
MEETING = "tiron-ES2004a"
ON_TOPIC = ("Which animal did the project manager draw on the whiteboard, and how did she "
            "describe it?")
OFF_TOPIC = "What is the boiling point of mercury in kelvin?"


def meeting_corpus(folder: Path = TIRON) -> Corpus:
    corpus, problems = load_corpus(folder, [f"{MEETING}.speakers.json"], "tiron",
                                   folder / "ragate.toml")
    assert not problems
    return corpus


def opening_turns(folder: Path = TIRON, turns: int = 30) -> Corpus:
    """The meeting's first turns (the favourite-animal one, 22, among them): a corpus for the
    tests of how an index is kept and found, which need no more than a few chunks to embed."""
    document = meeting_corpus(folder)[MEETING]
    return Corpus({MEETING: dataclasses.replace(document, turns=document.turns[:turns])})


def session_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder for the whole session, shared by its xdist workers (their base folders' common
    parent), as the workers of one gate share their index folder."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    folder = root / name
    folder.mkdir(exist_ok=True)
    return folder


def meeting_index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's index folder for the meeting: its index (whose key is all it holds:
    corpus, chunker, model, encoder) is embedded once, under `open_index`'s lock, for this
    module's retriever, tests/test_hybrid.py's and the built-in pipeline's runs in
    tests/test_first_hour_hybrid.py. A test that needs a cold index has a folder of its own."""
    return session_folder(tmp_path_factory, "meeting-index")


@pytest.fixture(scope="module")
def retriever(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Retriever:
    index = open_index(meeting_corpus(), Chunker(400), embedder,
                       cache_dir=meeting_index_dir(tmp_path_factory))
    return Retriever(index, embedder, top_k=5)


def test_an_index_built_once_is_reused(retriever: Retriever, embedder: Embedder,
                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    before = embedder.encoded
    again = open_index(meeting_corpus(), Chunker(400), embedder,
                       cache_dir=meeting_index_dir(tmp_path_factory))
    assert again.built is False and again.key == retriever.index.key
    assert embedder.encoded == before  # nothing re-embedded
    assert len(again.chunks) == again.collection.count()


OPEN_INDEX = """
import sys, warnings
from pathlib import Path
from pytest_ragate.builtin_system.chunking import Chunker
from pytest_ragate.goldsets.corpus import load_corpus
from pytest_ragate.builtin_system.retrieval import Embedder, open_index
folder = Path(sys.argv[1])
corpus, problems = load_corpus(folder, ["corpus.jsonl"], "segments-jsonl", folder / "x.toml")
assert not problems, problems
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    index = open_index(corpus, Chunker(400), Embedder(), cache_dir=folder / "index")
print("built" if index.built else "reused", index.collection.count(), index.location)
for w in caught:
    print("warning:", w.message)
"""


@pytest.mark.heavy  # meets an index in processes of its own
def test_a_truncated_index_is_rebuilt_not_trusted(tmp_path: Path, embedder: Embedder) -> None:
    """A CI cache restored half-way (a truncated Chroma database) is found and rebuilt, in a
    new process, as it would be met. It is built here; processes of their own meet it
    truncated, since this one's Chroma would go on serving the database it opened."""
    turns = [{"doc_id": "d1", "unit": i, "text": f"Turn {i}: the budget is {i} euros. "
              "We agreed on a red case."} for i in range(12)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))

    def open_once() -> list[str]:
        done = subprocess.run([sys.executable, "-c", OPEN_INDEX, str(tmp_path)],
                              capture_output=True, text=True, timeout=300, check=True)
        return done.stdout.splitlines()

    corpus, problems = load_corpus(tmp_path, ["corpus.jsonl"], "segments-jsonl",
                                   tmp_path / "x.toml")
    assert not problems
    built = open_index(corpus, Chunker(400), embedder, cache_dir=tmp_path / "index")
    assert built.built
    first = [f"built {built.collection.count()} {built.location}"]
    location = Path(built.location)
    database = location / "chroma.sqlite3"
    data = database.read_bytes()
    database.write_bytes(data[: len(data) // 3])
    again = open_once()
    assert again[0] == first[0]  # built again, same count, same folder
    assert any(line.startswith(f"warning: ragate: the index in {location} is unusable (")
               and line.endswith("rebuilding it") for line in again), again
    assert open_once()[0].startswith("reused ")


class OtherModel(Embedder):
    model_id = "sentence-transformers/all-MiniLM-L6-v2@other-revision"


@pytest.fixture(scope="module")
def opening_index(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> ChunkIndex:
    """The meeting's opening turns, indexed: what changes an index's key does not depend on
    how much it holds."""
    return open_index(opening_turns(), Chunker(400), embedder,
                      cache_dir=tmp_path_factory.mktemp("opening-index"))


@pytest.mark.parametrize("change", ["corpus", "budget", "model"])
def test_any_change_of_corpus_budget_or_model_rebuilds(change: str, opening_index: ChunkIndex,
                                                       embedder: Embedder,
                                                       tmp_path: Path) -> None:
    corpus, chunker, model = opening_turns(), Chunker(400), embedder
    if change == "corpus":
        copied = tmp_path / "corpus"
        copied.mkdir()
        for path in TIRON.glob(f"{MEETING}.*"):
            shutil.copy(path, copied / path.name)
        txt = copied / f"{MEETING}.txt"
        txt.write_text(txt.read_text().replace("favourite animal", "favourite fish", 1))
        corpus = opening_turns(copied)
    elif change == "budget":
        chunker = Chunker(300)
    else:
        model = OtherModel()
    rebuilt = open_index(corpus, chunker, model, cache_dir=Path(opening_index.location).parent)
    assert rebuilt.key != opening_index.key
    assert rebuilt.built is True
    assert index_key(corpus, chunker, model.model_id, model.encoder_id) == rebuilt.key


def test_the_answerer_cites_on_topic_with_verbatim_quotes(retriever: Retriever) -> None:
    answer = ExtractiveAnswerer(retriever, max_distance=0.7, support=0.35)(ON_TOPIC)
    assert not answer.abstained and answer.citations
    contexts = {c.context_id: c for c in answer.contexts}
    for citation in answer.citations:
        context = contexts[citation.context_id]
        assert citation.quote and quote_matches(citation.quote, context.text)
    assert any("animal" in (c.quote or "") for c in answer.citations)
    assert answer.knobs["top_k"] == 5 and answer.knobs["max_distance"] == 0.7
    assert answer.nearest_distance is not None and answer.nearest_distance < 0.7


def test_the_answerer_abstains_off_topic(retriever: Retriever) -> None:
    answer = ExtractiveAnswerer(retriever, max_distance=0.7, support=0.35)(OFF_TOPIC)
    assert answer.abstained and not answer.citations
    assert answer.nearest_distance is not None and answer.nearest_distance > 0.7
    assert answer.contexts  # what was retrieved is kept, for evidence recall


def test_contexts_carry_turn_ranges_and_labels(retriever: Retriever) -> None:
    contexts = retriever(ON_TOPIC)
    assert len(contexts) == 5
    assert [c.distance for c in contexts] == sorted(c.distance or 0 for c in contexts)
    first = contexts[0]
    chunk = retriever.index.chunks[first.context_id]
    assert (first.doc_id, first.first_unit, first.last_unit) == (
        chunk.doc_id, chunk.first_unit, chunk.last_unit)
    assert first.label and first.label.startswith(f"[{MEETING} · ")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`chroma run` on loopback, as a team would run it beside CI."""
    chroma = Path(sys.executable).parent / "chroma"
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen([str(chroma), "run", "--path", str(data), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("chroma run did not come up") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_chroma_server_path(chroma_server: str, embedder: Embedder, tmp_path: Path) -> None:
    """On the meeting's opening turns (a server keeps and serves any index alike): what it
    serves is what the same index kept locally finds."""
    corpus = opening_turns()
    remote = open_index(corpus, Chunker(400), embedder, cache_dir=tmp_path, url=chroma_server)
    assert remote.built is True and chroma_server in remote.location
    again = open_index(corpus, Chunker(400), embedder, cache_dir=tmp_path, url=chroma_server)
    assert again.built is False  # the server keeps it between runs
    served = Retriever(again, embedder, top_k=5)
    retriever = Retriever(open_index(corpus, Chunker(400), embedder, cache_dir=tmp_path),
                          embedder, top_k=5)
    assert [c.context_id for c in served(ON_TOPIC)] == [c.context_id for c in
                                                        retriever(ON_TOPIC)]
    local = ExtractiveAnswerer(retriever, 0.7, 0.35)(ON_TOPIC)
    assert local.citations  # the favourite-animal turn is among the opening ones
    assert ExtractiveAnswerer(served, 0.7, 0.35)(ON_TOPIC).citations == local.citations


def one_meeting_goldset(gs: Path, qid: str, question: str, gist: str,
                        turns: tuple[int, int]) -> Path:
    """`gs/`: one Tiron meeting, one answerable question with its evidence turns, and the
    off-topic must-abstain one."""
    (gs / "corpus").mkdir(parents=True)
    for path in TIRON.glob(f"{MEETING}.*"):
        shutil.copy(path, gs / "corpus" / path.name)
    (gs / "ragate.toml").write_text(
        '[corpus]\npaths = ["corpus/*.speakers.json"]\nformat = "tiron"\n'
        '[questions]\nexpected = "expected.jsonl"\n'
        "[floors]\nabstention_accuracy = 1.0\n")
    (gs / "questions.jsonl").write_text(
        json.dumps({"question_id": qid, "kind": "single_doc", "question": question}) + "\n"
        + json.dumps({"question_id": "mercury", "kind": "unanswerable", "question": OFF_TOPIC})
        + "\n")
    (gs / "expected.jsonl").write_text(
        json.dumps({"question_id": qid, "gist": gist, "evidence": [
            {"doc_id": MEETING, "first_unit": turns[0], "last_unit": turns[1]}]}) + "\n"
        + json.dumps({"question_id": "mercury", "gist": None, "evidence": []}) + "\n")
    return gs


def test_default_pipeline_end_to_end(pytester: pytest.Pytester) -> None:
    """The plugin's default fixtures on a one-meeting goldset: a cold run shows progress and
    builds; a warm run reuses what it stored and never loads the model; the knobs land on
    every row. Both runs are in this process, each with a pipeline and embedder of its own:
    that a stored index is found by a process of its own, as the next CI job would be, is
    test_a_truncated_index_is_rebuilt_not_trusted's last open, and that stored query vectors
    are read back from their folder, test_query_vectors_are_stored_once_and_the_first_one_wins's."""
    one_meeting_goldset(pytester.path / "gs", "animal", ON_TOPIC, "a tiger", (20, 34))
    cache = pytester.path / "idx"
    pytester.makeconftest('''
import sys

def pytest_sessionfinish(session):
    from pytest_ragate.builtin_system.builtin import PIPELINE_KEY
    found = session.config.stash.get(PIPELINE_KEY, None)
    print("MODEL LOADED:", found is not None and found.embedder.loaded)
''')
    args = ["-p", "no:cacheprovider", "gs", "-o", f"ragate_index_dir={cache}",
            "--ragate-results=r.jsonl", "--ragate-builtin-system", "-s"]
    cold = pytester.runpytest_inprocess(*args)
    cold.assert_outcomes(passed=3)
    assert "ragate: embedding 1 documents" in cold.stderr.str() + cold.stdout.str()
    cold.stdout.fnmatch_lines(["*MODEL LOADED: True*"])
    cold_rows = untimed((pytester.path / "r.jsonl").read_text())
    warm = pytester.runpytest_inprocess(*args)
    warm.assert_outcomes(passed=3)
    assert "ragate: embedding" not in warm.stderr.str() + warm.stdout.str()
    # the questions' vectors were stored by the cold run: the warm one never loads the model
    warm.stdout.fnmatch_lines(["*MODEL LOADED: False*"])
    assert untimed((pytester.path / "r.jsonl").read_text()) == cold_rows
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert rows["mercury"]["abstained"] is True and rows["animal"]["abstained"] is False
    for row in rows.values():
        assert row["knobs"]["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
        assert row["knobs"]["chunk_budget"] == 400 and row["knobs"]["top_k"] == 5
        assert row["nearest_distance"] is not None
        # no conftest of the user's defines a system here: the rows and the summary say so
        assert row["system"] == "built-in extractive answerer"
        # hybrid is the default retriever (dense is `ragate_retriever = dense`)
        assert row["retriever"] == ("built-in hybrid retriever (all-MiniLM-L6-v2 (onnx) + "
                                    "bm25s, RRF k=60)")
        assert row["knobs"]["retriever"] == "hybrid" and row["knobs"]["rrf_k"] == 60
    warm.stdout.fnmatch_lines(["*: system: built-in extractive answerer · retriever: built-in "
                               "hybrid retriever (all-MiniLM-L6-v2 (onnx) + bm25s, RRF k=60) · "
                               "judge: none"])


class BatchStampingEmbedder:
    """A vector that records the batch it came from: [text length, batch size]."""

    model_id = "stamp"
    encoder_id = "stamp"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(t), len(texts)] for t in texts], np.float32)


def test_query_vectors_are_stored_once_and_the_first_one_wins(tmp_path: Path) -> None:
    from pytest_ragate.builtin_system.retrieval import QueryVectors

    embedder = BatchStampingEmbedder()
    vectors = QueryVectors(tmp_path / "q", embedder)  # type: ignore[arg-type]
    assert vectors.prefetch(["Why  so?", "a", "Why so?"]) == 2
    assert embedder.calls == [["Why so?", "a"]]  # normalised, unique, sorted: one batch
    assert vectors.prefetch(["a", "Why so?"]) == 0 and len(embedder.calls) == 1
    assert vectors.get("a").tolist() == [1.0, 2.0]  # from the batch, no model call
    assert len(embedder.calls) == 1
    assert vectors.get("new one").tolist() == [7.0, 1.0]  # embedded alone, then stored
    other = QueryVectors(tmp_path / "q", BatchStampingEmbedder())  # type: ignore[arg-type]
    assert other.prefetch(["a", "new one", "zz"]) == 1  # one missing: the list is embedded
    assert other.get("a").tolist() == [1.0, 2.0]  # ... but a stored vector is never replaced
    assert other.get("zz").tolist() == [2.0, 3.0]
