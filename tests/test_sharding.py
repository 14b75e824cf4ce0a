"""A gate bigger than one machine: `--ragate-shard i/N` runs a slice and decides nothing;
`ragate decide` decides every shard's results as one run would, or refuses, naming why.

The project here is a synthetic goldset of 300 questions of three kinds, 30 anchors (some
strict-xfail), mechanical, kind, anchor and judged floors (a fixture judge that has no
verdict for some questions, so judge_coverage is decided on failures too), and a system whose
answers depend only on the question: three shards in separate processes, decided, must give
what one `-n 2` run gives.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.collect.sharding import deal
from pytest_ragate.outputs.results import Shard, read_results
from tests.conftest import BASE_TOML, FIXTURE_JUDGE_CONFTEST, jsonl, write_goldset

N_QUESTIONS = 300
KINDS = ["single_meeting"] * 4 + ["cross_meeting", "unanswerable"]  # by i % 6

FLOORS = """\
[floors]
citation_accuracy = 0.70
abstention_accuracy = 0.80
evidence_recall = { min = 0.90, xfail = "cross-meeting questions miss a span" }
faithfulness = 0.60
context_precision = 0.50

[floors.kind.single_meeting]
evidence_recall = 0.75

[floors.anchors.retrieval_miss]
hold_rate = 0.50
"""

SYSTEM = '''
import hashlib
import pytest
from pytest_ragate import Answer, Citation, Context

RIGHT = {"m1": (2, 3), "m3": (4, 5)}

def ctx(cid, doc, first, last, distance=0.2):
    return Context(context_id=cid, doc_id=doc, first_turn=first, last_turn=last,
                   text=f"{doc} turns {first}-{last}", distance=distance)

def behaviour(qid):
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 10

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
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
        spans = ([] if kind == "unanswerable" else [("m1", 2, 3)] if kind == "single_meeting"
                 else [("m1", 2, 3), ("m3", 4, 5)])
        rows.append({"question_id": f"q{i:03d}", "gist": "the budget" if spans else None,
                     "evidence": [{"doc_id": d, "first_turn": a, "last_turn": b}
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
                               "evidence": {"doc_id": span[0], "first_turn": span[1],
                                            "last_turn": span[2]}}
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


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest, or `ragate decide` (args starting with "decide"), in its own process."""
    if args[:1] == ("decide",):
        argv = [sys.executable, "-c", "from pytest_ragate.cli import main; main()", *args]
    else:
        argv = [sys.executable, "-m", "pytest", *args]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600,
                          env=_env())


def _env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(HF_HUB_OFFLINE="1", RAGAS_DO_NOT_TRACK="true", PYTHONHASHSEED="0")
    return env


TIMING = re.compile(r"\b\d+(\.\d+)?\s?s\b|in \d+\.\d+s")


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()
            if "question_id" in json.loads(line)]


def floors_of(junit: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """Each floor and regression test case: its outcome and its properties."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name", "")
        if not name.startswith(("floor[", "anchors", "regression[")) and "floor[" not in name:
            continue
        outcome = ("failed" if case.find("failure") is not None else
                   "skipped" if case.find("skipped") is not None else "passed")
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        found[f"{case.get('classname')}::{name}"] = (outcome, props)
    return found


def outcomes_of(junit: Path) -> Counter[str]:
    counts: Counter[str] = Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        counts["failed" if case.find("failure") is not None else
               "error" if case.find("error") is not None else
               "skipped" if case.find("skipped") is not None else "passed"] += 1
    return counts


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
    # another goldset of the run is split on its own: adding one changes nobody else's shard
    assert deal("gs/ragate.toml", names, anchors_, 3) == deal("gs/ragate.toml", names,
                                                             anchors_, 3)
    one_more = deal("gs/ragate.toml", [*names, "q999"], anchors_, 3)
    moved = sum(one_more[n] != s for n, s in deal("gs/ragate.toml", names, anchors_, 3).items())
    assert moved < len(names)  # a round-robin over a digest order: not a full reshuffle


def test_shard_flags_are_checked_before_anything_runs(project: Path) -> None:
    for args, message in [
            (["--ragate-shard=4/3", "--ragate-results=r.jsonl"], "index is at most the count"),
            (["--ragate-shard=two", "--ragate-results=r.jsonl"], "is not i/N"),
            (["--ragate-shard=1/3"], "needs --ragate-results"),
            (["--ragate-shard=1/3", "--ragate-results=r.jsonl", "--ragate-report=r.md"],
             "--ragate-report belong to `ragate decide`"),
            (["--ragate-shard=1/3", "--ragate-results=r.jsonl", "--ragate-decide=r.jsonl"],
             "one or the other")]:
        result = run(project, "gs", *args)
        assert result.returncode == 4, (args, result.stdout, result.stderr)
        assert message in result.stderr, (args, result.stderr)
