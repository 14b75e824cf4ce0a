"""One floor decided before every question is asked (`--ragate-sequential`): each answer's
share of the floor's figure, fed to an anytime-valid test (`confidence_sequence.MeanTest`).

A floor's figure is a ratio over its population, C / U: the units right (or the sum of
per-question values) over the units counted (questions, expected spans, cited answers,
verdicts asked). Question i brings c_i of n_i units, 0 <= c_i <= n_i <= M, where M, the most
units one question can bring, is known before anything is asked (`unit_bound`). With the
floor f,

    y_i = (c_i - f * n_i + f * M) / M  lies in [0, 1],  and  mean(y) - f = (C - f * U) / (M N),

so "the figure reaches f" is exactly "the mean of y over the goldset reaches f": one test of
a finite population's mean at f, whatever the metric (a question with no unit of it, n_i = 0,
brings y = f and moves nothing). The test's guarantee carries over unchanged: the chance that
it ever proves the wrong side is at most its alpha (Waudby-Smith & Ramdas; see
`confidence_sequence.py`). A question that cannot be counted (a judge failure of the floor's
metric, a metric of the project's that failed on it, more units than M) stops the floor's
test: it is then decided over every question, as without `--ragate-sequential`.

With conversations (issue 37) the unit of sampling is the conversation: they are asked in a
seeded random order, whole, and each is one observation (c, n summed over its turns, M the
most units one conversation can bring: a question's times its most turns), so the same test
holds over a finite population of conversations (`decision/sequential.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.registry import METRICS

if TYPE_CHECKING:  # numpy loads with the first test: a run asked in full never imports it
    from pytest_ragate.scoring.confidence_sequence import MeanTest

Call = Literal["holds", "misses"]


@dataclass(frozen=True, kw_only=True)
class Stuck:
    """Why a floor's test can no longer be fed: a question with no verdict of its metric, or
    with more units of it than the bound (`units`, `bound`)."""

    question_id: str
    metric: str
    units: int | None = None  # None: no verdict
    bound: int | None = None
    unsure: bool = False  # an answer_match answer unsure and settled by no label


def unit_bound(metric: str, most_spans: int) -> int | None:
    """The most units one question can bring to `metric`'s figure: one value for a mean,
    one question for abstention, its expected spans (at most `most_spans`) for recall. For
    judge coverage, None: the verdicts the judge is asked for per question, the same for
    every judged question of a run (`judge.metrics`), so the first judged question sets it
    (a question before it brings no unit, y = f whatever the bound); a later question asked
    for more stops the test."""
    definition = METRICS[metric]
    if definition.aggregate == "mean":
        return 1
    if metric == "judge_coverage":
        return None
    if definition.unit == "spans":
        return max(most_spans, 1)
    return 1


def share(metric: str, record: QuestionRecord) -> tuple[float, int] | None:
    """(c_i, n_i): what one scored question brings to `metric`'s figure; None when it cannot
    be counted (a judge failure of the metric)."""
    tally = METRICS[metric].tally(metric, [record])
    if tally.failures and metric != "judge_coverage":
        return None
    return float(tally.k), tally.n


def sequential_metric(metric: str) -> bool:
    """A floor over questions whose figure is a ratio of per-question shares: every metric
    but those over anchors, repeats or human labels; a metric the project defines too (a
    share's 0 or 1, or a mean's value, per question: a question where it failed, or a saved
    value its kind cannot have, is one `share` cannot count, which stops the floor's test)."""
    return METRICS[metric].source in ("mechanical", "verdict", "judge", "custom")


@dataclass(kw_only=True)
class FloorTrack:
    """One floor's test, fed one scored question at a time in the order they were asked."""

    minimum: float  # the floor's bound (`Floor.min`), from below or, when `upper`, above
    upper: bool
    metric: str
    bound: int | None  # `unit_bound`: None until the first question with a unit sets it
    test: MeanTest
    right: float = 0.0  # C and U over what was fed: the figure at the stop
    units: int = 0
    shares: list[tuple[float, int]] = field(default_factory=list)  # (c_i, n_i), as fed
    stuck: Stuck | None = None  # why it can no longer be fed

    @classmethod
    def of(cls, *, metric: str, minimum: float, upper: bool, population: int,
           bound: int | None, alpha: float) -> FloorTrack:
        from pytest_ragate.scoring.confidence_sequence import MeanTest

        test = MeanTest(population=population, null=min(max(minimum, 0.0), 1.0), alpha=alpha)
        return cls(minimum=minimum, upper=upper, metric=metric, bound=bound, test=test)

    def feed(self, *records: QuestionRecord) -> None:
        """Count one unit: a scored question, or a conversation's turns (one observation of
        the test, their shares summed: the conversation is the unit of sampling); one that
        cannot be counted stops the test."""
        if self.stuck is not None or not records:
            return
        c, n = 0.0, 0
        for record in records:
            counted = share(self.metric, record)
            if counted is None:
                check = record.answer_check
                self.stuck = Stuck(question_id=record.question_id, metric=self.metric,
                                   unsure=check is not None and check.unsettled)
                return
            c, n = c + counted[0], n + counted[1]
        record = records[0]
        if self.bound is None and n:
            self.bound = n
        bound = self.bound or 1
        if n > bound or not 0 <= c <= n:
            self.stuck = Stuck(question_id=record.question_id, metric=self.metric, units=n,
                               bound=bound)
            return
        f = self.test.null
        self.right, self.units = self.right + c, self.units + n
        self.shares.append((c, n))
        self.test.observe((c - f * n + f * bound) / bound)

    @property
    def call(self) -> Call | None:
        """`holds` or `misses` once the test has proved a side, and never once it is stuck
        (a question it cannot count, even after the side was proved, leaves the floor to the
        full run's rule over every question)."""
        side = self.test.decided
        if side is None or self.stuck is not None:
            return None
        above = side == "above"
        return "misses" if above == self.upper else "holds"

    @property
    def value(self) -> float | None:
        return self.right / self.units if self.units else None

    @property
    def questions(self) -> int:
        """The questions fed that brought a unit: what `ragate_min_n` counts (`Tally`)."""
        return sum(1 for _, n in self.shares if n)


def ratio_interval(track: FloorTrack, shares: list[tuple[float, int]], *, steps: int = 100,
                   ) -> tuple[float, float] | None:
    """The floor's figure's confidence sequence at the stop: every value m whose own test,
    fed the same answers, proves neither side (a grid of `steps` + 1 values, each run of the
    one rule `MeanTest` runs, side by side: `confidence_sequence.grid_undecided`)."""
    if not shares:
        return None
    from pytest_ragate.scoring.confidence_sequence import grid_undecided

    grid = [i / steps for i in range(steps + 1)]
    bound = track.bound or 1
    kept = grid_undecided(grid, [[(c - m * n + m * bound) / bound for m in grid]
                                 for c, n in shares],
                          population=track.test.population, alpha=track.test.alpha)
    if not kept:
        value = track.value
        return (value, value) if value is not None else None
    return min(kept), max(kept)
