"""`ragate init`: a goldset scaffolded over a corpus folder, validated as it is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main

HANDBOOK = Path(__file__).parent.parent / "examples" / "handbook" / "docs"


def init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["init", *args])
    return result.exit_code, result.output


def test_init_writes_a_goldset_that_validates_once_it_has_questions(tmp_path: Path) -> None:
    code, output = init(str(tmp_path / "gs"), "--corpus", str(HANDBOOK / "*"))
    assert code == 0, output
    assert "corpus: 6 documents, 29 units" in output
    written = sorted(p.name for p in (tmp_path / "gs").iterdir())
    assert written == ["conftest.py", "expected.jsonl", "questions.jsonl", "ragate.toml"]
    toml = (tmp_path / "gs" / "ragate.toml").read_text()
    assert 'format = "documents"' in toml and "# [floors]" in toml
    assert 'raise NotImplementedError("connect your RAG system in' in (
        tmp_path / "gs" / "conftest.py").read_text()

    (tmp_path / "gs" / "questions.jsonl").write_text(json.dumps(
        {"question_id": "q1", "kind": "single_doc", "question": "How long is the warranty?"})
        + "\n")
    (tmp_path / "gs" / "expected.jsonl").write_text(json.dumps(
        {"question_id": "q1", "gist": "two years",
         "evidence": [{"doc_id": "warranty", "first_unit": 1, "last_unit": 1}]}) + "\n")
    validated = CliRunner().invoke(main, ["validate", str(tmp_path / "gs")])
    assert validated.exit_code == 0, validated.output
    assert "gs, 1 questions, 6 documents" in validated.output


def test_init_never_overwrites_and_says_when_the_corpus_is_missing(tmp_path: Path) -> None:
    code, output = init(str(tmp_path / "gs"), "--corpus", str(tmp_path / "nowhere" / "*.md"))
    assert code == 1 and "matches no file: nothing written" in output
    assert not (tmp_path / "gs").exists()
    assert init(str(tmp_path / "gs"), "--corpus", str(HANDBOOK / "*"))[0] == 0
    code, output = init(str(tmp_path / "gs"), "--corpus", str(HANDBOOK / "*"))
    assert code == 1 and "exists already: nothing written" in output


def test_init_reports_what_is_wrong_with_the_corpus(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("One paragraph.\n")
    (docs / "empty.md").write_text("\n\n")
    (docs / "latin.txt").write_bytes(b"caf\xe9\n")
    code, output = init(str(tmp_path / "gs"), "--corpus", str(docs / "*"))
    assert code == 1
    assert "empty.md: doc_id: document 'empty' is empty" in output
    assert "latin.txt: <file>: is not UTF-8: byte 0xe9 at line 1, column 4" in output


@pytest.mark.parametrize("files, fmt", [(["a.speakers.json"], "tiron"),
                                        (["a.jsonl"], "documents-jsonl"),
                                        (["a.md", "b.txt"], "documents")])
def test_the_format_is_guessed_from_the_files(files: list[str], fmt: str) -> None:
    from pytest_ragate.scaffold import guess_format

    assert guess_format([Path(f) for f in files]) == fmt
