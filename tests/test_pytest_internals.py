"""The pytest contracts `pytest_ragate/items/pytest_internals.py` relies on, pinned against
the installed pytest: each private name it takes, and the public routes ragate takes instead
of one (a question's own `request`, `os.path.relpath` for where a fixture is defined).

If pytest changes one of them, a test here fails, naming which; `PytestChanged` is what a
user would see instead of an AttributeError deep in a run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import _pytest.junitxml
import pytest
from _pytest.pathlib import bestrelpath

from pytest_ragate.items import pytest_internals as internals
from pytest_ragate.items.collection import requests_itself
from pytest_ragate.items.provenance import relative_to

PYTEST_9 = int(pytest.__version__.split(".")[0]) >= 9

FIXTURES = '''
import pytest

@pytest.fixture
def a(d):
    return "a"

@pytest.fixture
def b():
    return "b"

@pytest.fixture
def d():
    return "d"

@pytest.fixture(autouse=True)
def c():
    return "c"

BUILT = []

@pytest.fixture(scope="session")
def judged():
    BUILT.append("judged")
    return "a judge"
'''


def item_of(pytester: pytest.Pytester, source: str) -> pytest.Function:
    pytester.makeconftest(FIXTURES)
    item = pytester.getitem(source)
    assert isinstance(item, pytest.Function)
    return item


def test_run_unlogged_returns_setup_call_and_teardown_reports_and_logs_none(
        pytester: pytest.Pytester) -> None:
    item = item_of(pytester, "def test_func(a):\n    assert a == 'b'\n")
    recorder = pytester.make_hook_recorder(item.config.pluginmanager)
    reports = internals.run_unlogged(item, None)
    assert [(r.when, r.outcome) for r in reports] == [("setup", "passed"), ("call", "failed"),
                                                      ("teardown", "passed")]
    assert recorder.getcalls("pytest_runtest_logreport") == []


def test_function_arguments_are_what_the_test_takes_not_its_closure(
        pytester: pytest.Pytester) -> None:
    """The closure also holds autouse fixtures (`c`) and what fixtures request (`d`): a test
    function called with it would get arguments it does not take."""
    item = item_of(pytester, "def test_func(a, b):\n    pass\n")
    assert internals.function_arguments(item) == ("a", "b")
    assert {"a", "b", "c", "d"} <= set(item.fixturenames)


def test_a_shared_closure_is_the_one_the_next_item_is_built_with(
        pytester: pytest.Pytester) -> None:
    """`from_parent(fixtureinfo=...)` takes it, and the item's `fixturenames` is its closure
    list itself: `requests_itself` adds `request` once for every item that shares it."""
    item = item_of(pytester, "def test_func(a):\n    pass\n")
    closure = internals.shared_closure(item)
    assert closure is not None and closure.names_closure is item.fixturenames
    twin = pytest.Function.from_parent(item.parent, name="test_func", callobj=item.obj,
                                       fixtureinfo=closure)
    assert twin.fixturenames is item.fixturenames
    requests_itself(item)
    requests_itself(twin)
    assert twin.fixturenames.count("request") == 1


def test_fixture_definitions_end_with_the_one_that_applies(pytester: pytest.Pytester) -> None:
    item = item_of(pytester, "import pytest\n@pytest.fixture\ndef b():\n    return 'mine'\n"
                             "def test_func(b):\n    pass\n")
    definitions = internals.fixture_definitions(item, "b")
    assert [d.func.__module__ for d in definitions] == ["conftest", item.module.__name__]
    assert internals.fixture_definitions(item, "no_such_fixture") == ()


def test_is_fixture_tells_a_fixture_from_a_function(pytester: pytest.Pytester) -> None:
    item = item_of(pytester, "def test_func():\n    pass\n")
    conftest = next(p for p in item.config.pluginmanager.get_plugins()
                    if Path(getattr(p, "__file__", None) or "/").name == "conftest.py")
    assert internals.is_fixture(conftest.judged)
    assert not internals.is_fixture(item_of)


class Floor(pytest.Item):
    def runtest(self) -> None:
        pass


def test_as_reported_gives_a_bracketed_name_the_node_id_its_reports_parse_to(
        pytester: pytest.Pytester) -> None:
    """pytest 9's `--lf` matches `item.id` against ids parsed from report node ids."""
    item = item_of(pytester, "def test_func():\n    pass\n")
    floor = Floor.from_parent(item.parent, name="floor[recall]")
    before = floor.nodeid
    if PYTEST_9:  # built from its name, the id is not the one its reports parse to
        from _pytest.nodeid import NodeId

        assert floor.id != NodeId.parse(before)
    internals.as_reported(floor)
    assert floor.nodeid == before
    if PYTEST_9:
        assert floor.id == NodeId.parse(before)


def test_xml_key_is_pytests_own(pytester: pytest.Pytester) -> None:
    """The writer ragate reaches has what modes/reporting.py calls on it."""
    assert internals.xml_key is _pytest.junitxml.xml_key
    config = pytester.parseconfigure(f"--junitxml={pytester.path / 'junit.xml'}")
    writer = config.stash.get(internals.xml_key, None)
    assert callable(writer.node_reporter) and callable(writer.add_global_property)


def test_the_escape_is_pytests_rule() -> None:
    """ragate escapes a question's `<system-out>` as pytest's JUnit writer escapes what it
    writes, without importing pytest's private function."""
    text = "bell\a, nul\x00, del\x7f, tab\t, é, \ufffe, \U0001f600 and \ud800"
    assert internals.xml_escape(text) == _pytest.junitxml.bin_xml_escape(text)


# As ragate does: `request` joins each item's closure at collection, and the test's call
# asks the item's own request for a session fixture the test function does not take.
OWN_REQUEST = FIXTURES + '''
from pytest_ragate.items.collection import requests_itself

def pytest_collection_modifyitems(items):
    for item in items:
        requests_itself(item)

@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    request = pyfuncitem.funcargs["request"]
    assert isinstance(request, pytest.FixtureRequest) and request.node is pyfuncitem
    assert BUILT == [], "set up with the item"
    assert request.getfixturevalue("judged") == "a judge"
    assert BUILT == ["judged"]
    return True
'''


def test_a_question_asks_for_its_judge_through_its_own_request_when_called(
        pytester: pytest.Pytester) -> None:
    """The public route for `ragate_judge`: the item's `request` in its closure is set up
    with the item (building nothing), and gives the judge when the call asks for it."""
    pytester.makeconftest(OWN_REQUEST)
    pytester.makepyfile("def test_func(b):\n    pass\n")
    pytester.inline_run("-p", "no:cacheprovider").assertoutcome(passed=1)


@pytest.mark.parametrize("source", ["conftest.py", "tests/conftest.py", "../shared/conftest.py",
                                    "../../elsewhere/conftest.py", "."])
def test_where_a_fixture_is_defined_is_said_as_pytest_says_it(tmp_path: Path,
                                                              source: str) -> None:
    root = tmp_path / "project" / "root"
    path = Path(os.path.normpath(root / source))
    assert relative_to(root, str(path)) == bestrelpath(root, path)


def test_a_relative_source_is_kept_as_pytest_keeps_it(tmp_path: Path) -> None:
    assert relative_to(tmp_path, "./conftest.py") == bestrelpath(tmp_path,
                                                                  Path("./conftest.py"))


@pytest.mark.parametrize(("name", "call"), [
    ("_runtestprotocol", lambda item: internals.run_unlogged(item, None)),
    ("_coerce_node_id", internals.as_reported),
], ids=["runtestprotocol", "coerce_node_id"])
def test_a_pytest_without_a_name_is_a_loud_error_naming_its_version(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str,
        call: Callable[[pytest.Item], object]) -> None:
    item = item_of(pytester, "def test_func():\n    pass\n")
    monkeypatch.setattr(internals, name, None)
    if name == "_coerce_node_id" and not PYTEST_9:
        call(item)  # pytest 8 keeps node ids as strings: nothing is needed
        return
    with pytest.raises(internals.PytestChanged, match=rf"pytest {pytest.__version__} has none"):
        call(item)


def test_an_item_without_its_fixture_info_is_a_loud_error() -> None:
    class Bare:
        pass

    with pytest.raises(internals.PytestChanged, match=r"_fixtureinfo\.argnames"):
        internals.function_arguments(Bare())  # type: ignore[arg-type]
    assert internals.shared_closure(Bare()) is None  # type: ignore[arg-type]


LOGGED = '''
import logging

from pytest_ragate.items.pytest_internals import log_handlers


def test_logged(request, caplog):
    handlers = log_handlers(request.config)
    assert caplog.handler in handlers and len(handlers) == 4
    assert set(handlers) <= set(logging.getLogger().handlers)  # what a record reaches
    logging.getLogger("x").warning("seen")
    assert caplog.messages == ["seen"]
'''


def test_log_handlers_are_the_ones_pytest_logs_through(pytester: pytest.Pytester) -> None:
    """caplog's, a report's captured log, `--log-file`'s and the live log's: the four a
    record reaches while a test runs (`printed.py` filters them)."""
    pytester.makepyfile(test_logged=LOGGED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--log-file=log.txt",
                                "--log-cli-level=INFO")
    result.assert_outcomes(passed=1)
    assert "seen" in (pytester.path / "log.txt").read_text()
    assert len(internals.log_handlers(pytester.parseconfigure())) == 4
    assert internals.log_handlers(pytester.parseconfigure("-p", "no:logging")) == []


@pytest.mark.parametrize("style", ["native", "long"])
def test_an_internalerror_shown_redacted_prints_only_the_masked_text(style: str) -> None:
    """pytest prints an INTERNALERROR as `str(excrepr)`, as the terminal and xdist's worker
    do (`Config.notify_exception`, `TerminalReporter.pytest_internalerror`)."""
    def fails(key: str) -> None:
        raise RuntimeError(f"cannot tell {key}")

    try:
        fails("sk-hidden")
    except RuntimeError:
        excrepr = pytest.ExceptionInfo.from_current().getrepr(style=style, showlocals=True,
                                                              funcargs=True)
    assert "sk-hidden" in str(excrepr)
    internals.show_redacted(excrepr, lambda text: text.replace("sk-hidden", "***"))
    assert "RuntimeError: cannot tell ***" in str(excrepr)
    assert "sk-hidden" not in str(excrepr)


def _failure(key: str, style: str) -> object:
    """A failed assertion's representation as pytest makes a report's (locals, arguments)."""
    def fails(secret: str) -> None:
        assert secret == "expected", f"got {secret}"

    try:
        fails(key)
    except AssertionError:
        return pytest.ExceptionInfo.from_current().getrepr(style=style, showlocals=True,
                                                           funcargs=True, chain=True)
    raise AssertionError("did not fail")


@pytest.mark.parametrize("style", ["native", "long", "short"])
def test_a_failure_redacted_keeps_its_crash_line(style: str) -> None:
    """A masked failure stays pytest's representation: its crash line, which the short
    summary, xdist's report and ragate's `why` read, masked with the rest; a redaction that
    turned it into text left them the traceback's first source line instead."""
    longrepr = _failure("sk-hidden", style)
    mask: Callable[[str], str] = lambda text: text.replace("sk-hidden", "***")  # noqa: E731
    assert internals.redacted_repr(longrepr, mask) is longrepr
    assert "sk-hidden" not in str(longrepr) and "***" in str(longrepr)
    assert longrepr.reprcrash.message.startswith("AssertionError: got ***")  # type: ignore[attr-defined]


def test_a_failure_whose_parts_cannot_be_masked_alone_becomes_its_masked_text() -> None:
    """A secret that only the whole text shows (here across a source line and the error line
    under it, two texts of the tree), or a representation that is no dataclass: the masked
    text, never a leak."""
    longrepr = _failure("sk-hidden", "long")
    across: Callable[[str], str] = lambda text: text.replace('{secret}"\nE', "***")  # noqa: E731
    text = str(longrepr)
    assert across(text) != text
    assert internals.redacted_repr(longrepr, across) == across(text)
    assert internals.redacted_repr("plain sk-hidden", lambda t: t.replace("sk-hidden", "*")
                                   ) == "plain *"
