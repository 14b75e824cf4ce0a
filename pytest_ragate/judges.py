"""Judged metrics: faithfulness, context precision and answer relevance, and who judged them.

A judge answers per question and metric, or raises `JudgeFailure`. A failure is recorded on
the row and excluded from that metric with the coverage shown; it is never averaged as zero
and never silently dropped. The formulas here are RAGAS's, so the fixture judge (exact
verdicts from a file) and the RAGAS judge (a model's verdicts) compute the same thing.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragate.answer import Context
from pytest_ragate.files import UnreadableText, decode
from pytest_ragate.problems import problems_from_validation
from pytest_ragate.settings import JudgeSettings

if TYPE_CHECKING:
    import numpy as np

# timeout, http, parse: the transport; missing: no verdict to give; error: the judge raised;
# invalid: a value that is not a score in [0, 1]; empty: a model judge extracted nothing to
# judge from an answer that has text; stale: a fixture verdict recorded for another answer
FailureKind = Literal["timeout", "http", "parse", "missing", "error", "invalid", "empty",
                      "stale"]
RAGAS_EPSILON = 1e-10  # RAGAS's denominator guard in average precision, kept for agreement


class JudgeFailure(Exception):
    """The judge could not give a verdict: counted as a failure, never as a score."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message


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

    async def score(self, item: JudgeInput, metric: str) -> float | Vacuous:
        """The metric's value for this answer (a finite number in [0, 1]), or raise
        JudgeFailure."""
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

    model_config = ConfigDict(extra="forbid", strict=True)

    statements: list[str] = Field(default_factory=list)
    supported: list[bool] = Field(default_factory=list)
    relevant_contexts: list[str] = Field(default_factory=list)
    generated_questions: list[str] = Field(default_factory=list)
    # sha256 of the answer text these verdicts were written for (`ragate stamp-verdicts`):
    # when the answer changes, the verdicts are stale and say so instead of scoring it
    answer_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None

    @model_validator(mode="after")
    def _paired(self) -> Verdicts:
        if len(self.supported) != len(self.statements):
            raise ValueError(f"{len(self.statements)} statements but {len(self.supported)} "
                             "supported flags")
        return self


class FixtureFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    judge_id: str = Field(min_length=1)
    answers: dict[str, Verdicts]


class Embeds(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def read_fixture_file(path: Path) -> tuple[FixtureFile, bytes]:
    """The fixture judge file (and its bytes), or a usage error naming the file and what is
    wrong in it."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise _usage(f"--ragate-judge fixture:{path}: cannot read the fixture judge file "
                     f"({error.strerror or error})") from None
    try:
        return FixtureFile.model_validate_json(decode(path, data)), data
    except UnreadableText as error:
        raise _usage(f"--ragate-judge fixture:{path}: the file {error.message}") from None
    except ValidationError as error:
        problems = problems_from_validation(error, path)
        raise _usage(f"--ragate-judge fixture:{path}: invalid fixture judge file:\n"
                     + "\n".join(map(str, problems))) from None


class _Lazy:
    """An embedder made on first use: a fixture judge whose verdicts need no vectors never
    loads a model."""

    def __init__(self, make: Callable[[], Embeds]) -> None:
        self._make = make
        self._embedder: Embeds | None = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if self._embedder is None:
            self._embedder = self._make()
        return self._embedder.encode(texts)


@dataclass
class FixtureJudge:
    """Verdicts from a file, so judged scores are exact and reproducible."""

    path: Path
    embedder: Embeds
    file: FixtureFile = field(init=False)

    def __post_init__(self) -> None:
        self.file, data = read_fixture_file(self.path)
        self._digest = hashlib.sha256(data).hexdigest()[:16]

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
        if verdicts.answer_sha256 and verdicts.answer_sha256 != answer_sha256(item.answer):
            raise JudgeFailure("stale", f"stale fixture verdict: {self.path.name} judged "
                               f"another answer to {item.question_id!r} (answer_sha256 "
                               f"{verdicts.answer_sha256[:12]}…); judge the new one, or "
                               "run `ragate stamp-verdicts` after checking it")
        if metric == "faithfulness":
            if not verdicts.statements:
                return Vacuous(1.0, "no statements")
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


def answer_sha256(text: str) -> str:
    """What a fixture verdict records of the answer it judged."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _usage(message: str) -> Exception:
    import pytest

    return pytest.UsageError(message)


def judge_spec(settings: JudgeSettings) -> tuple[str, str] | None:
    """("fixture", PATH) or ("ragas", MODEL) from --ragate-judge, checked: a bad spec is one
    usage error before anything runs, not a failure in every item."""
    if not settings.judge:
        return None
    kind, _, rest = settings.judge.partition(":")
    if kind == "fixture" and rest:
        return kind, rest
    if kind == "ragas" and (rest or settings.judge_model):
        if not settings.judge_url:
            raise _usage("--ragate-judge ragas:… needs --ragate-judge-url (the base URL of an "
                         "OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1)")
        return kind, rest or str(settings.judge_model)
    raise _usage(f"--ragate-judge {settings.judge!r}: expected fixture:PATH or ragas:MODEL "
                 "(or ragas with --ragate-judge-model)")


def check_settings(settings: JudgeSettings) -> None:
    """Everything about the configured judge that can be wrong before the first question:
    the spec, the fixture file (read and validated), the RAGAS extra."""
    spec = judge_spec(settings)
    if spec is None:
        return
    kind, rest = spec
    if kind == "fixture":
        read_fixture_file(Path(rest))
    elif importlib.util.find_spec("ragas") is None:
        raise _usage(f"--ragate-judge {settings.judge}: needs RAGAS: pip install "
                     "'pytest-ragate[ragas]'")


def from_settings(settings: JudgeSettings, embedder: Callable[[], Embeds]) -> Judge | None:
    """`--ragate-judge fixture:PATH` or `ragas:MODEL` (or `ragas` + --ragate-judge-model)."""
    spec = judge_spec(settings)
    if spec is None:
        return None
    kind, rest = spec
    if kind == "fixture":
        return FixtureJudge(Path(rest), _Lazy(embedder))
    from pytest_ragate.ragas_judge import RagasJudge

    assert settings.judge_url is not None  # judge_spec checked it
    return RagasJudge(rest, settings.judge_url,
                      api_key=os.environ.get("RAGATE_JUDGE_API_KEY")
                      or os.environ.get("OPENAI_API_KEY"),
                      timeout=settings.judge_timeout, embedder=embedder())


def judge_params(judge: Any) -> dict[str, Any]:
    return dict(getattr(judge, "params", {}) or {})
