"""A conversation's turns asked in order, each given the earlier turns with this run's
answers (`Question.history`, and `Asked.history` for the file route's `ragate_system`).

Each process keeps what its turns answered (`Transcripts`, in the config's stash), by route,
conversation, repeat and whether the item asks again to check a sequential stop: turn k is
asked only when turns 1..k-1 of the same repeat were answered in this process; otherwise it
is not asked and fails, naming the earlier turn and why it has no answer (an error, a skip, a
timeout, or not run here), so it is an error row of the run, a gap of every floor over it
(fail closed), never a smaller n. Whole conversations stay on one
process: under xdist a turn carries an `xdist_group` mark of its conversation, and a gate's
`-n N` deals with `loadgroup` once a collected goldset has conversations
(`modes/choosing.grouping`: a group's items go to one worker, in collection order); a shard
deals whole conversations (`decision/population.asking_units`); a sequential run orders
conversations, turns in order (`decision/sequential.asking_order`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from pytest_ragate.answer import Answer, Asked, Earlier
from pytest_ragate.goldsets.config import Question
from pytest_ragate.goldsets.loader import Case
from pytest_ragate.items.keys import AGAIN_KEY, GROUP_KEY, GROUPED, ROUTE_KEY, ungrouped
from pytest_ragate.items.pytest_internals import in_group, out_of_group
from pytest_ragate.items.xdist_worker import named_by_group

# (route, conversation, repeat, asked again)
Thread = tuple[str, str, int, bool]


@dataclass
class Transcripts:
    """What this process's conversation turns answered, or why one has no answer."""

    answered: dict[Thread, dict[int, Earlier]] = field(default_factory=dict)
    failed: dict[Thread, dict[int, str]] = field(default_factory=dict)


TRANSCRIPTS_KEY = pytest.StashKey[Transcripts]()


def transcripts(config: pytest.Config) -> Transcripts:
    found = config.stash.get(TRANSCRIPTS_KEY, None)
    if found is None:
        found = config.stash[TRANSCRIPTS_KEY] = Transcripts()
    return found


def thread_of(item: pytest.Item, case: Case) -> Thread | None:
    conversation = case.question.conversation
    if conversation is None:
        return None
    return (item.stash[ROUTE_KEY], conversation, case.repeat, AGAIN_KEY in item.stash)


def with_history(item: pytest.Item, case: Case) -> Question:
    """The item's question with its earlier turns' answers; a turn whose earlier turn has no
    answer in this process is not asked (the item fails, naming that turn and why)."""
    question = case.question
    thread = thread_of(item, case)
    if thread is None or question.turn is None or question.turn == 1:
        return question
    found = transcripts(item.config)
    answered = found.answered.get(thread, {})
    for turn in range(1, question.turn):
        if turn not in answered:
            why = found.failed.get(thread, {}).get(turn, "it did not run in this process "
                                                   "(deselected, or asked elsewhere)")
            pytest.fail(f"{question.question_id}: not asked: turn {turn} of conversation "
                        f"{thread[1]!r} has no answer ({why}); a turn is asked only after "
                        "every earlier turn was answered", pytrace=False)
    return question.with_history(tuple(answered[t] for t in range(1, question.turn)))


def asked(question: Question) -> Asked | str:
    """What the file route's `ragate_system` is called with: the question's text, with its
    conversation, turn and history for a turn of a conversation."""
    if question.conversation is None:
        return question.question
    return Asked(question.question, conversation=question.conversation, turn=question.turn,
                 history=question.history)


def remember(item: pytest.Item, case: Case, answer: Answer) -> None:
    """A turn's answer, for the later turns of its conversation in this process."""
    thread = thread_of(item, case)
    if thread is not None and case.question.turn is not None:
        transcripts(item.config).answered.setdefault(thread, {})[case.question.turn] = Earlier(
            turn=case.question.turn, question=case.question.question, answer=answer)


def forget(item: pytest.Item, case: Case, why: str) -> None:
    """A turn without an answer (it errored, timed out or was skipped): why, for the later
    turns that are then not asked."""
    thread = thread_of(item, case)
    if thread is not None and case.question.turn is not None:
        turn = case.question.turn
        transcripts(item.config).answered.get(thread, {}).pop(turn, None)
        transcripts(item.config).failed.setdefault(thread, {})[turn] = (
            f"{case.question.question_id}: {why}")


def group_mark(item: pytest.Item, case: Case) -> None:
    """A turn's `xdist_group`: its goldset's name and its conversation, so xdist sends every
    turn of the conversation to one worker, under `loadgroup` (which a gate's `-n N` deals
    with once a collected goldset has conversations: `modes/choosing.grouping`)."""
    if case.question.conversation is None:
        return
    group = f"{GROUPED[1:]}{case.goldset.name}:{case.question.conversation}"
    item.add_marker(pytest.mark.xdist_group(group))
    item.stash[GROUP_KEY] = group


@contextmanager
def grouped(items: list[pytest.Item]) -> Iterator[None]:
    """Each turn's node id ends with its group while a worker sends its collection (xdist's
    scheduler reads the groups from it: `pytest_internals.in_group`), and only then: before,
    `--lf` matches last failures by the node ids the reports carried; after, every report,
    JUnit test case, terminal line and results row carries the node id the turn has without
    xdist, so they are the same under `-n 0` and `-n 2`."""
    plain = {}
    if items and named_by_group(items[0].config):
        for item in items:
            if GROUP_KEY in item.stash:
                plain[item] = ungrouped(item.nodeid)  # pytest 8: xdist grouped it already
                in_group(item, item.stash[GROUP_KEY])
    try:
        yield
    finally:
        for item, nodeid in plain.items():
            out_of_group(item, nodeid)
