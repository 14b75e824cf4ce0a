"""A floor as a goldset declares it: a metric, its bound, and the population it is over
(every question, one kind, one slice of a tag, or the anchors of a kind); its identity
(`label`, and the item name `name` built from it, the one place either is formatted); and which
members of a population count in it (`counts_in`). What a floor decides is decision/'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass

from pytest_ragate.scoring.registry import METRICS

KIND_SLICE = "kind"  # the slice key every question has: its kind (no tag may be named so)
# the slice key a conversation's turn has: its position, "1" or "later" (`[floors.turn.1]`)
TURN_SLICE = "turn"
TURN_POSITIONS = ("1", "later")


def turn_position(turn: int) -> str:
    """A turn's position as its slice says it: the first turn, or a later one."""
    return "1" if turn == 1 else "later"


@dataclass(frozen=True)
class Floor:
    """A dataset-level gate: `metric` over questions (of `kind`, when set) must reach `min`,
    or, for an upper-bound floor (`{max = 0.05}`, `upper`), stay at or below it: `min` is
    then the bound from above."""

    metric: str
    min: float
    _: KW_ONLY  # what else a floor says, by name: `Floor("recall", 0.8, kind="single_doc")`
    kind: str | None = None
    xfail: str | None = None
    anchors: bool = False  # over the anchors of `kind` instead of questions
    upper: bool = False  # `{max = …}`: the figure must not exceed `min`
    # over the questions whose tag `key` (or, for the key "kind", whose kind) is `value`:
    # one slice of a key's family, decided with the others (decision/slice_floors.py)
    slice: tuple[str, str] | None = None

    @property
    def label(self) -> str:
        """What the floor is, as every output names it: `evidence_recall`,
        `single_doc:evidence_recall`, `lang=de:faithfulness`, `anchors:retrieval_miss:hold_rate`
        (its history key, its table row; never parsed back)."""
        if self.anchors:
            return f"anchors:{self.kind}:{self.metric}"
        if self.slice:
            return f"{self.slice[0]}={self.slice[1]}:{self.metric}"
        return f"{self.kind}:{self.metric}" if self.kind else self.metric

    @property
    def name(self) -> str:
        """Its item's name: `floor[single_doc:evidence_recall]`."""
        return floor_name(self.label)

    @property
    def judged(self) -> bool:
        return METRICS[self.metric].judged


def floor_name(label: str) -> str:
    """A floor's item name (and its member in a history line's flips) from its `label`."""
    return f"floor[{label}]"


def slice_value(key: str, kind: str, tags: Mapping[str, str] | None) -> str | None:
    """A question's value of a slice key: its kind for "kind", else its tag (None: untagged)."""
    return kind if key == KIND_SLICE else (tags or {}).get(key)


def counts_in(floor: Floor, kind: str, tags: Mapping[str, str] | None) -> bool:
    """Whether a question of this kind and tags is in the floor's population: every one, or
    those of its kind, or those of its slice."""
    return ((floor.kind is None or kind == floor.kind)
            and (floor.slice is None or slice_value(floor.slice[0], kind, tags)
                 == floor.slice[1]))


def quantile_shortfall(floor: Floor, answers: int) -> int | None:
    """The answers a latency quantile floor's 95% upper bound needs (Conover's order
    statistics, `stats.quantile_needs`: 59 for a 95th percentile) when it is over fewer
    `answers` (its questions times their repeats): it can never be decided. None for any
    other floor, or when the answers are enough. `ragate validate`'s warning and
    `ragate audit`'s finding both ask this."""
    if METRICS[floor.metric].aggregate != "quantile":
        return None
    from pytest_ragate.scoring.registry import latency_quantile
    from pytest_ragate.scoring.stats import quantile_needs

    needs = quantile_needs(latency_quantile(floor.metric))
    return needs if answers < needs else None
