"""Where a team reads the gate on GitLab: the merge request's metrics widget
(`--ragate-gitlab-metrics PATH`, `artifacts:reports:metrics`) and its Code Quality widget
(`--ragate-codequality PATH`, `artifacts:reports:codequality`).

The metrics report is OpenMetrics text (GitLab's format for it): one gauge per figure, with
the goldset, and the floor or metric, as labels (`pytest_ragate_floor_value{goldset="mini",
floor="floor[citation_accuracy]"} 0.83`), label values escaped as the OpenMetrics
specification says (`\\`, `"` and a newline as `\\\\`, `\\"`, `\\n`), ended by `# EOF`. GitLab
shows each against the target branch's.

The Code Quality report is GitLab's subset of the Code Climate format: a JSON array of issues,
each with a description, a check name, a fingerprint (stable across runs: GitLab tells new
issues from fixed ones by it), a severity and a location (the goldset file and line). Its
issues are the run's findings (`findings.py`), redacted as they were made.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.files import write_atomic
from pytest_ragate.outputs.findings import Finding

Severity = Literal["info", "minor", "major", "critical", "blocker"]
HELD = ("passed", "xfailed")  # a floor that holds, or misses as its xfail expects
GAUGES = {  # name -> help
    "pytest_ragate_passed": "1 when the goldset's run passed (every floor, check and item), else 0",
    "pytest_ragate_questions": "questions collected (with repeats, answers)",
    "pytest_ragate_scored": "questions scored",
    "pytest_ragate_without_result": "questions and anchors without a result (a floor with any "
                                    "fails)",
    "pytest_ragate_floor_value": "a floor's figure",
    "pytest_ragate_floor_bound": "the floor's bound (a minimum, or a maximum for an upper floor)",
    "pytest_ragate_floor_ci_low": "the lower bound of the figure's 95% interval",
    "pytest_ragate_floor_ci_high": "the upper bound of the figure's 95% interval",
    "pytest_ragate_floor_n": "what the figure counts (questions, spans, cited answers)",
    "pytest_ragate_floor_held": "1 when the floor held, else 0",
    "pytest_ragate_regression_change": "the metric now minus in the baseline, over paired "
                                       "questions",
}


def label_value(text: str) -> str:
    """A label value escaped as OpenMetrics says: backslash, double quote, newline."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def number(value: float) -> str:
    """A sample's value: an integer as one, a float as Python writes it (OpenMetrics takes
    both), NaN and infinities by their OpenMetrics names."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


Sample = tuple[str, dict[str, str], float]


def samples(runs: Sequence[GoldsetRun]) -> Iterator[Sample]:
    """Every gauge's samples, run by run."""
    for run in runs:
        goldset = {"goldset": run.label}
        total = run.population if run.population is not None else len(run.records)
        yield "pytest_ragate_passed", goldset, float(run.status == "passed")
        yield "pytest_ragate_questions", goldset, float(total)
        yield "pytest_ragate_scored", goldset, float(sum(r.status == "scored" for r in run.records))
        yield "pytest_ragate_without_result", goldset, float(len(run.hard_gaps))
        for v in run.verdicts:
            labels = {**goldset, "floor": v.floor.name}
            if v.value is not None:
                yield "pytest_ragate_floor_value", labels, v.value
            yield "pytest_ragate_floor_bound", labels, v.floor.min
            if v.interval is not None:
                yield "pytest_ragate_floor_ci_low", labels, v.interval[0]
                yield "pytest_ragate_floor_ci_high", labels, v.interval[1]
            if v.tally is not None:
                yield "pytest_ragate_floor_n", labels, float(v.tally.n)
            yield "pytest_ragate_floor_held", labels, float(v.outcome in HELD)
        for check in run.regressions:
            if check.delta is not None:
                yield "pytest_ragate_regression_change", {**goldset, "metric": check.metric}, \
                    check.delta


def openmetrics(runs: Sequence[GoldsetRun]) -> str:
    """The metrics report: each gauge's TYPE and HELP, then its samples, then `# EOF`."""
    by_name: dict[str, list[Sample]] = {name: [] for name in GAUGES}
    for sample in samples(runs):
        by_name[sample[0]].append(sample)
    lines = []
    for name, found in by_name.items():
        if not found:
            continue
        lines += [f"# TYPE {name} gauge", f"# HELP {name} {GAUGES[name]}"]
        for _, labels, value in found:
            shown = ",".join(f'{key}="{label_value(text)}"' for key, text in labels.items())
            lines.append(f"{name}{{{shown}}} {number(value)}")
    return "\n".join([*lines, "# EOF"]) + "\n"


class Lines(BaseModel):
    model_config = ConfigDict(extra="forbid")
    begin: int


class Location(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    lines: Lines


class Issue(BaseModel):
    """One Code Quality issue, as GitLab reads it."""

    model_config = ConfigDict(extra="forbid")
    description: str
    check_name: str
    fingerprint: str
    severity: Severity
    location: Location


def severity(finding: Finding) -> Severity:
    """An invalid goldset blocks (nothing of it was decided); an error is major; a warning
    minor."""
    if finding.check == "invalid-goldset":
        return "blocker"
    return "major" if finding.level == "error" else "minor"


def issues(found: Sequence[Finding]) -> list[Issue]:
    return [Issue(description=f"{f.title}: {f.message}", check_name=f"ragate/{f.check}",
                  fingerprint=hashlib.sha256(f"{f.check}\0{f.key}".encode()).hexdigest(),
                  severity=severity(f),
                  location=Location(path=f.path, lines=Lines(begin=f.line or 1)))
            for f in found]


def code_quality(found: Sequence[Finding]) -> str:
    """The Code Quality report: a JSON array of issues."""
    return TypeAdapter(list[Issue]).dump_json(issues(found), indent=2).decode() + "\n"


def write_metrics(path: Path, runs: Sequence[GoldsetRun]) -> None:
    write_atomic(path, openmetrics(runs))


def write_code_quality(path: Path, found: Sequence[Finding]) -> None:
    write_atomic(path, code_quality(found))
