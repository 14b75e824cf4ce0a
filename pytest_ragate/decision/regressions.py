"""`--ragate-baseline`: did this run get significantly worse than a baseline run?

Each metric is compared question by question with the same questions in the baseline (a
results file, or a history line of the same goldset and eval_version, read by
`outputs/baseline.py`), so the noise of which
questions happen to be in the set cancels out. Units that are right or wrong (abstention, each
evidence span, each judge verdict obtained) get the exact McNemar test; ratios and judged
scores get a paired bootstrap that resamples questions (each metric's `units` or `score` in
registry.py). Only a significant drop fails: a smaller change is reported with its p-value
and passes; a metric the goldset gives a margin (`[regression] max_drop`) is held to "no worse
than the baseline by more than it" instead (decision/margins.py).

A judged metric is compared only under the judge that graded the baseline: across a judge
change its "regression" is the judges' disagreement (alpaca_eval #126: a judge swap moved win
rates 70 -> 50), so the check fails until the run accepts the new judge
(`--ragate-accept-judge`), and is then skipped: a judge change is a gate decision, which
`ragate rejudge` informs. Mechanical metrics are compared either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from pytest_ragate.decision.margins import MarginCheck, Margins, check_margin
from pytest_ragate.decision.said import Said, Topic, render, said
from pytest_ragate.scoring.pairing import (
    BaselineRun,
    Compared,
    CorpusChange,
    NotCompared,
    bootstrap_of,
    corpus_change,
    mcnemar_of,
    pair,
    paired_test,
    scored_metrics,
)
from pytest_ragate.scoring.records import QuestionScores
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.stats import BOOTSTRAP, MCNEMAR

RegressionOutcome = Literal["passed", "failed", "skipped"]
RegressionCall = Literal["refused", "dropped", "held"]
ChangeCall = Literal["refused", "accepted", "misnamed"]  # a judge change: see `change_call`


@dataclass(frozen=True, kw_only=True)
class Regression:
    """One metric of one goldset, paired question by question with the baseline."""

    goldset: str
    metric: str
    test: str  # MCNEMAR or BOOTSTRAP; with a margin, `margin_test`
    outcome: RegressionOutcome
    said: Said | str  # what it says: `message`, written when read
    pairs: int = 0  # paired questions both runs scored
    baseline: float | None = None  # the metric over the paired units, in the baseline run
    current: float | None = None  # ... and in this run
    p_value: float | None = None
    detects: float | None = None  # the drop McNemar detects 80% of the time at this discordance
    judge_change: JudgeChange | None = None  # a judged metric not compared across judges
    dropped: tuple[str, ...] = ()  # the questions that got worse, when compared
    corpus: CorpusChange | None = None  # how the corpus differs from the baseline's
    margin: MarginCheck | None = None  # the change held to `[regression] max_drop`, if given

    @property
    def message(self) -> str:
        """What the check says, written (wording/said.py)."""
        return render(self.said)

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline


@dataclass(frozen=True, kw_only=True)
class RunJudge:
    """This run's judge: as its rows name it (`judge_id`), the `--ragate-judge` spec that
    configured it, and the judge `--ragate-accept-judge` accepts, when given."""

    names: tuple[str, ...] = ()  # () when no row was judged: then no change can be
    spec: str | None = None
    accept: str | None = None

    def is_named(self, value: str) -> bool:
        """Whether `value` names this run's judge: its id, its spec, or a RAGAS judge's model
        with or without its sampling parameters (`ragas:MODEL`, `ragas:MODEL@temperature=0`)."""
        model = _model(value)
        return value == self.spec or any(value == n or (model is not None and model == _model(n))
                                         for n in self.names)


def _model(judge: str) -> str | None:
    """A RAGAS judge's `ragas:MODEL`, its sampling parameters left out; None for others."""
    return judge.partition("@")[0] if judge.startswith("ragas:") else None


@dataclass(frozen=True, kw_only=True)
class JudgeChange:
    """The baseline graded by one judge, this run by another, and what the run said of it."""

    baseline: tuple[str, ...]
    current: tuple[str, ...]
    call: ChangeCall
    accept: str | None = None  # what --ragate-accept-judge said
    spec: str | None = None  # the candidate as `--ragate-judge` (and `ragate rejudge`) spell it
    results: str | None = None  # the baseline's results file, when it is one


# --- checking ----------------------------------------------------------------------------------


def judge_change(base: BaselineRun, judge: RunJudge) -> JudgeChange | None:
    """The change of judge between the baseline and this run; None when both were graded by
    the same judges, or either by none (a mechanical baseline, or a run no judge graded)."""
    if not base.judges or not judge.names or set(base.judges) == set(judge.names):
        return None
    return JudgeChange(baseline=base.judges, current=judge.names, accept=judge.accept,
                       call=change_call(judge), spec=judge.spec, results=base.results)


def change_call(judge: RunJudge) -> ChangeCall:
    """The rule across a judge change: refused (fails) unless the run accepts this run's
    judge by name; a flag naming another judge accepts nothing (fails too)."""
    if judge.accept is None:
        return "refused"
    return "accepted" if judge.is_named(judge.accept) else "misnamed"


def check_run(goldset: str, eval_version: str, current: Mapping[str, QuestionScores],
              baseline: Sequence[BaselineRun], *, alpha: float, min_n: int,
              judge: RunJudge = RunJudge(), corpus: Mapping[str, str] | None = None,
              evidence_docs: Mapping[str, Sequence[str]] | None = None,
              margins: Margins | None = None) -> list[Regression]:
    """One check per metric of this run, against the goldset's last baseline run of the same
    eval_version; a judged metric across a judge change is not compared (`across_judges`).
    When `corpus` (each document's digest) differs from the baseline's, every check says so,
    and a failed one names the questions that got worse whose evidence documents
    (`evidence_docs`) changed: possibly the corpus, not the system. A metric `margins`
    names is held to its margin (`check`)."""
    metrics = scored_metrics(current.values())
    same = [b for b in baseline if b.goldset == goldset]
    chosen = next((b for b in reversed(same) if b.eval_version == eval_version), None)
    if chosen is None or not chosen.scores:
        why = said(Topic.NO_BASELINE, goldset, eval_version, tuple(same), chosen)
        return [Regression(goldset=goldset, metric=m, test=paired_test(m), outcome="skipped",
                           said=why) for m in metrics]
    change = judge_change(chosen, judge)
    found = [across_judges(goldset, m, change, chosen.source)
             if change is not None and METRICS[m].judged
             else check(goldset, m, chosen.scores, current, alpha=alpha, min_n=min_n,
                        source=chosen.source, margins=margins) for m in metrics]
    edited = corpus_change(chosen.corpus, corpus)
    if edited is None:
        return found
    return [replace(g, corpus=edited, said=said(Topic.JOINED, g.said, said(
        Topic.CORPUS_NOTE, edited,
        [u for u in g.dropped if _evidence_of(u, current, evidence_docs or {})
         & edited.documents] if g.outcome == "failed" else []))) for g in found]


def _evidence_of(unit: str, current: Mapping[str, QuestionScores],
                 evidence_docs: Mapping[str, Sequence[str]]) -> set[str]:
    """The evidence documents of a unit that got worse: a question's, or every turn's of a
    conversation (the unit a goldset of conversations is paired by)."""
    return {doc for q, scores in current.items() if unit in (q, scores.conversation)
            for doc in evidence_docs.get(q, ())}


def across_judges(goldset: str, metric: str, change: JudgeChange, source: str) -> Regression:
    """A judged metric across a judge change: failed (fail closed) unless the change is
    accepted, then skipped; never compared, since the comparison would measure the judges."""
    return Regression(goldset=goldset, metric=metric, test=paired_test(metric),
                      outcome="skipped" if change.call == "accepted" else "failed",
                      said=said(Topic.JUDGE_CHANGED, metric, change, source),
                      judge_change=change)


def call_of(compared: Compared, pairs: int, *, min_n: int) -> RegressionCall:
    """The check's rule: refused on fewer paired questions than `ragate_min_n`; a drop fails
    only when it is significant; any other change passes, with its p-value."""
    if min_n and pairs < min_n:
        return "refused"
    return "dropped" if compared.now < compared.then and compared.significant else "held"


def margin_test(held: MarginCheck) -> str:
    """The test of a check held to a margin, as the reports' `test` column names it (as
    MCNEMAR and BOOTSTRAP name theirs)."""
    return f"non-inferiority, max_drop {held.margin:g}"


def check(goldset: str, metric: str, base: Mapping[str, QuestionScores],
          current: Mapping[str, QuestionScores], *, alpha: float, min_n: int = 0,
          source: str = "the baseline", margins: Margins | None = None) -> Regression:
    """This run against the baseline on the questions both scored (skipped ones are out;
    errored ones count as wrong, as in the floors); held to its margin when `margins` gives
    the metric one (and ragate_min_n does not refuse it)."""
    paired = pair(metric, base, current)
    # a goldset of conversations pairs whole conversations: the paired bootstrap over them
    test = BOOTSTRAP if paired.by_conversation else paired_test(metric)
    if not paired.questions:
        why: NotCompared = "no units" if paired.compared and test == BOOTSTRAP else "no pairs"
        return Regression(goldset=goldset, metric=metric, test=test, outcome="skipped",
                          said=said(Topic.NOT_COMPARED, metric, why, paired, source))
    compared = mcnemar_of(paired, alpha) if test == MCNEMAR else bootstrap_of(paired, alpha)
    if compared is None:
        return Regression(goldset=goldset, metric=metric, test=test, outcome="skipped",
                          said=said(Topic.NOT_COMPARED, metric, "no units", paired, source),
                          pairs=paired.questions)
    call = call_of(compared, paired.questions, min_n=min_n)
    if margins is not None and metric in margins.max_drop and call != "refused":
        held = check_margin(paired, base, current, metric=metric, alpha=alpha,
                            margin=margins.max_drop[metric], inconclusive=margins.inconclusive)
        # its test is the margin's (no p-value of a significance test decides it)
        return Regression(goldset=goldset, metric=metric, test=margin_test(held),
                          outcome="passed" if held.passed else "failed",
                          said=said(Topic.MARGIN_REGRESSION, metric, paired, compared, held,
                                    alpha=alpha, source=source),
                          pairs=paired.questions, baseline=compared.then,
                          current=compared.now, dropped=tuple(paired.dropped), margin=held)
    return Regression(goldset=goldset, metric=metric, test=test,
                      outcome="passed" if call == "held" else "failed",
                      said=said(Topic.REGRESSION, metric, test, paired, compared, call,
                                alpha=alpha, min_n=min_n, source=source),
                      pairs=paired.questions, baseline=compared.then, current=compared.now,
                      p_value=compared.p_value, detects=compared.detects,
                      dropped=tuple(paired.dropped))
