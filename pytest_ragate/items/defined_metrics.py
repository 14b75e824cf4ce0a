"""The metrics a project defines (`@ragate.metric`), found in its conftest files and plugins
when pytest is configured, and made known to the registry for the run (scoring/custom.py).

Every pytest run calls `define_metrics`: it imports nothing unless some module holds a
decorated function (the decorator imported scoring/custom.py then)."""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_ragate.answer import Answer
    from pytest_ragate.scoring.custom import Defined

CUSTOM_MODULE = "pytest_ragate.scoring.custom"
DEFINED_KEY = pytest.StashKey[list["Defined"]]()


def define_metrics(config: pytest.Config) -> None:
    """Find the decorated functions in the modules pytest holds as plugins (conftest files
    loaded at start-up, plugins) and define them for this run; a name defined twice, or one
    that is a field of every row, is a usage error."""
    if CUSTOM_MODULE not in sys.modules:
        return  # nothing was decorated: the registry keeps no metric of an earlier run
    from pytest_ragate.scoring import custom
    from pytest_ragate.scoring.records import QuestionRecord

    modules = [p for p in config.pluginmanager.get_plugins() if isinstance(p, types.ModuleType)]
    found, problems = custom.found_in(modules)
    for d in found:
        if (problem := custom.name_problem(d.name, QuestionRecord.model_fields)) is not None:
            problems.append(f"ragate.metric({d.name!r}) at {d.where}: {problem}")
    custom.define([] if problems else found)
    if problems:
        raise pytest.UsageError("\n".join(problems))
    config.stash[DEFINED_KEY] = found


def defined_fields(config: pytest.Config, question: str, answer: Answer,
                   expected: str | None) -> dict[str, Any]:
    """A scored answer's row fields of the defined metrics: `custom` (the values) and
    `custom_errors` (what went wrong where one failed); nothing when none is defined."""
    defined = config.stash.get(DEFINED_KEY, [])
    if not defined:
        return {}
    from pytest_ragate.scoring.custom import measure

    values, errors = measure(defined, question, answer, expected)
    return {"custom": values, "custom_errors": errors}


def forget_metrics() -> None:
    """The run is over: the registry forgets its defined metrics and the rubrics its
    goldsets declared (pytester runs share a process, as do a command's tests)."""
    module = sys.modules.get(CUSTOM_MODULE)
    if module is not None:
        module.define([])
    registry = sys.modules.get("pytest_ragate.scoring.registry")  # not imported: no rubric
    if registry is not None:
        registry.METRICS.rubrics.clear()
