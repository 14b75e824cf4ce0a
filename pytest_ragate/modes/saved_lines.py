"""What a results file keeps beside its rows: the header (which run wrote it, with which
settings, over which goldsets), each anchor's outcome, each goldset item that failed or was
lost, and the run's other tests that failed (`outputs/results.py` writes them).

Every mode that writes `--ragate-results` builds them here: a gate, so its one file can be
decided again; a shard, whose file `ragate decide` decides with its siblings'; and the
decision itself, whose file says what it decided. `ragate decide` reads them back
(`decide_files.py`, `decide_holding.py`) and compares its own settings with the header's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from pytest_ragate.decision.population import Collected, population_shards
from pytest_ragate.decision.run_decision import Arrived, Failure
from pytest_ragate.items.redacting import without_credentials
from pytest_ragate.outputs.results import (
    FORMAT,
    GoldsetStamp,
    Header,
    SavedAnchor,
    SavedItem,
    SavedTest,
    Shard,
)
from pytest_ragate.outputs.writers import Saved
from pytest_ragate.settings import Settings

# knobs that say where or how fast, not what a row holds: shards on other runners may differ
# (and `cache`: a verdict is the same whether it was asked for or replayed from the cache;
# the judge's price: what a verdict costs, not what it says)
WHERE_KNOBS = frozenset({"chroma_url", "index_dir", "judge_url", "judge_concurrency",
                         "judge_cache_dir", "cache", "judge_price_in", "judge_price_out"})
ROW_GATE_KNOBS = ("repeat", "system_timeout")
DECISION_KNOBS = ("ci", "min_n", "alpha", "sealed_without_key", "baseline", "flip_window",
                  "slice_alpha", "slice_correction", "slice_insufficient", "accept_judge",
                  "judge_optional")
# the phase a results file gives an item whose worker died running it: the `when` of the
# report xdist makes for it, which files written before ragate said `crashed` itself still
# carry; ragate writes it from the gathered failure, and reads a crash back from it
CRASHED_PHASE = "???"


def row_settings(settings: Settings) -> dict[str, Any]:
    """The knobs that shape a row: every shard of one gate must have run with the same. As
    a header keeps them: a credential in one (a model named `gpt-sk-…`) masked, as every
    output masks it."""
    found: dict[str, Any] = {}
    for section in (settings.pipeline, settings.judge):
        found.update({k: v for k, v in dataclasses.asdict(section).items()
                      if k not in WHERE_KNOBS})
    found.update({k: getattr(settings.gate, k) for k in ROW_GATE_KNOBS})
    return without_credentials(settings, found)


def decision_settings(settings: Settings) -> dict[str, Any]:
    """The knobs that decide (masked as `row_settings`' are: `--ragate-accept-judge`)."""
    return without_credentials(settings, {**{k: getattr(settings.gate, k) for k in DECISION_KNOBS},
                                          "require_judge": settings.run.require_judge})


def ragate_version() -> str:
    from pytest_ragate import __version__

    return __version__


def saved_phase(failure: Failure) -> str:
    """The phase a results file keeps for a failed item or test."""
    return CRASHED_PHASE if failure.crashed else failure.phase


def saved_failure(phase: str, why: str) -> Failure:
    """A failed item or test as a results file keeps it, gathered again."""
    return Failure(phase=phase, why=why, crashed=phase == CRASHED_PHASE)


def saved_lines(settings: Settings, collected: Collected | None, arrived: Arrived,
                lost: Iterable[str], *, shard: Shard | None = None,
                row_knobs: dict[str, Any] | None = None) -> Saved:
    """The header, anchor outcomes and failed or lost items a results file keeps beside its
    rows (`row_knobs`: the settings the rows were made with, when not this process's)."""
    members: dict[str, tuple[str, str]] = {}  # node id -> (route, name)
    stamps = []
    for population in collected.populations if collected else []:
        names = [(m.nodeid, m.item_name) for m in population.questions]
        names += [(a.nodeid, a.item_name) for a in population.anchors]
        mine = population_shards(population, shard.count) if shard else None
        deselected = []
        for nodeid, name in names:
            if nodeid is not None:
                members[nodeid] = (population.route, name)
            elif mine is None or mine[name] == shard.index:  # type: ignore[union-attr]
                deselected.append(name)
        stamps.append(GoldsetStamp(route=population.route, goldset=population.goldset,
                                   eval_version=population.eval_version,
                                   sha256=population.sha256, deselected=deselected,
                                   sequential=(population.sequential.model_dump()
                                               if population.sequential else None),
                                   corpus=population.corpus or None))
    header = Header(format=FORMAT, ragate_version=ragate_version(), shard=shard,
                    settings=row_knobs if row_knobs is not None else row_settings(settings),
                    gate=decision_settings(settings), goldsets=stamps,
                    workers_down=list(arrived.down))
    anchors = [SavedAnchor(nodeid=nodeid, route=members[nodeid][0], outcome=outcome)
               for nodeid, outcome in arrived.anchors.items() if nodeid in members]
    items = [SavedItem(nodeid=nodeid, route=members[nodeid][0], name=members[nodeid][1],
                       phase=saved_phase(failure), why=failure.why,
                       row=nodeid in arrived.records or nodeid in arrived.anchors)
             for nodeid, failure in arrived.failed.items() if nodeid in members]
    items += [SavedItem(nodeid=nodeid, route=members[nodeid][0], name=members[nodeid][1],
                        lost=True, row=False) for nodeid in lost if nodeid in members]
    return Saved(header=header, anchors=anchors,
                 items=[*items, *_other_tests(collected, arrived, members)])


def _other_tests(collected: Collected | None, arrived: Arrived,
                 members: dict[str, tuple[str, str]]) -> list[SavedTest]:
    """The run's tests that are no goldset's and failed: a decision fails with them."""
    floors = {f.nodeid for f in collected.floors} if collected else set()
    return [SavedTest(nodeid=nodeid, location=arrived.started.get(
                          nodeid, (nodeid.partition("::")[0], None, nodeid)),
                      phase=saved_phase(failure), why=failure.why)
            for nodeid, failure in arrived.failed.items()
            if nodeid not in members and nodeid not in floors]
