"""Where a run writes, checked before it runs, and cleared once it is known to be safe.

Two outputs on one file would overwrite each other (a history file overwritten by a results
file is history lost); an output on an input destroys it (`--ragate-report` naming the sealed
answers, `--ragate-results` naming a shard `ragate decide` reads); an output that is not a
regular file must be written through or refused, never renamed over (`/dev/null` as root);
and an output that cannot be written would only be found after every question had been asked.
Paths are compared by their real path (links and `..` resolved) and by `os.path.samefile`
(hard links).

The goldsets' own files are checked twice: when the run is configured, against every
`ragate.toml` under the paths given (the xdist controller collects nothing, so this is what it
knows); and once collection is done, in the process that collected, against every goldset it
loaded by either route (a `@ragate.goldset` test may name a folder outside those paths). Only
then are the outputs an earlier run left removed (`clear_outputs`), so a run that stops early
never leaves an earlier PASS looking current.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.settings import read_settings

REFUSED_ATTR = "ragate_refused"  # on an xdist worker's collect report: outputs refused
STEP_SUMMARY = "$GITHUB_STEP_SUMMARY"  # GitHub's job summary file, appended to (github.py)
APPENDED = frozenset({"--ragate-history", STEP_SUMMARY})  # never cleared: appended to


@dataclass(frozen=True)
class Input:
    """A file the run reads (or a corpus glob, `pattern`), and what it is, for the message.
    `writable_by`: the output flags that may name it (the history is its own baseline)."""

    path: Path
    what: str
    pattern: bool = False
    writable_by: frozenset[str] = frozenset()


def outputs(config: pytest.Config) -> list[tuple[str, str]]:
    """(flag, path) of every file a run writes: pytest's JUnit file, ragate's own, and
    GitHub's job summary when the run shows itself in GitHub Actions."""
    junit = config.getoption("xmlpath", None)
    settings = read_settings(config)
    summary = step_summary(config)
    return ([("--junitxml", str(junit))] if junit else []) + [
        (f"--ragate-{name}", path) for name, path in settings.run.outputs.items()] + (
        [(STEP_SUMMARY, summary)] if summary else [])


def step_summary(config: pytest.Config) -> str | None:
    """The job summary file this run appends to: `$GITHUB_STEP_SUMMARY`, when GitHub's views
    are on (`ragate_github`) and GitHub set it."""
    if not read_settings(config).ci.github_on(os.environ):
        return None
    return os.environ.get("GITHUB_STEP_SUMMARY") or None


def _resolved(value: str | Path) -> Path:
    return Path(os.path.realpath(Path(value).expanduser()))


def _written(config: pytest.Config) -> dict[Path, list[str]]:
    written: dict[Path, list[str]] = {}
    for flag, value in outputs(config):
        written.setdefault(_resolved(value), []).append(flag)
    return written


def check_outputs(config: pytest.Config, judge_file: str | None = None,
                  decided: Sequence[Path] = ()) -> None:
    """A usage error for colliding or unwritable outputs, or an output on an input: the
    baseline (unless it is the history being appended to), the fixture judge file, the
    results files `ragate decide` reads (`decided`), and the files of every goldset under
    the paths given."""
    written = _written(config)
    problems = [f"{' and '.join(flags)} all write {path}: give each output its own file"
                for path, flags in written.items() if len(flags) > 1 and not _through(path)]
    if written:
        problems += overwritten(written, given_inputs(config, judge_file, decided))
    for path, flags in written.items():
        why = unwritable(path, flags[0])
        if why:
            problems.append(f"{flags[0]} {path}: {why}")
    _refuse(problems)


def check_collected(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Once collected: a usage error for an output on a file of any goldset this process
    loaded, by either route. Then pytest's JUnit file is not written (it is written at the
    session's end, after a usage error too) and `items` is emptied (pytest still calls
    `pytest_collection_finish`). An xdist worker sends the refusal to its controller as a
    marked collect report, before it says it has collected: the controller raises it
    (`refused`) before it would clear any output."""
    loader = sys.modules.get("pytest_ragate.items.collection")  # not loaded: no goldset was
    written = _written(config)
    goldsets = config.stash.get(loader.GOLDSETS_KEY, {}) if loader else {}
    if not written or not goldsets:
        return
    problems = overwritten(written, [i for g in goldsets.values()
                                     for i in goldset_inputs(g.config_path)])
    if not problems:
        return
    _no_junit(config)
    items.clear()
    if hasattr(config, "workerinput"):  # xdist shows a worker's usage error nowhere
        report = pytest.CollectReport("", "failed", _message(problems), [])
        setattr(report, REFUSED_ATTR, True)  # the controller raises it (`refused`)
        config.hook.pytest_collectreport(report=report)
        return
    _refuse(problems)


def refused(config: pytest.Config, report: pytest.CollectReport) -> None:
    """On the xdist controller: a worker's refusal (`check_collected`) is this run's usage
    error, and pytest's JUnit file is not written."""
    if getattr(report, REFUSED_ATTR, False):
        _no_junit(config)
        raise pytest.UsageError(str(report.longrepr))


def _through(path: Path) -> bool:
    """A device or a pipe, written through: /dev/null may take every output."""
    from pytest_ragate.files import WRITTEN_THROUGH, special_file

    return special_file(path) in WRITTEN_THROUGH


def _message(problems: list[str]) -> str:
    return "pytest-ragate outputs:\n" + "\n".join(f"  {p}" for p in dict.fromkeys(problems))


def _refuse(problems: list[str]) -> None:
    if problems:
        raise pytest.UsageError(_message(problems))


def _no_junit(config: pytest.Config) -> None:
    from pytest_ragate.items.pytest_internals import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is not None:
        del config.stash[xml_key]
        config.pluginmanager.unregister(xml)


def overwritten(written: dict[Path, list[str]], inputs: Iterable[Input]) -> list[str]:
    """One line per output that would overwrite an input."""
    problems = []
    for found in inputs:
        for path, flags in written.items():
            named = [f for f in flags if f not in found.writable_by]
            if named and _is(path, found):
                problems.append(f"{found.what} is also written by {' and '.join(named)} "
                                f"({path}): an output never overwrites an input")
    return problems


def _is(output: Path, found: Input) -> bool:
    if found.pattern:
        return fnmatch.fnmatchcase(str(output), str(found.path))
    if output == _resolved(found.path):
        return True
    try:
        return os.path.samefile(output, found.path)
    except OSError:
        return False


def given_inputs(config: pytest.Config, judge_file: str | None,
                 decided: Sequence[Path] = ()) -> list[Input]:
    """What this run reads that is known before collection."""
    settings = read_settings(config)
    found: list[Input] = []
    baseline = settings.gate.baseline
    if baseline:
        from pytest_ragate.outputs.baseline import baseline_location  # reads history lines

        path, _ = baseline_location(baseline, config.rootpath)
        found.append(Input(path, f"--ragate-baseline {baseline}",
                           writable_by=frozenset({"--ragate-history"})))
    if judge_file:
        found.append(Input(Path(judge_file), f"the fixture judge file {judge_file}"))
    found += [Input(p, f"--ragate-decide {p}") for p in decided]
    for config_path in goldset_configs(config):
        found += goldset_inputs(config_path)
    return found


def goldset_inputs(config_path: Path) -> list[Input]:
    """A goldset's files: its ragate.toml, questions, expected or sealed answers, anchors,
    labels, and its corpus globs (a file written there would be read as corpus next time)."""
    from pytest_ragate.goldsets.config import read_config
    from pytest_ragate.goldsets.sealed import locate_sealed
    from pytest_ragate.problems import GoldsetError

    own = f"of goldset {config_path}"
    found = [Input(config_path, f"the ragate.toml {own}")]
    try:
        config = read_config(config_path)
    except GoldsetError:
        return found  # collection says what is wrong with it
    root = config_path.parent
    questions = config.questions
    found += [Input(root / questions.file, f"the questions {own}"),
              Input(root / questions.expected, f"the expected answers {own}"),
              Input(locate_sealed(root, questions.expected), f"the sealed answers {own}")]
    if config.anchors is not None:
        found.append(Input(root / config.anchors.file, f"the anchors {own}"))
    if config.judge.labels:
        found.append(Input(root / config.judge.labels, f"the labels {own}"))
    found += [Input(_resolved(root) / pattern, f"the corpus glob {pattern!r} {own}",
                    pattern=True) for pattern in config.corpus.paths]
    return found


def goldset_configs(config: pytest.Config) -> list[Path]:
    """Every ragate.toml under the paths given (a node id's file part), in the folders pytest
    would recurse into."""
    skip = [str(p) for p in config.getini("norecursedirs")]
    found: list[Path] = []
    for arg in config.args:
        path = config.invocation_params.dir / arg.split("::")[0]
        if path.is_file() and path.name == CONFIG_NAME:
            found.append(path)
        elif path.is_dir():
            found += _walk(path, skip)
    return list(dict.fromkeys(found))


def _walk(top: Path, skip: list[str]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not any(fnmatch.fnmatch(d, p) for p in skip)
                   and not (Path(folder, d) / "pyvenv.cfg").exists()]
        if CONFIG_NAME in files:
            yield Path(folder) / CONFIG_NAME


def unwritable(path: Path, flag: str = "") -> str | None:
    """Why `path` cannot be written, found without creating anything but a probe file in
    the nearest folder that exists. A character device or a named pipe is written through;
    the history, read back and appended to, must be a regular file."""
    from pytest_ragate.files import WRITTEN_THROUGH, special_file

    kind = special_file(path)
    if kind is not None and (kind not in WRITTEN_THROUGH or flag == "--ragate-history"):
        return f"is {kind}: give a regular file" + (
            " (the history is read back and appended to)" if kind in WRITTEN_THROUGH else "")
    if kind is not None:
        return None
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".ragate-probe-"):
            pass
    except OSError as error:
        return f"cannot write in {folder} ({error.strerror or error})"
    return None


def clear_outputs(config: pytest.Config, *, junit: bool) -> list[str]:
    """Remove what an earlier run left at every output this run writes but the history and
    the job summary (appended to), and pytest's JUnit file when `junit`: a run that stops before it
    concludes then leaves nothing that looks current. Only regular files are removed."""
    targets = [(flag, value) for flag, value in outputs(config)
               if flag not in APPENDED and (junit or flag != "--junitxml")]
    if not targets:
        return []
    from pytest_ragate.files import remove_regular  # pydantic: not in a run without outputs

    return [flag for flag, value in targets if remove_regular(Path(value))]
