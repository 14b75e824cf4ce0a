"""What a `[floors.question] pass_rate` floor says (scoring/pass_rate.py,
decision/pass_rate_floor.py): the repeats it needs when too few were asked, and its verdict,
naming the questions that miss.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.scoring.pass_rate import ALPHA, MAX_REPEATS, QuestionRate, one_rate
from pytest_ragate.wording.numbers import NAMED, plural

FIELD = "floors.question.pass_rate"


def too_few_repeats(rate: float, repeats: int, questions: int, need: int | None) -> str:
    """A pass rate its repeats cannot decide: even a question right in every repeat could
    not be shown at or above it after Holm over the goldset's questions."""
    asked = f"this run asks each question {plural(repeats, 'time')}"
    if need is None:
        return (f"{FIELD}: a pass rate of {rate:g} over {plural(questions, 'question')} needs "
                f"more than {MAX_REPEATS} repeats to be shown, and {asked}; lower it")
    return (f"{needs(rate, questions, need)}, and {asked} (set `repeat` in ragate.toml, or "
            "ragate_repeat)")


def needs(rate: float, questions: int, need: int) -> str:
    """The repeats a pass rate needs over the goldset's questions, and why."""
    return (f"{FIELD}: a pass rate of {rate:g} over {plural(questions, 'question')} needs "
            f"repeat ≥ {need} (a question right in all of them is then shown at or above "
            f"{rate:g}, Holm across the questions, alpha {ALPHA:g})")


def repeats_decide(rate: float, repeats: int, questions: int, need: int | None, *,
                   short: bool) -> str:
    """What `ragate power` says of a pass rate over a saved run's repeats: what `ragate
    validate` refuses it by when they are too few, else the repeats it needs and that the
    run's are enough."""
    if short or need is None:
        return too_few_repeats(rate, repeats, questions, need)
    return (f"{needs(rate, questions, need)}, and this run asks each question "
            f"{plural(repeats, 'time')}: enough to decide it")


def verdict(rate: float, rates: Sequence[QuestionRate], missed: Sequence[QuestionRate],
            strict: bool) -> str:
    """The floor's message: how many questions reach the rate, and those that miss."""
    how = (f"each shown ≥ {rate:g} by the exact binomial test, Holm across "
           f"{plural(len(rates), 'question')} at alpha {ALPHA:g} (ragate_ci = strict)" if strict
           else f"each right in ≥ {rate:g} of its repeats (ragate_ci = point)")
    repeats = max((r.total for r in rates), default=0)
    head = (f"{len(rates) - len(missed)} of {plural(len(rates), 'question')} × "
            f"{repeats} repeats {how}")
    if not missed:
        return head
    shown = "; ".join(one_rate(r, strict) for r in missed[:NAMED])
    more = f" and {len(missed) - NAMED} more" if len(missed) > NAMED else ""
    return f"{head} · missing: {shown}{more}"


def not_decided_repeats(rate: float, repeats: int, questions: int, need: int | None) -> str:
    """The floor's message when its repeats cannot decide it."""
    return "not decided: " + too_few_repeats(rate, repeats, questions, need)


def too_few_questions(questions: int, min_n: int) -> str:
    """Scored on fewer questions than `ragate_min_n`."""
    return (f"not decided: {plural(questions, 'question')}, fewer than ragate_min_n "
            f"({min_n})")
