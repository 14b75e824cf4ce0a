"""`[floors.question] pass_rate = 0.8` decided: every question of the goldset right in at
least that share of its repeats (scoring/pass_rate.py holds the test, Holm's correction and
the repeats a rate needs; wording/pass_rate.py the sentences).

It is held to what every floor over questions is held to first (`floors.scored_or_settled`:
gaps, a run without a judge, nothing that ran or scored), then refused, failing, when its
rows hold fewer repeats than the rate needs (a results file decided by `ragate decide` that
collection never saw), and when it is scored on fewer questions than `ragate_min_n`. Else it
holds when every question holds (point: its share of right repeats reaches the rate; strict:
the Holm-corrected exact test shows it), and fails naming the questions that miss.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.decision.floors import (
    Gap,
    Unjudged,
    Verdict,
    outcome_of,
    scored_or_settled,
)
from pytest_ragate.decision.rules import POINT, Strictness
from pytest_ragate.decision.said import Topic, said
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pass_rate import missing, one_rate, question_rates, repeats_short
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.registry import right_counts


def decide_pass_rate(floor: Floor, goldset: str, records: Sequence[QuestionRecord], *,
                     judge: str | None = None, unjudged: Unjudged = "fail",
                     strictness: Strictness = POINT, gaps: Sequence[Gap] = ()) -> Verdict:
    """The pass-rate floor's verdict over the goldset's rows (every question, every repeat)."""
    scored = scored_or_settled(floor, goldset, records, judge=judge, unjudged=unjudged,
                               strictness=strictness, gaps=gaps)
    if isinstance(scored, Verdict):
        return scored
    t, counted = scored.tally, scored.counted
    counts = right_counts(scored.rows)
    repeats = min((n for _, n in counts.values()), default=0)
    short, need = repeats_short(floor.min, repeats, len(counts))
    settled = {"floor": floor, "goldset": goldset, "tally": t,
               "computed_by": counted.computed_by, "errors": counted.errors,
               "skipped": counted.skipped}
    if short:
        return Verdict(**settled, outcome="failed", said=said(
            Topic.PASS_RATE_SHORT, floor.min, repeats, len(counts), need))
    if strictness.min_n and len(counts) < strictness.min_n:
        return Verdict(**settled, outcome="failed", said=said(
            Topic.PASS_RATE_FEW_QUESTIONS, len(counts), strictness.min_n))
    rates = question_rates(counts, floor.min, strict=strictness.strict)
    missed = missing(rates)
    return Verdict(**settled, outcome=outcome_of(floor, "misses" if missed else "holds"),
                   said=said(Topic.PASS_RATE, floor.min, tuple(rates), tuple(missed),
                             strictness.strict),
                   worst="; ".join(one_rate(r, strictness.strict) for r in missed))
