"""One floor applied to every value of one slice key (`lang`: de, en, fr, …): a call per slice,
with a correction across the key's slices so that many slices do not mean many false fails.

Each slice gets one of three calls (`decide_slices`):

- `holds`: its 95% interval's bound clears the floor (the lower bound for a `min` floor, the
  upper for `{max}`), the interval computed as the gate computes it (`figures.interval_of`:
  Wilson for proportions, the betting interval for means, questions as clusters with repeats;
  a mean's widened to at least Wilson's over its sum, `slice_interval`);
- `misses`: it is significantly on the wrong side of the floor after a multiplicity correction
  across the key's slices;
- `insufficient`: neither. Its n cannot tell; `needs` is about how many questions would decide
  it if its true value were the one observed (`power.py`'s arithmetic), None when no n would
  (a value at the floor, a mean without spread).

The shortfall test of one slice is one-sided, H0 "the slice's true value clears the floor":

- proportions: exact, the binomial tail at the floor, p = P(Binomial(n, floor) <= k) for a
  `min` floor (>= k for `{max}`): under H0 no rate that clears the floor makes k this low more
  often than the rate at the floor itself;
- means of values in [0, 1] (judged scores, citation accuracy), and proportions asked with
  repeats (each question's rate over its repeats is one value, questions the unit): the
  betting test of `bounded_mean.mean_shortfall` (I. Waudby-Smith and A. Ramdas, "Estimating
  means of bounded random variables by betting", JRSS B 2023, with constant bets mixed over a
  fixed grid, an average of e-values after Vovk and Wang 2021), a valid p-value for any
  distribution on [0, 1] and any n. It does not depend on the values' order (the order results
  arrive in can differ between -n 0 and -n 2), and unlike Hoeffding's bound it adapts to
  their spread: judged scores that cluster near their mean are caught with a few dozen
  questions (benchmarks/slices.py). The bill's figures (seconds, dollars: not bounded) and judge
  agreement (kappa over labelled pairs: not a mean of per-question values) are refused, and so
  is a value outside [0, 1].

The slices' p-values are then adjusted across the slices of the key that have one (a slice
with nothing scored has no test and does not count):

- Holm's step-down (S. Holm, "A simple sequentially rejective multiple test procedure", Scand.
  J. Statist. 6, 1979), the default, controls the family-wise error rate: the chance that ANY
  slice whose true value clears the floor is called `misses` is at most alpha, whatever the
  dependence between slices.
- Benjamini-Hochberg (Y. Benjamini and Y. Hochberg, "Controlling the false discovery rate",
  JRSS B 57, 1995), `bh`, controls the false discovery rate: among the slices called `misses`,
  the expected share whose true value clears the floor is at most alpha (for independent
  slices, as disjoint slices of one run are); with every slice clearing the floor that is again
  the chance of any false fail, and when some truly miss it catches more of them than Holm.

benchmarks/slices.py measures both (20 slices at the floor, n per slice 20-200).
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.scoring.bounded_mean import mean_shortfall, needed_to_clear
from pytest_ragate.scoring.figures import interval_of
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.power import POWER, binomial_sum, needed_for_mean, questions_needed
from pytest_ragate.scoring.registry import METRICS, Tally
from pytest_ragate.scoring.stats import Z95, clears, wilson

Correction = Literal["holm", "bh"]
SliceCall = Literal["holds", "misses", "insufficient"]  # a slice's call (`decide_slices`)

CORRECTIONS: dict[str, str] = {"holm": "Holm", "bh": "Benjamini-Hochberg"}
TEST_EXACT = "exact binomial"
TEST_BETTING = "betting"
EVERY_SLICE = "*"  # a floor over every value of its key (`[floors.slices.lang]`), before expansion


@dataclass(frozen=True, kw_only=True)
class SliceFigure:
    """One slice decided: its figures, its shortfall test and its call."""

    value: str  # the slice value ("de")
    tally: Tally
    interval: tuple[float, float] | None
    p_value: float | None  # the one-sided test of a shortfall, unadjusted
    adjusted: float | None  # after the correction across the key's slices
    call: SliceCall
    needs: int | None  # about how many questions would decide it (insufficient)

    @property
    def figure(self) -> float | None:
        return self.tally.value

    @property
    def test(self) -> str:
        """Which shortfall test gave `p_value`: exact for a proportion, else the betting test."""
        return TEST_EXACT if _exact(self.tally) else TEST_BETTING


def binomial_cdf(k: int, n: int, q: float) -> float:
    """P(Binomial(n, q) <= k), summed in log space (exact enough for n in the thousands)."""
    if k < 0:
        return 0.0
    if k >= n or q <= 0.0:
        return 1.0
    if q >= 1.0:
        return 0.0
    return binomial_sum(range(k + 1), n, q)


def proportion_shortfall(k: int, n: int, floor: float, upper: bool = False) -> float:
    """Exact one-sided p-value of k of n against H0 "the true rate clears the floor":
    P(Binomial(n, floor) <= k) for a `min` floor, P(Binomial(n, floor) >= k) for `{max}`."""
    if n <= 0:
        raise ValueError("a shortfall test needs n > 0")
    return 1.0 - binomial_cdf(k - 1, n, floor) if upper else binomial_cdf(k, n, floor)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the input's order: sorted ascending, the i-th (from 1)
    is max over j <= i of min(1, (m − j + 1)·p_(j))."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values, in the input's order: sorted ascending, the i-th
    (from 1) is min over j >= i of min(1, m·p_(j) / j)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p_values[i] / (rank + 1))
        adjusted[i] = running
    return adjusted


def adjust(p_values: Sequence[float], correction: Correction) -> list[float]:
    """The p-values adjusted across one key's slices by `correction`."""
    if correction == "holm":
        return holm(p_values)
    if correction == "bh":
        return benjamini_hochberg(p_values)
    raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")


def _exact(t: Tally) -> bool:
    return METRICS[t.metric].aggregate == "proportion" and not t.clusters


def _question_values(t: Tally) -> list[float]:
    """The values a mean test runs over: a question's own rate with repeats (the question is
    the unit of sampling), else the tally's values."""
    if t.clusters:
        return [s / c for s, c in t.clusters if c]
    return list(t.values)


def shortfall_p(floor: Floor, t: Tally) -> float | None:
    """The slice's one-sided shortfall p-value (exact for a proportion, the betting test for a mean
    or a proportion with repeats), or None when nothing was scored."""
    if not t.n:
        return None
    if _exact(t):
        return proportion_shortfall(round(t.k), t.n, floor.min, floor.upper)
    values = _question_values(t)
    if not values:
        return None
    if not all(0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"{t.metric}: a slice's values must lie in [0, 1] for its shortfall "
                         "test, and some do not")
    return mean_shortfall(values, floor.min, floor.upper)


EXACT_NEEDS = 500  # past about this n, `needs_of` takes the normal approximation (exact is slow)


@functools.lru_cache(maxsize=4096)  # exact power sums take ~0.03 s; slices repeat rates
def proportion_needs(floor: float, value: float) -> int | None:
    """About how many questions let a Wilson 95% lower bound clear `floor` 80% of the time
    at the true rate `value`: `power.questions_needed` (exact) when the normal approximation
    says at most EXACT_NEEDS, else that approximation, n = ((z95 + z80)·√(v(1−v)) / (v − f))²
    (exact arithmetic near the floor takes seconds a slice, for a figure that is "about")."""
    if value <= floor:
        return None
    z = Z95 + statistics.NormalDist().inv_cdf(POWER)
    approx = max(2, math.ceil((z * math.sqrt(value * (1 - value)) / (value - floor)) ** 2))
    if approx > EXACT_NEEDS:
        return approx
    return questions_needed(floor, value, strict=True, limit=4 * EXACT_NEEDS) or approx


def needs_of(floor: Floor, t: Tally) -> int | None:
    """About how many questions would let the slice's 95% interval exclude the floor, on
    whichever side its value lies, 80% of the time if its true value were the one observed
    (`proportion_needs` for a proportion, `power.needed_for_mean` for a mean, both run
    mirrored, v → 1 − v, for a value below the floor); None when no n would: nothing scored,
    a value at the floor, a mean without spread. A mean needs at least what a proportion of
    its value would (`slice_interval`), and what its betting interval would over its values
    repeated (`bounded_mean.needed_to_clear`)."""
    if not t.n:
        return None
    if _exact(t):
        value = t.k / t.n
        if value >= floor.min:
            return proportion_needs(floor.min, value)
        return proportion_needs(1 - floor.min, 1 - value)
    values = _question_values(t)
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean == floor.min:
        return None
    if mean > floor.min:
        found = (needed_for_mean(values, floor.min, strict=True),
                 proportion_needs(floor.min, mean))
    else:
        found = (needed_for_mean([1 - v for v in values], 1 - floor.min, strict=True),
                 proportion_needs(1 - floor.min, 1 - mean))
    # the interval is the betting one, at least Wilson's over the sum (`slice_interval`): so
    # is the n it needs
    found += (needed_to_clear(values, floor.min),)
    return max((n for n in found if n is not None), default=None)


def sliceable(metric: str) -> bool:
    """Whether `metric` can be a slice floor: slice floors decide shares in [0, 1] over
    questions (a proportion, or a mean of per-question scores), and the bill's figures and
    judge agreement are not one."""
    info = METRICS[metric]
    return (info.share and info.aggregate != "quantile"
            and info.source not in ("agreement", "anchors", "conversations"))


def _refuse_unbounded(floor: Floor) -> None:
    if not sliceable(floor.metric):
        raise ValueError(f"{floor.metric}: not a share in [0, 1], so not a slice floor")


def slice_interval(t: Tally) -> tuple[float, float] | None:
    """A slice's 95% interval: the gate's (`figures.interval_of`), and for a mean (scores in
    [0, 1], or questions' rates with repeats) at least as wide as Wilson's over the scores'
    sum. No distribution on [0, 1] of a given mean has more variance than
    the 0/1 one, so a mean slice is held no more readily than a proportion of the same sum."""
    interval = interval_of(t) if t.n else None
    if interval is None or _exact(t):  # a proportion: Wilson already
        return interval
    values = _question_values(t)
    if not values:
        return interval
    low, high = wilson(math.fsum(values), len(values))
    return min(interval[0], low), max(interval[1], high)


def _held(floor: Floor, t: Tally, interval: tuple[float, float] | None) -> bool:
    """The slice's 95% interval's bound clears the floor (`stats.clears`, strictly)."""
    return interval is not None and clears(t.value or 0.0, interval, floor.min, True,
                                           floor.upper)


_RANK: dict[SliceCall, int] = {"misses": 0, "insufficient": 1, "holds": 2}


def _worst_first(floor: Floor, figure: SliceFigure) -> tuple[int, float, float, str]:
    """Misses first, then insufficient, then holds; within a call the furthest on the
    wrong side of the floor first (a slice with nothing scored last), then the value."""
    value = figure.tally.value
    margin = math.inf if value is None else (floor.min - value if floor.upper
                                            else value - floor.min)
    adjusted = figure.adjusted if figure.adjusted is not None else 2.0
    return _RANK[figure.call], margin, adjusted, figure.value


def decide_slices(floors: Floor | Mapping[str, Floor], tallies: Mapping[str, Tally], *,
                  alpha: float = 0.05, correction: Correction = "holm") -> list[SliceFigure]:
    """Every slice of one key against its floor (one `Floor` for all, or each value's own:
    a named slice can override the key's bound; their `kind` and `slice` are not read: the
    tallies are already the slices'), worst first. `tallies` maps each value to its tally."""
    names = sorted(tallies)
    floor_of = {name: floors if isinstance(floors, Floor) else floors[name] for name in names}
    for floor in floor_of.values():
        _refuse_unbounded(floor)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), not {alpha}")
    raw = {name: shortfall_p(floor_of[name], tallies[name]) for name in names}
    tested = {name: p for name, p in raw.items() if p is not None}
    adjusted = dict(zip(tested, adjust(list(tested.values()), correction), strict=True))
    figures = []
    for name in names:
        floor, t = floor_of[name], tallies[name]
        interval = slice_interval(t)
        p, adj = raw[name], adjusted.get(name)
        if _held(floor, t, interval):
            call: SliceCall = "holds"
        elif adj is not None and adj <= alpha:
            call = "misses"
        else:
            call = "insufficient"
        figures.append(SliceFigure(value=name, tally=t, interval=interval, p_value=p,
                                   adjusted=adj, call=call,
                                   needs=needs_of(floor, t) if call == "insufficient" else None))
    return sorted(figures, key=lambda f: _worst_first(floor_of[f.value], f))


def family_size(figures: Sequence[SliceFigure]) -> int:
    """How many of a key's slices had a shortfall test: the family the correction spans,
    which every slice's message names."""
    return sum(f.p_value is not None for f in figures)
