"""What a goldset run's lines say (`decision/goldset_run.GoldsetRun`): its badge (PASS, FAIL,
NOTHING RAN, PARTIAL, FLOOR NOT DECIDED) and why it is not PASS, how many of its questions
have a result and why the others have none, which system, retriever and judge answered, the
judge's figures, the context pool, its flaky questions, and its answer_match counts with the
unsure answers no label settled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ragate.scoring.answer_match import unsettled
from pytest_ragate.scoring.figures import judge_failure_causes
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import flaky_questions
from pytest_ragate.wording.agreement import agreement_line
from pytest_ragate.wording.causes import judge_failed
from pytest_ragate.wording.numbers import NAMED, NAMED_UNDECIDED
from pytest_ragate.wording.sequential import sequential_part

if TYPE_CHECKING:
    from pytest_ragate.decision.goldset_run import GoldsetRun, RunStatus
    from pytest_ragate.scoring.records import QuestionRecord

STATUS_WORDS: dict[RunStatus, str] = {"passed": "PASS", "failed": "FAIL",
                                      "nothing_ran": "NOTHING RAN", "partial": "PARTIAL",
                                      "not_decided": "FLOOR NOT DECIDED"}
"""A run's or a goldset run's badge (`decision/goldset_run.GoldsetRun.status`)."""
FAILED_NOTE = "the pytest run exits non-zero"  # beside a whole run's FAIL badge
NOTHING_SELECTED = "no goldset question or anchor ran (none selected, or every one deselected)"


def status_why(run: GoldsetRun) -> str:
    """Why a goldset run is neither PASS nor FAIL (`20 of 40 questions deselected (-k or -m)`,
    or --lf)`, the floors not decided); empty when it is either."""
    status = run.status
    if status in ("passed", "failed"):
        return ""
    deselected = _deselected(run)
    if status == "nothing_ran":
        return deselected or "no question was asked and no anchor checked"
    if status == "partial":
        return deselected
    skipped = [v.floor.name for v in run.verdicts if v.outcome == "skipped"]
    return fmt_some(skipped, NAMED_UNDECIDED)


def _deselected(run: GoldsetRun) -> str:
    """`20 of 40 questions deselected (-k or -m)`, with anchors when some were."""
    questions = sum(g.kind == "deselected" for g in run.gaps)
    anchors = sum(g.kind == "deselected" for g in run.anchor_gaps)
    total = run.population if run.population is not None else len(run.records) + questions
    unit = "answers" if run.repeats > 1 else "questions"
    said = [f"{questions} of {total} {unit}"] if questions else []
    if anchors:
        said.append(f"{anchors} of {len(run.anchors) + len(run.anchor_gaps)} anchors")
    return f"{' and '.join(said)} deselected (-k or -m)" if said else ""


def run_why(runs: Sequence[GoldsetRun], status: RunStatus) -> str:
    """Why the whole run (of `status`) is neither PASS nor FAIL, goldset by goldset (`mini:
    20 of 40 questions deselected (-k or -m)`); empty when it is either."""
    if status in ("passed", "failed"):
        return ""
    if not runs:
        return NOTHING_SELECTED
    return "; ".join(f"{run.label}: {status_why(run) if run.status == status else badge_of(run)}"
                     for run in runs if run.status not in ("passed", "failed"))


def badge_of(run: GoldsetRun) -> str:
    """`PARTIAL: 20 of 40 questions deselected (-k or -m)`, or `PASS`."""
    return status_badge(run.status, status_why(run))


def status_badge(status: RunStatus, why: str) -> str:
    """A badge and why it is neither PASS nor FAIL, in one line."""
    return f"{STATUS_WORDS[status]}: {why}" if why else STATUS_WORDS[status]


@dataclass(frozen=True, kw_only=True)
class RunLines:
    """What a goldset run's lines say, once for the terminal, the Markdown and the HTML."""

    status_reason: str  # why its badge says FAIL; empty when it says PASS
    coverage: str
    parts: list[str]  # which system, retriever and judge answered
    pool: str
    judge: list[str]
    flaky: list[str]
    answers: list[str]  # answer_match's counts and its unsure answers no label settled
    moved: list[str]  # questions whose pinned evidence was scored where its text is now


def lines_of(run: GoldsetRun) -> RunLines:
    return RunLines(status_reason=status_reason(run), coverage=coverage_line(run),
                    parts=run_parts(run), pool=pool_line(run), judge=judge_lines(run),
                    flaky=flaky_lines(run), answers=answer_lines(run.records, run.named),
                    moved=[f"{run.named(r)}: {note}" for r in run.records
                           for note in r.evidence_moved or ()])


def status_reason(run: GoldsetRun) -> str:
    """Why the badge says FAIL, in one line; empty when it says PASS."""
    why = []
    failed = sum(v.outcome == "failed" for v in run.verdicts)
    if failed:
        why.append(f"{failed} floor{'s' * (failed != 1)} failed")
    if any(v.outcome == "xpassed" for v in run.verdicts):
        why.append("a strict xfail floor passed")
    regressions = sum(g.outcome == "failed" for g in run.regressions)
    if regressions:
        why.append(f"{regressions} significant regression{'s' * (regressions != 1)}")
    if run.hard_gaps:
        why.append(f"{len(run.hard_gaps)} without a result")
    if run.failed_items:
        n = len(run.failed_items)
        why.append(f"{n} item{'s' * (n != 1)} failed")
    if not why and run.run_failed:
        why.append("the run failed elsewhere")
    return ", ".join(why) if run.status == "failed" else ""


def coverage_line(run: GoldsetRun) -> str:
    """`22 questions: 19 scored, 1 errored, 1 crashed, 1 never ran (q09)`; sealed questions
    say when RAGATE_SEAL_KEY was set but empty (`4 sealed (q1, …; RAGATE_SEAL_KEY is set but
    empty)`)."""
    total = run.population if run.population is not None else len(run.records)
    scored = sum(r.status == "scored" for r in run.records)
    parts = [f"{scored} scored"]
    for kind, named in run.gap_groups:
        empty = "; RAGATE_SEAL_KEY is set but empty" if kind == "sealed" and run.seal_key_empty \
            else ""
        parts.append(f"{len(named)} {kind} ({fmt_some(named, NAMED)}{empty})")
    if run.sequential is not None:
        s = run.sequential
        skipped = sum(r.not_needed for r in run.records)
        parts.append(sequential_part(skipped=skipped, asked=s.asked, seed=s.seed,
                                     alpha=s.alpha, stopped=s.stopped, why=s.why,
                                     drifts=s.drifts, gaps=s.gaps))
    if run.repeats > 1:
        return (f"{total // run.repeats} questions × {run.repeats} repeats = {total} "
                f"answers: {', '.join(parts)}")
    return f"{total} questions: {', '.join(parts)}"


def flaky_lines(run: GoldsetRun) -> list[str]:
    """With repeats: how many questions came out differently between repeats, and which
    (`q07 right 2 of 3`); nothing when each question was asked once."""
    if run.repeats < 2:
        return []
    flaky = flaky_questions(run.records)
    asked = len({r.question_id for r in run.records if r.status != "skipped"})
    head = (f"flaky: {len(flaky)} of {asked} questions right in some repeats and wrong in "
            f"others (over {run.repeats} repeats)")
    return [head + (f": {fmt_some(flaky, NAMED)}" if flaky else "")]


def answer_lines(records: Sequence[QuestionRecord], name: Callable[[QuestionRecord], str],
                 limit: int = 10) -> list[str]:
    """What the terminal and the reports say of a run's answer_match: its counts, and each
    unsure answer no label settled, for review (named by `name`: `q07`, `q07[r2]`)."""
    checks = [r.answer_check for r in records
              if r.status == "scored" and r.answer_check is not None]
    if not checks:
        return []
    outcomes = [c.outcome for c in checks]
    labelled = sum(c.settled == "label" for c in checks)
    waiting = unsettled(records)
    head = (f"answer_match over {len(checks)} answers with facts: "
            f"{outcomes.count('right')} right, {outcomes.count('wrong')} wrong, "
            f"{outcomes.count('unsure')} unsure" + (f", {labelled} settled by a person's label"
                                                    if labelled else ""))
    notes = label_notes(records)
    if not waiting:
        return [head, *notes]
    shown = "; ".join(f"{name(r)} ({r.answer_check.why})" for r in waiting[:limit]
                      if r.answer_check is not None)
    more = f"; and {len(waiting) - limit} more" if len(waiting) > limit else ""
    return [head, *notes, f"unsure, not labelled ({len(waiting)}: review each and label it in "
            f"the goldset's labels file, then `ragate stamp --labels`): {shown}{more}"]


_LABEL_NOTES = {
    "predates": ("predate{s} expected-answer digests: run `ragate stamp --labels` to bind "
                 "{them}"),
    "stale_expected": ("{was} judged against another expected answer (its gist, facts or "
                       "forbid changed since): not applied, the answer is held to the new one "
                       "(unsure again where it is unsure); review it, label it anew and run "
                       "`ragate stamp --labels`"),
    "stale_answer": ("{was} written for another answer: this answer is unsure again; review "
                     "it, label it and run `ragate stamp --labels`"),
    "predates_keyed": ("predate{s} keyed digests (a sealed goldset's labels are bound by "
                       "HMAC under its seal key, never by a plain sha256 anyone can check a "
                       "guess against): not applied; label {them} again and run `ragate stamp "
                       "--labels` with a results file of a run made with RAGATE_SEAL_KEY set"),
}


def label_notes(records: Sequence[QuestionRecord]) -> list[str]:
    """Each answer_match label not applied as written, once per question (whatever its
    repeats): `label for q7 predates expected-answer digests: run `ragate stamp --labels` to bind
    it`, or stale, judged against another expected answer or written for another answer."""
    by_note: dict[str, list[str]] = {}
    for r in records:
        note = r.answer_check.label_note if r.answer_check is not None else None
        if note is not None and r.question_id not in by_note.setdefault(note, []):
            by_note[note].append(r.question_id)
    return label_note_lines(by_note)


def label_note_lines(by_note: dict[str, list[str]]) -> list[str]:
    """One line per kind of label note (`LabelNote`), naming its questions."""
    lines = []
    for note, text in _LABEL_NOTES.items():
        if ids := by_note.get(note):
            many = len(ids) > 1
            lines.append(f"label{'s' if many else ''} for {', '.join(ids)} " + text.format(
                s="" if many else "s", them="them" if many else "it",
                was="were" if many else "was"))
    return lines


def run_parts(run: GoldsetRun) -> list[str]:
    """Which system, retriever and judge answered, as the rows record them."""
    def seen(values: list[str | None]) -> str:
        found = sorted({v for v in values if v})
        return "; ".join(found) if found else "—"

    judges = sorted({f"{r.judge} from {r.judge_from or '?'}" for r in run.records if r.judge})
    judge = ("; ".join(judges) if judges else
             f"{run.judge}, reached by no question" if run.judge else "none")
    return [f"system: {seen([r.system for r in run.records])}",
            f"retriever: {seen([r.retriever for r in run.records])}",
            f"judge: {judge}"]


def judge_lines(run: GoldsetRun) -> list[str]:
    """Who judged, how often it failed or was served from the cache, and whether it shares
    weights with the answerer."""
    judges = sorted({r.judge for r in run.records if r.judge})
    if not judges:
        return []
    failures = sum(len(r.judge_failures) for r in run.records)
    attempted = sum(len(r.judge_attempted) for r in run.records)
    cached = sum(len(r.judge_cached) for r in run.records)
    vacuous = sum(len(r.judge_vacuous) for r in run.records)
    lines = [f"judge {', '.join(judges)}: {attempted - failures}/{attempted} verdicts, "
             f"judge failures {failures}, vacuous {vacuous}, cache hits {cached}"]
    if failures:
        lines.append(judge_failed(judge_failure_causes(run.records)))
    shared = sorted({r.judge_model for r in run.records
                     if r.judge_model and r.judge_model == r.answerer_model})
    if shared:
        lines.append(f"warning: judge and answerer share weights ({', '.join(shared)}): "
                     "judged figures may favour the answerer")
    lines += [f"judge agreement with the labels, {agreement_line(a)}" for a in run.agreements]
    ppi = sorted({v.floor.metric for v in run.verdicts if v.estimate == "ppi"})
    if ppi:
        lines.append(f"judged floors decided on the ppi estimate (judge mean corrected by "
                     f"the labels): {', '.join(ppi)}")
    return lines


def pool_line(run: GoldsetRun) -> str:
    """How many contexts the answers came with: evidence recall over a pool of 50 is not
    recall over a pool of 5."""
    sizes = sorted(r.contexts for r in run.records if r.status == "scored")
    if not sizes:
        return "contexts per answer: —"
    middle = sizes[len(sizes) // 2] if len(sizes) % 2 else (
        sizes[len(sizes) // 2 - 1] + sizes[len(sizes) // 2]) / 2
    return (f"contexts per answer (the pool evidence recall is measured in): median "
            f"{middle:g}, min {sizes[0]}, max {sizes[-1]}")


def index_rekeyed(folder: str, moved: int) -> str:
    """The one line said when a judge cache's index, written when its keys named the judge in
    full (a key in a model's name included), was re-keyed by the judge's identity."""
    entries = f"{moved} index {'entry' if moved == 1 else 'entries'}"
    return (f"ragate: judge cache {folder}: {entries} re-keyed by the judge's redacted identity "
            "(their keys named the judge in full, a credential in its name included)")
