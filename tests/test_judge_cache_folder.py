"""The judge cache folder, resolved once: the folder a run caches its verdicts in is the
folder `ragate plan` counts cache hits in and `ragate rejudge` caches in, under pytest's own
`cache_dir` (a relative path, or one with an environment variable, as tox setups write it)
as under the default."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.items.questions import judge_cache_folder
from tests.conftest import write_goldset


def planned_folder(root: Path) -> Path:
    with contextlib.chdir(root):
        result = CliRunner().invoke(main, ["plan", "--json", "gs"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Path(json.loads(result.output)["cache_dir"])


WRONG = pytest.mark.xfail(strict=True, reason="plan resolves the folder its own way")


@pytest.mark.parametrize("ini", [
    pytest.param("", id="default"),
    pytest.param("cache_dir = build/pytest-cache\n", id="cache_dir", marks=WRONG),
    pytest.param("cache_dir = $RAGATE_TOX_ENV/cache\n", id="cache_dir-env", marks=WRONG),
    pytest.param("ragate_judge_cache_dir = judge-cache\n", id="ragate")])
def test_plan_counts_hits_in_the_folder_the_run_caches_in(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ini: str) -> None:
    monkeypatch.setenv("RAGATE_TOX_ENV", str(pytester.path / ".tox" / "py"))
    write_goldset(pytester.path / "gs")
    pytester.makeini("[pytest]\n" + ini)
    run = judge_cache_folder(pytester.parseconfigure())
    assert planned_folder(pytester.path).resolve() == run.resolve()
