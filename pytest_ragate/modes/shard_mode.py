"""The shard mode (`--ragate-shard i/N`): one slice of the gate run on one CI runner, its
results file written for `ragate decide`, nothing decided.

`ShardRun` (one process, or the xdist controller) keeps its slice of the collection
(`shard.select`), concludes the run without deciding it (a missing result fails no shard:
the decision counts it) and says what it ran; `ShardWorker`, on each xdist worker, keeps the
same slice of what the worker collected. The shard is parsed once (`choosing.py`) and kept
on the object.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragate.modes.controller import Controller
from pytest_ragate.modes.shard import select
from pytest_ragate.modes.worker import Worker
from pytest_ragate.outputs.results import Shard


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
