"""95% intervals for gate figures (Wilson for proportions, with repeats at a design-effect n;
percentile bootstraps, which `intervals.py` keeps for means without a bound: a mean of values
in [0, 1] has the betting interval of `bounded_mean.py`), distribution-free bounds of a
quantile (order statistics: a latency floor's 95th percentile) and the paired tests of a run
against its baseline (exact McNemar, paired bootstrap).

A quantile's one-sided 95% upper bound is the order statistic X_(r) with the smallest r such
that P(Binomial(n, q) <= r - 1) >= 0.95: X_(r) falls below the true q-quantile only when r or
more of the n observations do, which has probability at most 5% (Conover, "Practical
Nonparametric Statistics", 3rd ed. 1999, section 3.2, confidence interval for a quantile). It
needs no assumption on the distribution beyond independent draws; when even the largest of
the n falls short (q^n > 5%: fewer than 59 answers for the 95th percentile) there is no bound,
and a floor on it cannot pass (`quantile_needs`). Its error rate: a bound below the true
quantile at most 5% of the time, whatever the latencies' distribution.

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
MCNEMAR = "McNemar (exact)"  # the paired tests' names, as a baseline check reports them
BOOTSTRAP = "paired bootstrap"


def clears(value: float, interval: tuple[float, float] | None, floor: float,
           strict: bool, upper: bool = False) -> bool:
    """The gate's one rule: a figure holds a floor when it reaches it, or, with
    `ragate_ci = strict`, when its 95% interval's lower bound does. An upper-bound floor
    (`{max = …}`, `upper`) holds when the figure, or strictly the interval's upper bound, is
    at most the bound."""
    if upper:
        return interval[1] <= floor if strict and interval is not None else value <= floor
    return interval[0] >= floor if strict and interval is not None else value >= floor


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials."""
    if n <= 0:
        raise ValueError("a Wilson interval needs n > 0")
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_n(k: float, n: int, clusters: Sequence[tuple[float, float]], repeats: int,
                ) -> float:
    """The effective n of a proportion whose units come in clusters (a question's units over
    all its repeats), for a Wilson interval at that n: n divided by the design effect.

    The design effect is the cluster-robust variance of the ratio estimator Σk/Σn
    (Σ(k_i − p·n_i)² / n², the linearised variance without a small-sample factor) over the
    binomial variance p(1−p)/n, but never below `repeats`: repeats of one question are at
    best as informative as one answer each, so the interval is never narrower than one
    repeat's at the same rate. At p = 0 or 1 the data say nothing of the spread and the
    design effect is `repeats`. Why Wilson with an effective n, and not a bootstrap: it keeps
    Wilson's good coverage near 0 and 1 (a bootstrap of an all-right run is the point [1, 1]),
    and with one unit per question and one repeat it is Wilson at n, today's interval.

    Worked case (tests/test_repeats.py): two questions over 10 repeats, one always right and
    one never: p = 10/20, Σ(k_i − p·n_i)² = 5² + 5² = 50, variance 50/400 = 0.125, binomial
    0.25/20 = 0.0125, design effect 10, effective n 2: the interval of two questions."""
    if n <= 0:
        raise ValueError("an effective n needs n > 0")
    p = k / n
    deff = float(max(1, repeats))
    if 0 < p < 1:
        robust = sum((ki - p * ni) ** 2 for ki, ni in clusters) / (n * n)
        deff = max(deff, robust / (p * (1 - p) / n))
    return n / deff


def wilson_clustered(k: float, n: int, clusters: Sequence[tuple[float, float]], repeats: int,
                     z: float = Z95) -> tuple[float, float]:
    """Wilson's interval at the clusters' effective n (`clustered_n`) and the pooled rate."""
    n_eff = clustered_n(k, n, clusters, repeats)
    return wilson(k / n * n_eff, n_eff, z)


def wilson_conversations(k: float, n: int, clusters: Sequence[tuple[float, float]],
                         repeats: int) -> tuple[float, float]:
    """A proportion over the turns of G conversations: Wilson at the clusters' effective n
    (`clustered_n`) with the two small-G corrections Cameron & Miller recommend for
    cluster-robust inference ("A Practitioner's Guide to Cluster-Robust Inference", J. Human
    Resources 50(2), 2015, sections VI.B-C): the variance scaled by G/(G-1) (CR1) and the
    critical value of Student's t with G-1 degrees of freedom instead of the normal's.
    `benchmarks/conversations.py` measured the need: without them, 20 conversations of 2-4
    correlated turns covered 0.914; with them 0.947 (0.945-0.959 over its cells)."""
    g = len(clusters)
    if g < 2:
        return wilson_clustered(k, n, clusters, repeats)
    n_eff = clustered_n(k, n, clusters, repeats) * (g - 1) / g
    return wilson(k / n * n_eff, n_eff, t_quantile(g - 1))


def t_quantile(df: int, p: float = 0.975) -> float:
    """Student's t `p` quantile (p > 1/2) on `df` degrees of freedom: exact for 1 and 2, else
    the Cornish-Fisher expansion around the normal's (Abramowitz & Stegun 26.7.5), within
    0.004 of the exact 0.975 quantile at 3 and 1e-4 from 5 on."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = Z95 if p == 0.975 else statistics.NormalDist().inv_cdf(p)
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z)
            / (92160 * df ** 4))


def bootstrap_clusters(clusters: Sequence[tuple[float, float]],
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95,
                       ) -> tuple[float, float]:
    """Percentile cluster bootstrap of a mean over clusters `(sum of values, count)`: whole
    questions are resampled with all their repeats, so the interval is as wide as the number
    of questions warrants, however many times each was asked. Seeded by the clusters."""
    if not clusters:
        raise ValueError("a bootstrap interval needs at least one cluster")
    clusters = sorted(clusters)
    rng = random.Random(hashlib.sha256(repr(clusters).encode()).digest())
    n = len(clusters)
    means = []
    for _ in range(resamples):
        drawn = rng.choices(clusters, k=n)
        means.append(sum(c[0] for c in drawn) / sum(c[1] for c in drawn))
    means.sort()
    alpha = (1 - level) / 2
    return (means[math.floor(alpha * (resamples - 1))],
            means[math.ceil((1 - alpha) * (resamples - 1))])


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


QUANTILE_LEVEL = 0.95  # the one-sided confidence of a quantile's bounds


def _binom_cdf(k: int, n: int, q: float) -> float:
    """P(Binomial(n, q) <= k), summed exactly term by term (n is a goldset's size)."""
    return math.fsum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(k + 1))


def point_quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile: X_(ceil(q·n)), the smallest value at least q of the
    values are at or below."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def upper_rank(n: int, q: float, level: float = QUANTILE_LEVEL) -> int | None:
    """The smallest r with P(Binomial(n, q) <= r - 1) >= level: X_(r) is a one-sided `level`
    upper bound of the q-quantile; None when even r = n is not (n too small)."""
    for r in range(max(1, math.ceil(q * n)), n + 1):
        if _binom_cdf(r - 1, n, q) >= level:
            return r
    return None


def lower_rank(n: int, q: float, level: float = QUANTILE_LEVEL) -> int | None:
    """The largest r with P(Binomial(n, q) >= r) >= level: X_(r) is a one-sided `level`
    lower bound of the q-quantile; None when even r = 1 is not."""
    for r in range(min(n, math.ceil(q * n)), 0, -1):
        if 1 - _binom_cdf(r - 1, n, q) >= level:
            return r
    return None


def quantile_needs(q: float, level: float = QUANTILE_LEVEL) -> int:
    """The fewest observations whose largest is a `level` upper bound of the q-quantile:
    the smallest n with 1 - q^n >= level (59 for the 95th percentile at 95%)."""
    return math.ceil(math.log(1 - level) / math.log(q)) if q > 0 else 1


def quantile_bounds(values: Sequence[float], q: float, level: float = QUANTILE_LEVEL,
                    ) -> tuple[float, float] | None:
    """One-sided `level` lower and upper bounds of the q-quantile (Conover's order
    statistics), or None when the n values are too few for an upper bound."""
    ordered = sorted(values)
    n = len(ordered)
    high = upper_rank(n, q, level) if n else None
    if high is None:
        return None
    low = lower_rank(n, q, level)
    return (ordered[low - 1] if low is not None else 0.0), ordered[high - 1]


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
