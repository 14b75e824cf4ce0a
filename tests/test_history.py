"""`--ragate-history`: appended lines, never rewritten, safe under concurrent and killed writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from pytest_ragate.answer import Knob
from pytest_ragate.decision.floors import decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs import history
from pytest_ragate.outputs.history import Figure, HistoryError, HistoryLine, HistoryWarning
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, tally

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
SHA = "0123456789abcdef0123456789abcdef01234567"


def rec(qid: str, kind: str = "single_doc", *, cited: tuple[int, int] = (1, 1),
        abstention_correct: bool = True, spans: tuple[int, int] = (1, 1),
        status: str = "scored", judge: str | None = None, faithfulness: float | None = None,
        knobs: dict[str, Knob] | None = None) -> QuestionRecord:
    metrics: dict[str, float | None] = {}
    if faithfulness is not None:
        metrics["faithfulness"] = faithfulness
    return QuestionRecord.model_validate({
        "goldset": "g", "question_id": qid, "kind": kind, "index": int(qid[1:]),
        "status": status, "must_abstain": kind == "unanswerable",
        "abstention_correct": abstention_correct, "citations": cited[1],
        "citations_correct": cited[0], "evidence_spans": spans[1],
        "evidence_spans_found": spans[0], "metrics": metrics, "judge": judge,
        "eval_version": "1", "knobs": knobs or {"top_k": 5, "chunk_budget": 800},
    })


def line(goldset: str = "g", eval_version: str = "1", *, when: int = 0, sha: str | None = SHA,
         questions: int = 10, judges: list[str] | None = None,
         knobs: dict[str, Knob | list[Knob]] | None = None,
         **figures: tuple[float, int]) -> HistoryLine:
    """A hand-made line; figures are metric=(k, n)."""
    return HistoryLine(
        time=T0.replace(day=1 + when), git_sha=sha, goldset=goldset, eval_version=eval_version,
        judges=judges, knobs=knobs if knobs is not None else {"top_k": 5}, questions=questions,
        metrics={m: Figure(value=k / n if n else None, k=k, n=n) for m, (k, n) in figures.items()})


def quiet_read(path: Path) -> tuple[list[HistoryLine], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lines = history.read_history(path)
    assert all(w.category is HistoryWarning for w in caught)
    return lines, [str(w.message) for w in caught]


# --- the line --------------------------------------------------------------------------------


def test_line_holds_every_metric_per_kind_knobs_and_counts() -> None:
    records = [
        rec("q1", cited=(1, 2), knobs={"top_k": 5, "chunk_budget": 800}),
        rec("q2", cited=(2, 2), spans=(0, 1), knobs={"top_k": 5, "chunk_budget": 600}),
        rec("q3", "unanswerable", cited=(0, 0), spans=(0, 0), abstention_correct=False),
        rec("q4", status="error", cited=(0, 0), abstention_correct=False),
    ]
    run = GoldsetRun(name="g", eval_version="1", records=records)
    run.verdicts.append(decide(Floor("citation_accuracy", 0.9), "g", records))
    got = history.build_line(run, git=SHA, time=T0)

    assert (got.goldset, got.eval_version, got.git_sha, got.judges) == ("g", "1", SHA, None)
    assert (got.questions, got.errors, got.skipped) == (4, 1, 0)
    assert got.knobs == {"chunk_budget": [800, 600], "top_k": 5}
    assert list(got.metrics) == ["citation_accuracy", "abstention_accuracy", "evidence_recall"]
    for metric, figure in got.metrics.items():
        t = tally(metric, records)
        assert (figure.value, figure.k, figure.n) == (t.value, t.k, t.n)
    # one vote per cited answer: q1 1/2 and q2 2/2 → (0.5 + 1.0) / 2
    assert got.metrics["citation_accuracy"].model_dump() == {
        "value": 0.75, "k": 1.5, "n": 2, "failures": 0}
    assert got.by_kind["unanswerable"]["abstention_accuracy"].value == 0.0
    assert got.by_kind["single_doc"]["abstention_accuracy"].model_dump() == {
        "value": 2 / 3, "k": 2, "n": 3, "failures": 0}
    assert got.floors["citation_accuracy"].model_dump() == {"min": 0.9, "outcome": "failed"}
    text = got.model_dump_json()
    assert '"time":"2025-03-01T12:00:00Z"' in text and "\n" not in text
    assert HistoryLine.model_validate_json(text) == got


def test_judged_metrics_and_judge_ids_appear_only_with_a_judge() -> None:
    records = [rec("q1", judge="fixture-v1", faithfulness=1.0),
               rec("q2", judge="fixture-v1", faithfulness=0.5)]
    got = history.build_line(GoldsetRun(name="g", eval_version="1", records=records), git=None,
                             time=T0)
    assert got.judges == ["fixture-v1"] and got.git_sha is None
    assert got.metrics["faithfulness"].model_dump() == {"value": 0.75, "k": 1.5, "n": 2,
                                                       "failures": 0}
    assert got.metrics["judge_coverage"].value == 1.0
    assert "context_precision" not in got.metrics


def test_git_sha_is_none_outside_a_checkout_and_never_raises(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert history.git_sha(tmp_path / "missing") is None

    def fake_run(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 0, stdout=SHA + "\n", stderr="")

    monkeypatch.setattr(history.subprocess, "run", fake_run)
    assert history.git_sha(tmp_path) == SHA

    def slow(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        raise subprocess.TimeoutExpired("git", kwargs["timeout"])

    monkeypatch.setattr(history.subprocess, "run", slow)
    assert history.git_sha(tmp_path) is None

    def not_a_repo(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 128, stdout="", stderr="fatal: not a git")

    monkeypatch.setattr(history.subprocess, "run", not_a_repo)
    assert history.git_sha(tmp_path) is None


# --- appending -------------------------------------------------------------------------------


def test_earlier_lines_stay_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "history.jsonl"
    history.append(path, line(when=0, citation_accuracy=(3, 10)))
    first = path.read_bytes()
    history.append(path, [line(when=1, citation_accuracy=(4, 10)),
                          line("h", when=1, citation_accuracy=(1, 2))])
    second = path.read_bytes()
    history.append(path, line(when=2, citation_accuracy=(5, 10)))
    assert second.startswith(first) and path.read_bytes().startswith(second)
    lines, problems = quiet_read(path)
    assert problems == [] and [ln.goldset for ln in lines] == ["g", "g", "h", "g"]
    assert path.read_bytes().count(b"\n") == 4 and path.read_bytes().endswith(b"\n")


def _writer(path: str, who: int, count: int, start: Any) -> None:
    start.wait(30)
    for i in range(count):
        history.append(Path(path), line(f"w{who}", str(i), knobs={"pad": "x" * 3000}))


@pytest.mark.heavy  # writers racing for seconds
def test_two_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)  # both begin once both have imported
    procs = [ctx.Process(target=_writer, args=(str(path), who, 50, start)) for who in (1, 2)]
    for proc in procs:
        proc.start()
    try:
        for proc in procs:
            proc.join(60)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
    assert [proc.exitcode for proc in procs] == [0, 0]
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and raw.count(b"\n") == 100
    lines, problems = quiet_read(path)
    assert problems == [] and len(lines) == 100
    for who in ("w1", "w2"):  # each writer's lines in its own order
        assert [ln.eval_version for ln in lines if ln.goldset == who] == [
            str(i) for i in range(50)]


KILLED_WRITER = """
import sys
from pathlib import Path
from tests.test_history import line
from pytest_ragate.outputs import history
for i in range(100_000):
    history.append(Path(sys.argv[1]), line("killed", str(i), knobs={"pad": "x" * 6000}))
"""


@pytest.mark.heavy  # a writer in a process of its own
def test_a_writer_killed_mid_run_breaks_no_reader(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history.append(path, line(when=0, citation_accuracy=(1, 2)))
    before = path.read_bytes()
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(path)],
                            cwd=Path(__file__).parent.parent)
    try:
        deadline = time.monotonic() + 30
        while path.read_bytes().count(b"\n") < 20 and time.monotonic() < deadline:
            assert proc.poll() is None, "the writer died on its own"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    history.append(path, line(when=9, citation_accuracy=(2, 2)))

    raw = path.read_bytes()
    assert raw.startswith(before) and raw.endswith(b"\n")
    lines, problems = quiet_read(path)
    # a write cut by SIGKILL (the kernel may stop between pages) leaves at most one bad line,
    # which the reader skips; our next line starts on a line of its own
    assert len(problems) <= 1
    assert len(lines) >= 21 and lines[0].goldset == "g" and lines[-1].goldset == "g"
    assert lines[-1].metrics["citation_accuracy"].value == 1.0
    assert all(ln.goldset == "killed" for ln in lines[1:-1])


def test_truncated_last_line_is_skipped_and_the_next_line_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history.append(path, line(when=0, citation_accuracy=(1, 2)))
    whole = line(when=1, citation_accuracy=(2, 2)).model_dump_json().encode()
    with path.open("ab") as handle:  # another tool, or a crash, left half a line
        handle.write(whole[: len(whole) // 2])
    before = path.read_bytes()

    lines, problems = quiet_read(path)
    assert len(lines) == 1 and len(problems) == 1
    assert f"{path}:2: skipped an unreadable history line (unterminated)" in problems[0]
    assert history.previous(lines, "g", "1") == lines[0]

    history.append(path, line(when=2, citation_accuracy=(0, 2)))
    raw = path.read_bytes()
    assert raw.startswith(before) and raw[len(before):len(before) + 1] == b"\n"
    lines, problems = quiet_read(path)
    assert [ln.metrics["citation_accuracy"].value for ln in lines] == [0.5, 0.0]
    assert len(problems) == 1 and ":2:" in problems[0] and "unterminated" not in problems[0]


def test_garbage_and_blank_lines_are_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = line(citation_accuracy=(1, 2)).model_dump_json().encode()
    path.write_bytes(good + b"\n\n" + b"\xff\xfe not json\n" + b'{"goldset": "g"}\n' + good
                     + b"\n")
    lines, problems = quiet_read(path)
    assert len(lines) == 2 and [p.split(": ")[0] for p in problems] == [
        f"{path}:3", f"{path}:4"]
    assert history.read_history(tmp_path / "none.jsonl") == []


def test_an_interrupted_append_leaves_the_file_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "history.jsonl"
    history.append(path, line(citation_accuracy=(1, 2)))
    before = path.read_bytes()
    real_write = os.write

    def half_then_interrupt(fd: int, data: bytes) -> int:
        real_write(fd, data[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(history.os, "write", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        history.append(path, line(when=1, citation_accuracy=(2, 2)))
    assert path.read_bytes() == before

    def short(fd: int, data: bytes) -> int:
        return real_write(fd, data[:10])

    monkeypatch.setattr(history.os, "write", short)
    with pytest.raises(HistoryError, match="short write"):
        history.append(path, line(when=1, citation_accuracy=(2, 2)))
    assert path.read_bytes() == before


def test_a_held_lock_times_out_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    history.append(path, line(citation_accuracy=(1, 2)))
    before = path.read_bytes()
    with FileLock(history.lock_path(path)), pytest.raises(HistoryError,
                                                        match="nothing appended"):
        history.append(path, line(when=1), timeout=0.05)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.jsonl"]  # no lock beside


# --- comparing -------------------------------------------------------------------------------


def test_previous_is_the_last_run_of_the_same_goldset_and_eval_version(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    runs = [line("g", "1", when=0), line("g", "2", when=1), line("g", "1", when=2),
            line("h", "1", when=3), line("g", "2", when=4), line("g", "3", when=5)]
    history.append(path, runs)
    lines, _ = quiet_read(path)
    for source in (path, lines):
        assert history.previous(source, "g", "1") == runs[2]
        assert history.previous(source, "g", "2") == runs[4]
        assert history.previous(source, "h", "1") == runs[3]
        assert history.previous(source, "g", "9") is None
        assert history.others(source, "g", "1") == [runs[1], runs[4], runs[5]]
        assert history.others(source, "h", "1") == []


def test_previous_passes_over_a_line_that_measured_part_of_its_goldset() -> None:
    """A `-k` run (PARTIAL) or one that ran nothing is no figure to compare the next run with
    (issue 38 case 3, for the deltas the history prints)."""
    whole = line("g", "1", when=0)
    later = [line("g", "1", when=1).model_copy(update={"status": status})
             for status in ("partial", "nothing_ran")]
    assert history.previous([whole, *later], "g", "1") == whole
    assert history.previous(later, "g", "1") is None
    decided = line("g", "1", when=2).model_copy(update={"status": "not_decided"})
    assert history.previous([whole, *later, decided], "g", "1") == decided


def test_delta_lines_against_the_same_eval_version() -> None:
    old = line(when=0, sha="a" * 40, citation_accuracy=(32, 100), abstention_accuracy=(9, 10),
               evidence_recall=(5, 10), faithfulness=(8, 10))
    new = line(when=1, citation_accuracy=(41, 100), abstention_accuracy=(9, 10),
               evidence_recall=(4, 8), context_precision=(6, 10), questions=8,
               judges=["fixture-v1"], knobs={"top_k": 8})
    others = [line(eval_version="0", when=0, sha=None), line(eval_version="0", when=0),
              line(eval_version="2", when=1)]
    assert history.delta_lines(new, old, others) == [
        "against the previous run of eval_version 1: 2025-03-01T12:00:00Z, git aaaaaaaaaaaa",
        "citation_accuracy 0.32 → 0.41 (+0.09)",
        "abstention_accuracy 0.90 → 0.90 (±0.00)",
        "evidence_recall 0.50 → 0.50 (±0.00), n 10 → 8",
        "faithfulness 0.80 → — (not measured now)",
        "context_precision — → 0.60 (new)",
        "questions 10 → 8: another selection, the figures cover different questions",
        "judge none → fixture-v1: judged figures come from another judge",
        "knobs changed: top_k 5 → 8",
        "not comparable (another eval_version): eval_version 2 (1 run, last "
        "2025-03-02T12:00:00Z, git 0123456789ab); eval_version 0 (2 runs, last "
        "2025-03-01T12:00:00Z, git 0123456789ab)",
    ]


def test_delta_lines_first_run_and_drops() -> None:
    new = line(when=1, citation_accuracy=(30, 100))
    assert history.delta_lines(new, None, []) == [
        "first run of eval_version 1 in the history: nothing to compare with"]
    old = line(when=0, sha=None, citation_accuracy=(41, 100))
    assert history.delta_lines(new, old, [line(eval_version="0", sha=None)]) == [
        "against the previous run of eval_version 1: 2025-03-01T12:00:00Z, no git sha",
        "citation_accuracy 0.41 → 0.30 (-0.11)",
        "not comparable (another eval_version): eval_version 0 (1 run, last "
        "2025-03-01T12:00:00Z, no git sha)",
    ]


def test_record_compares_with_the_history_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    first = [GoldsetRun(name="g", eval_version="1", records=[rec("q1", cited=(1, 2))]),
             GoldsetRun(name="h", eval_version="1", records=[rec("q1")])]
    done = history.record(path, first, tmp_path, time=T0)
    assert [ln.goldset for ln in done.lines] == ["g", "h"] and done.problems == []
    assert done.lines[0].git_sha is None  # tmp_path is no git checkout
    assert done.deltas["g"] == [
        "first run of eval_version 1 in the history: nothing to compare with"]

    again = history.record(path, [GoldsetRun(name="g", eval_version="1",
                                             records=[rec("q1", cited=(2, 2))])], tmp_path,
                           time=T0.replace(hour=13))
    assert again.deltas["g"][:2] == [
        "against the previous run of eval_version 1: 2025-03-01T12:00:00Z, no git sha",
        "citation_accuracy 0.50 → 1.00 (+0.50)"]
    assert [ln.time.hour for ln in history.read_history(path)] == [12, 12, 13]


def test_history_through_pytest(pytester: pytest.Pytester) -> None:
    """Two runs append two lines; the second report compares with the first; a new
    eval_version is listed as not comparable."""
    from tests.conftest import BASE_TOML, write_goldset
    from tests.test_plugin import SYSTEM

    write_goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM)
    args = ["-p", "no:cacheprovider", "gs", "--ragate-history=h.jsonl", "--ragate-report=r.md"]
    pytester.runpytest(*args).assert_outcomes(passed=4)
    first = (pytester.path / "h.jsonl").read_bytes()
    pytester.runpytest(*args).assert_outcomes(passed=4)
    second = (pytester.path / "h.jsonl").read_bytes()
    assert second.startswith(first) and second.count(b"\n") == 2
    report = (pytester.path / "r.md").read_text()
    assert "against the previous run of eval_version 7" in report
    assert "citation_accuracy 0.67 → 0.67 (±0.00)" in report
    write_goldset(pytester.path / "gs", toml=BASE_TOML.replace('"7"', '"8"'))
    pytester.runpytest(*args).assert_outcomes(passed=4)
    report = (pytester.path / "r.md").read_text()
    assert "first run of eval_version 8 in the history" in report
    assert "not comparable (another eval_version): eval_version 7 (2 runs" in report


def test_a_baseline_history_line_holding_u2028_is_one_line(tmp_path: Path) -> None:
    """A history line as pydantic writes it, U+2028 raw inside a string, is one baseline
    line (and `PATH:LINE` counts lines as they were written), not two torn halves."""
    from pytest_ragate.outputs.baseline import load_baseline

    line = HistoryLine(time=datetime(2026, 1, 1, tzinfo=UTC), goldset="g", eval_version="1",
                       judges=["fixture:a\u2028b"], status="passed")
    assert "\u2028" in line.model_dump_json()
    path = tmp_path / "h.jsonl"
    path.write_text(line.model_dump_json() + "\n" + line.model_dump_json() + "\n",
                    encoding="utf-8")
    assert [run.judges for run in load_baseline(str(path))] == [("fixture:a\u2028b",)] * 2
    [second] = load_baseline(f"{path}:2")
    assert second.judges == ("fixture:a\u2028b",)
