"""The RAGAS judge before RAGAS: its id, sampling parameters and the version of its prompts,
known without importing RAGAS; RAGAS itself (`ragas.py`) is imported at the first verdict the
cache does not hold.

Importing RAGAS costs seconds (it pulls in openai, instructor and langchain), and a run whose
every verdict is in the cache needs none of it: a verdict's cache key holds the prompt hash
(`RagasJudge.prompt_hash`, computed from RAGAS's prompt objects), and the runner keeps that
hash in the judge cache folder under `prompt_version` (`runner.py`): the installed versions
of ragas and pydantic (read from their distributions' metadata, which imports neither), the
metric, the bytes of `ragas.py` (our checks of every reply are part of the hash) and, for
answer relevance, the strictness and the embedder. Any of these changing gives another
memo entry, so a hash computed under another RAGAS, pydantic or ragate is never used.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pytest_ragate.judges.base import JudgeInput

if TYPE_CHECKING:
    from pytest_ragate.judges.ragas import RagasJudge

RAGAS_METRICS = ("faithfulness", "context_precision", "answer_relevance")
ANSWER_RELEVANCY_STRICTNESS = 3  # RAGAS's default: questions generated per answer
RAGAS_MODULE = "pytest_ragate.judges.ragas"  # read, not imported


def sampling_params(temperature: float = 0.0, max_tokens: int | None = None,
                    seed: int | None = None) -> dict[str, Any]:
    """What every request of the judge carries besides the prompt: part of its id."""
    params: dict[str, Any] = {"temperature": temperature}
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    if seed is not None:
        params["seed"] = seed
    return params


def ragas_judge_id(model: str, params: dict[str, Any]) -> str:
    """`ragas:MODEL@temperature=0`: the judge as its verdicts' cache keys and rows name it."""
    shown = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())
    return f"ragas:{model}@{shown}"


@functools.cache  # read once per process: ~1 ms a read, and a key needs it per verdict
def installed_version(distribution: str) -> str:
    """A distribution's version from its metadata (no import); "" when it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


@functools.cache
def _module_digest() -> str:
    """sha256 of `ragas.py`'s bytes, read without importing it (its checks and system prompt
    are part of every prompt hash)."""
    spec = importlib.util.find_spec(RAGAS_MODULE)
    origin = spec.origin if spec is not None else None
    if origin is None:
        return ""
    with open(origin, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


def prompt_version(metric: str, embedder_id: str) -> str:
    """Everything a RAGAS prompt hash is computed from, as cheap text: the memo's key."""
    material: dict[str, Any] = {"ragas": installed_version("ragas"),
                                "pydantic": installed_version("pydantic"),
                                "metric": metric, "module": _module_digest()}
    if metric == "answer_relevance":
        material["strictness"] = ANSWER_RELEVANCY_STRICTNESS
    if metric in ("answer_relevance", "answer_correctness"):
        material["embedder"] = embedder_id
    return json.dumps(material, sort_keys=True)


def embedder_id(embedder: object) -> str:
    """The embedder as `RagateEmbeddings.model_id` names it."""
    return str(getattr(embedder, "model_id", type(embedder).__name__))


class DeferredRagasJudge:
    """`--ragate-judge ragas:MODEL` until a verdict must be asked: the judge's id, params,
    metrics and prompt versions without RAGAS; `prompt_hash` and `score` build the
    `RagasJudge` (importing RAGAS, loading the embedder) on first use, once per process."""

    metrics = RAGAS_METRICS

    def __init__(self, model: str, *, build: Callable[[], RagasJudge], embedder_id: str,
                 warm: bool = True, params: dict[str, Any] | None = None) -> None:
        """`build` makes the `RagasJudge` (`select.py`) with these `params` (sampling) and
        an embedder named `embedder_id`: what its id and prompt versions are computed from
        here."""
        self._build = build
        self.embedder_id = embedder_id
        self.warm_embedder = warm
        self.params = dict(sampling_params() if params is None else params)
        self.judge_id = ragas_judge_id(model, self.params)
        self._judge: RagasJudge | None = None
        self._building = threading.Lock()

    @property
    def built(self) -> bool:
        """Whether RAGAS was needed (and imported) in this process."""
        return self._judge is not None

    def judge(self) -> RagasJudge:
        with self._building:
            if self._judge is None:
                judge = self._build()
                built = (judge.judge_id, judge.embeddings.model_id)
                if built != (self.judge_id, self.embedder_id):  # its keys would be wrong
                    raise RuntimeError(f"the RAGAS judge built is {built}, not "
                                       f"{(self.judge_id, self.embedder_id)}")
                self._judge = judge
            return self._judge

    prepares_for = ("answer_relevance",)
    """The metrics whose first verdict needs more than the build (`prepare(metric)`)."""

    def prepare(self, metric: str | None = None) -> None:
        """Build RAGAS now (the runner calls this before the first hash or verdict it must
        compute, outside the verdict's time limit); before the first answer-relevance
        verdict (`metric`), load its embedder too (`RagasJudge.warm`). A run that asks no
        answer-relevance verdict never loads the embedding model."""
        judge = self.judge()
        if metric == "answer_relevance" and self.warm_embedder:
            judge.warm()

    def prompt_version(self, metric: str) -> str:
        return prompt_version(metric, self.embedder_id)

    def prompt_hash(self, metric: str) -> str:
        return self.judge().prompt_hash(metric)

    def requests_at_once(self, metric: str) -> int:
        """As `RagasJudge.requests_at_once`; before RAGAS is built, what it says of a server
        not yet heard from."""
        if self._judge is not None:
            return self._judge.requests_at_once(metric)
        return ANSWER_RELEVANCY_STRICTNESS if metric == "answer_relevance" else 1

    async def score(self, item: JudgeInput, metric: str) -> float:
        judge = await asyncio.to_thread(self.judge)  # seconds of import off the judge's loop
        return await judge.score(item, metric)
