"""The rules over expected answers and the corpus: evidence that does not support its gist
or facts, facts the corpus never states, must-abstain questions the corpus seems to answer,
evidence far wider than an answer needs, and documents no question points at.

Pure functions of the expected answers, the corpus and, where a rule embeds, a function
from texts to unit vectors (`Embed`). A lexical measure decides first (content words,
idf-weighted over the corpus's windows, `texts.CorpusWords`); the embedding is asked only
where the words alone are not clear either way, which keeps a 1,000-question audit within
its time on two cores."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.audit.questions import topic_words
from pytest_ragate.audit.texts import CorpusWords, content_stems, coverage, evidence_text, unit_text
from pytest_ragate.builtin_system.normalize import normalize
from pytest_ragate.goldsets.config import Expected
from pytest_ragate.goldsets.corpus import Corpus
from pytest_ragate.goldsets.pinned import Held
from pytest_ragate.scoring.answer_text import (
    Alternative,
    Fact,
    Folded,
    Occurrence,
    alternatives,
    light,
)
from pytest_ragate.scoring.records import ContextRef, Evidence, Span
from pytest_ragate.wording import audit as wording

Embed = Callable[[Sequence[str]], np.ndarray]  # texts → unit-length rows, one per text

# unsupported evidence: below SUPPORTED the words alone flag it when no embedding is asked;
# between UNSURE and SUPPORTED the embedding decides (cosine of the gist and the evidence's
# best window below COSINE_SUPPORT); below UNSURE it is flagged whatever the embedding says
SUPPORTED = 0.5
UNSURE = 0.13
COSINE_SUPPORT = 0.25
WINDOW_CHARS = 1200  # evidence is embedded in windows of about this many characters
# must-abstain questions the corpus answers: the share of its content words one window holds
ANSWERED = 0.8
MIN_WORDS = 3  # fewer content words say too little to look for
# too wide: at least ALL_SHARE of a document (its whole, however written), or at least
# WIDE_SHARE of it and WIDE_UNITS units
ALL_SHARE = 0.9
WIDE_SHARE = 0.5
WIDE_UNITS = 20


@dataclass(frozen=True, kw_only=True)
class Answered:
    """One question with its expected answer, and where the answer is written."""

    question_id: str
    question: str
    expected: Expected
    path: Path
    line: int | None
    pins: Held | None = None  # its pinned evidence held to the corpus as the goldset loaded


def _windows(text: str) -> list[str]:
    """The text in windows of about WINDOW_CHARS characters, cut between its lines."""
    windows, current = [], ""
    for line in normalize(text.replace("\n", " \n ")).split("\n"):
        if current and len(current) + len(line) > WINDOW_CHARS:
            windows.append(current)
            current = ""
        current += line + "\n"
    return [w for w in [*windows, current] if w.strip()]


def unsupported(answers: Sequence[Answered], corpus: Corpus, words: CorpusWords,
                embed: Embed | None, folded: CorpusFolded | None = None) -> list[Finding]:
    """Answerable questions whose evidence text holds too little of their gist (idf-weighted
    content words, and the embedding where those are unsure) or does not state a fact."""
    found = []
    searcher = folded or CorpusFolded(corpus)
    pending: list[tuple[Answered, float, int, list[str]]] = []
    for a in answers:
        texts = [t for t in (evidence_text(corpus, e) for e in a.expected.spans) if t]
        if not texts or not a.expected.gist:
            continue
        joined = "\n".join(texts)
        lexical = coverage(content_stems(a.expected.gist), set(content_stems(joined)),
                           words.idf) or 0.0
        units = span_units(corpus, a.expected.spans)
        missing = sum(not searcher.in_units(f, units) for f in a.expected.facts)
        if lexical < UNSURE or (lexical < SUPPORTED and embed is None):
            found.append(_unsupported(a, lexical, None, missing))
        elif lexical < SUPPORTED:
            pending.append((a, lexical, missing, _windows(joined)))
    if pending and embed is not None:
        gists = embed([a.expected.gist or "" for a, *_ in pending])
        flat = [w for *_, ws in pending for w in ws]
        vectors = embed(flat)
        at = 0
        for (a, lexical, missing, ws), gist in zip(pending, gists, strict=True):
            cosine = float(np.max(vectors[at:at + len(ws)] @ gist))
            at += len(ws)
            if cosine < COSINE_SUPPORT:
                found.append(_unsupported(a, lexical, cosine, missing))
    return found


def _unsupported(a: Answered, lexical: float, cosine: float | None, missing: int) -> Finding:
    return finding("unsupported_evidence", wording.unsupported_evidence(lexical, cosine, missing),
                   path=a.path, line=a.line, question_id=a.question_id,
                   measure=cosine if cosine is not None else lexical)


Unit = tuple[str, int]  # (document id, unit index)


def span_units(corpus: Corpus, items: Iterable[Evidence]) -> list[Unit]:
    """The units evidence items cover (a whole document's every unit), in order, once."""
    units: dict[Unit, None] = {}
    for item in items:
        if item.doc_id not in corpus:
            continue
        size = len(corpus[item.doc_id].turns)
        first, last = ((item.first_unit, min(item.last_unit, size - 1))
                       if isinstance(item, Span) else (0, size - 1))
        units.update(((item.doc_id, i), None) for i in range(first, last + 1))
    return list(units)


def _states(folded: Folded, alt: Alternative) -> bool:
    if alt.pattern is not None:
        return any(any(c.isalnum() for c in m.group()) for m in alt.pattern.finditer(
            folded.plain))
    return bool(folded.find(alt))


class CorpusFolded:
    """The corpus searched for facts unit by unit, each unit folded once when first needed
    (answer_text's folding), and each unit's light text kept to rule it out cheaply: a word
    alternative's stem begins with the first letters of its word as written."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._folded: dict[Unit, Folded] = {}
        self._light: dict[str, list[str]] = {}
        self._joined: dict[str, str] = {}
        self._states: dict[tuple[tuple[Alternative, ...], tuple[Unit, ...]], bool] = {}

    def folded(self, unit: Unit) -> Folded:
        if unit not in self._folded:
            self._folded[unit] = Folded(unit_text(self.corpus[unit[0]].turns[unit[1]].text))
        return self._folded[unit]

    def light(self, unit: Unit) -> str:
        """A unit's light text (answer_text's `light`): what cheap checks look in."""
        return self._lights(unit[0])[unit[1]]

    def _whole(self, doc_id: str) -> str:
        """A document's light text, its units joined by newlines (kept)."""
        if doc_id not in self._joined:
            self._joined[doc_id] = "\n".join(self._lights(doc_id))
        return self._joined[doc_id]

    def _lights(self, doc_id: str) -> list[str]:
        if doc_id not in self._light:
            self._light[doc_id] = [light(unit_text(t.text)) for t in self.corpus[doc_id].turns]
        return self._light[doc_id]

    def _may_hold(self, unit: Unit, alt: Alternative) -> bool:
        if alt.pattern is not None or alt.numeric:
            return True
        plain = self._lights(unit[0])[unit[1]]
        return all(word[:3] in plain for word in alt.words)

    def occurrences(self, fact: Fact, units: Iterable[Unit],
                    ) -> Iterator[tuple[Unit, Occurrence]]:
        """Each occurrence of the fact in these units (negated or not), unit by unit."""
        alts = alternatives(fact)
        for u in units:
            for alt in alts:
                if self._may_hold(u, alt):
                    yield from ((u, o) for o in self.folded(u).find(alt))

    def in_units(self, fact: Fact, units: Iterable[Unit]) -> bool:
        """Whether one of these units states the fact (negated or not)."""
        alts = alternatives(fact)
        return any(_states(self.folded(u), alt) for u in units for alt in alts
                   if self._may_hold(u, alt))

    def states(self, fact: Fact, first: Sequence[Unit]) -> bool:
        """Whether any unit of the corpus states the fact, the units `first` searched first
        (a pattern is searched in each document's light text at once); kept, as two rules
        ask it."""
        asked = (alternatives(fact), tuple(first))
        if asked not in self._states:
            self._states[asked] = self._search(fact, first)
        return self._states[asked]

    def _search(self, fact: Fact, first: Sequence[Unit]) -> bool:
        if self.in_units(fact, first):
            return True
        for doc_id in sorted(self.corpus.documents):
            whole = self._whole(doc_id)
            for alt in alternatives(fact):
                if alt.pattern is not None:
                    if any(any(c.isalnum() for c in m.group())
                           for m in alt.pattern.finditer(whole)):
                        return True
                elif (alt.numeric or all(w[:3] in whole for w in alt.words)) and any(
                        _states(self.folded((doc_id, i)), alt)
                        for i in range(len(self.corpus[doc_id].turns))
                        if self._may_hold((doc_id, i), alt)):
                    return True
        return False

    def candidates(self, fact: Fact) -> Iterator[tuple[Unit, Alternative]]:
        """Each unit of the corpus that states one of the fact's alternatives (negated or
        not), document by document; a document whose light text cannot hold the alternative
        (a pattern finds nothing in it, a word's first letters are not in it) is skipped."""
        for doc_id in sorted(self.corpus.documents):
            whole = self._whole(doc_id)
            for alt in alternatives(fact):
                if alt.pattern is not None:
                    if not any(any(c.isalnum() for c in m.group())
                               for m in alt.pattern.finditer(whole)):
                        continue
                elif not (alt.numeric or all(w[:3] in whole for w in alt.words)):
                    continue
                for i in range(len(self.corpus[doc_id].turns)):
                    if self._may_hold((doc_id, i), alt) and _states(
                            self.folded((doc_id, i)), alt):
                        yield (doc_id, i), alt


def facts_nowhere(answers: Sequence[Answered], folded: CorpusFolded) -> list[Finding]:
    """Answerable questions with a fact no document of the corpus states."""
    found = []
    for a in answers:
        if a.expected.must_abstain or not a.expected.facts:
            continue
        units = span_units(folded.corpus, a.expected.spans)
        missing = [i for i, fact in enumerate(a.expected.facts)
                   if not folded.states(fact, units)]
        if missing:
            found.append(finding("facts_not_in_corpus",
                                 wording.facts_not_in_corpus(missing, len(a.expected.facts)),
                                 path=a.path, line=a.line, question_id=a.question_id))
    return found


def abstain_answerable(answers: Sequence[Answered], corpus: Corpus, words: CorpusWords,
                       ) -> list[Finding]:
    """Must-abstain questions whose content words (names aside) one window of the corpus
    nearly all holds, idf-weighted. Words, not the embedding: a question's cosine to a
    window of transcript is low even where the window answers it (0.06-0.71 over the
    benchmark's seeded questions), so it would only hide them."""
    found = []
    for a in answers:
        if not a.expected.must_abstain:
            continue
        stems = sorted(topic_words(a.question))
        window = words.best(stems) if len(stems) >= MIN_WORDS else None
        if window is not None and window.covered >= ANSWERED:
            found.append(finding("abstain_answerable", wording.abstain_answerable(
                window.doc_id, window.first, window.last, corpus.unit, window.covered),
                path=a.path, line=a.line, question_id=a.question_id, measure=window.covered,
                other=window.doc_id))
    return found


def _covered(items: Iterable[Evidence], corpus: Corpus) -> dict[str, set[int]]:
    """The units each document's evidence items cover together, however they are written
    (a whole document, one span, or spans side by side); a span's units past its document's
    end are not its document's. A context id covers no unit the audit can count."""
    covered: dict[str, set[int]] = {}
    for doc_id, unit in span_units(corpus, (i for i in items if not isinstance(i, ContextRef))):
        covered.setdefault(doc_id, set()).add(unit)
    return covered


def wide(answers: Sequence[Answered], corpus: Corpus, *, sealed: bool = False,
         ) -> list[Finding]:
    """Evidence that covers, in one document, at least ALL_SHARE of it (the whole document,
    whether written as `{"doc_id"}`, as units 0 to its last, or as spans side by side), or at
    least WIDE_SHARE of it and WIDE_UNITS units: judged by the share of its document the
    question's evidence covers, however it is written. A `sealed` goldset's finding names
    neither the document nor its size (its evidence is sealed)."""
    found = []
    for a in answers:
        for doc_id, units in _covered(a.expected.spans, corpus).items():
            of = len(corpus[doc_id].turns)
            share = len(units) / of if of else 0.0
            if share < ALL_SHARE and (share < WIDE_SHARE or len(units) < WIDE_UNITS):
                continue
            whole = len(units) == of
            at = {"path": a.path, "line": a.line, "question_id": a.question_id}
            found.append(finding("wide_evidence", wording.wide_evidence_sealed(whole), **at)
                         if sealed else
                         finding("wide_evidence", wording.wide_evidence(
                             doc_id, len(units), of, corpus.unit, whole), measure=share,
                             other=doc_id, **at))
    return found


def unasked(answers: Sequence[Answered], corpus: Corpus, *, sealed: bool = False,
            ) -> list[Finding]:
    """Documents no expected answer's evidence points into (when any answer has evidence);
    a `sealed` goldset's are counted in one finding at its sealed file, never named (which
    documents are left tells which the sealed evidence is in)."""
    cited = {e.doc_id for a in answers for e in a.expected.spans}
    if not cited:
        return []
    left = [doc_id for doc_id in sorted(corpus.documents) if doc_id not in cited]
    if sealed:
        return [finding("unasked_document", wording.unasked_sealed(len(left)),
                        path=answers[0].path)] if left else []
    return [finding("unasked_document", wording.unasked_document(doc_id),
                    path=corpus[doc_id].source, other=doc_id) for doc_id in left]
