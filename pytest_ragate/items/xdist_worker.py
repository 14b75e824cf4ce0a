"""The one place pytest-ragate touches xdist's private state. xdist's public API (its hooks,
`workerinput`/`workeroutput`, the `xdist_group` mark, `--dist`, the scheduler protocol of
`pytest_xdist_make_scheduler`) is used everywhere; each name below is not part of it, and is
used here only, pinned by a test in tests/test_xdist_worker.py (pyproject.toml keeps
pytest-xdist below 4):

- `WorkerInteractor.item_index` (`reporting_as`): the index of the item the worker runs,
  which xdist tags each logged report with and checks it against
  (`session.items[self.item_index].nodeid == report.nodeid`). With a judge, a question's
  reports are held until its verdicts arrive while the next questions are already being asked,
  so judge calls overlap across questions (`benchmarks/judge_concurrency.py`); a held report is
  logged during a later item's protocol, so for that moment the worker is told whose it is.
  The plugin registers itself without a name, and its class lives in the `__channelexec__`
  namespace xdist runs `remote.py` in (it cannot be imported and compared by identity): it is
  found by class name and by having the attribute. No public route keeps what holding is for:
  logging a question's reports inside its own protocol makes each protocol wait for its judge
  (one question's calls in flight per worker, not `ragate_judge_concurrency` of them); logging
  them at once and the verdicts later has no channel but the same check, or `workeroutput`
  when the worker finishes: by then JUnit has closed the question's test case without its
  judged scores, a replay-mode cache miss could no longer fail it, and the terminal, `-x` and
  a worker's crash would see every question of the worker only at its end.
  Test: a report logged during a later item's protocol trips xdist's check without it, and
  goes through with it.
- the worker's `session.items`, which xdist indexes by `item_index` (`adopt`): a question
  asked again to check a sequential stop (`items/reasking.py`) is an item made during the run,
  which no index names; which questions are asked again is known only once the stop is
  checked, and a worker's collection cannot change after it is sent. So it is appended to the
  worker's `session.items` (at the end: the indices the controller sends stay the same, and
  the worker never runs it again; the worker's description of its collection was taken
  before). Test: such an item's reports, logged under `reporting_as`, pass.
- `report.node` (`.gateway.id`, `worker_of`): which worker a report came from, as the
  controller receives it (pytest's own JUnit writer reads `report.node` too); xdist documents
  no public attribute for it. Test: the controller names the worker that sent each report.
- xdist's internal `loadgroup` option (`name_by_group`, `named_by_group`): xdist names an
  `xdist_group` item `<node id>@<group>` (the name its `loadgroup` scheduler groups by) only
  when it is set, which xdist does from `--dist loadgroup` on the worker's own command line;
  a gate's `-n N` chooses grouping after collection (`modes/choosing.py`), so the worker is
  told to. Test: a worker told so names its items as `loadgroup` does.
- `LoadScopeScheduling.assigned_work`, `.workqueue`, `._reschedule` (`grouping_scheduler`):
  when a worker dies in a group, xdist's `remove_node` puts the whole group back with the
  item it died running still pending: the next worker runs it and dies too, until none is
  left and the run hangs. The scheduler protocol has no call to mark an item done without
  its worker. Test: a worker dying in a group is reported once and the group runs on.
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
    `schedule`), before any item is sent; the workers' collections are kept as the scheduler
    protocol hands them (`add_node_collection`). The private names it takes: the module's
    docstring."""
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
