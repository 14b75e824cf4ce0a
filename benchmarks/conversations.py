"""Benchmark: how often the 95% intervals of a goldset of conversations hold the true value,
ragate's (the conversation as the unit) against the naive per-turn interval (every turn an
independent answer), at 20, 50 and 200 conversations (issue 37, "How we will know").

The system: conversations of 2 to 4 turns. In each conversation it either keeps the thread,
and then answers each turn right with probability `p`, or loses it at turn 2 (probability
`lose`), and then fails that turn and every later one: its turns are correlated, as a chat
assistant's are. Two figures, each with its true value computed exactly from the model:
- **turn-level** (a per-turn floor: abstention accuracy, answer_match, …): the share of turns
  right, Σ right / Σ turns over the population; ragate's interval is Wilson at the
  conversations' design-effect n with the small-G corrections (`scoring/stats.
  wilson_conversations`, what `intervals.interval` gives a floor's tally over
  conversations), the naive one Wilson over every turn (`stats.wilson`);
- **conversation-level** (`conversation_success`): the share of conversations whose every
  turn is right; ragate's interval is Wilson over conversations (they are independent).

Each cell runs `--runs` seeded goldsets (2,000; `--quick`: 400) and reports how often each
interval holds the true value and its mean width. The goal: ragate's coverage within
0.93-0.97 where the naive interval falls below 0.90.

Run: `.venv/bin/python benchmarks/conversations.py`; figures printed and written to
`benchmarks/out/conversations.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from pathlib import Path

from pytest_ragate.scoring.stats import wilson, wilson_conversations

HERE = Path(__file__).resolve().parent
SIZES = (20, 50, 200)
TURNS = (2, 3, 4)  # a conversation's turns, drawn uniformly
# (p: right on a turn while on the thread, lose: the chance the thread is lost at turn 2)
SYSTEMS = {"loses the thread often": (0.9, 0.4), "loses it rarely": (0.95, 0.1)}


def truths(p: float, lose: float) -> tuple[float, float]:
    """The exact turn-level figure (expected right turns over expected turns) and
    conversation-level figure of the model."""
    right = total = success = 0.0
    for t in TURNS:
        kept = p ** t
        # lost at turn 2: turn 1 right with probability p, every later turn wrong
        right += (1 - lose) * t * p + lose * p
        total += t
        success += (1 - lose) * kept
    return right / total, success / len(TURNS)


def goldset(rng: random.Random, n: int, p: float, lose: float,
            ) -> list[tuple[float, float]]:
    """One goldset: each conversation's (turns right, turns)."""
    found = []
    for _ in range(n):
        t = rng.choice(TURNS)
        if rng.random() < lose:
            right = float(rng.random() < p)
        else:
            right = float(sum(rng.random() < p for _ in range(t)))
        found.append((right, float(t)))
    return found


def cell(n: int, p: float, lose: float, runs: int, seed: int) -> dict[str, float]:
    turn_truth, conv_truth = truths(p, lose)
    rng = random.Random(seed)
    held = {"ragate turn": 0, "naive turn": 0, "ragate conversation": 0}
    width = dict.fromkeys(held, 0.0)
    for _ in range(runs):
        clusters = goldset(rng, n, p, lose)
        k, total = sum(c[0] for c in clusters), int(sum(c[1] for c in clusters))
        whole = sum(c[0] == c[1] for c in clusters)
        intervals = {"ragate turn": wilson_conversations(k, total, clusters, 1),
                     "naive turn": wilson(k, total),
                     "ragate conversation": wilson(whole, n)}
        for name, (low, high) in intervals.items():
            truth = conv_truth if "conversation" in name else turn_truth
            held[name] += low <= truth <= high
            width[name] += high - low
    return {**{f"{k} coverage": v / runs for k, v in held.items()},
            **{f"{k} width": v / runs for k, v in width.items()},
            "turn truth": turn_truth, "conversation truth": conv_truth}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 400 if args.quick else args.runs
    rows = []
    header = (f"{'system':24} {'n':>4}  {'ragate turn':>11} {'naive turn':>10} "
              f"{'ragate conv':>11}   widths (ragate/naive/conv)")
    print(f"coverage of 95% intervals over {runs} seeded goldsets a cell")
    print(header)
    for s, (name, (p, lose)) in enumerate(SYSTEMS.items()):
        for n in SIZES:
            found = cell(n, p, lose, runs, seed=1000 * s + n)
            rows.append({"system": name, "p": p, "lose": lose, "conversations": n, **found})
            print(f"{name:24} {n:>4}  {found['ragate turn coverage']:>11.3f} "
                  f"{found['naive turn coverage']:>10.3f} "
                  f"{found['ragate conversation coverage']:>11.3f}   "
                  f"{found['ragate turn width']:.3f}/{found['naive turn width']:.3f}/"
                  f"{found['ragate conversation width']:.3f}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "conversations.json").write_text(json.dumps({
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "runs": runs,
        "cells": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
