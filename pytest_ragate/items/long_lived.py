"""A goldset's items (a `ragate.toml` file's, or a `@ragate.goldset` test's) are built with the
cyclic garbage collector paused, then frozen out of its reach until the session's clean-up.

Why: 10,000 question items are some hundreds of thousands of objects that all live to the end
of the session. While they are built, the collector runs full passes that walk every one of
them and find nothing to free, and pytest's own clean-up (`unraisableexception`) runs two more
full passes; together about half of what collecting a 10,000-question goldset costs
(benchmarks/collect_10k.py). `gc.freeze()` moves every live object to a permanent generation
that no pass walks.

The same holds for what each question leaves that lives as long: its reports (pytest keeps
every report to the end of the session) and its row (the controller keeps it). So as
questions are reported, every `SETTLE_EVERY` of them, the collector takes one pass over what
is not frozen (the garbage those questions made, cycles included, is freed, not frozen) and
freezes what is left (`settle`): otherwise its full passes walk every row and report of the
run again and again, 14 of them in a 10,000-question run at `-n 0`, a quarter of its time
(benchmarks/overhead.py).

What is frozen stays collectable: the garbage made before the goldset is collected first (so
no one's unreachable object misses its finalizer), and the clean-up registered by
`pytest_configure` gives everything back to the collector (`gc.unfreeze()`) once pytest's own
clean-up passes are done, so an in-process run (pytester, an IDE) frees its items. At the
process's exit everything is frozen again (`freeze_at_exit`), after a pass over the young
garbage: the interpreter's collector passes at shutdown would otherwise walk it all.

A host that froze objects of its own (a long-lived process calling `gc.freeze()`, a test suite
running pytest in-process) keeps them frozen: `gc.unfreeze()` gives back everything, not only
ragate's items, so ragate freezes nothing in a process where something else is frozen already
(the collector is still paused while the items are built).

Light on purpose: the plugin imports it at start-up.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

FROZEN_KEY = pytest.StashKey[bool]()  # on the config: this process froze a goldset's items
SETTLED_KEY = pytest.StashKey[int]()  # on the config: questions reported since the last freeze
HOST_FROZE_KEY = pytest.StashKey[bool]()  # on the config: objects not ragate's were frozen
SETTLE_EVERY = 250  # questions


@contextmanager
def long_lived(config: pytest.Config) -> Iterator[None]:
    """Collect the garbage there is, pause the collector while the body builds objects that
    live to the end of the session, then freeze every live object (only if the body ended
    normally: items of a goldset that failed to collect are dropped, not kept), unless what is
    frozen already is not ragate's."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if config.stash.get(FROZEN_KEY, False) or not host_froze(config):
            gc.freeze()
            config.stash[FROZEN_KEY] = True
    finally:
        if enabled:
            gc.enable()


def host_froze(config: pytest.Config) -> bool:
    """Whether objects that are not ragate's were frozen when the run first asked; asked once
    per run, because CPython counts the frozen objects one by one (with the ~2 million a test
    suite freezes around an in-process run, 80 ms of CPU: asked per question, it was most of
    such a run's cost)."""
    found = config.stash.get(HOST_FROZE_KEY, None)
    if found is None:
        found = config.stash[HOST_FROZE_KEY] = gc.get_freeze_count() > 0
    return found


def thaw(config: pytest.Config) -> None:
    """Registered as a clean-up at configure time, before pytest's unraisableexception plugin
    registers its own, so it runs after that plugin's collector passes."""
    if config.stash.get(FROZEN_KEY, False):
        del config.stash[FROZEN_KEY]
        gc.unfreeze()
        _freeze_at_exit()


_AT_EXIT: list[bool] = []  # `freeze_at_exit` is registered (once a process)


def _freeze_at_exit() -> None:
    """Register `freeze_at_exit`, once a process however many runs it holds."""
    if not _AT_EXIT:
        _AT_EXIT.append(True)
        atexit.register(freeze_at_exit)


def freeze_at_exit() -> None:
    """At the exit of a process that froze a goldset's items: free the young garbage (what
    the session's end left, cycles included, finalizers run), then freeze every live object,
    so that the interpreter's own collector passes at shutdown, which walked every row and
    report the run kept (2.5 s of a 10,000-question run's 10 s at `-n 0`,
    benchmarks/overhead.py), find nothing to walk. A cycle that was alive at a full pass and
    became garbage after it is left to the process's end, as CPython does not promise to
    finalize what exists when the interpreter exits."""
    gc.collect(1)
    gc.freeze()


def settle(config: pytest.Config) -> None:
    """A question was reported (where it ran, and where its row is kept: an xdist controller,
    which collects no goldset, keeps every row): every `SETTLE_EVERY` questions, collect what
    is not frozen and freeze what survives (the module's docstring), unless what is frozen
    already is not ragate's; given back by `thaw` as the items are."""
    if not config.stash.get(FROZEN_KEY, False) and host_froze(config):
        return
    reported = config.stash.get(SETTLED_KEY, 0) + 1
    if reported < SETTLE_EVERY:
        config.stash[SETTLED_KEY] = reported
        return
    config.stash[SETTLED_KEY] = 0
    gc.collect()
    gc.freeze()
    config.stash[FROZEN_KEY] = True
