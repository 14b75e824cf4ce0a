"""The ONNX Runtime encoder against torch on real transcript text; its cache; its fallback."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import results_rows

pytest.importorskip("chromadb")
pytest.importorskip("onnxruntime")
pytest.importorskip("sentence_transformers")

from pytest_ragate.builtin_system import encoders
from pytest_ragate.builtin_system.chunking import Chunker
from pytest_ragate.builtin_system.retrieval import Embedder, QueryVectors, index_key
from tests.test_pipeline import MEETING, meeting_corpus, opening_turns

pytestmark = pytest.mark.heavy  # torch, sentence-transformers and Chroma take seconds to import

SUITE_GRAPHS = os.environ.get(encoders.SHARED_DIR)
"""The suite's folder of exported graphs (tests/conftest.py), read before `own_graph_folder`
takes it away: for the test that needs a graph, not an export."""


@pytest.fixture(autouse=True)
def own_graph_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests export, reuse and fail exports themselves: not in the suite's shared
    folder (tests/conftest.py sets RAGATE_ENCODER_DIR)."""
    monkeypatch.delenv(encoders.SHARED_DIR, raising=False)


@pytest.mark.heavy  # loads and exports the model
def test_onnx_vectors_equal_torch_vectors_on_transcript_chunks(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Chunks and their sentences of a real meeting, in padded batches (of 8) of mixed lengths
    (long chunks are truncated at the model's 256 tokens by both). The module's one real
    export, beside the indexes, says nothing here: torch's tracer warnings, its exporter's
    deprecations and transformers' progress bar stay in the export's own process, out of the
    user's warnings summary and terminal."""
    chunks = Chunker(400).chunk(meeting_corpus())[:12]
    texts = [c.embed_text for c in chunks] + [s for c in chunks[:4] for s in c.sentences]
    texts.append("word " * 400)  # past max_seq_length: truncated alike
    onnx = Embedder(batch_size=8, encoder="onnx", cache_dir=tmp_path)
    torch = Embedder(batch_size=8, encoder="torch")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        a = onnx.encode(texts)
    assert [str(w.message) for w in said] == [] and capfd.readouterr() == ("", "")
    b = torch.encode(texts)
    assert onnx.resolved.name == "onnx" and torch.resolved.name == "torch"
    graph = onnx.resolved.graph
    assert graph is not None and graph.is_file()
    assert graph.parent.parent == tmp_path / "encoders"  # beside the indexes
    assert a.shape == b.shape == (len(texts), 384) and a.dtype == np.float32
    assert float(np.abs(a - b).max()) < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # and the order of texts, which changes the batches, changes nothing beyond that
    assert float(np.abs(onnx.encode(texts[::-1])[::-1] - a).max()) < 1e-5


def test_the_exported_graph_is_reused_and_keyed(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """What is exported when is the question here, not what an export writes (the test
    above holds the real one to torch): the exporter stands in."""
    exported: list[Path] = []

    def fake_export(_path: Path, target: Path) -> None:
        exported.append(target)
        target.write_bytes(b"graph")

    monkeypatch.setattr(encoders, "export_onnx", fake_export)
    path = encoders.model_path()
    first = encoders.resolve("onnx", tmp_path, path)
    assert first.graph is not None and first.graph.is_file() and exported == [first.graph]
    assert first.graph.parent.parent == tmp_path / "encoders"  # beside the indexes

    again = encoders.resolve("onnx", tmp_path, path)
    assert again == first and exported == [first.graph]  # cached: nothing exported again

    real_version = encoders._version
    monkeypatch.setattr(encoders, "_version", lambda dist: "9.9" if dist == "onnxruntime"
                        else real_version(dist))
    other = encoders.resolve("onnx", tmp_path, path)
    assert other.name == "onnx" and other.encoder_id != first.encoder_id
    assert exported == [first.graph, other.graph]  # another runtime: another graph, anew

    assert encoders.resolve("torch", tmp_path, path) == encoders.Resolved("torch", "torch")


def test_a_shared_folder_holds_one_graph_for_every_project(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RAGATE_ENCODER_DIR names where the graph is kept, whatever index folder a project
    has: two projects export once."""
    exported: list[Path] = []

    def fake_export(_path: Path, target: Path) -> None:
        exported.append(target)
        target.write_bytes(b"graph")

    monkeypatch.setattr(encoders, "export_onnx", fake_export)
    monkeypatch.setenv(encoders.SHARED_DIR, str(tmp_path / "shared"))
    path = encoders.model_path()
    one = encoders.resolve("onnx", tmp_path / "project-a", path)
    assert one == encoders.resolve("onnx", tmp_path / "project-b", path)
    assert one.graph is not None and one.graph.parent.parent == tmp_path / "shared" / "encoders"
    assert exported == [one.graph] and not (tmp_path / "project-a").exists()


def test_the_weights_digest_keys_the_graph(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(encoders.model_path(), model, ignore=shutil.ignore_patterns("*.safetensors"))
    (model / "model.safetensors").write_bytes(b"weights one")
    before = encoders.export_key(model)
    (model / "model.safetensors").write_bytes(b"weights two")
    assert encoders.export_key(model) != before


def test_an_index_and_query_vectors_are_keyed_by_encoder(tmp_path: Path) -> None:
    """Torch and ONNX vectors agree to about 1e-7, not bit for bit: never mixed in one index or
    one query-vector store."""
    corpus, chunker = meeting_corpus(), Chunker(400)
    assert index_key(corpus, chunker, encoder_id="torch") != index_key(
        corpus, chunker, encoder_id="onnx-abc")

    class Fixed:
        model_id = "m"

        def __init__(self, encoder_id: str, value: float) -> None:
            self.encoder_id, self.value = encoder_id, value

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.full((len(texts), 2), self.value, np.float32)

    QueryVectors(tmp_path, Fixed("torch", 1.0)).prefetch(["q"])  # type: ignore[arg-type]
    onnx = QueryVectors(tmp_path, Fixed("onnx-abc", 2.0))  # type: ignore[arg-type]
    assert onnx.prefetch(["q"]) == 1 and onnx.get("q").tolist() == [2.0, 2.0]


def test_a_failed_export_falls_back_to_torch_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_path: Path, _target: Path) -> None:
        raise RuntimeError("exporter broke")

    monkeypatch.setattr(encoders, "export_onnx", broken)
    embedder = Embedder(encoder="onnx", cache_dir=tmp_path)
    with pytest.warns(RuntimeWarning, match="embedding with torch, not ONNX Runtime: the ONNX "
                      "export failed .RuntimeError: exporter broke."):
        assert embedder.encoder_id == "torch"
    assert embedder.label.startswith("torch; ONNX asked for: the ONNX export failed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert embedder.resolved.name == "torch"  # settled once: warned once
    assert not list((tmp_path / "encoders").rglob("*.onnx"))


def test_an_unloadable_graph_is_an_error_naming_the_folder(tmp_path: Path) -> None:
    graph = tmp_path / "encoders" / "onnx-x" / "model.onnx"
    graph.parent.mkdir(parents=True)
    graph.write_bytes(b"not a graph")
    with pytest.raises(RuntimeError, match=r"delete the folder .*onnx-x"):
        encoders.load(encoders.Resolved("onnx", "onnx-x", graph), encoders.model_path(), 1)


GOLDSET_TOML = ('[corpus]\npaths = ["corpus/*.jsonl"]\nformat = "segments-jsonl"\n'
                '[questions]\nexpected = "expected.jsonl"\n[floors]\nabstention_accuracy = 1.0\n')
BROKEN_EXPORT = '''
from pytest_ragate.builtin_system import encoders

REAL = encoders.export_onnx

def broken(path, target):
    raise RuntimeError("exporter broke")

def pytest_configure(config):
    encoders.export_onnx = broken

def pytest_unconfigure(config):
    encoders.export_onnx = REAL
'''
"""A conftest whose every process (this one, each xdist worker) fails the ONNX export, and
puts the exporter back when its run ends (the -n 0 run is in the test's own process)."""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "n2"])
def test_the_run_says_which_encoder_embedded(pytester: pytest.Pytester,
                                             xdist: list[str]) -> None:
    """A failed export must not pass as ONNX: every row names torch and why, and the run's
    warnings say so, with and without xdist. The corpus is a few turns (what is embedded does
    not matter here, only by what), embedded afresh in each run (a cold index folder: the
    fallback embeds at each worker count)."""
    gs = pytester.path / "gs"
    (gs / "corpus").mkdir(parents=True)
    (gs / "corpus" / "meeting.jsonl").write_text("".join(
        json.dumps({"doc_id": "m1", "unit": turn, "text": text, "speaker": "A"}) + "\n"
        for turn, text in enumerate(t.text for t in meeting_corpus()[MEETING].turns[15:24])))
    (gs / "ragate.toml").write_text(GOLDSET_TOML)
    questions = [("mercury", "What is the boiling point of mercury in kelvin?"),
                 ("gold", "What is the melting point of gold in kelvin?")]
    (gs / "questions.jsonl").write_text("".join(
        json.dumps({"question_id": q, "kind": "unanswerable", "question": text}) + "\n"
        for q, text in questions))
    (gs / "expected.jsonl").write_text("".join(
        json.dumps({"question_id": q, "gist": None, "evidence": []}) + "\n"
        for q, _ in questions))
    pytester.makeconftest(BROKEN_EXPORT)
    index_dir = pytester.path / "idx"  # cold at each worker count: the fallback embeds
    real_export = encoders.export_onnx
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs", "-W",
                                          "default::RuntimeWarning",
                                          "-o", f"ragate_index_dir={index_dir}",
                                          "--ragate-results=r.jsonl",
                                          "--ragate-builtin-system", *xdist)
    assert encoders.export_onnx is real_export  # the run put it back
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*RuntimeWarning: ragate: embedding with torch, not ONNX "
                                 "Runtime: the ONNX export failed (RuntimeError: exporter "
                                 "broke)*"])
    rows = results_rows(pytester.path / "r.jsonl")
    assert len(rows) == 2
    for row in rows:
        assert row["retriever"] == ("built-in hybrid retriever (all-MiniLM-L6-v2 (torch; ONNX "
                                    "asked for: the ONNX export failed (RuntimeError: "
                                    "exporter broke)) + bm25s, RRF k=60)")


@pytest.mark.heavy  # builds an index with the model
def test_the_one_process_building_an_index_embeds_on_every_core(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker kept to its share of the cores (threads=1 under -n 2) builds on all of them,
    holding the build lock that keeps every other process from building at once; its queries
    go back to its share. Without this a cold -n 2 run left a core idle while it built. Every
    session's idle threads sleep rather than spin (a spinning thread burned about 30% more CPU
    for the same vectors). The graph is the suite's (an export is the first test's question),
    the corpus a few chunks."""
    from filelock import FileLock, Timeout

    from pytest_ragate.builtin_system import retrieval

    monkeypatch.setattr(retrieval.os, "cpu_count", lambda: 4)
    loads: list[int | None] = []
    real_load = retrieval.load

    def load(resolved: encoders.Resolved, path: Path, threads: int | None) -> encoders.Backend:
        loads.append(threads)
        return real_load(resolved, path, threads)

    monkeypatch.setattr(retrieval, "load", load)
    graphs = Path(SUITE_GRAPHS) if SUITE_GRAPHS else tmp_path / "graphs"
    embedder = Embedder(threads=1, encoder="onnx", cache_dir=graphs)
    used: list[tuple[int | None, bool, str]] = []
    encode_batch = encoders.OnnxBackend.encode_batch

    def spy(backend: encoders.OnnxBackend, texts: list[str]) -> np.ndarray:
        held = FileLock(str(tmp_path / "idx" / retrieval.BUILD_LOCK))
        try:  # another process (this test, here) cannot take the build lock meanwhile
            with held.acquire(timeout=0):
                locked = False
        except Timeout:
            locked = True
        options = backend.session.get_session_options()
        used.append((options.intra_op_num_threads, locked,
                     options.get_session_config_entry("session.intra_op.allow_spinning")))
        return encode_batch(backend, texts)

    monkeypatch.setattr(encoders.OnnxBackend, "encode_batch", spy)
    index = retrieval.open_index(opening_turns(), Chunker(400), embedder,
                                 cache_dir=tmp_path / "idx")
    assert index.built and loads == [4]
    assert used and all(threads == 4 and locked and spin == "0" for threads, locked, spin in used)
    used.clear()
    embedder.encode(["what did they decide about the remote?"])
    assert loads == [4, 1] and used == [(1, False, "0")]
