"""The one place pytest-ragate touches pytest's private API: `_pytest` imports and underscored
attributes of pytest's objects. Every other module asks the functions here, the way
`xdist_worker.py` fences xdist; tests/test_architecture.py holds the fence.

What has no public route, and what ragate needs it for:
- `run_unlogged` (`_pytest.runner.runtestprotocol(log=False)`): an item's setup, call and
  teardown whose reports are logged later or never: a question's are held while its judge
  verdicts are pending (`questions.run_protocol`), a floor's are reported by the controller
  once every question has run (`collection.run_floor`). The public hook logs as it runs.
- `shared_closure` (`item._fixtureinfo`): the fixture closure pytest computed for one item of
  a goldset, handed to the next through `Function.from_parent(fixtureinfo=...)`, so 10,000
  items do not compute the same closure 10,000 times. Without it each item computes its own.
- `function_arguments` (`item._fixtureinfo.argnames`): the arguments a question's test function
  takes (the closure, `item.fixturenames`, also holds autouse fixtures and what fixtures
  request), to call it as pytest would, keeping what it returns: the answer.
- `fixture_definitions` (`session._fixturemanager.getfixturedefs`): which definition of
  `ragate_system`, `ragate_retriever` or `ragate_judge` applies to an item, to name the
  user's system on every row and to refuse the built-in one where nobody asked for it.
- `is_fixture` (`_pytest.fixtures.getfixturemarker`): whether a conftest's attribute is a
  fixture, to suggest a near name for a misspelt `ragate_system`.
- `as_reported` (`item._id`, `_pytest.nodeid.coerce_node_id`, pytest 9): `--lf` keys last
  failures by structured node ids; a bracketed item name (`floor[x]`) must be parsed as a
  report's node id is, or the item would never match its own last failure.
- `in_group` (`item._id` or, pytest 8, `item._nodeid`): under xdist's `loadgroup`, a turn of a
  conversation's node id ends with its `@group`, which xdist's scheduler groups items by;
  xdist 3.8 sets the suffix on `_nodeid`, which pytest 9 no longer reads its node id from,
  so without this every turn would be scheduled on its own (`items/conversations.py`).
  The suffix is set only while the worker sends its collection to the scheduler (which reads
  it only then) and `out_of_group` sets the node id back after, so `--lf` and a turn's
  reports, JUnit test case and terminal line see the node id it has without xdist
  (`conversations.grouped`, `modes/worker.py`).
- `xml_key` (`_pytest.junitxml`): pytest's JUnit writer (its `node_reporter(report).append`,
  `add_global_property`, and its unregistering), to give each question's test case a readable
  `<system-out>` (`modes/reporting.junit_text`), a stopped run a suite property, and to keep
  pytest from writing its JUnit file for a run ragate refused. pytest writes `<system-out>`
  only from captured output when `junit_logging` asks for it; `record_testsuite_property` is a
  fixture, which the process that concludes the run, after every item, cannot ask for; and no
  hook keeps the JUnit file from being written. A question's properties take the public route,
  `report.user_properties` (`reporting.junit_case`); the text is escaped by pytest's rule
  written here (`xml_escape`), not by importing `bin_xml_escape`.
- `log_handlers` (the `logging-plugin`'s `caplog_handler`, `report_handler`,
  `log_file_handler`, `log_cli_handler`): pytest's own log handlers, made once per session,
  to mask a record that reaches them without passing through this process's record factory
  (`printed.py`). Without them, the factory alone masks what this process logs.
- `show_redacted` (`TerminalRepr.__str__` prints through `toterminal`): an INTERNALERROR's
  representation, which pytest, xdist and the terminal print as `str(excrepr)`, shown masked
  (`printed.py`). The hook that receives it cannot replace it.
- `redacted_repr` (a failure's `longrepr` is a tree of `_pytest._code.code` dataclasses): a
  report's failure masked in place, keeping the crash line (`reprcrash`) that pytest's short
  summary, xdist's report and ragate's own `why` read; replaced by its masked text only where
  the tree is not made of dataclasses, or masking its parts did not mask its whole.
- `said_once` (`TerminalReporter.stats`, the lists pytest's ERRORS and FAILURES sections and
  its short summary print every failed report from): the items that share a cause with one
  shown in full (`wording/causes.py`) kept out of them while they print, and put back before
  the run's counts line. No hook filters what those sections show: `pytest_report_teststatus`
  only files a report under another category (which the counts line would show), and a
  shorter `longrepr` still prints a section per item. Its contract is pinned in
  tests/test_said_once.py, beside the grouping it serves.

- `TerminalRepr` (`_pytest._code.code`), for type checking only (never imported at run time):
  the type of a failure's representation, which pytest exports under no public name.

Each name is imported here once, guarded. When a pytest release drops one, what needs it
raises `PytestChanged`, naming the pytest version and what ragate needed; where doing without
is safe there is a fallback instead: without `xml_key` (imported with a fallback, as
Hypothesis's plugin does) ragate finds no JUnit writer, and leaves pytest's JUnit file as
pytest writes it; without `_fixtureinfo`, each item computes its own closure; without
`getfixturemarker`, no near name is suggested; without the log handlers, none is filtered.
tests/test_pytest_internals.py pins each contract against the installed pytest (`said_once`'s
is in tests/test_said_once.py, `in_group`'s and `out_of_group`'s in
tests/test_conversation_names.py), and that `xml_escape` is pytest's rule.

Where a public route exists ragate takes it instead: a question asks for its judge through
its own `request` (`collection.requests_itself`), where a fixture is defined is
`os.path.relpath` (`provenance.relative_to`), and an anchor's strict XPASS is told by the
anchor's own xfail (`collection.anchor_outcome`), not by `_pytest.skipping.xfailed_key`.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from _pytest._code.code import TerminalRepr as TerminalRepr  # a type only: re-exported

# pytest's JUnit writer's rule (`_pytest.junitxml.bin_xml_escape`, which ragate does not
# import): characters XML 1.0 does not allow (and DEL) shown as `#xNN`.
_ILLEGAL_XML = re.compile("[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd"
                          "\U00010000-\U0010ffff]")


def xml_escape(text: object) -> str:
    """`text` as pytest's JUnit writer escapes a text it writes: each character XML 1.0 does
    not allow shown as `#xNN` (ElementTree escapes the rest)."""
    def shown(found: re.Match[str]) -> str:
        code = ord(found.group())
        return f"#x{code:02X}" if code <= 0xFF else f"#x{code:04X}"

    return _ILLEGAL_XML.sub(shown, str(text))


try:
    from _pytest.runner import runtestprotocol as _runtestprotocol
except ImportError:  # pragma: no cover - only a pytest without it gets here
    _runtestprotocol = None  # type: ignore[assignment]
try:
    from _pytest.fixtures import getfixturemarker as _getfixturemarker
except ImportError:  # pragma: no cover
    _getfixturemarker = None  # type: ignore[assignment]
try:
    from _pytest.nodeid import coerce_node_id as _coerce_node_id  # pytest 9
except ImportError:
    _coerce_node_id = None  # type: ignore[assignment]
try:
    from _pytest.junitxml import xml_key
except ImportError:  # pragma: no cover
    xml_key = pytest.StashKey[Any]()  # set by nobody: no JUnit writer is found


class PytestChanged(RuntimeError):
    """This pytest no longer has a private name ragate relies on (pytest_internals.py)."""


def _changed(what: str, needed_for: str) -> PytestChanged:
    return PytestChanged(
        f"pytest-ragate needs {what} from pytest's private API, to {needed_for}; pytest "
        f"{pytest.__version__} has none. This pytest changed a contract "
        "pytest_ragate/items/pytest_internals.py relies on: please report it, and use a "
        "pytest release that pytest-ragate supports meanwhile")


def run_unlogged(item: pytest.Item, nextitem: pytest.Item | None) -> list[pytest.TestReport]:
    """The item's setup, call and teardown, run as pytest runs them; their reports are
    returned, not logged."""
    if _runtestprotocol is None:
        raise _changed("_pytest.runner.runtestprotocol", "run an item and log its reports "
                       "later (a question's judge verdicts, a floor's decision)")
    return _runtestprotocol(item, log=False, nextitem=nextitem)


def shared_closure(item: pytest.Function) -> Any | None:
    """The fixture closure pytest computed for `item`, for `from_parent(fixtureinfo=...)` of
    the next item of its kind; None (each item computes its own) if this pytest has none."""
    return getattr(item, "_fixtureinfo", None)


def function_arguments(item: pytest.Function) -> tuple[str, ...]:
    """The names of the arguments `item`'s test function takes, as pytest calls it."""
    info = getattr(item, "_fixtureinfo", None)
    argnames = getattr(info, "argnames", None)
    if argnames is None:
        raise _changed("Function._fixtureinfo.argnames", "call a question's test with the "
                       "arguments it takes and keep the answer it returns")
    return tuple(argnames)


def fixture_definitions(item: pytest.Item, name: str) -> Sequence[Any]:
    """The definitions of fixture `name` visible to `item`, the one that applies last."""
    manager = getattr(item.session, "_fixturemanager", None)
    lookup: Callable[[str, pytest.Item], Sequence[Any] | None] | None = getattr(
        manager, "getfixturedefs", None)
    if lookup is None:
        raise _changed("Session._fixturemanager.getfixturedefs", f"tell which {name} "
                       "fixture applies to a goldset item (the user's or the built-in one)")
    return lookup(name, item) or ()


def is_fixture(obj: object) -> bool:
    """Whether `obj`, an attribute of a conftest or test module, is a fixture definition;
    False for everything if this pytest cannot tell (then no near name is suggested)."""
    return _getfixturemarker is not None and _getfixturemarker(obj) is not None


def as_reported(item: pytest.Item) -> None:
    """pytest 9 keys `--lf` by a structured node id parsed from each report's node id
    string, in which `floor[x]` is a name with params; an item whose id was built from its
    name alone (`floor[x]` as a plain name) would never match its own last failure. Give the
    bracketed names of floors, anchors and repeats (`q07[r2]`) their parsed form (pytest 8
    keeps node ids as strings: nothing to do)."""
    if not hasattr(item, "_id"):
        if hasattr(item, "_nodeid"):
            return  # pytest 8
        raise _changed("Node._id or Node._nodeid", "give floors, anchors and repeated "
                       "questions the node ids --lf matches their last failures by")
    if _coerce_node_id is None:
        raise _changed("_pytest.nodeid.coerce_node_id", "give floors, anchors and repeated "
                       "questions the node ids --lf matches their last failures by")
    item._id = _coerce_node_id(item.nodeid)


def in_group(item: pytest.Item, group: str) -> None:
    """The node id xdist's `loadgroup` gives an item of `group` (`<node id>@<group>`), set
    where pytest 9 reads node ids from (xdist itself sets `_nodeid` only, pytest 8's)."""
    grouped = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        if _coerce_node_id is None:
            raise _changed("_pytest.nodeid.coerce_node_id", "keep a conversation's turns on "
                           "one xdist worker")
        item._id = _coerce_node_id(grouped)
    elif not hasattr(item, "_nodeid"):  # pytest 8: xdist sets `_nodeid` itself
        raise _changed("Node._id or Node._nodeid", "keep a conversation's turns on one xdist "
                       "worker")


def out_of_group(item: pytest.Item, nodeid: str) -> None:
    """An item's node id set back to `nodeid`, the one it had before `in_group` (pytest 9)
    or xdist (pytest 8, `_nodeid`) gave it its group's suffix."""
    if item.nodeid == nodeid:
        return
    if hasattr(item, "_id"):
        if _coerce_node_id is None:
            raise _changed("_pytest.nodeid.coerce_node_id", "name a conversation's turns as "
                           "they are named without xdist")
        item._id = _coerce_node_id(nodeid)
    elif hasattr(item, "_nodeid"):
        item._nodeid = nodeid
    else:
        raise _changed("Node._id or Node._nodeid", "name a conversation's turns as they are "
                       "named without xdist")


LOG_HANDLERS = ("caplog_handler", "report_handler", "log_file_handler", "log_cli_handler")


def log_handlers(config: pytest.Config) -> list[logging.Handler]:
    """pytest's own log handlers, made once per session (caplog's, a report's captured log,
    `--log-file`'s, the live log's); none without pytest's logging plugin (`-p no:logging`)
    or in a pytest that keeps them elsewhere."""
    plugin = config.pluginmanager.get_plugin("logging-plugin")
    found = [getattr(plugin, name, None) for name in LOG_HANDLERS] if plugin else []
    return [handler for handler in found if isinstance(handler, logging.Handler)]


def show_redacted(excrepr: object, redact: Callable[[str], str]) -> None:
    """An exception's representation (`excinfo.getrepr()`: an INTERNALERROR's) shown masked
    wherever it is printed as `str(excrepr)`, as pytest, xdist and the terminal print it."""
    text = str(excrepr)
    clean = redact(text)
    if clean == text:
        return
    if not callable(getattr(excrepr, "toterminal", None)):
        raise _changed("TerminalRepr.toterminal", "mask what an INTERNALERROR prints")

    def toterminal(tw: Any) -> None:
        tw.line(clean)

    excrepr.toterminal = toterminal  # type: ignore[attr-defined]  # what __str__ prints through


def redacted_repr(longrepr: object, redact: Callable[[str], str]) -> object:
    """A failure's representation (a report's `longrepr`) masked: the same object, each text
    in its tree masked in place, where that masks the whole of what it prints; else (another
    kind of object, or a secret split across two of its texts) its masked text."""
    text = str(longrepr)
    clean = redact(text)
    if clean == text:
        return longrepr
    if dataclasses.is_dataclass(longrepr) and not isinstance(longrepr, type):
        _mask_fields(longrepr, redact)
        masked = str(longrepr)
        if redact(masked) == masked:
            return longrepr
    return clean


def _masked(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_masked(v, redact) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _mask_fields(value, redact)
    return value


def _mask_fields(node: Any, redact: Callable[[str], str]) -> None:
    for field in dataclasses.fields(node):
        object.__setattr__(node, field.name, _masked(getattr(node, field.name), redact))


SUMMARISED = ("error", "failed")  # the categories of `TerminalReporter.stats` said once


@contextmanager
def said_once(terminalreporter: Any, hidden: Collection[tuple[str, str]]) -> Iterator[None]:
    """While pytest's terminal summary prints its ERRORS and FAILURES sections and its short
    summary, the failed reports in `hidden` (node id, phase) are not among the reports it
    prints; they are back once it is done, so the run's counts line counts each of them."""
    stats = getattr(terminalreporter, "stats", None)
    if not isinstance(stats, dict) or not all(
            isinstance(stats.get(key, []), list) for key in SUMMARISED):
        raise _changed("TerminalReporter.stats (a dict of lists of reports)", "print a cause "
                       "many questions share once instead of once per question")
    whole = {key: list(stats[key]) for key in SUMMARISED if key in stats}
    for key, reports in whole.items():
        stats[key][:] = [r for r in reports if (getattr(r, "nodeid", None),
                                                getattr(r, "when", None)) not in hidden]
    try:
        yield
    finally:
        for key, reports in whole.items():
            ids = {id(r) for r in reports}
            stats[key][:] = reports + [r for r in stats[key] if id(r) not in ids]
