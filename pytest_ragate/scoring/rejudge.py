"""`ragate rejudge`'s statistics: one goldset's saved answers graded by two judges, the shift
between them, pure.

A judge change moves a gate's goalposts: a figure can rise or fall with no change in the
system (alpaca_eval's win rates moved from about 70 to about 50 on a judge swap). So a
candidate judge is held to the current one on the very answers the current one graded (the
saved rows), per judged metric and, where the goldset has kinds, per metric and kind (a judge
that shifts on one kind only must not hide behind an unchanged whole):

- the paired shift, candidate minus current, over the answers both judges gave a verdict:
  its mean with a 95% percentile bootstrap interval of the mean difference (`stats.
  bootstrap_mean` over the per-answer differences) and the paired bootstrap's two-sided p
  (`stats.paired_bootstrap`, resampling answers so each answer's two verdicts move together;
  Efron & Tibshirani 1993, ch. 16);
- McNemar's exact test (`stats.mcnemar_exact`; McNemar 1947) on pass/fail of each answer at
  the goldset's floor for that metric (its kind's floor where it has one, else the metric's),
  with the answers that flipped named, the ones the candidate fails first.

Error rate: every p-value of a comparison (two per metric, and two per metric and kind) is
held to alpha = 0.05 with Holm's step-down correction (Holm 1979), valid under any dependence
between them, so when the two judges grade alike the chance that any shift is called
significant is at most 0.05 (the bootstrap's p being approximate, up to its resampling error).
A missed shift is the other error; its size depends on n (`ragate power` gives what a paired
test over n can tell apart). An answer the current judge graded and the candidate could not
(a failure, a timeout) is named (`Shift.unregraded`) and never paired away.

Each floor decided under both judges, and whether the change moves the gate, is
decision/rejudge.py's: the gate's own decision over the saved rows and over the candidate's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, in_metric_order, repeat_name
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.scoring.stats import bootstrap_mean, mcnemar_exact, paired_bootstrap

ALPHA = 0.05  # the family-wise error rate of one goldset's comparison (Holm)
SAME = 1e-9  # two verdicts this close are the same verdict
RowKey = tuple[str, int]  # (question id, repeat)


@dataclass(frozen=True, kw_only=True)
class Regraded:
    """What the candidate judge said of one saved answer: values and failures by metric."""

    values: Mapping[str, float] = field(default_factory=dict)
    failures: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Flip:
    """One answer whose verdict moved: both judges' values, and its pass/fail at the floor."""

    name: str  # `q07`, or `q07[r2]` with repeats
    current: float
    candidate: float
    passed_before: bool | None = None  # None: no floor to pass
    passed_after: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Shift:
    """The paired shift of one metric (of one kind, when `kind` is set)."""

    metric: str
    kind: str | None
    n: int  # answers both judges graded
    current: float | None
    candidate: float | None
    shift: float | None
    interval: tuple[float, float] | None
    p_bootstrap: float | None
    floor: float | None
    passed_to_failed: int = 0
    failed_to_passed: int = 0
    p_mcnemar: float | None = None
    flips: tuple[Flip, ...] = ()  # pass/fail changed at the floor, the newly failed first
    moved: int = 0  # answers whose verdict changed at all
    unregraded: tuple[tuple[str, str], ...] = ()  # (answer, why the candidate gave none)
    significant: bool = False  # after Holm's correction across the goldset's tests

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.metric}" if self.kind else self.metric


def key_of(row: QuestionRecord) -> RowKey:
    return row.question_id, row.repeat


def judged_rows(rows: Sequence[QuestionRecord]) -> list[QuestionRecord]:
    """The rows a judge was asked about: scored, answered, and with a judge named."""
    return [r for r in rows if r.status == "scored" and r.judge is not None
            and not r.must_abstain and not r.abstained]


def regraded_rows(rows: Sequence[QuestionRecord], judge_id: str,
                  regraded: Mapping[RowKey, Regraded]) -> list[QuestionRecord]:
    """The saved rows as the candidate judge grades them: its verdicts and failures in place
    of the current judge's (the mechanical figures untouched; rows it did not grade lose
    their verdicts, so a floor over them fails closed)."""
    out = []
    for row in rows:
        if row.judge is None:
            out.append(row)
            continue
        got = regraded.get(key_of(row), Regraded())
        metrics = {m: v for m, v in row.metrics.items() if m in METRICS and not METRICS[m].judged}
        metrics.update(got.values)
        out.append(row.model_copy(update={
            "metrics": metrics, "judge": judge_id, "judge_failures": in_metric_order(got.failures),
            "judge_cached": [], "judge_vacuous": []}))
    return out


def floor_for(floors: Sequence[Floor], metric: str, kind: str | None) -> Floor | None:
    """The floor an answer of `kind` passes or fails `metric` at: its kind's, else the
    metric's own."""
    mine = [f for f in floors if f.metric == metric and not f.anchors and not f.upper]
    return (next((f for f in mine if kind is not None and f.kind == kind), None)
            or next((f for f in mine if f.kind is None), None))


def judge_shifts(metrics: Sequence[str], rows: Sequence[QuestionRecord],
                 regraded: Mapping[RowKey, Regraded], floors: Sequence[Floor],
                 alpha: float = ALPHA) -> tuple[Shift, ...]:
    """The paired shift of each metric in `metrics` over the judged rows among `rows`, and of
    each metric and kind where the rows have more than one kind, Holm-corrected at `alpha`
    across all of them."""
    judged = judged_rows(rows)
    kinds = sorted({r.kind for r in judged})
    shifts = []
    for metric in metrics:
        shifts.append(_shift(metric, None, judged, regraded, floors))
        if len(kinds) > 1:
            shifts += [_shift(metric, kind, [r for r in judged if r.kind == kind], regraded,
                              floors) for kind in kinds]
    return tuple(_holm(shifts, alpha))


def _shift(metric: str, kind: str | None, rows: Sequence[QuestionRecord],
           regraded: Mapping[RowKey, Regraded], floors: Sequence[Floor]) -> Shift:
    repeated = any(r.repeat > 1 for r in rows)
    floor = floor_for(floors, metric, kind)
    pairs: list[tuple[str, float, float]] = []
    unregraded = []
    for row in rows:
        before = row.metrics.get(metric)
        if before is None:
            continue  # the current judge gave none: nothing to hold the candidate to
        name = repeat_name(row.question_id, row.repeat) if repeated else row.question_id
        got = regraded.get(key_of(row), Regraded())
        after = got.values.get(metric)
        if after is None:
            unregraded.append((name, got.failures.get(metric, "no verdict")))
            continue
        pairs.append((name, float(before), float(after)))
    if not pairs:
        return Shift(metric=metric, kind=kind, n=0, current=None, candidate=None, shift=None,
                     interval=None, p_bootstrap=None, floor=floor.min if floor else None,
                     unregraded=tuple(unregraded))
    n = len(pairs)
    differences = [after - before for _, before, after in pairs]
    moved = sum(abs(d) > SAME for d in differences)
    shift = sum(differences) / n
    interval = bootstrap_mean(differences) if moved else (0.0, 0.0)
    p_boot = (paired_bootstrap([(before, 1.0, after, 1.0) for _, before, after in pairs])[1]
              if moved else 1.0)
    flips: list[Flip] = []
    worse = better = 0
    p_mcnemar = None
    if floor is not None:
        for name, before, after in pairs:
            was, now = before >= floor.min, after >= floor.min
            if was != now:
                worse += was
                better += now
                flips.append(Flip(name=name, current=before, candidate=after,
                                  passed_before=was, passed_after=now))
        p_mcnemar = mcnemar_exact(worse, better)
    else:
        flips = [Flip(name=name, current=before, candidate=after)
                 for name, before, after in pairs if abs(after - before) > SAME]
    # the newly failed first, then by how far the verdict moved
    flips.sort(key=lambda f: (f.passed_after is not False, -abs(f.candidate - f.current),
                              f.name))
    return Shift(metric=metric, kind=kind, n=n, current=sum(b for _, b, _ in pairs) / n,
                 candidate=sum(a for _, _, a in pairs) / n, shift=shift, interval=interval,
                 p_bootstrap=p_boot, floor=floor.min if floor else None,
                 passed_to_failed=worse, failed_to_passed=better, p_mcnemar=p_mcnemar,
                 flips=tuple(flips), moved=moved, unregraded=tuple(unregraded))


def _holm(shifts: Sequence[Shift], alpha: float) -> list[Shift]:
    """Each shift marked significant when one of its p-values is rejected by Holm's
    step-down procedure over every p-value of the comparison at `alpha`."""
    tests = sorted((p, i) for i, s in enumerate(shifts)
                   for p in (s.p_bootstrap, s.p_mcnemar) if p is not None)
    rejected: set[int] = set()
    m = len(tests)
    for rank, (p, i) in enumerate(tests):
        if p > alpha / (m - rank):
            break
        rejected.add(i)
    return [replace(s, significant=i in rejected) for i, s in enumerate(shifts)]
