"""What a check against the baseline says (`decision/regressions.py`): no baseline to compare
with, nothing to compare, the paired test against alpha, a judge change refused or
accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ragate.redaction import redact_credentials
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.stats import MCNEMAR
from pytest_ragate.wording.numbers import NAMED_WORSE, plural
from pytest_ragate.wording.settings import standing_knob

if TYPE_CHECKING:
    from pytest_ragate.decision.margins import MarginCheck
    from pytest_ragate.decision.regressions import JudgeChange, RegressionCall
    from pytest_ragate.scoring.pairing import BaselineRun, Compared, NotCompared, Paired


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


def not_compared_metric(name: str) -> str:
    """A `[regression] max_drop` key that names no metric a baseline check compares."""
    compared = [m for m, info in METRICS.items() if info.regression is not None]
    close = [m for m in METRICS.close_to(name) if m in compared]
    return (f"{name!r} is not a metric the baseline check compares"
            + (f": did you mean {' or '.join(close)}?" if close else "")
            + f" (compared: {', '.join(compared)})")

def _paired_tail(unpaired: int, source: str) -> str:
    aside = (f"; {plural(unpaired, 'question')} in only one run or skipped, not paired"
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


def paired_units(paired: Paired) -> str:
    """What a check paired: `12 paired questions`, `5 paired conversations`, or with
    questions asked alone beside conversations `5 paired conversations and 30 questions`
    (a question alone is no conversation)."""
    if not paired.by_conversation:
        return f"{paired.questions} paired questions"
    alone = paired.questions - paired.conversations
    return (f"{paired.conversations} paired conversation{'s' * (paired.conversations != 1)}"
            + (f" and {plural(alone, 'question')}" if alone > 0 else ""))


def regression(metric: str, test: str, paired: Paired, compared: Compared,
               call: RegressionCall, *, alpha: float, min_n: int, source: str) -> str:
    """A decided check: the metric then and now over the paired questions, the test and its
    p-value against α; a refusal under `ragate_min_n`; a drop names who got worse."""
    c = compared
    detail = (f"{test}: {c.worse} right→wrong, {c.better} wrong→right of {c.units} "
              f"{METRICS[metric].unit}" if test == MCNEMAR else test)
    units = paired_units(paired)
    figures = (f"{metric} {c.then:.2f} → {c.now:.2f} over {units} "
               f"({detail}, p = {c.p_value:.3g}")
    tail = _paired_tail(paired.unpaired, source)
    if call == "refused":
        return (f"refusing to gate: {figures}); {units} are fewer than ragate_min_n = "
                f"{min_n}{tail}")
    if call == "dropped":
        went = "right→wrong" if test == MCNEMAR else "worse"
        return (f"significant drop: {figures} < α {alpha:g}){tail}"
                + (f" · {went}: {fmt_some(paired.dropped, NAMED_WORSE)}" if paired.dropped
                   else ""))
    word = ("no change" if c.now == c.then else
            ("significant rise" if c.significant else "not significant") if c.now > c.then
            else "drop not significant")
    return f"{word}: {figures} {'<' if c.significant else '≥'} α {alpha:g}){tail}"



def margin_regression(metric: str, paired: Paired, compared: Compared, held: MarginCheck, *,
                      alpha: float, source: str) -> str:
    """A check held to `[regression] max_drop`: the metric then and now, the change's
    one-sided bounds against −margin, and the call: no worse than the margin, worse (naming
    who got worse), or not decided with about how many more questions would decide."""
    units = paired_units(paired)
    clusters = "conversations" if paired.by_conversation else "questions"
    level = f"{1 - alpha:.0%}"
    figures = f"{metric} {compared.then:.2f} → {compared.now:.2f} over {units}"
    edge = f"-{held.margin:g} = -max_drop"
    tail = _paired_tail(paired.unpaired, source)
    b = held.bounds
    if b is None:
        return (f"not decided: {figures}: a margin needs at least 2 paired {clusters}"
                + _opted(held) + tail)
    change = f"change {b.change:+.3f}"
    if held.call == "non-inferior":
        return (f"no worse than the margin: {figures} ({change}, {level} lower bound "
                f"{b.lower:+.3f} > {edge}){tail}")
    if held.call == "worse":
        went = "got worse"
        return (f"worse than the margin: {figures} ({change}, {level} upper bound "
                f"{b.upper:+.3f} < {edge}){tail}"
                + (f" · {went}: {fmt_some(paired.dropped, NAMED_WORSE)}" if paired.dropped
                   else ""))
    more = (f"about {max(held.more, 1)} more {clusters[:-1] + 's' * (held.more > 1)} "
            "would decide" if held.more is not None
            else f"no number of {clusters} decides a change on the margin")
    return (f"not decided: {figures} ({change}, {level} bounds {b.lower:+.3f} to "
            f"{b.upper:+.3f} straddle {edge}): {more}" + _opted(held) + tail)


def _opted(held: MarginCheck) -> str:
    """What an undecided check does: fails, or passes because the goldset says so."""
    return (" · passes: [regression] inconclusive = \"pass\"" if held.inconclusive == "pass"
            else "")


# --- a baseline across a judge change (`--ragate-accept-judge`, decision/regressions.py) -----


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
        return (f"{metric}: not compared: judge change accepted (--ragate-accept-judge "
                f"{accept}): {what}; comparing across judges measures the judges, not "
                "the system")
    rejudge = (f"`ragate rejudge {change.results or 'RESULTS'} --judge {spec}`"
               + ("" if change.results else " on the baseline run's results file"))
    head = (f"--ragate-accept-judge {accept} names another judge than this run's: "
            if change.call == "misnamed" else "")
    return (f"{head}{metric} not compared across judges: {what}; a judge change is a gate "
            f"decision, not a regression of the system: run {rejudge} to see what it moves, "
            f"and accept it with --ragate-accept-judge {named}")


def accept_judge_unneeded(accept: str) -> str:
    """`--ragate-accept-judge` in a run whose baseline was graded by the same judge."""
    return (f"ragate: --ragate-accept-judge {_judges([accept])} was not needed: no judged "
            "check changed judge against the baseline")


def accept_judge_standing(where: str) -> str:
    """`ragate_accept_judge` given where every run reads it (`settings.standing`)."""
    return (f"{standing_knob('accept_judge', where)} would accept every future judge change "
            "silently, and a judge change is a gate decision of one run: give "
            "--ragate-accept-judge JUDGE on the command line of the run that makes it")


ACCEPT_JUDGE_WITHOUT_BASELINE = ("--ragate-accept-judge accepts a judge change against a "
                                 "baseline: give --ragate-baseline too")


def accept_judge_misnamed(accept: str, ran: Sequence[str]) -> str:
    """`--ragate-accept-judge` naming another judge than the one configured for this run."""
    return (f"--ragate-accept-judge {_judges([accept])} names another judge than this run's: "
            f"this run is judged by {_judges(ran)}")


def repeats_unpaired(message: str) -> str:
    """A check of a run with repeats: its first repeat of each question was paired."""
    return f"{message} · repeat 1 of each question paired: repeats are not pairs of their own"
