"""`--ragate-baseline`: did this run get significantly worse than a baseline run?

Filled in below; the shape is what reports render.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RegressionOutcome = Literal["passed", "failed", "skipped"]


@dataclass(frozen=True)
class Regression:
    """One metric of one goldset, paired question by question with the baseline."""

    goldset: str
    metric: str
    test: str  # "McNemar (exact)" or "paired bootstrap"
    pairs: int  # paired units both runs scored
    baseline: float | None  # the metric over the paired units, in the baseline run
    current: float | None  # ... and in this run
    p_value: float | None
    outcome: RegressionOutcome
    message: str

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline
