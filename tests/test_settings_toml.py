"""pytest 9's own TOML table (`[tool.pytest]`) keeps TOML's types: ragate's knobs take its
numbers and booleans as an ini file's text (settings.INI_TYPE, settings.ini_text)."""

from __future__ import annotations

import pytest

from pytest_ragate.settings import ini_text, read_settings

NATIVE_TOML = pytest.mark.skipif(pytest.version_tuple < (9, 2),
                                 reason="pytest < 9.2 declares no union ini types")


@pytest.mark.parametrize(("value", "text"), [(None, None), ("", None), ("30", "30"), (0, "0"),
                                             (30, "30"), (0.25, "0.25"), (True, "true"),
                                             (False, "false")])
def test_an_ini_value_is_read_as_the_text_a_knob_parses(value: object, text: str | None) -> None:
    assert ini_text(value) == text


@NATIVE_TOML
def test_tool_pytest_numbers_and_booleans_are_knob_values(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml("[tool.pytest]\nragate_min_n = 0\nragate_alpha = 0.1\n"
                               "ragate_system_timeout = 0\nragate_sequential = true\n"
                               "ragate_flip_window = 12\n")
    settings = read_settings(pytester.parseconfig())
    assert (settings.gate.min_n, settings.gate.alpha, settings.gate.system_timeout,
            settings.gate.sequential, settings.gate.flip_window) == (0, 0.1, 0.0, True, 12)


@NATIVE_TOML
def test_tool_pytest_bad_number_is_one_settings_error(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml("[tool.pytest]\nragate_min_n = -1\n")
    with pytest.raises(pytest.UsageError, match=r"ragate_min_n: Input should be greater"):
        read_settings(pytester.parseconfig())
