"""What ragate says of pinned evidence (goldsets/pins.py) and of a corpus that changed: a span
that moved, a span whose text is stale, and a corpus unlike the baseline's."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.scoring.pairing import CorpusChange
from pytest_ragate.scoring.records import fmt_some
from pytest_ragate.wording.numbers import NAMED, plural

QUOTED = 80  # characters of a current text shown beside a stale quote


def _units(unit: str, first: int, last: int) -> str:
    return f"{unit} {first}" if first == last else f"{unit}s {first}–{last}"


def _cut(text: str) -> str:
    return text if len(text) <= QUOTED else text[:QUOTED - 1] + "…"


def moved(doc_id: str, first: int, last: int, *, now_doc: str, now_first: int, now_last: int,
          unit: str) -> str:
    """`evidence moved: handbook units 3–4 are now units 5–6` (or `now other units 0–1`)."""
    where = _units(unit, now_first, now_last)
    now = where if now_doc == doc_id else f"{now_doc} {where}"
    return (f"evidence moved: {doc_id} {_units(unit, first, last)} is now {now} (scored "
            "there; `ragate reanchor --write` updates the goldset)")


def stale(doc_id: str, quote: str, *, gone: bool, nearest: tuple[str, int, int, str] | None,
          unit: str, places: int = 0) -> str:
    """A stale span: its document, its old quote, and the nearest current text; `places`, the
    places that hold its text, none of them singled out by its neighbouring text."""
    what = (f"document {doc_id!r} is no longer in the corpus" if gone
            else f"the pinned text of {doc_id!r} is no longer the whole text of its {unit}s "
            "(edited, or words added around it)" if not places
            else f"the pinned text is at {plural(places, 'place')}, none with its neighbouring "
            f"text: which is the pinned one cannot be told (the {unit}s around it changed, or "
            "it is a twin)")
    near = "no current text is like it"
    if nearest is not None:
        n_doc, n_first, n_last, n_text = nearest
        near = f"nearest now: {n_doc} {_units(unit, n_first, n_last)} {_cut(n_text)!r}"
    return (f"stale evidence: {what}: was {quote!r}…; {near} · fix the expected answer "
            "(remove its pin and run `ragate pin` once its units are right)")


def stale_sealed(count: int) -> str:
    """A sealed goldset's stale spans, without what they point at."""
    return (f"stale evidence: {plural(count, 'pinned span')} no longer match the corpus (the "
            "answers are sealed: unseal them to see which)")


def moved_sealed(count: int) -> str:
    return f"evidence moved: {plural(count, 'pinned span')} re-found at other units (sealed)"


def corpus_changed(against: str, change: CorpusChange) -> str:
    """`corpus changed since the baseline: 3 documents edited, 1 added, 0 removed`."""
    return (f"corpus changed since {against}: {plural(len(change.edited), 'document')} "
            f"edited, {len(change.added)} added, {len(change.removed)} removed")


def corpus_note(change: CorpusChange, suspects: Sequence[str]) -> str:
    """A regression check's note of a corpus unlike the baseline's; with the questions that
    got worse whose evidence documents changed, named as possibly the corpus's doing."""
    said = corpus_changed("the baseline", change)
    if suspects:
        said += (f"; possibly caused by the corpus, not the system: the evidence documents "
                 f"of {fmt_some(list(suspects), NAMED)} changed")
    return said
