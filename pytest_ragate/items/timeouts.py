"""`ragate_system_timeout`: a system that takes too long to answer is an error on its row.

On by default (settings.py says why 300 s), so a hung system ends the question, named, rather
than the CI job. On the main thread of a POSIX process the call is interrupted with SIGALRM (as
pytest-timeout does), so the next question does not run beside a stuck one; an alarm already
set (pytest-timeout's) is left to fire when it comes first, and is set again after the call
otherwise. Elsewhere the call runs in a daemon thread that is abandoned when time is up: the
row is an error either way.
"""

from __future__ import annotations

import asyncio
import inspect
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class SystemTimeout(BaseException):
    """Raised in the system's call when its time is up. A BaseException, so a system's own
    `except Exception` cannot swallow it."""


def answer_within(fn: Callable[[], T | Awaitable[T]], seconds: float | None, who: str,
                  what: str = "system") -> T:
    """What `fn` (a call of the system, sync or async) answers, or SystemTimeout naming `who`
    (a question id, an anchor) once `seconds` are up."""
    return call_with_timeout(lambda: settled(fn()), seconds, f"{who}: the {what} did not "
                             f"answer within {seconds or 0:g} s (ragate_system_timeout)")


def call_with_timeout(fn: Callable[[], T], seconds: float | None, message: str) -> T:
    if not seconds:
        return fn()
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        return _with_alarm(fn, seconds, message)
    return _with_thread(fn, seconds, message)


def _with_alarm(fn: Callable[[], T], seconds: float, message: str) -> T:
    outer, interval = signal.getitimer(signal.ITIMER_REAL)
    if 0 < outer <= seconds:
        return fn()  # an alarm set outside (pytest-timeout's) comes first: it bounds the call

    def expire(signum: int, frame: Any) -> None:
        raise SystemTimeout(message)

    previous = signal.signal(signal.SIGALRM, expire)
    started = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            left = max(outer - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, interval)


def _with_thread(fn: Callable[[], T], seconds: float, message: str) -> T:
    result: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            result.append(fn())
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=run, name="ragate-system", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise SystemTimeout(message)
    if errors:
        raise errors[0]
    return result[0]


def settled(value: T | Awaitable[T]) -> T:
    """What an `async def` system or test answers: its coroutine run to the end, on a loop of
    its own (a sync one's answer as it is)."""
    if not inspect.isawaitable(value):
        return value

    async def wait() -> T:
        return await value

    return asyncio.run(wait())
