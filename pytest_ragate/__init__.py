"""pytest-ragate: RAG quality gates as pytest outcomes.

    import pytest_ragate as ragate

    @ragate.goldset("goldsets/tiron-demo")
    @ragate.floor(citation_accuracy=0.90)
    def test_tiron(ragate_question, my_rag):
        return my_rag.answer(ragate_question.question)
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import TYPE_CHECKING, Any, TypeVar

from pytest_ragate.decision import said as _said
from pytest_ragate.items.route import RouteSpec

if TYPE_CHECKING:
    from pytest_ragate.answer import Answer, Asked, Citation, Context, Earlier, Usage
    from pytest_ragate.goldsets.config import Question
    from pytest_ragate.goldsets.corpus import Corpus, split_lines, split_paragraphs

# what a user imports: the decorators here, the rest loaded on first use (`__getattr__`)
__all__ = ["Answer", "Asked", "Citation", "Context", "Corpus", "Earlier", "Question", "Usage",
           "floor", "goldset", "metric", "split_lines", "split_paragraphs"]
__version__ = "0.1.0"

F = TypeVar("F", bound=Callable[..., Any])
_LAZY = {**dict.fromkeys(("Answer", "Asked", "Citation", "Context", "Earlier", "Usage"),
                         "pytest_ragate.answer"),
         "Question": "pytest_ragate.goldsets.config",
         **dict.fromkeys(("Corpus", "split_lines", "split_paragraphs"),
                         "pytest_ragate.goldsets.corpus")}


def _written(said: _said.Said) -> str:
    """A verdict's message written by wording/, loaded when the first one is read: decision/
    says what it decided as typed values and imports nothing of wording/ (here they meet)."""
    from pytest_ragate.wording.said import render

    return render(said)


_said.wire(_written)


def __getattr__(name: str) -> Any:
    """The answer types load pydantic: imported on first use, so that every pytest run
    (which imports this package through the plugin) stays light."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pytest_ragate' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What `dir(pytest_ragate)` and completion offer: the public names, loaded or not."""
    return sorted({*globals(), *__all__})


def _spec(fn: Callable[..., Any]) -> RouteSpec:
    spec = getattr(fn, "__ragate__", None)
    if not isinstance(spec, RouteSpec):
        spec = RouteSpec()
        fn.__ragate__ = spec  # type: ignore[attr-defined]
    return spec


def goldset(path: str | PathLike[str]) -> Callable[[F], F]:
    """One item per question of the goldset at PATH (relative to rootdir or this file);
    the test returns the `Answer`, which the plugin scores."""

    def decorate(fn: F) -> F:
        _spec(fn).path = str(path)
        return fn

    return decorate


def floor(kind: str | None = None, *, slice: str | None = None,
          **floors: float | dict[str, Any]) -> Callable[[F], F]:
    """Dataset-level floors for this test's goldset, e.g. `floor(citation_accuracy=0.9)`,
    `floor(kind="unanswerable", abstention_accuracy=1.0)`, or per slice of the questions' tags:
    `floor(slice="lang", abstention_accuracy=0.85)` (every value of `lang`, each its own floor)
    or `floor(slice="lang=de", …)` (one); they override the goldset's own floors of the same
    metric, kind and slice. A value may be `{"min": 0.9, "xfail": "why"}`."""
    if kind and slice:
        raise TypeError("ragate.floor: kind= or slice=, not both (slice=\"kind=…\" is a kind)")

    def decorate(fn: F) -> F:
        table: dict[str, Any] = dict(floors)
        if kind:
            table = {"kind": {kind: table}}
        elif slice:
            table = {"slices": {slice: table}}
        _spec(fn).floors.append(table)
        return fn

    return decorate


def metric(name: str, *, kind: str = "share") -> Callable[[F], F]:
    """A metric of your own, defined in conftest.py (the rootdir's) or a plugin:

        @ragate.metric("mentions_product")          # a share: True, False or None
        def mentions_product(question, answer, expected):
            return "Tiron" in answer.text

    called with each scored answer (`question`: its text; `answer`: the `Answer`;
    `expected`: the expected answer's gist, or None). `kind="share"` returns True/False,
    `kind="mean"` a number in [0, 1]; None is "not applicable to this question". Its name
    works in floors as a built-in metric's does (docs/metrics.md)."""
    from pytest_ragate.scoring.custom import (
        KINDS,
        MARK,
        Defined,
        name_problem,
        signature_problem,
        where_defined,
    )

    problem = name_problem(name)
    if problem is None and kind not in KINDS:
        problem = f"ragate.metric kind is 'share' or 'mean', not {kind!r}"
    if problem is not None:
        raise ValueError(f"ragate.metric({name!r}): {problem}")

    def decorate(fn: F) -> F:
        wrong = signature_problem(fn)
        if wrong is not None:
            raise TypeError(f"ragate.metric({name!r}): {wrong}")
        setattr(fn, MARK, Defined(name=name, kind=kind, function=fn,  # type: ignore[arg-type]
                                  where=where_defined(fn)))
        return fn

    return decorate
