"""Figures by tag value: each metric over the questions of each value of each tag a goldset's
questions carry (`lang=de`), with n and its 95% interval: information, like the by-kind
figures, shown whether or not the goldset has slice floors (a slice floor's verdict is
`slice_floors.py`'s, decided with its family).

The interval of a proportion is Wilson's, as a floor's. For a mean of per-question scores in
[0, 1] (citation accuracy, judged scores) it is Wilson's over the scores' sum: no distribution
on [0, 1] of a given mean has more variance than the 0/1 one, so it is at least as wide as the
spread allows, the bound `slices.slice_interval` widens a slice floor's bootstrap to, and it
needs no resampling (a bootstrap per tag value cost about 10 s over 200 values of 10,000
questions, benchmarks/ci_views.py). The bill's seconds and dollars, which are not shares, get
the gate's own interval (`gates.interval_of`). A slice floor's verdict reports its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.figures import interval_of
from pytest_ragate.scoring.records import QuestionRecord, Tally, tally
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.slices import sliceable
from pytest_ragate.scoring.stats import wilson


@dataclass(frozen=True, kw_only=True)
class TagFigure:
    """One metric over the questions whose tag `key` is `value`."""

    key: str
    value: str
    metric: str
    tally: Tally
    interval: tuple[float, float] | None

    @property
    def name(self) -> str:
        """`lang=de`, as slice floors name a slice."""
        return f"{self.key}={self.value}"


def tag_keys(records: Sequence[QuestionRecord]) -> list[str]:
    """Every tag key some question carries, in first-seen order."""
    return list(dict.fromkeys(key for r in records for key in r.tags))


def tag_values(records: Sequence[QuestionRecord], key: str) -> dict[str, list[QuestionRecord]]:
    """The rows of each value of `key`, values sorted (an untagged row is in none)."""
    found: dict[str, list[QuestionRecord]] = {}
    for r in records:
        if key in r.tags:
            found.setdefault(r.tags[key], []).append(r)
    return dict(sorted(found.items()))


def tag_figures(records: Sequence[QuestionRecord], metrics: Sequence[str]) -> list[TagFigure]:
    """Each metric over each value of each tag key, key by key, metric by metric, values
    sorted; a value with nothing scored for a metric is left out of it."""
    found = []
    for key in tag_keys(records):
        groups = tag_values(records, key)
        for metric in metrics:
            for value, rows in groups.items():
                t = tally(metric, rows)
                if not t.n:
                    continue
                interval = information_interval(t)
                found.append(TagFigure(key=key, value=value, metric=metric, tally=t,
                                       interval=interval))
    return found


def information_interval(t: Tally) -> tuple[float, float] | None:
    """Wilson's for a proportion; for a mean of shares, Wilson's over their sum (with repeats,
    over the questions' mean scores); the gate's for the bill (the module's docstring)."""
    if not t.n:
        return None
    if not sliceable(t.metric) or (METRICS[t.metric].aggregate == "proportion" and not t.clusters):
        return interval_of(t)
    values = [s / c for s, c in t.clusters if c] if t.clusters else list(t.values)
    return wilson(math.fsum(values), len(values)) if values else None
