"""Intervals against hand-computed values."""

from __future__ import annotations

import math
import statistics

import pytest

from pytest_ragate.scoring.stats import Z95, bootstrap_mean, mcnemar_exact, paired_bootstrap, wilson


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


def test_mcnemar_exact_against_the_binomial_worked_by_hand() -> None:
    # 10 right→wrong, 2 wrong→right: 12 discordant pairs, each a fair coin under no change.
    # P(X <= 2 | Binomial(12, 1/2)) = (1 + 12 + 66) / 4096 = 79/4096; two-sided: 158/4096.
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096, abs=1e-15)
    assert mcnemar_exact(2, 10) == mcnemar_exact(10, 2)
    # 6 vs 0: 2 · (1/64) = 0.03125, the smallest n at which a clean sweep is significant
    assert mcnemar_exact(6, 0) == pytest.approx(0.03125)
    assert mcnemar_exact(5, 0) == pytest.approx(0.0625)
    # no discordant pairs, or a tie: no evidence of change at all
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(7, 7) == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_mcnemar_exact_matches_the_chi_square_approximation_for_many_pairs() -> None:
    # 60 vs 40 discordant pairs: continuity-corrected chi² = (|60-40|-1)² / 100 = 3.61,
    # p = P(chi²₁ > 3.61) = 2·(1 - Φ(1.9)) = 0.0574; the exact test gives 0.0569.
    chi_p = 2 * (1 - statistics.NormalDist().cdf(math.sqrt(3.61)))
    assert chi_p == pytest.approx(0.0574, abs=1e-4)
    assert mcnemar_exact(60, 40) == pytest.approx(chi_p, abs=2e-3)


def test_paired_bootstrap_sees_a_consistent_drop_and_not_a_wash() -> None:
    # 12 questions fell from 1.0 to 0.0, 2 rose, 30 unchanged: a real drop.
    drop = [(1.0, 1.0, 0.0, 1.0)] * 12 + [(0.0, 1.0, 1.0, 1.0)] * 2 + [(1.0, 1.0, 1.0, 1.0)] * 30
    change, p = paired_bootstrap(drop)
    assert change == pytest.approx((32 - 42) / 44)
    assert p < 0.01
    assert paired_bootstrap(list(reversed(drop))) == (change, p)  # seeded by content
    # 5 fell, 5 rose: the change is 0 and p is 1
    wash = [(1.0, 1.0, 0.0, 1.0)] * 5 + [(0.0, 1.0, 1.0, 1.0)] * 5
    assert paired_bootstrap(wash) == (0.0, 1.0)


def test_paired_bootstrap_is_a_ratio_of_sums_for_citations() -> None:
    # (correct, cited) per question: baseline 4/5 and 1/1 = 5/6; now 2/4 and 1/2 = 3/6
    change, p = paired_bootstrap([(4, 5, 2, 4), (1, 1, 1, 2)])
    assert change == pytest.approx(3 / 6 - 5 / 6)
    assert 0 < p <= 1
    with pytest.raises(ValueError):
        paired_bootstrap([])
    with pytest.raises(ValueError):
        paired_bootstrap([(0, 0, 1, 1)])
