"""What `ragate audit` finds: one `Finding` per defect (file, line, question id, rule,
severity, message), the rules' catalogue with their default severities, and the
`AuditReport` that `--format json` writes (pydantic v2 models)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_ragate.goldsets.config import AuditRule, AuditSeverity

Severity = Literal["error", "warning", "info"]

# each rule's default severity: an error is a defect that makes a question or a floor wrong
# whatever the system does (exit 1); a warning asks a person to look; info is a fact
DEFAULT_SEVERITY: dict[AuditRule, Severity] = {
    "duplicate_question": "error",
    "near_duplicate": "warning",
    "unsupported_evidence": "warning",
    "facts_not_in_corpus": "warning",
    "contradicted_fact": "warning",
    "abstain_answerable": "warning",
    "wide_evidence": "warning",
    "unasked_document": "info",
    "floor_too_small": "error",
    "moved_evidence": "warning",
    "stale_evidence": "error",
    "never_separates": "info",
}


class Finding(BaseModel):
    """One defect, where it is and which rule found it. `measure` is the figure the rule
    compared with its threshold (a similarity, a share), when it has one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    line: int | None = None
    question_id: str | None = None
    rule: AuditRule
    severity: Severity
    message: str
    measure: float | None = None
    other: str | None = None  # the other question or document it concerns


class AuditReport(BaseModel):
    """One goldset's audit: its findings in file order, and what was read."""

    model_config = ConfigDict(extra="forbid")

    goldset: str
    config: str
    questions: int
    documents: int
    runs: int = 0  # saved runs read (results files and history lines)
    embedded: bool = True  # whether the embedding rules ran (False: --no-embed)
    findings: list[Finding] = Field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)


class AuditReports(BaseModel):
    """What `ragate audit --format json` prints: every goldset's report."""

    model_config = ConfigDict(extra="forbid")

    reports: list[AuditReport]


def finding(rule: AuditRule, message: str, *, path: Path | str, line: int | None = None,
            question_id: str | None = None, measure: float | None = None,
            other: str | None = None) -> Finding:
    """A finding at its rule's default severity (`with_severities` applies a goldset's)."""
    return Finding(path=str(path), line=line, question_id=question_id, rule=rule,
                   severity=DEFAULT_SEVERITY[rule], message=message,
                   measure=None if measure is None else round(measure, 3), other=other)


def with_severities(found: Iterable[Finding],
                    rules: Mapping[AuditRule, AuditSeverity]) -> list[Finding]:
    """The findings with the goldset's `[audit] rules` applied: a rule set to "off" is left
    out, another severity replaces its default."""
    kept = []
    for f in found:
        severity = rules.get(f.rule)
        if severity == "off":
            continue
        kept.append(f if severity is None else f.model_copy(update={"severity": severity}))
    return kept
