"""`--ragate-shard i/N`: run one slice of the gate on one CI runner, and decide nothing.

This module deals the items and keeps a shard's slice (`select`); the mode's objects, which
select at collection, are in `shard_mode.py`.

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

import pytest

from pytest_ragate.decision.population import deal, node_shards
from pytest_ragate.items.keys import FLOOR_KEY, ROUTE_KEY
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

