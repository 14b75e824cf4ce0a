"""A gate bigger than one machine: `--ragate-shard i/N` runs a slice and decides nothing;
`ragate decide` decides every shard's results as one run would, or refuses, naming why.

The project here is a synthetic goldset of 300 questions of three kinds, 30 anchors (some
strict-xfail), mechanical, kind, anchor and judged floors (a fixture judge that has no
verdict for some questions, so judge_coverage is decided on failures too), and a system whose
answers depend only on the question: three shards in separate processes, decided, must give
what one `-n 2` run gives.

The module's shared runs (the project's one run and its three shards) are processes of their
own, made once; each test works on a copy of them in pytester's folder, where its own shard
runs and every `ragate decide` run in this process (`run_here`), but for a shard whose system
kills the process it runs in.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.modes.shard import deal
from tests.conftest import (
    BASE_TOML,
    FIXTURE_JUDGE_CONFTEST,
    junit_cases,
    results_rows,
    run_command,
    run_here,
    untimed,
    write_goldset,
)

pytestmark = pytest.mark.heavy  # shards and decisions run pytest

N_QUESTIONS = 300
KINDS = ["single_doc"] * 4 + ["multi_doc", "unanswerable"]  # by i % 6

FLOORS = """\
[floors]
citation_accuracy = 0.70
abstention_accuracy = 0.80
evidence_recall = { min = 0.90, xfail = "cross-meeting questions miss a span" }
faithfulness = 0.60
context_precision = 0.50

[floors.kind.single_doc]
evidence_recall = 0.75

[floors.anchors.retrieval_miss]
hold_rate = 0.50
"""

SYSTEM = '''
import hashlib
import os
import pytest
from pytest_ragate import Answer, Citation, Context

# the faults a test asks for: RAGATE_TEST_RAISE=q007,q150 raise; RAGATE_TEST_CRASH=q150 kills
# the process (an xdist worker, or a whole shard) as it answers
RAISE = set(filter(None, os.environ.get("RAGATE_TEST_RAISE", "").split(",")))
CRASH = os.environ.get("RAGATE_TEST_CRASH")

RIGHT = {"m1": (2, 3), "m3": (4, 5)}

def ctx(cid, doc, first, last, distance=0.2):
    return Context(context_id=cid, doc_id=doc, first_unit=first, last_unit=last,
                   text=f"{doc} turns {first}-{last}", distance=distance)

def behaviour(qid):
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 10

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid in RAISE:
            raise TimeoutError("the RAG service did not answer")
        if qid == CRASH:
            os._exit(3)
        b, kind = behaviour(qid), int(qid[1:]) % 6
        if kind == 5:  # unanswerable: abstains, but 2 in 10 answer anyway
            if b < 8:
                return Answer(text="", abstained=True, contexts=[ctx("c0", "m2", 0, 1, 0.9)])
            return Answer(text="a guess", contexts=[ctx("c0", "m2", 0, 1)],
                          citations=[Citation(context_id="c0")])
        first = ctx("c0", "m1", 2, 3) if b < 8 else ctx("c0", "m1", 8, 9)
        contexts = [first, ctx("c1", "m3", 4, 5)] if kind == 4 and b < 5 else [first]
        return Answer(text=f"the budget ({qid})", contexts=contexts,
                      citations=[Citation(context_id=c.context_id) for c in contexts])
    return answer

POOL = {"budget": [("m1", 2, 3)], "colour": [("m2", 0, 1)], "weather": []}

@pytest.fixture
def ragate_retriever():
    def retrieve(claim):
        hits = next((v for k, v in POOL.items() if k in claim), [])
        return [ctx(f"c{i}", d, a, b) for i, (d, a, b) in enumerate(hits)]
    return retrieve
'''


def questions() -> list[dict[str, Any]]:
    return [{"question_id": f"q{i:03d}", "kind": KINDS[i % 6],
             "question": f"What was decided about q{i:03d}?"} for i in range(N_QUESTIONS)]


def expected() -> list[dict[str, Any]]:
    rows = []
    for i in range(N_QUESTIONS):
        kind = KINDS[i % 6]
        spans = ([] if kind == "unanswerable" else [("m1", 2, 3)] if kind == "single_doc"
                 else [("m1", 2, 3), ("m3", 4, 5)])
        rows.append({"question_id": f"q{i:03d}", "gist": "the budget" if spans else None,
                     "evidence": [{"doc_id": d, "first_unit": a, "last_unit": b}
                                  for d, a, b in spans]})
    return rows


def anchors() -> list[dict[str, Any]]:
    found = []
    for i in range(30):
        claim, span = (("the budget was agreed", ("m1", 2, 3)) if i % 3 == 0 else
                       ("the colour is red", ("m1", 8, 9)) if i % 3 == 1 else
                       ("the colour was chosen", ("m2", 0, 1)))
        row: dict[str, Any] = {"anchor_id": f"a{i:02d}", "kind": "retrieval_miss",
                               "claim": f"{claim} ({i})",
                               "evidence": {"doc_id": span[0], "first_unit": span[1],
                                            "last_unit": span[2]}}
        if i % 3 == 1:
            row["xfail"] = "the colour is never retrieved from m1"
        found.append(row)
    found.append({"anchor_id": "control", "kind": "off_topic_control",
                  "claim": "the weather in Lima", "evidence": None})
    return found


def verdicts() -> dict[str, Any]:
    """A verdict for most answered questions; none for every 17th (a judge failure)."""
    answers = {}
    for i in range(N_QUESTIONS):
        if i % 17 == 0:
            continue
        supported = [True, i % 4 != 0]
        answers[f"q{i:03d}"] = {"statements": ["s1", "s2"], "supported": supported,
                                "relevant_contexts": ["c0"] if i % 3 else [],
                                "generated_questions": [f"What was decided about q{i:03d}?"]}
    return {"judge_id": "fixture-v1", "answers": answers}


def make_project(root: Path, floors: str = FLOORS) -> Path:
    write_goldset(root / "gs", toml=BASE_TOML, floors=floors, questions=questions(),
                  expected=expected(), anchors=anchors())
    (root / "conftest.py").write_text(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    (root / "judge.json").write_text(json.dumps(verdicts()))
    (root / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                     "-p no:langsmith_plugin --ragate-judge=fixture:judge.json\n")
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("sharded"))


OUTCOME = {"failure": "failed", "error": "error", "skipped": "skipped", "passed": "passed"}


def floors_of(junit: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each floor and regression test case: its outcome and its properties."""
    return {name: (OUTCOME[str(case["outcome"])], case["props"])  # type: ignore[misc]
            for name, case in junit_cases(junit).items()
            if "floor[" in name or "regression[" in name}


def outcomes_of(junit: Path) -> Counter[str]:
    return Counter(OUTCOME[str(case["outcome"])] for case in junit_cases(junit).values())


# --- the split ----------------------------------------------------------------------------


def test_the_split_is_balanced_per_goldset_stable_and_blind_to_order() -> None:
    names = [f"q{i:03d}" for i in range(301)]
    anchors_ = [f"anchor[a{i}]" for i in range(31)]
    for count in (2, 3, 7):
        shards = deal("gs/ragate.toml", names, anchors_, count)
        for group in (names, anchors_):
            sizes = Counter(shards[n] for n in group)
            assert set(sizes) == set(range(1, count + 1))
            assert max(sizes.values()) - min(sizes.values()) <= 1
        assert deal("gs/ragate.toml", names[::-1], anchors_[::-1], count) == shards
        assert deal("gs/ragate.toml", names, anchors_, count) == shards
    one_more = deal("gs/ragate.toml", [*names, "q999"], anchors_, 3)
    moved = sum(one_more[n] != s for n, s in deal("gs/ragate.toml", names, anchors_, 3).items())
    assert moved < len(names)  # a round-robin over a digest order: not a full reshuffle


def test_shard_flags_are_checked_before_anything_runs(project: Path,
                                                      pytester: pytest.Pytester) -> None:
    here(project, pytester)
    for args, message in [
            (["--ragate-shard=4/3", "--ragate-results=r.jsonl"], "index is at most the count"),
            (["--ragate-shard=two", "--ragate-results=r.jsonl"], "is not i/N"),
            (["--ragate-shard=1/3"], "needs --ragate-results"),
            (["--ragate-shard=1/3", "--ragate-results=r.jsonl", "--ragate-report=r.md"],
             "--ragate-report belong to `ragate decide`"),
            (["--ragate-shard=1/3", "--ragate-results=r.jsonl", "--ragate-decide=r.jsonl"],
             "one or the other")]:
        result = run_here(pytester, "gs", *args)
        assert result.returncode == 4, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)


# --- three shards decided = one run ------------------------------------------------------

CACHE_OFF = "--ragate-cache=off"  # every run asks the judge: rows say nothing of a cache


@pytest.fixture(scope="module")
def sharded(project: Path) -> Path:
    """One `-n 2` run in one/, three shards (the first under `-n 2`) in shards/, decided in
    decided/."""
    single = run_command(project, "gs", "-n", "2", CACHE_OFF, "--junitxml=one/junit.xml",
                         "--ragate-results=one/results.jsonl", "--ragate-report=one/report.md",
                         "--ragate-history=one/history.jsonl")
    (project / "one" / "exit").write_text(str(single.returncode))
    for i in (1, 2, 3):
        shard = run_command(project, "gs", CACHE_OFF, f"--ragate-shard={i}/3",
                            f"--ragate-results=shards/{i}.jsonl",
                            f"--junitxml=shards/junit-{i}.xml", *(["-n", "2"] if i == 1 else []))
        assert shard.returncode == 0, shard.stdout + shard.stderr
        assert f"ragate shard {i}/3" in shard.stdout
    return project


def decide(pytester: pytest.Pytester, results: list[str], *args: str, out: str = "decided",
           ) -> subprocess.CompletedProcess[str]:
    """`ragate decide` in pytester's folder (in this process: `run_here`)."""
    return run_here(pytester, "decide", *results, "--", "gs", f"--junitxml={out}/junit.xml",
                    f"--ragate-results={out}/results.jsonl", f"--ragate-report={out}/report.md",
                    *args)


SHARDS = ["shards/1.jsonl", "shards/2.jsonl", "shards/3.jsonl"]


def here(sharded: Path, pytester: pytest.Pytester) -> Path:
    """The project with its single run and its shards (as far as they were made), and nothing
    decided yet, copied into pytester's folder, where `run_here` runs."""
    shutil.copytree(sharded, pytester.path, dirs_exist_ok=True, ignore=lambda folder, names: [
        n for n in names if folder == str(sharded) and n not in KEPT])
    return pytester.path


KEPT = {"gs", "conftest.py", "judge.json", "pytest.ini", "one", "shards"}


def test_three_shards_decided_are_one_run(sharded: Path, pytester: pytest.Pytester) -> None:
    root = here(sharded, pytester)
    decided = decide(pytester, SHARDS, "--ragate-history=decided/history.jsonl")
    single_exit = int((root / "one" / "exit").read_text())
    assert single_exit == 1  # judge_coverage 0.94 < 0.95: the run fails, and so must this
    assert decided.returncode == single_exit, decided.stdout + decided.stderr
    one, dec = root / "one", root / "decided"
    assert results_rows(dec / "results.jsonl") == results_rows(one / "results.jsonl")
    assert len(results_rows(dec / "results.jsonl")) == N_QUESTIONS
    assert untimed((dec / "report.md").read_text()) == untimed((one / "report.md").read_text())
    floors = floors_of(dec / "junit.xml")
    assert floors == floors_of(one / "junit.xml")
    assert len(floors) == 8  # 7 declared and judge_coverage, each its own test case
    assert floors["gs.ragate.toml::floor[judge_coverage]"][0] == "failed"
    # the history line too, but for when and where it was written
    lines = [{k: v for k, v in json.loads(untimed(line)).items() if k not in ("time", "git_sha")}
             for path in (one, dec) for line in (path / "history.jsonl").read_text().splitlines()]
    assert len(lines) == 2 and lines[0] == lines[1]
    assert lines[1]["status"] == "failed" and lines[1]["questions"] == N_QUESTIONS
    # every question and anchor is a test case again, with the run's outcomes
    assert outcomes_of(dec / "junit.xml") == outcomes_of(one / "junit.xml")
    # each shard ran a third of each population, and no shard decided a floor
    for i in (1, 2, 3):
        shard = root / "shards" / f"junit-{i}.xml"
        assert not floors_of(shard)
        assert sum(outcomes_of(shard).values()) in (110, 111)  # 100 questions, 10-11 anchors


def test_a_saved_run_is_decided_again_after_its_floors_change(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Re-thresholding without asking the system again: the floors are ragate.toml's now."""
    root = here(sharded, pytester)
    toml = root / "gs" / "ragate.toml"
    toml.write_text(toml.read_text().replace("context_precision = 0.50",
                                             "context_precision = 0.50\n"
                                             "judge_coverage = 0.90"))
    again = decide(pytester, ["one/results.jsonl"], out="again")
    assert again.returncode == 0, again.stdout + again.stderr
    assert floors_of(root / "again" / "junit.xml")[
        "gs.ragate.toml::floor[judge_coverage]"][0] == "passed"
    assert results_rows(root / "again" / "results.jsonl") == results_rows(
        root / "one" / "results.jsonl")
    # and the shards' files decide to the same under the new floors, checked against the run
    # itself as a baseline: nothing regressed, pair by pair
    against = decide(pytester, SHARDS, "--ragate-baseline=one/results.jsonl", out="again-shards")
    assert against.returncode == 0, against.stdout
    checks = {n: o for n, (o, _) in floors_of(root / "again-shards" / "junit.xml").items()
              if "regression[" in n}
    assert checks and set(checks.values()) == {"passed"}
    toml.write_text(toml.read_text().replace("citation_accuracy = 0.70",
                                             "citation_accuracy = 0.85"))
    stricter = decide(pytester, SHARDS, out="stricter")
    assert stricter.returncode == 1
    assert "citation_accuracy 0.80 < floor 0.85" in stricter.stdout


# --- refusals: a decision the files cannot vouch for is no decision -----------------------




def reseal(path: Path) -> None:
    """The file written again as its writer would write what it holds now, so that its
    trailer vouches for it: what decide checks behind the trailer is reached."""
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.outputs.results import read_results, write_results

    found = read_results(path)
    write_results(path, [GoldsetRun(name="mini", eval_version="7",
                                    records=[row for _, row in found.rows])],
                  found.header, found.anchors, [*found.items, *found.tests])


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def refused(result: subprocess.CompletedProcess[str], root: Path, out: str = "decided",
            ) -> str:
    """The refusal's text, once its outcome is checked everywhere: exit 1, one failed test
    case in JUnit, and no report or results written."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ragate decide refused to decide" in result.stdout
    junit = ET.parse(root / out / "junit.xml").getroot()
    cases = list(junit.iter("testcase"))
    assert [(c.get("name"), c.find("failure") is not None) for c in cases] == [
        ("ragate-decide", True)]
    assert not (root / out / "report.md").exists()
    assert not (root / out / "results.jsonl").exists()
    return result.stdout


def test_a_missing_shard_is_refused(sharded: Path, pytester: pytest.Pytester) -> None:
    root = here(sharded, pytester)
    text = refused(decide(pytester, SHARDS[:2]), root)
    assert "shard 3/3 missing: given shards/1.jsonl (shard 1/3), shards/2.jsonl (shard 2/3)" \
        in text


def test_a_shard_given_twice_is_refused(sharded: Path, pytester: pytest.Pytester) -> None:
    """Shard 2's file under shard 3's name: every question once too few and some twice."""
    root = here(sharded, pytester)
    shutil.copy(root / "shards" / "2.jsonl", root / "shards" / "3.jsonl")
    text = refused(decide(pytester, ["shards/"]), root)
    assert "shard 2/3 given twice: shards/2.jsonl and shards/3.jsonl" in text.replace(
        str(root) + "/", "")
    assert "shard 3/3 missing" in text


def test_one_run_and_shards_are_not_one_run(sharded: Path, pytester: pytest.Pytester) -> None:
    root = here(sharded, pytester)
    text = refused(decide(pytester, ["one/results.jsonl", *SHARDS]), root)
    assert "these are not the shards of one run" in text


def test_shards_of_other_settings_judges_or_goldsets_are_refused(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Shard 3 run again: with another top_k, with another judge, after a question changed."""
    root = here(sharded, pytester)
    other = run_here(pytester, "gs", CACHE_OFF, "--ragate-shard=3/3", "-o", "ragate_top_k=3",
                     "--ragate-results=other/topk.jsonl")
    assert other.returncode == 0, other.stdout + other.stderr
    text = refused(decide(pytester, [*SHARDS[:2], "other/topk.jsonl"]), root)
    assert "the shards ran with different ragate_top_k: 5 in shards/1.jsonl (shard 1/3)" in text

    judge = json.loads((root / "judge.json").read_text())
    (root / "judge2.json").write_text(json.dumps({**judge, "judge_id": "fixture-v2"}))
    other = run_here(pytester, "gs", CACHE_OFF, "--ragate-shard=3/3",
                     "--ragate-judge=fixture:judge2.json", "--ragate-results=other/judge.jsonl")
    assert other.returncode == 0, other.stdout + other.stderr
    text = refused(decide(pytester, [*SHARDS[:2], "other/judge.jsonl"]), root)
    assert "different ragate_judge: 'fixture:judge.json'" in text
    assert ("the shards' rows of gs/ragate.toml name different judges: fixture:fixture-v1 in "
            "shards/1.jsonl (shard 1/3)") in text
    assert "fixture:fixture-v2 in other/judge.jsonl (shard 3/3)" in text

    questions_file = root / "gs" / "questions.jsonl"
    original = questions_file.read_text()
    questions_file.write_text(original.replace("about q004?", "about q004 today?"))
    other = run_here(pytester, "gs", CACHE_OFF, "--ragate-shard=3/3",
                     "--ragate-results=other/gs.jsonl")
    assert other.returncode == 0
    questions_file.write_text(original)
    text = refused(decide(pytester, [*SHARDS[:2], "other/gs.jsonl"]), root)
    assert re.search(r"goldset mini \(gs/ragate.toml\): goldset content \(questions, expected "
                     r"answers, corpus, anchors, labels\) differs between shards: \w{12} in "
                     r"shards/1.jsonl", text)


def test_other_eval_versions_or_a_goldset_changed_since_are_refused(
        sharded: Path, pytester: pytest.Pytester) -> None:
    root = here(sharded, pytester)
    toml = root / "gs" / "ragate.toml"
    toml.write_text(toml.read_text().replace('eval_version = "7"', 'eval_version = "8"'))
    other = run_here(pytester, "gs", CACHE_OFF, "--ragate-shard=3/3",
                     "--ragate-results=other/v8.jsonl")
    assert other.returncode == 0
    text = refused(decide(pytester, [*SHARDS[:2], "other/v8.jsonl"]), root)
    assert "eval_version differs between shards: 7 in shards/1.jsonl (shard 1/3)" in text
    text = refused(decide(pytester, SHARDS), root)  # all three at 7, the goldset at 8 now
    assert "goldset mini: eval_version 8 here, 7 in shards/1.jsonl (shard 1/3)" in text

    toml.write_text(toml.read_text().replace('eval_version = "8"', 'eval_version = "7"'))
    expected_file = root / "gs" / "expected.jsonl"
    expected_file.write_text(expected_file.read_text().replace('"last_unit": 3', '"last_unit": 4',
                                                               1))
    text = refused(decide(pytester, SHARDS), root)
    assert "goldset mini changed since shards/1.jsonl (shard 1/3) ran it" in text
    assert "only floors may change between a run and its decision" in text


def test_a_question_or_anchor_without_a_row_is_refused(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """A row or anchor line dropped from a shard's file (by hand, or a shard cut short)."""
    root = here(sharded, pytester)
    path = root / "shards" / "2.jsonl"
    lines = lines_of(path)
    rows = [line for line in lines if "question_id" in line]
    gone = {rows[0]["question_id"], rows[5]["question_id"]}
    anchor = next(line for line in lines if "ragate_anchor" in line)
    kept = [line for line in lines
            if line.get("question_id") not in gone and line is not anchor]
    write_lines(path, kept)
    text = refused(decide(pytester, SHARDS), root)
    assert "ragate_trailer: the trailer counts" in text  # the file's own trailer, first
    reseal(path)  # a file that says it is whole and still lacks them
    text = refused(decide(pytester, SHARDS), root)
    names = ", ".join(sorted(gone))
    anchor_id = anchor["ragate_anchor"]["outcome"]["anchor_id"]
    assert f"goldset mini: {names}, anchor[{anchor_id}] have no result in shard 2/3" in text


def test_a_row_twice_is_refused(sharded: Path, pytester: pytest.Pytester) -> None:
    """A question answered in two shards: one of its answers would be chosen silently."""
    root = here(sharded, pytester)
    row = next(line for line in lines_of(root / "shards" / "1.jsonl") if "question_id" in line)
    path = root / "shards" / "2.jsonl"
    lines = lines_of(path)
    write_lines(path, [*lines[:-1], row, lines[-1]])  # before its trailer
    assert "ragate_trailer: the trailer counts" in refused(decide(pytester, SHARDS), root)
    reseal(path)  # a file that says it is whole and still holds the row twice
    text = refused(decide(pytester, SHARDS), root)
    assert (f"goldset mini: {row['question_id']} (shards/1.jsonl (shard 1/3) and "
            "shards/2.jsonl (shard 2/3)) has more than one row") in text


@pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])
def test_a_question_a_shard_deselected_is_refused_and_named(sharded: Path, workers: str,
                                                            pytester: pytest.Pytester) -> None:
    """A shard that skips a question it owes (`-k`) cannot pass the gate without it."""
    root = here(sharded, pytester)
    shard_of = deal("gs/ragate.toml", [f"q{i:03d}" for i in range(N_QUESTIONS)],
                    [f"anchor[{r['anchor_id']}]" for r in anchors()], 3)
    qid = next(q for q, s in sorted(shard_of.items()) if s == 2 and q.startswith("q"))
    other = run_here(pytester, "gs", "-n", workers, CACHE_OFF, "--ragate-shard=2/3", "-k",
                     f"not {qid}", "--ragate-results=shards/2.jsonl")
    assert other.returncode == 0
    text = refused(decide(pytester, SHARDS), root)
    assert f"goldset mini: {qid} (deselected there by -k/-m) has no result in shard 2/3" in text
    # deselected in the decision too: a deselected question, as in a run (the floors skip)
    same = decide(pytester, SHARDS, "-k", f"not {qid}", out="both")
    assert "refused to decide" not in same.stdout
    assert same.returncode == 0, same.stdout  # judge_coverage is skipped with the rest


def test_not_a_results_file_is_refused_by_line(sharded: Path, pytester: pytest.Pytester) -> None:
    root = here(sharded, pytester)
    rows_only = root / "old.jsonl"
    write_lines(rows_only, results_rows(root / "one" / "results.jsonl"))
    text = refused(decide(pytester, ["old.jsonl"]), root)
    assert "old.jsonl: no header line: not a results file written by this ragate" in text
    path = root / "shards" / "3.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = lines[4].replace('"citations": ', '"citations": "many", "x": ', 1)
    path.write_text("\n".join(lines) + "\n")
    text = refused(decide(pytester, SHARDS), root)
    assert "shards/3.jsonl:5: [" in text and "citations: Input should be a valid integer" in text


def test_decide_runs_in_one_process(sharded: Path, pytester: pytest.Pytester) -> None:
    here(sharded, pytester)
    result = decide(pytester, SHARDS, "-n", "2", out="parallel")
    assert result.returncode == 4
    assert "--ragate-decide asks no system and runs in one process: drop -n" in result.stderr



# --- adversaries: a fault in a shard never passes the decided gate ------------------------


RAISING = {"RAGATE_TEST_RAISE": "q007,q150"}


@pytest.fixture(scope="module")
def faulty(project: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one `-n 2` run of the project while q007 and q150 raise (its folder faulty/), made
    once: what the shards of the same faults decide to, under either worker count."""
    root = shutil.copytree(project, tmp_path_factory.mktemp("faulty") / "project",
                           ignore=lambda folder, names: [
                               n for n in names if folder == str(project) and n not in PROJECT])
    single = run_command(root, "gs", "-n", "2", CACHE_OFF, "--junitxml=faulty/junit.xml",
                         "--ragate-report=faulty/report.md",
                         "--ragate-results=faulty/results.jsonl", **RAISING)
    assert single.returncode == 1, single.stdout + single.stderr
    return root / "faulty"


PROJECT = {"gs", "conftest.py", "judge.json", "pytest.ini"}  # what make_project writes


def test_a_system_that_raises_in_one_shard_fails_that_shard_and_the_gate(
        sharded: Path, faulty: Path, pytester: pytest.Pytester) -> None:
    """q007 and q150 raise: the shards that asked them exit 1 (their own items failed), the
    other passes; the decision fails their floors as the one run does, word for word. The
    two faults are in two shards, one run under `-n 2` (q150: the error comes from an xdist
    worker) and one in one process (q007): both worker counts in one decision."""
    root = here(sharded, pytester)
    shutil.copytree(faulty, root / "faulty")
    fault = RAISING
    owners = deal("gs/ragate.toml", [f"q{i:03d}" for i in range(N_QUESTIONS)],
                  [f"anchor[{a['anchor_id']}]" for a in anchors()], 3)
    assert (owners["q150"], owners["q007"]) == (1, 3)  # the deal is stable (test above)
    for i, workers in ((1, "2"), (2, "0"), (3, "0")):
        shard = run_here(pytester, "gs", "-n", workers, CACHE_OFF, f"--ragate-shard={i}/3",
                         f"--ragate-results=shards/{i}.jsonl", **fault)
        assert shard.returncode == (1 if i in (owners["q007"], owners["q150"]) else 0), (
            i, shard.stdout)
    decided = decide(pytester, SHARDS)
    assert decided.returncode == 1
    assert floors_of(root / "decided" / "junit.xml") == floors_of(root / "faulty" / "junit.xml")
    assert untimed((root / "decided" / "report.md").read_text()) == untimed((
        root / "faulty" / "report.md").read_text())
    assert results_rows(root / "decided" / "results.jsonl") == results_rows(
        root / "faulty" / "results.jsonl")
    assert ("not decided: 2 of 300 questions have no result: errored q007, q150 "
            "(TimeoutError: the RAG service did not answer)") in decided.stdout
    failed = [c.get("name") for c in ET.parse(root / "decided" / "junit.xml").getroot().iter(
        "testcase") if c.find("failure") is not None]
    assert {"q007", "q150"} <= set(failed)


def test_a_worker_that_dies_in_a_shard_is_a_gap_after_the_decision(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Under `-n 2` a worker of shard k dies answering a question: the shard exits 1 and
    saves which items it lost; decided, they are gaps that fail every floor over them."""
    root = here(sharded, pytester)
    owners = deal("gs/ragate.toml", [f"q{i:03d}" for i in range(N_QUESTIONS)],
                  [f"anchor[{a['anchor_id']}]" for a in anchors()], 3)
    k = owners["q150"]
    shard = run_here(pytester, "gs", "-n", "2", CACHE_OFF, f"--ragate-shard={k}/3",
                     f"--ragate-results=shards/{k}.jsonl", RAGATE_TEST_CRASH="q150")
    assert shard.returncode == 1
    items = [json.loads(line)["ragate_item"] for line in
             (root / "shards" / f"{k}.jsonl").read_text().splitlines() if "ragate_item" in line]
    assert any(i["name"] == "q150" and not i["row"] for i in items), items
    decided = decide(pytester, SHARDS)
    assert decided.returncode == 1, decided.stdout
    assert "refused to decide" not in decided.stdout
    assert re.search(r"worker 'gw\d' crashed while running 'gs/ragate.toml::q150'",
                     decided.stdout)
    # q150 crashed; items the dead worker still held are lost with it, or were dealt to the
    # other worker first: which, depends on timing, so the reason is asked only of a loss
    summary = next(line for line in decided.stdout.splitlines()
                   if line.startswith("mini: 300 questions:"))
    assert "1 crashed (q150)" in summary, summary
    assert " lost" not in summary or "its worker went down before it reported" in decided.stdout
    outcomes = {name: outcome for name, (outcome, _) in
                floors_of(root / "decided" / "junit.xml").items()}
    assert outcomes["gs.ragate.toml::floor[citation_accuracy]"] == "failed"
    assert outcomes["gs.ragate.toml::floor[evidence_recall]"] == "failed"  # xfail or not


def test_a_shard_killed_before_it_wrote_is_a_missing_shard(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Without -n the crash takes the whole shard: no results file, so no decision."""
    root = here(sharded, pytester)
    (root / "shards" / "2.jsonl").unlink()
    owners = deal("gs/ragate.toml", [f"q{i:03d}" for i in range(N_QUESTIONS)], [], 3)
    qid = next(q for q, s in sorted(owners.items()) if s == 2)
    shard = run_command(root, "gs", CACHE_OFF, "--ragate-shard=2/3",  # it ends its process
                        "--ragate-results=shards/2.jsonl", RAGATE_TEST_CRASH=qid)
    assert shard.returncode != 0 and not (root / "shards" / "2.jsonl").exists()
    text = refused(decide(pytester, ["shards/"]), root)
    assert "shard 2/3 missing" in text


def test_a_shard_cut_short_by_maxfail_is_refused(sharded: Path, pytester: pytest.Pytester) -> None:
    """`-x` stops a shard at its first failure: the results file an earlier run left is
    removed when it starts, and its own is written marked incomplete, so the decision
    cannot take either for a whole shard."""
    root = here(sharded, pytester)
    owners = deal("gs/ragate.toml", [f"q{i:03d}" for i in range(N_QUESTIONS)], [], 3)
    first = [q for q, s in sorted(owners.items()) if s == 1][:3]
    shard = run_here(pytester, "gs", CACHE_OFF, "-x", "--ragate-shard=1/3",
                     "--ragate-results=shards/1.jsonl", RAGATE_TEST_RAISE=",".join(first))
    assert shard.returncode == 1
    trailer = json.loads((root / "shards" / "1.jsonl").read_text().splitlines()[-1])
    assert trailer["ragate_trailer"]["incomplete"] == "stopping after 1 failures"
    assert "stopped early (stopping after 1 failures)" in refused(decide(pytester, SHARDS), root)


def test_two_routes_of_a_tiny_goldset_over_more_shards_than_some_have_items(
        pytester: pytest.Pytester) -> None:
    """4 questions through the file route and a @ragate.goldset test, over 3 shards: a shard
    may hold none of a route's questions; decided, both routes read as in one run, the
    decorator's floor included."""
    from tests.test_plugin import FLOORS as SMALL_FLOORS
    from tests.test_plugin import SYSTEM as SMALL_SYSTEM

    tmp_path = pytester.path
    write_goldset(tmp_path / "gs", floors=SMALL_FLOORS)
    (tmp_path / "conftest.py").write_text(
        SMALL_SYSTEM.replace("def ragate_system", "def my_rag")
        + "\n@pytest.fixture\ndef ragate_system(my_rag):\n    return my_rag\n")
    (tmp_path / "test_rag.py").write_text(
        "import pytest_ragate as ragate\n\n"
        "@ragate.goldset(\"gs\")\n@ragate.floor(citation_accuracy=0.30)\n"
        "def test_mine(ragate_question, my_rag):\n"
        "    return my_rag(ragate_question.question)\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider "
                                         "-p no:langsmith_plugin\n")
    paths = ("gs", "test_rag.py")
    single = run_here(pytester, *paths, "--junitxml=one/junit.xml",
                      "--ragate-results=one/results.jsonl", "--ragate-report=one/report.md")
    for i in (1, 2, 3):
        shard = run_here(pytester, *paths, f"--ragate-shard={i}/3",
                         f"--ragate-results=shards/{i}.jsonl", *(["-n", "2"] if i == 2 else []))
        assert shard.returncode == 0, shard.stdout
    decided = run_here(pytester, "decide", "shards/", "--", *paths, "--junitxml=dec/junit.xml",
                       "--ragate-results=dec/results.jsonl", "--ragate-report=dec/report.md")
    assert decided.returncode == single.returncode == 1, decided.stdout
    assert results_rows(tmp_path / "dec" / "results.jsonl") == results_rows(
        tmp_path / "one" / "results.jsonl")
    assert {r["route"] for r in results_rows(tmp_path / "dec" / "results.jsonl")} == {
        "gs/ragate.toml", "test_rag.py::test_mine"}
    assert untimed((tmp_path / "dec" / "report.md").read_text()) == untimed((
        tmp_path / "one" / "report.md").read_text())
    floors = floors_of(tmp_path / "dec" / "junit.xml")
    assert floors == floors_of(tmp_path / "one" / "junit.xml")
    mine = [props for name, (_, props) in floors.items()
             if "test_mine" in name and name.endswith("floor[citation_accuracy]")]
    assert [props["floor"] for props in mine] == ["0.3"], list(floors)


def test_a_replay_miss_in_a_shard_fails_the_gate_and_decide_promotes_what_held(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Three shards of one run (its cases share it): `--ragate-cache replay` with an empty
    cache, so every judged question fails in its own shard, and the decision fails the judged
    floors over the judge failures; and the colour anchors, which now hold in every shard
    (strict XPASS: each shard fails on its own anchors), are removed from anchors.jsonl's
    xfails by `ragate decide --ragate-promote`, here, where the decision runs."""
    root = here(sharded, pytester)
    conftest = root / "conftest.py"
    conftest.write_text(conftest.read_text().replace('"colour": [("m2", 0, 1)]',
                                                     '"colour": [("m1", 8, 9)]'))
    for i in (1, 2, 3):
        shard = run_here(pytester, "gs", "--ragate-cache=replay",
                         "-o", "ragate_judge_cache_dir=empty", f"--ragate-shard={i}/3",
                         f"--ragate-results=shards/{i}.jsonl")
        assert shard.returncode == 1, shard.stdout
        assert "no cached faithfulness verdict" in shard.stdout
        assert "XPASS" in shard.stdout, shard.stdout
    anchors_file = root / "gs" / "anchors.jsonl"
    assert anchors_file.read_text().count('"xfail"') == 10
    decided = decide(pytester, SHARDS, "--ragate-promote")
    assert decided.returncode == 1
    assert re.search(r"judge_coverage 0\.00 < floor 0\.95", decided.stdout)
    failed = {c.get("name") for c in ET.parse(root / "decided" / "junit.xml").getroot().iter(
        "testcase") if c.find("failure") is not None}
    assert "q001" in failed and "floor[faithfulness]" in failed
    assert anchors_file.read_text().count('"xfail"') == 0
    assert "ragate: promoted 10 strict xfails to hard assertions:" in decided.stdout


def test_a_sealed_goldset_asked_with_repeats_is_decided_without_its_key(
        sharded: Path, pytester: pytest.Pytester) -> None:
    """Shards of a sealed goldset asked each question twice (`ragate_repeat = 2`), holding
    RAGATE_SEAL_KEY: the decision, which asks nothing, runs without the key and decides as a
    keyed run does (the goldset's digest counts the sealed file, not the answers it opens
    to); it takes the shards' repeat without being told, decides over questions × 2 as the
    run does, and refuses another repeat count. One set of shards holds both cases."""
    from pytest_ragate.goldsets.sealing import seal_goldset
    from tests.test_sealing import FAST, KEY

    root = here(sharded, pytester)
    seal_goldset(root / "gs", KEY, kdf=FAST)
    assert not (root / "gs" / "expected.jsonl").exists()
    keyed = {"RAGATE_SEAL_KEY": KEY}
    twice = ("-o", "ragate_repeat=2")
    single = run_here(pytester, "gs", CACHE_OFF, *twice,
                      "--junitxml=twice/junit.xml", "--ragate-results=twice/results.jsonl",
                      "--ragate-report=twice/report.md", **keyed)
    for i in (1, 2, 3):
        shard = run_here(pytester, "gs", CACHE_OFF, *twice, f"--ragate-shard={i}/3",
                         f"--ragate-results=shards/{i}.jsonl", **keyed)
        assert shard.returncode == 0, shard.stdout
    decided = decide(pytester, SHARDS)  # no key in this process, no repeat given
    assert "refused to decide" not in decided.stdout, decided.stdout
    assert decided.returncode == single.returncode == 1
    rows = results_rows(root / "decided" / "results.jsonl")
    assert len(rows) == 2 * N_QUESTIONS and rows == results_rows(root / "twice" / "results.jsonl")
    assert all(row["expected"] is None for row in rows)
    assert untimed((root / "decided" / "report.md").read_text()) == untimed((
        root / "twice" / "report.md").read_text())
    assert floors_of(root / "decided" / "junit.xml") == floors_of(root / "twice" / "junit.xml")
    text = refused(decide(pytester, SHARDS, "-o", "ragate_repeat=3", out="thrice"), root,
                   out="thrice")
    assert "ragate_repeat = 3 here, but the results were asked with repeat 2" in text
