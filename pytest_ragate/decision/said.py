"""What a verdict says, as a typed value (`Said`): its topic (one sentence of wording/ each)
and the values it is said from (floors, tallies, figures, gaps, agreements, pairs). decision/
builds these and imports nothing of wording/; wording/said.py renders them when a verdict's
`message` is read, after deciding. The package's root wires that renderer in (`wire`), so no
import runs from decision/ to wording/, and none from wording/ back but to read these types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto


class Topic(Enum):
    """One sentence a verdict or a check says (its renderer: wording/said.py's `RENDERERS`)."""

    NEEDS_JUDGE = auto()
    NO_PPI = auto()
    PPI_UNVERDICTED = auto()
    PPI_TOO_FEW = auto()
    NOTHING_RAN = auto()
    NOTHING_SCORED = auto()
    JUDGE_UNREAD = auto()
    UNMEASURED = auto()
    TOO_FEW_FOR_BOUND = auto()
    UNSURE_UNLABELLED = auto()
    INCOMPLETE = auto()
    PARTIAL = auto()
    AGAINST_FLOOR = auto()
    ANCHORS_ELSEWHERE = auto()
    SAID_ONCE = auto()
    AGREEMENT_LINES = auto()
    NOTHING_LABELLED = auto()
    NOT_CALIBRATED = auto()
    AGREEMENT_AGAINST_FLOOR = auto()
    SLICE_TOO_FEW = auto()
    SLICE_DECIDED = auto()
    STOPPED_AGAINST = auto()
    NO_BASELINE = auto()
    NOT_COMPARED = auto()
    REGRESSION = auto()
    MARGIN_REGRESSION = auto()
    JUDGE_CHANGED = auto()
    CORPUS_NOTE = auto()
    REPEATS_UNPAIRED = auto()
    PASS_RATE = auto()
    PASS_RATE_SHORT = auto()
    PASS_RATE_FEW_QUESTIONS = auto()
    METRIC_FAILED = auto()
    RUBRIC_NOT_CALIBRATED = auto()
    JOINED = auto()  # its values (each a Said or a text), joined by " · "


@dataclass(frozen=True, kw_only=True, eq=False)
class Said:
    """A sentence not yet written: its topic, and the values (`args`, `options` by name) it
    is written from; a value may be a Said itself, written first. Two are equal when they
    say the same (as two verdicts' messages were compared), a text included."""

    topic: Topic
    args: tuple[object, ...] = ()
    options: tuple[tuple[str, object], ...] = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Said | str):
            return render(self) == render(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(render(self))


def said(topic: Topic, *args: object, **options: object) -> Said:
    """`said(Topic.NEEDS_JUDGE, metric, unjudged)`: the sentence, to be written when read."""
    return Said(topic=topic, args=args, options=tuple(options.items()))


Renderer = Callable[[Said], str]
_renderer: list[Renderer] = []


def wire(renderer: Renderer) -> None:
    """Give the one renderer of every Said (the package's root gives wording/'s)."""
    _renderer[:] = [renderer]


def render(text: Said | str) -> str:
    """What `text` says: a Said written by the wired renderer, a text as it is."""
    if isinstance(text, str):
        return text
    if not _renderer:
        raise RuntimeError("no renderer wired for a verdict's message (pytest_ragate's root "
                           "wires wording/said.py)")
    return _renderer[0](text)
