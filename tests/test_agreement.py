"""Agreement statistics and the prediction-powered estimate, against cases worked by hand,
and a simulated judge of known bias."""

from __future__ import annotations

import math
import random

import pytest

from pytest_ragate.scoring.agreement import Agreement, bootstrap, cohen_kappa, mae, ranks, spearman
from pytest_ragate.scoring.ppi import ppi_mean
from pytest_ragate.scoring.stats import Z95
from pytest_ragate.wording.agreement import not_calibrated


def table(both: int, judge_only: int, human_only: int, neither: int) -> list[tuple[int, int]]:
    """(judge, human) verdict pairs of a 2×2 table."""
    return ([(1, 1)] * both + [(1, 0)] * judge_only + [(0, 1)] * human_only
            + [(0, 0)] * neither)


def test_kappa_of_a_known_table() -> None:
    # p_o = 35/50 = 0.70; judge says 1 for 25/50, humans for 30/50:
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.50; kappa = (0.70 − 0.50) / (1 − 0.50) = 0.40
    assert cohen_kappa(table(20, 5, 10, 15)) == pytest.approx(0.40)
    assert cohen_kappa(table(10, 0, 0, 10)) == pytest.approx(1.0)
    assert cohen_kappa(table(0, 10, 10, 0)) == pytest.approx(-1.0)


def test_kappa_of_one_class_only_is_undefined_and_a_yes_judge_scores_zero() -> None:
    assert cohen_kappa(table(10, 0, 0, 0)) is None  # p_e = 1: agreement says nothing
    assert cohen_kappa([]) is None
    # a judge that says 1 to everything agrees on every human 1 and still has kappa 0
    assert cohen_kappa(table(15, 5, 0, 0)) == pytest.approx(0.0)


def test_spearman_with_ties() -> None:
    assert ranks([1, 2, 2, 3]) == [1, 2.5, 2.5, 4]
    # mid-ranks x = 1, 2.5, 2.5, 4 and y = 1, 3, 2, 4: Σdxdy = 4.5, Σdx² = 4.5, Σdy² = 5
    rho = spearman([(1, 1), (2, 3), (2, 2), (3, 4)])
    assert rho == pytest.approx(4.5 / math.sqrt(4.5 * 5))
    assert spearman([(0.1, 0.9), (0.5, 0.5), (0.9, 0.1)]) == pytest.approx(-1.0)
    assert spearman([(0.5, 0.1), (0.5, 0.9)]) is None  # a constant judge orders nothing


def test_mae() -> None:
    assert mae([(0.5, 0.25), (1.0, 1.0), (0.0, 0.5)]) == pytest.approx(0.25)
    assert mae([]) is None


def test_bootstrap_is_seeded_by_its_pairs_and_brackets_the_statistic() -> None:
    pairs = [(float(j), float(h)) for j, h in table(20, 5, 10, 15)]
    from pytest_ragate.scoring.agreement import _kappa_of

    first = bootstrap(pairs, _kappa_of)
    assert first == bootstrap(list(reversed(pairs)), _kappa_of)
    assert first is not None and first[0] < 0.40 < first[1]


def test_ppi_hand_worked() -> None:
    # judge over 12 questions, six 1.0 and six 0.5: mean 0.75, sample variance 0.75/11; on
    # the 10 labelled (ppi.MIN_LABELS) it is 0.25 too high five times and right five times:
    # bias 0.125, sample variance 10·0.125²/9; θ = 0.75 − 0.125 = 0.625
    judge = [1.0, 0.5] * 6
    pairs = [(1.0, 0.75), (0.5, 0.5)] * 5
    found = ppi_mean(judge, pairs)
    assert found is not None and found.bounded == ()
    assert found.value == pytest.approx(0.625)
    assert found.bias == pytest.approx(0.125)
    half = Z95 * math.sqrt(0.75 / 11 / 12 + 10 * 0.125 ** 2 / 9 / 10)
    assert found.interval == pytest.approx((0.625 - half, 0.625 + half))
    assert ppi_mean(judge, pairs[:9]) is None  # 9 labelled pairs: too few


def simulated(bias: float, seed: int = 7, n_all: int = 400, n_labelled: int = 60,
              ) -> tuple[list[float], list[tuple[float, float]], float]:
    """A judge that scores each answer `bias` higher than people would (plus noise), over
    n_all questions of true quality ~0.7, people labelling the first n_labelled."""
    rng = random.Random(seed)
    truth = [min(1.0, max(0.0, rng.gauss(0.7, 0.15))) for _ in range(n_all)]
    judge = [min(1.0, max(0.0, t + bias + rng.gauss(0, 0.05))) for t in truth]
    pairs = list(zip(judge[:n_labelled], truth[:n_labelled], strict=True))
    return judge, pairs, sum(truth) / n_all


def test_a_biased_judge_passes_a_floor_its_ppi_estimate_fails() -> None:
    judge, pairs, true_mean = simulated(bias=0.25)
    plain = sum(judge) / len(judge)
    found = ppi_mean(judge, pairs)
    assert found is not None
    floor = 0.85
    assert plain >= floor  # the judge's own mean clears the floor ...
    assert found.value < floor and found.interval[1] < floor  # ... the corrected one cannot
    assert found.interval[0] <= true_mean <= found.interval[1]


def test_an_unbiased_judge_ppi_agrees_with_the_plain_mean() -> None:
    judge, pairs, true_mean = simulated(bias=0.0)
    plain = sum(judge) / len(judge)
    found = ppi_mean(judge, pairs)
    assert found is not None
    assert found.interval[0] <= plain <= found.interval[1]
    assert found.interval[0] <= true_mean <= found.interval[1]


def test_not_calibrated_names_statistic_interval_floor_and_n() -> None:
    low = Agreement(metric="faithfulness", statistic="kappa", value=0.41, interval=(0.20, 0.61),
                    n=40, labelled=40)
    assert not_calibrated([low], 0.60, strict=False) == (
        "judge not calibrated: kappa 0.41 [0.20, 0.61] < 0.60 on 40 labelled questions "
        "(faithfulness)")
    good = Agreement(metric="faithfulness", statistic="kappa", value=0.70, interval=(0.55, 0.85),
                     n=40, labelled=40)
    assert not_calibrated([good], 0.60, strict=False) is None
    assert "lower bound 0.55" in (not_calibrated([good], 0.60, strict=True) or "")
    gap = Agreement(metric="faithfulness", statistic="kappa", value=0.90, interval=(0.8, 1.0),
                    n=39, labelled=40, missing=(("q03", "judge failure: timeout: 30s"),))
    assert "q03 (judge failure: timeout: 30s)" in (not_calibrated([gap], 0.6, False) or "")
