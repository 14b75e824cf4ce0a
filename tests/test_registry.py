"""One metric registry: a metric defined once in `registry.METRICS` reaches every consumer.

The toy metrics below are registered for one test each (monkeypatch undoes it) and then
looked for in the scorer, the floors, the goldset parser, the baseline check, the history,
the reports and the judges: a consumer that names metrics itself instead of reading the
registry misses them and fails here.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_ragate import Answer, Citation
from pytest_ragate.decision.floors import decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.regressions import check_run
from pytest_ragate.goldsets.floors_table import parse_floors
from pytest_ragate.judges.runner import judged_metrics
from pytest_ragate.outputs.history import build_line
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pairing import BaselineRun, scored_metrics
from pytest_ragate.scoring.records import (
    QuestionRecord,
    QuestionScores,
    behind,
    score_answer,
    tally,
)
from pytest_ragate.scoring.registry import (
    METRICS,
    Metric,
    Tally,
    mechanical_scores,
    run_metrics,
    verdict_metric,
    verdict_metrics,
)
from pytest_ragate.scoring.stats import MCNEMAR
from tests.test_metrics import EVIDENCE, RIGHT, WRONG_TURNS

# --- a toy mechanical metric: did the answer cite anything at all? ----------------------------


def _cites_tally(name: str, rows: Sequence[QuestionRecord]) -> Tally:
    answered = [r for r in rows if r.abstained is False]
    return Tally(metric=name, k=sum(r.citations > 0 for r in answered), n=len(answered),
                 questions=len(answered))


def _cites_worst(name: str, r: QuestionRecord) -> tuple[float, str] | None:
    return (0.0, f"{r.question_id} cites nothing") if r.abstained is False and not r.citations \
        else None


CITES = Metric("cites_something", "mechanical", "proportion", "answers", _cites_tally,
               _cites_worst, score=lambda name, s: 1.0 if s.citations else 0.0,
               units=lambda name, s: {"": s.citations > 0},
               value=lambda name, r: r.metrics.get(name))


def answered(qid: str, index: int, cite: bool) -> QuestionRecord:
    answer = Answer(text="Twelve euros.", contexts=[RIGHT, WRONG_TURNS],
                    citations=[Citation(context_id="c1")] if cite else [])
    return QuestionRecord(goldset="g", question_id=qid, kind="single_doc", index=index,
                          eval_version="1", **score_answer(answer, EVIDENCE))  # type: ignore[arg-type]


def test_a_registered_mechanical_metric_reaches_every_consumer(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(METRICS, CITES.name, CITES)
    records = [answered("q1", 1, True), answered("q2", 2, False), answered("q3", 3, True)]

    # the scorer stores it, the floors tally it, name its worst question and its unit
    assert records[1].metrics["cites_something"] == 0.0
    assert tally("cites_something", records) == Tally(metric="cites_something", k=2,
                                                         n=3, questions=3)
    assert behind("cites_something", records) == "q2 cites nothing"
    verdict = decide(Floor("cites_something", 0.9), "g", records)
    assert verdict.outcome == "failed"
    assert "n=3 answers" in verdict.message and "worst: q2 cites nothing" in verdict.message
    assert verdict.computed_by == "mechanical"

    # a goldset may gate on it
    assert parse_floors({"cites_something": 0.5}, tmp_path / "ragate.toml") == [
        Floor("cites_something", 0.5)]

    # the baseline pairs its binary units with McNemar
    then = {r.question_id: r.scores() for r in records}
    now = dict(then, q1=records[1].scores())
    checks = {c.metric: c for c in check_run("g", "1", now, [BaselineRun(
        goldset="g", eval_version="1", scores=then, source="b")],
                                             alpha=0.05, min_n=0)}
    assert checks["cites_something"].test == MCNEMAR
    assert "1 right→wrong, 0 wrong→right of 3 answers" in checks["cites_something"].message

    # the history keeps its figure, the report its column and its by-kind line
    run = GoldsetRun(name="g", eval_version="1", records=records)
    line = build_line(run, git=None)
    assert line.metrics["cites_something"].k == 2 and line.metrics["cites_something"].n == 3
    assert "cites_something" in line.by_kind["single_doc"]
    report = markdown([run])
    assert "cites_something (mechanical)" in report
    assert "- cites_something (mechanical): single_doc 2/3" in report


def test_a_registered_verdict_metric_is_asked_for_and_covered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    toy = verdict_metric("groundedness")
    monkeypatch.setitem(METRICS, toy.name, toy)

    class OwnJudge:  # no `metrics` of its own: asked for whatever the registry asks
        judge_id = "own"

    assert judged_metrics(OwnJudge()) == ("faithfulness", "context_precision",
                                          "answer_relevance", "groundedness")

    record = answered("q1", 1, True).model_copy(update={
        "judge": "own", "metrics": {"citation_accuracy": 1.0, "groundedness": None},
        "judge_failures": {"groundedness": "timeout: slow"}})
    assert record.judge_attempted == ["groundedness"]
    coverage = tally("judge_coverage", [record])
    assert (coverage.k, coverage.n, coverage.failures) == (0, 1, 1)
    assert "groundedness" in scored_metrics([record.scores()])
    assert "judge_coverage" in scored_metrics([record.scores()])
    # no judge: not decided (fails), or skipped when the metric is named optional
    assert decide(Floor("groundedness", 0.5), "g", [record]).outcome == "failed"
    assert decide(Floor("groundedness", 0.5), "g", [record],
                  unjudged="skip").outcome == "skipped"


# --- every metric has what its consumers need -----------------------------------------------

PAIRED = {"citation_accuracy": "bootstrap", "abstention_accuracy": "mcnemar",
          "evidence_recall": "mcnemar", "faithfulness": "bootstrap",
          "context_precision": "bootstrap", "answer_relevance": "bootstrap",
          "judge_coverage": "mcnemar", "answer_match": "mcnemar",
          "answer_similarity": "bootstrap", "answer_correctness": "bootstrap",
          "factual_correctness": "bootstrap"}


def test_every_question_metric_can_be_paired_with_a_baseline() -> None:
    everything = run_metrics({*verdict_metrics(), "answer_match", "answer_similarity"})
    # hold_rate is over anchors, judge_agreement over the labels: neither is a question's
    assert everything == [m for m, info in METRICS.items()
                          if info.source not in ("anchors", "agreement")]
    assert [m for m in everything if METRICS[m].regression is None] == []
    assert {m: METRICS[m].regression for m in PAIRED} == PAIRED  # as before the registry


def test_the_scorer_stores_every_mechanical_metric() -> None:
    mechanical = [m for m, info in METRICS.items()
                  if info.source == "mechanical" and not info.correctness]
    assert list(mechanical_scores(QuestionScores())) == mechanical
    stored = score_answer(Answer(text="Twelve euros.", contexts=[RIGHT],
                                 citations=[Citation(context_id="c1")]), EVIDENCE)["metrics"]
    assert list(stored) == mechanical  # type: ignore[arg-type]


def test_evidence_recall_at_k_is_one_family_definition() -> None:
    at_5 = METRICS["evidence_recall@5"]
    assert at_5.name == "evidence_recall@5" and "evidence_recall@5" in METRICS
    assert (at_5.source, at_5.aggregate, at_5.unit) == ("mechanical", "proportion", "spans")
    assert at_5.regression is None  # a baseline keeps whether a span was found, not its rank
    assert "evidence_recall@0" not in METRICS and "evidence_recall@" not in METRICS
    with pytest.raises(KeyError):
        METRICS["recall@5"]
    assert "evidence_recall@5" not in list(METRICS)  # named by floors, never listed
    assert run_metrics(set(), ["evidence_recall@5", "citation_accuracy", "evidence_recall@2"]
                       )[-2:] == ["evidence_recall@2", "evidence_recall@5"]


# --- which metrics a run has: one rule --------------------------------------------------------


def test_history_regression_and_reports_list_a_runs_metrics_by_one_rule() -> None:
    """judge_coverage is a metric of every judged run (history, baseline); the reports show
    it in the judge line rather than as a question column, since no question has a figure
    of it."""
    records = [answered("q1", 1, True).model_copy(update={
        "judge": "j", "metrics": {**answered("q1", 1, True).metrics, "faithfulness": 0.5}}),
        answered("q2", 2, False)]
    run = GoldsetRun(name="g", eval_version="1", records=records)
    run.verdicts.append(decide(Floor("evidence_recall@3", 0.1), "g", records))
    listed = ["citation_accuracy", "abstention_accuracy", "evidence_recall", "faithfulness",
              "judge_coverage"]
    assert list(build_line(run, git=None).metrics) == listed
    assert scored_metrics(r.scores() for r in records) == listed
    assert run.metrics == [m for m in listed if m != "judge_coverage"] + ["evidence_recall@3"]
    unjudged = GoldsetRun(name="g", eval_version="1", records=[answered("q2", 2, False)])
    assert list(build_line(unjudged, git=None).metrics) == listed[:3] == unjudged.metrics


@pytest.mark.heavy  # a fresh interpreter
def test_the_registry_imports_nothing_heavy() -> None:
    """The judges, the RAGAS bridge and the CLI read it: it must not pull pytest, numpy,
    pydantic or ragas in."""
    source = Path(__file__).parents[1] / "pytest_ragate" / "scoring" / "registry.py"
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('registry', {str(source)!r})\n"
            "module = importlib.util.module_from_spec(spec)\n"
            "sys.modules['registry'] = module\n"
            "spec.loader.exec_module(module)\n"
            "assert module.asked_metrics()\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'pytest', 'numpy', 'pydantic', 'ragas', 'pytest_ragate'})\n"
            "print(heavy)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"


def test_answer_relevance_is_asked_only_where_a_figure_needs_it() -> None:
    """Answer relevance is the one verdict that needs an embedding model besides the judge
    (MiniLM, exported to ONNX on a cold machine: 83 s of a 25 s run). It is asked where the
    goldset gates or labels it, or gates no verdict at all (the judged figures are wanted);
    never for a goldset that gates faithfulness alone."""
    from pytest_ragate.scoring.registry import verdicts_needed

    every = ("faithfulness", "context_precision", "answer_relevance")
    assert verdicts_needed([]) == every  # no floors: every judged figure is shown
    assert verdicts_needed(["abstention_accuracy", "judge_coverage"]) == every
    assert verdicts_needed(["faithfulness", "citation_accuracy"]) == every[:2]
    assert verdicts_needed(["context_precision"]) == every[:2]
    assert verdicts_needed(["faithfulness", "answer_relevance"]) == every
    assert verdicts_needed(["faithfulness"], labelled=["answer_relevance"]) == every
    assert [m for m in every if METRICS[m].embeds] == ["answer_relevance"]
