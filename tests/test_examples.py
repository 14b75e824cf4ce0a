"""The example projects run end to end, as a user would run them, with and without xdist."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from tests.conftest import command_env, results_rows

pytestmark = pytest.mark.heavy  # each test runs an example project's gate in a process of its own

EXAMPLES = Path(__file__).parent.parent / "examples"
HANDBOOK = EXAMPLES / "handbook"
RUNBOOKS = EXAMPLES / "runbooks"


def run_example(project: Path, results: Path, workers: str) -> subprocess.CompletedProcess[str]:
    """`pytest PROJECT -n WORKERS`, its results written to `results`."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(project), "-p", "no:cacheprovider", "-n",
         workers, f"--ragate-results={results}", "-rA"],
        capture_output=True, text=True, timeout=600, check=False, env=command_env())


def outcome(out: str, word: str, floor: str) -> bool:
    """Whether the short summary says `WORD …/goldset/ragate.toml::floor[FLOOR]`."""
    return any(line.startswith(f"{word} ") and f"goldset/ragate.toml::floor[{floor}]" in line
               for line in out.splitlines())


def test_the_handbook_example_gates_its_own_system(tmp_path: Path) -> None:
    """As its README runs it, without xdist: under -n 2 each worker would load the same model
    and answer as one process does, and what xdist changes in a gate of a team's own system
    (the controller deciding what its workers ran) is the runbooks example's -n 2 run."""
    pytest.importorskip("langchain_core")
    pytest.importorskip("sentence_transformers")
    results = tmp_path / "r.jsonl"
    done = run_example(HANDBOOK, results, "0")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "handbook: system: ragate_system (conftest.py:" in out
    lines = out.splitlines()
    for floor in ("evidence_recall@3", "states_the_numbers"):  # the second its conftest's
        assert outcome(out, "PASSED", floor), out
    assert any(line.startswith("XFAIL ") and "goldset/ragate.toml::floor[unanswerable:"
               "abstention_accuracy]" in line for line in lines), out
    rows = results_rows(results)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"scored"}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_runbooks_example_gates_a_rank_only_system(tmp_path: Path, workers: str) -> None:
    """Haystack's BM25 retriever, no distances: the floors it meets pass, every row names the
    conftest's system and retriever, and `ragate calibrate` says it needs distances."""
    pytest.importorskip("haystack")
    results = tmp_path / "r.jsonl"
    done = run_example(RUNBOOKS, results, workers)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"runbooks: system: ragate_system \(conftest\.py:\d+\) · retriever: "
                     r"ragate_retriever \(conftest\.py:\d+\) · judge: none", out), out
    for floor in ("citation_accuracy", "abstention_accuracy", "evidence_recall@3"):
        assert outcome(out, "PASSED", floor), out
    assert outcome(out, "XFAIL", "unanswerable:abstention_accuracy"), out
    rows = results_rows(results)
    assert len(rows) == 19 and {r["status"] for r in rows} == {"scored"}
    assert all(re.fullmatch(r"ragate_system \(conftest\.py:\d+\)", r["system"]) and
               re.fullmatch(r"ragate_retriever \(conftest\.py:\d+\)", r["retriever"])
               for r in rows), rows
    assert {r["nearest_distance"] for r in rows} == {None}
    refused = CliRunner().invoke(main, ["calibrate", str(results)])
    assert refused.exit_code == 1 and "max_distance cannot be replayed: 19 of 19 scored rows " \
        "retrieved contexts without a distance" in refused.output, refused.output


def patched_runbooks(tmp_path: Path, appends: dict[str, str]) -> Path:
    """A copy of the runbooks example with text appended to some of its files (a later
    definition in conftest.py wins)."""
    project = tmp_path / "runbooks"
    shutil.copytree(RUNBOOKS, project)
    for name, text in appends.items():
        with (project / name).open("a", encoding="utf-8") as file:
            file.write(text)
    return project


BREAKAGES = {  # each under one worker count: the two above run the example under both
    "retriever returns nothing": (
        "\n\n@pytest.fixture(scope='session')\ndef ragate_retriever():\n"
        "    return lambda question: []\n",
        ["citation_accuracy", "abstention_accuracy", "evidence_recall@3"], "2"),
    "never abstains": ("\nMIN_SHARED = 0\n", ["abstention_accuracy"], "0"),
}
# An off-topic anchor (the example leaves them out): over BM25's contexts, which carry no
# distance, it fails naming them, never holds. Added to the "never abstains" breakage's run:
# whether the system abstains does not change what the contexts carry.
COFFEE = {
    "goldset/ragate.toml": '\n[anchors]\nfile = "anchors.jsonl"\n',
    "goldset/anchors.jsonl": '{"anchor_id": "coffee", "kind": "off_topic_control", "claim":'
                             ' "How do I descale the coffee machine in the office '
                             'kitchen?", "evidence": null}\n'}


@pytest.mark.parametrize("breakage", BREAKAGES)
def test_a_broken_runbooks_system_fails_its_gate(tmp_path: Path, breakage: str) -> None:
    """Each breakage fails the floors it breaks; the never-abstaining one's run also holds
    the off-topic anchor, which says it needs distances (a rank-only retriever's anchor under
    -n 0 and -n 2: tests/test_fail_closed_scoring.py)."""
    pytest.importorskip("haystack")
    patch, failing, workers = BREAKAGES[breakage]
    anchored = breakage == "never abstains"
    project = patched_runbooks(tmp_path, {"conftest.py": patch, **(COFFEE if anchored else {})})
    done = run_example(project, tmp_path / "r.jsonl", workers)
    assert done.returncode == 1, done.stdout + done.stderr
    for floor in failing:
        assert outcome(done.stdout, "FAILED", floor), done.stdout
    if anchored:
        assert any(line.startswith("FAILED ") and "goldset/ragate.toml::anchor[coffee]" in line
                   for line in done.stdout.splitlines()), done.stdout
        assert ("anchor coffee: an off_topic_control anchor is held to a max_distance, and 3 "
                "of the 3 contexts in its pool carry no distance") in done.stdout, done.stdout
