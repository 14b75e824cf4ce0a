"""`answer_match`: is an answer right, by the facts its expected answer lists? Mechanical and
offline: right, wrong, or unsure, with what was found, missing and forbidden, by number.

An answer is checked in this order (`check_answer`; the folding and the search are
`answer_text.py`'s), once the frame a system writes around it is set aside (`_unframed`: a
citation number, `[1]`; a sentence that is only a greeting or politeness formula, `Sure!`;
an attribution to a document, `According to the meeting notes,`) and a bound or
approximation worded otherwise than the gist's is read as the gist's (`_worded`: `nearly`
for `almost`); an unsure answer in another language says so, whichever check found it:

1. **wrong** when it abstained or has no text; **unsure** when a word of it mixes alphabets
   (look-alike letters); **wrong** when it states a `forbid` statement (one no negation
   reaches: a hedge, a bound or a pseudo-negation such as `no wonder` does not hide it, nor
   up to two words between its words that negate nothing and are neither `or` nor a value,
   `managers also sign off` for `managers sign off`);
2. when a fact is not stated plainly (`answer_text.py`: negated, refused, bounded, signed,
   owned, inside a longer word, in another unit):
   - **wrong** when the answer denies it (states it under a negation before or after it:
     `not 25 euros`, `Alice did not chair`, `Friday was ruled out`), restates it in a refusal
     or a question (`no information confirming that the fee is 25 cents`), or gives it in a
     subdivision or for another period than the gist's (`25 euro cents`, `25 euros per
     year` where the gist says per month);
   - **unsure** when the answer states it only bounded (`over 25 euros`), signed, as the
     owner of a role (`Bob's lawyer signed`) or inside a longer word (`Alice-led`), and the
     gist does not say it so (a bound the gist gives too, `over 100 hours`, is the fact);
   - **wrong** when the fact holds a number, weekday or month and the answer gives another
     value of that class in its place (a value no fact and not the question has: `30 euros`
     where the fact is `25 euros`): embeddings barely see numbers, so closeness to the gist
     says nothing here;
   - **unsure** when the answer is close to the gist by the embedded MiniLM (cosine at or
     above `similar`, 0.70 unless the goldset says otherwise): a paraphrase lexical matching
     missed, the case Kamalloo et al. (ACL 2023, "Evaluating Open-Domain Question Answering
     in the Era of Large Language Models") found behind over half of lexical-match failures;
   - **wrong** otherwise;
3. when every fact is stated, **wrong** when a list of short items joined by `or` offers it
   among other candidates (`_offered`: `82.7%, 84.0% or 85.1%`); else **unsure** instead of
   right when the answer could state them without committing to them:
   - it is **too long to tell**: more tokens than 3 × the gist's, and at least 50 (a pasted
     document states every fact of it);
   - it gives **other candidate values**: a number, weekday or month of a class some fact
     has that neither a fact, the gist nor the question has (`25 or 30 euros`);
   - it **lists other candidates** beside a fact: the fact's short item (4 tokens or fewer)
     joined by `or` to a short item of words the gist and question do not have, or a list of
     three or more short items, two of them such words (`tiger, lion, bear, wolf`);
   - it **does not commit**: a sentence hedges, conditions or dates what it says (`I think`,
     `maybe`, `probably`, `if`, `used to`; ConText's uncertainty and historical triggers,
     Harkema et al., J. Biomed. Inform. 2009, scoped to the sentence) where the gist does not
     hedge what that sentence states; a sentence opens with `Or` (`It was Alice. Or maybe
     Bob.`); or a refusal or a question stands beside the facts;
   - a fact stated as a **bare list item may be denied** (`_listed_denial`): a later part of
     its sentence holds a negation the list shares (`PayPal, cheques are not accepted`);
   - it may **swap the facts' roles** (`_swapped`): with two facts of one kind (two names,
     two amounts in one unit or one with none), a word of the gist beside one of them in its
     clause (`chaired` in `Priya chaired the retro and Tom took the minutes`) stands in the
     answer beside the other (`Tom chaired the retro and Priya took the minutes`; `Minutes:
     Priya. Chair: Tom.`), or they stand side by side in the other order than the gist's,
     which gives each a role (`25 euros and 10 euros` for `the cancellation fee is 10 euros
     and the reactivation fee is 25 euros`);
   - a **statement may not be the gist's** (`_unbound`): the gist and the answer are cut
     into clauses (a sentence, a `;`, a comma, a relative clause, a coordinator after a
     value), each holding its facts and values (numbers, dates, addresses, and the gist's
     names: capitalised inside a sentence or after `;`, `MySQL`, or opening a sentence the
     rest of the gist never names again, `Cheques are not accepted`). An answer clause's
     facts and values must be held together by one gist clause; each of its gist words must
     be one of a gist clause holding them (a word of a gist clause that holds no value is
     said of something else: `The late payment fee of 15 euros was waived` where the gist
     says `it was waived for customers on annual plans`; a clause that opens with a
     pronoun or a linking word, `It is refunded.`, `, which is refunded`, `; per
     workspace`, is read with the clause before it,
     and one that holds no value must not join words of two gist sentences, `The fee was
     waived.`); a value needs a word of its own
     clause; the gist's linking word before a value is kept (a neutral one of an amount,
     `for`, `of`, `at`, or of a date, `in`, `on`, may stand for another); no word the gist
     has only after the fact's link (`within 14 days of receiving the return`) opens the
     fact's clause (`The return is received within 14 days`); two names stand in the
     gist's order when words stand between them (`Sam will replace Lena` for `Lena will
     replace Sam`); a gist verb in the other voice has its name on the other side
     (`Lena will be replaced by Sam` is unsure, `The meeting was chaired by Priya` right),
     and one in the same voice its name and the word of the gist across from it on their
     gist sides (`_crossed`: `Samuel Reyes reports to the new data engineer` is unsure);
   - it is **not a plain statement** (`Expectation.plain`, on by default): a word beside
     a fact qualifies it (`_modified`), or any word of the answer is neither a fact's, the
     gist's, the question's nor on the allow-list `PLAIN` (`_unplain`);
4. **right** otherwise: every fact stated, plainly.

Values are compared by type: a version is one token (`3.10` is not `3.1`, `3.80` not `3.8`;
`bcrypt 5.0.0` and `v5.0.0` state `5.0.0`), and so are a time, an e-mail address and a URL
(another of them in the fact's place is another value: wrong); a number keeps its sign and
its bound. A person's label settles what is unsure; `benchmarks/answer_match.py` measures
all of this against hand-written adversarial answers (issue 45).

Right is an allow-list, not the absence of a known trigger (`Expectation.plain`, on
unless a caller turns it off): the lists of negations, bounds and hedges above can never be
complete (`far from 30 days`, `north of 47 minutes`, `a common misconception`, `stop short
of saying`, `tops out at 8 workers` each escaped them), so an answer is right only where the
rule positively recognises each of its words: a fact's, the gist's, the question's (or
another inflection or spelling of one of theirs: `_known`), or one of the closed list
`PLAIN` (function words that do not bound or hedge, and verbs that report or record a
statement or a decision). Any other word leaves it unsure and is named
(`_unplain`). Before that, the words that can modify a fact by position are read, so that
the reason names the modifier (`_modified`): the word right after the fact (and the one
beyond it when that word links: `or newer`), a linking word right before it and the word
before that (`north of`), and a concessive or contrastive word opening its clause part
(`though`). ConText (Harkema et al., J. Biomed. Inform. 2009) finds a modifier by its
trigger list and scopes it to the clause; here the list is turned over: a word that is not
known to be plain is the trigger, wherever it stands. Measured by
`benchmarks/answer_match.py` (`--not-plain` for the rule without it): no wrong answer of the
five adversarial sets (1,444) counted right, against 27 of the third's 193 without it; but
40.0% of the 335 labelled answers are unsure (134, against 49 without it), and 47.8% of the
67 held-out ones (32, against 8), over the 15% issue 34 set: a right answer in words the
gist lacks is left to a person's label.

So a whole-document dump and a list of every candidate value are never right: the first is
too long, the second gives other candidate values or lists other candidates; both are at
best unsure, and a person decides. An unsure answer is never counted either way on its own:
a person's label settles it (`settle`; the labels file, tied by `answer_sha256` to the raw
answer it was written for and by `expected_sha256` to the expected answer it was judged
against: a change to either leaves it stale), or the goldset says `unsure = "wrong"`;
otherwise a floor on `answer_match` is not decided and names it (the rule is
`decision/floors.py`'s, over the rows `unsettled` finds).

SQuAD's exact match and token F1 (Rajpurkar et al., EMNLP 2016) compare a whole answer with a
whole reference; this compares facts, so a right answer may say more than the gist and a
long one cannot pass on overlap alone. `benchmarks/answer_match.py` measures it against
hand labels beside those peers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_ragate.answer import answer_sha256, is_keyed, keyed_digest
from pytest_ragate.scoring.answer_text import (
    CONTRASTS,
    NEGATIONS,
    OPENERS,
    QUALIFIED,
    UNITS,
    Fact,
    Folded,
    Occurrence,
    Token,
    alternatives,
    clean,
    closed_class,
    english,
    hedges,
    key,
    mixed_script,
    other_language,
    tokens,
    words_of,
)

if TYPE_CHECKING:
    from pytest_ragate.scoring.records import QuestionRecord

ANSWER_MATCH = "answer_match"
ANSWER_SIMILARITY = "answer_similarity"
Outcome = Literal["right", "wrong", "unsure"]
Unsure = Literal["label", "wrong"]  # what an unlabelled unsure answer counts as
# a label of the question not applied as written: it predates expected-answer digests (it
# still settles), was judged against another expected answer or written for another answer,
# or, in a sealed goldset, was stamped with plain digests before they were keyed (it does not
# settle: `ragate stamp --labels` binds it again)
LabelNote = Literal["predates", "stale_expected", "stale_answer", "predates_keyed"]
SIMILAR = 0.70  # cosine to the gist at or above which a missing fact leaves an answer unsure
LENGTH_TIMES = 3  # an answer longer than this many times the gist's tokens is too long to tell
LENGTH_FLOOR = 50  # ... and longer than this many tokens
DUMP_TIMES, DUMP_FLOOR = 10, 300  # longer than both is not an answer but a pasted text: wrong
SHORT_ITEM = 4  # tokens of a list item that reads as one candidate
STOPWORDS = frozenset(["i", "me", "my", "we", "our", "you", "your", "he", "him", "his", "she",
                       "her", "it", "its", "they", "them", "their", "this", "that", "these",
                       "those", "is", "are", "was", "were", "be", "been", "being", "am", "do",
                       "does", "did", "have", "has", "had", "will", "would", "shall", "should",
                       "can", "could", "may", "might", "must", "of", "in", "on", "at", "to", "for",
                       "from", "by", "with", "about", "as", "into", "over", "under", "and", "or",
                       "so", "if", "then", "than", "also", "just", "very", "too", "there", "here",
                       "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
                       "all", "any", "each", "some", "such", "only", "own", "same", "other",
                       "said", "say", "says", "think", "thought", "maybe", "perhaps", "possibly",
                       "probably", "either"])


class AnswerCheck(BaseModel):
    """What `answer_match` found in one answer: its outcome and why, the facts it states,
    misses and the forbidden statements it makes (1-based numbers: never their text), the
    cosine to the gist, and whether a person's label or the goldset's `unsure = "wrong"`
    settled it. Rides on the question's row."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: Outcome
    why: str
    facts: int = Field(ge=1)
    found: list[int] = Field(default_factory=list)
    missing: list[int] = Field(default_factory=list)
    forbidden: list[int] = Field(default_factory=list)
    similarity: float | None = None
    settled: Literal["label", "unsure_wrong"] | None = None
    label: Literal[0, 1] | None = None  # the person's verdict, when a label settled it
    # what a label of this answer must carry (`settle`, `ragate stamp --labels`): the sha256 of
    # the raw answer (never of its masked text) and of the expected answer it is held to
    answer_sha256: str | None = None
    expected_sha256: str | None = None
    label_note: LabelNote | None = None  # a label that predates the rule, or is stale

    @property
    def value(self) -> float | None:
        """1 right, 0 wrong; an unsure answer its label (or 0 under `unsure = "wrong"`), and
        None while nothing settled it."""
        if self.settled == "label":
            return float(self.label or 0)
        if self.outcome == "unsure":
            return 0.0 if self.settled == "unsure_wrong" else None
        return 1.0 if self.outcome == "right" else 0.0

    @property
    def unsettled(self) -> bool:
        return self.value is None

    @property
    def line(self) -> str:
        """`answer_match: unsure, not labelled: fact 2 not stated, … · cosine 0.81`: what a
        person reads of it (a question's JUnit output, the HTML report)."""
        state = {"label": f"{self.outcome}, labelled {'right' if self.label else 'wrong'}",
                 "unsure_wrong": 'unsure, counted wrong (unsure = "wrong")',
                 None: self.outcome + (", not labelled" if self.unsettled else "")}
        near = "" if self.similarity is None else f" · cosine {self.similarity:.2f}"
        return f"answer_match: {state[self.settled]}: {self.why}{near}"

    def properties(self) -> list[tuple[str, str]]:
        """Its JUnit properties: numbers of facts, never their text."""
        props = [("answer_match.outcome", self.outcome), ("answer_match.why", self.why),
                 ("answer_match.facts", str(self.facts))]
        for name in ("found", "missing", "forbidden"):
            numbers = getattr(self, name)
            if numbers:
                props.append((f"answer_match.{name}", ",".join(map(str, numbers))))
        if self.settled:
            props.append(("answer_match.settled",
                          f"label {self.label}" if self.settled == "label" else
                          'unsure = "wrong"'))
        return props


@dataclass(frozen=True, kw_only=True)
class Expectation:
    """What an answer is held to: the expected answer's facts, forbidden statements and gist,
    and the question it answers."""

    facts: Sequence[Fact]
    forbid: Sequence[Fact] = ()
    gist: str = ""
    question: str = ""
    similar: float = SIMILAR
    # right only as a plain statement (`_modified`, `_unplain`): on by default; off only to
    # measure the rule without it (benchmarks/answer_match.py --not-plain) or in tests of how a
    # value matches, apart from it
    plain: bool = True


def numbered(numbers: Sequence[int]) -> str:
    """`fact 2`, `facts 1, 3`."""
    return f"fact{'s' * (len(numbers) != 1)} {', '.join(map(str, numbers))}"


Near = Callable[[str], float]  # the cosine of the answer and a text, through the embedded model


def check_answer(text: str | None, expected: Expectation, *, similarity: float | None,
                 near: Near | None = None) -> AnswerCheck:
    """The answer's outcome by the rules of this module's docstring. `similarity` is its
    cosine to the gist; `near`, when given, the cosine of the answer and any text, with which
    a missing fact is weighed against what the gist says around it (else against
    `similarity`; with neither, a missing fact is wrong). An unsure answer in another
    language than the gist's says so, whichever check left it unsure first: that is why the
    rule cannot read it (`Gewinnziel 50 Millionen Euro` is not unsure for `gewinnziel`)."""
    check = _checked(text, expected, similarity=similarity, near=near)
    if check.outcome != "unsure" or not text or mixed_script(text) or \
            not other_language(Folded(text)) or other_language(Folded(expected.gist)):
        return check
    what = (f"{numbered(check.missing)} not stated" if check.missing else
            f"states {numbered(check.found)}")
    return check.model_copy(update={"why": f"{what}, but {OTHER_LANGUAGE}"})


OTHER_LANGUAGE = ("the answer is not in the expected answer's language, which neither the "
                  "matching nor the embedded model compares: review it")


def _checked(text: str | None, expected: Expectation, *, similarity: float | None,
             near: Near | None = None) -> AnswerCheck:
    """`check_answer`'s outcome before an unsure answer's language is told."""
    n = len(expected.facts)
    everything = list(range(1, n + 1))
    if not text or not text.strip():
        return AnswerCheck(outcome="wrong", why="no answer: abstained or empty", facts=n,
                           missing=everything, similarity=similarity)
    if mixed_script(text):
        return AnswerCheck(outcome="unsure", why="mixes alphabets inside a word (look-alike "
                           "letters, such as a Cyrillic о in a Latin word, read as one word and "
                           "match as another): review it", facts=n, similarity=similarity)
    whole = Folded(text)
    answer = Folded(_worded(_unframed(text, expected), expected.gist))
    gist = Folded(expected.gist)
    found_in = [_occurrences(answer, gist, expected.question, f) for f in expected.facts]
    stated = [[o for o in occ if not o.negated and not o.qualified] for occ in found_in]
    found = [i for i, s in enumerate(stated, 1) if s]
    missing = [i for i, s in enumerate(stated, 1) if not s]
    forbidden = [i for i, f in enumerate(expected.forbid, 1)
                 if answer.states(f) or whole.states(f)]
    made = {"facts": n, "found": found, "missing": missing, "forbidden": forbidden,
            "similarity": similarity}
    if forbidden:
        return AnswerCheck(outcome="wrong", why=f"states forbidden statement"
                           f"{'s' * (len(forbidden) != 1)} {', '.join(map(str, forbidden))}",
                           **made)
    context = _Context.of(answer, expected, [o for s in stated for o in s])
    dump = max(DUMP_FLOOR, DUMP_TIMES * context.gist_tokens)
    if len(answer.tokens) > dump:
        return AnswerCheck(outcome="wrong", why=f"not an answer but a pasted text: "
                           f"{len(answer.tokens)} tokens, over {dump} (10 × the expected "
                           "answer's, at least 300)", **made)
    if missing:
        call, made["similarity"] = _not_stated(answer, expected, context, found_in, missing,
                                               similarity, near)
        return AnswerCheck(**call, **made)
    offered = _offered(answer, context)
    if offered:
        return AnswerCheck(outcome="wrong", why=f"offers the facts among other candidates "
                           f"joined by \"or\" ({offered}): it does not commit to them", **made)
    both = [i for i, occ in enumerate(found_in, 1) if any(o.negated for o in occ)]
    if both:
        return AnswerCheck(outcome="unsure", why=f"states {numbered(both)} and denies "
                           f"{'them' if len(both) > 1 else 'it'} elsewhere: review it", **made)
    doubt = _doubt(answer, context) or _hedged(answer, gist, expected, stated) or \
        _listed_denial(answer, gist, expected, stated) or \
        _swapped(answer, gist, expected) or _unbound(answer, gist, expected) or \
        (_modified(answer, context, stated) or _unplain(answer, context)
         if expected.plain else "")
    if doubt:
        return AnswerCheck(outcome="unsure", why=doubt, **made)
    return AnswerCheck(outcome="right", why=f"states {numbered(found)}", **made)


# the frame a system writes around its statement, which states nothing of the facts
# (`_unframed`): a citation marker that is a number, after a space and before a stop, a
# comma or the end (`[1]`, `[doc 3]`, `[1][2]`; not `limits[1]`, nor `25 [30] cents`); a
# sentence that is only a greeting or a politeness formula (`Sure!`, `Thanks for reaching out!`,
# `Is there anything else I can help you with?`) or a preamble (`Answer:`, `Here's what I
# found:`); and a phrase that names the document a statement comes from (`According to the
# meeting notes,`, `, per the operations runbook`) where every word of the name is a
# document's (`DOCUMENTS`) or the question's (not the gist's: `the old schedule` where the
# gist tells an old fee from a new one): an attribution to a source the rule cannot vouch
# for (`according to a rumour`, `the old draft`) keeps its words
CITATION = re.compile(r"(?:\s+|^|(?<=\]))\[(?:(?:doc(?:ument)?|source|ref|chunk|passage|"
                      r"context)\s*)?#?\d+"
                      r"(?:\s*[,;\u2013-]\s*(?:(?:doc(?:ument)?|source)\s*)?#?\d+)*\]"
                      r"(?=\s*(?:[.,;:!?)\[\n]|$))", re.IGNORECASE)
_POLITE = (r"(?:sure(?: thing)?|certainly|of course|absolutely|hi(?: there)?|hello|hey|"
           r"good (?:question|news)|great question|thanks?(?: you)?(?: for (?:reaching out|"
           r"asking|your (?:question|patience|message)|contacting us))?|happy to help|"
           r"glad to help|hope (?:this|that) helps|answer|here(?: i|\u2019|')s what i found|"
           r"(?:is there )?anything else i can help (?:you )?with(?: today)?|"
           r"let me know if (?:there(?: i|\u2019|')s|you need) anything else(?: i can help with)?)")
POLITE = re.compile(rf"(?:(?<=^)|(?<=[.!?:]\s)|(?<=\n)){_POLITE}\s*(?:[!.?:]+|$)\s*",
                    re.IGNORECASE)
HEADS = frozenset([
    "notes", "minutes", "documentation", "docs", "doc", "document", "documents", "page",
    "pages", "policy", "guide", "guidelines", "report", "log", "changelog", "plan", "runbook",
    "faq", "handbook", "manual", "letter", "table", "chart", "reference", "context", "source",
    "sources", "information", "wiki", "article", "specification", "spec", "readme", "website",
    "contract", "agreement", "terms", "record", "records", "transcript", "announcement",
    "schedule", "agenda", "summary"])
DOCUMENTS = HEADS | frozenset(["provided", "given", "official", "attached", "the", "our",
                               "your", "this", "these", "a", "an"])
_SOURCE = r"((?:[\w'\u2019-]+\s+){0,4}?[\w'\u2019-]+)"
ATTRIBUTED = (re.compile(rf"(?:(?<=^)|(?<=[.!?]\s))(?:according to|based on|as per|per)"
                         rf"\s+{_SOURCE}\s*[,:]\s+", re.IGNORECASE),
              re.compile(rf",\s+(?:according to|as per|per|based on)\s+{_SOURCE}\s*"
                         rf"(?=[.!?]|$)", re.IGNORECASE))


def _unframed(text: str, expected: Expectation) -> str:
    """The answer without the frame a system writes around it (`CITATION`, `POLITE`,
    `ATTRIBUTED`): what is left is what it states. A source whose name holds a word that is
    neither a document's nor the question's stays (its words are read)."""
    known = words_of([expected.question])
    text = CITATION.sub("", text)
    for pattern in ATTRIBUTED:
        text = pattern.sub(lambda m: "" if _source(tokens(m.group(1)), known)
                           else m.group(0), text)
    stripped = POLITE.sub("", text).strip()
    return stripped or text


# the ways of writing one bound or one approximation: where the gist writes one of a group
# and the answer another, the answer's is read as the gist's (`nearly an hour` for `almost an
# hour`, `more than 100 hours` for `over 100 hours`); each group says one thing of the value
# beside it (none mixes a bound with an approximation, or one direction with the other), and
# the gist's word is then held to the gist's place as before
WORDINGS = (("almost", "nearly"),
            ("about", "around", "roughly", "approximately", "approx", "circa", "~"),
            ("over", "more than", "above", ">"),
            ("under", "less than", "below", "<"),
            ("up to", "at most", "no more than", "a maximum of"),
            ("at least", "no less than", "a minimum of", ">="))


def _worded(text: str, gist: str) -> str:
    """The answer with each bound or approximation written as the gist writes it
    (`WORDINGS`), where the gist writes one of its group and not the answer's."""
    def phrase(word: str) -> str:
        edge = r"\b" if word[0].isalnum() else ""
        return rf"(?<![\w<>~=]){edge}{re.escape(word)}{edge}(?![<>~=])"

    said = clean(gist).lower()
    for group in WORDINGS:
        theirs = [w for w in group if re.search(phrase(w), said)]
        if len(theirs) != 1:
            continue
        for mine in (w for w in group if w != theirs[0]):
            text = re.sub(phrase(mine), f" {theirs[0]} ", text, flags=re.IGNORECASE)
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", text)


def _source(words: list[Token], known: set[str]) -> bool:
    """Whether `words` name a document (`the meeting notes`): the last a document's noun
    (`HEADS`), each other one a document's word or the question's."""
    return bool(words) and words[-1].text in HEADS and all(
        w.text in DOCUMENTS or _known(key(w), known) for w in words[:-1])


def _not_stated(answer: Folded, expected: Expectation, context: _Context,
                found_in: list[list[Occurrence]], missing: list[int], similarity: float | None,
                near: Near | None) -> tuple[dict[str, object], float | None]:
    """The call (outcome and why) on an answer that does not state every fact plainly, and
    the cosine it was weighed by: wrong where it denies, refuses or mis-states one
    (`_qualified`); else the facts it never mentions decide as before (`_missing`), and one
    it states only qualified leaves it unsure at best."""
    qualified = _qualified(found_in, missing)
    if qualified and qualified[0] == "wrong":
        return {"outcome": "wrong", "why": qualified[1]}, similarity
    bare = [i for i in missing if not found_in[i - 1]]
    if bare or not qualified:
        weighed = _weighed(answer, expected, bare or missing, similarity, near)
        call = _missing(answer, expected, context, bare or missing, weighed)
        if call["outcome"] == "wrong" or not qualified:
            return call, weighed
        similarity = weighed
    return {"outcome": "unsure", "why": qualified[1]}, similarity


def _occurrences(answer: Folded, gist: Folded, question: str, fact: Fact,
                 ) -> list[Occurrence]:
    """The fact's occurrences in the answer, weighed against the gist's: a qualifier the gist
    shares (`over 100 hours` where the gist says it too) dropped; a possessive of a word the
    gist and the question lack made `owned` (`Dr. Mensah's registrar`; not `Sarah's remote`
    where the question asks of remotes); a rate the gist does not give (`25 euros per year`
    where it says per month) made `unit`; the other direction of change than the gist's
    (`dropped 2.5%` where it rose) made `opposite`."""
    found = [o for alt in alternatives(fact) for o in answer.find(alt)]
    said = [o for alt in alternatives(fact) for o in gist.find(alt)
            if o.first < len(gist.tokens)]
    shared = {o.qualified for o in said if not o.negated}
    rates = {gist.rate(o.last) for o in said}
    ways = {d for o in said for d in gist.directions(o.first)}
    known = set(gist.keys) | words_of([question])
    longer = _longer_names(answer, fact, known)
    out = []
    for o in found:
        qualified = o.qualified
        if qualified in shared or (qualified == "compound" and not said) or (
                qualified.startswith("owner:") and _known(qualified[6:], known)):
            qualified = ""  # `Sarah's remote` where the question asks of remotes
        elif qualified.startswith("owner:"):
            qualified = "owned"
        if not qualified and o.last + 1 < len(answer.tokens) and \
                answer.keys[o.last + 1] in longer:
            qualified = "compound"  # `the Leeds Bradford Airport depot` for `Leeds`
        rate = answer.rate(o.last) if o.last >= o.first else ""
        if not qualified and said and rate and rate not in rates:
            qualified = "unit"
        if not qualified and o.first < len(answer.tokens) and len(ways) == 1 and \
                answer.directions(o.first) == {"up", "down"} - ways:
            qualified = "opposite"  # `dropped 2.5%` where the gist says it rose
        out.append(Occurrence(first=o.first, last=o.last, negated=o.negated,
                              qualified=qualified))
    return out


def _longer_names(answer: Folded, fact: Fact, known: set[str]) -> set[str]:
    """The capitalised words right after a written name of the fact in the answer that the
    gist and the question lack (`Bradford` in `Leeds Bradford Airport` for `Leeds`): the
    fact is then part of a longer name."""
    texts = [t for t in ([fact] if isinstance(fact, str) else fact)
             if t[:1].isupper() and not t.startswith("/")]
    cased = clean(answer.text)
    after = {key(tokens(m.group(1))[0]) for t in texts for m in re.finditer(
        rf"(?i:\b{re.escape(t)})\s+([A-Z][^\W\d_]+)", cased) if tokens(m.group(1))}
    return {w for w in after if not _known(w, known)}


def _known(word: str, known: set[str]) -> bool:
    """Whether the gist or the question has `word`, a longer form of it (`work`, `worked`),
    another inflection of the same word (`sells`, `selling`; `approve`, `approved`;
    `cancel`, `cancelled`: `_bases`) or its other spelling (`colour`, `color`)."""
    if word in known or (len(word) >= 4 and any(k.startswith(word) for k in known)):
        return True
    return bool(_bases(word) & _known_bases(frozenset(known)))


INFLECTIONS = ("ing", "ied", "ies", "ed", "es", "s", "d")  # suffixes of tense and number
# English's common irregular verbs: each past and participle form, and its base (not `had`:
# `had been 25 euros` is a value since changed; not `left`, as often `remaining`; not
# `thought`, `felt`: `I thought it was` hedges)
IRREGULAR = {form: base for base, forms in {
    "begin": "began begun", "bring": "brought", "build": "built", "buy": "bought",
    "choose": "chose chosen", "come": "came", "do": "did done", "draw": "drew drawn",
    "drive": "drove driven", "eat": "ate eaten", "fall": "fell fallen", "find": "found",
    "fly": "flew flown", "get": "got gotten", "give": "gave given", "go": "went gone",
    "grow": "grew grown", "hold": "held", "keep": "kept", "know": "knew known", "lead": "led",
    "lend": "lent", "lose": "lost", "make": "made", "meet": "met", "pay": "paid",
    "ride": "rode ridden", "run": "ran", "say": "said", "see": "saw seen", "sell": "sold",
    "send": "sent", "show": "shown", "sit": "sat", "speak": "spoke spoken", "spend": "spent",
    "stand": "stood", "take": "took taken", "teach": "taught", "tell": "told", "win": "won",
    "write": "wrote written"}.items() for form in forms.split()}


def _bases(word: str) -> set[str]:
    """The forms `word` may be an inflection of, by English's regular suffixes of tense and
    number only (`-s`, `-es`, `-ed`, `-d`, `-ing`, `-ies`/`-ied` for `-y`, a final `e`
    dropped, a final consonant doubled) or as a common irregular verb's past (`took`,
    `taken`: `take`; `IRREGULAR`), and its American spelling (`colour` → `color`,
    `organise` → `organize`): never a suffix that changes what the word says (`-er`, `-less`,
    `-ly`) nor a prefix (`un-`)."""
    spelt = _american(word)
    found = {word, spelt, IRREGULAR.get(word, word)}
    for form in (word, spelt):
        for suffix in INFLECTIONS:
            stem_ = form[:-len(suffix)]
            if not form.endswith(suffix) or len(stem_) < 3:
                continue
            if suffix in ("ied", "ies"):
                found.add(stem_ + "y")
                continue
            found |= {stem_, stem_ + "e"}
            if len(stem_) > 3 and stem_[-1] == stem_[-2] and stem_[-1] not in "aeiouls":
                found.add(stem_[:-1])  # planned, cancelled: plan, cancel
            if len(stem_) > 3 and stem_[-1] == stem_[-2] == "l":
                found.add(stem_[:-1])
    return found


def _american(word: str) -> str:
    """A British spelling as American (`colour`, `favourite`, `organise`, `analyse`): the
    suffix and the `-our` of words of six letters or more."""
    if len(word) < 6:
        return word
    word = re.sub(r"(?<=[^aeiou])our", "or", word)
    return re.sub(r"(?<=[a-z]{3})is(e|ed|es|ing|ation)$", r"iz\1",
                  re.sub(r"(?<=[a-z]{3})ys(e|ed|es|ing)$", r"yz\1", word))


@lru_cache(maxsize=256)
def _known_bases(known: frozenset[str]) -> frozenset[str]:
    """The forms the gist's and question's words may be inflections of (`_bases`)."""
    return frozenset(b for k in known for b in _bases(k))


def _qualified(found_in: list[list[Occurrence]], missing: list[int]) -> tuple[str, str] | None:
    """The call on missing facts that the answer does state, but negated or qualified:
    wrong when it denies one, restates one in a refusal or in another unit; unsure when it
    bounds one or gives it as someone's owner or inside a longer word; else None."""
    worst: tuple[str, str] | None = None
    for i in missing:
        occ = found_in[i - 1]
        if not occ:
            continue
        if all(o.negated for o in occ):
            return "wrong", f"fact {i} not stated: the answer denies fact {i}"
        kinds = {o.qualified for o in occ if not o.negated}
        for kind in ("refused", "unit", "opposite"):
            if kind in kinds:
                return "wrong", f"fact {i} not stated: the answer gives it only {QUALIFIED[kind]}"
        if worst is None:
            kind = sorted(kinds)[0]
            worst = ("unsure", f"fact {i} stated only {QUALIFIED[kind]}: review it")
    return worst


def _hedged(answer: Folded, gist: Folded, expected: Expectation,
            stated: list[list[Occurrence]]) -> str:
    """Why an answer that states every fact does not commit to them: a sentence that hedges,
    makes it conditional or dates it (ConText's uncertainty and historical cues, in its
    sentence) where the gist does not say it so; a sentence opening with `Or`; a refusal
    beside the facts. Empty when none."""
    gist_hedged = hedges(gist)
    for clause, cue in hedges(answer).items():
        here = [i for i, occ in enumerate(stated)
                if any(answer.tokens[o.first].clause == clause for o in occ)]
        excused = bool(gist_hedged) and (not here or any(
            gist.tokens[o.first].clause in gist_hedged for i in here
            for alt in alternatives(expected.facts[i]) for o in gist.find(alt)
            if o.first < len(gist.tokens)))
        if not excused:
            return (f"does not commit to what it states: \"{cue}\" hedges, conditions or "
                    "dates a sentence of it where the expected answer does not: review it")
    openers = [t for i, t in enumerate(answer.tokens) if i and t.text in OPENERS
               and answer.tokens[i - 1].clause != t.clause]
    if openers:
        return (f"offers another candidate in a sentence of its own (\"{openers[0].text} …\"): "
                "review it")
    if any(answer.refused(i) for i in range(len(answer.tokens))) and not any(
            gist.refused(i) for i in range(len(gist.tokens))):
        return ("asks, or says beside the facts that it cannot confirm something: review it")
    return ""


def _listed_denial(answer: Folded, gist: Folded, expected: Expectation,
                   stated: list[list[Occurrence]]) -> str:
    """Why a fact stated as a bare list item may be denied: its comma-separated part holds
    nothing but facts (and `and`, `or`), and a later part of its sentence holds a negation
    that does not open that part (`PayPal, cheques are not accepted`: the list shares the
    predicate; not `25 euros, not 30`), where the gist's sentence does not. Empty when
    none."""
    for i, occ in enumerate(stated, 1):
        if any(_bare_then_denied(answer, o) for o in occ) and not any(
                _bare_then_denied(gist, o) for alt in alternatives(expected.facts[i - 1])
                for o in gist.find(alt) if o.first < len(gist.tokens)):
            return (f"states fact {i} as a list item, and a negation later in its sentence may "
                    "deny the whole list: review it")
    return ""


def _bare_then_denied(folded: Folded, o: Occurrence) -> bool:
    """Whether occurrence `o` is a bare list item followed in its sentence by a part that
    negates after its first word (`_listed_denial`)."""
    toks = folded.tokens
    here = toks[o.first]
    part = [j for j, t in enumerate(toks) if t.part == here.part]
    if any(not o.first <= j <= o.last and toks[j].text not in ("and", "or") for j in part):
        return False
    return any(t.clause == here.clause and t.part != here.part and t.text in NEGATIONS and
               toks[j - 1].part == t.part for j, t in enumerate(toks[o.last + 1:], o.last + 1))


Spans = list[list[tuple[int, int]]]  # per fact, the token spans of its occurrences in a text
ROLE_REACH = 3  # tokens between a fact and a word beside it that says its role (`sells for 25`)


def _swapped(answer: Folded, gist: Folded, expected: Expectation) -> str:
    """Why an answer that states two or more facts of one kind (two names, two amounts in
    one unit) may give them each other's roles: a word of the gist attached to one of them
    there (`_attached`: `chaired` to `Priya` in `Priya chaired the retro and Tom took the
    minutes`; `sells` to `25 euros` in `It sells for 25 euros and costs 12.50 euros to make`)
    stands in the answer attached to the other (`Tom chaired the retro and Priya took the
    minutes`; `Minutes: Priya. Chair: Tom.`). An answer that reorders the facts with their
    words (`Tom took the minutes; Priya chaired`) keeps each word with its fact. The rule finds
    each fact as a value or a name; which role it fills only the words beside it say, so a
    word that moved to another fact of its kind leaves the answer unsure, named with both
    facts. Facts the gist states in clauses of their own (`_clauses`: `the cancellation fee is
    10 euros and the reactivation fee is 25 euros`) have a role each too, so side by side
    in the other order (`25 euros and 10 euros`) they are unsure. Empty when none moved (or
    with one fact)."""
    if len(expected.facts) < 2:
        return ""
    kinds = [_kinds(f) for f in expected.facts]
    said: Spans = [_spans(gist, f) for f in expected.facts]
    given: Spans = [_spans(answer, f) for f in expected.facts]
    roles: dict[str, set[int]] = {}
    gist_cut, answer_cut = (_clauses(gist, said, frozenset()).of,
                            _clauses(answer, given, frozenset()).of)
    for j in _role_words(gist, said):
        there = _attached(gist, j, said, gist_cut)
        roles.setdefault(gist.keys[j], set()).update([] if there is None else [there])
    owned = {next(iter(facts)) for facts in roles.values() if len(facts) == 1}
    order = {fact: min(first for first, _ in occ) for fact, occ in enumerate(said) if occ}
    for a, b in _joined_pairs(answer, given):
        own = {a, b} <= owned or _own_clauses(gist, said, a, b)
        if own and order[a] > order[b] and _interchangeable(kinds[a], kinds[b]):
            return (f"states facts {a + 1} and {b + 1} side by side in the other order than the "
                    "expected answer, which gives each its own role: which is which? review it")
    for j in _role_words(answer, given):
        here = _attached(answer, j, given, answer_cut)
        for word, facts in roles.items():
            if here is None or len(facts) != 1 or not _same_word(answer.keys[j], word):
                continue
            there = next(iter(facts))
            if there != here and _interchangeable(kinds[here], kinds[there]):
                return (f"\"{answer.tokens[j].text}\" goes with fact {here + 1} in the answer "
                        f"but with fact {there + 1} in the expected answer: are the facts' roles "
                        "swapped? review it")
    return ""


def _own_clauses(gist: Folded, said: Spans, a: int, b: int) -> bool:
    """Whether the gist states facts `a` and `b` (0-based) in clauses of their own
    (`_clauses`), each with a word that says its role (`_role_words`: `the cancellation fee
    is 10 euros and the reactivation fee is 25 euros`; not the bare items of a list)."""
    clauses = _clauses(gist, said, frozenset())
    words = {clauses.of[j] for j in _role_words(gist, said)}
    homes = [{clauses.of[first] for first, _ in said[f]} for f in (a, b)]
    return all(homes) and not homes[0] & homes[1] and all(h <= words for h in homes)


def _joined_pairs(folded: Folded, spans: Spans) -> set[tuple[int, int]]:
    """The pairs of facts (0-based, in the text's order) a text states side by side in one
    sentence: with nothing but a comma between, or `and` or `or` in one clause part (`Tom and
    Priya chaired and took the minutes`; not `… by Tom, and Priya chaired`). Which fills
    which role only their order can say (read as the gist's, `respectively`)."""
    pairs: set[tuple[int, int]] = set()
    for a, first_occ in enumerate(spans):
        for b, second_occ in enumerate(spans):
            for (_, last), (first, _) in ((x, y) for x in first_occ for y in second_occ):
                between = folded.tokens[last + 1:first]
                if a != b and last < first and folded.tokens[last].clause == \
                        folded.tokens[first].clause and (not between or (
                            len(between) == 1 and between[0].text in ("and", "or")
                            and folded.tokens[last].part == folded.tokens[first].part)):
                    pairs.add((a, b))
    return pairs


def _spans(folded: Folded, fact: Fact) -> list[tuple[int, int]]:
    """The token spans of the fact's occurrences in a text: of its written alternatives where
    one occurs (a regular expression's match may take in the words around the value: `price
    of 25`), else of its regular expressions."""
    alts = alternatives(fact)
    for wanted in ([a for a in alts if a.pattern is None], [a for a in alts if a.pattern]):
        spans = [(o.first, max(o.first, o.last)) for alt in wanted for o in folded.find(alt)
                 if o.first < len(folded.tokens)]
        if spans:
            return spans
    return []


def _kinds(fact: Fact) -> set[str]:
    """What a fact is, as far as another could take its place: an amount in its unit
    (`number eur`; `number` alone where it has none, `number ?` for a regular expression
    that holds a digit), a weekday, a month, or a name (any other word)."""
    found: set[str] = set()
    for text, alt in zip([fact] if isinstance(fact, str) else fact, alternatives(fact),
                         strict=True):
        if alt.pattern is not None:
            found.add("number ?" if alt.numeric else "name")
            continue
        folded = tokens(text)
        numbers = [i for i, t in enumerate(folded) if t.number]
        if numbers:
            after = folded[numbers[-1] + 1:numbers[-1] + 2]
            found.add(f"number {after[0].text if after else ''}".strip())
        else:
            found.add(next((c for t in folded if (c := closed_class(t))), "name"))
    return found


def _interchangeable(a: set[str], b: set[str]) -> bool:
    """Whether facts of these kinds (`_kinds`) could take each other's place: they share a
    kind, or both are numbers and one has no unit (`12.50`) or is a regular expression's."""
    return bool(a & b) or any({x, y} & {"number", "number ?"} and x[:6] == y[:6] == "number"
                              for x in a for y in b)


def _role_words(folded: Folded, spans: Spans) -> list[int]:
    """The tokens of a text that may say a fact's role: words (not values, not units)
    outside every fact's occurrence, that are not function words (`STOPWORDS`, `PLAIN`)."""
    inside = {i for occ in spans for first, last in occ for i in range(first, last + 1)}
    return [j for j, t in enumerate(folded.tokens) if j not in inside and t.kind == "word"
            and not t.number and t.text not in STOPWORDS | PLAIN | UNITS
            and len(folded.keys[j]) > 1]


def _attached(folded: Folded, j: int, spans: Spans, cut: Sequence[int]) -> int | None:
    """The fact (0-based) token `j` is attached to: of the facts with an occurrence in its
    clause (`cut`, `_clauses`: `and the reactivation fee is 25 euros` holds `reactivation`
    apart from the 10 euros before it), else in its comma-separated part, else in its
    sentence (a sentence ending in a colon read with the next: `Chair: Tom`), the one
    strictly nearest, if within `ROLE_REACH` tokens; None when none is that near or two are
    as near."""
    groups = _sentences(folded)
    for scope in ("clause", "part", "sentence"):
        def same(i: int, scope: str = scope) -> bool:
            if scope == "clause":
                return cut[i] == cut[j]
            if scope == "part":
                return folded.tokens[i].part == folded.tokens[j].part
            return groups[i] == groups[j]

        gaps = {fact: min(found) for fact, occ in enumerate(spans) if (found := [
            first - j if j < first else j - last for first, last in occ
            if same(first if j < first else last)])}
        if gaps:
            best = min(gaps.values())
            nearest = [fact for fact, gap in gaps.items() if gap == best]
            return nearest[0] if len(nearest) == 1 and best <= ROLE_REACH else None
    return None


def _sentences(folded: Folded) -> list[int]:
    """Each token's sentence, a sentence that ends in a colon joined to the next (`Minutes:
    Priya`)."""
    out: list[int] = []
    group = 0
    for i, token in enumerate(folded.tokens):
        if i and token.clause != folded.tokens[i - 1].clause:
            between = folded.plain[folded.tokens[i - 1].end:token.start]
            group += 0 if between.strip() == ":" else 1
        out.append(group)
    return out


def _same_word(a: str, b: str) -> bool:
    """The same word as compared, or one a longer form of the other (`chair`, `chaired`)."""
    return a == b or (min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a)))


# the closed class of words that modify no fact beside it: copulas, auxiliaries, pronouns,
# determiners, `and`; and the prepositions that link a value to its head without bounding it
# (`a price of 25 euros`, `sell at 25 euros`, `for 25 euros`): of the words beside a fact,
# any other must be the gist's or the question's
NEUTRAL = frozenset(["is", "are", "was", "were", "be", "been", "being", "am", "has", "have",
                     "had", "do", "does", "did", "will", "would", "shall", "should", "can",
                     "could", "must", "it", "its", "they", "their", "them", "he", "him", "his",
                     "she", "her", "we", "our", "you", "your", "i", "me", "my", "this", "that",
                     "these", "those", "there", "here", "and", "both", "each", "also", "which",
                     "who", "whom", "whose", "what", "s"])
LINKS = frozenset(["of", "at", "for", "in", "on", "with", "as", "per"])  # neutral prepositions
# a word that links what stands beyond it to the fact (`north of 47`, `subject to 15%`,
# `3.10 or newer`): the word beyond it is read as well; past another link (`sold at`, `12.50
# per unit`) the word beyond is the sentence's, not the fact's
LINKING = frozenset(["of", "to", "from", "by", "or", "than"])
CONCESSIVES = frozenset({"while", "whereas", "even", "despite", "albeit", "unlike"})
# the allow-list of a plain statement (`_unplain`): besides the fact and the gist's, the
# question's and the facts' own words, an answer that is counted right may hold only these:
# articles, copulas and the auxiliaries of tense and voice (no modal: `can`, `could`, `will`,
# `would`, `should`, `must` hedge, condition or put it off; no `had`: `had been 25 euros` is a
# value since changed; no `each`: a rate), personal, demonstrative and relative pronouns,
# `and`, and the prepositions that link a value to its head without bounding it (`LINKS`, `to`,
# `from`, `by`: `over`, `under`, `than`, `about` are not here); and the past-tense verbs that
# report a statement or record a decision without weighing it (`said`, `chose`, `set`; not a
# proposal, `suggested`, nor hearsay, `they say`). Any other word is one the rule cannot
# read (a negation, hedge, bound or retraction may be any word: `tops out at`, `a common
# misconception`, `stop short of saying`), so it leaves the answer unsure, named in the reason.
PLAIN = (NEUTRAL - {"can", "could", "will", "would", "shall", "should", "must", "had", "each"}
         ) | LINKS | frozenset(
    ["a", "an", "the", "to", "from", "by", "his", "her", "their", "them", "who", "which",
     "said", "told", "stated", "explained", "noted", "mentioned", "answered", "replied",
     "added", "confirmed", "announced", "wrote", "chose", "chosen", "picked", "decided",
     "agreed", "set", "named", "called", "gave", "given", "made", "drew", "drawn", "sketched",
     "described", "noticed", "ordered", "bought", "placed",
     # more verbs that report a statement, in the past and as a participle (`saying`)
     "recalled", "recounted", "remarked", "observed", "clarified", "specified", "indicated",
     "stressed", "emphasised", "emphasized", "repeated", "reiterated", "saying", "telling",
     "stating", "explaining", "noting", "mentioning", "answering", "replying", "adding",
     "confirming", "describing", "recalling",
     # words that affirm a statement as made, and can neither take it back nor bound it
     # (not `exactly`: `exactly an hour` denies the gist's `almost an hour`)
     "yes", "definitely", "certainly", "indeed"])


def _modified(answer: Folded, context: _Context, stated: list[list[Occurrence]]) -> str:
    """Why a fact the answer states is not stated plainly: a word beside it, within
    `MODIFIER_REACH` tokens in its clause part, that neither the gist, the question, the facts
    nor the closed class `NEUTRAL` has (`north of 47 minutes`, `a minimum of 40`, `3.10 or
    newer`, `former commander Priya Raman`, `15 Pa below`, `the 99.95% commitment ceased`), or
    a concessive or contrastive word opening its clause part (`though some charge 15%`) that
    the gist and question lack. ConText (Harkema et al., J. Biomed. Inform. 2009) reads a
    modifier's scope from its position to the clause's end; here the list of triggers is
    turned over: a word that is not known to be neutral is a trigger. Empty when none."""
    for i, occ in enumerate(stated, 1):
        for o in occ:
            word = _modifier(answer, context, o)
            if word:
                return (f"\"{word}\" qualifies fact {i} (it stands beside it) and the expected "
                        "answer and the question do not say so: review it")
    return ""


def _modifier(answer: Folded, context: _Context, o: Occurrence) -> str:
    """The first word beside occurrence `o`, in its clause part, that may change what it
    states, or empty: the word right after it (`25% surcharge`, `15 Pa below`), and beyond it
    when that word links (`3.10 or newer`); a linking word right before it and the word
    before that (`north of 47`, `far from 30`, `a minimum of 40`, `from €60`). A content
    word right before the fact with no link between is its verb (`offered his 18 GB disk`)
    and is not read; a concessive or contrastive word opening its clause part is
    (`though some retailers charge 15%`)."""
    part = answer.tokens[o.first].part
    n = len(answer.tokens)

    def beside(j: int) -> bool:
        return 0 <= j < n and answer.tokens[j].part == part and j not in context.fact_tokens

    def odd(j: int) -> bool:
        return j in context.unknown_words and answer.tokens[j].text not in LINKS and \
            (j in context.unplain or answer.tokens[j].text in LINKING)

    words = answer.tokens
    after = [j for j in (o.last + 1, o.last + 2) if beside(j)]
    if after and words[after[0]].text not in LINKING:
        after = after[:1]
    if any(odd(j) for j in after):
        return " ".join(words[j].text for j in after)  # `surcharge`, `or newer`
    before = [j for j in (o.first - 2, o.first - 1) if beside(j)]
    if len(before) == 2 and words[before[1]].text == "by" and \
            not answer.tokens[o.first].number and before[0] not in context.unknown_words:
        before = []  # `was chaired by Alice`: the agent of the gist's own verb, in the passive
    if before and words[before[-1]].text in LINKING:
        odd_ones = [j for j in before if odd(j)]
        if odd_ones:
            return " ".join(words[j].text for j in before if j >= odd_ones[0])  # `north of`
    for j in range(o.first):
        if answer.tokens[j].part == part and j in context.unknown_words and \
                answer.tokens[j].text in CONTRASTS | CONCESSIVES:
            return answer.tokens[j].text
    return ""


def _unplain(answer: Folded, context: _Context) -> str:
    """Why an answer that states every fact is not a plain statement of them: its first word
    that is not a fact's, is not the gist's, the question's or the facts' (or a longer form of
    one: `work`, `worked`), and is not on the allow-list `PLAIN`. Fails closed: what the rule
    does not recognise as plain leaves the answer unsure, it is never read as harmless. Empty
    when every word is recognised."""
    for j in sorted(context.unplain):
        return (f"\"{answer.tokens[j].text}\" is a word the expected answer and the question do "
                "not use and that is not known to state a fact plainly, so the rule cannot "
                "tell what it does to the facts: review it")
    return ""


@dataclass(frozen=True, kw_only=True)
class _Context:
    """What an answer's values and words are weighed against: the classes of value the facts
    have, the values each allows, the gist's and the question's words, and the tokens of
    the answer that state a fact."""

    classes: frozenset[str]
    fact_values: frozenset[str]
    known_values: frozenset[str]  # the facts', the gist's and the question's
    question_values: frozenset[str]
    fact_tokens: frozenset[int]
    unknown: frozenset[int]  # the answer's tokens of words the gist, question, facts lack
    unknown_words: frozenset[int]  # ... and that are not of the closed class `NEUTRAL`
    unplain: frozenset[int]  # ... and that are not on the allow-list `PLAIN`, facts' aside
    gist_tokens: int
    keys: tuple[str, ...]  # the answer's tokens as compared
    known: tuple[tuple[str, ...], ...]  # the gist's and the question's, as compared

    def said(self, words: Sequence[str]) -> bool:
        """Whether `words` occur in a row in the gist or the question."""
        n = len(words)
        return any(list(text[i:i + n]) == list(words) for text in self.known
                   for i in range(len(text) - n + 1))

    @classmethod
    def of(cls, answer: Folded, expected: Expectation, occurrences: list[Occurrence],
           ) -> _Context:
        fact_texts = [t for f in expected.facts for t in ([f] if isinstance(f, str) else f)]
        literal = [t for t in fact_texts if not t.startswith("/")]
        classes = {c for t in literal for tok in tokens(t) if (c := closed_class(tok))}
        classes |= {"number" for f in expected.facts for a in alternatives(f) if a.numeric}
        inside = {i for o in occurrences for i in range(o.first, o.last + 1)}
        fact_values = {tok.text for t in literal for tok in tokens(t) if closed_class(tok)}
        fact_values |= {answer.tokens[i].text for i in inside}
        question_values = {t.text for t in tokens(expected.question) if closed_class(t)}
        gist_values = {t.text for t in tokens(expected.gist) if closed_class(t)}
        known = words_of([expected.gist, expected.question, *literal])
        unknown = {i for i, (k, t) in enumerate(zip(answer.keys, answer.tokens, strict=True))
                   if k not in known and t.text not in STOPWORDS}
        unknown_words = {i for i, (k, t) in enumerate(zip(answer.keys, answer.tokens,
                                                          strict=True))
                         if not _known(k, known) and t.text not in NEUTRAL}
        unplain = {i for i, (k, t) in enumerate(zip(answer.keys, answer.tokens, strict=True))
                   if i not in inside and not _known(k, known) and t.text not in PLAIN}
        return cls(classes=frozenset(classes), fact_values=frozenset(fact_values),
                   unknown_words=frozenset(unknown_words), unplain=frozenset(unplain),
                   known_values=frozenset(fact_values | question_values | gist_values),
                   question_values=frozenset(question_values), fact_tokens=frozenset(inside),
                   unknown=frozenset(unknown), gist_tokens=len(tokens(expected.gist)),
                   keys=tuple(answer.keys),
                   known=tuple(tuple(Folded(t).keys) for t in (expected.gist,
                                                                expected.question)))

    def competing(self, answer: Folded, allowed: frozenset[str],
                  classes: frozenset[str] | set[str] | None = None) -> list[str]:
        """The answer's values of a class the facts have (of `classes`, when given) that
        `allowed` does not hold, in order, each once (negated ones left out: `not 30` rules
        30 out)."""
        wanted = self.classes if classes is None else self.classes & set(classes)
        found: dict[str, None] = {}
        for i, token in enumerate(answer.tokens):
            if closed_class(token) in wanted and token.text not in allowed \
                    and i not in self.fact_tokens and not answer.negated(i):
                found.setdefault(token.text)
        return list(found)


def _missing(answer: Folded, expected: Expectation, context: _Context, missing: list[int],
             similarity: float | None) -> dict[str, object]:
    """The outcome and why of an answer that does not state every fact."""
    what = f"{numbered(missing)} not stated"
    denied = [i for i in missing if any(o.negated for a in alternatives(expected.facts[i - 1])
                                        for o in answer.find(a))]
    if denied:
        return {"outcome": "wrong", "why": f"{what}: the answer denies {numbered(denied)}"}
    if not english(answer) and english(Folded(expected.gist)):
        if other_language(answer):
            return {"outcome": "unsure", "why": f"{what}, but {OTHER_LANGUAGE}"}
        return {"outcome": "unsure", "why": f"{what}, but the answer has too few English "
                "function words to weigh a paraphrase of it with the embedded model (a "
                "fragment, list or table, or another language): review it"}
    missing_classes = {c for i in missing for c in _classes(expected.facts[i - 1])}
    rival = context.competing(answer, context.fact_values | context.question_values,
                              missing_classes)
    if rival:
        return {"outcome": "wrong", "why": f"{what}; gives another value in its place "
                f"({', '.join(rival[:3])})"}
    if all(_value_fact(expected.facts[i - 1]) for i in missing):
        return {"outcome": "wrong", "why": f"{what} (a value is stated or not: no paraphrase "
                "of it to look for)"}
    if similarity is not None and similarity >= expected.similar:
        return {"outcome": "unsure", "why": f"{what}, but close to what the expected answer "
                f"says there (cosine {similarity:.2f} ≥ {expected.similar:.2f}): a paraphrase? "
                "review it"}
    near = "" if similarity is None else f" (cosine {similarity:.2f} < {expected.similar:.2f})"
    return {"outcome": "wrong", "why": f"{what}, and not close to the expected answer{near}"}


WINDOW = 6  # tokens of the gist each side of a missing fact that a paraphrase of it is near


def _weighed(answer: Folded, expected: Expectation, missing: list[int],
             similarity: float | None, near: Near | None) -> float | None:
    """The cosine a missing fact is weighed by: of the answer and what the gist says around
    the missing facts (up to `WINDOW` tokens each side, within its comma-separated part), so
    that a paraphrase of them is near and an answer that states only the other facts is not;
    the whole gist's when the gist does not state them."""
    if near is None:
        return similarity
    gist = Folded(expected.gist)
    spans = sorted({(o.first, o.last) for i in missing for alt in alternatives(
        expected.facts[i - 1]) for o in gist.find(alt)})
    if not spans:
        return similarity
    keep: set[int] = set()
    for first, last in spans:
        part = gist.tokens[first].part
        keep |= {j for j in range(max(0, first - WINDOW), min(len(gist.tokens), last + WINDOW + 1))
                 if gist.tokens[j].part == part}
    text = " ".join(gist.plain[gist.tokens[j].start:gist.tokens[j].end] for j in sorted(keep))
    return round(near(text), 4)


def _value_fact(fact: Fact) -> bool:
    """Every alternative of the fact is a value (holds a number, weekday or month)."""
    return all(a.numeric if a.pattern is not None else any(
        closed_class(t) for t in tokens(text)) for text, a in zip(
            [fact] if isinstance(fact, str) else fact, alternatives(fact), strict=True))


def _classes(fact: Fact) -> set[str]:
    found = {c for t in ([fact] if isinstance(fact, str) else fact) if not t.startswith("/")
             for tok in tokens(t) if (c := closed_class(tok))}
    return found | ({"number"} if any(a.numeric for a in alternatives(fact)) else set())


def _doubt(answer: Folded, context: _Context) -> str:
    """Why an answer that states every fact is unsure (too long, other candidate values,
    other candidates listed); empty when it is right."""
    budget = max(LENGTH_FLOOR, LENGTH_TIMES * context.gist_tokens)
    if len(answer.tokens) > budget:
        return (f"too long to tell: {len(answer.tokens)} tokens, over {budget} (3 × the "
                "expected answer's, at least 50): review it")
    rival = context.competing(answer, context.known_values)
    if rival:
        return (f"gives other candidate values beside the facts ({', '.join(rival[:3])}"
                f"{', …' if len(rival) > 3 else ''}): review it")
    listed = _listed(answer, context)
    if listed:
        return f"lists other candidates beside the facts ({listed}): review it"
    return ""


@dataclass(kw_only=True)
class _Item:
    """A list item: the answer's tokens `first`..`last`, and whether `or` joins it to the
    next item."""

    first: int
    last: int
    or_next: bool = False
    tokens: list[int] = field(default_factory=list)


def _lists(answer: Folded) -> list[list[_Item]]:
    """The answer's lists: each sentence's items (split at commas and `and`, `or`, `nor`),
    and a run of sentences that are each one short item (lines of a bulleted list) as one."""
    sentences: list[list[_Item]] = []
    current: _Item | None = None
    clause = part = -1
    for i, token in enumerate(answer.tokens):
        if token.clause != clause:
            sentences.append([])
            clause, part, current = token.clause, token.part, None
        if token.text in ("and", "or", "nor"):
            if current is not None:
                current.or_next = token.text == "or"
            current = None
            continue
        if token.part != part or current is None:
            current = _Item(first=i, last=i)
            sentences[-1].append(current)
            part = token.part
        current.last = i
        current.tokens.append(i)
    lists: list[list[_Item]] = []
    run: list[_Item] = []
    for items in (s for s in sentences if s):
        if len(items) == 1 and _short(items[0]):
            run.append(items[0])
            continue
        lists += [run, items] if run else [items]
        run = []
    return [*lists, run] if run else lists


def _listed(answer: Folded, context: _Context) -> str:
    """`or` between a fact's short item and another candidate, or three or more short items
    two of them other candidates: which, else empty."""
    for items in _lists(answer):
        extra = [k for k, it in enumerate(items) if _short(it) and _candidate(it, context)]
        facts = [k for k, it in enumerate(items)
                 if _short(it) and any(i in context.fact_tokens for i in it.tokens)]
        for k in facts:
            if (k and items[k - 1].or_next and k - 1 in extra) or (
                    items[k].or_next and k + 1 in extra):
                return "joined by or"
        if facts and sum(_short(it) for it in items) >= 3 and len(extra) >= 2:
            return f"{len(extra)} more"
    return ""


def _offered(answer: Folded, context: _Context) -> str:
    """Which candidates an answer offers the facts among, or empty: a list of short items
    joined by `or` (`82.7%, 84.0% or 85.1%`, `Yesterday, last week or last month`) that holds a
    fact's item and an item the gist and question do not say (another value, or another
    candidate `_candidate`), every item a short phrase without function words (`40 seats,
    whether you pay monthly or yearly` is no list of candidates; `at or below 60` is a
    bound), where neither the gist nor the question says `or`. Such an answer does not
    commit to the fact: it is wrong."""
    if context.said(["or"]):
        return ""
    for items in _lists(answer):
        if not any(it.or_next and answer.tokens[it.last].text not in VALUE_LINKS | LINKING
                   for it in items[:-1]):
            continue  # `at or below 60`: a bound, not a list
        short = [it for it in items if _short(it) and not any(
            answer.tokens[i].text in FUNCTION_WORDS for i in it.tokens)]
        if len(short) < len(items):
            continue
        facts = [it for it in short if any(i in context.fact_tokens for i in it.tokens)]
        others = [it for it in short if not any(i in context.fact_tokens for i in it.tokens)
                  and (_candidate(it, context) or any(
                      closed_class(answer.tokens[i]) in context.classes and
                      answer.tokens[i].text not in context.known_values for i in it.tokens))]
        if facts and others:
            return ", ".join(" ".join(answer.tokens[i].text for i in it.tokens)
                             for it in others[:3])
    return ""


def _short(item: _Item) -> bool:
    return len(item.tokens) <= SHORT_ITEM


def _candidate(item: _Item, context: _Context) -> bool:
    """A short item that states no fact, and that the gist and the question do not say (a
    word they lack, or words of theirs in another order: `Real Control` beside `Real
    Remote`)."""
    if any(i in context.fact_tokens for i in item.tokens):
        return False
    return any(i in context.unknown for i in item.tokens) or not context.said(
        [context.keys[i] for i in item.tokens])


# --- settling unsure answers --------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AnswerLabel:
    """A person's verdict on one answer (goldsets/labels.py), and the `expected_sha256` of the
    expected answer it was judged against (None: written before labels carried it)."""

    verdict: Literal[0, 1]
    expected_sha256: str | None = None


def expected_sha256(gist: str | None, facts: Sequence[Fact], forbid: Sequence[Fact],
                    key: bytes | None = None) -> str:
    """The digest of what an answer_match label judged an answer against: the canonical JSON
    (sorted keys, no spaces, UTF-8) of the expected answer's gist, facts and forbid; keyed
    with a sealed goldset's digest key (answer.py `keyed_digest`)."""
    data = json.dumps({"gist": gist or "", "facts": list(facts), "forbid": list(forbid)},
                      sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return keyed_digest(data.encode("utf-8"), key)


def settle(check: AnswerCheck, labels: Mapping[str, AnswerLabel], answer: str | None,
           expected: str, unsure: Unsure) -> AnswerCheck:
    """The check with a person's label applied, or an unsure one counted wrong when the goldset
    says `unsure = "wrong"`. `labels`: this question's labels by the sha256 of the raw answer
    each was written for; `answer`, this raw answer's sha256; `expected`, its expected
    answer's (`expected_sha256`). A label of this answer judged against another expected
    answer does not apply (`label_note` says so), nor one of another answer (said where this
    one is unsure); one without `expected_sha256` predates the rule and still applies (said).
    In a sealed goldset both digests are keyed (`expected` is): a label stamped with plain
    digests predates that rule and does not apply (`predates_keyed`), as its digests are
    guessable."""
    check = check.model_copy(update={"answer_sha256": answer, "expected_sha256": expected})
    label = labels.get(answer) if answer is not None else None
    if label is not None and label.expected_sha256 in (None, expected):
        return check.model_copy(update={
            "settled": "label", "label": label.verdict,
            "label_note": "predates" if label.expected_sha256 is None else None})
    plain = is_keyed(expected) and (
        any(not is_keyed(digest) for digest in labels)
        or (label is not None and not is_keyed(label.expected_sha256 or expected)))
    note: LabelNote | None = ("predates_keyed" if plain else
                              "stale_expected" if label is not None else
                              "stale_answer" if labels and check.outcome == "unsure" else None)
    check = check.model_copy(update={"label_note": note})
    if check.outcome == "unsure" and unsure == "wrong":
        return check.model_copy(update={"settled": "unsure_wrong"})
    return check


def label_digests(record: QuestionRecord) -> tuple[str, str | None]:
    """The digests a label of this row's answer carries: its raw answer's (the check's; a row
    written before checks carried it, its kept text's) and its expected answer's."""
    check = record.answer_check
    raw = check.answer_sha256 if check is not None else None
    return (raw or record.answer_sha256 or answer_sha256(record.answer_text or ""),
            check.expected_sha256 if check is not None else None)


def answer_to_label(question_id: str, records: Sequence[QuestionRecord],
                    ) -> tuple[QuestionRecord | None, str]:
    """The row whose answer an answer_match label of `question_id` settles, from a run's rows:
    its one answer, or else its one unsure unsettled answer; else None and why (empty: the
    question has no answered row). Repeats that answered differently leave the label to be
    written for one of them by its sha256."""
    answered = [r for r in records if r.question_id == question_id and r.status == "scored"
                and r.answer_text is not None and r.answer_check is not None]
    by_answer = {label_digests(r)[0]: r for r in reversed(answered)}
    if len(by_answer) <= 1:
        return next(iter(by_answer.values()), None), ""
    unsure = {label_digests(r)[0]: r for r in reversed(unsettled(answered))}
    if len(unsure) == 1:
        return next(iter(unsure.values())), ""
    shown = "; ".join(f"repeat {r.repeat}: answer_sha256 {label_digests(r)[0]}"
                      for r in (unsettled(answered) or answered))
    return None, (f"its repeats gave {len(by_answer)} different answers: write one label per "
                  f"answer with the answer_sha256 of the one you read ({shown})")


def unsettled(records: Sequence[QuestionRecord]) -> list[QuestionRecord]:
    """The scored rows whose answer is unsure and settled by nothing."""
    return [r for r in records if r.status == "scored" and r.answer_check is not None
            and r.answer_check.unsettled]


# --- each statement in its clause (`_unbound`) ----------------------------------------------

# the words that join two clauses of one sentence (`sells for 25 euros and costs 12.50 euros`)
COORDINATORS = frozenset(["and", "but", "while", "whereas", "although", "though", "yet"])
# the words that link a value to what it measures or bounds: the gist's before a fact is the
# one the answer may use (`up to 12 euros` is not `up from 12 euros`, `rose by 3 euros` not
# `rose to 3 euros`, `chose Halcyon` not `over Halcyon`)
VALUE_LINKS = LINKS | frozenset(["to", "from", "by", "within", "over", "under", "above",
                                 "below", "after", "before", "during", "until", "since",
                                 "into", "than", "up", "down"])
# a capitalised word inside a sentence or after a semicolon (where English writes no capital
# but a name's: `…; Porto was the backup`), or with a capital inside it anywhere (`MySQL`)
_NAME = re.compile(r"(?<![.:!?]\s)(?<!^)\b([A-Z][a-z][\w-]*)|\b([A-Z][a-z]+[A-Z][\w-]*)")
# a capitalised word opening a sentence: a name too where the rest of the gist and the
# question never use it (`Cheques are not accepted`; not `Refunds are issued` where the
# question asks of refunds)
_OPENING = re.compile(r"(?:(?<=[.:!?]\s)|^)([A-Z][a-z][\w-]*)")


@dataclass(frozen=True, kw_only=True)
class _Clauses:
    """A text cut into clauses (`_clauses`), and what each holds: the facts (`fact 1`) and the
    gist's other values (numbers, dates, times, e-mail addresses, names) it states."""

    of: tuple[int, ...]  # each token's clause
    holds: tuple[frozenset[str], ...]  # each clause's facts and values
    items: tuple[str, ...]  # each token's fact or value ("" for a word)


def _clauses(folded: Folded, spans: Spans, names: frozenset[str]) -> _Clauses:
    """The clauses of a text: its sentences (one ending in a colon read with the next), their
    comma-separated parts, the clauses a coordinator joins and asides in parentheses
    (`_cut`); each token's fact (`fact 1`) or value (`value 30`: a number, weekday, month,
    e-mail address, URL or a name of `names`)."""
    fact_of = {i: f"fact {n}" for n, occ in enumerate(spans, 1) for first, last in occ
               for i in range(first, last + 1)}
    items = tuple(fact_of.get(i) or (f"value {k}" if closed_class(t) or k in names else "")
                  for i, (k, t) in enumerate(zip(folded.keys, folded.tokens, strict=True)))
    of = _cut(folded, items)
    holds: list[set[str]] = [set() for _ in range(max(of) + 1 if of else 0)]
    for i, item in enumerate(items):
        if item:
            holds[of[i]].add(item)
    return _Clauses(of=tuple(of), holds=tuple(frozenset(h) for h in holds), items=items)


def _cut(folded: Folded, items: tuple[str, ...]) -> list[int]:
    """Each token's clause: a new one at a sentence (not after a colon: `Chair: Tom`), at a
    comma (a relative too, `, which is refunded if`: it says what holds of its head, not
    what the clause before states; not before a neutral preposition, `, for about three
    months`, `, with round edges`: they say more of the clause before), after a
    coordinator (`and`, `but`, `while`; not `and` between two values, `Alice and Bob`, nor
    after words that hold no value, `Managers and employees must give`: they share what
    follows); not
    at the comma after a phrase opening the sentence with a linking word (`Below 99.0%
    uptime, customers receive`); an aside in parentheses is a clause of its own, and the
    clause it interrupts goes on after it (`Sarah (ES2004a) had a remote`)."""
    groups, toks = _sentences(folded), folded.tokens
    of: list[int] = []
    outer: list[int] = []  # the clauses the open parentheses interrupt
    count, fronted = 0, False  # fronted: the sentence opens with a linking word, no comma yet
    start = 0  # where the current clause opened
    for i, t in enumerate(toks):
        between = folded.plain[toks[i - 1].end:t.start] if i else ""
        comma = "," in between and t.clause == toks[i - 1].clause and \
            t.text not in LINKS and not fronted
        if not i or groups[i] != groups[i - 1] or "," in between:
            fronted = t.text in VALUE_LINKS and (not i or groups[i] != groups[i - 1])
        joins = toks[i - 1].text in COORDINATORS and any(items[start:i - 1]) and \
            not (i > 1 and items[i - 2] and items[i])
        here = of[-1] if of else 0
        for mark in re.findall(r"[()]", between):
            if mark == "(":
                outer.append(here)
                here = count = count + 1
            elif outer:
                here = outer.pop()
        if i and (groups[i] != groups[i - 1] or comma or joins) and "(" not in between:
            here = count = count + 1
            start = i
        of.append(here)
    return of


# words of a closed class that open a sentence with a capital and are no name (`But`, `So`)
FUNCTION_WORDS = STOPWORDS | PLAIN | COORDINATORS | CONTRASTS | CONCESSIVES | NEGATIONS | \
    VALUE_LINKS | LINKING | frozenset(["however", "therefore", "thus", "instead", "still",
                                       "yes", "both", "once", "first", "then", "next",
                                       "finally", "later", "now", "today", "here"])


def _gist_names(expected: Expectation, asked: bool = False) -> frozenset[str]:
    """The gist's names that are not a fact's, nor the question's unless `asked`
    (`Brightline` in `chose Halcyon over Brightline`): capitalised words inside a sentence
    (`_NAME`) or opening one that the rest of the gist and the question never use
    (`_OPENING`), read as values."""
    others = words_of([] if asked else [expected.question]) | words_of(
        [t for f in expected.facts for t in ([f] if isinstance(f, str) else f)])
    gist = clean(expected.gist)
    found = {key(tok) for m in _NAME.finditer(gist) for tok in tokens(m.group(1) or m.group(2))}
    for m in _OPENING.finditer(gist):
        rest = gist[:m.start()] + gist[m.end():]
        found |= {k for tok in tokens(m.group(1))
                  if (k := key(tok)) not in words_of([rest, expected.question])
                  and tok.text not in FUNCTION_WORDS}
    return frozenset(found - others)


def _unbound(answer: Folded, gist: Folded, expected: Expectation) -> str:
    """Why an answer's statement may not be the gist's: a fact or a value of the gist stated
    with words of another of its clauses. Each clause of the gist holds its facts and
    values; in the answer, a clause's facts and values must be held together by one clause
    of the gist (`refunds are paid within 14 days` puts fact 1 in the clause of `30 days`),
    each word it shares with the gist must be one of a clause holding each of them (or
    holding none), and a value that is not a fact needs a word of its own clause beside it
    (`and at 04:00 UTC` says of what). A fact or value keeps the linking word the gist puts
    before it (`up to 12 euros`, not `up from`), and the one after it (`a 40% discount`, not
    `40% of`). Empty when every clause is the gist's."""
    names = _gist_names(expected)
    said = _clauses(gist, [_spans(gist, f) for f in expected.facts], names)
    given = _referred(answer, _clauses(answer, [_spans(answer, f) for f in expected.facts],
                                       names))
    return _linked(answer, gist, given, said) or _placed(answer, gist, given, said) or \
        _fronted(answer, gist, given, said) or _reordered(answer, gist, expected) or \
        _voiced(answer, gist, expected) or _crossed(answer, gist, expected)


# the pronouns that refer back to what the clause before is about (`; she also presents the
# hiring update`); not `who`, `that`: they open a clause inside a phrase
PRONOUNS = frozenset(["it", "its", "they", "their", "them", "this", "these", "those",
                      "which", "he", "his", "she", "her"])


def _referred(answer: Folded, given: _Clauses) -> _Clauses:
    """An answer's clauses with each that holds no fact or value and opens with a pronoun
    or a linking word (`It was waived.`, `, which is refunded`, `; per workspace`; not after
    `and`, `but`) read as part of the nearest clause before it
    that holds one: what it says, it says of that clause's fact or value (`The setup fee is
    49 euros. It is refunded.`)."""
    n = len(given.holds)
    into = list(range(n))
    first = {c: next(i for i, x in enumerate(given.of) if x == c) for c in set(given.of)}
    for c in sorted(first):
        at = first[c]
        opens = answer.tokens[at].text in PRONOUNS | VALUE_LINKS
        if given.holds[c] or not opens or (at and answer.tokens[at - 1].text in COORDINATORS):
            continue  # `and its colour scheme`: one more thing the clause before names
        before = [d for d in range(c) if given.holds[d]]
        if before:
            into[c] = into[before[-1]]
    holds = [frozenset().union(*(given.holds[d] for d in range(n) if into[d] == c))
             for c in range(n)]
    return _Clauses(of=tuple(into[c] for c in given.of), holds=tuple(holds), items=given.items)


def _placed(answer: Folded, gist: Folded, given: _Clauses, said: _Clauses) -> str:
    """The clause rule of `_unbound`, clause by clause of the answer: its facts and values
    held together by one gist clause (`_apart`), each of its words the gist's where they are
    (`_misplaced`), a value without a fact said of what (`_anchored`)."""
    where: dict[int, set[int]] = {}  # the gist clauses each answer word occurs in
    for j, (k, t) in enumerate(zip(answer.keys, answer.tokens, strict=True)):
        if not given.items[j] and t.kind == "word" and t.text not in PLAIN | COORDINATORS:
            where[j] = {g for g in range(len(said.holds)) if _known(
                k, {gist.keys[i] for i in range(len(gist.keys)) if said.of[i] == g})}
    groups = _sentences(gist)
    sentence = {said.of[i]: groups[i] for i in range(len(said.of))}  # each gist clause's
    for c, items in enumerate(given.holds):
        words = [j for j in where if given.of[j] == c and where[j]]
        values = {x for x in items if x.startswith("value") and
                  any(x in h for h in said.holds)}
        held = {x for x in items if x.startswith("fact")} | values
        shared = any(answer.tokens[i].text in ("and", "or") and given.items[i - 1] and
                     given.items[i + 1] and given.of[i - 1] == given.of[i + 1] == c
                     for i in range(1, len(answer.tokens) - 1))
        why = _apart(held, values, said) or \
            _misplaced(answer, words, where, held, said, shared) or \
            ("" if held else _mixed(answer, words, where, sentence))
        if why:
            return why
        if held == values:
            for v in sorted(values):
                if not _anchored(v, words, where, held, said):
                    return (f"states {v} with no word of the expected answer's that says of "
                            "what: review it")
    return ""


def _mixed(answer: Folded, words: list[int], where: dict[int, set[int]],
           sentence: dict[int, int]) -> str:
    """Why an answer clause that holds no fact or value may join what the gist says apart:
    no one gist sentence (`sentence`: each gist clause's) has all its gist words (`The fee
    was waived.` where the gist says `The late payment fee is 15 euros; it was waived for
    customers on annual plans`)."""
    if len(words) > 1 and not set.intersection(*({sentence[g] for g in where[j]}
                                                 for j in words)):
        return (f"says \"{answer.tokens[words[0]].text}\" and \"{answer.tokens[words[-1]].text}"
                "\" together, which the expected answer says in different clauses: review it")
    return ""


def _apart(held: set[str], values: set[str], said: _Clauses) -> str:
    """Why an answer clause's facts and values (one at least not a fact) are not the gist's
    together (`Priority 2: 1 hour` where the gist has `Priority 1 ... 1 hour`)."""
    if values and len(held) > 1 and not any(held <= h for h in said.holds):
        return (f"states {', '.join(sorted(held))} together, which the expected answer states "
                "in different clauses: is each in its place? review it")
    return ""


def _misplaced(answer: Folded, words: list[int], where: dict[int, set[int]], held: set[str],
               said: _Clauses, shared: bool) -> str:
    """Why a word of an answer clause is not the gist's there: for some fact or value the
    clause holds, no gist clause with the word holds it (a clause of the gist that holds
    no value still says of something else: `it was waived for customers on annual plans`
    beside `the fee is 15 euros`, so its words do not go with a fact). Of a
    clause that holds facts only, each in a phrase of its own (`Directory 0455560 → NLSSD`),
    a word need only be one of a gist clause holding one of them; facts joined by `and` or
    `or` share what is said of them (`shared`: `Alice and Bob took the minutes`), so there
    it must be one of a clause holding each."""
    loose = len(held) > 1 and all(x.startswith("fact") for x in held) and not shared
    for j in words:
        for x in [held] if loose else [{x} for x in sorted(held)]:
            if not any(x & said.holds[g] if loose else x <= said.holds[g]
                       for g in where[j]):
                return (f"\"{answer.tokens[j].text}\" is said of {', '.join(sorted(x))} in the "
                        "answer but of something else in the expected answer: is it in its "
                        "place? review it")
    return ""


def _anchored(v: str, words: list[int], where: dict[int, set[int]], held: set[str],
              said: _Clauses) -> bool:
    """Whether a value the answer states without a fact has a word (or another value) of its
    own clause beside it: one the gist has only in clauses holding the value (`weekly` for
    `04:00` in `the weekly full backup runs at 04:00 UTC`); true when every gist clause holds
    it (nothing tells its clause apart)."""
    if all(v in h for h in said.holds):
        return True
    return any(where[j] and all(v in said.holds[g] for g in where[j]) for j in words) or any(
        x != v and all(v in h for h in said.holds if x in h) for x in held)


def _linked(answer: Folded, gist: Folded, given: _Clauses, said: _Clauses) -> str:
    """The linking rule of `_unbound`: where the gist puts a linking word (`VALUE_LINKS`)
    right before a fact, the answer puts none there or the same (`up to 12 euros`, not `up
    from 12 euros`; `rose by 3`, not `rose to 3`); before a value that is not a fact, the
    same or nothing opening its clause (`over Brightline`, not `chose Halcyon and
    Brightline`). Then the word after an amount (`_followed`)."""
    for j, item in enumerate(given.items):
        if not item or (j and given.items[j - 1] == item):
            continue
        before = {gist.tokens[i - 1].text if i and said.of[i - 1] == said.of[i] else ""
                  for i, x in enumerate(said.items) if x == item and
                  (not i or said.items[i - 1] != item)}
        if not before:
            continue
        mine = answer.tokens[j - 1].text if j and given.of[j - 1] == given.of[j] else ""
        other = item.startswith("value") and mine and not given.items[j - 1]
        if mine not in before and before & VALUE_LINKS and (mine in VALUE_LINKS or other) \
                and not _same_link(mine, before, answer, j):
            return (f"\"{mine}\" links {item} where the expected answer says "
                    f"\"{sorted(before & VALUE_LINKS)[0]}\": review it")
    return _followed(answer, gist, given, said)


# links that say the same before a value of a class (`AMOUNT_LINKS`: `sells for 25 euros`,
# `a selling price of 25 euros`, `sell at 25 euros`; `DATE_LINKS`: `in May`, `on Monday`)
AMOUNT_LINKS = frozenset(["of", "at", "for"])
DATE_LINKS = frozenset(["in", "on"])


def _same_link(mine: str, before: set[str], answer: Folded, j: int) -> bool:
    """Whether the answer's link `mine` before the value at token `j` says what the gist's
    links `before` say: both neutral links of an amount in a currency or percent (`for`,
    `of`, `at`), or of a weekday or month (`in`, `on`); never a bound or a direction (`by`,
    `to`, `up to`: `on Monday` is not `by Monday`)."""
    token = answer.tokens[j]
    unit = j + 1 < len(answer.tokens) and answer.tokens[j + 1].text in UNITS
    if token.number and unit:
        return mine in AMOUNT_LINKS and before <= AMOUNT_LINKS | {""}
    if closed_class(token) in ("weekday", "month"):
        return mine in DATE_LINKS and before <= DATE_LINKS | {""}
    return False


def _followed(answer: Folded, gist: Folded, given: _Clauses, said: _Clauses) -> str:
    """Why an amount of the answer may be a share, not the gist's amount: `of` right after
    it (`40% of the list price`) where the gist has a word there that says what the amount is
    (`a 40% discount`), not `of`, a linking or a plain word."""
    n, m = len(answer.tokens), len(gist.tokens)
    for j, item in enumerate(given.items):
        if not item or j + 1 >= n or given.items[j + 1] == item or \
                given.of[j + 1] != given.of[j]:
            continue
        first = next(i for i in range(j, -1, -1) if i == 0 or given.items[i - 1] != item)
        after = {gist.tokens[i + 1].text for i, x in enumerate(said.items) if x == item
                 and i + 1 < m and said.items[i + 1] != item and said.of[i + 1] == said.of[i]}
        says = sorted(a for a in after if a not in STOPWORDS | PLAIN | VALUE_LINKS)
        if answer.tokens[first].kind == "number" and answer.tokens[j + 1].text == "of" and \
                "of" not in after and says:
            return (f"\"of\" follows {item} where the expected answer says \"{says[0]}\": "
                    "review it")
    return ""


def _reordered(answer: Folded, gist: Folded, expected: Expectation) -> str:
    """Why two names of an answer clause may have each other's roles: the gist states them
    in one clause in the other order, and the answer has words between them (`Sam will
    replace Lena` where the gist says `Lena will replace Sam`): only their places say who
    does what to whom. Side by side (`Lena and Sam`) is `_swapped`'s.
    A name the question asks of is read as a value here (`Sam` in `Who will replace Sam?`)."""
    every = _gist_names(expected, asked=True)
    given = _clauses(answer, [_spans(answer, f) for f in expected.facts], every)
    said = _clauses(gist, [_spans(gist, f) for f in expected.facts], every)
    firsts = _first_items(given)
    for a, x in firsts:
        for b, y in firsts:
            between = answer.tokens[a + 1:b]
            if a >= b or given.of[a] != given.of[b] or not _named(answer, a, b) or \
                    all(given.items[k] or t.text in ("and", "or")
                        for k, t in enumerate(between, a + 1)):
                continue
            places = [{z: i for i, z in _first_items(said, g)}
                      for g in range(len(said.holds)) if {x, y} <= said.holds[g]]
            if places and all(p[y] < p[x] for p in places):
                return (f"states {x} before {y}, the other order than the expected answer's, "
                        "with words between: who does what to whom? review it")
    return ""


def _first_items(clauses: _Clauses, clause: int | None = None) -> list[tuple[int, str]]:
    """Where each fact or value first occurs in a clause (in any, when `clause` is None)."""
    seen: dict[tuple[int, str], int] = {}
    for i, item in enumerate(clauses.items):
        if item and (clause is None or clauses.of[i] == clause):
            seen.setdefault((clauses.of[i], item), i)
    return [(i, item) for (_, item), i in seen.items()]


def _named(folded: Folded, *at: int) -> bool:
    """Whether the tokens at `at` are names (no number, weekday or month: the order of two
    amounts, `47 minutes on 3 March`, says no role)."""
    return not any(folded.tokens[i].number or closed_class(folded.tokens[i]) for i in at)


def _fronted(answer: Folded, gist: Folded, given: _Clauses, said: _Clauses) -> str:
    """Why a fact may be said of another thing than the gist's: a word the gist has only
    in the phrase a linking word opens right after the fact (`return` in `refunds are issued
    within 14 days of receiving the return`: what the fact is counted from) stands before the
    fact in its answer clause as the first word of it (`the return is received within 14
    days`), where the gist's subject goes. Empty when none."""
    for item, tail in _tails(gist, said).items():
        only = {gist.keys[j] for j in tail} - {
            k for j, k in enumerate(gist.keys) if j not in tail}
        for j, k in enumerate(answer.keys):
            first = [i for i, x in enumerate(given.items) if x == item and given.of[i] ==
                     given.of[j]]
            if first and j < first[0] and _opens(answer, given, j) and _known(k, only):
                return (f"\"{answer.tokens[j].text}\" is what {item} is counted from in the "
                        "expected answer (after it), but stands before it in the answer: is "
                        "it said of the right thing? review it")
    return ""


def _opens(answer: Folded, given: _Clauses, j: int) -> bool:
    """Whether token `j` is the first word of its clause that is not a function word (what
    the clause is about: `return` in `the return is received within 14 days`)."""
    words = [i for i, t in enumerate(answer.tokens) if given.of[i] == given.of[j] and
             not given.items[i] and t.kind == "word" and t.text not in FUNCTION_WORDS]
    return words[:1] == [j]


def _tails(gist: Folded, said: _Clauses) -> dict[str, set[int]]:
    """Each fact's or value's tail in the gist: the tokens of its clause after a linking word
    right after it (`of receiving the return` after `14 days`)."""
    tails: dict[str, set[int]] = {}
    n = len(gist.tokens)
    for i, item in enumerate(said.items):
        if item and i + 1 < n and said.items[i + 1] != item and \
                said.of[i + 1] == said.of[i] and gist.tokens[i + 1].text in VALUE_LINKS | LINKING:
            tails.setdefault(item, set()).update(
                j for j in range(i + 2, n) if said.of[j] == said.of[i])
    return tails


BE = frozenset(["is", "are", "was", "were", "be", "been", "being", "am"])


def _voiced(answer: Folded, gist: Folded, expected: Expectation) -> str:
    """Why a name may have the other role: a verb of the gist that the answer puts in the
    other voice (`will be replaced by` for `will replace`) with the name on the same side of
    it (`Lena will be replaced by Sam` for `Lena will replace Sam`; `The meeting was chaired
    by Priya` turns both and stays right). Empty when none."""
    every = _gist_names(expected, asked=True)
    given = _clauses(answer, [_spans(answer, f) for f in expected.facts], every)
    said = _clauses(gist, [_spans(gist, f) for f in expected.facts], every)
    for j, x in _first_items(given):
        if not _named(answer, j):
            continue
        for w, token in enumerate(answer.tokens):
            if given.of[w] != given.of[j] or given.items[w] or token.text in FUNCTION_WORDS:
                continue
            for g in (g for g, y in _first_items(said) if y == x):
                if any(said.of[v] == said.of[g] and _known(answer.keys[w], {gist.keys[v]})
                       and _passive(gist, v) != _passive(answer, w) and (v < g) == (w < j)
                       for v in range(len(gist.tokens))):
                    return (f"\"{token.text}\" is in the other voice than the expected "
                            f"answer's, with {x} on the same side of it: who does what to whom? "
                            "review it")
    return ""


# the words before a noun that make it no verb (`the board's chair is`, `a report to`)
DETERMINERS = frozenset(["a", "an", "the", "s", "its", "their", "his", "her", "my", "our",
                         "your", "this", "that", "these", "those", "each", "every", "no"])


def _determined(folded: Folded, w: int) -> bool:
    """Whether token `w` follows a determiner or a possessive (`the board's chair`): a noun,
    not a verb."""
    before = folded.plain[:folded.tokens[w].start].rstrip().lower()
    last = re.search(r"(?:['’]s|\w+)$", before)
    return bool(last) and (last.group(0)[-2:] in ("'s", "’s") or
                           last.group(0) in DETERMINERS)


def _crossed(answer: Folded, gist: Folded, expected: Expectation) -> str:
    """Why a name may have the other role though no other name is there to swap with: a
    word of the gist in the same voice, with the name and another word of the gist's clause
    each on the other side of it than the gist puts them (`Samuel Reyes reports to the new
    data engineer` for `The new data engineer reports to Samuel Reyes`: subject and object
    swapped around the verb). Empty when none."""
    every = _gist_names(expected, asked=True)
    given = _clauses(answer, [_spans(answer, f) for f in expected.facts], every)
    said = _clauses(gist, [_spans(gist, f) for f in expected.facts], every)
    content = [i for i, t in enumerate(answer.tokens)
               if not given.items[i] and t.text not in FUNCTION_WORDS]
    verbs = [w for w in content if not _determined(answer, w)]
    for j, x in _first_items(given):
        if not _named(answer, j):
            continue
        mine = [w for w in content if given.of[w] == given.of[j]]
        for g in (g for g, y in _first_items(said) if y == x):
            theirs = [v for v, t in enumerate(gist.tokens) if said.of[v] == said.of[g]
                      and not said.items[v] and t.text not in FUNCTION_WORDS]
            for w in (w for w in mine if w in verbs):
                for v in theirs:
                    if not _known(answer.keys[w], {gist.keys[v]}) or \
                            _passive(gist, v) != _passive(answer, w) or (v < g) == (w < j):
                        continue
                    if any(_known(answer.keys[p], {gist.keys[u]}) and (u < v) != (g < v)
                           and (p < w) != (u < v) for u in theirs if u != v
                           for p in mine if p != w):
                        return (f"states {x} on the other side of \"{answer.tokens[w].text}\" "
                                "than the expected answer, and what stands on its other side "
                                "there on its side: who does what to whom? review it")
    return ""


def _passive(folded: Folded, w: int) -> bool:
    """Whether token `w` is a past participle after a form of `be` (`was chaired`, `will be
    replaced`)."""
    word = folded.tokens[w].text
    participle = word.endswith(("ed", "en")) or word in IRREGULAR
    return participle and any(t.text in BE for t in folded.tokens[max(0, w - 2):w])
