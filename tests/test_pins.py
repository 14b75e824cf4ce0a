"""Evidence pins (goldsets/pins.py): a span's fingerprint, and its check against the corpus as
it is now: unchanged, moved (same or another document), stale (edited or gone)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_ragate.goldsets.corpus import Corpus, Document, Turn, load_corpus
from pytest_ragate.goldsets.pins import (
    QUOTE_CHARS,
    CorpusText,
    Moved,
    Pin,
    Stale,
    Unchanged,
    Unpinnable,
    normalise,
)

PARAS = ["The handbook opens here.", "Refunds are paid within 14 days of the request.",
         "Support answers on weekdays.", "Offices close at six."]


def corpus_of(docs: dict[str, list[str]]) -> Corpus:
    return Corpus({d: Document(d, tuple(Turn(t) for t in units), Path(f"{d}.md"))
                   for d, units in docs.items()}, unit="unit")


def pinned(docs: dict[str, list[str]], doc_id: str, first: int, last: int) -> Pin:
    return CorpusText(corpus_of(docs)).pin(doc_id, first, last)


def test_normalise_ignores_case_whitespace_layout_and_typography() -> None:
    assert normalise("  It\u2019s  \u201cDONE\u201d\n\n\u2014 ok\u00ad ") == "it's \"done\" - ok"
    assert normalise("ﬁve") == "five"  # NFKC


def test_a_pin_holds_digest_length_and_a_short_quote() -> None:
    long = "word " * 40
    pin = pinned({"h": [long, "next"]}, "h", 0, 1)
    assert pin.chars == len(normalise(long)) + len(" next")
    assert pin.quote == normalise(long)[:QUOTE_CHARS] and len(pin.quote) == QUOTE_CHARS
    assert pin.digest.startswith("sha256:") and len(pin.digest) == 7 + 64
    assert Pin.model_validate_json(pin.model_dump_json()) == pin


def test_the_same_text_unchanged_whatever_its_whitespace_and_case() -> None:
    pin = pinned({"h": PARAS}, "h", 1, 2)
    edited = ["The handbook opens here.", "REFUNDS are paid  within\n14 days of the request.",
              "Support answers on weekdays.", "Offices close at six."]
    assert CorpusText(corpus_of({"h": edited})).check("h", 1, 2, pin) == Unchanged()


def test_a_paragraph_inserted_above_moves_the_span() -> None:
    pin = pinned({"h": PARAS}, "h", 1, 2)
    now = corpus_of({"h": ["New intro.", *PARAS]})
    assert CorpusText(now).check("h", 1, 2, pin) == Moved(doc_id="h", first_unit=2,
                                                          last_unit=3)


def test_text_moved_to_another_document_with_a_neighbour_is_found_there() -> None:
    pin = pinned({"h": PARAS, "z": ["zzz"]}, "h", 1, 1)
    now = corpus_of({"h": [PARAS[0], PARAS[3]], "z": ["zzz", PARAS[1], PARAS[2]]})
    assert CorpusText(now).check("h", 1, 1, pin) == Moved(doc_id="z", first_unit=1,
                                                          last_unit=1)
    alone = corpus_of({"h": [PARAS[0], PARAS[3]], "z": ["zzz", PARAS[1]]})
    check = CorpusText(alone).check("h", 1, 1, pin)  # neither neighbour came along
    assert isinstance(check, Stale) and check.places == 1


def test_paragraphs_merged_are_words_added_around_the_text_stale() -> None:
    pin = pinned({"h": PARAS}, "h", 2, 2)
    merged = [PARAS[0], PARAS[1] + " " + PARAS[2], PARAS[3]]
    check = CorpusText(corpus_of({"h": merged})).check("h", 2, 2, pin)
    assert isinstance(check, Stale) and check.places == 0


def test_of_several_places_the_one_with_its_neighbours_wins_none_is_stale() -> None:
    pin = pinned({"h": PARAS}, "h", 3, 3)
    kept = corpus_of({"h": [PARAS[3], "a", "b", PARAS[2], PARAS[3], "e"]})
    assert CorpusText(kept).check("h", 3, 3, pin) == Moved(doc_id="h", first_unit=4,
                                                           last_unit=4)
    lost = corpus_of({"h": [PARAS[3], "a", "b", "c", "d", PARAS[3], "e"]})
    check = CorpusText(lost).check("h", 3, 3, pin)
    assert isinstance(check, Stale) and check.places == 2 and not check.gone


def test_edited_text_is_stale_with_its_quote_and_the_nearest_current_text() -> None:
    pin = pinned({"h": PARAS}, "h", 1, 1)
    now = corpus_of({"h": [PARAS[0], "Refunds are paid within 30 days of the request.",
                           PARAS[2]]})
    check = CorpusText(now).check("h", 1, 1, pin)
    assert isinstance(check, Stale) and not check.gone
    assert check.quote == normalise(PARAS[1])
    assert check.nearest is not None and check.nearest.first_unit == 1
    assert "30 days" in check.nearest.text and 80 < check.nearest.similarity < 100


def test_a_deleted_document_is_stale_and_gone_with_the_nearest_text_anywhere() -> None:
    pin = pinned({"h": PARAS, "z": ["zzz"]}, "h", 2, 2)
    now = corpus_of({"z": ["zzz", "Support answers on Mondays."]})
    check = CorpusText(now).check("h", 2, 2, pin)
    assert isinstance(check, Stale) and check.gone and check.doc_id == "h"
    assert check.nearest is not None and check.nearest.doc_id == "z"
    assert check.nearest.first_unit == 1


def test_units_past_the_end_after_a_cut_are_stale_not_an_error() -> None:
    pin = pinned({"h": PARAS}, "h", 3, 3)
    check = CorpusText(corpus_of({"h": PARAS[:2]})).check("h", 3, 3, pin)
    assert isinstance(check, Stale) and not check.gone


def test_an_edit_elsewhere_in_the_document_leaves_the_pin_unchanged() -> None:
    pin = pinned({"h": PARAS}, "h", 1, 1)
    now = corpus_of({"h": ["The handbook OPENS HERE, edited.", *PARAS[1:]]})
    assert CorpusText(now).check("h", 1, 1, pin) == Unchanged()


@pytest.mark.parametrize(("doc_id", "first", "last", "why"), [
    ("nope", 0, 0, "not in the corpus"),
    ("h", 2, 9, "are not in 'h'"),
    ("blank", 0, 0, "hold no text"),
])
def test_spans_that_cannot_be_pinned_say_why(doc_id: str, first: int, last: int,
                                            why: str) -> None:
    text = CorpusText(corpus_of({"h": PARAS, "blank": ["\u00ad"]}))
    with pytest.raises(Unpinnable, match=why):
        text.pin(doc_id, first, last)


NEIGHBOURS = {"before": "sha256:" + "1" * 64, "after": "sha256:" + "2" * 64}


@pytest.mark.parametrize(("broken", "field"), [
    ({"digest": "md5:abc", "chars": 3, "quote": "abc"}, "digest"),
    ({"digest": "sha256:" + "0" * 64, "chars": "3", "quote": "abc"}, "chars"),
    ({"digest": "sha256:" + "0" * 64, "chars": 0, "quote": "abc"}, "chars"),
    ({"digest": "sha256:" + "0" * 64, "chars": 3, "quote": "x" * (QUOTE_CHARS + 1)}, "quote"),
    ({"digest": "sha256:" + "0" * 64, "chars": 3, "quote": "abc", "extra": 1}, "extra"),
])
def test_a_corrupted_pin_is_a_validation_error(broken: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Pin.model_validate({**broken, **NEIGHBOURS})
    assert [e["loc"] for e in caught.value.errors()] == [(field,)]


def test_pins_of_a_real_transcript_corpus_survive_an_inserted_turn(tmp_path: Path) -> None:
    shipped = Path(__file__).parents[1] / "goldsets" / "qmsum-val"
    corpus, problems = load_corpus(shipped, ["../corpora/qmsum-val/*.json"], "qmsum",
                                   shipped / "ragate.toml")
    assert not problems and len(corpus) > 0
    doc_id = sorted(corpus.documents)[0]
    doc = corpus[doc_id]
    pins = [CorpusText(corpus).pin(doc_id, i, i + 1) for i in range(5, 25, 5)
            if doc.turns[i].text.strip()]
    shifted = Corpus({doc_id: Document(doc_id, (Turn("inserted"), *doc.turns), doc.source)})
    checks = [CorpusText(shifted).check(doc_id, i, i + 1, pin)
              for i, pin in zip(range(5, 25, 5), pins, strict=False)]
    assert all(isinstance(c, Moved) and c.first_unit == i + 1
               for i, c in zip(range(5, 25, 5), checks, strict=False)), checks
