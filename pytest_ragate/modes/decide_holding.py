"""`ragate decide`'s results files held to what this session collected.

Each selected question and anchor takes its result from the files: its row (or anchor
line), and its shard's failure line, when it failed. A file's goldset stamp must match the
goldset collected here (its eval_version and content digest; floors may change), a row must
say what the goldset says of its question (kind, tags, abstention, evidence) and agree with
itself, and each item must have exactly one result in the file that owed it (the shards'
deal says which). What the files say is gathered as a run's reports would
be (`Arrived`), with how each item is replayed (`Replay`); what does not hold is a problem,
and then nothing is taken. Decide-only: a gate or a shard never imports it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import ValidationError

from pytest_ragate.decision.population import (
    Collected,
    Member,
    Population,
    SequentialPlan,
    again_name,
    anchor_name,
    population_shards,
)
from pytest_ragate.decision.run_decision import Arrived, Failure
from pytest_ragate.items.keys import ANCHOR_KEY, CASE_KEY
from pytest_ragate.modes.decide_files import named, where
from pytest_ragate.modes.reporting import Location
from pytest_ragate.modes.saved_lines import saved_failure
from pytest_ragate.outputs.results import GoldsetStamp, ResultsFile, SavedAnchor, SavedItem
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.records import QuestionRecord

if TYPE_CHECKING:
    from pytest_ragate.goldsets.loader import Case


@dataclass(frozen=True, kw_only=True)
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


@dataclass(kw_only=True)
class Held:
    """The files held to the collection: why they do not hold (then nothing was taken), or
    what every selected item's result brings, and how each is replayed."""

    problems: list[str] = field(default_factory=list)
    arrived: Arrived = field(default_factory=Arrived)
    replay: list[Replay] = field(default_factory=list)


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


def judged_as_saved(found: Collected, row_knobs: dict[str, Any]) -> Collected:
    """The judge the shards were run with (`--ragate-judge`, from their header), not this
    session's: a judged floor no question reached is decided over its gaps, not skipped."""
    judge = row_knobs.get("judge")
    return found.model_copy(update={"populations": [
        p.model_copy(update={"judge": judge}) for p in found.populations]})


def asked_as_saved(found: Collected, files: Sequence[ResultsFile],
                   ) -> tuple[Collected, list[str]]:
    """Each route asked in the order its run asked it: a sequential run's plan (its seed and
    error budget, from the file's goldset stamp), so its questions skipped as not needed are
    replayed through the rule that skipped them, not taken for missing results; and a
    problem for each stamp whose plan does not read."""
    plans: dict[str, SequentialPlan] = {}
    problems = []
    for f in files:
        for stamp in f.header.goldsets if f.header is not None else []:
            if stamp.sequential is None:
                continue
            try:
                plans[stamp.route] = SequentialPlan.model_validate(stamp.sequential)
            except ValidationError as error:
                problems.append(f"{where(f)}: goldset {stamp.goldset}: sequential: "
                                f"{error.errors()[0]['msg']} ({stamp.sequential!r})")
    return found.model_copy(update={"populations": [
        p.model_copy(update={"sequential": plans.get(p.route)})
        for p in found.populations]}), problems


def hold(files: Sequence[ResultsFile], collected: Collected,
         by_nodeid: dict[str, pytest.Item]) -> Held:
    """The files held to the collection (`by_nodeid`: its goldset items): why they do not
    hold, else every selected item's result and how it is replayed."""
    held = Held()
    lines = _Lines.of([f for f in files if f.header is not None])
    stamps: dict[str, tuple[ResultsFile, GoldsetStamp]] = {}
    for f in lines.files:
        for stamp in f.header.goldsets:  # type: ignore[union-attr]
            stamps.setdefault(stamp.route, (f, stamp))
    problems = held.problems
    routes = {p.route for p in collected.populations}
    for route in sorted({key[0] for key in lines.rows} | set(stamps)):
        if route not in routes:
            name = stamps[route][1].goldset if route in stamps else route
            problems.append(f"goldset {name} ({route}) has results, but this session did not "
                            "collect it: give ragate decide the paths the shards ran")
    again = [row for f in lines.files for _, row in f.reasked]
    for population in collected.populations:
        problems += _stamp_problems(population, stamps.get(population.route),
                                    [r for key, found in lines.rows.items()
                                     if key[0] == population.route for *_, r in found]
                                    + [r for r in again if r.route == population.route])
    if problems:
        return held
    for population in collected.populations:
        _take(held, population, lines, by_nodeid)
    for row in again:  # a sequential stop's check, replayed with the rows (decide_run)
        held.arrived.records[f"{row.route}::{again_name(row.question_id)}"] = row
    for f in lines.files:
        held.arrived.down += f.header.workers_down  # type: ignore[union-attr]
    _take_tests(held, lines.files)
    return held


def _take(held: Held, population: Population, lines: _Lines,
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
            doubled.append(f"{name} ({' and '.join(where(f) for f, *_ in found)})")
        elif not found and (item is None or (item.row and member is not None)):
            owed = f"shard {shards[name]}/{count}" if count else "the run"
            owner = next((f for f in lines.files if f.header.shard is None  # type: ignore[union-attr]
                          or f.header.shard.index == shards.get(name)), None)  # type: ignore[union-attr]
            missing[owed].append(name + _why_missing(owner, population.route, name))
        elif found and (wrong := _row_problems(found[0], member) if member is not None
                        else _anchor_problems(*found[0], by_nodeid[nodeid])):
            held.problems += wrong
        else:
            _arrive(held, by_nodeid[nodeid], found[0] if found else None, item)
    for owed, names in sorted(missing.items()):
        held.problems.append(f"goldset {population.goldset}: {named(names)} "
                                 f"ha{'ve' if len(names) > 1 else 's'} no result in {owed}")
    if doubled:
        held.problems.append(f"goldset {population.goldset}: {named(doubled)} "
                                 f"ha{'ve' if len(doubled) > 1 else 's'} more than one row")


def _row_problems(found: Row, member: Member) -> list[str]:
    """Where a row says other than the goldset of its question (its kind and tags, whether it
    must abstain, its evidence spans and their labels), else where the row's abstention and
    evidence figures disagree with each other: once per cause, naming file, line, question
    and field."""
    f, line, row = found
    said = {"kind": member.kind, "tags": member.tags, "must_abstain": member.must_abstain,
            "expected": member.expected}  # its kind and tags: the kind and slice floors it is in
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
    differ = [(name, f"{value!r} in this row, but its {source} make it {expected!r}")
              for name, value, expected, source in checks if value != expected]
    return differ + _gains_inconsistent(row)


def _gains_inconsistent(row: QuestionRecord) -> list[tuple[str, str]]:
    """Rank metrics read `context_gains`: its first relevant context is the first context
    that found evidence (`evidence_ranks`), and it holds no context past the pool. A row
    without them (written before rows kept them) reads 0 on every rank metric: not checked."""
    if row.context_gains is None:
        return []
    gains = row.context_gains
    first = next((rank for rank, gain in enumerate(gains, 1) if gain > 0), None)
    found = min((rank for rank in row.evidence_ranks if rank is not None), default=None)
    if first != found:
        return [("context_gains", f"its first relevant context is at rank {first} in this "
                 f"row, but its evidence_ranks put it at {found}")]
    if len(gains) > row.contexts:
        return [("context_gains", f"{len(gains)} contexts in this row, but its contexts "
                 f"say {row.contexts}")]
    return []


def _take_tests(held: Held, files: Sequence[ResultsFile]) -> None:
    """The shards' other tests that failed: failed in the decision too, and kept in its
    results file."""
    for test in {t.nodeid: t for f in files for t in f.tests}.values():
        held.arrived.failed[test.nodeid] = saved_failure(test.phase, test.why)
        held.arrived.started[test.nodeid] = test.location
        held.replay.append(Replay(nodeid=test.nodeid, location=test.location, keywords=[],
                                  outcome="failed", message=test.why,
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
                        f"{s.eval_version} in {where(found)}: a new eval_version needs a "
                        "new run")
    elif s.sha256 != population.sha256 or any(r.goldset_sha256 != population.sha256
                                              for r in rows):
        problems.append(f"goldset {name} changed since {where(found)} ran it (content "
                        f"digest {(s.sha256 or 'none')[:12]} there, "
                        f"{(population.sha256 or 'none')[:12]} here): its questions, expected "
                        "answers, corpus, anchors or labels differ; only floors may change "
                        "between a run and its decision")
    return problems


def _arrive(held: Held, item: pytest.Item, found: Any, saved: SavedItem | None,
            ) -> None:
    """One selected item's result, as decide_run takes it, and how it is replayed."""
    if saved is not None and saved.lost:
        held.arrived.started[item.nodeid] = item.location  # reported lost, as in the run
        return
    if ANCHOR_KEY in item.stash:
        _arrive_anchor(held, item, found, saved)
    else:
        _arrive_question(held, item, found[2] if found is not None else None, saved)


def _arrive_anchor(held: Held, item: pytest.Item,
                   found: tuple[ResultsFile, SavedAnchor] | None, saved: SavedItem | None,
                   ) -> None:
    nodeid, keywords = item.nodeid, sorted(item.keywords)
    outcome = found[1].outcome if found is not None else None
    if outcome is not None:  # where the anchor is written here: promotion rewrites it
        entry = item.stash[ANCHOR_KEY]
        outcome = outcome.model_copy(update={"path": str(entry.path), "line": entry.line})
        held.arrived.anchors[nodeid] = outcome
    if saved is not None:
        held.arrived.failed[nodeid] = saved_failure(saved.phase, saved.why)
        replay = Replay(nodeid=nodeid, location=item.location, keywords=keywords,
                        outcome="failed", message=saved.why, phase=saved.phase)
    else:
        assert outcome is not None
        message = outcome.why or outcome.error or ""
        replay = Replay(nodeid=nodeid, location=item.location, keywords=keywords,
                        outcome=outcome.outcome, message=message, xfail=outcome.xfail)
    held.replay.append(replay)


def _arrive_question(held: Held, item: pytest.Item, record: QuestionRecord | None,
                     saved: SavedItem | None) -> None:
    """A question's row, and its failure: its shard's failure line, else the one its row
    says (an error, or a wrong answer under `question_outcome = "assert"`)."""
    arrived, nodeid, keywords = held.arrived, item.nodeid, sorted(item.keywords)
    if record is not None and (saved is None or saved.row):
        arrived.records[nodeid] = record
    failure = saved_failure(saved.phase, saved.why) if saved is not None else None
    if failure is None and record is not None:
        why = _row_failure(item.stash[CASE_KEY], record)
        failure = Failure(phase="call", why=why) if why is not None else None
    if failure is not None:
        arrived.failed[nodeid] = failure
        replay = Replay(nodeid=nodeid, location=item.location, keywords=keywords,
                        outcome="failed", message=failure.why, phase=failure.phase,
                        record=arrived.records.get(nodeid))
    elif record is not None and record.status == "skipped":
        replay = Replay(nodeid=nodeid, location=item.location, keywords=keywords,
                        outcome="skipped", message=record.error or "skipped", phase="setup")
    else:
        replay = Replay(nodeid=nodeid, location=item.location, keywords=keywords,
                        outcome="passed", record=record)
    held.replay.append(replay)


def _row_failure(case: Case, record: QuestionRecord) -> str | None:
    """Why the run failed a question's item, as its row says: it errored, or it was wrong
    under `question_outcome = "assert"` (the run's own rule, `items.wrong_answer`)."""
    from pytest_ragate.items.collection import wrong_answer

    if record.status == "error":
        return record.error or "error"
    return wrong_answer(case, record)
