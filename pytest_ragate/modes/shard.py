"""`--ragate-shard i/N`: run one slice of the gate on one CI runner, and decide nothing.

This module deals the items and keeps a shard's slice (`select`); the mode's objects, which
select at collection, are in `shard_mode.py`.

Every goldset's question items (each repeat its own) are ordered by a digest of their route
and name and dealt round-robin over the N shards, from a start its route's digest picks; its
anchors are dealt the same way after them. So each shard gets the same share of every goldset
(they differ by at most one question and one anchor), and which shard asks a question depends
only on the route, the question's name and N: not on collection order, on `-k`/`-m`, on the
machine or on the other goldsets of the run. `ragate decide` deals the same way to say which
shard owed a missing row. Other tests of the run are dealt the same way among themselves;
floors run in no shard (`modes/decide_saved.py` decides them over every shard's results).

Why not pytest-split or pytest-shard: pytest-split balances recorded durations over the
selected items (a `.test_durations` file to keep current, and groups that move when `-k`
changes or an item is added anywhere in the run); pytest-shard deals `md5(node id) mod N`, which
is stable but only balanced on average (qmsum-val's 170 questions over 3 shards: 61/60/49;
dealt here: 57/56/57), and neither knows that a floor must not be decided in a slice. The deal
itself is a dozen lines; what makes a sharded gate honest is the decision over the whole
population, which stays ragate's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest

from pytest_ragate.decision.population import Population
from pytest_ragate.items.keys import ANCHOR_KEY, CASE_KEY, FLOOR_KEY, GOLDSET_KEY, ROUTE_KEY
from pytest_ragate.outputs.results import Shard


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def deal(route: str, questions: Sequence[str], anchors: Sequence[str], count: int,
         ) -> dict[str, int]:
    """Each item name's shard (1-based): questions, then anchors, each ordered by digest and
    dealt round-robin on from where the route's digest starts."""
    start = int.from_bytes(_digest(route)[:8], "big") % count
    shards: dict[str, int] = {}
    for names in (questions, anchors):
        for name in sorted(names, key=lambda n: _digest(f"{route}\0{n}")):
            shards[name] = start % count + 1
            start += 1
    return shards


def population_shards(population: Population, count: int) -> dict[str, int]:
    """The shard of each question item and anchor of a collected population."""
    return deal(population.route, [m.name or m.question_id for m in population.questions],
                [f"anchor[{a.anchor_id}]" for a in population.anchors], count)


def item_name(item: pytest.Item) -> str:
    """How a goldset item is named within its route: `q07`, `q07[r2]`, `anchor[a1]`."""
    case = item.stash.get(CASE_KEY, None)
    return case.item_name if case is not None else item.name


def select(config: pytest.Config, items: list[pytest.Item], shard: Shard) -> None:
    """Keep this shard's items (in collection order); the rest, floors included, are
    deselected, as pytest's `-k` deselects."""
    from pytest_ragate.items.collection import GoldsetFile, repeated_cases

    plans: dict[str, dict[str, int]] = {}
    others = deal("", sorted(i.nodeid for i in items if ROUTE_KEY not in i.stash), (),
                  shard.count)
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        if FLOOR_KEY in item.stash:
            drop.append(item)
            continue
        route = item.stash.get(ROUTE_KEY, None)
        if route is None:
            (keep if others[item.nodeid] == shard.index else drop).append(item)
            continue
        plan = plans.get(route)
        if plan is None:
            goldset = item.stash[GOLDSET_KEY]
            anchored = isinstance(item.parent, GoldsetFile) or ANCHOR_KEY in item.stash
            plan = plans[route] = deal(
                route, [c.item_name for c in repeated_cases(config, goldset)],
                [f"anchor[{e.anchor.anchor_id}]" for e in goldset.anchors] if anchored else [],
                shard.count)
        (keep if plan[item_name(item)] == shard.index else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
