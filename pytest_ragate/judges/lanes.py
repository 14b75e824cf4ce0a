"""Bounded calls into a judge: each runs on a lane, a daemon thread with an event loop of its
own, and the runner waits for it at most `--ragate-judge-timeout`.

A judge's code never runs on the runner's loop, so a call that never returns (a `score` that
awaits forever, or blocks its thread in a sync call) costs its lane, not the run: it is a
`timeout` failure, the lane is abandoned (asked to stop; a blocked one never hears it) and a
new one takes its place. Lanes are daemon threads, and so are the threads of a judge's
`asyncio.to_thread` (`DaemonExecutor`: a ThreadPoolExecutor's workers are joined at exit), so
nothing a judge leaves running keeps the process alive once the session is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from pytest_ragate.judges.base import JudgeFailure, timed_out

T = TypeVar("T")


class DaemonExecutor(ThreadPoolExecutor):
    """A lane loop's default executor: every call in a daemon thread of its own, so a call
    that never ends is not joined at exit (`concurrent.futures` joins its workers there)."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="ragate-judge-call", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to join: each call has its own daemon thread."""


class Lane:
    """A daemon thread running an event loop of its own, one judge call at a time."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop.set_default_executor(DaemonExecutor())
        threading.Thread(target=self._serve, name="ragate-judge-lane", daemon=True).start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        while True:
            try:
                self.loop.run_forever()
                break
            except BaseException:  # a judge's KeyboardInterrupt or SystemExit
                continue  # stopped the loop: serve on, so its call learns it as its failure
        with contextlib.suppress(BaseException):  # what a retired lane left: cancelled,
            left = asyncio.all_tasks(self.loop)  # then waited for (forever, if it blocks)
            for task in left:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()

    def retire(self) -> None:
        """Stop when the loop next runs (never, if a call blocks it: the thread is a daemon)."""
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()  # `make` is called here, on the lane: its sync part is bounded too


class Lanes:
    """At most `size` lanes at work; a call gets an idle lane or a new one."""

    def __init__(self, size: int, timeout: float) -> None:
        self.timeout = timeout
        self._room = asyncio.Semaphore(size)
        self._idle: list[Lane] = []
        self._lanes: list[Lane] = []

    async def call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """`await make()` on a lane: its result or its exception; `timed_out(what)` when it
        does not return in time, and an `error` failure for a BaseException (a judge's
        CancelledError or KeyboardInterrupt must not reach the runner)."""
        async with self._room:
            lane = self._idle.pop() if self._idle else self._new()
            done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_awaited(make),
                                                                        lane.loop))
            try:
                finished, _ = await asyncio.wait({done}, timeout=self.timeout)
            except BaseException:  # the runner is cancelled (closing): leave the call
                self._drop(lane)
                raise
            if not finished:
                self._drop(lane)
                raise timed_out(what, self.timeout)
            error = None if done.cancelled() else done.exception()
            if done.cancelled() or not isinstance(error, Exception | None):
                self._drop(lane)
                name = "CancelledError" if error is None else type(error).__name__
                raise JudgeFailure("error", f"{what} raised {name}")
            self._idle.append(lane)
            return done.result()

    def _new(self) -> Lane:
        lane = Lane()
        self._lanes.append(lane)
        return lane

    def _drop(self, lane: Lane) -> None:
        lane.retire()
        self._lanes.remove(lane)

    def close(self) -> None:
        for lane in self._lanes:
            lane.retire()
        self._lanes.clear()
        self._idle.clear()
