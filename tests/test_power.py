"""`ragate power`: the figures against exact binomial sums written out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.scoring.power import (
    WINDOW,
    binomial_tail,
    detectable_drop,
    needed_for_mean,
    pass_probability,
    passing_rate,
    questions_needed,
    smallest_passing,
)
from pytest_ragate.scoring.stats import mcnemar_exact, wilson


def exact_tail(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(max(k, 0), n + 1))


@pytest.mark.parametrize(("k", "n", "p"), [(0, 5, 0.3), (8, 10, 0.9), (3, 3, 0.5),
                                           (40, 60, 0.7), (61, 60, 0.7), (170, 200, 0.88)])
def test_the_binomial_tail_is_the_exact_sum(k: int, n: int, p: float) -> None:
    assert binomial_tail(k, n, p) == pytest.approx(exact_tail(k, n, p), rel=1e-9, abs=1e-12)


def test_a_hand_worked_floor() -> None:
    # 0.80 over 10 questions needs 8 right; at a true 0.90 that happens
    # C(10,8)·.9^8·.1^2 + C(10,9)·.9^9·.1 + .9^10 = 0.1937 + 0.3874 + 0.3487 = 0.9298
    assert smallest_passing(10, 0.80, strict=False) == 8
    assert pass_probability(0.90, 10, 0.80, strict=False) == pytest.approx(0.9298, abs=1e-4)


@pytest.mark.parametrize("n", [5, 20, 73, 400])
def test_strict_needs_the_wilson_lower_bound_to_reach_the_floor(n: int) -> None:
    by_hand = next((k for k in range(n + 1) if wilson(k, n)[0] >= 0.8), None)
    assert smallest_passing(n, 0.8, strict=True) == by_hand
    assert smallest_passing(n, 0.8, strict=False) == math.ceil(0.8 * n)


def test_a_floor_out_of_reach_passes_at_no_rate() -> None:
    assert smallest_passing(3, 0.8, strict=True) is None  # 3/3 has a lower bound of 0.44
    assert passing_rate(3, 0.8, strict=True) is None
    assert pass_probability(1.0, 3, 0.8, strict=True) == 0.0


@pytest.mark.parametrize(("floor", "expect", "strict"), [(0.5, 0.6, False), (0.8, 0.88, False),
                                                         (0.9, 0.95, False), (0.7, 0.8, True)])
def test_questions_needed_is_where_the_target_holds_from_on(floor: float, expect: float,
                                                            strict: bool) -> None:
    needed = questions_needed(floor, expect, strict)
    assert needed is not None

    def chance(n: int) -> float:
        k = next((k for k in range(n + 1)
                  if (wilson(k, n)[0] if strict else k / n) >= floor), n + 1)
        return exact_tail(k, n, expect)

    assert all(chance(n) >= 0.8 for n in range(needed, needed + WINDOW))
    assert chance(needed - 1) < 0.8 or needed == 1


def test_the_sawtooth_is_not_mistaken_for_enough() -> None:
    # one question right of one passes a 0.90 floor 95% of the time at a true 0.95, but five
    # of five only 77%: the answer is where the chance stays above 80%
    assert pass_probability(0.95, 1, 0.9, strict=False) > 0.8
    assert pass_probability(0.95, 5, 0.9, strict=False) < 0.8
    assert questions_needed(0.9, 0.95, strict=False) == 20


def test_no_number_of_questions_passes_a_floor_above_the_true_rate() -> None:
    assert questions_needed(0.8, 0.8, strict=False) is None
    assert questions_needed(0.8, 0.7, strict=True) is None


@pytest.mark.parametrize("n", [12, 40, 150])
def test_the_passing_rate_is_where_the_chance_crosses_the_target(n: int) -> None:
    rate = passing_rate(n, 0.8, strict=False)
    assert rate is not None
    assert pass_probability(rate, n, 0.8, strict=False) == pytest.approx(0.8, abs=1e-6)
    assert pass_probability(rate - 1e-3, n, 0.8, strict=False) < 0.8


def test_a_detectable_drop_by_hand() -> None:
    # 100 pairs, 15 discordant: McNemar calls 12 right->wrong of 15 significant (p 0.035), not
    # 11 (p 0.118). A drop d makes a discordant pair go right->wrong with q = 1/2 + d/0.30.
    assert mcnemar_exact(12, 3) < 0.05 < mcnemar_exact(11, 4)
    found = detectable_drop(100, 0.15)
    assert found.drop is not None
    q = 0.5 + found.drop / (2 * 0.15)
    assert exact_tail(12, 15, q) == pytest.approx(0.8, abs=1e-6)
    smaller = 0.5 + (found.drop - 0.005) / (2 * 0.15)
    assert exact_tail(12, 15, smaller) < 0.8


def test_too_few_discordant_pairs_detect_nothing() -> None:
    assert detectable_drop(20, 0.2).drop is None  # 4 discordant: even 4 of 4 has p 0.125
    assert detectable_drop(100, 0.001).drop is None


def test_the_command() -> None:
    runner = CliRunner()
    got = runner.invoke(main, ["power", "--floor", "0.9", "--expect", "0.95"])
    assert got.exit_code == 0, got.output
    assert got.output.startswith("20 units: a floor of 0.90 (point) passes 80% of the time")
    got = runner.invoke(main, ["power", "--floor", "0.8", "--n", "3", "--ci", "strict"])
    assert got.exit_code == 1 and "cannot pass over 3 units" in got.output
    got = runner.invoke(main, ["power", "--pairs", "100", "--discordant", "0.15"])
    assert got.exit_code == 0 and "detects a drop of 0.1" in got.output
    got = runner.invoke(main, ["power", "--floor", "0.8"])
    assert got.exit_code == 2 and "give --floor with --expect or with --n" in got.output


# --- what every floor and regression check says it can tell apart ------------------------------


def test_a_proportion_floor_states_the_rate_it_passes_at_exactly() -> None:
    from pytest_ragate.decision.floors import decide
    from pytest_ragate.decision.rules import Strictness
    from pytest_ragate.scoring.floor import Floor
    from tests.test_statistical_gates import abstention_rows

    rows = abstention_rows(34, 6)  # 40 questions
    floor = Floor("abstention_accuracy", 0.80)
    point = decide(floor, "g", rows).passes_at
    strict = decide(floor, "g", rows, strictness=Strictness(ci="strict")).passes_at
    assert point is not None and strict is not None
    assert (point.value, point.approximate) == (passing_rate(40, 0.8, strict=False), False)
    assert strict.value == passing_rate(40, 0.8, strict=True) and strict.value > point.value
    assert str(point) == f"{point.value:.2f}"


def test_a_mean_floor_states_a_normal_approximation_with_its_spread() -> None:
    from statistics import NormalDist, stdev

    from pytest_ragate.scoring.power import passes_at

    values = [1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0]
    got = passes_at("mean", len(values), values, 0.6, strict=False)
    assert got is not None and got.approximate and str(got).startswith("≈")
    by_hand = 0.6 + NormalDist().inv_cdf(0.8) * stdev(values) / len(values) ** 0.5
    assert got.value == pytest.approx(by_hand)
    assert passes_at("mean", 1, [1.0], 0.6, strict=False) is None
    assert passes_at("mean", 3, [0.7, 0.7, 0.7], 0.6, strict=False) is None  # no spread


def test_a_mcnemar_check_states_the_drop_it_detects() -> None:
    from pytest_ragate.decision.regressions import check
    from pytest_ragate.scoring.records import QuestionScores

    base = {f"q{i}": QuestionScores(abstention_correct=i >= 2) for i in range(40)}
    now = {f"q{i}": QuestionScores(abstention_correct=not (2 <= i < 12)) for i in range(40)}
    result = check("g", "abstention_accuracy", base, now, alpha=0.05)
    assert result.detects == detectable_drop(40, 12 / 40, alpha=0.05).drop
    assert result.detects is not None and 0 < result.detects < 12 / 40


def test_the_tables_show_both() -> None:
    from pytest_ragate.decision.floors import decide
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.outputs.reports import floors_table, regressions_table
    from pytest_ragate.scoring.floor import Floor
    from tests.test_statistical_gates import abstention_rows

    rows = abstention_rows(34, 6)
    run = GoldsetRun(name="g", eval_version="1", records=rows,
                     verdicts=[decide(Floor("abstention_accuracy", 0.8), "g", rows)])
    table = floors_table([run], "simple")
    assert "passes 80% at" in table
    assert f"{passing_rate(40, 0.8, strict=False):.2f}" in table.splitlines()[2]
    assert "detects a drop of" in regressions_table([run], "simple")


def test_the_command_over_a_goldset_and_its_results(tmp_path: Path) -> None:
    from tests.conftest import saved_results, write_goldset
    from tests.test_statistical_gates import abstention_rows

    root = write_goldset(tmp_path / "gs", floors="[floors]\nabstention_accuracy = 0.5\n"
                         "citation_accuracy = 0.99\n")
    results = tmp_path / "r.jsonl"
    rows = [r.model_copy(update={"goldset": "mini"}) for r in abstention_rows(34, 6)]
    results.write_text(saved_results(rows))
    got = CliRunner().invoke(main, ["power", str(root), "--results", str(results)])
    assert got.exit_code == 0, got.output
    line = next(x for x in got.output.splitlines() if x.startswith("abstention_accuracy"))
    assert line.split() == ["abstention_accuracy", "0.50", "0.85", "40",
                            f"{passing_rate(40, 0.5, strict=False):.2f}",
                            str(questions_needed(0.5, 0.85, strict=False))]
    # nothing cited: citation accuracy has no value, so nothing to say
    line = next(x for x in got.output.splitlines() if x.startswith("citation_accuracy"))
    assert line.split()[2:] == ["—", "0", "—", "—"]
    missing = CliRunner().invoke(main, ["power", str(root)])
    assert missing.exit_code == 2 and "GOLDSET needs --results" in missing.output


def test_no_n_under_ragate_min_n_is_enough() -> None:
    """A floor over fewer than ragate_min_n units is refused whatever its value, so no
    figure of `ragate power` may say fewer are enough (it said 1 unit for 0.99 over 0.50)."""
    assert questions_needed(0.5, 0.99, strict=False) == 1
    assert questions_needed(0.5, 0.99, strict=False, min_n=30) == 30
    assert questions_needed(0.9, 0.95, strict=False, min_n=5) == 20  # past it: unchanged
    assert passing_rate(10, 0.5, strict=False, min_n=30) is None
    assert needed_for_mean([0.9, 1.0, 0.8, 1.0], 0.5, strict=False, min_n=30) == 30
    runner = CliRunner()
    got = runner.invoke(main, ["power", "--floor", "0.5", "--expect", "0.99", "--min-n", "30"])
    assert got.exit_code == 0 and got.output.startswith("30 units: ") and (
        "(ragate_min_n = 30 refuses a floor over fewer)") in got.output, got.output
    got = runner.invoke(main, ["power", "--floor", "0.5", "--n", "10", "--min-n", "30"])
    assert got.exit_code == 1 and "cannot pass over 10 units (ragate_min_n = 30" in got.output


def test_ragate_min_n_is_read_from_the_ini_file(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import saved_results, write_goldset
    from tests.test_statistical_gates import abstention_rows

    (tmp_path / "pytest.ini").write_text("[pytest]\nragate_min_n = 50\n")
    monkeypatch.chdir(tmp_path)
    root = write_goldset(tmp_path / "gs", floors="[floors]\nabstention_accuracy = 0.5\n")
    results = tmp_path / "r.jsonl"
    rows = [r.model_copy(update={"goldset": "mini"}) for r in abstention_rows(34, 6)]
    results.write_text(saved_results(rows))
    got = CliRunner().invoke(main, ["power", str(root), "--results", str(results)])
    assert got.exit_code == 0, got.output
    assert "ragate_min_n = 50" in got.output.splitlines()[0]
    line = next(x for x in got.output.splitlines() if x.startswith("abstention_accuracy"))
    # 40 questions, under 50: it passes at no rate, and needs 50
    assert line.split() == ["abstention_accuracy", "0.50", "0.85", "40", "—", "50"]


def test_the_command_says_what_no_n_decides_below_its_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass rate (the repeats it needs, validate's words) and a floor over a metric the
    project defines that failed on a row (the gate's words) in one call of the command; and
    the goldset alone: the pass rate at the repeats a run asks, exit 1 when too few."""
    from pytest_ragate.scoring.custom import define
    from pytest_ragate.wording.pass_rate import too_few_repeats
    from tests.conftest import BASE_TOML, saved_results, write_goldset
    from tests.test_repeats import record

    monkeypatch.chdir(tmp_path)
    (tmp_path / "conftest.py").write_text(
        'import pytest_ragate as ragate\n\n@ragate.metric("polite")\n'
        "def polite(question, answer, expected):\n    return True\n")
    write_goldset(tmp_path / "gs", toml=BASE_TOML.replace('"7"\n', '"7"\nrepeat = 5\n', 1),
                  floors="[floors]\npolite = 0.5\n\n[floors.question]\npass_rate = 0.8\n")
    rows = [record(q, k, True, i).model_copy(update={
        "goldset": "mini", "eval_version": "7", "custom": {"polite": 1.0}})
        for i, q in enumerate(["q1", "q2", "q3", "q4"]) for k in range(1, 6)]
    rows[3] = rows[3].model_copy(update={"custom": {}, "custom_errors": {"polite": "raised X"}})
    (tmp_path / "r.jsonl").write_text(saved_results(rows))
    try:
        got = CliRunner().invoke(main, ["power", "gs", "--results", "r.jsonl"])
        alone = CliRunner().invoke(main, ["power", "gs"])  # the goldset's own repeat = 5
    finally:
        define([])  # each call declared the conftest's metric, for the process
    assert got.exit_code == 0, got.output
    lines = got.output.splitlines()
    assert next(x for x in lines if x.startswith("question_pass_rate")).split()[-4:] == [
        "—", "repeat", "≥", "20"]
    assert "question_pass_rate: floors.question.pass_rate: a pass rate of 0.8 over 4 questions " \
           "needs repeat ≥ 20" in got.output and "asks each question 5 times" in got.output
    assert ("polite: not decided: polite 1.00 over the other 19, metric polite failed on 1 "
            "question: raised X (q1[r4])") in got.output
    assert alone.exit_code == 1, alone.output
    assert alone.output.splitlines() == [
        "mini: " + too_few_repeats(0.8, 5, 4, 20),
        "its other floors: with --results R (a --ragate-results file of it)"]
