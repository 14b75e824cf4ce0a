"""Metrics a project defines (`@ragate.metric("mentions_product")`): their names checked, the
value a function returns checked, and their registry entries.

A defined metric is a function of a question's text, the answer and the expected answer's
gist, declared a `share` (it returns True or False: a proportion, Wilson) or a `mean` (a float
in [0, 1]: a mean, betting interval); None means not applicable to this question. Its value
is saved in the question's row (`QuestionRecord.custom`), so a floor over it is decided from
rows alone: shards and `ragate decide` never call it. What it returned that is not a value
(it raised, another type, a float outside [0, 1]) is that question's error
(`QuestionRecord.custom_errors`): a gap of the metric's floors, which are then not decided.

A leaf module, like registry.py: plain Python, no pytest.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pytest_ragate.scoring.registry import METRICS, Metric, Tally, Worst

if TYPE_CHECKING:
    from pytest_ragate.scoring.records import QuestionRecord, QuestionScores

Kind = Literal["share", "mean"]
KINDS: tuple[Kind, ...] = ("share", "mean")
MARK = "__ragate_metric__"  # the attribute `ragate.metric` sets on the function it decorates
ARGUMENTS = ("question", "answer", "expected")  # what a metric function is called with
COMPUTED_BY = "@ragate.metric"  # who computed its figures, as floors and reports say
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


@dataclass(frozen=True, kw_only=True)
class Defined:
    """One metric a project defines: its name, kind and function, and where it is defined
    (`conftest.py:12`, for messages)."""

    name: str
    kind: Kind
    function: Callable[..., Any]
    where: str


def where_defined(function: Callable[..., Any]) -> str:
    """`path:line` of a function, or its qualified name when its source is not known."""
    code = getattr(function, "__code__", None)
    if code is None:
        return getattr(function, "__qualname__", repr(function))
    return f"{code.co_filename}:{code.co_firstlineno}"


def name_problem(name: object, taken: Iterable[str] = ()) -> str | None:
    """Why `name` cannot name a defined metric, or None: a name of lower-case letters,
    digits and `_` (it is a JUnit property, a column, a TOML key), not a built-in metric's nor a
    family member's, nor a row field's (`taken`)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        return (f"a metric's name is lower-case letters, digits and '_', starting with a "
                f"letter (at most 64), not {name!r}")
    if name in METRICS.builtin_names() or METRICS.family(name) is not None:
        return f"{name!r} is a built-in metric: name yours otherwise (e.g. {name}_own)"
    if name in taken:
        return f"{name!r} is a field of every question's row: name the metric otherwise"
    return None


def signature_problem(function: Callable[..., Any]) -> str | None:
    """Why `function` cannot be called as `function(question=…, answer=…, expected=…)`."""
    if not callable(function):
        return f"ragate.metric decorates a function, not {function!r}"
    try:
        inspect.signature(function).bind(**dict.fromkeys(ARGUMENTS))
    except TypeError as error:
        return (f"a metric function takes (question, answer, expected) by those names: "
                f"{getattr(function, '__qualname__', function)} does not ({error})")
    except ValueError:  # a builtin without a signature: it is called and checked then
        return None
    return None


class NotAValue(ValueError):
    """What a metric function returned is not a value of its kind."""


def checked(kind: Kind, value: object) -> float | None:
    """What a metric function returned, as the row keeps it: 1.0 or 0.0 for a share, the
    float for a mean, None when not applicable. Raises NotAValue saying what is wrong with
    anything else: a share returns a bool, a mean a number in [0, 1] (not a bool)."""
    if value is None:
        return None
    if kind == "share":
        if isinstance(value, bool):
            return 1.0 if value else 0.0
        raise NotAValue(f"returned {_shown(value)}: a share metric returns True, False or "
                        "None")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotAValue(f"returned {_shown(value)}: a mean metric returns a number in "
                        "[0, 1] or None")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise NotAValue(f"returned {number!r}, outside [0, 1]")
    return number


def _shown(value: object) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:40]}{'…' if len(text) > 40 else ''}"


def measure(defined: Sequence[Defined], question: str, answer: object,
            expected: str | None) -> tuple[dict[str, float | None], dict[str, str]]:
    """Every defined metric of one answer: the values (None: not applicable) and the
    errors (`raised ZeroDivisionError: division by zero`; `returned 1.5, outside [0, 1]`),
    by name. A metric that fails has no value, only its error. Each function is given its
    own copy of the answer: one that edits it changes neither what is scored or judged nor
    what the next metric sees."""
    values: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    copy = getattr(answer, "model_copy", None)
    for d in defined:
        given = copy(deep=True) if copy is not None else answer
        try:
            returned = d.function(question=question, answer=given, expected=expected)
        except Exception as error:  # the project's code: whatever it raises is its error
            first = str(error).splitlines()[0] if str(error) else ""
            errors[d.name] = f"raised {type(error).__name__}" + (f": {first[:200]}"
                                                                 if first else "")
            continue
        try:
            values[d.name] = checked(d.kind, returned)
        except NotAValue as error:
            errors[d.name] = str(error)
    return values, errors


def cause_of(why: str) -> str:
    """What a metric's error is an instance of, so each cause is said once: `raised
    ZeroDivisionError`, `outside [0, 1]`, `returned str`."""
    if why.startswith("raised "):
        return why.split(":")[0]
    if why.endswith("outside [0, 1]"):
        return "outside [0, 1]"
    if why.startswith("saved "):
        return "saved"
    return " ".join(why.split()[:2])


# --- in the registry -----------------------------------------------------------------------------


def _tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    """A proportion over its True/False values, or a mean over its values; rows where it
    failed count nowhere, as failures (its floors are not decided), and so does a saved
    value a share cannot have (rows saved while it was a mean: `mismatched`)."""
    proportion = METRICS[name].aggregate == "proportion"
    values = tuple(v for r in rows if (v := r.custom.get(name)) is not None
                   and not (proportion and v not in (0.0, 1.0)))
    failures = sum(name in r.custom_errors or mismatched(name, r) is not None for r in rows)
    return Tally(metric=name, k=sum(values), n=len(values),
                 values=() if proportion else values, failures=failures,
                 questions=len(values))


def mismatched(name: str, r: QuestionRecord) -> str | None:
    """Why a row's saved value of a share is none (`saved 0.5, not a share's True or False`),
    or None: a value saved while the metric was declared a mean is not decided as a share."""
    value = r.custom.get(name)
    if value is None or value in (0.0, 1.0) or METRICS[name].aggregate != "proportion":
        return None
    return f"saved {value!r}, not a share's True or False (declared a mean when it ran?)"


def _worst(name: str, r: QuestionRecord) -> Worst | None:
    value = r.custom.get(name)
    if value is None or value >= 1.0:
        return None
    if METRICS[name].aggregate == "proportion":
        return 0.0, f"{r.question_id} {name} false"
    return value, f"{r.question_id} {name} {value:.2f}"


def _value(name: str, r: QuestionRecord) -> float | None:
    return r.custom.get(name)


def _score(name: str, s: QuestionScores) -> float | None:
    """A question's value, as a baseline pairs it (None: not applicable, or it failed)."""
    return s.custom.get(name)


def _units(name: str, s: QuestionScores) -> dict[str, bool]:
    """A share's one right-or-wrong unit per question, for McNemar (none: no value)."""
    value = s.custom.get(name)
    return {} if value is None else {"": value == 1.0}


def as_metric(name: str, kind: Kind) -> Metric:
    """A defined metric's registry entry: a share paired with McNemar, a mean with the paired
    bootstrap, as the built-in metrics of each kind are."""
    return Metric(name, "custom", "proportion" if kind == "share" else "mean", "questions",
                  _tally, _worst, value=_value, score=_score,
                  units=_units if kind == "share" else None)


def define(defined: Iterable[Defined]) -> None:
    """Make these the defined metrics the registry knows (replacing those of an earlier
    run in this process)."""
    METRICS.custom = {d.name: as_metric(d.name, d.kind) for d in defined}


def found_in(modules: Iterable[object]) -> tuple[list[Defined], list[str]]:
    """The metrics defined in these modules (conftest files and plugins: each attribute
    `ragate.metric` marked), in name order, and a problem per name defined twice."""
    found: dict[str, Defined] = {}
    problems: list[str] = []
    for module in modules:
        for value in list(vars(module).values()) if hasattr(module, "__dict__") else ():
            d = getattr(value, MARK, None) if callable(value) else None
            if not isinstance(d, Defined):
                continue
            other = found.get(d.name)
            if other is not None and other.function is not d.function:
                problems.append(f"metric {d.name!r} is defined twice: at {other.where} and "
                                f"at {d.where}")
            found.setdefault(d.name, d)
    return [found[n] for n in sorted(found)], problems


def failures_by_cause(name: str, rows: Sequence[QuestionRecord],
                      ) -> list[tuple[str, list[str]]]:
    """The questions a metric failed on, one entry per cause (`cause_of`): its first error
    in full and the questions, in row order."""
    causes: dict[str, tuple[str, list[str]]] = {}
    repeated = any(r.repeat > 1 for r in rows)  # then every row is named `q07[r1]`
    for r in rows:
        why = r.custom_errors.get(name) or mismatched(name, r)
        if why is None:
            continue
        label = f"{r.question_id}[r{r.repeat}]" if repeated else r.question_id
        causes.setdefault(cause_of(why), (why, []))[1].append(label)
    return list(causes.values())


# --- read, not run: the `ragate` commands ----------------------------------------------------


def declared_in(source: str) -> list[tuple[str, Kind]]:
    """The metrics a conftest.py's source declares, read without running it (the `ragate`
    commands import no conftest): each `@ragate.metric("name")` / `@metric("name",
    kind="mean")` decorator whose name and kind are written as literals, as the decorator
    would take them; a file Python cannot parse declares none."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[str, Kind]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for call in node.decorator_list:
            if not (isinstance(call, ast.Call) and _names_metric(call.func) and call.args
                    and isinstance(call.args[0], ast.Constant)):
                continue
            kind = next((k.value.value for k in call.keywords if k.arg == "kind"
                         and isinstance(k.value, ast.Constant)), "share")
            name = call.args[0].value
            if kind in KINDS and isinstance(name, str) and name_problem(name) is None:
                found.append((name, kind))
    return found


def _names_metric(func: object) -> bool:
    import ast

    return ((isinstance(func, ast.Attribute) and func.attr == "metric")
            or (isinstance(func, ast.Name) and func.id == "metric"))


def declare(names: Iterable[tuple[str, Kind]]) -> None:
    """Make these (name, kind) the defined metrics the registry knows, without their
    functions: what a command that never measures an answer needs of them."""
    METRICS.custom = {name: as_metric(name, kind) for name, kind in names}
