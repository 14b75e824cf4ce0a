"""A run's mode is chosen once and has one object (modes/choosing.py): a gate, a shard and a
decision over saved files each register their own, and nothing of the other modes; an xdist
worker registers a worker's. Beside it, unless `--ragate-sequential off`, sequential asking
registers its own (modes/sequential.py: `AskInOrder` where items run, `StopWhenDecided` where
reports arrive), which do nothing unless a goldset is asked sequentially. Decide-only code is
not imported by a gate or a shard, and is by `ragate decide`. A crash is the gathered
failure's, and a results file keeps it as the phase xdist gave it, so files written before
read the same.

One small project is run once per mode, each in its own process, under `-n 0` and `-n 2`; its
conftest.py writes, from every process at the end of its session, the ragate objects
registered and the ragate modules loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.run_decision import Failure
from pytest_ragate.modes.saved_lines import CRASHED_PHASE, saved_failure, saved_phase
from tests.conftest import command_env, write_goldset

DECIDE_ONLY = ("pytest_ragate.modes.decide_saved", "pytest_ragate.modes.decide_files",
               "pytest_ragate.modes.decide_holding")

CONFTEST = '''
import json
import os
import sys
from pathlib import Path

import pytest

from pytest_ragate import Answer, Citation, Context


@pytest.fixture
def ragate_system():
    def answer(text):
        cited = Context(context_id="c0", doc_id="m1", first_unit=2, last_unit=3,
                        text="m1 turns 2-3", distance=0.2)
        return Answer(text="the budget", contexts=[cited], citations=[Citation(context_id="c0")])
    return answer


def pytest_sessionfinish(session):
    """What this process registered and loaded, for tests/test_modes.py."""
    plugins = session.config.pluginmanager.list_name_plugin()
    who = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(os.environ["RAGATE_PROBE"], f"{who}.json").write_text(json.dumps({
        "plugins": sorted(f"{name}={type(p).__module__}.{type(p).__name__}"
                          for name, p in plugins
                          if type(p).__module__.startswith("pytest_ragate.modes")),
        "modules": sorted(m for m in sys.modules if m.startswith("pytest_ragate."))}))
'''

RUNS = {  # each run's arguments, after the project's path (decide: after `ragate decide`)
    "gate": ["-n", "0", "--ragate-results=gate.jsonl"],
    "gate-n2": ["-n", "2", "--ragate-results=gate-n2.jsonl"],
    "gate-off": ["-n", "0", "--ragate-sequential=off", "--ragate-results=gate-off.jsonl"],
    "shard1": ["-n", "0", "--ragate-shard=1/2", "--ragate-results=shards/1.jsonl"],
    "shard2-n2": ["-n", "2", "--ragate-shard=2/2", "--ragate-results=shards/2.jsonl"],
    "decide": ["shards/1.jsonl", "shards/2.jsonl", "--", ".", "--ragate-results=decided.jsonl"],
}
GATE = "ragate-gate=pytest_ragate.modes.gate.Gate"
SHARD = "ragate-shard=pytest_ragate.modes.shard.ShardRun"
DECIDE = "ragate-decide=pytest_ragate.modes.decide_saved.DecideSaved"
WORKER = "ragate-worker=pytest_ragate.modes.worker.Worker"
SHARD_WORKER = "ragate-shard-worker=pytest_ragate.modes.shard.ShardWorker"
ASK = "ragate-ask-in-order=pytest_ragate.modes.sequential.AskInOrder"
STOP = "ragate-stop-when-decided=pytest_ragate.modes.sequential.StopWhenDecided"


def _run(root: Path, probe: Path, args: list[str], *, decide: bool,
         ) -> subprocess.CompletedProcess[str]:
    argv = ([sys.executable, "-c", "from pytest_ragate.cli import main; main()", "decide"]
            if decide else [sys.executable, "-m", "pytest", "."])
    return subprocess.run([*argv, *args], cwd=root, capture_output=True, text=True,
                          timeout=600, env=command_env(RAGATE_PROBE=str(probe)))


@pytest.fixture(scope="module")
def probes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each run's probe, by run and process (`main`, `gw0`, `gw1`), in the order of RUNS
    (the decision decides the two shards' files)."""
    root = tmp_path_factory.mktemp("modes")
    write_goldset(root / "gs", floors="[floors]\nevidence_recall = 0.2\n")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin\n")
    found: dict[str, dict[str, Any]] = {}
    for name, args in RUNS.items():
        probe = root / "probes" / name
        probe.mkdir(parents=True)
        result = _run(root, probe, args, decide=name == "decide")
        assert result.returncode == 0, result.stdout + result.stderr
        found[name] = {p.stem: json.loads(p.read_text()) for p in probe.glob("*.json")}
    return found


REGISTERED = {  # by run: each process's ragate objects (sorted), nothing of the other modes
    "gate": {"main": [ASK, GATE, STOP]},
    "gate-n2": {"main": [ASK, GATE, STOP], "gw0": [ASK, WORKER], "gw1": [ASK, WORKER]},
    "gate-off": {"main": [GATE]},
    "shard1": {"main": [ASK, SHARD, STOP]},
    "shard2-n2": {"main": [ASK, SHARD, STOP], "gw0": [ASK, SHARD_WORKER],
                  "gw1": [ASK, SHARD_WORKER]},
    "decide": {"main": [ASK, DECIDE, STOP]},
}


@pytest.mark.heavy
@pytest.mark.parametrize("run", list(REGISTERED))
def test_each_mode_registers_its_one_object(probes: dict[str, dict[str, Any]],
                                            run: str) -> None:
    assert {who: probe["plugins"] for who, probe in probes[run].items()} == REGISTERED[run]


SAVED_RUN_READERS = {"pytest_ragate.outputs.saved_runs", "pytest_ragate.outputs.history",
                     "pytest_ragate.outputs.baseline"}


@pytest.mark.heavy
@pytest.mark.parametrize("run", ["gate", "gate-n2", "shard1", "shard2-n2"])
def test_a_gate_or_a_shard_imports_no_decide_only_module(probes: dict[str, dict[str, Any]],
                                                        run: str) -> None:
    assert "pytest_ragate.modes.saved_lines" in probes[run]["main"]["modules"]  # it wrote
    for who, probe in probes[run].items():
        assert "pytest_ragate.items.collection" in probe["modules"], who  # it collected
        assert [m for m in probe["modules"] if m in DECIDE_ONLY] == [], who
        # nor, with no saved-run option (baseline, history), a reader of saved runs
        assert [m for m in probe["modules"] if m in SAVED_RUN_READERS] == [], who


@pytest.mark.heavy
def test_ragate_decide_imports_the_decide_mode(probes: dict[str, dict[str, Any]]) -> None:
    assert set(DECIDE_ONLY) <= set(probes["decide"]["main"]["modules"])


def test_a_crash_is_kept_in_a_results_file_as_xdist_phase_and_read_back_as_a_crash() -> None:
    """A results file marks a crashed item's phase "???" (the `when` of xdist's report for
    it, which files written before this ragate carry too): written from the gathered
    failure's `crashed`, and read back as a crash whichever ragate wrote it."""
    crashed = Failure(phase="???", why="worker 'gw1' crashed", crashed=True)
    assert saved_phase(crashed) == CRASHED_PHASE == "???"
    assert saved_phase(Failure(phase="call", why="boom")) == "call"
    assert saved_failure("???", "worker 'gw1' crashed") == crashed
    assert saved_failure("???", "worker 'gw1' crashed").gap == "crashed"
    assert saved_failure("setup", "fixture blew up").gap == "errored"
