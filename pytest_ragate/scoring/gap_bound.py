"""The questions a sequential stop did not ask (`--ragate-sequential`): a bound on the share
of them without a result, so that a stop keeps the full run's promise that an errored or
unsure question is never passed over (`decision/sequential.py`).

A full run fails closed on any question without a result: one that errored, or (under an
`answer_match` floor) an answer that is unsure and no person's label settles (a stale label
included). A stop cannot see the questions it did not ask, so it establishes, like a floor,
that the share of units (questions, or conversations) without a result is below a stated
rate r (`sequential_gaps` in the goldset's ragate.toml, GAPS by default): a one-sided test
of the finite population's count of gaps G against the null G >= G0 = max(1, ceil(r N)).

A gap among the questions asked refuses the stop outright (the full run would fail on it),
so the test is only ever consulted while none has been seen, and its statistic is exact: the
chance, were there G0 gaps among the N units, that the first n units drawn without
replacement in a uniformly random order hold none,

    p_n = C(N - G0, n) / C(N, n) = prod_{i < n} (N - G0 - i) / (N - i).

M_n = 1{no gap in the first n} / p_n is a test martingale under G = G0 (its expectation given
the past is M_{n-1}) and a supermartingale for every G >= G0, so by Ville's inequality
(J. Ville, Étude critique de la notion de collectif, 1939) the chance that it ever reaches
1 / alpha, i.e. that p_n <= alpha is ever seen with no gap, is at most alpha however often
it is looked at: an anytime-valid test, the finite-population betting framework of
Waudby-Smith & Ramdas ("Confidence sequences for sampling without replacement", NeurIPS 2020)
with the all-in bet on "no gap" (for 0/1 values with none seen the likelihood ratio against
the boundary null, so no other bet proves it sooner). It is the zero-acceptance-number
sampling plan of acceptance sampling (the hypergeometric plan), made sequential.

Its cost: with no gap, it is decided after about N (1 - alpha^(1/G0)) units, roughly
ln(1/alpha) / r for a large goldset: 38 of 200 and 40 of 400 at the default r = 0.07 and the
goldset's whole budget alpha = 0.05, which it need not share with the floors' tests
(`decision/sequential.Stopping.of`: where it can err, they cannot). At r = 0.05 it would be 51
and 55, and with the budget halved (as before issue 49) 61 and 66: the default was raised so
that a clear case stops within 60 calls of 400, its re-check included (benchmarks/README.md).

**A goldset too small for a share** (`FEWEST`): the bound tolerates up to G0 - 1 units without
a result, a share of the goldset; where that is only a handful of questions (G0 < FEWEST = 8:
at the default rate, a goldset of 100 questions or fewer), one errored question is most of
it, and the stop would save few questions anyway (the bound alone needs about a third of
them). There the bound is never proved, so every question is asked and decided exactly: one
errored question in 60 is never passed over (issue 45). A laxer rate (0.5 at 60 questions:
G0 = 30) allows a stop, at its stated tolerance.

Pure: no numpy, no pytest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GAPS = 0.07  # the default `sequential_gaps`: the share without a result a stop bounds
FEWEST = 8  # the bound is proved only where G0 is at least this many units (docstring)


def least_gaps(population: int, rate: float) -> int:
    """G0: the fewest units without a result that make their share `rate` or more (never
    fewer than one: no gap at all is always below the rate)."""
    return max(1, math.ceil(rate * population - 1e-9))


@dataclass(kw_only=True)
class GapBound:
    """The test that fewer than `rate` of a goldset's `population` units lack a result, fed
    one asked unit at a time in the asking order."""

    population: int  # N: every unit there is
    rate: float  # r in (0, 1): the share a stop proves it is below
    alpha: float  # the chance of a wrong "below" this test may spend
    asked: int = 0  # n: units fed
    seen: int = 0  # units fed that lacked a result: any refuses a stop
    p: float = 1.0  # p_n: the chance of n units with no gap, were G0 of N gaps

    def observe(self, gap: bool) -> None:
        """One asked unit: whether it (any of its questions) lacks a result."""
        g0 = least_gaps(self.population, self.rate)
        left = self.population - self.asked
        self.p *= max(left - g0, 0) / left if left > 0 else 0.0
        self.asked += 1
        self.seen += gap

    @property
    def decided(self) -> bool:
        """No unit asked lacked a result, and the share of those not asked is proved below
        the rate (never where that share is fewer than FEWEST units)."""
        return (self.seen == 0 and self.p <= self.alpha
                and least_gaps(self.population, self.rate) >= FEWEST)
