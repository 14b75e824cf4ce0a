"""Each question right in most of its repeats: `[floors.question] pass_rate = 0.8`.

Pure: a question's repeats right and answered (`registry.right_counts`: a repeat is right when
its row has nothing `wrong`, the rule `question_outcome = "assert"` uses) in, one call per
question and the repeats a pass rate needs out. decision/pass_rate_floor.py makes the verdict.

The floor holds only when EVERY question of the goldset is shown right in at least p of its
repeats; a question that is not is named as missing. It fails closed: a question the repeats
cannot tell about misses.

- `ragate_ci = point` (the default, as for every floor): a question holds when its observed
  share of right repeats reaches p (c / n >= p).
- `ragate_ci = strict`: a question holds when the hypothesis "its true pass rate is below p"
  is rejected by the exact one-sided binomial test, p-value P(Binomial(n, p) >= c), after
  Holm's step-down across the goldset's questions (S. Holm, "A simple sequentially rejective
  multiple test procedure", Scand. J. Statist. 6, 65-70, 1979) at ALPHA. Each question also
  carries its exact one-sided Clopper-Pearson lower bound at 1 - ALPHA (C. J. Clopper and
  E. S. Pearson, Biometrika 26, 1934), the interval a report shows; the call is Holm's.

Error rates, strict: the chance that the floor passes while some question's true pass rate is
below p is at most ALPHA, whatever the questions' rates and their dependence. Passing needs
that question's hypothesis rejected, and Holm keeps the chance of rejecting any true one at
most ALPHA. (An intersection-union test would reach the same bound without the correction,
each question at ALPHA; Holm is stricter, and buys the per-question claims: every question
named as holding holds, all at once, with probability at least 1 - ALPHA.) The price is
repeats: a question right in all n repeats has p-value p**n, and Holm's first step needs it
at most ALPHA / m over m questions, so a pass rate is decidable only with at least
`needed_repeats(p, m)` repeats: 14 for p = 0.8 over one question, 27 over 20, 29 over 30.
Point mode has no such bound (a question truly right 70% of the time is right 5 of 5 times
in 17% of runs); benchmarks/pass_rate.py measures both.

A pass rate the goldset's repeats cannot decide (fewer repeats than `needed_repeats`, in
either mode: with fewer, no outcome of the repeats could show the rate) is refused when the
goldset is loaded (`ragate validate`) and at collection (`ragate_repeat` wins), naming how
many repeats would decide it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from pytest_ragate.scoring.slices import holm, proportion_shortfall

ALPHA = 0.05  # the chance of a false pass of the floor, strict (one-sided, family-wise)
MAX_REPEATS = 100  # a goldset's `repeat` is at most this (goldsets/config.py)
PASS_RATE = "question_pass_rate"  # the floor's metric, `[floors.question] pass_rate`
QUESTION_TABLE = "question"  # `[floors.question]`: the floors over each question's repeats


@dataclass(frozen=True, kw_only=True)
class QuestionRate:
    """One question's repeats against the pass rate: its counts, test and call."""

    question_id: str
    right: int
    total: int
    p_value: float  # P(Binomial(total, p) >= right): the exact one-sided test of "below p"
    adjusted: float  # after Holm across the goldset's questions
    lower: float  # the exact one-sided (1 - ALPHA) Clopper-Pearson lower bound of its rate
    held: bool  # point: right / total >= p; strict: adjusted <= ALPHA

    @property
    def rate(self) -> float:
        return self.right / self.total


def all_right_p(rate: float, repeats: int) -> float:
    """The p-value of a question right in all `repeats`: P(Binomial(n, rate) >= n)."""
    return rate ** repeats


def needed_repeats(rate: float, questions: int, alpha: float = ALPHA) -> int | None:
    """The fewest repeats with which a question right in every one is shown at or above
    `rate` after Holm over `questions` questions (its first step, the worst case: alpha /
    m); None when no number of repeats up to MAX_REPEATS would (a rate of 1, or near it)."""
    if not 0.0 < rate < 1.0:
        return None
    level = alpha / max(questions, 1)
    n = max(1, math.ceil(math.log(level) / math.log(rate)) - 1)
    while all_right_p(rate, n) > level:
        n += 1
    return n if n <= MAX_REPEATS else None


def lower_bound(right: int, total: int, alpha: float = ALPHA) -> float:
    """The exact one-sided Clopper-Pearson lower bound of a rate from `right` of `total`:
    the q at which P(Binomial(total, q) >= right) = alpha (0 when none is right); bisection
    on the binomial tail, to 1e-9."""
    if right <= 0:
        return 0.0
    low, high = 0.0, 1.0
    while high - low > 1e-9:
        mid = (low + high) / 2
        if proportion_shortfall(right, total, mid, upper=True) > alpha:
            high = mid
        else:
            low = mid
    return low


def question_rates(counts: Mapping[str, tuple[int, int]], rate: float, *, strict: bool,
                   alpha: float = ALPHA) -> list[QuestionRate]:
    """Each question's call against `rate`, in `counts`' order (question id → (right,
    answered)), Holm-adjusted across them; a question with nothing answered does not hold."""
    ids = list(counts)
    p_values = [proportion_shortfall(c, n, rate, upper=True) if n else 1.0
                for c, n in counts.values()]
    adjusted = holm(p_values) if p_values else []
    found = []
    for qid, p, adj in zip(ids, p_values, adjusted, strict=True):
        right, total = counts[qid]
        held = total > 0 and (adj <= alpha if strict else right / total >= rate)
        found.append(QuestionRate(question_id=qid, right=right, total=total, p_value=p,
                                  adjusted=adj, lower=lower_bound(right, total, alpha)
                                  if total else 0.0, held=held))
    return found


def missing(rates: list[QuestionRate]) -> list[QuestionRate]:
    """The questions that do not hold, lowest observed rate first (then in order)."""
    return sorted((r for r in rates if not r.held),
                  key=lambda r: r.right / r.total if r.total else -1.0)


def repeats_short(rate: float, repeats: int, questions: int, alpha: float = ALPHA,
                  ) -> tuple[bool, int | None]:
    """Whether `repeats` are too few to decide a pass rate of `rate` over `questions`
    questions, and the repeats that would (None: none up to MAX_REPEATS)."""
    need = needed_repeats(rate, questions, alpha)
    return (need is None or repeats < need), need


def one_rate(r: QuestionRate, strict: bool) -> str:
    """`q07 right 11 of 14 (lower bound 0.58, Holm p 0.41)`; point mode without the test."""
    head = f"{r.question_id} right {r.right} of {r.total}"
    if not strict:
        return head
    return f"{head} (lower bound {r.lower:.2f}, Holm p {r.adjusted:.2g})"
