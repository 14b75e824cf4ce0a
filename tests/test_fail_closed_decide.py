"""Fail closed, `ragate decide`: a results file vouches for its own completeness, and decide
takes from the goldset what the goldset knows.

Each adversary here passed the decided gate before: a shard file cut at a line boundary (an
upload or copy cut short) that lost a wrong answer's failure line; rows whose kind,
abstention or evidence were edited; a shard whose ordinary test failed; shards whose systems
reported different `Answer.knobs`. Each is played through `ragate decide` over shards run
under `-n 0` and under `-n 2`, and a refused decision says nothing was decided (no
"decided from N files"). What a file's own reader refuses (`read_saved_files`: a cut, an edit,
a reordering, a line appended) is held to it line by line at that level, each kind once
through `ragate decide` too; the rows that disagree with the goldset are refused together,
by one decision per worker count, each named once.

The shards are processes of their own, made once per worker count (and the run they split
once); the decisions and a shard run again run in this process (`run_here`).

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
from tests.conftest import BASE_TOML, junit_cases, run_command, run_here, write_goldset
from tests.test_sharding import refused, reseal

pytestmark = pytest.mark.heavy  # shards and decisions run pytest

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
    return Context(context_id=cid, doc_id=doc, first_unit=first, last_unit=last,
                   text=f"{doc} turns {first}-{last}", distance=0.2)

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if int(qid[1:]) % 3 == 2:
            return Answer.abstain([ctx("c0", "m2", 0, 1)], knobs={"top_k": TOP_K})
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
             "kind": "unanswerable" if i % 3 == 2 else "single_doc"} for i in range(N)]


def expected() -> list[dict[str, Any]]:
    return [{"question_id": f"q{i:02d}", "gist": None if i % 3 == 2 else "the budget",
             "evidence": [] if i % 3 == 2 else [{"doc_id": "m1", "first_unit": 2,
                                                 "last_unit": 3}]} for i in range(N)]


ANCHORS = [{"anchor_id": f"a{i}", "kind": "retrieval_miss", "claim": f"the budget ({i})",
            "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 3}} for i in range(4)]


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


def shard_args(i: int, workers: str) -> tuple[str, ...]:
    return (".", "-n", workers, f"--ragate-shard={i}/2", f"--ragate-results=shards/{i}.jsonl")


def shard(pytester: pytest.Pytester, i: int, workers: str, **env: str,
          ) -> subprocess.CompletedProcess[str]:
    """Shard i of 2 run again in pytester's folder (in this process: `run_here`)."""
    return run_here(pytester, *shard_args(i, workers), **env)


SHARDS = ["shards/1.jsonl", "shards/2.jsonl"]


def decide_args(files: tuple[str, ...], out: str) -> tuple[str, ...]:
    return ("decide", *files, "--", ".", f"--junitxml={out}/junit.xml",
            f"--ragate-results={out}/results.jsonl", f"--ragate-report={out}/report.md")


def decide(pytester: pytest.Pytester, *args: str, files: tuple[str, ...] = tuple(SHARDS),
           out: str = "decided") -> subprocess.CompletedProcess[str]:
    """`ragate decide` in pytester's folder (in this process: `run_here`)."""
    return run_here(pytester, *decide_args(files, out), *args)


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


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, and the run the shards split (`-n 2`, in one process, one/): it fails on
    q04 alone, whatever the worker count of its shards."""
    root = make_project(tmp_path_factory.mktemp("decide"))
    one = run_command(root, ".", "-n", "2", "--ragate-results=one/results.jsonl",
                      "--junitxml=one/junit.xml")
    assert one.returncode == 1 and f"{WRONG} is wrong" in one.stdout, one.stdout
    assert failed_cases(root / "one" / "junit.xml") == {WRONG}
    return root


@pytest.fixture(scope="module", params=["0", "2"], ids=["n0", "n2"])
def shards(request: pytest.FixtureRequest, project: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two shards of the project under `-n 0` or `-n 2`, each a process of its own."""
    root = shutil.copytree(project, tmp_path_factory.mktemp(f"decide-n{request.param}") / "p")
    (root / "workers").write_text(request.param)
    for i in (1, 2):
        ran = run_command(root, *shard_args(i, request.param))
        assert ran.returncode == (1 if i == owner(WRONG) else 0), ran.stdout + ran.stderr
    return root


def copy(root: Path, pytester: pytest.Pytester) -> Path:
    """The project and its shards, copied into pytester's folder, where `run_here` runs."""
    return shutil.copytree(root, pytester.path, dirs_exist_ok=True)


def failed_cases(junit: Path) -> set[str]:
    return {name.rpartition("::")[2] for name, case in junit_cases(junit).items()
            if case["outcome"] in ("failure", "error")}


def test_the_shards_decided_fail_as_the_run_fails(shards: Path, pytester: pytest.Pytester,
                                                  ) -> None:
    """The baseline of every adversary below: decided whole, the shards fail on q04 alone."""
    root = copy(shards, pytester)
    decided = decide(pytester)
    assert decided.returncode == 1, decided.stdout
    assert "decided from 2 results files" in decided.stdout
    assert failed_cases(root / "decided" / "junit.xml") == {WRONG}


# --- a results file vouches for its own completeness --------------------------------------
# Every cut and edit below is held to the reader `ragate decide` reads each file with
# (`read_saved_files`), on the file its shard wrote under each worker count; one of each kind
# is played through `ragate decide` as well, which refuses whatever that reader refuses.


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
CUT_SHORT = ("ragate_trailer: no trailer line, which ends every results file this ragate "
             "writes: the file was cut short")


def cut(path: Path, where: str) -> None:
    """The file of q04's shard cut at a line boundary, as an upload or a copy cut short."""
    lines = path.read_text().splitlines(keepends=True)
    kinds = _kinds(lines)
    assert kinds.count("ragate_item") == 1 and kinds[-1] == "ragate_trailer"
    path.write_text("".join(lines[:CUTS[where](kinds)]))


def wrong_shard(shards: Path, tmp_path: Path) -> Path:
    """A copy of the file of q04's shard, to be cut or edited."""
    return Path(shutil.copy(shards / "shards" / f"{owner(WRONG)}.jsonl", tmp_path))


@pytest.mark.parametrize("where", list(CUTS))
def test_a_shard_file_cut_at_a_line_boundary_is_refused(shards: Path, where: str,
                                                        tmp_path: Path) -> None:
    """Cut after its anchors, the file of q04's shard loses only q04's failure line: the
    decision passed a run that fails as one run."""
    path = wrong_shard(shards, tmp_path)
    cut(path, where)
    [problem] = read_saved_files([path], env={})[1]  # once
    assert problem.startswith(f"{path}: {CUT_SHORT}"), problem


def test_a_shard_file_cut_short_is_refused_by_the_decision(shards: Path,
                                                           pytester: pytest.Pytester) -> None:
    """The cut that loses q04's failure line alone, through `ragate decide`."""
    root = copy(shards, pytester)
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    cut(path, "after the anchors")
    text = refusal(decide(pytester), root)
    assert f"{path.relative_to(root)}: {CUT_SHORT}" in text


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


def edit(path: Path, how: str) -> str:
    """The file edited (`EDITS`); what its refusal says."""
    lines = path.read_text().splitlines(keepends=True)
    rows = {json.loads(line).get("question_id"): i for i, line in enumerate(lines)}
    change, says = EDITS[how]
    path.write_text("".join(change(lines, rows)))
    return says


@pytest.mark.parametrize("how", list(EDITS))
def test_a_shard_file_edited_reordered_or_appended_to_is_refused(shards: Path, how: str,
                                                                 tmp_path: Path) -> None:
    path = wrong_shard(shards, tmp_path)
    says = edit(path, how)
    [problem] = read_saved_files([path], env={})[1]  # once
    assert problem.startswith(f"{path}:") and says in problem, problem


def test_a_shard_file_edited_is_refused_by_the_decision(shards: Path,
                                                        pytester: pytest.Pytester) -> None:
    """q04's wrong citation made right in its row, through `ragate decide`."""
    root = copy(shards, pytester)
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    says = edit(path, "a row's figure edited")
    text = refusal(decide(pytester), root)
    assert says in text and str(path.relative_to(root)) in text


def test_a_wrong_answer_fails_the_decision_from_its_row(shards: Path,
                                                        pytester: pytest.Pytester) -> None:
    """A file that vouches for itself and still lacks q04's failure line (written so, not
    cut): decide re-derives the failure from q04's row and the goldset, by the run's rule."""
    root = copy(shards, pytester)
    path = root / "shards" / f"{owner(WRONG)}.jsonl"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True)
                            if "ragate_item" not in line))
    reseal(path)
    decided = decide(pytester)
    assert decided.returncode == 1, decided.stdout
    assert failed_cases(root / "decided" / "junit.xml") == {WRONG}
    assert f"{WRONG} is wrong: 1 of 1 citations wrong" in decided.stdout
    # and the decision's own results file keeps the failure for the next decision
    items = read_results(root / "decided" / "results.jsonl").items
    assert [(i.name, i.why) for i in items] == [(WRONG, f"{WRONG} is wrong: 1 of 1 citations "
                                                 "wrong")]


def test_a_file_marked_incomplete_is_refused_with_its_reason(shards: Path,
                                                             pytester: pytest.Pytester) -> None:
    """The run that wrote it stopped early and said why (the writer's `incomplete=`)."""
    root = copy(shards, pytester)
    path = root / "shards" / "1.jsonl"
    found = read_results(path)
    write_results(path, [GoldsetRun(name="mini", eval_version="7",
                                    records=[r for _, r in found.rows])], found.header,
                  found.anchors, [*found.items, *found.tests],
                  incomplete="stopped after 1 failure (-x)")
    text = refusal(decide(pytester), root)
    assert ("shards/1.jsonl:" in text and "ragate_trailer.incomplete: the run that wrote it "
            "stopped early (stopped after 1 failure (-x)): its results are not a whole "
            "run's") in text


def test_a_results_file_without_a_trailer_is_refused_once(project: Path,
                                                          pytester: pytest.Pytester) -> None:
    """Rows alone (an old file, or cut before its header) say "no header", not that too."""
    root = copy(project, pytester)
    text = (root / "one" / "results.jsonl").read_text()
    (root / "rows.jsonl").write_text("".join(line for line in text.splitlines(keepends=True)
                                             if "question_id" in line))
    out = refusal(decide(pytester, files=("rows.jsonl",)), root)
    out = out.replace(str(root), "<tmp>")  # the folder is named after this test
    assert "rows.jsonl: no header line" in out and "trailer" not in out


# --- decide takes from the goldset what the goldset knows ---------------------------------
# Each edited file is written again so that its trailer vouches for it (the trailer catches a
# plain edit). Every edit below is made at once, each to a question of its own, in the
# shards of each worker count, and decided once: each must be named in that one refusal, once.

ROW_EDITS = {
    "kind": ("q02", {"kind": "single_doc"},
             "kind: 'single_doc' in this row, but the goldset says 'unanswerable'"),
    "must_abstain": ("q05", {"must_abstain": False},
                     "must_abstain: False in this row, but the goldset says True"),
    # with its abstention made to agree: the abstention floor would move
    "must_abstain and abstention_correct": (
        "q01", {"must_abstain": True, "abstention_correct": False},
        "must_abstain: True in this row, but the goldset says False"),
    "evidence_spans": ("q03", {"evidence_spans": 2, "evidence_ranks": [1, None]},
                       "evidence_spans: 2 in this row, but the goldset says 1"),
    "evidence_spans_found": ("q06", {"evidence_spans_found": 0},
                             "evidence_spans_found: 0 in this row, but its evidence_ranks "
                             "make it 1"),
    # a rank metric's figure moved by its gains alone (issue 48 item 3)
    "context_gains": ("q07", {"context_gains": [0.0, 1.0]},
                      "context_gains: its first relevant context is at rank 2 in this row, "
                      "but its evidence_ranks put it at 1"),
    "abstention_correct": ("q08", {"abstention_correct": False},
                           "abstention_correct: False in this row, but its abstained and "
                           "must_abstain make it True"),
}
ANCHOR_KIND = "off_topic_control"  # an anchor of shard 1 moved to another kind


@pytest.fixture(scope="module")
def disagreeing(shards: Path, tmp_path_factory: pytest.TempPathFactory,
                ) -> tuple[str, dict[str, str], str]:
    """The shards with every row of `ROW_EDITS` edited and an anchor line of shard 1 moved to
    another kind, each file sealed again, decided (a process of its own, made once per worker
    count): the refusal, where each edited row is (`file:line`), and the anchor's id."""
    root = shutil.copytree(shards, tmp_path_factory.mktemp("disagreeing") / "p")
    qids = [qid for qid, _, _ in ROW_EDITS.values()]
    assert len(set(qids)) == len(qids) and WRONG not in qids  # one cause a question
    at: dict[str, str] = {}  # an edit's `file:line`
    anchor_id = ""
    for i in (1, 2):
        path = root / "shards" / f"{i}.jsonl"
        lines = path.read_text().splitlines(keepends=True)
        for name, (qid, change, _) in ROW_EDITS.items():
            if owner(qid) != i:
                continue
            number = next(n for n, line in enumerate(lines, 1)
                          if json.loads(line).get("question_id") == qid)
            row = json.loads(lines[number - 1])
            row.update(change)
            lines[number - 1] = json.dumps(row) + "\n"
            at[name] = f"shards/{i}.jsonl:{number}"
        if i == 1:
            number = next(n for n, line in enumerate(lines) if "ragate_anchor" in line)
            line = json.loads(lines[number])
            anchor_id = line["ragate_anchor"]["outcome"]["anchor_id"]
            line["ragate_anchor"]["outcome"]["kind"] = ANCHOR_KIND
            lines[number] = json.dumps(line) + "\n"
        path.write_text("".join(lines))
        reseal(path)
    assert set(at) == set(ROW_EDITS)
    text = refusal(run_command(root, *decide_args(tuple(SHARDS), "decided")), root)
    return text, at, anchor_id


@pytest.mark.parametrize("edit", list(ROW_EDITS))
def test_a_row_that_disagrees_with_the_goldset_is_refused(
        disagreeing: tuple[str, dict[str, str], str], edit: str) -> None:
    """The row disagrees with the goldset: named once by file, line, question and field."""
    text, at, _ = disagreeing
    qid, _, says = ROW_EDITS[edit]
    assert f"{at[edit]}: [{qid}] {says}" in text, text
    assert failures(text).count(f"{at[edit]}: [{qid}]") == 1  # once per cause


def test_an_anchor_line_that_disagrees_with_the_goldset_is_refused(
        disagreeing: tuple[str, dict[str, str], str]) -> None:
    """An anchor moved to another kind leaves its kind's anchor floor: refused, by id."""
    text, _, anchor_id = disagreeing
    assert (f"shards/1.jsonl: [anchor[{anchor_id}]] ragate_anchor.outcome.kind: "
            f"'{ANCHOR_KIND}' in this line, but the goldset says 'retrieval_miss'") in text


# --- a shard's ordinary tests, and its system's knobs -------------------------------------


def test_a_shard_whose_ordinary_test_failed_fails_the_decision(shards: Path,
                                                               pytester: pytest.Pytester,
                                                               ) -> None:
    """test_plain.py fails in the shard that runs it: that shard exits 1, and so must the
    decision, with the test as a failed case of its own; cut off, its line is missed."""
    root = copy(shards, pytester)
    workers = (root / "workers").read_text()
    mine = deal("", ["test_plain.py::test_plain"], (), 2)["test_plain.py::test_plain"]
    ran = shard(pytester, mine, workers, RAGATE_TEST_PLAIN="fail")
    assert ran.returncode == 1, ran.stdout
    decided = decide(pytester)
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
    assert "no trailer line" in refusal(decide(pytester, out="cut"), root, out="cut")


def test_shards_whose_systems_report_other_knobs_are_refused(shards: Path,
                                                             pytester: pytest.Pytester) -> None:
    """The user's system reads top_k from its own settings: shard 2 ran at top_k 1."""
    root = copy(shards, pytester)
    workers = (root / "workers").read_text()
    ran = shard(pytester, 2, workers, RAGATE_TEST_TOP_K="1")
    assert ran.returncode in (0, 1), ran.stdout
    text = refusal(decide(pytester), root)
    assert ("the shards' rows of gs/ragate.toml name different values of the knob top_k "
            "(Answer.knobs): 5 in shards/1.jsonl (shard 1/2); 1 in shards/2.jsonl "
            "(shard 2/2)") in text


# --- the file format ----------------------------------------------------------------------


def _record(qid: str) -> QuestionRecord:
    return QuestionRecord(goldset="mini", route="gs/ragate.toml", question_id=qid,
                          kind="single_doc", index=0, must_abstain=False,
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
