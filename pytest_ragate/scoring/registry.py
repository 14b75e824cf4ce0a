"""Every metric, defined once: what it counts, who gives it, how a baseline pairs it, how it
is shown.

A `Metric` carries everything the rest of ragate needs to know about it: the floors read its
tally and worst questions, the baseline check its regression unit (right-or-wrong units get
McNemar, per-question scores a paired bootstrap), the judges whether they are asked for it,
the history and the reports which metrics a run has and what a question's own figure is.
Adding a metric is adding one entry to `METRICS`.

A leaf module: no pytest, numpy or ragas (it imports only stats.py, plain Python), and the
records it reads are type hints only, so anything (the judges, the RAGAS bridge, the CLI) can
import it cheaply.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from pytest_ragate.scoring.records import QuestionRecord, QuestionScores

# proportion: k of n units (Wilson); mean: of values (betting, scoring/intervals.py); quantile:
# a percentile of values, decided on its distribution-free upper bound (stats.quantile_bounds)
Aggregate = Literal["proportion", "mean", "quantile"]
# mechanical: computed from turn ranges alone; verdict: a judge's verdict, asked per question;
# judge: about the judge's verdicts (needs a judge, asks it nothing); agreement: the judge
# against a goldset's human labels (scoring/agreement.py; not a figure of the run's
# questions); anchors: a population floor over anchors, never a question's score; repeats:
# over a question's repeats (goldset `repeat` >= 2), one unit per question; bill: what
# answering cost, measured by ragate (latency) or reported (tokens, dollars), never a score
# conversations: over a goldset's conversations, one unit per conversation (issue 37); custom:
# a metric the project defines (`@ragate.metric`, scoring/custom.py), its value on the row
Source = Literal["mechanical", "verdict", "judge", "agreement", "anchors", "repeats", "bill",
                 "conversations", "custom"]
Worst = tuple[float, str]  # (how good, what went wrong): a failing floor names the lowest


@dataclass(frozen=True, kw_only=True)
class Tally:
    """A metric over a population: k successes of n for proportions, or a list of values."""

    metric: str
    k: float
    n: int
    values: tuple[float, ...] = ()
    failures: int = 0  # rows that should count but could not be scored (judge failures)
    questions: int = 0  # questions that contributed a unit: what a minimum n counts
    # with repeats: each question's (k, n) (proportions) or (sum, count) (means) over all
    # its repeats, so intervals resample questions, not answers; empty when asked once
    clusters: tuple[tuple[float, float], ...] = ()
    repeats: int = 1  # the most repeats any question had
    # what the clusters are: a question's repeats, or a conversation's turns (and repeats)
    by: Literal["questions", "conversations"] = "questions"
    # with conversations, how many of the clusters are conversations (the rest are questions
    # asked alone, each its own cluster)
    conversations: int = 0

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


@dataclass(frozen=True)
class Metric:
    """One metric. Each callable takes the metric's name first, so one function serves a
    family (`evidence_recall@K`) and the three verdict metrics alike.

    `tally` counts the non-skipped rows of a population; `score` is a question's own score
    from its paired scores (stored by the mechanical scorer, and the bootstrap's ratio); a
    metric with `units` is right-or-wrong per unit and is compared with McNemar instead;
    `value` is the figure a report shows in a question's row (None: the metric has no
    per-question column); `worst` says what a scored question did wrong, or None."""

    name: str
    source: Source
    aggregate: Aggregate  # proportion: k of n units (Wilson); mean: of values (betting)
    unit: str  # what n counts, for messages: "cited answers", "questions", "spans", ...
    tally: Callable[[str, Sequence[QuestionRecord]], Tally]
    worst: Callable[[str, QuestionRecord], Worst | None]
    score: Callable[[str, QuestionScores], float | None] | None = None
    units: Callable[[str, QuestionScores], dict[str, bool]] | None = None
    value: Callable[[str, QuestionRecord], float | None] | None = None
    anchor_floor: bool = False  # may be a population floor over anchors too
    # a bill metric: whether a scored row carries its figure (a row without it fails the
    # floor, named: an unmeasured question never makes a bill look smaller)
    measured: Callable[[str, QuestionRecord], bool] | None = None
    # scored against the expected answer's facts or gist (answer_match, answer_similarity):
    # listed only in runs whose rows carry it, like a verdict metric only where asked
    correctness: bool = False
    # a verdict metric a judge is asked for only where a goldset asks for it (a floor names
    # it, or `[answers] judged`): answer_correctness and factual_correctness need the gist
    on_request: bool = False
    # a verdict that needs an embedding model besides the judge (answer relevance: the
    # question against the questions the judge generates): asked only where it is needed
    embeds: bool = False
    # a rubric a goldset declares (`[rubrics.polite]`, scoring/rubrics.py): a verdict asked
    # only where a floor gates it, decided only where the labels vouch for the judge on it
    rubric: bool = False

    @property
    def share(self) -> bool:
        """Its figures are shares in [0, 1] (every metric but the bill's: seconds, dollars)."""
        return self.source != "bill"

    @property
    def decided_on_bound(self) -> bool:
        """Decided on its 95% upper bound whatever `ragate_ci` says (a quantile)."""
        return self.aggregate == "quantile"

    @property
    def judged(self) -> bool:
        """Needs a judge: without one its floors are skipped, and its figures name it."""
        return self.source in ("verdict", "judge", "agreement")

    @property
    def asked(self) -> bool:
        """A judge is asked for it, question by question."""
        return self.source == "verdict"

    @property
    def regression(self) -> Literal["mcnemar", "bootstrap"] | None:
        """How a baseline pairs it: McNemar on binary units, a paired bootstrap on scores,
        or not at all."""
        if self.units is not None:
            return "mcnemar"
        return "bootstrap" if self.score is not None else None


# --- what the metrics read -----------------------------------------------------------------------

_AT_K = re.compile(r"evidence_recall@([1-9][0-9]{0,3})")


def recall_depth(name: str) -> int | None:
    """K of `evidence_recall@K`, else None."""
    match = _AT_K.fullmatch(name)
    return int(match.group(1)) if match else None


def spans_found(record: QuestionRecord, depth: int | None = None) -> int:
    """The record's expected spans found in its pool (within its first `depth` contexts)."""
    return sum(rank is not None and (depth is None or rank <= depth)
               for rank in record.evidence_ranks)


def _stored(name: str, record: QuestionRecord) -> float | None:
    return record.metrics.get(name)


# citation accuracy: one vote per answer that cited something (its share of right citations)

def _citation_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    shares = tuple(r.citations_correct / r.citations for r in rows if r.citations)
    return Tally(metric=name, k=sum(shares), n=len(shares), values=shares, questions=len(shares))


def _citation_score(name: str, s: QuestionScores) -> float | None:
    return s.citations_correct / s.citations if s.citations else None


def _citation_worst(name: str, r: QuestionRecord) -> Worst | None:
    if r.citations and r.citations_correct < r.citations:
        return (r.citations_correct / r.citations,
                f"{r.question_id} {r.citations_correct}/{r.citations} citations right")
    return None


# abstention accuracy: each question is right or wrong

def _abstention_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    return Tally(metric=name, k=sum(r.abstention_correct for r in rows), n=len(rows),
                 questions=len(rows))


def _abstention_score(name: str, s: QuestionScores) -> float | None:
    return 1.0 if s.abstention_correct else 0.0


def _abstention_units(name: str, s: QuestionScores) -> dict[str, bool]:
    return {"": s.abstention_correct}


def _abstention_worst(name: str, r: QuestionRecord) -> Worst | None:
    if r.abstention_correct:
        return None
    return 0.0, f"{r.question_id} " + ("abstained, should answer" if r.abstained
                                       else "answered, should abstain")


# evidence recall: micro over expected spans; `@K` counts only the first K contexts

def _recall_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    depth = recall_depth(name)
    found = sum(r.evidence_spans_found if depth is None else spans_found(r, depth)
                for r in rows)
    return Tally(metric=name, k=found, n=sum(r.evidence_spans for r in rows),
                 questions=sum(r.evidence_spans > 0 for r in rows))


def _recall_score(name: str, s: QuestionScores) -> float | None:
    return sum(s.evidence_found) / len(s.evidence_found) if s.evidence_found else None


def _recall_units(name: str, s: QuestionScores) -> dict[str, bool]:
    return {str(i): found for i, found in enumerate(s.evidence_found)}


def _recall_worst(name: str, r: QuestionRecord) -> Worst | None:
    depth = recall_depth(name)
    hit = spans_found(r, depth)
    if hit >= r.evidence_spans:
        return None
    where = f" in the first {depth} contexts" if depth else ""
    return (hit / r.evidence_spans,
            f"{r.question_id} found {hit}/{r.evidence_spans} spans{where}")


def _recall_at_value(name: str, r: QuestionRecord) -> float | None:
    """Not stored on the row (K is the floor's): derived from the evidence ranks."""
    if not r.evidence_spans:
        return None
    return spans_found(r, recall_depth(name)) / r.evidence_spans


# rank metrics (`mrr@K`, `ndcg@K`, `hit_rate@K`, `precision@K`): one value per question with
# evidence, from its contexts' gains (scoring/ranking.py); an errored question's is 0

_RANK_AT_K = re.compile(r"(mrr|ndcg|hit_rate|precision)@([1-9][0-9]{0,3})")


def rank_depth(name: str) -> tuple[str, int] | None:
    """(measure, K) of `mrr@K`, `ndcg@K`, `hit_rate@K` or `precision@K`, else None."""
    match = _RANK_AT_K.fullmatch(name)
    return (match.group(1), int(match.group(2))) if match else None


def rank_value(name: str, r: QuestionRecord) -> float | None:
    """A question's own value of a rank metric; None when it has no evidence (unanswerable:
    not applicable, as for evidence recall)."""
    if not r.evidence_spans:
        return None
    from pytest_ragate.scoring import ranking  # plain Python; the registry stays light

    measure, k = rank_depth(name) or ("mrr", 1)
    gains = r.context_gains or []
    if measure == "ndcg":
        return ranking.ndcg(gains, ranking.ideal_gains(gains, r.evidence_spans), k)
    return {"mrr": ranking.reciprocal_rank, "hit_rate": ranking.hit,
            "precision": ranking.precision}[measure](gains, k)


def _rank_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    values = tuple(v for r in rows if (v := rank_value(name, r)) is not None)
    return Tally(metric=name, k=sum(values), n=len(values), questions=len(values),
                 values=() if name.startswith("hit_rate@") else values)


def _rank_worst(name: str, r: QuestionRecord) -> Worst | None:
    value = rank_value(name, r)
    if value is None or value >= 1.0:
        return None
    measure, k = rank_depth(name) or ("mrr", 1)
    gains = (r.context_gains or [])[:k]
    first = next((rank for rank, g in enumerate(gains, 1) if g > 0), None)
    relevant = f"{sum(g > 0 for g in gains)} of the first {k} contexts relevant"
    where = (f"no relevant context in the first {k}" if first is None else
             relevant if measure == "precision" else
             f"{relevant}, the first at rank {first}" if measure == "ndcg" else
             f"first relevant context at rank {first}")
    return value, f"{r.question_id} {name} {value:.2f}: {where}"


# a judge's verdicts: a mean over the verdicts obtained; failures counted, not averaged

def _verdict_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    values = tuple(float(v) for r in rows if (v := r.metrics.get(name)) is not None)
    failures = sum(name in r.judge_failures for r in rows)
    return Tally(metric=name, k=sum(values), n=len(values), values=values, failures=failures,
                 questions=len(values))


def _verdict_score(name: str, s: QuestionScores) -> float | None:
    return s.verdicts.get(name)


def _verdict_worst(name: str, r: QuestionRecord) -> Worst | None:
    value = r.metrics.get(name)
    if value is None or value >= 1.0:
        return None
    return value, f"{r.question_id} {name} {value:.2f}"


# answer_match: right (1) or wrong (0) per answer with facts; an unsure answer no label
# settled counts nowhere, as a failure (a floor over it is not decided: answer_match.py)

def _match_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    checked = [r.answer_check for r in rows if r.answer_check is not None]
    values = tuple(v for c in checked if (v := c.value) is not None)
    return Tally(metric=name, k=sum(values), n=len(values), values=values,
                 failures=len(checked) - len(values), questions=len(values))


def _answer_score(name: str, s: QuestionScores) -> float | None:
    return s.answers.get(name)


def _match_units(name: str, s: QuestionScores) -> dict[str, bool]:
    value = s.answers.get(name)
    return {} if value is None else {"": value == 1.0}


def _match_worst(name: str, r: QuestionRecord) -> Worst | None:
    check = r.answer_check
    if check is None or check.value == 1.0:
        return None
    state = "unsure" if check.unsettled else "wrong"
    return (0.5 if check.unsettled else 0.0), f"{r.question_id} answer {state}: {check.why}"


# answer_similarity: the cosine of answer and gist, a mean over answers to answerable questions

def _similarity_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    values = tuple(float(v) for r in rows if (v := r.metrics.get(name)) is not None)
    return Tally(metric=name, k=sum(values), n=len(values), values=values,
                 questions=len(values))


def _similarity_worst(name: str, r: QuestionRecord) -> Worst | None:
    value = r.metrics.get(name)
    if value is None:
        return None
    note = f" (answers nothing: {r.non_answer})" if r.non_answer else ""
    return value, f"{r.question_id} {name} {value:.2f}{note}"


# judge coverage: each verdict asked for is delivered or failed

def _coverage_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    attempted = sum(len(r.judge_attempted) for r in rows)
    failed = sum(len(r.judge_failures) for r in rows)
    return Tally(metric=name, k=attempted - failed, n=attempted, failures=failed,
                 questions=sum(bool(r.judge_attempted) for r in rows))


def _coverage_units(name: str, s: QuestionScores) -> dict[str, bool]:
    return {m: m not in s.judge_failures for m in sorted({*s.verdicts, *s.judge_failures})}


def _coverage_worst(name: str, r: QuestionRecord) -> Worst | None:
    if not r.judge_failures:
        return None
    kinds = ", ".join(sorted({w.partition(":")[0] for w in r.judge_failures.values()}))
    return (-len(r.judge_failures),
            f"{r.question_id} {len(r.judge_failures)} judge failed ({kinds})")


# hold rate: over anchors only (decision/floors.decide_anchors); no question carries a unit of it

def _no_questions(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    return Tally(metric=name, k=0, n=0)


def _never(name: str, r: QuestionRecord) -> Worst | None:
    return None


# over repeats: a question is right in one repeat when its row has nothing `wrong` (the rule
# `question_outcome = "assert"` uses); each question is one unit, whatever its repeats

_PASS_K = re.compile(r"pass([\^@])([1-9][0-9]?)")


def pass_depth(name: str) -> tuple[str, int] | None:
    """(`^` or `@`, k) of `pass^k` / `pass@k`, else None."""
    match = _PASS_K.fullmatch(name)
    return (match.group(1), int(match.group(2))) if match else None


def needs_repeats(name: str) -> int:
    """The repeats a floor on `name` needs to be measured: k for pass^k and pass@k, 2 for
    flaky_rate (one answer cannot differ from itself), 1 for every other metric."""
    depth = pass_depth(name)
    if depth is not None:
        return depth[1]
    return 2 if name == "flaky_rate" else 1


def conversation_turns(rows: Sequence[QuestionRecord],
                       ) -> dict[tuple[str, int], list[QuestionRecord]]:
    """Each conversation's rows (one repeat of it: its turns), by (conversation, repeat), in
    first-seen order; skipped and stale rows left out, rows outside conversations too."""
    found: dict[tuple[str, int], list[QuestionRecord]] = {}
    for r in rows:
        if r.conversation and r.counted:
            found.setdefault((r.conversation, r.repeat), []).append(r)
    return found


def _conversation_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    """`conversation_success`: the conversations (each repeat of one a unit) whose every turn
    is right by the per-answer checks (`QuestionRecord.wrong`: citations right or abstained
    correctly, and answer_match where the expected answer lists facts); an errored turn
    makes its conversation wrong (and is a gap of the floor besides)."""
    conversations = conversation_turns(rows)
    right = sum(all(not r.wrong for r in turns) for turns in conversations.values())
    names = {c for c, _ in conversations}
    return Tally(metric=name, k=right, n=len(conversations), questions=len(names),
                 repeats=max((rep for _, rep in conversations), default=1))


def _conversation_worst(name: str, r: QuestionRecord) -> Worst | None:
    """A turn that makes its conversation wrong: `ebike-2 (turn 2 of ebike): answered but
    should abstain`."""
    if not r.conversation or not r.wrong:
        return None
    return (float(r.turn or 0), f"{r.question_id} (turn {r.turn} of {r.conversation}): "
            + "; ".join(r.wrong))


def right_counts(rows: Sequence[QuestionRecord]) -> dict[str, tuple[int, int]]:
    """Each question's (repeats right, repeats answered), in first-seen order; an errored
    repeat is wrong, a skipped or stale one not counted."""
    counts: dict[str, tuple[int, int]] = {}
    for r in rows:
        if not r.counted:
            continue
        right, total = counts.get(r.question_id, (0, 0))
        counts[r.question_id] = (right + (not r.wrong), total + 1)
    return counts


def pass_k(kind: str, k: int, right: int, total: int) -> float:
    """Unbiased estimates from `right` of `total` repeats: pass^k = C(c,k)/C(N,k), all k
    right (tau-bench); pass@k = 1 − C(N−c,k)/C(N,k), at least one of k right (Codex). With
    fewer repeats than k the estimate does not exist: 0, so a floor cannot pass on it."""
    if total < k:
        return 0.0
    if kind == "^":
        return math.comb(right, k) / math.comb(total, k)
    return 1 - math.comb(total - right, k) / math.comb(total, k)


def _pass_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    kind, k = pass_depth(name) or ("^", 1)
    counts = right_counts(rows)
    values = tuple(pass_k(kind, k, c, n) for c, n in counts.values())
    return Tally(metric=name, k=sum(values), n=len(values), values=values, questions=len(values),
                 repeats=max((n for _, n in counts.values()), default=1))


def _flaky_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    counts = [(c, n) for c, n in right_counts(rows).values() if n >= 2]
    flaky = sum(0 < c < n for c, n in counts)
    return Tally(metric=name, k=flaky, n=len(counts), questions=len(counts),
                 repeats=max((n for _, n in counts), default=1))


def _pass_rate_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    """`question_pass_rate`'s figure: each question's share of right repeats, averaged (the
    floor itself is decided question by question: decision/pass_rate_floor.py)."""
    counts = list(right_counts(rows).values())
    values = tuple(c / n for c, n in counts)
    return Tally(metric=name, k=sum(values), n=len(values), values=values,
                 questions=len(values), repeats=max((n for _, n in counts), default=1))


def repeat_worst(name: str, rows: Sequence[QuestionRecord]) -> list[tuple[float, int, str]]:
    """`q07 right 2 of 3` for each question that pulls a repeat metric the wrong way: a
    flaky one for flaky_rate, one not right every time for pass^k, never right for pass@k."""
    first = {}
    for r in rows:
        first.setdefault(r.question_id, r.index)
    found = []
    for qid, (c, n) in right_counts(rows).items():
        bad = (0 < c < n if name == "flaky_rate" else
               c < n if (pass_depth(name) or ("^",))[0] == "^" else c == 0)
        if bad:
            found.append((c / n, first[qid], f"{qid} right {c} of {n}"))
    return sorted(found)


def flaky_questions(rows: Sequence[QuestionRecord]) -> list[str]:
    """`q07 right 2 of 3` for each question whose right/wrong differs between repeats."""
    return [words for _, _, words in sorted(repeat_worst("flaky_rate", rows),
                                            key=lambda w: w[1])]


# the bill: latency measured by ragate around the system's call (`latency_s`), and what a
# question cost (`cost_of`). With repeats a question's slowest answer is its one unit: the
# 95th percentile of that bounds the 95th percentile of any one answer from above, and the
# questions, unlike one question's answers, are independent draws

_LATENCY_P = re.compile(r"latency_p([1-9][0-9]?)_s")


def latency_quantile(name: str) -> float:
    """q of `latency_pQ_s` (0.95 for latency_p95_s)."""
    match = _LATENCY_P.fullmatch(name)
    return int(match.group(1)) / 100 if match else 0.95


def _latencies(rows: Sequence[QuestionRecord]) -> list[float]:
    """Per question, its slowest measured answer, in first-seen order."""
    slowest: dict[str, float] = {}
    for r in rows:
        if r.status == "scored" and r.latency_s is not None:
            slowest[r.question_id] = max(r.latency_s, slowest.get(r.question_id, 0.0))
    return list(slowest.values())


def _latency_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    """k is the point quantile times n, so `Tally.value` is the point quantile."""
    values = tuple(_latencies(rows))
    from pytest_ragate.scoring.stats import point_quantile  # the registry stays light

    point = point_quantile(values, latency_quantile(name)) if values else 0.0
    return Tally(metric=name, k=point * len(values), n=len(values), values=values,
                 questions=len(values))


def bill_figure(name: str, r: QuestionRecord) -> float | None:
    """A row's own figure of a bill metric: its latency, or its cost (`cost_of`)."""
    return r.latency_s if _LATENCY_P.fullmatch(name) else cost_of(r)


def _latency_worst(name: str, r: QuestionRecord) -> Worst | None:
    if r.latency_s is None:
        return None
    return -r.latency_s, f"{r.question_id} {r.latency_s:.2f} s"


def cost_of(r: QuestionRecord) -> float | None:
    """What answering and judging one question cost in US dollars: the system's reported
    cost plus the judge's where its price is set (`judge_cost`, 0 for cached verdicts);
    None when the system reported no cost, or the judge is priced and some request of it
    reported no tokens: an unknown cost is not a small one."""
    if r.usage is None or r.usage.cost is None:
        return None
    if r.judge_cost is not None and r.judge_tokens is not None and r.judge_tokens.unreported:
        return None
    return r.usage.cost + (r.judge_cost or 0.0)


def _cost_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    values = tuple(c for r in rows if r.status == "scored" and (c := cost_of(r)) is not None)
    return Tally(metric=name, k=sum(values), n=len(values), values=values,
                 questions=len(values))


def _cost_worst(name: str, r: QuestionRecord) -> Worst | None:
    cost = cost_of(r)
    return None if cost is None else (-cost, f"{r.question_id} ${cost:.4f}")


def _bill_measured(name: str, r: QuestionRecord) -> bool:
    return bill_figure(name, r) is not None


def figure_digits(metric: str) -> int:
    """Decimals a metric's figures and floors are shown with: 4 for dollars, else 2."""
    return 4 if metric == "cost_per_question" else 2


def fmt_figure(metric: str, value: float) -> str:
    """A metric's figure as messages show it: `0.62`; `1.84 s`; `$0.0042`."""
    if _LATENCY_P.fullmatch(metric):
        return f"{value:.2f} s"
    if metric == "cost_per_question":
        return f"${value:.4f}"
    return f"{value:.2f}"


def verdict_metric(name: str, *, embeds: bool = False, on_request: bool = False) -> Metric:
    """A judged metric: a judge's verdict in [0, 1] per question, averaged over the verdicts
    obtained, compared with a baseline by paired bootstrap."""
    return Metric(name, "verdict", "mean", "questions", _verdict_tally, _verdict_worst,
                  score=_verdict_score, value=_stored, embeds=embeds, on_request=on_request)


@dataclass(frozen=True)
class Family:
    """Metrics named by a pattern (`evidence_recall@5`), each defined as `metric` under its
    own name; `spelled` writes a member with a given number (`evidence_recall@{}`)."""

    pattern: re.Pattern[str]
    metric: Metric
    spelled: str


class _Metrics(dict[str, Metric]):
    """The metrics by name, in report order, and the families named by a pattern: a member
    (`evidence_recall@5`) is found by name without being listed; the metrics the project
    defines (`custom`, set for a run by scoring/custom.define) are found by name too."""

    def __init__(self, metrics: Iterable[Metric], families: Iterable[Family]) -> None:
        super().__init__((m.name, m) for m in metrics)
        self.families = tuple(families)
        self.custom: dict[str, Metric] = {}
        # the rubrics the goldsets loaded in this process declare (scoring/rubrics.declare)
        self.rubrics: dict[str, Metric] = {}

    def builtin_names(self) -> list[str]:
        """The built-in metrics' names (a family's members are found by `family`)."""
        return list(dict.keys(self))

    def family(self, name: str) -> Metric | None:
        """The definition of the family `name` is a member of, under that name; else None."""
        for family in self.families:
            if family.pattern.fullmatch(name):
                return replace(family.metric, name=name)
        return None

    def __missing__(self, name: str) -> Metric:
        member = self.custom.get(name) or self.rubrics.get(name) or self.family(name)
        if member is None:
            raise KeyError(name)
        return member

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name) or (isinstance(name, str) and (
            name in self.custom or name in self.rubrics or self.family(name) is not None))

    def vocabulary(self) -> list[str]:
        """Every name a floor may give, a family's as its pattern (`evidence_recall@K`), the
        project's own metrics last."""
        return [*self, *(family.metric.name for family in self.families), *self.custom,
                *self.rubrics]

    def close_to(self, name: str) -> list[str]:
        """The metric names a misspelled `name` may have meant (difflib, ratio 0.75 or
        more), a family's written with the number `name` holds (`evidence_recal@10`:
        evidence_recall@10)."""
        number = re.search(r"[0-9]+", name)
        members = [f.spelled.format(number.group()) if number else f.metric.name
                   for f in self.families]
        return difflib.get_close_matches(name, [*self, *dict.fromkeys(members), *self.custom,
                                                *self.rubrics], n=3, cutoff=0.75)


# `evidence_recall@K` (K = 1..9999) is evidence recall over the first K contexts in rank
# order: recall over an unbounded pool rewards returning everything, at a fixed depth not.
# QuestionScores keeps whether each span was found, not its rank: no baseline check.
EVIDENCE_RECALL_AT_K = Metric("evidence_recall@K", "mechanical", "proportion", "spans",
                              _recall_tally, _recall_worst, value=_recall_at_value)

# `mrr@K`, `ndcg@K`, `precision@K` (means of per-question values in [0, 1]) and `hit_rate@K`
# (the share of questions with a relevant context in the first K), over the questions with
# evidence, K = 1..9999; a context is relevant when it finds some expected evidence (the
# rule evidence recall counts by). Like evidence_recall@K: no baseline check
RANK_AT_K = Metric("ndcg@K", "mechanical", "mean", "questions with evidence", _rank_tally,
                   _rank_worst, value=rank_value)
HIT_RATE_AT_K = Metric("hit_rate@K", "mechanical", "proportion", "questions with evidence",
                       _rank_tally, _rank_worst, value=rank_value)

# `pass^k` (all k of k repeats right) and `pass@k` (at least one right), k = 1..99, per
# question from its c right of N repeats, averaged over questions (registry.pass_k)
PASS_K = Metric("pass^k", "repeats", "mean", "questions", _pass_tally, _never)
# the share of questions right in some repeats and wrong in others; an upper-bound floor,
# `flaky_rate = {max = 0.05}`. Like the families, found by name and listed in no run that
# does not name it: a run of one repeat has no such figure, and no question a score of it
FLAKY_RATE = Metric("flaky_rate", "repeats", "proportion", "questions asked twice or more",
                    _flaky_tally, _never)
# `[floors.question] pass_rate = 0.8`: every question right in at least that share of its
# repeats (scoring/pass_rate.py); found by name only, like flaky_rate
QUESTION_PASS_RATE = Metric("question_pass_rate", "repeats", "mean", "questions",
                            _pass_rate_tally, _never)
# the bill (upper-bound floors only, `{max = …}`): `latency_pQ_s` (Q = 1..99; e.g.
# latency_p95_s), seconds, decided on the quantile's 95% upper bound; `cost_per_question`,
# US dollars, a mean. Listed only in a run that names them, like the families
# (no `value`: a question's latency and cost are the reports' own bill columns, not a
# metric column per floor)
LATENCY_P = Metric("latency_pQ_s", "bill", "quantile", "answered questions", _latency_tally,
                   _latency_worst, measured=_bill_measured)
COST_PER_QUESTION = Metric("cost_per_question", "bill", "mean", "answered questions",
                           _cost_tally, _cost_worst, measured=_bill_measured)
# the share of conversations whose every turn is right (issue 37): listed only in a run that
# names it, like the families; no per-question score, and no baseline pairing of its own
CONVERSATION_SUCCESS = Metric("conversation_success", "conversations", "proportion",
                              "conversations", _conversation_tally, _conversation_worst)

METRICS = _Metrics([
    Metric("citation_accuracy", "mechanical", "mean", "cited answers", _citation_tally,
           _citation_worst, score=_citation_score, value=_stored),
    Metric("abstention_accuracy", "mechanical", "proportion", "questions", _abstention_tally,
           _abstention_worst, score=_abstention_score, units=_abstention_units, value=_stored),
    Metric("evidence_recall", "mechanical", "proportion", "spans", _recall_tally, _recall_worst,
           score=_recall_score, units=_recall_units, value=_stored, anchor_floor=True),
    verdict_metric("faithfulness"),
    verdict_metric("context_precision"),
    verdict_metric("answer_relevance", embeds=True),
    # is the answer right: by the expected answer's facts (answer_match.py), by its cosine to
    # the gist, and judged against the gist (RAGAS's answer_correctness, factual_correctness)
    Metric("answer_match", "mechanical", "proportion", "answers with facts", _match_tally,
           _match_worst, score=_answer_score, units=_match_units, value=_stored,
           correctness=True),
    Metric("answer_similarity", "mechanical", "mean", "answers to answerable questions",
           _similarity_tally, _similarity_worst, score=_answer_score, value=_stored,
           correctness=True),
    verdict_metric("answer_correctness", on_request=True),
    verdict_metric("factual_correctness", on_request=True),
    # its figure is the reports' judge line, not a question column
    Metric("judge_coverage", "judge", "proportion", "verdicts", _coverage_tally,
           _coverage_worst, units=_coverage_units),
    # the judge against the goldset's labels: decided by scoring/agreement.py, not a tally
    Metric("judge_agreement", "agreement", "mean", "labelled questions", _no_questions,
           _never),
    Metric("hold_rate", "anchors", "proportion", "anchors", _no_questions, _never,
           anchor_floor=True),
], families=[
    Family(_AT_K, EVIDENCE_RECALL_AT_K, "evidence_recall@{}"),
    *(Family(re.compile(rf"{m}@[1-9][0-9]{{0,3}}"), replace(RANK_AT_K, name=f"{m}@K"), m + "@{}")
      for m in ("mrr", "ndcg", "precision")),
    Family(re.compile(r"hit_rate@[1-9][0-9]{0,3}"), HIT_RATE_AT_K, "hit_rate@{}"),
    Family(re.compile(r"pass\^[1-9][0-9]?"), PASS_K, "pass^{}"),
    Family(re.compile(r"pass@[1-9][0-9]?"), replace(PASS_K, name="pass@k"), "pass@{}"),
    Family(re.compile("flaky_rate"), FLAKY_RATE, "flaky_rate"),
    Family(re.compile("question_pass_rate"), QUESTION_PASS_RATE, "question_pass_rate"),
    Family(re.compile("conversation_success"), CONVERSATION_SUCCESS, "conversation_success"),
    Family(_LATENCY_P, LATENCY_P, "latency_p{}_s"),
    Family(re.compile("cost_per_question"), COST_PER_QUESTION, "cost_per_question")])


# --- which metrics -------------------------------------------------------------------------------


def asked_metrics() -> tuple[str, ...]:
    """What a judge is asked for, question by question, unless it names its own `metrics`
    (the metrics asked on request are added where a goldset asks for them)."""
    return tuple(m.name for m in METRICS.values() if m.asked and not m.on_request)


def verdict_metrics() -> tuple[str, ...]:
    """Every metric a judge may be asked for: those asked by default and on request, and
    the rubrics the goldsets loaded in this process declare."""
    return (*(m.name for m in METRICS.values() if m.asked), *METRICS.rubrics)


def requested_metrics(named: Iterable[str]) -> tuple[str, ...]:
    """The metrics asked on request among `named` (a goldset's floors and `[answers]
    judged`), in report order."""
    wanted = set(named)
    return tuple(m.name for m in METRICS.values() if m.on_request and m.name in wanted)


def verdicts_needed(gated: Iterable[str], labelled: Iterable[str] = ()) -> tuple[str, ...]:
    """What a goldset's judge is asked for: every verdict metric, but one that needs an
    embedding model (answer relevance) only where it is needed, so a judged run loads no
    model for a figure nobody reads: where the goldset's floors (any kind or slice) gate it
    or its labels label it, or where they gate and label no verdict metric at all (a run
    given a judge and no judged floor asks to see every judged figure)."""
    wanted = {m for m in (*gated, *labelled) if m in METRICS and METRICS[m].asked}
    return tuple(m for m in asked_metrics()
                 if not METRICS[m].embeds or not wanted or m in wanted)


def mechanical_scores(scores: QuestionScores) -> dict[str, float | None]:
    """One answer's mechanical metrics scored from its pool and citations, as its row stores
    them (the correctness metrics are scored against the expected answer, answer_match.py)."""
    return {m.name: m.score(m.name, scores) for m in METRICS.values()
            if m.source == "mechanical" and m.score is not None and not m.correctness}


def anchor_floor_metrics() -> tuple[str, ...]:
    """The metrics an anchor population floor may name."""
    return tuple(m.name for m in METRICS.values() if m.anchor_floor)


def run_metrics(asked: Collection[str], named: Iterable[str] = ()) -> list[str]:
    """The metrics a run has, in report order: every mechanical one (a correctness one only
    when some question was scored on it); a verdict metric when some question asked the
    judge for it; the metrics about the judge (judge_coverage) when any question asked it
    for anything; then the family members among `named` (the metrics of the run's floors:
    evidence_recall@K exists only where a floor names its K), and the metrics the project
    defines last. `asked`: the verdict and the correctness metrics the run's questions have."""
    verdicts = set(verdict_metrics())

    def has(m: Metric) -> bool:
        if m.source == "verdict" or m.correctness:
            return m.name in asked
        if m.source == "judge":
            return bool(verdicts & set(asked))
        return m.source == "mechanical"

    members = sorted({n for n in named if METRICS.family(n) is not None})
    rubrics = [name for name in METRICS.rubrics if name in asked]
    return ([m.name for m in METRICS.values() if has(m)] + members + list(METRICS.custom)
            + rubrics)
