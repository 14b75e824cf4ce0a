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
    def pytest_collection_finish(self, session: pytest.Session) -> Generator[None]:
        """After xdist has sent the collection (with each conversation turn's group in its
        node id, for the scheduler), every turn gets back the node id it has without xdist."""
        yield
        self.selected = list(session.items)
        if any(map(is_goldset_item, session.items)):
            from pytest_ragate.items.conversations import out_of_groups

            out_of_groups(session.items)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The description of the collection goes with the worker's last message (xdist's
        own sessionfinish wraps this one and sends `workeroutput` after it)."""
        workeroutput = getattr(self.config, "workeroutput", None)
        items = self.selected
        if workeroutput is not None and items is not None and any(map(is_goldset_item, items)):
            from pytest_ragate.items.collection import collected

            workeroutput[WORKEROUTPUT_KEY] = collected(items).model_dump(mode="json")
