"""The shard mode (`--ragate-shard i/N`): one slice of the gate run on one CI runner, its
results file written for `ragate decide`, nothing decided.

`ShardRun` (one process, or the xdist controller) keeps its slice of the collection
(`select`), concludes the run without deciding it (a missing result fails no shard: the
decision counts it) and says what it ran; `ShardWorker`, on each xdist worker, keeps the same
slice of what the worker collected. The shard is parsed once (`choosing.py`) and kept on the
object.

Every goldset's question items (each repeat its own) are ordered by a digest of their route
and name and dealt round-robin over the N shards, from a start its route's digest picks; its
anchors are dealt the same way after them. So each shard gets the same share of every goldset
(they differ by at most one question and one anchor), and which shard asks a question depends
only on the route, the question's name and N: not on collection order, on `-k`/`-m`, on the
machine or on the other goldsets of the run. `ragate decide` asks the same deal (the
population's, `decision/population.py`) which shard owed a missing row. Other tests of the
run are dealt the same way among themselves; floors run in no shard (`modes/decide_saved.py`
decides them over every shard's results).

Why not pytest-split or pytest-shard: pytest-split balances recorded durations over the
selected items (a `.test_durations` file to keep current, and groups that move when `-k`
changes or an item is added anywhere in the run); pytest-shard deals `md5(node id) mod N`, which
is stable but only balanced on average (qmsum-val's 170 questions over 3 shards: 61/60/49;
dealt here: 57/56/57), and neither knows that a floor must not be decided in a slice. The deal
itself is a dozen lines; what makes a sharded gate honest is the decision over the whole
population, which stays ragate's.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragate.decision.population import deal, node_shards
from pytest_ragate.items.keys import FLOOR_KEY, ROUTE_KEY
from pytest_ragate.modes.controller import Controller
from pytest_ragate.modes.worker import Worker
from pytest_ragate.outputs.results import Shard


def select(config: pytest.Config, items: list[pytest.Item], shard: Shard) -> None:
    """Keep this shard's items (in collection order); the rest, floors included, are
    deselected, as pytest's `-k` deselects."""
    from pytest_ragate.items.collection import collected

    mine = {nodeid: dealt for population in collected(items).populations
            for nodeid, dealt in node_shards(population, shard.count).items()}
    others = deal("", sorted(i.nodeid for i in items if ROUTE_KEY not in i.stash), (),
                  shard.count)
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if FLOOR_KEY in item.stash:
            drop.append(item)
            continue
        shards = mine if ROUTE_KEY in item.stash else others
        (keep if shards[item.nodeid] == shard.index else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class ShardRun(Controller):
    """A shard's run: its slice kept, its results file written, nothing decided (a missing
    result fails no run here: the decision counts it)."""

    name = "ragate-shard"

    def __init__(self, config: pytest.Config, shard: Shard) -> None:
        self.shard = shard
        super().__init__(config)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """After `-k` and `-m`: this shard's items are kept, the rest deselected."""
        super().pytest_collection_modifyitems(session, config, items)
        select(config, items, self.shard)

    def conclude(self, session: pytest.Session, incomplete: str | None) -> None:
        conclusion = self.gathered()
        if conclusion is None:
            return
        conclusion.decide(session, incomplete=incomplete)
        conclusion.write(session, conclusion.saved(shard=self.shard) if self.cleared else None)

    def summary(self, terminalreporter: Any) -> None:
        """What the shard ran, and where its results wait for `ragate decide`."""
        conclusion = self.conclusion
        if conclusion is not None and conclusion.concluded:
            from pytest_ragate.modes.reporting import shard_summary

            shard_summary(terminalreporter, self.shard, conclusion.runs,
                          outputs=conclusion.outputs(), down=conclusion.arrived.down)
        self.hint_nothing_ran(terminalreporter)


class ShardWorker(Worker):
    """An xdist worker of a shard: it keeps the shard's items of what it collected, as its
    controller does (each process deals the same)."""

    name = "ragate-shard-worker"

    def __init__(self, config: pytest.Config, shard: Shard) -> None:
        super().__init__(config)
        self.shard = shard

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        select(config, items, self.shard)
