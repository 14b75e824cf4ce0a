"""A sequential stop checked by asking its questions again (issue 39, case 1), pure: the
paired sign-flip test, the re-check a `Stopping` waits for, its replay by `decide_run`, and
the rows it leaves in a results file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ragate.decision.drift import reasked_size, reasking_order
from pytest_ragate.decision.population import Collected, Member, Population, SequentialPlan
from pytest_ragate.decision.run_decision import Arrived, decide_run
from pytest_ragate.decision.sequential import Stopping, asking_order
from pytest_ragate.outputs.results import read_results, results_lines
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.gap_bound import GAPS
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.sign_flip import (
    DRIFT_MISS,
    EXACT,
    drift_sample,
    fewest_moved,
    sign_flip_p,
)
from pytest_ragate.wording.runs import coverage_line
from pytest_ragate.wording.sequential import halt_line, not_needed
from tests.test_decision import member, node, population, scored, spec
from tests.test_sequential import arrive_again, asked_again

CITATION = Floor("citation_accuracy", 0.85)
N = 200
K = 38  # all right: the floor is decided after 26, the bound on the rest (default) after 38
S = 10  # the sample of those 38 asked again (`drift_sample` at the re-check's 0.125)


def cited(m: Member, right: bool) -> QuestionRecord:
    return scored(m).model_copy(update={"citations": 1, "citations_correct": int(right)})


def goldset(n: int = N, seed: int = 7, gaps: float = GAPS) -> tuple[Population, list[Member]]:
    members = [member(f"q{i:03d}", index=i) for i in range(n)]
    return population(members).model_copy(
        update={"sequential": SequentialPlan(seed=seed, alpha=0.05, gaps=gaps)}), members


# --- the test ---------------------------------------------------------------------------------


def test_right_or_wrong_pairs_are_mcnemars_exact_test() -> None:
    """12 answers right then wrong and none the other way: p = 2^-12, McNemar's exact
    one-sided tail; pairs answered the same weigh nothing."""
    assert sign_flip_p([1.0] * 12 + [0.0] * 14, seed="s") == pytest.approx(2.0 ** -12)
    tail = math.fsum(math.comb(10, i) for i in range(8, 11)) / 2**10
    assert sign_flip_p([1.0] * 8 + [-1.0] * 2, seed="s") == pytest.approx(tail)
    assert sign_flip_p([0.0] * 5, seed="s") == 1.0


def test_flakiness_both_ways_is_no_drift() -> None:
    assert sign_flip_p([1.0, -1.0] * 5, seed="s") > 0.5
    assert sign_flip_p([0.3, -0.3, 0.1, -0.2], seed="s") > 0.3


def test_past_the_exact_size_it_is_seeded_and_never_zero() -> None:
    many = [1.0] * (EXACT + 10)
    first = sign_flip_p(many, seed="run 1")
    assert first == sign_flip_p(many, seed="run 1") and 0 < first < 1e-3
    mixed = [0.4, -0.1, 0.2, 0.0, -0.3] * 6
    assert sign_flip_p(mixed, seed="a") == sign_flip_p(list(reversed(mixed)), seed="a")


def test_under_no_drift_the_test_rejects_at_most_alpha_of_the_time() -> None:
    """Pairs whose two answers are exchangeable (each question right with its own chance,
    answered twice independently): the share of p <= 0.05 stays at most 0.05."""
    import numpy as np

    rng = np.random.default_rng(3)
    rejected = 0
    runs = 2000
    for _ in range(runs):
        chance = rng.uniform(0.5, 1.0, size=14)
        first, again = rng.random(14) < chance, rng.random(14) < chance
        rejected += sign_flip_p((first.astype(float) - again).tolist(), seed="x") <= 0.05
    assert rejected / runs <= 0.05


def test_the_sample_is_the_fewest_that_catch_half_the_answers_moved() -> None:
    """s of the k answers a stop rests on: with half of them moved (13 of 26), a sample of 16
    holds the 6 moved pairs that refuse at 0.025 (2^-6 <= 0.025 < 2^-5) with chance >= 0.95,
    and one of 15 does not (the hypergeometric tail, scipy's); every one when no fewer do;
    none when asking them costs as much as the rest."""
    from scipy.stats import hypergeom

    assert (fewest_moved(0.05), fewest_moved(0.025), fewest_moved(0.0125)) == (5, 6, 7)
    assert drift_sample(26, 0.025) == 16
    for k, level in ((26, 0.025), (38, 0.05), (200, 0.0125)):
        s, m = drift_sample(k, level), fewest_moved(level)
        moved = math.ceil(k / 2)
        assert hypergeom(k, moved, s).sf(m - 1) >= 1 - DRIFT_MISS
        assert hypergeom(k, moved, s - 1).sf(m - 1) < 1 - DRIFT_MISS
    assert drift_sample(8, 0.025) == 8
    assert reasked_size(26, 200, 0.025) == 16  # and none when that costs as much as the rest
    assert reasked_size(26, 42, 0.025) is None and reasked_size(26, 43, 0.025) == 16
    names = [f"q{i}" for i in range(26)]
    order = reasking_order(7, "gs/ragate.toml", names)
    assert sorted(order) == sorted(names) and order != sorted(names)
    assert order == reasking_order(7, "gs/ragate.toml", list(reversed(names)))
    sample = reasking_order(7, "gs/ragate.toml", names, size=16)
    assert sample == order[:16]
    turns = {n: f"c{i // 2}" for i, n in enumerate(names)}  # 13 conversations of 2 turns
    whole = reasking_order(7, "gs/ragate.toml", names, turns, size=5)
    pairs = zip(whole[::2], whole[1::2], strict=True)
    assert len(whole) == 10 and all(turns[a] == turns[b] for a, b in pairs)


# --- the re-check a stop waits for ----------------------------------------------------------


def stopping_after(right: set[str] | None = None) -> tuple[Stopping, dict[str, QuestionRecord]]:
    """The goldset's rows (all right, but `right` when given) fed until every floor is
    decided: a stop waiting for its re-check."""
    pop, members = goldset()
    rows = {m.item_name: cited(m, right is None or m.item_name in right) for m in members}
    stopping = Stopping.of(pop, [CITATION])
    assert stopping is not None
    for name in stopping.order:
        stopping.offer(name, rows[name])
    return stopping, rows


def test_case_1_right_for_40_calls_then_wrong_is_refused() -> None:
    """All right for 38 answers: decided (its floor after 26 at 0.05, the bound on the rest
    after 38). A sample of 10 of them asked again at calls 39..48: the 8 from call 41 on
    come back wrong: refused, with the figures, whatever the sample and its order."""
    stopping, rows = stopping_after()
    assert stopping.rechecking and stopping.recheck is not None
    names = stopping.recheck.names
    assert len(names) == S and set(names) < set(stopping.order[:K])
    assert not stopping.stopped
    for call, name in enumerate(names, start=K + 1):
        stopping.offer_again(name, rows[name].model_copy(update={
            "reasked": True, "citations_correct": int(call <= 40)}))
    assert not stopping.stopped and stopping.halted is not None
    assert stopping.halted.kind == "answers changed"
    [drift] = stopping.halted.drifts
    assert (drift.toward, drift.away, drift.pairs) == (8, 0, S)
    assert "8 of 10 answers moved toward the floor, 0 away" in halt_line(stopping.halted)
    assert "depend on when it is asked" in halt_line(stopping.halted)


def test_the_same_answers_asked_again_take_the_stop() -> None:
    stopping, rows = stopping_after()
    assert stopping.recheck is not None
    for name in stopping.recheck.names:
        stopping.offer_again(name, rows[name].model_copy(update={"reasked": True}))
    assert stopping.stopped and stopping.stopped_at == K
    assert stopping.not_needed == frozenset(stopping.order[K:])


def test_flaky_answers_both_ways_take_the_stop() -> None:
    """Five of the first answers wrong come back right, five right come back wrong: a flaky
    system, not a drifting one."""
    pop, members = goldset()
    order = asking_order(7, pop.route, [m.item_name for m in members])
    wrong = set(order[:60:12])  # five wrong among the first answers
    stopping, rows = stopping_after(right=set(order) - wrong)
    assert stopping.recheck is not None
    names = stopping.recheck.names
    flipped = [n for n in names if n not in wrong][:len(wrong & set(names))]
    for name in names:
        right = (name in wrong) or (name not in flipped and rows[name].citations_correct)
        stopping.offer_again(name, rows[name].model_copy(update={
            "reasked": True, "citations_correct": int(bool(right))}))
    assert stopping.stopped, stopping.halted


@pytest.mark.parametrize("status", ["error", "skipped"])
def test_a_question_that_fails_when_asked_again_refuses_the_stop(status: str) -> None:
    stopping, rows = stopping_after()
    assert stopping.recheck is not None
    first = stopping.recheck.names[0]
    stopping.offer_again(first, rows[first].model_copy(update={
        "reasked": True, "status": status, "error": "boom"}))
    assert stopping.halted is not None
    assert (stopping.halted.kind, stopping.halted.names) == ("reask failed", (first,))
    assert first in halt_line(stopping.halted)
    assert not stopping.stopped


def test_a_judged_floor_is_rechecked_on_its_scores() -> None:
    """Faithfulness scores that each fall by 0.4 when asked again: every pair moves toward
    the floor."""
    pop, members = goldset()
    faithful = Floor("faithfulness", 0.5)
    rows = {m.item_name: scored(m).model_copy(update={"metrics": {"faithfulness": 0.95}})
            for m in members}
    stopping = Stopping.of(pop, [faithful])
    assert stopping is not None
    for name in stopping.order:
        stopping.offer(name, rows[name])
    assert stopping.recheck is not None
    for name in stopping.recheck.names:
        stopping.offer_again(name, rows[name].model_copy(update={
            "reasked": True, "metrics": {"faithfulness": 0.55}}))
    assert stopping.halted is not None and stopping.halted.kind == "answers changed"
    assert [d.floor for d in stopping.halted.drifts] == ["floor[faithfulness]"]
    assert "floor[faithfulness]" in halt_line(stopping.halted)


def test_a_stop_past_half_the_goldset_asks_the_rest_instead() -> None:
    pop, members = goldset(n=32, gaps=0.5)  # a lax bound: at the default 32 never stop
    rows = {m.item_name: cited(m, True) for m in members}
    stopping = Stopping.of(pop, [Floor("citation_accuracy", 0.9)])  # decided after 23
    assert stopping is not None
    stopping.replay(rows, asked_again(rows))
    assert not stopping.stopped and stopping.halted is not None
    assert (stopping.halted.kind, stopping.halted.asked, stopping.halted.of) == (
        "recheck costs", 23, 32)  # a sample of 9 asked again: as many as the 9 left
    assert "would cost as much as the 9 left" in halt_line(stopping.halted)


# --- the replay: decide_run and the results file -------------------------------------------


def arrived_after_stop(changed: dict[str, dict[str, object]] | None = None,
                       ) -> tuple[Collected, Arrived]:
    """A live run's rows as the stop left them: the 38 questions asked, a sample of 10 of
    them asked again (with `changed` answers), and the 162 after skipped as not needed."""
    pop, members = goldset()
    rows = {m.item_name: cited(m, True) for m in members}
    order = asking_order(7, pop.route, list(rows))
    sample = reasking_order(7, pop.route, order[:K], size=S)
    arrived = arrive_again(Arrived(), asked_again({n: rows[n] for n in sample}, changed))
    for m in members:
        row = rows[m.item_name]
        if order.index(m.item_name) >= K:
            row = row.model_copy(update={"status": "skipped", "not_needed": True,
                                         "error": "Skipped: " + not_needed(K, N)})
        arrived.records[node(m)] = row
    return Collected(floors=[spec(CITATION)], populations=[pop]), arrived


def test_the_decision_replays_the_check_and_keeps_its_rows() -> None:
    collected, arrived = arrived_after_stop()
    [run] = decide_run(collected, arrived).runs
    assert run.verdicts[0].outcome == "passed" and f"decided after {K}" in run.verdicts[0].message
    assert run.sequential is not None and run.sequential.stopped
    assert len(run.sequential.reasked) == S and all(r.reasked for r in run.sequential.reasked)
    assert len(run.records) == N  # each question's own row, none asked again among them
    assert "asked again answered as before" in coverage_line(run)
    assert "does not depend on when it is asked" in coverage_line(run)


def test_a_replay_whose_check_refused_fails_every_skip_as_missing() -> None:
    """Answers asked again that turned wrong: the replay refuses the stop, so the questions
    skipped as not needed are missing results, and the floor fails."""
    pop, members = goldset()
    order = asking_order(7, pop.route, [m.item_name for m in members])
    collected, arrived = arrived_after_stop({n: {"citations_correct": 0} for n in order[:K]})
    [run] = decide_run(collected, arrived).runs
    assert run.verdicts[0].outcome == "failed"
    assert run.sequential is not None and not run.sequential.stopped
    assert run.sequential.why is not None and run.sequential.why.kind == "answers changed"
    assert "the answers changed when asked again" in coverage_line(run)
    assert {g.kind for g in run.gaps} == {"skipped"}


def test_a_check_whose_answers_never_came_takes_no_stop() -> None:
    collected, arrived = arrived_after_stop()
    dropped = next(k for k in arrived.records if k.endswith("[again]"))
    del arrived.records[dropped]
    [run] = decide_run(collected, arrived).runs
    assert run.verdicts[0].outcome == "failed"
    assert run.sequential is not None and run.sequential.why is not None
    assert run.sequential.why.kind == "reask never came"
    assert "asked again to check the stop has no result" in coverage_line(run)


def test_the_results_file_keeps_the_rows_asked_again_apart(tmp_path: Path) -> None:
    """Written after the goldset's own rows, marked; read back apart from them (no reader of
    rows counts them), and counted by the trailer."""
    collected, arrived = arrived_after_stop()
    path = tmp_path / "out.jsonl"
    path.write_text(results_lines(decide_run(collected, arrived).runs), encoding="utf-8")
    found = read_results(path)
    assert len(found.rows) == N and len(found.reasked) == S
    assert not any(row.reasked for _, row in found.rows)
    assert not found.unvouched and not found.problems
