"""The RAGAS judge: RAGAS 0.4.3's own metric code, asking any OpenAI-compatible model.

Imported only when a `--ragate-judge ragas:MODEL` run needs a verdict its cache does not hold
(`ragas_deferred.py`), so RAGAS (seconds to import) never loads for a run that does not judge
with it, nor for one whose every verdict is cached.

    transport   ChatTransport          one chat-completions request; failures → JudgeFailure
    bridges     RagateInstructorLLM    ragas.llms.base.InstructorBaseRagasLLM (collections metrics)
                RagateEmbeddings       ragas.embeddings.base.BaseRagasEmbedding over our Embedder
    judge       RagasJudge             the Judge protocol over ragas.metrics.collections

Where pytest-ragate and RAGAS differ (everything else is RAGAS's value, unchanged):

* a model that extracts no statements from an answer (every answer judged here has text) is
  `JudgeFailure("empty")`: RAGAS returns NaN, and scoring it 1.0 would let a judge that finds
  nothing to check pass every faithfulness floor. It is recognised from the statement step
  itself (the statement prompt returned an empty list).
* every field a model returns is held to the values the metric defines before RAGAS computes
  anything (`VERDICT_SHAPES`): an NLI or context-precision verdict and a noncommittal flag are
  the integer 0 or 1 (RAGAS counts any truthy verdict as supported: -1, 2, "1", true), a
  statement list is a list of non-empty strings, and the NLI step judges each statement it was
  sent exactly once. Anything else is `JudgeFailure("invalid")` naming the field and value.
* any other NaN, missing or non-numeric value is `JudgeFailure("parse")`, never a score.
* inputs RAGAS refuses (an empty question or answer, no retrieved contexts, an empty
  reference) are `JudgeFailure("missing")` before any model call.
* the model's sampling parameters are the judge's, not RAGAS's: temperature (0 by default),
  max_tokens and seed are sent on every request and are part of `judge_id` and `params`.
* every request is counted on the question's meter (`base.METER`) with the tokens its
  response's `usage` reports: the row's judge_requests and judge_tokens.
* nothing is retried: the OpenAI client runs with max_retries=0; a failed request is a
  failure of that verdict. The one
  exception: an HTTP 400 to a request carrying `response_format` is asked once more without
  it (servers that do not know JSON mode), and JSON mode stays off if that works.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas: no analytics DNS look-ups

import asyncio
import contextvars
import hashlib
import inspect
import json
import math
import re
import ssl
import threading
from collections.abc import AsyncIterator, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import openai

# the client imports openai.resources on first `.chat` otherwise: ~1 s under load, inside
# the first verdict, stalling the requests of the others
import openai.resources.chat
import ragas
from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError
from pydantic_core import PydanticCustomError
from ragas.embeddings.base import BaseRagasEmbedding
from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics import DiscreteMetric
from ragas.metrics.collections import (
    AnswerCorrectness,
    AnswerRelevancy,
    ContextPrecisionWithoutReference,
    ContextPrecisionWithReference,
    DomainSpecificRubrics,
    FactualCorrectness,
    Faithfulness,
)
from ragas.metrics.collections.answer_correctness.util import ClassificationWithReason
from ragas.metrics.collections.answer_correctness.util import (
    StatementGeneratorOutput as CorrectnessStatements,
)
from ragas.metrics.collections.answer_relevancy.util import (
    AnswerRelevanceInput,
    AnswerRelevanceOutput,
)
from ragas.metrics.collections.context_precision.util import ContextPrecisionOutput
from ragas.metrics.collections.domain_specific_rubrics.util import (
    RubricScoreOutput,
    RubricScorePrompt,
)
from ragas.metrics.collections.factual_correctness.util import ClaimDecompositionOutput
from ragas.metrics.collections.factual_correctness.util import NLIStatementOutput as ClaimVerdicts
from ragas.metrics.collections.faithfulness.util import NLIStatementOutput, StatementGeneratorOutput
from ragas.prompt.metrics.base_prompt import BasePrompt

from pytest_ragate.judges.base import (
    ANSWER_CORRECTNESS_WEIGHTS,
    METER,
    REQUESTS_AT_ONCE,
    Embeds,
    JudgeFailure,
    JudgeInput,
    invalid,
    shown,
)
from pytest_ragate.judges.ragas_deferred import (
    ANSWER_RELEVANCY_STRICTNESS,
    RAGAS_METRICS,
    ragas_judge_id,
    sampling_params,
)
from pytest_ragate.redaction import redact_url_credentials
from pytest_ragate.scoring.rubrics import Rubric

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

JSON_SYSTEM_PROMPT = ("You are an evaluation judge. Reply with exactly one JSON object and "
                      "nothing else: no prose, no code fences.")
JSON_SCHEMA_PROMPT = " The object must conform to this JSON schema: {schema}"


# --- transport ---------------------------------------------------------------------------


class _JsonModeRefused(Exception):
    """HTTP 400 to a request with response_format: retried once without it."""


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str | None


_SSL: ssl.SSLContext | None = None
_SSL_LOCK = threading.Lock()
_SESSION: contextvars.ContextVar[tuple[ChatTransport, openai.AsyncOpenAI] | None] = \
    contextvars.ContextVar("ragate_openai_session", default=None)


def _ssl_context() -> ssl.SSLContext:
    """Built once: building one per client costs ~0.1 s (it loads the CA bundle)."""
    global _SSL
    with _SSL_LOCK:
        if _SSL is None:
            cafile = None
            if not (os.environ.get("SSL_CERT_FILE") or os.environ.get("SSL_CERT_DIR")):
                try:
                    import certifi

                    cafile = certifi.where()
                except ImportError:
                    pass
            _SSL = ssl.create_default_context(cafile=cafile)
        return _SSL


def _excerpt(text: object, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


class ChatTransport:
    """Chat completions against any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp, OpenAI).

    Deterministic sampling parameters go on every request. `session()` shares one HTTP client
    (and its connections) across the requests of one verdict; a request outside a session gets
    a client of its own. Errors become `JudgeFailure`: timeout, http (status or connection), and
    parse (a body that is not a chat completion, an empty choice, or output cut at max_tokens).
    """

    def __init__(self, model: str, base_url: str, *, api_key: str | None = None,
                 timeout: float = 60.0, temperature: float = 0.0, max_tokens: int | None = None,
                 seed: int | None = None, json_mode: bool = True) -> None:
        self.model = model
        self.base_url = base_url
        self.api_key = api_key or "not-needed"
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.json_mode = json_mode  # response_format json_object; dropped if the server refuses it
        # whether the server answers `n` > 1 with n choices: None until one request tells
        self.n_choices: bool | None = None

    @property
    def params(self) -> dict[str, Any]:
        return sampling_params(self.temperature, self.max_tokens, self.seed)

    def _client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self.base_url, api_key=self.api_key, timeout=self.timeout, max_retries=0,
            http_client=openai.DefaultAsyncHttpxClient(verify=_ssl_context(),
                                                       timeout=self.timeout))

    @asynccontextmanager
    async def session(self) -> AsyncIterator[openai.AsyncOpenAI]:
        current = _SESSION.get()
        if current is not None and current[0] is self:
            yield current[1]
            return
        client = self._client()
        token = _SESSION.set((self, client))
        try:
            yield client
        finally:
            _SESSION.reset(token)
            await client.close()

    async def complete(self, messages: list[dict[str, str]], *, json_object: bool = False,
                       stop: Sequence[str] | None = None) -> Completion:
        return (await self.complete_choices(messages, 1, json_object=json_object,
                                            stop=stop))[0]

    async def complete_choices(self, messages: list[dict[str, str]], n: int, *,
                               json_object: bool = False, stop: Sequence[str] | None = None,
                               ) -> list[Completion]:
        """One request asking for `n` choices (`n` is sent only when above 1): what came back,
        which may be fewer than `n` from a server that ignores `n`."""
        async with self.session() as client:
            if json_object and self.json_mode:
                try:
                    return await self._create(client, messages, True, stop, n)
                except _JsonModeRefused:
                    pass  # asked once more without response_format; off only if that works
                completions = await self._create(client, messages, False, stop, n)
                self.json_mode = False
                return completions
            return await self._create(client, messages, False, stop, n)

    async def _create(self, client: openai.AsyncOpenAI, messages: list[dict[str, str]],
                      use_json: bool, stop: Sequence[str] | None, n: int = 1,
                      ) -> list[Completion]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, **self.params}
        if n > 1:
            kwargs["n"] = n
        if use_json:
            kwargs["response_format"] = {"type": "json_object"}
        if stop:
            kwargs["stop"] = list(stop)
        where = f"{self.model} at {redact_url_credentials(self.base_url)}"
        meter = METER.get()  # the question's bill: every request sent, the tokens reported
        if meter is not None:
            meter.sent()
        try:
            response = await client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            raise JudgeFailure("timeout", f"{where}: no answer within {self.timeout:g}s"
                               ) from None
        except openai.APIStatusError as error:
            if use_json and error.status_code == 400:
                raise _JsonModeRefused from None  # some servers refuse response_format
            raise JudgeFailure("http", f"{where}: HTTP {error.status_code}: "
                               f"{_excerpt(error.message)}") from None
        except openai.APIConnectionError as error:
            raise JudgeFailure("http", f"{where}: cannot connect: {error}") from None
        except (openai.APIResponseValidationError, ValueError) as error:
            raise JudgeFailure("parse", f"{where}: the response is not a chat completion: "
                               f"{_excerpt(error)}") from None
        if meter is not None:
            meter.reported(getattr(response, "usage", None))
        choices = getattr(response, "choices", None)
        if not choices:
            raise JudgeFailure("parse", f"{where}: the response has no choices")
        completions = []
        for choice in choices[:n]:
            message = getattr(choice, "message", None)
            content = getattr(message, "content", None)
            if not isinstance(content, str):
                raise JudgeFailure("parse", f"{where}: the response has no text content")
            completions.append(Completion(content, getattr(choice, "finish_reason", None)))
        return completions


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


# --- what a model's verdicts may be ----------------------------------------------------------
# RAGAS's reply models are lax (`verdict: int` takes -1, 2, "1" and true, and its formulas count
# any truthy verdict as a 1): each is held to the exact values its metric defines first.


def _zero_or_one(value: object) -> int:
    if type(value) is int and value in (0, 1):
        return value
    raise PydanticCustomError("zero_or_one", "not 0 or 1")


def _words(value: object) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise PydanticCustomError("words", "not a non-empty string")


ZeroOrOne = Annotated[int, PlainValidator(_zero_or_one)]
Words = Annotated[str, PlainValidator(_words)]


class _Shape(BaseModel):
    model_config = ConfigDict(strict=True)  # fields RAGAS does not read are left alone


class _Statements(_Shape):
    statements: list[Words]


class _NLIVerdict(_Shape):
    statement: Words
    reason: str
    verdict: ZeroOrOne


class _NLIVerdicts(_Shape):
    statements: list[_NLIVerdict]


class _UsefulVerdict(_Shape):
    reason: str
    verdict: ZeroOrOne


class _GeneratedQuestion(_Shape):
    question: str  # RAGAS drops an empty question: with all three dropped, the score is 0.0
    noncommittal: ZeroOrOne


class _Claims(_Shape):
    claims: list[Words]


def _an_int(value: object) -> int:
    if type(value) is int:
        return value
    raise PydanticCustomError("an_int", "not an integer score")


class _RubricScored(_Shape):
    feedback: str
    score: Annotated[int, PlainValidator(_an_int)]  # held to the rubric's scale after


class _Classified(_Shape):
    statement: Words
    reason: str


class _Classification(_Shape):
    TP: list[_Classified]
    FP: list[_Classified]
    FN: list[_Classified]


VERDICT_SHAPES: dict[type[BaseModel], type[BaseModel]] = {
    StatementGeneratorOutput: _Statements,
    NLIStatementOutput: _NLIVerdicts,
    ContextPrecisionOutput: _UsefulVerdict,
    AnswerRelevanceOutput: _GeneratedQuestion,
    CorrectnessStatements: _Statements,
    ClassificationWithReason: _Classification,
    ClaimDecompositionOutput: _Claims,
    ClaimVerdicts: _NLIVerdicts,
    RubricScoreOutput: _RubricScored,
}


def _field(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def _held_to_shape(body: str, response_model: type[BaseModel]) -> None:
    """JudgeFailure("invalid") naming the first field outside what the metric defines."""
    shape = VERDICT_SHAPES.get(response_model)
    if shape is None:
        return
    try:
        shape.model_validate_json(body)
    except ValidationError as error:
        first, more = error.errors()[0], len(error.errors()) - 1
        expected = first["msg"] if first["type"] in ("zero_or_one", "words") else \
            f"not what RAGAS defines ({first['msg']})"
        raise invalid(f"{response_model.__name__}{_field(first['loc'])}",
                      shown(first["input"]),
                      expected + (f" (and {more} more)" if more else "")) from None


def parse_json_reply(text: str, response_model: type[M]) -> M:
    """The model's JSON as `response_model`: tolerant of code fences, reasoning blocks and a
    sentence around one JSON object; anything else is `JudgeFailure("parse")`, and a reply
    that parses but has a value outside what its metric defines is `JudgeFailure("invalid")`.
    """
    body = _FENCE.sub("", _THINK.sub("", text).strip()).strip()
    if not body.startswith("{"):
        start, end = body.find("{"), body.rfind("}")
        if start >= 0 and end > start:
            body = body[start:end + 1]
    try:
        reply = response_model.model_validate_json(body)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}"
                             for e in error.errors()[:3])
        raise JudgeFailure("parse", f"{response_model.__name__} expected: {problems}; got "
                           f"{_excerpt(text)!r}") from None
    _held_to_shape(body, response_model)
    return reply


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when called inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1, thread_name_prefix="ragate-sync-judge") as thread:
        return thread.submit(asyncio.run, coro).result()


# --- the bridges -------------------------------------------------------------------------


def schema_text(response_model: type[BaseModel]) -> str:
    """The schema exactly as RAGAS's BasePrompt.to_string writes it into its prompts."""
    return json.dumps(response_model.model_json_schema())


class RagateInstructorLLM(InstructorBaseRagasLLM):
    """RAGAS's structured-output LLM interface (what `ragas.metrics.collections` require).

    `agenerate(prompt, response_model)` sends RAGAS's prompt as the user message, asks for one
    JSON object (system message; `response_format: json_object` where the server accepts it;
    the response model's JSON schema when the prompt does not already carry it) and parses the
    reply into `response_model`. It does not go through the instructor library: no tool calls,
    no re-asking — a reply that does not parse is a `JudgeFailure("parse")`.
    """

    provider = "openai"  # read by RAGAS's multimodal metrics; every endpoint is OpenAI-shaped
    is_async = True  # read by ragas.prompt.pydantic_prompt before it calls agenerate

    def __init__(self, transport: ChatTransport) -> None:
        self.transport = transport

    @property
    def model(self) -> str:
        return self.transport.model

    @staticmethod
    def messages(prompt: str, response_model: type[BaseModel]) -> list[dict[str, str]]:
        system = JSON_SYSTEM_PROMPT
        schema = schema_text(response_model)
        if schema not in prompt:
            system += JSON_SCHEMA_PROMPT.format(schema=schema)
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]

    def generate(self, prompt: str, response_model: type[M]) -> M:
        return _run_sync(self.agenerate(prompt, response_model))

    async def agenerate(self, prompt: str, response_model: type[M]) -> M:
        return (await self.agenerate_choices(prompt, response_model, 1))[0]

    async def agenerate_choices(self, prompt: str, response_model: type[M], n: int,
                                ) -> list[M]:
        """Up to `n` replies to `prompt` from one request (fewer when the server ignores
        `n`), each parsed into `response_model`."""
        completions = await self.transport.complete_choices(
            self.messages(prompt, response_model), n, json_object=True)
        replies = []
        for completion in completions:
            if completion.finish_reason == "length":
                raise JudgeFailure("parse", f"{self.model} stopped at max_tokens="
                                   f"{self.transport.max_tokens} before finishing its JSON")
            replies.append(parse_json_reply(completion.text, response_model))
        return replies

    def __repr__(self) -> str:
        url = redact_url_credentials(self.transport.base_url)
        return f"RagateInstructorLLM(model={self.model!r}, base_url={url!r})"


class RagateEmbeddings(BaseRagasEmbedding):
    """RAGAS's modern embeddings interface over our Embedder (all-MiniLM-L6-v2, unit vectors).

    Each text is encoded on its own: in a batch, padding to the longest text moves a MiniLM
    vector by ~1e-7, so a verdict would depend on which texts happened to share its batch.
    Vectors are returned as `list[float]` (the interface's type), so RAGAS computes its cosine
    in float64 from the exact float32 values, as with any RAGAS embeddings provider.
    """

    def __init__(self, embedder: Embeds) -> None:
        super().__init__(cache=None)
        self.embedder = embedder

    @property
    def model_id(self) -> str:
        return str(getattr(self.embedder, "model_id", type(self.embedder).__name__))

    def embed_text(self, text: str, **kwargs: Any) -> list[float]:
        return self.embed_texts([text])[0]

    async def aembed_text(self, text: str, **kwargs: Any) -> list[float]:
        return await asyncio.to_thread(self.embed_text, text)  # never block the judge loop

    def embed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        vectors: list[list[float]] = [self.embedder.encode([text])[0].tolist() for text in texts]
        return vectors

    async def aembed_texts(self, texts: list[str], **kwargs: Any) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_texts, texts)


# --- the judge ---------------------------------------------------------------------------


class _Faithfulness(Faithfulness):
    """RAGAS's Faithfulness, remembering what its statement step returned, and holding its
    NLI step to one verdict per statement sent."""

    statements: list[str] | None = None

    async def _create_statements(self, question: str, response: str) -> list[str]:
        statements = await super()._create_statements(question, response)
        self.statements = list(statements)
        return statements

    async def _create_verdicts(self, statements: list[str], context: str,
                               ) -> NLIStatementOutput:
        verdicts = await super()._create_verdicts(statements, context)
        each_once(statements, [v.statement for v in verdicts.statements])
        return verdicts


class _AnswerCorrectness(AnswerCorrectness):
    """RAGAS's AnswerCorrectness, holding its steps to what they must return: statements
    from the answer (none from an answer with text is `empty`: RAGAS would call it a perfect
    match, factuality 1.0), and a classification that puts each of the answer's statements
    in TP or FP once and takes FN from the reference's statements only."""

    async def _generate_statements(self, question: str, text: str) -> list[str]:
        statements = await super()._generate_statements(question, text)
        if not statements:
            raise JudgeFailure("empty", f"{self.llm.model} extracted no statements from a "  # type: ignore[attr-defined]
                               "text that has some: nothing was judged")
        return statements

    async def _classify_statements(self, question: str, answer_statements: list[str],
                                   ground_truth_statements: list[str],
                                   ) -> ClassificationWithReason:
        found = await super()._classify_statements(question, answer_statements,
                                                   ground_truth_statements)
        each_once_as("ClassificationWithReason.TP+FP", answer_statements,
                     [c.statement for c in (*found.TP, *found.FP)])
        left = [_folded(t) for t in ground_truth_statements]
        for i, missed in enumerate(found.FN):
            if _folded(missed.statement) not in left:
                raise invalid(f"ClassificationWithReason.FN[{i}].statement",
                              shown(missed.statement), "not one of the reference's statements")
        return found


class _FactualCorrectness(FactualCorrectness):
    """RAGAS's FactualCorrectness (mode f1), holding its steps: claims from the answer
    (none from an answer with text is `empty`: RAGAS would score it 0 without judging), and
    an NLI step that judges each claim sent exactly once."""

    async def _decompose_claims(self, text: str) -> list[str]:
        claims = await super()._decompose_claims(text)
        if not claims:
            raise JudgeFailure("empty", f"{self.llm.model} decomposed no claims from a text "  # type: ignore[attr-defined]
                               "that has some: nothing was judged")
        return claims

    async def _verify_claims(self, claims: list[str], reference: str) -> ClaimVerdicts:
        verdicts = await super()._verify_claims(claims, reference)
        each_once(claims, [v.statement for v in verdicts.statements])
        return verdicts


def _folded(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def each_once(sent: list[str], judged: list[str]) -> None:
    """The NLI step must judge each statement it was sent exactly once (compared without
    case, punctuation or spacing): RAGAS divides by the verdicts it got, so a model that
    judges 1 of 3 statements, or one supported statement three times, would score 1.0."""
    if judged and len(judged) != len(sent):  # none at all: RAGAS's NaN, a parse failure
        raise invalid("NLIStatementOutput.statements",
                      f"with {len(judged)} verdict{'' if len(judged) == 1 else 's'}",
                      f"not one per statement sent ({len(sent)})")
    left = [_folded(s) for s in sent]
    for i, statement in enumerate(judged):
        if _folded(statement) not in left:
            raise invalid(f"NLIStatementOutput.statements[{i}].statement", shown(statement),
                          "not one of the statements sent (or sent once and judged twice)")
        left.remove(_folded(statement))


def each_once_as(what: str, sent: list[str], judged: list[str]) -> None:
    """`each_once` for another step's verdicts (answer correctness's classification), its
    failure naming that step's field (`each_once`'s own source is part of every metric's
    prompt hash: kept as it was, so their cached verdicts stay valid)."""
    try:
        each_once(sent, judged)
    except JudgeFailure as failure:
        raise JudgeFailure(failure.kind, failure.message.replace(
            "NLIStatementOutput.statements", what)) from None


class _Replayed(InstructorBaseRagasLLM):
    """Hands RAGAS's AnswerRelevancy the replies already fetched for its prompt, in order.

    Only the exact prompt they were fetched for is replayed; anything else goes to the model.
    """

    def __init__(self, llm: InstructorBaseRagasLLM, prompt: str,
                 replies: list[AnswerRelevanceOutput]) -> None:
        self.llm = llm
        self.prompt = prompt
        self.replies = list(replies)

    def generate(self, prompt: str, response_model: type[M]) -> M:
        return _run_sync(self.agenerate(prompt, response_model))

    async def agenerate(self, prompt: str, response_model: type[M]) -> M:
        if prompt == self.prompt and response_model is AnswerRelevanceOutput and self.replies:
            return self.replies.pop(0)  # type: ignore[return-value]
        return await self.llm.agenerate(prompt, response_model)


class _AnswerRelevancy(AnswerRelevancy):
    """RAGAS's AnswerRelevancy with its `strictness` question generations fetched at once.

    RAGAS 0.4.3 awaits the same prompt `strictness` times one after another (0.6 s a row at
    200 ms a request). Here the generations are fetched first: one request with
    `n = strictness` while the server is not known to ignore `n` (as `ragas.evaluate()` asks
    a LangChain model, but with `n` on this request, not on a shared client: RAGAS #2324),
    and whatever a server that ignores `n` did not return as single requests sent
    concurrently (at most as many at once as the runner holds slots for). Then RAGAS's own
    `ascore` runs unchanged over them (dropping empty questions, the noncommittal rule, the
    embeddings and the cosine), each of its `agenerate` calls answered by the next fetched
    reply. The prompt is RAGAS's own, built the way `ascore` builds it, so the model is asked
    what it was asked before. A failed generation fails the verdict as the first failure in
    order would have sequentially; the others are waited for, not left running.
    """

    llm: RagateInstructorLLM

    async def ascore(self, user_input: str, response: str) -> Any:
        if not user_input or not response:
            return await super().ascore(user_input, response)  # RAGAS's own ValueError
        prompt = self.prompt.to_string(AnswerRelevanceInput(response=response))
        replies = await self._generations(prompt)
        llm = self.llm
        self.llm = _Replayed(llm, prompt, replies)  # type: ignore[assignment]
        try:
            return await super().ascore(user_input, response)
        finally:
            self.llm = llm

    async def _generations(self, prompt: str) -> list[AnswerRelevanceOutput]:
        transport = self.llm.transport
        replies: list[AnswerRelevanceOutput] = []
        if transport.n_choices is not False and self.strictness > 1:
            try:
                replies = await self.llm.agenerate_choices(prompt, AnswerRelevanceOutput,
                                                           self.strictness)
            except JudgeFailure as failure:
                if failure.kind != "http" or "HTTP 400" not in failure.message:
                    raise
                transport.n_choices = False  # a server refusing `n`: asked singly from now on
            else:
                transport.n_choices = len(replies) >= self.strictness
        missing = self.strictness - len(replies)
        lane = asyncio.Semaphore(max(1, REQUESTS_AT_ONCE.get() or self.strictness))

        async def generation() -> AnswerRelevanceOutput:
            async with lane:
                return await self.llm.agenerate(prompt, AnswerRelevanceOutput)

        outcomes = await asyncio.gather(*(generation() for _ in range(missing)),
                                        return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            replies.append(outcome)
        return replies[:self.strictness]


def _verdict_rules(metric: str) -> str:
    """The source of the checks a reply for `metric` passes before RAGAS scores it: part of
    its prompt hash, so a verdict cached under other rules (before a -1 was refused) is asked
    again rather than replayed. The correctness metrics' own checks are theirs alone: adding
    them left the other metrics' cache keys (and every verdict cached under them) as they
    were."""
    checks: list[Any] = [_zero_or_one, _words, _Statements, _NLIVerdicts, _UsefulVerdict,
                         _GeneratedQuestion, _held_to_shape, _folded, each_once]
    if metric in ("answer_correctness", "factual_correctness"):
        checks += [_Classification, _Claims, each_once_as, _AnswerCorrectness,
                   _FactualCorrectness]
    if metric not in BUILT_IN:  # a rubric's: its own checks only
        checks += [_an_int, _RubricScored, rubric_prompt, RagasJudge._rubric]
    return "".join(inspect.getsource(check) for check in checks)


PASS_FAIL = ("pass", "fail")
BUILT_IN = ("faithfulness", "context_precision", "answer_relevance", "answer_correctness",
            "factual_correctness")


def rubric_prompt(criteria: str) -> str:
    """The prompt ragate writes for a pass/fail rubric's `DiscreteMetric`, from its
    criteria (braces doubled: RAGAS's prompt is a format string, filled with the question
    and the answer)."""
    escaped = criteria.replace("{", "{{").replace("}", "}}")
    return ("Grade the answer to the question below against one criterion.\n\n"
            f"Criterion: {escaped}\n\n"
            "Question: {question}\n\n"
            "Answer: {answer}\n\n"
            'Reply with "value": "pass" when the answer meets the criterion, "fail" when it '
            'does not, and your "reason" in one sentence. Judge the criterion only, not '
            "whether the answer is right.")


def _prompt_material(prompt: BasePrompt[Any, Any]) -> dict[str, Any]:
    try:
        template = inspect.getsource(type(prompt).to_string)
    except (OSError, TypeError):
        template = type(prompt).to_string.__qualname__
    return {
        "class": f"{type(prompt).__module__}.{type(prompt).__qualname__}",
        "instruction": prompt.instruction,
        "examples": [[i.model_dump(mode="json"), o.model_dump(mode="json")]
                     for i, o in prompt.examples],
        "input_schema": prompt.input_model.model_json_schema(),
        "output_schema": prompt.output_model.model_json_schema(),
        "language": prompt.language,
        "template": template,
    }


def _prompts_of(metric: object) -> list[dict[str, Any]]:
    return [_prompt_material(v) for _, v in sorted(vars(metric).items())
            if isinstance(v, BasePrompt)]


class RagasJudge:
    """Judged metrics computed by RAGAS 0.4.3's `ragas.metrics.collections` code.

    faithfulness       Faithfulness: statements from the answer, an NLI verdict per statement
                       against the retrieved contexts joined by newlines; supported / all.
                       No statements from an answer with text → JudgeFailure("empty").
    context_precision  ContextPrecisionWithReference when the item carries a reference (the
                       expected gist), else ContextPrecisionWithoutReference (usefulness
                       judged against the answer); one verdict per context in rank order,
                       average precision with RAGAS's 1e-10 guard = judges.context_precision.
    answer_relevance   AnswerRelevancy(strictness=3): the model writes a question for the answer
                       3 times (the same prompt each time; one request with n=3, or 3 sent
                       at once: _AnswerRelevancy) with a noncommittal flag; questions
                       that come back empty are dropped; the score is the mean cosine between
                       the user's question and the generated ones (our Embedder), times 0 when
                       every kept generation was flagged noncommittal; none kept → 0.0. This is
                       judges.answer_relevance over the kept questions, except the noncommittal
                       rule, which a fixture expresses as an empty generated_questions list
                       (both give 0.0).
    """

    metrics = RAGAS_METRICS

    def __init__(self, model: str, base_url: str, *, api_key: str | None = None,
                 timeout: float = 60.0, embedder: Embeds, temperature: float = 0.0,
                 max_tokens: int | None = None, seed: int | None = None) -> None:
        self.transport = ChatTransport(model, base_url, api_key=api_key, timeout=timeout,
                                       temperature=temperature, max_tokens=max_tokens,
                                       seed=seed)
        self.llm = RagateInstructorLLM(self.transport)
        self.embeddings = RagateEmbeddings(embedder)
        self.params: dict[str, Any] = dict(self.transport.params)
        self.judge_id = ragas_judge_id(model, self.params)
        self._hashes: dict[str, str] = {}
        self._hashing = threading.Lock()  # inspect.getsource parses with ast: one at a time

    # the metric objects are made per verdict: they are cheap and hold per-call state
    def _faithfulness(self) -> _Faithfulness:
        return _Faithfulness(llm=self.llm)

    def _answer_relevancy(self) -> _AnswerRelevancy:
        return _AnswerRelevancy(llm=self.llm, embeddings=self.embeddings,
                                strictness=ANSWER_RELEVANCY_STRICTNESS)

    def requests_at_once(self, metric: str) -> int:
        """Model requests one verdict of `metric` may have in flight together: the runner
        holds that many of its `judge_concurrency` slots for the verdict, so the bound stays
        a bound on requests. Answer relevance asks for its generations in one request with
        `n` once the server is known to answer it (1 slot), else sends them as concurrent
        single requests (3 slots); the other metrics send one request at a time (RAGAS
        awaits each in turn)."""
        if metric == "answer_relevance" and self.transport.n_choices is not True:
            return ANSWER_RELEVANCY_STRICTNESS
        return 1

    def warm(self) -> None:
        """Load the embedding model now, before judging starts: loaded lazily, it would load
        inside the first answer-relevance verdict and stall the requests in flight."""
        self.embeddings.embed_text("warm")

    def prompt_hash(self, metric: str) -> str:
        """sha256 of everything the model is asked for `metric`: each RAGAS prompt's
        instruction, examples, input and output schemas and template, our JSON system prompt,
        the checks its replies pass (`_verdict_rules`), the metric classes, the embedder
        (answer relevance) and RAGAS's version."""
        with self._hashing:
            if metric not in self._hashes:
                self._hashes[metric] = self._prompt_hash(metric)
            return self._hashes[metric]

    def _prompt_hash(self, metric: str) -> str:
        material: dict[str, Any] = {"ragas": ragas.__version__, "metric": metric,
                                    "system": [JSON_SYSTEM_PROMPT, JSON_SCHEMA_PROMPT],
                                    "rules": _verdict_rules(metric)}
        if metric == "faithfulness":
            used: list[object] = [Faithfulness(llm=self.llm)]
        elif metric == "context_precision":
            used = [ContextPrecisionWithReference(llm=self.llm),
                    ContextPrecisionWithoutReference(llm=self.llm)]
        elif metric == "answer_relevance":  # RAGAS's class: the prompts are its own
            used = [AnswerRelevancy(llm=self.llm, embeddings=self.embeddings,
                                    strictness=ANSWER_RELEVANCY_STRICTNESS)]
            material["strictness"] = ANSWER_RELEVANCY_STRICTNESS
            material["embedder"] = self.embeddings.model_id
        elif metric == "answer_correctness":
            used = [AnswerCorrectness(llm=self.llm, embeddings=self.embeddings)]
            material["weights"] = list(ANSWER_CORRECTNESS_WEIGHTS)
            material["embedder"] = self.embeddings.model_id
        elif metric == "factual_correctness":
            used = [FactualCorrectness(llm=self.llm)]
        else:  # a rubric (its criteria are in the verdict's cache key, `Rubric.material`)
            used = [DiscreteMetric(name="rubric", prompt=rubric_prompt("{criteria}"),
                                   allowed_values=list(PASS_FAIL)),
                    DomainSpecificRubrics(llm=self.llm)]
            material["rubric_prompts"] = [rubric_prompt("{criteria}"),
                                          _prompt_material(RubricScorePrompt())]
        material["classes"] = [type(m).__qualname__ for m in used]
        material["prompts"] = [_prompts_of(m) for m in used]
        digest = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(digest.encode()).hexdigest()

    async def score(self, item: JudgeInput, metric: str) -> float:
        contexts = [c.text for c in item.contexts]
        async with self.transport.session():
            if metric == "faithfulness":
                self._require(metric, question=item.question, answer=item.answer,
                              contexts=contexts)
                faithfulness = self._faithfulness()
                result = await faithfulness.ascore(user_input=item.question,
                                                   response=item.answer,
                                                   retrieved_contexts=contexts)
                if faithfulness.statements == []:
                    raise JudgeFailure("empty", f"{self.llm.model} extracted no statements "
                                       "from an answer that has text: nothing was judged")
            elif metric == "context_precision":
                if item.reference:
                    self._require(metric, question=item.question, reference=item.reference,
                                  contexts=contexts)
                    result = await ContextPrecisionWithReference(llm=self.llm).ascore(
                        user_input=item.question, reference=item.reference,
                        retrieved_contexts=contexts)
                else:
                    self._require(metric, question=item.question, answer=item.answer,
                                  contexts=contexts)
                    result = await ContextPrecisionWithoutReference(llm=self.llm).ascore(
                        user_input=item.question, response=item.answer,
                        retrieved_contexts=contexts)
            elif metric == "answer_relevance":
                self._require(metric, question=item.question, answer=item.answer)
                result = await self._answer_relevancy().ascore(user_input=item.question,
                                                               response=item.answer)
            elif metric == "answer_correctness":
                self._require(metric, question=item.question, answer=item.answer,
                              reference=item.reference or "")
                result = await _AnswerCorrectness(
                    llm=self.llm, embeddings=self.embeddings,
                    weights=list(ANSWER_CORRECTNESS_WEIGHTS)).ascore(
                        user_input=item.question, response=item.answer,
                        reference=item.reference or "")
            elif metric == "factual_correctness":
                self._require(metric, answer=item.answer, reference=item.reference or "")
                result = await _FactualCorrectness(llm=self.llm).ascore(
                    response=item.answer, reference=item.reference or "")
            elif metric in item.rubrics:
                self._require(metric, question=item.question, answer=item.answer)
                return await self._rubric(item.rubrics[metric], item)
            else:
                raise JudgeFailure("error", f"unknown metric {metric!r}")
        value = getattr(result, "value", None)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise JudgeFailure("parse", f"RAGAS {metric} gave no number: {value!r}")
        if not math.isfinite(value):
            raise JudgeFailure("parse", f"RAGAS {metric} came back {value} (the model's "
                               "verdicts were empty or unusable)")
        return float(value)

    async def _rubric(self, rubric: Rubric, item: JudgeInput) -> float:
        """A rubric's verdict through RAGAS's own metric code: a pass/fail rubric by
        `DiscreteMetric` over ragate's prompt from the criteria (`rubric_prompt`), a scored
        one by `DomainSpecificRubrics` with a description per score. The question and the
        answer are what the judge sees. A value the rubric does not define (not "pass" or
        "fail", a score off its scale) is `invalid`, never a score."""
        if rubric.binary:
            result = await DiscreteMetric(
                name=rubric.name, prompt=rubric_prompt(rubric.criteria),
                allowed_values=list(PASS_FAIL)).ascore(llm=self.llm, question=item.question,
                                                       answer=item.answer)
            value = getattr(result, "value", None)
            if value not in PASS_FAIL:
                raise invalid(f"rubric {rubric.name}", shown(value), "not pass or fail")
            return 1.0 if value == "pass" else 0.0
        described = {f"score{i}_description": text
                     for i, text in enumerate(rubric.scores, start=1)}
        result = await DomainSpecificRubrics(
            llm=self.llm, rubrics={"criteria": rubric.criteria, **described},
            name=rubric.name).ascore(user_input=item.question, response=item.answer)
        score = getattr(result, "value", None)
        if isinstance(score, float) and score.is_integer():
            score = int(score)  # RAGAS hands back float(score) of the checked int
        if not rubric.valid(score):
            raise invalid(f"rubric {rubric.name}", shown(score),
                          f"not a score from 1 to {rubric.top}")
        return rubric.value_of(score)  # type: ignore[arg-type]

    @staticmethod
    def _require(metric: str, **inputs: str | list[str]) -> None:
        """RAGAS refuses these inputs with a ValueError; say which, before asking anything."""
        empty = [name for name, value in inputs.items() if not value]
        if empty:
            raise JudgeFailure("missing", f"RAGAS {metric} needs a non-empty "
                               f"{' and '.join(empty)}")
