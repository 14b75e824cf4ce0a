"""What sequential asking says (`--ragate-sequential`, `decision/sequential.py`): why a run
cannot be asked sequentially, the order's seed, why a goldset asked every question (a stop's
re-check that refused it among them, `decision/drift.py`), what a re-check that held found, a
floor decided before the last one, and the skip of a question its goldset no longer needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ragate.scoring.gap_bound import FEWEST, GAPS, least_gaps
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.sign_flip import DRIFT_MISS, DRIFT_SHARE
from pytest_ragate.wording.numbers import fmt_interval
from pytest_ragate.wording.settings import standing_knob

if TYPE_CHECKING:
    from pytest_ragate.decision.sequential import Halt
    from pytest_ragate.scoring.floor import Floor
    from pytest_ragate.scoring.sign_flip import FloorDrift
    from pytest_ragate.scoring.stopping import Stuck


# --- sequential asking (`--ragate-sequential`) ------------------------------------------------

NOT_NEEDED = "not needed"  # how a question a decided goldset did not ask is skipped


def not_needed(asked: int, of: int) -> str:
    """The skip reason of a question its goldset no longer needed."""
    return f"{NOT_NEEDED}: every floor decided after {asked} of {of} questions"


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


def pinned_seed(where: str) -> str:
    """A seed given where every run reads it (`settings.standing`: the ini file, addopts,
    PYTEST_ADDOPTS)."""
    return (f"{standing_knob('sequential_seed', where)} would ask every run's questions in "
            "one order known in advance, and a system tuned on the questions asked first can "
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


def stopped_verdict(floor: Floor, value: float | None, interval: tuple[float, float] | None,
                    holds: bool, *, asked: int, of: int, units: int, alpha: float) -> str:
    """A stopped floor's message (`stopped_against`), after its xfail reason when it has one."""
    text = stopped_against(floor, value, interval, holds, asked=asked, of=of, units=units,
                           alpha=alpha)
    return f"{floor.xfail}: {text}" if floor.xfail else text


EXCHANGEABLE = "assumes a question's answer does not depend on when it is asked"


def sequential_part(*, skipped: int, asked: int, seed: int, alpha: float, stopped: bool,
                    why: Halt | None, drifts: Sequence[FloorDrift] = (),
                    gaps: float = GAPS) -> str:
    """What a sequential goldset's coverage line adds: how many questions it did not need,
    the share of them without a result it bounded (`gaps`, `sequential_gaps`), what asking
    them again found (`drifts`), and the assumption its guarantee rests on; or why it asked
    them all."""
    if stopped:
        return (f"{skipped} not needed (sequential, seed {seed}: every floor decided after "
                f"{asked}, and {gaps_below(gaps)}; {answers_held(drifts)}; chance of a "
                f"decision other than asking all ≤ {alpha:.4g}, which {EXCHANGEABLE})")
    return (f"every question asked (sequential, seed {seed}: "
            f"{halt_line(why) if why else 'a floor was undecided until the last question'})")


def halt_line(halt: Halt) -> str:
    """Why a sequential goldset asked every question (`decision/sequential.Halt`)."""
    if halt.kind == "unfit":
        return not_sequential(halt.names)
    if halt.kind == "never came":
        return never_came(halt.names[0])
    if halt.kind == "not left unasked":
        return asked_before_the_stop(halt.asked)
    if halt.kind == "not scored":
        return halted_on(halt.names[0], halt.status)
    if halt.kind == "stuck" and halt.stuck is not None:
        return stuck(halt.stuck)
    if halt.kind == "gaps unbounded":
        return gaps_unbounded(halt.rate, halt.of)
    return _recheck_line(halt) or undecided(halt.names)


def _recheck_line(halt: Halt) -> str | None:
    """Why a stop's re-check (`decision/drift.py`) refused it, or None for another halt."""
    if halt.kind == "recheck costs":
        return recheck_costs(halt.asked, halt.of)
    if halt.kind == "reask failed":
        return reask_failed(halt.names[0], halt.status)
    if halt.kind == "reask uncounted":
        return reask_uncounted(halt.names[0], halt.metric)
    if halt.kind == "reask never came":
        return reask_never_came(halt.names[0])
    if halt.kind == "answers changed":
        return answers_changed(halt.asked, halt.drifts)
    return None


def recheck_costs(asked: int, of: int) -> str:
    return (f"every floor decided and the questions not asked bounded after {asked}, but "
            f"asking a sample of them again to check the stop would cost as much as the "
            f"{of - asked} left: every question was asked")


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
    return (f"a sample of those questions asked again answered as before within their "
            f"flakiness ({asked} re-asked, enough to catch a change in {DRIFT_SHARE:.0%} of "
            f"their answers with chance ≥ {1 - DRIFT_MISS:.0%}{'; ' + moved if moved else ''})")


def answers_changed(asked: int, changed: Sequence[FloorDrift]) -> str:
    """A stop refused: its questions asked again answered otherwise, more than flakiness
    explains (the paired sign-flip test, decision/drift.py)."""
    moved = "; ".join(f"{d.floor}: {d.toward} of {d.pairs} answers moved toward the floor, "
                      f"{d.away} away (sign-flip p = {d.p:.2g} ≤ {d.level:.4g})"
                      for d in changed)
    return (f"every floor decided after {asked}, but the answers changed when asked again "
            f"({moved}): the system's answers depend on when it is asked, so every question "
            "was asked")


def stuck(why: Stuck) -> str:
    """A floor's test that could not be fed (`scoring/stopping.Stuck`)."""
    given = "value" if METRICS[why.metric].source == "custom" else "verdict"
    what = ("answer unsure, not labelled" if why.unsure
            else f"no {given} of {why.metric}" if why.units is None
            else f"{why.units} units of {why.metric}, more than {why.bound}")
    return f"{why.question_id}: {what}: every floor decided over every question"


def gaps_below(rate: float) -> str:
    """What a stop proved of the questions it did not ask (`scoring/gap_bound.py`)."""
    return (f"fewer than {rate:.4g} of the questions not asked without a result "
            f"(sequential_gaps = {rate:.4g}: errors, unsure answers not labelled)")


def gaps_unbounded(rate: float, units: int = 0) -> str:
    """Every floor decided, but the bound on the questions not asked was not proved: too few
    asked, or (`units`, the goldset's) a goldset too small for a share (`gap_bound.FEWEST`)."""
    tolerated = least_gaps(units, rate) - 1 if units else 0
    if units and tolerated < FEWEST - 1:
        return (f"every floor decided, but {units} questions are too few to stop on a share: "
                f"sequential_gaps = {rate:.4g} of them is {tolerated} without a result, and a "
                f"stop needs that to be {FEWEST - 1} or more: every question was asked, and "
                "every floor decided over all of them")
    return (f"every floor decided, but the questions asked were too few to show that fewer "
            f"than {rate:.4g} of the rest lack a result (sequential_gaps = {rate:.4g}): "
            "every question was asked, and every floor decided over all of them")


def undecided(floors: Sequence[str]) -> str:
    return (f"{', '.join(floors) or 'a floor'} undecided until the last question: decided "
            "over every question")
