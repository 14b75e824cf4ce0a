"""An answer's text as `answer_match` reads it: folded into tokens, and searched for the facts
(and the forbidden statements) an expected answer lists.

Folding, applied the same way to an answer, a fact, the gist and the question:

- text is read as a reader sees it: NFKC, with zero-width and other format characters
  (Unicode category Cf) removed (`n\u200bot` is `not`); a word that mixes alphabets
  (`n\u043et`: a Cyrillic о in a Latin word) is told by `mixed_script`, and makes an answer
  unsure (the mixed-script test of Unicode TR39, "Security Mechanisms");
- case, accents and the width of characters are dropped (NFKD, combining marks removed,
  casefolded), apostrophes and spaces unified; `n't` reads `not`, other clitics go, and a
  possessive `'s` marks the word before it as an owner;
- single tokens by type, tried first: a URL or host name (`https://`, `www.` and a trailing
  `/` dropped), an e-mail address, a time (`09:30` = `9:30`), a version (three parts or more,
  a `v` or a pre-release tag: `5.0.0`, `v5.0.0`, `2.14.0-beta.2` = `2.14.0b2`, PEP 440's
  normalisation), a known abbreviation (`Dr.`, `e.g.`: its period ends no sentence);
- a number is one token in one form whatever its format: thousands separators (`1,000`,
  `1.000`, `1 000`, `1'000`), a decimal comma or point (`0,25` = `0.25` = `.25`), English
  number words (`twenty-five` = `25`; `one` alone stays a word, matched only by a fact that
  says 1 or one); it keeps its sign (`-2.5`, `minus 25`); a decimal part keeps its trailing
  zeros unless a unit follows (`12.50 euros` = `12.5 euros`, but `3.10` is not `3.1`);
- a currency is a unit written after its amount (`€25`, `EUR 25`, `25 euros` are all
  `25 eur`; dollars `usd`, pounds `gbp`), `%` and `per cent` read `percent`;
- words lose a plural `s` (`months` = `month`) and the articles a, an, the are left out.

A literal fact is found where its tokens occur in a row within one sentence of the answer (a
`forbid` statement also with up to two words between each two of its words that negate
nothing and are neither `or` nor a value, in one clause part: `managers also sign off`); a
`/…/` fact is a regular expression searched in the answer folded only lightly (case, accents,
spaces, apostrophes: its numbers and punctuation as written), and found only by a match that
holds a letter or a digit. An occurrence is **negated**, and does not count, when a negation
(`not`, `no`, `never`, `neither`, `nor`, `without`, `n't`, ...) stands within the five tokens
before it in the same clause (a comma, `but`, `however`, `instead` end the clause): `not 30
but 25 euros` states 25 and not 30; `not only`, `no doubt`, `no wonder`, `nobody doubts`
negate nothing (NegEx's pseudo-negations: Chapman et al., J. Biomed. Inform. 2001, whose
five-word window this is); or when one follows it in its clause part before a word that
opens another clause (`Alice did not chair`, `25 cents is not the fee`, `Friday was ruled
out`: ConText's post-negation triggers and scope terminators, Harkema et al., J. Biomed.
Inform. 2009). An occurrence that is not negated may still not state the fact plainly
(`Occurrence.qualified`): in a sentence that refuses or asks (`no information confirming
that the fee is 25 cents`, `Is it 25 cents?`), bounded (`over`, `up to`, `at least`, `about`,
`40+`, `or more`, `more than`), signed (`+2.5%`), as an owner of a role (`Alice's assistant`,
`the lawyer of Bob`), joined by a hyphen to a longer word or range (`Alice-led`, `20-25`), or
in a currency's subdivision (`25 euro cents`). `hedges` finds the sentences that hedge,
condition or date what they say (ConText's uncertainty and historical triggers, scoped to
their sentence: `maybe`, `probably`, `I think`, `might`, `if`, `used to`, ...).
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
    (re.compile(r"(?<=\w)'(?:re|ve|ll|d|m)\b"), ""),
)
# a number as written: grouped thousands (one separator throughout, the decimal part after
# the other), or plain digits with a decimal part, or a bare decimal part (.25)
_NUMBER = (r"(?P<grouped>\d{1,3}(?P<sep>[,.' ])\d{3}(?:(?P=sep)\d{3})*(?:[.,]\d+)?)"
           r"|(?P<plain>\d+(?:[.,]\d+)?)|(?P<bare>(?<!\d)[.,]\d+)")
# single tokens that hold '.', ':' or '@' (tried first): a URL or bare host name, an e-mail
# address, a time (10:30), a version (5.0.0, v2.14.0b2, v3.10), a known abbreviation (Dr.)
_TLD = r"(?:com|org|net|io|dev|edu|gov|ai|app|co|uk|de|fr|eu|info|biz|cloud)"
_TYPED = (
    r"(?P<url>(?:https?://|www\.)[^\s<>()\[\]\"']+?|(?<![\w@.-])(?:[a-z0-9-]+\.)+" + _TLD
    + r"(?:/[^\s<>()\[\]\"']*?)?)(?=[.,;:!?)\]>'\"]*(?:\s|$))"
    r"|(?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?<![\w:.])(?P<time>\d{1,2}:\d{2}(?::\d{2})?)(?![\w:]|[.,]\d)"
    r"|(?<![\w.])(?P<version>v\d+(?:\.\d+)+(?:[-.]?[a-z]+\.?\d*)*"
    r"|\d+(?:\.\d+){2,}(?:[-.]?[a-z]+\.?\d*)*"
    r"|\d+(?:\.\d+)+(?:[-.]?(?:a|b|rc|alpha|beta|dev|post|pre)\.?\d*)+)(?![\w]|\.\w)"
    r"|\b(?P<abbrev>dr|mr|mrs|ms|prof|st|jr|sr|inc|ltd|corp|vs|etc|approx|dept|fig|mt|rev"
    r"|e\.g|i\.e|a\.m|p\.m)\.(?=\s|$|,)"
)
_TOKEN = re.compile(
    _TYPED + rf"|(?<![\w.,])(?P<sign>[-\u2212])?(?:{_NUMBER})(?![\w]|[.,]\d)"
    r"|(?<![\w.,])(?P<minus>[-\u2212])(?=[\u20ac$\u00a3]\s?\d)"
    r"|(?P<ordinal>\d+)(?:st|nd|rd|th)\b"
    r"|(?<=\w)(?P<poss>'s)\b"
    r"|(?P<word>\w+)"
    r"|(?P<stop>[.!?;:\n]+)"
    r"|(?P<mdlink>\]\()"
    r"|(?P<comma>[,()\[\]]|\s[-\u2013\u2014]\s)"
    r"|(?P<symbol>[\u20ac$\u00a3%&/+~\u2265\u2264]|>=|<=|[<>])", re.UNICODE)
SYMBOLS = {"~": "~", "€": "eur", "$": "usd", "£": "gbp", "%": "percent", "&": "and", "/": "/",
           "+": "+", ">": ">", "<": "<", ">=": ">=", "<=": "<=", "\u2265": ">=", "\u2264": "<="}
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
# spoken hesitations, as in the transcripts answers quote (builtin_system/normalize.py's list)
FILLERS = frozenset({"uh", "um", "uhm", "umm", "erm", "er", "ah", "hmm", "hm", "mm", "mhm"})
FORBID_GAP = 2  # words between two of a forbidden statement's that still state it
NEGATIONS = frozenset({"not", "no", "never", "none", "nobody", "nothing", "neither", "nor",
                       "without", "nowhere", "cannot", "denied", "denies", "deny", "refuted",
                       "disputed"})
CONTRASTS = frozenset({"but", "however", "instead", "rather", "yet", "although", "though"})
# a negation word these follow negates nothing (NegEx's pseudo-negations: "not only 25 but")
PSEUDO = frozenset({"only", "just", "doubt", "mention", "matter", "wonder", "surprisingly",
                    "surprise", "question", "least", "deny", "denie"})
NEGATION_REACH = 5  # tokens before an occurrence a negation reaches
# closed classes: a value of one of them beside a fact's value is a competing candidate
WEEKDAYS = frozenset(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
# months, but for may and march (common words too)
MONTHS = frozenset(["january", "february", "march", "april", "may", "june", "july", "august",
                    "september", "october", "november", "december"]) - {"may", "march"}


@dataclass(frozen=True, kw_only=True)
class Token:
    """One folded token: its text, whether it is a value (`number`: a number, a version or a
    time) and of which `kind` (number, version, time, email, url, word), whether a possessive
    `'s` follows it (`owner`), the sentence (`clause`) and the comma-separated part of it
    (`part`) it stands in, and where it is in the lightly folded text (`start`, `end`)."""

    text: str
    number: bool
    clause: int
    part: int
    start: int
    end: int
    kind: str = "word"
    owner: bool = False


def spanning(text: str, number: bool, first: Token, last: Token) -> Token:
    """One token standing for `first`..`last` (a number written in words, `per cent`)."""
    return Token(text=text, number=number, clause=first.clause, part=first.part,
                 start=first.start, end=last.end, kind="number" if number else "word")


_FORMAT = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                     r"\u2066-\u206f\ufeff\ufff9-\ufffb]")


def clean(text: str) -> str:
    """NFKC, with zero-width and other format characters (Unicode category Cf) removed: what
    a reader sees, so `n\u200bot` is `not` and `２５` is `25`."""
    text = unicodedata.normalize("NFKC", _FORMAT.sub("", text))
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE")


def mixed_script(text: str) -> bool:
    """Whether a word mixes letters of two alphabets (a Cyrillic `о` inside a Latin `not`):
    look-alike letters that read as one word and match as another."""
    for word in re.findall(r"[^\W\d_]{2,}", clean(text)):
        scripts = {next((s for s in _SCRIPTS if unicodedata.name(c, "").startswith(s)), "")
                   for c in word}
        if len(scripts - {""}) > 1:
            return True
    return False


def light(text: str) -> str:
    """Cleaned (`clean`); case, accents, character width, apostrophes and odd spaces folded;
    clitics spelt out (`isn't` → `is not`; a possessive `'s` stays): what a `/…/` fact is
    searched in."""
    decomposed = unicodedata.normalize("NFKD", clean(text))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    plain = _ODD_SPACES.sub(" ", plain.translate(_APOSTROPHES))
    for pattern, replacement in _CLITICS:
        plain = pattern.sub(replacement, plain)
    return plain


def _canonical(match: re.Match[str]) -> str:
    """A number as one form: `1,000.50` → `1000.50`, `0,25` → `0.25`; a decimal part keeps
    its trailing zeros (`3.10` is a version as often as an amount) until `_amounts` finds a
    unit after it."""
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
    whole = whole.lstrip("0") or "0"
    value = f"{whole}.{fraction}" if fraction.rstrip("0") else whole
    return "-" + value if match.group("sign") and value != "0" else value


_PRE_RELEASE = (("alpha", "a"), ("beta", "b"), ("preview", "rc"), ("pre", "rc"), ("c", "rc"))


def _version(text: str) -> str:
    """A version as one form (PEP 440's normalisation, roughly): `v2.14.0-beta.2` →
    `2.14.0b2`; `v18` → `18`."""
    text = text.removeprefix("v")
    match = re.fullmatch(r"([\d.]+?)[-.]?([a-z]+)\.?(\d*)", text)
    if not match:
        return text
    tag = match.group(2)
    tag = next((short for long, short in _PRE_RELEASE if tag == long), tag)
    return f"{match.group(1)}{tag}{match.group(3)}"


def _typed(kind: str, written: str) -> tuple[str, bool]:
    """A typed token's text and whether it is a value."""
    if kind == "version":
        if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", written):  # 1.000.000: grouped thousands
            return written.replace(".", ""), True
        version = _version(written)
        if re.fullmatch(r"\d+\.\d+", version):  # v1.0, v3.10: the number, as written
            whole, fraction = version.split(".")
            return (f"{whole}.{fraction}" if fraction.rstrip("0") else whole), True
        return version, True
    if kind == "time":
        hours, rest = written.split(":", 1)
        return f"{int(hours)}:{rest}", True
    if kind == "url":
        return re.sub(r"^(?:https?://)?(?:www\.)?", "", written).rstrip("/"), False
    if kind == "abbrev":
        return written.replace(".", ""), False
    return written, False


def tokens(text: str) -> list[Token]:
    """The folded tokens of `text` (see the module's docstring), articles left out."""
    plain = light(text)
    found: list[Token] = []
    clause = part = 0
    for match in _TOKEN.finditer(plain):
        kind = match.lastgroup or ""
        if kind == "stop":
            clause, part = clause + 1, part + 1
            continue
        if kind == "comma":
            part += 1
            continue
        if kind == "mdlink":  # a Markdown link's text and target are one item
            continue
        if kind == "minus":  # -£1.2 million: read with the amount (`_signed`)
            found.append(Token(text="minus", number=False, clause=clause, part=part,
                               start=match.start(), end=match.end()))
            continue
        span = match.span()
        where = {"clause": clause, "part": part, "start": span[0], "end": span[1]}
        if kind == "poss":
            if found and found[-1].end == span[0]:
                found[-1] = Token(**{**found[-1].__dict__, "owner": True})
            continue
        if kind in ("url", "email", "time", "version", "abbrev"):
            written, number = _typed(kind, match.group(kind))
            found.append(Token(text=written, number=number, kind=kind if kind != "abbrev"
                               else "word", **where))
            continue
        if kind in ("grouped", "plain", "bare", "sep", "sign"):
            found.append(Token(text=_canonical(match), number=True, kind="number", **where))
            continue
        if kind == "ordinal":
            found.append(Token(text=str(int(match.group("ordinal"))), number=True,
                               kind="number", **where))
            continue
        word = SYMBOLS[match.group()] if kind == "symbol" else match.group()
        if word == "/":
            part += 1
            continue
        if word in ARTICLES or word in FILLERS:
            continue
        found.append(Token(text=CURRENCIES.get(word, word), number=False, **where))
    return _amounts(_signed(_dates(_units_after(_scaled(_numbers_of_words(_per_cent(found)))))))


def _signed(found: list[Token]) -> list[Token]:
    """`minus 25` and `negative 25` read as -25."""
    out: list[Token] = []
    for token in found:
        if token.kind == "number" and out and out[-1].text in ("minus", "negative") \
                and out[-1].part == token.part and not token.text.startswith("-"):
            out[-1] = spanning("-" + token.text, True, out[-1], token)
            continue
        out.append(token)
    return out


def _amounts(found: list[Token]) -> list[Token]:
    """A number with a unit after it (a currency, percent) drops its decimal part's trailing
    zeros (`12.50 euros` = `12.5 euros`); a bare one keeps them (`3.10` is not `3.1`)."""
    out = list(found)
    for i, token in enumerate(out[:-1]):
        if token.kind == "number" and "." in token.text and out[i + 1].text in UNITS \
                and out[i + 1].part == token.part:
            out[i] = Token(**{**token.__dict__, "text": token.text.rstrip("0").rstrip(".")})
    return out


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
        suffixed = None if token.number or token.kind != "word" else \
            _SUFFIXED.fullmatch(token.text)
        if suffixed:
            value = float(suffixed.group(1).replace(",", ".")) * SUFFIXES[suffixed.group(2)]
            out.append(spanning(_canonical_text(value), True, token, token))
        elif (token.text in SCALES and out and out[-1].kind == "number"
              and out[-1].part == token.part):
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


def alternative_warning(text: str) -> str | None:
    """Why a literal alternative that loads cannot be stated as written, and how to write it,
    in words that never quote it: a word mixing alphabets, a sentence break inside it (an
    answer's facts are found within one sentence), or wording an answer would state only
    under a negation, a refusal, a hedge or a bound (found in itself, it is not stated
    plainly). None when an answer that repeats it states it."""
    if is_pattern(text) or alternative_problem(text) is not None:
        return None
    if mixed_script(text):
        return ("mixes alphabets inside a word (look-alike letters): an answer is unsure "
                "wherever it does so, and one in a single alphabet never states it; write it "
                "in one alphabet")
    alt = alternative(text)
    stated = [o for o in Folded(text).find(alt) if not o.negated and not o.qualified]
    if stated:
        return None
    if len({t.clause for t in tokens(text)}) > 1:
        return ("holds a sentence break ('.', '!', '?', ';', ':' or a line break that is not "
                "part of a time, version, e-mail address, URL or known abbreviation): an answer "
                "states a fact within one sentence, so nothing states it; split it into two "
                "facts, or write it as a /regular expression/")
    return ("reads as negated, refused, bounded or someone else's in itself, so no answer "
            "states it plainly: write the fact as a plain statement (`25 euros`, not "
            "`over 25 euros`) and put what must not be said in `forbid`")


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


# ConText's post-negation and scope (Harkema et al., J. Biomed. Inform. 2009): a negation
# after the target within its clause part (`Alice did not chair`, `25 cents is not the fee`,
# `Friday was ruled out`), until a word that opens another clause
POST_NEGATIONS = frozenset({"not", "never", "cannot"})
POST_PHRASES = (("ruled", "out"), ("rejected",), ("excluded",), ("denied",), ("dismissed",),
                ("false",), ("incorrect",), ("untrue",), ("turned", "down"), ("refused",),
                ("declined",), ("failed", "to"), ("was", "cancelled"), ("was", "canceled"),
                ("was", "withdrawn"), ("was", "abandoned"), ("was", "overturned"),
                ("was", "reversed"), ("was", "scrapped"), ("was", "vetoed"), ("is", "wrong"),
                ("was", "wrong"), ("is", "outdated"), ("is", "obsolete"), ("was", "voted", "down"))
POST_REACH = 6
EXCLUDING = (("instead", "of"), ("rather", "than"), ("other", "than"), ("except",),
             ("excluding",), ("apart", "from"), ("not", "including"), ("in", "place", "of"))
TERMINATORS = CONTRASTS | frozenset({"and", "which", "who", "that", "because", "since", "while",
                                     "so", "whereas", "when", "where", "if", "unless", "after",
                                     "before", "until", "as", "than"})
# a refusal restating what it refuses: the sentence does not assert what it holds
REFUSALS = (("no", "information"), ("not", "mention"), ("not", "say"), ("not", "state"),
            ("not", "specify"), ("not", "provide"), ("not", "contain"), ("not", "confirm"),
            ("unable",), ("no", "mention"), ("no", "record"), ("no", "evidence"),
            ("not", "clear"), ("unclear",), ("not", "know"), ("no", "data"), ("insufficient",),
            ("not", "enough"), ("not", "find"), ("no", "indication"), ("no", "detail"),
            ("not", "determine"), ("not", "verify"), ("whether",), ("untrue",),
            ("not", "true"), ("false", "that"), ("nothing", "in"), ("not", "correct"),
            ("not", "answer"), ("not", "mentioned"), ("not", "said"), ("not", "stated"),
            ("not", "specified"), ("not", "provided"), ("not", "contained"),
            ("not", "confirmed"), ("not", "found"), ("not", "determined"), ("not", "verified"),
            ("not", "known"), ("not", "indicate"), ("no", "way"), ("not", "tell"),
            ("not", "able"), ("not", "possible"), ("not", "listed"), ("not", "available"),
            ("not", "given"), ("not", "covered"), ("silent", "on"), ("no", "reference"),
            ("not", "have", "information"), ("not", "have", "enough"), ("no", "access"),
            ("not", "have", "access"), ("can", "not", "be", "sure"))
# bounds before and after a value (`over 25 euros`, `40+ seats`, `25 euros or more`): `lower`
# or `upper`; `almost` and `nearly` fall short of it
COMPARATIVES = frozenset({"more", "less", "fewer", "later", "earlier", "longer", "greater",
                          "higher", "lower"})
EXCEEDING = frozenset({"exceed", "exceeding", "over", "above", "under", "below"})
BOUNDS_BEFORE = (*(((neg, word), "upper") for neg in ("not", "no") for word in ("exceed",
                                                                                "exceeding")),
                 (("no", "more", "than"), "upper"), (("not", "more", "than"), "upper"),
                 (("no", "later", "than"), "upper"), (("no", "less", "than"), "lower"),
                 (("not", "less", "than"), "lower"), (("no", "fewer", "than"), "lower"),
                 (("more", "than"), "lower"), (("greater", "than"), "lower"),
                 (("at", "least"), "lower"), (("over",), "lower"), (("above",), "lower"),
                 (("exceeding",), "lower"), (("beyond",), "lower"), (("upward", "of"), "lower"),
                 ((">",), "lower"), ((">=",), "lower"), (("minimum",), "lower"),
                 (("less", "than"), "upper"), (("fewer", "than"), "upper"),
                 (("up", "to"), "upper"), (("at", "most"), "upper"), (("under",), "upper"),
                 (("below",), "upper"), (("within",), "upper"), (("maximum",), "upper"),
                 (("max",), "upper"), (("<",), "upper"), (("<=",), "upper"),
                 (("almost",), "short"), (("nearly",), "short"), (("just", "under"), "short"),
                 (("than",), "than"), (("about",), "about"), (("around",), "about"),
                 (("roughly",), "about"), (("approximately",), "about"), (("approx",), "about"),
                 (("circa",), "about"), (("~",), "about"), (("as", "much", "as"), "upper"),
                 (("as", "many", "as"), "upper"), (("as", "little", "as"), "lower"),
                 (("as", "low", "as"), "lower"), (("as", "high", "as"), "upper"),
                 (("starting", "at"), "lower"), (("starting", "from"), "lower"),
                 (("in", "excess", "of"), "lower"), (("close", "to"), "about"),
                 (("some",), "about"), (("upward", "of"), "lower"))
BOUNDS_AFTER = ((("+",), "lower"), (("or", "more"), "lower"), (("or", "later"), "lower"),
                (("or", "newer"), "lower"), (("or", "above"), "lower"), (("or", "higher"), "lower"),
                (("and", "up"), "lower"), (("and", "above"), "lower"), (("at", "least"), "lower"),
                (("or", "less"), "upper"), (("or", "fewer"), "upper"), (("or", "lower"), "upper"),
                (("or", "earlier"), "upper"), (("at", "most"), "upper"), (("max",), "upper"),
                (("ish",), "about"), (("or", "thereabouts"), "about"), (("or", "so"), "about"),
                (("give", "or", "take"), "about"), (("odd",), "about"),
                *(((w,), "than") for w in ("more", "less", "fewer", "higher", "lower", "cheaper",
                                           "longer", "shorter", "larger", "smaller", "bigger",
                                           "faster", "slower", "extra")))
MOTION = frozenset({"went", "go", "goe", "gone", "going", "rose", "rise", "risen", "climbed",
                    "came", "come", "jumped", "moved", "grew", "increased"})
# subdivisions of a currency: `25 euro cents` is not `25 euros`
SUBUNITS = frozenset({"cent", "centime", "penny", "pence", "kopek", "centavo", "paisa"})
PERIODS = frozenset({"second", "minute", "hour", "day", "week", "month", "quarter", "year",
                     "annum"})
PERIODICALLY = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month",
                "quarterly": "quarter", "yearly": "year", "annual": "year", "annually": "year"}
RATES = PERIODS | frozenset({"user", "seat", "person", "head", "device", "request", "call",
                             "ticket", "node", "host", "instance", "license", "member"})
# a noun whose `of X` or `X's` is someone or something else (`the assistant of Alice`)
ROLES = frozenset({"assistant", "lawyer", "attorney", "deputy", "secretary", "aide", "colleague",
                   "friend", "boss", "manager", "wife", "husband", "son", "daughter", "brother",
                   "sister", "mother", "father", "partner", "representative", "agent", "team",
                   "office", "staff", "spokesperson", "advisor", "adviser", "replacement",
                   "successor", "predecessor", "substitute", "proxy", "delegate", "client",
                   "customer", "employer", "employee", "counsel", "owner", "director", "chair",
                   "ceo", "cfo", "cto", "head", "lead", "leader", "supervisor", "coordinator",
                   "organizer", "organiser", "intern", "student", "nurse", "driver", "neighbour",
                   "neighbor", "cousin", "uncle", "aunt", "parent", "child", "spouse", "mentor",
                   "coach", "teacher", "associate", "accountant", "auditor", "broker",
                   "solicitor", "understudy", "company", "firm", "foundation", "trust", "group",
                   "department", "committee", "union", "campaign", "agency", "ghostwriter",
                   "bot", "account", "stand", "chief", "officer", "paralegal",
                   "executor", "trustee", "nominee", "designee", "appointee", "researcher",
                   "engineer", "developer", "contractor", "vendor", "subsidiary", "lab", "staffer",
                   "ex", "former", "old", "previous"})
# a change's direction said in words (`rose 2.5%`, `dropped 2.5%`): the sign of a value
DIRECTIONS = {**dict.fromkeys(("rose", "rise", "risen", "increased", "increase", "grew", "grow",
                               "gained", "up", "higher", "climbed", "jumped", "raised",
                               "surcharge"), "up"),
              **dict.fromkeys(("fell", "fall", "fallen", "dropped", "drop", "decreased",
                               "decrease", "declined", "decline", "down", "lower", "lost",
                               "shrank", "cut", "reduced", "discount", "off"), "down")}
PRONOUNS = frozenset({"it", "that", "what", "there", "here", "who", "he", "she", "let", "where",
                      "how", "this", "everyone", "nobody", "somebody", "one"})


@dataclass(frozen=True, kw_only=True)
class Occurrence:
    """Where an alternative was found: the answer's tokens `first`..`last` (inclusive),
    whether a negation reaches it (before or after it), and how else it is qualified, in
    the words of `QUALIFIED` (empty: it states the fact plainly)."""

    first: int
    last: int
    negated: bool
    qualified: str = ""


QUALIFIED = {"refused": "in a refusal", "bounded:lower": "as a lower bound (over, at least, +)",
             "bounded:upper": "as an upper bound (up to, under, at most)",
             "bounded:short": "as falling short of it (almost, nearly)",
             "bounded:than": "in a comparison (more than, larger than)",
             "bounded:about": "as an approximation (about, roughly)",
             "owned": "as someone's or something's owner ('s, of)",
             "compound": "inside a longer hyphenated word or range",
             "unit": "in another unit or subdivision",
             "signed": "with a sign (+) the expected answer does not give",
             "opposite": "with the other direction of change than the expected answer's"}


class Folded:
    """An answer folded once and searched for many alternatives."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = light(text)
        self.tokens = tokens(text)
        self.keys = [key(t) for t in self.tokens]

    def find(self, alt: Alternative) -> list[Occurrence]:
        """Every occurrence of `alt`, in order, each with its negation and qualifier."""
        if alt.pattern is not None:
            return [self._at(m.start(), m.end()) for m in alt.pattern.finditer(self.plain)
                    if any(c.isalnum() for c in m.group())]
        n = len(alt.words)
        found = []
        for i in range(len(self.keys) - n + 1):
            if self.keys[i:i + n] == list(alt.words) and \
                    self.tokens[i].clause == self.tokens[i + n - 1].clause:
                last = i + n - 1
                found.append(Occurrence(
                    first=i, last=last, negated=self.negated(i) or self.denied_after(last),
                    qualified=self.qualifier(i, last, alt)))
        return found

    def _at(self, start: int, end: int) -> Occurrence:
        inside = [i for i, t in enumerate(self.tokens) if t.end > start and t.start < end]
        if not inside:  # punctuation only around tokens: the token after it
            after = next((i for i, t in enumerate(self.tokens) if t.start >= start),
                         len(self.tokens))
            return Occurrence(first=after, last=after - 1,
                              negated=after < len(self.tokens) and self.negated(after))
        first, last = inside[0], inside[-1]
        return Occurrence(first=first, last=last,
                          negated=self.negated(first) or self.denied_after(last),
                          qualified="refused" if self.refused(first) else "")

    def excluded(self, i: int) -> bool:
        """A phrase right before token `i` that excludes what follows (`instead of Alice`,
        `rather than 25 euros`, `other than Lyon`: ConText's pre-negation phrases)."""
        return any(i >= len(p) and self.says(i - len(p), p) for p in EXCLUDING)

    def negated(self, i: int) -> bool:
        """A negation within `NEGATION_REACH` tokens before token `i`, in its clause part,
        with no contrast (`but`) between, and no pseudo-negation (`not only`, `no wonder`,
        `nobody doubts`) after it."""
        here = self.tokens[i]
        if self.excluded(i):
            return True
        for j in range(i - 1, max(-1, i - 1 - NEGATION_REACH), -1):
            t = self.tokens[j]
            if t.part != here.part or t.text in CONTRASTS:
                return False
            if t.text in NEGATIONS:
                k = j + 2 if self.keys[j + 1:j + 2] == ["1"] else j + 1  # `no one doubts`
                after = self.keys[k] if k < len(self.tokens) else ""
                if (after in COMPARATIVES and self.keys[k + 1:k + 2] == ["than"]) or \
                        after in EXCEEDING:
                    return False  # `no more than`, `may not exceed 12.50 euros`: a bound
                return after not in PSEUDO and stem(after) not in PSEUDO
        return False

    def denied_after(self, last: int) -> bool:
        """A negation after token `last` in its clause part (`Alice did not chair`, `Friday
        was ruled out`), before any word that opens another clause (`and`, `which`, `if`)."""
        here = self.tokens[last]
        for j in range(last + 1, min(len(self.tokens), last + 1 + POST_REACH)):
            t = self.tokens[j]
            if t.part != here.part or t.text in TERMINATORS:
                return False
            after = self.keys[j + 1] if j + 1 < len(self.tokens) else ""
            if t.text in POST_NEGATIONS and after not in PSEUDO:
                return True
            if any(self.says(j, p) for p in POST_PHRASES):
                return True
        return False

    def directions(self, i: int) -> set[str]:
        """The directions of change (up, down) said in token `i`'s sentence."""
        return {DIRECTIONS[self.keys[j]] for j in self._sentence(i) if self.keys[j] in DIRECTIONS}

    def says(self, k: int, words: tuple[str, ...]) -> bool:
        """Whether `words` stand at token `k` on, each as written or as compared (stem)."""
        n = len(words)
        return k + n <= len(self.tokens) and all(
            w in (self.tokens[k + m].text, self.keys[k + m]) for m, w in enumerate(words))

    def _sentence(self, i: int) -> list[int]:
        clause = self.tokens[i].clause
        return [j for j, t in enumerate(self.tokens) if t.clause == clause]

    def refused(self, i: int) -> bool:
        """A refusal in token `i`'s clause part, with no contrast between (`no information
        confirming that the fee is 25 cents`, `I don't know whether Alice chaired`; not `The
        notes do not say why, but the fee is 25 cents`), or a question as its sentence."""
        here = self._sentence(i)
        return any(self.says(k, p) and k + len(p) - 1 <= here[-1] for p in REFUSALS
                   for k in self._scope(i)) or self._asked(here)

    def _scope(self, i: int) -> list[int]:
        """The tokens of token `i`'s clause part that no contrast word (`but`) parts from it."""
        part = self.tokens[i].part
        same = [j for j, t in enumerate(self.tokens) if t.part == part]
        cuts = [j for j in same if self.tokens[j].text in CONTRASTS]
        low = max([j for j in cuts if j < i], default=same[0] - 1)
        high = min([j for j in cuts if j > i], default=same[-1] + 1)
        return [j for j in same if low < j < high]

    def _asked(self, sentence: list[int]) -> bool:
        """The sentence is a question (`Is it Northwind?`): it asserts nothing."""
        end = self.tokens[sentence[-1]].end
        rest = self.plain[end:end + 3].lstrip(" \"')»”")
        return rest.startswith("?")

    def bound(self, first: int, last: int) -> str:
        """The bound on the value at tokens `first`..`last` (`lower`, `upper`, `short`), or
        empty."""
        if not self.tokens[first].number:
            return ""
        part = self.tokens[first].part
        for words, kind in BOUNDS_BEFORE:
            n = len(words)
            at = first - n
            if at >= 0 and self.says(at, words) and \
                    self.tokens[at].part == part:
                if words == ("up", "to") and (
                        (at and self.keys[at - 1] in MOTION) or "from" in
                        [self.keys[j] for j in range(at) if self.tokens[j].part == part]):
                    continue  # `went up to`, `from 82.7 up to 85.1`: a change, not a bound
                return kind
        for words, kind in BOUNDS_AFTER:
            if self.says(last + 1, words) and \
                    self.tokens[last + 1].part == self.tokens[last].part:
                return kind
        return ""

    def rate(self, last: int) -> str:
        """What the value at token `last` is per (`25 euros per month` → month), or empty."""
        j, rates = last + 1, PERIODS
        if j < len(self.tokens) and self.keys[j] in ("per", "each", "every") and \
                j + 1 < len(self.tokens):
            j, rates = j + 1, RATES
        if j < len(self.tokens) and self.tokens[j].part == self.tokens[last].part:
            word = PERIODICALLY.get(self.keys[j], self.keys[j])
            return word if word in rates else ""
        return ""

    def qualifier(self, first: int, last: int, alt: Alternative) -> str:
        """How the occurrence at `first`..`last` falls short of stating the fact plainly:
        refused, bounded, owned (`Alice's assistant`, `the lawyer of Bob`), compound (`20-25`,
        `Alice-led`), unit (`25 euro cents`); empty when it does not."""
        if self.refused(first):
            return "refused"
        if self.tokens[first].number and self.plain[self.tokens[first].start - 1:
                                                      self.tokens[first].start] == "+":
            return "signed"  # `+15%`: a change, not the value
        bound = self.bound(first, last)
        if bound:
            return f"bounded:{bound}"
        t, key_ = self.tokens[last], alt.words[-1]
        if t.text not in PRONOUNS and self._owner_of_role(last):
            return "owned"
        if t.owner and t.text not in PRONOUNS and last + 1 < len(self.tokens) and \
                self.tokens[last + 1].part == t.part:
            return f"owner:{self.keys[last + 1]}"  # `Sarah's remote`: answer_match weighs it
        if first >= 2 and self.says(first - 2, ("behalf", "of")):
            return "owned"
        if first >= 2 and not self.tokens[first].number and \
                self.keys[first - 1] in ("of", "for") and \
                self.keys[first - 2] in ROLES:
            return "owned"
        if self._joined(first, last):
            return "compound"
        if key_ in UNITS and last + 1 < len(self.tokens) and \
                self.keys[last + 1] in SUBUNITS:
            return "unit"
        if t.kind == "time" and last + 1 < len(self.tokens) and self.keys[last + 1] == "pm":
            return "unit"  # 10:30 p.m. is 22:30
        return ""

    def _owner_of_role(self, last: int) -> bool:
        """The occurrence ending at `last` (or the name it begins: `Alice` of `Alice Martin's`)
        owns a role or a body that acts for it (`Alice's assistant`, `Bob Keller Trust's
        director`, `Priya's former deputy`)."""
        part = self.tokens[last].part
        near = [j for j in range(last, min(len(self.tokens), last + 3))
                if self.tokens[j].part == part]
        for j in near:
            if self.tokens[j].owner:
                after = [self.keys[k] for k in range(j + 1, min(len(self.tokens), j + 3))
                         if self.tokens[k].part == part]
                return any(word in ROLES for word in after)
        return False

    def _joined(self, first: int, last: int) -> bool:
        """A hyphen joins the occurrence to a word around it, or a number to a number
        (`Alice-led`, `20-25`; not `18-gigabyte`)."""
        start, end = self.tokens[first].start, self.tokens[last].end
        before = self.plain[max(0, start - 2):start]
        after = self.plain[end:end + 2]
        inner = self.plain[start:end]
        same = (lambda c, d: c.isdigit() == d.isdigit()) if inner else (lambda c, d: False)
        return (len(before) == 2 and before[1] == "-" and before[0].isalnum()
                and same(before[0], inner[0])) or (
            len(after) == 2 and after[0] == "-" and after[1].isalnum()
            and same(after[1], inner[-1]))

    def states(self, fact: Fact) -> list[Occurrence]:
        """The occurrences of any of the fact's alternatives that no negation reaches (what a
        `forbid` statement is held to: a hedge or a bound does not hide it), its words also
        found apart by up to `FORBID_GAP` words each that negate nothing, offer no other
        candidate (`or`) and are no value (`25 or 30 euros` does not say `25 euros`), in one
        clause part (`managers also sign off`, `managers can sign off` for `managers sign
        off`)."""
        found = [o for alt in alternatives(fact) for o in (*self.find(alt), *self._gapped(alt))]
        return [o for o in found if not o.negated and o.qualified != "refused"]

    def _gapped(self, alt: Alternative) -> list[Occurrence]:
        """The occurrences of a literal alternative of several words with words between
        (`states`)."""
        if alt.pattern is not None or len(alt.words) < 2:
            return []
        found = []
        for i, k in enumerate(self.keys):
            at = [i] if k == alt.words[0] else []
            for word in alt.words[1:]:
                if not at:
                    break
                ahead = range(at[-1] + 1, min(at[-1] + 2 + FORBID_GAP, len(self.keys)))
                nxt = next((j for j in ahead if self.keys[j] == word), None)
                gap = self.tokens[at[-1] + 1:nxt] if nxt is not None else []
                ok = nxt is not None and self.tokens[nxt].part == self.tokens[i].part and \
                    all(t.kind == "word" and not t.number and not closed_class(t) and
                        t.text not in NEGATIONS | OPENERS for t in gap)
                at = [*at, nxt] if ok and nxt is not None else []
            if len(at) == len(alt.words) and at[-1] - i >= len(at):
                found.append(Occurrence(first=i, last=at[-1], negated=self.negated(i) or
                                        self.denied_after(at[-1]), qualified=""))
        return found

    def plainly(self, fact: Fact) -> list[Occurrence]:
        """The occurrences that state the fact plainly: not negated, not qualified."""
        return [o for o in self.states(fact) if not o.qualified]


HEDGES = (("maybe",), ("perhaps",), ("possibly",), ("probably",), ("likely",), ("unlikely",),
          ("presumably",), ("supposedly",), ("allegedly",), ("reportedly",), ("seemingly",),
          ("apparently",), ("might",), ("i", "guess"), ("unsure",), ("uncertain",),
          ("i", "think"), ("i", "believe"), ("we", "think"), ("i", "suppose"), ("not", "sure"),
          ("not", "certain"), ("may", "be"), ("may", "have"), ("could", "be"),
          ("could", "have"), ("it", "seem"), ("seem", "to"), ("appear", "to"), ("or", "so"),
          ("if", "i", "recall"), ("as", "far", "as"), ("claim",), ("rumor",), ("rumour",),
          ("it", "appear"), ("expected", "to"), ("tentatively",), ("tentative",), ("pending",),
          ("then", "again"), ("my", "guess"), ("best", "guess"), ("would", "be", "my"),
          ("took", "over"), ("not", "answer"), ("before", "last"), ("before", "recent"),
          ("in", "old"), ("was", "considered"), ("were", "considered"), ("shortlisted",),
          ("when", "they"), ("when", "you"), ("depending", "on"), ("i", "suspect"),
          ("i", "assume"), ("chance", "are"), ("to", "my", "knowledge"), ("if", "memory"),
          ("i", "would", "say"), ("not", "100"), ("was", "proposed"), ("was", "suggested"),
          ("is", "rumored"), ("is", "believed"), ("is", "thought"), ("could", "well"),
          ("if",), ("unless",), ("assuming",), ("provided", "that"), ("used", "to"),
          ("originally",), ("previously",), ("formerly",), ("no", "longer"),
          ("as", "of", "last"))
# `I think the answer is clear: ...` hedges nothing it is followed by in another clause
OPENERS = frozenset({"or", "alternatively", "either"})


def hedges(folded: Folded) -> dict[int, str]:
    """The sentences (by number) that hedge, make conditional or date what they say, with
    the cue: ConText's uncertainty and historical triggers, scoped to their sentence (a
    sentence opening `Had …` or `Once …` is conditional; `until` before a date dates it)."""
    found: dict[int, str] = {}
    toks = folded.tokens
    for k, token in enumerate(toks):
        for cue in HEDGES:
            if folded.says(k, cue) and toks[min(len(toks), k + len(cue)) - 1].clause == \
                    token.clause:
                found.setdefault(token.clause, " ".join(cue))
        opens = k == 0 or toks[k - 1].clause != token.clause
        if (opens and token.text in ("had", "once", "should", "were")) or (
                token.text == "until" and k + 1 < len(toks) and (
                    closed_class(toks[k + 1]) or toks[k + 1].text in MONTH_NAMES)):
            found.setdefault(token.clause, token.text)
    return found


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


# the commonest function words of the other languages answers come in (German, French,
# Spanish, Italian, Dutch, Portuguese) that are no English word: one of them in a text that
# is not English, or more of them than of English's, and the text is in another language
FOREIGN = frozenset([
    "der", "das", "und", "ist", "nicht", "ein", "eine", "einen", "einem", "einer", "mit",
    "für", "von", "zu", "im", "auf", "bei", "den", "dem", "des", "sie", "er", "es", "wir",
    "sich", "auch", "noch", "nur", "wie", "aus", "über", "unter", "dann", "wenn", "weil", "oder",
    "sein", "seine", "seinem", "seinen", "ihr", "ihre", "ihren", "haben", "wird", "wurde",
    "waren", "kein", "keine", "bis", "zum", "zur", "vor", "nach", "je", "etwa", "sehr", "le",
    "la", "les", "une", "du", "et", "est", "pas", "ne", "que", "qui", "pour", "dans", "avec",
    "sur", "aux", "elle", "il", "ils", "sont", "été", "ce", "cette", "ses", "sa", "de",
    "un", "qu", "el", "los", "las", "es", "para", "por", "una", "del", "se", "su", "di",
    "che", "della", "het", "een", "van", "niet", "voor", "om",
    "não", "com", "uma", "os", "às"])


def other_language(folded: Folded) -> bool:
    """Whether a text is in another language than English, by its function words
    (`FOREIGN`): not a terse English fragment, table or list with few function words
    (`Windows ARM wheels first shipped in release 1.8.0.`), which `english` alone does not
    tell apart."""
    plain = re.sub(r"\w+(?:-\w+)+", " ", prose(clean(folded.text)))  # `Mary-le-Bow`
    words = [w for w in re.findall(r"[^\W\d_]+", plain.lower()) if w not in FILLERS]
    theirs = sum(w in FOREIGN for w in words)
    ours = sum(w in ENGLISH for w in words)
    return (theirs >= 1 and not english(folded)) or (theirs >= 2 and theirs > ours)


def english(folded: Folded) -> bool:
    """Whether a text reads as English: at least `ENGLISH_SHARE` of its words (as written,
    articles included) are common English function words (a text of fewer than 5 words is
    taken as English)."""
    words = [w for w in re.findall(r"[^\W\d_]+", light(prose(clean(folded.text))))
             if w not in FILLERS]
    return len(words) < 5 or sum(w in ENGLISH for w in words) / len(words) >= ENGLISH_SHARE


_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
_NOT_PROSE = re.compile(r"\]\([^)]*\)|(?:https?://|www\.)\S+|\S+@\S+|\S*[/\\_=<>#|*{}~]\S*"
                        r"|\S+\.(?:com|org|net|io|dev|py|js|md|json|toml|yaml|txt)\b")


def prose(text: str) -> str:
    """`text` without what is not prose in any language: code (fenced or inline), Markdown
    link targets and markup, URLs, e-mail addresses, paths and identifiers."""
    return _NOT_PROSE.sub(" ", _CODE.sub(" ", text))


def numbers_in(texts: Iterable[str]) -> set[str]:
    return {t.text for text in texts for t in tokens(text) if t.number}


def closed_class(token: Token) -> str | None:
    """The class of a token a competing candidate would share: number, weekday, month, e-mail
    address or URL."""
    if token.kind in ("email", "url"):
        return token.kind
    if token.number:
        return "number"
    if token.text in WEEKDAYS:
        return "weekday"
    if token.text in MONTHS:
        return "month"
    return None


def words_of(texts: Sequence[str]) -> set[str]:
    return {key(t) for text in texts for t in tokens(text)}
