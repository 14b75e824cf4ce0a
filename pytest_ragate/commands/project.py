"""The one configuration reader of the `ragate` commands: pytest's own.

A command reads the project's settings as a pytest run from the same folder would: pytest
parses its command line, `addopts`, `PYTEST_ADDOPTS` and whichever configuration file it finds
(pytest.toml, .pytest.ini, pytest.ini, pyproject.toml's [tool.pytest] or
[tool.pytest.ini_options], tox.ini, setup.cfg), and the gate's own `settings.read_settings`
validates the knobs, so a value the gate refuses (`ragate_judge_timeout = 0`,
`ragate_ci = Strict`) is refused by the command with the same words. It runs as a pytest mode
would, through public API only: `pytest.main` with a plugin whose `pytest_cmdline_main` reads
the configuration and ends the run before anything is configured, collected or printed
(no conftest.py is imported, no cache written).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from pytest_ragate.settings import Settings

# what pytest is told besides the paths: no conftest.py imported, nothing captured, no
# assertion rewriting installed, and the plugin loaded even where autoloading is off
READ_ONLY = ("--noconftest", "--capture=no", "--assert=plain", "-p", "ragate")


class SettingsRefused(click.ClickException):
    """Settings the gate would refuse, or a configuration pytest could not read: the gate's
    own words, exit 2 (a usage error, as pytest's)."""

    exit_code = 2


@dataclass(frozen=True, kw_only=True)
class Project:
    """The settings a pytest run from here sees, validated as the gate validates them."""

    rootdir: Path
    settings: Settings
    results_signed: bool  # `ragate_results_signed`: saved runs are read only with the key
    pytest_cache_dir: str | None  # pytest's `cache_dir`; None without its cache plugin

    @property
    def judge_cache(self) -> Path:
        """The judge cache folder a run from here uses (`judges/cache_folder.py`)."""
        from pytest_ragate.judges.cache_folder import judge_cache_folder

        return judge_cache_folder(self.rootdir, ragate_dir=self.settings.judge.judge_cache_dir,
                                  pytest_cache_dir=self.pytest_cache_dir,
                                  cache_plugin=self.pytest_cache_dir is not None)


class _Reader:
    """A plugin that reads the configuration and ends the run before it is configured."""

    def __init__(self) -> None:
        self.project: Project | None = None
        self.refused: str | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_cmdline_main(self, config: pytest.Config) -> int:
        """The project's settings, or why the gate would refuse them; ends the run."""
        try:
            self.project = project_of(config)
        except (pytest.UsageError, ValueError) as error:
            self.refused = str(error)
        return 0


def project_of(config: pytest.Config) -> Project:
    """The settings of a parsed pytest configuration (`settings.read_settings`, the gate's
    validation); a pytest.UsageError naming each bad knob, as the gate raises it."""
    from pytest_ragate.settings import read_settings

    if config.pluginmanager.get_plugin("ragate") is None:
        raise pytest.UsageError("pytest-ragate is not loaded by this project's pytest "
                                "configuration (`-p no:ragate` in addopts or "
                                "PYTEST_ADDOPTS?): its settings cannot be read")
    settings = read_settings(config)
    cache = config.pluginmanager.get_plugin("cacheprovider") is not None
    try:
        signed = bool(config.getini("ragate_results_signed"))
    except ValueError as error:  # pytest's bool ini option: true or false
        raise pytest.UsageError(f"ragate_results_signed: {error}") from None
    return Project(rootdir=config.rootpath, settings=settings, results_signed=signed,
                   pytest_cache_dir=str(config.getini("cache_dir")) if cache else None)


def read_project(*paths: Path) -> Project:
    """The project's settings as `pytest PATHS` run from here would read them (no paths: the
    current folder's); `SettingsRefused` (exit 2) with the gate's own message when a knob is
    invalid, or when pytest itself refuses its configuration (its error printed above).
    Read once per command (kept in its click context)."""
    context = click.get_current_context(silent=True)
    key = f"ragate-project:{paths}"
    if context is not None and key in context.meta:
        return context.meta[key]
    reader = _Reader()
    status = pytest.main([*READ_ONLY, *map(str, paths)], plugins=[reader])
    if reader.refused is not None:
        raise SettingsRefused(reader.refused)
    if reader.project is None:
        raise SettingsRefused(f"pytest could not read this project's configuration (exit "
                               f"{int(status)}; its error is above)")
    from pytest_ragate.commands.defined_metrics import declare_metrics

    declare_metrics(reader.project.rootdir, paths)  # `@ragate.metric` names, read not run
    if context is not None:
        context.meta[key] = reader.project
    return reader.project
