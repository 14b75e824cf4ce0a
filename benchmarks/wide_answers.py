"""Benchmark: scoring answers that carry very many contexts and citations.

Why: a system may hand back its whole candidate pool (a re-ranker's input, a long-context
stuffer) and cite much of it. Scoring one answer must grow with its contexts plus its
citations, not with their product: issue 22 measured 115 s for 8 such answers.

What it does:
1. Writes a project in a temporary folder: one goldset of `--questions` (8) questions over a
   one-document corpus of `--contexts` (20,000) units, each question with two expected spans,
   and a `ragate_system` that returns `--contexts` contexts (one per unit, in reverse order, so
   the evidence sits at the end of the pool) and cites every one of them.
2. Times `pytest gs -q -n 0 --ragate-results=results.jsonl` from start to exit (start-up and
   the system's own work included), and checks every row: each citation counted once, the
   right ones counted, both spans found.
3. Times `metrics.score_answer` alone over the same answers, in this process.

Run: `.venv/bin/python benchmarks/wide_answers.py` (`--questions N`, `--contexts N`); figures
are printed and written to `benchmarks/out/wide_answers.json`.
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

from pytest_ragate.answer import Answer, Citation, Context
from pytest_ragate.outputs.results import read_rows
from pytest_ragate.scoring.records import Span, score_answer

HERE = Path(__file__).resolve().parent
SPANS = ((2, 3), (7, 7))  # expected evidence in m1: units 2, 3 and 7 are right

TOML = """\
name = "wide"
eval_version = "1"

[corpus]
paths = ["corpus/*.jsonl"]
format = "segments-jsonl"

[questions]
file = "questions.jsonl"
expected = "expected.jsonl"
"""

CONFTEST = '''
import pytest
from pytest_ragate import Answer, Citation, Context

UNITS = {units}

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        contexts = [Context(context_id=f"c{{t}}", doc_id="m1", first_unit=t, last_unit=t,
                            text="the budget", distance=0.2) for t in reversed(range(UNITS))]
        return Answer(text="the budget", contexts=contexts,
                      citations=[Citation(context_id=c.context_id) for c in contexts])
    return answer
'''


def write_project(root: Path, questions: int, units: int) -> None:
    gs = root / "gs"
    (gs / "corpus").mkdir(parents=True)
    (gs / "ragate.toml").write_text(TOML)
    turns = [{"doc_id": "m1", "unit": t, "text": f"turn {t}", "speaker": "A"}
             for t in range(units)]
    (gs / "corpus" / "m1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in turns))
    asked = [{"question_id": f"q{i}", "kind": "single_doc", "question": f"What about {i}?"}
             for i in range(questions)]
    expected = [{"question_id": f"q{i}", "gist": "the budget",
                 "evidence": [{"doc_id": "m1", "first_unit": a, "last_unit": b}
                              for a, b in SPANS]} for i in range(questions)]
    (gs / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in asked))
    (gs / "expected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in expected))
    (root / "conftest.py").write_text(CONFTEST.format(units=units))
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin\n")


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    found.update(HF_HUB_OFFLINE="1", RAGAS_DO_NOT_TRACK="true")
    return found


def gate(root: Path, questions: int, units: int) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "gs", "-q", "-n", "0",
                           "--ragate-results=results.jsonl"], cwd=root, env=env(),
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"the gate failed:\n{done.stdout[-2000:]}")
    rows, problems = read_rows(root / "results.jsonl")
    right = sum(b - a + 1 for a, b in SPANS)
    if problems or len(rows) != questions or any(
            (r.citations, r.citations_correct, r.evidence_spans_found) != (units, right, 2)
            for _, r in rows):
        raise SystemExit(f"unexpected rows in {root / 'results.jsonl'}")
    return wall


def scoring_alone(questions: int, units: int) -> float:
    contexts = [Context(context_id=f"c{t}", doc_id="m1", first_unit=t, last_unit=t,
                        text="the budget", distance=0.2) for t in reversed(range(units))]
    answer = Answer(text="the budget", contexts=contexts,
                    citations=[Citation(context_id=c.context_id) for c in contexts])
    evidence = [Span("m1", a, b) for a, b in SPANS]
    start = time.perf_counter()
    for _ in range(questions):
        score_answer(answer, evidence)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=8)
    parser.add_argument("--contexts", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_project(root, args.questions, args.contexts)
        wall = gate(root, args.questions, args.contexts)
    alone = scoring_alone(args.questions, args.contexts)
    figures = {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
               "questions": args.questions, "contexts_and_citations": args.contexts,
               "gate_wall_s": round(wall, 2), "score_answer_s": round(alone, 3),
               "load_average": os.getloadavg()[0]}
    print(f"{args.questions} questions, {args.contexts} contexts and citations each: gate "
          f"{wall:.2f} s wall, score_answer alone {alone:.3f} s "
          f"(1-minute load {figures['load_average']:.1f})")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "wide_answers.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
