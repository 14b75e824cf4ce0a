"""`ragate decide RESULTS...` (`pytest --ragate-decide`): decide saved results, asking nothing.

The shards of a sharded gate (`modes/shard.py`), or one run saved with `--ragate-results`,
left their rows, anchor outcomes and failed items in results files (`outputs/results.py`). This
session collects the goldsets as a run would (floors as ragate.toml says now), holds the
files to what it collected, and then, instead of running question and anchor items, reports
each one as its shard reported it and decides every floor, anchor floor, kind floor,
regression check and judge_coverage through the same `decision.decide_run` a single run
uses, writing the same outputs with the same exit status.

It refuses, as one failed test case naming every problem, rather than decide a population
it cannot vouch for: a file its trailer does not vouch for (cut short, edited, appended to,
or written by a run that stopped early), a shard missing or given twice, shards of different
ragate versions, settings, judges, systems, knobs, eval_versions or goldset contents, a
goldset that changed since (floors excepted), a row that says other than the goldset of its
question's kind, abstention or evidence (or an anchor line of its anchor's kind or claim), a
selected question or anchor with no result, or one with two.

What the goldset knows it takes from the goldset; what the rows say of answers it takes
from the rows: a question's item fails when its row says it errored or, under
`question_outcome = "assert"`, that it was wrong (`items.wrong_answer`, the run's own rule),
whether or not its shard's failure line survived. A shard's other tests that failed are
failed tests of the decision too.

This module is the decide mode (the object `choosing.py` registers for it), its replay and
its refusal; the files are read and held to each other in `decide_files.py`, and held to the
collection in `decide_holding.py`. A gate or a shard imports none of the three
(tests/test_modes.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.population import Collected
from pytest_ragate.items.keys import FLOOR_KEY, ROUTE_KEY
from pytest_ragate.modes.controller import Controller
from pytest_ragate.modes.decide_files import read_files, where
from pytest_ragate.modes.decide_holding import (
    Held,
    Replay,
    asked_as_saved,
    hold,
    judged_as_saved,
)
from pytest_ragate.modes.reporting import send
from pytest_ragate.modes.saved_lines import decision_settings
from pytest_ragate.outputs.results import Header
from pytest_ragate.settings import SETTINGS_KEY, Settings, read_settings


class DecideSaved(Controller):
    """`ragate decide`: the results files read at start-up, held to the collection at its
    end, replayed and decided when the loop (the floors alone) ends."""

    name = "ragate-decide"

    def __init__(self, config: pytest.Config) -> None:
        settings = read_settings(config)
        self.files, self.problems = read_files(settings.run.decide, config.rootpath)
        self.notes: list[str] = []  # said in the terminal summary
        self.collected: Collected | None = None
        self.taken = Held()  # what the files bring, once held to the collection
        self._hold_settings(config, settings)
        super().__init__(config)  # with the shards' `repeat`, when adopted

    def decided(self) -> list[Path]:
        return [f.path for f in self.files]

    @property
    def headers(self) -> list[Header]:
        return [f.header for f in self.files if f.header is not None]

    @property
    def row_knobs(self) -> dict[str, Any]:
        return self.headers[0].settings if self.headers else {}

    def _hold_settings(self, config: pytest.Config, settings: Settings) -> None:
        """The shards' `repeat` adopted (or a problem, when this session asks another), and
        a note of the deciding knobs that differ from the run's."""
        repeat = next((h.settings.get("repeat") for h in self.headers), None)
        own = settings.gate.repeat
        if own is not None and repeat != own:
            self.problems.append(f"ragate_repeat = {own} here, but the results were asked "
                                 f"with repeat {repeat or 'as each goldset says'}")
        elif own is None and repeat is not None:
            gate = dataclasses.replace(settings.gate, repeat=repeat)
            config.stash[SETTINGS_KEY] = dataclasses.replace(settings, gate=gate)
        for header in self.headers[:1]:
            mine = decision_settings(settings)
            differ = [f"{k}={mine[k]!r} (the run had {header.gate[k]!r})" for k in mine
                      if k in header.gate and header.gate[k] != mine[k]]
            if differ:
                self.notes.append("decided with " + ", ".join(differ))

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """After `-k` and `-m`: the files held to the collection, and the items to run cut
        down to the floors (each question and anchor is replayed from its row instead), or
        to the one item that refuses."""
        super().pytest_collection_modifyitems(session, config, items)
        from pytest_ragate.items.collection import collected

        ragate = [i for i in items if ROUTE_KEY in i.stash]
        others = [i for i in items if ROUTE_KEY not in i.stash]
        self.collected = None
        if ragate:
            self.collected, wrong = asked_as_saved(
                judged_as_saved(collected(ragate), self.row_knobs), self.files)
            self.problems += wrong
        if self.collected is None or not self.collected.populations:
            self.problems.append("this session collected no goldset: give ragate decide the "
                                 "paths (and -m, -k) the shards were run with")
        if not self.problems:
            self.taken = hold(self.files, self.collected,  # type: ignore[arg-type]
                              {i.nodeid: i for i in ragate})
            self.problems += self.taken.problems
        self._note_what_was_decided()
        if others:
            config.hook.pytest_deselected(items=others)
        if self.problems:
            items[:] = [Refusal.from_parent(session, name="ragate-decide",
                                            problems=self.problems)]
        else:
            items[:] = [i for i in ragate if FLOOR_KEY in i.stash]

    def _note_what_was_decided(self) -> None:
        if self.problems:
            self.notes.clear()  # nothing was decided: no note may say how it was
            return
        rows = sum(len(f.rows) for f in self.files)
        self.notes.insert(0, f"decided from {len(self.files)} results file"
                          f"{'s' * (len(self.files) != 1)} ("
                          + ", ".join(where(f) for f in self.files)
                          + f"): {rows} rows; no system or judge was asked")

    def conclude(self, session: pytest.Session, incomplete: str | None) -> None:
        """The saved items reported as they were, then decided as a run (a refusal decides
        nothing: its item failed)."""
        if self.problems:
            return
        replay(self.config, self.taken.replay)
        conclusion = self.concluding()
        conclusion.collected, conclusion.arrived = self.collected, self.taken.arrived
        conclusion.decide(session, incomplete=incomplete)
        conclusion.fail_on_gaps(session)
        conclusion.write(session, conclusion.saved(row_knobs=self.row_knobs))
        conclusion.settle_promoted(session, self.failures)

    def summary(self, terminalreporter: Any) -> None:
        if self.conclusion is not None:
            self.conclusion.terminal_summary(terminalreporter)
        for note in self.notes:
            terminalreporter.write_line(f"ragate decide: {note}", yellow=True)


def replay(config: pytest.Config, replayed: Sequence[Replay]) -> None:
    """Each question and anchor item reported as its shard reported it: the terminal, JUnit
    and the exit status see them as a run's."""
    for r in replayed:
        props = r.record.junit_properties() if r.record is not None else []
        send(config, r.nodeid, r.location, r.keywords, r.outcome, r.message, props, r.xfail,
             phase=r.phase, text=r.record)


class Refusal(pytest.Item):
    """What `ragate decide` does instead of deciding a population it cannot vouch for."""

    def __init__(self, *, problems: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = list(problems)
        self.add_marker(pytest.mark.rag_gate)

    def runtest(self) -> None:
        raise RefusedError(self.problems)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, RefusedError):
            return ("ragate decide refused to decide: no floor was decided and nothing was "
                    "written\n" + "\n".join(f"  - {p}" for p in self.problems))
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "ragate decide"


class RefusedError(Exception):
    pass
