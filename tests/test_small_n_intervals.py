"""Intervals at small n (issue 39, case 2): every interval a floor is decided on, over the
whole goldset, a kind, a slice or the anchors, for a proportion or a mean of values in
[0, 1], is valid at small n and never a point: three answers of 1.0 do not prove 0.99."""

from __future__ import annotations

import pytest

from pytest_ragate.scoring.gates import Floor, Strictness, call_of, figures_of, interval_of
from pytest_ragate.scoring.registry import Tally

STRICT = Strictness(ci="strict")


def mean_tally(metric: str, values: list[float]) -> Tally:
    return Tally(metric=metric, k=sum(values), n=len(values), values=tuple(values),
                 questions=len(values))


def test_three_right_citations_do_not_prove_a_floor_of_0_99() -> None:
    """`--ragate-ci strict`, citation_accuracy = 0.99 over 3 answers of 1.0: a bootstrap's
    interval is [1.00, 1.00] and held the floor; the floor fails, as the abstention floor
    over the same 3 questions (Wilson) does."""
    floor = Floor("citation_accuracy", 0.99)
    figures = figures_of(floor, mean_tally("citation_accuracy", [1.0] * 3), STRICT)
    assert figures.interval is not None and figures.interval[0] < 0.99
    assert call_of(floor, figures, STRICT) == "misses"
    abstention = Floor("abstention_accuracy", 0.99)
    shares = Tally(metric="abstention_accuracy", k=3, n=3, questions=3)
    assert call_of(abstention, figures_of(abstention, shares, STRICT), STRICT) == "misses"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 29])
@pytest.mark.parametrize("value", [0.0, 1.0, 0.7])
@pytest.mark.parametrize("metric", ["citation_accuracy", "faithfulness"])
def test_a_bounded_mean_under_30_answers_is_never_a_point(metric: str, value: float,
                                                          n: int) -> None:
    low, high = interval_of(mean_tally(metric, [value] * n)) or (None, None)
    assert low is not None and high is not None
    assert 0.0 <= low <= value <= high <= 1.0 and high - low > 0.05, (low, high)
