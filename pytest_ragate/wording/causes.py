"""A cause many goldset items share, said once: one misspelt `ragate_system` errors 40
questions, a system that is down fails them all with the same exception. pytest would print
each one's error in full (its ERRORS or FAILURES section, then its short summary); the
terminal shows the first in full and says the others once, with their count and the first
NAMED of their names (`modes/controller.py` hides them from pytest's sections, fenced in
`items/pytest_internals.said_once`). Each item still errors or fails on its own: in the exit
status, in JUnit and in the results file.

What the items share is what each says without its own name (`without_member`): the same
rule a floor's message groups its members without a result by (`floors.named`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.wording.numbers import NAMED

NAMED_CAUSES = 3  # causes of judge failures a message says before "and N more causes"
CAUSE_WIDTH = 160  # characters of a shared cause a line shows (the first item's entry has all)


@dataclass(frozen=True, kw_only=True)
class Failed:
    """A goldset item's failed report, as the terminal lists it: its node id, the phase
    (`setup`, `call`, `teardown`) and the line that says why (`reasons.failure_line`)."""

    nodeid: str
    when: str
    why: str

    @property
    def member(self) -> str:
        """The item's name (`q07`, `anchor[a1]`, `test_mine[q07]`), as its message names it."""
        return self.nodeid.rpartition("::")[2]

    @property
    def where(self) -> str:
        """The file the item was collected from (`gs/ragate.toml`)."""
        return self.nodeid.partition("::")[0]


@dataclass(frozen=True, kw_only=True)
class Shared:
    """Items of one file that failed in one phase for one cause, in the order they
    reported: the first is shown in full, the others are said once."""

    where: str
    when: str
    cause: str
    nodeids: tuple[str, ...]

    @property
    def others(self) -> tuple[str, ...]:
        return self.nodeids[1:]

    def line(self) -> str:
        """After pytest's ERRORS and FAILURES sections: the cause once, with the count and
        the first names of the items it failed."""
        names = [nodeid.rpartition("::")[2] for nodeid in self.nodeids]
        return (f"ragate: {len(names)} items of {self.where} {verb(self.when)} for one cause, "
                f"shown once above at {self.nodeids[0]}: {cut(self.cause)}; they are "
                f"{fmt_some(names, NAMED)} (each one its own {noun(self.when)} in JUnit and "
                "the results file)")

    def summary_line(self) -> str:
        """In pytest's short summary, in place of the other items' lines."""
        names = [nodeid.rpartition("::")[2] for nodeid in self.others]
        first = self.nodeids[0].rpartition("::")[2]
        return (f"{word(self.when)} {self.others[0]} and {len(names) - 1} more, as "
                f"{first}: {fmt_some(names, NAMED)}")


def shared_causes(failures: Iterable[Failed]) -> list[Shared]:
    """The causes more than one item of a file shares in one phase, in the order their
    first item reported."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for failure in failures:
        key = (failure.where, failure.when, without_member(failure.why, failure.member))
        groups.setdefault(key, []).append(failure.nodeid)
    return [Shared(where=where, when=when, cause=cause, nodeids=tuple(nodeids))
            for (where, when, cause), nodeids in groups.items() if len(nodeids) > 1]


def judge_failed(causes: Sequence[tuple[str, Sequence[str]]]) -> str:
    """`the judge failed on q00, q01 and 38 more: http: … cannot connect`: each cause of
    judge failures once, with the questions it failed on (a judge that is down is one
    cause, not a failure per question)."""
    shown = [f"on {fmt_some(list(names), NAMED)}: {cut(why)}"
             for why, names in causes[:NAMED_CAUSES]]
    more = len(causes) - NAMED_CAUSES
    return ("the judge failed " + "; ".join(shown)
            + (f"; and {more} more causes" if more > 0 else ""))


def without_member(why: str, member: str) -> str:
    """Why a member failed, without its own name (`MissingSystem: q07: no ragate_system in
    scope` is `MissingSystem: no ragate_system in scope`): what members that failed for one
    reason share. An item named with its question in brackets (`test_mine[q07]`, a
    `@ragate.goldset` test's) loses the question's id too: its messages name either."""
    base, _, inner = member.partition("[")
    for name in (member, inner[:-1]) if base and inner.endswith("]") else (member,):
        why = re.sub(rf"(?<![\w.\-\[]){re.escape(name)}(?![\w.\-\]])(: )?", "", why)
    return why.strip()


def verb(when: str) -> str:
    return "failed" if when == "call" else f"errored at {when}"


def noun(when: str) -> str:
    """What pytest calls a failure in this phase: a failure when the test ran, else an
    error."""
    return "failure" if when == "call" else "error"


def word(when: str) -> str:
    """How pytest's short summary marks it: `FAILED` or `ERROR`."""
    return "FAILED" if when == "call" else "ERROR"


def cut(text: str) -> str:
    return text if len(text) <= CAUSE_WIDTH else text[:CAUSE_WIDTH - 1].rstrip() + "…"
