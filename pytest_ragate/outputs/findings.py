"""The goldset lines a decided run points a reader at, most useful first: what GitHub's
annotations (`annotations.py`) and GitLab's Code Quality report (`gitlab.py`) show beside
the files.

In the order a reader should act on them:

1. an invalid goldset's lines (collection refused it: nothing of it was decided);
2. each cause of missing results, once, at the first of its questions or anchors (a fixture
   that does not exist errors all 40 questions: one finding, "and 39 more", not 40);
3. each failing floor's worst questions (the ones its message names), one floor's first
   before any floor's second, so every failing floor is seen within GitHub's ten;
4. anchors that did not hold, or could not be checked;
5. warnings: judge failures (a stale fixture verdict, a timeout), once per cause and judge.

A question is found once, its floors named together. Every text from the run (an answer, an
error, a floor's message) passes through `redact` (the run's `Redactor`) before it is kept.
Pure: no pytest, no files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_ragate.decision.floors import Verdict, bill_bound
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import Collected, Member, Population, anchor_name
from pytest_ragate.outputs.text_cells import cut
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.floor import counts_in, slice_value
from pytest_ragate.scoring.records import (
    NAMED_BEHIND,
    AnchorOutcome,
    QuestionRecord,
    fmt_some,
    worst_first,
)
from pytest_ragate.wording.floors import OUTCOME_WORDS

Level = Literal["error", "warning"]
NAMED = 5  # ids a finding about many questions names before "and N more"
MESSAGE_WIDTH = 300  # characters of a floor's message or an error a finding quotes
ANSWER_WIDTH = 200  # characters of an answer a finding quotes


@dataclass(kw_only=True)
class Finding:
    """One goldset line to look at: where, how bad, a title and a message (plain text)."""

    level: Level
    path: str  # relative to the rootdir (posix), as the population names its files
    line: int | None
    title: str
    message: str
    check: str  # what kind of finding: a stable name (GitLab's check_name)
    key: str  # what it is about, stable across runs (a fingerprint's input)
    floors: list[str] = field(default_factory=list)  # the failing floors a question is behind


class Where:
    """A population's members by item name and by index, and its files."""

    def __init__(self, population: Population | None) -> None:
        self.population = population
        members = population.questions if population else []
        self._names = {m.item_name: m for m in members}
        for m in members:
            self._names.setdefault(m.question_id, m)
        self._indexes: dict[int, Member] = {}
        for m in members:
            self._indexes.setdefault(m.index, m)

    def member(self, name: str) -> Member | None:
        return self._names.get(name)

    def by_index(self, index: int) -> Member | None:
        return self._indexes.get(index)

    @property
    def questions_file(self) -> str:
        found = self.population
        return found.questions_file if found and found.questions_file else "questions.jsonl"

    def expected_at(self, member: Member | None) -> str:
        found = self.population
        if member is None or found is None or not found.expected_file:
            return ""
        return found.expected_file + (f":{member.expected_line}" if member.expected_line else "")


def findings(runs: Sequence[GoldsetRun], collected: Collected | None, *,
             problems: Sequence[Problem] = (), rootdir: Path | None = None,
             redact: Callable[[str], str] = str) -> list[Finding]:
    """Every finding of a run, most useful first (the module's order)."""
    by_route = {p.route: p for p in (collected.populations if collected else [])}
    wheres = [(run, Where(by_route.get(run.route))) for run in runs]
    found = [invalid_line(p, rootdir, redact) for p in problems]
    for run, where in wheres:
        found += missing(run, where, redact)
    found += interleaved([behind_floors(run, where, redact) for run, where in wheres])
    for run in runs:
        found += failed_anchors(run.label, run.anchors, rootdir, redact)
    for run, where in wheres:
        found += judge_failures(run, where, redact)
    return found


def _relative(path: Path | str, rootdir: Path | None) -> str:
    given = Path(path)
    if rootdir is not None and given.is_absolute():
        try:
            return given.resolve().relative_to(rootdir.resolve()).as_posix()
        except ValueError:
            pass
    return given.as_posix()


def invalid_line(problem: Problem, rootdir: Path | None, redact: Callable[[str], str],
                 ) -> Finding:
    """A line collection refused: the file, line and field the problem names."""
    who = f" [{problem.question_id}]" if problem.question_id else ""
    path = _relative(problem.path, rootdir)
    return Finding(level="error", path=path, line=problem.line,
                   title=f"ragate: invalid goldset line{who}: {problem.field}",
                   message=redact(f"{problem.field}: {problem.message}"), check="invalid-goldset",
                   key=f"{path}:{problem.line}:{problem.field}:{problem.question_id or ''}")


def missing(run: GoldsetRun, where: Where, redact: Callable[[str], str]) -> list[Finding]:
    """One finding per cause of missing results (its gap kind and why), at its first member."""
    causes: dict[tuple[str, str], list[str]] = {}
    for gap in run.gaps:  # the questions' (an anchor's is found at its line: failed_anchors)
        if gap.kind in run.soft_gaps:
            continue  # deselected: no result was owed
        causes.setdefault((gap.kind, gap.why), []).append(gap.member)
    found = []
    for (kind, why), names in causes.items():
        first = where.member(names[0])
        many = f" and {len(names) - 1} more" if len(names) > 1 else ""
        message = (f"{len(names)} question{'s' * (len(names) != 1)} of {run.label} "
                   f"{'have' if len(names) > 1 else 'has'} no result ({kind}): "
                   f"{fmt_some(names, NAMED)}" + (f"\n{cut(why, MESSAGE_WIDTH)}" if why else ""))
        found.append(Finding(
            level="error", path=where.questions_file, line=first.line if first else None,
            title=f"ragate {run.label}: {names[0]}{many} {kind}", message=redact(message),
            check=f"question-{kind.replace(' ', '-')}", key=f"{run.route}:{kind}:{why}"))
    return found


def behind_floors(run: GoldsetRun, where: Where, redact: Callable[[str], str],
                  ) -> list[Finding]:
    """Each failing floor's worst questions (NAMED_BEHIND of them, worst first), one finding
    per question, floor by floor; a question behind several floors is found once, at its
    first, naming each."""
    rows: dict[int, QuestionRecord] = {}
    for r in run.records:
        rows.setdefault(r.index, r)  # with repeats, its first
    per_floor: list[list[Finding]] = []
    seen: dict[int, Finding] = {}
    for verdict, named in worst_table(run):
        floor_found = []
        for index, words in named:
            if index in seen:
                seen[index].floors.append(verdict.floor.name)
                continue
            finding = seen[index] = behind_one(run, verdict, where, rows.get(index), index,
                                               words, redact)
            floor_found.append(finding)
        per_floor.append(floor_found)
    for finding in seen.values():  # each question's floors, named in its title
        if len(finding.floors) > 1:
            finding.title = (f"{finding.title.partition(' is behind ')[0]} is behind "
                             f"{', '.join(finding.floors)}")
    return interleaved(per_floor)


def named_worst(verdict: Verdict) -> bool:
    """A failing floor whose failure is its figure (not a gap): its worst questions are
    named (a slice that misses, too)."""
    return verdict.outcome == "failed" and bool(verdict.worst or verdict.slice_call == "misses")


Worst = list[tuple[Verdict, list[tuple[int, str]]]]


def worst_table(run: GoldsetRun) -> Worst:
    """Each failing floor that names its worst questions, with the questions its message
    names (NAMED_BEHIND, worst first) as (index, what went wrong). A slice floor's rows are
    found from one grouping of the run's rows by its key, not one pass over them per slice."""
    groups: dict[str, dict[str | None, list[QuestionRecord]]] = {}
    found: Worst = []
    for verdict in run.verdicts:
        if not named_worst(verdict):
            continue
        floor = verdict.floor
        if floor.slice is not None and floor.kind is None:
            key, value = floor.slice
            if key not in groups:
                groups[key] = {}
                for r in run.records:
                    groups[key].setdefault(slice_value(key, r.kind, r.tags), []).append(r)
            rows = groups[key].get(value, [])
        else:
            rows = [r for r in run.records if counts_in(floor, r.kind, r.tags)]
        found.append((verdict, worst_first(floor.metric, rows,
                                           over=bill_bound(floor))[:NAMED_BEHIND]))
    return found


def behind_one(run: GoldsetRun, verdict: Verdict, where: Where, record: QuestionRecord | None,
               index: int, words: str, redact: Callable[[str], str]) -> Finding:
    member = where.by_index(index)
    qid = member.question_id if member else (record.question_id if record else str(index))
    lines = [words, f"{verdict.floor.name} failed: {cut(verdict.message, MESSAGE_WIDTH)}"]
    if record is not None:
        lines.append(f"answer: {answer_quote(record)}")
    expected = where.expected_at(member)
    if expected:
        lines.append(f"expected answer: {expected}")
    return Finding(level="error", path=where.questions_file,
                   line=member.line if member else None,
                   title=f"ragate {run.label}: {qid} is behind {verdict.floor.name}",
                   message=redact("\n".join(lines)), check="floor-failed",
                   key=f"{run.route}:{qid}", floors=[verdict.floor.name])


def answer_quote(record: QuestionRecord) -> str:
    """What the system answered, as a finding quotes it."""
    if record.abstained:
        return "(abstained)"
    if record.status != "scored":
        return f"({record.status}: {cut(record.error or '', ANSWER_WIDTH)})"
    return cut(record.answer_text, ANSWER_WIDTH) if record.answer_text else "(no text)"


def failed_anchors(label: str, anchors: Iterable[AnchorOutcome], rootdir: Path | None,
                   redact: Callable[[str], str]) -> list[Finding]:
    """Each anchor that did not hold (a strict xfail that did not is expected) or that could
    not be checked, at its line."""
    found = []
    for a in anchors:
        if not (a.error or a.outcome in ("failed", "xpassed")):
            continue
        why = a.error or a.why or ("a strict xfail now holds: promote it"
                                   if a.outcome == "xpassed" else "did not hold")
        path = _relative(a.path, rootdir)
        found.append(Finding(level="error", path=path, line=a.line,
                             title=f"ragate {label}: {anchor_name(a.anchor_id)} "
                             + ("could not be checked" if a.error else "does not hold"
                                if a.outcome == "failed" else OUTCOME_WORDS["xpassed"]),
                             message=redact(f"{a.kind}: {a.claim}\n{cut(why, MESSAGE_WIDTH)}"),
                             check="anchor", key=f"{path}:{a.anchor_id}"))
    return found


def judge_failures(run: GoldsetRun, where: Where, redact: Callable[[str], str],
                   ) -> list[Finding]:
    """Warnings: each kind of judge failure (`stale`, `timeout`, …: what its text starts
    with), once, at its first question: those questions are left out of the metric."""
    causes: dict[str, list[tuple[QuestionRecord, str, str]]] = {}
    for r in run.records:
        for metric, why in r.judge_failures.items():
            kind = why.partition(":")[0] if ":" in why[:24] else "failed"
            causes.setdefault(kind, []).append((r, metric, why))
    found = []
    for kind, hits in causes.items():
        first, metric, why = hits[0]
        names = list(dict.fromkeys(run.named(r) for r, _, _ in hits))
        member = where.member(first.question_id)
        found.append(Finding(
            level="warning", path=where.questions_file, line=member.line if member else None,
            title=f"ragate {run.label}: judge failure ({kind}) on {fmt_some(names, 1)}",
            message=redact(f"{len(hits)} verdict{'s' * (len(hits) != 1)} left out of their "
                           f"metrics: {fmt_some(names, NAMED)}\n{metric}: "
                           f"{cut(why, MESSAGE_WIDTH)}"),
            check=f"judge-{kind}", key=f"{run.route}:judge:{kind}"))
    return found


def interleaved(groups: Sequence[Sequence[Finding]]) -> list[Finding]:
    """The first of each group, then the second of each, …: every group seen early."""
    found: list[Finding] = []
    for depth in range(max((len(g) for g in groups), default=0)):
        found += [g[depth] for g in groups if depth < len(g)]
    return found
