"""Fail closed, `ragate decide`: a results file vouches for its own completeness, and decide
takes from the goldset what the goldset knows.

Each adversary here passed the decided gate before: a shard file cut at a line boundary (an
upload or copy cut short) that lost a wrong answer's failure line; rows whose kind,
abstention or evidence were edited; a shard whose ordinary test failed; shards whose systems
reported different `Answer.knobs`. Each is played through `ragate decide` over shards run
under `-n 0` and under `-n 2`, and a refused decision says nothing was decided (no
"decided from N files").

The project: 12 questions (every third must abstain), `question_outcome = "assert"`, and a
system that cites the wrong turns for q04 only, so every floor holds and the run fails on
q04's item alone: its failure lives in one item line of the shard that asked it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.modes.shard import deal
from pytest_ragate.outputs.results import (
    Header,
    SavedItem,
    SavedTest,
    read_results,
    results_lines,
    write_results,
)
from pytest_ragate.outputs.saved_runs import read_saved_files
from pytest_ragate.scoring.records import QuestionRecord
from tests.conftest import BASE_TOML, junit_cases, run_command, write_goldset
from tests.test_sharding import refused, reseal

pytestmark = pytest.mark.heavy  # shards and decisions run as processes of their own

N = 12
WRONG = "q04"

FLOORS = """\
[floors]
citation_accuracy = 0.50
abstention_accuracy = 0.90
evidence_recall = 0.50

[floors.kind.unanswerable]
abstention_accuracy = 1.0

[floors.anchors.retrieval_miss]
hold_rate = 0.50
"""

SYSTEM = '''
import os
import pytest
from pytest_ragate import Answer, Citation, Context

TOP_K = int(os.environ.get("RAGATE_TEST_TOP_K", "5"))

def ctx(cid, doc, first, last):
    return Context(context_id=cid, doc_id=doc, first_turn=first, last_turn=last,
                   text=f"{doc} turns {first}-{last}", distance=0.2)

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if int(qid[1:]) % 3 == 2:
            return Answer.abstain([ctx("c0", "m2", 0, 1)], top_k=TOP_K)
        cited = ctx("c0", "m1", 8, 9) if qid == "WRONG" else ctx("c0", "m1", 2, 3)
        return Answer(text="the budget", contexts=[cited],
                      citations=[Citation(context_id="c0")], knobs={"top_k": TOP_K})
    return answer

@pytest.fixture
def ragate_retriever():
    return lambda claim: [ctx("c0", "m1", 2, 3)]
'''.replace('"WRONG"', repr(WRONG))

PLAIN_TEST = '''
import os

def test_plain():
    assert os.environ.get("RAGATE_TEST_PLAIN") != "fail", "an ordinary test failed"
'''


def questions() -> list[dict[str, Any]]:
    return [{"question_id": f"q{i:02d}", "question": f"What about q{i:02d}?",
             "kind": "unanswerable" if i % 3 == 2 else "single_meeting"} for i in range(N)]


def expected() -> list[dict[str, Any]]:
    return [{"question_id": f"q{i:02d}", "gist": None if i % 3 == 2 else "the budget",
             "evidence": [] if i % 3 == 2 else [{"doc_id": "m1", "first_turn": 2,
                                                 "last_turn": 3}]} for i in range(N)]


ANCHORS = [{"anchor_id": f"a{i}", "kind": "retrieval_miss", "claim": f"the budget ({i})",
            "evidence": {"doc_id": "m1", "first_turn": 2, "last_turn": 3}} for i in range(4)]


def owner(name: str) -> int:
    """The shard (of 2) that runs this item."""
    return deal("gs/ragate.toml", [f"q{i:02d}" for i in range(N)],
                [f"anchor[{a['anchor_id']}]" for a in ANCHORS], 2)[name]


def make_project(root: Path) -> Path:
    write_goldset(root / "gs", toml='question_outcome = "assert"\n' + BASE_TOML, floors=FLOORS,
                  questions=questions(), expected=expected(), anchors=ANCHORS)
    (root / "conftest.py").write_text(SYSTEM)
    (root / "test_plain.py").write_text(PLAIN_TEST)
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin\n")
    return root


def shard(root: Path, i: int, workers: str, *args: str, **env: str,
          ) -> subprocess.CompletedProcess[str]:
    return run_command(root, ".", "-n", workers, f"--ragate-shard={i}/2",
                       f"--ragate-results=shards/{i}.jsonl", *args, **env)


SHARDS = ["shards/1.jsonl", "shards/2.jsonl"]


def decide(root: Path, *args: str, files: tuple[str, ...] = tuple(SHARDS), out: str = "decided",
           ) -> subprocess.CompletedProcess[str]:
    return run_command(root, "decide", *files, "--", ".", f"--junitxml={out}/junit.xml",
                       f"--ragate-results={out}/results.jsonl", f"--ragate-report={out}/report.md",
                       *args)


def failures(text: str) -> str:
    """The failures section of a run's output: the short summary after it repeats each
    message, cut to the terminal's width, or whole where pytest knows it runs on CI."""
    return text.partition("short test summary info")[0]


def refusal(result: subprocess.CompletedProcess[str], root: Path, out: str = "decided",
            ) -> str:
    """A refusal, checked everywhere (exit 1, one failed case, nothing written), that says
    nothing was decided."""
    text = refused(result, root, out)
    assert "decided from" not in text
    return text


@pytest.fixture(scope="module", params=["0", "2"], ids=["n0", "n2"])
def shards(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two shards under `-n 0` or `-n 2`, and the run they split, in one process."""
    root = make_project(tmp_path_factory.mktemp(f"decide-n{request.param}"))
    one = run_command(root, ".", "-n", "2", "--ragate-results=one/results.jsonl",
                      "--junitxml=one/junit.xml")
    assert one.returncode == 1 and f"{WRONG} is wrong" in one.stdout, one.stdout
    (root / "workers").write_text(request.param)
    for i in (1, 2):
        ran = shard(root, i, request.param)
        assert ran.returncode == (1 if i == owner(WRONG) else 0), ran.stdout + ran.stderr
    return root


def copy(root: Path, name: str) -> Path:
    return shutil.copytree(root, root.parent / f"{root.name}-{name}")


def failed_cases(junit: Path) -> set[str]:
    return {name.rpartition("::")[2] for name, case in junit_cases(junit).items()
            if case["outcome"] in ("failure", "error")}


def test_the_shards_decided_fail_as_the_run_fails(shards: Path) -> None:
    """The baseline of every adversary below: decided whole, the shards fail on q04 alone."""
    root = copy(shards, "whole")
    decided = decide(root)
    assert decided.returncode == 1, decided.stdout
    assert "decided from 2 results files" in decided.stdout
    assert failed_cases(root / "decided" / "junit.xml") == {WRONG}


# --- a results file vouches for its own completeness --------------------------------------


def _kinds(lines: list[str]) -> list[str]:
    return [next((k for k in ("ragate_results", "ragate_anchor", "ragate_item", "ragate_test",
                              "ragate_trailer") if k in json.loads(line)), "row")
            for line in lines]


def _last(kinds: list[str], kind: str) -> int:
    return max(i for i, k in enumerate(kinds) if k == kind)


CUTS = {  # a cut keeps the lines before the index it returns
    "after the header": lambda kinds: 1,
    "among the rows": lambda kinds: 3,
    "after the rows": lambda kinds: _last(kinds, "row") + 1,
    "after the anchors": lambda kinds: _last(kinds, "ragate_anchor") + 1,  # the item lost
    "before the trailer": lambda kinds: len(kinds) - 1,
}


@pytest.mark.parametrize("cut", list(CUTS))
def test_a_shard_file_cut_at_a_line_boundary_is_refused(shards: Path, cut: str) -> None:
    """Cut after its anchors, the file of q04's shard loses only q04's failure line: the
    decision passed a run that fails as one run."""
    root = copy(shards, f"cut-{cut.replace(' ', '-')}")
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    kinds = _kinds(lines)
    assert kinds.count("ragate_item") == 1 and kinds[-1] == "ragate_trailer"
    path.write_text("".join(lines[:CUTS[cut](kinds)]))
    text = refusal(decide(root), root)
    assert (f"{path.relative_to(root)}: ragate_trailer: no trailer line, which ends every "
            "results file this ragate writes: the file was cut short") in text


EDITS = {
    "a row's figure edited": (
        lambda lines, rows: [line.replace('"citations_correct": 0', '"citations_correct": 1')
                             if i == rows[WRONG] else line for i, line in enumerate(lines)],
        "ragate_trailer.sha256: the lines before the trailer are not those it was written "
        "after (their sha256 differs): a line was edited, reordered or replaced"),
    "two rows reordered": (
        lambda lines, rows: [*lines[:1], lines[2], lines[1], *lines[3:]],
        "ragate_trailer.sha256: the lines before the trailer are not those"),
    "a line dropped": (
        lambda lines, rows: [line for line in lines if "ragate_item" not in line],
        "ragate_trailer: the trailer counts 6 rows, 2 anchor lines, 1 item line, 0 test "
        "lines; the lines before it are 6 rows, 2 anchor lines, 0 item lines, 0 test lines"),
    "a line appended": (
        lambda lines, rows: [*lines, lines[1]],
        "ragate_trailer: 1 line after the trailer: lines were appended, or files joined"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_shard_file_edited_reordered_or_appended_to_is_refused(shards: Path, edit: str,
                                                                 ) -> None:
    root = copy(shards, f"edit-{edit.replace(' ', '-')}")
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    rows = {json.loads(line).get("question_id"): i for i, line in enumerate(lines)}
    change, says = EDITS[edit]
    path.write_text("".join(change(lines, rows)))
    text = refusal(decide(root), root)
    assert says in text and str(path.relative_to(root)) in text


def test_a_wrong_answer_fails_the_decision_from_its_row(shards: Path) -> None:
    """A file that vouches for itself and still lacks q04's failure line (written so, not
    cut): decide re-derives the failure from q04's row and the goldset, by the run's rule."""
    root = copy(shards, "rederived")
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                            if "ragate_item" not in line))
    reseal(path)
    decided = decide(root)
    assert decided.returncode == 1, decided.stdout
    assert failed_cases(root / "decided" / "junit.xml") == {WRONG}
    assert f"{WRONG} is wrong: 1 of 1 citations wrong" in decided.stdout
    # and the decision's own results file keeps the failure for the next decision
    items = read_results(root / "decided" / "results.jsonl").items
    assert [(i.name, i.why) for i in items] == [(WRONG, f"{WRONG} is wrong: 1 of 1 citations "
                                                 "wrong")]


def test_a_file_marked_incomplete_is_refused_with_its_reason(shards: Path) -> None:
    """The run that wrote it stopped early and said why (the writer's `incomplete=`)."""
    root = copy(shards, "incomplete")
    path = root / "shards" / "1.jsonl"
    found = read_results(path)
    write_results(path, [GoldsetRun(name="mini", eval_version="7",
                                    records=[r for _, r in found.rows])], found.header,
                  found.anchors, [*found.items, *found.tests],
                  incomplete="stopped after 1 failure (-x)")
    text = refusal(decide(root), root)
    assert ("shards/1.jsonl:" in text and "ragate_trailer.incomplete: the run that wrote it "
            "stopped early (stopped after 1 failure (-x)): its results are not a whole "
            "run's") in text


def test_a_results_file_without_a_trailer_is_refused_once(tmp_path: Path) -> None:
    """Rows alone (an old file, or cut before its header) say "no header", not that too."""
    root = make_project(tmp_path)
    one = run_command(root, ".", "--ragate-results=one/results.jsonl")
    assert one.returncode == 1
    text = (root / "one" / "results.jsonl").read_text()
    (root / "rows.jsonl").write_text("".join(line for line in text.splitlines(keepends=True)
                                             if "question_id" in line))
    out = refusal(decide(root, files=("rows.jsonl",)), root)
    assert "rows.jsonl: no header line" in out and "trailer" not in out


# --- decide takes from the goldset what the goldset knows ---------------------------------

ROW_EDITS = {
    "kind": ("q02", {"kind": "single_meeting"},
             "kind: 'single_meeting' in this row, but the goldset says 'unanswerable'"),
    "must_abstain": ("q02", {"must_abstain": False},
                     "must_abstain: False in this row, but the goldset says True"),
    # with its abstention made to agree: the abstention floor would move
    "must_abstain and abstention_correct": (
        "q01", {"must_abstain": True, "abstention_correct": False},
        "must_abstain: True in this row, but the goldset says False"),
    "evidence_spans": ("q01", {"evidence_spans": 2, "evidence_ranks": [1, None]},
                       "evidence_spans: 2 in this row, but the goldset says 1"),
    "evidence_spans_found": ("q01", {"evidence_spans_found": 0},
                             "evidence_spans_found: 0 in this row, but its evidence_ranks "
                             "make it 1"),
    "abstention_correct": ("q02", {"abstention_correct": False},
                           "abstention_correct: False in this row, but its abstained and "
                           "must_abstain make it True"),
}


@pytest.mark.parametrize("edit", list(ROW_EDITS))
def test_a_row_that_disagrees_with_the_goldset_is_refused(shards: Path, edit: str) -> None:
    """The edited file is written again so that its trailer vouches for it (the trailer
    catches a plain edit): the row still disagrees with the goldset, named once by file,
    line, question and field."""
    qid, change, says = ROW_EDITS[edit]
    root = copy(shards, f"row-{edit.replace(' ', '-')}")
    path = root / "shards" / f"{owner(qid)}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1)
                  if json.loads(line).get("question_id") == qid)
    row = json.loads(lines[number - 1])
    row.update(change)
    lines[number - 1] = json.dumps(row) + "\n"
    path.write_text("".join(lines))
    reseal(path)
    text = refusal(decide(root), root)
    rel = path.relative_to(root)
    assert f"{rel}:{number}: [{qid}] {says}" in text, text
    assert failures(text).count(f"{rel}:{number}: [{qid}]") == 1  # once per cause


def test_an_anchor_line_that_disagrees_with_the_goldset_is_refused(shards: Path) -> None:
    """An anchor moved to another kind leaves its kind's anchor floor: refused, by id."""
    root = copy(shards, "anchor-kind")
    path = root / "shards" / "1.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines) if "ragate_anchor" in line)
    line = json.loads(lines[number])
    anchor_id = line["ragate_anchor"]["outcome"]["anchor_id"]
    line["ragate_anchor"]["outcome"]["kind"] = "off_topic_control"
    lines[number] = json.dumps(line) + "\n"
    path.write_text("".join(lines))
    reseal(path)
    text = refusal(decide(root), root)
    assert (f"shards/1.jsonl: [anchor[{anchor_id}]] ragate_anchor.outcome.kind: "
            "'off_topic_control' in this line, but the goldset says 'retrieval_miss'") in text


# --- a shard's ordinary tests, and its system's knobs -------------------------------------


def test_a_shard_whose_ordinary_test_failed_fails_the_decision(shards: Path) -> None:
    """test_plain.py fails in the shard that runs it: that shard exits 1, and so must the
    decision, with the test as a failed case of its own; cut off, its line is missed."""
    root = copy(shards, "plain")
    workers = (root / "workers").read_text()
    mine = deal("", ["test_plain.py::test_plain"], (), 2)["test_plain.py::test_plain"]
    ran = shard(root, mine, workers, RAGATE_TEST_PLAIN="fail")
    assert ran.returncode == 1, ran.stdout
    decided = decide(root)
    assert decided.returncode == 1, decided.stdout
    assert failed_cases(root / "decided" / "junit.xml") == {WRONG, "test_plain"}
    # as the shard said it: the line pytest's summary shows (`reasons.failure_line`)
    assert "AssertionError: an ordinary test failed" in decided.stdout
    assert "test_plain" in {t.nodeid.rpartition("::")[2] for t in
                            read_results(root / "decided" / "results.jsonl").tests}
    # the test's line is the one before the trailer: a cut there is refused too
    path = root / "shards" / f"{mine}.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    assert _kinds(lines)[-2] == "ragate_test"
    path.write_text("".join(lines[:-2]))
    assert "no trailer line" in refusal(decide(root, out="cut"), root, out="cut")


def test_shards_whose_systems_report_other_knobs_are_refused(shards: Path) -> None:
    """The user's system reads top_k from its own settings: shard 2 ran at top_k 1."""
    root = copy(shards, "knobs")
    workers = (root / "workers").read_text()
    ran = shard(root, 2, workers, RAGATE_TEST_TOP_K="1")
    assert ran.returncode in (0, 1), ran.stdout
    text = refusal(decide(root), root)
    assert ("the shards' rows of gs/ragate.toml name different values of the knob top_k "
            "(Answer.knobs): 5 in shards/1.jsonl (shard 1/2); 1 in shards/2.jsonl "
            "(shard 2/2)") in text


# --- the file format ----------------------------------------------------------------------


def _record(qid: str) -> QuestionRecord:
    return QuestionRecord(goldset="mini", route="gs/ragate.toml", question_id=qid,
                          kind="single_meeting", index=0, must_abstain=False,
                          evidence_spans=1, eval_version="7")


HEADER = Header(format=1, ragate_version="0", settings={})


def test_the_trailer_counts_and_digests_what_precedes_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    items = [SavedItem(nodeid="gs/ragate.toml::q1", route="gs/ragate.toml", name="q1",
                       phase="call", why="q1 is wrong"),
             SavedTest(nodeid="t.py::test_x", location=("t.py", 3, "test_x"), phase="setup",
                       why="boom")]
    write_results(path, [GoldsetRun(name="mini", eval_version="7",
                                    records=[_record("q1"), _record("q2")])], HEADER,
                  items=items)
    found = read_results(path)
    assert found.problems == [] and found.unvouched == []
    assert found.trailer is not None and found.trailer.counted() == (
        "2 rows, 0 anchor lines, 1 item line, 1 test line")
    assert found.items == items[:1] and found.tests == items[1:]
    assert path.read_text() == results_lines(
        [GoldsetRun(name="mini", eval_version="7", records=[_record("q1"), _record("q2")])],
        HEADER, items=items)


def test_a_run_that_stopped_early_says_so_in_its_trailer(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_results(path, [], HEADER, incomplete="interrupted (KeyboardInterrupt)")
    found = read_results(path)
    assert found.trailer is not None and found.trailer.incomplete == (
        "interrupted (KeyboardInterrupt)")
    assert found.unvouched == []  # vouched for as a run that stopped early, which decide refuses
    assert read_saved_files([path], env={})[1] == [
        f"{path}:2: ragate_trailer.incomplete: the run that wrote it stopped early "
        "(interrupted (KeyboardInterrupt)): its results are not a whole run's"]


def test_a_second_trailer_or_a_blank_line_after_it_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_results(path, [GoldsetRun(name="mini", eval_version="7", records=[_record("q1")])],
                  HEADER)
    text = path.read_text()
    for extra in (text.splitlines(keepends=True)[-1], "\n"):
        path.write_text(text + extra)
        assert [p.message for p in read_results(path).unvouched] == [
            "1 line after the trailer: lines were appended, or files joined"]
