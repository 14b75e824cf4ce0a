"""Rubrics a judge grades (`[rubrics.polite] criteria = "…"` in ragate.toml): what one is,
its verdict as a share, and its entry in the metric registry.

A rubric is pass/fail by default (the judge says whether the answer meets the criteria: 1 or
0); with `scale = 5` and a description per score, the judge gives a score 1..5, kept as
(score − 1) / (scale − 1), so every rubric's figure is a mean in [0, 1] that a floor gates
like any judged metric's. Its name is a metric name: `[floors] polite = 0.9`. The goldsets a
process loads declare their rubrics here (`declare`), so the registry finds their names as
it finds the built-in ones; a rubric's registry entry is the same whatever its criteria, so
two goldsets may each declare their own `polite`. Its verdict's cache key holds its criteria
(`material`): another wording is another verdict.

A leaf module, like registry.py: plain Python, no pytest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pytest_ragate.scoring.registry import METRICS, Metric, verdict_metric

RUBRIC_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True, kw_only=True)
class Rubric:
    """One rubric: its name, the criteria the judge grades against, and its scale (None:
    pass/fail) with a description of each score 1..scale."""

    name: str
    criteria: str
    scale: int | None = None
    scores: tuple[str, ...] = ()

    @property
    def binary(self) -> bool:
        """Pass/fail: the judge says whether the answer meets the criteria."""
        return self.scale is None

    @property
    def top(self) -> int:
        """The highest score a verdict may give: 1 (pass) for a pass/fail rubric."""
        return 1 if self.scale is None else self.scale

    @property
    def bottom(self) -> int:
        """The lowest score a verdict may give: 0 (fail), or 1 on a scale."""
        return 0 if self.scale is None else 1

    def value_of(self, score: int) -> float:
        """A verdict's score as the row keeps it, in [0, 1]: pass 1.0, fail 0.0; on a scale,
        (score − 1) / (scale − 1)."""
        if self.scale is None:
            return float(score)
        return (score - 1) / (self.scale - 1)

    def valid(self, score: object) -> bool:
        """Whether a verdict's score is one this rubric defines: an int (not a bool) in
        bottom..top."""
        return (type(score) is int and self.bottom <= score <= self.top)

    def material(self) -> dict[str, object]:
        """What a verdict of this rubric depends on besides the answer: part of its cache
        key, so changing a word of the criteria asks the judge again."""
        return {"rubric": self.name, "criteria": self.criteria, "scale": self.scale,
                "scores": list(self.scores)}


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a rubric, or None: lower-case letters, digits and `_` (it is a
    metric's name: a JUnit property, a column, a TOML key), not a built-in metric's, a family
    member's nor a metric the project defines (`@ragate.metric`)."""
    if not RUBRIC_NAME.fullmatch(name):
        return (f"a rubric's name is lower-case letters, digits and '_', starting with a "
                f"letter (at most 64), not {name!r}")
    if name in METRICS.builtin_names() or METRICS.family(name) is not None:
        return f"{name!r} is a built-in metric: name the rubric otherwise (e.g. {name}_rubric)"
    if name in METRICS.custom:
        return (f"{name!r} is a metric the project defines (@ragate.metric): name the rubric "
                "otherwise")
    return None


def as_metric(name: str) -> Metric:
    """A rubric's registry entry: a judged verdict in [0, 1] per question, a mean over the
    verdicts obtained, asked only where a floor gates it."""
    return replace(verdict_metric(name, on_request=True), rubric=True)


def declare(names: Iterable[str]) -> None:
    """Make these rubric names known to the registry (kept for the process: a rubric's entry
    does not depend on its criteria)."""
    for name in names:
        if name not in METRICS.rubrics and name_problem(name) is None:
            METRICS.rubrics[name] = as_metric(name)


def is_rubric(name: str) -> bool:
    """Whether `name` is a rubric some goldset of this process declares."""
    return name in METRICS.rubrics
