"""`ragate calibrate`: replaying max_distance over recorded rows, without another run."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.scoring.calibrate import best, recall_at, replay, sweep
from pytest_ragate.scoring.records import QuestionRecord
from tests.conftest import saved_results


def row(qid: str, distance: float, must_abstain: bool, *, abstained: bool = False,
        correct: int = 1, cited: int = 1, ranks: tuple[int | None, ...] = (1,),
        recorded: float = 2.0) -> QuestionRecord:
    return QuestionRecord(
        goldset="g", question_id=qid, kind="unanswerable" if must_abstain else "single_doc",
        index=0, eval_version="1", must_abstain=must_abstain, abstained=abstained,
        abstention_correct=abstained == must_abstain, citations=0 if abstained else cited,
        citations_correct=0 if abstained else correct, nearest_distance=distance,
        evidence_spans=0 if must_abstain else len(ranks),
        evidence_spans_found=sum(r is not None for r in ranks) if not must_abstain else 0,
        evidence_ranks=[] if must_abstain else list(ranks),
        knobs={"max_distance": recorded, "top_k": 3})


ROWS = [
    row("a1", 0.30, False),                          # close, answered, right
    row("a2", 0.50, False, correct=0, ranks=(3,)),    # answered, cited wrong, span at rank 3
    row("u1", 0.60, True, correct=0),                 # unanswerable, answered (wrongly)
    row("u2", 0.90, True, correct=0, ranks=()),       # unanswerable, far
]


def test_replay_by_hand() -> None:
    # at 0.55 the two far unanswerable rows abstain; the answerable ones still answer
    s = replay(ROWS, 0.55)
    assert (s.abstention_correct, s.n, s.answered) == (4, 4, 2)
    assert (s.citations_correct, s.citations) == (1, 2)
    # at 0.40 a2 abstains too: abstention 3/4, citations 1/1
    s = replay(ROWS, 0.40)
    assert (s.abstention_correct, s.citations_correct, s.citations) == (3, 1, 1)
    # never abstaining: both unanswerable rows answered
    assert replay(ROWS, 2.0).abstention_correct == 2


def test_best_is_the_most_accurate_loosest_cut() -> None:
    chosen = best(sweep(ROWS))
    assert chosen.max_distance == 0.5  # the loosest recorded cut that still gets 4/4
    assert chosen.abstention_accuracy == 1.0


def test_rows_that_abstained_on_distance_are_unknown_above_their_threshold() -> None:
    far = row("a3", 0.80, False, abstained=True, recorded=0.7)
    assert replay([*ROWS, far], 0.85).unknown == 1  # what it would have said is not recorded
    assert replay([*ROWS, far], 0.65).unknown == 0


def test_recall_at_k_from_recorded_ranks() -> None:
    assert recall_at(ROWS) == [(1, 1, 2), (2, 1, 2), (3, 2, 2)]


def test_cli_prints_the_trade_off_and_the_best_setting(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text(saved_results(ROWS))
    out = CliRunner().invoke(main, ["calibrate", str(results), "--step", "0.25"])
    assert out.exit_code == 0, out.output
    assert "g: 4 scored rows, recorded max_distance 2.0" in out.output
    assert "0.500 ← best" in out.output and "1.00 (4/4)" in out.output
    assert "best: max_distance = 0.500" in out.output


def test_cli_refuses_a_file_with_nothing_scored(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(saved_results([]))  # a whole file of a run that scored nothing
    out = CliRunner().invoke(main, ["calibrate", str(empty)])
    assert out.exit_code != 0 and "no scored rows" in out.output
