"""Evidence without arithmetic: where each unit lies in its document's text (the corpus
reader's one rule), character offsets mapped to units, a phrase found in a document, and
`ragate units` printing both."""

from __future__ import annotations

import itertools
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.goldsets.corpus import (
    Document,
    Turn,
    line_spans,
    load_corpus,
    paragraph_spans,
    split_lines,
    split_paragraphs,
)
from pytest_ragate.goldsets.loader import load_goldset_corpus
from pytest_ragate.goldsets.offsets import OffsetError, occurrences, units_of
from tests.conftest import touched_units

ROOT = Path(__file__).parent.parent
HANDBOOK = ROOT / "examples" / "handbook" / "goldset"
TIRON = ROOT / "goldsets" / "tiron-demo"

# the layouts a person's count of blank lines gets wrong: leading blank lines, a "blank" line
# holding spaces, three newlines, a CRLF file, a unit broken over two lines, trailing spaces
TRICKY = ("\n\n# Title  \n\nFirst unit, one line.\n \t\nSecond unit\nover two lines.\n\n\n"
          "Third unit.\r\n\r\nFourth unit. \n")


def _old_paragraphs(text: str) -> list[str]:
    """The rule the corpus reader had before it kept where units lie (the reference)."""
    return [part.strip() for part in re.split(r"\n[ \t\r]*\n", text) if part.strip()]


def _old_lines(text: str) -> list[str]:
    return [line.rstrip("\r").strip() for line in text.split("\n") if line.strip()]


def test_the_units_are_cut_as_the_reader_always_cut_them() -> None:
    rng = random.Random(40)
    alphabet = ["\n", "\n", " ", "\t", "\r", "a", "b", "é", "\u2028", "\x0c"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        assert split_paragraphs(text) == _old_paragraphs(text), repr(text)
        assert split_lines(text) == _old_lines(text), repr(text)
        for spans in (paragraph_spans(text), line_spans(text)):
            assert all(a < b for a, b in spans)
            assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(spans))


def _document(text: str) -> Document:
    spans = tuple(paragraph_spans(text))
    return Document("d", tuple(Turn(text[a:b]) for a, b in spans), Path("d.md"), text=text,
                    spans=spans)


@pytest.mark.parametrize("source", ["tricky", "returns"])
def test_every_range_of_characters_maps_to_the_units_it_touches(source: str) -> None:
    """Every start and end over a whole document (the handbook's returns.md, and a layout
    with the traps of counting blank lines), held to the reference: no range is off by one."""
    document = (_document(TRICKY) if source == "tricky"
                else load_goldset_corpus(HANDBOOK)["returns"])
    text, size = document.laid_out()[0], len(document.laid_out()[0])
    units = [turn.text for turn in document.turns]
    for start in range(size):
        for end in range(start + 1, size + 1):
            touched = touched_units(text, units, start, end)
            if not touched:
                with pytest.raises(OffsetError, match="only the whitespace between"):
                    units_of(document, start, end)
                continue
            assert units_of(document, start, end) == (touched[0], touched[-1]), (start, end)


def test_unit_boundaries_are_exact() -> None:
    document = _document(TRICKY)
    text, spans = document.laid_out()
    assert [text[a:b] for a, b in spans] == ["# Title", "First unit, one line.",
                                             "Second unit\nover two lines.", "Third unit.",
                                             "Fourth unit."]
    for number, (start, end) in enumerate(spans):
        assert units_of(document, start, end) == (number, number)  # exactly the unit
        assert units_of(document, start - 1, end + 1) == (number, number)  # and its margins
    (_, end1), (start2, _) = spans[1], spans[2]
    assert units_of(document, 0, start2) == (0, 1)  # ends where unit 2 begins: not in it
    assert units_of(document, end1 - 1, start2 + 1) == (1, 2)  # one character of each
    size = len(text)
    with pytest.raises(OffsetError, match=rf"run past the end of its text \({size} characters"):
        units_of(document, size - 5, size + 1)
    with pytest.raises(OffsetError, match="not a range"):
        units_of(document, 5, 5)


def test_a_transcript_is_its_turns_joined_by_newlines() -> None:
    """A tiron transcript's text is its `.txt` file: offsets a splitter took in that file
    name its lines."""
    corpus = load_goldset_corpus(TIRON)
    document = corpus["tiron-IS1009a"]
    text, spans = document.laid_out()
    assert text == document.source.with_name("tiron-IS1009a.txt").read_text().rstrip("\n")
    line = text.splitlines()[74]
    start = text.index(line)
    assert units_of(document, start, start + len(line)) == (74, 74)
    assert spans[74] == (start, start + len(line))


def test_a_phrase_is_found_with_case_and_line_breaks_ignored() -> None:
    document = _document(TRICKY)
    [place] = occurrences(document, "UNIT OVER   two")
    assert (place.first, place.last) == (2, 2)
    assert document.laid_out()[0][place.start:place.end] == "unit\nover two"
    [across] = occurrences(document, "one line. second")  # the blank line between: a space
    assert (across.first, across.last) == (1, 2)
    assert [(p.first, p.last) for p in occurrences(document, "unit")] == [
        (1, 1), (2, 2), (3, 3), (4, 4)]
    assert occurrences(document, "no such words") == []
    with pytest.raises(OffsetError, match="empty"):
        occurrences(document, " \n ")


def test_the_reader_keeps_each_documents_text(tmp_path: Path) -> None:
    (tmp_path / "d.md").write_text(TRICKY, newline="")
    corpus, problems = load_corpus(tmp_path, ["*.md"], "documents", tmp_path / "ragate.toml",
                                   "line")
    assert problems == []
    text, spans = corpus["d"].laid_out()
    assert text == TRICKY
    assert [text[a:b] for a, b in spans] == [t.text for t in corpus["d"].turns] == [
        "# Title", "First unit, one line.", "Second unit", "over two lines.", "Third unit.",
        "Fourth unit."]


def units(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["units", *args])
    return result.exit_code, result.output


def test_ragate_units_numbers_a_document_and_finds_a_phrase() -> None:
    code, output = units(str(HANDBOOK))
    assert code == 0 and "returns: 5 units (" in output, output
    code, output = units(str(HANDBOOK), "returns")
    assert code == 0, output
    assert output.splitlines()[1:3] == ["0  # Returns and refunds",
                                        "1  You can return any Lumo lamp within 30 days of "
                                        "delivery, for any reason, as long as it comes back "
                                        "in its original box."]
    code, output = units(str(HANDBOOK), "--find", "five  WORKING\ndays")
    assert code == 0, output
    assert output.splitlines() == [
        "returns unit 3: …They arrive within «five working days» after the lamp reac…",
        '  {"doc_id": "returns", "first_unit": 3, "last_unit": 3}']
    code, output = units(str(HANDBOOK), "returns", "--find", "warranty")
    assert code == 1 and "'warranty' is in no returns of the corpus" in output
    code, output = units(str(HANDBOOK), "retruns")
    assert code == 1 and "no document 'retruns' in the corpus (6 documents; did you mean " \
        "returns?)" in output
    code, output = units(str(TIRON), "tiron-IS1009a", "--find", "remember with the budget")
    assert code == 0 and '{"doc_id": "tiron-IS1009a", "first_unit": 74, "last_unit": 74}' \
        in output, output
