"""Flakiness across runs: how often a question, an anchor or a floor changed outcome between
consecutive runs of one goldset at one eval_version while its definition stayed the same.

Pure: the history (`outputs/history.py`) keeps each member's outcome and a short digest of
its definition per run; this module turns those into outcome words and counts the changes.

The rules, and why:
- A question's outcome is `right` or `wrong` by `QuestionRecord.wrong` (empty means right),
  `error` when the system raised or timed out on it, `skipped` when it was not asked. Asked
  several times in one run (repeats), it is `right c of N`: a change between runs is a
  change of that summary.
- An error is an outcome of its own (a question that sometimes times out is flaky); a skip
  (a stale question too: its pinned evidence changed, it was not asked), or a run without
  the member at all (deselected, crashed, an older line), says nothing and is passed over. A
  run in which no question scored at all is a crash of the run, not the flakiness of each
  question: the history leaves its questions out (`outputs/history.py`).
- A changed definition (question text, kind, expected evidence; an anchor's claim or
  evidence; a floor's minimum) restarts the member's count: only the stretch of runs with the
  same digest as the current run is counted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from pytest_ragate.scoring.registry import right_counts

RIGHT, WRONG, ERROR, SKIPPED = "right", "wrong", "error", "skipped"
HELD, NOT_HELD = "held", "not held"


def digest(*parts: object) -> str:
    """A short, stable content hash of a definition (12 hex digits of SHA-256 over JSON)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def question_digest(record: QuestionRecord) -> str:
    """The question as asked, from what a row carries: its text, kind, expected evidence
    labels and whether it must abstain. A sealed goldset's rows carry no expected labels
    (`expected=None`), so its digest covers the text, kind, must_abstain and the number of
    expected spans only: a change of the sealed answers' spans that keeps their number is
    not seen."""
    return digest("question", record.question, record.kind, record.expected,
                  record.must_abstain, record.evidence_spans)


def question_outcome(rows: Sequence[QuestionRecord]) -> str:
    """One question's outcome in one run, from its rows (several when it was repeated)."""
    asked = [r for r in rows if r.counted]  # a stale one was not asked: it says nothing
    if not asked:
        return SKIPPED
    if all(r.status == "error" for r in asked):
        return ERROR
    right, total = right_counts(asked)[asked[0].question_id]
    if total == 1:
        return RIGHT if right else WRONG
    return f"{RIGHT} {right} of {total}"


def anchor_digest(kind: str, claim: str, evidence: Mapping[str, object] | None) -> str:
    """An anchor's definition: its kind, claim and evidence span (not its xfail, which
    promotion removes)."""
    return digest("anchor", kind, claim, dict(evidence) if evidence is not None else None)


def anchor_outcome(anchor: AnchorOutcome) -> str:
    """`held`, `not held`, `error` (the check could not run) or `skipped`."""
    if anchor.outcome == "skipped":
        return SKIPPED
    if anchor.error:
        return ERROR
    return HELD if anchor.held else NOT_HELD


def floor_outcome(outcome: str) -> str:
    """A floor verdict's outcome as held / not held; a skipped floor says nothing."""
    if outcome in ("passed", "xpassed"):
        return HELD
    return NOT_HELD if outcome in ("failed", "xfailed") else SKIPPED


@dataclass(frozen=True, kw_only=True)
class Seen:
    """One member in one run: its outcome, and the digest of its definition then."""

    outcome: str
    digest: str


@dataclass(frozen=True, kw_only=True)
class Flips:
    """One member's outcomes over the window, oldest first, the current run last."""

    member: str  # `q07`, `anchor[a3]`, `floor[kind:metric]`
    outcomes: tuple[str, ...]
    restarted: bool = False  # its definition changed within the window: counted since

    @property
    def flips(self) -> int:
        """Changes of outcome between consecutive counted runs."""
        return sum(a != b for a, b in zip(self.outcomes, self.outcomes[1:], strict=False))

    @property
    def runs(self) -> int:
        return len(self.outcomes)

    @property
    def unsettled(self) -> bool:
        """It had its current outcome before, lost it, and has it again: more than the one
        change a fix (or a breakage) makes. What `--ragate-promote` refuses."""
        return self.flips > 1

    def path(self) -> str:
        """`wrong ×3 → right → wrong`: each stretch of one outcome once, with its length."""
        stretches: list[tuple[str, int]] = []
        for outcome in self.outcomes:
            if stretches and stretches[-1][0] == outcome:
                stretches[-1] = (outcome, stretches[-1][1] + 1)
            else:
                stretches.append((outcome, 1))
        return " → ".join(f"{o} ×{n}" if n > 1 else o for o, n in stretches)

    def __str__(self) -> str:
        since = "; counted since its definition changed" if self.restarted else ""
        return (f"{self.member} flipped {self.flips} of the last {self.runs} runs "
                f"({self.path()}{since})")


def count_flips(member: str, series: Sequence[Seen | None]) -> Flips | None:
    """`series` is the member in each run of the window, oldest first, the current run last
    (None where a run did not have it). None when the current run has no outcome for it."""
    current = series[-1] if series else None
    if current is None or current.outcome == SKIPPED:
        return None
    kept: list[str] = []
    restarted = False
    for seen in reversed(series):
        if seen is None or seen.outcome == SKIPPED:
            continue
        if seen.digest != current.digest:
            restarted = True
            break
        kept.append(seen.outcome)
    return Flips(member=member, outcomes=tuple(reversed(kept)), restarted=restarted)


def count_all(runs: Sequence[Mapping[str, Seen]]) -> list[Flips]:
    """Every member of the current run (the last mapping), in its order, with its flips."""
    if not runs:
        return []
    found = [count_flips(member, [run.get(member) for run in runs]) for member in runs[-1]]
    return [f for f in found if f is not None]
