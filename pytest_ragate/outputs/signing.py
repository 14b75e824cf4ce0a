"""The keyed signature of a saved run (HMAC-SHA256, RFC 2104 / FIPS 198-1): tamper evidence
for results files and history lines, where a key is given.

A results file's trailer counts and digests the lines before it: that is a completeness
check (a file cut short, or a line lost, is seen), not a tamper check, since anyone who edits
a row can recompute the sha256. With `RAGATE_RESULTS_KEY` set (any text; as
`RAGATE_SEAL_KEY` holds the sealing passphrase), every results file and history line a run
writes carries an HMAC-SHA256 under that key, and every reader of a saved run
(`saved_runs.py`) refuses, while the key is set, a file or line that is unsigned or whose
signature is not the key's. Without the key nothing is signed or checked.

Standard library only: the writers (`results.py`, `history.py`) and the reader import it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping

KEY_ENV = "RAGATE_RESULTS_KEY"
# a signed history line: the line's JSON object with the signature of the rest as its last
# member (what `sign_line` appends, exactly)
_SIGNED_LINE = re.compile(r',"signature":"([0-9a-f]{64})"\}$')


def results_key(env: Mapping[str, str] | None = None) -> bytes | None:
    """The signing key from RAGATE_RESULTS_KEY, or None when it is unset or empty."""
    key = (os.environ if env is None else env).get(KEY_ENV, "")
    return key.encode("utf-8") if key else None


def signature(key: bytes, text: str) -> str:
    """The hex HMAC-SHA256 of `text` (UTF-8) under `key`."""
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def signed_by(key: bytes, text: str, claimed: str) -> bool:
    """Whether `claimed` is `text`'s signature under `key` (compared in constant time)."""
    return hmac.compare_digest(signature(key, text), claimed)


def sign_line(key: bytes, text: str) -> str:
    """A compact JSON object's line with its signature appended as its last member."""
    return f'{text[:-1]},"signature":"{signature(key, text)}"}}'


def split_signed_line(text: str) -> tuple[str, str | None]:
    """A line as it was signed (the signature member taken off), and the signature it
    claims; (the line, None) when it has none."""
    found = _SIGNED_LINE.search(text)
    if found is None:
        return text, None
    return text[:found.start()] + "}", found.group(1)


def unsigned(what: str) -> str:
    """Why an unsigned file or line is refused while the key is set."""
    return (f"{what} is not signed, and {KEY_ENV} is set: it was written without the key "
            "(or its signature was removed); write it again with the key set")


def wrongly_signed(what: str) -> str:
    """Why a file or line whose signature is not the key's is refused."""
    return (f"{what}'s signature is not {KEY_ENV}'s: it was changed after it was written "
            "(its digest recomputed), or signed with another key")
