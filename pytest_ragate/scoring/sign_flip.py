"""Did re-asked answers change more than flakiness explains: the paired sign-flip test.

A question asked twice gives a pair of answers, and each answer a value on a floor's scale;
d_i is the second value minus the first, turned so that a positive d moves the floor's figure
toward the other side of the floor. If the system's answer to a question does not depend on
when it is asked (however flaky it is: a temperature, a retriever's ties, a judge's
verdicts), the two answers of a pair are exchangeable, so d_i is as likely to be d as -d, and
conditionally on |d_1|..|d_n| the signs are independent fair coins. The test of that null
against "the answers moved toward the other side" is the randomisation (sign-flip) test of the
sum T = sum d_i:

    p = P(sum e_i |d_i| >= T),  e_i independent, each +1 or -1 with probability 1/2.

(R. A. Fisher, "The Design of Experiments", 1935, section 21, the paired randomisation test;
with right-or-wrong answers, d_i in {-1, 0, 1}, it is exact McNemar's test, Q. McNemar 1947.)
It needs no estimate of the flakiness: flakiness makes the pairs differ both ways, a drift one
way; a question answered the same twice (a deterministic system, a cache) has d = 0 and
weighs nothing. **Error rate: under the null the chance of p <= alpha is at most alpha, for
any flakiness and any n.**

The distribution of T is enumerated exactly for up to EXACT pairs that differ; past that it
is estimated from RESAMPLES sign vectors drawn with a seeded generator, and
p = (1 + #{T* >= T}) / (RESAMPLES + 1), which keeps the test valid (B. Phipson and G. K.
Smyth, "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9, 2010).
The seed is the caller's (the run's seed and the floor), so the same answers give the same p
on every process and in every replay.

**How many pairs** (`drift_sample`): a sequential stop rests on k answers and asks a random
sample of s of them again (`decision/drift.py`). For a system otherwise stable, the test at
level L refuses once m = ceil(log2(1 / L)) pairs moved one way and none the other (p = 2^-m).
s is the fewest for which a sample holds at least m of D = ceil(DRIFT_SHARE * k) moved answers
with chance at least 1 - DRIFT_MISS: the hypergeometric tail, i.e. the operating
characteristic of a single sampling plan with acceptance number m - 1 drawn without
replacement from a finite lot (type-B OC curve: D. C. Montgomery, "Introduction to
Statistical Quality Control", Wiley, chapter 15, the OC curve; for acceptance number 0 and
a large lot it is the familiar s = ceil(log(beta) / log(1 - d))). So a change in half the
answers a stop rests on is caught with chance at least 0.95 (at most DRIFT_MISS missed); a
smaller change may pass. It is 14 to 16 pairs at level 0.05, 16 to 18 at 0.025 (k from 26 to
400), the whole k up to about 10.

**Its level** (`DRIFT_LEVEL`, issue 49): the test refuses a stop at DRIFT_LEVEL = 0.125 per
goldset, split evenly over its floors (0.125 for one floor: m = 3; 0.0625 for two: m = 4;
0.042 for three: m = 5), not at the floors' share of the error budget. A refusal decides
nothing wrongly: every question is then asked and every floor decided exactly, so the level
is no error rate of the decision; it bounds how often a system whose answers do not depend on
when they are asked is refused in vain (up to 0.125 for answers chosen by nothing; more for a
flaky system, whose stops come when its first answers were good: benchmarks/sequential.py).
What a stop's decision risks from drift is what the re-check misses, DRIFT_MISS, which it
keeps. With m = 3 a sample of 9 to 11 catches half the answers moved (k from 20 to 400), 14 to
16 at the floors' 0.05 before.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

DRIFT_LEVEL = 0.125  # the re-check's level per goldset, split evenly over its floors
DRIFT_SHARE = 0.5  # the share of a stop's answers that, moved, its re-check must catch
DRIFT_MISS = 0.05  # the most chance that it misses them (the sample's size, `drift_sample`)


def fewest_moved(level: float) -> int:
    """m: the fewest pairs moved toward the other side, and none away, that the sign-flip
    test refuses at `level` (p = 2^-m <= level)."""
    return max(1, math.ceil(math.log2(1.0 / level) - 1e-9))


def drift_sample(asked: int, level: float) -> int:
    """s: how many of the `asked` units a stop rests on are asked again, the fewest for which
    the chance that a random sample holds at least `fewest_moved(level)` of D =
    ceil(DRIFT_SHARE * asked) moved ones is at least 1 - DRIFT_MISS (the hypergeometric tail
    of a single sampling plan; module docstring); all of them when no fewer do."""
    m, moved = fewest_moved(level), math.ceil(DRIFT_SHARE * asked - 1e-9)
    for size in range(m, asked):
        short = math.fsum(math.comb(moved, x) * math.comb(asked - moved, size - x)
                          for x in range(min(m, size + 1)))
        if short / math.comb(asked, size) <= DRIFT_MISS:
            return size
    return asked


EXACT = 16  # pairs that differ: up to this many, all 2^n sign vectors are enumerated
RESAMPLES = 19_999
_SLACK = 1e-9  # sums within this of T count as reaching it (float sums)


def sign_flip_p(differences: Sequence[float], *, seed: str) -> float:
    """The one-sided p-value of "the differences lean positive" against "each is as likely
    to have either sign" (module docstring); 1.0 when no pair differs."""
    import numpy as np

    d = np.asarray([x for x in differences if x != 0.0], dtype=float)
    if d.size == 0:
        return 1.0
    observed = float(d.sum())
    sizes = np.sort(np.abs(d))  # the sum is the same in any order: so is p
    if d.size <= EXACT:
        patterns = (np.arange(2 ** d.size)[:, None] >> np.arange(d.size)) & 1
        sums = ((2 * patterns - 1) * sizes).sum(axis=1)
        return float((sums >= observed - _SLACK).mean())
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8],
                                               "big"))
    signs = rng.integers(0, 2, size=(RESAMPLES, d.size)) * 2 - 1
    reached = int(((signs * sizes).sum(axis=1) >= observed - _SLACK).sum())
    return (1 + reached) / (RESAMPLES + 1)


@dataclass(frozen=True, kw_only=True)
class FloorDrift:
    """One floor's re-check: how many re-asked answers moved its figure toward the other
    side than the one decided, how many away, and the sign-flip p-value against `level`."""

    floor: str
    toward: int
    away: int
    pairs: int
    p: float
    level: float

    @property
    def changed(self) -> bool:
        return self.p <= self.level
