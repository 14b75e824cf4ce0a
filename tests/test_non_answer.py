"""An answer that answers nothing is not similar to a gist (issue 45, item 5): the detector
(`scoring/non_answer.py`), pure, and what answer_similarity's worst answers say of it."""

from __future__ import annotations

import pytest

from pytest_ragate.scoring.non_answer import non_answer
from pytest_ragate.scoring.registry import METRICS
from tests.test_decision import member, scored

QUESTION = "Who chaired the budget meeting?"


@pytest.mark.parametrize("answer", [
    "I don't know who chaired the budget meeting",  # the issue's: 0.71-0.92 to the gist
    "I do not know.",
    "I’m not sure who chaired it.",
    "I cannot determine who chaired the budget meeting from the context.",
    "There is no information about who chaired the budget meeting.",
    "The transcript does not mention who chaired the budget meeting.",
    "The chair of the budget meeting is not specified.",
    "Es ist nicht bekannt, wer die Sitzung leitete.",
    "Je ne sais pas qui a présidé la réunion.",
])
def test_a_stated_ignorance_answers_nothing(answer: str) -> None:
    why = non_answer(answer, QUESTION)
    assert why is not None and why.startswith("says it does not know")


@pytest.mark.parametrize("answer", [
    "Who chaired the budget meeting?",
    "The budget meeting was chaired.",
    "Someone chaired the budget meetings.",
])
def test_an_echo_of_the_question_answers_nothing(answer: str) -> None:
    assert non_answer(answer, QUESTION) == "restates the question"


@pytest.mark.parametrize("answer", [
    "Alice chaired the budget meeting.",
    "Alice.",
    "It did not say Real Remote; the site simply had an outdated logo.",  # wrong, not a non-answer
    "Bob chaired it; Carol did not say a word.",
    "The 2024 budget meeting was chaired.",  # a number is content
    "Weiß.",
    "Yes, the budget meeting was chaired.",  # a yes-or-no answer in the question's words
    "The budget meeting was not chaired.",
])
def test_an_answer_that_states_something_is_an_answer(answer: str) -> None:
    assert non_answer(answer, QUESTION) is None


def test_the_worst_answers_say_why_a_non_answer_scores_0() -> None:
    row = scored(member("q1", index=0)).model_copy(update={
        "metrics": {"answer_similarity": 0.0}, "non_answer": "restates the question"})
    worst = METRICS["answer_similarity"].worst("answer_similarity", row)
    assert worst is not None and worst[1] == (
        "q1 answer_similarity 0.00 (answers nothing: restates the question)")


def test_answer_similarity_scores_a_non_answer_0_and_says_why() -> None:
    """Where answer_similarity is computed (items/correctness.py): a non-answer is 0 without
    asking the embedded model (the config here has none), and its row carries the reason."""
    from types import SimpleNamespace

    from pytest_ragate.answer import Answer
    from pytest_ragate.items.correctness import correctness_fields

    case = SimpleNamespace(
        expected=SimpleNamespace(must_abstain=False, gist="Alice chaired it.", facts=[]),
        goldset=SimpleNamespace(scores_answers=True), question=SimpleNamespace(question=QUESTION))
    found = correctness_fields(None, case, Answer(text="I don't know who chaired the budget "
                                                      "meeting."), {})  # type: ignore[arg-type]
    assert found["metrics"]["answer_similarity"] == 0.0
    assert found["non_answer"].startswith("says it does not know")
