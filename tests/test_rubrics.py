"""Rubrics a judge grades (`[rubrics.NAME]`, issue 48 item 2), as pure functions: the table
read with one problem per bad field, a rubric's name as a metric's in floors and labels, its
verdict's cache key holding its criteria, the fixture judge's `rubrics` field held to the
rubric's scale, and a rubric's floor decided only where people vouch for the judge on it.
The run-level behaviour (both judges, -n 0 and -n 2) is tests/test_rubric_runs.py's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from pytest_ragate.decision.agreement_floor import on_rubric
from pytest_ragate.decision.floors import Verdict
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.judges.base import JudgeFailure, JudgeInput
from pytest_ragate.judges.fixture import FixtureJudge
from pytest_ragate.judges.runner import cache_key
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.agreement import Agreement
from pytest_ragate.scoring.custom import define
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.rubrics import Rubric, declare
from tests.conftest import BASE_TOML, jsonl, write_goldset

POLITE = '[rubrics.polite]\ncriteria = "The answer is polite and does not blame the customer."\n'
CLEAR = ('[rubrics.clear]\ncriteria = "The answer is clear."\nscale = 5\n'
         'scores = ["unreadable", "muddled", "plain", "clear", "crisp"]\n')


def goldset(root: Path, rubrics: str = POLITE, floors: str = "[floors]\npolite = 0.9\n",
            toml: str = BASE_TOML) -> Path:
    return write_goldset(root, toml=f"{toml}\n{rubrics}", floors=floors)


def problems(root: Path) -> list[str]:
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    return [f"{p.field}: {p.message}" for p in caught.value.problems]


# --- the [rubrics] table -------------------------------------------------------------------


def test_a_rubric_is_a_metric_its_floors_gate_and_the_judge_is_asked_for_where_gated(
        tmp_path: Path) -> None:
    gated = load_goldset(goldset(tmp_path / "a", POLITE + CLEAR))
    assert gated.rubrics == {
        "polite": Rubric(name="polite", criteria="The answer is polite and does not blame "
                         "the customer."),
        "clear": Rubric(name="clear", criteria="The answer is clear.", scale=5,
                        scores=("unreadable", "muddled", "plain", "clear", "crisp"))}
    assert [f.name for f in gated.floors] == ["floor[polite]", "floor[judge_coverage]"]
    assert METRICS["polite"].judged and METRICS["polite"].rubric
    assert gated.requested_verdicts == ("polite",)  # clear: declared, gated nowhere
    kind = load_goldset(goldset(tmp_path / "b", floors="[floors.kind.single_doc]\n"
                                "polite = 0.5\n"))
    assert kind.requested_verdicts == ("polite",)


def test_every_bad_field_of_a_rubric_is_one_problem_naming_file_and_field(
        tmp_path: Path) -> None:
    define([])
    bad = ('[rubrics.faithfulness]\ncriteria = "x"\n[rubrics.blank]\ncriteria = " "\n'
           '[rubrics.four]\ncriteria = "x"\nscale = 4\nscores = ["a", "b", "c", "d"]\n'
           '[rubrics.unscaled]\ncriteria = "x"\nscores = ["a"]\n'
           '[rubrics.short]\ncriteria = "x"\nscale = 5\nscores = ["a"]\n'
           '[rubrics.extra]\ncriteria = "x"\ncolour = "red"\n[rubrics.none]\n'
           '[rubrics.Polite]\ncriteria = "x"\n')
    root = goldset(tmp_path / "gs", bad, floors="")
    found = problems(root)
    assert found == [
        "rubrics.faithfulness: 'faithfulness' is a built-in metric: name the rubric "
        "otherwise (e.g. faithfulness_rubric)",
        "rubrics.blank.criteria: the criteria are the words the judge grades against: not "
        "empty",
        "rubrics.four.scale: Input should be 5",
        "rubrics.unscaled.scores: a pass/fail rubric has no scores: give scale = 5 with them, "
        "or leave them out",
        "rubrics.short.scores: a rubric of scale 5 describes each score: scores = […] with 5 "
        "descriptions, score 1's first (given 1)",
        "rubrics.extra.colour: unknown field",
        "rubrics.none.criteria: Field required",
        "rubrics.Polite: a rubric's name is lower-case letters, digits and '_', "
        "starting with a letter (at most 64), not 'Polite'"], found
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    assert all(p.path == root / "ragate.toml" for p in caught.value.problems)


def test_a_rubric_named_as_a_metric_the_project_defines_is_refused(tmp_path: Path) -> None:
    define([])
    from pytest_ragate.scoring.custom import Defined

    define([Defined(name="polite", kind="share", function=lambda **_: True, where="c.py:1")])
    try:
        assert problems(goldset(tmp_path / "gs")) == [
            "rubrics.polite: 'polite' is a metric the project defines (@ragate.metric): "
            "name the rubric otherwise"]
    finally:
        define([])


def test_a_floor_on_a_rubric_this_goldset_does_not_declare_is_an_unknown_metric(
        tmp_path: Path) -> None:
    load_goldset(goldset(tmp_path / "a"))  # another goldset of the process declares polite
    found = problems(goldset(tmp_path / "b", rubrics="", floors="[floors]\npolite = 0.9\n"))
    assert len(found) == 1 and found[0].startswith("floors.polite: unknown metric 'polite' ")
    assert "polite" not in found[0].partition("(known:")[2]


def test_a_rubric_label_is_of_its_rubric_s_kind(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs", POLITE + CLEAR, floors="[floors]\npolite = 0.5\n",
                   toml=BASE_TOML + '\n[judge]\nlabels = "labels.jsonl"\n')
    (root / "labels.jsonl").write_text(jsonl([
        {"question_id": "q1", "metric": "polite", "verdict": 1},
        {"question_id": "q2", "metric": "polite", "score": 0.5},
        {"question_id": "q1", "metric": "clear", "score": 0.75},
        {"question_id": "q2", "metric": "clear", "verdict": 1},
        {"question_id": "q3", "metric": "rude", "verdict": 1}]))
    found = problems(root)
    assert found == [
        "score: rubric polite is pass/fail: its labels are verdicts, 0 or 1",
        "verdict: rubric clear is scored 1 to 5: its labels are scores in [0, 1], (score - 1) "
        "/ 4",
        "metric: unknown metric 'rude' (labels are for answer_correctness, answer_match, "
        "answer_relevance, clear, context_precision, factual_correctness, faithfulness, "
        "polite)"], found


def test_a_rubric_floor_without_labels_loads_beside_judge_agreement(tmp_path: Path) -> None:
    """Its floor is not decided at run time (`on_rubric`), where a built-in judged metric
    without labels is refused at load."""
    root = goldset(tmp_path / "gs", floors="[floors]\npolite = 0.5\njudge_agreement = 0.6\n",
                   toml=BASE_TOML + '\n[judge]\nlabels = "labels.jsonl"\n')
    (root / "labels.jsonl").write_text(jsonl([
        {"question_id": "q1", "metric": "faithfulness", "verdict": 1}]))
    assert [f.metric for f in load_goldset(root).floors] == ["polite", "judge_agreement",
                                                            "judge_coverage"]


# --- a verdict -----------------------------------------------------------------------------


def test_a_rubric_s_value_is_its_score_as_a_share() -> None:
    passfail = Rubric(name="polite", criteria="x")
    scaled = Rubric(name="clear", criteria="x", scale=5, scores=("a", "b", "c", "d", "e"))
    assert [passfail.value_of(s) for s in (0, 1)] == [0.0, 1.0]
    assert [scaled.value_of(s) for s in range(1, 6)] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert [passfail.valid(s) for s in (0, 1, 2, -1, True, 1.0, "1")] == [
        True, True, False, False, False, False, False]
    assert [scaled.valid(s) for s in (0, 1, 5, 6)] == [False, True, True, False]


def test_a_rubric_verdict_s_cache_key_holds_its_criteria_and_no_other_metric_s() -> None:
    class Judge:
        judge_id = "j"

        def prompt_hash(self, metric: str) -> str:
            return "p"

    polite = Rubric(name="polite", criteria="Polite.")
    reworded = Rubric(name="polite", criteria="Polite, and brief.")
    plain = JudgeInput("q1", "Q?", "A.", ())
    key = lambda item, metric: cache_key("1", Judge(), metric, item)  # noqa: E731
    graded = JudgeInput("q1", "Q?", "A.", (), rubrics={"polite": polite})
    assert key(graded, "polite") != key(JudgeInput("q1", "Q?", "A.", (),
                                                   rubrics={"polite": reworded}), "polite")
    assert key(graded, "faithfulness") == key(plain, "faithfulness")  # its cache kept


def fixture_judge(tmp_path: Path, rubrics: dict[str, object]) -> FixtureJudge:
    path = tmp_path / "judge.json"
    path.write_text(json.dumps({"judge_id": "people", "answers": {
        "q1": {"rubrics": rubrics}}}))
    return FixtureJudge(path, embedder=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "rubric", "outcome"), [
    ({"polite": 1}, "polite", 1.0),
    ({"polite": 0}, "polite", 0.0),
    ({"clear": 4}, "clear", 0.75),
    ({"polite": 2}, "polite", "invalid: rubric polite came back 2, not a score from 0 to 1"),
    ({"clear": 0}, "clear", "invalid: rubric clear came back 0, not a score from 1 to 5"),
    ({"clear": 6}, "clear", "invalid: rubric clear came back 6, not a score from 1 to 5"),
    ({}, "polite", "missing: judge.json gives no verdict of rubric polite for 'q1' "
     '("rubrics": {"polite": …})'),
], ids=["pass", "fail", "scored", "two", "zero", "six", "missing"])
def test_the_fixture_judge_s_rubric_verdict_is_held_to_the_rubric(
        tmp_path: Path, given: dict[str, object], rubric: str, outcome: object) -> None:
    rubrics = {"polite": Rubric(name="polite", criteria="x"),
               "clear": Rubric(name="clear", criteria="x", scale=5, scores=tuple("abcde"))}
    judge = fixture_judge(tmp_path, given)
    item = JudgeInput("q1", "Q?", "A.", (), rubrics=rubrics)
    if isinstance(outcome, float):
        assert asyncio.run(judge.score(item, rubric)) == outcome
        return
    with pytest.raises(JudgeFailure) as caught:
        asyncio.run(judge.score(item, rubric))
    assert str(caught.value) == outcome


def test_a_fixture_file_s_rubric_verdict_is_an_integer(tmp_path: Path) -> None:
    for wrong in (True, "1", 1.0):
        with pytest.raises(pytest.UsageError, match=r"answers\.q1\.rubrics\.polite"):
            fixture_judge(tmp_path, {"polite": wrong})


# --- deciding a rubric's floor -------------------------------------------------------------


def kappa(n: int, value: float = 1.0, labelled: int | None = None) -> Agreement:
    return Agreement(metric="polite", statistic="kappa", value=value, interval=(0.7, 1.0),
                     n=n, labelled=n if labelled is None else labelled)


PASSED = Verdict(floor=Floor("polite", 0.5), goldset="gs", outcome="passed",
                 said="polite 0.80 ≥ floor 0.50", computed_by="fixture:people")
NOT = "not decided: the judge is not calibrated on rubric polite: "


@pytest.mark.parametrize(("agreements", "floor", "said"), [
    ([], 0.6, NOT + "it needs at least 10 human labels of polite in the labels file ([judge] "
     "labels), and has none"),
    ([kappa(3)], 0.6, NOT + "it needs at least 10 human labels of polite in the labels file "
     "([judge] labels), and has 3 (7 more)"),
    ([kappa(12, 0.4)], 0.6, NOT + "kappa 0.40 [0.70, 1.00] < 0.60 on 12 labelled questions "
     "(polite)"),
    ([kappa(12)], None, NOT + "the goldset sets no judge_agreement floor for it to reach: add "
     "[floors] judge_agreement (e.g. 0.6) and at least 10 human labels of polite in the "
     "labels file ([judge] labels)"),
], ids=["no labels", "too few", "below", "no agreement floor"])
def test_a_rubric_floor_the_labels_do_not_vouch_for_is_not_decided(
        agreements: list[Agreement], floor: float | None, said: str) -> None:
    declare(["polite"])
    verdict = on_rubric(PASSED, agreements, floor, "fixture:people", strict=False)
    assert verdict.outcome == "failed"
    assert verdict.message == f"{said} · polite 0.80 ≥ floor 0.50"


def test_a_rubric_floor_the_labels_vouch_for_is_decided_as_it_was() -> None:
    declare(["polite"])
    assert on_rubric(PASSED, [kappa(10)], 0.6, "fixture:people", strict=False) is PASSED
    assert on_rubric(PASSED, [], 0.6, None, strict=False) is PASSED  # no judge: its own rule
    other = Verdict(floor=Floor("faithfulness", 0.5), goldset="gs", outcome="passed",
                    said="x", computed_by="j")
    assert on_rubric(other, [], 0.6, "j", strict=False) is other


def test_a_goldset_may_name_its_own_rubric_optional_and_no_other(tmp_path: Path) -> None:
    judge = '\n[judge]\noptional = ["polite"]\n'
    own = load_goldset(goldset(tmp_path / "a", toml=BASE_TOML + judge))
    assert own.config.judge.optional == ["polite"]
    found = problems(goldset(tmp_path / "b", rubrics="", floors="", toml=BASE_TOML + judge))
    assert len(found) == 1 and found[0].startswith("judge.optional: [judge] optional: polite: "
                                                   "not a judged metric"), found


def test_a_decorator_s_floor_on_the_goldset_s_rubric_asks_the_judge_for_it(
        tmp_path: Path) -> None:
    from pytest_ragate.goldsets.floors_table import parse_floors
    from pytest_ragate.items.collection import verdicts_of

    gs = load_goldset(goldset(tmp_path / "gs", floors=""))
    [floor] = parse_floors({"polite": 0.8}, tmp_path / "test_x.py", where="test @ragate.floor",
                           rubrics=set(gs.config.rubrics))
    assert floor == Floor("polite", 0.8)
    assert gs.requested_verdicts == ()  # the goldset itself gates nothing
    assert "polite" in verdicts_of(gs, [floor]) and "polite" not in verdicts_of(gs, [])
    with pytest.raises(GoldsetError, match="unknown metric 'polite'"):
        parse_floors({"polite": 0.8}, tmp_path / "test_x.py", rubrics=())
