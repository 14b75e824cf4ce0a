"""95% intervals for gate figures: Wilson for proportions, percentile bootstrap for means.

Both are deterministic (the bootstrap is seeded from its input), so a rerun prints the same
interval and `-n 0` / `-n N` agree to the digit.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections.abc import Sequence

Z95 = statistics.NormalDist().inv_cdf(0.975)
BOOTSTRAP_RESAMPLES = 2000


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
    seed = hashlib.sha256(repr(sorted(values)).encode()).digest()
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    alpha = (1 - level) / 2
    lo = means[math.floor(alpha * (resamples - 1))]
    hi = means[math.ceil((1 - alpha) * (resamples - 1))]
    return lo, hi
