"""Judged gate throughput: concurrent vs sequential judge calls, and -n 2 vs -n 0.

A judge is a remote model: its latency, not our CPU, bounds a judged run. This runs a real
pytest gate over a synthetic 100-question goldset whose judge answers every call after a
fixed 200 ms (asyncio.sleep, as a network call would), three metrics per question, and
compares wall times measured in one run. Goal: concurrent ≥ 5× faster than sequential.

    .venv/bin/python benchmarks/judge_concurrency.py [--questions 100] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"

CONFTEST = '''
import asyncio
import pytest
from pytest_ragate import Answer, Citation, Context

LATENCY = {latency}


@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        n = int(text.split()[-1].rstrip("?"))
        ctx = Context(context_id=f"c{{n}}", doc_id=f"d{{n % 10}}", first_unit=0, last_unit=2,
                      text="the answer is here", distance=0.2)
        return Answer(text="the answer", contexts=[ctx],
                      citations=[Citation(context_id=ctx.context_id)])
    return answer


class SlowJudge:
    judge_id = "scripted-200ms"

    def prompt_hash(self, metric):
        return "scripted"

    async def score(self, item, metric):
        await asyncio.sleep(LATENCY)
        return 0.9


@pytest.fixture(scope="session")
def ragate_judge():
    return SlowJudge()
'''


def write_goldset(root: Path, questions: int, latency: float) -> None:
    gs = root / "gs"
    gs.mkdir(parents=True)
    (root / "conftest.py").write_text(CONFTEST.format(latency=latency))
    (gs / "ragate.toml").write_text(
        'name = "judged"\n[corpus]\npaths = ["corpus.jsonl"]\nformat = "segments-jsonl"\n'
        '[questions]\nexpected = "expected.jsonl"\n'
        "[floors]\nfaithfulness = 0.8\ncontext_precision = 0.8\nanswer_relevance = 0.8\n")
    with (gs / "corpus.jsonl").open("w") as f:
        for d in range(10):
            for t in range(5):
                f.write(json.dumps({"doc_id": f"d{d}", "unit": t, "text": f"turn {t}"}) + "\n")
    with (gs / "questions.jsonl").open("w") as q, (gs / "expected.jsonl").open("w") as e:
        for n in range(questions):
            q.write(json.dumps({"question_id": f"q{n:03d}", "kind": "single_doc",
                                "question": f"what about {n}?"}) + "\n")
            e.write(json.dumps({"question_id": f"q{n:03d}", "gist": "g", "evidence": [
                {"doc_id": f"d{n % 10}", "first_unit": 1, "last_unit": 1}]}) + "\n")


def gate(root: Path, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "gs",
           "--ragate-cache=off", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"gate failed ({' '.join(args)}):\n{done.stdout[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pytest.ini").write_text("[pytest]\n")
        write_goldset(root, args.questions, args.latency)
        runs = {
            "sequential, -n 0": gate(root, "-o", "ragate_judge_concurrency=1"),
            f"concurrent {args.concurrency}, -n 0": gate(
                root, "-o", f"ragate_judge_concurrency={args.concurrency}"),
            f"concurrent {args.concurrency}, -n 2": gate(
                root, "-o", f"ragate_judge_concurrency={args.concurrency}", "-n", "2"),
            "sequential, -n 2": gate(root, "-o", "ragate_judge_concurrency=1", "-n", "2"),
        }
    seq = runs["sequential, -n 0"]
    conc = runs[f"concurrent {args.concurrency}, -n 0"]
    conc2 = runs[f"concurrent {args.concurrency}, -n 2"]
    calls = args.questions * 3
    rows = [[name, f"{wall:.2f}", f"{seq / wall:.2f}×"] for name, wall in runs.items()]
    print(f"judge_concurrency: {args.questions} questions × 3 judged metrics = {calls} calls "
          f"of {args.latency * 1000:.0f} ms; a sequential run cannot beat "
          f"{calls * args.latency:.0f} s")
    print(tabulate(rows, headers=["configuration", "wall (s)", "speed-up vs sequential -n 0"]))
    ratio = seq / conc
    print(f"concurrent vs sequential (-n 0): {ratio:.1f}× faster "
          f"({'PASS' if ratio >= 5 else 'FAIL'} against the 5× goal)")
    print(f"-n 2 vs -n 0 (concurrent): {conc2 / conc:.2f}× the wall time")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "judge_concurrency.json").write_text(json.dumps(
        {"questions": args.questions, "latency_s": args.latency,
         "concurrency": args.concurrency, "wall_s": runs,
         "concurrent_vs_sequential": ratio, "n2_vs_n0": conc2 / conc}, indent=2))


if __name__ == "__main__":
    main()
