"""One home for "a latency quantile floor over fewer answers than its bound needs":
scoring/floor.quantile_shortfall, asked by `ragate validate`'s warning
(goldsets/forewarnings.py) and `ragate audit`'s finding (audit/floors.py), which agree, repeats
included."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.audit import floors
from pytest_ragate.goldsets.forewarnings import undecidable_floors
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.scoring.floor import Floor, quantile_shortfall
from tests.test_pins_runs import goldset

LATENCY = Floor("latency_p95_s", 2.0, upper=True)


@pytest.mark.parametrize(("floor", "answers", "short"), [
    (LATENCY, 58, 59), (LATENCY, 59, None),  # 1 - 0.95^59 >= 0.95 > 1 - 0.95^58
    (Floor("latency_p50_s", 2.0, upper=True), 4, 5), (Floor("latency_p50_s", 2.0, upper=True),
                                                       5, None),
    (Floor("abstention_accuracy", 0.9), 1, None),  # not a quantile: never short here
])
def test_a_quantile_floor_is_short_of_answers_below_its_order_statistic_bound(
        floor: Floor, answers: int, short: int | None) -> None:
    assert quantile_shortfall(floor, answers) == short


@pytest.mark.parametrize(("repeat", "warned"), [(1, True), (15, False)])
def test_validate_and_audit_agree_on_a_latency_floor_and_count_repeats(
        tmp_path: Path, repeat: int, warned: bool) -> None:
    root = goldset(tmp_path / "gs", '[floors]\nlatency_p95_s = { max = 2.0 }\n')
    toml = root / "ragate.toml"
    toml.write_text(toml.read_text().replace('name = "shop"\n',
                                             f'name = "shop"\nrepeat = {repeat}\n'))
    loaded = load_goldset(root)
    said = list(undecidable_floors(loaded))
    found = floors.too_small(loaded.floors, [c.question for c in loaded.cases],
                             loaded.config.repeat, [], toml, {})
    assert bool(said) == bool(found) == warned  # 4 questions x 15 repeats = 60 answers >= 59
    if warned:
        assert "59 answers" in said[0] and "59" in found[0].message
