"""Benchmark: how often each 95% interval a floor can be decided on holds the true value, and
how wide it is, at small n (3, 5, 10, 30): the shipped intervals beside the percentile
bootstrap they replace for means.

Why: under `ragate_ci = strict` a floor holds only when its interval's bound clears it, so an
interval that is too narrow at small n passes floors the system does not reach. The percentile
bootstrap of three answers of 1.0 is the point [1.00, 1.00] (issue 39, case 2). The goal: at
every n, in every cell, the interval holds the true value at least 95% of the time.

What it measures, each with the package's own functions (imported, not re-implemented):
- **betting** (`scoring/bounded_mean.mean_interval`): what a mean of values in [0, 1] is now
  decided on (citation accuracy, judged scores, pass^k);
- **bootstrap** (`scoring/stats.bootstrap_mean`): what means were decided on before;
- **Wilson** (`scoring/stats.wilson`): what proportions are decided on (it applies to 0/1
  values only), and, as a reference, Clopper-Pearson's exact interval (the binomial tail
  inverted by bisection here; ragate does not ship it).

Cells:
1. **0/1 values** (a judged verdict, a right or wrong citation), from Binomial(n, p): the
   intervals of a 0/1 sample depend only on its count of ones, so coverage is computed
   exactly, summed over the n + 1 counts. Families: *all-ones* (p = 0.90, 0.95, 0.99: most
   samples are all ones), *all-zeros* (p = 0.10, 0.05, 0.01) and *mixed* (p = 0.5, 0.7, 0.85),
   and, per n, the worst coverage over p = 0.005, 0.010, ..., 0.995.
2. **continuous values** (judged scores): `--runs` (2,000) seeded samples of n from Beta
   distributions: mean 0.5 (Beta(2, 2)), mean 0.8 (Beta(8, 2)), U-shaped (Beta(0.5, 0.5)),
   and near one (Beta(19, 1), mean 0.95, most scores above 0.9).
3. **widths** at all-ones data (the case the issue names), per n.

Run: `.venv/bin/python benchmarks/intervals.py` (`--quick`: 300 runs a continuous cell);
figures are printed and written to `benchmarks/out/intervals.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pytest_ragate.scoring.bounded_mean import mean_interval
from pytest_ragate.scoring.slices import binomial_cdf
from pytest_ragate.scoring.stats import bootstrap_mean, wilson

HERE = Path(__file__).resolve().parent
SIZES = (3, 5, 10, 30)
GOAL = 0.95
FAMILIES = {"all-ones": (0.90, 0.95, 0.99), "all-zeros": (0.10, 0.05, 0.01),
            "mixed": (0.5, 0.7, 0.85)}
BETAS = {"Beta(2,2) mean 0.50": (2.0, 2.0), "Beta(8,2) mean 0.80": (8.0, 2.0),
         "Beta(0.5,0.5) U-shaped": (0.5, 0.5), "Beta(19,1) mean 0.95": (19.0, 1.0)}
GRID = tuple(round(0.005 * i, 3) for i in range(1, 200))
Interval = Callable[[int, int], tuple[float, float]]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact binomial interval: each bound where the tail reaches (1 - level) / 2."""
    tail = (1 - level) / 2

    def solve(f: Callable[[float], float]) -> float:  # f rises in p from below 0 to above
        low, high = 0.0, 1.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if f(mid) < 0 else (low, mid)
        return (low + high) / 2

    low = 0.0 if k == 0 else solve(lambda p: (1 - binomial_cdf(k - 1, n, p)) - tail)
    high = 1.0 if k == n else solve(lambda p: tail - binomial_cdf(k, n, p))
    return low, high


def by_count(n: int) -> dict[str, list[tuple[float, float]]]:
    """Each method's interval for every count of ones 0..n of a 0/1 sample of n."""
    samples = [[1.0] * k + [0.0] * (n - k) for k in range(n + 1)]
    return {"betting": [mean_interval(s) for s in samples],
            "bootstrap": [bootstrap_mean(s) for s in samples],
            "Wilson": [wilson(k, n) for k in range(n + 1)],
            "Clopper-Pearson": [clopper_pearson(k, n) for k in range(n + 1)]}


def pmf(k: int, n: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def exact_coverage(intervals: Sequence[tuple[float, float]], n: int, p: float) -> float:
    """P(the interval holds p) over Binomial(n, p), summed exactly."""
    return math.fsum(pmf(k, n, p) for k, (low, high) in enumerate(intervals)
                     if low <= p <= high)


def binary_cells() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    cells, worst = [], []
    for n in SIZES:
        methods = by_count(n)
        for family, ps in FAMILIES.items():
            for p in ps:
                row: dict[str, object] = {"n": n, "family": family, "p": p}
                for name, intervals in methods.items():
                    row[name] = exact_coverage(intervals, n, p)
                    row[f"{name} width"] = math.fsum(
                        pmf(k, n, p) * (hi - lo) for k, (lo, hi) in enumerate(intervals))
                cells.append(row)
        low: dict[str, object] = {"n": n}
        for name, intervals in methods.items():
            coverage = [exact_coverage(intervals, n, p) for p in GRID]
            at = int(np.argmin(coverage))
            low[name] = coverage[at]
            low[f"{name} at p"] = GRID[at]
        worst.append(low)
    return cells, worst


def continuous_cells(runs: int) -> list[dict[str, object]]:
    cells = []
    rng = np.random.default_rng(20261202)
    for n in SIZES:
        for name, (a, b) in BETAS.items():
            truth = a / (a + b)
            held = {"betting": 0, "bootstrap": 0}
            width = {"betting": 0.0, "bootstrap": 0.0}
            for _ in range(runs):
                values = [float(v) for v in rng.beta(a, b, size=n)]
                for method, interval in (("betting", mean_interval(values)),
                                         ("bootstrap", bootstrap_mean(values))):
                    held[method] += interval[0] <= truth <= interval[1]
                    width[method] += interval[1] - interval[0]
            cells.append({"n": n, "distribution": name, "mean": truth,
                          **{m: held[m] / runs for m in held},
                          **{f"{m} width": width[m] / runs for m in width}})
    return cells


def ones_widths() -> list[dict[str, object]]:
    rows = []
    for n in SIZES:
        rows.append({"n": n, "betting": mean_interval([1.0] * n),
                     "bootstrap": bootstrap_mean([1.0] * n), "Wilson": wilson(n, n),
                     "Clopper-Pearson": clopper_pearson(n, n)})
    return rows


def fmt(interval: object) -> str:
    low, high = interval  # type: ignore[misc]
    return f"[{low:.3f}, {high:.3f}]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="samples a continuous cell")
    parser.add_argument("--quick", action="store_true", help="300 samples a continuous cell")
    parser.add_argument("--json", type=Path, default=HERE / "out" / "intervals.json")
    args = parser.parse_args(argv)
    runs = 300 if args.quick else args.runs
    started = time.perf_counter()
    binary, worst = binary_cells()
    continuous = continuous_cells(runs)
    widths = ones_widths()
    took = time.perf_counter() - started
    names = ("betting", "bootstrap", "Wilson", "Clopper-Pearson")
    print("0/1 values, Binomial(n, p): coverage (exact) and mean width of each 95% interval")
    print(f"{'n':>3} {'family':>10} {'p':>5} | " + " | ".join(f"{m:>21}" for m in names))
    for row in binary:
        print(f"{row['n']:>3} {row['family']:>10} {row['p']:>5} | " + " | ".join(
            f"{row[m]:>7.3f} (w {row[f'{m} width']:.3f})".rjust(21) for m in names))
    print("\nworst coverage over p = 0.005..0.995 (at p)")
    for row in worst:
        print(f"{row['n']:>3} | " + " | ".join(
            f"{row[m]:.3f} at {row[f'{m} at p']}".rjust(21) for m in names))
    print(f"\ncontinuous values, {runs} seeded samples a cell: coverage (mean width)")
    print(f"{'n':>3} {'distribution':>24} | {'betting':>17} | {'bootstrap':>17}")
    for row in continuous:
        print(f"{row['n']:>3} {row['distribution']:>24} | " + " | ".join(
            f"{row[m]:.3f} ({row[f'{m} width']:.3f})".rjust(17) for m in ("betting", "bootstrap")))
    print("\nall-ones data: each interval")
    for row in widths:
        print(f"{row['n']:>3} | " + " | ".join(f"{m} {fmt(row[m])}" for m in names))
    lowest = {m: min(float(r[m]) for r in (*binary, *worst, *continuous) if m in r)
              for m in names}
    goal = lowest["betting"] >= GOAL
    print(f"\ngoal (the betting interval's coverage >= {GOAL} in every cell and at every p, "
          f"n = {', '.join(map(str, SIZES))}): {'MET' if goal else 'MISSED'} · lowest coverage: "
          + ", ".join(f"{m} {v:.3f}" for m, v in lowest.items()) + f" · {took:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"), "runs": runs,
        "seconds": round(took, 1), "goal_met": goal, "binary": binary, "worst": worst,
        "continuous": continuous, "all_ones": widths}, indent=2) + "\n")
    return 0 if goal else 1


if __name__ == "__main__":
    sys.exit(main())
