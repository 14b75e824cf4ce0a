"""A run's slice floors as one table per key and metric, worst slice first: what the Markdown
report, the HTML report and the terminal show beside the floors table.

Each slice floor is already its own verdict (and test case); a reader of twenty slices of
`lang` wants them side by side, the ones that fail on top: a slice that misses the floor
first, then those too small to decide (failed or skipped, by the gate's setting), then those
that hold; within each, the slice furthest on the wrong side of its floor first. Pure: the
verdicts in, rows out, so every output orders them the same way at `-n 0` and `-n 2`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from pytest_ragate.decision.floors import Verdict
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.scoring.slices import SliceCall
from pytest_ragate.wording.numbers import bound
from pytest_ragate.wording.slices import (
    slice_floors,
    slices_head,
    slices_summary,
)

# a verdict without a call (its slice had members without a result, say) sits after the
# misses: it failed, or was skipped, for a reason its message gives
_RANK: dict[SliceCall | None, int] = {"misses": 0, None: 1, "insufficient": 2, "holds": 3}


@dataclass(frozen=True, kw_only=True)
class SliceRow:
    """One slice of a key: its value (`de`) and the floor's verdict over it."""

    value: str
    verdict: Verdict

    @property
    def call(self) -> SliceCall | None:
        return self.verdict.slice_call

    @property
    def margin(self) -> float:
        """How far the slice's value clears its floor: negative on the wrong side, +inf
        when nothing was scored (it has no side)."""
        value, floor = self.verdict.value, self.verdict.floor
        if value is None:
            return math.inf
        return floor.min - value if floor.upper else value - floor.min

    @property
    def failing(self) -> bool:
        return self.verdict.outcome in ("failed", "xpassed")


@dataclass(frozen=True, kw_only=True)
class SliceTable:
    """The slice floors of one key and metric (a family: the correction spans it), worst
    first; `correction` as the verdicts carry it (`Holm`), None when no slice had
    a test."""

    key: str
    metric: str
    rows: tuple[SliceRow, ...]
    correction: str | None

    @property
    def bound(self) -> str:
        """The family's floor as reports print it (`≥ 0.85`): the one most slices share."""
        counts = Counter(bound(row.verdict.floor) for row in self.rows)
        return counts.most_common(1)[0][0]

    @property
    def overrides(self) -> list[tuple[str, str]]:
        """Slices whose own floor differs from the family's (a named slice's override)."""
        return [(row.value, bound(row.verdict.floor)) for row in self.rows
                if bound(row.verdict.floor) != self.bound]

    def called(self, call: SliceCall | None) -> list[SliceRow]:
        return [row for row in self.rows if row.call == call]

    @property
    def head(self) -> str:
        """`slices of lang (abstention_accuracy ≥ 0.85, Holm)`."""
        return slices_head(self.key, slice_floors(self.key, self.metric, self.bound,
                                                  self.overrides), self.correction)

    def summary(self) -> str:
        """The terminal's line: how many slices miss (named), are undecided or insufficient
        (named, with the n each needs) and hold."""
        return slices_summary(
            self.head, misses=[r.value for r in self.called("misses")],
            undecided=[r.value for r in self.called(None)],
            insufficient=[(r.value, r.verdict.needs) for r in self.called("insufficient")],
            holds=len(self.called("holds")))


def worst_first(row: SliceRow) -> tuple[int, float, str]:
    """Misses, then undecided, then insufficient, then holds; within a call the furthest on
    the wrong side of its floor first, then by slice value."""
    return _RANK[row.call], row.margin, row.value


def slice_tables(run: GoldsetRun) -> list[SliceTable]:
    """The run's slice floors grouped by (key, metric), in the order the verdicts first name
    them; rows worst first. Empty when the run has no slice floor."""
    groups: dict[tuple[str, str], list[SliceRow]] = {}
    for v in run.verdicts:
        if v.floor.slice is not None:
            key, value = v.floor.slice
            groups.setdefault((key, v.floor.metric), []).append(SliceRow(value=value, verdict=v))
    return [SliceTable(key=key, metric=metric, rows=tuple(sorted(rows, key=worst_first)),
                       correction=next((r.verdict.correction for r in rows
                                        if r.verdict.correction), None))
            for (key, metric), rows in groups.items()]
