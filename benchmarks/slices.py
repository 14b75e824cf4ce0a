"""Benchmark: the chance of a false fail when one floor is applied to 20 slices of a key, with
Holm's correction, with Benjamini-Hochberg's and with none; and how often a slice that truly
misses the floor by 10 points is caught.

Why: a floor per slice (`[floors.slices.lang]`) tests every slice, so without a correction the
chance that some slice whose true value clears the floor fails by bad luck grows with the
number of slices. The rule (pytest_ragate/scoring/slices.py) corrects across the slices of a
key; the issue's goal is that with 20 slices whose true value clears the floor the chance of
ANY false fail stays at or below alpha (0.05).

What it runs: the rule's own functions, imported, not re-implemented. A slice is called
`misses` exactly when its adjusted shortfall p-value is at most alpha (`decide_slices`: a
slice that holds never has a small p-value), so each run draws the slices' counts, computes
`shortfall_p` per slice and `adjust` across them. The first CHECKED runs of every cell are
also run through `decide_slices` itself and must call the same slices `misses` (the benchmark
stops if not).

Cells, floor 0.85 (a proportion such as abstention accuracy), 20 slices, `--runs` (10,000)
seeded runs each:
1. validity: every slice's true rate at the floor (the hardest case for a correction: each
   slice's test is as likely to reject as its level allows) or a little above it (0.88), n per
   slice 20, 50 or 200 for every slice, or unequal (20 to 200, evenly spread); the share of
   runs with any slice called `misses`, under none, Holm and BH;
2. a mean floor (judged scores in [0, 1], the betting test): 20 slices of 20, 50 or 200
   values each from a Beta distribution of mean 0.85 (concentration 10);
3. power: 19 slices at the floor and one whose true rate is 0.75 (10 points below), n per slice
   20, 50, 100, 200: the share of runs in which that slice is called `misses`; and the same for
   a mean floor (Beta values, that slice's mean 0.75), n per slice 20, 50 and 200.

Run: `.venv/bin/python benchmarks/slices.py` (`--quick`: 1,000 runs a cell); figures are
printed and written to `benchmarks/out/slices.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.registry import Tally
from pytest_ragate.scoring.slices import adjust, decide_slices, shortfall_p
from pytest_ragate.scoring.stats import wilson

FLOOR = 0.85
SLICES = 20
CHECKED = 5  # runs a cell also decides with decide_slices, to tie the figures to the rule
SEED = 20261201
PROPORTION = Floor("abstention_accuracy", FLOOR)
MEAN = Floor("faithfulness", FLOOR)
KAPPA = 10.0  # the Beta concentration of the mean cell's values
CORRECTIONS = ("none", "holm", "bh")
UNEQUAL = tuple(round(20 + i * 180 / (SLICES - 1)) for i in range(SLICES))


def proportion_tally(k: int, n: int) -> Tally:
    return Tally(metric=PROPORTION.metric, k=k, n=n, questions=n)


@functools.cache
def proportion_p(k: int, n: int) -> float:
    p = shortfall_p(PROPORTION, proportion_tally(k, n))
    assert p is not None
    return p


def misses(p_values: Sequence[float], correction: str, alpha: float) -> list[bool]:
    """Which slices the rule calls `misses`: adjusted p at most alpha (none: the raw p)."""
    adjusted = list(p_values) if correction == "none" else adjust(p_values, correction)  # type: ignore[arg-type]
    return [a <= alpha for a in adjusted]


def check(floor: Floor, tallies: dict[str, Tally], p_values: Sequence[float], alpha: float,
          ) -> None:
    """decide_slices must call `misses` exactly the slices this benchmark counts."""
    for correction in ("holm", "bh"):
        decided = {f.value for f in decide_slices(floor, tallies, alpha=alpha,
                                                  correction=correction)  # type: ignore[arg-type]
                   if f.call == "misses"}
        counted = {name for name, miss in zip(tallies, misses(p_values, correction, alpha),
                                              strict=True) if miss}
        if decided != counted:
            raise SystemExit(f"the benchmark disagrees with decide_slices ({correction}): "
                             f"{sorted(decided)} against {sorted(counted)}")


def proportion_run(rng: np.random.Generator, rates: Sequence[float], ns: Sequence[int],
                   ) -> tuple[dict[str, Tally], list[float]]:
    ks = rng.binomial(ns, rates)
    tallies = {f"s{i:02d}": proportion_tally(int(k), n)
               for i, (k, n) in enumerate(zip(ks, ns, strict=True))}
    return tallies, [proportion_p(int(k), n) for k, n in zip(ks, ns, strict=True)]


def mean_run(rng: np.random.Generator, n: int, means: Sequence[float] = (FLOOR,) * SLICES,
             ) -> tuple[dict[str, Tally], list[float]]:
    tallies, ps = {}, []
    for i, mean in enumerate(means):
        a, b = mean * KAPPA, (1 - mean) * KAPPA
        values = tuple(float(v) for v in rng.beta(a, b, size=n))
        t = Tally(metric=MEAN.metric, k=sum(values), n=n, values=values, questions=n)
        tallies[f"s{i:02d}"] = t
        p = shortfall_p(MEAN, t)
        assert p is not None
        ps.append(p)
    return tallies, ps


Draw = Callable[[np.random.Generator], tuple[dict[str, Tally], list[float]]]


def cell(draw: Draw, floor: Floor, runs: int, alpha: float, seed: int, watched: int | None,
         ) -> dict[str, float]:
    """Per correction: the share of runs with any slice called `misses` (watched None), or
    the share in which slice `watched` is."""
    rng = np.random.default_rng(seed)
    hits = dict.fromkeys(CORRECTIONS, 0)
    for run in range(runs):
        tallies, ps = draw(rng)
        if run < CHECKED:
            check(floor, tallies, ps, alpha)
        for correction in CORRECTIONS:
            called = misses(ps, correction, alpha)
            hits[correction] += called[watched] if watched is not None else any(called)
    return {c: hits[c] / runs for c in CORRECTIONS}


def fmt(share: float, runs: int) -> str:
    lo, hi = wilson(share * runs, runs)
    return f"{share:.4f} [{lo:.4f}, {hi:.4f}]"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="1,000 runs a cell")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--json", type=Path,
                        default=Path(__file__).parent / "out" / "slices.json")
    args = parser.parse_args(argv)
    runs, alpha = (1_000 if args.quick else args.runs), args.alpha
    started = time.perf_counter()
    rows: list[dict[str, object]] = []
    sizes: list[tuple[str, tuple[int, ...]]] = [
        (f"{n} each", (n,) * SLICES) for n in (20, 50, 200)] + [("20-200", UNEQUAL)]
    seed = SEED
    print(f"P(any false fail), {SLICES} slices, floor {FLOOR}, alpha {alpha}, {runs} runs a cell"
          " (share [95% Wilson interval])")
    print(f"{'true rate':>10} {'n per slice':>12} | {'none':>24} | {'Holm':>24} | {'BH':>24}")
    for rate in (FLOOR, 0.88):
        for label, ns in sizes:
            seed += 1
            shares = cell(lambda rng, ns=ns, rate=rate: proportion_run(rng, [rate] * SLICES, ns),
                          PROPORTION, runs, alpha, seed, None)
            rows.append({"table": "validity", "metric": "proportion", "true": rate,
                         "n": label, **shares})
            print(f"{rate:>10.2f} {label:>12} | "
                  + " | ".join(f"{fmt(shares[c], runs):>24}" for c in CORRECTIONS))
    for n in (20, 50, 200):
        seed += 1
        shares = cell(lambda rng, n=n: mean_run(rng, n), MEAN, runs, alpha, seed, None)
        rows.append({"table": "validity", "metric": "mean (Beta)", "true": FLOOR,
                     "n": f"{n} each", **shares})
        print(f"{'mean 0.85':>10} {f'{n} each':>12} | "
              + " | ".join(f"{fmt(shares[c], runs):>24}" for c in CORRECTIONS))
    print(f"\nPower: one slice of true rate {FLOOR - 0.10:.2f} among {SLICES - 1} at the floor:"
          " the share of runs it is called `misses`")
    print(f"{'n per slice':>12} | {'none':>24} | {'Holm':>24} | {'BH':>24}")
    for n in (20, 50, 100, 200):
        seed += 1
        rates = [FLOOR - 0.10] + [FLOOR] * (SLICES - 1)
        shares = cell(lambda rng, n=n, rates=rates: proportion_run(rng, rates, [n] * SLICES),
                      PROPORTION, runs, alpha, seed, 0)
        rows.append({"table": "power", "metric": "proportion", "true": FLOOR - 0.10, "n": n,
                     **shares})
        print(f"{n:>12} | " + " | ".join(f"{fmt(shares[c], runs):>24}" for c in CORRECTIONS))
    print(f"\nPower of a mean floor (betting test): one slice of true mean {FLOOR - 0.10:.2f} "
          f"(Beta, concentration {KAPPA:g}) among {SLICES - 1} at the floor")
    print(f"{'n per slice':>12} | {'none':>24} | {'Holm':>24} | {'BH':>24}")
    for n in (20, 50, 200):
        seed += 1
        means = [FLOOR - 0.10] + [FLOOR] * (SLICES - 1)
        shares = cell(lambda rng, n=n, means=means: mean_run(rng, n, means), MEAN, runs, alpha,
                      seed, 0)
        rows.append({"table": "power", "metric": "mean (Beta)", "true": FLOOR - 0.10, "n": n,
                     **shares})
        print(f"{n:>12} | " + " | ".join(f"{fmt(shares[c], runs):>24}" for c in CORRECTIONS))
    took = time.perf_counter() - started
    goal = all(float(r[c]) <= alpha for r in rows if r["table"] == "validity"  # type: ignore[arg-type]
               for c in ("holm", "bh"))
    print(f"\ngoal (P(any false fail) <= {alpha} with Holm and BH in every validity cell): "
          f"{'met' if goal else 'MISSED'} · {took:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="minutes"), "runs": runs,
        "alpha": alpha, "floor": FLOOR, "slices": SLICES, "seconds": round(took, 1),
        "goal_met": goal, "rows": rows}, indent=2) + "\n")
    return 0 if goal else 1


if __name__ == "__main__":
    sys.exit(main())
