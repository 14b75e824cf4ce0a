"""The adversary against scoring: evidence named by a context id, distances that are not
distances, and answers so wide that scoring them would take longer than the run is worth.
Each case is played through pytest (or the `ragate` CLI) as a user would meet it, with and
without `-n 2` where workers are involved, and held to its exit status and message."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.answer import Context
from tests.conftest import write_goldset
from tests.test_fail_closed import WORKERS, expect, planned, rows_of, run
from tests.test_plugin import junit_cases

# --- 1. evidence by context id is found only in its document ---------------------------------

CHUNK_QUESTIONS = [{"question_id": "q1", "kind": "single_meeting", "question": "What about q1?"},
                   {"question_id": "q2", "kind": "single_meeting", "question": "What about q2?"}]

# m1's chunk `m1#2`, and a chunk of m2 that its system happens to name `m1#2` too
OWN = "Context(context_id='m1#2', doc_id='m1', first_turn=2, last_turn=3, distance=0.2)"
IMPOSTOR = "Context(context_id='m1#2', doc_id='m2', first_turn=0, last_turn=1, distance=0.2)"


def chunk_goldset(root: Path, evidence: dict[str, str]) -> None:
    write_goldset(root, floors="[floors]\ncitation_accuracy = 0.9\nevidence_recall = 0.9\n",
                  questions=CHUNK_QUESTIONS, expected=[
                      {"question_id": q, "gist": "the budget", "evidence": [evidence]}
                      for q in ("q1", "q2")])


@WORKERS
def test_a_context_named_like_the_evidence_but_from_another_document_is_not_it(
        pytester: pytest.Pytester, workers: str) -> None:
    chunk_goldset(pytester.path / "gs", {"context_id": "m1#2", "doc_id": "m1"})
    pytester.makeconftest(planned({"q1": f"cite({OWN})", "q2": f"cite({IMPOSTOR})"}))
    result = run(pytester, workers, "gs", "--ragate-results=r.jsonl", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = rows_of(pytester.path / "r.jsonl")
    assert (rows["q1"]["citations_correct"], rows["q1"]["evidence_spans_found"]) == (1, 1)
    assert (rows["q2"]["citations_correct"], rows["q2"]["evidence_spans_found"]) == (0, 0)
    expect(result, "*FAILED gs/ragate.toml::floor[citation_accuracy]*0.50*",
           "*FAILED gs/ragate.toml::floor[evidence_recall]*0.50*")
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[citation_accuracy]"]["outcome"] == "failure"


@WORKERS
def test_evidence_by_context_id_alone_is_refused_naming_question_and_field(
        pytester: pytest.Pytester, workers: str) -> None:
    """Today's form, `{"context_id": "m1#2"}`, cannot tell m1's chunk from m2's: the
    impostor made this gate green."""
    chunk_goldset(pytester.path / "gs", {"context_id": "m1#2"})
    pytester.makeconftest(planned({"q1": f"cite({OWN})", "q2": f"cite({IMPOSTOR})"}))
    result = run(pytester, workers, "gs", "--ragate-results=r.jsonl")
    assert result.ret != pytest.ExitCode.OK
    expect(result, "*expected.jsonl:1*q1*evidence[0]*context_id 'm1#2' needs the doc_id "
           "of its document too*", "*expected.jsonl:2*q2*evidence[0]*")
    assert not (pytester.path / "r.jsonl").exists() or not rows_of(pytester.path / "r.jsonl")
