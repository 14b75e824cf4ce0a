"""`pytest --collect-only -m rag_gate` shows what a goldset holds, node ids unchanged.

The tree view names each goldset (eval_version, questions per kind, anchors, floors), each
question's kind and text, each anchor's kind and claim, and each floor's threshold and strict
xfail; `-q` still prints bare node ids, and sealed answers never show.
"""

from __future__ import annotations

import json

import pytest

from pytest_ragate.goldsets.sealed import Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from tests.conftest import esc, expected_rows, question_rows, write_goldset

LONG = ("In the kick-off meeting, which budget did the project manager propose for the "
        "remote control, and who objected to it first?")

FLOORS = """\
[floors]
citation_accuracy = 0.6
evidence_recall = { min = 0.9, xfail = "retrieval misses" }
faithfulness = 0.8

[floors.kind.unanswerable]
abstention_accuracy = 1.0
"""

ANCHORS = [
    {"anchor_id": "a1", "kind": "retrieval_miss", "claim": "The budget is 3 euros.",
     "evidence": {"doc_id": "m1", "first_unit": 3, "last_unit": 3}},
    {"anchor_id": "a2", "kind": "off_topic_control", "claim": "Who won the 1998 World Cup?",
     "evidence": None, "xfail": "the embedder finds football in budgets"},
]


def questions() -> list[dict[str, str]]:
    rows = question_rows()
    rows[0]["question"] = LONG
    return rows


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    root = write_goldset(pytester.path / "gs", floors=FLOORS, questions=questions())
    with (root / "ragate.toml").open("a") as toml:
        toml.write('\n[anchors]\nfile = "anchors.jsonl"\n')
    (root / "anchors.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ANCHORS))
    return pytester


def collect(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    result = pytester.runpytest("--collect-only", "-m", "rag_gate", "-p", "no:cacheprovider",
                                *args, "gs")
    assert result.ret == 0, result.stdout.str()
    return result


def test_tree_shows_goldset_questions_anchors_and_floors(project: pytest.Pytester) -> None:
    result = collect(project)
    result.stdout.fnmatch_lines(esc(
        "collected 11 items",
        "*<Dir gs>",
        "    <GoldsetFile ragate.toml: mini, eval_version 7, 4 questions (multi_doc 1, "
        "single_doc 2, unanswerable 1), 2 anchors, 5 floors>",
        '      <QuestionItem q1 single_doc: "In the kick-off meeting, which budget did the '
        'project manag…">',
        '      <QuestionItem q2 single_doc: "What about q2?">',
        '      <QuestionItem q3 multi_doc: "What about q3?">',
        '      <QuestionItem q4 unanswerable: "What about q4?">',
        '      <AnchorItem anchor[a1] retrieval_miss: "The budget is 3 euros.">',
        '      <AnchorItem anchor[a2] off_topic_control: "Who won the 1998 World Cup?", strict '
        "xfail: the embedder finds football in budgets>",
        "      <FloorItem floor[citation_accuracy] ≥ 0.60>",
        "      <FloorItem floor[evidence_recall] ≥ 0.90, strict xfail: retrieval misses>",
        "      <FloorItem floor[faithfulness] ≥ 0.80, judged>",
        "      <FloorItem floor[unanswerable:abstention_accuracy] ≥ 1.00>",
        "      <FloorItem floor[judge_coverage] ≥ 0.95, judged>",  # added: a judged floor
        "*11 tests collected in *",
    ), consecutive=False)
    assert LONG not in result.stdout.str()  # clipped at the default verbosity


def test_verbose_shows_whole_questions_and_no_repeated_docstring(
        project: pytest.Pytester) -> None:
    result = collect(project, "-v")
    result.stdout.fnmatch_lines([f'      <QuestionItem q1 single_doc: "{LONG}">',
                                 '      <QuestionItem q2 single_doc: "What about q2?">'],
                                consecutive=True)  # nothing printed between two items


def test_quiet_lists_plain_node_ids(project: pytest.Pytester) -> None:
    result = collect(project, "-q")
    result.stdout.fnmatch_lines(esc(
        "gs/ragate.toml::q1",
        "gs/ragate.toml::q2",
        "gs/ragate.toml::q3",
        "gs/ragate.toml::q4",
        "gs/ragate.toml::anchor[a1]",
        "gs/ragate.toml::anchor[a2]",
        "gs/ragate.toml::floor[citation_accuracy]",
        "gs/ragate.toml::floor[evidence_recall]",
        "gs/ragate.toml::floor[faithfulness]",
        "gs/ragate.toml::floor[unanswerable:abstention_accuracy]",
        "gs/ragate.toml::floor[judge_coverage]",
        "",
    ), consecutive=True)
    result.stdout.fnmatch_lines(["11 tests collected in *"])
    assert not [line for line in result.outlines if line.lstrip().startswith("<")]


def test_selection_by_keyword_and_marker_still_works(project: pytest.Pytester) -> None:
    result = collect(project, "-q", "-k", "q3 or floor and evidence")
    result.stdout.fnmatch_lines(esc("gs/ragate.toml::q3",
                                    "gs/ragate.toml::floor[evidence_recall]", ""),
                                consecutive=True)
    result.stdout.fnmatch_lines(["2/11 tests collected (9 deselected) in *"])
    judged = project.runpytest("--collect-only", "-q", "-m", "rag_gate and slow",
                               "-p", "no:cacheprovider", "gs")
    judged.stdout.fnmatch_lines(esc("gs/ragate.toml::floor[faithfulness]",
                                    "gs/ragate.toml::floor[judge_coverage]", ""),
                                consecutive=True)
    judged.stdout.fnmatch_lines(["2/11 tests collected (9 deselected) in *"])


def test_sealed_goldset_shows_questions_never_answers(pytester: pytest.Pytester,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.1\n")
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    gists = [row["gist"] for row in expected_rows() if row["gist"]]
    monkeypatch.delenv("RAGATE_SEAL_KEY", raising=False)
    result = collect(pytester)
    result.stdout.fnmatch_lines(esc(
        "    <GoldsetFile ragate.toml: mini, eval_version 7, 4 questions (*), 1 floor, "
        "answers sealed (no RAGATE_SEAL_KEY: scored items skip)>",
        '      <QuestionItem q1 single_doc: "What about q1?">',
    ))
    monkeypatch.setenv("RAGATE_SEAL_KEY", "s3cret")
    opened = collect(pytester, "-v")
    opened.stdout.fnmatch_lines(["    <GoldsetFile ragate.toml: mini, * 1 floor, answers sealed>"])
    for text in (result.stdout.str(), opened.stdout.str()):
        assert not any(gist in text for gist in gists)
