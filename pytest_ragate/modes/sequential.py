"""Sequential asking across a run's processes (`--ragate-sequential`; docs/sequential.md):
registered on every process unless the option is off, like pytest's `stepwise.py`.

- `AskInOrder`, on every process that runs items: puts each sequential goldset's questions in
  its asking order, posts its collection on the board, asks again the questions that check a
  stop (`items/reasking.py`), and skips a question whose goldset was decided
  (`items/sequential.py`).
- `StopWhenDecided`, where the reports arrive (the one process, or the xdist controller):
  feeds each sequential goldset's results to its floors' tests in asking order
  (`decision/sequential.Stopping`); once every floor is decided it posts the questions to ask
  again (decision/drift.py), and the stop once their answers held (or that the check is
  settled, when they changed). The run decision replays the same rows through the same rule,
  so what it decides is what stopped.

A sequential run refuses what it is not defined for yet: shards (`ragate decide` would
decide each slice's prefix apart), a baseline (a paired test over the questions both runs
asked is another rule), repeats, `ragate_ci = strict` (the full run's rule is then an
interval, not the goldset's value), and, per goldset, human labels decided with `ppi` or
`judge_agreement`, and `question_outcome = "assert"` (each question is its own test).
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from pytest_ragate.items.keys import CASE_KEY, GOLDSET_KEY, is_goldset_item, row_of
from pytest_ragate.items.sequential import (
    ASKING_KEY,
    WORKERINPUT_KEY,
    Asking,
    Reask,
    Stop,
    put_in_order,
    skip_if_decided,
)
from pytest_ragate.settings import Settings, standing

if TYPE_CHECKING:
    from pytest_ragate.decision.sequential import Stopping
    from pytest_ragate.goldsets.loader import Goldset


def start_asking(config: pytest.Config, settings: Settings) -> None:
    """Register sequential asking unless `ragate_sequential` is off; refuse it (when on) in
    a run it is not defined for, and a seed pinned in the ini file or addopts (every run would
    ask in one known order)."""
    gate = settings.gate
    if gate.sequential is False:
        return
    where = None if hasattr(config, "workerinput") else standing(config, "sequential_seed")
    if where is not None:  # even under a flag: it would outlive this run
        from pytest_ragate.wording import sequential as wording

        raise pytest.UsageError(wording.pinned_seed(where))
    if gate.sequential:
        from pytest_ragate.wording import sequential as wording

        refused = wording.sequential_refused_by(
            shard=bool(settings.run.shard), decide=bool(settings.run.decide),
            baseline=bool(gate.baseline), repeat=(gate.repeat or 1) > 1,
            strict=gate.ci == "strict")
        if refused:
            raise pytest.UsageError(refused)
    found = config.stash[ASKING_KEY] = _asking(config, settings)
    config.pluginmanager.register(AskInOrder(found), AskInOrder.name)
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(StopWhenDecided(config, found), StopWhenDecided.name)


def _asking(config: pytest.Config, settings: Settings) -> Asking:
    given = getattr(config, "workerinput", {}).get(WORKERINPUT_KEY)
    if given is not None:  # an xdist worker: its controller's
        return Asking(every=given["every"], seed=given["seed"], alpha=given["alpha"],
                      board=Path(given["board"]))
    gate = settings.gate
    seed = gate.sequential_seed if gate.sequential_seed is not None else secrets.randbits(32)
    board = Path(tempfile.gettempdir()) / f"ragate-sequential-{secrets.token_hex(8)}"
    return Asking(every=gate.sequential, seed=seed, alpha=gate.sequential_alpha, board=board)


def check_goldset(goldset: Goldset, config: pytest.Config, repeats: int) -> None:
    """A sequential goldset whose own settings it is not defined for: one usage error naming
    its ragate.toml, before anything is asked."""
    from pytest_ragate.settings import read_settings
    from pytest_ragate.wording import sequential as wording

    settings = read_settings(config)
    why = wording.sequential_refused_by(
        shard=bool(settings.run.shard), decide=bool(settings.run.decide),
        baseline=bool(settings.gate.baseline), repeat=repeats > 1,
        strict=settings.gate.ci == "strict", ppi=goldset.estimate == "ppi",
        agreement=any(f.metric == "judge_agreement" for f in goldset.floors),
        asserted=goldset.config.question_outcome == "assert")
    if why:
        raise pytest.UsageError(f"{goldset.config_path}: sequential = true: {why}")


class AskInOrder:
    """On every process that runs items: the asking order, the posted collection, the skip."""

    name: ClassVar[str] = "ragate-ask-in-order"

    def __init__(self, asking: Asking) -> None:
        self.asking = asking

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        seen: set[str] = set()
        for item in items:
            goldset = item.stash.get(GOLDSET_KEY, None) if CASE_KEY in item.stash else None
            if goldset is not None and goldset.name not in seen:
                seen.add(goldset.name)
                if self.asking.asks_sequentially(goldset):
                    from pytest_ragate.items.collection import repeats_of

                    check_goldset(goldset, config, repeats_of(config, goldset))
        put_in_order(config, items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The collection, posted for the controller (an xdist controller collects none)."""
        if session.config.option.collectonly:
            return
        goldset_items = [i for i in session.items if is_goldset_item(i)]
        if not any(self.asking.asks_sequentially(i.stash[GOLDSET_KEY])
                   for i in goldset_items if CASE_KEY in i.stash):
            return
        from pytest_ragate.items.collection import collected

        self.asking.post_collected(collected(goldset_items))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None,
                                ) -> Generator[None, object, object]:
        """Before a question of a goldset whose stop is being checked, the questions this
        process claims are asked again (`items/reasking.py`)."""
        if CASE_KEY in item.stash:
            from pytest_ragate.items.reasking import ask_again_before, keep_pace

            ask_again_before(item)
            keep_pace(item)
        return (yield)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        skip_if_decided(item)


class StopWhenDecided:
    """Where reports arrive: each sequential goldset's tests, fed as its results come."""

    name: ClassVar[str] = "ragate-stop-when-decided"

    def __init__(self, config: pytest.Config, asking: Asking) -> None:
        self.config = config
        self.asking = asking
        self.stoppings: dict[str, Stopping | None] = {}  # route -> its tests (None: not ours)
        self.rechecked: set[str] = set()  # routes whose questions to ask again were posted
        self.asked_by: dict[str, dict[str, str]] = {}  # route -> question -> its process
        self.fed: dict[str, int] = {}  # route -> the fed count last posted for the workers
        self.paced = bool(config.getoption("numprocesses", None))  # workers keep pace

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        if self.asking.every is None:
            return None  # said where a goldset asks sequentially: its summary line
        from pytest_ragate.wording import sequential as wording

        return wording.sequential_header(self.asking.seed, self.asking.every)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKERINPUT_KEY] = self.asking.workerinput()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Before the controller keeps the row (and takes it off the report)."""
        row = row_of(report)
        if row is None:
            return
        route = row.get("route", "")
        stopping = self._stopping(route)
        if stopping is None or stopping.stopped_at is not None or stopping.halted:
            return
        from pytest_ragate.scoring.records import QuestionRecord

        record = QuestionRecord.from_json(row)
        if record.reasked:
            stopping.offer_again(record.question_id, record)
        else:
            from pytest_ragate.items.xdist_worker import worker_of

            self.asked_by.setdefault(route, {})[record.question_id] = worker_of(report) or ""
            stopping.offer(record.question_id, record)
        self._post_fed(route, stopping)
        if stopping.rechecking and route not in self.rechecked:
            assert stopping.recheck is not None
            self.rechecked.add(route)
            asked_by = self.asked_by.get(route, {})
            self.asking.post_reask(route, Reask(
                asked=stopping.recheck.asked, names=stopping.recheck.names,
                by={name: asked_by.get(name, "") for name in stopping.recheck.names}))
        if stopping.stopped:
            self.asking.post(route, Stop(asked=stopping.stopped_at or 0,
                                         of=stopping.population))
        if route in self.rechecked and not stopping.rechecking:
            self.asking.post_settled(route)

    def _post_fed(self, route: str, stopping: Stopping) -> None:
        """Under xdist: how far the goldset's tests were fed, for the workers to keep pace
        with (`items/sequential.keep_pace`); UNPACED once they are fed no more."""
        if not self.paced:
            return
        from pytest_ragate.items.sequential import UNPACED

        feeding = stopping.halted is None and stopping.recheck is None \
            and stopping.stopped_at is None
        fed = stopping.fed if feeding else UNPACED
        if self.fed.get(route) != fed:
            self.fed[route] = fed
            self.asking.post_fed(route, fed)

    def _stopping(self, route: str) -> Stopping | None:
        if route not in self.stoppings:
            collected = self.asking.read_collected()
            if collected is None:
                # a process posts its collection before it runs a question, so a question's
                # report without one means no goldset of this run asks sequentially: asked
                # once per route, not per report
                self.stoppings[route] = None
                return None
            from pytest_ragate.decision.sequential import Stopping
            from pytest_ragate.settings import read_settings

            min_n = read_settings(self.config).gate.min_n
            for population in collected.populations:
                floors = [f.floor for f in collected.floors if f.route == population.route]
                self.stoppings[population.route] = Stopping.of(population, floors,
                                                               min_n=min_n)
            self.stoppings.setdefault(route, None)
        return self.stoppings[route]

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.asking.clear()
