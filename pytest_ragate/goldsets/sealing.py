"""`ragate seal` and `ragate seal --unseal`: writing a goldset's expected answers into its sealed
file and back, byte for byte. The sealed file itself (format, checks, opening) is `sealed.py`.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragate.files import write_atomic
from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.config import (
    Expected,
    GoldsetConfig,
    read_expected,
)
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.goldsets.sealed import (
    KEY_ENV,
    SEALED_SUFFIX,
    Layout,
    Scrypt,
    SealedAnswer,
    SealedFile,
    SealError,
    aesgcm,
    answer_digest,
    associated_data,
    b64,
    config_file,
    decrypt_keyed,
    decrypted_records,
    error_at,
    expected_setting,
    goldset_config,
    key_check,
    locate_sealed,
    manifest_digest,
    pad,
    plaintext_path,
    read_sealed,
    safe_relative,
)
from pytest_ragate.problems import GoldsetError

if TYPE_CHECKING:
    pass

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
    rel = safe_relative(expected)
    path = directory / expected
    if rel is None or not path.resolve().is_relative_to(directory.resolve()):
        raise error_at(config_path, f"questions.expected {expected!r} is outside the goldset "
                  "directory; only answers inside it can be sealed")
    if not path.exists():
        raise error_at(path, "no expected answers to seal")
    rows, problems = read_expected(path, config_path)
    if problems:
        raise GoldsetError(problems)
    if path.is_dir():
        others = sorted(p.name for p in path.iterdir()
                        if not (p.is_file() and p.suffix == ".json"))
        if others:
            raise error_at(path, f"holds more than <question_id>.json files ({', '.join(others)}"
                      "); move them out so unseal can restore the folder exactly")
        if not rows:
            raise error_at(path, "no expected answers to seal")
        records = [(exp, file.read_bytes()) for file, _line, exp in rows]
        return Layout(kind="folder", path=rel.as_posix()), path, records
    chunks = _jsonl_chunks(path.read_bytes())
    if len(chunks) != len(rows):  # read_jsonl reads the same lines: never expected
        raise error_at(path, f"could not split the file into its {len(rows)} records")
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
    config_path = config_file(root)
    directory, expected = expected_setting(root)
    target = locate_sealed(directory, expected)
    if target.exists():
        raise error_at(directory, f"already sealed ({target.name} exists); run `ragate seal "
                  "--unseal` first to change the answers")
    if validate:
        load_goldset(config_path)  # raises GoldsetError naming every problem
    layout, plain, records = _plaintext_records(directory, config_path, expected)

    params = (kdf or Scrypt()).model_copy(update={"salt": b64(secrets.token_bytes(16))})
    derived = params.derive(key)
    cipher = aesgcm(derived[:32])
    answers: list[SealedAnswer] = []
    for index, (exp, raw) in enumerate(records):
        has_evidence = bool(exp.evidence)
        nonce = secrets.token_bytes(12)
        aad = associated_data(layout, index, len(records), exp.question_id, has_evidence)
        ciphertext = b64(cipher.encrypt(nonce, pad(raw), aad))
        answers.append(SealedAnswer(
            question_id=exp.question_id, has_evidence=has_evidence, nonce=b64(nonce),
            ciphertext=ciphertext,
            digest=answer_digest(exp.question_id, has_evidence, b64(nonce), ciphertext)))
    draft = SealedFile(kdf=params, key_check=key_check(derived[32:]), layout=layout,
                       answers=answers, manifest_digest="")
    sealed = draft.model_copy(update={"manifest_digest": manifest_digest(draft)})

    write_atomic(target, sealed.model_dump_json(indent=1).encode() + b"\n")
    _remove_plaintext(plain)
    return SealReport(target, plain, len(answers), sealed.manifest_digest,
                      _other_files(directory, goldset_config(root), target))


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


def unseal_goldset(root: Path, key: str) -> UnsealReport:
    """Restore the plaintext byte for byte, then remove the sealed file.

    Everything is decrypted and checked before anything is written, so a wrong key or an
    altered answer changes nothing. If the plaintext is already there (a seal or unseal cut
    short), it must equal what the seal holds; then only the sealed file goes.
    """
    directory, expected = expected_setting(root)
    path = locate_sealed(directory, expected)
    if not path.is_file():
        raise error_at(directory, f"not sealed (no {path.name}); nothing to unseal")
    sealed = read_sealed(path)
    plain = plaintext_path(directory, sealed.layout)
    plaintexts, _ = decrypt_keyed(path, sealed, key)
    _rows, problems = decrypted_records(path, sealed, plaintexts)
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


# --- changing sealed answers in place ------------------------------------------------------


def reseal_answers(root: Path, key: str, change: Callable[[bytes, bool], bytes | None], *,
                   write: bool) -> int:
    """Apply `change(plaintext, folder)` to each sealed answer's plaintext (its exact bytes,
    and whether it was a `<question_id>.json` file; None: unchanged) in
    memory, and with `write` seal the changed ones again into the same file: the same key
    and kdf, fresh nonces, digests recomputed, written atomically. No plaintext touches the
    disk. An answer's question id and has-evidence flag may not change (`ragate seal --unseal` for
    that). The file is written only if it still holds the bytes it was opened from.
    Returns how many answers changed."""
    directory, expected = expected_setting(root)
    path = locate_sealed(directory, expected)
    data = path.read_bytes()
    sealed = read_sealed(path)
    plaintexts, _ = decrypt_keyed(path, sealed, key)
    derived = sealed.kdf.derive(key)
    cipher = aesgcm(derived[:32])
    count = len(sealed.answers)
    answers = list(sealed.answers)
    changed = 0
    for index, (answer, raw) in enumerate(zip(sealed.answers, plaintexts, strict=True)):
        new = change(raw, sealed.layout.kind == "folder")
        if new is None or new == raw:
            continue
        exp = Expected.model_validate_json(new.strip())
        if exp.question_id != answer.question_id or bool(exp.evidence) != answer.has_evidence:
            raise error_at(path, "a change would alter a sealed answer's question id or "
                           "whether it has evidence; nothing written", (answer.question_id,))
        nonce = secrets.token_bytes(12)
        aad = associated_data(sealed.layout, index, count, answer.question_id,
                              answer.has_evidence)
        ciphertext = b64(cipher.encrypt(nonce, pad(new), aad))
        answers[index] = answer.model_copy(update={
            "nonce": b64(nonce), "ciphertext": ciphertext,
            "digest": answer_digest(answer.question_id, answer.has_evidence, b64(nonce),
                                    ciphertext)})
        changed += 1
    if changed and write:
        draft = sealed.model_copy(update={"answers": answers, "manifest_digest": ""})
        resealed = draft.model_copy(update={"manifest_digest": manifest_digest(draft)})
        if path.read_bytes() != data:
            raise error_at(path, "changed while it was being read; nothing written to it: "
                           "run the command again")
        write_atomic(path, resealed.model_dump_json(indent=1).encode() + b"\n")
    return changed
