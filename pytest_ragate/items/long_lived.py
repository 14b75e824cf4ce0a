"""A goldset's items (a `ragate.toml` file's, or a `@ragate.goldset` test's) are built with the
cyclic garbage collector paused, then frozen out of its reach until the session's clean-up.

Why: 10,000 question items are some hundreds of thousands of objects that all live to the end
of the session. While they are built, the collector runs full passes that walk every one of
them and find nothing to free, and pytest's own clean-up (`unraisableexception`) runs two more
full passes; together about half of what collecting a 10,000-question goldset costs
(benchmarks/collect_10k.py). `gc.freeze()` moves every live object to a permanent generation
that no pass walks.

What is frozen stays collectable: the garbage made before the goldset is collected first (so
no one's unreachable object misses its finalizer), and the clean-up registered by
`pytest_configure` gives everything back to the collector (`gc.unfreeze()`) once pytest's own
clean-up passes are done, so an in-process run (pytester, an IDE) frees its items.

A host that froze objects of its own (a long-lived process calling `gc.freeze()`, a test suite
running pytest in-process) keeps them frozen: `gc.unfreeze()` gives back everything, not only
ragate's items, so ragate freezes nothing in a process where something else is frozen already
(the collector is still paused while the items are built).

Light on purpose: the plugin imports it at start-up.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

FROZEN_KEY = pytest.StashKey[bool]()  # on the config: this process froze a goldset's items


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
        if config.stash.get(FROZEN_KEY, False) or gc.get_freeze_count() == 0:
            gc.freeze()
            config.stash[FROZEN_KEY] = True
    finally:
        if enabled:
            gc.enable()


def thaw(config: pytest.Config) -> None:
    """Registered as a clean-up at configure time, before pytest's unraisableexception plugin
    registers its own, so it runs after that plugin's collector passes."""
    if config.stash.get(FROZEN_KEY, False):
        del config.stash[FROZEN_KEY]
        gc.unfreeze()
