"""One-sided confidence bounds on a paired change (this run minus its baseline) at a
non-inferiority margin (`[regression] max_drop`, decision/margins.py), and how many more
paired units would decide the check.

The clusters are those the regression check pairs (`pairing.discordant_clusters`,
`pairing.pair`): a question, or a whole conversation, so the two runs' answers to one
question (one conversation) move together, as in the check's paired bootstrap. Two cases,
one rule: the change's bounds are Δ ∓ t·se with Student's t (1 − alpha) quantile on g − 1
degrees of freedom over g clusters, and the check is non-inferior when the lower bound lies
above −margin (Wellek, "Testing Statistical Hypotheses of Equivalence and Noninferiority",
2nd ed. 2010, chapter 2: reject "worse by the margin or more"), worse when the upper bound
lies below it.

- Right-or-wrong units (`binary_bounds`): each cluster brings its units right → wrong
  (`worse`), wrong → right (`better`) and its units. se is the score test's standard error
  of a difference of paired proportions *at the margin* (Tango, "Equivalence test and
  confidence interval for the difference in proportions for the paired-sample design",
  Statistics in Medicine 17, 1998, 891-908; Nam, Biometrics 53, 1997): the discordant
  probabilities are re-estimated by maximum likelihood under change = −margin, and
  Var0 = (p̃_worse + p̃_better − margin²)/N over N units. The Wald variance at the observed
  change is not used: it shrinks with the drop it measures, and passed 6.15% of runs at the
  margin in the units cell of benchmarks/noninferiority.py (benchmarks/README.md). Units
  clustered in questions or conversations multiply Var0 by the design effect: the
  cluster-robust variance of the change (below) over the variance the same units would have
  were they independent, at least 1.
- Scores (a ratio per cluster, `(a, b, c, d)`: the baseline's numerator and denominator and
  this run's): the change Δ = Σc/Σd − Σa/Σb with the cluster-robust (linearised, "sandwich")
  variance of a ratio estimator (Cochran, "Sampling Techniques", 3rd ed. 1977, section 6.3):
  each cluster's residual z = (c − R1·d)/d̄ − (a − R0·b)/b̄ and Var(Δ) = Σz² / (g·(g − 1)).

More clusters that would decide (`more_needed`): with the observed change Δ and spread per
cluster σ = se·√g staying as they are, a bound clears −margin once t·σ/√G < |Δ + margin|,
so G = (t·σ / |Δ + margin|)² clusters decide and about G − g more would (no number does at
Δ = −margin).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring.stats import t_quantile

Ratios = tuple[float, float, float, float]  # baseline numerator, denominator; current's


@dataclass(frozen=True, kw_only=True)
class Discordant:
    """One cluster's right-or-wrong units: right → wrong, wrong → right, and all of them."""

    worse: int
    better: int
    units: int


@dataclass(frozen=True, kw_only=True)
class ChangeBounds:
    """The paired change over `clusters` clusters, its standard error `se` (for units: at
    the margin) and its one-sided (1 − alpha) lower and upper bounds, Δ ∓ t·se."""

    change: float
    se: float
    lower: float
    upper: float
    clusters: int
    t: float


def _bounds(change: float, se: float, clusters: int, alpha: float) -> ChangeBounds:
    t = t_quantile(clusters - 1, 1 - alpha)
    return ChangeBounds(change=change, se=se, lower=change - t * se, upper=change + t * se,
                        clusters=clusters, t=t)


def tango_variance(worse: int, better: int, units: int, margin: float) -> float:
    """Var0 of the change in paired proportions (better − worse)/units at change = −margin:
    the discordant probabilities' maximum-likelihood estimates under that constraint (the
    root of 2N·p² − B·p − worse·δ·(1 − δ) = 0 for p_worse, δ = −margin, p_better = p + δ)."""
    d = -margin
    rest = units - worse - better
    b = worse * (1 - 3 * d) + better * (1 - d) - 2 * rest * d
    p_worse = (b + math.sqrt(b * b + 8 * units * worse * d * (1 - d))) / (4 * units)
    p_better = p_worse + d
    return max(p_worse + p_better - d * d, 0.0) / units


def binary_bounds(clusters: Sequence[Discordant], margin: float, alpha: float,
                  ) -> ChangeBounds | None:
    """The change in a share of right units over `clusters`, bounded with Tango's variance at
    the margin times the clusters' design effect; None with fewer than two clusters or no
    unit."""
    units = sum(c.units for c in clusters)
    if len(clusters) < 2 or not units:
        return None
    worse, better = sum(c.worse for c in clusters), sum(c.better for c in clusters)
    change = (better - worse) / units
    independent = ((worse + better) / units - change ** 2) / units
    robust = _robust([(c.better - c.worse, c.units) for c in clusters], change)
    effect = max(1.0, robust / independent) if independent > 0 else 1.0
    se = math.sqrt(tango_variance(worse, better, units, margin) * effect)
    return _bounds(change, se, len(clusters), alpha)


def _robust(clusters: Sequence[tuple[float, float]], ratio: float) -> float:
    """The cluster-robust variance of a ratio Σx/Σn over clusters (x, n) at `ratio`."""
    g = len(clusters)
    n_bar = sum(n for _, n in clusters) / g
    return sum(((x - ratio * n) / n_bar) ** 2 for x, n in clusters) / (g * (g - 1))


def score_bounds(clusters: Sequence[Ratios], alpha: float) -> ChangeBounds | None:
    """The change of a ratio metric over `clusters` `(a, b, c, d)`, bounded with the
    cluster-robust variance of the difference of two ratio estimators; None with fewer than
    two clusters or a run with no unit."""
    g = len(clusters)
    sums = [sum(c[i] for c in clusters) for i in range(4)]
    if g < 2 or not sums[1] or not sums[3]:
        return None
    r0, r1 = sums[0] / sums[1], sums[2] / sums[3]
    b_bar, d_bar = sums[1] / g, sums[3] / g
    square = sum(((c[2] - r1 * c[3]) / d_bar - (c[0] - r0 * c[1]) / b_bar) ** 2
                 for c in clusters)
    return _bounds(r1 - r0, math.sqrt(square / (g * (g - 1))), g, alpha)


def more_needed(bounds: ChangeBounds, margin: float) -> int | None:
    """About how many more clusters would decide the check (bring a bound past −margin),
    were the change and its spread per cluster to stay as observed; None when the change
    sits on the margin (no number would), 0 when it is decided already."""
    gap = abs(bounds.change + margin)
    if gap == 0:
        return None
    needed = math.ceil((bounds.t * bounds.se * math.sqrt(bounds.clusters) / gap) ** 2)
    return max(needed - bounds.clusters, 0)
