"""How far a judge agrees with the people who labelled a goldset, and the judged figure
its labels correct (prediction-powered inference).

A goldset may ship human labels for some questions (`[judge] labels`, docs/judges.md): per
question and judged metric, a 0/1 verdict or a score in [0, 1]. A run with a judge is held
to them: binary labels against the judge's score binarised at `BINARY_AT` (Cohen's kappa),
score labels against its score (Spearman's rank correlation, with the mean absolute error
beside it). Each statistic comes with a seeded percentile bootstrap over the labelled
questions and its n, as `stats.bootstrap_mean` does for means. Where every resample gives
the same value (a judge that agrees with every label), the percentile bootstrap cannot show
how far the statistic could move, so it is never reported as a point interval: kappa's lower
bound is then computed with the agreement rate bounded by the rule of three (no disagreement
among n says only that its rate is below 1 − 0.05^(1/n) at 95%: Hanley and Lippman-Hand
1983), and a Spearman correlation has no interval (under `ragate_ci = strict` it cannot
pass).

A labelled question without a verdict (its judge call failed, its answer abstained or
errored, it never ran) is never left out: it is named (`Agreement.missing`), and
decision/agreement_floor.py holds the judge to it: agreement with it missing is not decided,
so `judge_agreement` and every judged floor of the goldset fail (fail closed: a judge cannot
escape its labels by failing on them).

Pure: values in, values out; stdlib only. Statistics only: whether an agreement vouches for
its judge is decision/agreement_floor.py's.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.scoring.labelled import judged_values
from pytest_ragate.scoring.ppi import NO_SPREAD
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.scoring.stats import BOOTSTRAP_RESAMPLES

BINARY_AT = 0.5  # a judge's score at or above this is a 1 against a binary label
AGREEMENT = "judge_agreement"
Statistic = Literal["kappa", "Spearman"]
Pair = tuple[float, float]  # (judge, human)


# --- the statistics -------------------------------------------------------------------------


def cohen_kappa(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Cohen's kappa of two raters' 0/1 verdicts: (p_o − p_e) / (1 − p_e), observed agreement
    against the agreement their marginal rates give by chance. None when p_e = 1 (both gave
    one class only): chance explains all agreement, so kappa says nothing."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    a1 = sum(a for a, _ in pairs) / n
    b1 = sum(b for _, b in pairs) / n
    chance = a1 * b1 + (1 - a1) * (1 - b1)
    if chance >= 1:
        return None
    return (observed - chance) / (1 - chance)


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(pairs: Sequence[Pair]) -> float | None:
    """Spearman's rank correlation (Pearson's over mid-ranks, so ties are handled). None
    when either side is constant: no order to agree on."""
    if len(pairs) < 2:
        return None
    rx, ry = ranks([a for a, _ in pairs]), ranks([b for _, b in pairs])
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    sxy = sum((x - mx) * (y - my) for x, y in zip(rx, ry, strict=True))
    sxx = sum((x - mx) ** 2 for x in rx)
    syy = sum((y - my) ** 2 for y in ry)
    if not sxx or not syy:
        return None
    return sxy / math.sqrt(sxx * syy)


def mae(pairs: Sequence[Pair]) -> float | None:
    """Mean absolute error between judge and human."""
    return statistics.fmean(abs(a - b) for a, b in pairs) if pairs else None


def bootstrap(pairs: Sequence[Pair], stat: Callable[[Sequence[Pair]], float | None],
              resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95,
              ) -> tuple[float, float] | None:
    """Percentile bootstrap of `stat` over labelled questions, seeded by the pairs (a rerun
    prints the same interval); resamples where the statistic is undefined are left out, and
    None when most are."""
    if not pairs:
        return None
    pairs = sorted(pairs)
    rng = random.Random(hashlib.sha256(repr(pairs).encode()).digest())
    n = len(pairs)
    found = sorted(v for _ in range(resamples)
                   if (v := stat(rng.choices(pairs, k=n))) is not None)
    if len(found) < resamples / 2:
        return None
    alpha = (1 - level) / 2
    return (found[math.floor(alpha * (len(found) - 1))],
            found[math.ceil((1 - alpha) * (len(found) - 1))])


def _kappa_of(pairs: Sequence[Pair]) -> float | None:
    return cohen_kappa([(int(a >= BINARY_AT), int(b)) for a, b in pairs])


def _kappa_bounded(pairs: Sequence[Pair]) -> float | None:
    """Kappa with the observed agreement replaced by its rule-of-three lower bound
    (0.05^(1/n) when all n agree) and the chance agreement of the observed marginals."""
    binary = [(int(a >= BINARY_AT), int(b)) for a, b in pairs]
    n = len(binary)
    judge_ones, human_ones = sum(a for a, _ in binary) / n, sum(b for _, b in binary) / n
    chance = judge_ones * human_ones + (1 - judge_ones) * (1 - human_ones)
    if chance >= 1:
        return None
    return (NO_SPREAD ** (1 / n) - chance) / (1 - chance)


def _not_a_point(pairs: Sequence[Pair], value: float | None,
                 interval: tuple[float, float] | None, binary: bool,
                 ) -> tuple[float, float] | None:
    """A bootstrap interval of zero width (every resample the same value) says nothing of
    how far the statistic could move: kappa's gets a rule-of-three lower bound, any other
    none."""
    if interval is None or interval[0] < interval[1] or value is None:
        return interval
    low = _kappa_bounded(pairs) if binary else None
    return None if low is None else (min(low, value), value)


@dataclass(frozen=True, kw_only=True)
class Agreement:
    """A judge against the labels of one metric: the statistic, its interval and n, the MAE
    for score labels, and the labelled questions it has no verdict for (its line:
    `wording/agreement.agreement_line`)."""

    metric: str
    statistic: Statistic
    value: float | None
    interval: tuple[float, float] | None
    n: int  # labelled questions with a verdict
    labelled: int  # labelled questions (selected ones: deselected are gaps)
    mae: float | None = None
    mae_interval: tuple[float, float] | None = None
    missing: tuple[tuple[str, str], ...] = ()  # (question id, why it has no verdict)


def agree(metric: str, labels: Mapping[str, float], binary: bool,
          records: Sequence[QuestionRecord], stamps: Mapping[str, str] | None = None,
          ) -> Agreement:
    """The judge's agreement with the human labels of `metric` over the labelled questions
    among `records` (the ones a run has; deselected ones are the floor's gaps). A label
    stamped for another answer (`stamps`) leaves its question without a verdict."""
    values, why = judged_values(metric, records, stamps)
    present = {r.question_id for r in records}
    labelled = [q for q in labels if q in present]
    pairs = [(values[q], labels[q]) for q in labelled if q in values]
    missing = tuple((q, why[q]) for q in labelled if q not in values)
    if binary:
        kappa = _kappa_of(pairs)
        return Agreement(metric=metric, statistic="kappa", value=kappa,
                         interval=_not_a_point(pairs, kappa, bootstrap(pairs, _kappa_of),
                                               binary),
                         n=len(pairs), labelled=len(labelled), missing=missing)
    rho = spearman(pairs)
    return Agreement(metric=metric, statistic="Spearman", value=rho,
                     interval=_not_a_point(pairs, rho, bootstrap(pairs, spearman), binary),
                     n=len(pairs), labelled=len(labelled), mae=mae(pairs),
                     mae_interval=bootstrap(pairs, mae), missing=missing)
