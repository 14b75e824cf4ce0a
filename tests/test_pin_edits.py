"""Pins that notice an edit around their text (issue 45, item 6): a pin holds its whole units
and its neighbouring text, so words added inside those units make it stale, not unchanged;
a shift onto a twin of the pinned text is re-found by its neighbours or is stale, never taken
for it; pins written before keep working, said once, until `ragate pin` brings them up to
date; `ragate pin` and `ragate reanchor` read JSONL as the loader does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragate.goldsets.pins import (
    CorpusText,
    Moved,
    Pin,
    Stale,
    Unchanged,
    Unpinnable,
)
from tests.test_pins import corpus_of, pinned
from tests.test_pins_runs import goldset, ragate

MEETING = ["Shall we sign?", "Agreed.", "The fee is 25 cents.", "Next item.", "Agreed.",
           "Close."]


@pytest.mark.parametrize(("unit", "now"), [
    (1, "Not agreed."),
    (1, "Agreed. Not."),
    (2, "The fee is 25 cents. That fee was cancelled in March."),
    (2, "Until March the fee is 25 cents."),
])
def test_words_added_around_the_pinned_text_in_its_unit_make_it_stale(unit: int,
                                                                       now: str) -> None:
    pin = pinned({"m": MEETING}, "m", unit, unit)
    edited = [now if i == unit else text for i, text in enumerate(MEETING)]
    check = CorpusText(corpus_of({"m": edited})).check("m", unit, unit, pin)
    assert isinstance(check, Stale) and not check.gone, check


def test_units_inserted_above_do_not_shift_the_pin_onto_its_twin() -> None:
    """Three units inserted above the first "Agreed." (unit 1) put it at unit 4, where the
    second one was, and the second at unit 7: each pin is re-found by its neighbours, never
    read "unchanged" on the other "Agreed."; edited, with a twin now at its old unit, stale."""
    first, second = pinned({"m": MEETING}, "m", 1, 1), pinned({"m": MEETING}, "m", 4, 4)
    now = CorpusText(corpus_of({"m": [MEETING[0], "a", "b", "c", *MEETING[1:]]}))
    assert now.check("m", 1, 1, first) == Moved(doc_id="m", first_unit=4, last_unit=4)
    assert now.check("m", 4, 4, second) == Moved(doc_id="m", first_unit=7, last_unit=7)
    shifted = CorpusText(corpus_of({"m": ["x", "y", "z", *MEETING[:1], "Agreed.",
                                          *MEETING[2:4], "Vetoed.", "Close."]}))
    check = shifted.check("m", 4, 4, second)  # edited, and a twin now at its old unit
    assert check != Unchanged() and isinstance(check, Stale), check


def test_a_span_whose_text_and_neighbours_repeat_cannot_be_pinned() -> None:
    twice = ["Agreed.", "Yes.", "Agreed.", "Agreed.", "Yes.", "Agreed."]
    with pytest.raises(Unpinnable, match="at 2 places with the same neighbouring text"):
        pinned({"m": twice}, "m", 1, 1)
    assert pinned({"m": twice}, "m", 1, 2).chars == len("yes. agreed.")


def test_a_pin_names_both_neighbours() -> None:
    new = pinned({"m": MEETING}, "m", 1, 1).model_dump()
    with pytest.raises(ValueError, match="after"):
        Pin.model_validate({**new, "after": None})


def test_a_pin_without_neighbours_is_refused_once_per_file(tmp_path: Path) -> None:
    """A pin written before 0.1 held its neighbouring text: one problem for the file, saying
    what to do, however many such pins it holds."""
    root = goldset(tmp_path / "gs")
    assert ragate("pin", str(root))[0] == 0
    path = root / "expected.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows[:2]:
        for entry in row["evidence"]:
            del entry["pin"]["before"], entry["pin"]["after"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out = ragate("validate", str(root))
    assert code == 1 and out.count("as pins were written before 0.1") == 1, out
    assert "remove it and run `ragate pin`" in out and "more like it" in out, out


@pytest.mark.parametrize("odd", ["\u2028", "\u0085", "\u2029"])  # json.dumps keeps them raw
def test_pin_and_reanchor_read_jsonl_as_the_loader_does(tmp_path: Path, odd: str) -> None:
    root = goldset(tmp_path / "gs")
    path = root / "expected.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["notes"] = f"line{odd}break"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                    encoding="utf-8")
    assert ragate("validate", str(root))[0] == 0
    code, out = ragate("pin", str(root))
    assert code == 0 and out.startswith("pinned 3 spans"), out
    assert json.loads(path.read_text(encoding="utf-8").split("\n")[0])["notes"] == \
        f"line{odd}break"
    code, out = ragate("reanchor", str(root))
    assert code == 0 and "would re-anchor 0 spans" in out, out
