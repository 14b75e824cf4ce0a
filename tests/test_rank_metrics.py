"""The rank metrics (issue 48 item 3): `mrr@K`, `ndcg@K`, `hit_rate@K` and `precision@K`,
checked against ranx on seeded random rankings (the measures themselves, binary and graded,
and ragate's reading of a question's contexts against its evidence), and the ways a ranked
list could score more than it earns."""

from __future__ import annotations

import random
import warnings

import pytest
import ranx

from pytest_ragate import Answer, Context
from pytest_ragate.decision.floors import decide
from pytest_ragate.scoring import ranking
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import (
    ContextRef,
    EvidenceIndex,
    QuestionRecord,
    Span,
    WholeDocument,
    score_answer,
    tally,
)
from pytest_ragate.scoring.registry import METRICS, rank_value, run_metrics

DEPTHS = (1, 3, 5, 10)
MEASURES = ("mrr", "ndcg", "hit_rate", "precision")
RANKINGS = 1200


def ranx_scores(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
                ) -> dict[str, list[float]]:
    """ranx's per-query score of each measure at each depth, in the queries' order."""
    names = [f"{m}@{k}" for m in MEASURES for k in DEPTHS]
    with warnings.catch_warnings():  # numba's own type-safety notes, not ours to fix
        warnings.simplefilter("ignore")
        found = ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run), names,
                              return_mean=False)
    return {name: [float(v) for v in found[name]] for name in names}


def random_ranking(rng: random.Random) -> tuple[dict[str, int], list[str]]:
    """Graded judgments (1..4) of some of 20 documents, and a ranking of some of them."""
    docs = [f"d{i:02d}" for i in range(20)]
    judged = {d: rng.randint(1, 4) for d in rng.sample(docs, rng.randint(1, 8))}
    return judged, rng.sample(docs, rng.randint(1, 15))


def test_the_measures_agree_with_ranx_on_random_rankings() -> None:
    """Binary (every judged document gain 1) and graded (gain = grade / 4: nDCG is the same
    whatever the gains' scale, and ranx takes whole grades only)."""
    rng = random.Random(48)
    rankings = [random_ranking(rng) for _ in range(RANKINGS)]
    for graded in (False, True):
        qrels = {f"q{i:05d}": {d: g if graded else 1 for d, g in judged.items()}
                 for i, (judged, _) in enumerate(rankings)}
        run = {f"q{i:05d}": {d: float(len(ranked) - r) for r, d in enumerate(ranked)}
               for i, (_, ranked) in enumerate(rankings)}
        theirs = ranx_scores(qrels, run)
        for i, (judged, ranked) in enumerate(rankings):
            rels = qrels[f"q{i:05d}"]
            gains = [rels.get(d, 0) / 4 for d in ranked]
            ideal = [g / 4 for g in rels.values()]
            for k in DEPTHS:
                ours = {"mrr": ranking.reciprocal_rank(gains, k), "hit_rate": ranking.hit(gains, k),
                        "precision": ranking.precision(gains, k),
                        "ndcg": ranking.ndcg(gains, ideal, k)}
                for measure, value in ours.items():
                    assert value == pytest.approx(theirs[f"{measure}@{k}"][i], abs=1e-9), (
                        measure, k, graded, judged, ranked)


def test_ragates_reading_of_a_pool_agrees_with_ranx() -> None:
    """Random pools against random evidence spans, each relevant context exactly one span
    (gain 1) retrieved once: ranx over qrels of the spans gives every question's value."""
    rng = random.Random(4848)
    qrels, run, rows = {}, {}, []
    for i in range(RANKINGS):
        spans = [Span("m1", 4 * s, 4 * s + 1) for s in rng.sample(range(25), rng.randint(1, 6))]
        pool = rng.sample(range(len(spans) + 12), rng.randint(1, len(spans) + 8))
        contexts = [Context(context_id=f"c{p}", doc_id="m1", first_unit=spans[p].first_unit,
                            last_unit=spans[p].last_unit) if p < len(spans) else
                    Context(context_id=f"c{p}", doc_id="m2", first_unit=p, last_unit=p)
                    for p in pool]
        qrels[f"q{i:05d}"] = {f"c{s}": 1 for s in range(len(spans))}
        run[f"q{i:05d}"] = {c.context_id: float(len(pool) - r) for r, c in enumerate(contexts)}
        rows.append(row(f"q{i:05d}", contexts, spans))
    theirs = ranx_scores(qrels, run)
    for name, values in theirs.items():
        assert [rank_value(name, r) for r in rows] == pytest.approx(values, abs=1e-9), name


def row(qid: str, contexts: list[Context], evidence: list, status: str = "scored",
        ) -> QuestionRecord:
    """A question's row as the scorer writes it."""
    fields = score_answer(Answer(text="x", contexts=contexts), evidence)
    return QuestionRecord(goldset="g", question_id=qid, kind="single_doc", index=0,
                          eval_version="1", status=status, **fields)  # type: ignore[arg-type]


def ctx(cid: str, first: int, last: int, doc: str = "m1") -> Context:
    return Context(context_id=cid, doc_id=doc, first_unit=first, last_unit=last)


def test_a_contexts_gain_is_the_share_of_it_that_is_evidence() -> None:
    """Spans 2-5 and 4-7 of m1: units 0-3 are half evidence, 4-9 two thirds (counted once
    where spans overlap), another document's context none; a whole document or an expected
    context is all evidence. Trailing 0s are not kept."""
    index = EvidenceIndex([Span("m1", 2, 5), Span("m1", 4, 7), WholeDocument("m3"),
                           ContextRef("r9", "m4")])
    pool = [ctx("a", 0, 3), ctx("b", 4, 9), ctx("c", 0, 1), ctx("d", 0, 50, "m3"),
            ctx("r9", 0, 3, "m4"), ctx("r8", 0, 3, "m4"), ctx("e", 2, 2, "m2")]
    assert index.ranks_and_gains(pool)[1] == [0.5, pytest.approx(4 / 6), 0.0, 1.0, 1.0]
    assert index.ranks_and_gains([ctx("e", 2, 2, "m2")])[1] == []


def test_ndcg_never_rewards_padding_or_partial_contexts() -> None:
    """The ways a pool could score more than it earns: the evidence cut into pieces after an
    irrelevant first context (the ideal grows with the pieces: not 1), one context that is
    mostly other text (its share, not 1), a long list of the same span (nDCG <= 1)."""
    span = [Span("m1", 10, 19)]
    pieces = [ctx("x", 0, 0, "m2")] + [ctx(f"p{u}", u, u) for u in range(10, 14)]
    assert rank_value("ndcg@5", row("q", pieces, span)) == pytest.approx(
        ranking.dcg([0, 1, 1, 1, 1], 5) / ranking.dcg([1, 1, 1, 1], 5))
    big = row("q", [ctx("big", 0, 39)], span)
    assert rank_value("ndcg@5", big) == 0.25
    assert METRICS["ndcg@5"].worst("ndcg@5", big) == (
        0.25, "q ndcg@5 0.25: 1 of the first 5 contexts relevant, the first at rank 1")
    same = [ctx(f"s{i}", 10, 19) for i in range(8)]
    assert rank_value("ndcg@3", row("q", same, span)) == 1.0
    assert rank_value("precision@10", row("q", same, span)) == 0.8  # 8 of the first 10 places
    rng = random.Random(7)
    for _ in range(300):
        gains = [rng.choice((0, 0, 0.25, 0.5, 1.0)) for _ in range(rng.randint(0, 12))]
        ideal = ranking.ideal_gains(gains, rng.randint(1, 5))
        assert 0 <= ranking.ndcg(gains, ideal, rng.choice(DEPTHS)) <= 1 + 1e-12


def test_unanswerable_is_not_applicable_and_an_error_counts_zero() -> None:
    """A question without evidence has no value (as evidence recall); an errored one with
    evidence has 0 on every measure, and counts in n."""
    ok = row("ok", [ctx("x", 0, 0, "m2"), ctx("r", 2, 3)], [Span("m1", 2, 3)])
    none = row("none", [ctx("r", 2, 3)], [])
    err = QuestionRecord(goldset="g", question_id="err", kind="single_doc", index=1,
                         eval_version="1", status="error", error="boom", must_abstain=False,
                         evidence_spans=1)
    assert [rank_value("mrr@5", r) for r in (ok, none, err)] == [0.5, None, 0.0]
    hits = tally("hit_rate@1", [ok, none, err])
    assert (hits.k, hits.n, hits.values) == (0, 2, ())
    mrr = tally("mrr@5", [ok, none, err])
    assert (mrr.n, mrr.values) == (2, (0.5, 0.0))
    verdict = decide(Floor("mrr@5", 0.9), "g", [ok, none, err])
    assert verdict.outcome == "failed" and "ok mrr@5 0.50: first relevant context at rank 2" \
        in verdict.message


def test_the_four_are_families_like_evidence_recall_at_k() -> None:
    """Found by name at any K 1..9999, listed only in runs that name them, means with the
    betting interval except hit_rate (a proportion, Wilson), no baseline pairing; a typo
    names the member meant."""
    for measure in MEASURES:
        info = METRICS[f"{measure}@5"]
        assert (info.name, info.source, info.regression) == (f"{measure}@5", "mechanical", None)
        assert info.aggregate == ("proportion" if measure == "hit_rate" else "mean")
        assert f"{measure}@0" not in METRICS and f"{measure}@K" in METRICS.vocabulary()
    assert run_metrics(set(), ["ndcg@10", "mrr@3"])[-2:] == ["mrr@3", "ndcg@10"]
    assert METRICS.close_to("hitrate@5") == ["hit_rate@5"]
