"""What a system under test returns: the answer, what it retrieved, and what it cites.

Validation is strict (no `True` for a turn, no `"false"` for abstained, no NaN or negative
distance) because a malformed answer is the one thing that fails a question item outright.
Its texts are taken whatever their code points: a lone surrogate, which no output could
write, is replaced by U+FFFD here, where the system's text enters ragate, and counted
(`Answer.unencodable`, a row's `unencodable`).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import numbers
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StrictBool,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pytest_ragate.redaction import visible

Knob = str | int | float | bool | None


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


def format_label(doc_id: str, speakers: Sequence[str], t_start: float | None,
                 t_end: float | None, turns: tuple[int, int] | None = None,
                 unit: str = "unit") -> str:
    """`[document · speaker · mm:ss–mm:ss]`, with what the corpus has: how a chunk, a
    citation or an expected span is shown to a person. `turns` adds the range, for expected
    evidence: `[document · units 20–34 · …]`."""
    parts = [doc_id]
    if turns is not None:
        parts.append(f"{unit}s {turns[0]}–{turns[1]}")
    if speakers:
        parts.append(", ".join(speakers))
    if t_start is not None and t_end is not None:
        parts.append(f"{clock(t_start)}–{clock(t_end)}")
    return f"[{' · '.join(parts)}]"


def _integer(value: object) -> object:
    """An integer (numpy's too), never a bool, a float or a string that looks like one."""
    if type(value) is int:  # nearly every one: no ABC to ask (a bool's type is bool)
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"must be an integer, not {type(value).__name__} {value!r}")
    return int(value)


ROUNDING = 1e-6  # a distance this little below 0 is float32 rounding of 0 (1 - a dot product)


def _finite(value: object) -> object:
    """A finite number (numpy's too) of any sign, or None: a confidence (the number the
    system's own abstention rule was decided on: a reranker score, an overlap, a
    probability), and what a distance is before its sign is checked. Never a bool or a
    string that looks like a number; NaN and infinity rank nothing."""
    if value is None:
        return None
    if type(value) is not float and (isinstance(value, bool)  # a float needs no ABC asked
                                     or not isinstance(value, numbers.Real)):
        raise ValueError(f"must be a number, not {type(value).__name__} {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"must be finite, not {number}")
    return number


def _distance(value: object) -> object:
    """A finite number of 0 or more (numpy's too), or None for a retriever that gives none.
    NaN and infinity are no distance; a negative number is a score turned upside down (a BM25
    score or a dot product read as a similarity), and would pass every `max_distance`. A
    cosine distance of a text to itself may come back a hair below 0: that is 0."""
    number = _finite(value)
    if number is None:
        return None
    assert isinstance(number, float)
    if -ROUNDING <= number < 0:
        return 0.0
    if number < 0:
        raise ValueError(f"must be 0 or more (lower is closer), not {number:g}: a score where "
                         "higher is better is no distance; leave distance None when your "
                         "retriever only ranks (BM25)")
    return number


UnitIndex = Annotated[int, BeforeValidator(_integer), Field(ge=0)]
Distance = Annotated[float | None, BeforeValidator(_distance)]
Confidence = Annotated[float | None, BeforeValidator(_finite)]
def _cost(value: object) -> object:
    """A finite number of 0 or more (US dollars), or None: not reported (never 0)."""
    number = _finite(value)
    if isinstance(number, float) and number < 0:
        raise ValueError(f"must be 0 or more, not {number:g}")
    return number


Tokens = Annotated[int, BeforeValidator(_integer), Field(ge=0)]
Cost = Annotated[float | None, BeforeValidator(_cost)]


def units_in_order(last: int, info: ValidationInfo) -> int:
    """A `last_unit` field validator: a unit range never runs backwards."""
    first = info.data.get("first_unit")
    if first is not None and last < first:
        raise ValueError(f"last_unit {last} < first_unit {first}")
    return last


def _visible_fields(data: dict[Any, Any]) -> tuple[dict[Any, Any], int]:
    """A model's input with its texts (and a dict field's keys and texts: `knobs`) as
    `redaction.visible` makes them, and how many characters were replaced."""
    texts = [t for value in data.values()
             for t in ((*value.keys(), *value.values()) if isinstance(value, dict) else (value,))
             if isinstance(t, str)]
    joined = "\n".join(texts)
    if visible(joined)[0] is joined:  # nearly every input: no surrogate, nothing to replace
        return data, 0
    count = 0

    def clean(value: object) -> object:
        nonlocal count
        if not isinstance(value, str):
            return value
        text, replaced = visible(value)
        count += replaced
        return text

    cleaned = {key: ({clean(k): clean(v) for k, v in value.items()}
                     if isinstance(value, dict) else clean(value))
               for key, value in data.items()}
    return cleaned, count


class Received(BaseModel):
    """What the system returns: its texts taken whatever their code points (the module's
    docstring), the characters replaced counted on the model."""

    # The count is a class default, set in the instance's own dict where it is not 0 (rare: a
    # lone surrogate), not a pydantic private attribute: a model with one runs pydantic's
    # private-attribute set-up, in Python, for every answer, context and citation made. It
    # is copied with the model (`model_copy`, pickling) and read as a plain attribute.
    _unencodable: ClassVar[int] = 0

    @model_validator(mode="wrap")
    @classmethod
    def _visible(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        if not isinstance(data, dict):  # a model already made (and counted), or not one
            return handler(data)
        data, count = _visible_fields(data)
        model = handler(data)
        for part in model._parts():
            count += part._unencodable
        if count:
            object.__setattr__(model, "_unencodable", count)  # frozen or not
        return model

    def _parts(self) -> tuple[Received, ...]:
        """The models it holds, counted with it."""
        return ()


# the names a corpus's numbered pieces and documents had before 0.1 (meeting transcripts)
RENAMED = {"first_turn": "first_unit", "last_turn": "last_unit", "meeting_id": "doc_id"}


def no_old_names(value: object) -> object:
    """A `mode="before"` model validator: a field under its pre-0.1 name is one error that
    names the new one, never a silent alias nor two errors (an extra field, a missing one)."""
    if isinstance(value, dict):
        old = [name for name in value if name in RENAMED]
        if old:
            raise ValueError("; ".join(f"{name} was renamed {RENAMED[name]}" for name in old))
    return value


class Context(Received):
    """A retrieved passage, in rank order; its unit range is what citations are checked against."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_id: StrictStr
    doc_id: StrictStr
    first_unit: UnitIndex
    last_unit: UnitIndex
    text: StrictStr = ""
    distance: Distance = None
    label: StrictStr | None = None  # how to show it, e.g. "[ES2004a · A · 01:02–01:40]"

    _renamed = model_validator(mode="before")(no_old_names)
    _ordered = field_validator("last_unit")(units_in_order)


class Citation(Received):
    """Points at a retrieved context by id; the quote is kept for display and never scored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    context_id: StrictStr
    quote: StrictStr | None = None


class Usage(BaseModel):
    """What one answer cost the system, as its model's API reported it: tokens in and out,
    and the cost in US dollars when the system knows it (None: not reported, never 0)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_tokens: Tokens = 0
    completion_tokens: Tokens = 0
    cost: Cost = None

    @model_validator(mode="before")
    @classmethod
    def _from_a_client(cls, value: object) -> object:
        """An API client's own usage object as it comes (OpenAI's and LiteLLM's
        `response.usage`: prompt_tokens, completion_tokens; Anthropic's: input_tokens,
        output_tokens): its two counts. A dict is held to the fields above."""
        if value is None or isinstance(value, dict | Usage):
            return value
        for tokens_in, tokens_out in (("prompt_tokens", "completion_tokens"),
                                      ("input_tokens", "output_tokens")):
            if hasattr(value, tokens_in) and hasattr(value, tokens_out):
                return {"prompt_tokens": getattr(value, tokens_in) or 0,
                        "completion_tokens": getattr(value, tokens_out) or 0}
        return value

    @classmethod
    def of(cls, usage: object, *, cost: float | None = None) -> Usage:
        """`Usage.of(response.usage, cost=…)`: a client's usage object (see above) with the
        cost your system computes from its price, when it knows it."""
        counts = cls.model_validate(usage).model_dump(exclude={"cost"})
        return cls.model_validate({**counts, "cost": cost})


USAGE_FIELDS = ("prompt_tokens", "completion_tokens")


def reported_usage(usage: object) -> Usage | dict[str, str] | None:
    """What an API's `usage` (an object, or a dict) reports, held to the rule a system's
    `Usage` is (a token count is an integer of 0 or more, never a bool, a float or a string;
    a cost, when it carries one, a finite number of 0 or more): the `Usage`; or, when it
    breaks the rule, each wrong field with its value and what is wrong; None when it reports
    no count."""
    def get(name: str) -> object:
        return usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)

    counts = {name: get(name) for name in (*USAGE_FIELDS, "cost")}
    if counts["prompt_tokens"] is None or counts["completion_tokens"] is None:
        return None
    try:
        return Usage.model_validate(counts)
    except ValidationError as error:
        return {".".join(map(str, e["loc"])): _wrong(e["input"], e["msg"])
                for e in error.errors(include_url=False)}


def _wrong(value: object, message: str) -> str:
    """`must be an integer, not bool True`; `must be 0 or more, not -5`."""
    message = message.removeprefix("Value error, ")
    if message == "Input should be greater than or equal to 0":
        message = "must be 0 or more"
    return message if repr(value) in message else f"{message}, not {value!r}"


class Answer(Received):
    """One answer to one question.

    `knobs` records the settings that produced it (chunk budget, top_k, ...), so a results row
    says what moved its numbers. `confidence` is the number the system's abstention decision
    was made on, higher meaning surer that answering is right (a reranker's top score, say):
    recorded on the row, so `ragate calibrate --on confidence` can replay other cuts.
    """

    model_config = ConfigDict(extra="forbid")

    text: StrictStr = ""
    abstained: StrictBool = False
    citations: list[Citation] = Field(default_factory=list)
    contexts: list[Context] = Field(default_factory=list)
    knobs: dict[str, Knob] = Field(default_factory=dict)
    confidence: Confidence = None
    usage: Usage | None = None  # what answering cost, when the system reports it

    @model_validator(mode="after")
    def _consistent(self) -> Answer:
        seen: set[str] = set()
        for context in self.contexts:
            if context.context_id in seen:
                raise ValueError(f"context_id {context.context_id!r} appears twice in contexts")
            seen.add(context.context_id)
        if self.abstained and self.citations:
            raise ValueError("an abstaining answer carries no citations")
        return self

    @property
    def empty(self) -> bool:
        """Nothing said, retrieved or cited, and no abstention: not an answer. A question its
        system returns this for errors (`items/questions.py`); to decline, abstain."""
        return not (self.text.strip() or self.contexts or self.citations or self.abstained)

    def _parts(self) -> tuple[Received, ...]:
        return (*self.contexts, *self.citations)

    @property
    def unencodable(self) -> int:
        """How many characters of its texts (contexts and citations too) no output could
        write, each replaced by U+FFFD (counted as it was made)."""
        return self._unencodable

    @property
    def nearest_distance(self) -> float | None:
        """None when nothing was retrieved, or when a context carries no distance (a
        rank-only retriever's): the one without might be the nearest."""
        distances = [c.distance for c in self.contexts]
        if not distances or None in distances:
            return None
        return min(d for d in distances if d is not None)

    @classmethod
    def abstain(cls, contexts: list[Context] | None = None, *, confidence: float | None = None,
                usage: Usage | object | None = None, knobs: dict[str, Knob] | None = None,
                **misplaced: object) -> Answer:
        """A declined answer, its fields as any answer's: `usage`, what deciding to decline
        cost (a client's usage object or a `Usage`); `knobs={...}`, as `Answer(knobs=...)`."""
        if misplaced:
            names = ", ".join(f"{name!r}: ..." for name in misplaced)
            raise TypeError(f"Answer.abstain() takes knobs as Answer does, knobs={{{names}}}; "
                            f"its other fields are contexts, confidence and usage")
        return cls.model_validate({"abstained": True, "contexts": contexts or [],
                                   "knobs": knobs or {}, "confidence": confidence,
                                   "usage": usage})


KEYED = "hmac-sha256:"  # how a keyed digest begins (a sealed goldset's: `keyed_digest`)
DIGEST_PATTERN = r"^(hmac-sha256:)?[0-9a-f]{64}$"  # a digest a labels or fixture file holds


def keyed_digest(data: bytes, key: bytes | None = None) -> str:
    """The digest a label, a verdict or a row keeps of `data`: its sha256 (hex), or, with
    `key` (a sealed goldset's digest key, goldsets/sealed.py `digest_key`), `hmac-sha256:` and
    its HMAC-SHA256 under that key, so that no one without the seal key can confirm a guess of
    a sealed text by hashing candidates."""
    if key is None:
        return hashlib.sha256(data).hexdigest()
    return KEYED + hmac.new(key, data, hashlib.sha256).hexdigest()


def is_keyed(digest: str) -> bool:
    """Whether a kept digest is keyed (`keyed_digest` with a key)."""
    return digest.startswith(KEYED)


def answer_sha256(text: str, key: bytes | None = None) -> str:
    """Which answer a verdict or a human label was written for: a fixture verdict or a label
    stamped with another answer's digest is stale, never a score. Keyed in a sealed goldset
    (`keyed_digest`)."""
    return keyed_digest(text.encode("utf-8"), key)


class Earlier(BaseModel):
    """An earlier turn of a conversation, as a later turn's system is given it: the turn's
    number, its question, and the answer the system gave to it in this run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    turn: int
    question: str
    answer: Answer


class Asked(str):
    """The question text a `ragate_system` is called with: a `str` (a system that takes a
    question's text needs nothing else), and, for a turn of a conversation, its
    `conversation`, its `turn` and its `history`: the earlier turns with this run's answers,
    in order (docs/your-system.md, "Conversations")."""

    conversation: str | None
    turn: int | None
    history: tuple[Earlier, ...]

    def __new__(cls, text: str, *, conversation: str | None = None, turn: int | None = None,
                history: tuple[Earlier, ...] = ()) -> Asked:
        asked = super().__new__(cls, text)
        asked.conversation, asked.turn, asked.history = conversation, turn, history
        return asked
