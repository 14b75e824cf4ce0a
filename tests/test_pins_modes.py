"""`ragate pin` rewrites a goldset's own files: each keeps the permissions its owner gave it
(expected answers kept private stay private), as `open()` over an existing file would."""

from __future__ import annotations

import stat
from pathlib import Path

from pytest_ragate.files import write_atomic
from tests.test_pins_runs import goldset, ragate


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_pin_keeps_the_expected_answers_mode(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    expected = root / "expected.jsonl"
    expected.chmod(0o640)  # no umask gives a new file this mode
    before = expected.read_bytes()
    assert ragate("pin", str(root))[0] == 0
    assert expected.read_bytes() != before  # rewritten, with its pins
    assert mode(expected) == 0o640


def test_write_atomic_over_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "private.jsonl"
    path.write_text("old")
    path.chmod(0o600)
    write_atomic(path, "new")
    assert (path.read_text(), mode(path)) == ("new", 0o600)
