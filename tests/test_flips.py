"""Flips across runs: the pure counting (`scoring/flips.py`), the history's window
(`outputs/history.py`), and through pytest, runs appended one after another to one history
whose system and retriever change between runs through a file the conftest reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytest_ragate.outputs import history
from pytest_ragate.outputs.history import FloorOutcome, HistoryLine, Observed
from pytest_ragate.scoring import flips
from pytest_ragate.scoring.flips import Flips, Seen, count_all, count_flips
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from tests.conftest import WORKERS, question_rows, write_goldset

# --- the pure counting -------------------------------------------------------------------------


def series(*outcomes: str, digest: str = "d") -> list[Seen | None]:
    return [None if o == "-" else Seen(outcome=o, digest=digest) for o in outcomes]


def test_changes_between_consecutive_runs_are_counted_and_worded() -> None:
    found = count_flips("q07", series("right", "wrong", "right", "wrong"))
    assert found is not None
    assert (found.flips, found.runs) == (3, 4)
    assert str(found) == "q07 flipped 3 of the last 4 runs (right → wrong → right → wrong)"


def test_a_steady_member_has_no_flip_and_stretches_are_shortened() -> None:
    steady = count_flips("q1", series("right", "right", "right"))
    assert steady is not None and steady.flips == 0
    fixed = count_flips("anchor[a3]", series("not held", "not held", "not held", "held"))
    assert fixed is not None
    assert str(fixed) == "anchor[a3] flipped 1 of the last 4 runs (not held ×3 → held)"


def test_runs_without_the_member_and_skips_are_passed_over() -> None:
    found = count_flips("q1", series("right", "-", "skipped", "wrong", "-", "right"))
    assert found is not None
    assert found.outcomes == ("right", "wrong", "right")
    assert found.flips == 2


def test_an_error_is_an_outcome_of_its_own() -> None:
    found = count_flips("q1", series("right", "error", "right"))
    assert found is not None and found.flips == 2


def test_a_member_absent_or_skipped_now_is_not_counted() -> None:
    assert count_flips("q1", series("right", "wrong", "-")) is None
    assert count_flips("q1", series("right", "wrong", "skipped")) is None
    assert count_flips("q1", []) is None


def test_a_changed_definition_restarts_the_count() -> None:
    runs = [Seen(outcome="right", digest="old"), Seen(outcome="wrong", digest="old"),
            Seen(outcome="wrong", digest="new"), Seen(outcome="right", digest="new")]
    found = count_flips("q1", runs)
    assert found is not None
    assert (found.outcomes, found.restarted) == (("wrong", "right"), True)
    assert str(found) == ("q1 flipped 1 of the last 2 runs (wrong → right; counted since its "
                          "definition changed)")
    assert count_flips("q1", [Seen(outcome="right", digest="old"),
                              Seen(outcome="wrong", digest="new")]) == Flips(
        member="q1", outcomes=("wrong",), restarted=True)


def test_unsettled_means_more_than_the_one_change_a_fix_makes() -> None:
    assert not Flips(member="a", outcomes=("not held", "not held", "held")).unsettled
    assert Flips(member="a", outcomes=("held", "not held", "held")).unsettled
    assert Flips(member="a", outcomes=("held", "error", "held")).unsettled
    assert not Flips(member="a", outcomes=("held",)).unsettled


def test_count_all_keeps_the_current_runs_members_in_order() -> None:
    runs = [{"q1": Seen(outcome="right", digest="d"), "gone": Seen(outcome="right", digest="d")},
            {"q2": Seen(outcome="wrong", digest="d"), "q1": Seen(outcome="wrong", digest="d")}]
    assert [(f.member, f.flips) for f in count_all(runs)] == [("q2", 0), ("q1", 1)]
    assert count_all([]) == []


def record(qid: str = "q1", *, status: str = "scored", abstention_correct: bool = True,
           cited: tuple[int, int] = (1, 1), question: str | None = "What about q1?",
           expected: list[str] | None = None) -> QuestionRecord:
    return QuestionRecord(goldset="g", question_id=qid, question=question, kind="k", index=1,
                          status=status, must_abstain=False,
                          abstention_correct=abstention_correct, citations=cited[1],
                          citations_correct=cited[0], evidence_spans=1, expected=expected,
                          eval_version="1")


def test_a_questions_outcome_follows_its_wrong_rule_and_repeats() -> None:
    assert flips.question_outcome([record()]) == "right"
    assert flips.question_outcome([record(cited=(0, 1))]) == "wrong"
    assert flips.question_outcome([record(status="error", abstention_correct=False)]) == "error"
    assert flips.question_outcome([record(status="skipped")]) == "skipped"
    repeated = [record(), record(cited=(0, 1)), record(status="error"), record(status="skipped")]
    assert flips.question_outcome(repeated) == "right 1 of 3"
    assert flips.question_outcome([record(status="error"), record(status="error")]) == "error"


def test_a_questions_digest_covers_what_the_row_carries() -> None:
    base = flips.question_digest(record(expected=["m1 turns 2-3"]))
    assert base == flips.question_digest(record(expected=["m1 turns 2-3"], cited=(0, 1)))
    assert base != flips.question_digest(record(expected=["m1 turns 2-4"]))
    assert base != flips.question_digest(record(expected=["m1 turns 2-3"], question="Now?"))
    sealed = flips.question_digest(record(expected=None))  # a sealed row: what it has
    assert sealed != flips.question_digest(record(expected=None, question="Now?"))


def test_an_anchors_outcome() -> None:
    def anchor(outcome: str, error: str | None = None) -> AnchorOutcome:
        return AnchorOutcome.model_validate({
            "goldset": "g", "anchor_id": "a", "kind": "retrieval_miss", "claim": "c",
            "path": "x", "line": 1, "outcome": outcome, "error": error})

    assert [flips.anchor_outcome(anchor(o)) for o in ("passed", "xpassed", "failed",
                                                      "xfailed")] == [
        "held", "held", "not held", "not held"]
    assert flips.anchor_outcome(anchor("failed", "RuntimeError: down")) == "error"
    assert flips.anchor_outcome(anchor("skipped", "no key")) == "skipped"


# --- the window over the history ---------------------------------------------------------------

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def hline(day: int, q1: str | None, *, version: str = "1", anchor: str | None = None,
          floor: str | None = None) -> HistoryLine:
    """A line whose q1 had this outcome (q2 is always right); None: an older line."""
    outcomes = None if q1 is None else {"q1": Observed(outcome=q1, digest="d1"),
                                        "q2": Observed(outcome="right", digest="d2")}
    return HistoryLine(
        time=T0.replace(day=day), goldset="g", eval_version=version, outcomes=outcomes,
        anchors={"a1": Observed(outcome=anchor, digest="a")} if anchor else None,
        floors={"citation_accuracy": FloorOutcome(min=0.9, outcome=floor)} if floor else {})


def test_the_window_counts_this_run_and_the_runs_before_it() -> None:
    past = [hline(d, o) for d, o in enumerate(["wrong", "right", "wrong", "right", "wrong"], 1)]
    now = hline(9, "right")
    wide = history.flip_report(now, past, window=8)
    assert wide.lines()[1:] == ["q1 flipped 5 of the last 6 runs (wrong → right → wrong → "
                                "right → wrong → right)"]
    narrow = history.flip_report(now, past, window=3)
    assert narrow.lines() == [
        "flips over the last 3 runs of eval_version 1 (window 3, history since "
        "2026-03-04T12:00:00Z)",
        "q1 flipped 2 of the last 3 runs (right → wrong → right)"]


def test_other_eval_versions_and_goldsets_are_not_in_the_window() -> None:
    past = [hline(1, "wrong", version="0"), hline(2, "right"),
            hline(3, "wrong").model_copy(update={"goldset": "other"})]
    report = history.flip_report(hline(4, "right"), past, window=8)
    assert report.lines()[1:] == ["no question, anchor or floor changed outcome"]


def test_older_lines_without_outcomes_are_read_and_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    old = hline(1, None).model_dump(mode="json", exclude={"outcomes", "anchors"})
    path.write_text(json.dumps({**old, "a_field_of_the_future": 1}) + "\n")
    lines, problems = history.scan(path)
    assert problems == [] and lines[0].outcomes is None
    first = history.flip_report(hline(2, "right"), lines, window=8)
    assert first.lines() == ["flips not counted yet: the 1 earlier run of eval_version 1 "
                             "recorded no per-question outcomes; counting starts with this run"]
    later = history.flip_report(hline(3, "wrong"), [*lines, hline(2, "right")], window=8)
    assert later.lines() == [
        "flips over the last 2 runs of eval_version 1 (window 8, history since "
        "2026-03-02T12:00:00Z; 1 older run recorded no outcomes and are not counted)",
        "q1 flipped 1 of the last 2 runs (right → wrong)"]


def test_a_run_where_no_question_scored_says_nothing_of_its_questions() -> None:
    crashed = hline(2, "error").model_copy(update={"outcomes": {
        "q1": Observed(outcome="error", digest="d1"),
        "q2": Observed(outcome="error", digest="d2")}})
    report = history.flip_report(hline(3, "right", anchor="held"),
                                 [hline(1, "right", anchor="held"),
                                  crashed.model_copy(update={"anchors": {
                                      "a1": Observed(outcome="not held", digest="a")}})],
                                 window=8)
    assert [str(f) for f in report.flipped] == [
        "anchor[a1] flipped 2 of the last 3 runs (held → not held → held)"]


def test_floors_flip_too_and_a_new_minimum_restarts_them() -> None:
    past = [hline(1, "right", floor="xpassed"), hline(2, "right", floor="xfailed")]
    now = hline(3, "right", floor="xpassed")
    assert [str(f) for f in history.flip_report(now, past).flipped] == [
        "floor[citation_accuracy] flipped 2 of the last 3 runs (held → not held → held)"]
    moved = now.model_copy(update={"floors": {"citation_accuracy": FloorOutcome(
        min=0.8, outcome="xpassed")}})
    assert history.flip_report(moved, past).flipped == []


# --- through pytest ----------------------------------------------------------------------------

CONFTEST = '''
import json
import pathlib

import pytest
from pytest_ragate import Answer, Citation, Context

STATE = pathlib.Path(__file__).parent / "state.json"
RIGHT = {"q1": ("m1", 2, 3), "q2": ("m2", 5, 5), "q3": ("m1", 0, 0)}


def state():
    return json.loads(STATE.read_text()) if STATE.exists() else {}


@pytest.fixture
def ragate_system():
    wrong = set(state().get("wrong", []))

    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid not in RIGHT:
            return Answer.abstain()
        doc, first, last = ("m3", 0, 0) if qid in wrong else RIGHT[qid]
        ctx = Context(context_id="c0", doc_id=doc, first_unit=first, last_unit=last,
                      text="...", distance=0.25)
        return Answer(text="an answer", contexts=[ctx], citations=[Citation(context_id="c0")])
    return answer


@pytest.fixture
def ragate_retriever():
    missed = state().get("missed", [])

    def retrieve(claim):
        if any(word in claim for word in missed):
            return []
        return [Context(context_id="c0", doc_id="m1", first_unit=2, last_unit=3, text="...",
                        distance=0.2)]
    return retrieve
'''

ANCHORS = [{"anchor_id": "fixed", "kind": "retrieval_miss", "claim": "the budget was agreed",
            "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 2},
            "xfail": "retrieval misses, see #232"}]
FLOORS = """\
[floors]
citation_accuracy = { min = 0.90, xfail = "known miss" }
"""
FLIPPED = {"wrong": ["q1"], "missed": ["agreed"]}  # q1 wrong, the anchor and floor miss


@pytest.fixture
def flipping(pytester: pytest.Pytester) -> pytest.Pytester:
    write_goldset(pytester.path / "gs", anchors=ANCHORS, floors=FLOORS)
    pytester.makeconftest(CONFTEST)
    return pytester


def run_flipping(pytester: pytest.Pytester, workers: str, state: dict[str, list[str]],
                 *args: str, subprocess: bool = False) -> pytest.RunResult:
    """One run appended to the history; in a subprocess when it draws (numpy loads once per
    process)."""
    (pytester.path / "state.json").write_text(json.dumps(state))
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return runner("-p", "no:cacheprovider", "-n", workers, "gs", "--ragate-history",
                  "history.jsonl", "--ragate-report", "r.md", *args)


def report(pytester: pytest.Pytester) -> str:
    return (pytester.path / "r.md").read_text()


@WORKERS
def test_flips_are_reported_and_block_promotion_until_forced(flipping: pytest.Pytester,
                                                              workers: str) -> None:
    anchors = flipping.path / "gs" / "anchors.jsonl"
    toml = flipping.path / "gs" / "ragate.toml"
    before = (anchors.read_bytes(), toml.read_bytes())
    assert run_flipping(flipping, workers, {}).ret == 1  # strict XPASS of the anchor and the floor
    assert "Flips across runs" not in report(flipping)  # a first run says nothing
    assert run_flipping(flipping, workers, FLIPPED).ret == 0
    assert "q1 flipped 1 of the last 2 runs (right → wrong)" in report(flipping)

    third = run_flipping(flipping, workers, {}, "--ragate-promote", "--ragate-html", "r.html",
                         subprocess=True)
    third.stdout.fnmatch_lines([
        "*ragate promote*",
        "ragate: nothing promoted (each xfail that passed was refused, below)",
        "mini::anchor[[]fixed] not promoted: flipped 2 of the last 3 runs (held → not held → "
        "held); pass --ragate-promote-flipped to promote anyway",
        "mini::floor[[]citation_accuracy] not promoted: flipped 2 of the last 3 runs (held → "
        "not held → held); pass --ragate-promote-flipped to promote anyway",
    ])
    third.stdout.fnmatch_lines(["mini: q1 flipped 2 of the last 3 runs (right → wrong → right)"])
    assert third.ret == 1  # the strict XPASSes still fail, as before promotion
    assert (anchors.read_bytes(), toml.read_bytes()) == before  # byte for byte
    text = report(flipping)
    assert "### Flips across runs" in text
    for line in ("- q1 flipped 2 of the last 3 runs (right → wrong → right)",
                 "- anchor[fixed] flipped 2 of the last 3 runs (held → not held → held)",
                 "- floor[citation_accuracy] flipped 2 of the last 3 runs (held → not held → "
                 "held)"):
        assert line in text
    assert "q2 flipped" not in text
    html = (flipping.path / "r.html").read_text()
    assert "q1 flipped 2 of the last 3 runs (right → wrong → right)" in html

    forced = run_flipping(flipping, workers, {}, "--ragate-promote-flipped")
    forced.stdout.fnmatch_lines([
        "ragate: promoted 2 strict xfails to hard assertions:",
        "promoted anyway (--ragate-promote-flipped): mini::anchor[[]fixed]: flipped 2 of the "
        "last 4 runs (held → not held → held ×2)",
    ])
    assert "xfail" not in anchors.read_text()
    assert "citation_accuracy = 0.90" in toml.read_text()


# The controller counts flips from the history alone: the test above holds them under -n 0
# and -n 2 (the outcomes travelling from workers); those below vary what is counted, at -n 0.

def test_a_question_whose_text_changed_is_not_called_flipped(flipping: pytest.Pytester) -> None:
    run_flipping(flipping, "0", {})
    rows = question_rows()
    rows[0]["question"] = "And now, what about q1?"  # same id, another question
    (flipping.path / "gs" / "questions.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows))
    run_flipping(flipping, "0", {"wrong": ["q1", "q2"]})
    text = report(flipping)
    assert "- q2 flipped 1 of the last 2 runs (right → wrong)" in text
    assert "q1 flipped" not in text


def test_the_window_is_honoured(flipping: pytest.Pytester) -> None:
    run_flipping(flipping, "0", {})
    run_flipping(flipping, "0", FLIPPED)
    result = run_flipping(flipping, "0", {}, "--ragate-promote", "-o", "ragate_flip_window=2")
    result.stdout.fnmatch_lines(["ragate: promoted 2 strict xfails to hard assertions:"])
    assert "- anchor[fixed] flipped 1 of the last 2 runs (not held → held)" in report(flipping)
    assert "xfail" not in (flipping.path / "gs" / "anchors.jsonl").read_text()


def test_a_run_cut_short_still_checks_flips_before_promoting(
        flipping: pytest.Pytester) -> None:
    """-x keeps the run out of the history (here the floor's XPASS reaches it, reported on
    the controller); it must not keep its promotion from the check."""
    run_flipping(flipping, "0", {})
    run_flipping(flipping, "0", FLIPPED)
    toml = flipping.path / "gs" / "ragate.toml"
    before = toml.read_bytes()
    result = run_flipping(flipping, "0", {"missed": ["agreed"]}, "-x", "--ragate-promote")
    result.stdout.fnmatch_lines([
        "mini::floor[[]citation_accuracy] not promoted: flipped 2 of the last 3 runs (held → "
        "not held → held)*",
        "*history not written: the run was cut short*"])
    assert toml.read_bytes() == before
    assert len((flipping.path / "history.jsonl").read_text().splitlines()) == 2


def test_the_window_is_an_ini_option_and_checked(flipping: pytest.Pytester) -> None:
    flipping.makeini("[pytest]\nragate_flip_window = 1\n")
    result = run_flipping(flipping, "0", {})
    result.stderr.fnmatch_lines(["*ragate_flip_window: Input should be greater than or equal "
                                 "to 2*"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_older_history_lines_are_read_and_not_counted(flipping: pytest.Pytester) -> None:
    run_flipping(flipping, "0", {})
    path = flipping.path / "history.jsonl"
    old = json.loads(path.read_text())
    for field in ("outcomes", "anchors"):
        del old[field]  # as a line written before flips were kept
    path.write_text(json.dumps(old) + "\n")
    result = run_flipping(flipping, "0", FLIPPED, "-W",  # not PytestAssertRewriteWarning's kin
                          "error::pytest_ragate.outputs.history.HistoryWarning")
    assert result.ret == 0
    assert ("flips not counted yet: the 1 earlier run of eval_version 7 recorded no "
            "per-question outcomes; counting starts with this run") in report(flipping)
    run_flipping(flipping, "0", {})
    assert "- q1 flipped 1 of the last 2 runs (wrong → right)" in report(flipping)


def test_without_a_history_promotion_says_flips_were_not_checked(
        flipping: pytest.Pytester) -> None:
    (flipping.path / "state.json").write_text("{}")
    result = flipping.runpytest("-p", "no:cacheprovider", "gs", "--ragate-promote")
    result.stdout.fnmatch_lines([
        "ragate: promoted 2 strict xfails to hard assertions:",
        "flips across runs not checked: no --ragate-history*",
    ])


def test_a_history_that_cannot_be_read_promotes_nothing() -> None:
    from pytest_ragate.modes.conclusion import FlipCheck

    unknown = FlipCheck(history=True, flipped=None)
    assert unknown.refusal("gs", "anchor[a]") == ("gs::anchor[a] not promoted: its flips "
                                                  "could not be checked")
    assert FlipCheck(history=False).refusal("gs", "anchor[a]") is None
    steady = FlipCheck(history=True, flipped={("gs", "anchor[a]"): Flips(
        member="anchor[a]", outcomes=("not held", "held"))})
    assert steady.refusal("gs", "anchor[a]") is None
