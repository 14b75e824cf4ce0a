"""The rule over what the corpus says against an expected answer: a fact, or a number or name
of the gist, that the corpus states only negated ("The fee is not 25 cents" for the fact "25
cents", "The chair was never Alice" for "Alice"), or only with another number in its place
("30 cents" in its evidence where the answer says 25), as a reader of the corpus reads it.

An occurrence is denied where answer_match reads it as negated (`scoring/answer_text`: a
negation a few tokens before it, in its clause) and a negation word stands right before it
("not 25 cents", "never Alice"): an answer drawn faithfully from the corpus says the denial,
and answer_match does not count it as stating the fact. The audit asks for the negation right
before, not answer_match's whole reach, because it speaks of a corpus rather than of an answer:
"not like three hours' worth" or "I do not see why" deny nothing a summary says. A fact is read
where the question's evidence holds it, else in the whole corpus (a fact the corpus never
states is `facts_not_in_corpus`'); a gist's numbers and names are read in its evidence only
(those the gist itself negates are no claim of it), and a gist's number is said to have
another in its place only where the same two tokens stand on one side of another value in its
evidence, or where that value is the only one beside the same content words (transcripts
speak of many numbers; a gist sums them up)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.audit.evidence import Answered, CorpusFolded, Unit, span_units
from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.audit.texts import STOP, unit_text
from pytest_ragate.builtin_system.normalize import normalize
from pytest_ragate.goldsets.corpus import Corpus
from pytest_ragate.scoring.answer_text import (
    NEGATIONS,
    NUMBER_WORDS,
    ORDINALS,
    Alternative,
    Fact,
    Folded,
    Token,
    alternatives,
    key,
)
from pytest_ragate.scoring.answer_text import tokens as folded_tokens
from pytest_ragate.wording import audit as wording

Standing = Literal["stated", "negated", "absent"]
_NAME = re.compile(r"\b[A-Z][\w'-]*")
REACH = 2  # content words this far before a number are its place ("paid 25", "25 cents")
# a unit without a digit or a number word holds no number (the claims' units are read once
# folded only where one may stand)
_NUMERIC = re.compile(r"\d|\b(?:" + "|".join(sorted(NUMBER_WORDS.keys() | ORDINALS.keys()))
                      + r")\b")
CONTEXT = 2  # tokens on one side of a number that, all the same, make its place certain


def _standing(negated: Iterable[bool]) -> Standing:
    """Stated when one occurrence is not negated; negated when every one is; else absent."""
    seen = False
    for flag in negated:
        if not flag:
            return "stated"
        seen = True
    return "negated" if seen else "absent"


def denied(text: Folded, at: int) -> bool:
    """Whether the token `at` is negated as answer_match reads it, by a negation word right
    before it in its clause part."""
    if at <= 0 or at >= len(text.tokens):
        return False
    before, here = text.tokens[at - 1], text.tokens[at]
    return before.text in NEGATIONS and before.part == here.part and text.negated(at)


def fact_standing(folded: CorpusFolded, fact: Fact, units: Sequence[Unit],
                  ) -> tuple[Standing, Standing]:
    """How the question's evidence units state the fact, and (when they do not state it at
    all) how the rest of the corpus does ("absent" for the corpus when the evidence holds it)."""
    in_evidence = _standing(denied(folded.folded(u), o.first)
                            for u, o in folded.occurrences(fact, units))
    if in_evidence != "absent" or not folded.states(fact, units):
        return in_evidence, "absent"
    return in_evidence, _standing(denied(folded.folded(unit), o.first)
                                  for unit, alt in folded.candidates(fact)
                                  for o in folded.folded(unit).find(alt))


def _is_number(word: str) -> bool:
    return word[:1].isdigit()


def renumbered(text: Folded, alt: Alternative) -> bool:
    """Whether `text` holds the alternative's words, in a row within one sentence, with
    another number where it has a number (an alternative of numbers alone has no place)."""
    words = alt.words
    if alt.pattern is not None or all(map(_is_number, words)) or not any(map(_is_number, words)):
        return False
    n = len(words)
    for i in range(len(text.keys) - n + 1):
        run, toks = text.keys[i:i + n], text.tokens[i:i + n]
        if toks[0].clause != toks[-1].clause:
            continue
        same = [(w == k) if not _is_number(w) else t.number for w, k, t in zip(
            words, run, toks, strict=True)]
        if all(same) and run != list(words):
            return True
    return False


@dataclass(frozen=True, kw_only=True)
class Claim:
    """A number or a name of a gist: its key (answer_text's), and for a number its place:
    the content word right after it and those just before it (`after`, `before`), and the
    two tokens on each side whatever they are (`left`, `right`: empty where fewer stand)."""

    key: str
    number: bool
    after: str | None = None
    before: tuple[str, ...] = ()
    left: tuple[str, ...] = ()
    right: tuple[str, ...] = ()


def _content(token: Token) -> bool:
    return not token.number and len(token.text) > 2 and token.text not in STOP


def _sides(keys: Sequence[str], i: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The CONTEXT keys before and after position `i` (empty where fewer stand)."""
    left = tuple(keys[i - CONTEXT:i]) if i >= CONTEXT else ()
    right = tuple(keys[i + 1:i + 1 + CONTEXT]) if i + CONTEXT < len(keys) else ()
    return left, right


def claims(gist: str) -> list[Claim]:
    """The numbers of a gist with their places, and its names (words written with a capital
    that are not function words), once each: those the gist states, not those it negates
    itself ("not eighty or ninety" claims no 80)."""
    said = Folded(gist)
    toks, keys = said.tokens, said.keys
    found: dict[tuple[str, bool], Claim] = {}
    negated = {k for i, k in enumerate(keys) if said.negated(i)}
    for i, t in enumerate(toks):
        if t.number and t.text not in negated:
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            after = key(nxt) if nxt is not None and nxt.part == t.part and _content(nxt) \
                else None
            before = tuple(key(b) for b in toks[max(0, i - REACH):i]
                           if b.part == t.part and _content(b))
            left, right = _sides(keys, i)
            found.setdefault((t.text, True), Claim(key=t.text, number=True, after=after,
                                                   before=before, left=left, right=right))
    for name in _NAME.findall(gist):
        for t in folded_tokens(name):
            if _content(t) and key(t) not in negated:
                found.setdefault((key(t), False), Claim(key=key(t), number=False))
    return list(found.values())


def claim_standing(claim: Claim, texts: Sequence[Folded]) -> Standing | Literal["renumbered"]:
    """How the evidence states a gist's number or name: stated, only denied, absent, or (a
    number) absent with another value in its place: one standing between the same two
    tokens on a side, or the only value beside the same content words."""
    standing = _standing(denied(text, i) for text in texts for i, (k, t) in enumerate(
        zip(text.keys, text.tokens, strict=True)) if k == claim.key and t.number == claim.number)
    if standing != "absent" or not claim.number:
        return standing
    beside: set[str] = set()
    for text in texts:
        for i, t in enumerate(text.tokens):
            if not t.number:
                continue
            left, right = _sides(text.keys, i)
            if (claim.left and left == claim.left) or (claim.right and right == claim.right):
                return "renumbered"
            if _beside(claim, text, i):
                beside.add(t.text)
    return "renumbered" if len(beside) == 1 else "absent"


def _beside(claim: Claim, text: Folded, i: int) -> bool:
    """Whether the number token `i` stands beside the claim's content words: before the same
    content word, or after one of the same content words."""
    t = text.tokens[i]
    after = text.keys[i + 1] if i + 1 < len(text.keys) and \
        text.tokens[i + 1].part == t.part else None
    before = {text.keys[j] for j in range(max(0, i - REACH), i) if text.tokens[j].part == t.part}
    return (claim.after is not None and after == claim.after) or bool(before & set(claim.before))


class Readable:
    """Evidence units as a reader reads them, each folded once: annotation tags and notes
    dropped (`builtin_system/normalize.normalize`, as a gist drawn from them drops them), then
    answer_text's folding."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self._folded: dict[Unit, Folded] = {}

    def __call__(self, unit: Unit) -> Folded:
        if unit not in self._folded:
            text = self.corpus[unit[0]].turns[unit[1]].text
            self._folded[unit] = Folded(normalize(unit_text(text)))
        return self._folded[unit]


def _against_facts(a: Answered, folded: CorpusFolded, units: Sequence[Unit],
                   ) -> tuple[list[int], list[int]]:
    """The indices of the answer's facts the corpus states only negated, and of those its
    evidence states only with another number (the corpus having them elsewhere)."""
    negated, other = [], []
    for i, fact in enumerate(a.expected.facts):
        evidence, corpus = fact_standing(folded, fact, units)
        if "negated" in (evidence, corpus):
            negated.append(i)
        elif corpus == "stated" and any(renumbered(folded.folded(u), alt) for u in units
                                        for alt in alternatives(fact)):
            other.append(i)
    return negated, other


def _against_gist(gist: str, folded: CorpusFolded, readable: Readable, units: Sequence[Unit],
                  ) -> list[Standing | Literal["renumbered"]]:
    """How the evidence states each claim of the gist, read only in the units that may hold
    it (a number where a digit or a number word is, a name where its first letters are)."""
    numeric = [u for u in units if _NUMERIC.search(folded.light(u))]
    return [claim_standing(c, [readable(u) for u in (
        numeric if c.number else [u for u in units if c.key[:3] in folded.light(u)])])
        for c in claims(gist)]


def contradicted(answers: Sequence[Answered], folded: CorpusFolded) -> list[Finding]:
    """Answerable questions with a fact the corpus states only negated (its evidence, where
    it holds the fact; else the whole corpus), or that the evidence states only with another
    number where the corpus has it elsewhere; and gists whose numbers or names the evidence
    states only negated, or whose numbers only with another number in their place."""
    found = []
    readable = Readable(folded.corpus)
    for a in answers:
        if a.expected.must_abstain:
            continue
        units = span_units(folded.corpus, a.expected.spans)
        negated, other = _against_facts(a, folded, units)
        said = _against_gist(a.expected.gist or "", folded, readable, units)
        if negated or other or "negated" in said or "renumbered" in said:
            found.append(finding("contradicted_fact", wording.contradicted_fact(
                negated, other, said.count("negated"), said.count("renumbered"),
                len(a.expected.facts)), path=a.path, line=a.line, question_id=a.question_id))
    return found
