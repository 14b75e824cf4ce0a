"""The population of a run: every question and anchor of each goldset a route collected, and
the one owner of what identifies them. Other modules ask it rather than rebuild it:

- **names**: how an item is named within its route (`question_name`: `q07`, `q07[r2]` with
  repeats; `anchor_name`: `anchor[a1]`), in item ids, gaps, results files, history lines and
  promotions;
- **the deal**: which shard asks each item (`deal`, `population_shards`), for the shard's
  selection (`modes/shard.py`), the results header's `deselected` and `ragate decide`'s
  "no result in shard i/N";
- **the base row**: what the goldset says of a question on its results row (`row_fields`),
  for the row of a question that was scored (`asked_row`) and the error row of one that
  crashed (`Population.row`), both built by the row's one constructor
  (`scoring.records.question_row`).

The population itself is a set of typed models of plain JSON types (`Collected`: the floors
kept after selection and the whole population of every goldset), sent from an xdist worker
in `workeroutput`; each question's record and each anchor's outcome ride on test reports
(`scoring.records.QuestionRecord` and `AnchorOutcome`: the rows of the results too). The names
they travel under are `items/keys.py`'s `WORKEROUTPUT_KEY`, `RECORD_ATTR` and `ANCHOR_ATTR`,
which the plugin reads on every report without loading this module.

Under xdist each worker collects every item, so any worker's `Collected` describes the run;
the controller takes the first that arrives (`pytest_testnodedown`). Without xdist the one
process builds it itself. Either way the controller knows, before deciding a floor, every
question and anchor that floor is decided over, so a result that never arrives is a gap, not
a smaller n.

Pure, as the rest of `decision/`: no pytest, and no goldsets either (they import this module
for names): what it needs of a goldset's question is spelled out as a protocol (`Asked`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from pytest_ragate.decision.margins import NO_MARGINS, Margins
from pytest_ragate.scoring.floor import KIND_SLICE, Floor
from pytest_ragate.scoring.gap_bound import GAPS
from pytest_ragate.scoring.records import QuestionRecord, question_row, repeat_name

# --- names -----------------------------------------------------------------------------------


def question_name(question_id: str, repeat: int, repeats: int) -> str:
    """How a question's item is named within its route: `q07`, or `q07[r2]` (the format of
    `scoring.records.repeat_name`) when the run asks it more than once."""
    return question_id if repeats == 1 else repeat_name(question_id, repeat)


def anchor_name(anchor_id: str) -> str:
    """How an anchor's item is named within its route, and its member in a history line."""
    return f"anchor[{anchor_id}]"


def again_name(name: str) -> str:
    """How a question asked again to check a sequential stop is named within its route
    (`q07[again]`; decision/drift.py)."""
    return f"{name}[again]"


# --- what the population needs of a goldset (goldsets/loader.py's Case and Goldset) ---------


class AskedGoldset(Protocol):
    """The goldset of a question, as its population and its row name it."""

    @property
    def name(self) -> str: ...
    @property
    def eval_version(self) -> str: ...
    @property
    def content_sha256(self) -> str: ...
    @property
    def corpus_digests(self) -> Mapping[str, str]: ...  # each document's digest, by id


class AskedQuestion(Protocol):
    """What the system is asked (goldsets/config.py's Question)."""

    @property
    def question_id(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def slices(self) -> Mapping[str, str]: ...  # its value of each slice key, its kind among them
    @property
    def conversation(self) -> str | None: ...  # the conversation it is a turn of
    @property
    def turn(self) -> int | None: ...  # its turn in it, from 1


class Spans(Protocol):
    """A question's expected answer: only how many evidence spans it has is read here."""

    @property
    def spans(self) -> Sequence[object]: ...


class Asked(Protocol):
    """One question of a goldset, once per repeat (goldsets/loader.py's Case)."""

    @property
    def goldset(self) -> AskedGoldset: ...
    @property
    def question(self) -> AskedQuestion: ...
    @property
    def index(self) -> int: ...
    @property
    def line(self) -> int: ...  # its line in the questions file
    @property
    def expected_line(self) -> int | None: ...  # its answer's line in the expected file
    @property
    def repeat(self) -> int: ...
    @property
    def repeats(self) -> int: ...
    @property
    def expected(self) -> Spans | None: ...  # None while the answers are sealed
    @property
    def must_abstain(self) -> bool: ...
    @property
    def expected_labels(self) -> list[str] | None: ...


def _name_of(case: Asked) -> str:
    return question_name(case.question.question_id, case.repeat, case.repeats)


class AskedAnchor(Protocol):
    """One anchor of a goldset (goldsets/anchors.py's Anchor)."""

    @property
    def anchor_id(self) -> str: ...
    @property
    def kind(self) -> str: ...


# --- the models --------------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FloorSpec(_Wire):
    """A collected floor: which test case reports it and what it gates (its verdict is the
    controller's, `floors.Verdict`, decided once every result is in)."""

    nodeid: str
    location: tuple[str, int | None, str]
    route: str
    # the node id its name follows (`path::`, `path::test_fn::`): where the goldset's
    # regression checks are reported, beside its floors
    beside: str = ""
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
    # the question's tags as slice keys (its kind is `kind`); an untagged question's member
    # (and row) has no `tags`, as before slices, nor `conversation` and `turn` outside one
    tags: dict[str, str] = Field({}, exclude_if=lambda value: not value)
    conversation: str | None = Field(None, exclude_if=lambda value: value is None)
    turn: int | None = Field(None, exclude_if=lambda value: value is None)
    index: int
    nodeid: str | None
    sealed: bool  # expected answers sealed and no key: it cannot be scored
    must_abstain: bool
    evidence_spans: int
    expected: list[str] | None = None  # expected span labels, as on its results row
    # where the goldset says it: its line in the questions file, its answer's in the expected
    # (or sealed) file; what a CI annotation points at (outputs/findings.py)
    line: int | None = None
    expected_line: int | None = None
    # the documents its expected evidence is in (none while sealed: a sealed goldset's
    # evidence is never shown), which a regression holds to a changed corpus
    evidence_docs: list[str] = []

    @classmethod
    def asked(cls, case: Asked, nodeid: str | None) -> Member:
        """A goldset's question (one repeat of it), run as `nodeid`."""
        fields = row_fields(case)
        expected = case.expected
        return cls(**fields, name=_name_of(case), nodeid=nodeid, sealed=expected is None,
                   line=case.line, expected_line=case.expected_line,
                   evidence_docs=sorted({getattr(s, "doc_id", "") for s in expected.spans})
                   if expected is not None and fields["expected"] is not None else [])

    @property
    def item_name(self) -> str:
        """How its item is named within the route (`question_name`)."""
        return self.name or self.question_id


def _tags(question: AskedQuestion) -> dict[str, str]:
    """A question's slices but its kind, which the member has as `kind`."""
    return {k: v for k, v in question.slices.items() if k != KIND_SLICE}


def row_fields(case: Asked) -> dict[str, Any]:
    """What the goldset says of a question (one repeat of it) on its results row: every
    field of its `Member` but `NOT_ON_THE_ROW`, as plain values (validated once, by the row)."""
    q, expected = case.question, case.expected
    return {"question_id": q.question_id, "repeat": case.repeat, "question": q.question,
            "kind": q.kind, "tags": _tags(q), "index": case.index,
            "conversation": q.conversation, "turn": q.turn,
            "must_abstain": case.must_abstain,
            "evidence_spans": len(expected.evidence) if expected is not None else 0,
            "expected": case.expected_labels}


# How a member was collected, not what its question is: every other field of a Member is a
# field of its results row (`row_fields`), so a field added to both reaches every row.
NOT_ON_THE_ROW = frozenset({"name", "nodeid", "sealed", "line", "expected_line",
                            "evidence_docs"})


class AnchorMember(_Wire):
    anchor_id: str
    kind: str
    nodeid: str | None

    @property
    def item_name(self) -> str:
        return anchor_name(self.anchor_id)


class LabelSpec(_Wire):
    """One human label of a judged metric (goldsets/labels.py): a verdict 0/1 or a score."""

    question_id: str
    metric: str
    value: float
    binary: bool
    answer_sha256: str | None = None  # the answer it was written for, when stamped


class SequentialPlan(_Wire):
    """How a sequential route is asked (`decision/sequential.py`): the seed of its order and
    the chance, for the whole goldset, that stopping early decides a floor otherwise than
    asking every question would, or that `gaps` or more of the questions it did not ask
    lack a result (`scoring/gap_bound.py`)."""

    seed: int
    alpha: float
    gaps: float = GAPS


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
    # judge_coverage (the goldset's, xfail or not): a judged floor's own verdicts must reach it
    coverage_min: float | None = None
    # judged metrics whose floors a run without a judge skips (the goldset's `[judge] optional`)
    judge_optional: list[str] = []
    estimate: Literal["judge", "ppi"] = "judge"  # what judged floors are decided on
    # the judge configured for the run (`--ragate-judge`), whether or not a question reached
    # it; and where the route's own `ragate_judge` fixture is defined, when a user overrides
    # it (what that gives is known only from a question that asked it)
    judge: str | None = None
    judge_fixture: str | None = None
    sequential: SequentialPlan | None = None  # asked in a seeded order, stopped once decided
    # the goldset's questions file and expected (or sealed) answers file, relative to the
    # rootdir: where its members' `line` and `expected_line` are
    questions_file: str | None = None
    expected_file: str | None = None
    corpus: dict[str, str] = {}  # each corpus document's digest, by id (Corpus.document_digests)
    # the goldset's `[regression]`: a margin per metric against the baseline, and what an
    # undecided check does (decision/margins.py)
    max_drop: dict[str, float] = {}
    inconclusive: Literal["fail", "pass"] = "fail"
    # the goldset's rubrics (`[rubrics]`): names the registry must know wherever its rows are
    # decided (an xdist controller, `ragate decide`), declared as the population is read
    rubrics: list[str] = []

    def model_post_init(self, context: object, /) -> None:
        """Its rubrics' names made known to the registry of the process that reads it."""
        if self.rubrics:
            from pytest_ragate.scoring.rubrics import declare

            declare(self.rubrics)

    @classmethod
    def of(cls, route: str, goldset: AskedGoldset, cases: Iterable[Asked],
           anchors: Iterable[AskedAnchor] | None, nodeids: Mapping[str, str], *,
           labels: Iterable[object] = (), repeats: int = 1,
           agreement_min: float | None = None, coverage_min: float | None = None,
           judge_optional: Iterable[str] = (), estimate: Literal["judge", "ppi"] = "judge",
           judge: str | None = None, judge_fixture: str | None = None,
           sequential: SequentialPlan | None = None,
           files: tuple[str | None, str | None] = (None, None),
           margins: Margins = NO_MARGINS, rubrics: Iterable[str] = ()) -> Population:
        """One route's population: each case (once per repeat) and anchor (None: a
        `@ragate.goldset` test, whose anchors are the file route's) with the node id it runs
        as, found by its item name in `nodeids` (absent: deselected); `labels` are the
        goldset's human labels (goldsets/labels.py's Label, read by field name)."""
        return cls(
            route=route, **stamp(goldset), repeats=repeats,
            questions=[Member.asked(c, nodeids.get(_name_of(c))) for c in cases],
            anchors=[AnchorMember(anchor_id=a.anchor_id, kind=a.kind,
                                  nodeid=nodeids.get(anchor_name(a.anchor_id)))
                     for a in anchors or ()],
            checks_anchors=anchors is not None,
            labels=[LabelSpec.model_validate(label, from_attributes=True) for label in labels],
            agreement_min=agreement_min, coverage_min=coverage_min,
            judge_optional=list(judge_optional), estimate=estimate, judge=judge,
            judge_fixture=judge_fixture, sequential=sequential, questions_file=files[0],
            expected_file=files[1], corpus=dict(goldset.corpus_digests),
            max_drop=dict(margins.max_drop), inconclusive=margins.inconclusive,
            rubrics=list(rubrics))

    @property
    def margins(self) -> Margins:
        """The goldset's margins against the baseline (`[regression]`)."""
        return Margins(max_drop=self.max_drop, inconclusive=self.inconclusive)

    def stamps(self, metric: str) -> dict[str, str]:
        """Question id → the answer its `metric` label was written for, where it is stamped."""
        return {x.question_id: x.answer_sha256 for x in self.labels
                if x.metric == metric and x.answer_sha256}

    def row(self, member: Member, **outcome: Any) -> QuestionRecord:
        """The results row of one of its questions (the error row of one whose report never
        came): `question_row`, stamped by this population."""
        return question_row(member.model_dump(exclude=NOT_ON_THE_ROW), route=self.route,
                            goldset=self.goldset, eval_version=self.eval_version,
                            sha256=self.sha256, **outcome)


class Collected(_Wire):
    floors: list[FloorSpec]
    populations: list[Population]


# --- the base row ------------------------------------------------------------------------------


def stamp(goldset: AskedGoldset) -> dict[str, Any]:
    """The goldset as a population names it: its name, eval_version and content digest."""
    return {"goldset": goldset.name, "eval_version": goldset.eval_version,
            "sha256": goldset.content_sha256}


def asked_row(case: Asked, route: str, **outcome: Any) -> QuestionRecord:
    """The row of a question its item asked: `question_row` of its fields."""
    return question_row(row_fields(case), route=route, **stamp(case.goldset), **outcome)


# --- the deal ----------------------------------------------------------------------------------


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def deal(route: str, questions: Sequence[str], anchors: Sequence[str], count: int,
         units: Mapping[str, str] | None = None) -> dict[str, int]:
    """Each item name's shard (1-based): questions, then anchors, each ordered by digest and
    dealt round-robin on from where the route's digest starts. Balanced (shards differ by at
    most one question and one anchor) and stable: a name's shard depends on the route, the
    names and `count`, not on their order, on `-k`/`-m` or on the other goldsets of the run
    (why this and not pytest-split or pytest-shard: `modes/shard.py`). With `units` (a name's
    unit, `asking_units`), whole units are dealt: a conversation's turns share one shard."""
    start = int.from_bytes(_digest(route)[:8], "big") % count
    shards: dict[str, int] = {}
    units = units or {}
    for names in (questions, anchors):
        dealt: dict[str, int] = {}
        for name in sorted(dict.fromkeys(units.get(n, n) for n in names),
                           key=lambda n: _digest(f"{route}\0{n}")):
            dealt[name] = start % count + 1
            start += 1
        shards.update({n: dealt[units.get(n, n)] for n in names})
    return shards


CONVERSATION_UNIT = "conversation\0"  # a unit name no question name can be (no NUL in ids)


def asking_units(members: Iterable[Member]) -> dict[str, str]:
    """Each question item's unit, by item name: its conversation's (every turn and repeat of
    a conversation is one unit: asked in order on one process, in one shard, and the unit of
    sampling of its goldset's statistics), or its own name."""
    return {m.item_name: (CONVERSATION_UNIT + m.conversation if m.conversation
                          else m.item_name) for m in members}


def population_shards(population: Population, count: int) -> dict[str, int]:
    """The shard of each question item and anchor of a collected population, by item name:
    the one deal that a shard selects its items by, its results header lists what it did not
    run by, and `ragate decide` names the shard that owed a missing row by."""
    return deal(population.route, [m.item_name for m in population.questions],
                [a.item_name for a in population.anchors], count,
                units=asking_units(population.questions))


def node_shards(population: Population, count: int) -> dict[str, int]:
    """The shard of each of a population's items that was collected, by node id (the
    shard's selection)."""
    shards = population_shards(population, count)
    return {m.nodeid: shards[m.item_name] for m in (*population.questions, *population.anchors)
            if m.nodeid is not None}
