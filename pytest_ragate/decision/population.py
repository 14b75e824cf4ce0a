"""Everything that crosses from a worker to the controller, as typed models of plain JSON
types: the collection (`Collected`: the floors kept after selection and the whole population
of every goldset), sent in `workeroutput`, and, riding on test reports, each question's
record and each anchor's outcome (`scoring.metrics.QuestionRecord` and `AnchorOutcome`: the
rows of the results too). The names they travel under are `keys.py`'s `WORKEROUTPUT_KEY`,
`RECORD_ATTR` and `ANCHOR_ATTR`, which the plugin reads on every report without loading this
module.

Under xdist each worker collects every item, so any worker's `Collected` describes the run;
the controller takes the first that arrives (`pytest_testnodedown`). Without xdist the one
process builds it itself. Either way the controller knows, before deciding a floor, every
question and anchor that floor is decided over, so a result that never arrives is a gap, not
a smaller n.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from pytest_ragate.scoring.gates import Floor


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FloorSpec(_Wire):
    """A collected floor: which test case reports it and what it gates (its verdict is the
    controller's, `gates.Verdict`, decided once every result is in)."""

    nodeid: str
    location: tuple[str, int | None, str]
    route: str
    goldset: str
    eval_version: str
    floor: Floor
    keywords: list[str]
    config_path: str | None = None  # the ragate.toml that declares it; None: @ragate.floor


class Member(_Wire):
    """One question of a goldset (one repeat of it, when asked more than once), collected;
    `nodeid` is None when it was deselected."""

    question_id: str
    repeat: int = 1
    name: str = ""  # `q07[r2]` with repeats: how a gap names it; the question id when once
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


class LabelSpec(_Wire):
    """One human label of a judged metric (goldsets/labels.py): a verdict 0/1 or a score."""

    question_id: str
    metric: str
    value: float
    binary: bool
    answer_sha256: str | None = None  # the answer it was written for, when stamped


class Population(_Wire):
    """Every question (and anchor) of one goldset as one route collected it: the file route
    (`route` is the ragate.toml node id) or a `@ragate.goldset` test (its node id)."""

    route: str
    goldset: str
    eval_version: str
    sha256: str | None = None  # the goldset's content digest (`Goldset.content_sha256`)
    questions: list[Member]  # every question once per repeat
    anchors: list[AnchorMember]
    repeats: int = 1  # how many times each question is asked
    checks_anchors: bool = True  # False for a @ragate.goldset test: anchors are the file route's
    labels: list[LabelSpec] = []  # the goldset's human labels ([judge] labels)
    agreement_min: float | None = None  # judge_agreement: judged floors need it to hold
    estimate: Literal["judge", "ppi"] = "judge"  # what judged floors are decided on
    # the judge configured for the run (`--ragate-judge`), whether or not a question reached
    # it; and where the route's own `ragate_judge` fixture is defined, when a user overrides
    # it (what that gives is known only from a question that asked it)
    judge: str | None = None
    judge_fixture: str | None = None


class Collected(_Wire):
    floors: list[FloorSpec]
    populations: list[Population]
