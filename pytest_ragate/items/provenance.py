"""Which system, retriever and judge answered a goldset, and where each came from.

A user's `conftest.py` that pytest does not pick up (another rootdir, a folder outside the
conftest's reach), or whose fixture is misspelled, would leave the built-in pipeline in place
of their system. So the built-in pipeline answers only a goldset that opts in (`system =
"builtin"` in its ragate.toml) or a run given `--ragate-builtin-system`; any other item it
would answer is an error before anything is built (`check_system`), naming a fixture with a
close name when a conftest in scope defines one. Naming the origin of each part on every row,
in the reports and in the history keeps the rest visible; anchors use it to check the pool of
the user's own system rather than of a built-in retriever they never asked for.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.items.keys import ANCHOR_KEY, GOLDSET_KEY
from pytest_ragate.items.pytest_internals import fixture_definitions, is_fixture
from pytest_ragate.settings import read_settings

BUILTIN_MODULE = "pytest_ragate.plugin"
BUILTIN_SYSTEM = "built-in extractive answerer"
BUILTIN_JUDGE = "built-in (--ragate-judge)"
ORIGINS_KEY = pytest.StashKey[dict[tuple[str, str], "Origin | None"]]()


def builtin_retriever(config: pytest.Config) -> str:
    """The built-in retriever with the encoder that embedded for it: torch and ONNX Runtime
    agree to about 1e-6, and a row says which one gave its distances."""
    from pytest_ragate.builtin_system.builtin import pipeline

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
    defs = fixture_definitions(item, name)
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
    where = relative_to(item.config.rootpath, source) if source else "?"
    return Origin(name, f"{where}:{line}", False)


def relative_to(root: Path, source: str) -> str:
    """`source` as seen from `root` (`conftest.py`, `../shared/conftest.py`), as pytest
    shows paths: an absolute path relative to root, whether under it or not; a relative
    path, or one on another drive, as it is."""
    if os.path.isabs(source):
        try:
            return os.path.relpath(source, root)
        except ValueError:  # another drive (Windows)
            pass
    return str(Path(source))


BUILTIN_VALUES_KEY = pytest.StashKey[dict[str, Any]]()
# the built-in session fixtures a question asks for once its answer is in: each depends on
# the run's settings alone (`pytestconfig`), takes no parameter, and so has one value a run
SESSION_BUILTINS = frozenset({"ragate_judge", "ragate_answerer_model"})


def session_fixture(item: pytest.Function, request: pytest.FixtureRequest, name: str) -> Any:
    """`request.getfixturevalue(name)`, asked of pytest once a run where the built-in
    definition of `name` (one of `SESSION_BUILTINS`) applies to `item` and the item does not
    parametrize it: pytest would return the value it cached for the session every time
    (resolving, checking and re-registering the fixture's finalizer on `pytestconfig` twice
    a question). Any other definition (the user's own, of any scope) is asked every time."""
    callspec = getattr(item, "callspec", None)
    origin = fixture_origin(item, name)
    if (name not in SESSION_BUILTINS or origin is None or not origin.builtin
            or (callspec is not None and name in callspec.params)):
        return request.getfixturevalue(name)
    held = item.config.stash.setdefault(BUILTIN_VALUES_KEY, {})
    if name not in held:  # a fixture that raised is asked again, and raises again
        held[name] = request.getfixturevalue(name)
    return held[name]


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


# --- the built-in pipeline only where asked for ----------------------------------------------

SYSTEM = "ragate_system"
ASKED = '`system = "builtin"` in the goldset\'s ragate.toml, or --ragate-builtin-system'


class MissingSystem(Exception):
    """A goldset item that only the built-in pipeline could answer, where nobody asked for
    it. Not a `pytest.fail` exception: a strict-xfail anchor (`raises=pytest.fail.Exception`)
    must not take it for its known miss."""

    __module__ = "builtins"  # shown as `MissingSystem: …`, as pytest shows `Failed: …`


def builtin_allowed(item: pytest.Item) -> bool:
    """The goldset opts in (`system = "builtin"`), or the run does (--ragate-builtin-system)."""
    goldset = item.stash.get(GOLDSET_KEY, None)
    return read_settings(item.config).run.builtin_system or (
        goldset is not None and goldset.config.system == "builtin")


def _builtin_answers(item: pytest.Item) -> bool:
    """Whether the built-in pipeline would stand in for the user's system on this item: a
    question that asks the built-in `ragate_system`, or an anchor that would check the
    built-in retriever's pool (`anchor_source`). A system of the user's that asks for
    `ragate_retriever` chose it, and keeps it."""
    if ANCHOR_KEY in item.stash:
        return is_builtin_pool(item)
    if SYSTEM not in getattr(item, "fixturenames", ()):
        return False  # a @ragate.goldset test that is the system itself
    origin = fixture_origin(item, SYSTEM)
    return origin is None or origin.builtin


def is_builtin_pool(item: pytest.Item) -> bool:
    """Whether an anchor checks the built-in retriever's pool (`anchor_source`'s last case):
    neither `ragate_retriever` nor `ragate_system` is the user's."""
    return all(o is None or o.builtin for o in (fixture_origin(item, "ragate_retriever"),
                                                 fixture_origin(item, SYSTEM)))


def check_system(item: pytest.Item) -> None:
    """Before a goldset item's fixtures are built: MissingSystem when only the built-in
    pipeline would answer it and nobody asked for that."""
    if _builtin_answers(item) and not builtin_allowed(item):
        raise MissingSystem(missing_system(item))


def missing_system(item: pytest.Item) -> str:
    """`q07: no ragate_system in scope …`, with a near name a conftest in scope defines, or
    where one out of the item's reach is defined and how to share it."""
    hint = "; ".join(f"{o.where} defines {o.name}" for o in near_names(item, SYSTEM))
    return (f"{item.name}: no {SYSTEM} in scope"
            + (f" (did you mean {SYSTEM}? {hint})" if hint else "")
            + "".join(f"; {elsewhere}" for elsewhere in out_of_reach(item))
            + f"; the built-in pipeline answers only where asked for: {ASKED}")


def defines_fixture(conftest: Path, name: str = SYSTEM) -> int | None:
    """The line of a fixture `name` that `conftest` defines, read without importing it (a
    function of that name under a decorator naming `fixture`); None when it has none or
    cannot be read."""
    try:
        tree = ast.parse(conftest.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name \
                and any("fixture" in ast.unparse(d) for d in node.decorator_list):
            return node.lineno
    return None


def out_of_reach(item: pytest.Item) -> list[str]:
    """Where a `ragate_system` is defined that pytest does not apply to `item`: a
    conftest.py it loaded elsewhere, or one in the item's goldset folder or above it (up to
    the rootdir), and the folder above both, where a conftest.py would share it."""
    root = item.config.rootpath
    loaded = [Path(p.__file__) for p in item.config.pluginmanager.get_plugins()
              if Path(getattr(p, "__file__", None) or "/").name == "conftest.py"]
    goldset = item.stash.get(GOLDSET_KEY, None)
    near = [] if goldset is None else [folder / "conftest.py" for folder in
                                       (goldset.root, *goldset.root.parents)
                                       if folder == root or root in folder.parents]
    found = []
    for conftest in dict.fromkeys(p.resolve() for p in [*loaded, *near] if p.is_file()):
        line = defines_fixture(conftest)
        if line is None or conftest.parent in item.path.resolve().parents:
            continue
        both = Path(os.path.commonpath([conftest.parent, item.path.resolve().parent]))
        found.append(f"{relative_to(root, str(conftest))}:{line} defines one, which pytest "
                     f"applies only to tests under {relative_to(root, str(conftest.parent))}"
                     f"/: move it to a conftest.py in a folder above both, such as "
                     f"{relative_to(root, str(both / 'conftest.py'))}")
    return found


def near_names(item: pytest.Item, name: str) -> list[Origin]:
    """The fixtures the conftests in scope of `item` (or its test module) define whose names
    are close to `name` (a typo's distance: difflib ratio 0.75, so `ragate_sytem` and
    `rag_system` are, `my_system` is not), with where each is defined."""
    close = difflib.get_close_matches(name, defined_fixtures(item) - {name}, n=3, cutoff=0.75)
    found = (fixture_origin(item, n) for n in close)
    return [o for o in found if o is not None and not o.builtin]


def defined_fixtures(item: pytest.Item) -> set[str]:
    """The fixture names defined by the conftest.py files above `item` and by its module."""
    modules = [p for p in item.config.pluginmanager.get_plugins()
               if Path(getattr(p, "__file__", None) or "/").name == "conftest.py"
               and Path(p.__file__).parent in item.path.parents]
    if getattr(item, "module", None) is not None:
        modules.append(item.module)  # type: ignore[attr-defined]
    return {getattr(obj, "name", None) or attr for module in modules
            for attr, obj in vars(module).items() if is_fixture(obj)}


def missing_summary(items: Mapping[str, int]) -> str:
    """The run's one line about the items that had no system, by goldset file (route)."""
    counts = ", ".join(f"{n} item{'s' * (n != 1)} of {route}" for route, n in items.items())
    return (f"ragate: no {SYSTEM} in scope for {counts}, which errored. Define your "
            f"system as a `{SYSTEM}` fixture in a conftest.py over the goldset "
            f"(docs/your-system.md), or opt in to the built-in pipeline: {ASKED}")
