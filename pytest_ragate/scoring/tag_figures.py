"""Figures by tag value: each metric over the questions of each value of each tag a goldset's
questions carry (`lang=de`), with n and its 95% interval: information, like the by-kind
figures, shown whether or not the goldset has slice floors (a slice floor's verdict is
`slice_floors.py`'s, decided with its family).

The interval is the one a slice floor over that value would be decided on
(`slices.slice_interval`: the gate's, and for a mean at least Wilson's over its sum), so the
figures a report shows before any slice floor are the figures such a floor would see. A metric
that cannot be a slice floor (the bill's seconds and dollars) gets the gate's own interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.gates import interval_of
from pytest_ragate.scoring.records import QuestionRecord, Tally, tally
from pytest_ragate.scoring.slices import not_sliceable, slice_interval


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
                interval = interval_of(t) if not_sliceable(metric) else slice_interval(t)
                found.append(TagFigure(key=key, value=value, metric=metric, tally=t,
                                       interval=interval))
    return found
