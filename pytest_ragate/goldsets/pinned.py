"""A goldset's pinned evidence held to its corpus as it is now (goldsets/pins.py checks one
pin): each expected answer's moved spans re-anchored where their text is now, its stale ones
named, and its unpinned ones counted.

Collection, `ragate validate`, `ragate pin` and `ragate reanchor` all ask `hold`: a moved span
is scored against where its text is now (the answer `hold` returns has its units), a stale one
makes its question fail as stale evidence (items/questions.py), which leaves it without a
result in every floor that counts it (decision/: not decided until the goldset is fixed).
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ragate.goldsets.config import EvidenceEntry, Expected
from pytest_ragate.goldsets.pins import CorpusText, Moved, Stale
from pytest_ragate.wording import pins as wording


@dataclass(frozen=True, kw_only=True)
class Held:
    """One expected answer held to the corpus: the answer to score against (moved spans at
    their new units), each moved and stale span's line for people, and the count of spans
    that are, or are not, pinned. `moves` maps an evidence entry's position to its new
    `(doc_id, first, last)`."""

    expected: Expected
    moved: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    moves: tuple[tuple[int, tuple[str, int, int]], ...] = ()
    spans: int = 0
    unpinned: int = 0


def hold(expected: Expected, text: CorpusText, *, sealed: bool = False) -> Held:
    """Every pinned span of `expected` checked against the corpus; a sealed goldset's lines
    say how many, never where (its evidence is sealed)."""
    entries = list(expected.evidence)
    moved: list[str] = []
    stale: list[str] = []
    moves: list[tuple[int, tuple[str, int, int]]] = []
    spans = unpinned = 0
    unit = text.corpus.unit
    for i, entry in enumerate(expected.evidence):
        if entry.last_unit is None or entry.doc_id is None or entry.first_unit is None:
            continue
        spans += 1
        if entry.pin is None:
            unpinned += 1
            continue
        check = text.check(entry.doc_id, entry.first_unit, entry.last_unit, entry.pin)
        if isinstance(check, Moved):
            moves.append((i, (check.doc_id, check.first_unit, check.last_unit)))
            entries[i] = entry.model_copy(update={"doc_id": check.doc_id,
                                                  "first_unit": check.first_unit,
                                                  "last_unit": check.last_unit})
            moved.append(wording.moved(entry.doc_id, entry.first_unit, entry.last_unit,
                                       now_doc=check.doc_id, now_first=check.first_unit,
                                       now_last=check.last_unit, unit=unit))
        elif isinstance(check, Stale):
            near = check.nearest
            stale.append(wording.stale(
                check.doc_id, check.quote, gone=check.gone, unit=unit, places=check.places,
                nearest=(near.doc_id, near.first_unit, near.last_unit, near.text)
                if near is not None else None))
    if sealed:
        moved = [wording.moved_sealed(len(moved))] if moved else []
        stale = [wording.stale_sealed(len(stale))] if stale else []
    return Held(expected=expected.model_copy(update={"evidence": entries}) if moves
                else expected, moved=tuple(moved), stale=tuple(stale), moves=tuple(moves),
                spans=spans, unpinned=unpinned)


def pinned_entry(entry: EvidenceEntry, text: CorpusText) -> EvidenceEntry:
    """The entry with its pin, taken of the corpus as it is now (`Unpinnable` says why not)."""
    assert entry.doc_id is not None and entry.first_unit is not None
    assert entry.last_unit is not None
    return entry.model_copy(update={"pin": text.pin(entry.doc_id, entry.first_unit,
                                                    entry.last_unit)})
