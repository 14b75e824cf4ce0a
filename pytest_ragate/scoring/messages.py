"""Every sentence a floor's verdict and a baseline check say, written here and only here.

The decision computes figures (`gates.figures_of`, `agreement.agree`, `regression.pair`) and
applies the rule (`gates.call_of`, `gates.missing_of`, `agreement.shortfall`,
`regression.call_of`); these functions turn what it found into the message a test case, the
terminal, the reports and the results file show. A message's wording changes here, in one
edit, and a decision function never formats text of its own.

Pure: values in, text out. The result types are imported for their names only: the modules
that define them import this one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_ragate.redaction import redact_credentials
from pytest_ragate.scoring import intervals
from pytest_ragate.scoring.ppi import MIN_LABELS, Ppi
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import METRICS, Tally, figure_digits, fmt_figure
from pytest_ragate.scoring.stats import MCNEMAR

if TYPE_CHECKING:
    from pytest_ragate.scoring.agreement import Agreement, Shortfall
    from pytest_ragate.scoring.gates import Call, Counted, Figures, Floor, Gap, Missing
    from pytest_ragate.scoring.regression import (
        BaselineRun,
        Compared,
        JudgeChange,
        NotCompared,
        Paired,
        RegressionCall,
    )
    from pytest_ragate.scoring.sign_flip import FloorDrift
    from pytest_ragate.scoring.slices import Correction, SliceFigure

NAMED = 10  # members a message names before it says "and N more"
NAMED_WORSE = 10  # questions a failed baseline check names
NAMED_MISSING = 5  # labelled questions without a verdict an agreement line names


def fmt_interval(interval: tuple[float, float] | None, digits: int = 2) -> str:
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]" if interval else "—"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


# --- a floor without its figure -------------------------------------------------------------


def needs_judge(metric: str, require_judge: bool) -> str:
    """A judged floor of a run with no judge configured."""
    return (f"{metric} needs a judge: none configured (--ragate-judge); judged floors are "
            "skipped" + (" and --ragate-require-judge is set" if require_judge else ""))


def named(gaps: Sequence[Gap], detail: bool = True) -> str:
    """`lost q00, q01 (its worker went down); crashed q07 (…)`: members grouped by what
    happened to them, at most NAMED named."""
    groups: dict[tuple[str, str], list[str]] = {}
    for gap in gaps[:NAMED]:
        groups.setdefault((gap.kind, gap.why if detail else ""), []).append(gap.member)
    shown = [f"{kind + ' ' if detail else ''}{', '.join(members)}" + (f" ({why})" if why else "")
             for (kind, why), members in groups.items()]
    more = len(gaps) - NAMED  # the groups are named whole; the members past NAMED counted
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def incomplete(missing: Missing, partial: str) -> str:
    """Why a floor whose population is not whole is not decided (`gates.missing_of`), with
    `partial`, the figure over the members that have a result, when it has one."""
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
        parts.append(f"{len(deselected)} of {population} {unit} deselected (-k, -m or --lf): "
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
    figures: the rows its figure counts as wrong or leaves out; an anchor floor's kind."""
    if floor.anchors:
        return f" ({floor.kind} anchors)"
    notes = []
    if counted.errors:
        notes.append(f"{_plural(counted.errors, 'question')} errored, counted as wrong")
    if counted.skipped:
        notes.append(f"{counted.skipped} skipped, not counted")
    if counted.failures:  # judge_coverage counts its failures as wrong: never here
        notes.append(f"{_plural(counted.failures, 'judge failure')}, not counted")
    return f" ({'; '.join(notes)})" if notes else ""


def nothing_scored(floor: Floor, rows: int, counted: Counted) -> str:
    """A floor whose population ran and gave its metric nothing to count."""
    by = counted.computed_by
    if floor.anchors:
        return (f"nothing scored: no {floor.kind} anchor ran · floor {floor.bound} · computed "
                f"by {by}")
    info = METRICS[floor.metric]
    unit = f"judged {info.unit}" if info.asked else info.unit
    scope = f"{floor.kind} questions" if floor.kind else "questions"
    return (f"nothing scored: {floor.metric} has no {unit} among {rows} {scope} · floor "
            f"{floor.bound} · computed by {by}{aside(floor, counted)}")


# --- the bill ------------------------------------------------------------------------------


def unmeasured(floor: Floor, names: Sequence[str], rows: int, counted: Counted) -> str:
    """A bill floor with scored questions that carry no figure of it: named, and why that
    fails rather than shrinks n."""
    what = ("reported no cost (Answer.usage.cost; or the judge is priced and its API "
            "reported no tokens)" if floor.metric == "cost_per_question"
            else "have no measured latency (a row from before ragate measured it)")
    return (f"not decided: {len(names)} of {rows} answered questions {what}: "
            f"{fmt_some(list(names), NAMED)} · a bill floor counts every answer, an unknown "
            f"figure never passes it · floor {floor.bound} · computed by "
            f"{counted.computed_by}{aside(floor, counted)}")


def unsure_unlabelled(floor: Floor, names: Sequence[str], t: Tally, labels: str | None,
                      counted: Counted) -> str:
    """An answer_match floor with unsure answers no label settled: named, with how to
    settle them; the figure over the decided answers beside it."""
    where = labels or "the labels file ([judge] labels = \"labels.jsonl\")"
    over = (f"{floor.metric} {fmt_figure(floor.metric, t.value)} over the {t.n} decided, "
            if t.value is not None else "")
    return (f"not decided: {over}{_plural(len(names), 'unsure answer')} not labelled: "
            f"{fmt_some(list(names), NAMED)} · review each and label it in {where} "
            f"({{\"question_id\", \"metric\": \"answer_match\", \"verdict\": 0 or 1}}, then "
            f"`ragate stamp-labels`), or count them wrong with [answers] unsure = \"wrong\" · "
            f"floor {floor.bound} · computed by {counted.computed_by}{aside(floor, counted)}")


def too_few_for_bound(floor: Floor, t: Tally, needs: int, counted: Counted) -> str:
    """A quantile floor over too few answers for a 95% upper bound of it."""
    point = "—" if t.value is None else fmt_figure(floor.metric, t.value)
    return (f"not decided: {floor.metric} {point} (point) over n={t.n} answered questions, "
            f"too few for a 95% upper bound of the quantile (order statistics, Conover): "
            f"it needs at least {needs} · floor {floor.bound} · computed by "
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
            f"{floor.metric} {t.value or 0:.2f} as judged · floor {floor.bound} · computed by "
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
    if t.clusters and unit == "questions":
        unit = "answers"  # a question asked 3 times is 3 units of its metric
    count = (f"over {t.n}/{t.n + t.failures} judged" if info.judged and info.aggregate == "mean"
             else f"n={t.n} {unit}")
    if t.clusters:
        count += f" of {t.questions} questions × {t.repeats}"
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
                f"questions, or lower ragate_min_n) · floor {floor.bound} · {tail}")
    text = _against(floor, figures, call == "holds", strict, tail)
    if floor.xfail and call == "holds":
        return (f"[XPASS(strict)] {floor.xfail}: {text}. The floor now holds: remove its "
                "xfail (pytest --ragate-promote) to make it a hard gate")
    if floor.xfail:
        return f"{floor.xfail}: {text}"
    return text + (f" · worst: {worst}" if worst else "")


# --- the judge against the labels -----------------------------------------------------------


def agreement_figure(a: Agreement) -> str:
    """`kappa 0.41 [0.20, 0.61]`, or `kappa undefined` when it cannot be computed."""
    if a.value is None:
        return f"{a.statistic} undefined"
    return f"{a.statistic} {a.value:.2f} {fmt_interval(a.interval)}"


def agreement_line(a: Agreement) -> str:
    """`faithfulness: kappa 0.41 [0.20, 0.61] on 40 labelled questions`, with the MAE for
    score labels and the questions without a verdict named."""
    text = f"{a.metric}: {agreement_figure(a)}"
    if a.mae is not None:
        text += f", MAE {a.mae:.2f} {fmt_interval(a.mae_interval)}"
    text += f" on {_plural(a.n, 'labelled question')}"
    if a.missing:
        shown = "; ".join(f"{q} ({why})" for q, why in a.missing[:NAMED_MISSING])
        more = len(a.missing) - NAMED_MISSING
        text += (f"; {len(a.missing)} labelled without a verdict: {shown}"
                 + (f"; and {more} more" if more > 0 else ""))
    elif a.value is None:
        text += (" (every label and verdict is one class, or one score: label questions "
                 "the judge should tell apart)")
    return text


def agreement_lines(agreements: Sequence[Agreement]) -> str:
    return " · ".join(agreement_line(a) for a in agreements)


def nothing_labelled(floor: Floor, judge: str) -> str:
    """`floor[judge_agreement]` with no labelled question of a judged metric run."""
    return ("nothing scored: no labelled question of a judged metric ran · floor "
            f"{floor.min:.2f} · computed by {judge}")


def no_labelled_verdict(floor: float) -> str:
    return f"judge not calibrated: no labelled question has a verdict (floor {floor:.2f})"


def not_calibrated(a: Agreement, shortfall: Shortfall, floor: float, strict: bool) -> str:
    """Why one labelled metric's agreement does not vouch for the judge
    (`agreement.shortfall`): `judge not calibrated: kappa 0.41 [0.20, 0.61] < 0.60 on 40
    labelled questions (faithfulness)`."""
    if shortfall == "unverdicted":
        return f"judge not calibrated: {agreement_line(a)}"
    if shortfall == "too few":
        return (f"judge not calibrated: {agreement_line(a)}: fewer than {MIN_LABELS} labelled "
                "questions with a verdict, too few to bound the agreement")
    if shortfall == "no interval":
        return (f"judge not calibrated: {agreement_line(a)}: no interval (most resamples of "
                "the labelled questions leave it undefined, or every one gives the same "
                "value), so ragate_ci = strict cannot hold")
    if strict and a.interval:
        return (f"judge not calibrated: {a.statistic} lower bound {a.interval[0]:.2f} "
                f"({agreement_figure(a)}) < {floor:.2f} on {a.n} labelled questions "
                f"({a.metric})")
    return (f"judge not calibrated: {agreement_figure(a)} < {floor:.2f} on "
            f"{_plural(a.n, 'labelled question')} ({a.metric})")


def agreement_against_floor(floor: Floor, worst: Agreement, agreements: Sequence[Agreement],
                            *, holds: bool, strict: bool, judge: str, why: str | None) -> str:
    """`floor[judge_agreement]`'s message: the worst labelled metric's statistic against the
    floor, its interval and n, every metric's line; why the judge is not calibrated first."""
    if worst.value is not None:
        head = (f"{worst.metric} {worst.statistic} {worst.value:.2f}"
                + (f", 95% lower bound {worst.interval[0]:.2f}" if strict and worst.interval
                   else "")
                + f" {'≥' if holds else '<'} floor {floor.min:.2f}")
    else:
        head = f"{worst.metric} {worst.statistic} undefined"
    message = (f"{head} · 95% CI {fmt_interval(worst.interval)} (bootstrap over labelled "
               f"questions) · n={worst.n} labelled · computed by {judge} · "
               f"{agreement_lines(agreements)}")
    if floor.xfail:
        return (f"[XPASS(strict)] {floor.xfail}: " if holds else f"{floor.xfail}: ") + message
    return message if holds or why is None else f"{why} · {message}"


# --- a run against its baseline -------------------------------------------------------------


def no_baseline(goldset: str, eval_version: str, same: Sequence[BaselineRun],
                chosen: BaselineRun | None) -> str:
    """Why a goldset's metrics are not checked against the baseline: it has no run of the
    goldset, none of this eval_version, or one without per-question scores."""
    if not same:
        return f"the baseline has no run of goldset {goldset}"
    if chosen is None:
        versions = ", ".join(sorted({b.eval_version for b in same}))
        return (f"the baseline ran eval_version {versions}, this run {eval_version}: "
                "not comparable")
    return f"{chosen.source} has no per-question scores (written by an older ragate)"


def _paired_tail(unpaired: int, source: str) -> str:
    aside = (f"; {_plural(unpaired, 'question')} in only one run or skipped, not paired"
             if unpaired else "")
    return f"{aside} · against {source}"


def not_compared(metric: str, why: NotCompared, paired: Paired, source: str) -> str:
    """A check with nothing to test (`regression.check`): no question scored in both runs,
    or the metric has no unit in one of them."""
    tail = _paired_tail(paired.unpaired, source)
    if why == "no units":
        return (f"{metric}: nothing to compare ({metric} has no {METRICS[metric].unit} in one "
                f"run){tail}")
    return f"{metric}: no question scored in both runs{tail}"


def regression(metric: str, test: str, paired: Paired, compared: Compared,
               call: RegressionCall, *, alpha: float, min_n: int, source: str) -> str:
    """A decided check: the metric then and now over the paired questions, the test and its
    p-value against α; a refusal under `ragate_min_n`; a drop names who got worse."""
    c = compared
    detail = (f"{test}: {c.worse} right→wrong, {c.better} wrong→right of {c.units} "
              f"{METRICS[metric].unit}" if test == MCNEMAR else test)
    figures = (f"{metric} {c.then:.2f} → {c.now:.2f} over {paired.questions} paired questions "
               f"({detail}, p = {c.p_value:.3g}")
    tail = _paired_tail(paired.unpaired, source)
    if call == "refused":
        return (f"refusing to gate: {figures}); {paired.questions} paired questions are fewer "
                f"than ragate_min_n = {min_n}{tail}")
    if call == "dropped":
        went = "right→wrong" if test == MCNEMAR else "worse"
        return (f"significant drop: {figures} < α {alpha:g}){tail}"
                + (f" · {went}: {fmt_some(paired.dropped, NAMED_WORSE)}" if paired.dropped
                   else ""))
    word = ("no change" if c.now == c.then else
            ("significant rise" if c.significant else "not significant") if c.now > c.then
            else "drop not significant")
    return f"{word}: {figures} {'<' if c.significant else '≥'} α {alpha:g}){tail}"



# --- sequential asking (`--ragate-sequential`) ------------------------------------------------

NOT_NEEDED = "not needed"  # how a question a decided goldset did not ask is skipped


def not_needed(asked: int, of: int) -> str:
    """The skip reason of a question its goldset no longer needed."""
    return f"{NOT_NEEDED}: every floor decided after {asked} of {of} questions"


def says_not_needed(reason: str | None) -> bool:
    """A skipped row's reason (as pytest's summary shows it, `Skipped: …`) is `not_needed`'s."""
    return (reason or "").removeprefix("Skipped: ").startswith(f"{NOT_NEEDED}: ")


def sequential_refused_by(*, shard: bool, decide: bool, baseline: bool, repeat: bool,
                          strict: bool, ppi: bool = False, agreement: bool = False,
                          asserted: bool = False) -> str | None:
    """Why a run (or a goldset) cannot be asked sequentially yet, or None."""
    why = {shard: "--ragate-shard: each shard would stop on its own slice (run the gate in "
                  "one job, or ask everything)",
           decide: "--ragate-decide decides saved results; it asks nothing",
           baseline: "--ragate-baseline: a regression check pairs every question of both runs",
           repeat: "repeats: stopping over repeated answers is not defined yet",
           strict: "ragate_ci = strict decides on an interval, not on the goldset's figure",
           ppi: "[judge] estimate = \"ppi\": the labels' correction is not defined for a "
                "stopped goldset yet",
           agreement: "a judge_agreement floor is decided over the labelled questions",
           asserted: "question_outcome = \"assert\" makes every question its own test"}
    found = [text for given, text in why.items() if given]
    if not found:
        return None
    return ("--ragate-sequential is not defined for this run yet: " + "; ".join(found)
            + " (drop --ragate-sequential / sequential = true to ask every question)")


PINNED_SEED = ("ragate_sequential_seed in the ini file would ask every run's questions in one "
               "order known in advance, and a system tuned on the questions asked first can "
               "pass what asking all of them fails: leave the seed fresh, and give "
               "--ragate-sequential-seed on the command line only to replay one run's order")


def sequential_header(seed: int, every: bool | None) -> str:
    """The run header's line: which seed orders the questions (to reproduce the order)."""
    return (f"ragate: sequential: questions asked in a random order, seed {seed} "
            f"(--ragate-sequential-seed {seed} asks them in this order again)")


def not_sequential(unfit: Sequence[str]) -> str:
    if not unfit:
        return "no floor over its questions: every question is asked"
    return (f"{', '.join(dict.fromkeys(unfit))} cannot be decided before the last question: "
            "every question is asked")


def never_came(name: str) -> str:
    return f"{name} has no result: every floor decided over every question"


def asked_before_the_stop(asked: int) -> str:
    return (f"every floor decided after {asked}, but no question was left unasked: "
            "every floor decided over every question")


def halted_on(name: str, status: str) -> str:
    what = {"error": "errored", "skipped": "was skipped"}.get(status, status)
    return (f"{name} {what}: from there every question was asked (an error is a failure, "
            "never a skip)")


def stopped_against(floor: Floor, value: float | None, interval: tuple[float, float] | None,
                    holds: bool, *, asked: int, of: int, units: int, alpha: float) -> str:
    """A floor decided before the goldset's last question: its figure over what was asked,
    the sequence's interval at the stop, and the error budget it was decided at."""
    sign = ("≤" if holds else ">") if floor.upper else ("≥" if holds else "<")
    shown = "—" if value is None else f"{value:.2f}"
    return (f"{floor.metric} {shown} {sign} floor {floor.min:.2f} · decided after {asked} of "
            f"{of} questions (n={units} {METRICS[floor.metric].unit}) by a confidence sequence "
            f"(betting, without replacement) · {1 - alpha:.4g} anytime interval "
            f"{fmt_interval(interval)} · chance of deciding otherwise than asking every "
            f"question ≤ {alpha:.4g} · the other {of - asked} questions not asked")


EXCHANGEABLE = "assumes a question's answer does not depend on when it is asked"


def sequential_part(*, skipped: int, asked: int, seed: int, alpha: float, stopped: bool,
                    why: str | None) -> str:
    """What a sequential goldset's coverage line adds: how many questions it did not need,
    what asking them again found (`why`), and the assumption its guarantee rests on; or why
    it asked them all."""
    if stopped:
        return (f"{skipped} not needed (sequential, seed {seed}: every floor decided after "
                f"{asked}{'; ' + why if why else ''}; chance of a decision other than asking "
                f"all ≤ {alpha:.4g}, which {EXCHANGEABLE})")
    return (f"every question asked (sequential, seed {seed}: "
            f"{why or 'a floor was undecided until the last question'})")


def recheck_costs(asked: int, of: int) -> str:
    return (f"every floor decided after {asked}, but asking those {asked} again to check the "
            f"stop would cost as much as the {of - asked} left: every question was asked")


def reask_failed(name: str, status: str) -> str:
    what = {"error": "errored", "skipped": "was skipped"}.get(status, status)
    return (f"{name} {what} when asked again to check the stop: every question was asked "
            "(an error is a failure, never a skip)")


def reask_uncounted(name: str, metric: str) -> str:
    return (f"{name} asked again to check the stop has no countable {metric}: every question "
            "was asked")


def reask_never_came(name: str) -> str:
    return (f"{name} asked again to check the stop has no result: every floor decided over "
            "every question")


def answers_held(drifts: Sequence[FloorDrift]) -> str:
    """A stop's re-check that held: how many questions were asked again, and how far their
    answers moved."""
    asked = max((d.pairs for d in drifts), default=0)
    moved = "; ".join(f"{d.floor} {d.toward} toward the floor, {d.away} away (p = "
                      f"{d.p:.2g})" for d in drifts if d.toward or d.away)
    return (f"those questions asked again answered as before within their flakiness ("
            f"{asked} re-asked{'; ' + moved if moved else ''})")


def answers_changed(asked: int, changed: Sequence[FloorDrift]) -> str:
    """A stop refused: its questions asked again answered otherwise, more than flakiness
    explains (the paired sign-flip test, decision/drift.py)."""
    moved = "; ".join(f"{d.floor}: {d.toward} of {d.pairs} answers moved toward the floor, "
                      f"{d.away} away (sign-flip p = {d.p:.2g} ≤ {d.level:.4g})"
                      for d in changed)
    return (f"every floor decided after {asked}, but the answers changed when asked again "
            f"({moved}): the system's answers depend on when it is asked, so every question "
            "was asked")


def stuck(why: str) -> str:
    return f"{why}: every floor decided over every question"


def undecided(floors: Sequence[str]) -> str:
    return (f"{', '.join(floors) or 'a floor'} undecided until the last question: decided "
            "over every question")


# --- `ragate rejudge`: a candidate judge held to the current one (scoring/rejudge.py) ------


def fmt_p(p: float | None) -> str:
    """A p-value as the rejudge table shows it: `0.003`, `<0.001`, or a dash."""
    if p is None:
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_shift(shift: float | None, interval: tuple[float, float] | None) -> str:
    """`-0.25 [-0.40, -0.10]`, or a dash when no answer was graded by both judges."""
    if shift is None:
        return "—"
    return f"{shift:+.2f} {fmt_interval(interval)}"


def floor_would_change(floor: str, current: str, candidate: str) -> str:
    return f"{floor} would change: {current} under the current judge, {candidate} under the "\
           "candidate"


def shift_significant(name: str, shift: float | None, p_bootstrap: float | None,
                      p_mcnemar: float | None, alpha: float) -> str:
    tests = [f"paired bootstrap p {fmt_p(p_bootstrap)}"]
    if p_mcnemar is not None:
        tests.append(f"McNemar at the floor p {fmt_p(p_mcnemar)}")
    moved = "—" if shift is None else f"{shift:+.2f}"
    return (f"{name} shifted {moved} under the candidate judge ("
            f"{', '.join(tests)}; significant at alpha {alpha:g}, Holm-corrected across this "
            "goldset's tests)")


def not_regraded(name: str, unregraded: Sequence[tuple[str, str]]) -> str:
    shown = "; ".join(f"{q} ({why})" for q, why in unregraded[:NAMED])
    more = len(unregraded) - NAMED
    return (f"{name}: the candidate judge gave no verdict on {_plural(len(unregraded), 'answer')}"
            f" the current judge graded: {shown}" + (f"; and {more} more" if more > 0 else ""))


def judge_change_verdict(changes: Sequence[str], alpha: float) -> str:
    """The rejudge's last line: whether switching judges is a gate decision."""
    if changes:
        reasons = _plural(len(changes), "reason")
        return (f"ragate rejudge: the judge change moves the gate ({reasons}): review it "
                "before switching judges")
    return (f"ragate rejudge: no floor's outcome changes and no shift is significant at alpha "
            f"{alpha:g} (Holm-corrected)")


def no_judged_contexts(path: str, line: int, question_id: str) -> str:
    return (f"{path}: line {line} ({question_id}): this results file keeps no judged contexts "
            "(written before `ragate rejudge` existed); run the gate once more with "
            "--ragate-results and rejudge that file")


def not_graded_by_both(name: str) -> str:
    return f"{name}: no answer was graded by both judges: nothing to hold the candidate to"


# --- a floor over the slices of a key (scoring/slices.py) ------------------------------------

ADJUSTED_BY: dict[str, str] = {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted"}


def fmt_sig(p: float) -> str:
    """A p-value in two significant digits: `0.018`, `0.0012`, `2.3e-16`."""
    return f"{p:.2g}"


def slice_name(key: str, value: str) -> str:
    """`lang=de`: a slice as its floor's name and every message say it."""
    return f"{key}={value}"


def _slice_against(floor: Floor, figure: SliceFigure) -> str:
    """`abstention_accuracy 0.71 < floor 0.85`: the slice's value on its side of the floor."""
    value, digits = figure.tally.value, figure_digits(floor.metric)
    if value is None:
        return f"{floor.metric}: nothing scored"
    below = value > floor.min if floor.upper else value < floor.min
    sign = (">" if below else "≤") if floor.upper else ("<" if below else "≥")
    return f"{floor.metric} {fmt_figure(floor.metric, value)} {sign} floor {floor.min:.{digits}f}"


def _slice_interval(floor: Floor, figure: SliceFigure) -> str:
    method = intervals.method(figure.tally)
    if method != "Wilson":  # slices.slice_interval
        method += ", at least Wilson's over the scores' sum"
    return (f"95% CI {fmt_interval(figure.interval, figure_digits(floor.metric))} "
            f"({method})")


def slice_needs(floor: Floor, figure: SliceFigure) -> str:
    """`insufficient n: needs about 66`, or why no n is named."""
    if figure.needs is not None:
        return f"insufficient n: needs about {figure.needs}"
    if not figure.tally.n:
        return "insufficient n: nothing of this slice was scored"
    if figure.tally.value == floor.min:
        return "insufficient n: its value is on the floor, no n would decide it"
    return "insufficient n: too few values or no spread to say how many would decide it"


def slice_message(floor: Floor, key: str, figure: SliceFigure, *, tested: int,
                  correction: Correction, alpha: float) -> str:
    """One slice's verdict: `lang=de abstention_accuracy 0.71 < floor 0.85 · n=42 · 95% CI
    [0.56, 0.83] (Wilson) · shortfall p=0.0034 (exact binomial), Holm-adjusted over 6 slices
    of lang: 0.02 ≤ 0.05`; `tested` is how many of the key's slices had a test."""
    head = f"{slice_name(key, figure.value)} {_slice_against(floor, figure)}"
    if figure.p_value is None or figure.adjusted is None:
        return f"{head} · n=0 · {slice_needs(floor, figure)}"
    count = f"n={figure.tally.n}" + (f" of {figure.tally.questions} questions × "
                                     f"{figure.tally.repeats}" if figure.tally.clusters else "")
    sign = "≤" if figure.adjusted <= alpha else ">"
    test = (f"shortfall p={fmt_sig(figure.p_value)} ({figure.test}), "
            f"{ADJUSTED_BY[correction]} over {_plural(tested, 'slice')} of {key}: "
            f"{fmt_sig(figure.adjusted)} {sign} {alpha:g}")
    text = f"{head} · {count} · {_slice_interval(floor, figure)} · {test}"
    if figure.call == "holds":
        end = "upper" if floor.upper else "lower"
        return f"{text} · holds: its 95% {end} bound clears the floor"
    if figure.call == "misses":
        return f"{text} · misses: significantly {'above' if floor.upper else 'below'} the floor"
    return f"{text} · {slice_needs(floor, figure)}"


def slice_too_few(floor: Floor, t: Tally, min_n: int) -> str:
    """A slice scored on fewer questions than `ragate_min_n`: refused, as any floor is."""
    return (f"{floor.name}: refused: {_plural(t.questions, 'question')} scored, fewer than "
            f"ragate_min_n = {min_n}")


def slice_unread(floor: Floor, delivered: int, asked: int, coverage: float,
                 unread: Sequence[str]) -> str:
    """A judged slice whose judge failed on too many of its questions: not decided."""
    assert floor.slice is not None
    name, missing = slice_name(*floor.slice), fmt_some(list(dict.fromkeys(unread)), 5)
    return (f"{name} {floor.metric}: not decided: the judge delivered {delivered} of {asked} "
            f"verdicts of {name} ({delivered / asked:.2f} < judge_coverage floor "
            f"{coverage:.2f}; none for {missing}): a slice is not decided on the verdicts its "
            "judge could give")


def slice_short(floor: Floor) -> str:
    """An insufficient slice whose interval lies wholly on the wrong side of its floor."""
    side = "above" if floor.upper else "below"
    return (f"failed: its 95% interval lies wholly {side} the floor; not significant after the "
            "correction, but not a slice too small to decide (whatever "
            "ragate_slice_insufficient says)")


def slice_insufficient(setting: str) -> str:
    """What an insufficient slice does, by `ragate_slice_insufficient`."""
    if setting == "skip":
        return "skipped: ragate_slice_insufficient = skip (an undecided slice is not a pass)"
    return ("failed: a slice its n cannot decide is not a pass (ragate_slice_insufficient = "
            "skip skips it instead)")


# --- a key's slices in the reports and the terminal (outputs/slice_tables.py) ---------------


def slice_floors(key: str, metric: str, bound: str, overrides: Sequence[tuple[str, str]]) -> str:
    """`abstention_accuracy ≥ 0.85`, with the slices whose own floor differs:
    `abstention_accuracy ≥ 0.85; lang=de ≥ 0.90`."""
    return "; ".join([f"{metric} {bound}",
                      *[f"{slice_name(key, value)} {own}" for value, own in overrides]])


def slices_head(key: str, floors: str, correction: str | None) -> str:
    """`slices of lang (abstention_accuracy ≥ 0.85, Holm)`: how a key's slices are titled."""
    return f"slices of {key} ({floors}{f', {correction}' if correction else ''})"


def slices_title(head: str) -> str:
    """A report's slice table and plot: `slices of lang (…), worst first`."""
    return f"{head}, worst first"


def slice_call_cell(call: str | None, needs: int | None, *, n: int, on_floor: bool) -> str:
    """A slice table's call: `holds`, `misses`, `insufficient n: needs about 66` (or why no
    n is named); `—` for a slice floor decided without a call (its message says why)."""
    if call != "insufficient":
        return call or "—"
    if needs is not None:
        return f"insufficient n: needs about {needs}"
    if not n:
        return "insufficient n: nothing scored"
    return "insufficient n: on the floor, no n decides it" if on_floor else (
        "insufficient n: too few values or no spread to say how many")


def slices_summary(head: str, *, misses: Sequence[str], undecided: Sequence[str],
                   insufficient: Sequence[tuple[str, int | None]], holds: int) -> str:
    """The terminal's line for a key: `slices of lang (abstention_accuracy ≥ 0.85, Holm):
    1 misses (de), 1 insufficient (fr: needs about 66), 4 hold`."""
    parts = [f"{len(misses)} misses" + (f" ({fmt_some(misses, NAMED)})" if misses else "")]
    if undecided:
        parts.append(f"{len(undecided)} undecided ({fmt_some(undecided, NAMED)})")
    if insufficient:
        named = [value if needs is None else f"{value}: needs about {needs}"
                 for value, needs in insufficient]
        parts.append(f"{len(insufficient)} insufficient ({fmt_some(named, NAMED)})")
    parts.append(f"{holds} {'holds' if holds == 1 else 'hold'}")
    return f"{head}: {', '.join(parts)}"


# --- a baseline across a judge change (`--ragate-accept-judge`, scoring/regression.py) -------


def _judges(names: Sequence[str]) -> str:
    """Judges as the user named them (`--ragate-judge`, `--ragate-accept-judge`), with what is
    shaped like a credential masked, as every output masks it (a model named `gpt-sk-…`)."""
    return redact_credentials(", ".join(names))


def judge_changed(metric: str, change: JudgeChange, source: str) -> str:
    """A judged check across a judge change: refused, accepted, or accepted under a name that
    is not this run's judge. Says how to see what the new judge moves and how to accept it."""
    then, now = _judges(change.baseline), _judges(change.current)
    spec = _judges([change.spec or change.current[0]])
    named = now if len(change.current) == 1 else _judges(change.current[:1])
    accept = _judges([change.accept or ""])
    what = f"{source} was judged by {then}, this run by {now}"
    if change.call == "accepted":
        return (f"{metric}: not compared: judge change accepted ({change.flag} "
                f"{accept}): {what}; comparing across judges measures the judges, not "
                "the system")
    rejudge = (f"`ragate rejudge {change.results or 'RESULTS'} --judge {spec}`"
               + ("" if change.results else " on the baseline run's results file"))
    head = (f"{change.flag} {accept} names another judge than this run's: "
            if change.call == "misnamed" else "")
    return (f"{head}{metric} not compared across judges: {what}; a judge change is a gate "
            f"decision, not a regression of the system: run {rejudge} to see what it moves, "
            f"and accept it with {change.flag} {named}")


def accept_judge_unneeded(accept: str) -> str:
    """`--ragate-accept-judge` in a run whose baseline was graded by the same judge."""
    return (f"ragate: --ragate-accept-judge {_judges([accept])} was not needed: no judged "
            "check changed judge against the baseline")


ACCEPT_JUDGE_IN_INI = ("ragate_accept_judge in the ini file would accept every future judge "
                       "change silently, and a judge change is a gate decision of one run: give "
                       "--ragate-accept-judge JUDGE on the command line of the run that makes it")
ACCEPT_JUDGE_WITHOUT_BASELINE = ("--ragate-accept-judge accepts a judge change against a "
                                 "baseline: give --ragate-baseline too")


def accept_judge_misnamed(accept: str, ran: Sequence[str]) -> str:
    """`--ragate-accept-judge` naming another judge than the one configured for this run."""
    return (f"--ragate-accept-judge {_judges([accept])} names another judge than this run's: "
            f"this run is judged by {_judges(ran)}")
