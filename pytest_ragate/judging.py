"""Running a judge: bounded concurrency, a content-addressed cache, failures kept as failures.

Judge calls run on one event loop in a background thread per process, so while the judge
thinks about question i the worker already asks the system question i+1. Verdicts are cached
on disk (diskcache: safe across xdist workers) under a key of everything that can change
them: eval_version, judge id and parameters, metric, prompt hash, and the judged inputs.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import diskcache

from pytest_ragate.judges import Judge, JudgeFailure, JudgeInput, judge_params

CacheMode = Literal["on", "off", "replay"]


class ReplayMiss(Exception):
    """`--ragate-cache replay` met a verdict it does not hold: the run must spend nothing."""


@dataclass
class Verdicts:
    """One question's judged metrics: values, failures (metric -> why) and cache hits."""

    values: dict[str, float] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    cached: list[str] = field(default_factory=list)
    replay_misses: list[str] = field(default_factory=list)


def cache_key(eval_version: str, judge: Judge, metric: str, item: JudgeInput) -> str:
    material = {"eval_version": eval_version, "judge": judge.judge_id,
                "params": judge_params(judge), "metric": metric,
                "prompt": judge.prompt_hash(metric), "inputs": item.digest()}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


class JudgeRunner:
    """One per process. `submit` returns a Future of the question's Verdicts."""

    def __init__(self, concurrency: int, cache_dir: Path | None, mode: CacheMode) -> None:
        self.mode = mode
        self.concurrency = concurrency
        self.cache = diskcache.Cache(str(cache_dir)) if cache_dir and mode != "off" else None
        self.calls = 0  # judge calls actually made (cache misses), for reports and tests
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="ragate-judge",
                                        daemon=True)
        self._thread.start()
        self._slots = asyncio.Semaphore(concurrency)

    def submit(self, judge: Judge, item: JudgeInput, metrics: Sequence[str],
               eval_version: str) -> Future[Verdicts]:
        return asyncio.run_coroutine_threadsafe(
            self._judge_all(judge, item, list(metrics), eval_version), self._loop)

    async def _judge_all(self, judge: Judge, item: JudgeInput, metrics: list[str],
                         eval_version: str) -> Verdicts:
        verdicts = Verdicts()
        results = await asyncio.gather(*(self._judge_one(judge, item, m, eval_version)
                                          for m in metrics))
        for metric, (value, failure, cached) in zip(metrics, results, strict=True):
            if isinstance(failure, ReplayMiss):
                verdicts.replay_misses.append(metric)
                verdicts.failures[metric] = str(failure)
            elif failure is not None:
                verdicts.failures[metric] = str(failure)
            else:
                assert value is not None
                verdicts.values[metric] = value
            if cached:
                verdicts.cached.append(metric)
        return verdicts

    async def _judge_one(self, judge: Judge, item: JudgeInput, metric: str, eval_version: str,
                         ) -> tuple[float | None, Exception | None, bool]:
        key = cache_key(eval_version, judge, metric, item)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return float(hit), None, True
            if self.mode == "replay":
                return None, ReplayMiss(f"no cached {metric} verdict for {item.question_id} "
                                        f"from {judge.judge_id} (--ragate-cache replay); run "
                                        "once with --ragate-cache on to record it"), False
        async with self._slots:
            self.calls += 1
            try:
                value = float(await judge.score(item, metric))
            except JudgeFailure as failure:
                return None, failure, False
            except Exception as error:  # a judge bug is still a failure, not a score
                return None, JudgeFailure("error", f"{type(error).__name__}: {error}"), False
        if value != value:  # NaN: a verdict that is no verdict
            return None, JudgeFailure("parse", f"{metric} came back NaN"), False
        if self.cache is not None:
            self.cache.set(key, value)
        return value, None, False

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if self.cache is not None:
            self.cache.close()


def judged_metrics(judge: Any) -> tuple[str, ...]:
    from pytest_ragate.judges import JUDGED_METRICS

    return tuple(getattr(judge, "metrics", JUDGED_METRICS))
