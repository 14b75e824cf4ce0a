"""The public API: what `pytest_ragate` exports (`__all__`), and that everything README,
docs/ and examples/ tell a user to import from it is exported. Fast tier: no pytest runs."""

from __future__ import annotations

import ast
import fnmatch
import importlib
import re
from pathlib import Path

import pytest

import pytest_ragate

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
# `pytest_ragate.Asked` (or `ragate.Answer`) named in prose: a top-level name a user reaches for
DOTTED = re.compile(r"`(?:pytest_ragate|ragate)\.([A-Z]\w*)")


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "examples").rglob("*.md"))]


def _sources() -> list[tuple[str, str]]:
    """Every Python code block of the docs, and every Python file of examples/."""
    found = [(f"{path.relative_to(ROOT)} block {n}", block)
             for path in _docs() for n, block in enumerate(FENCE.findall(path.read_text()), 1)]
    return found + [(str(path.relative_to(ROOT)), path.read_text())
                    for path in sorted((ROOT / "examples").rglob("*.py"))]


def _imports(source: str) -> list[tuple[str, str]]:
    """`(module, name)` of each `from pytest_ragate… import name` in SOURCE, read by `ast`
    (a block with `...` placeholders still parses)."""
    return [(node.module, alias.name) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module
            and node.module.split(".")[0] == "pytest_ragate" for alias in node.names]


@pytest.mark.parametrize("name", pytest_ragate.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    value = getattr(pytest_ragate, name)
    assert getattr(value, "__name__", name) == name
    assert name in dir(pytest_ragate)


def test_what_the_docs_import_is_exported() -> None:
    imported = [(where, module, name) for where, source in _sources()
                for module, name in _imports(source)]
    assert {name for _, module, name in imported if module == "pytest_ragate"} >= {
        "Answer", "Citation", "Context", "Usage"}  # the parse found the docs' own imports
    missing = [f"{where}: from {module} import {name}" for where, module, name in imported
               if (module == "pytest_ragate" and name not in pytest_ragate.__all__)
               or not hasattr(importlib.import_module(module), name)]
    named = [f"{path.relative_to(ROOT)}: pytest_ragate.{name}" for path in _docs()
             for name in DOTTED.findall(path.read_text()) if name not in pytest_ragate.__all__]
    assert not missing + named


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Anwser'"):
        pytest_ragate.Anwser  # noqa: B018


# --- knobs, and a model the system builds wrong -------------------------------------------


def test_answer_and_abstain_take_knobs_the_same_way() -> None:
    from pytest_ragate import Answer

    knobs = {"top_k": 5, "reranker": "bge"}
    assert Answer.abstain(knobs=knobs).knobs == Answer(abstained=True, knobs=knobs).knobs
    with pytest.raises(TypeError, match=r"knobs=\{'top_k': \.\.\.\}"):
        Answer.abstain(top_k=5)


@pytest.mark.parametrize(("build", "line"), [
    (lambda: __import__("pytest_ragate").Answer(text=5),
     "q5: the system built a malformed Answer: text: Input should be a valid string"),
    (lambda: __import__("pytest_ragate").Answer.abstain(knobs={"top_k": [5]}),
     "q5: the system built a malformed Answer: knobs.top_k.str: Input should be a valid "
     "string; knobs.top_k.int: Input should be a valid integer; knobs.top_k.float: Input "
     "should be a valid number; knobs.top_k.bool: Input should be a valid boolean"),
    (lambda: __import__("pytest_ragate").Context(context_id="c", doc_id="d", first_unit="x",
                                                 last_unit=0),
     "q5: the system built a malformed Context: first_unit: must be an integer, not str 'x'"),
    (lambda: __import__("pytest_ragate").Context(context_id="c", doc_id="d", first_turn=0,
                                                 last_turn=0),
     "q5: the system built a malformed Context: first_turn was renamed first_unit; last_turn "
     "was renamed last_unit"),
])
def test_a_model_the_system_builds_wrong_is_one_line_naming_the_field(build, line) -> None:
    from pydantic import ValidationError

    from pytest_ragate.items.malformed import BUILT, built_wrong

    with pytest.raises(ValidationError) as error:
        build()
    assert error.value.title in BUILT
    malformed = built_wrong("q5", error.value)
    assert "\n" not in str(malformed) and fnmatch.fnmatch(str(malformed), line)
    assert malformed.returned == f"a malformed {error.value.title}"


def test_an_anchors_evidence_under_a_pre_release_name_is_one_error() -> None:
    from pydantic import ValidationError

    from pytest_ragate.goldsets.anchors import AnchorEvidence

    with pytest.raises(ValidationError) as error:
        AnchorEvidence.model_validate({"meeting_id": "m1", "first_unit": 0, "last_unit": 1})
    assert [e["msg"] for e in error.value.errors()] == ["Value error, meeting_id was renamed "
                                                        "doc_id"]
