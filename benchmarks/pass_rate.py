"""Benchmark: the chance that `[floors.question] pass_rate = 0.8` passes while some question's
true pass rate is below 0.8 (a false pass), strict and point, and how often it passes when
every question clears it (power).

Why: the floor holds only when every question is shown right in at least 80% of its repeats
(scoring/pass_rate.py: exact one-sided binomial test per question, Holm across the goldset's
questions, alpha 0.05). Its claim is that in strict mode the family-wise false pass rate is at
most alpha whatever the questions' rates; point mode (a question holds when its observed
share reaches the rate) makes no such claim, and this shows by how much it misses it.

What it runs: the rule's own functions. A question holds (strict) exactly when its
Holm-adjusted p-value (`slices.holm` over `slices.proportion_shortfall`) is at most alpha; the
first CHECKED runs of every cell also go through `pass_rate.question_rates` itself and must
agree (the benchmark stops if not).

Cells, 20 questions at the repeats the rate needs over them (`needed_repeats(0.8, 20)`, 27),
at 50 and at 100 (a goldset's most), `--runs` (10,000) seeded runs each:
1. false pass: 19 questions always right and one at 0.80 (the hardest case: the other 19
   pass Holm's first steps, the last is tested at alpha itself), or at 0.75 or 0.70; and every
   question at 0.80;
2. power: every question at 0.95, 0.98 or 1.00.

Run: `.venv/bin/python benchmarks/pass_rate.py` (`--quick`: 1,000 runs a cell); figures are
printed and written to `benchmarks/out/pass_rate.json`.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pytest_ragate.scoring.pass_rate import ALPHA, MAX_REPEATS, needed_repeats, question_rates
from pytest_ragate.scoring.slices import holm, proportion_shortfall

RATE = 0.8
QUESTIONS = 20
CHECKED = 50  # runs of each cell also decided by question_rates itself
SEED = 48


@functools.cache
def _p(right: int, total: int) -> float:
    return proportion_shortfall(right, total, RATE, upper=True)


def passes(counts: Sequence[int], repeats: int, strict: bool) -> bool:
    """The floor's rule over one run's right counts: every question holds."""
    if not strict:
        return all(c / repeats >= RATE for c in counts)
    return all(adj <= ALPHA for adj in holm([_p(c, repeats) for c in counts]))


def cell(rates: Sequence[float], repeats: int, runs: int, rng: np.random.Generator,
         ) -> dict[str, float]:
    """The share of runs the floor passes, strict and point, over questions of `rates`."""
    passed = {"strict": 0, "point": 0}
    drawn = rng.binomial(repeats, rates, size=(runs, len(rates)))
    for run in range(runs):
        counts = [int(c) for c in drawn[run]]
        for mode in passed:
            held = passes(counts, repeats, mode == "strict")
            if run < CHECKED:
                rule = question_rates({f"q{i}": (c, repeats) for i, c in enumerate(counts)},
                                      RATE, strict=mode == "strict")
                if all(r.held for r in rule) != held:
                    sys.exit(f"the benchmark's rule disagrees with question_rates: {counts}")
            passed[mode] += held
    return {mode: n / runs for mode, n in passed.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Run every cell, print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="1,000 runs a cell")
    parser.add_argument("--json", type=Path,
                        default=Path(__file__).parent / "out" / "pass_rate.json")
    args = parser.parse_args(argv)
    runs = 1_000 if args.quick else args.runs
    need = needed_repeats(RATE, QUESTIONS)
    assert need is not None
    rng = np.random.default_rng(SEED)
    cells = {
        "false pass: 19 at 1.00, one at 0.80": [1.0] * 19 + [0.80],
        "false pass: 19 at 1.00, one at 0.75": [1.0] * 19 + [0.75],
        "false pass: 19 at 1.00, one at 0.70": [1.0] * 19 + [0.70],
        "false pass: all 20 at 0.80": [0.80] * 20,
        "power: all 20 at 0.95": [0.95] * 20,
        "power: all 20 at 0.98": [0.98] * 20,
        "power: all 20 at 1.00": [1.0] * 20,
    }
    found = {repeats: {name: cell(rates, repeats, runs, rng) for name, rates in cells.items()}
             for repeats in (need, 50, MAX_REPEATS)}
    print(f"pass_rate = {RATE}, {QUESTIONS} questions, alpha {ALPHA}, {runs} runs a cell "
          f"(seed {SEED}): P(floor passes)")
    for repeats, shares_of in found.items():
        print(f"\n{repeats} repeats{' (the fewest that decide it)' * (repeats == need)}")
        print(f"{'cell':<40} {'strict':>8} {'point':>8}")
        for name, shares in shares_of.items():
            print(f"{name:<40} {shares['strict']:>8.4f} {shares['point']:>8.4f}")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"rate": RATE, "questions": QUESTIONS, "needed": need,
                                     "alpha": ALPHA, "runs": runs, "seed": SEED,
                                     "cells": {str(k): v for k, v in found.items()}},
                                    indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
