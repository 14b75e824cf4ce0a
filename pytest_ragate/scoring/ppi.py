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

# The fewest labelled questions the estimate is made from. Its interval is a normal
# approximation, z = 1.96 times a standard error whose larger part, var(judge − human)/n, is
# estimated from the n labels themselves. An interval built so covers the truth about as
# often as P(|T| ≤ 1.96) for Student's T with n − 1 degrees of freedom: 70% at 2 labels, 89%
# at 6, 92% at 10, 94% at 30 (for normally distributed errors; bounded ones fare no better).
# Below 10 labels a "95%" interval would miss more than one time in twelve: the floor fails
# instead of passing on an interval that narrow.
MIN_LABELS = 10
NO_SPREAD = 0.05  # a zero spread is bounded at the 95% level (the rule of three), not taken as 0


@dataclass(frozen=True, kw_only=True)
class Ppi:
    """A judged mean corrected by the labels: θ̂ = mean of the judge over all N questions −
    mean of (judge − human) over the n labelled, with its 95% interval. `bounded` names the
    terms whose sample variance was zero and was replaced by its bound (`spread`)."""

    value: float
    interval: tuple[float, float]
    judge_mean: float
    bias: float  # mean of (judge − human) over the labelled questions
    n_all: int
    n_labelled: int
    bounded: tuple[str, ...] = ()  # "judged", "labelled": a zero spread bounded, not used


def spread(values: Sequence[float], low: float, high: float) -> tuple[float, bool]:
    """The sample variance of `values` (each in [low, high]), and whether it was bounded.

    A sample in which every value is the same value c has variance 0, which would make the
    interval a point. It says only that values other than c are rare: with none among n, the
    share p of them is below 1 − 0.05^(1/n) at 95% (the exact form of the rule of three, about
    3/n: Hanley and Lippman-Hand 1983, "If nothing goes wrong, is everything all right?",
    JAMA 249). Such values lie at most d = max(c − low, high − c) from c, so the variance is
    at most E[(X − c)²] ≤ p·d², and never above Popoviciu's (high − low)²/4: that bound is
    used instead of 0."""
    variance = statistics.variance(values)
    if variance > 0:
        return variance, False
    c = values[0]
    p = 1 - NO_SPREAD ** (1 / len(values))
    return min(p * max(c - low, high - c) ** 2, (high - low) ** 2 / 4), True


def ppi_mean(judged: Sequence[float], pairs: Sequence[Pair], z: float = Z95) -> Ppi | None:
    """Prediction-powered estimate of a mean (Angelopoulos, Bates, Fannjiang, Jordan and
    Zrnic 2023, "Prediction-powered inference", Science 382; used for RAG judges by ARES,
    Saad-Falcon et al. 2024): the judge's mean over every scored question, minus its mean
    error on the labelled ones (the rectifier), with the normal-approximation interval of
    variance var(judge)/N + var(judge − human)/n. A judge that scores 0.25 too high on the
    labelled questions has 0.25 taken off its mean, and the interval widens with how
    unevenly it errs. None with fewer than MIN_LABELS labelled pairs (or judged values):
    too few to estimate the variance the interval rests on. A variance that comes out 0 (a
    constant judge, labels that all agree with it) is bounded (`spread`), never a point
    interval."""
    if len(pairs) < MIN_LABELS or len(judged) < MIN_LABELS:
        return None
    errors = [a - b for a, b in pairs]
    judge_mean = statistics.fmean(judged)
    bias = statistics.fmean(errors)
    value = judge_mean - bias
    judge_var, judge_bounded = spread(judged, 0.0, 1.0)
    error_var, error_bounded = spread(errors, -1.0, 1.0)
    half = z * math.sqrt(judge_var / len(judged) + error_var / len(errors))
    bounded = tuple(name for name, was in (("judged", judge_bounded),
                                           ("labelled", error_bounded)) if was)
    return Ppi(value=value, interval=(value - half, value + half), judge_mean=judge_mean,
               bias=bias, n_all=len(judged), n_labelled=len(pairs), bounded=bounded)
