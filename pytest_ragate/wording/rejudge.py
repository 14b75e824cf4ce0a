"""What `ragate rejudge` says of a candidate judge held to the current one
(`decision/rejudge.py`): why the change moves the gate, and its last line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.wording.numbers import NAMED, fmt_p, plural

if TYPE_CHECKING:
    from pytest_ragate.decision.rejudge import Comparison, FloorChange, ReasonKind
    from pytest_ragate.scoring.rejudge import Shift


def changes(c: Comparison) -> list[str]:
    """Why the comparison says the judge change is a gate decision, one line a reason."""
    return [reason_line(kind, about, c.alpha) for kind, about in c.reasons]


def reason_line(kind: ReasonKind, about: FloorChange | Shift, alpha: float) -> str:
    if kind == "floor":
        f: FloorChange = about  # type: ignore[assignment]
        return floor_would_change(f.floor.name, f.current, f.candidate)
    s: Shift = about  # type: ignore[assignment]
    if kind == "shift":
        return shift_significant(s.name, s.shift, s.p_bootstrap, s.p_mcnemar, alpha)
    if kind == "unregraded":
        return not_regraded(s.name, s.unregraded)
    return not_graded_by_both(s.name)


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
    shown = fmt_some([f"{q} ({why})" for q, why in unregraded], NAMED, "; ")
    return (f"{name}: the candidate judge gave no verdict on {plural(len(unregraded), 'answer')}"
            f" the current judge graded: {shown}")


def judge_change_verdict(changes: Sequence[str], alpha: float) -> str:
    """The rejudge's last line: whether switching judges is a gate decision."""
    if changes:
        reasons = plural(len(changes), "reason")
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
