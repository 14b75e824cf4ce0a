"""The audit's lexical side: a question's normalised text (exact duplicates), the content
words of a text as stems (overlap of a gist with its evidence, of a question with the
corpus), and the text an evidence span points at.

Folding is the project's (`builtin_system/normalize.fold`: annotation tags, case, punctuation and
fillers dropped) and so is stemming (`scoring/answer_text.stem`), so "Recorded meetings." and
"record the meeting" share their content words here as they do in answer_match."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_ragate.builtin_system.normalize import fold
from pytest_ragate.goldsets.corpus import Corpus
from pytest_ragate.goldsets.pins import normalise
from pytest_ragate.scoring.answer_text import ENGLISH, NUMBER_WORDS, ORDINALS, SCALES, stem, tokens
from pytest_ragate.scoring.records import Evidence, Span, WholeDocument

# words that carry no content in a question or a gist, beyond answer_text's function words
STOP = ENGLISH | frozenset({
    "say", "said", "says", "think", "thought", "discuss", "discussed", "discussion", "talk",
    "talked", "summarize", "summarise", "summary", "meeting", "according", "mention",
    "mentioned", "yeah", "okay", "ok", "oh", "well", "right", "really", "actually",
    "know", "mean", "something", "thing", "things", "kind", "sort", "one", "two", "lot",
    "gonna", "wanna", "yes", "don", "didn", "doesn", "isn", "wasn", "aren", "let", "make",
    "made", "way", "also", "still", "even", "whether", "about", "regarding", "concerning",
    "give", "tell", "describe", "explain", "view", "views", "opinion", "share", "account",
    "could", "would", "did", "does", "were", "been", "being", "into",
})


_ACRONYM = re.compile(r"\b((?:[A-Za-z]_){2,})")  # QMSum's spelt-out acronyms: L_C_D_


def unit_text(text: str) -> str:
    """A unit's text as facts and content words are looked for in it: spelt-out acronyms
    (`L_C_D_`) joined (`LCD`); the corpus itself is never changed."""
    return _ACRONYM.sub(lambda m: m.group(1).replace("_", ""), text)


def numbers(text: str) -> tuple[str, ...]:
    """The numbers and ordinals a text names, in order, each as its value (answer_match's
    reading: `3`, `three`, `3rd` and `third` are all 3; `first` and `second` too): two
    questions that differ in one ask about different things ("sprint 3", "sprint 4")."""
    return tuple(t.text if t.number else str(ORDINALS[t.text]) for t in tokens(text)
                 if t.number or t.text in ORDINALS)


_NUMERAL = re.compile(r"\d[\d_]*(?:st|nd|rd|th)?")
_NUMBER_WORDS = (NUMBER_WORDS.keys() | ORDINALS.keys() | SCALES.keys()) - {"one"}


def question_key(text: str) -> str:
    """A question's text as duplicates are compared: Unicode NFKC (the folding `ragate
    validate` compares questions by: `goldsets/pins.normalise`, so NFC, NFD and full-width
    forms are one text), folded (case, punctuation, annotation and fillers dropped), and the
    numbers and ordinals it names (folding drops short numbers as footnote marks)."""
    words = [w for w in fold(normalise(text)).split()
             if w not in _NUMBER_WORDS and not _NUMERAL.fullmatch(w)]
    return " ".join(words) + " #" + " ".join(numbers(text))


def content_stems(text: str) -> list[str]:
    """The stems of a text's content words, in order, repeats kept: folded words of three
    letters or more that are not function words."""
    return [stem(w) for w in fold(text).split() if len(w) > 2 and w not in STOP
            and not w.isdigit()]


def coverage(needed: Iterable[str], present: set[str],
             weights: dict[str, float] | None = None) -> float | None:
    """The share of `needed` stems (each once; weighted by `weights` when given) found in
    `present`; None when nothing is needed."""
    wanted = set(needed)
    if not wanted:
        return None
    weight = weights or {}
    total = sum(weight.get(w, 1.0) for w in wanted)
    return sum(weight.get(w, 1.0) for w in wanted if w in present) / total


def evidence_text(corpus: Corpus, item: Evidence) -> str | None:
    """The text an evidence item points at (its units joined by newlines); None when it
    points at nothing the corpus holds (an unknown document, a context id)."""
    if isinstance(item, WholeDocument) and item.doc_id in corpus:
        return "\n".join(unit_text(t.text) for t in corpus[item.doc_id].turns)
    if isinstance(item, Span) and item.doc_id in corpus:
        turns = corpus[item.doc_id].turns
        if item.last_unit < len(turns):
            return "\n".join(unit_text(t.text)
                             for t in turns[item.first_unit:item.last_unit + 1])
    return None


@dataclass(frozen=True, kw_only=True)
class Window:
    """A run of units of one document: where the corpus best covers a question's words."""

    doc_id: str
    first: int
    last: int
    covered: float  # the idf-weighted share of the question's content words it holds


class CorpusWords:
    """The corpus as windows of `size` consecutive units (overlapping by half), each a set of
    content stems, with an inverted index and each stem's idf over the windows: where a
    question's words are found together."""

    def __init__(self, corpus: Corpus, size: int = 6) -> None:
        self.windows: list[tuple[str, int, int]] = []
        self.stems: list[frozenset[str]] = []
        index: dict[str, list[int]] = {}
        step = max(1, size // 2)
        for doc_id in sorted(corpus.documents):
            units = [set(content_stems(unit_text(t.text))) for t in corpus[doc_id].turns]
            for start in range(0, max(1, len(units) - step), step):
                words = frozenset().union(*units[start:start + size])
                at = len(self.windows)
                self.windows.append((doc_id, start, min(start + size, len(units)) - 1))
                self.stems.append(words)
                for w in words:
                    index.setdefault(w, []).append(at)
        self.index = index
        n = max(1, len(self.windows))
        self.idf = {w: math.log(1 + n / len(hits)) for w, hits in index.items()}

    def weight(self, word: str) -> float:
        """A word's idf (a word the corpus never has weighs as the rarest)."""
        return self.idf.get(word, math.log(1 + max(1, len(self.windows))))

    def best(self, words: Sequence[str]) -> Window | None:
        """The window holding the largest idf-weighted share of `words`."""
        wanted = set(words)
        if not wanted:
            return None
        total = sum(self.weight(w) for w in wanted)
        scores: Counter[int] = Counter()
        for w in wanted:
            for at in self.index.get(w, ()):
                scores[at] += self.weight(w)
        if not scores:
            return None
        at, score = max(scores.items(), key=lambda kv: (kv[1], -kv[0]))
        doc_id, first, last = self.windows[at]
        return Window(doc_id=doc_id, first=first, last=last, covered=score / total)
