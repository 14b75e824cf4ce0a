"""Benchmark: how often a baseline check passes at and around a non-inferiority margin, the
`[regression] max_drop` rule against today's "fail only on a significant drop".

Why: today's check fails only on a drop it can call significant, so a drop the questions are
too few to detect passes, however large; with a margin m the check should pass (be called
non-inferior) at most alpha of the time when the system is truly worse by m. Both rules are
run here on the shipped code (`scoring/noninferiority.py`, `decision/margins.margin_call`,
`scoring/stats.mcnemar_exact`, `scoring/stats.paired_bootstrap`'s rule stays out: see the
scores cell), never re-implemented.

What it does, per scenario and true change Δ in {-2m, -m, -m/2, 0, +m}, with `--runs`
(2,000) seeded runs:

- *units*: N = 400 questions, one right-or-wrong unit each, baseline right 85% of the time; a
  question's two answers disagree 12% of the time (the discordance), right → wrong with
  probability (0.12 − Δ)/2 and wrong → right with (0.12 + Δ)/2. Margin 0.05.
- *conversations*: 100 conversations of 4 turns; each conversation draws its own
  right → wrong and wrong → right chances from Beta distributions (concentration 2) of those
  means, so its turns move together (the design effect the rule multiplies in). Margin 0.05.
- *scores*: N = 300 judged scores of 0.5 in the baseline that move by -0.5 or +0.5 with
  probability 0.3 in all, shifted so the mean change is Δ (the cluster-robust bound of
  `score_bounds`). Margin 0.05. Today's rule here is the paired bootstrap (4,000 resamples,
  slow): `--runs` / 10 runs for it, say the column.

A run passes the new rule when it is non-inferior (inconclusive fails: the default); today's
rule passes unless McNemar's exact test (the bootstrap for scores) calls a drop significant at
alpha. Printed per cell: the share of runs that pass under each rule, and under the new rule
the shares called worse and inconclusive; the pass rate at Δ = -m must be at most alpha (its
Monte Carlo standard error beside it). Figures are written to
`benchmarks/out/noninferiority.json`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_ragate.decision.margins import MarginCall, margin_call  # noqa: E402
from pytest_ragate.scoring.noninferiority import (  # noqa: E402
    ChangeBounds,
    Discordant,
    binary_bounds,
    score_bounds,
)
from pytest_ragate.scoring.stats import mcnemar_exact, paired_bootstrap  # noqa: E402

ALPHA = 0.05
STEPS = (-2.0, -1.0, -0.5, 0.0, 1.0)  # the true change, in margins
DISCORDANCE = 0.12
Run = tuple[MarginCall, bool]  # the new rule's call, and whether today's rule passes


def units_run(rng: random.Random, change: float, margin: float) -> Run:
    """400 questions of one unit: the new rule's call and today's McNemar verdict."""
    worse_p, better_p = (DISCORDANCE - change) / 2, (DISCORDANCE + change) / 2
    clusters, worse, better = [], 0, 0
    for _ in range(400):
        u = rng.random()
        w, b = int(u < worse_p), int(worse_p <= u < worse_p + better_p)
        worse, better = worse + w, better + b
        clusters.append(Discordant(worse=w, better=b, units=1))
    return _calls(binary_bounds(clusters, margin, ALPHA), margin, worse, better)


def conversations_run(rng: random.Random, change: float, margin: float) -> Run:
    """100 conversations of 4 turns whose chances to move are the conversation's own."""
    worse_p, better_p = (DISCORDANCE - change) / 2, (DISCORDANCE + change) / 2
    clusters, worse, better = [], 0, 0
    for _ in range(100):
        cw = rng.betavariate(2 * worse_p, 2 * (1 - worse_p)) if worse_p > 0 else 0.0
        cb = rng.betavariate(2 * better_p, 2 * (1 - better_p)) if better_p > 0 else 0.0
        w = b = 0
        for _ in range(4):
            u = rng.random()
            # the two chances share one draw: at most one of right → wrong, wrong → right
            w += u < cw / max(1.0, cw + cb)
            b += cw / max(1.0, cw + cb) <= u < (cw + cb) / max(1.0, cw + cb)
        worse, better = worse + w, better + b
        clusters.append(Discordant(worse=w, better=b, units=4))
    return _calls(binary_bounds(clusters, margin, ALPHA), margin, worse, better)


def _calls(bounds: ChangeBounds | None, margin: float, worse: int, better: int) -> Run:
    today = not (worse > better and mcnemar_exact(worse, better) < ALPHA)
    return margin_call(bounds, margin), today


def scores_run(rng: random.Random, change: float, margin: float, today: bool) -> Run:
    """300 scores of 0.5 moving by ±0.5: the new rule's call, and (when `today`) the paired
    bootstrap's verdict (True when not asked)."""
    up, down = (0.3 + 2 * change) / 2, (0.3 - 2 * change) / 2
    pairs = []
    for _ in range(300):
        u = rng.random()
        pairs.append((0.5, 1.0, 1.0 if u < up else 0.0 if u < up + down else 0.5, 1.0))
    call = margin_call(score_bounds(pairs, ALPHA), margin)
    if not today:
        return call, True
    observed, p = paired_bootstrap(pairs)
    return call, not (observed < 0 and p < ALPHA)


def cell(simulate: Callable[[random.Random], Run], runs: int, seed: int) -> dict[str, float]:
    """The shares of `runs` seeded runs by call, and today's pass rate."""
    rng = random.Random(seed)
    found = [simulate(rng) for _ in range(runs)]
    share = {call: sum(c == call for c, _ in found) / runs
             for call in ("non-inferior", "worse", "inconclusive")}
    return {"passes": share["non-inferior"], "worse": share["worse"],
            "inconclusive": share["inconclusive"],
            "today_passes": sum(t for _, t in found) / runs}


def scenario(name: str, margin: float, runs: int, today_runs: int) -> list[dict[str, object]]:
    """Every step of one scenario, with today's rule over `today_runs` of its runs."""
    rows: list[dict[str, object]] = []
    for i, step in enumerate(STEPS):
        change = step * margin
        if name == "scores":
            new = cell(lambda r, c=change: scores_run(r, c, margin, False), runs, 1000 + i)
            old = cell(lambda r, c=change: scores_run(r, c, margin, True), today_runs, 2000 + i)
            new["today_passes"], today_n = old["today_passes"], today_runs
        else:
            simulate = units_run if name == "units" else conversations_run
            new = cell(lambda r, c=change, s=simulate: s(r, c, margin), runs, 1000 + i)
            today_n = runs
        rows.append({"scenario": name, "margin": margin, "change": change, "step": step,
                     "runs": runs, "today_runs": today_n, **new})
    return rows


def table(rows: Sequence[dict[str, object]]) -> str:
    """The printed table, one line per cell."""
    lines = [f"{'scenario':<14}{'true change':>16}{'new: passes':>13}{'worse':>8}"
             f"{'undecided':>11}{'today: passes':>15}",
             "-" * 77]
    for row in rows:
        step = float(row["step"])  # type: ignore[arg-type]
        label = {-2.0: "-2m", -1.0: "-m", -0.5: "-m/2", 0.0: "0", 1.0: "+m"}[step]
        change = f"{label} ({float(row['change']):+.3f})"  # type: ignore[arg-type]
        lines.append(f"{row['scenario']:<14}{change:>16}"
                     f"{row['passes']:>13.3f}{row['worse']:>8.3f}{row['inconclusive']:>11.3f}"
                     f"{row['today_passes']:>15.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--quick", action="store_true", help="500 runs per cell")
    parser.add_argument("--json", type=Path, default=HERE / "out" / "noninferiority.json")
    args = parser.parse_args(argv)
    runs = 500 if args.quick else args.runs
    started = time.perf_counter()
    rows = [*scenario("units", 0.05, runs, runs),
            *scenario("conversations", 0.05, runs, runs),
            *scenario("scores", 0.05, runs, max(runs // 10, 50))]
    print(table(rows))
    at_margin = [r for r in rows if r["step"] == -1.0]
    se = math.sqrt(ALPHA * (1 - ALPHA) / runs)
    worst = max(float(r["passes"]) for r in at_margin)  # type: ignore[arg-type]
    held = worst <= ALPHA + 2 * se
    print(f"\nat the margin (true change -m) the new rule passes at most {worst:.3f} of runs "
          f"(alpha {ALPHA}, Monte Carlo s.e. {se:.4f} at alpha): "
          f"{'within' if held else 'OVER'} alpha; {runs} runs per cell (today's rule on "
          f"scores: {max(runs // 10, 50)}), {time.perf_counter() - started:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"alpha": ALPHA, "runs": runs, "cells": rows}, indent=1))
    return 0 if held else 1


if __name__ == "__main__":
    sys.exit(main())
