"""Benchmark: one gate run whole against the same gate as 3 shards decided once.

Why: sharding (`--ragate-shard i/N`, `ragate decide`) exists for gates whose system takes
seconds per answer, where one runner's wall time is the sum of the answers. What a user gets
is the ratio of the two walls on the same work, and this measures it on this machine, with a
system that sleeps 100 ms per answer (as a remote model does) and does nothing else.

What it does:
1. Writes a project in a temporary folder: one goldset of `--questions` (300) questions of
   three kinds over a 3-document corpus, mechanical floors, and a `ragate_system` that sleeps
   `--sleep` (0.1) s and answers with a right citation (an unanswerable one abstains).
2. In one run, alternating for `--rounds` rounds (1), times:
   (a) `pytest gs --ragate-results one.jsonl`: one process asks every question in turn;
   (b) `pytest gs --ragate-shard i/3 --ragate-results shards/i.jsonl` for i = 1, 2, 3 started
       together as separate processes (as 3 CI runners would run them; here they share this
       machine's 2 cores, which barely matters to a sleeping system), then
       `ragate decide shards/ -- gs`, after the slowest shard.
   Each wall is taken from start to exit of the processes, start-up included.
3. Checks that both exit 0 and that the decided rows equal the whole run's, and prints the
   walls and the ratio (b) / (a). A ratio is what to quote: both sides ran in this run.

Run: `.venv/bin/python benchmarks/shards.py`; figures are printed and written to
`benchmarks/out/shards.json`.
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

from pytest_ragate.outputs.results import read_rows

HERE = Path(__file__).resolve().parent
KINDS = ["single_doc", "single_doc", "unanswerable"]

TOML = """\
name = "sleepy"
eval_version = "1"

[corpus]
paths = ["corpus/*.jsonl"]
format = "segments-jsonl"

[questions]
file = "questions.jsonl"
expected = "expected.jsonl"

[floors]
citation_accuracy = 0.90
abstention_accuracy = 0.90
evidence_recall = 0.90
"""

CONFTEST = '''
import time
import pytest
from pytest_ragate import Answer, Citation, Context

SLEEP = {sleep}

@pytest.fixture
def ragate_system():
    def answer(text):
        time.sleep(SLEEP)
        if "unanswerable" in text:
            return Answer(text="", abstained=True)
        context = Context(context_id="c0", doc_id="m1", first_unit=2, last_unit=3,
                          text="the budget", distance=0.2)
        return Answer(text="the budget", contexts=[context],
                      citations=[Citation(context_id="c0")])
    return answer
'''


def write_project(root: Path, questions: int, sleep: float) -> None:
    gs = root / "gs"
    (gs / "corpus").mkdir(parents=True)
    (gs / "ragate.toml").write_text(TOML)
    turns = [{"doc_id": f"m{d}", "unit": t, "text": f"m{d} turn {t}: the budget is {t}",
              "speaker": "A"} for d in (1, 2, 3) for t in range(8)]
    (gs / "corpus" / "meetings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns))
    rows, expected = [], []
    for i in range(questions):
        kind = KINDS[i % 3]
        rows.append({"question_id": f"q{i:04d}", "kind": kind,
                     "question": f"What about q{i:04d} ({kind})?"})
        spans = [] if kind == "unanswerable" else [{"doc_id": "m1", "first_unit": 2,
                                                    "last_unit": 3}]
        expected.append({"question_id": f"q{i:04d}", "gist": "the budget" if spans else None,
                         "evidence": spans})
    (gs / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (gs / "expected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in expected))
    (root / "conftest.py").write_text(CONFTEST.format(sleep=sleep))
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin\n")


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    found.update(HF_HUB_OFFLINE="1", RAGAS_DO_NOT_TRACK="true")
    return found


def whole(root: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "gs", "-q",
                           "--ragate-results=one.jsonl"], cwd=root, env=env(),
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"the whole run failed:\n{done.stdout[-2000:]}")
    return wall


def sharded(root: Path, count: int) -> tuple[float, float]:
    """The wall of the shards (started together) and of the decision after them."""
    start = time.perf_counter()
    shards = [subprocess.Popen([sys.executable, "-m", "pytest", "gs", "-q",
                                f"--ragate-shard={i}/{count}",
                                f"--ragate-results=shards/{i}.jsonl"], cwd=root, env=env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
              for i in range(1, count + 1)]
    outputs = [p.communicate()[0] for p in shards]
    shards_done = time.perf_counter()
    for p, out in zip(shards, outputs, strict=True):
        if p.returncode:
            raise SystemExit(f"a shard failed:\n{out[-2000:]}")
    done = subprocess.run([sys.executable, "-c", "from pytest_ragate.cli import main; main()",
                           "decide", "shards/", "--", "gs", "-q",
                           "--ragate-results=decided.jsonl"], cwd=root, env=env(),
                          capture_output=True, text=True)
    end = time.perf_counter()
    if done.returncode:
        raise SystemExit(f"the decision failed:\n{done.stdout[-2000:]}")
    return shards_done - start, end - shards_done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--sleep", type=float, default=0.1)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="ragate-shards-") as tmp:
        root = Path(tmp)
        write_project(root, args.questions, args.sleep)
        for _ in range(args.rounds):
            one = whole(root)
            shards, decide = sharded(root, args.shards)
            if ([r for _, r in read_rows(root / "decided.jsonl")[0]]
                    != [r for _, r in read_rows(root / "one.jsonl")[0]]):
                raise SystemExit("the decided rows differ from the whole run's")
            results.append({"whole_s": round(one, 2), "shards_s": round(shards, 2),
                            "decide_s": round(decide, 2),
                            "ratio": round((shards + decide) / one, 3)})
            print(f"whole {one:.1f} s · {args.shards} shards {shards:.1f} s + decide "
                  f"{decide:.1f} s · ratio {(shards + decide) / one:.2f}", flush=True)
    load = os.getloadavg()[0]
    out = {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "questions": args.questions, "sleep_s": args.sleep, "shards": args.shards,
           "cores": os.cpu_count(), "load_before_end": round(load, 2), "rounds": results}
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "shards.json").write_text(json.dumps(out, indent=2) + "\n")
    floor = args.questions * args.sleep
    print(f"serial floor of the answers alone: {floor:.0f} s whole, {floor / args.shards:.0f} s "
          f"a shard · load {load:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
