"""`[floors.question] pass_rate = 0.8`: every question right in at least that share of its
repeats (scoring/pass_rate.py, decision/pass_rate_floor.py). Pure: the exact test and its
bound, Holm across questions, the repeats a rate needs, the verdict and its refusals, and the
`[floors]` table's errors. The collection refusal and a strict pass through pytest are in
tests/test_repeats.py's run over too few repeats (-n 0 and -n 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.decision.floors import Gap
from pytest_ragate.decision.pass_rate_floor import decide_pass_rate
from pytest_ragate.decision.rules import Strictness
from pytest_ragate.goldsets.loader import parse_floors
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pass_rate import (
    ALPHA,
    PASS_RATE,
    all_right_p,
    lower_bound,
    needed_repeats,
    question_rates,
)
from tests.test_repeats import record

STRICT = Strictness(ci="strict")
FLOOR = Floor(PASS_RATE, 0.8)


@pytest.mark.parametrize(("questions", "need"), [(1, 14), (20, 27), (30, 29)])
def test_the_repeats_a_rate_needs_are_the_fewest_that_decide_it(questions: int,
                                                                need: int) -> None:
    """With `need` repeats a question right in all of them is shown ≥ 0.8 after Holm over the
    goldset's questions; with one fewer no outcome of the repeats could show it."""
    assert needed_repeats(0.8, questions) == need
    for n, held in ((need, True), (need - 1, False)):
        rates = question_rates({f"q{i}": (n, n) for i in range(questions)}, 0.8, strict=True)
        assert all(r.held is held for r in rates)
    assert all_right_p(0.8, need - 1) > ALPHA / questions >= all_right_p(0.8, need)
    assert needed_repeats(0.999, 30) is None  # more than a goldset's 100 repeats


def test_the_lower_bound_is_clopper_pearsons() -> None:
    """All right: the exact bound solves rate**n = alpha; none right: 0."""
    for n in (5, 14, 40):
        assert lower_bound(n, n) == pytest.approx(ALPHA ** (1 / n), abs=1e-7)
    assert lower_bound(0, 10) == 0.0
    assert 0.0 < lower_bound(7, 10) < 0.7


def test_strict_needs_the_corrected_test_where_point_reads_the_share() -> None:
    """26 of 29 (0.90) reaches 0.8 as a share; Holm's exact test cannot show it (p 0.10)."""
    counts = {"a": (29, 29), "b": (26, 29), "c": (22, 29)}
    point = {r.question_id: r.held for r in question_rates(counts, 0.8, strict=False)}
    strict = {r.question_id: r.held for r in question_rates(counts, 0.8, strict=True)}
    assert point == {"a": True, "b": True, "c": False}
    assert strict == {"a": True, "b": False, "c": False}


def rows(right: dict[str, int], repeats: int) -> list:
    """Each question's rows over `repeats`, right in its first `right[q]` of them."""
    return [record(q, r, r <= c, i) for i, (q, c) in enumerate(right.items())
            for r in range(1, repeats + 1)]


def test_the_floor_names_the_questions_that_miss() -> None:
    held = decide_pass_rate(FLOOR, "g", rows({"a": 19, "b": 19, "c": 19}, 19),
                            strictness=STRICT)
    assert held.outcome == "passed" and held.message.startswith("3 of 3 questions × 19 repeats")
    missed = decide_pass_rate(FLOOR, "g", rows({"a": 19, "b": 18, "c": 12}, 19),
                              strictness=STRICT)
    assert missed.outcome == "failed"
    assert "missing: c right 12 of 19 (lower bound 0.42, Holm p 0.98); b right 18 of 19" in (
        missed.message)
    point = decide_pass_rate(FLOOR, "g", rows({"a": 19, "b": 18, "c": 12}, 19))
    assert point.outcome == "failed" and "missing: c right 12 of 19" in point.message
    assert "b right" not in point.message
    xfail = decide_pass_rate(Floor(PASS_RATE, 0.8, xfail="flaky"), "g",
                             rows({"a": 19, "b": 18, "c": 12}, 19), strictness=STRICT)
    assert xfail.outcome == "xfailed"


def test_too_few_repeats_missing_ones_or_questions_never_pass() -> None:
    """Rows of fewer repeats than the rate needs (a results file `ragate decide` reads), a
    missing repeat, and fewer questions than ragate_min_n: not decided, failed."""
    short = decide_pass_rate(FLOOR, "g", rows({"a": 5, "b": 5}, 5))
    assert short.outcome == "failed"
    assert "not decided: floors.question.pass_rate: a pass rate of 0.8 over 2 questions " \
           "needs repeat ≥ 17" in short.message
    gap = Gap(member="b[r3]", member_kind="single_doc", kind="errored")
    assert decide_pass_rate(FLOOR, "g", rows({"a": 19, "b": 19}, 19), gaps=[gap],
                            strictness=STRICT).outcome == "failed"
    few = decide_pass_rate(FLOOR, "g", rows({"a": 19, "b": 19}, 19),
                           strictness=Strictness(ci="strict", min_n=3))
    assert few.outcome == "failed" and "fewer than ragate_min_n" in few.message


@pytest.mark.parametrize(("table", "says"), [
    ({"question": {"pass_rate": 1.0}}, "above 0 and below 1, not 1"),
    ({"question": {"pass_rate": {"max": 0.2}}}, "a lower bound"),
    ({"question": {"pass_rat": 0.8}}, "[floors.question] holds one floor"),
    ({"question_pass_rate": 0.8}, "is [floors.question] pass_rate = 0.8"),
    ({"pass_rate": 0.8}, "is [floors.question] pass_rate = 0.8"),
    ({"kind": {"a": {"question_pass_rate": 0.8}}}, "is [floors.question] pass_rate = 0.8"),
])
def test_a_bad_pass_rate_is_one_error_naming_its_field(table: dict, says: str) -> None:
    with pytest.raises(GoldsetError) as error:
        parse_floors(table, Path("ragate.toml"))
    assert len(error.value.problems) == 1 and says in str(error.value.problems[0])


def test_the_table_makes_one_floor() -> None:
    assert parse_floors({"question": {"pass_rate": {"min": 0.8, "xfail": "x"}}},
                        Path("ragate.toml")) == [Floor(PASS_RATE, 0.8, xfail="x")]


def test_validate_refuses_a_pass_rate_its_repeats_cannot_decide(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 ) -> None:
    """One line naming the field and the repeats that would decide it; with them, ok."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from tests.conftest import BASE_TOML, write_goldset

    monkeypatch.chdir(tmp_path)
    floors = "[floors.question]\npass_rate = 0.8\n"
    write_goldset(tmp_path / "five", floors=floors,
                  toml=BASE_TOML.replace('"7"\n', '"7"\nrepeat = 5\n', 1))
    write_goldset(tmp_path / "enough", floors=floors,
                  toml=BASE_TOML.replace('"7"\n', '"7"\nrepeat = 30\n', 1))
    refused = CliRunner().invoke(main, ["validate", "five"])
    assert refused.exit_code == 1
    assert refused.output.count("floors.question.pass_rate") == 1
    assert ("five/ragate.toml: floors.question.pass_rate: a pass rate of 0.8 over 4 questions "
            "needs repeat ≥ 20" in refused.output)
    assert "this run asks each question 5 times" in refused.output
    ok = CliRunner().invoke(main, ["validate", "enough"])
    assert ok.exit_code == 0 and ok.output.startswith("ok "), ok.output


def test_promoting_the_pass_rate_writes_its_own_table(tmp_path: Path) -> None:
    from pytest_ragate.goldsets.promotion import promote_floors

    config = tmp_path / "ragate.toml"
    config.write_text('[floors.question]\npass_rate = { min = 0.8, xfail = "flaky" }\n')
    done = promote_floors(config, [Floor(PASS_RATE, 0.8, xfail="flaky")])
    assert len(done) == 1 and config.read_text() == "[floors.question]\npass_rate = 0.8\n"
    assert parse_floors({"question": {"pass_rate": 0.8}}, config) == [Floor(PASS_RATE, 0.8)]


def test_power_states_the_repeats_a_pass_rate_needs_as_validate_does() -> None:
    """`ragate power GOLDSET --results R` on the pass rate: the repeats it needs over the
    goldset's questions (validate's figure and, when the run's are too few, its sentence),
    never a power figure or a number of questions (a mean's normal approximation before)."""
    from pytest_ragate.commands.power import floor_power
    from pytest_ragate.wording.pass_rate import too_few_repeats

    cells, said = floor_power(FLOOR, rows({"a": 5, "b": 5, "c": 4, "d": 5}, 5), 4,
                              strict=False, target=0.8, min_n=0)
    assert cells[4:] == ["—", "repeat ≥ 20"]
    assert said == too_few_repeats(0.8, 5, 4, 20)
    cells, said = floor_power(FLOOR, rows({"a": 20, "b": 20, "c": 19, "d": 20}, 20), 4,
                              strict=True, target=0.8, min_n=0)
    assert cells[4:] == ["—", "repeat ≥ 20"]
    assert said == ("floors.question.pass_rate: a pass rate of 0.8 over 4 questions needs "
                    "repeat ≥ 20 (a question right in all of them is then shown at or above "
                    "0.8, Holm across the questions, alpha 0.05), and this run asks each "
                    "question 20 times: enough to decide it")
    _, said = floor_power(Floor(PASS_RATE, 0.999), rows({"a": 5}, 5), 1, strict=False,
                          target=0.8, min_n=0)
    assert said is not None and "needs more than 100 repeats to be shown" in said
