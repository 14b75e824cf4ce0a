"""Text normalisation, applied the same way to both sides of every comparison.

Transcripts carry annotation a model cannot reproduce (`<FILL/>`, `{disfmarker}`, "Okay ."),
so a quote, a lexical match or an embedding input is compared after the same cleaning on
both sides: `normalize` for what is embedded and shown, `fold` for what is matched. The raw
text and the turn positions are never changed: this only renders.
"""

from __future__ import annotations

import re

NORMALIZATION_VERSION = "2"  # part of every index key: a change here rebuilds indexes

_TAG = re.compile(r"</?[A-Za-z_][\w\-]*(?:\s[^<>]*)?/?>")  # <FILL/>, <PName>..</PName>
_CURLY = re.compile(r"\{\s*[A-Za-z_]+\s*\}")                             # {disfmarker}, {gap}
_NOTE = re.compile(r"\[\s*[A-Za-z][A-Za-z' \-]{0,40}[.!?]?\s*\]")        # [Laughter.], [laughs]
_FOOTNOTE = re.compile(r"(?<![\w.,:/$€£-])\d{1,3}(?![\w.,:/%-]|\.\d)")  # lone 1-3 digits
_SPACE_PUNCT = re.compile(r"\s+([.,!?;:%)\]}])")
_SPACES = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+")
FILLERS = frozenset({"uh", "um", "uhm", "umm", "erm", "er", "ah", "hmm", "hm", "mm", "mhm",
                     "uh-huh", "mm-hmm"})


def normalize(text: str) -> str:
    """The readable rendering (what is embedded, shown and quoted): annotation tags and
    notes removed, spacing before punctuation closed up. Numbers stay."""
    text = _TAG.sub(" ", text)
    text = _CURLY.sub(" ", text)
    text = _NOTE.sub(" ", text)
    text = _SPACES.sub(" ", text)
    text = _SPACE_PUNCT.sub(r"\1", text)
    return text.strip()


def fold(text: str) -> str:
    """The matching form: normalised, then free-standing 1–3 digit tokens (inline footnote
    markers; years stay), case, punctuation and fillers dropped."""
    words = _NON_WORD.sub(" ", _FOOTNOTE.sub(" ", normalize(text)).casefold()).split()
    return " ".join(w for w in words if w not in FILLERS)


def quote_matches(quote: str, source: str) -> bool:
    """A quote holds when its folded form is a non-empty run of the source's folded form."""
    q = fold(quote)
    return bool(q) and f" {q} " in f" {fold(source)} "
