"""The `ragate` commands as a package of commands: each one's help shows an example, the
merged commands' old names say the new ones, `ragate seal` does the seal's three jobs, and
every command reads the project's settings by pytest itself (`commands/project.py`): every
file pytest reads, with the gate's validation. CliRunner only: no pytest run of a project."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.commands.renamed import RENAMED
from tests.conftest import write_goldset

# the files pytest reads its configuration from, each setting ragate_min_n = 7
CONFIG_FILES = {
    "pytest.toml": '[pytest]\nragate_min_n = "7"\n',
    ".pytest.ini": "[pytest]\nragate_min_n = 7\n",
    "pytest.ini": "[pytest]\nragate_min_n = 7\n",
    "pyproject.toml [tool.pytest]": '[tool.pytest]\nragate_min_n = "7"\n',
    "pyproject.toml [tool.pytest.ini_options]": '[tool.pytest.ini_options]\nragate_min_n = "7"\n',
    "tox.ini": "[pytest]\nragate_min_n = 7\n",
    "setup.cfg": "[tool:pytest]\nragate_min_n = 7\n",
}


def invoke(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> click.testing.Result:
    """`ragate ARGS` run from `root`."""
    monkeypatch.chdir(root)
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("where", CONFIG_FILES)
def test_a_command_reads_every_file_pytest_reads(tmp_path: Path, where: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragate_min_n` in each file pytest reads reaches `ragate power` (pytest.toml,
    .pytest.ini and [tool.pytest] went unseen by the commands' own ini reader)."""
    (tmp_path / where.split(" ")[0]).write_text(CONFIG_FILES[where])
    done = invoke(tmp_path, monkeypatch, "power", "--floor", "0.8", "--n", "5")
    assert done.exit_code == 1, done.output
    assert "cannot pass over 5 units (ragate_min_n = 7 refuses a floor over fewer)" in (
        done.output)


@pytest.mark.parametrize(("ini", "said"), [
    ("ragate_judge_timeout = 0", "ragate_judge_timeout: Input should be greater than 0"),
    ("ragate_ci = Strict", "ragate_ci: Input should be 'point' or 'strict'"),
    ("ragate_min_n = some", "ragate_min_n: Input should be a valid integer"),
], ids=["timeout", "ci", "min_n"])
@pytest.mark.parametrize("command", [
    ["validate", "gs"], ["power", "--floor", "0.8", "--n", "5"], ["plan", "gs"],
    ["rejudge", "a.jsonl", "--judge", "fixture:j.json"],
], ids=lambda command: command[0])
def test_a_value_the_gate_refuses_is_refused_by_every_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ini: str, said: str,
        command: list[str]) -> None:
    """The gate's validation (`settings.read_settings`), its words, exit 2: before, `ragate
    rejudge` took a timeout of 0 and `validate` read `Strict` as point."""
    write_goldset(tmp_path / "gs")
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text("")
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    done = invoke(tmp_path, monkeypatch, *command)
    assert done.exit_code == 2, done.output
    assert f"invalid pytest-ragate settings:\n  {said}" in done.output


def test_an_option_given_wins_over_the_setting(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pytest.toml").write_text('[pytest]\nragate_min_n = "7"\nragate_ci = "strict"\n')
    done = invoke(tmp_path, monkeypatch, "power", "--floor", "0.8", "--n", "40", "--min-n", "0",
                  "--ci", "point")
    assert done.exit_code == 0 and "a floor of 0.80 (point) passes" in done.output, done.output
    strict = invoke(tmp_path, monkeypatch, "power", "--floor", "0.8", "--n", "40")
    assert "(strict)" in strict.output, strict.output


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_a_merged_command_s_old_name_says_the_new_one(old: str) -> None:
    done = CliRunner().invoke(main, [old, "x", "y"])
    assert done.exit_code == 2
    assert f"Error: `ragate {old}` is now `{RENAMED[old]}`" in done.output
    assert old not in CliRunner().invoke(main, ["--help"]).output  # hidden


def test_every_command_s_help_shows_an_example() -> None:
    shown = [name for name, command in main.commands.items() if not command.hidden]
    assert len(shown) == 15
    for name in shown:
        done = CliRunner().invoke(main, [name, "--help"])
        example = done.output.partition("Example:\n")[2].lstrip(" ")
        assert done.exit_code == 0 and example.startswith("ragate "), name


def test_ragate_seal_seals_verifies_and_unseals(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    gs = write_goldset(tmp_path / "gs")
    plain = (gs / "expected.jsonl").read_text()
    monkeypatch.setenv("RAGATE_SEAL_KEY", "s3cret")
    sealed = invoke(tmp_path, monkeypatch, "seal", "gs")
    assert sealed.exit_code == 0 and "(pin it: ragate seal --verify --pin)" in sealed.output
    digest = sealed.output.split("manifest digest ")[1].split()[0]
    monkeypatch.delenv("RAGATE_SEAL_KEY")
    verified = invoke(tmp_path, monkeypatch, "seal", "--verify", "--pin", digest, "gs")
    assert verified.exit_code == 0 and f"manifest digest {digest}" in verified.output
    wrong = invoke(tmp_path, monkeypatch, "seal", "--verify", "--pin", "0" * 64, "gs")
    assert wrong.exit_code == 1, wrong.output
    for args, said in ((["--unseal", "--verify"], "--unseal and --verify are two jobs"),
                       (["--pin", digest], "--pin goes with --verify")):
        refused = invoke(tmp_path, monkeypatch, "seal", *args, "gs")
        assert refused.exit_code == 2 and said in refused.output
    monkeypatch.setenv("RAGATE_SEAL_KEY", "s3cret")
    unsealed = invoke(tmp_path, monkeypatch, "seal", "--unseal", "gs")
    assert unsealed.exit_code == 0, unsealed.output
    assert (gs / "expected.jsonl").read_text() == plain


def test_ragate_stamp_needs_something_to_stamp(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text("")
    done = CliRunner().invoke(main, ["stamp", str(tmp_path / "r.jsonl")])
    assert done.exit_code == 2 and "give what to stamp: --labels LABELS" in done.output
