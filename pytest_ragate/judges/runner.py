"""Running a judge: bounded concurrency, bounded time, a content-addressed cache, failures
kept as failures.

The runner's event loop runs in a background thread per process, so while the judge thinks
about question i the worker already asks the system question i+1. Every call into the judge
(`prompt_version`, `prompt_hash`, `requests_at_once`, `score`) runs on a lane, a thread of its
own (`lanes.py`), and is waited for at most `ragate_judge_timeout`: a verdict that does not
come in time is a `timeout` failure, whoever computes it. A judge's `prepare()` (building
itself: the RAGAS judge imports RAGAS) runs once, in a thread, before the first hash or
verdict that needs it, and is not a verdict: no verdict's time limit counts it. Verdicts are
cached on disk (diskcache: safe across xdist workers) under a key of everything that can
change them: eval_version, judge id and parameters, metric, prompt hash, and the judged
inputs. Beside them the folder holds a memo of prompt hashes (a judge that offers
`prompt_version(metric)`, cheap text its hash is computed from, has its hash computed once
per version: a run whose every verdict is cached never builds the RAGAS judge) and an index
of each question's last keys (`ragate plan`); `cache_index.py`.

Each question's verdicts carry their bill (`JudgeBill`): the model requests made for it and the
tokens the API reported (a cached verdict makes none), priced where the judge's price per
million tokens is set (`judge_price_in`, `judge_price_out`; an unset one counts 0).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import math
import numbers
import threading
from collections.abc import Awaitable, Callable, Collection, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import diskcache

from pytest_ragate.judges.base import (
    METER,
    REQUESTS_AT_ONCE,
    Judge,
    JudgeFailure,
    JudgeInput,
    JudgeMeter,
    Vacuous,
    as_failure,
    invalid,
    judge_params,
    shown,
)
from pytest_ragate.judges.cache_index import (
    IndexEntry,
    index_key,
    memo_key,
    migrate_index,
    read_entry,
    sentences,
    stamp,
)
from pytest_ragate.judges.lanes import Lanes
from pytest_ragate.redaction import redact_credentials, redact_url_credentials, visible
from pytest_ragate.scoring.records import JudgeTokens
from pytest_ragate.scoring.registry import asked_metrics
from pytest_ragate.settings import JudgeSettings

CacheMode = Literal["on", "off", "replay"]
T = TypeVar("T")
ROUNDING = 1e-9  # a cosine of a vector with itself may come out 1 + 2e-16: still a score


class ReplayMiss(Exception):
    """`--ragate-cache replay` met a verdict it does not hold: the run must spend nothing."""


Prices = tuple[float | None, float | None]  # US dollars per million prompt, completion tokens
PER_MILLION = 1_000_000


@dataclass(frozen=True, kw_only=True)
class JudgeBill:
    """What judging one question cost: requests, the tokens reported, and the dollars where
    the judge is priced (None: no price set)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported: int = 0  # requests whose response reported no tokens, or wrong ones
    invalid: dict[str, str] = field(default_factory=dict)  # a wrong usage's fields: why
    cost: float | None = None

    @classmethod
    def of(cls, meter: JudgeMeter, prices: Prices) -> JudgeBill:
        priced = prices[0] is not None or prices[1] is not None
        cost = ((meter.prompt_tokens * (prices[0] or 0.0)
                 + meter.completion_tokens * (prices[1] or 0.0)) / PER_MILLION
                if priced else None)
        return cls(requests=meter.requests, prompt_tokens=meter.prompt_tokens,
                   completion_tokens=meter.completion_tokens, unreported=meter.unreported,
                   invalid=dict(meter.invalid), cost=cost)

    def row_fields(self) -> dict[str, Any]:
        """The question row's judge_requests, judge_tokens and judge_cost."""
        tokens = (JudgeTokens(prompt=self.prompt_tokens, completion=self.completion_tokens,
                              unreported=self.unreported, invalid=self.invalid)
                  if self.requests else None)
        return {"judge_requests": self.requests, "judge_tokens": tokens,
                "judge_cost": self.cost}


def invalid_usage_line(judge: str, name: str, why: str, questions: Sequence[str]) -> str:
    """The run's one line about a judge's usage that breaks the rule (`JudgeMeter.reported`),
    per judge and field."""
    n = len(questions)
    return (f"ragate: the judge {judge} reported a usage whose {name} {why} ({n} question"
            f"{'s' * (n != 1)}: {', '.join(questions)}): its tokens are not counted, and "
            "where the judge is priced those questions' cost is unknown (a cost_per_question "
            "floor is not decided over them)")


@dataclass
class JudgedScores:
    """One question's judged metrics: values, failures (metric -> why) and cache hits."""

    values: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    cached: list[str] = field(default_factory=list)
    replay_misses: list[str] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)  # verdicts with nothing to judge
    bill: JudgeBill = field(default_factory=JudgeBill)
    # characters of the judge's replies no output could write, replaced (redaction.visible)
    unencodable: int = 0

    def fail(self, metric: str, failure: object, redact: Callable[[str], str]) -> None:
        """`metric`'s failure, kept redacted and as every output can write it."""
        text, replaced = visible(str(failure))
        self.unencodable += replaced
        self.failures[metric] = redact(text)


def checked_score(metric: str, raw: object) -> tuple[float, bool]:
    """A judge's answer as (score, vacuous), or JudgeFailure("invalid"): a score is a real,
    finite number in [0, 1], never a bool or a string that looks like one, and a `Vacuous`
    says why in words. A judge that returns 1.5 must not pass a floor of 0.8."""
    vacuous = isinstance(raw, Vacuous)
    value = raw.value if isinstance(raw, Vacuous) else raw
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(metric, f"as {type(value).__name__} {shown(value)}", "not a number")
    number = float(value)
    if not math.isfinite(number) or not -ROUNDING <= number <= 1.0 + ROUNDING:
        raise invalid(metric, shown(number), "outside [0, 1]")
    if isinstance(raw, Vacuous) and not (isinstance(raw.why, str) and raw.why.strip()):
        raise invalid(f"{metric} (vacuous)", f"with why={shown(raw.why)}",
                      "not a reason in words")
    return min(1.0, max(0.0, number)), vacuous


def cache_key(eval_version: str, judge: Judge, metric: str, item: JudgeInput,
              prompt: str | None = None) -> str:
    """The verdict's key; `prompt` is `judge.prompt_hash(metric)` when the caller has it
    (`JudgeRunner` keeps it in its memo)."""
    material: dict[str, object] = {
        "eval_version": eval_version, "judge": judge.judge_id, "params": judge_params(judge),
        "metric": metric, "prompt": judge.prompt_hash(metric) if prompt is None else prompt,
        "inputs": item.digest()}
    if item.repeat > 1:  # each repeat its own verdict; a question asked once keeps its key
        material["repeat"] = item.repeat
    if metric in item.rubrics:  # a rubric's criteria: another wording, another verdict
        material["rubric"] = item.rubrics[metric].material()
    # a URL's credential is not part of what decides a verdict: rotating it keeps the cache
    keyed = redact_url_credentials(json.dumps(material, sort_keys=True))
    return hashlib.sha256(keyed.encode()).hexdigest()


class JudgeRunner:
    """One per process. `submit` returns a Future of the question's JudgedScores."""

    def __init__(self, concurrency: int, cache_dir: Path | None, mode: CacheMode,
                 timeout: float = JudgeSettings.judge_timeout,
                 redact: Callable[[str], str] = redact_credentials,
                 prices: Prices = (None, None)) -> None:
        self.mode = mode
        self.prices = prices
        self.redact = redact  # a failure's text is kept redacted (redaction.py)
        self.concurrency = concurrency
        self.timeout = timeout
        self.cache = diskcache.Cache(str(cache_dir)) if cache_dir and mode != "off" else None
        if self.cache is not None:  # an index naming judges in full: re-keyed once, said by
            # the run's controller (`cache_index.said_rekeyed`)
            migrate_index(self.cache)
        self.calls = 0  # judge calls actually made (cache misses), for reports and tests
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ragate-judge",
                                        daemon=True)
        self._thread.start()
        # `concurrency` bounds model requests in flight: a verdict holds one slot per request
        # it may send at once (`judge.requests_at_once(metric)`, 1 when a judge does not say;
        # RAGAS's answer relevance sends its 3 question generations together and holds 3)
        self._slots = asyncio.Semaphore(concurrency)
        self._entry = asyncio.Lock()
        self._preparing: dict[tuple[int, str | None], tuple[Judge, asyncio.Future[None]]] = {}
        self._lanes = Lanes(timeout)

    async def _bounded(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        return await self._lanes.call(f"the judge's {what}", make)

    async def _slots_for(self, judge: Judge, metric: str) -> int:
        at_once = getattr(judge, "requests_at_once", None)
        if not callable(at_once):
            return 1

        async def ask() -> Any:
            return at_once(metric)

        wanted = await self._bounded(f"requests_at_once({metric!r})", ask)
        return max(1, min(self.concurrency, int(wanted)))

    def submit(self, judge: Judge, item: JudgeInput, metrics: Sequence[str],
               eval_version: str, goldset: str | None = None) -> Future[JudgedScores]:
        """The question's verdicts; with `goldset`, its keys go into the cache's index."""
        return asyncio.run_coroutine_threadsafe(
            self._judge_all(judge, item, list(metrics), eval_version, goldset), self._loop)

    async def _judge_all(self, judge: Judge, item: JudgeInput, metrics: list[str],
                         eval_version: str, goldset: str | None = None) -> JudgedScores:
        meter = JudgeMeter()
        keys: dict[str, str] = {}
        results = await asyncio.gather(*(self._judge_one(judge, item, m, eval_version, meter,
                                                         keys)
                                          for m in metrics))
        verdicts = JudgedScores(bill=JudgeBill.of(meter, self.prices))
        if goldset is not None:
            self._index(goldset, judge, item, eval_version, keys)
        for metric, (value, failure, cached) in zip(metrics, results, strict=True):
            if isinstance(failure, ReplayMiss):
                verdicts.replay_misses.append(metric)
                verdicts.fail(metric, failure, self.redact)
            elif failure is not None:
                verdicts.fail(metric, failure, self.redact)
            else:
                assert value is not None
                verdicts.values[metric] = value[0]
                if value[1]:
                    verdicts.vacuous.append(metric)
            if cached:
                verdicts.cached.append(metric)
        return verdicts

    async def _judge_one(self, judge: Judge, item: JudgeInput, metric: str, eval_version: str,
                         meter: JudgeMeter | None = None, keys: dict[str, str] | None = None,
                         ) -> tuple[tuple[float, bool] | None, Exception | None, bool]:
        """(score and vacuous, or None; the failure, or None; from the cache): whatever the
        judge does, this returns. The verdict's key goes into `keys`."""
        try:
            key = cache_key(eval_version, judge, metric, item,
                            prompt=await self._prompt_hash(judge, metric))
        except Exception as error:
            return None, as_failure(error), False
        if keys is not None:
            keys[metric] = key
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                try:  # a verdict is checked again on its way out: the folder is a file tree
                    return checked_score(metric, _stored(hit)), None, True
                except JudgeFailure as failure:
                    return None, failure, True
            if self.mode == "replay":
                return None, ReplayMiss(f"no cached {metric} verdict for {item.question_id} "
                                        f"from {judge.judge_id} (--ragate-cache replay); run "
                                        "once with --ragate-cache on to record it"), False
        try:
            await self._prepared(judge, metric)
            value = await self._verdict(judge, item, metric, meter)
        except Exception as error:
            return None, as_failure(error), False
        if self.cache is not None:
            self.cache.set(key, {"value": value[0], "vacuous": value[1]})
        return value, None, False

    async def _prompt_hash(self, judge: Judge, metric: str) -> str:
        """`judge.prompt_hash(metric)`, from the memo when the judge says what its hash is
        computed from (`prompt_version`): a memo entry is used only under that exact text."""
        where = None
        version = getattr(judge, "prompt_version", None)
        if self.cache is not None and callable(version):
            async def versioned() -> str:
                return str(version(metric))

            where = memo_key(await self._bounded(f"prompt_version({metric!r})", versioned))
            hit = self.cache.get(where)
            if isinstance(hit, str) and hit:  # the folder is a file tree: checked
                return hit
        await self._prepared(judge)

        async def hashed() -> str:
            return judge.prompt_hash(metric)

        computed = await self._bounded(f"prompt_hash({metric!r})", hashed)
        if where is not None:
            self.cache.set(where, computed)
        return computed

    async def _prepared(self, judge: Judge, metric: str | None = None) -> None:
        """A judge that builds itself when first needed (`prepare()`: the RAGAS judge imports
        RAGAS) does so once, before its first hash or verdict, in a thread: building is not
        a verdict and is not held to a verdict's time limit, as it was not when the judge was
        built before the first question. A metric the judge `prepares_for` (answer relevance:
        the embedder is loaded) gets its own step once, before its first verdict. A failed
        step fails every verdict that needs it."""
        prepare = getattr(judge, "prepare", None)
        if not callable(prepare):
            return
        await self._once(judge, None, prepare)
        if metric is not None and metric in getattr(judge, "prepares_for", ()):
            await self._once(judge, metric, functools.partial(prepare, metric))

    async def _once(self, judge: Judge, step: str | None, call: Callable[[], object]) -> None:
        held = self._preparing.get((id(judge), step))
        if held is None:  # the judge is held too, so its id cannot be reused
            held = self._preparing[(id(judge), step)] = (judge, asyncio.ensure_future(
                asyncio.to_thread(call)))
        await asyncio.shield(held[1])

    def _index(self, goldset: str, judge: Judge, item: JudgeInput, eval_version: str,
               keys: dict[str, str]) -> None:
        """The question's last keys, for `ragate plan`; rewritten only when they changed.
        Only for a judge with prompt versions (the plan's stamp is computed from them)."""
        version = getattr(judge, "prompt_version", None)
        if self.cache is None or not keys or not callable(version):
            return
        entry = IndexEntry(
            keys=dict(sorted(keys.items())),
            stamp=stamp(eval_version=eval_version, judge_id=judge.judge_id,
                        params=judge_params(judge),
                        prompt_versions={m: str(version(m)) for m in keys},
                        question=item.question, reference=item.reference, repeat=item.repeat,
                        key=item.digest_key),
            embedder=str(getattr(judge, "embedder_id", "")),
            sentences=[len(x) for x in sentences(item.answer)],
            contexts=[len(c.text) for c in item.contexts])
        where = index_key(goldset, item.question_id, item.repeat, judge.judge_id)
        if read_entry(self.cache.get(where)) != entry:
            self.cache.set(where, entry.model_dump())

    async def _verdict(self, judge: Judge, item: JudgeInput, metric: str,
                       meter: JudgeMeter | None = None) -> tuple[float, bool]:
        """One call of `judge.score`, holding its request slots, bounded and checked."""
        async with self._entry:  # one verdict gathers its slots at a time: no two half-served
            # verdicts can wait on each other (no deadlock), in order. Asked here, not before
            # queueing: what a judge needs can change while it waits (it learns the server)
            slots, taken = await self._slots_for(judge, metric), 0
            try:
                while taken < slots:
                    await self._slots.acquire()
                    taken += 1
            except BaseException:  # cancelled half-way: give back what was taken
                for _ in range(taken):
                    self._slots.release()
                raise

        async def scored() -> object:
            REQUESTS_AT_ONCE.set(slots)  # the lane task's context: the judge sends ≤ slots
            METER.set(meter)  # and counts its requests on the question's meter
            return await judge.score(item, metric)

        try:
            self.calls += 1
            return checked_score(metric, await self._bounded(f"{metric} verdict", scored))
        finally:
            for _ in range(slots):
                self._slots.release()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._lanes.close()
        if self.cache is not None:
            self.cache.close()


def _stored(hit: object) -> object:
    """A cached verdict: `{"value", "vacuous"}`, or a bare float from before vacuous
    verdicts were kept."""
    if isinstance(hit, dict):
        value = hit.get("value")
        return Vacuous(value, "cached") if hit.get("vacuous") else value  # type: ignore[arg-type]
    return hit


def judged_metrics(judge: Any, needed: Collection[str] | None = None) -> tuple[str, ...]:
    """What to ask `judge` for: its own `metrics` when it names them, else every metric the
    registry has a judge ask for; of those, only the `needed` ones when given
    (`registry.verdicts_needed`)."""
    offered = tuple(getattr(judge, "metrics", asked_metrics()))
    return offered if needed is None else tuple(m for m in offered if m in needed)
