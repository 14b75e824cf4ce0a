"""An anytime-valid test of a finite population's mean against one floor, for sequential
stopping: the betting confidence sequence for sampling without replacement.

Method: Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting"
(JRSS-B 2023, arXiv 2010.09686, the section on sampling without replacement) and "Confidence
sequences for sampling without replacement" (NeurIPS 2020). The N values in [0, 1] (one per
question) are observed one by one in a uniformly random order. Against a null mean m, two
capital processes bet on the next value, centred on what the null leaves for the rest,
mu_t = (N*m - S_{t-1}) / (N - t + 1):

    K+_t = prod (1 + l+_i (y_i - mu_i)), 0 <= l+_i < 1/mu_i        rejects "mean <= m"
    K-_t = prod (1 - l-_i (y_i - mu_i)), 0 <= l-_i < 1/(1 - mu_i)  rejects "mean >= m"

with bets that depend only on the values already seen. Each is a nonnegative supermartingale
under its null, so by Ville's inequality it ever reaches 1/alpha with probability at most
alpha. **Error guarantee: however often the test looks, the chance that it ever proves "above"
when the mean is at most m is at most alpha, and so is the chance that it ever proves "below"
when the mean is at least m; a floor passes when the mean reaches it (mean >= m), so for any
population only one of the two can contradict the full run's decision, and a decision
disagrees with the full run with probability at most alpha, at the floor too.**

Besides the two capitals, what is certain decides at once: once the values seen already put
the mean above m whatever the rest are (S_t / N > m), or below it even if the rest are all 1
((S_t + N - t) / N < m), the null is impossible (the next centre leaves [0, 1]: the capital
would be infinite). So a population observed to its last value is decided exactly, unless its
mean equals m. **A mean at exactly the null** (within TIE: float noise) is proved neither way
by these certain facts; the capitals may still cross, each with probability at most alpha:
"above" agrees with the full decision (mean >= m passes), "below" is the one disagreement. A
run that ends undecided is decided by the full run's own rule, as without sequential stopping.

The guarantee needs the order to be uniformly random and chosen without looking at the values
(a seeded shuffle); an order that depends on them (collection order, easy questions first)
voids it.

The bet (our choice; any predictable bet in range keeps the guarantee): with estimates of the
mean q and variance v from the values seen plus PRIOR_WEIGHT pseudo-values at the null (mean
m, variance m(1 - m)), l = (q - mu) / min(v + (q - mu)^2, mu(1 - mu)), the larger of two
plug-in Kelly bets: aGRAPA's second-order one (the papers' "approximate growth-rate adaptive"
bet, which bets more when the values are concentrated: judged means) and the exact Kelly bet
for 0/1 values of mean q (the least favourable values with that mean: proportion floors). Its
positive part is l+, its negative part l-, each truncated at TRUNCATION / mu (1 - mu for l-)
so one unlucky value costs at most a factor 1 - TRUNCATION. Simulated in
benchmarks/sequential.py. PRIOR_WEIGHT is 5 since issue 49 (2 before): the first bets lean
less on a few values, which spares about 8 of the ~212 questions a 400-question goldset at
0.80 needs against a floor of 0.85, and costs 2 of the ~48 at 0.95; the guarantee is the
same for any predictable bet (the error rate above is unchanged).

Why hand-written: the authors' `confseq` (0.0.11, the latest) does not install here (its sdist
builds C++ with CMake and needs Boost headers), and its betting.py imports matplotlib and
multiprocess at import time. `expectation` (0.6.1 on the index) requires Python >= 3.12 (ragate
supports 3.11), pulls pandas, plotly and matplotlib, is GPL-3.0 with an AI-training clause, and
has no sampling-without-replacement sequence. The rule is a few lines of numpy; it is
vectorised over runs (`stopping_times`) for the simulation, and `MeanTest` runs the same code
on one run, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Side = Literal["above", "below"]

TRUNCATION = 0.7  # a bet risks at most this share of the capital on one value
PRIOR_WEIGHT = 5.0  # pseudo-values at the null behind the first bets' estimates
TIE = 1e-12  # a mean within this of the null counts as equal to it (float sums)
_TINY = 1e-300  # keeps a bet finite where the null leaves the rest no room (mu at 0 or 1)
GRID = 2000  # confidence_interval's grid steps over [0, 1]


def _check_settings(population: object, null: object, alpha: object) -> None:
    if isinstance(population, bool) or not isinstance(population, int) or population < 1:
        raise ValueError(f"population must be a whole number >= 1, got {population!r}")
    for name, value in (("null", null), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not 0.0 <= float(null) <= 1.0:  # type: ignore[arg-type]
        raise ValueError(f"null must be in [0, 1], got {null!r}")
    if not 0.0 < float(alpha) < 1.0:  # type: ignore[arg-type]
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


class _Capital:
    """Both capital processes of many runs at once, one observation per run per step (the
    one rule `MeanTest` and `stopping_times` share). `null` may be one value or one per run."""

    def __init__(self, runs: int, population: int, null: float | np.ndarray, alpha: float):
        self.population = population
        self.null = np.broadcast_to(np.asarray(null, dtype=float), (runs,))
        self.threshold = math.log(1.0 / alpha)
        self.asked = 0
        self.total = np.zeros(runs)  # S: the sum of the values seen
        self.squares = np.zeros(runs)  # sum of (y_i - q_i)^2, for the variance estimate
        self.log_above = np.zeros(runs)  # log K+
        self.log_below = np.zeros(runs)  # log K-
        self.decision = np.zeros(runs, dtype=np.int8)  # +1 above, -1 below, 0 none yet
        self.decided_at = np.zeros(runs, dtype=np.int64)

    def bets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The centre mu_t, the mean's estimate q and the two bets for the next value, from
        the values seen."""
        n, big_n, m = self.asked, self.population, self.null
        mu = np.clip((big_n * m - self.total) / (big_n - n), 0.0, 1.0)
        # clipping keeps validity: mu only moves away from the null's conditional mean
        seen = PRIOR_WEIGHT + n
        q = (PRIOR_WEIGHT * m + self.total) / seen
        v = (PRIOR_WEIGHT * m * (1.0 - m) + self.squares) / seen
        d = q - mu
        bet = d / np.maximum(np.minimum(v + d * d, mu * (1.0 - mu)), _TINY)
        above = np.minimum(np.maximum(bet, 0.0), TRUNCATION / np.maximum(mu, _TINY))
        below = np.minimum(np.maximum(-bet, 0.0), TRUNCATION / np.maximum(1.0 - mu, _TINY))
        open_ = self.decision == 0  # a decided run stops betting: its capital stays put
        return mu, q, np.where(open_, above, 0.0), np.where(open_, below, 0.0)

    def step(self, y: np.ndarray) -> None:
        mu, q, above, below = self.bets()
        self.log_above += np.log1p(above * (y - mu))
        self.log_below += np.log1p(-below * (y - mu))
        self.squares += (y - q) ** 2
        self.total += y
        self.asked += 1
        self._decide()

    def _decide(self) -> None:
        big_n, m, t = self.population, self.null, self.asked
        certain_above = self.total / big_n > m + TIE
        certain_below = (self.total + (big_n - t)) / big_n < m - TIE
        above = certain_above | (~certain_below & (self.log_above >= self.threshold))
        below = ~above & (certain_below | (self.log_below >= self.threshold))
        new = self.decision == 0
        self.decision[new & above] = 1
        self.decision[new & below] = -1
        self.decided_at[new & (above | below)] = t


def _check_values(ys: np.ndarray) -> None:
    bad = ~np.isfinite(ys) | (ys < 0.0) | (ys > 1.0)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"every value must be in [0, 1]; got {float(ys[where])!r} at index "
                         f"{where if len(where) > 1 else where[0]}")


@dataclass(kw_only=True)
class MeanTest:
    """One floor's sequential test: feed each question's value as it arrives (`observe`);
    `decided` says which side of the null the population's mean is proved to be on."""

    population: int  # N >= 1: every value there is
    null: float  # m in [0, 1]: the floor
    alpha: float  # in (0, 1): the chance of a wrong decision this test may spend
    _capital: _Capital = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _check_settings(self.population, self.null, self.alpha)
        self._capital = _Capital(1, self.population, float(self.null), float(self.alpha))

    def observe(self, y: float) -> None:
        """One more value, in [0, 1]; at most `population` of them. After a decision the
        values are still counted (`asked`, `mean`) and the decision stays."""
        if isinstance(y, bool) or not isinstance(y, (int, float, np.floating, np.integer)):
            raise ValueError(f"a value must be a number in [0, 1], got {y!r}")
        if not (math.isfinite(y) and 0.0 <= y <= 1.0):
            raise ValueError(f"a value must be in [0, 1], got {y!r}")
        if self._capital.asked >= self.population:
            raise ValueError(f"all {self.population} values were already observed")
        self._capital.step(np.array([float(y)]))

    @property
    def asked(self) -> int:
        return self._capital.asked

    @property
    def decided(self) -> Side | None:
        code = int(self._capital.decision[0])
        return "above" if code > 0 else "below" if code < 0 else None

    @property
    def decided_at(self) -> int | None:
        return int(self._capital.decided_at[0]) if self._capital.decision[0] else None

    @property
    def mean(self) -> float | None:
        return float(self._capital.total[0]) / self.asked if self.asked else None


def stopping_times(ys: np.ndarray, *, population: int, null: float, alpha: float,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The rule of `MeanTest` over many runs at once: `ys` is runs x T (T <= population),
    each row one run's values in the order observed. Returns, per run, how many values it
    took to decide (0 where undecided after T) and the decision (+1 above, -1 below, 0 none)."""
    _check_settings(population, null, alpha)
    values = np.asarray(ys, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"ys must be a runs x T matrix, got shape {values.shape}")
    if values.shape[1] > population:
        raise ValueError(f"{values.shape[1]} values per run exceed the population of "
                         f"{population}")
    _check_values(values)
    capital = _Capital(values.shape[0], population, float(null), float(alpha))
    for column in values.T:
        capital.step(column)
        if capital.decision.all():
            break
    return capital.decided_at.copy(), capital.decision.copy()


def grid_undecided(nulls: Sequence[float], values: Sequence[Sequence[float]], *,
                   population: int, alpha: float) -> list[float]:
    """The nulls whose test, fed its own value of each observation in order (`values[t][j]`
    for `nulls[j]`), decides neither side: one `MeanTest` per null, run side by side."""
    if len(values) > population:
        raise ValueError(f"{len(values)} values exceed the population of {population}")
    capital = _Capital(len(nulls), population, np.asarray(nulls, dtype=float), alpha)
    for row in values:
        ys = np.asarray(row, dtype=float)
        _check_values(ys)
        capital.step(ys)
    return [m for m, d in zip(nulls, capital.decision, strict=True) if d == 0]


def confidence_interval(ys: Sequence[float], *, population: int, alpha: float,
                        ) -> tuple[float, float]:
    """The confidence sequence at time len(ys), for reports: the means m that the test,
    run on these values in this order, has not rejected either way by now (on a grid of
    GRID steps, widened by one step outward, so never narrower than the exact set), within
    what the values seen make certain. At the whole population it is the mean itself."""
    _check_settings(population, 0.5, alpha)
    values = np.asarray(ys, dtype=float).reshape(-1)
    if values.size > population:
        raise ValueError(f"{values.size} values exceed the population of {population}")
    _check_values(values)
    total, t = float(values.sum()), values.size
    low, high = total / population, (total + population - t) / population  # certain
    grid = np.linspace(0.0, 1.0, GRID + 1)
    capital = _Capital(grid.size, population, grid, alpha)
    for y in values:
        capital.step(np.full(grid.size, y))
    kept = grid[capital.decision == 0]
    if kept.size == 0:  # only the certain bounds are left (the mean at N, a tie)
        return low, high
    step = 1.0 / GRID
    return max(low, float(kept.min()) - step), min(high, float(kept.max()) + step)
