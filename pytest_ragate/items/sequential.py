"""A sequential run (`--ragate-sequential`, or `sequential = true` in a goldset's ragate.toml)
in one process: which goldsets are asked sequentially and with what seed and error budget
(`Asking`, the same on every process of the run), their question items put in the asking
order (`decision/sequential.asking_order`), and, before each question, whether its goldset
was already decided (then it is skipped, "not needed", and the system and the judge are not
asked).

The controller (`modes/sequential.py`) decides when a goldset stops, and posts the stop on a
board: a folder every process of the run reads (an xdist worker's `workerinput` names it).
Before a stop holds, the questions asked before it are asked again (decision/drift.py): the
controller posts them (`Reask`), each process asks again those it asked first, before its
next question of the goldset (`items/reasking.py`), and the controller posts when the check
is settled.
Each process that collected posts its collection there too, so the controller, which under
xdist collects nothing, knows each sequential goldset's questions and floors from its first
result on.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.items.keys import (
    AGAIN_KEY,
    CASE_KEY,
    GOLDSET_KEY,
    NOT_NEEDED_KEY,
    ROUTE_KEY,
)

if TYPE_CHECKING:  # loaded when a sequential goldset shows up: every pytest run imports this
    from pytest_ragate.decision.population import Collected, SequentialPlan
    from pytest_ragate.goldsets.loader import Goldset

ASKING_KEY = pytest.StashKey["Asking"]()
POSITION_KEY = pytest.StashKey[int]()  # a sequential question's place in its asking order
UNPACED_KEY = pytest.StashKey[set[str]]()  # routes whose pace this worker stopped keeping
UNPACED = 10**9  # posted as `fed` once the controller feeds no more (decided or halted)
AHEAD = 4  # per worker: how far past the controller's fed questions a worker asks on
PACE_WAIT_S = 2.0  # the longest a worker waits for the controller before asking on
WORKERINPUT_KEY = "ragate_asking"  # an xdist worker's `workerinput`: the run's Asking


@dataclass(frozen=True, kw_only=True)
class Stop:
    """A goldset decided early: after how many of its questions."""

    asked: int
    of: int


@dataclass(frozen=True, kw_only=True)
class Reask:
    """Every floor of a goldset decided after `asked` questions: `names`, asked again in
    this order, check the stop before it holds (decision/drift.py); each by the process that
    asked it first (`by`: question name -> its xdist worker id, "" for a run without
    xdist)."""

    asked: int
    names: list[str]
    by: dict[str, str]

    def mine(self, process: str) -> list[str]:
        """The questions `process` asks again, in order."""
        return [name for name in self.names if self.by.get(name, "") == process]


def _digest(route: str) -> str:
    return hashlib.sha256(route.encode()).hexdigest()[:24]


def _write(path: Path, text: str) -> None:
    from pytest_ragate.files import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


@dataclass(frozen=True, kw_only=True)
class Asking:
    """What every process of a run shares about sequential asking."""

    every: bool | None  # `ragate_sequential`: on, off, or None (each goldset says)
    seed: int
    alpha: float
    board: Path  # the folder of posted stops and collections (made on first post)

    def asks_sequentially(self, goldset: Goldset) -> bool:
        return goldset.config.sequential if self.every is None else self.every

    def plan(self, goldset: Goldset) -> SequentialPlan | None:
        """The goldset's plan when it is asked sequentially, else None."""
        if not self.asks_sequentially(goldset):
            return None
        from pytest_ragate.decision.population import SequentialPlan

        return SequentialPlan(seed=self.seed, alpha=self.alpha,
                              gaps=goldset.config.sequential_gaps)

    def workerinput(self) -> dict[str, Any]:
        return {"every": self.every, "seed": self.seed, "alpha": self.alpha,
                "board": str(self.board)}

    def post(self, route: str, stop: Stop) -> None:
        _write(self.board / f"stop-{_digest(route)}.json", json.dumps(asdict(stop)))

    def stop_of(self, route: str) -> Stop | None:
        try:
            text = (self.board / f"stop-{_digest(route)}.json").read_text()
        except FileNotFoundError:
            return None
        return Stop(**json.loads(text))

    def post_reask(self, route: str, reask: Reask) -> None:
        _write(self.board / f"again-{_digest(route)}.json", json.dumps(asdict(reask)))

    def reask_of(self, route: str) -> Reask | None:
        """The questions to ask again, while the stop they check is not settled."""
        digest = _digest(route)
        if (self.board / f"settled-{digest}").exists():
            return None
        try:
            text = (self.board / f"again-{digest}.json").read_text()
        except FileNotFoundError:
            return None
        return Reask(**json.loads(text))

    def post_settled(self, route: str) -> None:
        """The stop was checked (held or refused): nothing more is asked again."""
        _write(self.board / f"settled-{_digest(route)}", "")

    def post_fed(self, route: str, fed: int) -> None:
        """How many of the goldset's questions the controller has fed to its tests (UNPACED
        once it feeds no more): what a worker keeps pace with (`keep_pace`)."""
        _write(self.board / f"fed-{_digest(route)}", str(fed))

    def fed_of(self, route: str) -> int | None:
        try:
            return int((self.board / f"fed-{_digest(route)}").read_text() or UNPACED)
        except (FileNotFoundError, ValueError):
            return None

    def post_collected(self, collected: Collected) -> None:
        _write(self.board / "collected.json", collected.model_dump_json())

    def read_collected(self) -> Collected | None:
        from pytest_ragate.decision.population import Collected

        try:
            return Collected.model_validate_json((self.board / "collected.json").read_bytes())
        except FileNotFoundError:
            return None

    def clear(self) -> None:
        shutil.rmtree(self.board, ignore_errors=True)


def asking(config: pytest.Config) -> Asking | None:
    return config.stash.get(ASKING_KEY, None)


def plan_of(config: pytest.Config, goldset: Goldset) -> SequentialPlan | None:
    """The goldset's sequential plan in this run, or None."""
    found = asking(config)
    return found.plan(goldset) if found is not None else None


def put_in_order(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each sequential goldset's question items in its asking order, in the places its
    question items held (anchors, floors and other tests stay where they were)."""
    found = asking(config)
    if found is None:
        return
    places: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        if CASE_KEY in item.stash and found.asks_sequentially(item.stash[GOLDSET_KEY]):
            places.setdefault(item.stash[ROUTE_KEY], []).append(i)
    for route, where in places.items():
        from pytest_ragate.decision.population import CONVERSATION_UNIT
        from pytest_ragate.decision.sequential import asking_order

        by_name = {items[i].stash[CASE_KEY].item_name: items[i] for i in where}
        units = {name: CONVERSATION_UNIT + c for name, item in by_name.items()
                 if (c := item.stash[CASE_KEY].question.conversation)}
        order = asking_order(found.seed, route, list(by_name), units)
        for position, (i, name) in enumerate(zip(where, order, strict=True)):
            items[i] = by_name[name]
            items[i].stash[POSITION_KEY] = position


def skip_if_decided(item: pytest.Item) -> None:
    """A question of a goldset already decided is not asked: skipped, with how many of its
    questions decided it, and its row marked `not_needed` (the run decision checks the skip
    against its replay, `run_decision.py`)."""
    found = asking(item.config)
    if (found is None or CASE_KEY not in item.stash or AGAIN_KEY in item.stash
            or not found.asks_sequentially(item.stash[GOLDSET_KEY])):
        return  # no file is read for a question asked in full, nor for one asked again
    stop = found.stop_of(item.stash[ROUTE_KEY])
    if stop is not None:
        from pytest_ragate.wording.sequential import not_needed

        item.stash[NOT_NEEDED_KEY] = True
        pytest.skip(not_needed(stop.asked, stop.of))
