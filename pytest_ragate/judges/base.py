"""What every judge shares: its input, its protocol, its failures and RAGAS's formulas.

A judge answers per question and metric, or raises `JudgeFailure`. A failure is recorded on
the row and excluded from that metric with the coverage shown; it is never averaged as zero
and never silently dropped. The formulas here are RAGAS's, so the fixture judge (exact
verdicts from a file) and the RAGAS judge (a model's verdicts) compute the same thing.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pytest_ragate.answer import Context, Usage, keyed_digest, reported_usage
from pytest_ragate.scoring.rubrics import Rubric

if TYPE_CHECKING:
    import numpy as np

# timeout: no verdict within ragate_judge_timeout (a request, or the whole verdict);
# http, parse: the transport; missing: no verdict to give; error: the judge raised;
# invalid: a value outside its schema (a score not in [0, 1], a model's verdict not 0 or 1,
# a statement list that is not one); empty: a model judge extracted nothing to judge from an
# answer that has text; stale: a fixture verdict recorded for another answer
FailureKind = Literal["timeout", "http", "parse", "missing", "error", "invalid", "empty",
                      "stale"]
RAGAS_EPSILON = 1e-10  # RAGAS's denominator guard in average precision, kept for agreement


class JudgeFailure(Exception):
    """The judge could not give a verdict: counted as a failure, never as a score."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


# --- the messages of the failures the runner and the RAGAS judge find ----------------------


def shown(value: object, limit: int = 80) -> str:
    """A value as a failure message quotes it: its repr, cut at `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def invalid(what: str, got: str, expected: str) -> JudgeFailure:
    """A verdict outside its schema: `what` came back `got`, `expected` (what the metric
    defines). Never a score."""
    return JudgeFailure("invalid", f"{what} came back {got}, {expected}")


def as_failure(error: Exception) -> JudgeFailure:
    """What a judge raised, as the failure of its verdict: a judge bug is not a score."""
    if isinstance(error, JudgeFailure):
        return error
    return JudgeFailure("error", f"{type(error).__name__}: {error}")


def interrupted(what: str, error: BaseException | None) -> JudgeFailure:
    """A judge call that raised a BaseException (None: it was cancelled): its verdict's
    failure, never the runner's."""
    name = "CancelledError" if error is None else type(error).__name__
    return JudgeFailure("error", f"{what} raised {name}")


def timed_out(what: str, seconds: float) -> JudgeFailure:
    """A judge call that did not return within ragate_judge_timeout."""
    return JudgeFailure("timeout", f"{what} did not return within {seconds:g} s "
                        "(ragate_judge_timeout)")


@dataclass(frozen=True)
class Vacuous:
    """A verdict with nothing to judge (a fixture that lists no statements: faithfulness 1.0).
    A judge may return it instead of a float; it is kept as a score and counted apart, so a
    report shows how much of a figure rests on nothing."""

    value: float
    why: str


@dataclass(frozen=True)
class JudgeInput:
    """What a judge sees of one answered question; unanswerable questions never get here."""

    question_id: str
    question: str
    answer: str
    contexts: tuple[Context, ...]
    reference: str | None = None  # the expected gist, when the answers are unsealed
    repeat: int = 1  # which repeat of the question: repeats are judged afresh (the cache key)
    # the digest the row keeps of the raw answer when it keeps one (a masked answer's: keyed
    # in a sealed goldset); None: the sha256 of `answer`. Not part of the cache key
    answer_sha256: str | None = None
    # a sealed goldset's digest key (goldsets/sealed.py `digest_key`): the cache key's digest
    # of what the judge sees is keyed with it, so no plain digest over the sealed gist is kept
    digest_key: bytes | None = field(default=None, repr=False)
    # the goldset's rubrics by name (scoring/rubrics.py): a metric named here is graded
    # against its criteria, which its verdict's cache key holds. Not part of `digest`
    rubrics: Mapping[str, Rubric] = field(default_factory=dict, repr=False)

    def digest(self) -> str:
        """The digest of what the judge sees (part of the cache key): its sha256, or, in a
        sealed goldset, `hmac-sha256:` and its HMAC under the goldset's digest key."""
        material = [self.question, self.answer, [(c.context_id, c.text) for c in self.contexts],
                    self.reference]
        return keyed_digest(json.dumps(material, ensure_ascii=False).encode(), self.digest_key)


REQUESTS_AT_ONCE: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "ragate_requests_at_once", default=None)
"""Inside `Judge.score` called by the runner: how many model requests the verdict may have in
flight together (the runner's slots it holds). A judge that sends several requests at once
(`requests_at_once`) keeps to it; None outside the runner."""


class JudgeMeter:
    """The model requests one question's verdicts made and the tokens the API reported for
    them. A judge that sends requests counts each (`sent`) and what its response reported
    (`reported`); the runner sets one per question (`METER`) and reads it once the verdicts
    are in. Thread-safe: a question's metrics are judged on several lanes at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.unreported = 0  # answered requests whose response carried no usage, or a wrong one
        self.invalid: dict[str, str] = {}  # a wrong usage's field -> its value and what is wrong

    def sent(self) -> None:
        with self._lock:
            self.requests += 1

    def reported(self, usage: object) -> None:
        """A response's `usage` (prompt_tokens, completion_tokens, and a cost if it has one;
        an object or a dict), or None when it had none. It is held to the rule a system's
        own usage is (`answer.reported_usage`): a negative, non-finite, boolean or string
        count or cost leaves the request's tokens unreported (not 0, not clamped), and the
        wrong field is kept (`invalid`)."""
        found = reported_usage(usage)
        with self._lock:
            if not isinstance(found, Usage):
                self.unreported += 1
                for name, why in (found or {}).items():
                    self.invalid.setdefault(name, why)
                return
            self.prompt_tokens += found.prompt_tokens
            self.completion_tokens += found.completion_tokens


METER: contextvars.ContextVar[JudgeMeter | None] = contextvars.ContextVar(
    "ragate_judge_meter", default=None)
"""Inside `Judge.score` called by the runner: the question's meter, where a judge that asks a
model counts its requests and their tokens (the RAGAS judge's transport does); None outside
the runner. A judge that asks nothing (the fixture judge) leaves it at 0."""


class Judge(Protocol):
    """Anything that scores judged metrics; `judge_id` names the model and its parameters.

    Optional: `requests_at_once(metric) -> int`, the model requests one verdict may send
    together (1 when absent); the runner holds that many concurrency slots for the verdict.
    """

    judge_id: str

    def prompt_hash(self, metric: str) -> str:
        """A digest of what the judge is asked for `metric`: part of every cache key."""
        ...

    async def score(self, item: JudgeInput, metric: str) -> float | Vacuous:
        """The metric's value for this answer (a finite number in [0, 1]), or raise
        JudgeFailure."""
        ...


class Embeds(Protocol):
    """What answer relevance needs: texts in, one vector each."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


# --- the formulas -----------------------------------------------------------------------


def faithfulness(supported: Sequence[bool]) -> float:
    """Statements supported by some retrieved context / statements; no statements → 1.0."""
    return sum(bool(s) for s in supported) / len(supported) if supported else 1.0


def context_precision(relevant: Sequence[bool]) -> float:
    """Average precision over contexts in rank order: Σ precision@k·rel_k / #relevant."""
    hits = 0
    total = 0.0
    for k, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / k
    return total / (hits + RAGAS_EPSILON)


def answer_relevance(question: np.ndarray, generated: np.ndarray) -> float:
    """Mean cosine similarity between the question and each generated question; none → 0.0."""
    import numpy as np

    if len(generated) == 0:
        return 0.0
    question = np.asarray(question, np.float64)  # RAGAS computes in float64; so do we
    generated = np.asarray(generated, np.float64)
    q = question / np.linalg.norm(question)
    g = generated / np.linalg.norm(generated, axis=1, keepdims=True)
    return float(np.mean(g @ q))


ANSWER_CORRECTNESS_WEIGHTS = (0.75, 0.25)  # RAGAS's: factuality F1, semantic similarity


def statement_f1(tp: int, fp: int, fn: int) -> float:
    """RAGAS AnswerCorrectness's F1 of its statement classification (beta 1): with nothing
    on one side, 1.0 when the other side is empty too, else 0."""
    precision = (1.0 if fn == 0 else 0.0) if tp + fp == 0 else tp / (tp + fp)
    recall = (1.0 if fp == 0 else 0.0) if tp + fn == 0 else tp / (tp + fn)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def answer_correctness(tp: int, fp: int, fn: int, similarity: float) -> float:
    """RAGAS's answer correctness: 0.75 × the F1 of the answer's statements classified
    against the reference's (TP, FP, FN) + 0.25 × the cosine of answer and reference."""
    factual, semantic = ANSWER_CORRECTNESS_WEIGHTS
    return (factual * statement_f1(tp, fp, fn) + semantic * similarity) / (factual + semantic)


def factual_correctness(supported: Sequence[bool], covered: Sequence[bool]) -> float:
    """RAGAS's factual correctness (mode f1): the answer's claims supported by the reference
    (TP, the others FP) and the reference's claims the answer does not cover (FN), as
    RAGAS's fbeta_score, rounded to 2 decimals as RAGAS rounds it."""
    tp = sum(bool(s) for s in supported)
    fp = len(supported) - tp
    fn = len(covered) - sum(bool(c) for c in covered)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    if precision == 0 and recall == 0:
        return 0.0
    return round(2 * precision * recall / (precision + recall), 2)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine of two vectors, in float64 (as RAGAS computes it)."""
    import numpy as np

    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return 0.0 if norm == 0 else float(a @ b / norm)


def judge_params(judge: Any) -> dict[str, Any]:
    return dict(getattr(judge, "params", {}) or {})
