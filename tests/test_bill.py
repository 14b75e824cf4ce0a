"""The bill, fast tier: the quantile's distribution-free bound (pinned against a binomial
worked by hand), the latency and cost floors' rules (decided on the bound, fail closed on a
figure that is missing, the population rule), the rows, totals and history lines that carry
the bill, and the judge runner's request and token count (a cached verdict makes none)."""

from __future__ import annotations

import asyncio
import json
import math
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.rules import Strictness
from pytest_ragate.goldsets.floors_table import parse_floors
from pytest_ragate.judges.base import METER, JudgeInput, JudgeMeter
from pytest_ragate.judges.fixture import FixtureJudge
from pytest_ragate.judges.runner import JudgeBill, JudgeRunner
from pytest_ragate.outputs.history import HistoryLine, build_line
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, bill_of
from pytest_ragate.scoring.registry import METRICS, cost_of
from pytest_ragate.scoring.stats import (
    lower_rank,
    point_quantile,
    quantile_bounds,
    quantile_needs,
    upper_rank,
)
from pytest_ragate.wording.numbers import bound
from tests.test_judges import CONTEXTS, TwoDimEmbedder, fixture_file

LATENCY = Floor("latency_p95_s", 2.0, upper=True)
COST = Floor("cost_per_question", 0.01, upper=True)

# --- the quantile's bound ----------------------------------------------------------------


def test_the_upper_bound_of_p95_over_100_is_the_99th_value_worked_by_hand() -> None:
    """n = 100, q = 0.95: P(Bin ≤ 97) = 1 − P(98) − P(99) − P(100), with
    P(100) = 0.95^100 = 0.005921, P(99) = 100·0.05·0.95^99 = 0.031161 and
    P(98) = 4950·0.0025·0.95^98 = 0.081182: 0.8817, short of 0.95; P(Bin ≤ 98) =
    1 − 0.031161 − 0.005921 = 0.9629 reaches it. So X_(99) is the 95% upper bound."""
    assert pytest.approx(0.005921, abs=1e-6) == 0.95**100
    assert pytest.approx(0.031161, abs=1e-6) == 100 * 0.05 * 0.95**99
    assert pytest.approx(0.081182, abs=1e-6) == 4950 * 0.0025 * 0.95**98
    assert upper_rank(100, 0.95) == 99
    values = [float(i) for i in range(1, 101)]
    assert quantile_bounds(values, 0.95) == (91.0, 99.0)
    assert point_quantile(values, 0.95) == 95.0


def test_fifty_nine_answers_are_the_fewest_with_a_bound_of_p95() -> None:
    """1 − 0.95^58 = 0.949 < 0.95 ≤ 1 − 0.95^59 = 0.9515: below 59 even the slowest answer
    is no 95% bound of the 95th percentile."""
    assert 1 - 0.95**58 < 0.95 <= 1 - 0.95**59
    assert quantile_needs(0.95) == 59
    assert upper_rank(58, 0.95) is None and upper_rank(59, 0.95) == 59
    assert quantile_bounds([0.1] * 58, 0.95) is None
    assert lower_rank(1, 0.95) == 1


def test_the_bound_covers_the_true_quantile_at_least_95_percent_of_the_time() -> None:
    """Exponential latencies (true p95 = ln 20): over 2,000 seeded runs of 80 answers, the
    bound falls below the truth in at most 5% of them (plus sampling slack)."""
    rng = random.Random(25)
    truth = math.log(20)
    misses = sum(quantile_bounds([rng.expovariate(1.0) for _ in range(80)], 0.95)[1] < truth
                 for _ in range(2000))
    assert misses / 2000 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 2000)


# --- the floors ----------------------------------------------------------------------------


def row(qid: str, *, latency: float | None = 0.1, cost: float | None = 0.001,
        usage: bool = True, kind: str = "single_doc", status: str = "scored", repeat: int = 1,
        **more: Any) -> QuestionRecord:
    return QuestionRecord(goldset="g", question_id=qid, kind=kind, index=0, must_abstain=False,
                          evidence_spans=1, eval_version="1", status=status, repeat=repeat,
                          latency_s=latency,
                          usage={"prompt_tokens": 10, "completion_tokens": 5, "cost": cost}
                          if usage else None, **more)


def rows(n: int, **kw: Any) -> list[QuestionRecord]:
    return [row(f"q{i:02d}", **kw) for i in range(n)]


def test_a_latency_floor_passes_on_its_upper_bound() -> None:
    verdict = decide(LATENCY, "g", rows(59))
    assert verdict.outcome == "passed"
    assert verdict.message.startswith("latency_p95_s 0.10 s, 95% upper bound 0.10 ≤ floor "
                                      "2.00 (a quantile is decided on its bound)")
    assert bound(LATENCY) == "≤ 2.00"
    assert verdict.message.endswith("computed by ragate's clock")


def test_a_point_p95_under_the_max_whose_bound_is_over_it_fails() -> None:
    """60 answers, one slow: the point p95 (the 57th) is 0.10 s, but the 95% upper bound is
    the 60th, 3 s: the tail is not known to be under 2 s."""
    found = [*rows(59), row("slow", latency=3.0)]
    verdict = decide(LATENCY, "g", found)
    assert verdict.value == pytest.approx(0.1)
    assert verdict.interval is not None and verdict.interval[1] == 3.0
    assert verdict.outcome == "failed"
    assert "95% upper bound 3.00 > floor 2.00" in verdict.message
    assert verdict.message.endswith("worst: slow 3.00 s")  # only the answers over the floor


def test_too_few_answers_for_a_bound_fail_with_the_n_they_need() -> None:
    verdict = decide(LATENCY, "g", rows(30))
    assert verdict.outcome == "failed"
    assert verdict.message.startswith("not decided: latency_p95_s 0.10 s (point) over n=30")
    assert "it needs at least 59" in verdict.message


def test_an_errored_question_is_a_gap_no_latency_floor_passes_over() -> None:
    """An answer that timed out has no latency: it is a gap of every floor, never a fast
    answer left out."""
    timed_out = row("late", latency=None, usage=False, status="error",
                    error="late: the system did not answer within 1 s")
    gap = Gap(member="late", member_kind="single_doc", kind="errored")
    verdict = decide(LATENCY, "g", [*rows(80), timed_out], gaps=[gap])
    assert verdict.outcome == "failed"
    assert verdict.message.startswith("not decided: 1 of 81 questions have no result")


def test_a_row_without_its_latency_fails_the_floor_named() -> None:
    """A row read from a results file written before latency was measured."""
    verdict = decide(LATENCY, "g", [*rows(80), row("old", latency=None)])
    assert verdict.outcome == "failed"
    assert "1 of 81 answered questions have no measured latency" in verdict.message
    assert ": old ·" in verdict.message


def test_a_kind_floor_on_latency_is_decided_over_its_kind() -> None:
    fast = rows(60)
    slow = [row(f"s{i}", latency=5.0, kind="multi_doc") for i in range(60)]
    assert decide(Floor("latency_p95_s", 2.0, upper=True, kind="single_doc"), "g",
                  fast + slow).outcome == "passed"
    assert decide(Floor("latency_p95_s", 2.0, upper=True, kind="multi_doc"), "g",
                  fast + slow).outcome == "failed"


def test_with_repeats_a_question_is_one_unit_its_slowest_answer() -> None:
    """60 questions × 2 repeats, each slow in its second repeat: 120 answers of which half
    are slow, counted as 60 slow questions, not 120 answers with a fast majority."""
    found = [row(f"q{i:02d}", repeat=r, latency=0.1 if r == 1 else 3.0)
             for i in range(60) for r in (1, 2)]
    verdict = decide(LATENCY, "g", found)
    assert verdict.tally is not None and verdict.tally.n == 60 and not verdict.tally.clusters
    assert verdict.outcome == "failed"


def test_cost_per_question_is_the_mean_of_reported_costs() -> None:
    verdict = decide(COST, "g", rows(10, cost=0.002))
    assert verdict.outcome == "passed"
    assert verdict.message.startswith("cost_per_question $0.0020 ≤ floor 0.0100")
    assert bound(COST) == "≤ 0.0100"
    assert verdict.message.endswith("computed by reported usage")
    assert decide(COST, "g", rows(10, cost=0.02)).outcome == "failed"


def test_a_question_without_a_reported_cost_fails_the_cost_floor_named() -> None:
    found = [*rows(10, cost=0.001), row("q10", cost=None), row("q11", usage=False)]
    verdict = decide(COST, "g", found)
    assert verdict.outcome == "failed"
    assert "2 of 12 answered questions reported no cost" in verdict.message
    assert "q10, q11" in verdict.message


def test_the_judge_cost_joins_the_system_cost_where_priced() -> None:
    judged = row("q0", cost=0.004, judge_requests=3, judge_cost=0.007,
                 judge_tokens={"prompt": 100, "completion": 10})
    assert cost_of(judged) == pytest.approx(0.011)
    assert decide(COST, "g", [judged]).outcome == "failed"
    unmetered = row("q1", cost=0.001, judge_requests=3, judge_cost=0.0,
                    judge_tokens={"prompt": 0, "completion": 0, "unreported": 3})
    assert cost_of(unmetered) is None  # priced, and the API said nothing of its tokens
    assert decide(COST, "g", [unmetered]).outcome == "failed"


def test_strict_mode_decides_cost_on_its_upper_bound() -> None:
    found = [*rows(9, cost=0.001), row("big", cost=0.09)]  # mean 0.0099, its bound above
    assert decide(COST, "g", found).outcome == "passed"
    strict = decide(COST, "g", found, strictness=Strictness(ci="strict"))
    assert strict.outcome == "failed"
    assert "95% upper bound" in strict.message


def test_bill_floors_are_upper_bounds_in_seconds_or_dollars(tmp_path: Path) -> None:
    path = tmp_path / "ragate.toml"
    floors = parse_floors({"latency_p95_s": {"max": 2.0}, "cost_per_question": {"max": 0.01},
                           "kind": {"single_doc": {"latency_p50_s": {"max": 0.5}}}}, path)
    assert [(f.metric, f.min, f.upper, f.kind) for f in floors] == [
        ("latency_p95_s", 2.0, True, None), ("cost_per_question", 0.01, True, None),
        ("latency_p50_s", 0.5, True, "single_doc")]
    for bad, says in [({"latency_p95_s": 2.0}, "latency_p95_s is an upper bound"),
                      ({"cost_per_question": {"min": 0.1}}, "is an upper bound: { max = … }"),
                      ({"citation_accuracy": {"max": 1.5}}, "is a share: { max = … } in [0, 1]"),
                      ({"latency_p95_s": {"max": -1}}, "greater than or equal to 0")]:
        with pytest.raises(GoldsetError, match=r".*") as error:
            parse_floors(bad, path)
        assert says in str(error.value), str(error.value)
    assert METRICS["latency_p99_s"].aggregate == "quantile"


# --- the rows and their totals -------------------------------------------------------------


def test_a_row_without_a_bill_keeps_its_old_fields() -> None:
    """Nothing measured (an error, a skip, an old row): no bill field in the row, so old
    results files and the rows of errors stay byte for byte as they were."""
    old = {"goldset": "g", "question_id": "q1", "kind": "single_doc", "index": 0,
           "must_abstain": False, "evidence_spans": 1, "eval_version": "1"}
    dumped = QuestionRecord.model_validate(old).model_dump(mode="json")
    assert not {"latency_s", "usage", "judge_requests", "judge_tokens",
                "judge_cost"} & set(dumped)
    billed = row("q1", judge_requests=2, judge_tokens={"prompt": 7, "completion": 3},
                 judge_cost=0.0).model_dump(mode="json")
    assert billed["latency_s"] == 0.1 and billed["judge_requests"] == 2
    assert billed["judge_tokens"] == {"prompt": 7, "completion": 3}
    assert billed["judge_cost"] == 0.0  # priced, and free: said, not left out
    assert QuestionRecord.model_validate(billed).model_dump(mode="json") == billed


def test_the_totals_of_a_run() -> None:
    found = [row("q1", latency=0.2, cost=0.001, judge_requests=4, judge_cost=0.002,
                 judge_tokens={"prompt": 100, "completion": 20}),
             row("q2", latency=0.4, cost=0.003, judge_cached=["faithfulness"], judge_cost=0.0),
             row("q3", latency=None, usage=False, status="error")]
    bill = bill_of(found)
    assert (bill.answers, bill.latency_p50_s, bill.latency_p95_s) == (2, 0.2, 0.4)
    assert bill.latency_total_s == pytest.approx(0.6)
    assert (bill.system_prompt_tokens, bill.system_completion_tokens) == (20, 10)
    assert bill.system_cost == pytest.approx(0.004)
    assert (bill.judge_requests, bill.judge_prompt_tokens, bill.judge_cached) == (4, 100, 1)
    assert bill.judge_cost == pytest.approx(0.002)
    assert bill.total_cost == pytest.approx(0.006)
    unknown = bill_of([*found, row("q4", cost=None)])
    assert unknown.system_cost is None and unknown.total_cost is None
    assert unknown.cost_missing == 1


# --- the judge's requests, counted -------------------------------------------------------


class CountingJudge:
    """Sends `requests` pretend model requests per verdict, each reporting 10 + 2 tokens."""

    judge_id = "counting"
    metrics = ("faithfulness", "context_precision")

    def __init__(self, requests: int = 2, usage: bool = True) -> None:
        self.requests = requests
        self.usage = usage

    def prompt_hash(self, metric: str) -> str:
        return "p"

    async def score(self, item: JudgeInput, metric: str) -> float:
        meter = METER.get()
        assert meter is not None
        for _ in range(self.requests):
            meter.sent()
            meter.reported(Usage(10, 2) if self.usage else None)
        await asyncio.sleep(0)
        return 0.5


class Usage:
    def __init__(self, prompt_tokens: int, completion_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


def judged(runner: JudgeRunner, judge: Any) -> Any:
    item = JudgeInput("q1", "What?", "An answer.", ())
    return runner.submit(judge, item, judge.metrics, "1").result(timeout=30)


def test_the_runner_counts_requests_and_tokens_and_a_cached_rerun_makes_none(
        tmp_path: Path) -> None:
    runner = JudgeRunner(4, tmp_path / "cache", "on", prices=(2.0, 10.0))
    try:
        first = judged(runner, CountingJudge())
        assert (first.bill.requests, first.bill.prompt_tokens,
                first.bill.completion_tokens) == (4, 40, 8)
        assert first.bill.cost == pytest.approx((40 * 2.0 + 8 * 10.0) / 1e6)
        again = judged(runner, CountingJudge())
        assert sorted(again.cached) == ["context_precision", "faithfulness"]
        assert (again.bill.requests, again.bill.prompt_tokens, again.bill.cost) == (0, 0, 0.0)
        assert again.bill.row_fields() == {"judge_requests": 0, "judge_tokens": None,
                                           "judge_cost": 0.0}
    finally:
        runner.close()


def test_an_unpriced_judge_has_no_cost_and_unreported_usage_is_counted(
        tmp_path: Path) -> None:
    runner = JudgeRunner(4, None, "off")
    try:
        bill = judged(runner, CountingJudge(requests=1, usage=False)).bill
        assert (bill.requests, bill.unreported, bill.cost) == (2, 2, None)
        assert bill.row_fields()["judge_tokens"].unreported == 2
    finally:
        runner.close()


@pytest.mark.parametrize(("usage", "invalid"), [
    ({"prompt_tokens": -5, "completion_tokens": 2}, {"prompt_tokens": "must be 0 or more, not -5"}),
    (Usage(10, True), {"completion_tokens": "must be an integer, not bool True"}),  # type: ignore[arg-type]
    ({"prompt_tokens": "10", "completion_tokens": 2},
     {"prompt_tokens": "must be an integer, not str '10'"}),
    ({"prompt_tokens": 10.0, "completion_tokens": 2},
     {"prompt_tokens": "must be an integer, not float 10.0"}),
    ({"prompt_tokens": 10, "completion_tokens": 2, "cost": math.nan},
     {"cost": "must be finite, not nan"}),
    ({"prompt_tokens": 10, "completion_tokens": 2, "cost": -math.inf},
     {"cost": "must be finite, not -inf"}),
    ({"prompt_tokens": 10, "completion_tokens": 2, "cost": -0.01},
     {"cost": "must be 0 or more, not -0.01"}),
    ({"prompt_tokens": 10, "completion_tokens": 2, "cost": False},
     {"cost": "must be a number, not bool False"}),
    ({"prompt_tokens": 10}, {}),  # no completion count: reported nothing, nothing wrong
    (None, {}),
], ids=["negative", "bool", "string", "float", "nan cost", "infinite cost", "negative cost",
        "bool cost", "half", "none"])
def test_a_judges_usage_is_held_to_the_rule_of_a_systems_or_unreported(
        usage: object, invalid: dict[str, str]) -> None:
    """Issue 39 case 4: what a judge's API reports is a token count only where a system's
    usage would be one; otherwise the request's tokens are unreported, not clamped to 0."""
    meter = JudgeMeter()
    for reported in ({"prompt_tokens": 3, "completion_tokens": 1}, usage):
        meter.sent()
        meter.reported(reported)
    assert (meter.prompt_tokens, meter.completion_tokens, meter.unreported) == (3, 1, 1)
    assert meter.invalid == invalid
    bill = JudgeBill.of(meter, (1.0, 1.0))
    tokens = bill.row_fields()["judge_tokens"]
    assert (tokens.unreported, tokens.invalid) == (1, invalid)
    assert ("invalid" in tokens.model_dump()) == bool(invalid)  # an ordinary row is as it was


# --- the history line ----------------------------------------------------------------------


def test_the_history_line_keeps_the_bill_and_a_line_without_it_still_reads() -> None:
    when = datetime(2026, 12, 1, tzinfo=UTC)
    billed = build_line(GoldsetRun(name="g", eval_version="1", records=rows(3, cost=0.001)),
                        git=None, time=when)
    assert billed.bill is not None and billed.bill.answers == 3
    assert billed.bill.total_cost == pytest.approx(0.003)
    text = billed.model_dump_json()
    assert '"bill":{"answers":3,' in text and HistoryLine.model_validate_json(text) == billed
    old = [row(f"q{i}", latency=None, usage=False) for i in range(3)]  # measured nothing
    quiet = build_line(GoldsetRun(name="g", eval_version="1", records=old), git=None, time=when)
    assert quiet.bill is None and '"bill"' not in quiet.model_dump_json()
    before = json.loads(quiet.model_dump_json())  # a line written before the bill existed
    assert HistoryLine.model_validate(before).bill is None


def test_the_fixture_judge_makes_no_request(tmp_path: Path) -> None:
    runner = JudgeRunner(4, None, "off", prices=(2.0, 10.0))
    try:
        judge = FixtureJudge(fixture_file(tmp_path), TwoDimEmbedder())
        verdicts = runner.submit(judge, JudgeInput("q1", "does it rain?", "yes", CONTEXTS),
                                 ("faithfulness", "context_precision"), "1").result(timeout=30)
        assert verdicts.values and not verdicts.failures
        assert (verdicts.bill.requests, verdicts.bill.prompt_tokens, verdicts.bill.cost) == (
            0, 0, 0.0)
    finally:
        runner.close()
