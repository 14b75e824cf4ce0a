"""The one place pytest-ragate touches xdist's private state: logging a held question's reports
while the worker runs a later item (`reporting_as`).

Why it is needed. With a judge, a question's reports are held until its verdicts arrive while
the next questions are already being asked, so judge calls overlap across questions
(`benchmarks/judge_concurrency.py`). xdist's worker (`WorkerInteractor` in `xdist/remote.py`)
tags each logged report with the index of the item it is running and asserts the report is
that item's (`session.items[self.item_index].nodeid == report.nodeid`). A held report is
logged during a later item's protocol, so for that moment the worker is told whose it is.

Why no public design keeps what the held reports are for:
- Logging a question's reports once its verdicts are in, inside its own protocol, makes each
  protocol wait for its judge: one question's calls in flight per worker, not
  `ragate_judge_concurrency` of them.
- Logging the reports at once and sending the verdicts later: a worker can log a report only
  for the item it is running (the same assertion), or send `workeroutput` when it finishes.
  By then JUnit has closed the question's test case (its properties are read from the
  teardown report), so the judged scores would be missing from it, and a replay-mode cache
  miss would have to be a second failure beside the question's passed one.
So the private access stays, here only: the `WorkerInteractor` plugin and its `item_index`.
The same check holds for a question asked again to check a sequential stop: an item made
during the run, which no index names, so it is appended to the worker's `session.items`
first (`adopt`).
It registers itself without a name, and its class lives in the `__channelexec__` namespace
xdist runs `remote.py` in (it cannot be imported and compared by identity): it is found by
class name and by having the attribute. pyproject.toml keeps pytest-xdist below 4, and
tests/test_xdist_worker.py pins the contract: a report logged during a later item's protocol
trips xdist's assertion without `reporting_as`, and goes through with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_ragate.items.keys import GROUPED

INTERACTOR = "WorkerInteractor"


@dataclass
class _Worker:
    interactor: Any
    index: dict[str, int]  # node id -> index in session.items, as xdist numbers items


WORKER_KEY = pytest.StashKey[_Worker]()


def _worker(item: pytest.Item) -> _Worker | None:
    """This xdist worker's interactor, or None outside an xdist worker."""
    config = item.config
    if not hasattr(config, "workerinput"):
        return None
    found = config.stash.get(WORKER_KEY, None)
    if found is None:
        interactor = next((p for p in config.pluginmanager.get_plugins()
                           if type(p).__name__ == INTERACTOR and hasattr(p, "item_index")),
                          None)
        if interactor is None:
            raise RuntimeError(f"pytest-ragate: no xdist {INTERACTOR} with an item_index "
                               "among this worker's plugins: this pytest-xdist changed the "
                               "contract pytest_ragate/items/xdist_worker.py relies on")
        index = {it.nodeid: i for i, it in enumerate(item.session.items)}
        found = config.stash[WORKER_KEY] = _Worker(interactor, index)
    return found


def worker_of(report: pytest.TestReport) -> str | None:
    """The xdist worker a report came from (`gw0`), None in a run without xdist: the id of
    the gateway of the worker controller xdist sets on each report it receives (`report.node`,
    which pytest's own JUnit writer reads too)."""
    return getattr(getattr(getattr(report, "node", None), "gateway", None), "id", None)


def process_id(config: pytest.Config) -> str:
    """This process's xdist worker id (`gw0`), as the controller reads it off its reports;
    "" outside a worker."""
    return str(getattr(config, "workerinput", {}).get("workerid", ""))


def adopt(item: pytest.Item) -> None:
    """An item made during the run (a question asked again, `items/reasking.py`) joins this
    worker's list of items, so reports logged under it (`reporting_as`) pass xdist's check
    that a report is the running item's. Appended at the end: the indices the controller
    sends stay the same, and the worker never runs it again. Outside a worker, nothing: a
    process without xdist loops over its items list, and would run it twice."""
    worker = _worker(item)
    if worker is None:
        return
    worker.index[item.nodeid] = len(item.session.items)
    item.session.items.append(item)


@contextmanager
def reporting_as(item: pytest.Item) -> Iterator[None]:
    """Reports logged inside are `item`'s, whichever item the xdist worker is running."""
    worker = _worker(item)
    if worker is None:
        yield
        return
    running = worker.interactor.item_index
    worker.interactor.item_index = worker.index[item.nodeid]
    try:
        yield
    finally:
        worker.interactor.item_index = running


def name_by_group(config: pytest.Config) -> None:
    """On an xdist worker: xdist names each item of an `xdist_group` by its group
    (`<node id>@<group>`) as it does under `--dist loadgroup`. xdist reads that from its
    internal `loadgroup` option, which it sets from `--dist` (`remote.setup_config`): a worker
    of `-n N` alone has it False."""
    config.option.loadgroup = True


def named_by_group(config: pytest.Config) -> bool:
    """Whether this process names grouped items by their group (`name_by_group`)."""
    return bool(config.getoption("loadgroup", False))


def grouping_scheduler(config: pytest.Config, log: Any) -> Any:
    """What a gate's `-n N` schedules with (`modes/choosing.grouping`): xdist's `load` when
    no collected item is in a group, as before conversations existed; `loadgroup` (a
    conversation's turns on one worker; said in one line) when some are, except that a worker
    that dies hands back its group without the item it died running, as `load` does. xdist's
    own (`LoadScopeScheduling.remove_node`) puts the whole group back with the crashed item
    still pending: the next worker runs it and dies too, until no worker is left to restart
    and the run hangs. The choice is made when every worker has sent its collection (the first
    `schedule`), before any item is sent. This reads and writes the schedulers' private
    `assigned_work` and `workqueue` (tests/test_xdist_worker.py pins the contract)."""
    from xdist.scheduler import LoadGroupScheduling, LoadScheduling

    class CrashedItemsStayDone(LoadGroupScheduling):  # type: ignore[misc]
        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            pending = [(scope, nodeid) for scope, unit in workload.items()
                       for nodeid, done in unit.items() if not done]
            if not pending:
                return None
            scope, crashed = pending[0]
            workload[scope][crashed] = True
            self.workqueue.update({scope: unit for scope, unit in workload.items()
                                   if not all(unit.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

    class GroupsWhenThereAreAny:
        """Both schedulers see the workers and their collections; the first `schedule`
        keeps one and every later call goes to it alone."""

        def __init__(self) -> None:
            self.both = (LoadScheduling(config, log), CrashedItemsStayDone(config, log))
            self.chosen: Any = None
            self.collections: dict[Any, list[str]] = {}  # each worker's, as xdist hands it

        def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
            if self.chosen is not None:
                self.chosen.add_node_collection(node, collection)
                return
            self.collections[node] = list(collection)
            for one in self.both:
                one.add_node_collection(node, collection)

        def schedule(self) -> None:
            if self.chosen is None:
                load, grouped = self.both
                collections = [c for c in self.collections.values() if c]
                in_groups = any("@" in nodeid for c in collections for nodeid in c)
                self.chosen = grouped if in_groups else load
                if any(GROUPED in nodeid for c in collections for nodeid in c):
                    say_grouped(config)
            self.chosen.schedule()

        def __getattr__(self, name: str) -> Any:
            if self.chosen is not None:
                return getattr(self.chosen, name)
            if name in ("add_node", "remove_node"):
                def both(*args: Any) -> Any:
                    answers = [getattr(one, name)(*args) for one in self.both]
                    return answers[0]
                return both
            return getattr(self.both[0], name)

    return GroupsWhenThereAreAny()


def say_grouped(config: pytest.Config) -> None:
    """The run's line that conversation turns are kept together (under xdist's own
    `scheduling tests via ...` line, before any item is sent)."""
    from pytest_ragate.wording.xdist import GROUPED as SAID

    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_line(SAID)
