"""The mean of values in [0, 1] tested and bounded by betting, valid at every n from one value
on: a slice's shortfall test (`mean_shortfall`) and a floor's 95% interval (`mean_interval`).

Method: I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 85 (2023), arXiv 2010.09686, with constant bets mixed over a fixed grid (their
"diversified Kelly" capital). Against "the mean is at least m", a bet l in [0, 1/(1 - m)] on
the values falling short turns n values into the capital

    K_l(m) = prod_i (1 - l (x_i - m)):

each factor is nonnegative and, under the null, of expectation at most 1, so for independent
values E[K_l] <= 1 (an e-value). The average of K_l over the fixed grid of BETS bets
(`bets_for`, fixed before the data) is again one (V. Vovk and R. Wang, "E-values:
calibration, combination and applications", Ann. Statist. 49, 2021), and by Markov's
inequality p = min(1, 1 / that average) is a valid p-value for any distribution on [0, 1] and
any n. "The mean is at most m" is the same test of 1 - x against 1 - m.

**The interval** is every m that neither test rejects at (1 - LEVEL) / 2:

    { m : mean_shortfall(x, m) > 0.025  and  mean_shortfall(x, m, upper=True) > 0.025 }.

Guarantee: for independent values in [0, 1] of any distribution with mean mu, the chance that
it misses mu is at most 5%, at every n: no normal approximation, no resampling. Three answers
of 1.0 give [0.14, 1.00], where a percentile bootstrap gives the point [1.00, 1.00] (which would
hold any floor below 1.00 under `ragate_ci = strict`). Each capital moves one way in m (a
factor 1 - l (x - m) with l = c / (1 - m) is 1 - c + c (1 - x) / (1 - m)), so each bound is
one crossing, found by bisection to within TOLERANCE and rounded outward; both lie either
side of the values' mean (at m = mean every capital is at most 1, by the AM-GM inequality), so
the interval always holds the figure it is drawn around.

Unlike a bet that adapts value by value (their hedged capital, narrower by a few points at
n = 300), a constant bet's capital is a product: it does not depend on the values' order, so
neither the goldset's order of its questions (grouped by kind, easy ones first) nor the order
results arrive in under -n N can move it. `benchmarks/intervals.py` measures its coverage and
width at n = 3, 5, 10 and 30 beside the bootstrap's, Wilson's and Clopper-Pearson's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

LEVEL = 0.95
BETS = 24  # the constant bets: (1 − m)·l = 0.99·0.8^j, j = 0..23 (0.99 to 0.006)
TOLERANCE = 1e-6  # how far the bisection leaves each bound (rounded outward)


def bets_for(m: float) -> list[float]:
    """The fixed grid of bets against a null mean m: geometric, from just under the largest
    that keeps every factor positive (1 / (1 − m)) down by a factor 0.8 a step, so the bet
    that suits the values' spread is within a factor 0.8 of one of them."""
    return [0.99 * 0.8**j / (1.0 - m) for j in range(BETS)]


def _values(values: Sequence[float]) -> np.ndarray:
    import numpy as np

    xs = np.asarray(values, dtype=float)
    if not np.all((xs >= 0.0) & (xs <= 1.0)):
        raise ValueError("a betting test needs values in [0, 1]")
    return xs


def _log_capital(xs: np.ndarray, m: float) -> float:
    """log of the grid's average capital against "the mean is at least m" (0 at m = 1: a
    floor of 1 learns nothing, every factor being 1)."""
    import numpy as np

    if m >= 1.0:
        return 0.0
    bets = np.asarray(bets_for(m))
    logs = np.log1p(-bets[:, None] * (xs[None, :] - m)).sum(axis=1)
    top = float(logs.max())
    return top + math.log(float(np.exp(logs - top).mean()))


def mean_shortfall(values: Sequence[float], floor: float, upper: bool = False) -> float:
    """The betting test's one-sided p-value of values in [0, 1] against H0 "the true mean
    clears the floor": 1 / the average capital of the bets `bets_for` (module docstring). An
    upper floor is the same test of 1 − x against 1 − floor."""
    if not values:
        raise ValueError("a shortfall test needs n > 0")
    xs = _values(values)
    if upper:
        xs, floor = 1.0 - xs, 1.0 - floor
    return min(1.0, math.exp(-_log_capital(xs, floor)))


def _upper_bound(xs: np.ndarray, threshold: float) -> float:
    """The largest m that the test of "the mean is at least m" does not reject: between the
    values' mean (never rejected) and 1."""
    low, high = float(xs.mean()), 1.0
    if _log_capital(xs, high - TOLERANCE) < threshold:
        return 1.0
    while high - low > TOLERANCE:
        mid = (low + high) / 2
        low, high = (low, mid) if _log_capital(xs, mid) >= threshold else (mid, high)
    return min(1.0, high + TOLERANCE)


def mean_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    """The betting interval of the mean of `values` (each in [0, 1], in any order) at
    `level`: valid at every n, never a point, and it holds the values' mean (module
    docstring)."""
    if not values:
        raise ValueError("an interval of a mean needs at least one value")
    xs = _values(values)
    threshold = math.log(2.0 / (1.0 - level))  # each side at (1 - level) / 2
    return 1.0 - _upper_bound(1.0 - xs, threshold), _upper_bound(xs, threshold)


NEEDS_LIMIT = 20_000  # the most values `needed_to_clear` looks at


def needed_to_clear(values: Sequence[float], floor: float, level: float = LEVEL) -> int | None:
    """About how many values like these (the sample repeated) would let the betting interval
    exclude `floor` on the side their mean lies; None when the mean is at the floor or no n
    up to NEEDS_LIMIT would."""
    import numpy as np

    xs = _values(values)
    mean = float(xs.mean())
    if not xs.size or mean == floor:
        return None

    def clears(n: int) -> bool:
        low, high = mean_interval(np.resize(xs, n).tolist(), level)
        return low > floor if mean > floor else high < floor

    low, high = xs.size, xs.size
    while not clears(high):
        if high >= NEEDS_LIMIT:
            return None
        low, high = high, min(2 * high, NEEDS_LIMIT)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if clears(mid) else (mid, high)
    return high
