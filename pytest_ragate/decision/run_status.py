"""What a decided run was, for every output that names it (the reports' badges, the history
line's status, the terminal and JUnit): PASS only when every floor was decided and passed
over every question; otherwise what it was.

A goldset run is, in this order:

- FAIL when it failed (`GoldsetRun.status`: a floor failed, a strict xfail passed, a
  regression, a missing result, an item failed, or the pytest run exits non-zero);
- NOTHING RAN when no question was scored and no anchor checked (`-k floor`: every
  question deselected; a goldset sealed without its key and set to skip);
- PARTIAL when some of its questions or anchors were deselected (-k, -m, --lf): the floors
  over them were skipped, not decided, and its figures are a part's;
- FLOOR NOT DECIDED when a floor was skipped for another reason (no judge configured, a
  sealed goldset set to skip);
- PASS otherwise (an xfail floor that failed as expected is decided).

A run of several goldsets is FAIL when any is (or the run exits non-zero), NOTHING RAN when
none ran, PARTIAL when one did not run or ran in part, FLOOR NOT DECIDED when a floor of
one was not decided, and PASS only when each goldset passed. Pure: values in, values out.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.run import GoldsetRun

NAMED = 3  # floors named in a FLOOR NOT DECIDED badge before "and N more"


class Status(enum.Enum):
    """A run's status, as its badge says it."""

    PASSED = "passed"
    FAILED = "failed"
    NOTHING_RAN = "nothing ran"
    PARTIAL = "partial"
    NOT_DECIDED = "not decided"

    @property
    def word(self) -> str:
        return _WORDS[self]

    @property
    def css(self) -> str:
        """The HTML badge's outcome class: passed, failed, or skipped for the rest."""
        return self.value if self in (Status.PASSED, Status.FAILED) else "skipped"


_WORDS = {Status.PASSED: "PASS", Status.FAILED: "FAIL", Status.NOTHING_RAN: "NOTHING RAN",
          Status.PARTIAL: "PARTIAL", Status.NOT_DECIDED: "FLOOR NOT DECIDED"}
_ORDER = (Status.FAILED, Status.NOTHING_RAN, Status.PARTIAL, Status.NOT_DECIDED, Status.PASSED)


@dataclass(frozen=True, kw_only=True)
class RunStatus:
    """A status and why (empty for PASS, and for FAIL, whose reason the run gives)."""

    status: Status
    why: str = ""

    @property
    def badge(self) -> str:
        """`PARTIAL: 20 of 40 questions deselected (-k, -m or --lf)`, or `PASS`."""
        return f"{self.status.word}: {self.why}" if self.why else self.status.word

    @property
    def sure(self) -> bool:
        """PASS or FAIL: the run was decided whole, and every output says only that."""
        return self.status in (Status.PASSED, Status.FAILED)


def goldset_status(run: GoldsetRun) -> RunStatus:
    """What one decided goldset run was (the module's docstring gives the order)."""
    if run.status == "failed":
        return RunStatus(status=Status.FAILED)
    deselected = _deselected(run)
    if not any(r.status != "skipped" for r in run.records) and not any(
            a.outcome != "skipped" for a in run.anchors):
        return RunStatus(status=Status.NOTHING_RAN,
                         why=deselected or "no question was asked and no anchor checked")
    if deselected:
        return RunStatus(status=Status.PARTIAL, why=deselected)
    skipped = [v.floor.name for v in run.verdicts if v.outcome == "skipped"]
    if skipped:
        more = len(skipped) - NAMED
        return RunStatus(status=Status.NOT_DECIDED, why=", ".join(skipped[:NAMED])
                         + (f" and {more} more" if more > 0 else ""))
    return RunStatus(status=Status.PASSED)


def _deselected(run: GoldsetRun) -> str:
    """`20 of 40 questions deselected (-k, -m or --lf)`, with anchors when some were."""
    questions = sum(g.kind == "deselected" for g in run.gaps)
    anchors = sum(g.kind == "deselected" for g in run.anchor_gaps)
    total = run.population if run.population is not None else len(run.records) + questions
    unit = "answers" if run.repeats > 1 else "questions"
    said = [f"{questions} of {total} {unit}"] if questions else []
    if anchors:
        said.append(f"{anchors} of {len(run.anchors) + len(run.anchor_gaps)} anchors")
    return f"{' and '.join(said)} deselected (-k, -m or --lf)" if said else ""


def overall_status(runs: Sequence[GoldsetRun], *, failed: bool) -> RunStatus:
    """What the whole run was (`failed`: the pytest run exits non-zero, or stopped early)."""
    each = [(run, goldset_status(run)) for run in runs]
    if failed or any(s.status is Status.FAILED for _, s in each):
        return RunStatus(status=Status.FAILED)
    if not each or all(s.status is Status.NOTHING_RAN for _, s in each):
        return RunStatus(status=Status.NOTHING_RAN, why="no goldset question ran" if not each
                         else "; ".join(f"{run.label}: {s.why}" for run, s in each))
    worst = min((s.status for _, s in each), key=_ORDER.index)
    if worst is Status.NOTHING_RAN:
        worst = Status.PARTIAL  # some goldsets ran, others did not: part of the run
    return RunStatus(status=worst, why="; ".join(
        f"{run.label}: {s.why if s.status is worst else s.badge}"
        for run, s in each if not s.sure))
