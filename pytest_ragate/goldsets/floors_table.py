"""A goldset's `[floors]` table (and a decorator's floors, merged into one): every floor it
declares (`metric = value`, `kind.<kind>`, `anchors.<kind>`, `slices.<key>` and one slice
`slices."<key>=<value>"`, `turn.1` and `turn.later`), each checked against the metrics, a
slice key's floors made one per value the questions have, and where in the table a floor is
declared (`floor_at`), for the problems that name it."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from pytest_ragate.goldsets.anchors import AnchorKind
from pytest_ragate.goldsets.config import SLICE_KEY, SLICE_VALUE, Question, _Model
from pytest_ragate.problems import GoldsetError, Problem, problems_from_validation
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.floor import TURN_POSITIONS, TURN_SLICE, Floor
from pytest_ragate.scoring.pass_rate import PASS_RATE, QUESTION_TABLE
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import METRICS, anchor_floor_metrics
from pytest_ragate.scoring.rubrics import is_rubric
from pytest_ragate.scoring.slices import EVERY_SLICE, sliceable
from pytest_ragate.wording.slices import not_sliceable


class FloorValue(_Model):
    """`{min = 0.8}` (the figure must reach it) or `{max = 0.05}` (must not exceed it, as a
    flaky rate must not): exactly one of them; `xfail` either way."""

    min: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    # a share's bound is in [0, 1] (`_floor` checks it); a bill's (seconds, dollars) is not
    max: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None
    xfail: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> FloorValue:
        if (self.min is None) == (self.max is None):
            raise ValueError("a floor is { min = … } or { max = … }: exactly one of them")
        return self


_UNIT = TypeAdapter(Annotated[float, Field(ge=0.0, le=1.0)])


DEFAULT_JUDGE_COVERAGE = 0.95
ANCHOR_KINDS = get_args(AnchorKind)


def with_judge_coverage(floors: list[Floor]) -> list[Floor]:
    """A goldset with judged floors also gates on how many verdicts the judge delivered."""
    if any(f.judged for f in floors) and not any(f.metric == "judge_coverage" for f in floors):
        return [*floors, Floor("judge_coverage", DEFAULT_JUDGE_COVERAGE)]
    return floors


@dataclass(frozen=True, kw_only=True)
class _FloorEntry:
    """One floor as `[floors]` writes it: `metric = value` at `at`, of a kind or an anchor
    kind, before it is checked."""

    metric: str
    value: object
    at: str
    kind: str | None = None
    anchors: bool = False
    slice: tuple[str, str] | None = None  # (key, value), the value EVERY_SLICE for every one
    question: bool = False  # `[floors.question]`: the only place a question_pass_rate floor is


def parse_floors(raw: dict[str, Any], path: Path, where: str = "floors",
                 rubrics: Collection[str] = ()) -> list[Floor]:
    """`{metric: min | {min, xfail}}` plus `kind.<kind>.<metric>`, `anchors.<kind>.<metric>` and
    `slices.<key>.<metric>` (every value of the key: `slice_floors` makes one floor of each
    value found) or `slices."<key>=<value>".<metric>` (one slice); names checked against
    METRICS, a rubric's against the goldset's own `rubrics` (another goldset's is unknown
    here)."""
    floors: list[Floor] = []
    problems: list[Problem] = []
    for entry in _floor_entries(raw, path, where):
        if isinstance(entry, Problem):
            problems.append(entry)
        elif isinstance(found := _floor(entry, path, rubrics), Floor):
            floors.append(found)
        else:
            problems.extend(found)
    if problems:
        raise GoldsetError(problems)
    return floors


def _floor_entries(raw: dict[str, Any], path: Path, where: str,
                   ) -> Iterator[_FloorEntry | Problem]:
    """Every floor the table declares, in order, and a problem where a sub-table is not one."""
    for key, value in raw.items():
        if key == TURN_SLICE and isinstance(value, dict):
            yield from _turn_entries(value, path, f"{where}.{key}")
        elif key == QUESTION_TABLE:
            yield from _question_entries(value, path, f"{where}.{key}")
        elif key not in ("anchors", "kind", "slices"):
            yield _FloorEntry(metric=key, value=value, at=f"{where}.{key}")
        elif not isinstance(value, dict):
            yield Problem(path, f"{where}.{key}", {
                "anchors": "must be a table of anchor kinds", "kind": "must be a table of kinds",
                "slices": "must be a table of slice keys (lang) or slices (\"lang=de\")"}[key])
        elif key == "slices":
            for name, table in value.items():
                yield from _slice_entries(name, table, path, f"{where}.slices")
        else:
            for kind, table in value.items():
                yield from _kind_entries(key == "anchors", kind, table, path, f"{where}.{key}")


def _question_entries(table: object, path: Path, where: str,
                      ) -> Iterator[_FloorEntry | Problem]:
    """`[floors.question] pass_rate = 0.8`: every question right in at least that share of
    its repeats (scoring/pass_rate.py), the floor on `question_pass_rate`."""
    if not isinstance(table, dict) or set(table) - {"pass_rate"}:
        yield Problem(path, where, "[floors.question] holds one floor, pass_rate = 0.8 (the "
                      "share of its repeats each question must be right in)")
        return
    if "pass_rate" in table:
        yield _FloorEntry(metric=PASS_RATE, value=table["pass_rate"], at=f"{where}.pass_rate",
                          question=True)


def _kind_entries(anchors: bool, kind: str, table: object, path: Path, where: str,
                  ) -> Iterator[_FloorEntry | Problem]:
    """The floors of one kind (`kind.<kind>`), or of one anchor kind (`anchors.<kind>`)."""
    if anchors and (kind not in ANCHOR_KINDS or not isinstance(table, dict)):
        yield Problem(path, f"{where}.{kind}", "must be a table of floors for an anchor kind "
                      f"({', '.join(ANCHOR_KINDS)})")
    elif not isinstance(table, dict):
        yield Problem(path, f"{where}.{kind}", "must be a table of metric floors")
    else:
        for metric, value in table.items():
            yield _FloorEntry(metric=metric, value=value, at=f"{where}.{kind}.{metric}",
                              kind=kind, anchors=anchors)


def _turn_entries(positions: dict[str, Any], path: Path, where: str,
                  ) -> Iterator[_FloorEntry | Problem]:
    """`[floors.turn.1]` and `[floors.turn.later]`: the floors of a turn position, the slice
    `turn=1` or `turn=later` of a conversation's turns (decided with each other, as a slice
    key's slices are)."""
    for position, table in positions.items():
        if position not in TURN_POSITIONS or not isinstance(table, dict):
            yield Problem(path, f"{where}.{position}", "a turn position's floors are "
                          "[floors.turn.1] (every conversation's first turn) or "
                          "[floors.turn.later] (every later turn): tables of metric floors")
            continue
        for metric, floor in table.items():
            yield _FloorEntry(metric=metric, value=floor, at=f"{where}.{position}.{metric}",
                              slice=(TURN_SLICE, position))


def _slice_entries(name: str, table: object, path: Path, where: str,
                   ) -> Iterator[_FloorEntry | Problem]:
    """The floors of every slice of a key (`slices.lang`) or of one slice (`slices."lang=de"`)."""
    key, _, value = name.partition("=")
    at = f'{where}."{name}"' if "=" in name else f"{where}.{name}"
    bad = ([] if SLICE_KEY.fullmatch(key) else [f"key {key!r}"]) + (
        [f"value {value!r}"] if "=" in name and not SLICE_VALUE.fullmatch(value) else [])
    if bad:
        yield Problem(path, at, "a slice is a key (lang) or key=value (\"lang=de\"), of "
                      "letters, digits, '_', '-' (and '.' in a value); not "
                      + " and ".join(bad))
    elif not isinstance(table, dict):
        yield Problem(path, at, "must be a table of metric floors")
    else:
        for metric, floor in table.items():
            yield _FloorEntry(metric=metric, value=floor, at=f"{at}.{metric}",
                              slice=(key, value if "=" in name else EVERY_SLICE))


def _floor(entry: _FloorEntry, path: Path, rubrics: Collection[str] = (),
           ) -> Floor | list[Problem]:
    """One floor checked: a metric that exists (and may gate anchors, for an anchor floor),
    and a value that is a number in [0, 1] or one bound with its xfail."""
    at, metric, value = entry.at, entry.metric, entry.value
    if entry.anchors and metric not in anchor_floor_metrics():
        return [Problem(path, at, f"an anchor population floor is one of "
                        f"{', '.join(anchor_floor_metrics())}, not {metric!r}")]
    if (metric == PASS_RATE) != entry.question or metric == "pass_rate":
        return [Problem(path, at, "a pass rate per question is [floors.question] pass_rate = "
                        "0.8, over every question of the goldset")]
    if metric == PASS_RATE and (problem := _pass_rate_value(entry.value)):
        return [Problem(path, at, problem)]
    if metric not in METRICS or (METRICS[metric].rubric and metric not in rubrics):
        close = [m for m in METRICS.close_to(metric) if not is_rubric(m) or m in rubrics]
        known = [m for m in METRICS.vocabulary() if not is_rubric(m) or m in rubrics]
        return [Problem(path, at, f"unknown metric {metric!r}"
                        + (f": did you mean {' or '.join(close)}?" if close else "")
                        + f" (known: {', '.join(known)})")]
    if not entry.anchors and METRICS[metric].source == "anchors":
        return [Problem(path, at, f"{metric} is the share of a kind's anchors whose check held: "
                        f"a floor on it is over anchors ([floors.anchors.KIND] {metric} = …), "
                        "never over questions, where it has nothing to count and could never "
                        "pass")]
    if entry.slice and not sliceable(metric):
        return [Problem(path, at, not_sliceable(metric))]
    try:
        if isinstance(value, dict):
            spec = FloorValue.model_validate(value)
            if spec.max is not None and metric == AGREEMENT:
                return [Problem(path, at, "judge_agreement is a lower bound: { min = … }, not "
                                "{ max = … }")]
            if not METRICS[metric].share and spec.max is None:
                return [Problem(path, at, f"{metric} is an upper bound: {{ max = … }}")]
            if METRICS[metric].share and spec.max is not None and spec.max > 1.0:
                return [Problem(path, at, f"{metric} is a share: {{ max = … }} in [0, 1], "
                                f"not {spec.max:g}")]
            bound = spec.max if spec.max is not None else spec.min
            assert bound is not None
            return Floor(metric, bound, kind=entry.kind, xfail=spec.xfail,
                         anchors=entry.anchors, upper=spec.max is not None, slice=entry.slice)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not METRICS[metric].share:
                return [Problem(path, at, f"{metric} is an upper bound: {{ max = {value} }}, "
                                "not a bare number (a floor to reach)")]
            return Floor(metric, _UNIT.validate_python(value), kind=entry.kind,
                         anchors=entry.anchors, slice=entry.slice)
    except ValidationError as error:
        return problems_from_validation(error, path, prefix=at)
    return [Problem(path, at, "must be a number in [0, 1], { min = …, xfail = \"reason\" } or "
                    "{ max = … }")]


def _pass_rate_value(value: object) -> str | None:
    """A pass rate is a share strictly between 0 and 1, as a number or `{ min, xfail }`."""
    rate = value.get("min") if isinstance(value, dict) else value
    if isinstance(value, dict) and "max" in value:
        return "a pass rate is a lower bound: a number or { min = … }, not { max = … }"
    if isinstance(rate, int | float) and not isinstance(rate, bool) and not 0.0 < rate < 1.0:
        return (f"a pass rate is above 0 and below 1, not {rate:g} (every repeat right is "
                "\"pass^k\" = 1)")
    return None


def slice_floors(floors: Sequence[Floor], questions: Sequence[tuple[int, Question]],
                 path: Path) -> tuple[list[Floor], list[Problem]]:
    """`[floors.slices.<key>]` made one floor per value of the key the questions have (a named
    slice `"<key>=<value>"` overriding its value's), in the floors' order, values sorted; and
    a problem where a key or a named slice has no question, and where a question lacks a key
    whose every value is gated: it would be in none of the key's slices, unseen."""
    found: list[Floor] = []
    problems: list[Problem] = []
    named = {(f.slice, f.metric) for f in floors if f.slice and f.slice[1] != EVERY_SLICE}
    for floor in floors:
        if floor.slice is None:
            found.append(floor)
            continue
        key, value = floor.slice
        values = {v for _, q in questions if (v := q.slices.get(key)) is not None}
        if value != EVERY_SLICE:
            if value not in values and questions:
                problems.append(Problem(path, _slice_at(floor), f"no question has {key}="
                                        f"{value} ({_values_here(key, values)}): this floor "
                                        "could never be decided"))
            found.append(floor)
            continue
        problems.extend(_untagged(floor, questions, path))
        found.extend(replace(floor, slice=(key, v)) for v in sorted(values)
                     if ((key, v), floor.metric) not in named)
    return found, problems


def _slice_at(floor: Floor) -> str:
    assert floor.slice is not None
    key, value = floor.slice
    if key == TURN_SLICE:
        return f"floors.turn.{value}.{floor.metric}"
    return (f"floors.slices.{key}.{floor.metric}" if value == EVERY_SLICE
            else f'floors.slices."{key}={value}".{floor.metric}')


def _values_here(key: str, values: set[str]) -> str:
    return (f"values of {key} here: {', '.join(sorted(values))}" if values
            else f"no question is tagged {key}")


def _untagged(floor: Floor, questions: Sequence[tuple[int, Question]], path: Path,
              ) -> list[Problem]:
    """One problem for the questions without the key of a floor over its every value."""
    assert floor.slice is not None
    key = floor.slice[0]
    missing = [(line, q.question_id) for line, q in questions if key not in q.slices]
    if not missing:
        return []
    shown = fmt_some([f"{qid} (line {line})" for line, qid in missing], NAMED_UNTAGGED)
    return [Problem(path, _slice_at(floor), f"{len(missing)} of {len(questions)} questions "
                    f"have no tag {key!r}: {shown}; a floor over every value of {key} "
                    f"would leave them in none: tag them (\"tags\": {{\"{key}\": \"…\"}} in "
                    "the questions file)")]


NAMED_UNTAGGED = 5


def floor_at(floor: Floor) -> str:
    """Where a floor is declared in ragate.toml: `floors.kind.x.metric`, `floors.metric`."""
    if floor.slice:
        return _slice_at(floor)
    return f"floors.kind.{floor.kind}.{floor.metric}" if floor.kind else f"floors.{floor.metric}"
