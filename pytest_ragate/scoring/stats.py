"""95% intervals for gate figures (Wilson for proportions, percentile bootstrap for means)
and the paired tests of a run against its baseline (exact McNemar, paired bootstrap).

All are deterministic (bootstraps are seeded from their input), so a rerun prints the same
interval and p-value, and `-n 0` / `-n N` agree to the digit.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections.abc import Sequence
from fractions import Fraction

Z95 = statistics.NormalDist().inv_cdf(0.975)
BOOTSTRAP_RESAMPLES = 2000
PAIRED_RESAMPLES = 4000


def clears(value: float, interval: tuple[float, float] | None, floor: float,
           strict: bool) -> bool:
    """The gate's one rule: a figure holds a floor when it reaches it, or, with
    `ragate_ci = strict`, when its 95% interval's lower bound does."""
    return interval[0] >= floor if strict and interval is not None else value >= floor


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials."""
    if n <= 0:
        raise ValueError("a Wilson interval needs n > 0")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES,
                   level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, seeded by the values themselves."""
    if not values:
        raise ValueError("a bootstrap interval needs at least one value")
    values = sorted(values)  # a canonical order: the same values resample the same way
    seed = hashlib.sha256(repr(values).encode()).digest()
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = (1 - level) / 2
    lo = means[math.floor(alpha * (resamples - 1))]
    hi = means[math.ceil((1 - alpha) * (resamples - 1))]
    return lo, hi


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs only: `worse` units were
    right in the baseline and wrong now, `better` the other way round. Under no change each
    discordant pair is a fair coin, so p = 2·P(Binomial(worse + better, 1/2) <= min)."""
    if worse < 0 or better < 0:
        raise ValueError("discordant counts are never negative")
    n = worse + better
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(worse, better) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def paired_bootstrap(pairs: Sequence[tuple[float, float, float, float]],
                     resamples: int = PAIRED_RESAMPLES) -> tuple[float, float]:
    """Change of a ratio metric between two runs of the same questions, and its two-sided
    p-value, resampling questions (not units) so each question's two runs move together.

    A pair is `(baseline numerator, baseline denominator, current numerator, current
    denominator)`: (value, 1) for a judged mean, (correct, cited) for citation accuracy. The
    change is Σcur_num/Σcur_den − Σbase_num/Σbase_den; p = 2·min(share of resampled changes
    <= 0, share >= 0), with the observed sample counted in both shares (so p > 0).
    """
    if not pairs:
        raise ValueError("a paired bootstrap needs at least one pair")

    def change(rows: Sequence[tuple[float, float, float, float]]) -> float | None:
        base_den = sum(r[1] for r in rows)
        cur_den = sum(r[3] for r in rows)
        if not base_den or not cur_den:
            return None
        return sum(r[2] for r in rows) / cur_den - sum(r[0] for r in rows) / base_den

    observed = change(pairs)
    if observed is None:
        raise ValueError("a paired bootstrap needs a non-zero denominator in both runs")
    pairs = sorted(pairs)  # a canonical order: the same pairs resample the same way
    rng = random.Random(hashlib.sha256(repr(pairs).encode()).digest())
    n = len(pairs)
    changes = [d for _ in range(resamples)
               if (d := change(rng.choices(pairs, k=n))) is not None]
    at_most = 1 + sum(d <= 0 for d in changes)
    at_least = 1 + sum(d >= 0 for d in changes)
    p = min(1.0, 2 * min(at_most, at_least) / (len(changes) + 1))
    return observed, p
