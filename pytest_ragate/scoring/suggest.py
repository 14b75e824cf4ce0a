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
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, Tally, tally
from pytest_ragate.scoring.registry import METRICS, run_metrics
from pytest_ragate.scoring.slices import SliceFigure, decide_slices, sliceable
from pytest_ragate.scoring.tag_figures import tag_keys, tag_values

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
    failed: int = 0  # rows a metric the project defines failed on: a floor on it is not decided

    @property
    def suggested(self) -> float | None:
        """The interval's lower bound rounded down to STEP; None with nothing scored, or
        when the project's metric failed on some rows (its floor would not be decided)."""
        if self.interval is None or self.failed:
            return None
        return suggested_floor(self.interval[0])


def suggested_floor(lower: float) -> float:
    """`lower` rounded down to STEP (0.6149 → 0.60); a bound on the grid stays (0.65 → 0.65)."""
    steps = math.floor(round(lower / STEP, 9))
    return round(max(0, steps) * STEP, 2)


def figures(records: Sequence[QuestionRecord]) -> list[Figure]:
    """Every metric `records` can score, in report order: the mechanical ones, those a
    judge was asked for (judge_coverage with them), and those the project defines (with the
    rows one failed on). Skipped rows count nowhere; errored ones count as wrong, as a floor
    counts them."""
    asked = {m for r in records for m in r.scored_on}
    found = []
    for metric in run_metrics(asked):
        if METRICS[metric].source not in ("mechanical", "verdict", "judge", "custom"):
            continue
        t = tally(metric, records)
        found.append(Figure(metric=metric, tally=t, interval=interval_of(t),
                            by_kind=kind_counts(metric, records),
                            failed=t.failures if METRICS[metric].source == "custom" else 0))
    return found


@dataclass(frozen=True, kw_only=True)
class SliceSuggestion:
    """A slice floor over every value of tag `key` at `floor` (the metric's suggested
    floor), and each slice decided against it at this n, worst first."""

    key: str
    metric: str
    floor: float
    slices: list[SliceFigure]

    @property
    def decided(self) -> bool:
        """Every slice holds: the slice floor passes today, and is suggested."""
        return all(s.call == "holds" for s in self.slices)

    @property
    def undecided(self) -> list[SliceFigure]:
        """The slices that stop it: below the floor, or not decidable at their n."""
        return [s for s in self.slices if s.call != "holds"]


def slice_suggestions(records: Sequence[QuestionRecord], found: Sequence[Figure],
                      ) -> list[SliceSuggestion]:
    """For each tag key with at least two values and each metric with a suggested floor
    above 0 that can be a slice floor: its slices decided against that floor."""
    suggestions = []
    for key in tag_keys(records):
        groups = tag_values(records, key)
        if len(groups) < 2:
            continue
        for figure in found:
            floor = figure.suggested
            if not floor or not sliceable(figure.metric):
                continue
            tallies = {value: tally(figure.metric, rows) for value, rows in groups.items()}
            decided = decide_slices(Floor(figure.metric, floor), tallies)
            suggestions.append(SliceSuggestion(key=key, metric=figure.metric, floor=floor,
                                               slices=decided))
    return suggestions
