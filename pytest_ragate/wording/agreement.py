"""What a judge's agreement with the labels says: its figure and line, and why it does not
vouch for the judge (`decision/agreement_floor.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ragate.decision.agreement_floor import uncalibrated
from pytest_ragate.decision.said import render
from pytest_ragate.scoring.ppi import MIN_LABELS
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.wording.numbers import NAMED_MISSING, fmt_interval, plural

if TYPE_CHECKING:
    from pytest_ragate.decision.agreement_floor import Shortfall
    from pytest_ragate.scoring.agreement import Agreement
    from pytest_ragate.scoring.floor import Floor


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
    text += f" on {plural(a.n, 'labelled question')}"
    if a.missing:
        shown = fmt_some([f"{q} ({why})" for q, why in a.missing], NAMED_MISSING, "; ")
        text += f"; {len(a.missing)} labelled without a verdict: {shown}"
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


def not_calibrated_lines(shortfalls: Sequence[tuple[Agreement, Shortfall]], floor: float,
                         strict: bool) -> str:
    """Why the labels do not vouch for the judge (`agreement_floor.uncalibrated`): each
    labelled metric's shortfall, or that no labelled question has a verdict."""
    if not shortfalls:
        return no_labelled_verdict(floor)
    return "; ".join(not_calibrated_line(a, why, floor, strict) for a, why in shortfalls)


def rubric_not_calibrated(rubric: str, a: Agreement | None, floor: float | None,
                          needed: int, *, strict: bool, shortfall: Shortfall | None) -> str:
    """Why a rubric's floor is not decided (`agreement_floor.on_rubric`): `not decided: the
    judge is not calibrated on rubric polite: it needs 10 human labels of polite, has 3`."""
    head = f"not decided: the judge is not calibrated on rubric {rubric}"
    labels = f"human labels of {rubric} in the labels file ([judge] labels)"
    if floor is None:
        return (f"{head}: the goldset sets no judge_agreement floor for it to reach: add "
                f"[floors] judge_agreement (e.g. 0.6) and at least {needed} {labels}")
    if a is None or not a.labelled:
        return f"{head}: it needs at least {needed} {labels}, and has none"
    if a.labelled < needed:
        return (f"{head}: it needs at least {needed} {labels}, and has {a.labelled} "
                f"({needed - a.labelled} more)")
    if shortfall is None:  # a rubric's own agreement holds: another reason not to decide
        return head
    return f"{head}: " + not_calibrated_line(a, shortfall, floor, strict).removeprefix(
        "judge not calibrated: ")


def not_calibrated(agreements: Sequence[Agreement], floor: float, strict: bool) -> str | None:
    """Why the judged floors of a goldset cannot pass, or None when every labelled metric's
    agreement reaches `judge_agreement`: `judge not calibrated: kappa 0.41 [0.20, 0.61] <
    0.60 on 40 labelled questions (faithfulness)`."""
    why = uncalibrated(agreements, floor, strict)
    return None if why is None else render(why)


def not_calibrated_line(a: Agreement, shortfall: Shortfall, floor: float, strict: bool) -> str:
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
            f"{plural(a.n, 'labelled question')} ({a.metric})")


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
