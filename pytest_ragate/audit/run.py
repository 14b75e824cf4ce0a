"""One goldset's audit: its rules run in order over the loaded goldset, each only where the
goldset's `[audit] rules` leaves it on, and their findings in one `AuditReport`."""

from __future__ import annotations

import re
from pathlib import Path

from pytest_ragate.audit import contradicted, evidence, floors, pinned, questions
from pytest_ragate.audit.evidence import Answered, CorpusFolded, Embed
from pytest_ragate.audit.findings import AuditReport, Finding, with_severities
from pytest_ragate.audit.runs import Runs, never_separates
from pytest_ragate.audit.texts import CorpusWords
from pytest_ragate.goldsets.config import AuditRule
from pytest_ragate.goldsets.loader import Case, Goldset
from pytest_ragate.goldsets.sealed import locate_sealed


def _answer_file(goldset: Goldset, case: Case) -> Path:
    if goldset.sealed:
        return locate_sealed(goldset.root, goldset.config.questions.expected)
    where = goldset.root / goldset.config.questions.expected
    return where / f"{case.question.question_id}.json" if where.is_dir() else where


def answered(goldset: Goldset) -> list[Answered]:
    """Each question whose expected answer is known (not sealed without its key)."""
    return [Answered(question_id=c.question.question_id, question=c.question.question,
                     expected=c.expected, path=_answer_file(goldset, c), line=c.expected_line,
                     pins=c.pins)
            for c in goldset.cases if c.expected is not None]


def floor_lines(config: Path) -> dict[str, int]:
    """Each floor label's line in ragate.toml, as near as its table and metric tell."""
    lines: dict[str, int] = {}
    table = ""
    for number, text in enumerate(config.read_text(encoding="utf-8").splitlines(), start=1):
        header = re.match(r"\s*\[([^\]]+)\]", text)
        if header:
            table = header.group(1).replace('"', "")
            continue
        name = re.match(r'\s*"?([\w@\-^]+)"?\s*=', text)
        if not name or not table.startswith("floors"):
            continue
        parts = table.split(".")[1:]
        scope = (f"{parts[1]}:" if parts[:1] == ["kind"] and len(parts) > 1 else
                 f"{parts[1]}:" if parts[:1] == ["slices"] and "=" in "".join(parts[1:2]) else
                 f"{parts[1]}=*:" if parts[:1] == ["slices"] and len(parts) > 1 else "")
        lines.setdefault(scope + name.group(1), number)
    return lines


def _floor_line(lines: dict[str, int], label: str) -> int | None:
    """A floor's line: its own label's, or its slice key's (`lang=*:metric`)."""
    if label in lines:
        return lines[label]
    key, _, rest = label.partition("=")
    metric = rest.partition(":")[2]
    return lines.get(f"{key}=*:{metric}") or lines.get(f"{key}=*:{rest}")


def audit_goldset(goldset: Goldset, *, embed: Embed | None, runs: Runs | None = None,
                  ) -> AuditReport:
    """Every rule on for this goldset."""
    rules = goldset.config.audit.rules

    def on(rule: AuditRule) -> bool:
        return rules.get(rule) != "off"

    answers = answered(goldset)
    corpus = goldset.corpus
    found: list[Finding] = []
    checked = pinned.pinned(answers)
    affected = {f.question_id for f in checked if f.question_id}
    found += checked
    asked = [questions.Asked(question_id=c.question.question_id, text=c.question.question,
                             path=goldset.root / goldset.config.questions.file, line=c.line)
             for c in goldset.cases]
    if on("duplicate_question"):
        found += questions.duplicates(asked)
    if on("near_duplicate") and embed is not None:
        found += questions.near_duplicates(asked, embed([q.text for q in asked]))
    sound = [a for a in answers if a.question_id not in affected]
    folded = CorpusFolded(corpus)
    if on("unsupported_evidence") or on("abstain_answerable"):
        words = CorpusWords(corpus)
        if on("unsupported_evidence"):
            found += evidence.unsupported(sound, corpus, words, embed, folded)
        if on("abstain_answerable"):
            found += evidence.abstain_answerable(sound, corpus, words)
    if on("facts_not_in_corpus"):
        found += evidence.facts_nowhere(sound, folded)
    if on("contradicted_fact"):
        found += contradicted.contradicted(sound, folded)
    if on("wide_evidence"):
        # a span's width is not its text's: stale spans too
        found += evidence.wide(answers, corpus, sealed=goldset.sealed)
    if on("unasked_document"):
        found += evidence.unasked(answers, corpus, sealed=goldset.sealed)
    if on("floor_too_small"):
        lines = floor_lines(goldset.config_path)
        found += floors.too_small(goldset.floors, [c.question for c in goldset.cases],
                                  goldset.config.repeat, runs.rows if runs else [],
                                  goldset.config_path,
                                  {f.label: line for f in goldset.floors
                                   if (line := _floor_line(lines, f.label)) is not None})
    if runs is not None and runs.runs and on("never_separates"):
        found += never_separates(runs, {
            c.question.question_id: (goldset.root / goldset.config.questions.file, c.line)
            for c in goldset.cases})
    kept = with_severities(found, rules)
    kept.sort(key=lambda f: (f.path, f.line or 0, f.rule))
    return AuditReport(goldset=goldset.name, config=str(goldset.config_path),
                       questions=len(goldset.cases), documents=len(corpus),
                       runs=runs.runs if runs else 0, embedded=embed is not None,
                       findings=kept)
