"""Sealed expected answers: the sealed file, `verify` (no key) and opening it with the key.

Whoever tunes retrieval must not read the gists and evidence that score it, yet pytest must still
collect the goldset, pair ids and check the mix without the key. So each expected answer is
encrypted on its own (AES-256-GCM under a key derived from the passphrase with scrypt), next to
what collection needs in the clear: its question id and whether it has evidence (must abstain).

The sealed file is `expected.sealed.json` in the goldset directory (or the `questions.expected`
setting when that names a `*.sealed.json` file). It keeps the plaintext's layout, so `unseal`
restores the original file or folder byte for byte.

Two levels of checking:
- `verify_goldset` needs no key. Each answer carries a SHA-256 digest over its clear fields and
  its nonce and ciphertext, and the file a digest over its header and every answer digest. That
  catches any edit made without recomputing them (a hand edit, a merge, a truncated file), but
  the digests are unkeyed: someone who edits an answer *and* recomputes them passes `verify`,
  unless the manifest digest is pinned somewhere they cannot write (`pin=`).
- With the key (`unseal_goldset`, `open_sealed_keyed`) every answer is authenticated by GCM, its
  question id, has-evidence flag, position and the layout bound as associated data: no edit,
  deliberate or not, survives unless made by someone holding the passphrase.

Writing the sealed file (`ragate seal`, `unseal`) is `sealing.py`: it loads the goldset to
validate it first, while collection reads sealed answers through this module.

Messages and errors name files and question ids only, never a gist or evidence.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.config import (
    Expected,
    ExpectedRow,
    GoldsetConfig,
    read_config,
)
from pytest_ragate.problems import GoldsetError, Problem, problems_from_validation

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SEALED_NAME = "expected.sealed.json"
SEALED_SUFFIX = ".sealed.json"
KEY_ENV = "RAGATE_SEAL_KEY"
FORMAT = "ragate-sealed-expected"
VERSION = 1
CIPHER = "AES-256-GCM"
PAD_BLOCK = 256  # ciphertext sizes say no more than this about a gist's length or span count



class SealError(Exception):
    """Sealing, unsealing or opening failed; the message names files and ids, never answers.

    `path` is the file at fault (also the start of `str(error)`), `message` the rest, and
    `question_ids` the answers found altered, so a loader can turn it into its own Problem.
    """

    def __init__(self, message: str, *, path: Path | None = None,
                 question_ids: tuple[str, ...] = ()) -> None:
        self.message = message
        self.path = path
        self.question_ids = question_ids
        super().__init__(message if path is None else f"{path}: {message}")


def error_at(path: Path, message: str, question_ids: tuple[str, ...] = ()) -> SealError:
    return SealError(message, path=path, question_ids=question_ids)


# --- the sealed file ----------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Scrypt(_Model):
    """scrypt cost. Default: OWASP's N=2^15, r=8, p=3 (32 MiB, ~0.6 s); tests pass a cheap one.

    The bounds keep a doctored file from asking for gigabytes of memory.
    """

    name: Literal["scrypt"] = "scrypt"
    log2_n: Annotated[int, Field(ge=10, le=20)] = 15
    r: Annotated[int, Field(ge=1, le=16)] = 8
    p: Annotated[int, Field(ge=1, le=16)] = 3
    salt: str = ""  # base64, 16 random bytes, set when sealing

    def derive(self, passphrase: str) -> bytes:
        """64 bytes: the AES key, then the key-check half."""
        n = 2 ** self.log2_n
        return hashlib.scrypt(passphrase.encode("utf-8"), salt=_unb64(self.salt), n=n, r=self.r,
                              p=self.p, dklen=64, maxmem=128 * self.r * n * 2 + (1 << 20))


class Layout(_Model):
    """Where the plaintext lived, relative to the goldset directory (POSIX separators)."""

    kind: Literal["jsonl", "folder"]
    path: Annotated[str, Field(min_length=1)]


class SealedAnswer(_Model):
    question_id: Annotated[str, Field(min_length=1)]
    has_evidence: bool  # public: collection checks kind pairing and must-abstain without the key
    nonce: str  # base64, 12 bytes
    ciphertext: str  # base64, AES-GCM output with its 16-byte tag
    digest: str  # sha256 hex over the fields above: `verify` checks it, no key


class SealedFile(_Model):
    format: Literal["ragate-sealed-expected"] = FORMAT
    version: Literal[1] = VERSION
    cipher: Literal["AES-256-GCM"] = CIPHER
    kdf: Scrypt
    key_check: str  # sha256 hex of the derived check half: tells a wrong key from an edit
    layout: Layout
    answers: list[SealedAnswer]
    manifest_digest: str  # sha256 hex over the header and every answer digest


# --- digests, encoding, padding -----------------------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sha256(value: object) -> str:
    return hashlib.sha256(_canonical(value)).hexdigest()


def answer_digest(question_id: str, has_evidence: bool, nonce: str, ciphertext: str) -> str:
    """What `verify` recomputes for one answer: binds its ciphertext to its id and flag."""
    return _sha256(["ragate-sealed-answer/1", question_id, has_evidence, nonce, ciphertext])


def manifest_digest(sealed: SealedFile) -> str:
    """Binds the header, the order and the count of answers: the value to pin in CI."""
    return _sha256(["ragate-sealed-manifest/1", sealed.format, sealed.version, sealed.cipher,
                    sealed.kdf.model_dump(), sealed.key_check, sealed.layout.model_dump(),
                    [a.digest for a in sealed.answers]])


def associated_data(layout: Layout, index: int, count: int, question_id: str,
                    has_evidence: bool) -> bytes:
    """GCM associated data: an answer cannot be moved, relabelled or flipped, even by rewriting
    the digests, without the key."""
    return _canonical([FORMAT, VERSION, layout.kind, layout.path, index, count, question_id,
                       has_evidence])


def key_check(check_half: bytes) -> str:
    return hashlib.sha256(b"ragate-seal key check\x00" + check_half).hexdigest()


def pad(data: bytes) -> bytes:
    """ISO/IEC 7816-4: 0x80 then zeros up to a multiple of PAD_BLOCK."""
    padded = data + b"\x80"
    return padded + b"\x00" * (-len(padded) % PAD_BLOCK)


def _unpad(data: bytes) -> bytes:
    body = data.rstrip(b"\x00")
    if not body.endswith(b"\x80"):
        raise ValueError("bad padding")
    return body[:-1]


def aesgcm(key: bytes) -> AESGCM:
    """Imported late: collecting or verifying a sealed goldset never needs `cryptography`."""
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError as error:  # pragma: no cover - depends on the install
        raise SealError("sealing needs the 'cryptography' package: pip install cryptography"
                        ) from error
    return AESGCM(key)


# --- locating -----------------------------------------------------------------------------


def key_from_env(env: Mapping[str, str] | None = None) -> str:
    """The passphrase from RAGATE_SEAL_KEY, or a SealError saying how to give one."""
    key = (os.environ if env is None else env).get(KEY_ENV, "")
    if not key:
        raise SealError(f"{KEY_ENV} is not set: put the goldset's passphrase in it "
                        "(any text; the same one seals and unseals)")
    return key


def config_file(root: Path) -> Path:
    config_path = root / CONFIG_NAME if root.is_dir() else root
    if not config_path.is_file():
        raise error_at(config_path, f"no {CONFIG_NAME} here, not a goldset directory")
    return config_path


def goldset_config(root: Path) -> GoldsetConfig:
    try:
        return read_config(config_file(root))
    except GoldsetError as error:
        raise SealError(str(error)) from None


def expected_setting(root: Path) -> tuple[Path, str]:
    """(goldset directory, its `questions.expected` setting)."""
    return config_file(root).parent, goldset_config(root).questions.expected


def locate_sealed(root: Path, expected: str) -> Path:
    """Where a goldset's sealed file is (or would be): the `expected` setting itself when it
    names a `*.sealed.json`, else `expected.sealed.json` beside `ragate.toml`."""
    return root / expected if expected.endswith(SEALED_SUFFIX) else root / SEALED_NAME


def sealed_path(root: Path) -> Path:
    """The sealed file of the goldset at `root` (a directory or its ragate.toml)."""
    directory, expected = expected_setting(root)
    return locate_sealed(directory, expected)


def read_sealed(path: Path) -> SealedFile:
    """Parse a sealed file (no key), or a SealError naming it."""
    try:
        return SealedFile.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise error_at(path, "not sealed (no such file)") from None
    except ValidationError as error:
        detail = "; ".join(f"{p.field}: {p.message}"
                           for p in problems_from_validation(error, path)[:3])
        raise error_at(path, f"not a readable sealed file ({detail})") from None


def safe_relative(text: str) -> PurePosixPath | None:
    rel = PurePosixPath(text)
    if rel.is_absolute() or not rel.parts or any(p in ("", ".", "..") for p in rel.parts) \
            or "\\" in text:
        return None
    return rel


def plaintext_path(root: Path, layout: Layout) -> Path:
    rel = safe_relative(layout.path)
    if rel is None:
        raise SealError(f"layout.path {layout.path!r} is not a path inside the goldset")
    return root.joinpath(*rel.parts)


def _safe_file_name(question_id: str) -> bool:
    return (question_id not in (".", "..") and "/" not in question_id
            and "\\" not in question_id and "\x00" not in question_id)


# --- verifying (no key) -------------------------------------------------------------------


def verify_sealed(path: Path, sealed: SealedFile, pin: str | None = None) -> list[Problem]:
    """Digest checks of a parsed sealed file: each answer, then the manifest."""
    problems: list[Problem] = []
    seen: set[str] = set()
    if safe_relative(sealed.layout.path) is None:
        problems.append(Problem(path, "layout.path", f"{sealed.layout.path!r} is not a path "
                                "inside the goldset"))
    for i, answer in enumerate(sealed.answers):
        qid = answer.question_id
        if qid in seen:
            problems.append(Problem(path, f"answers[{i}].question_id", "duplicate sealed answer",
                                    question_id=qid))
        seen.add(qid)
        if sealed.layout.kind == "folder" and not _safe_file_name(qid):
            problems.append(Problem(path, f"answers[{i}].question_id",
                                    "not usable as a file name", question_id=qid))
        digest = answer_digest(qid, answer.has_evidence, answer.nonce, answer.ciphertext)
        if digest != answer.digest:
            problems.append(Problem(path, f"answers[{i}]", "sealed answer was edited (its "
                                    "digest does not match); restore it from version control",
                                    question_id=qid))
    if manifest_digest(sealed) != sealed.manifest_digest:
        problems.append(Problem(path, "manifest_digest", "the sealed file's header or its list "
                                "of answers was edited (manifest digest does not match)"))
    elif pin is not None and pin != sealed.manifest_digest:
        problems.append(Problem(path, "manifest_digest", f"is {sealed.manifest_digest}, the "
                                f"pinned value is {pin}: the sealed answers were replaced"))
    return problems


def verify_goldset(root: Path, pin: str | None = None) -> list[Problem]:
    """Everything checkable without the key; an empty list means the seal holds.

    Detects edits made without recomputing the digests, plaintext answers left readable beside
    the sealed file, and (with `pin`, a manifest digest kept outside the repo's reach) a sealed
    file replaced wholesale. Only `unseal`/`open_sealed_keyed` with the key detect a forged digest.
    """
    try:
        directory, expected = expected_setting(root)
    except SealError as error:
        return [Problem(root, "<goldset>", str(error))]
    path = locate_sealed(directory, expected)
    if not path.is_file():
        return [Problem(path, "<file>", "not sealed: no sealed expected answers here "
                        "(run `ragate seal`)")]
    try:
        sealed = read_sealed(path)
    except SealError as error:
        return [Problem(path, "<file>", error.message)]
    problems = verify_sealed(path, sealed, pin)
    if not problems:
        plain = plaintext_path(directory, sealed.layout)
        if plain.exists():
            problems.append(Problem(plain, "<file>", "plaintext expected answers are still here "
                                    "beside the sealed file, gists and evidence readable: "
                                    "delete them, or run `ragate seal --unseal` to restore"))
    return problems


def sealed_index(root: Path) -> dict[str, bool]:
    """question_id -> has_evidence, without the key: enough to pair ids, check the mix and
    the kind rules, and know which questions must abstain."""
    return {a.question_id: a.has_evidence for a in read_sealed(sealed_path(root)).answers}


# --- opening (with the key) ---------------------------------------------------------------


DIGEST_INFO = b"ragate answer digests/1"


def digest_key(derived: bytes) -> bytes:
    """The key of a sealed goldset's answer digests (answer.py `keyed_digest`): a sub-key of
    the scrypt output (`Scrypt.derive`), HMAC-SHA256(derived, DIGEST_INFO) as HKDF-Expand
    makes one block of it, so neither the passphrase nor the AES key is ever used for it."""
    return hmac.new(derived, DIGEST_INFO, hashlib.sha256).digest()


def decrypt_keyed(path: Path, sealed: SealedFile, key: str) -> tuple[list[bytes], bytes]:
    """Every answer's plaintext and the answer digests' key (`digest_key`), or a SealError:
    digests first (naming edited ids), then the key check (wrong key), then GCM (edits whose
    digests were forged)."""
    problems = verify_sealed(path, sealed)
    if problems:
        edited = tuple(dict.fromkeys(p.question_id for p in problems if p.question_id))
        raise error_at(path, "the sealed file was edited: " + "; ".join(
            (f"[{p.question_id}] " if p.question_id else "") + f"{p.field}: {p.message}"
            for p in problems), edited)
    if not key:
        raise SealError(f"{KEY_ENV} is not set: the passphrase is needed to open {path}")
    try:
        derived = sealed.kdf.derive(key)
    except (ValueError, MemoryError) as error:
        raise error_at(path, f"unusable kdf parameters ({error})") from None
    if not secrets.compare_digest(key_check(derived[32:]), sealed.key_check):
        raise error_at(path, f"wrong key: {KEY_ENV} is not the passphrase these answers were "
                  "sealed with")
    from cryptography.exceptions import InvalidTag

    cipher = aesgcm(derived[:32])
    count = len(sealed.answers)
    plaintexts: list[bytes] = []
    tampered: list[str] = []
    for index, answer in enumerate(sealed.answers):
        aad = associated_data(sealed.layout, index, count, answer.question_id, answer.has_evidence)
        try:
            plaintexts.append(_unpad(cipher.decrypt(_unb64(answer.nonce),
                                                    _unb64(answer.ciphertext), aad)))
        except (InvalidTag, ValueError):
            tampered.append(answer.question_id)
    if tampered:
        raise error_at(path, "sealed answers failed authentication, altered after sealing: "
                  f"{', '.join(tampered)}; restore the file from version control",
                  tuple(tampered))
    return plaintexts, digest_key(derived)


def decrypted_records(path: Path, sealed: SealedFile, plaintexts: list[bytes],
             ) -> tuple[list[ExpectedRow], list[Problem]]:
    rows: list[ExpectedRow] = []
    problems: list[Problem] = []
    for answer, raw in zip(sealed.answers, plaintexts, strict=True):
        qid = answer.question_id
        try:
            exp = Expected.model_validate_json(raw.strip())
        except ValidationError as error:  # the fields only: a value would quote the answer
            problems.extend(replace(p, message="does not validate (not shown: it is sealed)")
                            for p in problems_from_validation(error, path, question_id=qid))
            continue
        if exp.question_id != qid:
            problems.append(Problem(path, "question_id", f"sealed as {qid!r} but the answer "
                                    f"inside says {exp.question_id!r}", question_id=qid))
        elif bool(exp.evidence) != answer.has_evidence:
            problems.append(Problem(path, "has_evidence", "does not match the sealed answer",
                                    question_id=qid))
        rows.append((path, None, exp))
    return rows, problems


def open_sealed_keyed(root: Path, key: str,
                      ) -> tuple[list[ExpectedRow], list[Problem], bytes]:
    """The expected answers, decrypted in memory, in `read_expected`'s shape: rows of
    (sealed file, None, Expected), the problems found, and the key of the goldset's answer
    digests (`digest_key`). Raises SealError on a wrong key or an altered answer (naming its
    question id)."""
    path = sealed_path(root)
    sealed = read_sealed(path)
    plaintexts, digests = decrypt_keyed(path, sealed, key)
    return (*decrypted_records(path, sealed, plaintexts), digests)


