"""Where a team reads the gate on GitHub: the job summary (`$GITHUB_STEP_SUMMARY`) and the
body of one pull-request comment (`--ragate-comment PATH`). Annotations are `annotations.py`'s.

Both say the same, most useful first: the verdict (as the exit status says it), each
goldset's floors (failing ones first) with value, 95% interval and n, what changed since the
baseline, the worst questions of each failing floor with their answer and tags, the other
goldset lines to look at (`findings.py`), the figures by tag value, and the files the run
wrote (named, not linked: an artifact's address is the workflow's). Each is cut by priority to
GitHub's limit and says so (`budget.py`): a step's summary to 1 MiB (GitHub's limit per step;
what an earlier command of the same step appended counts too), a comment to 65,536
characters. The comment starts with a hidden marker (`MARKER`, as statgate's
`<!-- statgate-report -->`), so a workflow finds and updates the same comment on every push
(examples/github-actions-comment.yml).

Every text from the run passes through `GateView.redact` (the run's `Redactor`): an answer,
an error, a floor's message, a judge line. Pure, but for the two writers at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ragate.decision.floors import Verdict
from pytest_ragate.decision.goldset_run import GoldsetRun, RunStatus, run_status
from pytest_ragate.files import write_atomic
from pytest_ragate.outputs.budget import Section, fit, utf8_bytes
from pytest_ragate.outputs.findings import Finding, Where, Worst, worst_table
from pytest_ragate.outputs.reports import incomplete_notice, tag_rows
from pytest_ragate.outputs.text_cells import md_code, md_cut, md_inline, tags_text
from pytest_ragate.scoring.records import QuestionRecord, fmt_num
from pytest_ragate.scoring.registry import figure_digits
from pytest_ragate.wording.floors import OUTCOME_WORDS
from pytest_ragate.wording.numbers import bound, fmt_interval, fmt_n, shown
from pytest_ragate.wording.runs import STATUS_WORDS, coverage_line, run_why, status_reason

MARKER = "<!-- ragate-gate -->"
SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's limit of one step's job summary
COMMENT_LIMIT = 65_536  # characters: GitHub's limit of a comment's body
SUMMARY_WHY = "GitHub's 1 MiB limit of a step's job summary"
COMMENT_WHY = "GitHub's 65,536-character limit of a comment"
FAILING = ("failed", "xpassed")
NO_TESTS_COLLECTED = 5  # pytest's exit status when no test was selected
SIGNS: dict[RunStatus, str] = {"passed": "✅", "failed": "❌", "nothing_ran": "⚠️",
                              "partial": "⚠️", "not_decided": "⚠️"}


@dataclass(frozen=True, kw_only=True)
class GateView:
    """What the job summary and the comment are made of: the decided runs, their findings,
    how the run ended (its exit status, why it stopped early), the history's changes since
    the last run, the files written (name → path), the invalid goldset lines, and the
    redaction every text passes through."""

    runs: Sequence[GoldsetRun]
    findings: Sequence[Finding] = ()
    exit_status: int | None = None
    incomplete: str | None = None
    deltas: Mapping[str, list[str]] = field(default_factory=dict)
    written: Mapping[str, str] = field(default_factory=dict)
    invalid: int = 0  # goldset lines collection refused
    where: Mapping[str, Where] = field(default_factory=dict)  # route -> its population
    shard: str | None = None  # `2/3`: a shard, which decides nothing
    redact: Callable[[str], str] = str
    _worst: dict[str, Worst] = field(default_factory=dict, compare=False, repr=False)

    def worst(self, run: GoldsetRun) -> Worst:
        """`findings.worst_table` of a run, found once for the summary and the comment."""
        key = run.route or run.name
        if key not in self._worst:
            self._worst[key] = worst_table(run)
        return self._worst[key]

    @property
    def status(self) -> RunStatus:
        """The run's status as the reports decide it (`run_status`): FAIL when its exit
        status says so (unknown: a goldset, an invalid line or the stop does), NOTHING RAN
        when no goldset question or anchor ran (pytest's exit status 5 then), else PASS."""
        nothing = self.exit_status == NO_TESTS_COLLECTED and not any(r.ran for r in self.runs)
        failed = (self.incomplete is not None or bool(self.invalid)
                  or (self.exit_status not in (None, 0) and not nothing))
        return run_status(self.runs, failed=failed)

    @property
    def failed(self) -> bool:
        return self.status == "failed"


def _badge(status: RunStatus) -> str:
    return f"{SIGNS[status]} {STATUS_WORDS[status]}"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table_head(headers: Sequence[str]) -> list[str]:
    return [_row(headers), _row(["---"] * len(headers))]


def verdict_section(view: GateView, title: str) -> Section:
    """The verdict, why, and a run that stopped early."""
    status = "" if view.exit_status is None else f" (exit status {view.exit_status})"
    head = [f"## {title}: {_badge(view.status)}{status}", ""]
    why = [f"{run.label}: {view.redact(reason)}" for run in view.runs
           if (reason := status_reason(run))]
    if view.invalid:
        why.insert(0, f"{view.invalid} invalid goldset line{'s' * (view.invalid != 1)}: "
                   "collection refused the goldset")
    if view.failed and not why:
        why.append("the pytest run failed outside the goldsets")
    if neither := run_why(view.runs, view.status):  # NOTHING RAN, PARTIAL, FLOOR NOT DECIDED
        why.append(view.redact(neither))
    head += [f"- {md_inline(line)}" for line in why] + ([""] if why else [])
    if view.incomplete is not None:
        head += [f"**{md_inline(view.redact(incomplete_notice(view.incomplete)))}.**", ""]
    return Section(priority=0, head=head)


def run_section(view: GateView, run: GoldsetRun) -> Section:
    return Section(priority=1, head=[f"### {md_inline(run.label)} {_badge(run.status)}", "",
                                     md_inline(view.redact(coverage_line(run))) + ".", ""])


FLOOR_HEADERS = ["floor", "bound", "value", "95% interval", "n", "outcome"]


def floor_cells(v: Verdict) -> list[str]:
    return [md_code(v.floor.name), bound(v.floor), shown(v),
            fmt_interval(v.interval, figure_digits(v.floor.metric)), fmt_n(v.tally),
            OUTCOME_WORDS[v.outcome]]


def floor_sections(run: GoldsetRun) -> list[Section]:
    """Its failing floors (always kept first), then the others (cut first)."""
    failing = [v for v in run.verdicts if v.outcome in FAILING]
    others = [v for v in run.verdicts if v.outcome not in FAILING]
    found = []
    if failing:
        found.append(Section(priority=2, head=["Failing floors:", "",
                                               *_table_head(FLOOR_HEADERS)],
                             rows=[_row(floor_cells(v)) for v in failing], tail=[""],
                             what="failing floors"))
    if others:
        found.append(Section(priority=6, head=["Other floors:" if failing else "Floors:", "",
                                               *_table_head(FLOOR_HEADERS)],
                             rows=[_row(floor_cells(v)) for v in others], tail=[""],
                             what="floors"))
    return found


def baseline_sections(view: GateView, run: GoldsetRun) -> list[Section]:
    """What changed since the baseline (its regression checks, failed first) and since the
    last run in the history."""
    found = []
    if run.regressions:
        checks = sorted(run.regressions, key=lambda c: c.outcome != "failed")
        found.append(Section(priority=3, head=[
            "Against the baseline:", "", *_table_head(["metric", "baseline", "now", "change",
                                                       "p", "outcome"])],
            rows=[_row([c.metric, fmt_num(c.baseline), fmt_num(c.current),
                        "—" if c.delta is None else f"{c.delta:+.2f}",
                        "—" if c.p_value is None else f"{c.p_value:.3g}",
                        OUTCOME_WORDS[c.outcome]]) for c in checks], tail=[""],
            what="regression checks"))
    since = view.deltas.get(run.route or run.name) or view.deltas.get(run.name)
    if since:
        found.append(Section(priority=5, head=["Since the last run:", ""],
                             rows=[f"- {md_inline(view.redact(line))}" for line in since],
                             tail=[""], what="changes"))
    return found


WORST_HEADERS = ["question", "floor", "what went wrong", "answer", "tags", "line"]


def worst_section(view: GateView, run: GoldsetRun) -> Section | None:
    """Each failing floor's worst questions, with the answer, the tags and the goldset line."""
    where = view.where.get(run.route) or Where(None)
    records: dict[int, QuestionRecord] = {}
    for r in run.records:
        records.setdefault(r.index, r)
    rows = []
    for verdict, named in view.worst(run):
        for index, words in named:
            record, member = records.get(index), where.by_index(index)
            qid = member.question_id if member else str(index)
            line = f"{where.questions_file}:{member.line}" if member and member.line else ""
            rows.append(_row([md_code(qid), md_code(verdict.floor.name),
                              md_inline(view.redact(words)),
                              md_cut(view.redact(answer_of(record))) if record else "",
                              md_inline(tags_text(record.tags)) if record else "",
                              md_code(line) if line else ""]))
    if not rows:
        return None
    return Section(priority=4, head=["Worst questions of the failing floors:", "",
                                     *_table_head(WORST_HEADERS)],
                   rows=rows, tail=[""], what="questions")


def answer_of(record: QuestionRecord) -> str:
    if record.abstained:
        return "(abstained)"
    if record.status != "scored":
        return f"({record.status}) {record.error or ''}"
    return record.answer_text or ""


def findings_section(view: GateView) -> Section | None:
    """The goldset lines to look at beyond the worst questions: invalid lines, questions and
    anchors without a result, judge failures."""
    rows = [f"- {'⚠️' if f.level == 'warning' else '❌'} "
            + md_code(f.path + (f":{f.line}" if f.line else ""))
            + f" {md_inline(view.redact(f.title))}: "
            + md_cut(view.redact(f.message.replace("\n", " · ")), 300)
            for f in view.findings if f.check != "floor-failed"]
    if not rows:
        return None
    return Section(priority=4, head=["### Goldset lines to look at", ""], rows=rows,
                   tail=[""], what="lines")


def tag_section(view: GateView, run: GoldsetRun) -> Section | None:
    rows = tag_rows(run.records, run.metrics)
    if not rows:
        return None
    return Section(priority=7, head=[f"By tag ({md_inline(run.label)}; information, a slice "
                                     "floor decides its own):", "",
                                     *_table_head(["tag", "metric", "value", "95% interval",
                                                   "n"])],
                   rows=[_row([md_inline(row[0]), *row[1:]]) for row in rows], tail=[""],
                   what="tag figures")


def files_section(view: GateView) -> Section | None:
    """The files this run wrote, named: keep them as the job's artifacts."""
    if not view.written:
        return None
    named = ", ".join(f"{md_code(path)} ({name})" for name, path in view.written.items())
    return Section(priority=1, head=[f"Files this run wrote (the full report; keep them as "
                                     f"the job's artifacts): {named}.", ""])


def sections(view: GateView, title: str) -> list[Section]:
    """Every section of a summary or a comment, in display order."""
    found = [verdict_section(view, title)]
    if view.shard is not None:
        found.append(Section(priority=1, head=[
            f"Shard {view.shard}: floors are not decided in a shard; `ragate decide` decides "
            "them over every shard's results.", ""]))
    for run in view.runs:
        found.append(run_section(view, run))
        found += floor_sections(run)
        found += baseline_sections(view, run)
        found += [s for s in (worst_section(view, run), tag_section(view, run)) if s]
    found += [s for s in (findings_section(view), files_section(view)) if s]
    return found


def job_summary(view: GateView, *, limit: int = SUMMARY_LIMIT) -> str:
    """The job summary's Markdown, at most `limit` bytes (what is left of the step's 1 MiB)."""
    return fit(sections(view, "ragate"), limit, why=SUMMARY_WHY, measure=utf8_bytes)


def comment_body(view: GateView, *, limit: int = COMMENT_LIMIT) -> str:
    """One pull-request comment's Markdown, marked, at most `limit` characters."""
    marker = Section(priority=0, head=[MARKER])
    footer = Section(priority=0, head=["<sub>pytest-ragate: updated on every push</sub>"])
    return fit([marker, *sections(view, "ragate gate"), footer], limit, why=COMMENT_WHY)


def append_summary(path: Path, view: GateView) -> int:
    """Append the job summary to `path` (`$GITHUB_STEP_SUMMARY`: GitHub documents appending),
    within what is left of the step's 1 MiB; the bytes written."""
    used = path.stat().st_size if path.is_file() else 0
    room = SUMMARY_LIMIT - used
    if room <= 1024:
        return 0
    text = job_summary(view, limit=room)
    data = text.encode("utf-8")
    with path.open("ab") as handle:
        handle.write(data)
    return len(data)


def write_comment(path: Path, view: GateView) -> None:
    write_atomic(path, comment_body(view))
