"""The files of a goldset directory as typed models: `ragate.toml`, the questions and the
expected answers, with the readers that turn each file into models or named problems.

A leaf: loading a goldset (`goldset`) and opening sealed answers (`sealed`) both read these
files, and neither imports the other's module to do so.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pytest_ragate.answer import Earlier, no_old_names, units_in_order
from pytest_ragate.files import UnreadableText, read_jsonl, read_text
from pytest_ragate.goldsets.corpus import Units
from pytest_ragate.goldsets.pins import Pin
from pytest_ragate.problems import GoldsetError, Problem, problems_from_validation
from pytest_ragate.scoring.answer_match import SIMILAR
from pytest_ragate.scoring.answer_text import Fact, alternative_problem
from pytest_ragate.scoring.floor import KIND_SLICE, TURN_SLICE, floor_name, turn_position
from pytest_ragate.scoring.gap_bound import GAPS
from pytest_ragate.scoring.records import ContextRef, Evidence, Span, WholeDocument
from pytest_ragate.scoring.registry import METRICS

# --- the files----------------------------------------------------------------------


class _Model(BaseModel):
    # strict: `first_unit: true` or `"3"` is an error in the file, not a silent 1 or 3
    model_config = ConfigDict(extra="forbid", strict=True)


class CorpusConfig(_Model):
    paths: Annotated[list[str], Field(min_length=1)]
    format: str  # checked against the known readers by load_corpus, naming the bad value
    units: Units = "paragraph"  # how the documents formats are split into numbered units


# the transcript names of two kinds before 0.1: each an error naming the kind it became
RENAMED_KINDS = {"single_meeting": "single_doc", "cross_meeting": "multi_doc"}


class QuestionsConfig(_Model):
    file: str = "questions.jsonl"
    expected: str = "expected"
    mix: dict[str, Annotated[int, Field(ge=0)]] | None = None
    kinds: list[Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$")]] | None = None

    @field_validator("mix", "kinds")
    @classmethod
    def _not_renamed(cls, kinds: dict[str, int] | list[str] | None,
                     ) -> dict[str, int] | list[str] | None:
        renamed = [f"kind {k!r} was renamed {RENAMED_KINDS[k]!r}" for k in kinds or ()
                   if k in RENAMED_KINDS]
        if renamed:
            raise ValueError("; ".join(renamed))
        return kinds


class AnchorsConfig(_Model):
    file: str = "anchors.jsonl"
    # the cosine distance past which the system under test abstains: what an
    # off_topic_control (nothing within it) and a topical_probe (something within it) read
    max_distance: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None


class JudgeConfig(_Model):
    """`[judge]`: human labels of judged metrics (goldsets/labels.py), and which estimate
    judged floors are decided on: the judge's own mean, or its prediction-powered correction
    by the labels (scoring/ppi.py)."""

    labels: Annotated[str, Field(min_length=1)] | None = None
    estimate: Literal["judge", "ppi"] = "judge"
    # judged metrics whose floors a run without a judge skips (any other judged floor fails)
    optional: list[str] = Field(default_factory=list)

    @field_validator("optional")
    @classmethod
    def _judged(cls, value: list[str], info: ValidationInfo) -> list[str]:
        own = (info.context or {}).get("rubrics", ())  # the goldset's rubrics are judged
        wrong = [name for name in value if name not in own and (
            name not in METRICS or not METRICS[name].judged or METRICS[name].rubric)]
        if wrong:
            from pytest_ragate.wording.floors import not_judged_metrics

            raise ValueError(not_judged_metrics("[judge] optional", wrong))
        return value


class AnswersConfig(_Model):
    """`[answers]`: how answers are held to their expected answers (docs/goldsets.md,
    "Is the answer right?"): what an unsure `answer_match` counts as until a person labels it,
    the cosine to the gist at or above which a missing fact leaves an answer unsure, and the
    judged correctness metrics to ask the judge for without a floor naming them."""

    unsure: Literal["label", "wrong"] = "label"
    similar: Annotated[float, Field(ge=0.0, le=1.0)] = SIMILAR
    judged: list[Literal["answer_correctness", "factual_correctness"]] = Field(
        default_factory=list)


# `ragate audit`'s rules (pytest_ragate/audit/): each can be switched off or given another
# severity per goldset in `[audit] rules` (docs/goldsets.md, "Auditing a goldset")
AuditRule = Literal["duplicate_question", "near_duplicate", "unsupported_evidence",
                    "facts_not_in_corpus", "contradicted_fact", "abstain_answerable",
                    "wide_evidence", "unasked_document", "floor_too_small", "moved_evidence",
                    "stale_evidence", "never_separates"]
AuditSeverity = Literal["error", "warning", "info", "off"]


class AuditConfig(_Model):
    """`[audit]`: `rules = { near_duplicate = "off", wide_evidence = "error" }` switches a
    rule of `ragate audit` off or sets its severity for this goldset."""

    rules: dict[AuditRule, AuditSeverity] = Field(default_factory=dict)


def _compared_metric(name: str) -> str:
    """A `[regression] max_drop` key: a metric the baseline check compares, or an error
    with the name it may have meant."""
    if name in METRICS and METRICS[name].regression is not None:
        return name
    from pytest_ragate.wording.baseline import not_compared_metric

    raise ValueError(not_compared_metric(name))


ComparedMetric = Annotated[str, AfterValidator(_compared_metric)]


class RegressionConfig(_Model):
    """`[regression]`: `max_drop = { citation_accuracy = 0.02 }` holds each named metric's
    check against the baseline to "no worse than it by more than the margin"
    (decision/margins.py); `inconclusive = "pass"` lets a check the questions cannot decide
    pass (it fails by default)."""

    max_drop: dict[ComparedMetric, Annotated[float, Field(gt=0.0, lt=1.0,
                                                          allow_inf_nan=False)]] = Field(
        default_factory=dict)
    inconclusive: Literal["fail", "pass"] = "fail"


def _rubric_name(name: str) -> str:
    """A `[rubrics.NAME]` key: a metric's name no built-in or defined metric has."""
    from pytest_ragate.scoring.rubrics import name_problem

    problem = name_problem(name)
    if problem is not None:
        raise ValueError(problem)
    return name


RubricName = Annotated[str, AfterValidator(_rubric_name)]


class RubricConfig(_Model):
    """`[rubrics.polite]`: the criteria a judge grades an answer against, pass/fail unless
    `scale = 5` with `scores`, a description of each score, 1 first (scoring/rubrics.py)."""

    criteria: str
    scale: Literal[5] | None = None
    scores: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None,
                                                                    validate_default=True)

    @field_validator("criteria")
    @classmethod
    def _worded(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the criteria are the words the judge grades against: not empty")
        return value

    @field_validator("scores")
    @classmethod
    def _one_per_score(cls, value: list[str] | None, info: ValidationInfo,
                       ) -> list[str] | None:
        if "scale" not in info.data:  # a bad scale is its own problem, said once
            return value
        scale = info.data["scale"]
        if scale is None and value is not None:
            raise ValueError("a pass/fail rubric has no scores: give scale = 5 with them, or "
                             "leave them out")
        if scale is not None and (value is None or len(value) != scale):
            given = "none" if value is None else str(len(value))
            raise ValueError(f"a rubric of scale {scale} describes each score: scores = "
                             f"[…] with {scale} descriptions, score 1's first (given {given})")
        return value


class GoldsetConfig(_Model):
    name: str | None = None
    eval_version: str = "1"
    question_outcome: Literal["record", "assert"] = "record"
    repeat: Annotated[int, Field(ge=1, le=100)] = 1  # answers per question (ragate_repeat wins)
    sequential: bool = False  # stop asking once every floor is decided (--ragate-sequential wins)
    # a sequential stop proves fewer than this share of the questions it did not ask lack a
    # result (errored, unsure and not labelled): scoring/gap_bound.py, docs/sequential.md
    sequential_gaps: Annotated[float, Field(gt=0.0, lt=1.0, allow_inf_nan=False)] = GAPS
    # "builtin": items with no `ragate_system` of the user's in scope are answered by the
    # built-in pipeline; unset, such an item is an error (--ragate-builtin-system allows it)
    system: Literal["builtin"] | None = None
    corpus: CorpusConfig
    questions: QuestionsConfig = Field(default_factory=QuestionsConfig)
    floors: dict[str, Any] = Field(default_factory=dict)
    anchors: AnchorsConfig | None = None
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    answers: AnswersConfig = Field(default_factory=AnswersConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    regression: RegressionConfig = Field(default_factory=RegressionConfig)
    rubrics: dict[RubricName, RubricConfig] = Field(default_factory=dict)

    @field_validator("eval_version", mode="before")
    @classmethod
    def _version_text(cls, value: object) -> object:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# The names the plugin gives the items beside a goldset's questions, and the separator of
# node ids: a question id of one of these forms would share a node id with another item
# (`floor[…]`: scoring/floor.py `Floor.name`; `anchor[…]`: items/collection.py; `regression[…]`
# and `floors`: modes/reporting.py; `q07[r2]`: scoring/records.py `repeat_name`).
SHARED = "the question's item would share its node id"
RESERVED_IDS = (
    (re.compile(r"(floor|anchor|regression)\[.*\]", re.S), "is the name of a{0} {1} item: "
     + SHARED),
    (re.compile(r".*\[r\d+\]", re.S), "is the name of a repeat (q07[r2] is q07's second "
     "answer): " + SHARED),
    (re.compile(r"floors"), "is the name of a goldset's floors item: " + SHARED),
    (re.compile(r".*::.*", re.S), "holds '::', which separates the parts of a node id: the "
     "question's item would read as another node's"),
)


def unreserved(question_id: str) -> str:
    """A question id is its item's name: never the name of another item."""
    for pattern, what in RESERVED_IDS:
        found = pattern.fullmatch(question_id)
        if found:
            kind = found.group(1) if found.groups() else ""
            raise ValueError(f"{question_id!r} "
                             + what.format("n" * kind.startswith("a"), kind)
                             + "; rename the question")
    return question_id


# A slice key names a tag (`lang`); a value is what a question's tag says (`de`): both go into
# a floor's name, `floor[lang=de:abstention_accuracy]`, so neither holds `=`, `:`, brackets or
# spaces. "kind" is the question's own kind, a slice key every goldset has.
SLICE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_\-]*")
SLICE_VALUE = re.compile(r"\w[\w.\-]*")


def _slice_part(pattern: re.Pattern[str], what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{value!r} is not a slice {what}: {what}s are letters, digits, "
                             "'_', '-'" + (", '.'" if what == "value" else "") + " (it is "
                             f"part of a floor's name, {floor_name('lang=de:metric')})")
        return value
    return check


# a conversation's id: what it is named by in messages and reports
CONVERSATION_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"

SliceKey = Annotated[str, AfterValidator(_slice_part(SLICE_KEY, "key"))]
SliceValue = Annotated[str, AfterValidator(_slice_part(SLICE_VALUE, "value"))]
Tags = dict[SliceKey, SliceValue]  # the question's slices, `{"lang": "de"}`


class Question(_Model):
    """What the system under test is asked: never a gist or evidence. Its `tags` are a
    mapping (`{"lang": "de"}`: the slices floors are decided over, docs/goldsets.md)."""

    question_id: Annotated[str, Field(min_length=1)]
    kind: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_\-]*$")]
    question: Annotated[str, Field(min_length=1)]
    tags: Tags = Field(default_factory=dict)
    # a turn of a conversation (docs/goldsets.md, "Conversations"): its id, and its place in
    # it, numbered from 1 without gaps; both or neither. Left out of a question outside
    # conversations, which dumps (and its goldset's content digest stays) as before them
    conversation: Annotated[str, Field(pattern=CONVERSATION_ID)] | None = Field(
        None, exclude_if=lambda value: value is None)
    turn: Annotated[int, Field(ge=1)] | None = Field(None, exclude_if=lambda value: value is None)
    gist: Any = Field(default=None, exclude=True)
    evidence: Any = Field(default=None, exclude=True)
    # the earlier turns of its conversation as this run answered them (`with_history`)
    _history: tuple[Earlier, ...] = PrivateAttr(default=())

    @model_validator(mode="after")
    def _both_or_neither(self) -> Question:
        if self.turn is not None and self.conversation is None:
            raise ValueError("a turn belongs to a conversation: add \"conversation\" (its "
                             "id), or drop \"turn\"")
        if self.conversation is not None and self.turn is None:
            raise ValueError(f"a question of conversation {self.conversation!r} needs its "
                             "\"turn\" (1 for the first question, 2 for the next, …)")
        if self.turn is not None and TURN_SLICE in self.tags:
            raise ValueError(f"{TURN_SLICE!r} is a turn's position, a slice of its own "
                             "([floors.turn.1], [floors.turn.later]): not a tag of a turn")
        return self

    @property
    def history(self) -> tuple[Earlier, ...]:
        """The earlier turns of its conversation, each with the answer this run's system gave
        to it, in order; empty for a first turn and for a question outside conversations."""
        return self._history

    def with_history(self, history: tuple[Earlier, ...]) -> Question:
        """This question as its turn is asked: with the earlier turns' answers."""
        asked = self.model_copy()
        asked._history = history
        return asked

    @field_validator("question_id")
    @classmethod
    def _unreserved(cls, value: str) -> str:
        return unreserved(value)

    @field_validator("tags", mode="before")
    @classmethod
    def _no_list(cls, value: object) -> object:
        if isinstance(value, list):
            raise ValueError("tags are a mapping of slices, {\"topic\": \"billing\"}: the list "
                             "form ([\"billing\"]) was removed before 0.1")
        return value

    @field_validator("tags")
    @classmethod
    def _kind_is_its_own(cls, value: dict[str, str]) -> dict[str, str]:
        if KIND_SLICE in value:
            raise ValueError(f"{KIND_SLICE!r} is the question's kind, a slice of its own: not a "
                             "tag (set the question's kind)")
        return value

    @property
    def slices(self) -> dict[str, str]:
        """The question's value of each slice key: its tags (a mapping), its kind, and a
        conversation's turn its position (`turn`: "1" or "later", `[floors.turn.1]`)."""
        turn = {TURN_SLICE: turn_position(self.turn)} if self.turn is not None else {}
        return {**self.tags, KIND_SLICE: self.kind, **turn}

    @field_validator("gist", "evidence", mode="before")
    @classmethod
    def _never_here(cls, value: object) -> object:
        raise ValueError("the questions file never holds a gist or evidence; "
                         "put it in the expected answers")


class EvidenceEntry(_Model):
    """One piece of expected evidence, in one of three forms, each scored by one rule:
    `{doc_id, first_unit, last_unit}`: a context overlapping that range of the document;
    `{doc_id}`: any context from the document; `{context_id, doc_id}`: that context of that
    document exactly (a pre-0.1 name, `meeting_id` or `first_turn`, is an error naming the
    new one). A span may carry its `pin`, the fingerprint of the text it points at
    (goldsets/pins.py; `ragate pin` writes it): dumped only when set, so an unpinned answer's
    goldset digest stays as it was."""

    doc_id: str | None = None
    first_unit: Annotated[int, Field(ge=0)] | None = None
    last_unit: Annotated[int, Field(ge=0)] | None = None
    context_id: Annotated[str, Field(min_length=1)] | None = None
    pin: Pin | None = Field(None, exclude_if=lambda value: value is None)

    _renamed = model_validator(mode="before")(no_old_names)

    @model_validator(mode="after")
    def _one_form(self) -> EvidenceEntry:
        if self.pin is not None and self.last_unit is None:
            raise ValueError("a pin fingerprints a span's text: only {doc_id, first_unit, "
                             "last_unit} evidence carries one (a whole document or a context "
                             "id has no units to re-find)")
        if self.context_id is not None:
            if self.first_unit is not None or self.last_unit is not None:
                raise ValueError("evidence is {context_id, doc_id}, or {doc_id[, first_unit, "
                                 "last_unit]}: not both")
            if self.doc_id is None:
                raise ValueError(f"context_id {self.context_id!r} needs the doc_id of its "
                                 "document too, as {\"context_id\": \"" + self.context_id
                                 + "\", \"doc_id\": \"<its document>\"}: a context of "
                                 "another document with the same id must not count")
            return self
        if self.doc_id is None:
            raise ValueError("evidence needs doc_id (with first_unit and last_unit for a span) "
                             "or context_id")
        if (self.first_unit is None) != (self.last_unit is None):
            raise ValueError("a span needs both first_unit and last_unit; name the document "
                             "alone for any of it")
        return self

    @field_validator("last_unit")
    @classmethod
    def _ordered(cls, last: int | None, info: ValidationInfo) -> int | None:
        return last if last is None else units_in_order(last, info)

    @property
    def item(self) -> Evidence:
        assert self.doc_id is not None
        if self.context_id is not None:
            return ContextRef(self.context_id, self.doc_id)
        if self.first_unit is None or self.last_unit is None:
            return WholeDocument(self.doc_id)
        return Span(self.doc_id, self.first_unit, self.last_unit)


def _fact(value: object) -> Fact:
    """A fact: a text, or a non-empty list of texts (alternatives), each one that can state
    something (`answer_text.alternative_problem`). Messages never quote it: a sealed
    goldset's problems show no expected answer."""
    texts = value if isinstance(value, list) else [value]
    if not texts:
        raise ValueError("is an empty list: a fact is a text or a list of alternatives")
    for i, text in enumerate(texts):
        where = f"alternative {i} " if isinstance(value, list) else ""
        if not isinstance(text, str):
            raise ValueError(f"{where}is not a text ({type(text).__name__}): a fact is a "
                             "text or a list of alternative texts")
        why = alternative_problem(text)
        if why:
            raise ValueError(f"{where}{why}")
    return value  # type: ignore[return-value]


FactEntry = Annotated[Any, PlainValidator(_fact)]


class Expected(_Model):
    """One question's expected answer: its gist and evidence, and optionally the facts a
    right answer states and the statements that make one wrong (`answer_match`)."""

    question_id: Annotated[str, Field(min_length=1)]
    gist: str | None = None
    evidence: list[EvidenceEntry] = Field(default_factory=list)
    notes: str | None = None
    # none, left out: an expected answer without them dumps (and its goldset's content
    # digest stays) as before they existed
    facts: list[FactEntry] = Field(default_factory=list, exclude_if=lambda value: not value)
    forbid: list[FactEntry] = Field(default_factory=list, exclude_if=lambda value: not value)

    @property
    def spans(self) -> list[Evidence]:
        """The expected evidence items (spans, whole documents, context ids), in order."""
        return [e.item for e in self.evidence]

    @property
    def must_abstain(self) -> bool:
        return not self.evidence


def read_config(path: Path) -> GoldsetConfig:
    try:
        raw = tomllib.loads(read_text(path))
    except UnreadableText as error:
        raise GoldsetError([error.problem]) from None
    except tomllib.TOMLDecodeError as error:
        where = re.search(r"line (\d+)", str(error))
        line = int(where.group(1)) if where else None
        raise GoldsetError([Problem(path, "<toml>", f"malformed TOML ({error})", line=line)],
                           ) from None
    try:
        rubrics = raw.get("rubrics")
        return GoldsetConfig.model_validate(raw, context={
            "rubrics": set(rubrics) if isinstance(rubrics, dict) else set()})
    except ValidationError as error:  # a table's bad key is named by its key alone
        raise GoldsetError([replace(p, field=p.field.removesuffix(".[key]"))
                            for p in problems_from_validation(error, path)]) from None


ExpectedRow = tuple[Path, int | None, Expected]


def read_expected(path: Path, config_path: Path) -> tuple[list[ExpectedRow], list[Problem]]:
    if path.is_dir():
        rows: list[ExpectedRow] = []
        problems: list[Problem] = []
        for file in sorted(path.glob("*.json")):
            try:
                expected = Expected.model_validate_json(read_text(file))
            except UnreadableText as error:
                problems.append(error.problem)
                continue
            except ValidationError as error:
                problems.extend(problems_from_validation(error, file, question_id=file.stem))
                continue
            if expected.question_id != file.stem:
                problems.append(Problem(file, "question_id", f"{expected.question_id!r} is "
                                        f"not the file name's id {file.stem!r}"))
            rows.append((file, None, expected))
        return rows, problems
    if path.is_file() and path.suffix == ".jsonl":
        lines, problems = read_jsonl(path, Expected, id_field="question_id")
        return [(path, lineno, exp) for lineno, exp in lines], problems
    message = f"{path.name!r} is neither a folder of <question_id>.json nor a .jsonl file"
    return [], [Problem(config_path, "questions.expected", message)]
