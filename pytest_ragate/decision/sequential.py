"""A sequential goldset (`--ragate-sequential`): the order its questions are asked in, and
whether its floors were all decided before the last of them (`Stopping`).

The order is a seeded shuffle of the question names (`asking_order`): the same seed, route
and questions give the same order on every process and every run, whatever the collection
order, and an order no system can know in advance when the seed is fresh. Its questions are
fed to each floor's test (`scoring/stopping.py`) strictly in that order: a result that
arrives early (a fast answer on another xdist worker) waits for the ones before it, so which
answers the tests see never depends on how long answering took.

`Stopping` is both the controller's live state (fed as reports arrive; once it stops, the
rest of the goldset is not asked, `modes/sequential.py`) and the run decision's replay of the
same rows (`run_decision.py`): one rule, so the decision holds exactly what the live run did.
A question that errored, was skipped or never came halts the feeding: the goldset is then
asked to the end and decided as without the option (an error is a failure, never a skip).
So does an `answer_match` answer that is unsure and settled by no label: the full run fails
closed on both, and so does a stop. For the questions a stop does not ask, it also proves,
like a floor, that the share without a result is below the goldset's `sequential_gaps`
(`scoring/gap_bound.py`); the error budget is split evenly over the floors, and that bound
spends it whole (`Stopping.of` says why the two need not share it).

Every floor decided after k questions is a stop only once a random sample of those k,
asked again (`decision/drift.py`), answered as before within their flakiness: until then it is a
`Recheck`, fed the re-asked rows (`offer_again`); answers that changed refuse the stop, and
the rest of the goldset is asked.

Pure: no pytest, no files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Literal

from pytest_ragate.decision.drift import (
    Recheck,
    Uncompared,
    cheaper_than_the_rest,
    reasking_order,
    recheck_level,
    shuffled_units,
)
from pytest_ragate.decision.floors import Verdict, outcome_of
from pytest_ragate.decision.population import Population, SequentialPlan, asking_units
from pytest_ragate.decision.said import Topic, said
from pytest_ragate.scoring.answer_match import ANSWER_MATCH
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.gap_bound import GAPS, GapBound
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.sign_flip import FloorDrift, drift_sample
from pytest_ragate.scoring.stopping import (
    FloorTrack,
    Stuck,
    ratio_interval,
    sequential_metric,
    unit_bound,
)

HaltKind = Literal["unfit", "never came", "not left unasked", "not scored", "stuck",
                   "undecided", "gaps unbounded", "recheck costs", "reask failed",
                   "reask uncounted", "reask never came", "answers changed"]


@dataclass(frozen=True, kw_only=True)
class Halt:
    """Why a sequential goldset asked every question, typed (`wording/sequential.halt_line`
    says it): floors no sequence can decide (`names`), a question with no result, one not
    scored (`status`), a stop after which nothing was left unasked (`asked`), a floor's test
    that could not be fed (`stuck`), floors undecided until the last question, floors
    decided before the share without a result of the rest was proved below `rate`; or a
    stop's
    re-check (`decision/drift.py`) that would cost as much as the rest (`asked` of `of`), a
    re-asked question that was not scored (`status`), has no countable `metric` or never
    came, or answers that changed (`drifts`)."""

    kind: HaltKind
    names: tuple[str, ...] = ()
    status: str = ""
    asked: int = 0
    of: int = 0
    metric: str = ""
    rate: float = 0.0
    stuck: Stuck | None = None
    drifts: tuple[FloorDrift, ...] = ()

    @classmethod
    def uncompared(cls, found: Uncompared) -> Halt:
        """A re-asked answer that cannot be compared with the first."""
        if found.metric:
            return cls(kind="reask uncounted", names=(found.name,), metric=found.metric)
        return cls(kind="reask failed", names=(found.name,), status=found.status)


@dataclass(frozen=True, kw_only=True)
class SequentialOutcome:
    """How a sequential goldset was asked: what every output says of it."""

    seed: int
    alpha: float
    asked: int  # questions fed to the floors' tests (all of them, when it did not stop)
    gaps: float = GAPS  # the share without a result a stop proved the rest below
    of: int
    stopped: bool  # every floor decided before the last question
    why: Halt | None = None  # why it asked every question, when it did
    # when it stopped, what asking its questions again found (decision/drift.py)
    drifts: tuple[FloorDrift, ...] = ()
    reasked: tuple[QuestionRecord, ...] = ()  # its questions asked again, in that order


def asking_order(seed: int, route: str, names: Sequence[str],
                 units: Mapping[str, str] | None = None) -> list[str]:
    """The question names of one route in the order a sequential run asks them: a seeded
    shuffle of their units (`population.asking_units`: a conversation is one unit, its turns
    kept in the order `names` lists them), each unit's names together."""
    return shuffled_units(names, units or {}, f"{seed}\0{route}")


@dataclass(kw_only=True)
class Stopping:
    """A sequential goldset's floor tests, fed in its asking order."""

    order: list[str]  # the question names, in asking order
    tracks: dict[str, FloorTrack]  # the floors over questions, by floor name
    kinds: dict[str, str | None]  # floor name -> the kind it is over (None: all questions)
    min_n: int = 0  # `ragate_min_n`: no floor is decided early on fewer questions with a unit
    # of its metric (of its kind) than this, as the full run's rule counts them
    _: KW_ONLY
    member_kind: dict[str, str] = field(default_factory=dict)  # question name -> its kind
    fed: int = 0  # how many of `order` were fed
    stopped_at: int | None = None  # every floor decided after this many, and re-checked
    halted: Halt | None = None  # why feeding ended before every floor was decided
    waiting: dict[str, QuestionRecord] = field(default_factory=dict)  # arrived early
    seed: int = 0  # the run's seed and the route: what orders the questions asked again
    route: str = ""
    first: dict[str, QuestionRecord] = field(default_factory=dict)  # the rows fed, by name
    recheck: Recheck | None = None  # every floor decided: its questions asked again
    drifts: list[FloorDrift] = field(default_factory=list)  # the re-check, once it settled
    units: dict[str, str] = field(default_factory=dict)  # question name -> its unit (its
    # conversation's): a stop is made only between units, never mid-conversation, and each
    # unit is one observation of every floor's test (the unit of sampling)
    pending: list[str] = field(default_factory=list)  # the fed names of the unit under way
    gaps: GapBound | None = None  # the share of the units without a result, bounded
    unsure_counts: bool = False  # an unsure, unlabelled answer is a gap (an answer_match floor)

    @classmethod
    def of(cls, population: Population, floors: Sequence[Floor], *, min_n: int = 0,
           ) -> Stopping | None:
        """The goldset's tests, when its run is sequential (None otherwise). Its error
        budget is split evenly over its floors over questions; the bound on the share of its
        units without a result (`scoring/gap_bound.py`) spends it whole. The goldset is one
        of two kinds, whatever the order: at least that share lacks a result, and then no
        stop is made unless the bound errs (chance <= alpha), or less does, and then the bound
        cannot err and only the floors' tests can (<= alpha together). (With fewer, but some,
        without a result the full run fails closed and a stop may pass: what the rate
        allows.)"""
        plan = population.sequential
        if plan is None:
            return None
        names = [m.item_name for m in population.questions]
        kinds = {m.item_name: m.kind for m in population.questions}
        over = [f for f in floors if not f.anchors]
        units = asking_units(population.questions)
        stopping = cls(order=asking_order(plan.seed, population.route, names, units),
                       tracks={}, kinds={f.name: f.kind for f in over}, min_n=min_n,
                       member_kind=kinds, seed=plan.seed, route=population.route, units=units)
        # a slice floor is decided with its family's correction, which no sequence tracks
        unfit = [f.name if f.slice else f.metric for f in over
                 if f.slice or not sequential_metric(f.metric)]
        if not over or unfit:
            stopping.halted = Halt(kind="unfit", names=tuple(dict.fromkeys(unfit)))
            return stopping
        spans = max((m.evidence_spans for m in population.questions), default=1)
        share = plan.alpha / len(over)  # the floors split it; the bound spends it whole
        stopping.gaps = GapBound(population=len(set(units.get(n, n) for n in names)),
                                 rate=plan.gaps, alpha=plan.alpha)
        stopping.unsure_counts = any(f.metric == ANSWER_MATCH for f in over)
        for f in over:
            # the test's population is the units (conversations) with a member of its kind,
            # its bound a unit's most units: a question's times the most turns of one
            members: dict[str, int] = {}
            for m in population.questions:
                if f.kind is None or m.kind == f.kind:
                    unit = units.get(m.item_name, m.item_name)
                    members[unit] = members.get(unit, 0) + 1
            bound = unit_bound(f.metric, spans)
            stopping.tracks[f.name] = FloorTrack.of(
                metric=f.metric, minimum=f.min, upper=f.upper, population=max(len(members), 1),
                bound=None if bound is None else bound * max(members.values(), default=1),
                alpha=share)
        return stopping

    @property
    def population(self) -> int:
        return len(self.order)

    @property
    def stopped(self) -> bool:
        """Every floor was decided before the goldset's last question."""
        return self.stopped_at is not None and self.stopped_at < self.population

    @property
    def not_needed(self) -> frozenset[str]:
        """The questions a stopped goldset did not need."""
        return frozenset(self.order[self.stopped_at:]) if self.stopped else frozenset()

    @property
    def rechecking(self) -> bool:
        """Every floor is decided and the questions asked so far are being asked again."""
        return self.recheck is not None and self.stopped_at is None and self.halted is None

    @property
    def mid_unit(self) -> bool:
        """The last question fed is not its unit's last: no stop is made here."""
        if not 0 < self.fed < self.population:
            return False
        after, last = self.order[self.fed], self.order[self.fed - 1]
        return self.units.get(after, after) == self.units.get(last, last)

    def offer(self, name: str, record: QuestionRecord) -> None:
        """A question's row, as it arrives: fed once every question before it was (none
        once every floor is decided: a row asked meanwhile is in flight, not counted)."""
        if (self.stopped_at is None and self.halted is None and self.recheck is None
                and name not in self.waiting):
            self.waiting[name] = record
            self._advance()

    def offer_again(self, name: str, record: QuestionRecord) -> None:
        """A question's row asked again for the re-check; the last one settles it."""
        if not self.rechecking:
            return
        assert self.recheck is not None
        self.recheck.offer(name, record)
        failed = self.recheck.failure()
        if failed is not None:
            self.halted = Halt.uncompared(failed)
        elif self.recheck.complete:
            self._settle()

    def replay(self, rows: Mapping[str, QuestionRecord],
               again: Mapping[str, QuestionRecord] | None = None) -> Stopping:
        """Every row of a finished run (by question name), and its rows asked again, fed as
        the live run fed them."""
        for name in self.order:
            if name in rows:
                self.offer(name, rows[name])
        for name, record in (again or {}).items():
            self.offer_again(name, record)
        if self.rechecking:
            assert self.recheck is not None
            missing = next(n for n in self.recheck.names if n not in self.recheck.again)
            self.halted = Halt(kind="reask never came", names=(missing,))
        if self.stopped_at is None and self.halted is None and self.fed < self.population:
            self.halted = Halt(kind="never came", names=(self.order[self.fed],))
        return self

    def unless_all_asked(self, rows: Mapping[str, QuestionRecord]) -> Stopping:
        """A stop that skipped nothing (every question after it was asked, in flight on
        other workers) is no stop: their answers are here, and the full run's exact rule
        decides every floor over them."""
        if self.stopped and not any(rows[n].not_needed for n in self.not_needed if n in rows):
            self.halted = Halt(kind="not left unasked", asked=self.stopped_at or 0)
            self.stopped_at = None
        return self

    def _advance(self) -> None:
        while self.fed < self.population and self.order[self.fed] in self.waiting:
            name = self.order[self.fed]
            record = self.waiting.pop(name)
            if record.status != "scored":
                self.halted = Halt(kind="not scored", names=(name,), status=record.status)
                self.waiting.clear()
                return
            self.first[name] = record
            self.pending.append(name)
            self.fed += 1
            if self.mid_unit:
                continue
            for floor, track in self.tracks.items():  # a whole unit: one observation
                track.feed(*(self.first[n] for n in self.pending
                             if self.kinds[floor] in (None, self.member_kind[n])))
            if self.gaps is not None:
                self.gaps.observe(any(self._gap(self.first[n]) for n in self.pending))
            self.pending.clear()
            if self.gaps is not None and self.gaps.decided and all(
                    t.call is not None and t.questions >= self.min_n
                    for t in self.tracks.values()):
                self.waiting.clear()
                self._decided()
                return

    def _gap(self, record: QuestionRecord) -> bool:
        """A fed question without a result the full run would fail on: an answer unsure and
        settled by no label, under an answer_match floor (an error halts before this)."""
        check = record.answer_check
        return self.unsure_counts and check is not None and check.unsettled

    def _decided(self) -> None:
        """Every floor decided after `fed` questions: at the last one, the goldset was asked
        whole; before it, a stop whose sample is asked again (`drift_sample`), or none when
        that would cost as much as the rest: the rest is asked."""
        if self.fed == self.population:
            self.stopped_at = self.fed
            return
        asked = self.order[:self.fed]
        level = recheck_level(len(self.tracks))
        size = drift_sample(len({self.units.get(n, n) for n in asked}), level)
        names = reasking_order(self.seed, self.route, asked, self.units, size)
        if not cheaper_than_the_rest(self.fed, len(names), self.population):
            self.halted = Halt(kind="recheck costs", asked=self.fed, of=self.population)
        else:
            self.recheck = Recheck(asked=self.fed, names=names)

    def _settle(self) -> None:
        """Every question asked again: the stop holds, or the answers changed and it is
        refused (`Recheck.drift`)."""
        assert self.recheck is not None
        found = self.recheck.drift(self.tracks, self.first, self.member_kind, self.kinds,
                                   seed=f"{self.seed}\0{self.route}")
        if isinstance(found, Uncompared):
            self.halted = Halt.uncompared(found)
            return
        self.drifts = found
        changed = [d for d in found if d.changed]
        if changed:
            self.halted = Halt(kind="answers changed", asked=self.recheck.asked,
                               drifts=tuple(changed))
        else:
            self.stopped_at = self.recheck.asked


def outcome(stopping: Stopping, plan: SequentialPlan) -> SequentialOutcome:
    """What the outputs say of how the goldset was asked, with its questions asked again."""
    stopped = stopping.stopped
    recheck = stopping.recheck
    again = () if recheck is None else tuple(
        recheck.again[n] for n in recheck.names if n in recheck.again)
    return SequentialOutcome(seed=plan.seed, alpha=plan.alpha, gaps=plan.gaps,
                             asked=stopping.stopped_at if stopped else stopping.population,
                             of=stopping.population, stopped=stopped,
                             why=None if stopped else stopping.halted or _undecided(stopping),
                             drifts=tuple(stopping.drifts) if stopped else (), reasked=again)


def _undecided(stopping: Stopping) -> Halt:
    stuck = next((t.stuck for t in stopping.tracks.values() if t.stuck), None)
    if stuck:
        return Halt(kind="stuck", stuck=stuck)
    decided = all(t.call is not None and t.questions >= stopping.min_n
                  for t in stopping.tracks.values())
    if decided and stopping.gaps is not None and not stopping.gaps.decided:
        return Halt(kind="gaps unbounded", names=tuple(stopping.tracks),
                    rate=stopping.gaps.rate, of=stopping.gaps.population)
    return Halt(kind="undecided", names=tuple(
        name for name, t in stopping.tracks.items()
        if t.call is None or t.questions < stopping.min_n))


def stopped_verdict(floor: Floor, goldset: str, stopping: Stopping,
                    rows: Mapping[str, QuestionRecord], computed_by: str) -> Verdict:
    """A floor of a goldset that stopped: decided by its test, its figures over the
    questions asked before the stop."""
    track = stopping.tracks[floor.name]
    call = track.call
    assert call is not None and stopping.stopped_at is not None
    asked = [rows[n] for n in stopping.order[:stopping.stopped_at]
             if floor.kind is None or rows[n].kind == floor.kind]
    t = METRICS[floor.metric].tally(floor.metric, asked)
    interval = ratio_interval(track, track.shares)
    text = said(Topic.STOPPED_AGAINST, floor, track.value, interval, call == "holds",
                asked=stopping.stopped_at, of=stopping.population, units=track.units,
                alpha=track.test.alpha)
    return Verdict(floor=floor, goldset=goldset, outcome=outcome_of(floor, call), said=text,
                   tally=t, interval=interval, computed_by=computed_by)
