"""Intervals against hand-computed values."""

from __future__ import annotations

import math

import pytest

from pytest_ragate.stats import Z95, bootstrap_mean, wilson


def test_wilson_7_of_20_matches_the_closed_form_worked_by_hand() -> None:
    # p = 0.35, z = 1.95996: centre = (0.35 + z²/40) / (1 + z²/20) = 0.39603 / 1.19207;
    # half = z·sqrt(0.35·0.65/20 + z²/1600) / 1.19207 -> [0.1812, 0.5671]
    lo, hi = wilson(7, 20)
    assert lo == pytest.approx(0.18118, abs=1e-4)
    assert hi == pytest.approx(0.56712, abs=1e-4)


def test_wilson_edges_stay_inside_0_1_and_are_not_degenerate() -> None:
    lo, hi = wilson(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(Z95**2 / (10 + Z95**2))
    lo, hi = wilson(10, 10)
    assert hi == pytest.approx(1.0) and lo == pytest.approx(10 / (10 + Z95**2))
    with pytest.raises(ValueError):
        wilson(0, 0)


def test_bootstrap_is_deterministic_and_brackets_the_mean() -> None:
    values = [0.0, 0.5, 1.0, 1.0, 0.25, 0.75, 1.0, 0.0]
    first, second = bootstrap_mean(values), bootstrap_mean(list(reversed(values)))
    assert first == second
    mean = sum(values) / len(values)
    assert first[0] < mean < first[1]
    # the normal approximation of the same interval is close for n = 8
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values) / len(values))
    assert first[0] == pytest.approx(mean - Z95 * sd, abs=0.1)


def test_bootstrap_of_constant_values_is_a_point() -> None:
    assert bootstrap_mean([0.8] * 5) == pytest.approx((0.8, 0.8))
