"""A run's rows (a question's `QuestionRecord`, an anchor's `AnchorOutcome`), the mechanical
scores of one answer that fill a question's row, and their totals over a set of questions.

Only turn ranges enter a score: a quote, however verbatim, never makes a citation right. The
system under test decides how many citations an answer carries, so citation accuracy gives
each answer one vote (its share of right citations, each cited context counted once); the
goldset decides how many evidence spans a question has, so evidence recall is micro over spans.
Each metric's rules (its score, tally, worst questions) are its definition in registry.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from pytest_ragate.answer import (
    Answer,
    Citation,
    Confidence,
    Context,
    Knob,
    Tokens,
    Usage,
    format_label,
)
from pytest_ragate.scoring.answer_match import AnswerCheck
from pytest_ragate.scoring.registry import (
    METRICS,
    Tally,
    bill_figure,
    cost_of,
    mechanical_scores,
    repeat_worst,
    verdict_metrics,
)
from pytest_ragate.scoring.stats import point_quantile

MECHANICAL = "mechanical"


def repeat_name(question_id: str, repeat: int) -> str:
    """How one repeat of a question is named everywhere: item ids, gaps, reports."""
    return f"{question_id}[r{repeat}]"


@dataclass(frozen=True)
class Span:
    """Turns (units) first..last of one document, both ends inclusive: found by a context
    whose range overlaps it in the same document."""

    doc_id: str
    first_unit: int
    last_unit: int

    def matches(self, context: Span | Context) -> bool:
        return (
            self.doc_id == context.doc_id
            and self.first_unit <= context.last_unit
            and context.first_unit <= self.last_unit
        )


@dataclass(frozen=True)
class WholeDocument:
    """A document as a whole: found by any context from it."""

    doc_id: str

    def matches(self, context: Context) -> bool:
        return context.doc_id == self.doc_id


@dataclass(frozen=True)
class ContextRef:
    """One context by id, for ground truth kept as chunk ids: found by that context only, and
    only from its document (an id is the system's name for a chunk, not a unique key: a chunk
    of another document that happens to carry the same name is not it)."""

    context_id: str
    doc_id: str

    def matches(self, context: Context) -> bool:
        return context.context_id == self.context_id and context.doc_id == self.doc_id


Evidence = Span | WholeDocument | ContextRef  # one rule each: overlap, same document, same id


class Cited(BaseModel):
    """One citation as a person reads it: where it points and whether it was right."""

    model_config = ConfigDict(extra="forbid")

    context_id: str
    label: str
    correct: bool
    quote: str | None = None


AnchorResult = Literal["passed", "failed", "xfailed", "xpassed", "skipped"]


class AnchorOutcome(BaseModel):
    """One anchor's check as the controller needs it. A check that did not hold is `failed`
    (or `xfailed`); one that could not run (its fixture or retriever raised, or it was
    skipped) carries `error`, so it is never counted as a known miss. Rides on the anchor's
    report to the controller (`keys.ANCHOR_ATTR`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    goldset: str
    anchor_id: str
    kind: str
    claim: str
    path: str
    line: int
    xfail: str | None = None
    outcome: AnchorResult
    error: str | None = None
    why: str | None = None  # what the check said, when it did not hold
    definition: str | None = None  # digest of kind, claim and evidence (scoring/flips.py)

    @property
    def checked(self) -> bool:
        """The check ran (held or not): it counts in its kind's population floor."""
        return not self.error

    @property
    def held(self) -> bool:
        return self.outcome in ("passed", "xpassed")


class QuestionScores(BaseModel):
    """What a later run is paired with, question by question (`--ragate-baseline`): kept in
    every history line, and derived from a results row."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["scored", "error", "skipped"] = "scored"
    abstention_correct: bool = False
    citations: int = 0  # distinct cited contexts
    citations_correct: int = 0
    evidence_found: list[bool] = Field(default_factory=list)  # per expected span, in order
    verdicts: dict[str, float] = Field(default_factory=dict)  # judged metrics with a verdict
    judge_failures: list[str] = Field(default_factory=list)
    # correctness metrics with a value (answer_match settled, answer_similarity)
    answers: dict[str, float] = Field(default_factory=dict)
    conversation: str | None = None  # the conversation it is a turn of: the unit it pairs in
    # the project's own metrics with a value (`@ragate.metric`; a share's 1.0 or 0.0)
    custom: dict[str, float] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _quiet_conversation(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """A question outside conversations, or without a metric of the project's own, is
        kept (in history lines) as before them."""
        data = handler(self)
        if self.conversation is None:
            data.pop("conversation", None)
        if not self.custom:
            data.pop("custom", None)
        return data


class JudgeTokens(BaseModel):
    """The tokens the judge's API reported for one question's requests; `unreported` counts
    the requests whose response carried no usage, or one that breaks the rule a system's
    usage is held to (their tokens are unknown, not 0), and `invalid` names the wrong
    fields of those (`usage.prompt_tokens`: what is wrong)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: Tokens = 0
    completion: Tokens = 0
    unreported: Tokens = 0
    invalid: dict[str, str] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _quiet(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data = handler(self)
        for name in ("unreported", "invalid"):
            if not data.get(name):
                data.pop(name, None)
        return data


BILL_FIELDS = ("latency_s", "usage", "judge_requests", "judge_tokens", "judge_cost")


# fields a row leaves out while they are None (as rows were before each existed)
QUIET_WHEN_NONE = ("confidence", "judged_contexts", "answer_check", "answer_sha256",
                   "unencodable", "non_answer", "conversation", "turn", "context_gains")
# fields the JUnit properties show otherwise than as the row has them (or not at all)
JUNIT_OTHERWISE = frozenset({
    "metrics", "knobs", "judge_failures", "judge_cached", "judge_vacuous", "cited", "expected",
    "goldset_sha256", "usage", "judge_tokens", "judged_contexts", "answer_check",
    "answer_sha256", "custom", "custom_errors"})


class RowJSON(dict[str, Any]):
    """A row as JSON (`QuestionRecord.row_json`) that still knows its row while it stays in
    the process that dumped it: a report at `-n 0` hands the controller the row itself,
    which it need not validate again (`QuestionRecord.from_json`). It crosses the xdist wire
    as a plain dict."""

    __slots__ = ("record",)


def in_metric_order(failures: Mapping[str, str]) -> dict[str, str]:
    """A row's judge failures in the registry's order, then the rest (rubrics) by name: the
    one order a row's are kept in, whether made in the run or read from a file."""
    order = {m: i for i, m in enumerate(METRICS)}
    return dict(sorted(failures.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


class QuestionRecord(BaseModel):
    """One question's outcome: a results row, the JUnit properties, and the floors' input.

    Plain JSON types only: it crosses the xdist wire inside a report. Built by `question_row`
    (a question's fields and its outcome), read back by `from_json` (a report's, a results
    file's line); frozen, so its JSON is dumped once (`row_json`) for the results file, the
    wire, the JUnit properties and redaction alike.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    _json: RowJSON | None = PrivateAttr(default=None)

    goldset: str
    route: str = ""  # the node id of the route that asked it: ragate.toml, or a decorated test
    question_id: str
    repeat: int = Field(default=1, ge=1)  # which repeat of the question (goldset `repeat`)
    # asked again before a sequential stop was accepted (decision/drift.py): not the
    # question's own row, and no floor counts it
    reasked: bool = False
    question: str | None = None  # the question's text, as the system was asked it
    kind: str
    tags: dict[str, str] = Field(default_factory=dict)  # the question's slices (goldset tags)
    # the conversation it is a turn of, and which turn (from 1); None outside conversations
    conversation: str | None = None
    turn: int | None = Field(default=None, ge=1)
    index: int
    status: Literal["scored", "error", "skipped"] = "scored"
    error: str | None = None
    # skipped because its sequential goldset was decided before it (`--ragate-sequential`):
    # not asked, and not missing; the skip's reason (`error`) says so to people
    not_needed: bool = False
    abstained: bool | None = None
    must_abstain: bool
    abstention_correct: bool = False
    citations: int = 0  # distinct cited contexts: citing one context twice counts once
    citations_correct: int = 0
    duplicate_citations: int = 0  # repeats of an already cited context, left out
    uncited: bool = False
    contexts: int = 0  # the pool: how many contexts the system returned
    nearest_distance: float | None = None
    confidence: Confidence = None  # what the system's own abstention rule was decided on
    evidence_spans: int
    evidence_spans_found: int = 0
    evidence_ranks: list[int | None] = Field(default_factory=list)  # 1-based, per span
    # per context in rank order up to the last relevant one, the share of it that is
    # evidence (EvidenceIndex.gains): what the rank metrics read; None: none is relevant
    context_gains: list[Annotated[float, Field(ge=0.0, le=1.0)]] | None = None
    metrics: dict[str, float | None] = Field(default_factory=dict)
    # the project's own metrics (`@ragate.metric`, scoring/custom.py): a value in [0, 1] (a
    # share's 1.0 or 0.0) or None (not applicable), and what went wrong where one failed
    custom: dict[str, Annotated[float, Field(ge=0.0, le=1.0)] | None] = Field(
        default_factory=dict)
    custom_errors: dict[str, str] = Field(default_factory=dict)
    answer_text: str | None = None
    # the sha256 of the raw answer, where `answer_text` is kept masked (items/redacting.py):
    # what a label or a fixture verdict of this answer is stamped with, never the masked text's
    answer_sha256: str | None = None
    cited: list[Cited] = Field(default_factory=list)
    expected: list[str] | None = None  # expected span labels; None while answers are sealed
    # pinned evidence re-found at other units, scored there (goldsets/pinned.py), one line each
    evidence_moved: list[str] | None = None
    # errored because its pinned evidence is stale: not asked, and a gap of its own kind
    # (None otherwise, so JUnit shows it only where it is so)
    stale_evidence: Literal[True] | None = None
    judge: str | None = None
    judge_model: str | None = None
    answerer_model: str | None = None
    judge_failures: dict[str, str] = Field(default_factory=dict)  # metric -> why
    judge_cached: list[str] = Field(default_factory=list)  # metrics served from the cache
    judge_vacuous: list[str] = Field(default_factory=list)  # verdicts with nothing to judge
    system: str | None = None  # what answered, and where it came from (items/provenance.py)
    retriever: str | None = None
    judge_from: str | None = None
    eval_version: str
    goldset_sha256: str | None = None  # what the goldset asked and expected (`ragate decide`)
    knobs: dict[str, Knob] = Field(default_factory=dict)
    # the bill: seconds the system took to answer, measured by ragate around its call (None:
    # no answer: an error, a skip, a timeout); what the system reported it spent; the judge
    # requests made for this question (a cached verdict makes none), the tokens the API
    # reported for them, and their cost in US dollars where the judge's price is set
    latency_s: float | None = Field(default=None, ge=0.0)
    usage: Usage | None = None
    judge_requests: int = Field(default=0, ge=0)
    judge_tokens: JudgeTokens | None = None
    judge_cost: float | None = Field(default=None, ge=0.0)
    # the contexts the judge was given, in rank order, texts redacted as every kept text is:
    # what `ragate rejudge` grades the saved answer over under another judge (None: the row
    # was not judged, or was written before rows kept them)
    judged_contexts: list[Context] | None = None
    # what answer_match found in the answer (scoring/answer_match.py): None where the
    # expected answer lists no facts
    answer_check: AnswerCheck | None = None
    # why answer_similarity scored the answer 0 though it is not an abstention: it says it
    # does not know, or restates the question (scoring/non_answer.py); None otherwise
    non_answer: str | None = None
    # characters of the system's or the judge's texts no output could write (lone
    # surrogates), each replaced by U+FFFD where the text entered (None: none)
    unencodable: int | None = Field(default=None, ge=1)

    @field_validator("judge_failures")
    @classmethod
    def _in_metric_order(cls, value: dict[str, str]) -> dict[str, str]:
        """As the judge runner lists them, so a row read back from a results file (written
        with sorted keys) reports as the run's own record did."""
        if len(value) < 2:  # nearly every row: nothing to order
            return value
        return in_metric_order(value)

    @model_serializer(mode="wrap")
    def _quiet_repeat(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        """A question asked once has no `repeat` in its row, an answer without a confidence
        no `confidence`, and a row without a bill figure (None, 0) not that field: rows,
        JUnit properties and the wire stay as they were before any existed."""
        data = handler(self)
        if self.repeat == 1:
            data.pop("repeat", None)
        if not self.reasked:
            data.pop("reasked", None)
        for name in QUIET_WHEN_NONE:
            if getattr(self, name) is None:
                data.pop(name, None)
        for name in ("tags", "custom", "custom_errors"):
            if not getattr(self, name):
                data.pop(name, None)
        if not self.not_needed:
            data.pop("not_needed", None)
        for name in BILL_FIELDS:  # nothing measured: the row as it was before the bill
            if getattr(self, name) is None or (name == "judge_requests"
                                               and not self.judge_requests):
                data.pop(name, None)
        return data

    def row_json(self) -> RowJSON:
        """The row as JSON (`model_dump(mode="json")`), dumped once: do not change it. (Its
        private attribute is read and set in pydantic's own dict of them: `self._json` goes
        through `BaseModel.__getattr__`, in Python, a few times per row.)"""
        private = self.__pydantic_private__
        dumped = private.get("_json") if private is not None else None
        if dumped is None:
            dumped = RowJSON(self.model_dump(mode="json"))
            dumped.record = self
            self._json = dumped
        return dumped

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> QuestionRecord:
        """A row from its JSON: the row itself when it was dumped in this process
        (`RowJSON`), validated otherwise (a worker's, a file's)."""
        if isinstance(row, RowJSON) and isinstance(row.record, cls):
            return row.record
        return cls.model_validate(row)

    @classmethod
    def from_wire(cls, row: dict[str, Any]) -> QuestionRecord:
        """A row a worker dumped with `row_json` and sent (a plain copy, owned by the report
        that brought it): validated, and that JSON kept as its own, not dumped again."""
        if isinstance(row, RowJSON):
            return cls.from_json(row)
        record = cls.model_validate(row)
        if type(row) is dict:
            dumped = RowJSON(row)
            dumped.record = record
            record._json = dumped
        return record

    def __eq__(self, other: object) -> bool:
        """Rows are equal when their fields are, whether or not either was dumped yet."""
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (type(self) is type(other) and self.__dict__ == other.__dict__
                and self.__pydantic_extra__ == other.__pydantic_extra__)

    def model_copy(self, *, update: Mapping[str, Any] | None = None,
                   deep: bool = False) -> QuestionRecord:
        """A copy (with `update`), whose JSON is its own: dumped again when asked."""
        copied = super().model_copy(update=update, deep=deep)
        copied._json = None
        return copied

    @property
    def judge_attempted(self) -> list[str]:
        """Judged metrics this row asked the judge for (verdict or failure)."""
        return [m for m in verdict_metrics() if self.metrics.get(m) is not None
                or m in self.judge_failures]

    @property
    def scored_on(self) -> list[str]:
        """The metrics beyond the mechanical ones this row was scored on: the judged ones it
        asked for and the correctness ones (`registry.run_metrics`'s `asked`)."""
        return [*self.judge_attempted,
                *(m for m in self.metrics if m in METRICS and METRICS[m].correctness)]

    @property
    def counted(self) -> bool:
        """Whether the row enters figures: not skipped, and not stale (its pinned evidence
        changed with the corpus: a gap that leaves its floors not decided, never a miss in a
        figure, a kind's column, a slice or a regression check)."""
        return self.status != "skipped" and not self.stale_evidence

    def scores(self) -> QuestionScores:
        """What a later run pairs with; a stale row as a skipped one (never a miss)."""
        found = [rank is not None for rank in self.evidence_ranks]
        found += [False] * (self.evidence_spans - len(found))  # an errored question found none
        return QuestionScores(
            status="skipped" if self.stale_evidence else self.status,
            abstention_correct=self.abstention_correct,
            citations=self.citations, citations_correct=self.citations_correct,
            evidence_found=found,
            verdicts={m: float(v) for m, v in self.metrics.items()
                      if v is not None and m in METRICS and METRICS[m].judged},
            judge_failures=sorted(self.judge_failures),
            answers={m: float(v) for m, v in self.metrics.items()
                     if v is not None and m in METRICS and METRICS[m].correctness},
            conversation=self.conversation,
            custom={m: v for m, v in self.custom.items() if v is not None})

    @property
    def wrong(self) -> list[str]:
        """Why this question counts as wrong, for `question_outcome = "assert"`."""
        reasons = []
        if self.status == "error":
            reasons.append(f"error: {self.error}")
        if not self.abstention_correct:
            reasons.append("abstained but should answer" if self.abstained else
                           "answered but should abstain")
        if self.citations_correct < self.citations:
            reasons.append(f"{self.citations - self.citations_correct} of {self.citations} "
                           "citations wrong")
        if self.uncited and not self.must_abstain:
            reasons.append("answered without a citation")
        check = self.answer_check
        if check is not None and check.value != 1.0 and self.status == "scored":
            reasons.append(f"answer {'unsure, not labelled' if check.unsettled else 'wrong'}: "
                           f"{check.why}")
        return reasons

    def junit_properties(self) -> list[tuple[str, str | float]]:
        """Flat name/value pairs; values are plain str or float as JUnit consumers expect."""
        props: list[tuple[str, str | float]] = []
        for key, value in self.row_json().items():
            if value is None or key in JUNIT_OTHERWISE:
                continue
            kind = type(value)  # as `_plain` has it, the common types first
            props.append((key, value if kind is str or kind is float else
                          json.dumps(value) if kind is list else _plain(value)))
        for key, value in (*self.metrics.items(), *self.custom.items()):
            if value is not None:
                props.append((key, float(value)))
        for metric, why in self.custom_errors.items():
            props.append((f"metric_error.{xml_name(metric)}", why))
        for key, value in self.knobs.items():
            if value is not None:  # a value pytest escapes, a name not: the system's knob's
                props.append((f"knob.{xml_name(key)}", _plain(value)))
        for metric, why in self.judge_failures.items():
            props.append((f"judge_failure.{metric}", why))
        if self.judge_cached:
            props.append(("judge_cached", ",".join(self.judge_cached)))
        if self.judge_vacuous:
            props.append(("judge_vacuous", ",".join(self.judge_vacuous)))
        if self.usage is not None:
            props.extend((f"usage.{k}", _plain(v))
                         for k, v in self.usage.model_dump().items() if v is not None)
        if self.judge_tokens is not None:
            props.extend((f"judge_tokens.{k}", _plain(v))
                         for k, v in self.judge_tokens.model_dump().items())
        if self.cited:
            props.append(("cited", " ".join(f"{c.label}{'' if c.correct else ' ✗'}"
                                             for c in self.cited)))
        if self.answer_check is not None:
            props.extend(self.answer_check.properties())
        return props


def question_row(question: Mapping[str, Any], *, route: str, goldset: str, eval_version: str,
                 sha256: str | None, **outcome: Any) -> QuestionRecord:
    """A question's results row, the one constructor of a new row: what the goldset says of
    the question (`question`: decision/population.py `row_fields`), stamped with its route
    and goldset, and `outcome` (its scores, or why it has none), validated once. The row of a
    question scored and the error row of one whose report never came are both made here."""
    return QuestionRecord.model_validate({
        **question, "goldset": goldset, "route": route, "eval_version": eval_version,
        "goldset_sha256": sha256, **outcome})


def _plain(value: object) -> str | float:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return value
    return str(value)


class Bill(BaseModel):
    """What a run of one goldset cost, over its rows (`bill_of`): the reports' bill line and
    the history's `bill`. Latency is over the answers the system gave in this run; the
    system's cost is known only when every answer reported one (`cost_missing` counts those
    that did not); the judge's cost only where its price is set. None: not known."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    answers: int = 0  # system calls that answered (a latency measured)
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    latency_total_s: float | None = None
    usage_reported: int = 0  # answers that carried the system's usage
    system_prompt_tokens: int = 0
    system_completion_tokens: int = 0
    system_cost: float | None = None
    cost_missing: int = 0  # answers without a reported cost
    judge_requests: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    judge_cached: int = 0  # verdicts served from the cache: no request, no cost
    judge_cost: float | None = None
    total_cost: float | None = None  # every answer's `cost_of` summed, when all are known

    @model_serializer(mode="wrap")
    def _quiet(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        return {k: v for k, v in handler(self).items() if v is not None}


def bill_of(records: Sequence[QuestionRecord]) -> Bill:
    """The run's totals of its rows' bill fields (scoring/registry.py `cost_of` for one)."""
    latencies = [r.latency_s for r in records if r.latency_s is not None]
    used = [r.usage for r in records if r.usage is not None]
    answered = [r for r in records if r.latency_s is not None or r.usage is not None]
    missing = sum(r.usage is None or r.usage.cost is None for r in answered)
    costs = [cost_of(r) for r in answered]
    judge_costs = [r.judge_cost for r in records if r.judge_cost is not None]
    priced = any(r.judge_cost is not None for r in records)
    tokens = [r.judge_tokens for r in records if r.judge_tokens is not None]
    return Bill(
        answers=len(latencies),
        latency_p50_s=point_quantile(latencies, 0.5) if latencies else None,
        latency_p95_s=point_quantile(latencies, 0.95) if latencies else None,
        latency_total_s=sum(latencies) if latencies else None,
        usage_reported=len(used),
        system_prompt_tokens=sum(u.prompt_tokens for u in used),
        system_completion_tokens=sum(u.completion_tokens for u in used),
        system_cost=(sum(u.cost for u in used if u.cost is not None)
                     if answered and not missing else None),
        cost_missing=missing,
        judge_requests=sum(r.judge_requests for r in records),
        judge_prompt_tokens=sum(t.prompt for t in tokens),
        judge_completion_tokens=sum(t.completion for t in tokens),
        judge_cached=sum(len(r.judge_cached) for r in records),
        judge_cost=sum(judge_costs) if priced else None,
        total_cost=(sum(c for c in costs if c is not None)
                    if costs and None not in costs else None))


class EvidenceIndex:
    """The expected evidence by document: a context is held only to its own document's
    evidence, so scoring an answer costs its contexts plus its citations (times the evidence
    of one document), never contexts times citations."""

    def __init__(self, evidence: Sequence[Evidence]) -> None:
        self.count = len(evidence)
        self._by_doc: dict[str, list[tuple[int, Evidence]]] = {}
        for i, item in enumerate(evidence):
            self._by_doc.setdefault(item.doc_id, []).append((i, item))

    def found_by(self, context: Context) -> list[int]:
        """The positions of the evidence this context finds."""
        return [i for i, item in self._by_doc.get(context.doc_id, ()) if item.matches(context)]

    def ranks_and_gains(self, contexts: Sequence[Context],
                        ) -> tuple[list[int | None], list[float]]:
        """In one pass over the pool: per evidence item, the 1-based rank of the first context
        that finds it; and per context in rank order, its gain for the rank metrics
        (scoring/ranking.py): 0 when it finds no evidence, else the share of its units inside
        the spans it finds, 1 when it finds a whole document or is an expected context
        (trailing 0s left out)."""
        ranks: list[int | None] = [None] * self.count
        gains: list[float] = []
        for rank, context in enumerate(contexts, 1):
            found = [(i, item) for i, item in self._by_doc.get(context.doc_id, ())
                     if item.matches(context)]
            for i, _ in found:
                if ranks[i] is None:
                    ranks[i] = rank
            gains.append(_gain(context, [item for _, item in found]))
        while gains and not gains[-1]:
            gains.pop()
        return ranks, gains


def _gain(context: Context, found: Sequence[Evidence]) -> float:
    """A context's gain from the evidence it finds (`EvidenceIndex.ranks_and_gains`)."""
    if not found:
        return 0.0
    if not all(isinstance(item, Span) for item in found):
        return 1.0
    covered, reached = 0, context.first_unit - 1  # units counted once, spans in order
    for span in sorted(found, key=lambda s: s.first_unit):
        first, last = max(span.first_unit, reached + 1), min(span.last_unit, context.last_unit)
        covered += max(0, last - first + 1)
        reached = max(reached, last)
    return covered / (context.last_unit - context.first_unit + 1)


def score_answer(answer: Answer, evidence: Sequence[Evidence], *,
                 unit: str = "unit") -> dict[str, object]:
    """The mechanical fields of a QuestionRecord for one answer (its cited contexts shown with
    the corpus's `unit`, the word its expected evidence is shown with). A context cited twice counts
    once: repeating a right citation must not outvote the wrong ones. A citation is right when
    the context it cites was retrieved and finds some expected evidence."""
    must_abstain = not evidence
    answered = not answer.abstained
    first: dict[str, Citation] = {}
    for citation in answer.citations:
        first.setdefault(citation.context_id, citation)
    distinct = list(first.values())
    index = EvidenceIndex(evidence)
    by_id = {c.context_id: c for c in answer.contexts}
    right = [(ctx := by_id.get(c.context_id)) is not None and bool(index.found_by(ctx))
             for c in distinct]
    correct = sum(right)
    ranks, gains = index.ranks_and_gains(answer.contexts)
    found = sum(rank is not None for rank in ranks)
    n_cit = len(distinct) if answered else 0
    own = QuestionScores(abstention_correct=answer.abstained == must_abstain, citations=n_cit,
                         citations_correct=correct if answered else 0,
                         evidence_found=[rank is not None for rank in ranks])
    cited = [Cited(context_id=c.context_id,
                   label=_label(by_id.get(c.context_id), c.context_id, unit),
                   correct=ok, quote=c.quote) for c, ok in zip(distinct, right, strict=True)]
    return {
        "answer_text": answer.text,
        "cited": cited,
        "abstained": answer.abstained,
        "must_abstain": must_abstain,
        "abstention_correct": answer.abstained == must_abstain,
        "citations": n_cit,
        "citations_correct": correct if answered else 0,
        "duplicate_citations": len(answer.citations) - len(distinct),
        "uncited": answered and n_cit == 0,
        "contexts": len(answer.contexts),
        "nearest_distance": answer.nearest_distance,
        "confidence": answer.confidence,
        "evidence_spans": len(evidence),
        "evidence_spans_found": found,
        "evidence_ranks": ranks,
        "context_gains": gains or None,
        "metrics": mechanical_scores(own),
        "knobs": dict(answer.knobs),
        "unencodable": answer.unencodable or None,
    }


def _label(context: Context | None, context_id: str, unit: str) -> str:
    if context is None:
        return f"[{context_id} · not retrieved]"
    return context.label or format_label(context.doc_id, [], None, None,
                                         (context.first_unit, context.last_unit), unit=unit)


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_name(text: str) -> str:
    """`text` as a JUnit property's name may hold it: a character XML cannot (a control) as
    pytest shows one in a value, `#x08`."""
    return _NOT_XML.sub(lambda m: f"#x{ord(m.group()):02X}", text)


def fmt_num(value: float | None, digits: int = 2) -> str:
    """A figure as every report shows it; a missing one is a dash."""
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_some(names: Sequence[str], limit: int, sep: str = ", ") -> str:
    """`a, b and 3 more`, or with `sep="; "` `a; b; and 3 more`: at most `limit` named."""
    more = len(names) - limit
    tail = f"{'; ' if sep == '; ' else ' '}and {more} more" if more > 0 else ""
    return sep.join(names[:limit]) + tail


def tally(metric: str, records: Iterable[QuestionRecord]) -> Tally:
    """Over the unit the metric counts (registry.METRICS); errored questions count as wrong, skipped
    and stale ones not at all (`QuestionRecord.counted`). With repeats, the tally also keeps
    each question's share of it (`Tally.clusters`), so its interval treats the question as the
    unit of sampling; with conversations, each conversation's share (its turns and their
    repeats), so the conversation is the unit: the cluster-robust intervals of
    `stats.wilson_clustered` and `stats.bootstrap_clusters` (Cameron & Miller 2015, "A
    Practitioner's Guide to Cluster-Robust Inference"), as repeats have them."""
    info = METRICS[metric]
    rows = [r for r in records if r.counted]
    whole = info.tally(metric, rows)
    repeats = max((r.repeat for r in rows), default=1)
    by_conversation = any(r.conversation for r in rows) and info.source != "conversations"
    if ((repeats == 1 and not by_conversation) or info.source == "repeats"
            or info.aggregate == "quantile"):
        return whole  # a quantile's tally already takes one unit per question
    groups: dict[str, list[QuestionRecord]] = {}
    for r in rows:
        groups.setdefault(cluster_of(r), []).append(r)
    clusters, conversations = [], 0
    for key, group in groups.items():
        part = info.tally(metric, group)
        if part.n:
            clusters.append((part.k, float(part.n)) if info.aggregate == "proportion"
                            else (sum(part.values), float(len(part.values))))
            conversations += key.startswith(CONVERSATION_CLUSTER)
    if by_conversation or info.source == "conversations":
        # the design effect's least is a repeat's, not a conversation's (nor, for a metric
        # over whole conversations, its turns times its repeats)
        return replace(whole, clusters=tuple(clusters), questions=len(clusters),
                       repeats=repeats, by="conversations", conversations=conversations)
    return replace(whole, clusters=tuple(clusters), questions=len(clusters),
                   repeats=max(len(g) for g in groups.values()))


CONVERSATION_CLUSTER = "conversation\0"  # a conversation's cluster key starts so


def cluster_of(record: QuestionRecord) -> str:
    """The unit of sampling a row belongs to: its conversation, or its own question."""
    return f"{CONVERSATION_CLUSTER}{record.conversation}" if record.conversation \
        else record.question_id


NAMED_BEHIND = 5  # questions a failing floor names, worst first


def behind(metric: str, records: Sequence[QuestionRecord], limit: int = NAMED_BEHIND, *,
           over: float | None = None) -> str:
    """The scored questions that pull `metric` down, worst first, as a floor's failure
    message names them: `q07 0/2 citations right; q12 answered, should abstain`; for a bill
    floor (`over`, its bound), only those whose own latency or cost is over it."""
    return fmt_some([words for _, words in worst_first(metric, records, over=over)], limit,
                    "; ")


def worst_first(metric: str, records: Sequence[QuestionRecord], *,
                over: float | None = None) -> list[tuple[int, str]]:
    """`behind`'s questions, each as (its `index` in the goldset, what went wrong), worst
    first: what a CI annotation points at (outputs/findings.py)."""
    if over is not None:
        records = [r for r in records if (v := bill_figure(metric, r)) is not None and v > over]
    if METRICS[metric].source == "repeats":
        found = repeat_worst(metric, [r for r in records if r.counted])
        return [(index, words) for _, index, words in found]
    worst = METRICS[metric].worst
    found = []  # (how good, question order, what went wrong)
    repeated = any(r.repeat > 1 for r in records)  # then rows are named `q07[r2]`
    for r in records:
        if r.status != "scored":
            continue  # errors are named as gaps
        if (why := worst(metric, r)) is not None:
            words = why[1]
            if repeated and words.startswith(r.question_id):
                words = repeat_name(r.question_id, r.repeat) + words[len(r.question_id):]
            found.append((why[0], r.index, words))
    found.sort()
    return [(index, words) for _, index, words in found]
