"""`--ragate-baseline`: did this run get significantly worse than a baseline run?

Each metric is compared question by question with the same questions in the baseline (a
results file, or a history line of the same goldset and eval_version, read by
`outputs/baseline.py`), so the noise of which
questions happen to be in the set cancels out. Units that are right or wrong (abstention, each
evidence span, each judge verdict obtained) get the exact McNemar test; ratios and judged
scores get a paired bootstrap that resamples questions (each metric's `units` or `score` in
registry.py). Only a significant drop fails: a smaller change is reported with its p-value
and passes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.scoring.power import detectable_drop
from pytest_ragate.scoring.records import QuestionScores, fmt_some
from pytest_ragate.scoring.registry import METRICS, run_metrics
from pytest_ragate.scoring.stats import mcnemar_exact, paired_bootstrap

RegressionOutcome = Literal["passed", "failed", "skipped"]
MCNEMAR = "McNemar (exact)"
BOOTSTRAP = "paired bootstrap"
NAMED_WORSE = 10  # questions a failed check names


@dataclass(frozen=True)
class Regression:
    """One metric of one goldset, paired question by question with the baseline."""

    goldset: str
    metric: str
    test: str  # MCNEMAR or BOOTSTRAP
    pairs: int  # paired questions both runs scored
    baseline: float | None  # the metric over the paired units, in the baseline run
    current: float | None  # ... and in this run
    p_value: float | None
    outcome: RegressionOutcome
    message: str
    detects: float | None = None  # the drop McNemar detects 80% of the time at this discordance

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.current is None:
            return None
        return self.current - self.baseline


@dataclass(frozen=True)
class BaselineRun:
    """One goldset's per-question scores in the baseline, and where they came from."""

    goldset: str
    eval_version: str
    scores: dict[str, QuestionScores]
    source: str


# --- checking ----------------------------------------------------------------------------------


def scored_metrics(scores: Iterable[QuestionScores]) -> list[str]:
    """The run's metrics (registry.run_metrics), from what its questions asked the judge
    for: a verdict or a failure."""
    return run_metrics({m for s in scores for m in (*s.verdicts, *s.judge_failures)})


def check_run(goldset: str, eval_version: str, current: Mapping[str, QuestionScores],
              baseline: Sequence[BaselineRun], *, alpha: float, min_n: int,
              ) -> list[Regression]:
    """One check per metric of this run, against the goldset's last baseline run of the same
    eval_version."""
    metrics = scored_metrics(current.values())
    same = [b for b in baseline if b.goldset == goldset]
    chosen = next((b for b in reversed(same) if b.eval_version == eval_version), None)
    if chosen is None or not chosen.scores:
        if not same:
            why = f"the baseline has no run of goldset {goldset}"
        elif chosen is None:
            versions = ", ".join(sorted({b.eval_version for b in same}))
            why = (f"the baseline ran eval_version {versions}, this run {eval_version}: "
                   "not comparable")
        else:
            why = f"{chosen.source} has no per-question scores (written by an older ragate)"
        return [Regression(goldset, m, _test_of(m), 0, None, None, None, "skipped", why)
                for m in metrics]
    return [check(goldset, m, chosen.scores, current, alpha=alpha, min_n=min_n,
                  source=chosen.source) for m in metrics]


def _test_of(metric: str) -> str:
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


def check(goldset: str, metric: str, base: Mapping[str, QuestionScores],
          current: Mapping[str, QuestionScores], *, alpha: float, min_n: int = 0,
          source: str = "the baseline") -> Regression:
    """This run against the baseline on the questions both scored (skipped ones are out;
    errored ones count as wrong, as in the floors)."""
    test = _test_of(metric)
    ids = [q for q in current if q in base
           and current[q].status != "skipped" and base[q].status != "skipped"]
    unpaired = len({*base, *current} - set(ids))
    base_units: list[bool] = []
    cur_units: list[bool] = []
    pairs: list[tuple[float, float, float, float]] = []
    paired_questions = 0
    dropped: list[str] = []  # the questions that got worse, named when the check fails
    for q in ids:
        if test == MCNEMAR:
            then, now = _units(metric, base[q]), _units(metric, current[q])
            keys = [k for k in then if k in now]
            base_units += [then[k] for k in keys]
            cur_units += [now[k] for k in keys]
            paired_questions += bool(keys)
            if any(then[k] and not now[k] for k in keys):
                dropped.append(q)
        else:
            then_r, now_r = _ratio(metric, base[q]), _ratio(metric, current[q])
            if then_r is None or now_r is None or not (then_r[1] or now_r[1]):
                continue
            pairs.append((*then_r, *now_r))
            paired_questions += 1
            if then_r[1] and now_r[1] and now_r[0] / now_r[1] < then_r[0] / then_r[1]:
                dropped.append(q)
    aside = (f"; {unpaired} question{'s' * (unpaired != 1)} in only one run or skipped, "
             "not paired") if unpaired else ""
    where = f" · against {source}"
    if not paired_questions and ids and test == BOOTSTRAP:
        return Regression(goldset, metric, test, 0, None, None, None, "skipped",
                          f"{metric}: nothing to compare ({metric} has no "
                          f"{METRICS[metric].unit} in one run){aside}{where}")
    if not paired_questions:
        return Regression(goldset, metric, test, 0, None, None, None, "skipped",
                          f"{metric}: no question scored in both runs{aside}{where}")
    if test == MCNEMAR:
        n = len(base_units)
        then_v, now_v = sum(base_units) / n, sum(cur_units) / n
        worse = sum(b and not c for b, c in zip(base_units, cur_units, strict=True))
        better = sum(c and not b for b, c in zip(base_units, cur_units, strict=True))
        p = mcnemar_exact(worse, better)
        detects = detectable_drop(n, (worse + better) / n, alpha=alpha).drop if n else None
        detail = (f"{test}: {worse} right→wrong, {better} wrong→right of {n} "
                  f"{METRICS[metric].unit}")
    else:
        base_den, cur_den = sum(r[1] for r in pairs), sum(r[3] for r in pairs)
        if not base_den or not cur_den:
            return Regression(goldset, metric, test, paired_questions, None, None, None,
                              "skipped", f"{metric}: nothing to compare ({metric} has no "
                              f"{METRICS[metric].unit} in one run){aside}{where}")
        then_v = sum(r[0] for r in pairs) / base_den
        now_v = sum(r[2] for r in pairs) / cur_den
        _, p = paired_bootstrap(pairs)
        detects = None
        detail = test
    figures = (f"{metric} {then_v:.2f} → {now_v:.2f} over {paired_questions} paired questions "
               f"({detail}, p = {p:.3g}")
    if min_n and paired_questions < min_n:
        return Regression(goldset, metric, test, paired_questions, then_v, now_v, p, "failed",
                          f"refusing to gate: {figures}); {paired_questions} paired questions "
                          f"are fewer than ragate_min_n = {min_n}{aside}{where}", detects)
    significant = p < alpha
    if now_v < then_v and significant:
        named = fmt_some(dropped, NAMED_WORSE)
        went = "right→wrong" if test == MCNEMAR else "worse"
        return Regression(goldset, metric, test, paired_questions, then_v, now_v, p, "failed",
                          f"significant drop: {figures} < α {alpha:g}){aside}{where}"
                          + (f" · {went}: {named}" if dropped else ""), detects)
    word = ("no change" if now_v == then_v else
            ("significant rise" if significant else "not significant") if now_v > then_v
            else "drop not significant")
    relation = "<" if significant else "≥"
    return Regression(goldset, metric, test, paired_questions, then_v, now_v, p, "passed",
                      f"{word}: {figures} {relation} α {alpha:g}){aside}{where}", detects)
