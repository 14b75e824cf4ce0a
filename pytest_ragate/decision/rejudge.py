"""`ragate rejudge`'s decision: each judged floor of a goldset as the gate decides it over the
saved rows (the current judge's) and over the same rows graded by the candidate, and whether
the judge change moves the gate.

Both sides are the gate's own decision (`run_decision.decide_run`) over one population and
the same arrivals, the candidate's rows in place of the current judge's: so a prediction
holds every rule a run holds its floors to (gaps, judge coverage of a slice, the labels that
vouch for a judge, the prediction-powered estimate, xfail), and cannot pass a floor the gate
with that judge fails.

The change moves the gate (`Comparison.reasons`) when a floor's outcome changes, a shift is
significant (`scoring/rejudge.py`: paired bootstrap and McNemar, Holm-corrected), or an
answer the current judge graded was not graded by the candidate, or by neither judge: never
"no change" over answers nobody compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.decision.floors import Outcome
from pytest_ragate.decision.population import Collected
from pytest_ragate.decision.rules import Rules
from pytest_ragate.decision.run_decision import Arrived, Decision, decide_run
from pytest_ragate.scoring.agreement import Agreement
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.rejudge import ALPHA, Shift

ReasonKind = Literal["floor", "shift", "unregraded", "not graded"]


@dataclass(frozen=True, kw_only=True)
class FloorChange:
    """A judged floor decided over the saved rows by each judge."""

    floor: Floor
    current: Outcome
    candidate: Outcome
    current_value: float | None
    candidate_value: float | None

    @property
    def changed(self) -> bool:
        return self.current != self.candidate


@dataclass(frozen=True, kw_only=True)
class AgreementPair:
    """Each judge's agreement with the goldset's labels of one metric."""

    metric: str
    current: Agreement
    candidate: Agreement


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """One goldset's saved answers under two judges."""

    goldset: str
    current_judge: str
    candidate_judge: str
    shifts: tuple[Shift, ...]
    floors: tuple[FloorChange, ...]
    agreements: tuple[AgreementPair, ...]
    alpha: float = ALPHA

    @property
    def reasons(self) -> list[tuple[ReasonKind, FloorChange | Shift]]:
        """Why the judge change is a gate decision, each reason with what it is about: a floor
        whose outcome changes, a significant shift, a metric's answers the candidate did not
        grade, a metric no answer has both judges' verdicts of (not compared: never "no
        change")."""
        found: list[tuple[ReasonKind, FloorChange | Shift]] = [
            ("floor", f) for f in self.floors if f.changed]
        found += [("shift", s) for s in self.shifts if s.significant]
        found += [("unregraded", s) for s in self.shifts if s.unregraded and s.kind is None]
        found += [("not graded", s) for s in self.shifts
                  if s.n == 0 and not s.unregraded and s.kind is None]
        return found


def compare_judges(*, goldset: str, collected: Collected, current: Arrived,
                   candidate: Arrived, rules: Rules, shifts: Sequence[Shift],
                   candidate_judge: str, alpha: float = ALPHA) -> Comparison:
    """One route's judged floors decided by the gate's rules over the current judge's rows
    (`current`) and over the candidate's (`candidate`: the same arrivals, its verdicts in
    place of the current judge's), and each judge's agreement with the labels."""
    before, after = decide_run(collected, current, rules), decide_run(collected, candidate, rules)
    changes = [FloorChange(floor=was.spec.floor, current=was.verdict.outcome,
                           candidate=now.verdict.outcome, current_value=was.verdict.value,
                           candidate_value=now.verdict.value)
               for was, now in zip(before.floors, after.floors, strict=True)
               if was.spec.floor.judged and not was.spec.floor.anchors]
    pairs = [AgreementPair(metric=a.metric, current=a, candidate=b)
             for a, b in zip(_agreements(before), _agreements(after), strict=True)]
    judges = [r.judge for r in current.records.values() if r.judge]
    return Comparison(goldset=goldset, current_judge=judges[0] if judges else "",
                      candidate_judge=candidate_judge, shifts=tuple(shifts),
                      floors=tuple(changes), agreements=tuple(pairs), alpha=alpha)


def _agreements(decision: Decision) -> list[Agreement]:
    return [a for run in decision.runs for a in run.agreements]
