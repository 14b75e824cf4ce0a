"""The prediction-powered estimate of a judged mean: the judge's figure corrected by the
goldset's human labels, so a judge that scores too high cannot pass a floor its labels would
fail (`[judge] estimate = "ppi"`, docs/judges.md).

Pure: values in, values out; stdlib only.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.stats import Z95

Pair = tuple[float, float]  # (judge, human)


@dataclass(frozen=True)
class Ppi:
    """A judged mean corrected by the labels: θ̂ = mean of the judge over all N questions −
    mean of (judge − human) over the n labelled, with its 95% interval."""

    value: float
    interval: tuple[float, float]
    judge_mean: float
    bias: float  # mean of (judge − human) over the labelled questions
    n_all: int
    n_labelled: int


def ppi_mean(judged: Sequence[float], pairs: Sequence[Pair], z: float = Z95) -> Ppi | None:
    """Prediction-powered estimate of a mean (Angelopoulos, Bates, Fannjiang, Jordan and
    Zrnic 2023, "Prediction-powered inference", Science 382; used for RAG judges by ARES,
    Saad-Falcon et al. 2024): the judge's mean over every scored question, minus its mean
    error on the labelled ones (the rectifier), with the normal-approximation interval of
    variance var(judge)/N + var(judge − human)/n. A judge that scores 0.25 too high on the
    labelled questions has 0.25 taken off its mean, and the interval widens with how
    unevenly it errs. None with fewer than 2 labelled pairs or 2 judged values (no variance
    to estimate)."""
    if len(pairs) < 2 or len(judged) < 2:
        return None
    errors = [a - b for a, b in pairs]
    judge_mean = statistics.fmean(judged)
    bias = statistics.fmean(errors)
    value = judge_mean - bias
    half = z * math.sqrt(statistics.variance(judged) / len(judged)
                         + statistics.variance(errors) / len(errors))
    return Ppi(value, (value - half, value + half), judge_mean, bias, len(judged), len(pairs))
