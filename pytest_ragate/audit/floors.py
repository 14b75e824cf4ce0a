"""The rule over floors: a slice floor whose slice has fewer questions than it needs to be
decided, and a latency quantile floor over fewer answers than its 95% upper bound needs.

"Needs" is the project's own arithmetic, not re-derived here: `scoring/slices.needs_of`
(about how many questions let a slice's 95% interval clear its floor 80% of the time,
Wilson for proportions, the betting interval for means) over a saved run's rows when one is
given, else `slices.proportion_needs` at the best value a slice could have (every answer
right; none, for a `{max}` floor), and `scoring/floor.quantile_shortfall` (Conover's order
statistics: 59 answers for a 95th percentile at 95%; `ragate validate` warns of the same)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.goldsets.config import Question
from pytest_ragate.scoring.figures import floor_tally
from pytest_ragate.scoring.floor import Floor, counts_in, quantile_shortfall
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.slices import needs_of, proportion_needs
from pytest_ragate.wording import audit as wording


def best_case_needs(floor: Floor) -> int | None:
    """The questions a slice floor needs if its every answer were right (a `{max}` floor:
    none wrong): fewer can never hold it; None when no n can."""
    return proportion_needs(1 - floor.min, 1.0) if floor.upper else proportion_needs(
        floor.min, 1.0)


def too_small(floors: Sequence[Floor], questions: Sequence[Question], repeats: int,
              rows: Sequence[QuestionRecord], config: Path, lines: dict[str, int],
              ) -> list[Finding]:
    """Each slice floor its slice's n cannot decide, and each latency quantile floor over
    fewer answers than its bound needs; `rows` (a saved run's, maybe none) give a slice's
    observed value."""
    found = []
    for floor in floors:
        if floor.anchors:
            continue
        n = sum(counts_in(floor, q.kind, q.slices) for q in questions)
        at = {"path": config, "line": lines.get(floor.label)}
        if METRICS[floor.metric].aggregate == "quantile":
            needs = quantile_shortfall(floor, n * repeats)
            if needs is not None:
                found.append(finding("floor_too_small",
                                     wording.quantile_too_small(floor.label, n * repeats, needs),
                                     measure=n * repeats, **at))
            continue
        if floor.slice is None or not n:
            continue
        t = floor_tally(floor, rows) if rows else None
        if t is not None and t.n:
            needs, value = needs_of(floor, t), t.value
            if needs is None or needs <= n:
                continue
        else:
            needs, value = best_case_needs(floor), None
            if needs is not None and needs <= n:
                continue
        found.append(finding("floor_too_small",
                             wording.slice_too_small(floor.label, n, needs, value),
                             measure=n, **at))
    return found
