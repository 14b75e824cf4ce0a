"""Per-slice floors (scoring/slices.py): the corrections against adjusted p-values computed by
hand, the shortfall tests against their formulas, the three calls, `{max}` floors, empty
slices, means, a seeded check that 20 slices at the floor rarely fail, and the messages."""

from __future__ import annotations

import math
import random

import pytest

from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.registry import Tally
from pytest_ragate.scoring.slices import (
    SliceFigure,
    adjust,
    benjamini_hochberg,
    decide_slices,
    family_size,
    holm,
    mean_shortfall,
    needs_of,
    proportion_needs,
    proportion_shortfall,
    shortfall_p,
)
from pytest_ragate.scoring.stats import wilson
from pytest_ragate.wording import slices as messages

FLOOR = Floor("abstention_accuracy", 0.85)
AT_MOST = Floor("abstention_accuracy", 0.20, upper=True)
MEAN = Floor("faithfulness", 0.85)


def share(k: int, n: int) -> Tally:
    return Tally(metric="abstention_accuracy", k=k, n=n, questions=n)


def scores(values: list[float]) -> Tally:
    return Tally(metric="faithfulness", k=sum(values), n=len(values), values=tuple(values),
                 questions=len(values))


def by_value(figures: list[SliceFigure]) -> dict[str, SliceFigure]:
    return {f.value: f for f in figures}


# --- the corrections, against hand-computed adjusted p-values -------------------------------


def test_holm_steps_down_and_keeps_the_order() -> None:
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → max so far 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_benjamini_hochberg_steps_up() -> None:
    # sorted: 0.005·4/1 = 0.02, 0.01·4/2 = 0.02, 0.03·4/3 = 0.04, 0.04·4/4 = 0.04
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx(
        [0.02, 0.04, 0.04, 0.02])


def test_bh_rejects_what_holm_does_not_on_the_textbook_ladder() -> None:
    ps = [0.01, 0.02, 0.03, 0.04, 0.05]
    # Holm: 0.05, 0.08, 0.09, 0.08 → 0.09, 0.05 → 0.09; BH: every 0.05·5/5 = 0.05 from above
    assert holm(ps) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert benjamini_hochberg(ps) == pytest.approx([0.05] * 5)
    assert sum(a <= 0.05 for a in adjust(ps, "holm")) == 1
    assert sum(a <= 0.05 for a in adjust(ps, "bh")) == 5


def test_adjusted_p_values_are_capped_at_one_and_an_unknown_correction_is_refused() -> None:
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    assert benjamini_hochberg([0.9]) == [0.9]
    with pytest.raises(ValueError, match="holm, bh"):
        adjust([0.1], "bonferroni")  # type: ignore[arg-type]


# --- the shortfall tests --------------------------------------------------------------------


def binom_sum(lo: int, hi: int, n: int, q: float) -> float:
    return math.fsum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(lo, hi + 1))


@pytest.mark.parametrize(("k", "n"), [(30, 42), (0, 5), (17, 20), (20, 20), (150, 200)])
def test_a_proportions_shortfall_p_is_the_binomial_tail_at_the_floor(k: int, n: int) -> None:
    assert proportion_shortfall(k, n, 0.85) == pytest.approx(binom_sum(0, k, n, 0.85))
    assert proportion_shortfall(k, n, 0.20, upper=True) == pytest.approx(
        binom_sum(k, n, n, 0.20))


def betting_p(values: list[float], m: float) -> float:
    """The betting test written out: 1 / the mean capital of 24 constant bets."""
    bets = [0.99 * 0.8**j / (1 - m) for j in range(24)]
    capitals = [math.prod(1 - bet * (x - m) for x in values) for bet in bets]
    return min(1.0, 24 / sum(capitals))


def test_a_means_shortfall_p_is_one_over_the_betting_capital() -> None:
    low = [0.7, 0.6, 0.75, 0.8, 0.65] * 6
    assert mean_shortfall(low, 0.85) == pytest.approx(betting_p(low, 0.85))
    assert mean_shortfall(low, 0.85) < 1e-3
    # the first bet is 0 (the prior sits at the null), then the capital only grows
    assert mean_shortfall([0.9, 1.0, 0.95] * 10, 0.85) == 1.0
    high = [0.3, 0.4, 0.35] * 10
    assert mean_shortfall(high, 0.20, upper=True) == pytest.approx(
        betting_p([1 - x for x in high], 0.80))
    assert mean_shortfall([0.1] * 30, 0.20, upper=True) == 1.0
    # the order of the values says nothing: -n 0 and -n 2 see them in different orders
    mixed = [0.5] * 10 + [1.0] * 20
    assert mean_shortfall(mixed, 0.85) == pytest.approx(mean_shortfall(mixed[::-1], 0.85))
    assert mean_shortfall(mixed, 0.85) == pytest.approx(betting_p(mixed, 0.85))


def test_the_betting_test_adapts_to_the_spread_where_hoeffding_cannot() -> None:
    # mean 0.75 against 0.85 over 50 values: Hoeffding says exp(-2·50·0.01) = 0.37 whatever
    # the spread; values packed near 0.75 are a near-certain shortfall, 0/1 values are not
    tight = [0.7, 0.8] * 25
    spread = [1.0, 1.0, 1.0, 0.0] * 12 + [1.0, 0.0]  # mean 0.74
    assert mean_shortfall(tight, 0.85) < 1e-4
    assert mean_shortfall(spread, 0.85) > 0.01


# --- the three calls ------------------------------------------------------------------------

LANGS = {"de": share(30, 42), "en": share(115, 120), "fr": share(17, 20), "it": share(0, 0),
         "es": share(40, 60), "pl": share(50, 100)}


def test_each_slice_holds_misses_or_is_insufficient_worst_first() -> None:
    figures = decide_slices(FLOOR, LANGS)
    assert [(f.value, f.call) for f in figures] == [
        ("pl", "misses"), ("es", "misses"), ("de", "insufficient"), ("fr", "insufficient"),
        ("it", "insufficient"), ("en", "holds")]
    got = by_value(figures)
    # five slices have a test (it has none); de is third smallest: Holm multiplies it by 3
    assert family_size(figures) == 5
    p_de = binom_sum(0, 30, 42, 0.85)
    assert got["de"].p_value == pytest.approx(p_de)
    assert got["de"].adjusted == pytest.approx(max(3 * p_de, got["es"].adjusted))
    assert got["de"].adjusted > 0.05 > p_de  # significant alone, not after the correction
    assert got["en"].interval == pytest.approx(wilson(115, 120))
    assert got["en"].interval[0] >= 0.85


def test_an_insufficient_slice_says_about_how_many_would_decide_it() -> None:
    got = by_value(decide_slices(FLOOR, LANGS))
    # de sits below the floor: the mirrored problem, its interval's upper bound under 0.85
    assert got["de"].needs == proportion_needs(0.15, 1 - 30 / 42) > 42
    assert got["fr"].needs is None  # 17/20 is the floor itself: no n would decide it
    assert got["it"].needs is None
    assert all(f.needs is None for f in got.values() if f.call != "insufficient")


def test_needs_is_power_arithmetic_for_a_value_above_the_floor() -> None:
    # power.questions_needed(0.85, 0.95, strict=True) = 83 (exact; tests/test_power.py)
    assert needs_of(FLOOR, share(19, 20)) == 83
    assert proportion_needs(0.85, 0.85) is None


def test_bh_calls_more_misses_than_holm_when_several_slices_fall_short() -> None:
    # raw p: 28/40 → 0.012 (twice), 29/40 → 0.030 (twice). Holm: 0.048, 0.048, 0.060, 0.060;
    # BH: 0.030 · 4/4 = 0.030 for all four
    slices = {f"s{i}": share(k, 40) for i, k in enumerate((28, 28, 29, 29))}
    holm_calls = [f.call for f in decide_slices(FLOOR, slices)]
    bh_calls = [f.call for f in decide_slices(FLOOR, slices, correction="bh")]
    assert holm_calls == ["misses", "misses", "insufficient", "insufficient"]
    assert bh_calls == ["misses"] * 4


def test_an_upper_floor_fails_a_slice_above_it_and_holds_one_well_below() -> None:
    got = by_value(decide_slices(AT_MOST, {"a": share(10, 20), "b": share(0, 100),
                                           "c": share(4, 20)}))
    assert got["a"].call == "misses"
    assert got["a"].p_value == pytest.approx(binom_sum(10, 20, 20, 0.20))
    assert got["b"].call == "holds"
    assert got["c"].call == "insufficient" and got["c"].needs is None  # 4/20 is the bound


def test_slices_with_nothing_scored_are_insufficient_never_held() -> None:
    figures = decide_slices(FLOOR, {"x": share(0, 0), "y": share(0, 0)})
    assert [f.call for f in figures] == ["insufficient", "insufficient"]
    assert all(f.p_value is None and f.adjusted is None and f.interval is None
               for f in figures)
    assert family_size(figures) == 0


def test_means_use_the_betting_test_and_the_bootstrap_interval() -> None:
    low = [0.5] * 25 + [0.6] * 25
    high = [0.9] * 10 + [1.0] * 40
    got = by_value(decide_slices(MEAN, {"low": scores(low), "high": scores(high)}))
    assert got["low"].test == "betting"
    assert got["low"].p_value == pytest.approx(betting_p(low, 0.85))
    assert got["low"].call == "misses"
    assert got["high"].call == "holds"
    assert got["high"].test == "betting"
    assert by_value(decide_slices(FLOOR, {"a": share(1, 2)}))["a"].test == "exact binomial"


def test_a_proportion_asked_with_repeats_tests_questions_not_answers() -> None:
    # 10 questions × 3 repeats, each right 1 of 3: the unit is the question, n = 10
    t = Tally(metric="abstention_accuracy", k=10, n=30, questions=10, repeats=3,
              clusters=((1, 3),) * 10)
    assert shortfall_p(FLOOR, t) == pytest.approx(betting_p([1 / 3] * 10, 0.85))


def test_unbounded_figures_and_values_outside_the_unit_interval_are_refused() -> None:
    for metric in ("latency_p95_s", "cost_per_question", "judge_agreement"):
        with pytest.raises(ValueError, match=f"{metric}: not a share in .0, 1., so not a slice"):
            decide_slices(Floor(metric, 0.5), {"a": share(1, 2)})
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        shortfall_p(MEAN, scores([0.5, 1.5]))
    with pytest.raises(ValueError, match="alpha"):
        decide_slices(FLOOR, {"a": share(1, 2)}, alpha=0)


# --- validity: 20 slices at the floor ---------------------------------------------------------


def test_twenty_slices_at_the_floor_rarely_fail_with_the_correction_and_often_without() -> None:
    """Seeded, so it cannot flake; benchmarks/slices.py measures this at 10,000 runs a cell
    (Holm ≈ 0.037 at n = 50). 300 runs: Holm at most twice alpha, no correction far above."""
    rng = random.Random(26)
    runs, fails, raw_fails = 300, {"holm": 0, "bh": 0}, 0
    for _ in range(runs):
        slices = {f"s{i:02d}": share(sum(rng.random() < 0.85 for _ in range(50)), 50)
                  for i in range(20)}
        for correction in ("holm", "bh"):
            figures = decide_slices(FLOOR, slices, correction=correction)  # type: ignore[arg-type]
            fails[correction] += any(f.call == "misses" for f in figures)
        raw_fails += any(shortfall_p(FLOOR, t) <= 0.05 for t in slices.values())  # type: ignore[operator]
    assert fails["holm"] / runs <= 0.10
    assert fails["bh"] / runs <= 0.10
    assert raw_fails / runs >= 0.25  # why the correction is there


# --- messages -------------------------------------------------------------------------------


def message_of(floor: Floor, slices: dict[str, Tally], value: str, **kw: object) -> str:
    figures = decide_slices(floor, slices, **kw)  # type: ignore[arg-type]
    figure = by_value(figures)[value]
    return messages.slice_message(floor, "lang", figure, tested=family_size(figures),
                                  correction=kw.get("correction", "holm"),  # type: ignore[arg-type]
                                  alpha=0.05)


def test_a_missing_slice_names_its_test_and_the_correction() -> None:
    text = message_of(FLOOR, LANGS, "es")
    assert text.startswith("lang=es abstention_accuracy 0.67 < floor 0.85 · n=60 · "
                           "95% CI [0.54, 0.77] (Wilson) · shortfall p=0.00031 (exact binomial), "
                           "Holm-adjusted over 5 slices of lang: 0.0012 ≤ 0.05 · misses")
    assert "Benjamini-Hochberg-adjusted over 5 slices" in message_of(
        FLOOR, LANGS, "es", correction="bh")


def test_holds_and_insufficient_messages_say_why() -> None:
    assert message_of(FLOOR, LANGS, "en").endswith(
        "1 > 0.05 · holds: its 95% lower bound clears the floor")
    de = message_of(FLOOR, LANGS, "de")
    assert "0.053 > 0.05" in de
    assert de.endswith(f"insufficient n: needs about {proportion_needs(0.15, 1 - 30 / 42)}")
    assert message_of(FLOOR, LANGS, "fr").endswith(
        "insufficient n: its value is on the floor, no n would decide it")
    assert message_of(FLOOR, LANGS, "it") == (
        "lang=it abstention_accuracy: nothing scored · n=0 · insufficient n: nothing of this "
        "slice was scored")
    assert "> floor 0.20" in message_of(AT_MOST, {"a": share(10, 20)}, "a")


def test_twenty_mean_slices_at_the_floor_rarely_fail() -> None:
    """Seeded Beta scores of mean 0.85 (concentration 10): the betting test is valid for any
    distribution on [0, 1]; 300 runs of 20 slices of 30, Holm, at most twice alpha. A slice
    is `misses` exactly when its adjusted p is at most alpha (the first runs check that
    against decide_slices, whose bootstrap intervals are too slow for all 300)."""
    rng = random.Random(2026)
    fails = 0
    for run in range(300):
        slices = {f"s{i:02d}": scores([rng.betavariate(8.5, 1.5) for _ in range(30)])
                  for i in range(20)}
        ps = [p for t in slices.values() if (p := shortfall_p(MEAN, t)) is not None]
        called = {name for name, a in zip(slices, adjust(ps, "holm"), strict=True) if a <= 0.05}
        if run < 3:
            assert called == {f.value for f in decide_slices(MEAN, slices)
                              if f.call == "misses"}
        fails += bool(called)
    assert fails / 300 <= 0.10
