"""Benchmark: peak memory of a 10,000-question gate run, against a 1 GiB goal.

Why: every question is a pytest item holding its case, and every outcome is a row the
controller keeps until the floors are decided and the reports written. A run of a big goldset
must fit on a CI runner beside the system under test; this measures what pytest-ragate itself
holds, with a system that answers from the question text (no model, no index).

What it does: writes collect_10k.py's synthetic goldset (10,000 questions, 3 floors) and a
conftest whose `ragate_system` cites the meeting a question names (cross-meeting questions cite
one of theirs, unanswerable ones abstain), then runs the whole gate as CI would, with results,
Markdown and HTML reports, JUnit and history (`pytest -m rag_gate ... --ragate-results ...`),
once with `-n 0` and once with `-n 2`. While each run lasts, the resident set of the process
tree (pytest and its xdist workers) is read from /proc every 50 ms; the figures are the peak
of the tree's sum and the peak of the largest single process. The run's exit status and the
JUnit test count are checked, so a run that crashed early cannot report a small peak.

Run: `.venv/bin/python benchmarks/memory_10k.py` (`--help`); figures are printed and written to
`benchmarks/out/memory_10k.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from collect_10k import FLOORS, MIX, write_goldset

GOAL_MIB = 1024
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "memory_10k.json"
PAGE = os.sysconf("SC_PAGE_SIZE")

CONFTEST = '''
import re

import pytest

from pytest_ragate import Answer, Citation, Context

MEETING = re.compile(r"meeting-\\\\d{3}")


@pytest.fixture(scope="session")
def ragate_system():
    def answer(question):
        if "shareholder" in question:
            return Answer.abstain()
        named = MEETING.search(question)
        doc = named.group(0) if named else "meeting-000"
        ctx = Context(context_id=f"{doc}:0", doc_id=doc, first_unit=0, last_unit=3,
                      text="they settled it after discussion", distance=0.2)
        return Answer(text="They settled it after discussion.", contexts=[ctx],
                      citations=[Citation(context_id=ctx.context_id)])
    return answer
'''


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


class TreeSampler(threading.Thread):
    """Peak resident memory of a process and its descendants, read from /proc."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.peak_total = self.peak_single = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            pids, stack = [], [self.pid]
            while stack:
                pid = stack.pop()
                pids.append(pid)
                stack.extend(_children(pid))
            sizes = [_rss(pid) for pid in pids]
            self.peak_total = max(self.peak_total, sum(sizes))
            self.peak_single = max(self.peak_single, max(sizes, default=0))
            time.sleep(self.every)


def measure(root: Path, workers: int) -> dict[str, Any]:
    out = root / f"out-n{workers}"
    argv = [sys.executable, "-m", "pytest", "-m", "rag_gate", "goldset", "-q",
            "-p", "no:cacheprovider", "-n", str(workers), f"--junitxml={out}/junit.xml",
            f"--ragate-results={out}/results.jsonl", f"--ragate-report={out}/report.md",
            f"--ragate-html={out}/report.html", f"--ragate-history={out}/history.jsonl"]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    stdout, _ = proc.communicate()
    sampler.done.set()
    sampler.join()
    wall = time.perf_counter() - start
    tests = int(next(ET.parse(out / "junit.xml").getroot().iter("testsuite")).get("tests"))
    want = sum(MIX.values()) + FLOORS
    if tests != want or proc.returncode not in (0, 1):
        sys.stdout.write(stdout[-3000:])
        raise SystemExit(f"-n {workers}: exit {proc.returncode}, {tests} tests in JUnit "
                         f"(expected {want})")
    return {"workers": workers, "exit": proc.returncode, "junit_tests": tests,
            "wall_s": round(wall, 2), "peak_tree_mib": round(sampler.peak_total / 2**20, 1),
            "peak_single_process_mib": round(sampler.peak_single / 2**20, 1),
            "summary": stdout.strip().splitlines()[-1]}


def run(root: Path, json_path: Path) -> int:
    write_goldset(root / "goldset")
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (root / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    load = os.getloadavg()[0]
    runs = [measure(root, workers) for workers in (0, 2)]
    worst = max(r["peak_tree_mib"] for r in runs)
    verdict = "PASS" if worst <= GOAL_MIB else "FAIL"
    figures = {"benchmark": "memory_10k",
               "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
               "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "python": platform.python_version(),
                           "load_average_1m": [round(load, 2), round(os.getloadavg()[0], 2)]},
               "questions": sum(MIX.values()), "runs": runs, "goal_mib": GOAL_MIB,
               "verdict": verdict}
    print(f"memory_10k: {sum(MIX.values()):,} questions + {FLOORS} floors, fixture system, "
          "results + Markdown + HTML + JUnit + history")
    print(f"{'run':<8}{'wall (s)':>10}{'peak, tree (MiB)':>18}{'peak, one process':>19}  outcome")
    for r in runs:
        print(f"-n {r['workers']:<5}{r['wall_s']:>10.1f}{r['peak_tree_mib']:>18.1f}"
              f"{r['peak_single_process_mib']:>19.1f}  {r['summary']}")
    print(f"{verdict}: peak {worst:.0f} MiB vs goal {GOAL_MIB} MiB")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {json_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=None,
                        help="write the goldset and outputs here (kept) instead of a temp dir")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, dest="json_path")
    args = parser.parse_args(argv)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        return run(args.out.resolve(), args.json_path)
    with tempfile.TemporaryDirectory(prefix="ragate-memory-10k-") as tmp:
        return run(Path(tmp), args.json_path)


if __name__ == "__main__":
    sys.exit(main())
