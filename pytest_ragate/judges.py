"""Judged metrics: faithfulness, context precision and answer relevance, and who judged them.

A judge answers per question and metric, or raises `JudgeFailure`. A failure is recorded on
the row and excluded from that metric with the coverage shown; it is never averaged as zero
and never silently dropped. The formulas here are RAGAS's, so the fixture judge (exact
verdicts from a file) and the RAGAS judge (a model's verdicts) compute the same thing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragate.answer import Context
from pytest_ragate.problems import problems_from_validation
from pytest_ragate.settings import JudgeSettings

if TYPE_CHECKING:
    import numpy as np

JUDGED_METRICS = ("faithfulness", "context_precision", "answer_relevance")
FailureKind = Literal["timeout", "http", "parse", "missing", "error"]
RAGAS_EPSILON = 1e-10  # RAGAS's denominator guard in average precision, kept for agreement


class JudgeFailure(Exception):
    """The judge could not give a verdict: counted as a failure, never as a score."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


@dataclass(frozen=True)
class JudgeInput:
    """What a judge sees of one answered question; unanswerable questions never get here."""

    question_id: str
    question: str
    answer: str
    contexts: tuple[Context, ...]
    reference: str | None = None  # the expected gist, when the answers are unsealed

    def digest(self) -> str:
        material = [self.question, self.answer, [(c.context_id, c.text) for c in self.contexts],
                    self.reference]
        return hashlib.sha256(json.dumps(material, ensure_ascii=False).encode()).hexdigest()


class Judge(Protocol):
    """Anything that scores judged metrics; `judge_id` names the model and its parameters."""

    judge_id: str

    def prompt_hash(self, metric: str) -> str:
        """A digest of what the judge is asked for `metric`: part of every cache key."""
        ...

    async def score(self, item: JudgeInput, metric: str) -> float:
        """The metric's value for this answer, or raise JudgeFailure."""
        ...


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


# --- the fixture judge --------------------------------------------------------------------


class Verdicts(BaseModel):
    """One question's exact verdicts in a fixture judge file."""

    model_config = ConfigDict(extra="forbid")

    statements: list[str] = Field(default_factory=list)
    supported: list[bool] = Field(default_factory=list)
    relevant_contexts: list[str] = Field(default_factory=list)
    generated_questions: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _paired(self) -> Verdicts:
        if len(self.supported) != len(self.statements):
            raise ValueError(f"{len(self.statements)} statements but {len(self.supported)} "
                             "supported flags")
        return self


class FixtureFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judge_id: str = Field(min_length=1)
    answers: dict[str, Verdicts]


class Embeds(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass
class FixtureJudge:
    """Verdicts from a file, so judged scores are exact and reproducible."""

    path: Path
    embedder: Embeds
    file: FixtureFile = field(init=False)

    def __post_init__(self) -> None:
        try:
            self.file = FixtureFile.model_validate_json(self.path.read_bytes())
        except OSError as error:
            raise _usage(f"cannot read the fixture judge file {self.path}: {error}") from None
        except ValidationError as error:
            problems = problems_from_validation(error, self.path)
            raise _usage("invalid fixture judge file:\n" + "\n".join(map(str, problems))
                         ) from None
        self._digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16]

    @property
    def judge_id(self) -> str:
        return f"fixture:{self.file.judge_id}"

    def prompt_hash(self, metric: str) -> str:
        return self._digest

    async def score(self, item: JudgeInput, metric: str) -> float:
        import numpy as np

        verdicts = self.file.answers.get(item.question_id)
        if verdicts is None:
            raise JudgeFailure("missing", f"{self.path.name} has no verdicts for "
                               f"{item.question_id!r}")
        if metric == "faithfulness":
            return faithfulness(verdicts.supported)
        if metric == "context_precision":
            listed = set(verdicts.relevant_contexts)
            return context_precision([c.context_id in listed for c in item.contexts])
        if metric == "answer_relevance":
            if not verdicts.generated_questions:
                return 0.0
            # one text per call, as RAGAS embeds them: batch padding moves vectors by ~1e-7
            texts = [item.question, *verdicts.generated_questions]
            vectors = await asyncio.to_thread(  # off the judge loop: other calls keep going
                lambda: np.vstack([self.embedder.encode([t]) for t in texts]))
            return answer_relevance(vectors[0], vectors[1:])
        raise JudgeFailure("error", f"unknown metric {metric!r}")


def _usage(message: str) -> Exception:
    import pytest

    return pytest.UsageError(message)


def from_settings(settings: JudgeSettings, embedder: Callable[[], Embeds]) -> Judge | None:
    """`--ragate-judge fixture:PATH` or `ragas:MODEL` (or `ragas` + --ragate-judge-model)."""
    if not settings.judge:
        return None
    kind, _, rest = settings.judge.partition(":")
    if kind == "fixture" and rest:
        return FixtureJudge(Path(rest), embedder())
    if kind == "ragas" and (rest or settings.judge_model):
        if not settings.judge_url:
            raise _usage("--ragate-judge ragas:… needs --ragate-judge-url (the base URL of an "
                         "OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1)")
        from pytest_ragate.ragas_judge import RagasJudge

        return RagasJudge(rest or str(settings.judge_model), settings.judge_url,
                          api_key=os.environ.get("RAGATE_JUDGE_API_KEY")
                          or os.environ.get("OPENAI_API_KEY"),
                          timeout=settings.judge_timeout, embedder=embedder())
    raise _usage(f"--ragate-judge {settings.judge!r}: expected fixture:PATH or ragas:MODEL")


def judge_params(judge: Any) -> dict[str, Any]:
    return dict(getattr(judge, "params", {}) or {})
