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
states is `facts_not_in_corpus`'); a gist's numbers and names are read in its evidence only,
and a gist's number is said to have another in its place only where its evidence gives that
place exactly one other value (transcripts speak of many numbers; a gist sums them up)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pytest_ragate.audit.evidence import Answered, CorpusFolded, Unit, span_units
from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.audit.texts import STOP
from pytest_ragate.scoring.answer_text import (
    NEGATIONS,
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
    if in_evidence != "absent":
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
    """A number or a name of a gist: its key (answer_text's), and for a number the content
    words beside it (its place)."""

    key: str
    number: bool
    after: str | None = None
    before: tuple[str, ...] = ()


def _content(token: Token) -> bool:
    return not token.number and len(token.text) > 2 and token.text not in STOP


def claims(gist: str) -> list[Claim]:
    """The numbers of a gist with their places, and its names (words written with a capital
    that are not function words), once each."""
    toks = folded_tokens(gist)
    found: dict[tuple[str, bool], Claim] = {}
    for i, t in enumerate(toks):
        if t.number:
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            after = key(nxt) if nxt is not None and nxt.part == t.part and _content(nxt) \
                else None
            before = tuple(key(b) for b in toks[max(0, i - REACH):i]
                           if b.part == t.part and _content(b))
            found.setdefault((t.text, True), Claim(key=t.text, number=True, after=after,
                                                   before=before))
    for name in _NAME.findall(gist):
        for t in folded_tokens(name):
            if _content(t):
                found.setdefault((key(t), False), Claim(key=key(t), number=False))
    return list(found.values())


def claim_standing(claim: Claim, texts: Sequence[Folded]) -> Standing | Literal["renumbered"]:
    """How the evidence states a gist's number or name: stated, only denied, absent, or (a
    number) absent with exactly one other value in its place."""
    standing = _standing(denied(text, i) for text in texts for i, (k, t) in enumerate(
        zip(text.keys, text.tokens, strict=True)) if k == claim.key and t.number == claim.number)
    if standing != "absent" or not claim.number:
        return standing
    values = {t.text for text in texts for i, t in enumerate(text.tokens)
              if t.number and _in_place(claim, text, i)}
    return "renumbered" if len(values) == 1 else "absent"


def _in_place(claim: Claim, text: Folded, i: int) -> bool:
    """Whether the number token `i` stands where the claim's number does: before the same
    content word, or after one of the same content words."""
    t = text.tokens[i]
    after = text.keys[i + 1] if i + 1 < len(text.keys) and \
        text.tokens[i + 1].part == t.part else None
    before = {text.keys[j] for j in range(max(0, i - REACH), i) if text.tokens[j].part == t.part}
    return (claim.after is not None and after == claim.after) or bool(before & set(claim.before))


def contradicted(answers: Sequence[Answered], folded: CorpusFolded) -> list[Finding]:
    """Answerable questions with a fact the corpus states only negated (its evidence, where
    it holds the fact; else the whole corpus), or that the evidence states only with another
    number where the corpus has it elsewhere; and gists whose numbers or names the evidence
    states only negated, or whose numbers only with another number in their place."""
    found = []
    for a in answers:
        if a.expected.must_abstain:
            continue
        units = span_units(folded.corpus, a.expected.spans)
        negated, other = [], []
        for i, fact in enumerate(a.expected.facts):
            evidence, corpus = fact_standing(folded, fact, units)
            if "negated" in (evidence, corpus):
                negated.append(i)
            elif corpus == "stated" and any(renumbered(folded.folded(u), alt) for u in units
                                            for alt in alternatives(fact)):
                other.append(i)
        texts = [folded.folded(u) for u in units]
        said = [claim_standing(c, texts) for c in claims(a.expected.gist or "")] \
            if texts else []
        if negated or other or "negated" in said or "renumbered" in said:
            found.append(finding("contradicted_fact", wording.contradicted_fact(
                negated, other, said.count("negated"), said.count("renumbered"),
                len(a.expected.facts)), path=a.path, line=a.line, question_id=a.question_id))
    return found
