"""Evidence pinned to its text: a span's fingerprint, and the check of one against the corpus
as it is now.

A span of evidence (`{doc_id, first_unit, last_unit}`) is a position: insert one paragraph
above it and it points at other text. A pin remembers what it pointed at: the SHA-256 digest
of the span's normalised text (its whole units), that text's length, its first `QUOTE_CHARS`
characters (the quote, for re-finding it and for telling a person what it was), and the
digests of its neighbours, the normalised text of the unit before it and of the unit after it
(units without text skipped; "" at either end of the document), which tell a pinned "Agreed."
from every other "Agreed." of its document. Normalised means what a
reader would call the same text: Unicode NFKC, case folded, typographic quotes and dashes made
plain, and every run of whitespace (the line breaks and blank lines between units too) one
space. An edit beyond that changes the digest.

The public API:

- `Pin`: the fingerprint as the expected answers store it, `{"digest": "sha256:<hex>",
  "chars": N, "quote": "…", "before": "sha256:<hex>", "after": "sha256:<hex>"}` (a pydantic
  model, strict; a corrupted pin is a validation error naming its field, and a pin without
  `before` and `after`, written before 0.1 held neighbours, is refused: pin it again).
- `normalise(text)`: the normalised text a pin is taken of.
- `CorpusText(corpus)`: the corpus's normalised text, built once per corpus and reused for
  every check; `.pin(doc_id, first, last)` fingerprints a span (`Unpinnable` when it cannot
  be: a document the corpus lacks, units past its end, units without text), and
  `.check(doc_id, first, last, pin)` holds a pin to the corpus as it is now:
  - `Unchanged`: the text is still the whole text of those units, and still the pinned one;
  - `Moved`: the pinned text is now the whole text of other units, of the same document or
    of another (its own document first, then the other documents in id order);
  - `Stale`: the text is edited beyond normalisation, words were added around it in its
    units, its document is gone (`gone`), or it is at several places and its neighbours do
    not tell which is the pinned one (`places`), with the old quote and the nearest current
    text (`Nearest`: of the runs of as many units as the span had, the one whose beginning
    is most like the quote, by rapidfuzz's `ratio`; when the pinned document is gone, in the
    document whose whole text holds the quote best, by `partial_ratio`).

Re-finding is exact on the normalised text and by whole units: an occurrence counts only where
it starts at a unit's start and ends at a unit's end, so "Agreed." is not found in "Not
agreed." nor "The fee is 25 cents." in a unit that goes on "That fee was cancelled in March."
Where the text is at one place of the document, that place is it; where it is at several,
the place whose neighbours are both the pinned ones is it, else the one place with one of
them; several such, or none, is stale: a shift onto a twin is never taken for the pinned
text. A pin with neighbours also needs one of them at the one place that holds its text (an
"Agreed." whose paragraph was edited is not re-found as another "Agreed." elsewhere), so a pin
on a span both of whose neighbours were edited is stale. `pin` refuses a span whose text and
neighbours are at another place of the document too (pin a wider span).
"""

from __future__ import annotations

import bisect
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)
from rapidfuzz import fuzz, process

from pytest_ragate.goldsets.corpus import Corpus, Document

QUOTE_CHARS = 60  # normalised characters a pin quotes (the whole text when shorter)
_PLAIN = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
                        "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00ad": None})
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """`text` as a pin reads it: NFKC, case folded, plain quotes and dashes, one space for
    every run of whitespace, none at either end."""
    text = unicodedata.normalize("NFKC", text).translate(_PLAIN).casefold()
    return _SPACES.sub(" ", text).strip()


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


_SHA = r"^sha256:[0-9a-f]{64}$"
WITHOUT_NEIGHBOURS = ("a pin without before and after, as pins were written before 0.1 held "
                      "their neighbouring text: remove it and run `ragate pin`")


class Pin(BaseModel):
    """A span's fingerprint: the digest of its normalised text, that text's length in
    characters, its first `QUOTE_CHARS` characters, and the digests of its neighbours'
    texts."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    digest: Annotated[str, Field(pattern=_SHA)]
    chars: Annotated[int, Field(ge=1)]
    quote: Annotated[str, Field(min_length=1, max_length=QUOTE_CHARS)]
    before: Annotated[str, Field(pattern=_SHA)]
    after: Annotated[str, Field(pattern=_SHA)]

    @model_validator(mode="before")
    @classmethod
    def _neighboured(cls, data: object) -> object:
        """A pin without both neighbours is one written before 0.1 pinned them."""
        if isinstance(data, dict) and not {"before", "after"} & data.keys():
            raise ValueError(WITHOUT_NEIGHBOURS)
        return data


class Unpinnable(ValueError):
    """A span that cannot be pinned; the message says why."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Unchanged(_Frozen):
    """The pinned text is still at the span's units."""

    status: Literal["unchanged"] = "unchanged"


class Moved(_Frozen):
    """The pinned text is now at other units: `doc_id` (maybe another document)
    `first_unit`..`last_unit`, inclusive; `places` is how many places in the corpus hold it."""

    status: Literal["moved"] = "moved"
    doc_id: str
    first_unit: int
    last_unit: int
    places: int = 1


class Nearest(_Frozen):
    """The current text most like a stale pin's quote: its units, their text as written
    (whitespace runs made one space), and how alike its beginning is to the quote
    (rapidfuzz's ratio over the normalised text, 0–100)."""

    doc_id: str
    first_unit: int
    last_unit: int
    text: str
    similarity: float


class Stale(_Frozen):
    """The pinned text is not found as pinned: edited or with words added around it in its
    units (`gone` False), its document no longer in the corpus (`gone` True), or at `places`
    places (2 or more) none of which its neighbours single out. `quote` is the pin's; `nearest`
    the closest current text (None when the corpus has no text to offer)."""

    status: Literal["stale"] = "stale"
    doc_id: str
    quote: str
    gone: bool
    nearest: Nearest | None = None
    places: int = 0


PinCheck = Unchanged | Moved | Stale


@dataclass(frozen=True)
class _DocText:
    """A document's normalised text (its units' normalised texts joined by one space, units
    that normalise to nothing left out), each unit's normalised text, and where each unit
    starts in the whole (a unit without text starts where the next one does)."""

    text: str
    pieces: tuple[str, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, document: Document) -> _DocText:
        pieces = tuple(normalise(turn.text) for turn in document.turns)
        starts, at = [], 0
        for piece in pieces:
            starts.append(at)
            at += len(piece) + 1 if piece else 0
        return cls(" ".join(p for p in pieces if p), pieces, tuple(starts))

    def span(self, first: int, last: int) -> str:
        return " ".join(p for p in self.pieces[first:last + 1] if p)

    def units(self, start: int, end: int) -> tuple[int, int]:
        """The units characters start..end (end excluded) of the normalised text touch."""
        return (bisect.bisect_right(self.starts, start) - 1,
                bisect.bisect_right(self.starts, end - 1) - 1)

    def whole(self, start: int, end: int) -> bool:
        """Characters start..end are whole units: a unit with text starts at `start`, and one
        ends at `end`."""
        first, last = self.units(start, end)
        return (self.starts[first] == start and bool(self.pieces[first])
                and self.starts[last] + len(self.pieces[last]) == end)

    def places(self, pin: Pin) -> list[tuple[int, int]]:
        """Every unit range whose whole normalised text is the pinned text."""
        found = []
        at = self.text.find(pin.quote)
        while at >= 0:
            end = at + pin.chars
            if self.whole(at, end) and _digest(self.text[at:end]) == pin.digest:
                found.append(self.units(at, end))
            at = self.text.find(pin.quote, at + 1)
        return found

    def neighbours(self, first: int, last: int) -> tuple[str, str]:
        """The digests of the texts of the nearest units with text before `first` and after
        `last` ("" at either end of the document)."""
        before = next((p for p in reversed(self.pieces[:first]) if p), "")
        after = next((p for p in self.pieces[last + 1:] if p), "")
        return _digest(before), _digest(after)


Place = tuple[str, int, int]  # doc_id, first unit, last unit


class CorpusText:
    """A corpus's normalised text, for pinning spans and checking pins; each document is
    normalised at its first use and kept."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._texts: dict[str, _DocText] = {}

    def _text(self, doc_id: str) -> _DocText:
        if doc_id not in self._texts:
            self._texts[doc_id] = _DocText.of(self.corpus[doc_id])
        return self._texts[doc_id]

    def pin(self, doc_id: str, first: int, last: int) -> Pin:
        """The fingerprint of units first..last (inclusive) of a document as it is now."""
        if doc_id not in self.corpus:
            raise Unpinnable(f"document {doc_id!r} is not in the corpus")
        size = len(self.corpus[doc_id].turns)
        if not 0 <= first <= last < size:
            raise Unpinnable(f"{self.corpus.unit}s {first}–{last} are not in {doc_id!r} "
                             f"({self.corpus.unit}s 0–{size - 1})")
        here = self._text(doc_id)
        text = here.span(first, last)
        if not text:
            raise Unpinnable(f"{self.corpus.unit}s {first}–{last} of {doc_id!r} hold no text: "
                             "a pin fingerprints text")
        before, after = here.neighbours(first, last)
        pin = Pin(digest=_digest(text), chars=len(text), quote=text[:QUOTE_CHARS],
                  before=before, after=after)
        twins = [p for p in here.places(pin) if here.neighbours(*p) == (before, after)]
        if len(twins) > 1:
            raise Unpinnable(f"the text of {self.corpus.unit}s {first}–{last} of {doc_id!r} is "
                             f"at {len(twins)} places with the same neighbouring text: pin a "
                             f"wider span, one that only one place holds")
        return pin

    def check(self, doc_id: str, first: int, last: int, pin: Pin) -> PinCheck:
        """Where the pinned text of units first..last of `doc_id` is in the corpus now."""
        if doc_id in self.corpus:
            here = self._text(doc_id)
            places = here.places(pin)
            if last < len(here.pieces) and _digest(here.span(first, last)) == pin.digest:
                places = [(first, last) if here.span(*p) == here.span(first, last)
                          and here.starts[p[0]] == here.starts[first] else p for p in places]
            found = self._chosen(pin, [(doc_id, a, b) for a, b in places])
            if isinstance(found, tuple):
                if found == (doc_id, first, last):
                    return Unchanged()
                return Moved(doc_id=doc_id, first_unit=found[1], last_unit=found[2])
            if found:
                return self._stale(doc_id, first, last, pin, places=found)
        elsewhere = [(other, a, b) for other in sorted(self.corpus.documents)
                     if other != doc_id for a, b in self._text(other).places(pin)]
        found = self._chosen(pin, elsewhere)
        if isinstance(found, tuple):
            return Moved(doc_id=found[0], first_unit=found[1], last_unit=found[2])
        return self._stale(doc_id, first, last, pin, places=found)

    def _chosen(self, pin: Pin, places: list[Place]) -> Place | int:
        """The one place that is the pinned text, or how many places hold it without one
        being singled out (0: none holds it): the place with both its neighbours, or the one
        with one of them."""
        kept = (pin.before, pin.after)
        score = {p: sum(a == b for a, b in zip(self._text(p[0]).neighbours(p[1], p[2]), kept,
                                                strict=True)) for p in places}
        best = max(score.values(), default=0)
        top = [p for p, n in score.items() if n == best]
        return top[0] if best and len(top) == 1 else len(places)

    def _stale(self, doc_id: str, first: int, last: int, pin: Pin, places: int) -> Stale:
        gone = doc_id not in self.corpus
        searched = sorted(self.corpus.documents) if gone else [doc_id]
        return Stale(doc_id=doc_id, quote=pin.quote, gone=gone, places=places,
                     nearest=self._nearest(pin.quote, searched, last - first + 1))

    def _nearest(self, quote: str, doc_ids: list[str], size: int) -> Nearest | None:
        """The run of `size` units (the span's own length) whose beginning is most like the
        quote (the span's own beginning; rapidfuzz's `ratio` over as many characters, through
        `process.extractOne`): in the document whose whole text holds the quote best
        (`partial_ratio`), when there are several to search."""
        if len(doc_ids) > 1:
            texts = {d: self._text(d).text for d in doc_ids if self._text(d).text}
            best = process.extractOne(quote, texts, scorer=fuzz.partial_ratio)
            doc_ids = [best[2]] if best is not None else []
        windows: dict[tuple[str, int, int], str] = {}
        for doc_id in doc_ids:
            text = self._text(doc_id)
            count = len(text.pieces)
            for first in range(max(count - size + 1, 1)):
                last = min(first + size, count) - 1
                if window := text.span(first, last):
                    windows[(doc_id, first, last)] = window[:len(quote)]
        found = process.extractOne(quote, windows, scorer=fuzz.ratio)
        if found is None:
            return None
        _, score, (doc_id, first, last) = found
        turns = self.corpus[doc_id].turns[first:last + 1]
        return Nearest(doc_id=doc_id, first_unit=first, last_unit=last,
                       text=_SPACES.sub(" ", " ".join(t.text for t in turns)).strip(),
                       similarity=round(score, 1))
