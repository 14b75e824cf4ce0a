"""Which mode a run is in, and the one object registered for it (as pytest-cov's
`engine.py` picks `Central`, `DistMaster` or `DistWorker`, and pytest's `stepwise.py`
registers its plugin only when its option is on):

- a gate (`gate.Gate`): one process, or the xdist controller; it decides floors;
- a shard (`--ragate-shard i/N`, `shard.ShardRun`): runs a slice, decides nothing, saves a
  results file for `ragate decide`;
- a decision over saved files (`--ragate-decide`, `ragate decide`,
  `decide_saved.DecideSaved`): runs the floors alone, replays the rest from the files;
- on an xdist worker of a gate or a shard, `worker.Worker` or `shard.ShardWorker`: it
  describes its collection to the controller (a shard's keeps its slice too).

Chosen when the run needs one (`begin`, `activate`): at `pytest_configure` in a run that
asked for goldsets (`asked.py`), on an xdist controller whose paths hold a goldset, and on a
worker of a controller that gates; otherwise when collection first meets a goldset, before
any item runs. A run that does neither gets no mode: ragate changes no xdist option or
scheduler, draws no seed and prints nothing in it. Under `-n N` without a `--dist` of the
user's, a gate's controller deals with xdist's `load`, or `loadgroup` once a collected
goldset has conversations (`items/xdist_worker.grouping_scheduler`, said in one line); a
`--dist` the user gave is kept, and refused in one line when it would split a conversation
(`check_gated`).

The object is kept in `config.stash[MODE_KEY]` and unregistered at `pytest_unconfigure`.
Light on purpose: every pytest run imports this through the plugin, so each mode is imported
only when it starts (the shard and decide modes only when their flag is given).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.items.keys import GOLDSET_KEY, GROUP_KEY, ROUTE_KEY, is_goldset_item
from pytest_ragate.modes.asked import ASKED_KEY, asked, reaches_goldsets
from pytest_ragate.settings import Settings

if TYPE_CHECKING:
    from pytest_ragate.modes.controller import Controller
    from pytest_ragate.modes.worker import Worker
    from pytest_ragate.outputs.results import Shard

MODE_KEY = pytest.StashKey["Controller | Worker"]()


def begin(config: pytest.Config, settings: Settings) -> None:
    """At `pytest_configure`: the mode starts now in a run that asked for goldsets
    (`asked.py`), on an xdist controller whose paths reach one, and on a worker whose
    controller gates; otherwise ragate stays inert until collection meets a goldset
    (`activate`)."""
    config.stash[ASKED_KEY] = asked(config)
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        if CONTROLLER in workerinput:
            start(config, settings)
    elif config.stash[ASKED_KEY] or (distributed(config) and reaches_goldsets(config)):
        start(config, settings)


def activate(config: pytest.Config) -> None:
    """Collection met a goldset (its ragate.toml, or a `@ragate.goldset` test): the mode
    starts now, before any item runs, in a run that did not ask. An xdist worker whose
    controller does not gate starts none: it refuses its collection (`check_gated`)."""
    if MODE_KEY in config.stash or UNGATED_KEY in config.stash or REFUSAL_KEY in config.stash:
        return
    if hasattr(config, "workerinput"):
        config.stash[UNGATED_KEY] = True
        return
    from pytest_ragate.settings import read_settings

    try:
        start(config, read_settings(config))
    except pytest.UsageError as error:  # raised once collected, as a usage error (`check_gated`)
        config.stash[REFUSAL_KEY] = error


def start(config: pytest.Config, settings: Settings) -> None:
    """Choose the run's mode and register its object (usage errors first)."""
    from pytest_ragate.modes.sequential import start_asking

    mode = config.stash[MODE_KEY] = choose(config, settings)
    config.pluginmanager.register(mode, mode.name)
    start_asking(config, settings)  # sequential asking, unless it is off
    keep_together(config)


def distributed(config: pytest.Config) -> bool:
    """This process is the controller of an xdist run (as xdist's `_is_distribution_mode`:
    a distribution and workers to run it; `--collect-only` collects here)."""
    return (not hasattr(config, "workerinput") and not config.option.collectonly
            and config.getoption("dist", "no") != "no" and bool(config.getoption("tx", None)))


CONTROLLER = "ragate_controller"  # in a worker's `workerinput`: its controller gates
GIVEN_DIST_KEY = pytest.StashKey[str]()  # the --dist the user gave ("no": none, -n's load)
UNGATED_KEY = pytest.StashKey[bool]()  # a worker met a goldset its controller does not gate
REFUSAL_KEY = pytest.StashKey[pytest.UsageError]()  # the mode started lazily refused the run


def given_dist(config: pytest.Config) -> None:
    """Before xdist turns `-n N` into `--dist load` (`pytest_cmdline_main`): the
    distribution the user gave, which ragate never overrides."""
    distload = config.getoption("distload", False)
    config.stash[GIVEN_DIST_KEY] = "load" if distload else config.getoption("dist", "no")


def grouping(config: pytest.Config) -> bool:
    """The controller deals items with `items/xdist_worker.grouping_scheduler`: a gate's
    run under `-n N` with no `--dist` of the user's (xdist's `load`, grouped only when a
    collected goldset has conversations), or `--dist loadgroup`."""
    if MODE_KEY not in config.stash:
        return False
    dist = config.getvalue("dist")
    return dist == "loadgroup" or (dist == "load"
                                   and config.stash.get(GIVEN_DIST_KEY, "no") == "no")


def keep_together(config: pytest.Config) -> None:
    """On an xdist worker: name each grouped item by its group (as xdist does under
    `loadgroup`) when its controller may group them (`grouping`); the worker parsed the
    command line itself, which says no `--dist` when `-n N` alone was given."""
    controller = getattr(config, "workerinput", {}).get(CONTROLLER)
    if controller is not None and controller["grouping"]:
        from pytest_ragate.items.xdist_worker import name_by_group

        name_by_group(config)


def configure_node(node: Any) -> None:
    """An xdist worker about to start: its controller gates, deals with this distribution,
    and may group conversation turns (`grouping`)."""
    config = node.config
    if MODE_KEY in config.stash:
        node.workerinput[CONTROLLER] = {"dist": config.getvalue("dist"),
                                        "grouping": grouping(config)}


def check_gated(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, once collected, before it says so: goldset items its controller
    does not gate, or conversation turns the user's `--dist` would deal to several workers,
    are refused (one line; the controller raises it, `output_paths.refused`). In one process,
    the usage error of a mode that started at collection (`activate`) is raised here."""
    refusal = config.stash.get(REFUSAL_KEY, None)
    if refusal is not None:
        raise refusal
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return
    controller = workerinput.get(CONTROLLER)
    from pytest_ragate.wording import xdist as wording

    if config.stash.get(UNGATED_KEY, False):
        first = next(filter(is_goldset_item, items), None)
        if first is not None:
            refuse(config, items, wording.not_gated(first.stash[ROUTE_KEY]))
    elif controller is not None and not controller["grouping"] \
            and controller["dist"] in ("load", "worksteal"):
        turn = next((i for i in items if GROUP_KEY in i.stash), None)
        if turn is not None:
            name = turn.stash[GOLDSET_KEY].name
            refuse(config, items, wording.splits_conversations(controller["dist"], name))


def refuse(config: pytest.Config, items: list[pytest.Item], message: str) -> None:
    """A worker's usage error, sent as a marked collect report (xdist shows a worker's own
    nowhere); it runs nothing."""
    from pytest_ragate.modes.output_paths import REFUSED_ATTR

    items.clear()
    report = pytest.CollectReport("", "failed", message, [])
    setattr(report, REFUSED_ATTR, True)
    config.hook.pytest_collectreport(report=report)


def refused_by_a_worker(config: pytest.Config) -> None:
    """On a controller without a mode: the first refusal a worker sent (`refuse`), raised as
    this run's usage error (`output_paths.refused`); the failed collect reports are read
    where pytest's terminal keeps them, since nothing of ragate's was there to see them."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    errors = reporter.stats.get("error", []) if reporter is not None else []
    for report in errors:
        if isinstance(report, pytest.CollectReport):
            from pytest_ragate.modes.output_paths import refused

            refused(config, report)


def stop(config: pytest.Config) -> None:
    mode = config.stash.get(MODE_KEY, None)
    if mode is not None:
        del config.stash[MODE_KEY]
        config.pluginmanager.unregister(mode)


def choose(config: pytest.Config, settings: Settings) -> Controller | Worker:
    """The object for this run's mode, in this process."""
    from pytest_ragate.modes.gate import Gate
    from pytest_ragate.modes.worker import Worker

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
