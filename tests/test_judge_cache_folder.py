"""The judge cache folder, resolved once: the folder a run caches its verdicts in is the
folder `ragate plan` counts cache hits in and `ragate rejudge` caches in, under pytest's own
`cache_dir` (a relative path, or one with an environment variable, as tox setups write it;
pytester's ini file is a tox.ini) as under the default."""

from __future__ import annotations

import contextlib
import json
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.items.questions import judge_cache_folder as run_folder
from pytest_ragate.judges.cache_folder import judge_cache_folder
from tests.conftest import write_goldset


def planned_folder(root: Path) -> Path:
    with contextlib.chdir(root):
        result = CliRunner().invoke(main, ["plan", "--json", "gs"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Path(json.loads(result.output)["cache_dir"])


@pytest.mark.parametrize("ini", [
    pytest.param("", id="default"),
    pytest.param("cache_dir = build/pytest-cache\n", id="cache_dir"),
    pytest.param("cache_dir = $RAGATE_TOX_ENV/cache\n", id="cache_dir-env"),
    pytest.param("ragate_judge_cache_dir = judge-cache\n", id="ragate")])
def test_plan_counts_hits_in_the_folder_the_run_caches_in(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ini: str) -> None:
    monkeypatch.setenv("RAGATE_TOX_ENV", str(pytester.path / ".tox" / "py"))
    write_goldset(pytester.path / "gs")
    pytester.makeini("[pytest]\n" + ini)
    run = run_folder(pytester.parseconfigure())
    assert planned_folder(pytester.path).resolve() == run.resolve()


def test_the_resolver_reads_pytests_cache_dir_as_pytest_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGATE_TOX_ENV", "/elsewhere/py")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "project"
    folder = partial(judge_cache_folder, root, ragate_dir=None)
    assert folder() == root / ".pytest_cache" / "d" / "ragate-judge"
    assert folder(pytest_cache_dir="$RAGATE_TOX_ENV/c") == Path("/elsewhere/py/c/d/ragate-judge")
    assert folder(pytest_cache_dir="~/c") == tmp_path / "home" / "c" / "d" / "ragate-judge"
    assert folder(cache_plugin=False) == root / ".ragate-judge-cache"
    assert judge_cache_folder(root, ragate_dir="cache", pytest_cache_dir="x") == root / "cache"
