"""Which system, retriever and judge answered a goldset, and where each came from.

A user's `conftest.py` that pytest does not pick up (another rootdir, a folder outside the
conftest's reach) silently leaves the built-in fixtures in place. Naming the origin of each
part on every row, in the reports and in the history makes that visible; anchors use it to
check the pool of the user's own system rather than of a built-in retriever they never asked
for.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _pytest.pathlib import bestrelpath

BUILTIN_MODULE = "pytest_ragate.plugin"
BUILTIN_SYSTEM = "built-in extractive answerer"
BUILTIN_JUDGE = "built-in (--ragate-judge)"
ORIGINS_KEY = pytest.StashKey[dict[tuple[str, str], "Origin | None"]]()


def builtin_retriever(config: pytest.Config) -> str:
    """The built-in retriever with the encoder that embedded for it: torch and ONNX Runtime
    agree to about 1e-6, and a row says which one gave its distances."""
    from pytest_ragate.pipeline.builtin import pipeline

    return pipeline(config).retriever_label()


@dataclass(frozen=True)
class Origin:
    """Where the fixture that applies to an item is defined."""

    name: str
    where: str  # "built-in", or "conftest.py:12"
    builtin: bool

    def __str__(self) -> str:
        return "built-in" if self.builtin else f"{self.name} ({self.where})"


def fixture_origin(item: pytest.Item, name: str) -> Origin | None:
    """The definition of `name` that `item` would get (the closest override wins), cached per
    location: every item of one goldset sees the same fixtures."""
    cache = item.config.stash.setdefault(ORIGINS_KEY, {})
    key = (item.parent.nodeid if item.parent else "", name)
    if key not in cache:
        cache[key] = _origin(item, name)
    return cache[key]


def _origin(item: pytest.Item, name: str) -> Origin | None:
    defs = item.session._fixturemanager.getfixturedefs(name, item)
    if not defs:
        return None
    func: Any = defs[-1].func
    func = getattr(func, "__wrapped__", func)
    if getattr(func, "__module__", None) == BUILTIN_MODULE:
        return Origin(name, "built-in", True)
    try:
        source = inspect.getsourcefile(func)
        line = inspect.getsourcelines(func)[1]
    except (OSError, TypeError):
        return Origin(name, str(getattr(func, "__module__", "?")), False)
    where = bestrelpath(item.config.rootpath, Path(source)) if source else "?"
    return Origin(name, f"{where}:{line}", False)


@dataclass(frozen=True)
class Parts:
    """What a question item's answer came from, as shown on its row and in every report."""

    system: str
    retriever: str
    judge_from: str | None  # where the judge fixture came from; None without a judge

    def fields(self) -> dict[str, Any]:
        return {"system": self.system, "retriever": self.retriever,
                "judge_from": self.judge_from}


def question_parts(item: pytest.Item, judged: bool, decorated: bool) -> Parts:
    """The system is the `ragate_system` fixture (file route) or the test function itself
    (`@ragate.goldset`); the retriever is the `ragate_retriever` the system asked for, when it
    asked for one."""
    if decorated:
        system = f"test function {item.nodeid.partition('[')[0]}"
    else:
        origin = fixture_origin(item, "ragate_system")
        system = BUILTIN_SYSTEM if origin is None or origin.builtin else str(origin)
    names = getattr(item, "fixturenames", ())
    retriever = "inside the system (no ragate_retriever requested)"
    if "ragate_retriever" in names:
        origin = fixture_origin(item, "ragate_retriever")
        retriever = (builtin_retriever(item.config) if origin is None or origin.builtin
                     else str(origin))
    judge_from = None
    if judged:
        origin = fixture_origin(item, "ragate_judge")
        judge_from = BUILTIN_JUDGE if origin is None or origin.builtin else str(origin)
    return Parts(system, retriever, judge_from)


AnchorSource = tuple[str, str]  # ("retriever" | "system", description)


def anchor_source(item: pytest.Item) -> AnchorSource:
    """Whose pool an anchor checks: the user's `ragate_retriever` when they override it; else
    the contexts their own `ragate_system` returns when they override that; else the
    built-in retriever (which then is the built-in system's own retriever)."""
    retriever = fixture_origin(item, "ragate_retriever")
    if retriever is not None and not retriever.builtin:
        return "retriever", str(retriever)
    system = fixture_origin(item, "ragate_system")
    if system is not None and not system.builtin:
        return "system", f"the contexts returned by {system}"
    return "retriever", builtin_retriever(item.config)
