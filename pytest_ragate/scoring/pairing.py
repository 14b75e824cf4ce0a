"""A run paired with its baseline question by question (`pair`), and the paired tests'
figures: the exact McNemar test over right-or-wrong units, a paired bootstrap over each
question's ratio (`mcnemar_of`, `bootstrap_of`). Pairing makes the noise of which questions
happen to be in the set cancel out. Statistics only: whether a drop fails a check is
decision/regressions.py's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.scoring.noninferiority import Discordant, Ratios
from pytest_ragate.scoring.power import detectable_drop
from pytest_ragate.scoring.records import QuestionScores
from pytest_ragate.scoring.registry import METRICS, run_metrics
from pytest_ragate.scoring.stats import BOOTSTRAP, MCNEMAR, mcnemar_exact, paired_bootstrap

NotCompared = Literal["no units", "no pairs"]


@dataclass(frozen=True, kw_only=True)
class BaselineRun:
    """One goldset's per-question scores in the baseline, and where they came from."""

    goldset: str
    eval_version: str
    scores: dict[str, QuestionScores]
    source: str
    judges: tuple[str, ...] = ()  # who graded its judged metrics; () when none did
    results: str | None = None  # its results file, which `ragate rejudge` can re-grade
    # each corpus document's digest, by id; None when the baseline did not keep it (a file or
    # line written before it did)
    corpus: dict[str, str] | None = None


@dataclass(frozen=True, kw_only=True)
class CorpusChange:
    """How a corpus differs from the baseline's, by document id (`corpus_change`)."""

    edited: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]

    @property
    def documents(self) -> frozenset[str]:
        return frozenset((*self.edited, *self.added, *self.removed))


def corpus_change(then: Mapping[str, str] | None, now: Mapping[str, str] | None,
                  ) -> CorpusChange | None:
    """The documents edited, added and removed since `then`; None when either side is
    unknown or nothing changed."""
    if not then or not now:
        return None
    change = CorpusChange(edited=tuple(sorted(d for d in now if d in then and now[d] != then[d])),
                          added=tuple(sorted(d for d in now if d not in then)),
                          removed=tuple(sorted(d for d in then if d not in now)))
    return change if change.documents else None


@dataclass(frozen=True, kw_only=True)
class Paired:
    """One metric's questions paired across the two runs (`pair`): the right-or-wrong
    units both scored (McNemar) or each question's ratio in both (bootstrap), and the
    questions that got worse, named when the check fails."""

    questions: int  # paired questions with something to compare
    compared: int  # questions in both runs and skipped in neither
    unpaired: int  # questions in one run only, or skipped in one
    then_units: tuple[bool, ...] = ()
    now_units: tuple[bool, ...] = ()
    ratios: tuple[Ratios, ...] = ()
    dropped: tuple[str, ...] = ()
    # with conversations: each conversation's turns summed into one pair of ratios, so the
    # paired bootstrap resamples conversations (`questions` then counts the units: the
    # conversations, and the questions asked alone, `conversations` of them conversations)
    by_conversation: bool = False
    conversations: int = 0


@dataclass(frozen=True, kw_only=True)
class Compared:
    """The paired test's figures: the metric over the paired units in both runs, the
    p-value and whether it is below α; for McNemar its discordant units and the drop it
    detects 80% of the time."""

    then: float
    now: float
    p_value: float
    significant: bool
    worse: int = 0  # McNemar: units right in the baseline, wrong now
    better: int = 0
    units: int = 0  # McNemar: the paired units
    detects: float | None = None


def scored_metrics(scores: Iterable[QuestionScores]) -> list[str]:
    """The run's metrics (registry.run_metrics), from what its questions asked the judge
    for (a verdict or a failure) and the correctness metrics they were scored on."""
    return run_metrics({m for s in scores for m in (*s.verdicts, *s.judge_failures,
                                                     *s.answers)})


def paired_test(metric: str) -> str:
    return MCNEMAR if METRICS[metric].regression == "mcnemar" else BOOTSTRAP


def _units(metric: str, s: QuestionScores) -> dict[str, bool]:
    """A question's right-or-wrong units of a binary metric, keyed so runs pair up."""
    units = METRICS[metric].units
    assert units is not None, f"{metric} has no binary units"
    return units(metric, s)


def _ratio(metric: str, s: QuestionScores) -> tuple[float, float] | None:
    """A question's score as a ratio (score, 1): one vote per question that has one."""
    score = METRICS[metric].score
    value = score(metric, s) if score is not None else None
    return None if value is None else (value, 1.0)


def pair(metric: str, base: Mapping[str, QuestionScores],
         current: Mapping[str, QuestionScores]) -> Paired:
    """The questions both runs scored (skipped ones are out; errored ones count as wrong,
    as in the floors), paired unit by unit for McNemar, ratio by ratio for a bootstrap."""
    ids = [q for q in current if q in base
           and current[q].status != "skipped" and base[q].status != "skipped"]
    unpaired = len({*base, *current} - set(ids))
    if any(current[q].conversation for q in ids):
        return _pair_conversations(metric, ids, base, current, unpaired)
    if paired_test(metric) == MCNEMAR:
        return _pair_units(metric, ids, base, current, unpaired)
    return _pair_ratios(metric, ids, base, current, unpaired)


def discordant_clusters(metric: str, base: Mapping[str, QuestionScores],
                        current: Mapping[str, QuestionScores]) -> list[Discordant]:
    """A binary metric's units paired as `pair` pairs them, counted by cluster (a question,
    or a whole conversation): how many went right → wrong and wrong → right, of how many."""
    ids = [q for q in current if q in base
           and current[q].status != "skipped" and base[q].status != "skipped"]
    counts: dict[str, list[int]] = {}
    for q in ids:
        then, now = _units(metric, base[q]), _units(metric, current[q])
        keys = [k for k in then if k in now]
        if keys:
            cluster = counts.setdefault(current[q].conversation or q, [0, 0, 0])
            cluster[0] += sum(then[k] and not now[k] for k in keys)
            cluster[1] += sum(now[k] and not then[k] for k in keys)
            cluster[2] += len(keys)
    return [Discordant(worse=w, better=b, units=n) for w, b, n in counts.values()]


def _pair_units(metric: str, ids: Sequence[str], base: Mapping[str, QuestionScores],
                current: Mapping[str, QuestionScores], unpaired: int) -> Paired:
    then_units: list[bool] = []
    now_units: list[bool] = []
    questions = 0
    dropped: list[str] = []
    for q in ids:
        then, now = _units(metric, base[q]), _units(metric, current[q])
        keys = [k for k in then if k in now]
        then_units += [then[k] for k in keys]
        now_units += [now[k] for k in keys]
        questions += bool(keys)
        if any(then[k] and not now[k] for k in keys):
            dropped.append(q)
    return Paired(questions=questions, compared=len(ids), unpaired=unpaired,
                  then_units=tuple(then_units), now_units=tuple(now_units),
                  dropped=tuple(dropped))


def _pair_ratios(metric: str, ids: Sequence[str], base: Mapping[str, QuestionScores],
                 current: Mapping[str, QuestionScores], unpaired: int) -> Paired:
    ratios: list[Ratios] = []
    dropped: list[str] = []
    for q in ids:
        then, now = _ratio(metric, base[q]), _ratio(metric, current[q])
        if then is None or now is None or not (then[1] or now[1]):
            continue
        ratios.append((*then, *now))
        if then[1] and now[1] and now[0] / now[1] < then[0] / then[1]:
            dropped.append(q)
    return Paired(questions=len(ratios), compared=len(ids), unpaired=unpaired,
                  ratios=tuple(ratios), dropped=tuple(dropped))


def _pair_conversations(metric: str, ids: Sequence[str], base: Mapping[str, QuestionScores],
                        current: Mapping[str, QuestionScores], unpaired: int) -> Paired:
    """Turns paired within their conversation, each conversation one pair of ratios (its
    turns' units right over units, or their scores over scores): the cluster-paired test,
    as the floors' intervals take the conversation as the unit; a question outside
    conversations is a unit of its own."""
    sums: dict[str, list[float]] = {}
    conversations: set[str] = set()  # the units that are conversations, not questions alone
    for q in ids:
        part = (_unit_ratios(metric, base[q], current[q]) if paired_test(metric) == MCNEMAR
                else _score_ratios(metric, base[q], current[q]))
        if part is not None:
            unit = current[q].conversation or q
            if current[q].conversation:
                conversations.add(unit)
            totals = sums.setdefault(unit, [0.0, 0.0, 0.0, 0.0])
            for i, value in enumerate(part):
                totals[i] += value
    kept: dict[str, Ratios] = {name: (a, b, c, d) for name, (a, b, c, d) in sums.items()
                               if b or d}
    dropped = [name for name, (a, b, c, d) in kept.items() if b and d and c / d < a / b]
    return Paired(questions=len(kept), compared=len(ids), unpaired=unpaired,
                  ratios=tuple(kept.values()), dropped=tuple(dropped), by_conversation=True,
                  conversations=len(conversations & set(kept)))


def _unit_ratios(metric: str, then: QuestionScores, now: QuestionScores) -> Ratios | None:
    a, b = _units(metric, then), _units(metric, now)
    keys = [k for k in a if k in b]
    if not keys:
        return None
    return (float(sum(a[k] for k in keys)), float(len(keys)), float(sum(b[k] for k in keys)),
            float(len(keys)))


def _score_ratios(metric: str, then: QuestionScores, now: QuestionScores) -> Ratios | None:
    a, b = _ratio(metric, then), _ratio(metric, now)
    return None if a is None or b is None else (*a, *b)


def mcnemar_of(paired: Paired, alpha: float) -> Compared:
    """McNemar's exact test over the discordant units, and the drop it detects."""
    then, now = paired.then_units, paired.now_units
    n = len(then)
    worse = sum(b and not c for b, c in zip(then, now, strict=True))
    better = sum(c and not b for b, c in zip(then, now, strict=True))
    p = mcnemar_exact(worse, better)
    return Compared(then=sum(then) / n, now=sum(now) / n, p_value=p, significant=p < alpha,
                    worse=worse, better=better, units=n,
                    detects=detectable_drop(n, (worse + better) / n, alpha=alpha).drop)


def bootstrap_of(paired: Paired, alpha: float) -> Compared | None:
    """The paired bootstrap over the questions' ratios; None when one run has no unit."""
    base_den = sum(r[1] for r in paired.ratios)
    cur_den = sum(r[3] for r in paired.ratios)
    if not base_den or not cur_den:
        return None
    _, p = paired_bootstrap(paired.ratios)
    return Compared(then=sum(r[0] for r in paired.ratios) / base_den,
                    now=sum(r[2] for r in paired.ratios) / cur_den, p_value=p,
                    significant=p < alpha)
