"""Where `ragate audit`'s findings are rendered, the one place: a line per finding
(`file:line: question id: rule (severity): message`), each goldset's summary line, and the
JSON document of `--format json`."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.audit.findings import AuditReport, AuditReports, Finding
from pytest_ragate.wording.numbers import plural


def finding_line(f: Finding) -> str:
    where = f"{f.path}:{f.line}" if f.line is not None else f.path
    who = f"{f.question_id}: " if f.question_id else ""
    return f"{where}: {who}{f.rule} ({f.severity}): {f.message}"


def summary_line(report: AuditReport) -> str:
    counts = {s: sum(f.severity == s for f in report.findings)
              for s in ("error", "warning", "info")}
    said = ", ".join(plural(n, s) for s, n in counts.items())
    read = f", {plural(report.runs, 'saved run')}" if report.runs else ""
    embedded = "" if report.embedded else " (embedding rules off: --no-embed)"
    return (f"{report.goldset}: {plural(report.questions, 'question')}, "
            f"{plural(report.documents, 'document')}{read}: {said}{embedded}")


def text(reports: Sequence[AuditReport]) -> str:
    lines = []
    for report in reports:
        lines += [finding_line(f) for f in report.findings]
        lines.append(summary_line(report))
    return "\n".join(lines)


def json_text(reports: Sequence[AuditReport]) -> str:
    return AuditReports(reports=list(reports)).model_dump_json(indent=2)
