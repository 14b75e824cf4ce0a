"""Where a run writes, checked before it runs: two outputs on one file would overwrite each
other (a history file overwritten by a results file is history lost), and an output that
cannot be written would only be found after every question had been asked.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from pytest_ragate.settings import read_settings


def outputs(config: pytest.Config) -> list[tuple[str, str]]:
    """(flag, path) of every file a run writes: pytest's JUnit file and ragate's own."""
    junit = config.getoption("xmlpath", None)
    ours = read_settings(config).run.outputs
    return ([("--junitxml", str(junit))] if junit else []) + [
        (f"--ragate-{name}", path) for name, path in ours.items()]


def _resolved(value: str) -> Path:
    return Path(value).expanduser().resolve()


def check_outputs(config: pytest.Config, judge_file: str | None = None) -> None:
    """A usage error for colliding or unwritable outputs, or inputs an output would
    overwrite (the baseline, unless it is the history being appended to; the fixture judge
    file)."""
    written: dict[Path, list[str]] = {}
    for flag, value in outputs(config):
        written.setdefault(_resolved(value), []).append(flag)
    problems = [f"{' and '.join(flags)} all write {path}: give each output its own file"
                for path, flags in written.items() if len(flags) > 1]
    baseline = read_settings(config).gate.baseline
    if baseline:
        from pytest_ragate.outputs.baseline import baseline_location  # reads history lines

        path, _ = baseline_location(baseline, config.rootpath)
        flags = [f for f in written.get(_resolved(str(path)), []) if f != "--ragate-history"]
        if flags:
            problems.append(f"--ragate-baseline {baseline} is also written by "
                            f"{' and '.join(flags)}: the run would overwrite its own baseline")
    if judge_file:
        flags = written.get(_resolved(judge_file), [])
        if flags:
            problems.append(f"the fixture judge file {judge_file} is also written by "
                            f"{' and '.join(flags)}")
    for path, flags in written.items():
        why = unwritable(path)
        if why:
            problems.append(f"{flags[0]} {path}: {why}")
    if problems:
        raise pytest.UsageError("pytest-ragate outputs:\n" + "\n".join(
            f"  {p}" for p in problems))


def unwritable(path: Path) -> str | None:
    """Why `path` cannot be written, found without creating anything but a probe file in
    the nearest folder that exists."""
    if path.is_dir():
        return "is a directory"
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ragate-probe-"):
            pass
    except OSError as error:
        return f"cannot write in {folder} ({error.strerror or error})"
    return None
