"""`[regression] max_drop`: a metric held to "no worse than the baseline by more than the
margin" (decision/margins.py, scoring/noninferiority.py), on hand-built scores; the
simulation of its error rates is benchmarks/noninferiority.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.decision.margins import Margins, margin_call
from pytest_ragate.decision.regressions import check
from pytest_ragate.goldsets.config import RegressionConfig
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.noninferiority import (
    ChangeBounds,
    Discordant,
    binary_bounds,
    more_needed,
    score_bounds,
)
from pytest_ragate.scoring.records import QuestionScores
from pytest_ragate.scoring.stats import t_quantile
from tests.conftest import write_goldset


def scores(**fields: object) -> QuestionScores:
    return QuestionScores.model_validate(fields)


def abstaining(n: int, wrong: range) -> dict[str, QuestionScores]:
    return {f"q{i}": scores(abstention_correct=i not in wrong) for i in range(n)}


def test_the_three_calls_at_the_margin() -> None:
    def bounds(lower: float, upper: float) -> ChangeBounds:
        return ChangeBounds(change=(lower + upper) / 2, se=0.01, lower=lower, upper=upper,
                            clusters=100, t=1.66)

    assert margin_call(bounds(-0.019, 0.01), 0.02) == "non-inferior"
    assert margin_call(bounds(-0.05, -0.021), 0.02) == "worse"
    assert margin_call(bounds(-0.03, 0.0), 0.02) == "inconclusive"
    assert margin_call(bounds(-0.02, 0.0), 0.02) == "inconclusive"  # on it: not above
    assert margin_call(None, 0.02) == "inconclusive"


def test_tango_bound_by_hand_and_the_design_effect_of_clusters() -> None:
    # 400 questions, 10 right→wrong, 14 wrong→right, margin 0.05: p_worse under the margin is
    # the root of 800 p² − B p − 10·(−0.05)(1.05) = 0, B = 10·1.15 + 14·1.05 − 2·376·(−0.05)
    clusters = [Discordant(worse=int(i < 10), better=int(10 <= i < 24), units=1)
                for i in range(400)]
    b = 10 * 1.15 + 14 * 1.05 + 2 * 376 * 0.05
    p = (b + (b * b - 8 * 400 * 10 * 0.05 * 1.05) ** 0.5) / 1600
    se = ((p + (p - 0.05) - 0.0025) / 400) ** 0.5
    found = binary_bounds(clusters, 0.05, 0.05)
    assert found is not None and found.change == pytest.approx(4 / 400)
    assert found.se == pytest.approx(se * (400 / 399) ** 0.5)  # deff of 1-unit clusters
    assert found.lower == pytest.approx(found.change - t_quantile(399, 0.95) * found.se)
    # the same 24 discordant units in 4 questions of 100 spans each: far fewer clusters,
    # a wider bound
    lumped = [Discordant(worse=10, better=0, units=100), Discordant(worse=0, better=14,
                                                                      units=100),
              Discordant(worse=0, better=0, units=100), Discordant(worse=0, better=0,
                                                                   units=100)]
    wide = binary_bounds(lumped, 0.05, 0.05)
    assert wide is not None and wide.lower < found.lower - 0.05
    assert binary_bounds(clusters[:1], 0.05, 0.05) is None


def test_no_discordance_is_no_zero_variance() -> None:
    same = binary_bounds([Discordant(worse=0, better=0, units=1)] * 10, 0.05, 0.05)
    assert same is not None and same.se > 0 and same.lower < -0.05  # 10 questions: undecided


def test_score_bounds_are_the_cluster_robust_difference() -> None:
    # each question's score drops by 0.1 or 0.0 alternately: Δ = −0.05, residuals ±0.05
    clusters = [(1.0, 1.0, 0.9 if i % 2 else 1.0, 1.0) for i in range(40)]
    found = score_bounds(clusters, 0.05)
    assert found is not None and found.change == pytest.approx(-0.05)
    assert found.se == pytest.approx((40 * 0.05 ** 2 / (40 * 39)) ** 0.5)


def test_more_needed_from_the_observed_spread() -> None:
    bounds = ChangeBounds(change=-0.01, se=0.02, lower=-0.043, upper=0.023, clusters=100,
                          t=1.66)
    # G = (1.66 · 0.02 · 10 / 0.01)² = 1102.24 → 1103 clusters, 1003 more
    assert more_needed(bounds, 0.02) == 1003
    assert more_needed(bounds, 0.01) is None  # on the margin: no number decides


def test_a_margin_turns_the_check_into_three_outcomes() -> None:
    base = abstaining(400, range(0))
    margins = Margins(max_drop={"abstention_accuracy": 0.05})
    # 6 of 400 right→wrong: p = 0.03 fails today's rule; 1.5% is well within a 5% margin
    small = check("g", "abstention_accuracy", base, abstaining(400, range(6)), alpha=0.05,
                  margins=margins)
    assert small.outcome == "passed" and small.margin and small.margin.call == "non-inferior"
    assert small.message.startswith("no worse than the margin: abstention_accuracy 1.00 → 0.98"
                                    " over 400 paired questions (change -0.015")
    assert "95% lower bound" in small.message and "> -0.05 = -max_drop" in small.message
    assert check("g", "abstention_accuracy", base, abstaining(400, range(6)),
                 alpha=0.05).outcome == "failed"  # today's rule, without the margin
    # 60 of 400 right→wrong: 15%, beyond the margin for sure; the questions named
    worse = check("g", "abstention_accuracy", base, abstaining(400, range(60)), alpha=0.05,
                  margins=margins)
    assert worse.outcome == "failed" and worse.margin and worse.margin.call == "worse"
    assert "worse than the margin" in worse.message and "got worse: q0, q1" in worse.message
    # 40 questions, 1 right→wrong: too few to say either
    few = check("g", "abstention_accuracy", abstaining(40, range(0)), abstaining(40, range(1)),
                alpha=0.05, margins=margins)
    assert few.outcome == "failed" and few.margin and few.margin.call == "inconclusive"
    # se·√g = 0.0349·√40 = 0.221, (1.685 · 0.221 / 0.025)² = 221 questions: 181 more, rounded up
    assert few.message.startswith("not decided: abstention_accuracy 1.00 → 0.97 over 40 "
                                  "paired questions (change -0.025, 95% bounds -0.084 to "
                                  "+0.034 straddle -0.05 = -max_drop): about 182 more "
                                  "questions would decide")
    lenient = check("g", "abstention_accuracy", abstaining(40, range(0)),
                    abstaining(40, range(1)), alpha=0.05,
                    margins=Margins(max_drop=margins.max_drop, inconclusive="pass"))
    assert lenient.outcome == "passed"
    assert 'passes: [regression] inconclusive = "pass"' in lenient.message
    # a metric without a margin keeps today's check
    other = check("g", "evidence_recall", {"q": scores(evidence_found=[True])},
                  {"q": scores(evidence_found=[True])}, alpha=0.05, margins=margins)
    assert other.margin is None


def test_a_conversation_is_one_cluster_of_its_turns() -> None:
    # 10 conversations of 4 turns; now one conversation loses all 4: one cluster, not 4
    base = {f"c{c}t{t}": scores(abstention_correct=True, conversation=f"c{c}")
            for c in range(10) for t in range(4)}
    now = {**base, **{f"c0t{t}": scores(abstention_correct=False, conversation="c0")
                      for t in range(4)}}
    found = check("g", "abstention_accuracy", base, now, alpha=0.05,
                  margins=Margins(max_drop={"abstention_accuracy": 0.2}))
    assert found.margin and found.margin.bounds and found.margin.bounds.clusters == 10
    assert "10 paired conversations" in found.message


def test_regression_table_one_error_per_bad_key(tmp_path: Path) -> None:
    write_goldset(tmp_path / "gs")
    config = tmp_path / "gs" / "ragate.toml"
    config.write_text(config.read_text() + "\n[regression]\nmax_drop = { citation_acuracy = "
                      "0.02, hold_rate = 0.1, faithfulness = 1.5, answer_match = 0 }\n"
                      'inconclusive = "maybe"\n')
    from pytest_ragate.goldsets.config import read_config

    with pytest.raises(GoldsetError) as raised:
        read_config(config)
    found = sorted(f"{p.field}: {p.message}" for p in raised.value.problems)
    assert len(found) == 5, found
    assert any("citation_acuracy" in f and "did you mean citation_accuracy?" in f
               for f in found)
    assert any("hold_rate" in f and "not a metric the baseline check compares" in f
               for f in found)
    assert any(f.startswith("regression.max_drop.faithfulness:") for f in found)
    assert any(f.startswith("regression.max_drop.answer_match:") for f in found)
    assert any(f.startswith("regression.inconclusive:") for f in found)
    assert RegressionConfig.model_validate({"max_drop": {"faithfulness": 0.05}}).max_drop == {
        "faithfulness": 0.05}


def test_a_margin_check_names_its_test_not_a_p_value() -> None:
    found = check("g", "abstention_accuracy", abstaining(400, range(0)),
                  abstaining(400, range(6)), alpha=0.05,
                  margins=Margins(max_drop={"abstention_accuracy": 0.05}))
    assert found.test == "non-inferiority, max_drop 0.05"
    assert found.p_value is None and found.detects is None


def test_margins_ride_the_wire_to_the_xdist_controller() -> None:
    # a worker's collection reaches the controller as JSON (`Collected`): the margins with it
    from pytest_ragate.decision.population import Population

    sent = Population(route="gs/ragate.toml", goldset="gs", eval_version="1", questions=[],
                      anchors=[], max_drop={"citation_accuracy": 0.02}, inconclusive="pass")
    got = Population.model_validate_json(sent.model_dump_json())
    assert got.margins == Margins(max_drop={"citation_accuracy": 0.02}, inconclusive="pass")
