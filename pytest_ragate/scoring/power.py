"""How many questions a floor needs, and what a floor or a regression check over n can tell
apart (`ragate power`).

The figures use the gate's own rules with exact binomial arithmetic, not a normal
approximation of them. A proportion floor over n units passes when k of them are right and
k/n reaches the floor (`ragate_ci = point`), or when the Wilson 95% lower bound of k/n does
(`strict`). So the chance it passes, if the true rate is p, is P(Binomial(n, p) >= k_min). A
regression check fails on a significant drop: an exact two-sided McNemar test over the
discordant pairs. Power is the chance of passing (a floor) or of detecting the drop (a check);
80% is the usual target.

Because k is whole, the chance of passing does not rise smoothly with n (a floor of 0.80 over
10 needs 8 right, over 11 needs 9, and one question right of one passes it): so
`questions_needed` gives the n from which on the target is reached, not the first n that
happens to reach it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.stats import Z95, clears, mcnemar_exact, wilson

POWER = 0.80
MAX_QUESTIONS = 20_000  # the largest n `questions_needed` looks at
WINDOW = 200  # how far past its answer `questions_needed` checks that the target holds


def passes(k: int, n: int, floor: float, strict: bool) -> bool:
    """The gate's rule (`stats.clears`) for a proportion floor with k of n right."""
    return n > 0 and clears(k / n, wilson(k, n), floor, strict)


def smallest_passing(n: int, floor: float, strict: bool) -> int | None:
    """The fewest right of n that pass the floor, or None when even n of n does not."""
    if not passes(n, n, floor, strict):
        return None
    lo, hi = 0, n  # passing is monotone in k: bisect for the first k that passes
    while lo < hi:
        mid = (lo + hi) // 2
        if passes(mid, n, floor, strict):
            hi = mid
        else:
            lo = mid + 1
    return lo


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) >= k), summed in log space (n in the thousands stays exact enough)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return binomial_sum(range(k, n + 1), n, p)


def binomial_sum(ks: range, n: int, p: float) -> float:
    """P(Binomial(n, p) falls in `ks`) for 0 < p < 1, summed in log space."""
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p) for i in ks]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))


def pass_probability(p: float, n: int, floor: float, strict: bool) -> float:
    """The chance that a proportion floor over n units passes when the true rate is p."""
    k = smallest_passing(n, floor, strict)
    return 0.0 if k is None else binomial_tail(k, n, p)


def passing_rate(n: int, floor: float, strict: bool, power: float = POWER,
                 min_n: int = 0) -> float | None:
    """The true rate at which a floor over n units passes with chance `power`; None when no
    rate does (the floor cannot be reached with n units, or n is under `ragate_min_n`,
    which refuses the floor whatever its value)."""
    if n < min_n or smallest_passing(n, floor, strict) is None:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(60):  # pass_probability rises with p
        mid = (lo + hi) / 2
        if pass_probability(mid, n, floor, strict) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def questions_needed(floor: float, expect: float, strict: bool, power: float = POWER,
                     limit: int = MAX_QUESTIONS, min_n: int = 0) -> int | None:
    """The smallest n from which on a floor passes with chance `power` when the true rate
    is `expect` (checked up to twice that n, and at least WINDOW beyond it: the sawtooth
    narrows as n grows), and never under `min_n` (`ragate_min_n` refuses a floor over
    fewer); None when no n up to `limit` does (an expected rate at or below the floor never
    will)."""
    found = _needed(floor, expect, strict, power, limit)
    return None if found is None else max(found, min_n)


def _needed(floor: float, expect: float, strict: bool, power: float, limit: int) -> int | None:
    if expect <= floor:
        return None

    def enough(n: int) -> bool:
        return pass_probability(expect, n, floor, strict) >= power

    n = 1
    while n <= limit:
        while n <= limit and not enough(n):
            n += 1
        short = next((m for m in range(n + 1, max(2 * n, n + WINDOW) + 1) if not enough(m)),
                     None)
        if short is None:
            return n if n <= limit else None
        n = short + 1
    return None


@dataclass(frozen=True, kw_only=True)
class Detectable:
    """The smallest drop a McNemar check over `pairs` paired units would call significant
    with chance `power`, given that a share `discordant` of the pairs changes outcome."""

    pairs: int
    discordant: float
    drop: float | None  # None: no drop is detectable this often with these pairs
    power: float


def detectable_drop(pairs: int, discordant: float, alpha: float = 0.05,
                    power: float = POWER) -> Detectable:
    """A drop δ in the proportion right means, among the m discordant pairs, a share
    q = 1/2 + δ / (2·discordant) went right→wrong. The check detects it when the
    right→wrong count w makes McNemar's p < alpha with w > m − w."""
    m = round(pairs * discordant)
    undetectable = Detectable(pairs=pairs, discordant=discordant, drop=None, power=power)
    if m == 0 or mcnemar_exact(m, 0) >= alpha:
        return undetectable
    lo, hi = m // 2 + 1, m  # McNemar's p falls as w grows past m/2: bisect for the first w
    while lo < hi:
        mid = (lo + hi) // 2
        if mcnemar_exact(mid, m - mid) < alpha:
            hi = mid
        else:
            lo = mid + 1
    critical = lo
    share = m / pairs  # the discordance the pairs can have, in whole pairs

    def detection(drop: float) -> float:
        return binomial_tail(critical, m, 0.5 + drop / (2 * share))

    if detection(share) < power:
        return undetectable
    lo, hi = 0.0, share
    for _ in range(60):
        mid = (lo + hi) / 2
        if detection(mid) >= power:
            hi = mid
        else:
            lo = mid
    return Detectable(pairs=pairs, discordant=discordant, drop=hi, power=power)


@dataclass(frozen=True, kw_only=True)
class PassesAt:
    """The true value at which a floor over this n passes with chance `power`."""

    value: float
    approximate: bool  # a mean's figure: normal approximation with the observed spread

    def __str__(self) -> str:
        return f"{'≈' if self.approximate else ''}{self.value:.2f}"


def passes_at(aggregate: str, n: int, values: Sequence[float], floor: float, strict: bool,
              power: float = POWER) -> PassesAt | None:
    """What a floor over this n can tell apart. Proportions: exact, from n alone. Means
    (citation accuracy, judged scores): the normal approximation floor + (z·[strict] +
    z_power)·sd/√n with the sample's own standard deviation; None with fewer than 2 values
    or no spread, or when no rate passes."""
    if aggregate == "proportion":
        rate = passing_rate(n, floor, strict, power) if n else None
        return None if rate is None else PassesAt(value=rate, approximate=False)
    if len(values) < 2:
        return None
    spread = statistics.stdev(values)
    if spread == 0:
        return None
    z_power = statistics.NormalDist().inv_cdf(power)
    value = floor + ((Z95 if strict else 0.0) + z_power) * spread / math.sqrt(len(values))
    return PassesAt(value=value, approximate=True) if value <= 1.0 else None


def needed_for_mean(values: Sequence[float], floor: float, strict: bool,
                    power: float = POWER, min_n: int = 0) -> int | None:
    """The n at which a mean floor passes with chance `power` if the true mean and spread
    are this sample's (normal approximation), never under `min_n`; None when the mean does
    not exceed the floor or the sample has no spread."""
    if len(values) < 2:
        return None
    mean, spread = statistics.fmean(values), statistics.stdev(values)
    if mean <= floor or spread == 0:
        return None
    z = (Z95 if strict else 0.0) + statistics.NormalDist().inv_cdf(power)
    return max(2, min_n, math.ceil((z * spread / (mean - floor)) ** 2))
