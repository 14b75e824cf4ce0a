"""Ordinary documents as a corpus: a folder of .md/.txt files or a JSONL of {doc_id, text},
split into numbered units; evidence as a unit range, a whole document or a context id, each
scored by its own rule; the generic kinds single_doc and multi_doc."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate import Answer, Citation, Context
from pytest_ragate.goldsets.corpus import load_corpus, split_lines, split_paragraphs
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.records import ContextRef, Span, WholeDocument, score_answer
from tests.conftest import jsonl, results_rows

RETURNS = """# Returns

You can return any product within 30 days.

Refunds go back to the card you paid with,
within five working days.

Opened software cannot be returned.
"""
SHIPPING = "Orders ship in two days.\n\nExpress shipping costs 9 euros.\n"


def handbook(root: Path, toml_extra: str = "", expected: list[dict] | None = None,
             questions: list[dict] | None = None) -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "returns.md").write_text(RETURNS)
    (root / "docs" / "shipping.txt").write_text(SHIPPING)
    (root / "ragate.toml").write_text(
        'name = "handbook"\n[corpus]\npaths = ["docs/*"]\nformat = "documents"\n'
        '[questions]\nfile = "questions.jsonl"\nexpected = "expected.jsonl"\n' + toml_extra)
    questions = questions or [
        {"question_id": "refund", "kind": "single_doc", "question": "How fast is a refund?"},
        {"question_id": "both", "kind": "multi_doc", "question": "Return and ship times?"},
        {"question_id": "chunk", "kind": "single_doc", "question": "Software returns?"},
        {"question_id": "warranty", "kind": "unanswerable", "question": "How long is the "
         "warranty?"}]
    expected = expected or [
        {"question_id": "refund", "gist": "five working days",
         "evidence": [{"doc_id": "returns", "first_unit": 2, "last_unit": 2}]},
        {"question_id": "both", "gist": "30 days, two days",
         "evidence": [{"doc_id": "returns"}, {"doc_id": "shipping"}]},
        {"question_id": "chunk", "gist": "not when opened",
         "evidence": [{"context_id": "returns#3", "doc_id": "returns"}]},
        {"question_id": "warranty", "gist": None, "evidence": []}]
    (root / "questions.jsonl").write_text(jsonl(questions))
    (root / "expected.jsonl").write_text(jsonl(expected))
    return root


def test_paragraphs_and_lines_are_numbered_units() -> None:
    assert split_paragraphs(RETURNS) == [
        "# Returns", "You can return any product within 30 days.",
        "Refunds go back to the card you paid with,\nwithin five working days.",
        "Opened software cannot be returned."]
    assert split_lines("a\n\n  b  \r\nc") == ["a", "b", "c"]


def test_a_folder_of_documents_and_a_documents_jsonl(tmp_path: Path) -> None:
    goldset = load_goldset(handbook(tmp_path / "gs"))
    corpus = goldset.corpus
    assert sorted(corpus.documents) == ["returns", "shipping"]
    assert len(corpus["returns"].turns) == 4 and corpus.unit == "unit"
    labels = [case.expected_labels for case in goldset.cases]
    assert labels == [["[returns · units 2–2]"],
                      ["[returns · whole document]", "[shipping · whole document]"],
                      ["[context returns#3]"], []]

    rows = tmp_path / "docs.jsonl"
    rows.write_text(jsonl([{"doc_id": "returns", "text": RETURNS},
                           {"doc_id": "shipping", "text": SHIPPING}]))
    by_line, problems = load_corpus(tmp_path, ["docs.jsonl"], "documents-jsonl",
                                    tmp_path / "ragate.toml", "line")
    assert not problems
    assert len(by_line["returns"].turns) == 5  # every non-blank line


def test_each_form_of_evidence_is_scored_by_its_own_rule() -> None:
    returns_2 = Context(context_id="returns#2", doc_id="returns", first_unit=2, last_unit=2)
    returns_3 = Context(context_id="returns#3", doc_id="returns", first_unit=3, last_unit=3)
    other = Context(context_id="x", doc_id="shipping", first_unit=0, last_unit=1)
    answer = Answer(text="a", contexts=[other, returns_3, returns_2], citations=[
        Citation(context_id="returns#3"), Citation(context_id="x")])
    span = score_answer(answer, [Span("returns", 2, 2)])
    assert span["evidence_ranks"] == [3] and span["citations_correct"] == 0  # overlap only
    document = score_answer(answer, [WholeDocument("returns")])
    assert document["evidence_ranks"] == [2] and document["citations_correct"] == 1
    by_id = score_answer(answer, [ContextRef("returns#3", "returns")])
    assert by_id["evidence_ranks"] == [2] and by_id["citations_correct"] == 1
    # a context id matches exactly: the same text under another id is not it
    assert score_answer(answer, [ContextRef("returns#2", "returns")])["citations_correct"] == 0


@pytest.mark.parametrize("evidence, field, says", [
    ({"doc_id": "returns", "context_id": "c1", "first_unit": 1, "last_unit": 1}, "evidence[0]",
     "not both"),
    ({"doc_id": "returns", "first_unit": 1}, "evidence[0]", "needs both first_unit and "
     "last_unit"),
    ({"first_unit": 1, "last_unit": 2}, "evidence[0]", "needs doc_id"),
    ({"doc_id": "returns", "first_unit": 2, "last_unit": 9}, "evidence[0].last_unit",
     "unit 9 does not exist (returns has units 0..3)"),
    ({"doc_id": "faq"}, "evidence[0].doc_id", "document 'faq' is not in the corpus"),
], ids=["both forms", "half a span", "no document", "past the end", "unknown document"])
def test_malformed_evidence_names_its_field(tmp_path: Path, evidence: dict, field: str,
                                            says: str) -> None:
    root = handbook(tmp_path / "gs", expected=[
        {"question_id": "refund", "gist": "g", "evidence": [evidence]},
        {"question_id": "both", "gist": "g", "evidence": [{"doc_id": "returns"},
                                                          {"doc_id": "shipping"}]},
        {"question_id": "chunk", "gist": "g",
         "evidence": [{"context_id": "returns#3", "doc_id": "returns"}]},
        {"question_id": "warranty", "gist": None, "evidence": []}])
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    [problem] = caught.value.problems
    assert (problem.question_id, problem.field) == ("refund", field)
    assert says in problem.message


def test_multi_doc_needs_two_documents_and_single_doc_one(tmp_path: Path) -> None:
    root = handbook(tmp_path / "gs", expected=[
        {"question_id": "refund", "gist": "g", "evidence": [{"doc_id": "returns"},
                                                            {"doc_id": "shipping"}]},
        {"question_id": "both", "gist": "g", "evidence": [{"doc_id": "returns"}]},
        {"question_id": "chunk", "gist": "g",
         "evidence": [{"context_id": "returns#3", "doc_id": "returns"}]},
        {"question_id": "warranty", "gist": None, "evidence": []}])
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    found = {(p.question_id, p.message) for p in caught.value.problems}
    assert found == {("refund", "a single_doc question spans one document, this one "
                                "['returns', 'shipping']"),
                     ("both", "a multi_doc question spans 2+ documents, this one only "
                              "['returns']")}


SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

UNITS = {"returns": 4, "shipping": 2}

@pytest.fixture
def ragate_system():
    def answer(text):
        if "warranty" in text:
            return Answer.abstain()
        wanted = {"refund": ("returns", 2), "Return": ("returns", 1),
                  "Software": ("returns", 3)}
        doc, unit = next(v for k, v in wanted.items() if k in text)
        contexts = [Context(context_id=f"{doc}#{unit}", doc_id=doc, first_unit=unit,
                            last_unit=unit, text="...")]
        if "ship" in text:
            contexts.append(Context(context_id="shipping#0", doc_id="shipping", first_unit=0,
                                    last_unit=0, text="..."))
        return Answer(text="an answer", contexts=contexts,
                      citations=[Citation(context_id=c.context_id) for c in contexts])
    return answer
'''


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_handbook_goldset_gates_end_to_end(pytester: pytest.Pytester, workers: str) -> None:
    handbook(pytester.path / "gs", "[floors]\ncitation_accuracy = 1.0\nevidence_recall = 1.0\n"
             "abstention_accuracy = 1.0\n\n[floors.kind.multi_doc]\nevidence_recall = 1.0\n")
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", workers, "gs",
                                           "--ragate-results=r.jsonl", "-rA")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert rows["both"]["evidence_ranks"] == [1, 2] and rows["chunk"]["evidence_ranks"] == [1]
    assert rows["both"]["kind"] == "multi_doc"
