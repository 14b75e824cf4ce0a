"""Results by name, one rule in one place: every result the decision builds is keyword-only
(a field added or reordered cannot silently shift another), and the gate rules that
`gates.decide`, `agreement.decide_agreement` and `regression.check` call are small functions
of plain values, pinned here case by case."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from types import ModuleType

import pytest

import pytest_ragate.decision
import pytest_ragate.scoring
from pytest_ragate.decision.agreement_floor import shortfall
from pytest_ragate.decision.floors import Gap, Verdict, call_of, decide, missing_of, outcome_of
from pytest_ragate.decision.regressions import call_of as regression_call
from pytest_ragate.decision.rules import POINT, Rules, Strictness
from pytest_ragate.decision.run_decision import Failure
from pytest_ragate.scoring.agreement import Agreement
from pytest_ragate.scoring.figures import Figures
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pairing import Compared
from pytest_ragate.scoring.records import QuestionRecord, Tally
from pytest_ragate.wording import floors as messages

# dataclasses of the decision's parts that may be built by position, and why
POSITIONAL = {
    "Floor": "a floor's metric and bound read in order (`Floor(\"recall\", 0.8)`); the rest "
             "is keyword-only",
    "Metric": "a metric's declaration in the registry, not a result",
    "Family": "a family of metrics' declaration in the registry (pattern, metric, spelling), "
              "not a result",
    "Span": "evidence, read as `doc, first, last`",
    "WholeDocument": "evidence: one document",
    "ContextRef": "evidence: one context id",
}


def _modules(package: ModuleType) -> list[ModuleType]:
    return [importlib.import_module(f"{package.__name__}.{m.name}")
            for m in pkgutil.iter_modules(package.__path__)]


RESULTS = sorted(
    {(obj.__module__, name): obj
     for module in [*_modules(pytest_ragate.scoring), *_modules(pytest_ragate.decision)]
     for name, obj in vars(module).items()
     if isinstance(obj, type) and dataclasses.is_dataclass(obj)
     and obj.__module__ == module.__name__}.items())


@pytest.mark.parametrize("cls", [c for _, c in RESULTS], ids=[n for (_, n), _ in RESULTS])
def test_every_result_of_the_decision_is_built_by_name(cls: type) -> None:
    positional = [f.name for f in dataclasses.fields(cls) if not f.kw_only]
    if cls.__name__ == "Floor":
        assert positional == ["metric", "min"]
    else:
        assert positional == [] or cls.__name__ in POSITIONAL, (
            f"{cls.__module__}.{cls.__name__} takes {positional} by position: declare it "
            "@dataclass(kw_only=True), or say in POSITIONAL why not")


def test_positional_construction_is_a_type_error() -> None:
    floor = Floor("evidence_recall", 0.8)
    with pytest.raises(TypeError):
        Verdict(floor, "g", "passed", "fine")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Gap("q1", "single_doc", "errored")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Failure("call", "boom")  # type: ignore[misc]
    with pytest.raises(TypeError):
        Rules(POINT)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Floor("evidence_recall", 0.8, "single_doc")  # type: ignore[misc]
    assert Verdict(floor=floor, goldset="g", outcome="passed", said="fine").value is None


# --- the floor's rule -------------------------------------------------------------------------


def _gap(kind: str) -> Gap:
    return Gap(member=f"q-{kind}", member_kind="single_doc", kind=kind)  # type: ignore[arg-type]


def test_a_whole_population_has_nothing_missing() -> None:
    assert missing_of([], 10, "questions", POINT) is None


def test_a_missing_result_fails_a_floor_and_a_deselected_one_skips_it() -> None:
    found = missing_of([_gap("errored"), _gap("deselected")], 10, "questions", POINT)
    assert found is not None and found.outcome == "failed" and found.count == 2
    assert [g.kind for g in found.hard] == ["errored"]
    assert [g.kind for g in found.soft] == ["deselected"]
    only = missing_of([_gap("deselected")], 10, "questions", POINT)
    assert only is not None and only.outcome == "skipped"


def test_a_sealed_member_skips_a_floor_only_when_builds_without_the_key_say_so() -> None:
    failing = missing_of([_gap("sealed")], 4, "questions", POINT)
    skipping = missing_of([_gap("sealed")], 4, "questions",
                          Strictness(sealed_without_key="skip"))
    assert failing is not None and failing.outcome == "failed"
    assert skipping is not None and skipping.outcome == "skipped"
    assert messages.incomplete(failing, "").startswith(
        "sealed: set RAGATE_SEAL_KEY to score 1 of 4 questions")


def _figures(value: float, interval: tuple[float, float], questions: int = 20) -> Figures:
    t = Tally(metric="abstention_accuracy", k=value * questions, n=questions,
              questions=questions)
    return Figures(tally=t, value=value, interval=interval)


@pytest.mark.parametrize(("floor", "figures", "strictness", "call"), [
    (Floor("abstention_accuracy", 0.8), _figures(0.85, (0.7, 0.95)), POINT, "holds"),
    (Floor("abstention_accuracy", 0.8), _figures(0.75, (0.6, 0.9)), POINT, "misses"),
    (Floor("abstention_accuracy", 0.8), _figures(0.85, (0.7, 0.95)),
     Strictness(ci="strict"), "misses"),  # strictly, the lower bound must reach it
    (Floor("abstention_accuracy", 0.6), _figures(0.85, (0.7, 0.95)),
     Strictness(ci="strict"), "holds"),
    (Floor("flaky_rate", 0.1, upper=True), _figures(0.05, (0.0, 0.2)), POINT, "holds"),
    (Floor("flaky_rate", 0.1, upper=True), _figures(0.05, (0.0, 0.2)),
     Strictness(ci="strict"), "misses"),  # strictly, the upper bound must stay below it
    (Floor("abstention_accuracy", 0.5), _figures(1.0, (0.6, 1.0), questions=4),
     Strictness(min_n=5), "refused"),  # whatever its value
])
def test_the_gate_rule_over_a_floors_figures(floor: Floor, figures: Figures,
                                             strictness: Strictness, call: str) -> None:
    assert call_of(floor, figures, strictness) == call


@pytest.mark.parametrize(("xfail", "call", "outcome"), [
    (None, "holds", "passed"),
    (None, "misses", "failed"),
    (None, "refused", "failed"),
    ("known gap", "holds", "xpassed"),
    ("known gap", "misses", "xfailed"),
    ("known gap", "refused", "failed"),  # a refusal is no known gap: it fails
])
def test_an_outcome_follows_from_the_call_and_a_strict_xfail(xfail: str | None, call: str,
                                                              outcome: str) -> None:
    floor = Floor("abstention_accuracy", 0.8, xfail=xfail)
    assert outcome_of(floor, call) == outcome  # type: ignore[arg-type]


# --- the judge's agreement and a baseline check ---------------------------------------------


def _agreement(value: float | None, interval: tuple[float, float] | None, n: int = 40,
               missing: tuple[tuple[str, str], ...] = ()) -> Agreement:
    return Agreement(metric="faithfulness", statistic="kappa", value=value, interval=interval,
                     n=n, labelled=n + len(missing), missing=missing)


@pytest.mark.parametrize(("agreement", "strict", "why"), [
    (_agreement(0.8, (0.7, 0.9)), False, None),
    (_agreement(0.8, (0.7, 0.9), missing=(("q3", "errored: boom"),)), False, "unverdicted"),
    (_agreement(None, None), False, "unverdicted"),
    (_agreement(0.9, (0.8, 1.0), n=5), False, "too few"),
    (_agreement(0.9, None), True, "no interval"),
    (_agreement(0.5, (0.3, 0.7)), False, "below"),
    (_agreement(0.7, (0.5, 0.8)), True, "below"),  # strictly, its lower bound
])
def test_why_an_agreement_does_not_vouch_for_the_judge(agreement: Agreement, strict: bool,
                                                      why: str | None) -> None:
    assert shortfall(agreement, 0.6, strict) == why


@pytest.mark.parametrize(("then", "now", "significant", "pairs", "min_n", "call"), [
    (0.9, 0.6, True, 40, 0, "dropped"),
    (0.9, 0.6, False, 40, 0, "held"),  # a drop that is not significant passes
    (0.6, 0.9, True, 40, 0, "held"),  # a significant rise passes
    (0.9, 0.6, True, 4, 5, "refused"),  # too few pairs: refused, whatever the test says
])
def test_the_baseline_rule(then: float, now: float, significant: bool, pairs: int, min_n: int,
                           call: str) -> None:
    compared = Compared(then=then, now=now, p_value=0.01 if significant else 0.4,
                        significant=significant)
    assert regression_call(compared, pairs, min_n=min_n) == call


def test_a_judged_floor_and_judge_agreement_say_they_need_a_judge_in_one_sentence() -> None:
    assert messages.needs_judge("judge_agreement", "required") == (
        "judge_agreement needs a judge: none configured (--ragate-judge): not decided, though "
        "named optional, as --ragate-require-judge is set")


def test_a_floor_whose_every_question_was_skipped_without_a_reason_says_so() -> None:
    """Its message names the first reason a skipped question gives, and says so when none
    gives one (the old early return raised StopIteration there)."""
    rows = [QuestionRecord(goldset="g", question_id=f"q{i}", kind="single_doc", index=i,
                           status="skipped", error=error, must_abstain=False, evidence_spans=1,
                           eval_version="1") for i, error in enumerate((None, "no key", None))]
    verdict = decide(Floor("evidence_recall", 0.5), "g", rows)
    assert (verdict.outcome, verdict.message) == ("skipped", "evidence_recall: nothing ran: no key")
    unexplained = decide(Floor("evidence_recall", 0.5), "g", [rows[0], rows[2]])
    assert unexplained.message == "evidence_recall: nothing ran: every question was skipped"
