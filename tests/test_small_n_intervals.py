"""Intervals at small n (issue 39, case 2): every interval a floor is decided on, over the
whole goldset, a kind, a slice or the anchors, for a proportion or a mean of values in
[0, 1], is valid at small n and never a point: three answers of 1.0 do not prove 0.99."""

from __future__ import annotations

import pytest

from pytest_ragate.decision.floors import call_of
from pytest_ragate.decision.rules import Strictness
from pytest_ragate.scoring.figures import figures_of, interval_of
from pytest_ragate.scoring.floor import Floor
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
    figures = figures_of(floor, mean_tally("citation_accuracy", [1.0] * 3), STRICT.strict)
    assert figures.interval is not None and figures.interval[0] < 0.99
    assert call_of(floor, figures, STRICT) == "misses"
    abstention = Floor("abstention_accuracy", 0.99)
    shares = Tally(metric="abstention_accuracy", k=3, n=3, questions=3)
    assert call_of(abstention, figures_of(abstention, shares, STRICT.strict), STRICT) == "misses"


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 29])
@pytest.mark.parametrize("value", [0.0, 1.0, 0.7])
@pytest.mark.parametrize("metric", ["citation_accuracy", "faithfulness"])
def test_a_bounded_mean_under_30_answers_is_never_a_point(metric: str, value: float,
                                                          n: int) -> None:
    low, high = interval_of(mean_tally(metric, [value] * n)) or (None, None)
    assert low is not None and high is not None
    assert 0.0 <= low <= value <= high <= 1.0 and high - low > 0.05, (low, high)


@pytest.mark.parametrize("values", [[1.0] * 3, [0.0] * 4, [0.9, 1.0, 0.8]])
def test_with_repeats_the_interval_is_over_questions_and_never_a_point(values: list[float],
                                                                      ) -> None:
    """Three questions, each asked 10 times with the same score every time: thirty answers
    but three questions, and the interval is as wide as three questions' (not a point)."""
    clusters = tuple((10 * v, 10.0) for v in values)
    t = Tally(metric="faithfulness", k=sum(s for s, _ in clusters), n=30, questions=3,
              values=tuple(v for v in values for _ in range(10)), clusters=clusters,
              repeats=10)
    assert interval_of(t) == interval_of(mean_tally("faithfulness", values))
    low, high = interval_of(t) or (0.0, 0.0)
    assert high - low > 0.2


def test_a_slice_of_three_answers_of_0_99_holds_no_floor_of_0_9() -> None:
    from pytest_ragate.scoring.slices import decide_slices

    tallies = {"de": mean_tally("faithfulness", [0.99] * 3)}
    [figure] = decide_slices(Floor("faithfulness", 0.9), tallies)
    assert figure.call == "insufficient" and figure.interval is not None
    assert figure.interval[0] < 0.9 < figure.interval[1]


def test_the_interval_does_not_depend_on_where_the_questions_sit() -> None:
    """Seven right answers ahead of thirteen wrong ones (a goldset grouped by kind): the
    interval holds their mean (0.35), whatever the order, and is the same in every order."""
    first = interval_of(mean_tally("citation_accuracy", [1.0] * 7 + [0.0] * 13))
    last = interval_of(mean_tally("citation_accuracy", [0.0] * 13 + [1.0] * 7))
    assert first == last and first is not None and first[0] < 0.35 < first[1]


def test_an_unbounded_mean_keeps_its_bootstrap() -> None:
    """The bill's dollars have no bound, so no interval is valid at every n: theirs stays the
    bootstrap, named so."""
    from pytest_ragate.scoring.intervals import method

    cost = mean_tally("cost_per_question", [0.002, 0.003, 0.004])
    assert method(cost) == "bootstrap" and interval_of(cost) is not None
    assert method(mean_tally("faithfulness", [1.0])) == "betting"
