"""Benchmark: one gate asked whole against the same gate asked sequentially (end to end).

Why: `--ragate-sequential` exists to spend fewer system calls and judge requests on a gate
whose answer is clear. `benchmarks/sequential.py` measures the rule by simulation; this
measures what a user sees, with a system that sleeps 100 ms per answer and a judge that
sleeps 200 ms per verdict (as remote models do) and do nothing else.

What it does:
1. Writes a project in a temporary folder: one goldset of `--questions` (300) answerable
   questions, floors `citation_accuracy = 0.85` and `faithfulness = 0.80` (and the
   `judge_coverage` floor a judge adds), a `ragate_system` that sleeps `--system` (0.1) s
   and cites the right context for 95% of the questions (every 20th cites a wrong one), and
   a `ragate_judge` that sleeps `--judge` (0.2) s per verdict and gives faithfulness 1.0 (0.0
   on the same 5%). Both log each call to a file. The judge cache is off, so every run asks.
2. In one run, alternating for each seed of `--seeds` (1 2 3), at `-n 0` and `-n 2`:
   (a) `pytest gs --ragate-cache off`: every question;
   (b) the same with `--ragate-sequential on --ragate-sequential-seed S`.
   Each wall is taken from start to exit of the process, start-up included.
3. Checks that both exit 0 with every floor passed, and prints and writes the system calls,
   judge requests and walls of each pair with the ratios (b) / (a).

Run: `.venv/bin/python benchmarks/sequential_e2e.py`; figures go to
`benchmarks/out/sequential_e2e.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

TOML = """\
name = "paid"
eval_version = "1"

[corpus]
paths = ["corpus/*.jsonl"]
format = "segments-jsonl"

[questions]
file = "questions.jsonl"
expected = "expected.jsonl"

[floors]
citation_accuracy = 0.85
faithfulness = 0.80
"""

CONFTEST = '''
import asyncio
import time
import pytest
from pytest_ragate import Answer, Citation, Context

SYSTEM, JUDGE = {system}, {judge}

def wrong(qid):
    return int(qid[1:]) % 20 == 0

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        with open("system.log", "a") as log:
            log.write(qid + "\\n")
        time.sleep(SYSTEM)
        turns = (8, 9) if wrong(qid) else (2, 3)
        context = Context(context_id="c0", doc_id="m1", first_unit=turns[0],
                          last_unit=turns[1], text="the budget", distance=0.2)
        return Answer(text="the budget", contexts=[context],
                      citations=[Citation(context_id="c0")])
    return answer

class SleepyJudge:
    judge_id = "sleepy"
    metrics = ("faithfulness",)

    def prompt_hash(self, metric):
        return "v1"

    async def score(self, item, metric):
        with open("judge.log", "a") as log:
            log.write(item.question_id + "\\n")
        await asyncio.sleep(JUDGE)
        return 0.0 if wrong(item.question_id) else 1.0

@pytest.fixture(scope="session")
def ragate_judge():
    return SleepyJudge()
'''


def write_project(root: Path, questions: int, system: float, judge: float) -> None:
    gs = root / "gs"
    (gs / "corpus").mkdir(parents=True)
    (gs / "ragate.toml").write_text(TOML)
    turns = [{"doc_id": "m1", "unit": t, "text": f"m1 turn {t}: the budget is {t}",
              "speaker": "A"} for t in range(12)]
    (gs / "corpus" / "meetings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns))
    rows = [{"question_id": f"q{i:04d}", "kind": "single_doc",
             "question": f"What about q{i:04d}?"} for i in range(questions)]
    expected = [{"question_id": f"q{i:04d}", "gist": "the budget",
                 "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                for i in range(questions)]
    (gs / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (gs / "expected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in expected))
    (root / "conftest.py").write_text(CONFTEST.format(system=system, judge=judge))
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin\n")


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    found.update(HF_HUB_OFFLINE="1", RAGAS_DO_NOT_TRACK="true")
    return found


def run(root: Path, workers: str, *flags: str) -> dict[str, float]:
    """One gate: its wall, the system calls and judge requests it made."""
    for log in ("system.log", "judge.log"):
        (root / log).unlink(missing_ok=True)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "gs", "-q", "-n", workers,
                           "--ragate-cache", "off", "--junitxml=junit.xml", *flags],
                          cwd=root, env=env(), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"a run failed ({' '.join(flags)}):\n{done.stdout[-3000:]}")

    def lines(name: str) -> int:
        path = root / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    return {"wall_s": round(wall, 2), "system_calls": lines("system.log"),
            "judge_requests": lines("judge.log")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--system", type=float, default=0.1)
    parser.add_argument("--judge", type=float, default=0.2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--workers", nargs="+", default=["0", "2"])
    args = parser.parse_args()
    pairs = []
    with tempfile.TemporaryDirectory(prefix="ragate-sequential-") as tmp:
        root = Path(tmp)
        write_project(root, args.questions, args.system, args.judge)
        for seed in args.seeds:
            for workers in args.workers:
                whole = run(root, workers)
                sequential = run(root, workers, "--ragate-sequential", "on",
                                 "--ragate-sequential-seed", str(seed))
                pair = {"seed": seed, "workers": workers, "whole": whole,
                        "sequential": sequential,
                        "wall_ratio": round(sequential["wall_s"] / whole["wall_s"], 3),
                        "system_ratio": round(sequential["system_calls"]
                                              / whole["system_calls"], 3),
                        "judge_ratio": round(sequential["judge_requests"]
                                             / max(whole["judge_requests"], 1), 3)}
                pairs.append(pair)
                print(f"seed {seed} -n {workers}: whole {whole['system_calls']} calls, "
                      f"{whole['judge_requests']} judge requests, {whole['wall_s']:.1f} s · "
                      f"sequential {sequential['system_calls']} calls, "
                      f"{sequential['judge_requests']} judge requests, "
                      f"{sequential['wall_s']:.1f} s · wall ratio {pair['wall_ratio']:.2f}",
                      flush=True)
    load = os.getloadavg()[0]
    out = {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "questions": args.questions, "system_s": args.system, "judge_s": args.judge,
           "cores": os.cpu_count(), "load_before_end": round(load, 2), "pairs": pairs}
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "sequential_e2e.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"load {load:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
