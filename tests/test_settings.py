"""Knobs: declared as plain dataclasses, validated by pydantic only when one is given."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from pytest_ragate.settings import (
    SECTIONS,
    PipelineSettings,
    add_options,
    add_run_options,
    configuration_flags_given,
    configuration_only,
    empty_keys,
    standing,
    validated,
)
from pytest_ragate.wording.baseline import accept_judge_standing
from pytest_ragate.wording.sequential import pinned_seed
from tests.conftest import WORKERS


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
    pytester.makeini("[pytest]\nragate_ci = point\nragate_top_k = 3\nragate_alpha = 0.2\n")
    pytester.makeconftest("""
from pytest_ragate.settings import read_settings

def test_read(pytestconfig):
    settings = read_settings(pytestconfig)
    assert settings.gate.ci == "strict" and settings.gate.alpha == 0.2
    assert settings.pipeline.top_k == 9  # -o wins over the ini file, as pytest has it
""")
    result = pytester.runpytest("conftest.py", "--ragate-ci=strict", "-o", "ragate_top_k=9",
                                "-p", "no:cacheprovider", "-o", "python_files=conftest.py")
    result.assert_outcomes(passed=1)


class _Group:
    """What `add_options` and `add_run_options` declare: flags and ini options, by name."""

    def __init__(self) -> None:
        self.flags: list[str] = []
        self.ini: list[str] = []

    def addoption(self, flag: str, **_: object) -> None:
        self.flags.append(flag)

    def addini(self, name: str, *_: object, **__: object) -> None:
        self.ini.append(name)


def test_at_most_twenty_flags_and_every_other_knob_an_ini_option() -> None:
    """The flags are the knobs a person sets for one run; every knob of a section is an ini
    option, and the ones without a flag are the ones a command line is refused by name."""
    declared = _Group()
    add_run_options(declared)
    add_options(declared, declared)  # type: ignore[arg-type]
    knobs = {k.name for model in SECTIONS.values() for k in dataclasses.fields(model)}
    assert len(declared.flags) == len(set(declared.flags)) <= 20, declared.flags
    assert {f"ragate_{name}" for name in knobs} <= set(declared.ini)
    assert set(configuration_only()).isdisjoint(declared.flags)
    assert {configuration_only()[flag] for flag in configuration_only()} | {
        flag[len("--ragate-"):].replace("-", "_") for flag in declared.flags} >= knobs


@pytest.mark.parametrize(("args", "found"), [
    (["--ragate-index-dir", "x", "--ragate-top-k=3", "--ragate-index-dir=y"],
     [("--ragate-index-dir", "index_dir"), ("--ragate-top-k", "top_k")]),
    (["--ragate-rescue-cap=2", "--ragate-judge=fixture:v.json", "--ragate-cache", "off"],
     [("--ragate-rescue-cap", "rescue_cap")]),
    (["--ragate-judge-url-x", "--ragate-results=r.jsonl", "-o", "ragate_top_k=3"], []),
    (["--", "--ragate-top-k=3"], []),
], ids=["both-forms-once", "prefix-of-a-flag", "flags-and-ini", "after-dashes"])
def test_a_configuration_knob_on_the_command_line_is_found_once(args: list[str],
                                                                found: list[tuple[str, str]],
                                                                ) -> None:
    assert configuration_flags_given(args) == found


def test_a_configuration_knob_on_the_command_line_is_one_usage_error_naming_its_ini_option(
        pytester: pytest.Pytester) -> None:
    """Not argparse's bare "unrecognized arguments": each flag once, with the ini option (and
    the `-o` form) to use instead; addopts' flags too, which pytest puts on the command line."""
    pytester.makeini("[pytest]\naddopts = --ragate-judge-url=http://127.0.0.1:1/v1\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--ragate-index-dir", "idx", "--ragate-top-k=3",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "*these pytest-ragate knobs are configuration, not flags:",
        "*--ragate-judge-url: set ragate_judge_url in the ini file*-o ragate_judge_url=VALUE",
        "*--ragate-index-dir: set ragate_index_dir in the ini file*-o ragate_index_dir=VALUE",
        "*--ragate-top-k: set ragate_top_k in the ini file*"])
    assert "unrecognized arguments" not in result.stderr.str()


def test_one_judge_price_without_the_other_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """A cost priced on one side only would read as the whole cost, understated."""
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("-o", "ragate_judge_price_in=0.15", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragate_judge_price_in and ragate_judge_price_out go "
                                 "together*"])
    assert pytester.runpytest("-o", "ragate_judge_price_in=0.15", "-o", "ragate_judge_price_out=0",
                              "-p", "no:cacheprovider").ret == 0


# --- one rule for each refusal, wherever the setting comes from -------------------------------


class _Ini:
    """What `standing` reads of a config: its ini values (addopts as pytest splits them)."""

    def __init__(self, **ini: object) -> None:
        self.ini = ini

    def getini(self, name: str) -> object:
        return self.ini.get(name, [] if name == "addopts" else None)


@pytest.mark.parametrize(("ini", "env", "where"), [
    ({"ragate_sequential_seed": "7"}, "", "the ini file"),
    ({"addopts": ["-q", "--ragate-sequential-seed", "7"]}, "", "addopts"),
    ({"addopts": ["--ragate-sequential-seed=7"]}, "", "addopts"),
    ({}, "-q --ragate-sequential-seed=7", "PYTEST_ADDOPTS"),
    ({"addopts": ["--ragate-sequential"]}, "--ragate-sequential-seeds 7", None),
    ({}, "", None),
], ids=["ini", "addopts", "addopts=", "PYTEST_ADDOPTS", "other-flags", "none"])
def test_a_one_run_knob_given_for_every_run_is_found_wherever_it_is(
        monkeypatch: pytest.MonkeyPatch, ini: dict[str, object], env: str,
        where: str | None) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", env)
    assert standing(_Ini(**ini), "sequential_seed") == where  # type: ignore[arg-type]


def test_the_refusal_names_where_the_knob_was_given() -> None:
    assert pinned_seed("addopts").startswith("--ragate-sequential-seed in addopts would ask")
    assert pinned_seed("the ini file").startswith("ragate_sequential_seed in the ini file")
    assert accept_judge_standing("PYTEST_ADDOPTS").startswith(
        "--ragate-accept-judge in PYTEST_ADDOPTS would accept every future judge change")


@pytest.mark.parametrize(("env", "calls", "empty"), [
    ({"RAGATE_RESULTS_KEY": ""}, False, ["RAGATE_RESULTS_KEY"]),
    ({"RAGATE_RESULTS_KEY": "  "}, False, ["RAGATE_RESULTS_KEY"]),
    ({"RAGATE_RESULTS_KEY": "k"}, False, []),
    ({"RAGATE_SEAL_KEY": ""}, True, []),  # the fork route: said, not refused
    ({"RAGATE_JUDGE_API_KEY": ""}, True, ["RAGATE_JUDGE_API_KEY"]),
    ({"RAGATE_JUDGE_API_KEY": ""}, False, []),  # no judge model called: not read
    ({"OPENAI_API_KEY": ""}, True, ["OPENAI_API_KEY"]),
    ({"RAGATE_JUDGE_API_KEY": "k", "OPENAI_API_KEY": ""}, True, []),  # not the one read
], ids=["results", "blank", "set", "seal", "judge", "judge-unread", "openai", "openai-unread"])
def test_a_key_set_but_empty_is_found(env: dict[str, str], calls: bool,
                                      empty: list[str]) -> None:
    assert empty_keys(env, judge_calls=calls) == empty


def _refusal_project(pytester: pytest.Pytester, ini: str) -> None:
    """A project with a goldset (ragate is inert where none is collected or asked for), whose
    system answers every question, and its ini file."""
    from tests.conftest import TWELVE_EUROS, write_goldset

    pytester.makeini("[pytest]\n" + ini)
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(TWELVE_EUROS)


@WORKERS
@pytest.mark.parametrize(("ini", "flags", "refused"), [
    ("ragate_sequential_seed = 7\n", (), "ragate_sequential_seed in the ini file would ask"),
    ("addopts = --ragate-sequential-seed 7\n", (),
     "--ragate-sequential-seed in addopts would ask"),
    ("", ("--ragate-sequential-seed", "7"), None),
], ids=["ini", "addopts", "flag"])
def test_a_pinned_seed_is_refused_in_the_ini_and_in_addopts_alike(
        pytester: pytest.Pytester, workers: str, ini: str, flags: tuple[str, ...],
        refused: str | None) -> None:
    _refusal_project(pytester, ini)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", workers, *flags)
    if refused is None:
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
        return
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{refused}*"])


def test_an_accepted_judge_in_addopts_is_refused_as_in_the_ini(
        pytester: pytest.Pytester) -> None:
    _refusal_project(pytester, "addopts = --ragate-accept-judge=fixture:b\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ragate-baseline=b.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ragate-accept-judge in addopts would accept every future "
                                 "judge change silently*"])


def test_an_empty_results_key_is_refused_by_name(pytester: pytest.Pytester,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI secret the job cannot see would turn signing and checking off without a word."""
    _refusal_project(pytester, "")
    monkeypatch.setenv("RAGATE_RESULTS_KEY", "")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*RAGATE_RESULTS_KEY is set but empty: set it or unset it*"])


def test_a_project_that_signs_its_results_refuses_a_baseline_read_without_the_key(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _refusal_project(pytester, "ragate_results_signed = true\n")
    monkeypatch.delenv("RAGATE_RESULTS_KEY", raising=False)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--ragate-baseline=b.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ragate_results_signed = true, and this run reads saved runs "
                                 "(--ragate-baseline) without RAGATE_RESULTS_KEY*"])


def test_the_ragate_command_refuses_an_empty_results_key_too(tmp_path: Path) -> None:
    """`ragate rejudge`, `compare` and `audit` read saved runs: an empty key would pass their
    signatures unchecked."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    result = CliRunner().invoke(main, ["validate", str(tmp_path)], env={"RAGATE_RESULTS_KEY": ""})
    assert result.exit_code == 2
    assert "RAGATE_RESULTS_KEY is set but empty: set it or unset it" in result.output


@pytest.mark.parametrize("command", [
    ["calibrate", "r.jsonl"], ["suggest", "r.jsonl"],
    ["stamp", "r.jsonl", "--labels", "labels.jsonl"],
    ["stamp", "r.jsonl", "--verdicts", "verdicts.json"],
    ["audit", "gs", "--no-embed", "--results", "r.jsonl"],
    ["rejudge", "r.jsonl", "--judge", "fixture:verdicts.json"],
], ids=lambda command: " ".join(command[:1] + [a for a in command if a.startswith("--")][:1]))
def test_the_ragate_commands_read_no_saved_run_unsigned_where_results_are_signed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]) -> None:
    """Every `ragate` command that reads a saved run holds the project's
    `ragate_results_signed = true` as the gate does: without the key it reads none (exit 2,
    one line); with it, the refusal is not said (the file's signature is checked instead)."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from pytest_ragate.scoring.records import QuestionRecord
    from tests.conftest import saved_results, write_goldset

    write_goldset(tmp_path / "gs")
    row = QuestionRecord.model_validate({
        "goldset": "g", "question_id": "q1", "kind": "single_doc", "index": 0,
        "eval_version": "1", "must_abstain": False, "abstained": False,
        "abstention_correct": True, "evidence_spans": 0})
    for name in ("r.jsonl", "r2.jsonl"):
        (tmp_path / name).write_text(saved_results([row]))
    (tmp_path / "labels.jsonl").write_text("")
    (tmp_path / "verdicts.json").write_text('{"judge_id": "j", "answers": {}}\n')
    (tmp_path / "pytest.ini").write_text("[pytest]\nragate_results_signed = true\n")
    monkeypatch.chdir(tmp_path)
    refused = "ragate_results_signed = true, and this run reads saved runs"
    result = CliRunner().invoke(main, command, env={"RAGATE_RESULTS_KEY": None})
    assert result.exit_code == 2 and refused in result.output, result.output
    keyed = CliRunner().invoke(main, command, env={"RAGATE_RESULTS_KEY": "k" * 32})
    assert refused not in keyed.output, keyed.output
