"""Secrets kept out of every output: sealed answers and credentials.

A run holds two kinds of secret that outputs must never show: the sealed expected answers it
opened with RAGATE_SEAL_KEY, and the credentials it talks to a judge or a server with. Texts
that come back from a judge or a system (a judge failure's excerpt of a model's reply, an
error message, an answer) may carry either, so every such text is passed through a
`Redactor` before it is kept. What is replaced, and with what:

- a sealed text (each gist and note of a sealed goldset opened in this process) → `[sealed]`,
  matched word for word whatever the case, and whatever whitespace, punctuation or escapes lie
  between the words (an echo may re-case it, wrap it or JSON-escape it); a text cut short with
  "…" that ends in the first words of a sealed text (the start of the last word is enough)
  loses that end too;
- the user and password of a URL (`scheme://user:password@host`) → `scheme://***@host`;
- the value of a credential-looking parameter (`api_key`, `token`, `password`, `secret`,
  `signature`, … as `?name=value`, `name=value` or `"name": "value"`) → `***`;
- a `Bearer` token, what follows `Authorization:`, and an OpenAI-style key (`sk-` and 16 or
  more letters, digits, `-` or `_`) → `***`;
- a credential value known to the process → `***` wherever it appears: the keys ragate and
  the judge's OpenAI client read from the environment (`CREDENTIAL_ENV`, RAGATE_RESULTS_KEY
  among them; the header values of OPENAI_CUSTOM_HEADERS, the password and credential
  parameters of OPENAI_BASE_URL), those of a configured URL, and what the rules above would
  mask in a configured text (a model named `gpt-x-sk-…`); values shorter than `MIN_KNOWN`
  characters are left to the rules above (replacing "abc" everywhere would break digests and
  numbers).

Every text kept is also one every output can write (`visible`): a lone surrogate (half of
an emoji's UTF-16 pair, "2 euros \\ud83d"), which UTF-8, JSON and XML cannot hold, becomes
U+FFFD, visibly, and is counted where the text enters (answer.py, a row: `unencodable`).

Imports nothing of the package and nothing heavy: every part may use it.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from urllib.parse import parse_qsl, unquote, urlsplit

SEALED = "[sealed]"
CUT = "…"  # where an excerpt was cut short
MASK = "***"
MIN_KNOWN = 6  # characters: a shorter known value is only masked by the rules
# a Redactor remembers what it made of this many short texts (labels, ids, statuses, knobs:
# every row repeats them), each of at most MEMO_CHARS characters
MEMO_TEXTS = 4096
MEMO_CHARS = 256
# the keys ragate reads, and those the judge's OpenAI client reads by itself
CREDENTIAL_ENV = ("RAGATE_JUDGE_API_KEY", "OPENAI_API_KEY", "RAGATE_SEAL_KEY",
                  "RAGATE_RESULTS_KEY", "OPENAI_ADMIN_KEY", "OPENAI_WEBHOOK_SECRET")
HEADERS_ENV = "OPENAI_CUSTOM_HEADERS"  # `Name: value` lines the OpenAI client sends
URL_ENV = "OPENAI_BASE_URL"
_NAMES = (r"(?:api[_-]?key|apikey|x-api-key|access[_-]?token|auth[_-]?token|refresh[_-]?token|"
          r"id[_-]?token|session[_-]?token|private[_-]?token|token|client[_-]?secret|secret|"
          r"password|passwd|pwd|passphrase|credentials?|sig|signature|key)")
_VALUE = r"[^&#\s'\",;)]+?(?=:?(?:[&#\s'\",;)]|$))"  # a trailing ":" is the message's
_URL_RULES = (
    (re.compile(r"(\b[a-z][a-z0-9+.-]*://)[^/\s@?#'\"]+@", re.I), rf"\1{MASK}@"),
    (re.compile(rf"([?&;]{_NAMES}=){_VALUE}", re.I), rf"\1{MASK}"),
)
_RULES = (
    *_URL_RULES,
    (re.compile(rf"((?<![\w-]){_NAMES}\s*=\s*){_VALUE}", re.I), rf"\1{MASK}"),
    (re.compile(rf"(['\"]{_NAMES}['\"]\s*:\s*['\"])[^'\"]*", re.I), rf"\1{MASK}"),
    # a token has a digit or a sign in it: "the Bearer of bad news" keeps its words
    (re.compile(r"(\bBearer\s+)(?=[\w.~+/=-]*[\d._~+/=-])[\w.~+/=-]{8,}"), rf"\1{MASK}"),
    (re.compile(r"(\bAuthorization\s*:\s*)(?:(?:Bearer|Basic|Token|Digest)\s+)?[^\s'\",;)]+",
                re.I), rf"\1{MASK}"),
    (re.compile(r"\bsk-[\w-]{16,}"), MASK),  # an OpenAI-style key, named or not
)
_WORD = re.compile(r"\w+")
_ESCAPE = re.compile(r"\\[nrt]")  # "\n" in an escaped text separates words as a newline does


REPLACEMENT = "\ufffd"  # what an unencodable character is shown as
_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("([\ud800-\udbff])([\udc00-\udfff])")


def visible(text: str) -> tuple[str, int]:
    """`text` as every output can write it (UTF-8, JSON, XML), and how many characters were
    replaced: a surrogate pair left as two halves is joined into its character; each lone
    surrogate (the only code points UTF-8 cannot encode) becomes U+FFFD."""
    if _SURROGATE.search(text) is None:  # nearly every text
        return text, 0
    text = _PAIR.sub(lambda m: chr(0x10000 + ((ord(m[1]) - 0xD800) << 10)
                                   + ord(m[2]) - 0xDC00), text)
    return _SURROGATE.subn(REPLACEMENT, text)


def _apply(rules: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str:
    if not any(mark in text for mark in ("=", ":", "Bearer", "sk-")):  # most texts: no rule
        return text
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def redact_url_credentials(text: str) -> str:
    """`text` with the userinfo and credential query parameters of every URL in it masked:
    what a URL may show (a judge's address in a message), and what a cache key may hold."""
    return _apply(_URL_RULES, text)


def redact_credentials(text: str) -> str:
    """`text` with URL userinfo, credential parameters and tokens masked (the rules alone)."""
    return _apply(_RULES, text)


def url_credentials(url: str) -> list[str]:
    """The password and the credential parameters' values a URL carries."""
    try:
        parts = urlsplit(url)
        found = [parts.password or ""]
    except ValueError:
        return []
    found += [value for name, value in parse_qsl(parts.query)
              if re.fullmatch(_NAMES, name, re.I)]
    found += [unquote(value) for value in found]  # as written, and as sent
    return [value for value in found if value]


def credentials_in(text: str) -> list[str]:
    """What the rules would mask in `text`: the credential-shaped values it holds."""
    found = []
    for pattern, _ in _RULES:
        for match in pattern.finditer(text):
            kept = len(match.group(1)) if pattern.groups else 0  # the rule keeps its name
            found.append(match.group()[kept:].rstrip("@"))
    return found


def known_credentials(env: Mapping[str, str] | None = None,
                      urls: Iterable[str | None] = (),
                      texts: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The credential values this process holds: keys in its environment, those in the
    URLs it was configured with, and the credential-shaped parts of its configured `texts`
    (the judge's model)."""
    env = os.environ if env is None else env
    values = [env.get(name, "") for name in CREDENTIAL_ENV]
    values += [line.partition(":")[2].strip() for line in env.get(HEADERS_ENV, "").splitlines()]
    values += [value for url in (*urls, env.get(URL_ENV)) if url
               for value in url_credentials(url)]
    values += [value for text in texts if text for value in credentials_in(text)]
    return tuple(dict.fromkeys(v for v in values if len(v) >= MIN_KNOWN))


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.casefold() for word in _WORD.findall(_ESCAPE.sub("  ", text)))


class Redactor:
    """Masks credentials and sealed texts in a text (see the module's docstring).

    Sealed texts are found by their words, indexed by their first two (one, for a one-word
    text), so a text is searched in one pass whatever the number of sealed answers; before a
    cut, by their first word (and its start, for the last word alone).
    """

    def __init__(self, sealed: Iterable[str] = (), known: Iterable[str] = ()) -> None:
        self.sealed = tuple(dict.fromkeys(sealed))
        self.known = tuple(dict.fromkeys(known))
        self._heads: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
        self._firsts: dict[str, list[tuple[str, ...]]] = {}
        for words in filter(None, map(_words, self.sealed)):
            self._heads.setdefault(words[:2], []).append(words)
            self._firsts.setdefault(words[0], []).append(words)
        self._sorted_firsts = sorted(self._firsts)
        self._longest = max((len(w) for found in self._heads.values() for w in found),
                            default=0)
        ordered = sorted(self.known, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._memo: dict[str, str] = {}  # text -> masked, short texts only (MEMO_TEXTS)

    def __call__(self, text: str) -> str:
        done = self._memo.get(text)
        if done is not None:
            return done
        masked = self._mask(text)
        if len(text) <= MEMO_CHARS:
            if len(self._memo) >= MEMO_TEXTS:
                self._memo.clear()
            self._memo[text] = masked
        return masked

    def _mask(self, text: str) -> str:
        text = visible(text)[0]
        if self._known is not None:
            text = self._known.sub(MASK, text)
        text = redact_credentials(text)
        return self._without_sealed(text) if self._heads else text

    def _without_sealed(self, text: str) -> str:
        """Each run of words that spells a sealed text; before a cut ("…"), also a run that
        starts one."""
        pieces = text.split(CUT)
        return CUT.join(self._piece(piece, cut=k < len(pieces) - 1)
                        for k, piece in enumerate(pieces))

    def _piece(self, text: str, cut: bool) -> str:
        found = list(_WORD.finditer(_ESCAPE.sub("  ", text) if "\\" in text else text))
        words = tuple(m.group().casefold() for m in found)
        hits: list[tuple[int, int]] = []
        i = 0
        while i < len(words):
            n = self._whole(words, i) if words[i] in self._firsts else 0
            if not n and cut and len(words) - i <= self._longest:
                n = self._cut_start(words, i)
            if n:
                hits.append((found[i].start(), found[i + n - 1].end()))
            i += n or 1
        for start, end in reversed(hits):
            text = text[:start] + SEALED + text[end:]
        return text

    def _whole(self, words: tuple[str, ...], i: int) -> int:
        """The length of the longest sealed text spelt by the words from `i` on, or 0."""
        found = [*self._heads.get(words[i:i + 2], ()), *self._heads.get(words[i:i + 1], ())]
        return max((len(s) for s in found if words[i:i + len(s)] == s), default=0)

    def _cut_start(self, words: tuple[str, ...], i: int) -> int:
        """The words from `i` to the cut, when they start a sealed text (the last of them
        possibly cut inside; alone, at least 3 letters of it), else 0."""
        left = len(words) - i
        if left == 1:
            at = bisect_left(self._sorted_firsts, words[i])
            return int(len(words[i]) >= 3 and at < len(self._sorted_firsts)
                       and self._sorted_firsts[at].startswith(words[i]))
        found = self._heads.get(words[i:i + 2], ()) if left > 2 else self._firsts.get(words[i], ())
        return left if any(len(s) >= left and words[i:-1] == s[:left - 1]
                           and s[left - 1].startswith(words[-1]) for s in found) else 0
