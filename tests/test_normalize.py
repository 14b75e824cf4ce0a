"""Normalisation on real transcript lines: what a model quotes from the clean rendering must
match the raw turn, and the raw text is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragate.builtin_system.normalize import fold, normalize, quote_matches
from pytest_ragate.files import read_lines

CORPORA = Path(__file__).parent.parent / "goldsets" / "corpora"
TIRON = read_lines(CORPORA / "tiron" / "tiron-MTG_32040.txt")
QMSUM = [t["content"] for t in json.loads(
    (CORPORA / "qmsum-val" / "Bed002.json").read_text())["meeting_transcripts"]]


def test_the_round_trip_covers_both_corpora() -> None:
    assert sum("<" in line for line in ANNOTATED) >= 20
    assert sum("{" in line for line in ANNOTATED) >= 20


def test_tiron_tags_are_rendered_away() -> None:
    raw = TIRON[2]
    assert raw == ("It's really exciting meeting today <FILL/> discussing the products for "
                   "our")
    assert normalize(raw) == "It's really exciting meeting today discussing the products for our"
    assert normalize("<UNKNOWN/> OK.") == "OK."
    assert normalize("Hi <PName>Rachel</PName> , thanks") == "Hi Rachel, thanks"


def test_qmsum_annotation_and_spacing_are_rendered_away() -> None:
    raw = QMSUM[3]
    assert "{disfmarker}" in raw and " ," in raw
    assert normalize(raw) == ("And you should be able to see which one which one you 're on "
                              "by, uh, watching the little bars change.")
    assert normalize("Whether she knows {vocalsound} is another question . Um .") == (
        "Whether she knows is another question. Um.")
    assert normalize("[Laughter.] So that was it") == "So that was it"


ANNOTATED = ([line for line in TIRON if "<" in line and len(normalize(line).split()) >= 4][:25]
             + [line for line in QMSUM if "{" in line and len(normalize(line).split()) >= 4][:25])


@pytest.mark.parametrize("raw", ANNOTATED)
def test_a_quote_copied_from_the_rendering_matches_the_raw_turn(raw: str) -> None:
    rendering = normalize(raw)
    words = rendering.split()
    quote = " ".join(words[len(words) // 4: max(len(words) // 4 + 2, 3 * len(words) // 4)])
    assert quote_matches(quote, raw), (quote, raw)
    assert quote_matches(rendering, raw)


def test_quotes_survive_case_punctuation_and_fillers_but_not_other_words() -> None:
    raw = QMSUM[3]
    assert quote_matches("you're on by watching the little bars", raw)
    assert quote_matches("WHICH ONE YOU 'RE ON BY, UH, WATCHING", raw)
    assert not quote_matches("watching the big bars", raw)
    assert not quote_matches("", raw)
    assert not quote_matches("bars chang", raw)  # whole words only


def test_footnote_digits_are_ignored_for_matching_and_years_stay() -> None:
    assert fold("the budget 3 was agreed in 2019") == "the budget was agreed in 2019"
    assert quote_matches("the budget was agreed in 2019", "The budget 3 was agreed in 2019.")
    assert not quote_matches("agreed in 2020", "The budget 3 was agreed in 2019.")
    assert normalize("we said 25 euros") == "we said 25 euros"  # the rendering keeps numbers


def test_normalisation_never_changes_the_source_lines() -> None:
    before = list(TIRON)
    for line in TIRON:
        normalize(line)
    assert TIRON == before == read_lines(CORPORA / "tiron" / "tiron-MTG_32040.txt")
