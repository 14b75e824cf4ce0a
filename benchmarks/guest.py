"""Benchmark: pytest-ragate as a guest in a suite that is not its own, against a 3% goal.

Why: the plugin is installed into environments that run many other test suites, and pytest
loads it (its `pytest11` entry point, named `ragate`) in every one of them. In a run that
neither asks for goldsets nor collects one it must change nothing (no mode registered, xdist's
own scheduler) and cost next to nothing (issue 47, item 1).

What it does: writes an unrelated suite of N trivial tests (2,000 by default, in 20 modules,
under a folder with an empty pytest.ini), then runs `python -m pytest -n 2 -v -p
no:cacheprovider` over it with the plugin and with `-p no:ragate`, the two alternating pair
by pair after one untimed warm-up of each, and reports each side's median wall time and the
median of the per-pair ratios (with / without), which a shared machine's drift hits alike.
It also checks what the run with the plugin printed: xdist's own `scheduling tests via
LoadScheduling` and no line of ragate's.

Run: `.venv/bin/python benchmarks/guest.py` (see `--help`); figures are printed and written
to `benchmarks/out/guest.json`. Over the goal prints FAIL and still exits 0 (timings on a
shared machine are noisy); a run that fails, or prints a line of ragate's, exits 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 1.03  # with the plugin / without, median of the pairs
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "guest.json"
MODULES = 20


def write_suite(root: Path, tests: int) -> None:
    """N trivial tests in MODULES modules, and an empty pytest.ini (no project config)."""
    (root / "pytest.ini").write_text("[pytest]\n")
    per = -(-tests // MODULES)
    for module in range(MODULES):
        count = min(per, tests - module * per)
        (root / f"test_m{module:02d}.py").write_text("".join(
            f"def test_{i}():\n    assert {i} == {i}\n\n" for i in range(max(count, 0))))


def run(argv: list[str], cwd: Path) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-3000:] + proc.stderr[-3000:])
        raise SystemExit(f"`{' '.join(argv)}` exited {proc.returncode}")
    return wall, proc.stdout


def check_inert(stdout: str) -> list[str]:
    """What the run with the plugin printed that it should not have (or failed to print)."""
    lines = stdout.splitlines()
    wrong = [line for line in lines if line.startswith(("ragate", "pytest-ragate"))]
    if "scheduling tests via LoadScheduling" not in lines:
        wrong.append("no `scheduling tests via LoadScheduling` line")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10, help="timed pairs (10)")
    parser.add_argument("--tests", type=int, default=2000, help="trivial tests (2000)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    base = [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider"]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_suite(root, args.tests)
        _, printed = run(base, root)  # warm-up, both sides
        run([*base, "-p", "no:ragate"], root)
        wrong = check_inert(printed)
        with_plugin, without, ratios = [], [], []
        for _ in range(args.pairs):
            a, _ = run(base, root)
            b, _ = run([*base, "-p", "no:ragate"], root)
            with_plugin.append(a)
            without.append(b)
            ratios.append(a / b)
    figures = {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
               "tests": args.tests, "pairs": args.pairs,
               "load_average": os.getloadavg()[0],
               "with_plugin_median_s": statistics.median(with_plugin),
               "without_median_s": statistics.median(without),
               "ratio_median": statistics.median(ratios),
               "ratio_min": min(ratios), "ratio_max": max(ratios), "printed_wrong": wrong}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{args.tests} trivial tests, -n 2 -v, {args.pairs} pairs, load average "
          f"{figures['load_average']:.1f}")
    print(f"with the plugin: median {figures['with_plugin_median_s']:.2f} s; -p no:ragate: "
          f"median {figures['without_median_s']:.2f} s")
    verdict = "ok" if figures["ratio_median"] <= GOAL else "FAIL"
    print(f"ratio (with / without), median of pairs: {figures['ratio_median']:.3f} "
          f"(min {figures['ratio_min']:.3f}, max {figures['ratio_max']:.3f}); goal <= {GOAL}: "
          f"{verdict}")
    for line in wrong:
        print(f"printed what an inert plugin must not: {line}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
