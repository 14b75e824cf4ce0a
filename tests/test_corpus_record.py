"""The corpus in the record: one digest per document in each results header, history line and
baseline; a run against a baseline or a history whose corpus differs says so, and a failed
regression names the questions whose evidence documents changed."""

from __future__ import annotations

import json

import pytest

from pytest_ragate.decision.regressions import Regression, check_run
from pytest_ragate.scoring.pairing import BaselineRun, CorpusChange, corpus_change
from pytest_ragate.scoring.records import QuestionScores
from tests.test_pins_runs import SYSTEM, goldset

THEN = {"a": "1111", "b": "2222", "c": "3333"}


def test_corpus_change_counts_edited_added_and_removed_documents() -> None:
    assert corpus_change(THEN, {"a": "1111", "b": "9999", "d": "4444"}) == CorpusChange(
        edited=("b",), added=("d",), removed=("c",))
    assert corpus_change(THEN, dict(THEN)) is None
    assert corpus_change(None, THEN) is None  # a baseline written before digests: unknown
    assert corpus_change(THEN, {}) is None


def _scores(right: bool) -> QuestionScores:
    return QuestionScores(evidence_found=[right], abstention_correct=True)


def checks_after_edit(then: dict[str, QuestionScores], now: dict[str, QuestionScores],
                      docs: dict[str, list[str]]) -> dict[str, Regression]:
    """Each metric's check of `now` against a baseline `then` of corpus THEN, its document b
    edited since."""
    base = [BaselineRun(goldset="g", eval_version="1", scores=then, source="the baseline",
                        corpus=THEN)]
    return {c.metric: c for c in check_run("g", "1", now, base, alpha=0.05, min_n=0,
                                           corpus={**THEN, "b": "changed"},
                                           evidence_docs=docs)}


def test_a_failed_check_names_the_worse_questions_whose_evidence_documents_changed() -> None:
    ids = [f"q{i:02d}" for i in range(40)]
    then = {q: _scores(True) for q in ids}
    now = {q: _scores(i >= 12) for i, q in enumerate(ids)}  # 12 questions lost their span
    docs = {q: ["b" if i < 3 else "a"] for i, q in enumerate(ids)}
    checks = checks_after_edit(then, now, docs)
    recall = checks["evidence_recall"]
    assert recall.outcome == "failed"
    assert recall.message.endswith(
        "corpus changed since the baseline: 1 document edited, 0 added, 0 removed; possibly "
        "caused by the corpus, not the system: the evidence documents of q00, q01, q02 "
        "changed")
    held = checks["abstention_accuracy"]
    assert held.outcome == "passed" and held.message.endswith(
        "corpus changed since the baseline: 1 document edited, 0 added, 0 removed")
    base = [BaselineRun(goldset="g", eval_version="1", scores=then, source="the baseline",
                        corpus=THEN)]
    unchanged = check_run("g", "1", now, base, alpha=0.05, min_n=0, corpus=THEN,
                          evidence_docs=docs)
    assert not any("corpus" in c.message for c in unchanged)


def test_runs_record_the_corpus_and_the_next_run_says_it_changed(
        pytester: pytest.Pytester) -> None:
    root = goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM.replace('"refund": ("returns", 3)', '"refund": ("returns", 2)')
                          .replace('"software": ("returns", 4)', '"software": ("returns", 3)'))
    first = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs",
                                         "--ragate-results=base.jsonl",
                                         "--ragate-history=h.jsonl")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()
    header = json.loads((pytester.path / "base.jsonl").read_text().splitlines()[0])[
        "ragate_results"]
    [stamp] = header["goldsets"]
    assert sorted(stamp["corpus"]) == ["returns", "shipping"]
    assert all(len(d) == 16 for d in stamp["corpus"].values())
    [line] = [json.loads(x) for x in (pytester.path / "h.jsonl").read_text().splitlines()]
    assert line["corpus"] == stamp["corpus"]
    (root / "docs" / "shipping.txt").write_text("Orders ship in three days.\n\n"
                                                "Express shipping costs 9 euros.\n")
    (root / "docs" / "care.txt").write_text("Dust the lamp weekly.\n")
    second = pytester.runpytest_inprocess("-p", "no:cacheprovider", "gs",
                                          "--ragate-baseline=base.jsonl",
                                          "--ragate-history=h.jsonl", "--ragate-report=r.md",
                                          "--ragate-results=now.jsonl")
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    note = "corpus changed since the baseline: 1 document edited, 1 added, 0 removed"
    assert f"shop: {note}" in second.stdout.lines
    report = (pytester.path / "r.md").read_text()
    assert note in report
    assert "corpus changed since the previous run: 1 document edited, 1 added, 0 removed" \
        in report
