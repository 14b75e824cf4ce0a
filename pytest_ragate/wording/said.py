"""What a verdict says, written: every `Said` decision/ builds (`decision/said.py`) rendered by
its topic's function, after deciding, when a verdict's or a check's `message` is read; the
values it is said from that are Saids themselves written first. A long cause of a gap said
in full by the first floor that holds it, and referred to by the later ones (`said_once`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytest_ragate.decision.said import Said, Topic
from pytest_ragate.wording import agreement, baseline, floors, pass_rate, pins, sequential, slices
from pytest_ragate.wording.causes import CAUSE_WIDTH

if TYPE_CHECKING:
    from pytest_ragate.decision.floors import Gap


def said_once(index: int, texts: Sequence[str], names: Sequence[str],
              gaps: Sequence[Gap]) -> str:
    """The `index`th of a goldset's floor messages (`texts`, of the floors `names`, in order)
    with each long cause of a gap said in full by the first floor whose message holds it;
    every later floor refers to that one instead (`stale evidence software (said at
    floor[evidence_recall])`)."""
    causes = {why for gap in gaps for why in (gap.why, floors.cause(gap))
              if len(why) > CAUSE_WIDTH}
    said: dict[str, str] = {}
    message = ""
    for name, message in zip(names[:index + 1], texts[:index + 1], strict=True):
        for why in sorted(causes, key=len, reverse=True):  # a cause before its own parts
            if f"({why})" not in message:
                continue
            if why in said:
                message = message.replace(f"({why})", f"({floors.said_at(said[why])})")
            else:
                said[why] = name
    return message


RENDERERS: dict[Topic, Callable[..., str]] = {
    Topic.NEEDS_JUDGE: floors.needs_judge,
    Topic.NO_PPI: floors.no_ppi,
    Topic.PPI_UNVERDICTED: floors.ppi_unverdicted,
    Topic.PPI_TOO_FEW: floors.ppi_too_few,
    Topic.NOTHING_RAN: floors.nothing_ran,
    Topic.NOTHING_SCORED: floors.nothing_scored,
    Topic.JUDGE_UNREAD: floors.judge_unread,
    Topic.UNMEASURED: floors.unmeasured,
    Topic.TOO_FEW_FOR_BOUND: floors.too_few_for_bound,
    Topic.UNSURE_UNLABELLED: floors.unsure_unlabelled,
    Topic.INCOMPLETE: floors.incomplete,
    Topic.PARTIAL: floors.partial,
    Topic.AGAINST_FLOOR: floors.against_floor,
    Topic.ANCHORS_ELSEWHERE: lambda: floors.ANCHORS_ELSEWHERE,
    Topic.SAID_ONCE: said_once,
    Topic.AGREEMENT_LINES: agreement.agreement_lines,
    Topic.NOTHING_LABELLED: agreement.nothing_labelled,
    Topic.NOT_CALIBRATED: agreement.not_calibrated_lines,
    Topic.AGREEMENT_AGAINST_FLOOR: agreement.agreement_against_floor,
    Topic.SLICE_TOO_FEW: slices.slice_too_few,
    Topic.SLICE_DECIDED: slices.slice_decided,
    Topic.STOPPED_AGAINST: sequential.stopped_verdict,
    Topic.NO_BASELINE: baseline.no_baseline,
    Topic.NOT_COMPARED: baseline.not_compared,
    Topic.REGRESSION: baseline.regression,
    Topic.MARGIN_REGRESSION: baseline.margin_regression,
    Topic.JUDGE_CHANGED: baseline.judge_changed,
    Topic.CORPUS_NOTE: pins.corpus_note,
    Topic.REPEATS_UNPAIRED: baseline.repeats_unpaired,
    Topic.PASS_RATE: pass_rate.verdict,
    Topic.PASS_RATE_SHORT: pass_rate.not_decided_repeats,
    Topic.PASS_RATE_FEW_QUESTIONS: pass_rate.too_few_questions,
    Topic.METRIC_FAILED: floors.metric_failed,
    Topic.RUBRIC_NOT_CALIBRATED: agreement.rubric_not_calibrated,
    Topic.JOINED: lambda *texts: " · ".join(texts),
}


def _written(value: object) -> object:
    """A value as its topic's function takes it: a Said (or a tuple of them) written."""
    if isinstance(value, Said):
        return render(value)
    if isinstance(value, tuple) and any(isinstance(v, Said) for v in value):
        return tuple(_written(v) for v in value)
    return value


def render(said: Said) -> str:
    """What `said` says (written once: a verdict's message is read by every output)."""
    text = said.__dict__.get("_text")
    if text is None:
        text = RENDERERS[said.topic](*(_written(a) for a in said.args),
                                     **{k: _written(v) for k, v in said.options})
        object.__setattr__(said, "_text", text)
    return text
