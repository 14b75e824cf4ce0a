"""`ragate init`: a goldset scaffolded over a corpus folder, validated as it is written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from tests.conftest import expect, run_pytester, system_test_in_tests

HANDBOOK = Path(__file__).parent.parent / "examples" / "handbook" / "docs"


def init(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["init", *args])
    return result.exit_code, result.output


@pytest.fixture(autouse=True)
def _in_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragate init` runs in the project's folder: here, the test's own."""
    monkeypatch.chdir(tmp_path)


def test_init_writes_a_goldset_that_validates_once_it_has_questions(tmp_path: Path) -> None:
    code, output = init(str(tmp_path / "gs"), "--corpus", str(HANDBOOK / "*"))
    assert code == 0, output
    assert "corpus: 6 documents, 29 units" in output
    written = sorted(p.name for p in (tmp_path / "gs").iterdir())
    assert written == ["expected.jsonl", "questions.jsonl", "ragate.toml"]
    toml = (tmp_path / "gs" / "ragate.toml").read_text()
    assert 'format = "documents"' in toml and "# [floors]" in toml
    assert 'raise NotImplementedError("connect your RAG system in' in (
        tmp_path / "conftest.py").read_text()  # the project's: both routes see it
    assert "system: ragate_system in conftest.py, seen by the goldset's items and by every " \
        "test under this folder (a @ragate.goldset test in tests/ too)" in output

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
    assert not (tmp_path / "gs").exists() and not (tmp_path / "conftest.py").exists()
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
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]  # nothing written


def test_a_conftest_of_yours_is_never_edited(tmp_path: Path) -> None:
    """Your conftest.py without ragate_system stays as it is (the stub goes beside the
    goldset, which says who sees it); with one, the goldset uses it and no stub is written."""
    (tmp_path / "conftest.py").write_text("import pytest\n")
    code, output = init(str(tmp_path / "gs"), "--corpus", str(HANDBOOK / "*"))
    assert code == 0 and (tmp_path / "conftest.py").read_text() == "import pytest\n"
    assert (tmp_path / "gs" / "conftest.py").is_file()
    assert f"system: ragate_system in {tmp_path / 'gs' / 'conftest.py'}, seen by the " \
        "goldset's items only (conftest.py exists here and is not edited); for a " \
        "@ragate.goldset test elsewhere to see it, move it to a conftest.py in a folder " \
        "above both" in output
    mine = "import pytest\n\n\n@pytest.fixture(scope='session')\ndef ragate_system():\n" \
        "    return None\n"
    (tmp_path / "conftest.py").write_text(mine)
    code, output = init(str(tmp_path / "gs2"), "--corpus", str(HANDBOOK / "*"))
    assert code == 0 and not (tmp_path / "gs2" / "conftest.py").exists()
    assert (tmp_path / "conftest.py").read_text() == mine
    assert "system: conftest.py:5 defines ragate_system already: the goldset uses it" in output


def test_the_scaffolded_system_serves_both_routes(pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The goldset's own items and a `@ragate.goldset` test under tests/ that asks for
    ragate_system answer with the one `ragate init` wrote (the trial's decorated test got
    none: the fixture was in the goldset's folder)."""
    monkeypatch.chdir(pytester.path)
    code, output = init("goldsets/hb", "--corpus", str(HANDBOOK / "*"))
    assert code == 0, output
    shipped = HANDBOOK.parent / "goldset"
    for name in ("questions.jsonl", "expected.jsonl"):
        (pytester.path / "goldsets" / "hb" / name).write_text((shipped / name).read_text())
    stub = (pytester.path / "conftest.py").read_text()
    (pytester.path / "conftest.py").write_text(re.sub(r"raise NotImplementedError\(.*\)",
                                                      "return Answer.abstain()", stub))
    system_test_in_tests(pytester.path, "goldsets/hb")
    result = run_pytester(pytester, "0", "goldsets/hb", "tests")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=24)  # 12 questions by each route
    expect(result, "hb (goldsets/hb/ragate.toml): system: ragate_system (conftest.py:*",
           "hb (tests/test_rag.py::test_mine): system: test function "
           "tests/test_rag.py::test_mine*")


@pytest.mark.parametrize("files, fmt", [(["a.speakers.json"], "tiron"),
                                        (["a.jsonl"], "documents-jsonl"),
                                        (["a.md", "b.txt"], "documents")])
def test_the_format_is_guessed_from_the_files(files: list[str], fmt: str) -> None:
    from pytest_ragate.scaffold import guess_format

    assert guess_format([Path(f) for f in files]) == fmt
