"""Benchmark: a cold `make gate` (both shipped goldsets, `-n 2`) now against an earlier commit.

Why: a newcomer's first gate is a cold one (no index, no exported graph, no stored query
vectors), and embedding dominates it. Issue 14 set the goal that a cold `make gate` take at
most half the wall time it took before its work began (commit 081b53c, torch on each
worker's share of the cores), with identical citation, abstention and evidence counts.

What it runs, alternating within each round (the order swaps every round, so a busy spell on
a shared machine hits both sides alike): `python -m pytest -m rag_gate goldsets/ -n 2 -q -ra
-p no:cacheprovider -o ragate_index_dir=<fresh> --ragate-results <file>`, in two detached git
worktrees, `--before` (default 081b53c) and `--after` (default HEAD), each run with its own
tree first on PYTHONPATH, so each side runs its own plugin, goldsets and pytest configuration.
Every run embeds from nothing: a fresh index folder holds the indexes, the exported ONNX graph
and the query vectors.

Like for like is checked: per goldset, citations correct/total, abstention correct/total and
evidence spans found/total must be equal on both sides, and so must every question's outcome
and every anchor's; otherwise the benchmark stops with exit status 1. Missing the goal prints
FAIL and exits 0 (timings on a shared 2-core machine are noisy).

Run: `.venv/bin/python benchmarks/cold_gate.py` (`--rounds N`, default 1; `--work DIR` keeps
logs); figures are printed and written to `benchmarks/out/cold_gate.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pipeline import GATE_OK, Run, execute, fmt_totals, gate_figures

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "cold_gate.json"
GOAL = 0.5  # after / before, wall
BEFORE = "081b53c"  # main before issue 14's encoder work


def worktree(ref: str, into: Path) -> tuple[Path, str]:
    sha = subprocess.run(["git", "rev-parse", ref], cwd=ROOT, check=True, text=True,
                         capture_output=True).stdout.strip()
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(into), sha], cwd=ROOT,
                   check=True)
    return into, sha


def gate(tree: Path, work: Path, name: str, round_: int) -> tuple[Run, Path]:
    index, results = work / f"{name}-r{round_}-index", work / f"{name}-r{round_}.jsonl"
    shutil.rmtree(index, ignore_errors=True)
    argv = [sys.executable, "-m", "pytest", "-m", "rag_gate", "goldsets/", "-n", "2", "-q",
            "-ra", "-p", "no:cacheprovider", "-o", f"ragate_index_dir={index}",
            f"--ragate-results={results}"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTHONPATH")}
    env.update({"PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "RAGAS_DO_NOT_TRACK": "true", "ANONYMIZED_TELEMETRY": "False"})
    run = execute(Run(name, round_, argv, work / f"{name}-r{round_}.log"), env, GATE_OK, tree)
    return run, results


def _ratio(runs: list[Run], measure: str, round_: int) -> float:
    """after / before of one measure, within one round."""
    side = {r.config: getattr(r, measure) for r in runs if r.round == round_}
    return side["after"] / side["before"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--after", default="HEAD")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, dest="json_path")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="ragate-cold-gate-"))
    work.mkdir(parents=True, exist_ok=True)
    trees: dict[str, tuple[Path, str]] = {}
    try:
        for name, ref in (("before", args.before), ("after", args.after)):
            trees[name] = worktree(ref, work / f"tree-{name}")
        load = [round(os.getloadavg()[0], 2)]
        runs: list[Run] = []
        reference = None
        for r in range(1, args.rounds + 1):
            order = ("before", "after") if r % 2 else ("after", "before")
            for name in order:
                run, results = gate(trees[name][0], work, name, r)
                figures = gate_figures(results, run.log, reference[2] if reference else [])
                run.extra["figures"] = figures[0]
                if reference is None:
                    reference = figures
                elif figures != reference:
                    print(f"NOT LIKE FOR LIKE in round {r}:\n  {name}: {fmt_totals(figures[0])}"
                          f"\n  other: {fmt_totals(reference[0])}", file=sys.stderr)
                    return 1
                runs.append(run)
        load.append(round(os.getloadavg()[0], 2))
    finally:
        for tree, _ in trees.values():
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                           check=False)
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    ratios = [_ratio(runs, "wall_s", r) for r in range(1, args.rounds + 1)]
    cpu = [_ratio(runs, "cpu_s", r) for r in range(1, args.rounds + 1)]
    ratio = statistics.median(ratios)
    verdict = "PASS" if ratio <= GOAL else "FAIL"
    figures: dict[str, Any] = {
        "benchmark": "cold_gate", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(), "load_average_1m": load},
        "before": {"ref": args.before, "sha": trees["before"][1]},
        "after": {"ref": args.after, "sha": trees["after"][1]},
        "runs": [r.as_json() for r in runs], "wall_ratios": [round(x, 3) for x in ratios],
        "cpu_ratios": [round(x, 3) for x in cpu], "goal": GOAL, "verdict": verdict,
        "counts": reference[0] if reference else None}
    print(f"cold gate, -n 2, {args.rounds} round(s): after/before wall "
          f"{', '.join(f'{x:.2f}' for x in ratios)}; CPU {', '.join(f'{x:.2f}' for x in cpu)}")
    print(f"counts (identical on both sides): {fmt_totals(reference[0]) if reference else '—'}")
    print(f"{verdict}: median wall ratio {ratio:.2f} vs goal {GOAL}")
    args.json_path.parent.mkdir(parents=True, exist_ok=True)
    args.json_path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
