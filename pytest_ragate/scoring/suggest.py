"""Figures before floors: every metric a run can score, and the floor it suggests.

A run without floors still has figures: each metric its goldset can score (the mechanical
ones always, the judged ones when a judge ran), with n, the 95% interval a floor on it would
be decided on (`figures.interval_of`) and its kind counts. The suggested floor is that
interval's lower bound rounded down to `STEP`: today's figures clear it, in `ragate_ci =
strict` too, and a rerun clears it while its figure stays within today's interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.figures import interval_of, kind_counts
from pytest_ragate.scoring.records import QuestionRecord, Tally, tally
from pytest_ragate.scoring.registry import METRICS, run_metrics

STEP = 0.05  # suggested floors sit on this grid, rounded down
RULE = ("each suggested floor is the 95% interval's lower bound (the interval its floor is "
        f"decided on) rounded down to {STEP:.2f}: today's figures clear it, with ragate_ci = "
        "strict too, and a rerun clears it while its figure stays within today's interval")


@dataclass(frozen=True, kw_only=True)
class Figure:
    """One metric over a goldset's questions, and the floor its interval suggests."""

    metric: str
    tally: Tally
    interval: tuple[float, float] | None
    by_kind: list[tuple[str, Tally]]

    @property
    def suggested(self) -> float | None:
        """The interval's lower bound rounded down to STEP; None with nothing scored."""
        if self.interval is None:
            return None
        return suggested_floor(self.interval[0])


def suggested_floor(lower: float) -> float:
    """`lower` rounded down to STEP (0.6149 → 0.60); a bound on the grid stays (0.65 → 0.65)."""
    steps = math.floor(round(lower / STEP, 9))
    return round(max(0, steps) * STEP, 2)


def figures(records: Sequence[QuestionRecord]) -> list[Figure]:
    """Every metric `records` can score, in report order: the mechanical ones, and those a
    judge was asked for (judge_coverage with them). Skipped rows count nowhere; errored ones
    count as wrong, as a floor counts them."""
    asked = {m for r in records for m in r.judge_attempted}
    found = []
    for metric in run_metrics(asked):
        if METRICS[metric].source not in ("mechanical", "verdict", "judge"):
            continue
        t = tally(metric, records)
        found.append(Figure(metric=metric, tally=t, interval=interval_of(t),
                            by_kind=kind_counts(metric, records)))
    return found
