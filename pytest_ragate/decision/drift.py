"""Before a sequential goldset's early stop is accepted, the questions it asked are asked again,
and the stop is refused when the answers changed more than flakiness explains (`Recheck`).

Why. The confidence sequence that decides a floor early (`scoring/confidence_sequence.py`)
assumes that a question's answer does not depend on when it is asked: the values it sees,
in a random order, are then a random sample of the goldset's. A system whose answers depend on
its call count breaks that (a rate-limit fallback, a quota, a cache that fills): right on its
first 40 calls and wrong after, it scores 0.20 of 200 asked in full, yet its first 26 answers,
all right, decide a floor of 0.85 "holds" (issue 39, case 1).

The re-check. Once every floor is decided after k questions, a random sample of s of those k
is asked again, in a fresh random order (`reasking_order`, from the run's seed): calls
k+1..k+s (its size below). For each floor and each question of its population asked again,
the re-asked answer and the first one are two values on
the floor's own scale (the value `scoring/stopping.py` feeds its test: how the answer moves
the figure against the floor), and their difference is turned so that it is positive when the
second answer moves the figure toward the other side of the floor than the one decided. The
paired sign-flip test (`scoring/sign_flip.py`, exact McNemar for right-or-wrong units) asks
whether those differences lean that way more than a fair coin per pair explains: a flaky
system's answers differ both ways, a drifting one's one way, and the test needs no estimate of
the flakiness. (Its level holds for answers chosen by nothing; a stop comes when the first
answers are good enough, so a flaky system's re-asks fall back toward its average and are
refused more often than alpha: 13% of the re-checks of a system right 9 times in 10 on each
question when all k were asked again, 0.5% with the sample, benchmarks/sequential.py. A
refusal costs questions, never a wrong decision.)
A floor whose p is at most its share of the re-check's level (`recheck_level`: DRIFT_LEVEL =
0.125 per goldset split over its floors; since issue 49 not the error budget's share, as a
refusal decides nothing wrongly: `scoring/sign_flip.py`) refuses the stop: every question is
then asked and the floors are decided over all of them, as without `--ragate-sequential`.
So does a re-ask that errored, was skipped, has no verdict of a judged floor's metric, or
never came.

Its size: a sample (`scoring/sign_flip.drift_sample`). The stop rests on its k answers; the
re-check asks again a random sample of s of them (of their units: a conversation whole), the
fewest that catch a system that now answers otherwise DRIFT_SHARE (half) or more of those k
with chance at least 1 - DRIFT_MISS (0.95), for a system otherwise stable: the hypergeometric
tail of a single acceptance-sampling plan whose acceptance number is one less than the moved
pairs the sign-flip test needs at the floor's level (3 at 0.125, one floor; 4 at 0.0625, two;
5 for three). It is 9 to 11 of k from 20 to 400 for one floor, 11 to 13 for two, 14 to 15 for
three: a stop after k makes k + s calls, not 2k.

A change of the system at call T, after the stop (k < T <= k + s), turns the k + s - T
re-asks after it, and m of them refuse the stop (for a system right before and wrong after):
caught from T <= k + s - m on. Case 1 at the defaults (N = 200, one floor at 0.05): the floor
is decided after 26 and the bound on the rest (`scoring/gap_bound.py`) after 38, so k = 38 and
s = 10, asked again at calls 39..48, of which calls 41-48 (8) come back wrong where the first
answers were right and none the other way: p = 2^-8 <= 0.125, refused whatever the seed. With
a lax bound (`sequential_gaps = 0.9`), k = 26 and the sample's calls end at 35: a change at
call 41 is past the re-check and passes it (benchmarks/sequential.py measures both). When
k + s >= N, asking the sample again would cost as much as asking the rest,
so the rest is asked instead (`cheaper_than_the_rest`).

What it cannot see (docs/sequential.md): a change after call k + s - m (nothing run that
early can know what the system does later), and a system that answers a question it has seen
before from a cache (a re-ask then repeats the first answer).

Pure: no pytest, no files.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.sign_flip import DRIFT_LEVEL, FloorDrift, drift_sample, sign_flip_p
from pytest_ragate.scoring.stopping import FloorTrack, share


@dataclass(frozen=True, kw_only=True)
class Uncompared:
    """A re-asked answer that cannot be compared with the first: it errored or was skipped
    (`status`), or has no countable value of a floor's `metric`."""

    name: str
    status: str = ""
    metric: str = ""


def recheck_level(floors: int) -> float:
    """Each floor's level in the re-check: DRIFT_LEVEL split evenly over the goldset's
    floors (`scoring/sign_flip.py` says why it is not the error budget's share)."""
    return DRIFT_LEVEL / max(floors, 1)


def reasked_size(asked: int, population: int, level: float) -> int | None:
    """How many of the `asked` questions (of `population`) re-check a stop (`drift_sample`),
    or None when asking them would cost as much as asking the rest (`cheaper_than_the_rest`)."""
    size = drift_sample(asked, level)
    return size if cheaper_than_the_rest(asked, size, population) else None


def cheaper_than_the_rest(asked: int, again: int, population: int) -> bool:
    """A stop after `asked` questions is checked by asking `again` of them: only when that
    costs less than asking the rest, which then decides every floor exactly."""
    return asked + again < population


def reasking_order(seed: int, route: str, asked: Sequence[str],
                   units: Mapping[str, str] | None = None, size: int | None = None,
                   ) -> list[str]:
    """The questions asked again to check a stop: a sample of `size` units (every one when
    None) of the questions asked before it, in a shuffle of the run's seed, so the system
    cannot know it, the same on every process and replay; a conversation's turns (`units`)
    together and in the order `asked` lists them."""
    units = units or {}
    order = shuffled_units(asked, units, f"{seed}\0{route}\0again")
    if size is None:
        return order
    kept = list(dict.fromkeys(units.get(n, n) for n in order))[:size]
    chosen = set(kept)
    return [n for n in order if units.get(n, n) in chosen]


def shuffled_units(names: Sequence[str], units: Mapping[str, str], seed: str) -> list[str]:
    """`names` in a seeded shuffle of their units (a name's unit: its conversation's, or
    itself), each unit's names together in the order `names` lists them: the same seed and
    names give the same order on every process."""
    members: dict[str, list[str]] = {}
    for name in names:
        members.setdefault(units.get(name, name), []).append(name)
    order = sorted(members)
    random.Random(seed).shuffle(order)
    return [name for unit in order for name in members[unit]]


@dataclass(kw_only=True)
class Recheck:
    """A stop after `asked` questions, waiting for their answers asked again (`names`, in
    re-asking order)."""

    asked: int
    names: list[str]
    again: dict[str, QuestionRecord] = field(default_factory=dict)

    def offer(self, name: str, record: QuestionRecord) -> None:
        if name in self.names and name not in self.again:
            self.again[name] = record

    @property
    def complete(self) -> bool:
        return len(self.again) == len(self.names)

    def failure(self) -> Uncompared | None:
        """A re-asked answer that errored or was skipped, or None."""
        for name in self.names:
            record = self.again.get(name)
            if record is not None and record.status != "scored":
                return Uncompared(name=name, status=record.status)
        return None

    def drift(self, tracks: Mapping[str, FloorTrack], first: Mapping[str, QuestionRecord],
              members: Mapping[str, str], kinds: Mapping[str, str | None], *, seed: str,
              ) -> list[FloorDrift] | Uncompared:
        """Every floor's re-check, or why one cannot be made (a re-asked answer without a
        verdict of the floor's metric, or with more units than its test's bound)."""
        found = []
        for floor, track in tracks.items():
            toward = []
            for name in self.names:
                if kinds[floor] not in (None, members[name]):
                    continue
                moved = _moved(track, first[name], self.again[name])
                if moved is None:
                    return Uncompared(name=name, metric=track.metric)
                toward.append(moved)
            found.append(FloorDrift(
                floor=floor, toward=sum(d > 0 for d in toward),
                away=sum(d < 0 for d in toward), pairs=len(toward),
                p=sign_flip_p(toward, seed=f"{seed}\0{floor}"),
                level=recheck_level(len(tracks))))
        return found


def _moved(track: FloorTrack, first: QuestionRecord, again: QuestionRecord) -> float | None:
    """The re-asked answer's value minus the first's on the floor's test scale, positive
    toward the side not decided; None when the re-ask cannot be counted."""
    before, after = share(track.metric, first), share(track.metric, again)
    bound = track.bound or 1
    if before is None or after is None or after[1] > bound or not 0 <= after[0] <= after[1]:
        return None
    f = track.test.null

    def value(c: float, n: int) -> float:
        return (c - f * n + f * bound) / bound

    difference = value(*after) - value(*before)
    return -difference if track.test.decided == "above" else difference
