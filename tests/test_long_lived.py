"""A goldset's items are frozen out of the garbage collector's reach while the session lasts,
and given back at its clean-up; garbage made before is collected first, never frozen."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_goldset

PROBE = """
import gc, json, pytest

FINALIZED = []

class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        FINALIZED.append(True)

def pytest_configure(config):
    cycle = Cycle()
    gc.collect()  # it survives a full pass: the oldest generation, which passes seldom visit
    del cycle  # now garbage, freed only by a full pass

def pytest_collection_finish(session):
    with open("probe.json", "w") as out:
        json.dump({"frozen": gc.get_freeze_count(), "enabled": gc.isenabled(),
                   "finalized": bool(FINALIZED)}, out)
"""


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest in this process as a user's would run: nothing frozen before it (the suite's
    `frozen_first` undone)."""
    monkeypatch.setattr(pytester, "inline_run", pytester.inline_run.__wrapped__)
    return pytester


def probe(pytester: pytest.Pytester) -> dict[str, object]:
    return json.loads(Path(pytester.path, "probe.json").read_text())


def test_items_are_frozen_while_the_session_lasts_and_thawed_after(
        pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(PROBE)
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.OK
    seen = probe(pytester)
    assert seen["frozen"] > before  # the items are out of the collector's reach
    assert seen["enabled"] is True  # and the collector runs again
    assert seen["finalized"] is True  # the garbage made before was collected, not frozen
    assert gc.get_freeze_count() == before  # the clean-up gave everything back


def test_a_run_without_goldsets_freezes_nothing(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile("def test_one():\n    pass\n")
    before = gc.get_freeze_count()
    pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert probe(pytester)["frozen"] == before


def test_a_goldset_that_fails_to_collect_freezes_nothing(pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs", questions=[{"question_id": "q1", "kind": "single_doc"}])
    pytester.makeconftest(PROBE)
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    seen = probe(pytester)
    assert (seen["frozen"], seen["enabled"]) == (before, True)
    assert gc.get_freeze_count() == before


def test_a_decorated_goldsets_items_are_frozen_and_thawed_alike(
        pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("gs")
def test_mine(ragate_question):
    return None
''')
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider",
                                          "test_rag.py")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*test_mine?q1?*"])
    seen = probe(pytester)
    assert seen["frozen"] > before
    assert (seen["enabled"], seen["finalized"]) == (True, True)
    assert gc.get_freeze_count() == before


def test_what_the_host_froze_stays_frozen_and_ragate_freezes_nothing_more(
        pytester: pytest.Pytester) -> None:
    write_goldset(pytester.path / "gs")
    pytester.makeconftest(PROBE)
    gc.freeze()  # a host's policy: `thaw`'s gc.unfreeze() would give these back too
    try:
        host = gc.get_freeze_count()
        result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.OK
        seen = probe(pytester)
        assert (seen["enabled"], seen["finalized"]) == (True, True)
        # frozen objects the run freed leave the count; freezing would add thousands, and
        # gc.unfreeze() take it to 0
        assert host * 0.9 < seen["frozen"] <= host
        assert host * 0.9 < gc.get_freeze_count() <= host
    finally:
        gc.unfreeze()


def test_settling_frees_the_questions_garbage_then_freezes_what_lives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SETTLE_EVERY reported questions, a pass frees the garbage they made before what
    lives is frozen; where the host froze objects of its own, nothing is collected or frozen
    (`thaw` would give back the host's too). The collector is a stand-in: the real one is
    shared with whatever else the process runs (a library's thread may collect at any time)."""
    from types import SimpleNamespace

    from pytest_ragate.items import long_lived
    from pytest_ragate.items.long_lived import FROZEN_KEY, SETTLE_EVERY, settle

    calls: list[str] = []
    frozen = [1]  # the host froze objects of its own

    def count() -> int:
        calls.append("count")  # CPython walks every frozen object for it: once a run
        return len(frozen)

    fake = SimpleNamespace(collect=lambda: calls.append("collect"),
                           freeze=lambda: (calls.append("freeze"), frozen.append(1)),
                           get_freeze_count=count)
    monkeypatch.setattr(long_lived, "gc", fake)
    config: Any = SimpleNamespace(stash=pytest.Stash())
    for _ in range(SETTLE_EVERY):
        settle(config)
    assert (calls, FROZEN_KEY in config.stash) == (["count"], False)
    frozen.clear()  # nothing frozen: ragate's to freeze, in the next run
    config = SimpleNamespace(stash=pytest.Stash())
    calls.clear()
    settle(config)
    assert calls == ["count"]
    calls.clear()
    for _ in range(SETTLE_EVERY - 2):
        settle(config)
    assert calls == []
    settle(config)
    assert calls == ["collect", "freeze"]
    assert config.stash[FROZEN_KEY] is True  # `thaw` gives it back
    for _ in range(SETTLE_EVERY):
        settle(config)  # ragate's own freeze does not stop the next pass
    assert calls == ["collect", "freeze"] * 2


EXIT_PROBE = """
import atexit, gc

atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))  # runs last

from pytest_ragate.items import long_lived


class Cycle:
    def __init__(self):
        self.me = self
    def __del__(self):
        print("young garbage finalized")


long_lived._freeze_at_exit()
long_lived._freeze_at_exit()  # a second run in the process: registered once
Cycle()
"""


@pytest.mark.heavy
def test_a_process_that_froze_items_exits_with_everything_frozen_after_young_garbage(
        ) -> None:
    """The interpreter's passes at shutdown walk nothing; what the run's end left as garbage
    is still finalized (`long_lived.freeze_at_exit`)."""
    out = subprocess.run([sys.executable, "-c", EXIT_PROBE], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1]).stdout
    assert out.splitlines() == ["young garbage finalized", "frozen at exit: True"]
