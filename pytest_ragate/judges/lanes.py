"""Bounded calls into a judge: they run on a lane, a daemon thread with an event loop of its
own, and the runner waits for each at most `ragate_judge_timeout`.

A judge's code never runs on the runner's loop, so a call that never returns costs a verdict,
not the run. One that awaits forever is cancelled when its time is up. One that blocks the
lane's thread (a sync call that never returns) stops every call on that lane, and those fail
in their turn; the lane is then left to itself and the next calls go to a new one. All of a
judge's calls share one lane while it answers, as they shared one loop before, so a judge may
keep loop-bound clients (an httpx.AsyncClient) across verdicts. Lanes are daemon threads, and
so are the threads of a judge's `asyncio.to_thread` (`DaemonExecutor`: a ThreadPoolExecutor's
workers are joined at exit), so nothing a judge leaves running keeps the process alive once
the session is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from pytest_ragate.judges.base import interrupted, timed_out

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
    """A daemon thread running an event loop of its own."""

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
            except BaseException:  # a judge's KeyboardInterrupt or SystemExit stopped the
                continue  # loop: serve on, so its call learns it as its failure
        with contextlib.suppress(BaseException):  # closed: what is left is cancelled and
            left = asyncio.all_tasks(self.loop)  # waited for (forever, if it will not end)
            for task in left:
                task.cancel()
            self.loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    async def answers(self, within: float) -> bool:
        """Whether the lane's loop runs a callback within `within` seconds (False: a call
        blocks its thread)."""
        ping = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.sleep(0),
                                                                    self.loop))
        finished, _ = await asyncio.wait({ping}, timeout=within)
        return bool(finished)

    def close(self) -> None:
        """Stop when the loop next runs (never, if a call blocks it: the thread is a daemon)."""
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)


async def _awaited(make: Callable[[], Awaitable[T]]) -> T:
    return await make()  # `make` is called here, on the lane: its sync part is bounded too


PING = 1.0  # seconds a lane has to show it still runs after one of its calls timed out


class Lanes:
    """The lane a judge's calls run on; a new one once the current one is blocked."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._lane: Lane | None = None
        self._left: list[Lane] = []  # blocked lanes, left to themselves

    async def call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """`await make()` on the lane: its result or its exception; `timed_out(what)` when it
        does not return in time, and an `error` failure for a BaseException (a judge's
        CancelledError or KeyboardInterrupt must not reach the runner)."""
        lane = self._lane = self._lane or Lane()
        done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_awaited(make), lane.loop))
        try:
            finished, _ = await asyncio.wait({done}, timeout=self.timeout)
        except BaseException:  # the runner is cancelled (closing): cancel the call too
            done.cancel()
            raise
        if not finished:
            done.cancel()  # reaches the call when the lane's loop runs
            if self._lane is lane and not await lane.answers(min(PING, self.timeout)):
                self._lane = None
                self._left.append(lane)
            raise timed_out(what, self.timeout)
        error = None if done.cancelled() else done.exception()
        if done.cancelled() or not isinstance(error, Exception | None):
            raise interrupted(what, error)
        return done.result()

    def close(self) -> None:
        for lane in [*self._left, *([self._lane] if self._lane else [])]:
            lane.close()
        self._lane, self._left = None, []
