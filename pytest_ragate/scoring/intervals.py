"""Which 95% interval a figure has, and what reports call it: one choice per tally, made
here (`interval`, `method`), that the floors (`figures.interval_of`), the slices, the reports
and `ragate suggest` all read.

- a proportion (k of n units): Wilson; with repeats, Wilson at the design-effect n
  (`stats.wilson_clustered`: questions are the unit of sampling);
- a mean of values in [0, 1] (citation accuracy, judged scores, pass^k): the betting
  interval (`bounded_mean.mean_interval`, Waudby-Smith & Ramdas 2023), valid at every n and
  never a point; with repeats, over each question's own mean (the question is the unit);
- a mean that is not a share (the bill's dollars: no bound, so no interval is valid at
  every n): the percentile bootstrap, over questions as clusters with repeats;
- a latency quantile: Conover's distribution-free order-statistic bounds (`stats`).

With conversations (issue 37), the conversation is the cluster instead of the question: its
turns are not independent answers (a system that loses the thread fails every later turn), so
the same cluster-robust intervals run over conversations (a proportion's Wilson interval with
the small-G corrections of `stats.wilson_conversations`) (Cameron & Miller 2015, "A
Practitioner's Guide to Cluster-Robust Inference", J. Human Resources 50(2); the cluster
bootstrap: Field & Welsh 2007, JRSS B 69(3)); a mean's betting interval then runs over each
conversation's own mean. `benchmarks/conversations.py` measures their coverage against the
naive per-turn interval at 20, 50 and 200 conversations.

Why: a percentile bootstrap of three answers of 1.0 is the point [1.00, 1.00], which holds
any floor under `ragate_ci = strict` (issue 39); `benchmarks/intervals.py` measures each
interval's coverage and width at n = 3, 5, 10 and 30.
"""

from __future__ import annotations

from pytest_ragate.scoring.registry import METRICS, Tally, latency_quantile
from pytest_ragate.scoring.stats import (
    bootstrap_clusters,
    bootstrap_mean,
    quantile_bounds,
    wilson,
    wilson_clustered,
    wilson_conversations,
)

CLUSTERS = ", questions as clusters"
CONVERSATIONS = ", conversations as clusters"


def _bounded_values(t: Tally) -> list[float] | None:
    """The values a mean's betting interval runs over: each question's own mean with
    repeats; None when the mean is not of shares in [0, 1]."""
    values = [s / c for s, c in t.clusters if c] if t.clusters else list(t.values)
    if not METRICS[t.metric].share or not values or not all(0.0 <= v <= 1.0 for v in values):
        return None
    return values


def interval(t: Tally) -> tuple[float, float] | None:
    """The tally's 95% interval (module docstring); None when nothing was counted, or for a
    quantile over too few values to bound it."""
    if not t.n:
        return None
    aggregate = METRICS[t.metric].aggregate
    if aggregate == "quantile":
        return quantile_bounds(t.values, latency_quantile(t.metric))
    if aggregate == "proportion":
        if t.clusters and t.by == "conversations":
            return wilson_conversations(t.k, t.n, t.clusters, t.repeats)
        return wilson_clustered(t.k, t.n, t.clusters, t.repeats) if t.clusters else wilson(
            t.k, t.n)
    values = _bounded_values(t)
    if values is not None:
        from pytest_ragate.scoring.bounded_mean import mean_interval

        return mean_interval(values)
    return bootstrap_clusters(t.clusters) if t.clusters else bootstrap_mean(t.values)


def method(t: Tally) -> str:
    """What reports call the tally's interval: `Wilson`, `betting, questions as clusters`."""
    aggregate = METRICS[t.metric].aggregate
    if aggregate == "quantile":
        return "order statistics, one-sided bounds"
    if aggregate == "proportion":
        name = "Wilson"
    else:
        name = "betting" if _bounded_values(t) is not None else "bootstrap"
    return name + ((CONVERSATIONS if t.by == "conversations" else CLUSTERS) if t.clusters
                   else "")
