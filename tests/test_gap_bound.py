"""A sequential stop keeps the full run's promise on questions without a result (issue 45):
the bound on the share of the questions it does not ask (`scoring/gap_bound.py`), and the
stop rule that refuses a stop over an errored or unsure, unlabelled answer, pure."""

from __future__ import annotations

import math

import pytest

from pytest_ragate.decision.population import SequentialPlan
from pytest_ragate.decision.sequential import Stopping, asking_order, outcome
from pytest_ragate.goldsets.config import GoldsetConfig
from pytest_ragate.scoring.answer_match import AnswerCheck
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.gap_bound import FEWEST, GAPS, GapBound, least_gaps
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.sequential import halt_line
from tests.test_decision import member, population, scored
from tests.test_sequential import asked_again

RIGHT = AnswerCheck(outcome="right", why="states every fact", facts=1, found=[1])
UNSURE = AnswerCheck(outcome="unsure", why="fact 1 not stated", facts=1, missing=[1])
MATCH = Floor("answer_match", 0.7)


def asked_until_decided(population: int, rate: float = GAPS, alpha: float = 0.025) -> int:
    bound = GapBound(population=population, rate=rate, alpha=alpha)
    while not bound.decided and bound.asked < population:
        bound.observe(False)
    return bound.asked


def test_the_bound_is_the_hypergeometric_chance_of_no_gap() -> None:
    """p_n = C(N - G0, n) / C(N, n), G0 the fewest gaps at the rate; decided at the first n
    with p_n <= alpha, and never once a gap was seen."""
    assert least_gaps(60, 0.05) == 3 and least_gaps(400, 0.05) == 20
    assert least_gaps(10, 0.05) == 1  # no gap at all is the only share below 1 in 10
    bound = GapBound(population=60, rate=0.05, alpha=0.025)
    for _ in range(20):
        bound.observe(False)
    assert bound.p == pytest.approx(math.comb(57, 20) / math.comb(60, 20))
    n = asked_until_decided(400, 0.05)
    assert math.comb(380, n) / math.comb(400, n) <= 0.025 < \
        math.comb(380, n - 1) / math.comb(400, n - 1)
    seen = GapBound(population=400, rate=0.05, alpha=0.025)
    seen.observe(True)
    for _ in range(399):
        seen.observe(False)
    assert not seen.decided


def test_its_cost_and_its_guarantee() -> None:
    """About ln(1/alpha) / rate units for a large goldset: at the default rate (0.07) and the
    goldset's whole budget (0.05), 38 of 200, 40 of 400, 41 of 1,000 (51, 55, 57 at 0.05; 61,
    66, 70 with the budget halved, as before issue 49); and with 28 gaps in 400 (the rate),
    the chance that a random order shows none before it is decided is at most alpha."""
    assert [asked_until_decided(n, alpha=0.05) for n in (200, 400, 1000)] == [38, 40, 41]
    assert [asked_until_decided(n, 0.05, 0.05) for n in (200, 400, 1000)] == [51, 55, 57]
    assert [asked_until_decided(n, 0.05) for n in (200, 400, 1000)] == [61, 66, 70]
    assert least_gaps(400, GAPS) == 28
    n = asked_until_decided(400, alpha=0.05)
    assert math.comb(400 - 28, n) / math.comb(400, n) <= 0.05


def test_a_goldset_too_small_for_a_share_is_never_bounded() -> None:
    """At the default rate 100 questions tolerate 6 without a result (G0 = 7 < FEWEST): the
    bound is never proved, so every question is asked; 101 tolerate 7, and it is proved."""
    assert (least_gaps(100, GAPS), least_gaps(101, GAPS)) == (7, 8) and FEWEST == 8
    assert asked_until_decided(100, alpha=0.05) == 100
    assert asked_until_decided(101, alpha=0.05) < 40
    assert asked_until_decided(60, 0.5, 0.05) < 10  # a laxer rate, at its own tolerance
    small = stop(rows_of(60), 1)  # every answer right: asked whole, and the line says why
    why = outcome(small, SequentialPlan(seed=1, alpha=0.05)).why
    assert not small.stopped and why is not None and why.kind == "gaps unbounded"
    assert "60 questions are too few to stop on a share: sequential_gaps = 0.07 of them is 4" \
        in halt_line(why)


def rows_of(n: int) -> dict[str, QuestionRecord]:
    """n scored rows, each answer right by answer_match."""
    return {m.item_name: scored(m).model_copy(update={"answer_check": RIGHT})
            for m in (member(f"q{i:03d}", index=i) for i in range(n))}


def stop(rows: dict[str, QuestionRecord], seed: int, *, gaps: float = GAPS,
         floors: tuple[Floor, ...] = (MATCH,)) -> Stopping:
    """The rows replayed as a sequential goldset of them (the questions asked again answer
    as before)."""
    members = [member(name, index=i) for i, name in enumerate(rows)]
    pop = population(members).model_copy(
        update={"sequential": SequentialPlan(seed=seed, alpha=0.05, gaps=gaps)})
    stopping = Stopping.of(pop, list(floors))
    assert stopping is not None
    return stopping.replay(rows, asked_again(rows))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("gap", ["unsure", "error"])
def test_one_question_without_a_result_in_60_is_never_passed_over(seed: int, gap: str) -> None:
    """Issue 45's case: 60 answers right but one unsure and unlabelled (or one errored).
    Asked in full the answer_match floor is not decided; each seed stopped after 12 and
    passed. Now none stops: a stop cannot show the 48 it would not ask have a result."""
    rows = rows_of(60)
    bad = "q031"
    rows[bad] = rows[bad].model_copy(update={"answer_check": UNSURE} if gap == "unsure"
                                     else {"status": "error", "error": "boom"})
    assert not stop(rows, seed).stopped


def test_an_unsure_answer_asked_after_its_floor_was_decided_refuses_the_stop() -> None:
    """The answer_match floor is decided after a few right answers, but another floor keeps
    the goldset asking; an unsure answer asked meanwhile leaves answer_match to the full
    run's rule (its test stuck), so no stop is made and the run says why."""
    rows = rows_of(400)
    order = asking_order(4, "gs/ragate.toml", list(rows))
    rows = {n: r.model_copy(update={"citations": 1, "citations_correct": int(i % 12 != 0)})
            for i, (n, r) in enumerate(rows.items())}
    clean = stop(rows, 4, floors=(MATCH, Floor("citation_accuracy", 0.8)))
    assert clean.stopped and clean.stopped_at is not None
    decided_early = clean.tracks[MATCH.name].shares
    assert len(decided_early) == clean.stopped_at
    late = order[clean.stopped_at - 1]  # asked after answer_match was decided
    rows[late] = rows[late].model_copy(update={"answer_check": UNSURE})
    refused = stop(rows, 4, floors=(MATCH, Floor("citation_accuracy", 0.8)))
    assert not refused.stopped
    assert refused.tracks[MATCH.name].call is None
    why = outcome(refused, SequentialPlan(seed=4, alpha=0.05)).why
    assert why is not None and f"{late}: answer unsure, not labelled" in halt_line(why)


def test_a_clear_goldset_still_stops_early_and_says_its_bound() -> None:
    """400 right answers stop after the bound's 40 questions (the floor alone needs fewer);
    a laxer bound stops sooner."""
    rows = rows_of(400)
    assert stop(rows, 1).stopped_at == 40
    lax = stop(rows, 1, gaps=0.2).stopped_at
    assert lax is not None and lax < 40


def test_sequential_gaps_is_a_goldset_setting_with_one_error_per_bad_value() -> None:
    base = {"corpus": {"paths": ["c.jsonl"], "format": "segments-jsonl"}}
    assert GoldsetConfig.model_validate(base).sequential_gaps == GAPS == 0.07
    assert GoldsetConfig.model_validate({**base, "sequential_gaps": 0.02}).sequential_gaps \
        == 0.02
    for bad in (0, 1, -0.1, "often", float("nan")):
        with pytest.raises(ValueError) as raised:
            GoldsetConfig.model_validate({**base, "sequential_gaps": bad})
        assert raised.value.error_count() == 1  # type: ignore[attr-defined]
        assert "sequential_gaps" in str(raised.value)
