"""The goldsets a command is pointed at: a `ragate.toml`, a goldset folder, or a folder
holding goldsets below it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytest_ragate.goldsets import CONFIG_NAME

if TYPE_CHECKING:
    from pytest_ragate.outputs.results import ResultsFile


def find_goldsets(path: Path) -> list[Path]:
    """A `ragate.toml`, a goldset folder, or any folder holding goldsets below it."""
    if path.is_file():
        return [path]
    if (path / CONFIG_NAME).is_file():
        return [path / CONFIG_NAME]
    return sorted(path.rglob(CONFIG_NAME))


def routed_goldsets(files: Iterable[ResultsFile], rootdir: Path) -> list[Path]:
    """The `ragate.toml` of each goldset route the saved runs' headers name that is found
    from here, else from the rootdir."""
    found = []
    for route in (s.route for f in files for s in (f.header.goldsets if f.header else [])):
        for base in (Path.cwd(), rootdir):
            if route.endswith(CONFIG_NAME) and (base / route).is_file():
                found.append(base / route)
                break
    return found


def goldsets_under(paths: Sequence[Path]) -> list[Path]:
    """Every goldset's `ragate.toml` under `paths`; one error when there is none."""
    configs = [c for p in paths for c in find_goldsets(p)]
    if not configs:
        raise click.ClickException(f"no {CONFIG_NAME} under {', '.join(map(str, paths))}")
    return configs
