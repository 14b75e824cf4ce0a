"""One floor decided over its whole population: the rule (gaps, no judge, nothing scored,
figures against the floor) and its `Verdict`.

A floor is decided over its whole population, known at collection: every question of its
goldset (and kind), or every anchor of its kind. A member without a result is a gap, named
in the floor's message. A floor with gaps never passes: it fails when results went missing
(an error, a crash, a skip, a question that never ran, a sealed answer without its key) and
is skipped, with the count, when the user deselected members (-k, -m, --lf).

A floor with nothing to score fails: an empty gate is not a passing gate. So does one scored
on fewer questions than `ragate_min_n`. With `ragate_ci = strict` a floor holds only when
the lower bound of its 95% interval reaches it, not just the point value.

The bill's floors (`latency_p95_s`, `cost_per_question`: upper bounds) are decided over the
answers the system gave in this run: a question without one is a gap like any other, and a
scored row that carries no figure (an answer without a reported cost; a row from a results
file written before latency was measured) fails the floor, named, rather than shrink its n.
A latency quantile is always decided on its distribution-free 95% upper bound
(stats.quantile_bounds), never on the point value, and fails when n is too small to have one.

Deciding a floor takes three steps, each in one place: its figures (`scoring/figures.py`:
the tally, the value decided on, its interval and power), the gate rule (here: `missing_of`
for a population that is not whole, `call_of` and `outcome_of` for figures against the
floor) and what it says, as a typed value (`said.py`: `wording/floors.py` writes every
sentence a verdict says, when its message is read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.decision.rules import POINT, Strictness
from pytest_ragate.decision.said import Said, Topic, render, said
from pytest_ragate.scoring.answer_match import ANSWER_MATCH, unsettled
from pytest_ragate.scoring.custom import failures_by_cause
from pytest_ragate.scoring.figures import (
    Counted,
    Figures,
    counted_of,
    figures_of,
    interval_of,
)
from pytest_ragate.scoring.floor import Floor, counts_in
from pytest_ragate.scoring.labelled import judged_values
from pytest_ragate.scoring.power import PassesAt
from pytest_ragate.scoring.ppi import Ppi, ppi_mean
from pytest_ragate.scoring.records import (
    MECHANICAL,
    AnchorOutcome,
    QuestionRecord,
    Tally,
    behind,
    repeat_name,
    tally,
)
from pytest_ragate.scoring.registry import METRICS, latency_quantile
from pytest_ragate.scoring.slices import SliceCall
from pytest_ragate.scoring.stats import clears, quantile_needs

Outcome = Literal["passed", "failed", "xfailed", "xpassed", "skipped"]
GapKind = Literal["errored", "crashed", "lost", "never ran", "skipped", "sealed", "deselected",
                  "stale evidence"]
# a judged floor in a run without a judge: fails (the default), fails though its metric is
# named optional (--ragate-require-judge), or is skipped (its metric named optional)
Unjudged = Literal["fail", "required", "skip"]


@dataclass(frozen=True, kw_only=True)
class Gap:
    """A member of a floor's population (a question or an anchor) without a result."""

    member: str
    member_kind: str  # the question's (or anchor's) kind, to match kind floors
    kind: GapKind
    why: str = ""
    member_tags: Mapping[str, str] | None = None  # the question's tags, to match slice floors


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """A floor decided: its outcome, what it says (`message`, written from `said` when
    read), and the figures every output shows."""

    floor: Floor
    goldset: str
    outcome: Outcome
    said: Said | str
    tally: Tally | None = None
    interval: tuple[float, float] | None = None
    computed_by: str = MECHANICAL
    errors: int = 0
    skipped: int = 0
    gaps: int = 0  # members of the population without a result
    passes_at: PassesAt | None = None  # the true value at which this n passes 80% of the time
    figure: float | None = None  # the figure decided on, when it is not the tally's value
    estimate: str = ""  # what that figure is: "ppi", or the agreement statistic
    worst: str = ""  # a failing floor's questions behind it, worst first (metrics.behind)
    # a slice floor's call and, when insufficient, about how many questions would decide it
    slice_call: SliceCall | None = None
    needs: int | None = None
    correction: str = ""  # the correction across its family, as reports name it ("Holm")

    @property
    def message(self) -> str:
        """What the verdict says, written (wording/said.py)."""
        return render(self.said)

    @property
    def value(self) -> float | None:
        if self.figure is not None:
            return self.figure
        return self.tally.value if self.tally else None


# --- the gate rule ----------------------------------------------------------------------------


Call = Literal["refused", "holds", "misses"]


@dataclass(frozen=True, kw_only=True)
class Missing:
    """The members of a floor's population without a result (`missing_of`), split by what
    they do to it: `hard` ones fail it, `soft` ones (`soft_gaps`) skip it."""

    hard: tuple[Gap, ...]
    soft: tuple[Gap, ...]
    population: int  # the population's size, the members with a result among it
    unit: str  # what it counts: "questions", "retrieval_miss anchors", "labelled questions"

    @property
    def outcome(self) -> Outcome:
        return "failed" if self.hard else "skipped"

    @property
    def count(self) -> int:
        return len(self.hard) + len(self.soft)


def soft_gaps(strictness: Strictness) -> frozenset[str]:
    """Gaps that skip a floor rather than fail it: the user deselected those members (but
    not pytest's cache, narrowing the run to its last failures: `--lf`, `--sw`), or builds
    without the seal key skip on purpose."""
    deselected = set() if strictness.narrowed_by else {"deselected"}
    return frozenset(deselected | ({"sealed"} if strictness.sealed_without_key == "skip"
                                   else set()))


def of_population(floor: Floor, gaps: Sequence[Gap]) -> list[Gap]:
    """The gaps in the floor's population: all of them, or those of its kind or slice."""
    return [g for g in gaps if counts_in(floor, g.member_kind, g.member_tags)]


def missing_of(gaps: Sequence[Gap], population: int, unit: str, strictness: Strictness,
               ) -> Missing | None:
    """A floor whose population is not whole is not decided, or None when it is whole.

    Missing results fail it: what is missing could be exactly what fails. Deselected members
    (and sealed ones, when builds without the key skip on purpose) skip it: the user chose
    not to run them, and a floor decided over a part would pass or fail on that part."""
    if not gaps:
        return None
    soft = soft_gaps(strictness)
    return Missing(hard=tuple(g for g in gaps if g.kind not in soft),
                   soft=tuple(g for g in gaps if g.kind in soft),
                   population=population, unit=unit)


def call_of(floor: Floor, figures: Figures, strictness: Strictness) -> Call:
    """The gate's rule over a whole population's figures: refused when scored on fewer
    questions than `ragate_min_n`; else it holds when its value (strictly, its interval's
    bound) clears the floor (`stats.clears`)."""
    if strictness.min_n and figures.tally.questions < strictness.min_n:
        return "refused"
    held = clears(figures.value, figures.interval, floor.min, strict_for(floor, strictness),
                  floor.upper)
    return "holds" if held else "misses"


def strict_for(floor: Floor, strictness: Strictness) -> bool:
    """Whether the floor is decided on its interval's bound: with `ragate_ci = strict`, and
    always for a quantile (its point value says nothing of the tail it bounds)."""
    return strictness.strict or METRICS[floor.metric].decided_on_bound


def outcome_of(floor: Floor, call: Call) -> Outcome:
    """A floor that holds passes and one that does not fails; a strict xfail floor is
    xfailed while it does not hold and xpassed (a failure: remove its xfail) once it does."""
    if floor.xfail and call != "refused":
        return "xpassed" if call == "holds" else "xfailed"
    return "passed" if call == "holds" else "failed"


# --- deciding a floor: the figures, the rule, the message ---------------------------------------


def without_judge(floor: Floor, goldset: str, unjudged: Unjudged) -> Verdict:
    """A judged floor of a run without a judge: not decided, so failed, naming the flag;
    skipped only when the goldset or the ini file names its metric optional (and
    --ragate-require-judge does not overrule that)."""
    return Verdict(floor=floor, goldset=goldset,
                   outcome="skipped" if unjudged == "skip" else "failed",
                   said=said(Topic.NEEDS_JUDGE, floor.metric, unjudged),
                   computed_by="no judge")


def decide(
    floor: Floor,
    goldset: str,
    records: Sequence[QuestionRecord],
    *,
    judge: str | None = None,
    unjudged: Unjudged = "fail",
    strictness: Strictness = POINT,
    gaps: Sequence[Gap] = (),
    labels: Mapping[str, float] | None = None,
    stamps: Mapping[str, str] | None = None,
    coverage: float | None = None,
) -> Verdict:
    """The floor's outcome over the records of its goldset (and kind, when it has one).

    `gaps` are the population's members without a scored result (errored ones among them):
    the population is the scored records and the gaps. Without gaps the records are the
    whole population. With `labels` (question id → the human label of this floor's metric,
    `[judge] estimate = "ppi"`) the floor is decided on the prediction-powered estimate;
    `stamps` are the answers those labels were written for (a label of another is stale).
    `coverage` is the goldset's judge_coverage floor, which a judged floor's own verdicts
    must reach (`unread`)."""
    scored = scored_or_settled(floor, goldset, records, judge=judge,
                               unjudged=unjudged, strictness=strictness, gaps=gaps)
    if isinstance(scored, Scored) and coverage is not None:
        scored = unread(floor, goldset, coverage, scored) or scored
    if isinstance(scored, Verdict):
        return scored
    rows, t, counted = scored.rows, scored.tally, scored.counted
    ppi = None
    if labels is not None and METRICS[floor.metric].asked:
        ppi, why = _ppi(floor.metric, rows, labels, stamps)
        if ppi is None:
            return Verdict(floor=floor, goldset=goldset, outcome="failed",
                           said=said(Topic.NO_PPI, floor, why, t, counted), tally=t,
                           computed_by=counted.computed_by, errors=counted.errors,
                           skipped=counted.skipped, estimate="ppi")
    figures = figures_of(floor, t, strictness.strict, ppi, min_n=strictness.min_n)
    return against_floor(floor, goldset, figures, strictness, counted,
                         worst=behind(floor.metric, rows, over=bill_bound(floor)))


@dataclass(frozen=True, kw_only=True)
class Scored:
    """A floor's population with something scored, ready for its figures: its rows, their
    tally and who computed it."""

    rows: list[QuestionRecord]
    tally: Tally
    counted: Counted


def scored_or_settled(floor: Floor, goldset: str, records: Sequence[QuestionRecord], *,
                      judge: str | None, unjudged: Unjudged, strictness: Strictness,
                      gaps: Sequence[Gap]) -> Verdict | Scored:
    """What every floor over questions is held to before its figures, as a verdict: a judged
    floor without a judge, a population with gaps, nothing that ran, a bill figure missing,
    nothing scored; else its rows and tally, to be decided."""
    if floor.judged and judge is None:
        return without_judge(floor, goldset, unjudged)
    rows = [r for r in records if counts_in(floor, r.kind, r.tags)]
    if mine := of_population(floor, gaps):
        return _not_whole(floor, goldset, rows, mine, judge, strictness)
    if rows and all(r.status == "skipped" for r in rows):
        return Verdict(floor=floor, goldset=goldset, outcome="skipped",
                       said=said(Topic.NOTHING_RAN, floor.metric, [r.error for r in rows]),
                       skipped=len(rows))
    t = tally(floor.metric, rows)
    counted = counted_of(floor, rows, judge, t)
    if unbilled := _unmeasured(floor, rows, goldset, t, counted):
        return unbilled
    if unsure := _unsettled(floor, rows, goldset, t, counted):
        return unsure
    if failed := _metric_failed(floor, rows, goldset, t, counted):
        return failed
    if not t.n:
        return Verdict(floor=floor, goldset=goldset, outcome="failed",
                       said=said(Topic.NOTHING_SCORED, floor, len(rows), counted), tally=t,
                       computed_by=counted.computed_by, errors=counted.errors,
                       skipped=counted.skipped)
    return Scored(rows=rows, tally=t, counted=counted)


def unread(floor: Floor, goldset: str, coverage: float, scored: Scored) -> Verdict | None:
    """A judged floor whose judge gave fewer of its verdicts than the goldset's judge_coverage
    floor asks: not decided (failed), whether or not that coverage floor is an xfail (an
    expected shortfall of the judge does not make the verdicts it gave enough). Held over the
    floor's own rows: the goldset's coverage floor counts every verdict, so a judge that fails
    on one slice's or kind's questions only (its language, its length) can clear it while that
    floor would be decided on the few verdicts it could give."""
    if not METRICS[floor.metric].asked:
        return None
    rows = [r for r in scored.rows if floor.metric in r.judge_attempted]
    missing = [r for r in rows if floor.metric in r.judge_failures]
    if not missing or (len(rows) - len(missing)) / len(rows) >= coverage:
        return None
    return Verdict(floor=floor, goldset=goldset, outcome="failed", tally=scored.tally,
                   said=said(Topic.JUDGE_UNREAD, floor, len(rows) - len(missing), len(rows),
                             coverage, [r.question_id for r in missing],
                             causes=scored.counted.failure_causes),
                   computed_by=scored.counted.computed_by)


def bill_bound(floor: Floor) -> float | None:
    """A bill floor's bound: its failure names only the answers over it."""
    return floor.min if METRICS[floor.metric].source == "bill" else None


def _unmeasured(floor: Floor, rows: Sequence[QuestionRecord], goldset: str, t: Tally,
                counted: Counted) -> Verdict | None:
    """A bill floor fails when a scored row carries no figure of it (named), or when a
    quantile's n is too small for its 95% upper bound; else None."""
    measured = METRICS[floor.metric].measured
    if measured is None:
        return None
    missing = [r for r in rows if r.status == "scored" and not measured(floor.metric, r)]
    if missing:
        names = [repeat_name(r.question_id, r.repeat) if r.repeat > 1 else r.question_id
                 for r in missing]
        message = said(Topic.UNMEASURED, floor, names, len(rows), counted)
    elif t.n and METRICS[floor.metric].decided_on_bound and interval_of(t) is None:
        needs = quantile_needs(latency_quantile(floor.metric))
        message = said(Topic.TOO_FEW_FOR_BOUND, floor, t, needs, counted)
    else:
        return None
    return Verdict(floor=floor, goldset=goldset, outcome=outcome_of(floor, "misses"),
                   said=message, tally=t, computed_by=counted.computed_by,
                   errors=counted.errors, skipped=counted.skipped)


def _unsettled(floor: Floor, rows: Sequence[QuestionRecord], goldset: str, t: Tally,
               counted: Counted) -> Verdict | None:
    """An answer_match floor with unsure answers no person's label settled (nor the goldset's
    `unsure = "wrong"`): not decided (failed), naming them, as it would count them neither
    way (`scoring/answer_match.py`); else None, and None for every other metric."""
    if floor.metric != ANSWER_MATCH:
        return None
    waiting = unsettled(rows)
    if not waiting:
        return None
    names = [repeat_name(r.question_id, r.repeat) if any(x.repeat > 1 for x in rows)
             else r.question_id for r in waiting]
    return Verdict(floor=floor, goldset=goldset, outcome="failed", tally=t,
                   said=said(Topic.UNSURE_UNLABELLED, floor, names, t, counted),
                   computed_by=counted.computed_by, errors=counted.errors,
                   skipped=counted.skipped)


def _metric_failed(floor: Floor, rows: Sequence[QuestionRecord], goldset: str, t: Tally,
                   counted: Counted) -> Verdict | None:
    """A floor over a metric the project defines (`@ragate.metric`) that failed on some of
    its questions: not decided (failed), each cause named once with its questions, as a
    value it could not give counts neither way; else None."""
    if not t.failures or METRICS[floor.metric].source != "custom":
        return None
    causes = failures_by_cause(floor.metric, [r for r in rows if r.status == "scored"])
    return Verdict(floor=floor, goldset=goldset, outcome="failed", tally=t,
                   said=said(Topic.METRIC_FAILED, floor, causes, t, counted),
                   computed_by=counted.computed_by, errors=counted.errors,
                   skipped=counted.skipped)


def _not_whole(floor: Floor, goldset: str, rows: Sequence[QuestionRecord], mine: Sequence[Gap],
               judge: str | None, strictness: Strictness) -> Verdict:
    """A question floor with gaps: not decided, with its figure over the questions that
    have a result."""
    scored = [r for r in rows if r.status == "scored"]
    t = tally(floor.metric, scored)
    counted = counted_of(floor, rows, judge, t)
    missing = missing_of(mine, len(scored) + len(mine), "questions", strictness)
    assert missing is not None
    return Verdict(floor=floor, goldset=goldset, outcome=missing.outcome,
                   said=said(Topic.INCOMPLETE, missing, said(Topic.PARTIAL, floor, t, len(scored))),
                   tally=t, interval=interval_of(t), computed_by=counted.computed_by,
                   errors=counted.errors, skipped=counted.skipped, gaps=missing.count)


def _ppi(metric: str, rows: Sequence[QuestionRecord], labels: Mapping[str, float],
         stamps: Mapping[str, str] | None = None) -> tuple[Ppi | None, Said | None]:
    """The prediction-powered estimate over `rows` (a question's repeats averaged), or None
    and why not: a labelled question without a verdict (or with a stale label) is named,
    never left out: its error is exactly what the correction would have measured."""
    judged, why = judged_values(metric, rows, stamps)
    missing = sorted(q for q in why if q in labels)
    if missing:
        return None, said(Topic.PPI_UNVERDICTED, missing, why)
    pairs = [(judged[q], labels[q]) for q in judged if q in labels]
    found = ppi_mean(list(judged.values()), pairs)
    if found is None:
        return None, said(Topic.PPI_TOO_FEW, len(pairs), len(judged))
    return found, None


def decide_anchors(floor: Floor, goldset: str, anchors: Sequence[AnchorOutcome],
                   strictness: Strictness = POINT, gaps: Sequence[Gap] = ()) -> Verdict:
    """A population floor over the anchors of one kind: the share whose check held (an
    XPASS held too). Other kinds, the controls among them, stay out of the population; an
    anchor of the kind without a result is a gap."""
    rows = [a for a in anchors if a.kind == floor.kind]
    t = Tally(metric=floor.metric, k=sum(a.held for a in rows), n=len(rows),
              questions=len(rows))
    mine = of_population(floor, gaps)
    missing = missing_of(mine, len(rows) + len(mine), f"{floor.kind} anchors", strictness)
    if missing is not None:
        return Verdict(floor=floor, goldset=goldset, outcome=missing.outcome,
                       said=said(Topic.INCOMPLETE, missing, said(Topic.PARTIAL, floor, t, t.n)),
                       tally=t, interval=interval_of(t), gaps=missing.count)
    if not t.n:
        return Verdict(floor=floor, goldset=goldset, outcome="failed",
                       said=said(Topic.NOTHING_SCORED, floor, 0, Counted()), tally=t)
    figures = figures_of(floor, t, strictness.strict, min_n=strictness.min_n)
    return against_floor(floor, goldset, figures, strictness, Counted())


def against_floor(floor: Floor, goldset: str, figures: Figures, strictness: Strictness,
                  counted: Counted, worst: str = "") -> Verdict:
    """Figures over a whole population against the floor: the rule's outcome, and a message
    with n, the interval and who computed it; a failure names `worst`, the questions behind
    it. With ppi the value and interval are the prediction-powered estimate's (the judge's
    own mean shown beside it)."""
    call = call_of(floor, figures, strictness)
    outcome = outcome_of(floor, call)
    worst = worst if outcome == "failed" and call == "misses" else ""
    message = said(Topic.AGAINST_FLOOR, floor, figures, call, min_n=strictness.min_n,
                   strict=strict_for(floor, strictness), counted=counted, worst=worst)
    return Verdict(floor=floor, goldset=goldset, outcome=outcome, said=message,
                   tally=figures.tally, interval=figures.interval,
                   computed_by=counted.computed_by, errors=counted.errors,
                   skipped=counted.skipped, passes_at=figures.passes_at, figure=figures.figure,
                   estimate=figures.estimate, worst=worst)
