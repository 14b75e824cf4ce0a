"""The fixture judge: exact verdicts from a file, so judged scores are reproducible.

`ragate stamp --verdicts` records which answer each verdict was written for; a verdict for
another answer is a `stale` failure, never a score. It asks no model: it counts nothing on
the question's meter (`base.METER`), so its rows record no judge request, token or cost.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_ragate.answer import DIGEST_PATTERN, answer_sha256
from pytest_ragate.files import UnreadableText, decode
from pytest_ragate.judges.base import (
    Embeds,
    JudgeFailure,
    JudgeInput,
    Vacuous,
    answer_correctness,
    answer_relevance,
    context_precision,
    cosine,
    factual_correctness,
    faithfulness,
    invalid,
    shown,
)
from pytest_ragate.problems import problems_from_validation

if TYPE_CHECKING:
    import numpy as np


def usage_error(message: str) -> Exception:
    import pytest

    return pytest.UsageError(message)


class FixtureVerdicts(BaseModel):
    """One question's exact verdicts in a fixture judge file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    statements: list[str] = Field(default_factory=list)
    supported: list[bool] = Field(default_factory=list)
    relevant_contexts: list[str] = Field(default_factory=list)
    generated_questions: list[str] = Field(default_factory=list)
    # answer_correctness: the answer's statements the reference supports (TP), those it
    # does not (FP), and the reference's statements the answer misses (FN)
    correct_statements: list[str] = Field(default_factory=list)
    incorrect_statements: list[str] = Field(default_factory=list)
    missed_statements: list[str] = Field(default_factory=list)
    # factual_correctness: per claim of the answer, whether the reference supports it, and
    # per claim of the reference, whether the answer covers it
    claims_supported: list[bool] | None = None
    reference_claims_covered: list[bool] | None = None
    # a rubric's verdict by its name (`[rubrics.polite]`): 1 (pass) or 0 (fail) for a
    # pass/fail rubric, the score 1..5 for a scaled one; anything else is `invalid`
    rubrics: dict[str, int] = Field(default_factory=dict)
    # sha256 of the answer text these verdicts were written for (`ragate stamp --verdicts`;
    # keyed, `hmac-sha256:…`, for an answer a sealed goldset masks): when the answer changes,
    # the verdicts are stale and say so instead of scoring it
    answer_sha256: Annotated[str, Field(pattern=DIGEST_PATTERN)] | None = None

    @model_validator(mode="after")
    def _paired(self) -> FixtureVerdicts:
        if len(self.supported) != len(self.statements):
            raise ValueError(f"{len(self.statements)} statements but {len(self.supported)} "
                             "supported flags")
        return self


class FixtureFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    judge_id: str = Field(min_length=1)
    answers: dict[str, FixtureVerdicts]


def read_fixture_file(path: Path) -> tuple[FixtureFile, bytes]:
    """The fixture judge file (and its bytes), or a usage error naming the file and what is
    wrong in it."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise usage_error(f"--ragate-judge fixture:{path}: cannot read the fixture judge file "
                     f"({error.strerror or error})") from None
    try:
        return FixtureFile.model_validate_json(decode(path, data)), data
    except UnreadableText as error:
        raise usage_error(f"--ragate-judge fixture:{path}: the file {error.message}") from None
    except ValidationError as error:
        problems = problems_from_validation(error, path)
        raise usage_error(f"--ragate-judge fixture:{path}: invalid fixture judge file:\n"
                     + "\n".join(map(str, problems))) from None


class LazyEmbedder:
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
        kept = item.answer_sha256 or answer_sha256(item.answer)  # as the row keeps it
        if verdicts.answer_sha256 and verdicts.answer_sha256 != kept:
            raise JudgeFailure("stale", f"stale fixture verdict: {self.path.name} judged "
                               f"another answer to {item.question_id!r} (answer_sha256 "
                               f"{verdicts.answer_sha256[:12]}…); judge the new one, or "
                               "run `ragate stamp --verdicts` after checking it")
        if metric in item.rubrics:
            return self._rubric(item, verdicts, metric)
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
        if metric in ("answer_correctness", "factual_correctness"):
            return await self._correctness(item, verdicts, metric)
        raise JudgeFailure("error", f"unknown metric {metric!r}")

    def _rubric(self, item: JudgeInput, verdicts: FixtureVerdicts, name: str) -> float:
        """A rubric's verdict from the file, held to the rubric's scale: none is `missing`,
        one it does not define (2 for a pass/fail rubric, 0 or 6 on a scale) `invalid`."""
        rubric = item.rubrics[name]
        score = verdicts.rubrics.get(name)
        if score is None:
            raise JudgeFailure("missing", f"{self.path.name} gives no verdict of rubric {name} "
                               f"for {item.question_id!r} (\"rubrics\": {{\"{name}\": …}})")
        if not rubric.valid(score):
            raise invalid(f"rubric {name}", shown(score),
                          f"not a score from {rubric.bottom} to {rubric.top}")
        return rubric.value_of(score)

    async def _correctness(self, item: JudgeInput, verdicts: FixtureVerdicts,
                           metric: str) -> float:
        """The two judged correctness metrics, against the gist (the judge's reference)."""
        if not item.reference:
            raise JudgeFailure("missing", f"{metric} needs the expected answer as reference "
                               "(a sealed goldset opened without its key has none)")
        if metric == "factual_correctness":
            if verdicts.claims_supported is None or verdicts.reference_claims_covered is None:
                raise JudgeFailure("missing", f"{self.path.name} gives no claims_supported "
                                   f"and reference_claims_covered for {item.question_id!r}")
            if not verdicts.claims_supported:
                raise JudgeFailure("empty", "no claims from an answer that has text: nothing "
                                   "was judged")
            return factual_correctness(verdicts.claims_supported,
                                       verdicts.reference_claims_covered)
        tp, fp = len(verdicts.correct_statements), len(verdicts.incorrect_statements)
        if not tp + fp:
            raise JudgeFailure("missing", f"{self.path.name} classifies no statement of the "
                               f"answer to {item.question_id!r} (correct_statements, "
                               "incorrect_statements)")
        vectors = await asyncio.to_thread(
            lambda: [self.embedder.encode([t])[0] for t in (item.answer, item.reference)])
        return answer_correctness(tp, fp, len(verdicts.missed_statements),
                                  cosine(vectors[0], vectors[1]))


