"""`[regression] max_drop`: a metric compared with its baseline is held to "no worse than the
baseline by more than the margin", with three outcomes over the check's own paired design.

The change (this run − the baseline, over the questions both scored, a goldset of
conversations paired by whole conversations) gets one-sided (1 − alpha) bounds
(scoring/noninferiority.py: Tango's score variance at the margin for right-or-wrong units, a
cluster-robust variance for scores; Wellek's non-inferiority test):

- non-inferior (passes) when the lower bound lies above −margin;
- worse (fails, naming the questions that got worse) when the upper bound lies below
  −margin: the drop is beyond the margin with the same confidence;
- inconclusive otherwise: fails as "not decided", with about how many more questions
  would decide, unless the goldset says `inconclusive = "pass"`.

Each error rate is at most alpha at the margin (benchmarks/noninferiority.py): a system worse
than the baseline by the margin passes as non-inferior at most alpha of the time, and one
exactly at the margin is called worse at most alpha of the time. Without a margin for a
metric its check is today's: a drop fails only when it is significant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pytest_ragate.scoring.noninferiority import (
    ChangeBounds,
    binary_bounds,
    more_needed,
    score_bounds,
)
from pytest_ragate.scoring.pairing import Paired, discordant_clusters, paired_test
from pytest_ragate.scoring.records import QuestionScores
from pytest_ragate.scoring.stats import MCNEMAR

MarginCall = Literal["non-inferior", "worse", "inconclusive"]
Inconclusive = Literal["fail", "pass"]


@dataclass(frozen=True, kw_only=True)
class Margins:
    """A goldset's `[regression]` table: the largest drop allowed per metric, and what an
    undecided check does."""

    max_drop: Mapping[str, float] = field(default_factory=dict)
    inconclusive: Inconclusive = "fail"


NO_MARGINS = Margins()


@dataclass(frozen=True, kw_only=True)
class MarginCheck:
    """A metric's change against its margin: the bounds (None with fewer than two paired
    clusters), the call, and about how many more clusters would decide an inconclusive one
    (None: none would, the change sits on the margin or nothing was bounded)."""

    margin: float
    call: MarginCall
    bounds: ChangeBounds | None
    more: int | None = None
    inconclusive: Inconclusive = "fail"

    @property
    def passed(self) -> bool:
        """Non-inferior passes; inconclusive passes only when the goldset opts in."""
        return self.call == "non-inferior" or (self.call == "inconclusive"
                                               and self.inconclusive == "pass")


def margin_call(bounds: ChangeBounds | None, margin: float) -> MarginCall:
    """The rule: non-inferior when the lower bound clears −margin, worse when the upper bound
    is below it, inconclusive otherwise (and when nothing could be bounded)."""
    if bounds is None:
        return "inconclusive"
    if bounds.lower > -margin:
        return "non-inferior"
    return "worse" if bounds.upper < -margin else "inconclusive"


def check_margin(paired: Paired, base: Mapping[str, QuestionScores],
                 current: Mapping[str, QuestionScores], *, metric: str, margin: float,
                 alpha: float, inconclusive: Inconclusive = "fail") -> MarginCheck:
    """A metric's paired change held to its margin, over the clusters its check paired:
    a binary metric's right-or-wrong units counted by question or conversation, a score's
    pair of ratios per question or conversation (`paired.ratios`)."""
    bounds = (binary_bounds(discordant_clusters(metric, base, current), margin, alpha)
              if paired_test(metric) == MCNEMAR else score_bounds(paired.ratios, alpha))
    call = margin_call(bounds, margin)
    more = more_needed(bounds, margin) if bounds is not None and call == "inconclusive" else None
    return MarginCheck(margin=margin, call=call, bounds=bounds, more=more,
                       inconclusive=inconclusive)

