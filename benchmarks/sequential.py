"""Benchmark: how many questions sequential stopping asks, and how often it decides against
the full run, by simulation of the shipped rule.

Why: `--ragate-sequential` stops asking once every floor is decided by an anytime-valid
confidence sequence (pytest_ragate/scoring/confidence_sequence.py). What it buys is the share
of questions not asked; what it may cost is a decision that the full run would not have made,
which the rule bounds by alpha. Both are measured here on the rule itself (`stopping_times`,
imported from the package, not re-implemented).

What it does, per cell (goldset size N, true value p), with `--runs` (10,000) seeded runs:
1. builds one fixed population of N values: binary, exactly round(p*N) ones (a proportion
   floor such as abstention accuracy), or, for the continuous table (N = 300), N draws from a
   Beta distribution of mean p (concentration KAPPA) shifted (and clipped to [0, 1]) so that
   their mean is p (a judged mean such as faithfulness);
2. shuffles it per run (a question order) and runs the rule at the floor 0.85, alpha 0.05;
3. counts the questions asked (N for a run that ends undecided: the full run then decides it
   exactly, as ragate does, so such a run never disagrees), and compares each decision with
   the full-information one (the population's mean >= the floor passes; a mean within the
   rule's TIE of the floor counts as at the floor, and so passes);
4. the shipped stop asks its k questions again before it is taken (`decision/drift.py`; a
   fixed population answers them the same, so the stop is taken), or, when that would cost
   as much as the rest (2k >= N), asks every question and decides exactly: the calls it makes
   are 2k or N, and only the stops taken can disagree.

Per cell it prints the median and 90th percentile of questions the sequence needs, the mean
share of them, the mean share of calls the shipped stop makes (re-asks included), and the
disagreement rate of the shipped stop (with alpha beside it). `--quick` runs 1,000 runs per cell;
`--alpha` sets the error rate each floor spends (0.05; a goldset of k floors splits its budget).

**Drifting systems** (issue 39): a system whose answers depend on when it is asked breaks
the sequence's assumption, and an early stop is then checked by asking its k questions again
(`decision/drift.py`: r = k re-asks, the paired sign-flip test of `scoring/sign_flip.py`,
both imported). Each run of a drift cell (`--drift-runs`, 2,000) simulates the shipped order
of events: questions in a random order at calls 1, 2, ...; the sequence (`stopping_times`)
decides after k (and the bound on the rest after its own count); a sample of s of the k
questions (`reasked_size`) asked again, in a random order, at calls k+1..k+s; the stop
refused when the test rejects at the re-check's level (`recheck_level`: 0.125 for one floor
since issue 49, alpha before), and then the other N - k questions asked at calls
k+s+1..N+s and the floor decided over every first answer. Its decision is compared with a
separate full run (all N asked at calls 1..N). The system: a goldset of N = 200 questions of
which round(0.98 N) it answers right when it works, and wrong (every answer) when it does not;
*flaky*: each answer right with its question's own chance (0.9 or 0.98), independently
(no drift: the pairs differ both ways); *step at T*: works on calls 1..T only (case 1 is
T = 40); *gradual*: a call c fails with chance c / N; *periodic P*: works on the first P/2
calls of every P. The full run is the run's own questions all asked at calls 1..N in its
order (what `--ragate-sequential off` would have scored: for a flaky system the values the
sequence's guarantee is about, for a drifting one the issue's 0.20). Per cell: the share of
runs whose full run fails, how often the stop was accepted or refused, the disagreement with
the full run with the re-check and without it (the rule before issue 39), and the calls made
(questions asked, re-asks included) per question of the goldset, with and without the
re-check.

**Questions without a result** (issue 45): a full run does not decide a floor over a goldset
with an errored question, or (under an answer_match floor) an answer unsure and not labelled;
a stop must not pass what it did not ask. Each run of a gap cell (`--gap-runs`, 200) replays
the shipped rule itself (`decision/sequential.Stopping`, one answer_match floor at 0.85, the
run's budget split over it and the bound on the rest, `scoring/gap_bound.py`) over a goldset
of N answers right with chance 0.98, g of them errored or unsure (at random places), in a
fresh seed's order, its re-asks answering as before; the full run's decision is "not decided"
(fail) whenever g > 0. Per cell: how often it stopped, the disagreement with the full run (a
stop that passed over a question without a result), and the calls made per question (re-asks
included), with the bound (`sequential_gaps` = 0.05, the default) and without it (a bound of
0.999, proved after one question: the rule before issue 45).

Run: `.venv/bin/python benchmarks/sequential.py`; figures are printed and written to
`benchmarks/out/sequential.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

import numpy as np

from pytest_ragate.decision.drift import reasked_size, recheck_level
from pytest_ragate.scoring.confidence_sequence import TIE, stopping_times
from pytest_ragate.scoring.gap_bound import GAPS, GapBound
from pytest_ragate.scoring.sign_flip import sign_flip_p

HERE = Path(__file__).resolve().parent
FLOOR = 0.85
ALPHA = 0.05
SIZES = (100, 300, 2000)
VALUES = (0.60, 0.70, 0.75, 0.80, 0.825, 0.84, 0.85, 0.86, 0.875, 0.90, 0.95, 0.98, 1.00)
CONTINUOUS_SIZE = 300
KAPPA = 10.0  # the Beta population's concentration (a + b)
GOALS = {0.98: 45, 0.95: 75, 0.60: 25}  # at N = 300: the most questions asked, median
PEER = {0.98: 54, 0.95: 89, 0.60: 31, 0.85: "undecided"}  # retrieval-eval-gate 0.2.1
CHUNK_CELLS = 4_000_000  # values per chunk of runs (runs x N), to bound memory


def binary_population(size: int, value: float) -> np.ndarray:
    ones = round(value * size)
    return np.concatenate([np.ones(ones), np.zeros(size - ones)])


def beta_population(size: int, value: float, rng: np.random.Generator) -> np.ndarray:
    """N Beta draws of mean `value`, shifted so their mean is `value` (bisection on the
    shift, the shifted values clipped to [0, 1])."""
    if value >= 1.0:
        return np.ones(size)
    draws = rng.beta(value * KAPPA, (1.0 - value) * KAPPA, size)
    low, high = -1.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if np.clip(draws + mid, 0.0, 1.0).mean() < value:
            low = mid
        else:
            high = mid
    return np.clip(draws + high, 0.0, 1.0)


def simulate(population: np.ndarray, runs: int, seed: int, alpha: float = ALPHA,
             ) -> dict[str, float]:
    """One cell: `runs` shuffles of the population, each run through the rule."""
    size = population.size
    mean = float(population.mean())
    full = 1 if mean >= FLOOR - TIE else -1  # the full run's decision
    rng = np.random.default_rng(seed)
    chunk = max(1, CHUNK_CELLS // size)
    asked = np.empty(runs, dtype=np.int64)
    calls = np.empty(runs, dtype=np.int64)
    disagree = 0
    decided = 0
    for start in range(0, runs, chunk):
        count = min(chunk, runs - start)
        orders = rng.permuted(np.broadcast_to(population, (count, size)), axis=1)
        at, decision = stopping_times(orders, population=size, null=FLOOR, alpha=alpha)
        asked[start:start + count] = np.where(decision == 0, size, at)
        # the shipped stop: a sample of its questions asked again (the same answers: taken)
        # when the stop so leaves half the goldset unasked (`reasked_size`), else every
        # question asked, exactly
        sizes = np.array([reasked_size(int(k), size, alpha) or 0 for k in at])
        stops = (decision != 0) & (sizes > 0)
        calls[start:start + count] = np.where(stops, at + sizes, size)
        disagree += int((stops & (decision != full)).sum())
        decided += int(stops.sum())
    return {"population_mean": mean, "full_decision": "pass" if full > 0 else "fail",
            "median_asked": float(np.median(asked)),
            "p90_asked": float(np.percentile(asked, 90)),
            "mean_share_asked": float(asked.mean() / size),
            "mean_share_calls": float(calls.mean() / size),
            "decided_early": decided / runs, "disagreement": disagree / runs}


def table(title: str, rows: list[dict], alpha: float = ALPHA) -> str:
    lines = [title, f"{'N':>5} {'true':>6} {'mean':>7} {'full':>4} {'median':>7} {'p90':>6} "
                    f"{'share':>6} {'calls':>6} {'disagree':>9} {'alpha':>6}"]
    for row in rows:
        lines.append(f"{row['size']:>5} {row['value']:>6.3f} {row['population_mean']:>7.4f} "
                     f"{row['full_decision']:>4} {row['median_asked']:>7.0f} "
                     f"{row['p90_asked']:>6.0f} {row['mean_share_asked']:>6.1%} "
                     f"{row['mean_share_calls']:>6.1%} {row['disagreement']:>9.4f} "
                     f"{alpha:>6.3g}")
    return "\n".join(lines)


DRIFT_SIZE = 200
LAX_GAPS = 0.9  # a lax `sequential_gaps`: the bound on the rest proved after 2 questions
GOOD = 0.98  # the share of questions a working system answers right


def works(name: str, calls: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether the system works at each call (1-based) under drift `name`."""
    kind, _, arg = name.partition(" ")
    if kind == "step":
        return calls <= int(arg)
    if kind == "gradual":
        return rng.random(calls.shape) >= calls / DRIFT_SIZE
    if kind == "periodic":
        period = int(arg)
        return (calls - 1) % period < period // 2
    return np.ones(calls.shape, dtype=bool)  # flaky or stable: no drift


def answered(name: str, chances: np.ndarray, questions: np.ndarray, calls: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """1.0 for a right answer, 0.0 for a wrong one, of each question at each call."""
    right = rng.random(questions.shape) < chances[questions]
    return (right & works(name, calls, rng)).astype(float)


def drift_cell(name: str, chances: np.ndarray, runs: int, seed: int, alpha: float = ALPHA,
               gaps: float = GAPS) -> dict[str, object]:
    """`runs` simulated sequential runs of one drifting system against a full run each, under
    the shipped rule: one floor at `alpha`, the bound on the rest (`gaps`, no question without
    a result: decided after a fixed number of questions) at `alpha` too, a sample of the
    stop's questions asked again (`reasked_size`)."""
    rng = np.random.default_rng(seed)
    size = chances.size
    bound = GapBound(population=size, rate=gaps, alpha=alpha)
    while not bound.decided and bound.asked < size:
        bound.observe(False)
    calls = np.arange(1, size + 1)
    orders = np.argsort(rng.random((runs, size)), axis=1)
    first = answered(name, chances, orders, np.broadcast_to(calls, orders.shape), rng)
    at, decision = stopping_times(first, population=size, null=FLOOR, alpha=alpha)
    counts = {"accepted": 0, "refused": 0, "disagree": 0, "disagree_before": 0, "full_fail": 0}
    calls_made = reasks = 0
    for run in range(runs):
        # the full run: this run's questions all asked at calls 1..N, sequential off
        full = first[run].mean() >= FLOOR - TIE
        counts["full_fail"] += not full
        k = max(int(at[run]), bound.asked)  # every floor decided and the rest bounded
        r = reasked_size(k, size, recheck_level(1)) if decision[run] else None
        if r is None:  # undecided, or the stop would not save half: all asked, exactly
            made, own, before = size, full, full if not decision[run] else decision[run] > 0
        else:
            early = before = decision[run] > 0
            again = rng.permutation(orders[run, :k])[:r]  # a sample, in a fresh order
            second = answered(name, chances, again, calls[k:k + r], rng)
            position = {int(q): i for i, q in enumerate(orders[run, :k])}
            firsts = first[run, [position[int(q)] for q in again]]
            moved = (firsts - second) if early else (second - firsts)
            reasks += r
            if sign_flip_p(moved.tolist(), seed=f"{seed}-{run}") <= recheck_level(1):
                counts["refused"] += 1
                rest = answered(name, chances, orders[run, k:],
                                np.arange(k + r + 1, size + r + 1), rng)
                made = size + r
                own = (first[run, :k].sum() + rest.sum()) / size >= FLOOR - TIE
            else:
                counts["accepted"] += 1
                made, own = k + r, early
        calls_made += made
        counts["disagree"] += own != full
        counts["disagree_before"] += before != full
    return {"drift": name, "runs": runs, "gaps": gaps, "stop_after_at_least": bound.asked,
            "full_fails": counts["full_fail"] / runs,
            "accepted": counts["accepted"] / runs, "refused": counts["refused"] / runs,
            "disagreement": counts["disagree"] / runs,
            "disagreement_unchecked": counts["disagree_before"] / runs,
            "calls_per_question": calls_made / runs / size, "reasks_per_run": reasks / runs}


def drift_rows(runs: int, alpha: float) -> list[dict[str, object]]:
    """Each drifting system at the default bound on the rest and at a lax one."""
    found = []
    for j, (name, chance) in enumerate(DRIFTS):
        label = f"{name} ({chance:g})" if name == "flaky" else name
        for gaps in (GAPS, LAX_GAPS):
            cell = drift_cell(name, drift_population(chance), runs, 7000 + j, alpha, gaps)
            found.append({"label": label, **cell})
    return found


def drift_population(chance: float) -> np.ndarray:
    """Each question's chance of a right answer when the system works: round(GOOD * N) of
    them `chance`, the others 0."""
    good = round(GOOD * DRIFT_SIZE)
    return np.concatenate([np.full(good, chance), np.zeros(DRIFT_SIZE - good)])


DRIFTS = [("stable", 1.0), ("flaky", 0.98), ("flaky", 0.9), ("step 40", 1.0), ("step 45", 1.0),
          ("step 60", 1.0), ("step 100", 1.0), ("gradual", 1.0), ("periodic 40", 1.0),
          ("periodic 100", 1.0)]


def drift_table(rows: list[dict[str, object]], alpha: float) -> str:
    lines = [f"drifting systems, N = {DRIFT_SIZE}, floor {FLOOR}, alpha {alpha:g}: "
             "disagreement with the full run, and calls per question of the goldset, at the "
             f"default bound on the rest ({GAPS:g}) and a lax one ({LAX_GAPS:g})",
             f"{'system':>22} {'fails':>5} {'accepted':>8} {'refused':>8} {'disagree':>9} "
             f"{'unchecked':>9} {'calls':>6} {'re-asks':>8} {'| lax: disagree':>15} "
             f"{'calls':>6}"]
    for row, lax in zip(rows[::2], rows[1::2], strict=True):
        lines.append(f"{row['label']:>22} {float(row['full_fails']):>5.2f} "
                     f"{row['accepted']:>8.3f} {row['refused']:>8.3f} "
                     f"{row['disagreement']:>9.4f} {row['disagreement_unchecked']:>9.4f} "
                     f"{row['calls_per_question']:>6.2f} {row['reasks_per_run']:>8.1f} "
                     f"{lax['disagreement']:>15.4f} {lax['calls_per_question']:>6.2f}")
    return "\n".join(lines)


GAP_CELLS = [(60, 0, "error"), (60, 1, "error"), (60, 1, "unsure"), (200, 0, "error"),
             (200, 1, "error"), (200, 1, "unsure"), (200, 10, "error"), (400, 0, "error"),
             (400, 1, "error"), (400, 4, "unsure"), (400, 20, "error"), (400, 40, "unsure")]


def gap_cell(size: int, gaps: int, kind: str, runs: int, seed: int, rate: float,
             alpha: float = ALPHA) -> dict[str, object]:
    """`runs` replays of the shipped stop over one goldset with `gaps` questions without a
    result (`kind`: errored, or unsure and not labelled), each in a fresh seed's order."""
    from pytest_ragate.decision.population import Member, Population, SequentialPlan
    from pytest_ragate.decision.sequential import Stopping
    from pytest_ragate.scoring.answer_match import AnswerCheck
    from pytest_ragate.scoring.floor import Floor
    from pytest_ragate.scoring.records import QuestionRecord

    rng = np.random.default_rng(seed)
    members = [Member(question_id=f"q{i:03d}", question="?", kind="k", index=i, nodeid=None,
                      sealed=False, must_abstain=False, evidence_spans=1) for i in range(size)]
    stopped = disagree = calls = 0
    for _ in range(runs):
        rows = {}
        bad = set(rng.choice(size, gaps, replace=False).tolist()) if gaps else set()
        for i, m in enumerate(members):
            right = bool(rng.random() < GOOD)
            check = AnswerCheck(outcome="right" if right else "wrong", why="-", facts=1)
            fields: dict[str, object] = {"answer_check": check}
            if i in bad and kind == "error":
                fields = {"status": "error", "error": "it raised"}
            elif i in bad:
                fields = {"answer_check": AnswerCheck(outcome="unsure", why="-", facts=1)}
            rows[m.item_name] = QuestionRecord(
                goldset="g", route="g", question_id=m.question_id, kind="k", index=i,
                must_abstain=False, evidence_spans=1, eval_version="1", **fields)
        plan = SequentialPlan(seed=int(rng.integers(2**32)), alpha=alpha, gaps=rate)
        population = Population(route="g", goldset="g", eval_version="1", questions=members,
                                anchors=[], sequential=plan)
        stopping = Stopping.of(population, [Floor("answer_match", FLOOR)])
        assert stopping is not None
        again = {n: r.model_copy(update={"reasked": True}) for n, r in rows.items()}
        stopping.replay(rows, again)
        reasked = len(stopping.recheck.names) if stopping.recheck else 0
        if stopping.stopped:
            stopped += 1
            calls += (stopping.stopped_at or 0) + reasked
            disagree += gaps > 0  # the full run does not decide; the stop passed it
        else:
            calls += size + reasked
    return {"size": size, "gaps": gaps, "kind": kind, "rate": rate, "runs": runs,
            "stopped": stopped / runs, "disagreement": disagree / runs,
            "calls_per_question": calls / runs / size}


def gap_table(rows: list[dict[str, object]], alpha: float) -> str:
    lines = [f"questions without a result, answer_match floor {FLOOR}, right {GOOD}, alpha "
             f"{alpha:g} (split over the floor and the bound): a stop that passes over one "
             "disagrees with the full run",
             f"{'N':>5} {'gaps':>5} {'kind':>7} {'stopped':>8} {'disagree':>9} {'calls':>6} "
             f"{'| no bound: stopped':>19} {'disagree':>9} {'calls':>6}"]
    for now, before in zip(rows[::2], rows[1::2], strict=True):
        lines.append(f"{now['size']:>5} {now['gaps']:>5} {now['kind']:>7} "
                     f"{now['stopped']:>8.3f} {now['disagreement']:>9.3f} "
                     f"{now['calls_per_question']:>6.2f} {before['stopped']:>19.3f} "
                     f"{before['disagreement']:>9.3f} {before['calls_per_question']:>6.2f}")
    return "\n".join(lines)


def gap_rows(runs: int, alpha: float) -> list[dict[str, object]]:
    """Each gap cell with the shipped bound and without it."""
    found = []
    for j, (size, gaps, kind) in enumerate(GAP_CELLS):
        for rate in (GAPS, 0.999):
            found.append(gap_cell(size, gaps, kind, runs, 8000 + j, rate, alpha))
    return found


COST_SIZE = 400
COSTS = [("clearly above", 0.98), ("clearly above", 0.95), ("clearly below", 0.60),
         ("clearly below", 0.70), ("just below", 0.75), ("just below", 0.78),
         ("just below", 0.80)]


def cost_cell(value: float, runs: int, seed: int, alpha: float = ALPHA,
              size: int = COST_SIZE) -> dict[str, object]:
    """`runs` replays of the shipped stop (`decision/sequential.Stopping`, its bound on the
    questions not asked and its re-check included) over a bar-style gate: one answer_match
    floor at FLOOR over `size` questions, exactly round(value * size) of them right, every
    answer the same when asked again (a stable system), each run in a fresh seed's order.
    The calls are the questions asked plus those asked again (a refused or too costly
    re-check: every question plus those asked again)."""
    from pytest_ragate.decision.population import Member, Population, SequentialPlan
    from pytest_ragate.decision.sequential import Stopping
    from pytest_ragate.scoring.answer_match import AnswerCheck
    from pytest_ragate.scoring.floor import Floor
    from pytest_ragate.scoring.records import QuestionRecord

    rng = np.random.default_rng(seed)
    members = [Member(question_id=f"q{i:03d}", question="?", kind="k", index=i, nodeid=None,
                      sealed=False, must_abstain=False, evidence_spans=1) for i in range(size)]
    right = set(rng.choice(size, round(value * size), replace=False).tolist())
    rows = {m.item_name: QuestionRecord(
        goldset="g", route="g", question_id=m.question_id, kind="k", index=i,
        must_abstain=False, evidence_spans=1, eval_version="1",
        answer_check=AnswerCheck(outcome="right" if i in right else "wrong", why="-", facts=1))
        for i, m in enumerate(members)}
    again = {n: r.model_copy(update={"reasked": True}) for n, r in rows.items()}
    asked, calls, stops = [], [], 0
    for _ in range(runs):
        plan = SequentialPlan(seed=int(rng.integers(2**32)), alpha=alpha)
        population = Population(route="g", goldset="g", eval_version="1", questions=members,
                                anchors=[], sequential=plan)
        stopping = Stopping.of(population, [Floor("answer_match", FLOOR)])
        assert stopping is not None
        stopping.replay(rows, again)
        reasked = len(stopping.recheck.names) if stopping.recheck else 0
        first = stopping.stopped_at if stopping.stopped else size
        stops += stopping.stopped
        asked.append(first)
        calls.append(first + reasked)
    return {"value": value, "size": size, "runs": runs, "stopped": stops / runs,
            "median_asked": float(np.median(asked)), "median_calls": float(np.median(calls)),
            "p90_calls": float(np.percentile(calls, 90))}


def cost_table(rows: list[dict[str, object]], alpha: float) -> str:
    lines = [f"bar-style gates, N = {COST_SIZE}, one answer_match floor {FLOOR}, alpha "
             f"{alpha:g}, a stable system: questions asked, and calls (re-asks included)",
             f"{'case':>14} {'true':>5} {'stopped':>8} {'asked':>6} {'calls':>6} {'p90':>5}"]
    for row in rows:
        lines.append(f"{row['case']:>14} {row['value']:>5.2f} {row['stopped']:>8.2f} "
                     f"{row['median_asked']:>6.0f} {row['median_calls']:>6.0f} "
                     f"{row['p90_calls']:>5.0f}")
    return "\n".join(lines)


def cost_rows(runs: int, alpha: float) -> list[dict[str, object]]:
    """Each bar-style cell (COSTS)."""
    return [{"case": case, **cost_cell(value, runs, 6000 + j, alpha)}
            for j, (case, value) in enumerate(COSTS)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000, help="seeded runs per cell")
    parser.add_argument("--quick", action="store_true", help="1,000 runs per cell")
    parser.add_argument("--alpha", type=float, default=ALPHA,
                        help="the error rate a floor may spend (0.05; a goldset with k floors "
                             "splits its budget, e.g. 0.05 / 3)")
    parser.add_argument("--drift-runs", type=int, default=2000,
                        help="seeded runs per drifting system (300 with --quick)")
    parser.add_argument("--gap-runs", type=int, default=200,
                        help="seeded runs per goldset with questions without a result (50 "
                             "with --quick)")
    parser.add_argument("--drifts-only", action="store_true",
                        help="only the table of drifting systems")
    parser.add_argument("--gaps-only", action="store_true",
                        help="only the table of questions without a result")
    parser.add_argument("--cost-runs", type=int, default=200,
                        help="seeded runs per bar-style gate (50 with --quick)")
    parser.add_argument("--costs-only", action="store_true",
                        help="only the table of bar-style gates' costs")
    parser.add_argument("--json", type=Path, default=HERE / "out" / "sequential.json")
    args = parser.parse_args()
    if args.costs_only:
        print(cost_table(cost_rows(50 if args.quick else args.cost_runs, args.alpha),
                         args.alpha))
        return 0
    if args.drifts_only:
        print(drift_table(drift_rows(300 if args.quick else args.drift_runs, args.alpha),
                          args.alpha))
        return 0
    if args.gaps_only:
        gapped = gap_rows(50 if args.quick else args.gap_runs, args.alpha)
        print(gap_table(gapped, args.alpha))
        return 0
    runs = 1000 if args.quick else args.runs
    drift_runs = 300 if args.quick else args.drift_runs
    alpha = args.alpha
    started = time.perf_counter()
    binary, continuous = [], []
    for i, size in enumerate(SIZES):
        for j, value in enumerate(VALUES):
            cell = simulate(binary_population(size, value), runs, 1000 * i + j, alpha)
            binary.append({"size": size, "value": value, **cell})
            print(table("", [binary[-1]], alpha).splitlines()[-1], flush=True)
    shapes = np.random.default_rng(25)
    for j, value in enumerate(VALUES):
        population = beta_population(CONTINUOUS_SIZE, value, shapes)
        cell = simulate(population, runs, 9000 + j, alpha)
        continuous.append({"size": CONTINUOUS_SIZE, "value": value, **cell})
    drifts = drift_rows(drift_runs, alpha)
    gapped = gap_rows(50 if args.quick else args.gap_runs, alpha)
    seconds = time.perf_counter() - started
    print()
    print(table(f"binary values (exactly round(p*N) ones), floor {FLOOR}, alpha {alpha:g}, "
                f"{runs} runs per cell", binary, alpha))
    print()
    print(table(f"continuous values (Beta, concentration {KAPPA:g}, mean shifted to p), "
                f"N = {CONTINUOUS_SIZE}", continuous, alpha))
    goals = []
    for value, most in GOALS.items():
        row = next(r for r in binary if r["size"] == 300 and r["value"] == value)
        met = row["median_asked"] <= most
        goals.append({"value": value, "goal": most, "median_asked": row["median_asked"],
                      "peer": PEER[value], "met": met})
    worst = max(binary + continuous, key=lambda r: r["disagreement"])
    print()
    for goal in goals:
        print(f"goal at {goal['value']:.2f} (N=300): median asked {goal['median_asked']:.0f} "
              f"<= {goal['goal']} (peer {goal['peer']}): {'MET' if goal['met'] else 'MISSED'}")
    within = all(r["disagreement"] <= alpha for r in binary + continuous)
    print(f"disagreement <= alpha ({alpha:g}) in every cell: {'MET' if within else 'MISSED'} "
          f"(worst {worst['disagreement']:.4f} at N={worst['size']}, p={worst['value']})")
    print()
    print(drift_table(drifts, alpha))
    drifted = [r for r in drifts[::2] if float(r["disagreement"]) > alpha]
    print(f"drifting systems, disagreement <= alpha ({alpha:g}): "
          + ("MET for every one" if not drifted else "MISSED for " + ", ".join(
              f"{r['label']} ({float(r['disagreement']):.3f})" for r in drifted)))
    print()
    print(gap_table(gapped, alpha))
    print(f"{seconds:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "runs_per_cell": runs, "floor": FLOOR, "alpha": alpha, "kappa": KAPPA,
        "seconds": round(seconds, 1), "binary": binary, "continuous": continuous,
        "goals": goals, "every_cell_within_alpha": within, "drift_runs": drift_runs,
        "drifts": drifts, "gaps": gapped}, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
