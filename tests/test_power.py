"""`ragate power`: the figures against exact binomial sums written out by hand."""

from __future__ import annotations

import math

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.scoring.power import (
    WINDOW,
    binomial_tail,
    detectable_drop,
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
