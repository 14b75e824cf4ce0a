"""Whether a run asked for goldsets (`modes/asked.py`), pure: by its mark expression, its
`--ragate-*` flags, a goldset path among its arguments; and, on an xdist controller, whether
the paths it collects reach a goldset. A run that did not ask is left alone
(tests/test_first_hour_messages.py runs it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.modes.asked import (
    argument_paths,
    asked_by_flags,
    asked_by_marks,
    goldset_path,
)


@pytest.mark.parametrize(("markexpr", "asks"), [
    ("", False), ("slow", False), ("not rag_gate", False), ("not (rag_gate)", False),
    ("rag_gate_like", False), ("my_rag_gate", False), ("rag_gate", True),
    ("rag_gate and not slow", True), ("smoke or rag_gate", True), ("(rag_gate)", True),
    ("not slow and rag_gate", True),
])
def test_a_mark_expression_asks_when_it_selects_ragate_items(markexpr: str,
                                                            asks: bool) -> None:
    assert asked_by_marks(markexpr) is asks


@pytest.mark.parametrize(("options", "asks"), [
    ({}, False), ({"markexpr": "x", "verbose": 2}, False),
    ({"ragate_results": None, "ragate_promote": False}, False),
    ({"ragate_results": "r.jsonl"}, True), ({"ragate_promote": True}, True),
    ({"ragate_sequential": 0}, True),  # a value given, even a falsy one
    ({"ragate_judge_header": []}, True),
])
def test_any_ragate_flag_given_asks(options: dict[str, object], asks: bool) -> None:
    assert asked_by_flags(options) is asks


def test_a_goldset_path_is_its_file_its_folder_or_inside_it(tmp_path: Path) -> None:
    goldset = tmp_path / "sets" / "faq"
    (goldset / "corpus").mkdir(parents=True)
    (goldset / "ragate.toml").write_text("")
    (tmp_path / "tests").mkdir()
    assert goldset_path(goldset / "ragate.toml", tmp_path)
    assert goldset_path(goldset, tmp_path)
    assert goldset_path(goldset / "corpus", tmp_path)
    assert goldset_path(goldset / "corpus" / "missing.jsonl", tmp_path)
    assert not goldset_path(tmp_path / "sets", tmp_path)  # holds one deeper: not asked
    assert not goldset_path(tmp_path / "tests" / "test_x.py", tmp_path)
    assert not goldset_path(tmp_path, tmp_path)
    # above the rootdir is not looked at
    assert not goldset_path(goldset / "corpus", goldset / "corpus")


def test_argument_paths_drop_node_ids_and_options(tmp_path: Path) -> None:
    assert argument_paths(["tests/test_x.py::test_y[a::b]", "gs", ""], tmp_path) == [
        tmp_path / "tests" / "test_x.py", tmp_path / "gs"]
