"""Conversations asked end to end (issue 37 item 2): a system that cites turn 2 right only
when it was given turn 1's answer, in one process and under xdist, which must agree; a
conversation whose system raises part-way; and the deal of a sharded run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.population import Member, Population, deal, population_shards
from pytest_ragate.wording.xdist import GROUPED, splits_conversations
from tests.conftest import run_pytester, write_goldset

CONVERSATIONS = {f"c{i}": 2 for i in range(1, 7)} | {"broken": 3}
SPANS = {1: ("m1", 2, 3), 2: ("m2", 5, 5), 3: ("m3", 4, 5)}

# turn k cites its own evidence only when it was given turns 1..k-1, with the answers this
# run's system gave them; the second turn of `broken` raises, so its third is never asked
SYSTEM = '''
import os
import pytest
from pytest_ragate import Answer, Citation, Context

SPANS = {1: ("m1", 2, 3), 2: ("m2", 5, 5), 3: ("m3", 4, 5)}

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        conversation, turn = text.conversation, text.turn
        if qid == "broken-2":
            raise ZeroDivisionError("the system fell over")
        given = [(e.turn, e.question.split()[-1], e.answer.text) for e in text.history]
        wanted = [(t, f"{conversation}-{t}?", f"answer to {conversation}-{t}")
                  for t in range(1, turn)]
        doc, a, b = SPANS[turn] if given == wanted else ("m1", 10, 11)
        ctx = Context(context_id="x", doc_id=doc, first_unit=a, last_unit=b, text="t",
                      distance=0.1)
        return Answer(text=f"answer to {qid}", contexts=[ctx],
                      citations=[Citation(context_id="x")], knobs={"pid": os.getpid()})
    return answer
'''


def conversation_goldset(root: Path) -> Path:
    questions: list[dict[str, Any]] = []
    expected: list[dict[str, Any]] = []
    for conversation, turns in CONVERSATIONS.items():
        for turn in range(1, turns + 1):
            qid = f"{conversation}-{turn}"
            questions.append({"question_id": qid, "kind": "single_doc",
                              "question": f"And then {qid}?", "conversation": conversation,
                              "turn": turn})
            doc, a, b = SPANS[turn]
            expected.append({"question_id": qid, "gist": f"gist of {qid}", "evidence": [
                {"doc_id": doc, "first_unit": a, "last_unit": b}]})
    return write_goldset(root, questions=questions, expected=expected,
                         floors="[floors]\ncitation_accuracy = 0.5\n")


def each_turn_was_given_the_earlier_turns_answers(result: pytest.RunResult, results: Path,
                                                  workers: str) -> None:
    """What a run of SYSTEM (or a system that answers as it does) over `conversation_goldset`
    says under `-n workers`, its results file `results`: each turn was given the earlier
    turns' answers, one process asked every turn of a conversation, and `broken`'s raising
    turn 2 leaves turn 3 not asked and the floor not decided. Checked on the runs of
    tests/test_conversation_names.py (one per worker count), which this module shares."""
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # broken-2 and broken-3 are gaps
    rows = {r["question_id"]: r for r in map(json.loads, results.read_text().splitlines())
            if "question_id" in r}
    scored = {q: r["metrics"]["citation_accuracy"] for q, r in rows.items()
              if r["status"] == "scored"}
    assert scored == {f"c{i}-{t}": 1.0 for i in range(1, 7) for t in (1, 2)} | {
        "broken-1": 1.0}
    assert rows["broken-2"]["status"] == "error"
    assert "ZeroDivisionError" in rows["broken-2"]["error"]
    assert rows["broken-3"]["error"] == (
        "Failed: broken-3: not asked: turn 2 of conversation 'broken' has no answer (broken-2: "
        + rows["broken-2"]["error"] + "); a turn is asked only after every earlier turn "
        "was answered")
    assert (rows["c3-2"]["conversation"], rows["c3-2"]["turn"]) == ("c3", 2)
    for conversation in CONVERSATIONS:  # one process asked every turn of a conversation
        pids = {r["knobs"]["pid"] for r in rows.values()
                if r["conversation"] == conversation and r["status"] == "scored"}
        assert len(pids) == 1, (conversation, pids)
    result.stdout.fnmatch_lines([
        "FAILED *floor?citation_accuracy? - not decided: 2 of 15 questions have no result: "
        "errored broken-2 (ZeroDivisionError: *); errored broken-3 (*not asked*"])
    grouped = [line for line in result.outlines if line == GROUPED]  # said, under xdist
    assert len(grouped) == (workers == "2")


def test_a_given_dist_that_would_split_a_conversation_is_refused(
        pytester: pytest.Pytester) -> None:
    """ragate never overrides a `--dist` the user gave: one that would deal a conversation's
    turns to several workers is a usage error, in one line, before anything is asked."""
    conversation_goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM)
    result = run_pytester(pytester, "2", "gs", "--dist", "load")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [line for line in result.errlines if line] == [
        f"ERROR: {splits_conversations('load', 'mini')}"]


def test_a_shard_takes_whole_conversations() -> None:
    members = [Member(question_id=f"{c}-{t}", question="?", kind="k", index=i, nodeid=None,
                      sealed=False, must_abstain=False, evidence_spans=1,
                      conversation=c if c != "solo" else None, turn=t if c != "solo" else None)
               for i, (c, t) in enumerate((c, t) for c in ("a", "b", "c", "d", "solo")
                                          for t in (1, 2, 3))]
    population = Population(route="gs/ragate.toml", goldset="g", eval_version="1",
                            questions=members, anchors=[])
    for count in (2, 3):
        shards = population_shards(population, count)
        for c in "abcd":
            assert len({shards[f"{c}-{t}"] for t in (1, 2, 3)}) == 1
        assert set(shards.values()) == set(range(1, count + 1))
    # a goldset without conversations is dealt as before: one unit per question
    plain = population.model_copy(update={"questions": [
        m.model_copy(update={"conversation": None, "turn": None}) for m in members]})
    assert population_shards(plain, 3) == deal(
        "gs/ragate.toml", [m.question_id for m in members], [], 3)




@pytest.mark.parametrize(("workers", "flags"), [
    ("0", ("--ragate-sequential=on", "--ragate-sequential-seed=5")),
    ("2", ("--ragate-shard=1/2",))], ids=["sequential", "shard"])
def test_a_sequential_run_and_a_shard_ask_each_turn_after_the_earlier_ones(
        pytester: pytest.Pytester, workers: str, flags: tuple[str, ...]) -> None:
    """Shuffled (sequential) or split (a shard), every turn that is asked was given the
    earlier turns' answers, and a shard asks whole conversations."""
    conversation_goldset(pytester.path / "gs")
    pytester.makeconftest(SYSTEM)
    run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", *flags)
    rows = [r for r in map(json.loads, (pytester.path / "r.jsonl").read_text().splitlines())
            if "question_id" in r]
    asked = {r["question_id"] for r in rows if r["status"] == "scored"}
    assert asked and all(r["metrics"]["citation_accuracy"] == 1.0 for r in rows
                         if r["status"] == "scored")
    for conversation, turns in CONVERSATIONS.items():
        mine = {t for t in range(1, turns + 1) if f"{conversation}-{t}" in asked}
        # all or none of its turns; only `broken` stops after turn 1 (its turn 2 raises)
        whole = set(range(1, turns + 1)) if conversation != "broken" else {1}
        assert mine in (set(), whole), (conversation, mine)
    if "--ragate-shard=1/2" in flags:
        assert len(asked) < 13  # one shard of two: not every conversation
