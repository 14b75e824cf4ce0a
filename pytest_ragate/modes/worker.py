"""An xdist worker of a gate or a shard: it runs items and reports them, and decides
nothing. What it adds is its description of the collection, sent to the controller with its
last message (the controller decides floors over it, `controller.py`). A shard's worker also
keeps only its shard's items (`shard.ShardWorker`).

Light on purpose: every worker registers one, goldsets or not.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import ClassVar

import pytest

from pytest_ragate.items.keys import WORKEROUTPUT_KEY, is_goldset_item


class Worker:
    name: ClassVar[str] = "ragate-worker"

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.selected: list[pytest.Item] | None = None  # the items kept after selection

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_finish(self, session: pytest.Session) -> Generator[None, None, None]:
        """xdist sends the collection with each conversation turn's group in its node id,
        for the scheduler; before and after, a turn has the node id it has without xdist
        (`conversations.grouped`)."""
        self.selected = list(session.items)
        if not any(map(is_goldset_item, session.items)):
            return (yield)
        from pytest_ragate.items.conversations import grouped

        with grouped(session.items):
            return (yield)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The description of the collection goes with the worker's last message (xdist's
        own sessionfinish wraps this one and sends `workeroutput` after it)."""
        workeroutput = getattr(self.config, "workeroutput", None)
        items = self.selected
        if workeroutput is not None and items is not None and any(map(is_goldset_item, items)):
            from pytest_ragate.items.collection import collected

            workeroutput[WORKEROUTPUT_KEY] = collected(items).model_dump(mode="json")
