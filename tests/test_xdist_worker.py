"""The xdist contracts `pytest_ragate/items/xdist_worker.py` relies on, pinned, one test
each: a worker logs a report only for the item it is running, and `reporting_as` lets a held
report through, also for an item made during the run (`adopt`), while the controller tells
which worker sent each report (`worker_of`); a worker told to name items by their group names
them as xdist's `loadgroup` does (`name_by_group`); a worker dying in a group leaves its item
done (`grouping_scheduler`).

If xdist drops the check, the first test fails (the adapter can go); if it renames what the
adapter touches, the second does (the adapter must follow).
"""

from __future__ import annotations

import pytest

from pytest_ragate.items.xdist_worker import name_by_group, named_by_group

# Holds test_a's reports and logs them during test_b's protocol, as a question with a judge
# does: with the adapter or without it.
HOLDING = '''
import contextlib
import pytest
from _pytest.runner import runtestprotocol
from pytest_ragate.items.xdist_worker import adopt, reporting_as, worker_of

ADAPTER = {adapter}
HELD = []


def log(item, reports):
    with reporting_as(item) if ADAPTER else contextlib.nullcontext():
        for report in reports:
            item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    HELD.append((item, runtestprotocol(item, log=False, nextitem=nextitem)))
    if nextitem is None:  # the worker's last item: log everything held, first item first
        for held, reports in HELD:
            log(held, reports)
        if ADAPTER:  # an item made now, as a question asked again is, joins the worker's
            again = pytest.Function.from_parent(item.parent, name="test_a_again",
                                                callobj=HELD[0][0].obj)
            adopt(again)
            again.ihook.pytest_runtest_logstart(nodeid=again.nodeid, location=again.location)
            log(again, runtestprotocol(again, log=False, nextitem=None))
    return True


def pytest_terminal_summary(terminalreporter):  # the controller's: who sent each report
    sent = {{worker_of(r) for r in terminalreporter.stats.get("passed", [])}}
    terminalreporter.write_line("SENT BY " + " ".join(sorted(map(str, sent))))
'''
TESTS = '''
def test_a():
    pass

def test_b():
    assert 0, "b fails"
'''


def run_holding(pytester: pytest.Pytester, adapter: bool) -> pytest.RunResult:
    pytester.makeconftest(HOLDING.format(adapter=adapter))
    pytester.makepyfile(test_held=TESTS)
    # loadfile: both tests run on one worker, so test_a's reports are held past its protocol.
    # In a process of its own: in this one, pytest finds the plugin imported already and
    # warns it cannot rewrite it, and the summary line is that warning's, not "no tests ran"
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist",
                                         "loadfile", "-rA")


def test_xdist_refuses_a_report_logged_during_another_items_protocol(
        pytester: pytest.Pytester) -> None:
    result = run_holding(pytester, adapter=False)
    result.stdout.fnmatch_lines(["INTERNALERROR>*assert self.session.items[[]self.item_index[]]"
                                 ".nodeid == report.nodeid*"])
    assert "PASSED test_held.py::test_a" not in result.stdout.str()
    assert "no tests ran" in result.stdout.str()


def test_reporting_as_logs_a_held_report_as_its_own_item(pytester: pytest.Pytester) -> None:
    result = run_holding(pytester, adapter=True)
    result.stdout.fnmatch_lines(["PASSED test_held.py::test_a",
                                 "PASSED test_held.py::test_a_again",
                                 "FAILED test_held.py::test_b - AssertionError: b fails*"])
    result.assert_outcomes(passed=2, failed=1)
    assert "item_index" not in result.stdout.str()
    result.stdout.fnmatch_lines(["SENT BY gw[01]"])  # one worker ran both, and said so


def test_a_worker_told_to_name_by_group_names_items_as_loadgroup_does(
        pytester: pytest.Pytester) -> None:
    """xdist's worker names an `xdist_group` item `<node id>@<group>` when its internal
    `loadgroup` option is set, as `name_by_group` sets it."""
    from xdist.remote import WorkerInteractor

    item = pytester.getitem("import pytest\n@pytest.mark.xdist_group('g')\n"
                            "def test_func():\n    pass\n")
    assert not named_by_group(item.config)
    name_by_group(item.config)
    assert named_by_group(item.config)
    WorkerInteractor.pytest_collection_modifyitems(None, item.config, [item])  # type: ignore[arg-type]
    assert getattr(item, "_nodeid", "").endswith("::test_func@g")


GROUP_THAT_CRASHES = '''
import os
import pytest

@pytest.mark.xdist_group("thread")
def test_1_before():
    pass

@pytest.mark.xdist_group("thread")
def test_2_dies():
    os._exit(3)

@pytest.mark.xdist_group("thread")
def test_3_after():
    pass

def test_4_alone():
    pass
'''


def test_a_worker_dying_in_a_group_is_reported_once_and_the_group_runs_on(
        pytester: pytest.Pytester) -> None:
    """`loadgroup` in a run ragate gates (here asked by a flag), as a gate's `-n 2` runs when
    a goldset has conversations: the crashed item is not handed to another worker (xdist's
    own scheduler hands it on, each worker dies in turn and the run hangs); the rest of its
    group still runs."""
    pytester.makepyfile(test_group=GROUP_THAT_CRASHES)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", "--dist",
                                           "loadgroup", "--ragate-results=r.jsonl", "-rA",
                                           timeout=120)
    result.assert_outcomes(passed=3, failed=1)
    assert result.stdout.str().count("crashed while running 'test_group.py::test_2_dies'") == 1
    result.stdout.fnmatch_lines(["*PASSED test_group.py::test_3_after*"])
