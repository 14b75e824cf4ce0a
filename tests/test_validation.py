"""Bad goldsets: one test per validation rule (docs/goldsets.md).

Each rule is checked where the user meets it: `load_goldset` raising `GoldsetError` (every
problem names a file and a field, plus the line or question id where there is one), and for
several rules a real pytest run (a collection error, exit 2) and `ragate validate` (exit 1, one
line per problem).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError, Problem
from tests.conftest import (
    BASE_TOML,
    DOCS,
    EVIDENCE,
    QUESTIONS,
    corpus_rows,
    expected_rows,
    question_rows,
    write_goldset,
)

# --- helpers ------------------------------------------------------------------------------


def problems_of(root: Path) -> list[Problem]:
    """The problems `load_goldset` raises for `root`; fails the test if it loads."""
    with pytest.raises(GoldsetError) as info:
        load_goldset(root)
    assert info.value.problems, "GoldsetError raised with no problems"
    assert str(info.value) == "\n".join(str(p) for p in info.value.problems)
    return info.value.problems


def the_problem(problems: list[Problem], path: Path, field: str) -> Problem:
    """The single problem about `field` of `path` (the file must be named, not just the dir)."""
    matches = [p for p in problems if p.path == path and p.field == field]
    listing = "\n".join(map(str, problems))
    assert len(matches) == 1, f"want one problem at {path} {field!r}, got:\n{listing}"
    return matches[0]


def with_questions(extra: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return question_rows(QUESTIONS + extra)


def spans(**changes: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
    """The default expected answers, with some questions' evidence replaced."""
    return expected_rows({**EVIDENCE, **changes})


def corrupt_line(path: Path, lineno: int) -> None:
    """Cut the closing characters off one (1-based) line, leaving the others intact."""
    lines = path.read_text().split("\n")
    lines[lineno - 1] = lines[lineno - 1][:-2]
    path.write_text("\n".join(lines))


def write_expected_folder(root: Path, rows: list[dict[str, Any]],
                          names: list[str] | None = None) -> Path:
    """Turn the goldset's expected answers into a folder of <name>.json."""
    (root / "expected.jsonl").unlink()
    toml = root / "ragate.toml"
    toml.write_text(toml.read_text().replace('"expected.jsonl"', '"expected"'))
    folder = root / "expected"
    folder.mkdir()
    for i, row in enumerate(rows):
        name = names[i] if names else row["question_id"]
        (folder / f"{name}.json").write_text(json.dumps(row))
    return folder


def write_tiron(folder: Path, meeting_id: str, segments: int, lines: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    speakers = folder / f"{meeting_id}.speakers.json"
    speakers.write_text(json.dumps({
        "meeting_id": meeting_id,
        "segments": [{"t_start": float(i), "t_end": i + 0.5, "speaker": "A"}
                     for i in range(segments)],
    }))
    (folder / f"{meeting_id}.txt").write_text(
        "".join(f"{meeting_id} line {i}\n" for i in range(lines)))
    return speakers


TIRON_TOML = BASE_TOML.replace('"corpus/*.jsonl"', '"tiron/*.speakers.json"').replace(
    '"segments-jsonl"', '"tiron"')


def tiron_goldset(root: Path, short: str | None = None) -> Path:
    """The default goldset on a tiron corpus; `short` names a meeting missing one .txt line."""
    write_goldset(root, toml=TIRON_TOML)
    for doc, n in DOCS.items():
        write_tiron(root / "tiron", doc, n, n - 1 if doc == short else n)
    return root


# --- the baseline -------------------------------------------------------------------------


def test_default_goldset_is_valid(tmp_path: Path) -> None:
    goldset = load_goldset(write_goldset(tmp_path / "gs"))
    assert [c.question.question_id for c in goldset.cases] == ["q1", "q2", "q3", "q4"]


# --- pairing and ids ----------------------------------------------------------------------


def test_duplicate_question_id_names_line(tmp_path: Path) -> None:
    questions = question_rows()
    questions.append(dict(questions[1]))  # q2 again, on line 5
    root = write_goldset(tmp_path / "gs", questions=questions)
    problem = the_problem(problems_of(root), root / "questions.jsonl", "question_id")
    assert (problem.line, problem.question_id) == (5, "q2")
    assert "duplicate" in problem.message
    assert "line 2" in problem.message  # where the first one is


def test_duplicate_expected_answer(tmp_path: Path) -> None:
    expected = expected_rows()
    expected.append(dict(expected[0]))  # q1 again, on line 5
    root = write_goldset(tmp_path / "gs", expected=expected)
    problems = problems_of(root)
    problem = the_problem(problems, root / "expected.jsonl", "question_id")
    assert (problem.line, problem.question_id) == (5, "q1")
    assert "duplicate" in problem.message
    assert len(problems) == 1


def test_question_without_expected_answer(tmp_path: Path) -> None:
    expected = [row for row in expected_rows() if row["question_id"] != "q3"]
    root = write_goldset(tmp_path / "gs", expected=expected)
    problems = problems_of(root)
    problem = the_problem(problems, root / "questions.jsonl", "question_id")
    assert (problem.line, problem.question_id) == (3, "q3")
    assert "no expected answer" in problem.message
    assert len(problems) == 1


def test_expected_answer_without_question(tmp_path: Path) -> None:
    expected = expected_rows()
    expected.append({"question_id": "q9", "gist": None, "evidence": []})
    root = write_goldset(tmp_path / "gs", expected=expected)
    problems = problems_of(root)
    problem = the_problem(problems, root / "expected.jsonl", "question_id")
    assert (problem.line, problem.question_id) == (5, "q9")
    assert "no question 'q9'" in problem.message
    assert "questions.jsonl" in problem.message
    assert len(problems) == 1


# --- the declared mix ---------------------------------------------------------------------


def test_mix_that_matches_loads(tmp_path: Path) -> None:
    toml = BASE_TOML + "mix = { single_doc = 2, multi_doc = 1, unanswerable = 1 }\n"
    assert len(load_goldset(write_goldset(tmp_path / "gs", toml=toml)).cases) == 4


def test_mix_count_differs(tmp_path: Path) -> None:
    toml = BASE_TOML + "mix = { single_doc = 3, multi_doc = 1, unanswerable = 1 }\n"
    root = write_goldset(tmp_path / "gs", toml=toml)
    problems = problems_of(root)
    problem = the_problem(problems, root / "ragate.toml", "questions.mix.single_doc")
    assert "3" in problem.message and "2" in problem.message
    assert len(problems) == 1


def test_mix_kind_present_but_not_declared(tmp_path: Path) -> None:
    toml = BASE_TOML + "mix = { single_doc = 2, multi_doc = 1 }\n"
    root = write_goldset(tmp_path / "gs", toml=toml)
    problems = problems_of(root)
    problem = the_problem(problems, root / "ragate.toml", "questions.mix.unanswerable")
    assert "1 unanswerable" in problem.message
    assert len(problems) == 1


# --- what each kind of expected answer carries ---------------------------------------------


def answer(qid: str, gist: str | None, evidence: list[tuple[str, int, int]]) -> dict[str, Any]:
    return {"question_id": qid, "gist": gist,
            "evidence": [{"doc_id": d, "first_unit": a, "last_unit": b}
                         for d, a, b in evidence]}


def replacing(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The default expected answers with `row` in place of its question's (or appended)."""
    rows = [r for r in expected_rows() if r["question_id"] != row["question_id"]]
    rows.insert(int(row["question_id"][1:]) - 1, row)
    return rows


# a custom kind is declared (an undeclared one is a typo until shown otherwise)
DECLARES_PROCEDURAL = BASE_TOML + 'kinds = ["procedural"]\n'


@dataclass(frozen=True)
class AnswerRule:
    """Expected answers breaking one rule, and the one problem that must name it."""

    expected: list[dict[str, Any]]
    line: int
    question_id: str
    field: str
    says: str
    questions: tuple[tuple[str, str], ...] = ()


ANSWER_RULES: dict[str, AnswerRule] = {
    "single_doc without evidence": AnswerRule(
        replacing(answer("q1", "a gist", [])), 1, "q1", "evidence",
        "single_doc question needs evidence"),
    "multi_doc without evidence": AnswerRule(
        replacing(answer("q3", "a gist", [])), 3, "q3", "evidence",
        "multi_doc question needs evidence"),
    "single_doc without gist": AnswerRule(
        replacing(answer("q1", None, [("m1", 2, 3)])), 1, "q1", "gist",
        "single_doc question needs a gist"),
    "multi_doc with a blank gist": AnswerRule(
        replacing(answer("q3", "  ", [("m1", 0, 0), ("m3", 4, 5)])), 3, "q3", "gist",
        "multi_doc question needs a gist"),
    "unanswerable with evidence": AnswerRule(
        replacing(answer("q4", None, [("m1", 0, 0)])), 4, "q4", "evidence",
        "an unanswerable question has no evidence"),
    "unanswerable with a gist": AnswerRule(
        replacing(answer("q4", "it was 3 euros", [])), 4, "q4", "gist",
        "an unanswerable question has no gist"),
    "custom kind with gist but no evidence": AnswerRule(
        replacing(answer("q5", "a gist", [])), 5, "q5", "evidence",
        "procedural question has a gist but no evidence", questions=(("q5", "procedural"),)),
    "multi_doc spanning one document": AnswerRule(
        replacing(answer("q3", "a gist", [("m1", 0, 0), ("m1", 4, 5)])), 3, "q3", "evidence",
        "spans 2+ documents"),
    "single_doc spanning two documents": AnswerRule(
        replacing(answer("q1", "a gist", [("m1", 2, 3), ("m2", 4, 5)])), 1, "q1", "evidence",
        "spans one document"),
    "cited turn beyond the last turn": AnswerRule(
        replacing(answer("q3", "a gist", [("m1", 0, 0), ("m3", 4, 6)])), 3, "q3",
        "evidence[1].last_unit", "unit 6 does not exist (m3 has units 0..5)"),
    "cited document not in the corpus": AnswerRule(
        replacing(answer("q3", "a gist", [("m1", 0, 0), ("m9", 4, 5)])), 3, "q3",
        "evidence[1].doc_id", "'m9' is not in the corpus"),
}


@pytest.mark.parametrize("rule", ANSWER_RULES.values(), ids=ANSWER_RULES.keys())
def test_answer_rule(tmp_path: Path, rule: AnswerRule) -> None:
    root = write_goldset(tmp_path / "gs", questions=with_questions(list(rule.questions)),
                         expected=rule.expected, toml=DECLARES_PROCEDURAL)
    problems = problems_of(root)
    problem = the_problem(problems, root / "expected.jsonl", rule.field)
    assert (problem.line, problem.question_id) == (rule.line, rule.question_id)
    assert rule.says in problem.message
    assert len(problems) == 1, "\n".join(map(str, problems))


@pytest.mark.parametrize("row", [answer("q5", "a gist", [("m2", 0, 1)]), answer("q5", None, [])],
                         ids=["answerable", "abstains"])
def test_custom_kind_is_answerable_exactly_when_it_has_evidence(tmp_path: Path,
                                                                row: dict[str, Any]) -> None:
    root = write_goldset(tmp_path / "gs", questions=with_questions([("q5", "procedural")]),
                         expected=replacing(row), toml=DECLARES_PROCEDURAL)
    case = load_goldset(root).cases[4]
    assert (case.question.kind, case.expected is not None) == ("procedural", True)
    assert case.expected is not None and case.expected.must_abstain is (not row["evidence"])


def test_last_unit_on_the_cited_document_is_accepted(tmp_path: Path) -> None:
    # m3 has 6 turns: 5 is its last, so citing 0..5 is fine (the beyond test cites 6).
    root = write_goldset(tmp_path / "gs",
                         expected=replacing(answer("q3", "g", [("m1", 0, 0), ("m3", 0, 5)])))
    expected = load_goldset(root).cases[2].expected
    assert expected is not None
    assert expected.spans[1].last_unit == 5


def test_last_unit_before_first_unit(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs",
                         expected=replacing(answer("q1", "a gist", [("m1", 5, 3)])))
    problem = the_problem(problems_of(root), root / "expected.jsonl", "evidence[0].last_unit")
    assert problem.line == 1
    assert "last_unit 3 < first_unit 5" in problem.message


def test_last_unit_before_first_unit_names_question_only_once(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs",
                         expected=replacing(answer("q1", "a gist", [("m1", 5, 3)])))
    problems = problems_of(root)
    assert [(p.question_id, p.field) for p in problems] == [("q1", "evidence[0].last_unit")]


@pytest.mark.parametrize(("old", "new"), [("meeting_id", "doc_id"),
                                            ("first_turn", "first_unit"),
                                            ("last_turn", "last_unit")])
def test_a_pre_release_name_is_one_error_naming_the_new_one(tmp_path: Path, old: str,
                                                             new: str) -> None:
    expected = expected_rows()
    expected[2]["evidence"][1][old] = expected[2]["evidence"][1].pop(new)
    root = write_goldset(tmp_path / "gs", expected=expected)
    problem = the_problem(problems_of(root), root / "expected.jsonl", "evidence[1]")
    assert (problem.line, problem.question_id) == (3, "q3")
    assert problem.message.endswith(f"{old} was renamed {new}")


def test_a_file_of_pre_release_names_says_so_once(tmp_path: Path) -> None:
    expected = expected_rows()
    for row in expected:
        for span in row["evidence"]:
            span["first_turn"], span["last_turn"] = span.pop("first_unit"), span.pop("last_unit")
    root = write_goldset(tmp_path / "gs", expected=expected)
    problems = problems_of(root)
    assert [(p.line, p.field, p.message) for p in problems] == [
        (1, "evidence[0]", "first_turn was renamed first_unit; last_turn was renamed last_unit "
         "(and 3 more like it)")]


def test_doc_id_citing_a_missing_turn_is_still_checked(tmp_path: Path) -> None:
    expected = replacing({"question_id": "q2", "gist": "g",
                          "evidence": [{"doc_id": "m2", "first_unit": 0, "last_unit": 12}]})
    root = write_goldset(tmp_path / "gs", expected=expected)
    problem = the_problem(problems_of(root), root / "expected.jsonl", "evidence[0].last_unit")
    assert (problem.line, problem.question_id) == (2, "q2")


# --- the questions file never holds answers -------------------------------------------------


@pytest.mark.parametrize("leak", ["gist", "evidence"])
def test_questions_file_holding_an_answer_is_refused(tmp_path: Path, leak: str) -> None:
    questions = question_rows()
    questions[0][leak] = "the budget is 3 euros" if leak == "gist" else []
    root = write_goldset(tmp_path / "gs", questions=questions)
    problem = the_problem(problems_of(root), root / "questions.jsonl", leak)
    assert problem.line == 1
    assert "never holds a gist or evidence" in problem.message
    assert "expected" in problem.message  # says where it belongs


def test_questions_file_holding_a_gist_gives_one_problem(tmp_path: Path) -> None:
    questions = question_rows()
    questions[0]["gist"] = "the budget is 3 euros"
    root = write_goldset(tmp_path / "gs", questions=questions)
    assert [p.field for p in problems_of(root)] == ["gist"]


def test_unknown_field_in_questions_file(tmp_path: Path) -> None:
    questions = question_rows()
    questions[2]["answer"] = "3 euros"
    root = write_goldset(tmp_path / "gs", questions=questions)
    problem = the_problem(problems_of(root), root / "questions.jsonl", "answer")
    assert problem.line == 3
    assert problem.message == "unknown field"


# --- malformed JSON lines -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "lineno"), [("questions.jsonl", 2), ("expected.jsonl", 3),
                                              ("corpus/meetings.jsonl", 5)])
def test_malformed_json_line_names_its_line(tmp_path: Path, name: str, lineno: int) -> None:
    root = write_goldset(tmp_path / "gs")
    corrupt_line(root / name, lineno)
    problem = the_problem(problems_of(root), root / name, "<json>")
    assert problem.line == lineno
    assert "malformed JSON" in problem.message


def test_blank_lines_do_not_shift_line_numbers(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs")
    path = root / "questions.jsonl"
    path.write_text("\n" + path.read_text().replace("\n", "\n\n", 1))  # blanks at 1 and 3
    corrupt_line(path, 5)  # q3, now on line 5
    problem = the_problem(problems_of(root), path, "<json>")
    assert problem.line == 5


# --- corpora --------------------------------------------------------------------------------


def test_unknown_corpus_format(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs",
                         toml=BASE_TOML.replace('"segments-jsonl"', '"pdf"'))
    problems = problems_of(root)
    problem = the_problem(problems, root / "ragate.toml", "corpus.format")
    assert "segments-jsonl" in problem.message  # lists what is known
    assert len(problems) == 1


def test_corpus_glob_matching_nothing_is_an_error(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs",
                         toml=BASE_TOML.replace('"corpus/*.jsonl"', '"corpora/*.jsonl"'))
    problem = the_problem(problems_of(root), root / "ragate.toml", "corpus.paths[0]")
    assert "'corpora/*.jsonl' matches no file" in problem.message


def test_second_corpus_glob_matching_nothing_is_named(tmp_path: Path) -> None:
    toml = BASE_TOML.replace('["corpus/*.jsonl"]', '["corpus/*.jsonl", "extra/*.jsonl"]')
    root = write_goldset(tmp_path / "gs", toml=toml)
    problems = problems_of(root)
    problem = the_problem(problems, root / "ragate.toml", "corpus.paths[1]")
    assert "'extra/*.jsonl' matches no file" in problem.message
    assert not [p for p in problems if p.field == "corpus.paths[0]"]


def test_tiron_pair_loads(tmp_path: Path) -> None:
    goldset = load_goldset(tiron_goldset(tmp_path / "gs"))
    assert sorted(goldset.corpus.documents) == ["m1", "m2", "m3"]
    assert goldset.corpus["m3"].turns[5].text == "m3 line 5"


def test_tiron_txt_line_count_differs_from_segments(tmp_path: Path) -> None:
    root = tiron_goldset(tmp_path / "gs", short="m3")
    problem = the_problem(problems_of(root), root / "tiron" / "m3.speakers.json", "segments")
    assert "6 segments but m3.txt has 5 lines" in problem.message


def test_segments_jsonl_turns_not_consecutive(tmp_path: Path) -> None:
    corpus = corpus_rows()
    corpus[3]["unit"] = 7  # m1: 0, 1, 2, 7 on line 4
    root = write_goldset(tmp_path / "gs", corpus=corpus)
    problems = [p for p in problems_of(root) if p.line == 4]
    problem = the_problem(problems, root / "corpus" / "meetings.jsonl", "unit")
    assert "expected unit 3 of 'm1'" in problem.message
    assert "got 7" in problem.message


def test_segments_under_the_pre_release_name_say_so_once(tmp_path: Path) -> None:
    corpus = [{("turn" if k == "unit" else k): v for k, v in row.items()} for row in corpus_rows()]
    root = write_goldset(tmp_path / "gs", corpus=corpus)
    assert [(p.path.name, p.line, p.field, p.message) for p in problems_of(root)] == [
        ("meetings.jsonl", 1, "<record>", "turn was renamed unit (format segments-jsonl: see "
         f"docs/goldsets.md#corpus-formats) (and {len(corpus) - 1} more like it)")]


def test_one_corpus_gap_gives_one_problem(tmp_path: Path) -> None:
    corpus = corpus_rows()
    corpus[3]["unit"] = 7
    root = write_goldset(tmp_path / "gs", corpus=corpus)
    assert [(p.field, p.line) for p in problems_of(root)] == [("unit", 4)]


def test_corpus_glob_matching_nothing_gives_one_problem(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs",
                         toml=BASE_TOML.replace('"corpus/*.jsonl"', '"corpora/*.jsonl"'))
    assert [p.field for p in problems_of(root)] == ["corpus.paths[0]"]


# --- ragate.toml ----------------------------------------------------------------------------


def test_malformed_toml(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs", toml='name = "mini"\neval_version = = "7"\n')
    problem = the_problem(problems_of(root), root / "ragate.toml", "<toml>")
    assert "malformed TOML" in problem.message
    assert "line 2" in problem.message


def test_unknown_top_level_key(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs", toml='colour = "red"\n' + BASE_TOML)
    problem = the_problem(problems_of(root), root / "ragate.toml", "colour")
    assert problem.message == "unknown field"


@pytest.mark.parametrize(("typo", "meant"), [
    ("citation_acuracy", "citation_accuracy"),
    ('"evidence_recal@10"', "evidence_recall@10 or evidence_recall"),
    ("latency_95_s", "latency_p95_s"),
    ("flakey_rate", "flaky_rate"),
    ("recall", None),
])
def test_unknown_metric_in_floors(tmp_path: Path, typo: str, meant: str | None) -> None:
    """One problem: the name, the names it may have meant, and every name a floor may give
    (the registry's, so the list cannot leave a family out)."""
    from pytest_ragate.scoring.registry import METRICS

    root = write_goldset(tmp_path / "gs", floors=f"[floors]\n{typo} = {{ max = 0.5 }}\n")
    problems = problems_of(root)
    name = typo.strip('"')
    problem = the_problem(problems, root / "ragate.toml", f"floors.{name}")
    hint = f": did you mean {meant}?" if meant else ""
    assert problem.message == (f"unknown metric {name!r}{hint} (known: "
                               f"{', '.join(METRICS.vocabulary())})")
    for family in ("evidence_recall@K", "latency_pQ_s", "cost_per_question", "flaky_rate",
                   "pass^k", "pass@k"):
        assert family in METRICS.vocabulary()
    assert len(problems) == 1


def test_an_optional_judged_metric_misspelled_names_the_one_meant() -> None:
    """`[judge] optional` and `ragate_judge_optional` name judged metrics: a typo is told the
    judged metric it may have meant; a metric no judge gives gets no guess among them."""
    from pytest_ragate.wording.floors import not_judged_metrics

    said = not_judged_metrics("[judge] optional",
                              ["faithfulnes", "answer_relevancy", "citation_accuracy"])
    assert said.startswith("[judge] optional: faithfulnes, answer_relevancy, citation_accuracy: "
                           "not a judged metric (judged metrics: faithfulness, "
                           "context_precision, answer_relevance, answer_correctness, "
                           "factual_correctness, judge_coverage, judge_agreement); "
                           "faithfulnes: did you mean faithfulness?; "
                           "answer_relevancy: did you mean answer_relevance?; name ")
    assert "citation_accuracy: did you mean" not in said


@pytest.mark.parametrize(("spec", "says"), [
    ("1.5", "less than or equal to 1"),
    ("-0.1", "greater than or equal to 0"),
    ('{ min = 1.5, xfail = "later" }', "less than or equal to 1"),
])
def test_floor_outside_unit_interval(tmp_path: Path, spec: str, says: str) -> None:
    root = write_goldset(tmp_path / "gs", floors=f"[floors]\ncitation_accuracy = {spec}\n")
    problems = problems_of(root)
    assert {p.path for p in problems} == {root / "ragate.toml"}
    assert all(p.field.startswith("floors.citation_accuracy") for p in problems)
    assert any(says in p.message for p in problems), "\n".join(map(str, problems))


def test_floor_outside_unit_interval_is_one_plain_problem(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs", floors="[floors]\ncitation_accuracy = 1.5\n")
    assert [p.field for p in problems_of(root)] == ["floors.citation_accuracy"]


@pytest.mark.parametrize(("floors", "field", "says"), [
    ("[floors]\nkind = 3\n", "floors.kind", "must be a table of kinds"),
    ("[floors.kind]\nunanswerable = 1.0\n", "floors.kind.unanswerable",
     "must be a table of metric floors"),
    ("[floors.kind.unanswerable]\nabstention = 1.0\n", "floors.kind.unanswerable.abstention",
     "unknown metric 'abstention'"),
], ids=["kind-not-a-table", "kind-entry-not-a-table", "unknown-metric-in-kind"])
def test_bad_kind_floor_table(tmp_path: Path, floors: str, field: str, says: str) -> None:
    root = write_goldset(tmp_path / "gs", floors=floors)
    problems = problems_of(root)
    problem = the_problem(problems, root / "ragate.toml", field)
    assert says in problem.message
    assert len(problems) == 1


def test_good_floors_load(tmp_path: Path) -> None:
    floors = ('[floors]\ncitation_accuracy = 0.9\nevidence_recall = { min = 0.5, xfail = "x" }\n'
              "[floors.kind.unanswerable]\nabstention_accuracy = 1.0\n")
    goldset = load_goldset(write_goldset(tmp_path / "gs", floors=floors))
    assert sorted(f.name for f in goldset.floors) == [
        "floor[citation_accuracy]", "floor[evidence_recall]",
        "floor[unanswerable:abstention_accuracy]"]


# --- expected answers as a folder -----------------------------------------------------------


def test_expected_folder_loads(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs")
    write_expected_folder(root, expected_rows())
    answers = [c.expected for c in load_goldset(root).cases]
    assert [a.question_id if a else None for a in answers] == ["q1", "q2", "q3", "q4"]


def test_expected_folder_file_name_differs_from_question_id(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs")
    rows = expected_rows()
    folder = write_expected_folder(root, rows, names=["q1", "q2", "q3", "q4-old"])
    problem = the_problem(problems_of(root), folder / "q4-old.json", "question_id")
    assert "'q4'" in problem.message and "'q4-old'" in problem.message


def test_expected_folder_answer_rule_names_file_and_question(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs")
    folder = write_expected_folder(root, replacing(answer("q4", "a gist", [])))
    problem = the_problem(problems_of(root), folder / "q4.json", "gist")
    assert (problem.line, problem.question_id) == (None, "q4")


@pytest.mark.parametrize("expected", ["expected.csv", "nowhere"])
def test_expected_neither_folder_nor_jsonl(tmp_path: Path, expected: str) -> None:
    root = write_goldset(tmp_path / "gs",
                         toml=BASE_TOML.replace('"expected.jsonl"', f'"{expected}"'))
    (root / "expected.csv").write_text("question_id,gist\n")
    problem = the_problem(problems_of(root), root / "ragate.toml", "questions.expected")
    assert f"'{expected}' is neither a folder" in problem.message


# --- every problem, in one run, through every entry point -----------------------------------


def independent_errors(root: Path) -> Path:
    """Three unrelated mistakes: a duplicate question id (questions.jsonl:5), a turn beyond
    m3's last (q3) and a misspelt floor metric."""
    questions = question_rows()
    questions.append(dict(questions[1]))
    return write_goldset(root, questions=questions,
                         expected=replacing(answer("q3", "g", [("m1", 0, 0), ("m3", 4, 6)])),
                         floors="[floors]\nfaithfullness = 0.8\n")


THREE_ERRORS = [("questions.jsonl", 5, "q2", "question_id"),
              ("expected.jsonl", 3, "q3", "evidence[1].last_unit"),
              ("ragate.toml", None, None, "floors.faithfullness")]


def test_all_problems_reported_in_one_run(tmp_path: Path) -> None:
    root = independent_errors(tmp_path / "gs")
    problems = problems_of(root)
    got = sorted(((p.path.name, p.line, p.question_id, p.field) for p in problems), key=str)
    assert got == sorted(THREE_ERRORS, key=str)


@dataclass(frozen=True)
class EntryRule:
    build: Callable[[Path], object]
    lines: tuple[str, ...]  # '{root}'-relative starts of the expected problem lines


def _dup_question(root: Path) -> None:
    questions = question_rows()
    questions.append(dict(questions[1]))
    write_goldset(root, questions=questions)


def _turn_beyond(root: Path) -> None:
    write_goldset(root, expected=replacing(answer("q3", "g", [("m1", 0, 0), ("m3", 4, 6)])))


def _glob_nothing(root: Path) -> None:
    write_goldset(root, toml=BASE_TOML.replace('"corpus/*.jsonl"', '"corpora/*.jsonl"'))


def _bad_json(root: Path) -> None:
    write_goldset(root)
    corrupt_line(root / "expected.jsonl", 2)


def _unknown_metric(root: Path) -> None:
    write_goldset(root, floors="[floors]\nrecall = 0.5\n")


def _questions_hold_gist(root: Path) -> None:
    questions = question_rows()
    questions[0]["gist"] = "leak"
    write_goldset(root, questions=questions)


ENTRY_RULES = {
    "duplicate-question-id": EntryRule(
        _dup_question, ("{root}/questions.jsonl:5: [q2] question_id: duplicate id",)),
    "turn-beyond": EntryRule(
        _turn_beyond, ("{root}/expected.jsonl:3: [q3] evidence[1].last_unit: unit 6",)),
    "glob-matches-nothing": EntryRule(
        _glob_nothing, ("{root}/ragate.toml: corpus.paths[0]: 'corpora/*.jsonl' matches no",)),
    "malformed-json": EntryRule(
        _bad_json, ("{root}/expected.jsonl:2: <json>: malformed JSON",)),
    "unknown-metric": EntryRule(
        _unknown_metric, ("{root}/ragate.toml: floors.recall: unknown metric 'recall'",)),
    "questions-hold-gist": EntryRule(
        _questions_hold_gist, ("{root}/questions.jsonl:1: [q1] gist: ",)),
    "three-independent-errors": EntryRule(independent_errors, (
        "{root}/questions.jsonl:5: [q2] question_id: duplicate id",
        "{root}/expected.jsonl:3: [q3] evidence[1].last_unit: unit 6",
        "{root}/ragate.toml: floors.faithfullness: unknown metric")),
}


def _starts(lines: list[str], prefix: str) -> int:
    return sum(line.startswith(prefix) for line in lines)


@pytest.mark.parametrize("rule", ENTRY_RULES.values(), ids=ENTRY_RULES.keys())
def test_collection_error_names_file_and_field(pytester: pytest.Pytester,
                                               rule: EntryRule) -> None:
    root = pytester.path / "gs"
    rule.build(root)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    lines = result.outlines
    assert any("ERROR collecting gs/ragate.toml" in line for line in lines), result.stdout.str()
    for want in rule.lines:
        prefix = want.format(root=root.resolve())
        assert _starts(lines, prefix) == 1, f"{prefix!r} not in:\n{result.stdout.str()}"
    assert result.parseoutcomes().get("passed", 0) == 0
    # the goldset is what failed: no hint to run it (the command just run)
    assert not any("ragate: no goldset ran" in line for line in lines), result.stdout.str()


@pytest.mark.parametrize("rule", ENTRY_RULES.values(), ids=ENTRY_RULES.keys())
def test_ragate_validate_prints_one_line_per_problem(tmp_path: Path, rule: EntryRule) -> None:
    root = tmp_path / "gs"
    rule.build(root)
    problems = problems_of(root)
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines == [str(p) for p in problems]
    for want in rule.lines:
        assert _starts(lines, want.format(root=root)) == 1, result.output


def test_ragate_validate_ok_on_a_valid_goldset(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs")
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"ok {root / 'ragate.toml'}: mini, 4 questions, 3 documents, 0 floors",
        "  4 of 4 evidence spans unpinned: a corpus edit that moves or changes their text goes "
        "unnoticed (`ragate pin` pins them)"]


def test_ragate_validate_reports_every_goldset_under_a_folder(tmp_path: Path) -> None:
    write_goldset(tmp_path / "a-good")
    bad = tmp_path / "b-bad"
    _turn_beyond(bad)
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if not line.startswith("  ")]
    assert len(lines) == 2  # (the good goldset's indented notes aside: its unpinned spans)
    assert lines[0].startswith(f"ok {tmp_path / 'a-good' / 'ragate.toml'}: ")
    assert lines[1].startswith(f"{bad / 'expected.jsonl'}:3: [q3] evidence[1].last_unit: ")


@pytest.mark.heavy  # runs the installed `ragate` command
def test_ragate_command_exits_nonzero(tmp_path: Path) -> None:
    root = independent_errors(tmp_path / "gs")
    ragate = Path(sys.executable).with_name("ragate")
    done = subprocess.run([str(ragate), "validate", str(root)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert len(done.stdout.splitlines()) == len(THREE_ERRORS)
    lines = done.stdout.splitlines()
    assert _starts(lines, f"{root / 'questions.jsonl'}:5: [q2] question_id: ") == 1



def test_decorator_floors_override_the_toml_floor_they_name_and_keep_the_others() -> None:
    """How `@ragate.floor` and ragate.toml combine (docs/your-system.md, step 5): the
    toml's floors hold unless the decorator names the same metric, kind and slice; then the
    decorator's replaces it whole (a bare number drops the toml's xfail); of stacked
    decorators the top one wins; judge_coverage comes with judged floors, as in a toml."""
    import pytest_ragate as ragate
    from pytest_ragate.goldsets.floors_table import parse_floors
    from pytest_ragate.items.collection import merge_floor_layers, route_floors
    from pytest_ragate.items.route import route_spec

    toml = parse_floors({"citation_accuracy": {"min": 0.7, "xfail": "known miss"},
                         "abstention_accuracy": 0.9,
                         "kind": {"unanswerable": {"abstention_accuracy": 1.0}},
                         "anchors": {"retrieval_miss": {"evidence_recall": 0.5}}},
                        Path("ragate.toml"))

    @ragate.floor(citation_accuracy=0.8)                     # on top: applied last, wins
    @ragate.floor(citation_accuracy=0.6, faithfulness=0.5)
    @ragate.floor(kind="unanswerable", abstention_accuracy=0.95)
    def test_rag() -> None: ...

    spec = route_spec(test_rag)
    assert spec is not None
    decorated = parse_floors(merge_floor_layers(spec.floors), Path("test_rag.py"))
    floors = {f.name: (f.min, f.xfail) for f in route_floors(toml, decorated)}
    assert floors == {
        "floor[citation_accuracy]": (0.8, None),               # the decorator's, no xfail
        "floor[abstention_accuracy]": (0.9, None),             # the toml's, kept
        "floor[unanswerable:abstention_accuracy]": (0.95, None),
        "floor[anchors:retrieval_miss:evidence_recall]": (0.5, None),  # listed, skipped
        "floor[faithfulness]": (0.5, None),                    # the decorator's own
        "floor[judge_coverage]": (0.95, None),                 # with a judged floor
    }
