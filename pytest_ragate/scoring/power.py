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
from dataclasses import dataclass

from pytest_ragate.scoring.stats import mcnemar_exact, wilson

POWER = 0.80
MAX_QUESTIONS = 20_000  # the largest n `questions_needed` looks at
WINDOW = 200  # how far past its answer `questions_needed` checks that the target holds


def passes(k: int, n: int, floor: float, strict: bool) -> bool:
    """The gate's rule for a proportion floor: k of n right."""
    if n == 0:
        return False
    return wilson(k, n)[0] >= floor if strict else k / n >= floor


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
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
            + i * math.log(p) + (n - i) * math.log1p(-p) for i in range(k, n + 1)]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))


def pass_probability(p: float, n: int, floor: float, strict: bool) -> float:
    """The chance that a proportion floor over n units passes when the true rate is p."""
    k = smallest_passing(n, floor, strict)
    return 0.0 if k is None else binomial_tail(k, n, p)


def passing_rate(n: int, floor: float, strict: bool, power: float = POWER) -> float | None:
    """The true rate at which a floor over n units passes with chance `power`; None when no
    rate does (the floor cannot be reached with n units)."""
    if smallest_passing(n, floor, strict) is None:
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
                     limit: int = MAX_QUESTIONS) -> int | None:
    """The smallest n from which on a floor passes with chance `power` when the true rate
    is `expect` (checked up to twice that n, and at least WINDOW beyond it: the sawtooth
    narrows as n grows); None when no
    n up to `limit` does (an expected rate at or below the floor never will)."""
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


@dataclass(frozen=True)
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
    if m == 0:
        return Detectable(pairs, discordant, None, power)
    critical = next((w for w in range(m // 2 + 1, m + 1)
                     if mcnemar_exact(w, m - w) < alpha), None)
    if critical is None:
        return Detectable(pairs, discordant, None, power)
    share = m / pairs  # the discordance the pairs can have, in whole pairs

    def detection(drop: float) -> float:
        return binomial_tail(critical, m, 0.5 + drop / (2 * share))

    if detection(share) < power:
        return Detectable(pairs, discordant, None, power)
    lo, hi = 0.0, share
    for _ in range(60):
        mid = (lo + hi) / 2
        if detection(mid) >= power:
            hi = mid
        else:
            lo = mid
    return Detectable(pairs, discordant, hi, power)
