"""What a concluded run shows its CI system beyond its files: on GitHub Actions
(`ragate_github`, on by itself when GITHUB_ACTIONS=true) the job summary appended to
`$GITHUB_STEP_SUMMARY` and annotations printed as workflow commands (`outputs/github.py`,
`outputs/annotations.py`); and the view the files `--ragate-comment`,
`--ragate-gitlab-metrics` and `--ragate-codequality` are written from (`outputs/writers.py`).

Only the controller shows them (an xdist worker has no terminal of its own), once, at the
terminal summary, when the exit status is known; and only in a run where a goldset ran or an
invalid goldset was refused: a pytest run without goldsets shows nothing more than it would
without ragate. Every text passes through this process's `Redactor` (`items/redacting.py`):
the credentials of its environment and settings, and the sealed texts of every goldset it
loaded (a worker redacted the rows it sent where it made them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import Collected
from pytest_ragate.items.redacting import redactor
from pytest_ragate.modes.output_paths import STEP_SUMMARY, step_summary
from pytest_ragate.outputs.annotations import workflow_commands
from pytest_ragate.outputs.findings import Where, findings
from pytest_ragate.outputs.github import GateView, append_summary
from pytest_ragate.problems import Problem


def gate_view(config: pytest.Config, runs: Sequence[GoldsetRun], collected: Collected | None,
              *, problems: Sequence[Problem] = (), exit_status: int | None = None,
              incomplete: str | None = None, deltas: Mapping[str, list[str]] | None = None,
              written: Mapping[str, str] | None = None, shard: str | None = None) -> GateView:
    """The view of a run every CI output is made from, its findings redacted."""
    redact = redactor(config)
    found = findings(runs, collected, problems=problems, rootdir=config.rootpath,
                     redact=redact)
    return GateView(runs=runs, findings=found, exit_status=exit_status, incomplete=incomplete,
                    deltas=deltas or {}, written=written or {}, invalid=len(problems),
                    where={p.route: Where(p) for p in collected.populations}
                    if collected else {}, shard=shard, redact=redact)


def repository_path(rootdir: Path, workspace: str | None) -> Callable[[str], str]:
    """A finding's path (relative to the rootdir) as GitHub names the file: relative to
    GITHUB_WORKSPACE, the repository's checkout (as pytest-github-actions-annotate-failures
    does); unchanged outside it."""
    def path(found: str) -> str:
        if not workspace:
            return found
        full = (rootdir / found).resolve()
        try:
            shown = os.path.relpath(full, Path(workspace).resolve())
        except ValueError:  # another drive
            return found
        return found if shown.startswith("..") else Path(shown).as_posix()

    return path


def show_on_github(config: pytest.Config, terminalreporter: Any, view: GateView) -> None:
    """The job summary appended to `$GITHUB_STEP_SUMMARY` (when GitHub set it), then the
    annotations, each a workflow command on its own line of the terminal's output."""
    write = terminalreporter.write_line
    summary = step_summary(config)
    if summary is None:
        write(f"ragate github: {STEP_SUMMARY} is not set: no job summary written")
    else:
        try:
            size = append_summary(Path(summary), view)
        except OSError as error:
            write(f"ragate github: {STEP_SUMMARY} could not be appended to ({error})",
                  red=True)
        else:
            write(f"ragate github: job summary appended to {STEP_SUMMARY} ({size} bytes)"
                  if size else f"ragate github: {STEP_SUMMARY} is full (GitHub's 1 MiB per "
                  "step): no job summary appended", yellow=not size)
    path = repository_path(config.rootpath, os.environ.get("GITHUB_WORKSPACE"))
    for line in workflow_commands(view.findings, path):
        write(line)
