"""Answers stay where they belong: never in a questions file, never out of a sealed goldset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_ragate.goldsets.sealed import Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from tests.conftest import expected_rows, write_goldset
from tests.test_plugin import SYSTEM

REPO = Path(__file__).parent.parent


def test_no_questions_file_in_the_repository_holds_a_gist_or_evidence() -> None:
    files = [p for p in REPO.rglob("questions*.jsonl") if ".venv" not in p.parts]
    assert len(files) >= 2  # the shipped goldsets at least
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if line.strip():
                row = json.loads(line)
                assert not {"gist", "evidence", "answer"} & set(row), f"{path}:{n}"


def test_sealed_gists_never_reach_logs_junit_or_reports(pytester: pytest.Pytester,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.1\n")
    pytester.makeconftest(SYSTEM)
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    secrets = [row["gist"] for row in expected_rows() if row["gist"]]
    assert secrets
    outputs = ["--junitxml=j.xml", "--ragate-results=r.jsonl", "--ragate-report=r.md",
               "--ragate-history=h.jsonl", "-rA", "-v"]
    for key in (None, "s3cret"):
        if key:
            monkeypatch.setenv("RAGATE_SEAL_KEY", key)
        else:
            monkeypatch.delenv("RAGATE_SEAL_KEY", raising=False)
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs", *outputs)
        texts = [result.stdout.str(), result.stderr.str()] + [
            (pytester.path / name).read_text() for name in ("j.xml", "r.jsonl", "r.md",
                                                            "h.jsonl")]
        for secret in secrets:
            assert not any(secret in text for text in texts), secret
    shutil.rmtree(root)
