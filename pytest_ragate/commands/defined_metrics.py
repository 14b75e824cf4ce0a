"""The metrics a project defines (`@ragate.metric`), as the `ragate` commands know them:
read from its conftest.py files, never run (scoring/custom.declared_in), so `ragate
validate`, `power` and `suggest` accept a floor on one as a run would."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def conftest_files(rootdir: Path, paths: Sequence[Path]) -> list[Path]:
    """The conftest.py files a pytest run of `paths` from `rootdir` loads first: the
    rootdir's, and those of each folder from it down to each path."""
    found: dict[Path, None] = {}
    for path in paths or (Path.cwd(),):
        here = path.resolve()
        folder = here if here.is_dir() else here.parent
        chain = [folder, *folder.parents]
        for part in reversed(chain):
            if part == rootdir.resolve() or rootdir.resolve() in part.parents:
                found.setdefault(part / "conftest.py")
    found.setdefault(rootdir.resolve() / "conftest.py")
    return [p for p in found if p.is_file()]


def declare_metrics(rootdir: Path, paths: Sequence[Path]) -> None:
    """Tell the registry the metrics the project's conftest files declare."""
    from pytest_ragate.scoring.custom import declare, declared_in

    declared = {}
    for path in conftest_files(rootdir, paths):
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        declared.update(dict(declared_in(source)))
    declare(sorted(declared.items()))
