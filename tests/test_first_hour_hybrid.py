"""The built-in retriever is hybrid by default (issue 23); dense stays a choice, by flag or ini
option, and a hybrid run never passes as a dense one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import results_rows

pytest.importorskip("chromadb")
pytest.importorskip("bm25s")

from tests.test_hybrid import _one_meeting_goldset
from tests.test_pipeline import meeting_index_dir

pytestmark = pytest.mark.heavy  # Chroma, bm25s and the embedding model take seconds to import

HYBRID = "built-in hybrid retriever (all-MiniLM-L6-v2 (onnx) + bm25s, RRF k=60)"
DENSE = "built-in Chroma retriever (all-MiniLM-L6-v2, onnx)"


def _run(pytester: pytest.Pytester, index_dir: Path, workers: int,
         *extra: str) -> pytest.RunResult:
    """The one-meeting goldset (a rare-word question only bm25 ranks, and an off-topic one) run
    with the built-in pipeline and no retriever flag unless `extra` gives one. Its index is
    the session's (`meeting_index_dir`): what the retriever is does not change what is
    stored, and cold runs are tests/test_pipeline.py's."""
    _one_meeting_goldset(pytester)
    return pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "gs", "-o", f"ragate_index_dir={index_dir}",
        "--ragate-results=r.jsonl", "--ragate-builtin-system", "-n", str(workers), *extra)


def _rows(pytester: pytest.Pytester) -> dict[str, dict]:
    return {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}


def test_unset_the_built_in_retriever_is_hybrid(
        pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No `ragate_retriever` ini option: the run, every row and its knobs say hybrid, and
    the evidence only bm25 finds (the chunk with "pooches") is retrieved. Under -n 2, where the
    controller names what its workers ran; without xdist, the default is
    tests/test_pipeline.py::test_default_pipeline_end_to_end's run (the same label and knobs),
    and the ranking, which does not depend on the worker count, tests/test_hybrid.py's."""
    result = _run(pytester, meeting_index_dir(tmp_path_factory), 2)
    result.stdout.fnmatch_lines([f"*retriever: {HYBRID}*"])
    rows = _rows(pytester)
    assert set(rows) == {"rare", "mercury"}
    for row in rows.values():
        assert row["retriever"] == HYBRID
        assert row["knobs"]["retriever"] == "hybrid" and row["knobs"]["rrf_k"] == 60
    assert rows["rare"]["evidence_ranks"][0] is not None


def test_dense_stays_a_choice(pytester: pytest.Pytester,
                              tmp_path_factory: pytest.TempPathFactory) -> None:
    """`ragate_retriever = dense`: the dense ranking alone, named as such on every row, without
    the fusion's knobs; it misses the rare-word evidence. Under -n 0 only: the ini option is
    read alike in every process, and what xdist changes (the controller names what its workers
    ran) is the same for either retriever, held by the default's run above under -n 2."""
    pytester.makeini("[pytest]\nragate_retriever = dense\n")
    result = _run(pytester, meeting_index_dir(tmp_path_factory), 0)
    result.stdout.fnmatch_lines([f"*retriever: {DENSE}*"])
    rows = _rows(pytester)
    assert set(rows) == {"rare", "mercury"}
    for row in rows.values():
        assert row["retriever"] == DENSE
        assert row["knobs"]["retriever"] == "dense" and "rrf_k" not in row["knobs"]
    assert rows["rare"]["evidence_ranks"][0] is None


@pytest.mark.parametrize("workers", [0, 2])
def test_the_default_without_bm25s_fails_and_says_how_to_fix_it(pytester: pytest.Pytester,
                                                               workers: int) -> None:
    """Fail closed: a default run in a process that cannot import bm25s errors every question
    and fails the floor, never answering with the dense retriever; the error names the
    package, the extra that installs it, and the dense choice. (Hybrid asked for by name,
    `ragate_retriever = hybrid`, is the same setting: read as such by
    tests/test_hybrid.py::test_the_run_names_the_hybrid_retriever.)"""
    pytester.makeconftest("import sys\nsys.modules['bm25s'] = None  # import bm25s fails\n")
    result = _run(pytester, pytester.path / "idx", workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0
    assert all(r["status"] == "error" for r in _rows(pytester).values())
    assert ("the built-in hybrid retriever (the default) needs bm25s: pip install "
            "'pytest-ragate[embed]', or choose the dense one with ragate_retriever = dense in "
            "the ini file") in result.stdout.str()
