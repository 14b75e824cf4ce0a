"""A floor's figures, computed once: the tally over its rows, the value it is decided on (the
tally's own, or the prediction-powered estimate), its 95% interval, the true value at which
a floor over this n passes 80% of the time (`figures_of`), and who computed it with the rows
it counts as wrong or leaves out (`counted_of`). Statistics only: the rule that holds them to
a floor, and the verdict, are decision/floors.py's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ragate.scoring import intervals
from pytest_ragate.scoring.custom import COMPUTED_BY
from pytest_ragate.scoring.floor import Floor, counts_in
from pytest_ragate.scoring.power import PassesAt, passes_at
from pytest_ragate.scoring.ppi import Ppi
from pytest_ragate.scoring.records import MECHANICAL, QuestionRecord, Tally, tally
from pytest_ragate.scoring.registry import METRICS


@dataclass(frozen=True, kw_only=True)
class Figures:
    """What a floor is decided on (`figures_of`): the tally, the value (the tally's own, or
    the prediction-powered estimate), its 95% interval, and the true value at which a floor
    over this n passes 80% of the time."""

    tally: Tally
    value: float
    interval: tuple[float, float] | None
    passes_at: PassesAt | None = None
    ppi: Ppi | None = None

    @property
    def figure(self) -> float | None:
        """The figure a verdict records when it is not the tally's value."""
        return self.ppi.value if self.ppi is not None else None

    @property
    def estimate(self) -> str:
        return "ppi" if self.ppi is not None else ""


@dataclass(frozen=True, kw_only=True)
class Counted:
    """Who computed a floor's figure, and the rows it counts as wrong (errors) or leaves
    out (skipped questions, judge failures): what a verdict carries beside its figures."""

    computed_by: str = MECHANICAL
    errors: int = 0
    skipped: int = 0
    failures: int = 0  # judge failures of a metric the judge is asked for
    # why the judge failed, each cause once with the questions it failed on, in first-seen
    # order (a judge that is down: one cause, every question)
    failure_causes: tuple[tuple[str, tuple[str, ...]], ...] = ()


def interval_of(t: Tally) -> tuple[float, float] | None:
    """The tally's 95% interval, as `intervals.interval` chooses it: Wilson for proportions,
    the betting interval for means of values in [0, 1] (valid at every n, never a point),
    order statistics for a quantile; with repeats (`t.clusters`) over questions."""
    return intervals.interval(t)


def figures_of(floor: Floor, t: Tally, strict: bool, ppi: Ppi | None = None,
               min_n: int = 0) -> Figures:
    """The tally's value and interval, or with `ppi` the estimate's, and the power of a
    floor over this n (`strict`: decided on its interval's bound, `ragate_ci = strict`;
    `min_n`: `ragate_min_n`, under which a floor passes at no value)."""
    if ppi is not None:
        return Figures(tally=t, value=ppi.value, interval=ppi.interval, ppi=ppi)
    # power over n independent units: not what a floor over clusters or a bound from above
    # can tell apart, so those say nothing rather than a wrong figure; nor does a floor
    # ragate_min_n refuses, which passes at no value
    power = (None if t.clusters or floor.upper or t.questions < min_n else
             passes_at(METRICS[floor.metric].aggregate, t.n, t.values, floor.min, strict))
    return Figures(tally=t, value=t.value or 0.0, interval=interval_of(t), passes_at=power)


def floor_tally(floor: Floor, records: Sequence[QuestionRecord]) -> Tally:
    """The floor's tally over the rows in its population (its kind's, its slice's)."""
    return tally(floor.metric, [r for r in records if counts_in(floor, r.kind, r.tags)])


def computed_by(floor: Floor, records: Sequence[QuestionRecord], judge: str | None = None,
                ) -> str:
    """`mechanical`, the judges the records name, else the judge configured (`judge`); for a
    metric the project defines `@ragate.metric`; for
    the bill, who measured it: ragate's clock (latency), the usage the APIs reported (cost)."""
    if METRICS[floor.metric].source == "custom":
        return COMPUTED_BY  # the project's function, its values saved in the rows
    if METRICS[floor.metric].source == "bill":
        return "ragate's clock" if METRICS[floor.metric].decided_on_bound else "reported usage"
    if not floor.judged:
        return MECHANICAL
    judges = sorted({r.judge for r in records if r.judge})
    return ", ".join(judges) or judge or "no judge"


def counted_of(floor: Floor, rows: Sequence[QuestionRecord], judge: str | None, t: Tally,
               ) -> Counted:
    asked = METRICS[floor.metric].asked
    return Counted(computed_by=computed_by(floor, rows, judge),
                   errors=sum(r.status == "error" for r in rows),
                   skipped=sum(r.status == "skipped" for r in rows),
                   failures=t.failures if asked else 0,
                   failure_causes=judge_failure_causes(
                       rows, floor.metric if asked else None) if asked or t.failures else ())


def judge_failure_causes(rows: Sequence[QuestionRecord], metric: str | None = None,
                         ) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Why the judge failed on `rows` (on `metric`, else on any metric), each cause once with
    the questions it failed on, in the order first seen."""
    causes: dict[str, dict[str, None]] = {}
    for r in rows:
        for name, why in r.judge_failures.items():
            if metric is None or name == metric:
                causes.setdefault(why, {})[r.question_id] = None
    return tuple((why, tuple(names)) for why, names in causes.items())


def kind_counts(metric: str, records: Sequence[QuestionRecord]) -> list[tuple[str, Tally]]:
    """Per-kind tallies in first-seen order, for `single_doc 7/20 · unanswerable 5/5`."""
    by_kind: dict[str, list[QuestionRecord]] = {}
    for r in records:  # one pass, each kind's rows in order
        by_kind.setdefault(r.kind, []).append(r)
    return [(kind, tally(metric, rows)) for kind, rows in by_kind.items()]
