"""Knobs: declared as plain dataclasses, validated by pydantic only when one is given."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import TypeAdapter, ValidationError

from pytest_ragate.settings import SECTIONS, PipelineSettings, validated


@pytest.mark.parametrize("model", list(SECTIONS.values()), ids=list(SECTIONS))
def test_every_default_passes_its_own_constraints(model: type) -> None:
    # a section left at its defaults is built without validation, so the defaults must be
    # values validation would accept
    defaults = dataclasses.asdict(model())
    assert TypeAdapter(model).validate_python(defaults) == model()
    assert validated(model, {}) == model()


def test_ini_strings_are_read_as_their_types() -> None:
    got = validated(PipelineSettings, {"top_k": "7", "max_distance": "0.5", "rescue": "on"})
    assert (got.top_k, got.max_distance, got.rescue) == (7, 0.5, True)


def test_a_value_outside_its_constraint_is_refused() -> None:
    with pytest.raises(ValidationError) as caught:
        validated(PipelineSettings, {"top_k": "0", "max_distance": "2.5"})
    assert {e["loc"][0] for e in caught.value.errors()} == {"top_k", "max_distance"}


def test_bad_knobs_are_one_usage_error_naming_each(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nragate_top_k = 0\nragate_cache = sometimes\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--ragate-ci=loose", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid pytest-ragate settings:*",
                                 "*ragate_top_k: Input should be greater than or equal to 1*",
                                 "*ragate_cache: Input should be 'on', 'off' or 'replay'*",
                                 "*ragate_ci: Input should be 'point' or 'strict'*"])


def test_flags_win_over_ini_options(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nragate_top_k = 3\nragate_alpha = 0.2\n")
    pytester.makeconftest("""
from pytest_ragate.settings import read_settings

def test_read(pytestconfig):
    settings = read_settings(pytestconfig)
    assert settings.pipeline.top_k == 9 and settings.gate.alpha == 0.2
""")
    result = pytester.runpytest("conftest.py", "--ragate-top-k=9", "-p", "no:cacheprovider",
                                "-o", "python_files=conftest.py")
    result.assert_outcomes(passed=1)


def test_one_judge_price_without_the_other_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """A cost priced on one side only would read as the whole cost, understated."""
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--ragate-judge-price-in=0.15", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragate_judge_price_in and ragate_judge_price_out go "
                                 "together*"])
    assert pytester.runpytest("--ragate-judge-price-in=0.15", "--ragate-judge-price-out=0",
                              "-p", "no:cacheprovider").ret == 0
