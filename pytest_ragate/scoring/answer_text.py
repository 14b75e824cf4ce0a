"""An answer's text as `answer_match` reads it: folded into tokens, and searched for the facts
(and the forbidden statements) an expected answer lists.

Folding, applied the same way to an answer, a fact, the gist and the question:

- case, accents and the width of characters are dropped (NFKD, combining marks removed,
  casefolded), apostrophes and spaces unified; `n't` reads `not`, `'s` and other clitics go;
- a number is one token in one form whatever its format: thousands separators (`1,000`,
  `1.000`, `1 000`, `1'000`), a decimal comma or point (`0,25` = `0.25` = `.25`), trailing
  zeros (`12.50` = `12.5`), and English number words (`twenty-five` = `25`; `one` alone
  stays a word, matched only by a fact that says 1 or one);
- a currency is a unit written after its amount (`€25`, `EUR 25`, `25 euros` are all
  `25 eur`; dollars `usd`, pounds `gbp`), `%` and `per cent` read `percent`;
- words lose a plural `s` (`months` = `month`) and the articles a, an, the are left out.

A literal fact is found where its tokens occur in a row within one sentence of the answer; a
`/…/` fact is a regular expression searched in the answer folded only lightly (case, accents,
spaces, apostrophes: its numbers and punctuation as written), and found only by a match that
holds a letter or a digit. An occurrence is **negated**, and does not count, when a negation
(`not`, `no`, `never`, `neither`, `nor`, `without`, `n't`, ...) stands within the five tokens
before it in the same clause (a comma, `but`, `however`, `instead` end the clause): `not 30
but 25 euros` states 25 and not 30; `not only`, `not just`, `no doubt` negate nothing (NegEx's
pseudo-negations: Chapman et al., J. Biomed. Inform. 2001, whose five-word window this is).
Number words are English; other languages match where their numbers and words are the fact's
(or where a fact lists them as alternatives).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

Fact = str | list[str]  # one statement: a text, or a list of alternatives (any one states it)

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "´": "'"})
_ODD_SPACES = re.compile(r"[\u00a0\u2007\u2009\u202f\u2002-\u2006\u200a]")
_CLITICS = (
    (re.compile(r"(?<=\w)n't\b"), " not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"(?<=\w)'(?:s|re|ve|ll|d|m)\b"), ""),
)
# a number as written: grouped thousands (one separator throughout, the decimal part after
# the other), or plain digits with a decimal part, or a bare decimal part (.25)
_NUMBER = (r"(?P<grouped>\d{1,3}(?P<sep>[,.' ])\d{3}(?:(?P=sep)\d{3})*(?:[.,]\d+)?)"
           r"|(?P<plain>\d+(?:[.,]\d+)?)|(?P<bare>(?<!\d)[.,]\d+)")
_TOKEN = re.compile(
    rf"(?<![\w])(?:{_NUMBER})(?![\w]|[.,]\d)"
    r"|(?P<ordinal>\d+)(?:st|nd|rd|th)\b"
    r"|(?P<word>\w+)"
    r"|(?P<stop>[.!?;:\n]+)"
    r"|(?P<comma>[,()\[\]]|\s[-–—]\s)"
    r"|(?P<symbol>[€$£%&/])", re.UNICODE)
SYMBOLS = {"€": "eur", "$": "usd", "£": "gbp", "%": "percent", "&": "and", "/": "/"}
CURRENCIES = {"eur": "eur", "euro": "eur", "euros": "eur", "usd": "usd", "dollar": "usd",
              "dollars": "usd", "gbp": "gbp", "pound": "gbp", "pounds": "gbp",
              "percent": "percent", "pct": "percent"}
UNITS = frozenset(CURRENCIES.values())
ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
        "nineteen"]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
NUMBER_WORDS = {w: i for i, w in enumerate(ONES)} | {w: 20 + 10 * i for i, w in enumerate(TENS)}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
SUFFIXES = {"k": 1000, "m": 1_000_000, "mn": 1_000_000, "bn": 1_000_000_000}  # 50M, 1.5k
_SUFFIXED = re.compile(r"(\d+(?:[.,]\d+)?)(k|m|mn|bn)")
# ordinals read as their number (`twenty third` = 23 = `23rd`); `first` and `second` only
# after a tens word, since alone they are as often words (`the second meeting`)
ORDINALS = {w: i for i, w in enumerate(
    ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
     "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
     "seventeenth", "eighteenth", "nineteenth", "twentieth"])} | {"thirtieth": 30}
DIGITS = {w: str(i) for i, w in enumerate(ONES[:10])} | {"oh": "0"}
ARTICLES = frozenset({"a", "an", "the"})
# spoken hesitations, as in the transcripts answers quote (pipeline/normalize.py's list)
FILLERS = frozenset({"uh", "um", "uhm", "umm", "erm", "er", "ah", "hmm", "hm", "mm", "mhm"})
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                       "without", "nowhere", "cannot"})
CONTRASTS = frozenset({"but", "however", "instead", "rather", "yet", "although", "though"})
# a negation word these follow negates nothing (NegEx's pseudo-negations: "not only 25 but")
PSEUDO = frozenset({"only", "just", "doubt", "mention", "matter"})
NEGATION_REACH = 5  # tokens before an occurrence a negation reaches
# closed classes: a value of one of them beside a fact's value is a competing candidate
WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
# months, but for may and march (common words too)
MONTHS = frozenset(["january", "february", "march", "april", "may", "june", "july", "august",
                    "september", "october", "november", "december"]) - {"may", "march"}


@dataclass(frozen=True, kw_only=True)
class Token:
    """One folded token: its text, whether it is a number, the sentence (`clause`) and the
    comma-separated part of it (`part`) it stands in, and where it is in the lightly folded
    text (`start`, `end`)."""

    text: str
    number: bool
    clause: int
    part: int
    start: int
    end: int


def spanning(text: str, number: bool, first: Token, last: Token) -> Token:
    """One token standing for `first`..`last` (a number written in words, `per cent`)."""
    return Token(text=text, number=number, clause=first.clause, part=first.part,
                 start=first.start, end=last.end)


def light(text: str) -> str:
    """Case, accents, character width, apostrophes and odd spaces folded; clitics spelt out
    (`isn't` → `is not`): what a `/…/` fact is searched in."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    plain = _ODD_SPACES.sub(" ", plain.translate(_APOSTROPHES))
    for pattern, replacement in _CLITICS:
        plain = pattern.sub(replacement, plain)
    return plain


def _canonical(match: re.Match[str]) -> str:
    """A number as one form: `1,000.50` → `1000.5`, `0,25` → `0.25`."""
    if match.group("grouped"):
        head, sep = match.group("grouped"), match.group("sep")
        first = head.split(sep, 1)[0]
        if first == "0" and sep in ",." and head.count(sep) == 1:
            digits = head.replace(sep, ".")  # 0,250 is a decimal, not 0 thousand 250
        else:
            digits = head.replace(sep, "")
            digits = digits.replace(",", ".")
    else:
        digits = (match.group("plain") or "0" + match.group("bare")).replace(",", ".")
    whole, _, fraction = digits.partition(".")
    fraction = fraction.rstrip("0")
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{fraction}" if fraction else whole


def tokens(text: str) -> list[Token]:
    """The folded tokens of `text` (see the module's docstring), articles left out."""
    plain = light(text)
    found: list[Token] = []
    clause = part = 0
    for match in _TOKEN.finditer(plain):
        kind = match.lastgroup
        if kind == "stop":
            clause, part = clause + 1, part + 1
            continue
        if kind == "comma":
            part += 1
            continue
        span = match.span()
        if kind in ("grouped", "plain", "bare", "sep"):
            found.append(Token(text=_canonical(match), number=True, clause=clause, part=part,
                               start=span[0], end=span[1]))
            continue
        if kind == "ordinal":
            found.append(Token(text=str(int(match.group("ordinal"))), number=True,
                               clause=clause, part=part, start=span[0], end=span[1]))
            continue
        word = SYMBOLS[match.group()] if kind == "symbol" else match.group()
        if word == "/":
            part += 1
            continue
        if word in ARTICLES or word in FILLERS:
            continue
        found.append(Token(text=CURRENCIES.get(word, word), number=False, clause=clause,
                           part=part, start=span[0], end=span[1]))
    return _dates(_units_after(_scaled(_numbers_of_words(_per_cent(found)))))


MONTH_NAMES = MONTHS | {"may", "march"}


def _dates(found: list[Token]) -> list[Token]:
    """`23 of february` read as `23 february` (`the 23rd of February`)."""
    return [t for i, t in enumerate(found)
            if not (t.text == "of" and 0 < i < len(found) - 1 and found[i - 1].number
                    and found[i + 1].text in MONTH_NAMES)]


def _per_cent(found: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in found:
        if token.text == "cent" and out and out[-1].text == "per":
            out[-1] = spanning("percent", False, out[-1], token)
            continue
        out.append(token)
    return out


def _follows(previous: str | None, word: str) -> bool:
    """Whether `word` may continue a run of number words after `previous` (None: it starts
    one): `twenty five`, `two hundred`, `five thousand two`; not `five six`."""
    if previous in ORDINALS:
        return False
    if word in ORDINALS and word not in NUMBER_WORDS:
        if previous is None:
            return ORDINALS[word] > 2
        return (previous in NUMBER_WORDS and NUMBER_WORDS[previous] >= 20
                and NUMBER_WORDS[previous] % 10 == 0 and 0 < ORDINALS[word] < 10)
    if previous is None or word not in NUMBER_WORDS.keys() | SCALES.keys():
        return previous is None and word in NUMBER_WORDS
    if word in SCALES:
        return previous not in SCALES or SCALES[previous] < SCALES[word]
    small = NUMBER_WORDS.get(word, 99)
    if previous in SCALES:
        return small > 0
    return NUMBER_WORDS[previous] >= 20 and NUMBER_WORDS[previous] % 10 == 0 and 0 < small < 10


def _numbers_of_words(found: list[Token]) -> list[Token]:
    """Runs of English number words in one clause part as one number token (`twenty five` →
    25, `two hundred` → 200); `one` alone stays a word (a pronoun as often as a number)."""
    out: list[Token] = []
    i = 0
    while i < len(found):
        j, previous = i, None
        while j < len(found) and found[j].part == found[i].part \
                and _follows(previous, found[j].text):
            previous = found[j].text
            j += 1
        if j == i or (j == i + 1 and found[i].text == "one"):
            out.append(found[i])
            i += 1
            continue
        total = current = 0
        for token in found[i:j]:
            if token.text == "hundred":
                current = max(current, 1) * 100
            elif token.text in SCALES:
                total, current = total + max(current, 1) * SCALES[token.text], 0
            else:
                current += NUMBER_WORDS.get(token.text, ORDINALS.get(token.text, 0))
        value, j = _fraction(str(total + current), found, j)
        first, last = found[i], found[j - 1]
        out.append(spanning(value, True, first, last))
        i = j
    return out


def _scaled(found: list[Token]) -> list[Token]:
    """A number times its scale as one number: `50 million` and `50M` are 50000000, `1.5k`
    is 1500 (a scale word after number words is read with them already)."""
    out: list[Token] = []
    for token in found:
        suffixed = None if token.number else _SUFFIXED.fullmatch(token.text)
        if suffixed:
            value = float(suffixed.group(1).replace(",", ".")) * SUFFIXES[suffixed.group(2)]
            out.append(spanning(_canonical_text(value), True, token, token))
        elif (token.text in SCALES and out and out[-1].number and out[-1].part == token.part):
            value = float(out[-1].text) * SCALES[token.text]
            out[-1] = spanning(_canonical_text(value), True, out[-1], token)
        else:
            out.append(token)
    return out


def _fraction(value: str, found: list[Token], j: int) -> tuple[str, int]:
    """A number's spoken fraction after it: `point seven` (82 point 7 = 82.7), `and a half`
    (12.5); the value and where the run ends."""
    if j + 1 < len(found) and found[j].text == "point" and found[j + 1].text in DIGITS:
        digits = ""
        while j + 1 < len(found) and found[j + 1].text in DIGITS:
            digits += DIGITS[found[j + 1].text]
            j += 1
        whole = value.split(".")[0]
        fraction = digits.rstrip("0")
        return (f"{whole}.{fraction}" if fraction else whole), j + 1
    if j + 1 < len(found) and found[j].text == "and" and found[j + 1].text == "half":
        return _canonical_text(float(value) + 0.5), j + 2
    return value, j


def _canonical_text(number: float) -> str:
    text = f"{number:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def _units_after(found: list[Token]) -> list[Token]:
    """A currency before its amount moved after it: `eur 25` → `25 eur` (one already after
    an amount stays)."""
    out = list(found)
    for i in range(len(out) - 1):
        unit, amount = out[i], out[i + 1]
        if unit.text in UNITS and amount.number and unit.part == amount.part and (
                i == 0 or not out[i - 1].number or out[i - 1].part != unit.part):
            out[i], out[i + 1] = amount, unit
    return out


def stem(word: str) -> str:
    """A plural's singular, roughly: `companies` → `company`, `months` → `month`."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def key(token: Token) -> str:
    """What two tokens are compared by: a number's value, a word's stem (`one` is 1)."""
    if token.number:
        return token.text
    return "1" if token.text == "one" else stem(token.text)


# --- facts ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Alternative:
    """One way to state a fact: folded tokens to find in a row, or a regular expression."""

    words: tuple[str, ...] = ()
    pattern: re.Pattern[str] | None = None

    @property
    def numeric(self) -> bool:
        if self.pattern is not None:
            return bool(re.search(r"\d|\\d", self.pattern.pattern))
        return any(w[:1].isdigit() for w in self.words)


def is_pattern(text: str) -> bool:
    """`/…/`: a regular expression rather than words."""
    return len(text) >= 2 and text.startswith("/") and text.endswith("/")


_PROBES = ("", " ", "a", "0", "a b", "the 25 euros.")


def alternative_problem(text: str) -> str | None:
    """Why `text` cannot state a fact, in words that never quote it (a sealed goldset's
    problems show no expected answer): empty, nothing left once folded, a regular expression
    that does not compile or that matches without stating anything."""
    if not text.strip():
        return "is empty: a fact states something"
    if is_pattern(text):
        try:
            compiled = re.compile(text[1:-1], re.IGNORECASE)
        except re.error as error:
            return (f"is a regular expression that does not compile ({error.msg} at position "
                    f"{error.pos})")
        for probe in _PROBES:
            if any(m.end() == m.start() for m in compiled.finditer(probe)):
                return ("is a regular expression that matches the empty string: it would "
                        "be found in every answer")
        return None
    if not tokens(text):
        return "has no word or number once folded (articles and punctuation are left out)"
    return None


@lru_cache(maxsize=4096)
def alternative(text: str) -> Alternative:
    """One alternative, compiled (`alternative_problem` must have found nothing)."""
    if is_pattern(text):
        return Alternative(pattern=re.compile(text[1:-1], re.IGNORECASE))
    return Alternative(words=tuple(key(t) for t in tokens(text)))


def alternatives(fact: Fact) -> tuple[Alternative, ...]:
    return tuple(alternative(text) for text in ([fact] if isinstance(fact, str) else fact))


def same_statement(a: Fact, b: Fact) -> bool:
    """Whether two facts share an alternative once folded (a `forbid` equal to a fact)."""
    return bool(set(alternatives(a)) & set(alternatives(b)))


# --- searching an answer ----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Occurrence:
    """Where an alternative was found: the answer's tokens `first`..`last` (inclusive), and
    whether a negation reaches it."""

    first: int
    last: int
    negated: bool


class Folded:
    """An answer folded once and searched for many alternatives."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = light(text)
        self.tokens = tokens(text)
        self.keys = [key(t) for t in self.tokens]

    def find(self, alt: Alternative) -> list[Occurrence]:
        """Every occurrence of `alt`, in order."""
        if alt.pattern is not None:
            return [self._at(m.start(), m.end()) for m in alt.pattern.finditer(self.plain)
                    if any(c.isalnum() for c in m.group())]
        n = len(alt.words)
        found = []
        for i in range(len(self.keys) - n + 1):
            if self.keys[i:i + n] == list(alt.words) and \
                    self.tokens[i].clause == self.tokens[i + n - 1].clause:
                found.append(Occurrence(first=i, last=i + n - 1, negated=self.negated(i)))
        return found

    def _at(self, start: int, end: int) -> Occurrence:
        inside = [i for i, t in enumerate(self.tokens) if t.end > start and t.start < end]
        if not inside:  # punctuation only around tokens: the token after it
            after = next((i for i, t in enumerate(self.tokens) if t.start >= start),
                         len(self.tokens))
            return Occurrence(first=after, last=after - 1,
                              negated=after < len(self.tokens) and self.negated(after))
        return Occurrence(first=inside[0], last=inside[-1], negated=self.negated(inside[0]))

    def negated(self, i: int) -> bool:
        """A negation within `NEGATION_REACH` tokens before token `i`, in its clause part,
        with no contrast (`but`) between."""
        here = self.tokens[i]
        for j in range(i - 1, max(-1, i - 1 - NEGATION_REACH), -1):
            t = self.tokens[j]
            if t.part != here.part or t.text in CONTRASTS:
                return False
            if t.text in NEGATIONS:
                after = self.tokens[j + 1].text if j + 1 < len(self.tokens) else ""
                return after not in PSEUDO
        return False

    def states(self, fact: Fact) -> list[Occurrence]:
        """The occurrences of any of the fact's alternatives that no negation reaches."""
        return [o for alt in alternatives(fact) for o in self.find(alt) if not o.negated]


# the commonest English function words: an answer with few of them is in another language
ENGLISH = frozenset(["the", "a", "an", "and", "or", "of", "to", "in", "on", "for", "with", "is",
                     "are", "was", "were", "be", "been", "being", "am", "it", "its", "that",
                     "this", "these", "those", "by", "as", "at", "from", "he", "she", "they", "we",
                     "you", "i", "me", "my", "our", "your", "his", "her", "their", "them", "us",
                     "not", "but", "have", "has", "had", "do", "does", "did", "would", "will",
                     "shall", "should", "can", "could", "may", "might", "must", "there", "here",
                     "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "so",
                     "if", "than", "then", "also", "just", "very", "too", "some", "any", "each",
                     "all", "no", "about", "into", "over", "under", "up", "down", "out", "more",
                     "much", "many", "most", "such", "only", "own", "same", "other", "like",
                     "going", "get", "got"])
ENGLISH_SHARE = 0.15  # below this share of its words, a text of 5 words or more is not English


def english(folded: Folded) -> bool:
    """Whether a text reads as English: at least `ENGLISH_SHARE` of its words (as written,
    articles included) are common English function words (a text of fewer than 5 words is
    taken as English)."""
    words = [w for w in re.findall(r"[^\W\d_]+", folded.plain) if w not in FILLERS]
    return len(words) < 5 or sum(w in ENGLISH for w in words) / len(words) >= ENGLISH_SHARE


def numbers_in(texts: Iterable[str]) -> set[str]:
    return {t.text for text in texts for t in tokens(text) if t.number}


def closed_class(token: Token) -> str | None:
    """The class of a token a competing candidate would share: number, weekday or month."""
    if token.number:
        return "number"
    if token.text in WEEKDAYS:
        return "weekday"
    if token.text in MONTHS:
        return "month"
    return None


def words_of(texts: Sequence[str]) -> set[str]:
    return {key(t) for text in texts for t in tokens(text)}
