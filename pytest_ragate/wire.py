"""What the collecting process tells the controller: the floors it kept after selection and
the whole population of every goldset it collected, as typed models of plain JSON types.

Under xdist each worker collects every item, so any worker's message describes the run; the
controller takes the first that arrives (`pytest_testnodedown`). Without xdist the one process
builds it itself. Either way the controller knows, before deciding a floor, every question and
anchor that floor is decided over, so a result that never arrives is a gap, not a smaller n.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pytest_ragate.goldset import Floor

WORKEROUTPUT_KEY = "ragate_collected"  # the key of `config.workeroutput` that carries it


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FloorSpec(_Wire):
    """A collected floor: which test case reports it and what it gates."""

    nodeid: str
    location: tuple[str, int | None, str]
    route: str
    goldset: str
    eval_version: str
    metric: str
    min: float
    kind: str | None = None
    xfail: str | None = None
    anchors: bool = False
    keywords: list[str]
    config_path: str | None = None  # the ragate.toml that declares it; None: @ragate.floor

    @property
    def floor(self) -> Floor:
        return Floor(self.metric, self.min, self.kind, self.xfail, self.anchors)


class Member(_Wire):
    """One question of a goldset, collected; `nodeid` is None when it was deselected."""

    question_id: str
    question: str
    kind: str
    index: int
    nodeid: str | None
    sealed: bool  # expected answers sealed and no key: it cannot be scored
    must_abstain: bool
    evidence_spans: int
    expected: list[str] | None = None  # expected span labels, as on its results row


class AnchorMember(_Wire):
    anchor_id: str
    kind: str
    nodeid: str | None


class Population(_Wire):
    """Every question (and anchor) of one goldset as one route collected it: the file route
    (`route` is the ragate.toml node id) or a `@ragate.goldset` test (its node id)."""

    route: str
    goldset: str
    eval_version: str
    questions: list[Member]
    anchors: list[AnchorMember]
    checks_anchors: bool = True  # False for a @ragate.goldset test: anchors are the file route's


class Collected(_Wire):
    floors: list[FloorSpec]
    populations: list[Population]
