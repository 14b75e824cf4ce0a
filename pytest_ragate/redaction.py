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
- a `Bearer` token, and what follows `Authorization:` → `***`;
- a credential value known to the process (RAGATE_JUDGE_API_KEY, OPENAI_API_KEY,
  RAGATE_SEAL_KEY, and the password and credential parameters of a configured URL) → `***`
  wherever it appears; values shorter than `MIN_KNOWN` characters are left to the rules above
  (replacing "abc" everywhere would break digests and numbers).

Imports nothing of the package and nothing heavy: every part may use it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from urllib.parse import parse_qsl, unquote, urlsplit

SEALED = "[sealed]"
CUT = "…"  # where an excerpt was cut short
MASK = "***"
MIN_KNOWN = 6  # characters: a shorter known value is only masked by the rules
CREDENTIAL_ENV = ("RAGATE_JUDGE_API_KEY", "OPENAI_API_KEY", "RAGATE_SEAL_KEY")
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
)
_WORD = re.compile(r"(?:(?<=\\[nrt])|(?<!\\))\w+")  # "\n" in an escaped text separates words


def redact_url_credentials(text: str) -> str:
    """`text` with the userinfo and credential query parameters of every URL in it masked:
    what a URL may show (a judge's address in a message), and what a cache key may hold."""
    for pattern, replacement in _URL_RULES:
        text = pattern.sub(replacement, text)
    return text


def redact_credentials(text: str) -> str:
    """`text` with URL userinfo, credential parameters and tokens masked (the rules alone)."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


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


def known_credentials(env: Mapping[str, str] | None = None,
                      urls: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The credential values this process holds: keys in its environment, and those in the
    URLs it was configured with."""
    env = os.environ if env is None else env
    values = [env.get(name, "") for name in CREDENTIAL_ENV]
    values += [value for url in urls if url for value in url_credentials(url)]
    return tuple(dict.fromkeys(v for v in values if len(v) >= MIN_KNOWN))


def _words(text: str) -> tuple[str, ...]:
    return tuple(word.casefold() for word in _WORD.findall(text))


@dataclass(frozen=True)
class Redactor:
    """Masks credentials and sealed texts in a text (see the module's docstring)."""

    sealed: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    _index: dict[str, list[tuple[str, ...]]] = field(default_factory=dict, init=False,
                                                      repr=False, compare=False)

    def __post_init__(self) -> None:
        for text in self.sealed:
            words = _words(text)
            if words:
                self._index.setdefault(words[0], []).append(words)

    @cached_property
    def _known(self) -> re.Pattern[str] | None:
        if not self.known:
            return None
        ordered = sorted(self.known, key=len, reverse=True)
        return re.compile("|".join(re.escape(value) for value in ordered))

    def __call__(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub(MASK, text)
        text = redact_credentials(text)
        return self._without_sealed(text) if self._index else text

    def _without_sealed(self, text: str) -> str:
        """Each run of words that spells a sealed text; before a cut ("…"), also a run that
        starts one."""
        pieces = text.split(CUT)
        return CUT.join(self._piece(piece, cut=k < len(pieces) - 1)
                        for k, piece in enumerate(pieces))

    def _piece(self, text: str, cut: bool) -> str:
        spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        words = [text[a:b].casefold() for a, b in spans]
        hits: list[tuple[int, int]] = []
        i = 0
        while i < len(words):
            n = self._match(words, i, cut)
            if n:
                hits.append((spans[i][0], spans[i + n - 1][1]))
            i += n or 1
        for start, end in reversed(hits):
            text = text[:start] + SEALED + text[end:]
        return text

    def _match(self, words: list[str], i: int, cut: bool) -> int:
        """How many words from `i` on spell a sealed text (or its start, up to a cut)."""
        best = 0
        left = len(words) - i
        for sealed in self._index.get(words[i], ()):
            n = len(sealed)
            if tuple(words[i:i + n]) == sealed:
                best = max(best, n)
            elif cut and left < n and tuple(words[i:-1]) == sealed[:left - 1] \
                    and sealed[left - 1].startswith(words[-1]):
                best = max(best, left)
        if cut and not best and left == 1 and len(words[i]) >= 3:  # cut inside its first word
            best = int(any(s[0].startswith(words[i]) for found in self._index.values()
                           for s in found))
        return best


NO_SECRETS = Redactor()
