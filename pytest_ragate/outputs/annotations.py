"""GitHub Actions annotations: a run's findings (`findings.py`) as workflow commands, which
the runner turns into annotations on the goldset's lines (the checks tab, the pull request's
"Files changed").

The grammar is GitHub's ("Workflow commands for GitHub Actions"): one line
`::error file={path},line={n},title={title}::{message}`, escaped as the runner's own toolkit
escapes it (actions/toolkit, packages/core/src/command.ts: `escapeData` turns `%`, `\\r` and
`\\n` into `%25`, `%0D` and `%0A`; `escapeProperty` also `:` and `,` into `%3A` and `%2C`), so a
question id or an answer with a comma, a colon or a newline cannot break out of its field.
pytest-github-actions-annotate-failures writes the same command for a failed test (it
escapes only the data, as its properties are a path and a number).

GitHub shows at most 10 error and 10 warning annotations per step (and 50 per job): the
findings come most useful first, the first 10 of each level are annotated, and one notice
counts the rest ("12 more goldset lines were not annotated …"), so none is dropped unsaid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_ragate.outputs.findings import Finding

PER_STEP = {"error": 10, "warning": 10}  # GitHub's annotations per step, by level


def escape_data(text: str) -> str:
    """A command's message, escaped as actions/toolkit's `escapeData`."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property's value, escaped as actions/toolkit's `escapeProperty`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str | int | None) -> str:
    """`::name key=value,…::message`, properties without a value left out."""
    props = ",".join(f"{key}={escape_property(str(value))}"
                     for key, value in properties.items() if value is not None)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def workflow_commands(found: Sequence[Finding],
                      path: Callable[[str], str] = lambda p: p) -> list[str]:
    """The commands that annotate the most useful findings within GitHub's limits, and one
    notice for the rest; `path` maps a finding's path (relative to the rootdir) to the
    repository's (relative to GITHUB_WORKSPACE)."""
    shown: list[Finding] = []
    left: dict[str, int] = {}
    for finding in found:
        if sum(f.level == finding.level for f in shown) < PER_STEP[finding.level]:
            shown.append(finding)
        else:
            left[finding.level] = left.get(finding.level, 0) + 1
    lines = [command(f.level, f.message, file=path(f.path), line=f.line, title=f.title)
             for f in shown]
    if left:
        lines.append(command("notice", overflow_notice(left), title="ragate: more findings"))
    return lines


def overflow_notice(left: dict[str, int]) -> str:
    """What the notice says of the findings past GitHub's limits."""
    total = sum(left.values())
    parts = [f"{n} {level}{'s' * (n != 1)}" for level, n in left.items()]
    return (f"{total} more goldset line{'s' * (total != 1)} not annotated "
            f"({', '.join(parts)}): GitHub shows 10 error and 10 warning annotations per "
            "step; see the job summary and the reports")
