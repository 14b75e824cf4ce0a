"""The example project runs end to end, as a user would run it, with and without xdist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import results_rows

pytest.importorskip("langchain_core")
pytest.importorskip("sentence_transformers")

HANDBOOK = Path(__file__).parent.parent / "examples" / "handbook"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_handbook_example_gates_its_own_system(tmp_path: Path, workers: str) -> None:
    results = tmp_path / "r.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(HANDBOOK), "-p", "no:cacheprovider", "-n",
         workers, f"--ragate-results={results}", "-rA"],
        capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "handbook: system: ragate_system (conftest.py:" in out
    lines = out.splitlines()
    assert any(line.startswith("PASSED ") and line.endswith(
        "goldset/ragate.toml::floor[evidence_recall@3]") for line in lines), out
    assert any(line.startswith("XFAIL ") and "goldset/ragate.toml::floor[unanswerable:"
               "abstention_accuracy]" in line for line in lines), out
    rows = results_rows(results)
    assert len(rows) == 12 and {r["status"] for r in rows} == {"scored"}
