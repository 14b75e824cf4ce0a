"""Asking a sequential goldset's questions again to check its stop (decision/drift.py), as
tests of their own: `q07[again]` (`test_mine[q07[again]]` for a `@ragate.goldset` test).

Once every floor of a goldset is decided after k questions, the controller posts those k
questions, in the order they are to be asked again, each with the process that asked it
first (`items/sequential.Reask`). Before a process runs its next question item of the goldset,
it asks again, in that order, the ones it asked first; under `-n 0` the one process asks them
all. So each process's re-asks extend its own run of calls by as many as it made before the
stop: a system whose state is per process (a rate limiter or a quota in each xdist worker)
drifts on that process's clock, and each answer asked again is compared with one the same
process gave. A process that never runs another question of the goldset (its worker died,
its queue ran dry) asks nothing again, and the stop is then never taken. Each is an item
made here, now, from its question's own item: a copy with the same
parent, test function and fixtures (a `@ragate.goldset` test's `ragate_question` reads the
question from the item, not from a parameter), run through pytest's own protocol with the
question item it preceded as its next item (so module fixtures stay up), reported like any
question (terminal, JUnit), its row marked
`reasked`, which no floor counts and the controller feeds to the check. Under xdist it joins
the worker's own list of items so its reports pass xdist's bookkeeping
(`xdist_worker.adopt`).

Once a process asked its share again, it reports every answer it holds (waiting for their
verdicts: `questions.release`) and then waits for the check to settle (`_await_settled`: at
most SETTLE_GRACE_S plus three times what its share took) before its next question, which a
stop the check confirms skips: under `-n 2` a worker would otherwise ask fresh questions in
vain while the other asks its share. The wait decides nothing: when it runs out (a slow or
dead worker, a queue run dry), the next question is asked, as without it. (Without the
release first, the last answers asked again stayed held until the next question ran, and
the wait always ran out.) Under `-n 0` the check settles with the release.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from pytest_ragate.items.keys import AGAIN_KEY, CASE_KEY, GOLDSET_KEY, NEEDED_KEY, ROUTE_KEY

if TYPE_CHECKING:
    from pytest_ragate.items.sequential import Asking

SETTLE_GRACE_S = 2.0  # how long a process waits, beyond thrice its own share, for the check
ORIGINALS_KEY = pytest.StashKey[dict[tuple[str, str], pytest.Function]]()
ASKED_AGAIN_KEY = pytest.StashKey[set[str]]()  # routes this process has asked again


def ask_again_before(item: pytest.Item) -> None:
    """Before a sequential question item of a goldset whose stop is being checked: the
    questions this process asked first, asked again in order, once, until the check is
    settled."""
    from pytest_ragate.items.sequential import asking
    from pytest_ragate.items.xdist_worker import process_id

    found = asking(item.config)
    if (found is None or CASE_KEY not in item.stash or AGAIN_KEY in item.stash
            or not found.asks_sequentially(item.stash[GOLDSET_KEY])):
        return
    route = item.stash[ROUTE_KEY]
    done = item.config.stash.setdefault(ASKED_AGAIN_KEY, set())
    reask = found.reask_of(route) if route not in done else None
    if reask is None:
        return
    done.add(route)
    started = time.monotonic()
    for name in reask.mine(process_id(item.config)):
        if found.reask_of(route) is None:  # settled: an answer asked again refused it
            return
        _ask_again(_original(item, route, name), item)
    _await_settled(item.config, found, route, started)


def _await_settled(config: pytest.Config, found: Asking, route: str, started: float) -> None:
    """After this process asked its share again: every answer it holds reported (its
    verdicts waited for), then the check waited for (the other processes' shares), at most
    SETTLE_GRACE_S plus three times what this process's share took, so that a stop it
    confirms skips this process's next question rather than asking it in vain. Waiting
    decides nothing: when the wait runs out, the next question is asked, as before."""
    took = time.monotonic() - started
    _release_then_wait(config, lambda: found.reask_of(route) is not None,
                       SETTLE_GRACE_S + 3 * took)


def _release_then_wait(config: pytest.Config, waiting: Callable[[], bool],
                       seconds: float) -> bool:
    """Every answer this process holds reported (their verdicts waited for), then a wait of
    at most `seconds` while `waiting()` holds; whether it was still waiting when time ran
    out."""
    from pytest_ragate.items.keys import RUN_KEY
    from pytest_ragate.items.questions import release

    run = config.stash.get(RUN_KEY, None)
    if run is not None:
        release(run, wait=True)
    deadline = time.monotonic() + seconds
    while waiting():
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.01)
    return False


def _original(item: pytest.Item, route: str, name: str) -> pytest.Function:
    """The item that asked `name` of `route` first (every process collected it)."""
    originals = item.config.stash.get(ORIGINALS_KEY, None)
    if originals is None:
        originals = item.config.stash[ORIGINALS_KEY] = {
            (i.stash[ROUTE_KEY], i.stash[CASE_KEY].item_name): i for i in item.session.items
            if CASE_KEY in i.stash and AGAIN_KEY not in i.stash
            and isinstance(i, pytest.Function)}
    return originals[(route, name)]


def again_item(original: pytest.Function) -> pytest.Function:
    """A copy of a question's item that asks it again: `q07[again]`."""
    from pytest_ragate.decision.population import again_name
    from pytest_ragate.items.collection import RAG_GATE, QuestionItem, requests_itself
    from pytest_ragate.items.pytest_internals import as_reported, shared_closure

    case = original.stash[CASE_KEY]
    name = again_name(case.item_name)
    if isinstance(original, QuestionItem):
        again: pytest.Function = QuestionItem.from_parent(
            original.parent, name=name, callobj=original.obj,
            fixtureinfo=shared_closure(original))
    else:  # a @ragate.goldset test: neither parameters nor `originalname` of its own
        # (pytest 9 names an item by them, as the question's own), so `ragate_question`
        # reads the stashed case, and the function is the one given
        again = pytest.Function.from_parent(
            original.parent, name=f"{original.originalname}[{name}]",
            callobj=original.obj, fixtureinfo=shared_closure(original))
    for key in (CASE_KEY, GOLDSET_KEY, ROUTE_KEY):
        again.stash[key] = original.stash[key]  # type: ignore[index]
    if NEEDED_KEY in original.stash:  # the judge asks it what it asked the question
        again.stash[NEEDED_KEY] = original.stash[NEEDED_KEY]
    again.stash[AGAIN_KEY] = True
    again.add_marker(RAG_GATE)
    requests_itself(again)
    as_reported(again)
    return again


def _ask_again(original: pytest.Function, before: pytest.Item) -> None:
    from pytest_ragate.items.xdist_worker import adopt

    again = again_item(original)
    adopt(again)
    again.ihook.pytest_runtest_protocol(item=again, nextitem=before)


def keep_pace(item: pytest.Item) -> None:
    """Under xdist, before a sequential question more than AHEAD per worker past the
    questions the controller has fed to its tests: this worker's held reports sent (their
    verdicts waited for), then a wait (at most PACE_WAIT_S) for the controller to catch up,
    so that fewer questions are asked in vain past a stop it has not seen yet (under load the
    controller lags the workers). Waiting decides nothing: when it runs out, the question
    is asked, as without it, and this worker keeps no pace with that goldset again (a
    crashed worker's question never reaches the tests: one wait, not one per question)."""
    from pytest_ragate.items.sequential import (
        AHEAD,
        PACE_WAIT_S,
        POSITION_KEY,
        UNPACED_KEY,
        asking,
    )

    found = asking(item.config)
    workerinput = getattr(item.config, "workerinput", None)
    if (found is None or workerinput is None or POSITION_KEY not in item.stash
            or AGAIN_KEY in item.stash):
        return
    route, position = item.stash[ROUTE_KEY], item.stash[POSITION_KEY]
    ahead = AHEAD * int(workerinput.get("workercount", 1))
    given_up = item.config.stash.setdefault(UNPACED_KEY, set())
    if route in given_up:
        return

    def behind() -> bool:
        fed = found.fed_of(route)
        return fed is not None and position >= fed + ahead

    if behind() and _release_then_wait(item.config, behind, PACE_WAIT_S):
        given_up.add(route)
