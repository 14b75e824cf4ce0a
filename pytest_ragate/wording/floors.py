"""What a floor's verdict says: why a floor is not decided (a gap, no judge, nothing that ran
or scored, an unmeasured bill, an unsure answer no label settled, a ppi its labels cannot
correct) and its figures against it. The decision (`decision/floors.py`) computes and rules;
these functions write what it found, so a message's wording changes here, in one edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_ragate.scoring import intervals
from pytest_ragate.scoring.ppi import MIN_LABELS, Ppi
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import METRICS, Tally, figure_digits, fmt_figure
from pytest_ragate.wording.causes import judge_failed, without_member
from pytest_ragate.wording.numbers import NAMED, bound, clusters_of, fmt_interval, plural
from pytest_ragate.wording.slices import slice_name

if TYPE_CHECKING:
    from pytest_ragate.decision.floors import Call, Gap, Missing, Unjudged
    from pytest_ragate.scoring.figures import Counted, Figures
    from pytest_ragate.scoring.floor import Floor


OUTCOME_WORDS = {"passed": "PASS", "failed": "FAIL", "xfailed": "XFAIL",
                 "xpassed": "XPASS(strict)", "skipped": "SKIP"}
"""A floor's, a check's or an anchor's outcome, as every report and CI view shows it."""

ANCHORS_ELSEWHERE = ("not decided here: anchors are checked where the goldset's ragate.toml is "
                     "collected (pytest <its folder>), not in a @ragate.goldset test")


# --- a floor without its figure -------------------------------------------------------------


def needs_judge(metric: str, unjudged: Unjudged) -> str:
    """A judged floor of a run with no judge configured (`decision.floors.Unjudged`)."""
    head = f"{metric} needs a judge: none configured (--ragate-judge)"
    if unjudged == "skip":
        return (f"{head}; skipped: its metric is named optional ([judge] optional in "
                "ragate.toml, or ragate_judge_optional)")
    if unjudged == "required":
        return (f"{head}: not decided, though named optional, as --ragate-require-judge is "
                "set")
    which = metric if METRICS[metric].asked else "the goldset's judged metrics"
    return (f"{head}: a judged floor is not decided without one; give --ragate-judge (or "
            "ragate_judge in the ini file), deselect judged floors (-m \"not slow\"), or name "
            f"{which} optional ([judge] optional in ragate.toml, or ragate_judge_optional) "
            "to skip their floors without a judge")


def not_judged_metrics(where: str, names: Sequence[str]) -> str:
    """Names given as optional judged metrics that are none, with the judged metric each
    misspelled one may have meant."""
    judged = ", ".join(m for m, info in METRICS.items() if info.judged)
    meant = [f"{name}: did you mean {' or '.join(close)}?" for name in names
             if (close := [m for m in METRICS.close_to(name) if METRICS[m].judged])]
    return (f"{where}: {', '.join(names)}: not a judged metric (judged metrics: {judged})"
            + "".join(f"; {line}" for line in meant)
            + "; name the metrics whose floors a run without a judge may skip")


def named(gaps: Sequence[Gap], detail: bool = True) -> str:
    """`errored q00, q01, q02 and 37 more (MissingSystem: no ragate_system in scope); lost q07
    (its worker went down)`: members grouped by what happened to them and why, each cause
    said once, with the first NAMED of its members and how many more (one misspelt fixture
    over 40 questions is one cause, not 40 errors repeated in every floor's message); at
    most NAMED causes, the members of the others counted."""
    groups: dict[tuple[str, str], list[Gap]] = {}
    for gap in gaps:
        groups.setdefault((gap.kind, cause(gap) if detail else ""), []).append(gap)
    shown = []
    for (kind, _), members in list(groups.items())[:NAMED]:
        why = (cause(members[0]) if len(members) > 1 else members[0].why) if detail else ""
        shown.append(f"{kind + ' ' if detail else ''}"
                     f"{fmt_some([g.member for g in members], NAMED)}"
                     + (f" ({why})" if why else ""))
    more = sum(len(members) for members in list(groups.values())[NAMED:])
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def cause(gap: Gap) -> str:
    """Why a member has no result, without its own name (`MissingSystem: q07: no
    ragate_system in scope` is `MissingSystem: no ragate_system in scope`): what members
    that failed for one reason share."""
    return without_member(gap.why, gap.member)


def said_at(floor_name: str) -> str:
    """A gap's long cause, said in full by an earlier floor: where to read it."""
    return f"said at {floor_name}"


def incomplete(missing: Missing, partial: str) -> str:
    """Why a floor whose population is not whole is not decided (`decision.floors.missing_of`),
    with `partial`, the figure over the members that have a result, when it has one."""
    tail = f" · {partial}" if partial else ""
    hard, population, unit = missing.hard, missing.population, missing.unit
    if hard and all(g.kind == "sealed" for g in hard):
        return (f"sealed: set RAGATE_SEAL_KEY to score {len(hard)} of {population} {unit} "
                "(their expected answers are sealed; for builds that cannot have the key, "
                f"ragate_sealed_without_key = \"skip\" skips this floor instead){tail}")
    if hard:
        return (f"not decided: {len(hard)} of {population} {unit} have no result: "
                f"{named(hard)} · a floor passes only when every member of its population "
                f"has a result{tail}")
    deselected = [g for g in missing.soft if g.kind == "deselected"]
    sealed = [g for g in missing.soft if g.kind == "sealed"]
    parts = []
    if deselected:
        parts.append(f"{len(deselected)} of {population} {unit} deselected (-k or -m): "
                     f"{named(deselected, detail=False)}")
    if sealed:
        parts.append(f"{len(sealed)} sealed and no RAGATE_SEAL_KEY "
                     "(ragate_sealed_without_key = \"skip\")")
    return (f"not decided: {'; '.join(parts)}; a floor is decided over its whole population: "
            "run all of it, or deselect the floor too")


def partial(floor: Floor, t: Tally, over: int) -> str:
    """A floor's figure over the `over` members with a result, beside why it is not decided:
    `evidence_recall 0.62 over the 18 with a result`; empty when there is none."""
    if floor.anchors:
        return f"{t.value:.2f} held over the {t.n} that ran" if t.n else ""
    return (f"{floor.metric} {fmt_figure(floor.metric, t.value)} over the {over} with a result"
            if t.value is not None else "")


def nothing_ran(metric: str, errors: Sequence[str | None]) -> str:
    """Every question of the floor was skipped: the first reason given, else that."""
    reason = next((e for e in errors if e), None) or "every question was skipped"
    return f"{metric}: nothing ran: {reason}"


def aside(floor: Floor, counted: Counted) -> str:
    """` (2 questions errored, counted as wrong; 1 skipped, not counted)` after a floor's
    figures: the rows its figure counts as wrong or leaves out, and why the judge failed, each
    cause once (`causes.judge_failed`); an anchor floor's kind."""
    if floor.anchors:
        return f" ({floor.kind} anchors)"
    notes = []
    if counted.errors:
        notes.append(f"{plural(counted.errors, 'question')} errored, counted as wrong")
    if counted.skipped:
        notes.append(f"{counted.skipped} skipped, not counted")
    if counted.failures:  # judge_coverage counts its failures as wrong: never here
        notes.append(f"{plural(counted.failures, 'judge failure')}, not counted")
    why = f" · {judge_failed(counted.failure_causes)}" if counted.failure_causes else ""
    return (f" ({'; '.join(notes)})" if notes else "") + why  # each cause once


def judge_unread(floor: Floor, delivered: int, asked: int, coverage: float,
                 unread: Sequence[str],
                 causes: Sequence[tuple[str, Sequence[str]]] = ()) -> str:
    """A judged floor whose judge failed on too many of its questions: not decided; why the
    judge failed, each cause once."""
    why = f" · {judge_failed(causes)}" if causes else ""
    missing = fmt_some(list(dict.fromkeys(unread)), 5)
    if floor.slice is not None:
        name = slice_name(*floor.slice)
        return (f"{name} {floor.metric}: not decided: the judge delivered {delivered} of "
                f"{asked} verdicts of {name} ({delivered / asked:.2f} < judge_coverage floor "
                f"{coverage:.2f}; none for {missing}): a slice is not decided on the verdicts "
                f"its judge could give{why}")
    scope = f" of {floor.kind} questions" if floor.kind else ""
    return (f"{floor.metric}: not decided: the judge delivered {delivered} of {asked} verdicts"
            f"{scope} ({delivered / asked:.2f} < judge_coverage floor {coverage:.2f}, xfail "
            f"or not; none for {missing}): a floor is not decided on the verdicts its judge "
            f"could give{why}")


def nothing_scored(floor: Floor, rows: int, counted: Counted) -> str:
    """A floor whose population ran and gave its metric nothing to count."""
    by = counted.computed_by
    if floor.anchors:
        return (f"nothing scored: no {floor.kind} anchor ran · floor {bound(floor)} · computed "
                f"by {by}")
    info = METRICS[floor.metric]
    unit = f"judged {info.unit}" if info.asked else info.unit
    scope = f"{floor.kind} questions" if floor.kind else "questions"
    return (f"nothing scored: {floor.metric} has no {unit} among {rows} {scope} · floor "
            f"{bound(floor)} · computed by {by}{aside(floor, counted)}")


# --- the bill ------------------------------------------------------------------------------


def unmeasured(floor: Floor, names: Sequence[str], rows: int, counted: Counted) -> str:
    """A bill floor with scored questions that carry no figure of it: named, and why that
    fails rather than shrinks n."""
    what = ("reported no cost (Answer.usage.cost; or the judge is priced and its API "
            "reported no tokens)" if floor.metric == "cost_per_question"
            else "have no measured latency (a row from before ragate measured it)")
    return (f"not decided: {len(names)} of {rows} answered questions {what}: "
            f"{fmt_some(list(names), NAMED)} · a bill floor counts every answer, an unknown "
            f"figure never passes it · floor {bound(floor)} · computed by "
            f"{counted.computed_by}{aside(floor, counted)}")


def unsure_unlabelled(floor: Floor, names: Sequence[str], t: Tally, counted: Counted) -> str:
    """An answer_match floor with unsure answers no label settled: named, with how to
    settle them; the figure over the decided answers beside it."""
    over = (f"{floor.metric} {fmt_figure(floor.metric, t.value)} over the {t.n} decided, "
            if t.value is not None else "")
    return (f"not decided: {over}{plural(len(names), 'unsure answer')} not labelled: "
            f"{fmt_some(list(names), NAMED)} · review each and label it in the labels file "
            f"([judge] labels = \"labels.jsonl\": {{\"question_id\", \"metric\": "
            f"\"answer_match\", \"verdict\": 0 or 1}}, then `ragate stamp --labels`), or count "
            f"them wrong with [answers] unsure = \"wrong\" · floor {bound(floor)} · computed by "
            f"{counted.computed_by}{aside(floor, counted)}")


def metric_failed(floor: Floor, causes: Sequence[tuple[str, Sequence[str]]], t: Tally,
                  counted: Counted) -> str:
    """A floor over a metric the project defines that failed on some questions (raised,
    returned another type or a value outside [0, 1]): not decided, each cause once with the
    questions it failed on; the figure over the others beside it."""
    failed = sum(len(names) for _, names in causes)
    over = (f"{floor.metric} {fmt_figure(floor.metric, t.value)} over the other {t.n}, "
            if t.value is not None else "")
    said = "; ".join(f"{why} ({fmt_some(list(names), NAMED)})" for why, names in causes)
    return (f"not decided: {over}metric {floor.metric} failed on "
            f"{plural(failed, 'question')}: {said} · fix the metric function · floor "
            f"{bound(floor)} · computed by {counted.computed_by}{aside(floor, counted)}")


def unsuggested(failed: int) -> str:
    """Why `ragate suggest` suggests no floor on a metric the project defines."""
    return (f"metric failed on {plural(failed, 'question')}, so a floor on it would not be "
            "decided: fix the metric function and run again")


def too_few_for_bound(floor: Floor, t: Tally, needs: int, counted: Counted) -> str:
    """A quantile floor over too few answers for a 95% upper bound of it."""
    point = "—" if t.value is None else fmt_figure(floor.metric, t.value)
    return (f"not decided: {floor.metric} {point} (point) over n={t.n} answered questions, "
            f"too few for a 95% upper bound of the quantile (order statistics, Conover): "
            f"it needs at least {needs} · floor {bound(floor)} · computed by "
            f"{counted.computed_by}{aside(floor, counted)}")


# --- the prediction-powered estimate --------------------------------------------------------


def ppi_unverdicted(missing: Sequence[str], why: Mapping[str, str]) -> str:
    """Labelled questions the judge gave no verdict (`why` says what happened to each)."""
    shown = "; ".join(f"{q} ({why[q]})" for q in missing[:NAMED])
    return f"needs a verdict for every labelled question: none for {shown}"


def ppi_too_few(labelled: int, judged: int) -> str:
    return (f"needs at least {MIN_LABELS} labelled questions with a verdict here, has "
            f"{labelled} labelled of {judged} judged (its interval's variance is estimated "
            f"from the labels: below {MIN_LABELS} a 95% interval would cover the truth less "
            "than 92% of the time)")


def no_ppi(floor: Floor, why: str, t: Tally, counted: Counted) -> str:
    """A ppi floor (`[judge] estimate = "ppi"`) its labels cannot correct: `why` not."""
    return (f"not decided: the ppi estimate ([judge] estimate = \"ppi\") {why} · "
            f"{floor.metric} {t.value or 0:.2f} as judged · floor {bound(floor)} · computed by "
            f"{counted.computed_by}{aside(floor, counted)}")


def _no_spread(ppi: Ppi) -> str:
    """What a ppi interval says of a variance that came out 0 (`ppi.spread`)."""
    if not ppi.bounded:
        return ""
    which = {"judged": f"the {ppi.n_all} judge scores", "labelled": f"the {ppi.n_labelled} "
             "labelled errors (judge − human)"}
    return (f" · no spread in {' nor in '.join(which[b] for b in ppi.bounded)}: variance "
            "bounded by the rule of three (95%), not taken as 0")


# --- a floor's figures against it -----------------------------------------------------------


def _count(floor: Floor, figures: Figures) -> str:
    """`n=20 questions`, `over 18/20 judged`, `n=84 answers of 28 questions × 3`: what the
    figure is over; with ppi, the labels that corrected it."""
    t, info = figures.tally, METRICS[floor.metric]
    unit = "anchors" if floor.anchors else info.unit
    if t.clusters and unit == "questions" and t.repeats > 1:
        unit = "answers"  # a question asked 3 times is 3 units of its metric
    count = (f"over {t.n}/{t.n + t.failures} judged" if info.judged and info.aggregate == "mean"
             else f"n={t.n} {unit}")
    if t.clusters:
        count += clusters_of(t)
    elif t.repeats > 1:
        count += f" × {t.repeats} repeats"
    if figures.ppi is not None:
        ppi = figures.ppi
        count += (f", {ppi.n_labelled} labelled · ppi: judge {ppi.judge_mean:.2f} − bias "
                  f"{ppi.bias:+.2f} on the labelled" + _no_spread(ppi))
    return count


def _method(floor: Floor, figures: Figures) -> str:
    """How the interval was computed: `Wilson`, `bootstrap, questions as clusters`, `ppi, …`."""
    if figures.ppi is not None:
        return "ppi, normal approximation"
    if METRICS[floor.metric].aggregate == "quantile":
        return "order statistics, one-sided bounds"
    return intervals.method(figures.tally)


def _against(floor: Floor, figures: Figures, holds: bool, strict: bool, tail: str) -> str:
    """`citation_accuracy 0.62 < floor 0.80 · …`, or strictly its interval's bound."""
    sign = ("≤" if holds else ">") if floor.upper else ("≥" if holds else "<")
    shown = fmt_figure(floor.metric, figures.value)
    value = f"{floor.metric} {shown}{' (ppi)' if figures.ppi is not None else ''}"
    interval, digits = figures.interval, figure_digits(floor.metric)
    bound = f"{floor.min:.{digits}f}"
    if strict and interval is not None:
        end = (f"upper bound {interval[1]:.{digits}f}" if floor.upper
               else f"lower bound {interval[0]:.{digits}f}")
        why = ("a quantile is decided on its bound" if METRICS[floor.metric].decided_on_bound
               else "ragate_ci = strict")
        return f"{value}, 95% {end} {sign} floor {bound} ({why}) · {tail}"
    return f"{value} {sign} floor {bound} · {tail}"


def against_floor(floor: Floor, figures: Figures, call: Call, *, min_n: int, strict: bool,
                  counted: Counted, worst: str = "") -> str:
    """A decided floor's message: its figures against the floor with n, the interval and
    who computed them; a refusal under `ragate_min_n`; a strict xfail's reason; `worst`,
    the questions behind a failure."""
    ci = "95% bounds" if METRICS[floor.metric].decided_on_bound else "95% CI"
    tail = (f"{_count(floor, figures)} · {ci} "
            f"{fmt_interval(figures.interval, figure_digits(floor.metric))} "
            f"({_method(floor, figures)}) · computed by {counted.computed_by}"
            f"{aside(floor, counted)}")
    if call == "refused":
        who = "anchors" if floor.anchors else "questions"
        return (f"refusing to gate: {floor.metric} {fmt_figure(floor.metric, figures.value)} "
                f"was scored on "
                f"{figures.tally.questions} {who}, fewer than ragate_min_n = {min_n} (add "
                f"questions, or lower ragate_min_n) · floor {bound(floor)} · {tail}")
    text = _against(floor, figures, call == "holds", strict, tail)
    if floor.xfail and call == "holds":
        return (f"[XPASS(strict)] {floor.xfail}: {text}. The floor now holds: remove its "
                "xfail (pytest --ragate-promote) to make it a hard gate")
    if floor.xfail:
        return f"{floor.xfail}: {text}"
    return text + (f" · worst: {worst}" if worst else "")
