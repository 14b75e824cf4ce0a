"""The sequential test of a finite population's mean (scoring/confidence_sequence.py): its
error rate (exactly, over every order of small populations, and on seeded simulations near
the null), that one run and many runs follow the same rule, that the whole population decides
exactly, and that bad input is refused."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from pytest_ragate.scoring.confidence_sequence import (
    TIE,
    MeanTest,
    confidence_interval,
    grid_undecided,
    stopping_times,
)


def every_order(size: int, ones: int) -> np.ndarray:
    """Every distinct order of a population of `ones` ones and size - ones zeros: under a
    uniformly random order each row is equally likely, so shares of rows are probabilities."""
    rows = []
    for where in itertools.combinations(range(size), ones):
        row = np.zeros(size)
        row[list(where)] = 1.0
        rows.append(row)
    return np.array(rows)


def shuffled(population: np.ndarray, runs: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([rng.permutation(population) for _ in range(runs)])


def run_one(values, *, population: int, null: float, alpha: float) -> MeanTest:
    test = MeanTest(population=population, null=null, alpha=alpha)
    for y in values:
        test.observe(float(y))
    return test


# --- the error rate -------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.5])
@pytest.mark.parametrize("size", [6, 9, 12])
def test_exact_error_rate_over_every_order_is_at_most_alpha(size, alpha):
    """For 0/1 populations small enough to list every order, the exact chance of a wrong
    decision: "above" when the mean is at most the null, "below" when it is at least the
    null, for nulls at, between and beside the possible means. Large alphas make the capitals
    cross often, so the bound is tested where it binds."""
    crossings = 0
    for ones in range(size + 1):
        orders = every_order(size, ones)
        mean = ones / size
        for null in sorted({mean, max(0.0, mean - 0.5 / size), min(1.0, mean + 0.5 / size),
                            max(0.0, mean - 1.5 / size), min(1.0, mean + 1.5 / size)}):
            _, decision = stopping_times(orders, population=size, null=null, alpha=alpha)
            if mean <= null + TIE:
                assert (decision == 1).mean() <= alpha, (ones, null)
            if mean >= null - TIE:
                assert (decision == -1).mean() <= alpha, (ones, null)
            crossings += int((decision != 0).sum())
    assert crossings > 0


def test_simulated_error_rate_near_the_floor_stays_within_alpha():
    """Seeded runs of binary and continuous populations at and beside the floor: the share of
    runs decided against the full run stays under alpha plus three standard errors (fixed
    seeds: the figures are the same on every run)."""
    runs, alpha, floor, size = 400, 0.05, 0.85, 200
    slack = alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    rng = np.random.default_rng(7)
    for true in (0.83, 0.845, 0.85, 0.855, 0.87):
        binary = np.zeros(size)
        binary[:round(true * size)] = 1.0
        spread = np.clip(rng.normal(true, 0.1, size), 0.0, 1.0)
        continuous = np.clip(spread + (true - spread.mean()), 0.0, 1.0)
        for population in (binary, continuous):
            orders = shuffled(population, runs, seed=int(true * 1000))
            _, decision = stopping_times(orders, population=size, null=floor, alpha=alpha)
            full = 1 if population.mean() >= floor - TIE else -1
            wrong = ((decision != 0) & (decision != full)).mean()
            assert wrong <= slack, (true, population.mean(), wrong)


def test_far_from_the_floor_it_decides_early_and_rightly():
    """The point of it: a clearly good or clearly bad goldset is decided long before the end
    (the benchmark measures how long; here only that it happens)."""
    for true, side in ((0.98, 1), (0.60, -1)):
        population = np.zeros(300)
        population[:round(true * 300)] = 1.0
        at, decision = stopping_times(shuffled(population, 200, seed=3), population=300,
                                      null=0.85, alpha=0.05)
        assert (decision == side).all()
        assert np.median(at) < 100


# --- one rule -------------------------------------------------------------------------------

def test_mean_test_follows_the_rule_of_stopping_times_on_many_seeded_runs():
    rng = np.random.default_rng(11)
    compared = decided = 0
    for case in range(60):
        size = int(rng.integers(1, 80))
        length = int(rng.integers(1, size + 1))
        null = float(rng.choice([0.0, 1.0, rng.uniform(), round(rng.uniform(), 2)]))
        alpha = float(rng.choice([0.01, 0.05, 0.2]))
        if case % 2:
            population = (rng.uniform(size=size) < rng.uniform()).astype(float)
        else:
            population = rng.beta(2.0, 0.5, size)
        orders = shuffled(population, 5, seed=case)[:, :length]
        at, decision = stopping_times(orders, population=size, null=null, alpha=alpha)
        for row, row_at, row_decision in zip(orders, at, decision, strict=True):
            test = run_one(row, population=size, null=null, alpha=alpha)
            expected = {1: "above", -1: "below", 0: None}[int(row_decision)]
            assert test.decided == expected, (case, row)
            assert test.decided_at == (int(row_at) if row_decision else None)
            assert test.asked == length
            assert test.mean == pytest.approx(row.mean())
            compared += 1
            decided += bool(row_decision)
    assert compared == 300 and 0 < decided < compared


def test_grid_undecided_is_one_mean_test_per_null():
    """The nulls a floor's interval keeps (`scoring/stopping.ratio_interval`): each null's
    own values, fed to its own test side by side, leave it undecided exactly when a
    `MeanTest` fed them one by one does; more values than the population are refused."""
    rng = np.random.default_rng(5)
    nulls = [i / 20 for i in range(21)]
    for case in range(12):
        size = int(rng.integers(5, 60))
        units = rng.integers(0, 3, size=int(rng.integers(1, size + 1)))
        right = [float(rng.uniform(0, n)) for n in units]
        values = [[(c - m * n + m * 2) / 2 for m in nulls] for c, n in zip(right, units,
                                                                         strict=True)]
        expected = [m for j, m in enumerate(nulls)
                    if run_one(np.array([v[j] for v in values]), population=size, null=m,
                               alpha=0.05).decided is None]
        assert grid_undecided(nulls, values, population=size, alpha=0.05) == expected, case
    with pytest.raises(ValueError, match="exceed the population of 2"):
        grid_undecided([0.5], [[0.5]] * 3, population=2, alpha=0.05)


def test_stopping_times_leaves_runs_undecided_when_the_values_run_out():
    population = np.zeros(300)
    population[:255] = 1.0
    at, decision = stopping_times(shuffled(population, 50, seed=5)[:, :20], population=300,
                                  null=0.85, alpha=0.05)
    assert ((decision == 0) == (at == 0)).all()
    assert (decision == 0).any()
    assert at.max() <= 20


# --- the whole population decides exactly ---------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 7, 40])
def test_the_whole_population_decides_exactly_unless_its_mean_is_the_null(size):
    rng = np.random.default_rng(size)
    for _ in range(30):
        values = rng.choice([0.0, 1.0, rng.uniform()], size=size)
        null = float(rng.choice([values.mean(), rng.uniform(), 0.0, 1.0]))
        test = run_one(values, population=size, null=null, alpha=0.05)
        if abs(values.sum() / size - null) <= TIE:
            assert test.decided_at is None or test.decided_at < size  # no certain decision
        elif test.decided_at is None or test.decided_at == size:
            assert test.decided == ("above" if values.mean() > null else "below")
        assert test.decided is not None or abs(values.sum() / size - null) <= TIE


def test_a_mean_at_exactly_the_null_is_proved_by_no_certain_fact():
    """At a tie the certain bounds never decide: what decides is a capital crossing, which
    happens in at most alpha of the orders for each side; the rest run to the end and the full
    run decides. 3 of 10 against 0.1 * 3 (0.30000000000000004) is a tie within float noise."""
    for size, ones, null in ((10, 3, 0.1 * 3), (12, 6, 0.5), (20, 17, 0.85)):
        orders = every_order(size, ones)
        _, decision = stopping_times(orders, population=size, null=null, alpha=0.05)
        assert (decision == 1).mean() <= 0.05 and (decision == -1).mean() <= 0.05
        assert (decision == 0).mean() >= 0.9
    one = run_one([0.5], population=1, null=0.5, alpha=0.05)
    assert one.decided is None and one.decided_at is None and one.mean == 0.5


def test_certain_facts_decide_before_the_end():
    """Once the values seen settle the question whatever the rest are, it is decided:
    3 ones of 4 against 0.5 are more than half, and so are all ones whatever follows."""
    test = run_one([1, 1, 1], population=4, null=0.5, alpha=1e-9)
    assert (test.decided, test.decided_at) == ("above", 3)
    test = run_one([0, 0, 0], population=4, null=0.5, alpha=1e-9)
    assert (test.decided, test.decided_at) == ("below", 3)
    assert run_one([1], population=1, null=0.99, alpha=1e-9).decided == "above"
    assert run_one([0.4], population=1, null=0.41, alpha=1e-9).decided == "below"


def test_a_decision_stays_once_made():
    test = run_one([1.0] * 40, population=300, null=0.85, alpha=0.05)
    assert test.decided == "above"
    at = test.decided_at
    assert at is not None and at < 40
    for _ in range(60):
        test.observe(0.0)
    assert (test.decided, test.decided_at, test.asked) == ("above", at, 100)
    assert test.mean == pytest.approx(0.4)


# --- the confidence interval ----------------------------------------------------------------

def test_confidence_interval_holds_the_true_mean_and_shrinks_to_it():
    rng = np.random.default_rng(21)
    population = np.clip(rng.normal(0.8, 0.15, 120), 0.0, 1.0)
    true = float(population.mean())
    held = widths = 0
    for seed in range(40):
        order = shuffled(population, 1, seed=seed)[0]
        previous = 1.0
        for t in (10, 40, 90):
            low, high = confidence_interval(order[:t], population=120, alpha=0.05)
            held += low <= true <= high
            widths += high - low < previous
            previous = high - low
        low, high = confidence_interval(order, population=120, alpha=0.05)
        assert low == pytest.approx(true) and high == pytest.approx(true)
    assert held >= 0.9 * 120 and widths >= 0.9 * 120


def test_confidence_interval_agrees_with_the_test():
    """A null the test proved the mean above lies below the interval (to one grid step)."""
    values = [1.0] * 30
    test = run_one(values, population=300, null=0.85, alpha=0.05)
    low, high = confidence_interval(values, population=300, alpha=0.05)
    assert test.decided == "above" and low >= 0.85 - 1e-3 and high == 1.0
    assert confidence_interval([], population=5, alpha=0.05) == (0.0, 1.0)


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "settings"), [
    ("population", {"population": 0, "null": 0.5, "alpha": 0.05}),
    ("population", {"population": -3, "null": 0.5, "alpha": 0.05}),
    ("population", {"population": 2.0, "null": 0.5, "alpha": 0.05}),
    ("population", {"population": True, "null": 0.5, "alpha": 0.05}),
    ("null", {"population": 10, "null": 1.5, "alpha": 0.05}),
    ("null", {"population": 10, "null": -0.1, "alpha": 0.05}),
    ("null", {"population": 10, "null": math.nan, "alpha": 0.05}),
    ("alpha", {"population": 10, "null": 0.5, "alpha": 0.0}),
    ("alpha", {"population": 10, "null": 0.5, "alpha": 1.0}),
    ("alpha", {"population": 10, "null": 0.5, "alpha": "0.05"}),
])
def test_bad_settings_are_refused_by_name(field, settings):
    with pytest.raises(ValueError, match=f"^{field} must"):
        MeanTest(**settings)
    with pytest.raises(ValueError, match=f"^{field} must"):
        stopping_times(np.ones((1, 1)), **settings)


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan, math.inf, True, "1", None])
def test_a_value_outside_zero_to_one_is_refused_and_not_counted(value):
    test = MeanTest(population=5, null=0.5, alpha=0.05)
    test.observe(1.0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        test.observe(value)
    assert test.asked == 1 and test.mean == 1.0


def test_more_values_than_the_population_are_refused():
    test = run_one([1.0, 0.0], population=2, null=0.5, alpha=0.05)
    with pytest.raises(ValueError, match="all 2 values"):
        test.observe(1.0)
    with pytest.raises(ValueError, match="exceed the population"):
        stopping_times(np.ones((2, 3)), population=2, null=0.5, alpha=0.05)
    with pytest.raises(ValueError, match="exceed the population"):
        confidence_interval([1.0] * 3, population=2, alpha=0.05)


def test_bad_matrices_are_refused_with_where():
    with pytest.raises(ValueError, match="runs x T"):
        stopping_times(np.ones(3), population=3, null=0.5, alpha=0.05)
    values = np.ones((2, 3))
    values[1, 2] = 1.5
    with pytest.raises(ValueError, match=r"got 1\.5 at index \(1, 2\)"):
        stopping_times(values, population=3, null=0.5, alpha=0.05)
    with pytest.raises(ValueError, match=r"got -1\.0 at index 1$"):
        confidence_interval([0.5, -1.0], population=3, alpha=0.05)
