"""Which mode a run is in, chosen once at `pytest_configure`, and the one object registered
for it (as pytest-cov's `engine.py` picks `Central`, `DistMaster` or `DistWorker`, and
pytest's `stepwise.py` registers its plugin only when its option is on):

- a gate (`gate.Gate`): one process, or the xdist controller; it decides floors;
- a shard (`--ragate-shard i/N`, `shard.ShardRun`): runs a slice, decides nothing, saves a
  results file for `ragate decide`;
- a decision over saved files (`--ragate-decide`, `ragate decide`,
  `decide_saved.DecideSaved`): runs the floors alone, replays the rest from the files;
- on an xdist worker of a gate or a shard, `worker.Worker` or `shard.ShardWorker`: it
  describes its collection to the controller (a shard's keeps its slice too).

The object is kept in `config.stash[MODE_KEY]` and unregistered at `pytest_unconfigure`.
Light on purpose: every pytest run imports this through the plugin, so the shard and decide
modes are imported only when their flag is given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.modes.gate import Gate
from pytest_ragate.modes.sequential import start_asking
from pytest_ragate.modes.worker import Worker
from pytest_ragate.settings import Settings

if TYPE_CHECKING:
    from pytest_ragate.modes.controller import Controller
    from pytest_ragate.outputs.results import Shard

MODE_KEY = pytest.StashKey["Controller | Worker"]()


def start(config: pytest.Config, settings: Settings) -> None:
    """Choose the run's mode and register its object (usage errors first)."""
    mode = config.stash[MODE_KEY] = choose(config, settings)
    config.pluginmanager.register(mode, mode.name)
    start_asking(config, settings)  # sequential asking, unless it is off
    keep_together(config)


LOADGROUP = "ragate_loadgroup"  # in a worker's `workerinput`: its controller groups items


def keep_together(config: pytest.Config) -> None:
    """xdist's default distribution (`load`, what `-n N` alone means) run as `loadgroup`,
    so that every turn of a conversation goes to one worker (`items/conversations.py` marks
    each turn with its conversation's `xdist_group`); items without the mark are dealt one by
    one, as `load` deals them. On the controller, before it starts its workers; a worker
    (which parses the command line itself) is told by its `workerinput` (`configure_node`),
    so that xdist names each grouped item by its group, as the controller's scheduler reads
    it."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        if workerinput.get(LOADGROUP):
            config.option.loadgroup = True
    elif getattr(config.option, "dist", None) == "load":
        config.option.dist = "loadgroup"


def configure_node(node: Any) -> None:
    """An xdist worker about to start: whether its controller groups items (`keep_together`)."""
    node.workerinput[LOADGROUP] = node.config.getvalue("dist") == "loadgroup"


def stop(config: pytest.Config) -> None:
    mode = config.stash.get(MODE_KEY, None)
    if mode is not None:
        del config.stash[MODE_KEY]
        config.pluginmanager.unregister(mode)


def choose(config: pytest.Config, settings: Settings) -> Controller | Worker:
    """The object for this run's mode, in this process."""
    shard = check_flags(config, settings)
    if hasattr(config, "workerinput"):  # an xdist worker: its controller concludes
        if shard is None:
            return Worker(config)
        from pytest_ragate.modes.shard import ShardWorker

        return ShardWorker(config, shard)
    if settings.run.decide:
        from pytest_ragate.modes.decide_saved import DecideSaved

        return DecideSaved(config)
    if shard is None:
        return Gate(config)
    from pytest_ragate.modes.shard import ShardRun

    return ShardRun(config, shard)


def check_flags(config: pytest.Config, settings: Settings) -> Shard | None:
    """A shard decides nothing and keeps its results for `ragate decide`; a decision runs
    nothing and in one process: flags that say otherwise are usage errors. The shard, parsed
    (once: the mode keeps it), or None."""
    run = settings.run
    if run.shard and run.decide:
        raise pytest.UsageError("--ragate-shard runs a slice and --ragate-decide decides the "
                                "slices' results: one or the other")
    if run.decide and config.getoption("numprocesses", None):
        raise pytest.UsageError("--ragate-decide asks no system and runs in one process: "
                                "drop -n")
    if not run.shard:
        return None
    from pytest_ragate.outputs.results import Shard

    try:
        shard = Shard.parse(run.shard)
    except ValueError as error:
        raise pytest.UsageError(f"--ragate-shard {error}") from None
    if not run.results:
        raise pytest.UsageError("--ragate-shard needs --ragate-results PATH: a shard's "
                                "results are what `ragate decide` decides")
    decided = {"--ragate-report": run.report, "--ragate-html": run.html,
               "--ragate-history": run.history, "--ragate-baseline": settings.gate.baseline,
               "--ragate-promote": run.promote,
               "--ragate-accept-judge": settings.gate.accept_judge}
    given = [flag for flag, value in decided.items() if value]
    if given:
        raise pytest.UsageError(f"--ragate-shard decides no floor, so {', '.join(given)} "
                                "belong to `ragate decide`, which decides every shard "
                                "together")
    return shard
