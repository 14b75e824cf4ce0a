"""Sealed expected answers (CONTRACT §5): `ragate seal`, `unseal` and `verify` on a goldset.

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
- With the key (`unseal_goldset`, `open_sealed`) every answer is authenticated by GCM, its
  question id, has-evidence flag, position and the layout bound as associated data: no edit,
  deliberate or not, survives unless made by someone holding the passphrase.

Messages and errors name files and question ids only, never a gist or evidence.
"""

from __future__ import annotations

import base64
import glob
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_ragate.files import write_atomic
from pytest_ragate.goldset import (
    CONFIG_NAME,
    Expected,
    GoldsetConfig,
    _read_config,
    _read_expected,
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

ExpectedRow = tuple[Path, int | None, Expected]


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


def _at(path: Path, message: str, question_ids: tuple[str, ...] = ()) -> SealError:
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


@dataclass(frozen=True)
class SealReport:
    sealed: Path
    removed: Path
    answers: int
    manifest_digest: str
    unsealed: tuple[Path, ...] = ()  # other files left readable: say so, they may tell answers


@dataclass(frozen=True)
class UnsealReport:
    restored: Path
    removed: Path
    answers: int
    note: str | None = None  # e.g. ragate.toml still names the sealed file


# --- digests, encoding, padding -----------------------------------------------------------


def _b64(data: bytes) -> str:
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


def _aad(layout: Layout, index: int, count: int, question_id: str, has_evidence: bool) -> bytes:
    """GCM associated data: an answer cannot be moved, relabelled or flipped, even by rewriting
    the digests, without the key."""
    return _canonical([FORMAT, VERSION, layout.kind, layout.path, index, count, question_id,
                       has_evidence])


def _key_check(check_half: bytes) -> str:
    return hashlib.sha256(b"ragate-seal key check\x00" + check_half).hexdigest()


def _pad(data: bytes) -> bytes:
    """ISO/IEC 7816-4: 0x80 then zeros up to a multiple of PAD_BLOCK."""
    padded = data + b"\x80"
    return padded + b"\x00" * (-len(padded) % PAD_BLOCK)


def _unpad(data: bytes) -> bytes:
    body = data.rstrip(b"\x00")
    if not body.endswith(b"\x80"):
        raise ValueError("bad padding")
    return body[:-1]


def _aesgcm(key: bytes) -> AESGCM:
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


def _config_path(root: Path) -> Path:
    config_path = root / CONFIG_NAME if root.is_dir() else root
    if not config_path.is_file():
        raise _at(config_path, f"no {CONFIG_NAME} here, not a goldset directory")
    return config_path


def _config(root: Path) -> GoldsetConfig:
    try:
        return _read_config(_config_path(root))
    except GoldsetError as error:
        raise SealError(str(error)) from None


def _expected_setting(root: Path) -> tuple[Path, str]:
    """(goldset directory, its `questions.expected` setting)."""
    return _config_path(root).parent, _config(root).questions.expected


def locate_sealed(root: Path, expected: str) -> Path:
    """Where a goldset's sealed file is (or would be): the `expected` setting itself when it
    names a `*.sealed.json`, else `expected.sealed.json` beside `ragate.toml`."""
    return root / expected if expected.endswith(SEALED_SUFFIX) else root / SEALED_NAME


def sealed_path(root: Path) -> Path:
    """The sealed file of the goldset at `root` (a directory or its ragate.toml)."""
    directory, expected = _expected_setting(root)
    return locate_sealed(directory, expected)


def read_sealed(path: Path) -> SealedFile:
    """Parse a sealed file (no key), or a SealError naming it."""
    try:
        return SealedFile.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise _at(path, "not sealed (no such file)") from None
    except ValidationError as error:
        detail = "; ".join(f"{p.field}: {p.message}"
                           for p in problems_from_validation(error, path)[:3])
        raise _at(path, f"not a readable sealed file ({detail})") from None


def _safe_relative(text: str) -> PurePosixPath | None:
    rel = PurePosixPath(text)
    if rel.is_absolute() or not rel.parts or any(p in ("", ".", "..") for p in rel.parts) \
            or "\\" in text:
        return None
    return rel


def _plaintext_path(root: Path, layout: Layout) -> Path:
    rel = _safe_relative(layout.path)
    if rel is None:
        raise SealError(f"layout.path {layout.path!r} is not a path inside the goldset")
    return root.joinpath(*rel.parts)


def _safe_file_name(question_id: str) -> bool:
    return (question_id not in (".", "..") and "/" not in question_id
            and "\\" not in question_id and "\x00" not in question_id)


# --- sealing ------------------------------------------------------------------------------


def _jsonl_chunks(data: bytes) -> list[bytes]:
    """One chunk per record line: the blank lines before it, the line and its newline; blank
    lines after the last record go with it. Joined back, the chunks are `data` exactly."""
    lines = data.split(b"\n")
    pieces = [line + b"\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    chunks: list[bytes] = []
    pending = b""
    for piece in pieces:
        pending += piece
        if piece.decode("utf-8").strip():  # str.strip, as read_jsonl decides what is blank
            chunks.append(pending)
            pending = b""
    if pending:
        if not chunks:
            raise SealError("no expected answers to seal")
        chunks[-1] += pending
    return chunks


def _plaintext_records(directory: Path, config_path: Path, expected: str,
                       ) -> tuple[Layout, Path, list[tuple[Expected, bytes]]]:
    """The layout, the plaintext path and each answer with its exact bytes."""
    rel = _safe_relative(expected)
    path = directory / expected
    if rel is None or not path.resolve().is_relative_to(directory.resolve()):
        raise _at(config_path, f"questions.expected {expected!r} is outside the goldset "
                  "directory; only answers inside it can be sealed")
    if not path.exists():
        raise _at(path, "no expected answers to seal")
    rows, problems = _read_expected(path, config_path)
    if problems:
        raise GoldsetError(problems)
    if path.is_dir():
        others = sorted(p.name for p in path.iterdir()
                        if not (p.is_file() and p.suffix == ".json"))
        if others:
            raise _at(path, f"holds more than <question_id>.json files ({', '.join(others)}"
                      "); move them out so unseal can restore the folder exactly")
        if not rows:
            raise _at(path, "no expected answers to seal")
        records = [(exp, file.read_bytes()) for file, _line, exp in rows]
        return Layout(kind="folder", path=rel.as_posix()), path, records
    chunks = _jsonl_chunks(path.read_bytes())
    if len(chunks) != len(rows):  # read_jsonl reads the same lines: never expected
        raise _at(path, f"could not split the file into its {len(rows)} records")
    records = [(exp, chunk) for (_file, _line, exp), chunk in zip(rows, chunks, strict=True)]
    return Layout(kind="jsonl", path=rel.as_posix()), path, records


def seal_goldset(root: Path, key: str, *, kdf: Scrypt | None = None,
                 validate: bool = True) -> SealReport:
    """Encrypt a goldset's expected answers into its sealed file, then remove the plaintext.

    With `validate`, the whole goldset is loaded first: rules that need the answers (turns that
    exist, cross-meeting spans) cannot be checked again without the key, so they must hold now.
    The sealed file is written atomically before the plaintext goes, so a crash leaves both,
    never neither (`verify` flags the leftover plaintext, `unseal` then finishes cleanly).
    """
    if not key:
        raise SealError(f"an empty passphrase seals nothing: set {KEY_ENV}")
    config_path = _config_path(root)
    directory, expected = _expected_setting(root)
    target = locate_sealed(directory, expected)
    if target.exists():
        raise _at(directory, f"already sealed ({target.name} exists); run `ragate unseal` "
                  "first to change the answers")
    if validate:
        from pytest_ragate.goldset import load_goldset

        load_goldset(config_path)  # raises GoldsetError naming every problem
    layout, plain, records = _plaintext_records(directory, config_path, expected)

    params = (kdf or Scrypt()).model_copy(update={"salt": _b64(secrets.token_bytes(16))})
    derived = params.derive(key)
    cipher = _aesgcm(derived[:32])
    answers: list[SealedAnswer] = []
    for index, (exp, raw) in enumerate(records):
        has_evidence = bool(exp.evidence)
        nonce = secrets.token_bytes(12)
        aad = _aad(layout, index, len(records), exp.question_id, has_evidence)
        ciphertext = _b64(cipher.encrypt(nonce, _pad(raw), aad))
        answers.append(SealedAnswer(
            question_id=exp.question_id, has_evidence=has_evidence, nonce=_b64(nonce),
            ciphertext=ciphertext,
            digest=answer_digest(exp.question_id, has_evidence, _b64(nonce), ciphertext)))
    draft = SealedFile(kdf=params, key_check=_key_check(derived[32:]), layout=layout,
                       answers=answers, manifest_digest="")
    sealed = draft.model_copy(update={"manifest_digest": manifest_digest(draft)})

    write_atomic(target, sealed.model_dump_json(indent=1).encode() + b"\n")
    _remove_plaintext(plain)
    return SealReport(target, plain, len(answers), sealed.manifest_digest,
                      _other_files(directory, _config(root), target))


def _other_files(directory: Path, config: GoldsetConfig, sealed: Path) -> tuple[Path, ...]:
    """Files in the goldset directory that are none of its known parts: a NOTES.md may well
    retell the answers, and sealing cannot tell. Hidden files and caches are left out."""
    known = {directory / CONFIG_NAME, directory / config.questions.file, sealed}
    if config.anchors is not None:
        known.add(directory / config.anchors.file)
    for pattern in config.corpus.paths:
        known |= {Path(p) for p in glob.glob(str(directory / pattern), recursive=True)}
    known = {p.resolve() for p in known}
    return tuple(
        p for p in sorted(directory.rglob("*"))
        if p.is_file() and p.resolve() not in known
        and not any(part.startswith(".") or part == "__pycache__"
                    for part in p.relative_to(directory).parts))


def _remove_plaintext(path: Path) -> None:
    """A folder is renamed away first, so it vanishes at once, then deleted."""
    if path.is_dir():
        trash = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".old"))
        os.replace(path, trash / path.name)
        shutil.rmtree(trash)
    else:
        path.unlink()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# --- verifying (no key) -------------------------------------------------------------------


def verify_sealed(path: Path, sealed: SealedFile, pin: str | None = None) -> list[Problem]:
    """Digest checks of a parsed sealed file: each answer, then the manifest."""
    problems: list[Problem] = []
    seen: set[str] = set()
    if _safe_relative(sealed.layout.path) is None:
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
    file replaced wholesale. Only `unseal`/`open_sealed` with the key detect a forged digest.
    """
    try:
        directory, expected = _expected_setting(root)
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
        plain = _plaintext_path(directory, sealed.layout)
        if plain.exists():
            problems.append(Problem(plain, "<file>", "plaintext expected answers are still here "
                                    "beside the sealed file, gists and evidence readable: "
                                    "delete them, or run `ragate unseal` to restore"))
    return problems


def sealed_index(root: Path) -> dict[str, bool]:
    """question_id -> has_evidence, without the key: enough to pair ids, check the mix and
    the kind rules, and know which questions must abstain."""
    return {a.question_id: a.has_evidence for a in read_sealed(sealed_path(root)).answers}


# --- opening (with the key) ---------------------------------------------------------------


def _decrypt_all(path: Path, sealed: SealedFile, key: str) -> list[bytes]:
    """Every answer's plaintext, or a SealError: digests first (naming edited ids), then the
    key check (wrong key), then GCM (edits whose digests were forged)."""
    problems = verify_sealed(path, sealed)
    if problems:
        edited = tuple(dict.fromkeys(p.question_id for p in problems if p.question_id))
        raise _at(path, "the sealed file was edited: " + "; ".join(
            (f"[{p.question_id}] " if p.question_id else "") + f"{p.field}: {p.message}"
            for p in problems), edited)
    if not key:
        raise SealError(f"{KEY_ENV} is not set: the passphrase is needed to open {path}")
    try:
        derived = sealed.kdf.derive(key)
    except (ValueError, MemoryError) as error:
        raise _at(path, f"unusable kdf parameters ({error})") from None
    if not secrets.compare_digest(_key_check(derived[32:]), sealed.key_check):
        raise _at(path, f"wrong key: {KEY_ENV} is not the passphrase these answers were "
                  "sealed with")
    from cryptography.exceptions import InvalidTag

    cipher = _aesgcm(derived[:32])
    count = len(sealed.answers)
    plaintexts: list[bytes] = []
    tampered: list[str] = []
    for index, answer in enumerate(sealed.answers):
        aad = _aad(sealed.layout, index, count, answer.question_id, answer.has_evidence)
        try:
            plaintexts.append(_unpad(cipher.decrypt(_unb64(answer.nonce),
                                                    _unb64(answer.ciphertext), aad)))
        except (InvalidTag, ValueError):
            tampered.append(answer.question_id)
    if tampered:
        raise _at(path, "sealed answers failed authentication, altered after sealing: "
                  f"{', '.join(tampered)}; restore the file from version control",
                  tuple(tampered))
    return plaintexts


def _records(path: Path, sealed: SealedFile, plaintexts: list[bytes],
             ) -> tuple[list[ExpectedRow], list[Problem]]:
    rows: list[ExpectedRow] = []
    problems: list[Problem] = []
    for answer, raw in zip(sealed.answers, plaintexts, strict=True):
        qid = answer.question_id
        try:
            exp = Expected.model_validate_json(raw.strip())
        except ValidationError as error:
            problems.extend(problems_from_validation(error, path, question_id=qid))
            continue
        if exp.question_id != qid:
            problems.append(Problem(path, "question_id", f"sealed as {qid!r} but the answer "
                                    f"inside says {exp.question_id!r}", question_id=qid))
        elif bool(exp.evidence) != answer.has_evidence:
            problems.append(Problem(path, "has_evidence", "does not match the sealed answer",
                                    question_id=qid))
        rows.append((path, None, exp))
    return rows, problems


def open_sealed(root: Path, key: str) -> tuple[list[ExpectedRow], list[Problem]]:
    """The expected answers, decrypted in memory, in `_read_expected`'s shape: rows of
    (sealed file, None, Expected) and the problems found. Raises SealError on a wrong key or
    an altered answer (naming its question id)."""
    path = sealed_path(root)
    sealed = read_sealed(path)
    return _records(path, sealed, _decrypt_all(path, sealed, key))


def unseal_goldset(root: Path, key: str) -> UnsealReport:
    """Restore the plaintext byte for byte, then remove the sealed file.

    Everything is decrypted and checked before anything is written, so a wrong key or an
    altered answer changes nothing. If the plaintext is already there (a seal or unseal cut
    short), it must equal what the seal holds; then only the sealed file goes.
    """
    directory, expected = _expected_setting(root)
    path = locate_sealed(directory, expected)
    if not path.is_file():
        raise _at(directory, f"not sealed (no {path.name}); nothing to unseal")
    sealed = read_sealed(path)
    plain = _plaintext_path(directory, sealed.layout)
    plaintexts = _decrypt_all(path, sealed, key)
    _rows, problems = _records(path, sealed, plaintexts)
    if problems:
        raise GoldsetError(problems)
    if sealed.layout.kind == "jsonl":
        data = b"".join(plaintexts)
        if plain.exists():
            if not (plain.is_file() and plain.read_bytes() == data):
                raise SealError(f"{plain} exists and differs from the sealed answers; "
                                "move it away before unsealing")
        else:
            plain.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(plain, data)
    else:
        files = {f"{a.question_id}.json": raw for a, raw in zip(sealed.answers, plaintexts,
                                                                  strict=True)}
        if plain.exists():
            entries = list(plain.iterdir()) if plain.is_dir() else []
            same = (plain.is_dir() and all(p.is_file() for p in entries)
                    and {p.name: p.read_bytes() for p in entries} == files)
            if not same:
                raise SealError(f"{plain} exists and differs from the sealed answers; "
                                "move it away before unsealing")
        else:
            _write_folder(plain, files)
    path.unlink()
    note = None
    if expected.endswith(SEALED_SUFFIX):
        note = (f"{CONFIG_NAME} still says questions.expected = {expected!r}; set it to "
                f"{sealed.layout.path!r}")
    return UnsealReport(plain, path, len(plaintexts), note)


def _write_folder(folder: Path, files: dict[str, bytes]) -> None:
    """Built in a temp folder beside the target and renamed into place: all or nothing."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".tmp"))
    try:
        for name, data in files.items():
            write_atomic(staging / name, data)
        os.chmod(staging, 0o777 & ~_umask())
        os.replace(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
