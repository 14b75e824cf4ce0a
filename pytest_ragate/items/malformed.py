"""A system's return that is no `ragate.Answer` (nor a dict of its fields), for a question or
an anchor's claim: one line saying what it returned (`MalformedAnswer`), shown as the item's
whole failure, never pydantic's traceback; the run's one summary line counts the questions.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from pydantic import ValidationError

from pytest_ragate.answer import Answer
from pytest_ragate.items.keys import MALFORMED_ATTR


def as_answer(result: object, who: str) -> Answer:
    """What the system returned for `who` (a question id, `anchor a01`) as a ragate.Answer,
    or a MalformedAnswer saying in one line what it returned instead."""
    try:
        return result if isinstance(result, Answer) else Answer.model_validate(result)
    except ValidationError as error:
        raise MalformedAnswer(malformed_line(who, result, error), returned=_returned(result),
                              ) from None  # one line: neither pydantic's text nor a chain


class MalformedAnswer(Exception):
    """The system returned no `ragate.Answer` (nor a dict of its fields) for a question: its
    one line, and what it returned, for the run's one summary line (`malformed_summary`)."""

    __module__ = "builtins"  # shown as `MalformedAnswer: …`, as pytest shows `Failed: …`

    def __init__(self, line: str, *, returned: str) -> None:
        super().__init__(line)
        self.returned = returned


EXPECTED = "expected ragate.Answer (or a dict of its fields)"
_PREVIEW = reprlib.Repr()  # a returned value, shortened (keywords only from Python 3.12)
_PREVIEW.maxstring, _PREVIEW.maxother, _PREVIEW.maxlist, _PREVIEW.maxlevel = 30, 30, 3, 2


def _returned(result: object) -> str:
    return "a dict with wrong fields" if isinstance(result, dict) else type(result).__name__


def malformed_line(who: str, result: object, error: ValidationError) -> str:
    """`q03: the system returned str ('Paris is ...'), expected ragate.Answer (or a dict of
    its fields)`; for a dict, each wrong field with what is wrong with it, on one line."""
    if not isinstance(result, dict):
        return (f"{who}: the system returned {type(result).__name__} "
                f"({_PREVIEW.repr(result)}), {EXPECTED}")
    fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(the answer)'}: {e['msg']}"
                       for e in error.errors(include_url=False))
    if any(e["type"] == "extra_forbidden" for e in error.errors(include_url=False)):
        fields += f" (an Answer's fields: {', '.join(Answer.model_fields)})"
    return f"{who}: the system returned a malformed answer (dict): {fields}"


BUILT = frozenset({"Answer", "Citation", "Context", "Usage"})  # what a system builds of ours


@contextmanager
def built_in_one_line(who: str) -> Iterator[None]:
    """Around the system's call: a ragate model it built with a wrong field (`Answer(text=5)`)
    is one line naming the field (`built_wrong`), as a wrong return is."""
    try:
        yield
    except ValidationError as error:
        if error.title not in BUILT:
            raise
        raise built_wrong(who, error) from None


def built_wrong(who: str, error: ValidationError) -> MalformedAnswer:
    """`q05: the system built a malformed Answer: text: Input should be a valid string`: a
    ragate model (`BUILT`) the system made with a wrong field, each wrong field on one line."""
    said = [(".".join(map(str, e["loc"])), e["msg"].removeprefix("Value error, "))
            for e in error.errors(include_url=False)]
    fields = "; ".join(f"{where}: {what}" if where else what for where, what in said)
    return MalformedAnswer(f"{who}: the system built a malformed {error.title}: {fields}",
                           returned=f"a malformed {error.title}")


def malformed_summary(returned: dict[str, int]) -> str:
    """The run's one line about the questions whose system returned no ragate.Answer."""
    n = sum(returned.values())
    what = (next(iter(returned)) if len(returned) == 1
            else ", ".join(f"{kind} ({count})" for kind, count in sorted(returned.items())))
    return (f"ragate: {n} question{'s' * (n != 1)}: the system returned {what}, {EXPECTED} "
            "(docs/your-system.md)")


def one_line(call: pytest.CallInfo[None], report: pytest.TestReport, *,
             question: bool = True) -> None:
    """A malformed answer reads as its one line (as `pytest.fail(pytrace=False)` does), and
    a question's tells the controller what the system returned, for the run's one summary
    line (which counts questions; an anchor's own line names it)."""
    if call.excinfo is not None and call.excinfo.errisinstance(MalformedAnswer):
        report.longrepr = call.excinfo.getrepr(style="value")
        if question:
            setattr(report, MALFORMED_ATTR, call.excinfo.value.returned)
