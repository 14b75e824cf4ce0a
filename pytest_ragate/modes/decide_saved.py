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
"""

from __future__ import annotations

import dataclasses
import glob
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.decision.population import (
    Collected,
    Member,
    Population,
    anchor_name,
    population_shards,
)
from pytest_ragate.decision.run_decision import Arrived, Failure
from pytest_ragate.items.keys import ANCHOR_KEY, CASE_KEY, FLOOR_KEY, ROUTE_KEY
from pytest_ragate.modes.reporting import Location, send
from pytest_ragate.outputs.results import (
    FORMAT,
    GoldsetStamp,
    Header,
    ResultsFile,
    SavedAnchor,
    SavedItem,
    SavedTest,
    Shard,
    read_results,
)
from pytest_ragate.outputs.writers import Saved
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.settings import SETTINGS_KEY, Settings

if TYPE_CHECKING:
    from pytest_ragate.goldsets.loader import Case

DECIDE_KEY = pytest.StashKey["Deciding"]()
NAMED = 5  # members named in one refusal line before "and N more"

# knobs that say where or how fast, not what a row holds: shards on other runners may differ
# (and `cache`: a verdict is the same whether it was asked for or replayed from the cache)
WHERE_KNOBS = frozenset({"chroma_url", "index_dir", "judge_url", "judge_concurrency",
                         "judge_cache_dir", "cache"})
ROW_GATE_KNOBS = ("repeat", "system_timeout")
DECISION_KNOBS = ("ci", "min_n", "alpha", "sealed_without_key", "baseline", "flip_window")


def row_settings(settings: Settings) -> dict[str, Any]:
    """The knobs that shape a row: every shard of one gate must have run with the same."""
    found: dict[str, Any] = {}
    for section in (settings.pipeline, settings.judge):
        found.update({k: v for k, v in dataclasses.asdict(section).items()
                      if k not in WHERE_KNOBS})
    found.update({k: getattr(settings.gate, k) for k in ROW_GATE_KNOBS})
    return found


def decision_settings(settings: Settings) -> dict[str, Any]:
    return {**{k: getattr(settings.gate, k) for k in DECISION_KNOBS},
            "require_judge": settings.run.require_judge}


def ragate_version() -> str:
    from pytest_ragate import __version__

    return __version__


# --- what a run saves --------------------------------------------------------------------


def saved(settings: Settings, collected: Collected | None, arrived: Arrived,
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
                                   sha256=population.sha256, deselected=deselected))
    header = Header(format=FORMAT, ragate_version=ragate_version(), shard=shard,
                    settings=row_knobs if row_knobs is not None else row_settings(settings),
                    gate=decision_settings(settings), goldsets=stamps,
                    workers_down=list(arrived.down))
    anchors = [SavedAnchor(nodeid=nodeid, route=members[nodeid][0], outcome=outcome)
               for nodeid, outcome in arrived.anchors.items() if nodeid in members]
    items = [SavedItem(nodeid=nodeid, route=members[nodeid][0], name=members[nodeid][1],
                       phase=failure.phase, why=failure.why,
                       row=nodeid in arrived.records or nodeid in arrived.anchors)
             for nodeid, failure in arrived.failed.items() if nodeid in members]
    items += [SavedItem(nodeid=nodeid, route=members[nodeid][0], name=members[nodeid][1],
                        lost=True, row=False) for nodeid in lost if nodeid in members]
    return Saved(header, anchors, [*items, *_other_tests(collected, arrived, members)])


def _other_tests(collected: Collected | None, arrived: Arrived,
                 members: dict[str, tuple[str, str]]) -> list[SavedTest]:
    """The run's tests that are no goldset's and failed: a decision fails with them."""
    floors = {f.nodeid for f in collected.floors} if collected else set()
    return [SavedTest(nodeid=nodeid, location=arrived.started.get(
                          nodeid, (nodeid.partition("::")[0], None, nodeid)),
                      phase=failure.phase, why=failure.why)
            for nodeid, failure in arrived.failed.items()
            if nodeid not in members and nodeid not in floors]


# --- reading the files -------------------------------------------------------------------


@dataclass(frozen=True)
class Replay:
    """One question or anchor item, or another test that failed, reported as its shard
    reported it."""

    nodeid: str
    location: Location
    keywords: list[str]
    outcome: str
    message: str = ""
    xfail: str | None = None
    phase: str = "call"
    record: QuestionRecord | None = None


@dataclass
class Deciding:
    files: list[ResultsFile]
    problems: list[str] = field(default_factory=list)  # why it refuses
    notes: list[str] = field(default_factory=list)  # said in the terminal summary
    collected: Collected | None = None
    arrived: Arrived = field(default_factory=Arrived)
    replay: list[Replay] = field(default_factory=list)

    @property
    def headers(self) -> list[Header]:
        return [f.header for f in self.files if f.header is not None]

    @property
    def row_knobs(self) -> dict[str, Any]:
        return self.headers[0].settings if self.headers else {}


def expand(specs: Sequence[str], root: Path) -> list[Path]:
    """Files, folders (their `*.jsonl`) and globs, each found from here or from the rootdir;
    one that names nothing is a usage error."""
    paths: list[Path] = []
    for spec in specs:
        found: list[Path] = []
        for base in (None, root):  # as given (shown so), then from the rootdir
            path = Path(spec) if base is None else base / spec
            if glob.has_magic(spec):
                found = [Path(p) for p in sorted(glob.glob(str(path)))]
            elif path.is_dir():
                found = sorted(path.glob("*.jsonl"))
            elif path.is_file():
                found = [path]
            if found:
                break
        if not found:
            raise pytest.UsageError(f"--ragate-decide {spec}: no results file there")
        paths += [p for p in found if p not in paths]
    return paths


def load(config: pytest.Config, settings: Settings) -> Deciding:
    """Read every results file and hold them to each other; adopt the shards' `repeat`."""
    files = [read_results(p) for p in expand(settings.run.decide, config.rootpath)]
    deciding = Deciding(files)
    for found in files:
        deciding.problems += _file_problems(found)
    deciding.problems += check_files(files)
    repeat = next((h.settings.get("repeat") for h in deciding.headers), None)
    own = settings.gate.repeat
    if own is not None and repeat != own:
        deciding.problems.append(f"--ragate-repeat {own} here, but the results were asked "
                                 f"with repeat {repeat or 'as each goldset says'}")
    elif own is None and repeat is not None:
        gate = dataclasses.replace(settings.gate, repeat=repeat)
        config.stash[SETTINGS_KEY] = dataclasses.replace(settings, gate=gate)
    for header in deciding.headers[:1]:
        mine = decision_settings(settings)
        differ = [f"{k}={mine[k]!r} (the run had {header.gate[k]!r})" for k in mine
                  if k in header.gate and header.gate[k] != mine[k]]
        if differ:
            deciding.notes.append("decided with " + ", ".join(differ))
    return deciding


def _file_problems(found: ResultsFile) -> list[str]:
    """Why one file cannot be decided, once per cause: its bad lines, else no header, else
    what its trailer does not vouch for."""
    if found.problems:
        return [str(p) for p in found.problems]
    if found.header is None:
        return [f"{found.path}: no header line: not a results file written by this ragate "
                "(--ragate-results), or cut short"]
    return [str(p) for p in found.unvouched]


def _where(found: ResultsFile) -> str:
    return f"{found.path} ({found.header.where})" if found.header else str(found.path)


def check_files(files: Sequence[ResultsFile]) -> list[str]:
    """What makes these files not one run's results: shards missing, doubled or mixed, and
    anything that differs between them that would make their rows not comparable."""
    read = [f for f in files if f.header is not None]
    if not read:
        return []  # each file's own problem says why (`load`)
    problems: list[str] = []
    sharded = [f for f in read if f.header.shard is not None]  # type: ignore[union-attr]
    whole = [f for f in read if f.header.shard is None]  # type: ignore[union-attr]
    if whole and (sharded or len(whole) > 1):
        problems.append("these are not the shards of one run: "
                        + ", ".join(map(_where, read)) + " (decide one run's files at a time: "
                        "either its one results file, or each of its --ragate-shard files)")
    elif sharded:
        counts = sorted({f.header.shard.count for f in sharded})  # type: ignore[union-attr]
        if len(counts) > 1:
            problems.append("shards of different splits: " + ", ".join(map(_where, sharded)))
        else:
            count = counts[0]
            by_index: dict[int, list[ResultsFile]] = defaultdict(list)
            for f in sharded:
                by_index[f.header.shard.index].append(f)  # type: ignore[union-attr]
            for index, found in sorted(by_index.items()):
                if len(found) > 1:
                    problems.append(f"shard {index}/{count} given twice: "
                                    + " and ".join(str(f.path) for f in found))
            missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in by_index]
            if missing:
                problems.append(f"shard{'s' * (len(missing) > 1)} {', '.join(missing)} "
                                f"missing: given {', '.join(map(_where, sharded))}")
    problems += _differ(read, "ragate version", lambda h: h.ragate_version)
    knobs = sorted({k for f in read for k in f.header.settings})  # type: ignore[union-attr]
    for knob in knobs:
        problems += _differ(read, f"ragate_{knob}", lambda h, k=knob: h.settings.get(k))
    stamps: dict[str, list[tuple[ResultsFile, GoldsetStamp]]] = defaultdict(list)
    for f in read:
        for stamp in f.header.goldsets:  # type: ignore[union-attr]
            stamps[stamp.route].append((f, stamp))
    for route, found in stamps.items():
        name = found[0][1].goldset
        for what, value in (("eval_version", lambda s: s.eval_version),
                            ("goldset content (questions, expected answers, corpus, anchors, "
                             "labels)", lambda s: (s.sha256 or "")[:12])):
            seen = {value(s) for _, s in found}
            if len(seen) > 1:
                problems.append(f"goldset {name} ({route}): {what} differs between shards: "
                                + ", ".join(f"{value(s)} in {_where(f)}" for f, s in found))
    for what, part in (("judges", lambda r: _join(r.judge, r.judge_model)),
                       ("systems", lambda r: r.system), ("retrievers", lambda r: r.retriever)):
        problems += _differ_rows(read, what, part)
    for knob in sorted({k for f in read for _, r in f.rows for k in r.knobs}):
        problems += _differ_rows(read, f"values of the knob {knob} (Answer.knobs)",
                                 lambda r, k=knob: _knob(r, k))
    return problems


def _knob(row: QuestionRecord, name: str) -> str | None:
    """A scored row's `Answer.knobs[name]` as its system reported it (`-` when it reported
    none); None for a row with no answer."""
    if row.status != "scored":
        return None
    return json.dumps(row.knobs[name]) if name in row.knobs else "-"


def _join(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return " ".join(kept) or None


def _differ(files: Sequence[ResultsFile], what: str, value: Any) -> list[str]:
    seen = {repr(value(f.header)) for f in files}
    if len(seen) < 2:
        return []
    return [f"the shards ran with different {what}: "
            + ", ".join(f"{value(f.header)!r} in {_where(f)}" for f in files)]


def _differ_rows(files: Sequence[ResultsFile], what: str, part: Any) -> list[str]:
    """A judge, system, retriever or knob value that answered one goldset route's rows in
    one shard and not in another (a shard with no row of that route has nothing to
    compare)."""
    seen: dict[str, dict[Path, list[str]]] = defaultdict(dict)
    for f in files:
        by_route: dict[str, set[str]] = defaultdict(set)
        for _, row in f.rows:
            value = part(row)
            if value:
                by_route[row.route].add(value)
        for route, values in by_route.items():
            seen[route][f.path] = sorted(values)
    problems = []
    for route, by_file in seen.items():
        if len({tuple(v) for v in by_file.values()}) > 1:
            problems.append(f"the shards' rows of {route} name different {what}: "
                            + "; ".join(f"{' | '.join(by_file[f.path])} in {_where(f)}"
                                        for f in files if f.path in by_file))
    return problems


def _named(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMED])
    return shown + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")


# --- holding the files to what this session collected ------------------------------------


def prepare(session: pytest.Session, items: list[pytest.Item]) -> None:
    """At the end of collection: the files held to the collection, and the items to run
    cut down to the floors (each question and anchor is replayed from its row instead)."""
    from pytest_ragate.items.collection import collected

    config = session.config
    deciding: Deciding = config.stash[DECIDE_KEY]
    ragate = [i for i in items if ROUTE_KEY in i.stash]
    others = [i for i in items if ROUTE_KEY not in i.stash]
    deciding.collected = _judged_as_saved(collected(ragate), deciding) if ragate else None
    if deciding.collected is None or not deciding.collected.populations:
        deciding.problems.append("this session collected no goldset: give ragate decide the "
                                 "paths (and -m, -k) the shards were run with")
    if not deciding.problems:
        _hold(deciding, {i.nodeid: i for i in ragate})
    if deciding.problems:
        deciding.notes.clear()  # nothing was decided: no note may say how it was
    else:
        rows = sum(len(f.rows) for f in deciding.files)
        deciding.notes.insert(0, f"decided from {len(deciding.files)} results file"
                              f"{'s' * (len(deciding.files) != 1)} ("
                              + ", ".join(_where(f) for f in deciding.files)
                              + f"): {rows} rows; no system or judge was asked")
    if others:
        config.hook.pytest_deselected(items=others)
    if deciding.problems:
        items[:] = [Refusal.from_parent(session, name="ragate-decide",
                                        problems=deciding.problems)]
    else:
        items[:] = [i for i in ragate if FLOOR_KEY in i.stash]


Row = tuple[ResultsFile, int, QuestionRecord]  # a row, its file and its line


@dataclass
class _Lines:
    """Every file's lines, by what they are a result of."""

    files: list[ResultsFile]
    count: int | None  # the shards' N, or None for one run's file
    rows: dict[tuple[str, str, int], list[Row]]  # (route, question id, repeat)
    anchors: dict[tuple[str, str], tuple[ResultsFile, SavedAnchor]]  # (route, `anchor[id]`)
    items: dict[tuple[str, str], SavedItem]  # (route, item name)

    @classmethod
    def of(cls, files: list[ResultsFile]) -> _Lines:
        count = next((f.header.shard.count for f in files  # type: ignore[union-attr]
                      if f.header.shard), None)  # type: ignore[union-attr]
        rows: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
        for f in files:
            for number, row in f.rows:
                rows[(row.route, row.question_id, row.repeat)].append((f, number, row))
        return cls(files, count, rows,
                   {(a.route, anchor_name(a.outcome.anchor_id)): (f, a)
                    for f in files for a in f.anchors},
                   {(i.route, i.name): i for f in files for i in f.items})


def _judged_as_saved(found: Collected, deciding: Deciding) -> Collected:
    """The judge the shards were run with (`--ragate-judge`, from their header), not this
    session's: a judged floor no question reached is decided over its gaps, not skipped."""
    judge = deciding.row_knobs.get("judge")
    return found.model_copy(update={"populations": [
        p.model_copy(update={"judge": judge}) for p in found.populations]})


def _hold(deciding: Deciding, by_nodeid: dict[str, pytest.Item]) -> None:
    assert deciding.collected is not None
    lines = _Lines.of([f for f in deciding.files if f.header is not None])
    stamps: dict[str, tuple[ResultsFile, GoldsetStamp]] = {}
    for f in lines.files:
        for stamp in f.header.goldsets:  # type: ignore[union-attr]
            stamps.setdefault(stamp.route, (f, stamp))
    problems = deciding.problems
    routes = {p.route for p in deciding.collected.populations}
    for route in sorted({key[0] for key in lines.rows} | set(stamps)):
        if route not in routes:
            name = stamps[route][1].goldset if route in stamps else route
            problems.append(f"goldset {name} ({route}) has results, but this session did not "
                            "collect it: give ragate decide the paths the shards ran")
    for population in deciding.collected.populations:
        problems += _stamp_problems(population, stamps.get(population.route),
                                    [r for key, found in lines.rows.items()
                                     if key[0] == population.route for *_, r in found])
    if problems:
        return
    for population in deciding.collected.populations:
        _take(deciding, population, lines, by_nodeid)
    for f in lines.files:
        deciding.arrived.down += f.header.workers_down  # type: ignore[union-attr]
    _take_tests(deciding, lines.files)


def _take(deciding: Deciding, population: Population, lines: _Lines,
          by_nodeid: dict[str, pytest.Item]) -> None:
    """Each selected question and anchor of one population: its result, or why it has none
    or more than one, or why its row cannot be taken."""
    count = lines.count
    shards = population_shards(population, count) if count else {}
    missing: dict[str, list[str]] = defaultdict(list)
    doubled: list[str] = []
    members: list[tuple[str | None, str, Member | None]] = [
        (m.nodeid, m.item_name, m) for m in population.questions]
    members += [(a.nodeid, a.item_name, None) for a in population.anchors]
    for nodeid, name, member in members:
        if nodeid is None:
            continue  # deselected here: a gap, as in a run
        key = (population.route, name)
        found: list[Any] = ([lines.anchors[key]] if key in lines.anchors else []
                            ) if member is None else lines.rows.get(
                                (population.route, member.question_id, member.repeat), [])
        item = lines.items.get(key)
        if len(found) > 1:
            doubled.append(f"{name} ({' and '.join(_where(f) for f, *_ in found)})")
        elif not found and (item is None or (item.row and member is not None)):
            owed = f"shard {shards[name]}/{count}" if count else "the run"
            owner = next((f for f in lines.files if f.header.shard is None  # type: ignore[union-attr]
                          or f.header.shard.index == shards.get(name)), None)  # type: ignore[union-attr]
            missing[owed].append(name + _why_missing(owner, population.route, name))
        elif found and (wrong := _row_problems(found[0], member) if member is not None
                        else _anchor_problems(*found[0], by_nodeid[nodeid])):
            deciding.problems += wrong
        else:
            _arrive(deciding, by_nodeid[nodeid], found[0] if found else None, item)
    for owed, names in sorted(missing.items()):
        deciding.problems.append(f"goldset {population.goldset}: {_named(names)} "
                                 f"ha{'ve' if len(names) > 1 else 's'} no result in {owed}")
    if doubled:
        deciding.problems.append(f"goldset {population.goldset}: {_named(doubled)} "
                                 f"ha{'ve' if len(doubled) > 1 else 's'} more than one row")


def _row_problems(found: Row, member: Member) -> list[str]:
    """Where a row says other than the goldset of its question (its kind, whether it must
    abstain, its evidence spans and their labels), else where the row's abstention and
    evidence figures disagree with each other: once per cause, naming file, line, question
    and field."""
    f, line, row = found
    said = {"kind": member.kind, "must_abstain": member.must_abstain,
            "expected": member.expected}
    if not member.sealed:  # sealed without the key: only whether it has evidence is known
        said["evidence_spans"] = member.evidence_spans
    differ = [(name, f"{getattr(row, name)!r} in this row, but the goldset says {value!r}")
              for name, value in said.items() if getattr(row, name) != value]
    if member.sealed and (row.evidence_spans == 0) != member.must_abstain:
        says = "must abstain" if member.must_abstain else "has evidence"
        differ.append(("evidence_spans", f"{row.evidence_spans} in this row, but the goldset "
                       f"says the question {says}"))
    if not differ and row.status == "scored":
        differ = _inconsistent(row)
    qid = member.item_name
    return [str(Problem(f.path, name, f"{why}; a results file is decided as its run wrote it: "
                        "run the shard again rather than edit it", line=line, question_id=qid))
            for name, why in differ]


def _anchor_problems(found: ResultsFile, saved: SavedAnchor, item: pytest.Item) -> list[str]:
    """Where an anchor's line says other than the goldset of its kind or claim (its kind
    floors are decided over the kinds)."""
    anchor = item.stash[ANCHOR_KEY].anchor
    return [str(Problem(found.path, f"ragate_anchor.outcome.{name}", f"{value!r} in this "
                        f"line, but the goldset says {said!r}; a results file is decided as "
                        "its run wrote it: run the shard again rather than edit it",
                        question_id=anchor_name(anchor.anchor_id)))
            for name, value, said in (("kind", saved.outcome.kind, anchor.kind),
                                      ("claim", saved.outcome.claim, anchor.claim))
            if value != said]


def _inconsistent(row: QuestionRecord) -> list[tuple[str, str]]:
    """A scored row's abstention and evidence figures that its own answer contradicts."""
    found = sum(rank is not None for rank in row.evidence_ranks)
    checks = [("abstention_correct", row.abstention_correct,
               row.abstained == row.must_abstain, "abstained and must_abstain"),
              ("evidence_spans_found", row.evidence_spans_found, found, "evidence_ranks"),
              ("evidence_ranks", len(row.evidence_ranks), row.evidence_spans,
               "evidence_spans (one rank per span)")]
    return [(name, f"{value!r} in this row, but its {source} make it {expected!r}")
            for name, value, expected, source in checks if value != expected]


def _take_tests(deciding: Deciding, files: Sequence[ResultsFile]) -> None:
    """The shards' other tests that failed: failed in the decision too, and kept in its
    results file."""
    for test in {t.nodeid: t for f in files for t in f.tests}.values():
        deciding.arrived.failed[test.nodeid] = Failure(test.phase, test.why)
        deciding.arrived.started[test.nodeid] = test.location
        deciding.replay.append(Replay(test.nodeid, test.location, [], "failed", test.why,
                                      phase="setup" if test.phase == "setup" else "call"))


def _why_missing(owner: ResultsFile | None, route: str, name: str) -> str:
    """Why the file that owed a result has none, when it says."""
    stamps = owner.header.goldsets if owner is not None and owner.header else []
    if any(s.route == route and name in s.deselected for s in stamps):
        return " (deselected there by -k/-m)"
    return ""


def _stamp_problems(population: Population, stamp: tuple[ResultsFile, GoldsetStamp] | None,
                    rows: Sequence[QuestionRecord]) -> list[str]:
    name = population.goldset
    if stamp is None:
        return [f"goldset {name} ({population.route}): no results file ran it"]
    found, s = stamp
    problems = []
    if s.eval_version != population.eval_version:
        problems.append(f"goldset {name}: eval_version {population.eval_version} here, "
                        f"{s.eval_version} in {_where(found)}: a new eval_version needs a "
                        "new run")
    elif s.sha256 != population.sha256 or any(r.goldset_sha256 != population.sha256
                                              for r in rows):
        problems.append(f"goldset {name} changed since {_where(found)} ran it (content "
                        f"digest {(s.sha256 or 'none')[:12]} there, "
                        f"{(population.sha256 or 'none')[:12]} here): its questions, expected "
                        "answers, corpus, anchors or labels differ; only floors may change "
                        "between a run and its decision")
    return problems


def _arrive(deciding: Deciding, item: pytest.Item, found: Any, saved: SavedItem | None,
            ) -> None:
    """One selected item's result, as decide_run takes it, and how it is replayed."""
    if saved is not None and saved.lost:
        deciding.arrived.started[item.nodeid] = item.location  # reported lost, as in the run
        return
    if ANCHOR_KEY in item.stash:
        _arrive_anchor(deciding, item, found, saved)
    else:
        _arrive_question(deciding, item, found[2] if found is not None else None, saved)


def _arrive_anchor(deciding: Deciding, item: pytest.Item,
                   found: tuple[ResultsFile, SavedAnchor] | None, saved: SavedItem | None,
                   ) -> None:
    nodeid, keywords = item.nodeid, sorted(item.keywords)
    outcome = found[1].outcome if found is not None else None
    if outcome is not None:  # where the anchor is written here: promotion rewrites it
        entry = item.stash[ANCHOR_KEY]
        outcome = outcome.model_copy(update={"path": str(entry.path), "line": entry.line})
        deciding.arrived.anchors[nodeid] = outcome
    if saved is not None:
        deciding.arrived.failed[nodeid] = Failure(saved.phase, saved.why)
        replay = Replay(nodeid, item.location, keywords, "failed", saved.why, phase=saved.phase)
    else:
        assert outcome is not None
        message = outcome.why or outcome.error or ""
        replay = Replay(nodeid, item.location, keywords, outcome.outcome, message,
                        xfail=outcome.xfail)
    deciding.replay.append(replay)


def _arrive_question(deciding: Deciding, item: pytest.Item, record: QuestionRecord | None,
                     saved: SavedItem | None) -> None:
    """A question's row, and its failure: its shard's failure line, else the one its row
    says (an error, or a wrong answer under `question_outcome = "assert"`)."""
    arrived, nodeid, keywords = deciding.arrived, item.nodeid, sorted(item.keywords)
    if record is not None and (saved is None or saved.row):
        arrived.records[nodeid] = record
    failure = Failure(saved.phase, saved.why) if saved is not None else None
    if failure is None and record is not None:
        why = _row_failure(item.stash[CASE_KEY], record)
        failure = Failure("call", why) if why is not None else None
    if failure is not None:
        arrived.failed[nodeid] = failure
        replay = Replay(nodeid, item.location, keywords, "failed", failure.why,
                        phase=failure.phase, record=arrived.records.get(nodeid))
    elif record is not None and record.status == "skipped":
        replay = Replay(nodeid, item.location, keywords, "skipped", record.error or "skipped",
                        phase="setup")
    else:
        replay = Replay(nodeid, item.location, keywords, "passed", record=record)
    deciding.replay.append(replay)


def _row_failure(case: Case, record: QuestionRecord) -> str | None:
    """Why the run failed a question's item, as its row says: it errored, or it was wrong
    under `question_outcome = "assert"` (the run's own rule, `items.wrong_answer`)."""
    from pytest_ragate.items.collection import wrong_answer

    if record.status == "error":
        return record.error or "error"
    return wrong_answer(case, record)


def replay(config: pytest.Config, deciding: Deciding) -> None:
    """Each question and anchor item reported as its shard reported it: the terminal, JUnit
    and the exit status see them as a run's."""
    for r in deciding.replay:
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
