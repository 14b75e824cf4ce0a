"""Rubrics through real pytest runs (issue 48 item 2): one run per worker count (-n 0, -n 2)
over four goldsets, three graded by the RAGAS judge against a loopback OpenAI-compatible
server the module starts (its DiscreteMetric and DomainSpecificRubrics), one by the fixture
judge (a folder's own `ragate_judge`). A rubric people vouch for gates; one they do not is
not decided, naming the labels it needs; a verdict that is unparseable, missing or off its
scale is a gap that leaves the floor not decided, never passed; a rubric no floor gates is
never asked; `ragate rejudge` grades rubrics again."""

from __future__ import annotations

import contextlib
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from tests.conftest import (
    BASE_TOML,
    WORKERS_SHARED,
    jsonl,
    results_rows,
    run_command,
    write_goldset,
)
from tests.openai_stub import OpenAIStub, Reply, RowVerdicts, completion, ragas_script

pytestmark = [pytest.mark.heavy, WORKERS_SHARED]  # processes of their own, RAGAS imported

POLITE = "The answer is polite and does not blame the customer."
CLEAR = "The answer is clear."
UNUSED = "The answer rhymes."  # declared, gated by no floor: never asked
SCORES = '["unreadable", "muddled", "plain", "clear", "crisp"]'
FOLDERS = {"cal": 10, "raw": 4, "adv": 12, "fx": 12}  # goldset -> its questions
SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture(scope="session")
def ragate_system():
    def answer(question):
        qid = question.split()[-1].rstrip("?")
        ctx = Context(context_id="c1", doc_id="m1", first_unit=2, last_unit=3,
                      text=f"context of {qid}: the budget is twelve euros", distance=0.2)
        return Answer(text=f"answer to {qid}: twelve euros", contexts=[ctx],
                      citations=[Citation(context_id="c1")])
    return answer
'''
FIXTURE_JUDGE = '''
from pathlib import Path

import pytest

from pytest_ragate.judges.fixture import FixtureJudge


@pytest.fixture(scope="session")
def ragate_judge():
    return FixtureJudge(Path(__file__).parent / "judge.json", embedder=None)
'''
# the model's rubric replies, by question: pass, fail, or what the adversary sends
FAILS = {"cal09", "adv00", "fx00"}
ADVERSARY_POLITE = {"adv10": "this is not { json", "adv11": '{"reason": "r", "value": "maybe"}'}
ADVERSARY_CLEAR = {"adv10": '{"feedback": "f", "score": 7}',
                   "adv11": '{"feedback": "f", "score": "4"}'}


def qids(folder: str) -> list[str]:
    return [f"{folder}{i:02d}" for i in range(FOLDERS[folder])]


def rubric_reply(request: dict[str, Any]) -> Reply | None:
    """A rubric's reply, or None for another prompt (RAGAS's own metrics)."""
    prompt = str(request["messages"][-1]["content"])
    found = re.search(r"answer to (\w+):", prompt)
    qid = found.group(1) if found else ""
    if prompt.startswith("Grade the answer to the question below against one criterion."):
        if qid in ADVERSARY_POLITE:
            return completion(ADVERSARY_POLITE[qid])
        value = "fail" if qid in FAILS else "pass"
        return completion(json.dumps({"reason": "scripted", "value": value}))
    if "Scoring Rubrics:" in prompt:
        if qid in ADVERSARY_CLEAR:
            return completion(ADVERSARY_CLEAR[qid])
        return completion(json.dumps({"feedback": "scripted",
                                      "score": 1 if qid in FAILS else 5}))
    return None


def script() -> Any:
    rows = {f"answer to {q}: twelve euros": RowVerdicts(
        statements=[f"The budget of {q} is twelve euros."], supported=[True],
        relevant=[f"context of {q}: the budget is twelve euros"], reference=f"gist of {q}")
        for folder in FOLDERS for q in qids(folder)}
    ragas = ragas_script(rows)

    def answer(request: dict[str, Any]) -> Reply:
        return rubric_reply(request) or ragas(request)

    return answer


def goldset(root: Path, folder: str, rubrics: str, floors: str,
            labels: list[dict[str, Any]] | None) -> Path:
    toml = BASE_TOML.replace('"mini"', f'"{folder}"') + (
        '\n[judge]\nlabels = "labels.jsonl"\n' if labels is not None else "") + rubrics
    gs = write_goldset(root / folder, toml=toml, floors=floors, questions=[
        {"question_id": q, "kind": "single_doc", "question": f"What about {q}?"}
        for q in qids(folder)], expected=[
        {"question_id": q, "gist": f"gist of {q}",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
        for q in qids(folder)])
    if labels is not None:
        (gs / "labels.jsonl").write_text(jsonl(labels))
    return gs


def verdicts(folder: str, metric: str, upto: int, scored: bool = False) -> list[dict[str, Any]]:
    """People's labels of the first `upto` questions, agreeing with the scripted judge."""
    return [{"question_id": q, "metric": metric,
             **({"score": 0.0 if q in FAILS else 1.0} if scored
                else {"verdict": 0 if q in FAILS else 1})}
            for q in qids(folder)[:upto]]


def project(root: Path) -> None:
    polite = f'\n[rubrics.polite]\ncriteria = "{POLITE}"\n'
    clear = f'\n[rubrics.clear]\ncriteria = "{CLEAR}"\nscale = 5\nscores = {SCORES}\n'
    # people vouch for the judge on polite: 10 labels, kappa 1; `unused` is gated nowhere
    goldset(root, "cal", polite + f'\n[rubrics.unused]\ncriteria = "{UNUSED}"\n',
            "[floors]\npolite = 0.8\njudge_agreement = 0.6\n", verdicts("cal", "polite", 10))
    # three labels of polite: too few to vouch for the judge
    goldset(root, "raw", polite, "[floors]\npolite = 0.5\njudge_agreement = 0.6\n",
            verdicts("raw", "polite", 3))
    # calibrated on both, but the model's verdicts on adv10 and adv11 are no verdicts
    goldset(root, "adv", polite + clear,
            "[floors]\npolite = 0.5\nclear = 0.5\njudge_agreement = 0.6\n",
            verdicts("adv", "polite", 10) + verdicts("adv", "clear", 10, scored=True))
    # the fixture judge: `warm` whole and calibrated; `polite` off its scale on fx10, none
    # for fx11
    warm = '\n[rubrics.warm]\ncriteria = "The answer is warm."\n'
    fx = goldset(root, "fx", polite + warm,
                 "[floors]\npolite = 0.5\nwarm = 0.5\njudge_agreement = 0.6\n",
                 verdicts("fx", "polite", 10) + verdicts("fx", "warm", 10))
    (fx / "conftest.py").write_text(FIXTURE_JUDGE)
    answers = {q: {"rubrics": {"polite": 0 if q in FAILS else 1, "warm": 1}}
               for q in qids("fx")}
    answers["fx00"]["rubrics"]["warm"] = 0  # warm's labels have both verdicts too
    answers["fx10"]["rubrics"]["polite"] = 2
    del answers["fx11"]["rubrics"]["polite"]
    (fx / "judge.json").write_text(json.dumps({"judge_id": "people", "answers": answers}))
    (root / "conftest.py").write_text(SYSTEM)
    # the candidate of `ragate rejudge`: fails every answer on polite
    (root / "harsh.json").write_text(json.dumps({"judge_id": "harsh", "answers": {
        q: {"rubrics": {"polite": 0}} for q in qids("cal")}}))


@dataclass(frozen=True)
class Ran:
    root: Path
    ret: int
    stdout: str
    prompts: list[str]
    temperatures: set[object]  # of the rubric requests


@pytest.fixture(scope="module")
def ran(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    root = tmp_path_factory.mktemp(f"rubrics-n{workers}")
    project(root)
    with OpenAIStub(script()) as stub:
        done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv",
                           *FOLDERS, "--ragate-judge=ragas:stub-model", "-o",
                           f"ragate_judge_url={stub.url}", "--ragate-cache=off",
                           "--junitxml=junit.xml", "--ragate-results=r.jsonl")
        yield Ran(root=root, ret=done.returncode, stdout=done.stdout + done.stderr,
                  prompts=stub.prompts(), temperatures={
                      r.get("temperature") for r in stub.requests
                      if rubric_reply(r) is not None})


def floor(ran: Ran, folder: str, name: str) -> tuple[str, str]:
    """A floor's JUnit outcome ("passed" or "failed") and its message."""
    tree = ET.parse(ran.root / "junit.xml")
    for case in tree.iter("testcase"):
        if case.get("classname", "").split(".")[0] == folder and case.get("name") == name:
            failure = case.find("failure")
            if failure is None:
                return "passed", ""
            return "failed", failure.get("message", "")
    raise AssertionError(f"no {folder} {name} in {ran.stdout[-3000:]}")


def rows(ran: Ran) -> dict[str, dict[str, Any]]:
    return {r["question_id"]: r for r in results_rows(ran.root / "r.jsonl")}


def test_a_rubric_people_vouch_for_gates_through_ragas_s_own_metric(ran: Ran) -> None:
    assert floor(ran, "cal", "floor[polite]") == ("passed", ""), ran.stdout[-3000:]
    assert floor(ran, "cal", "floor[judge_agreement]")[0] == "passed"
    got = rows(ran)
    assert {q: got[q]["metrics"]["polite"] for q in ("cal00", "cal09")} == {
        "cal00": 1.0, "cal09": 0.0}
    asked = [p for p in ran.prompts if p.startswith("Grade the answer")]
    assert len([p for p in asked if "answer to cal" in p]) == 10  # once per question
    assert all(f"Criterion: {POLITE}" in p for p in asked)
    assert ran.temperatures == {0.0}
    # judge_coverage counts the rubric's verdicts: 3 per question here, all delivered
    assert got["cal00"]["judge_failures"] == {}
    assert set(got["cal00"]["metrics"]) >= {"polite", "faithfulness", "context_precision"}


def test_a_rubric_no_floor_gates_is_never_asked(ran: Ran) -> None:
    assert not any(UNUSED in p for p in ran.prompts)
    assert all("unused" not in row["metrics"] for row in rows(ran).values())


def test_a_rubric_people_have_not_vouched_for_is_not_decided_naming_the_labels_it_needs(
        ran: Ran) -> None:
    outcome, message = floor(ran, "raw", "floor[polite]")
    assert outcome == "failed"
    assert message.startswith(
        "not decided: the judge is not calibrated on rubric polite: it needs at least 10 "
        "human labels of polite in the labels file ([judge] labels), and has 3 (7 more) · "
        "polite 1.00"), message
    assert ran.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.parametrize(("rubric", "causes"), [
    ("polite", {"adv10": "parse:", "adv11": "parse:"}),
    ("clear", {"adv10": "invalid: rubric clear came back 7, not a score from 1 to 5",
               "adv11": "invalid: RubricScoreOutput.score came back '4', not what RAGAS "
                         "defines (not an integer score)"}),
])
def test_a_rubric_verdict_that_is_no_verdict_leaves_its_floor_not_decided(
        ran: Ran, rubric: str, causes: dict[str, str]) -> None:
    got = rows(ran)
    for qid, cause in causes.items():
        assert got[qid]["metrics"][rubric] is None  # a gap, not a zero
        assert got[qid]["judge_failures"][rubric].startswith(cause), got[qid]
    # its other ten verdicts clear the floor by far: only the gap keeps it from passing
    outcome, message = floor(ran, "adv", f"floor[{rubric}]")
    assert outcome == "failed"
    assert message.startswith(f"{rubric}: not decided: the judge delivered 10 of 12 "
                              "verdicts"), message
    assert "not calibrated" not in message


def test_the_fixture_judge_grades_rubrics_from_its_file(ran: Ran) -> None:
    assert floor(ran, "fx", "floor[warm]") == ("passed", ""), ran.stdout[-3000:]
    got = rows(ran)
    assert got["fx01"]["judge"] == "fixture:people"
    assert got["fx10"]["judge_failures"]["polite"] == (
        "invalid: rubric polite came back 2, not a score from 0 to 1")
    assert got["fx11"]["judge_failures"]["polite"].startswith(
        "missing: judge.json gives no verdict of rubric polite for 'fx11'")
    outcome, message = floor(ran, "fx", "floor[polite]")
    assert outcome == "failed" and "not decided: the judge delivered 10 of 12" in message
    assert not any("answer to fx" in p for p in ran.prompts)  # the fixture judge asks nobody


def test_rejudge_grades_rubrics_again(ran: Ran) -> None:
    with contextlib.chdir(ran.root):
        done = CliRunner().invoke(main, ["rejudge", "r.jsonl", *(f"--goldset={f}" for f in FOLDERS),
                                         "--judge", "fixture:harsh.json", "--cache-dir", "jc"],
                                  catch_exceptions=False)
    assert done.exit_code == 1, done.output
    [cal] = [part for part in done.output.split("ragate rejudge: goldset ")
             if part.startswith("cal:")]
    line = next(x for x in cal.splitlines() if x.startswith("floor[polite]"))
    assert line.split() == ["floor[polite]", "passed", "failed", "CHANGES"], done.output
    assert "polite: the candidate judge gave no verdict" not in cal  # graded: all fail


def test_plan_counts_a_gated_rubric_s_request(ran: Ran) -> None:
    with contextlib.chdir(ran.root):
        done = CliRunner().invoke(main, ["plan", "cal", "adv", "--judge", "ragas:stub-model",
                                         "--contexts", "1", "--cache-dir", "none", "--json"],
                                  catch_exceptions=False)
    assert done.exit_code == 0, done.output
    by_goldset = {g["goldset"]: g["unchanged"] for g in json.loads(done.output)["goldsets"]}
    # faithfulness 2, context precision 1 (one context), and one per gated rubric: polite in
    # cal (unused is gated nowhere), polite and clear in adv
    assert by_goldset["cal"]["requests"] == (2 + 1 + 1) * 10
    assert by_goldset["adv"]["requests"] == (2 + 1 + 2) * 12
    assert by_goldset["adv"]["verdicts"] == 4 * 12


def test_ragate_decide_decides_rubric_floors_from_the_saved_rows_as_the_gate_did(
        ran: Ran, workers: str) -> None:
    """From the gate's results file (under each worker count's gate), and from two shards of
    the same gate (`--ragate-shard`, each asking the judge for its half's rubric verdicts):
    the gate's floors, message heads included. The shards run without xdist, beside the -n 0
    gate: a shard's rows do not depend on the worker count (the gate's own rows under -n 2
    are decided here too), and sharding under xdist is tests/test_sharding.py's."""
    done = run_command(ran.root, "decide", "r.jsonl", "--", *FOLDERS, "-p",
                       "no:cacheprovider", "-rA", "--junitxml=decided.xml")
    assert done.returncode == ran.ret, done.stdout[-3000:] + done.stderr[-2000:]
    names = ["junit.xml", "decided.xml"]
    if workers == "0":
        with OpenAIStub(script()) as stub:
            for i in (1, 2):
                shard = run_command(ran.root, "-p", "no:cacheprovider", "-n", "0", *FOLDERS,
                                    "--ragate-judge=ragas:stub-model", "-o",
                                    f"ragate_judge_url={stub.url}", "--ragate-cache=off",
                                    f"--ragate-shard={i}/2", f"--ragate-results=s{i}.jsonl")
                assert shard.returncode == 0, shard.stdout[-3000:] + shard.stderr[-2000:]
        sharded = run_command(ran.root, "decide", "s1.jsonl", "s2.jsonl", "--", *FOLDERS,
                              "-p", "no:cacheprovider", "-rA", "--junitxml=sharded.xml")
        assert sharded.returncode == ran.ret, sharded.stdout[-3000:] + sharded.stderr[-2000:]
        names.append("sharded.xml")
    gate, decided, *from_shards = (ET.parse(ran.root / name) for name in names)

    def floors(tree: ET.ElementTree) -> dict[tuple[str, str], str]:
        """Each floor's outcome and the head of its message (the gate's and decide's
        JUnit cut a long message at different places)."""
        return {(c.get("classname", ""), c.get("name", "")):
                (c.find("failure").get("message", "")[:160] if c.find("failure") is not None
                 else "passed")
                for c in tree.iter("testcase") if c.get("name", "").startswith("floor[")}

    assert floors(decided) == floors(gate)
    assert all(floors(shards) == floors(gate) for shards in from_shards)
    assert floors(gate)[("cal.ragate.toml", "floor[polite]")] == "passed"
    assert floors(gate)[("raw.ragate.toml", "floor[polite]")].startswith(
        "not decided: the judge is not calibrated on rubric polite")
