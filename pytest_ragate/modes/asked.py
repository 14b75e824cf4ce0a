"""Whether a pytest run asked for goldsets, before it collects anything: pytest-ragate stays
inert in a run that did not ask and collects none (no mode, no xdist option or scheduler
changed, no seed drawn, no folder walked, nothing printed; `choosing.py`).

A run asks by its mark expression (`-m rag_gate`, `-m "rag_gate and not slow"`), by a
goldset path among its arguments (a ragate.toml, a folder holding one, or a path inside a
goldset's folder), or by a `--ragate-*` flag. A run that did not ask but collects a goldset
is still gated: its mode starts when collection meets the goldset (`plugin.py`), or, on an
xdist controller (which collects nothing), when the paths it will collect reach one
(`reaches_goldsets`, a bounded search made only under `-n`).

Light on purpose (the standard library and pytest): every run imports it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.modes.nothing_ran import find_goldsets

ASKED_KEY = pytest.StashKey[bool]()  # this run asked for goldsets (`asked`)
_MARK = re.compile(r"(?<![\w])rag_gate(?![\w])")
_NEGATED = re.compile(r"\bnot\s+(\(\s*)?rag_gate(?![\w])")


def asked_by_marks(markexpr: str) -> bool:
    """The mark expression selects ragate items: it names `rag_gate`, not only negated."""
    named = len(_MARK.findall(markexpr or ""))
    return named > len(_NEGATED.findall(markexpr or ""))


def asked_by_flags(options: Mapping[str, Any]) -> bool:
    """A `--ragate-*` flag was given (on the command line or in `addopts`): every ragate
    option's default is None or False."""
    return any(name.startswith("ragate_") and value is not None and value is not False
               for name, value in options.items())


def goldset_path(path: Path, rootpath: Path) -> bool:
    """`path` (an argument, its `::` part dropped) is a goldset's: a ragate.toml, a folder
    holding one, or a path inside a goldset's folder (up to the rootdir)."""
    if path.name == CONFIG_NAME or (path / CONFIG_NAME).is_file():
        return True
    for parent in path.parents:
        if not parent.is_relative_to(rootpath):
            return False
        if (parent / CONFIG_NAME).is_file():
            return True
    return False


def argument_paths(args: Iterable[str], invocation_dir: Path) -> list[Path]:
    """The paths of pytest's arguments (`tests/test_x.py::test_y` -> tests/test_x.py)."""
    return [(invocation_dir / arg.split("::", 1)[0]).resolve() for arg in args
            if arg and not arg.startswith("-")]


def asked(config: pytest.Config) -> bool:
    """This run asked for goldsets: by its marks, its flags or a goldset path it was given
    (testpaths are the project's, not a request: they are `reaches_goldsets`'s)."""
    if asked_by_marks(config.getoption("markexpr", "") or "") \
            or asked_by_flags(vars(config.option)):
        return True
    if config.args_source != pytest.Config.ArgsSource.ARGS:
        return False
    here = config.invocation_params.dir
    root = config.rootpath.resolve()
    return any(goldset_path(path, root) for path in argument_paths(config.args, here))


def reaches_goldsets(config: pytest.Config) -> bool:
    """Under xdist, on the controller (which collects nothing): the paths this run collects
    (its arguments, the testpaths or the invocation folder) hold a goldset. A bounded search
    (`nothing_ran.find_goldsets`), made once, before the workers start."""
    here = config.invocation_params.dir
    for path in argument_paths(config.args, here):
        if goldset_path(path, config.rootpath.resolve()) or (
                path.is_dir() and find_goldsets(path, limit=1)):
            return True
    return False
