"""Every benchmark, one after another, as `make bench` runs them (each prints its own table
and writes its figures under benchmarks/out/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["import_time.py", "collect_10k.py", "memory_10k.py", "retrieval_recall.py",
              "judge_concurrency.py", "vs_ragas.py", "pipeline.py", "cold_gate.py",
              "html_report.py", "shards.py", "wide_answers.py", "sequential.py",
               "sequential_e2e.py", "slices.py", "intervals.py", "answer_match.py", "ci_views.py",
               "pins.py", "audit.py", "conversations.py", "guest.py",
               "noninferiority.py"]


def main() -> int:
    failed = []
    for name in BENCHMARKS:
        print(f"\n=== {name} ===", flush=True)
        if subprocess.run([sys.executable, str(HERE / name)], cwd=HERE.parent).returncode:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
