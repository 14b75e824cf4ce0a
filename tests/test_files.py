"""Files ragate writes for people and CI to read."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pytest_ragate.files import write_atomic


def test_write_atomic_replaces_whole_and_is_readable_like_open_makes_it(tmp_path: Path) -> None:
    path = tmp_path / "out" / "report.html"
    old = os.umask(0o022)
    try:
        write_atomic(path, "first")
        write_atomic(path, "second")
    finally:
        os.umask(old)
    assert path.read_text() == "second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # mkstemp alone would leave 0600
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]  # no temp file left
