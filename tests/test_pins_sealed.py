"""`ragate pin` and `ragate reanchor` on a sealed goldset: with RAGATE_SEAL_KEY its answers are
changed in memory and sealed again (the same result, unsealed, as on the plaintext goldset; no
plaintext on disk; no evidence place in the output); without the key, or with a wrong one,
refused with nothing changed; a sealed file edited meanwhile is not overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragate.goldsets.sealed import (
    KEY_ENV,
    SEALED_NAME,
    Scrypt,
    SealError,
    read_sealed,
    verify_goldset,
)
from pytest_ragate.goldsets.sealing import reseal_answers, seal_goldset, unseal_goldset
from tests.test_pins_runs import EXPECTED, edit_corpus, goldset, ragate

KEY = "a passphrase for pins"
FAST = Scrypt(log2_n=10, r=8, p=1)


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def twins(tmp_path: Path) -> tuple[Path, Path]:
    """The same goldset twice: one plaintext, one sealed."""
    plain, sealed = goldset(tmp_path / "plain"), goldset(tmp_path / "sealed")
    seal_goldset(sealed, KEY, kdf=FAST)
    return plain, sealed


def unsealed_answers(root: Path) -> bytes:
    unseal_goldset(root, KEY)
    return (root / "expected.jsonl").read_bytes()


def test_pin_and_reanchor_change_a_sealed_goldset_as_its_plaintext_twin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, sealed = twins(tmp_path)
    monkeypatch.setenv(KEY_ENV, KEY)
    assert ragate("pin", str(plain))[0] == 0
    code, out = ragate("pin", str(sealed))
    digest = read_sealed(sealed / SEALED_NAME).manifest_digest
    assert code == 0 and out == (f"pinned 3 spans in {sealed / SEALED_NAME}\nmanifest digest "
                                 f"{digest} (the sealed file changed: pin it again, ragate "
                                 "seal --verify --pin)\n")
    assert verify_goldset(sealed, pin=digest) == []
    assert set(files_of(sealed)) == set(files_of(plain)) - {"expected.jsonl"} | {
        SEALED_NAME}  # no plaintext left beside the sealed file
    for root in (plain, sealed):
        edit_corpus(root)
    before = files_of(sealed)
    code, out = ragate("reanchor", str(sealed))  # a dry run: nothing written
    assert code == 1 and files_of(sealed) == before
    assert "would re-anchor 1 span" in out
    assert "returns" not in out and "unit 2" not in out and "software" not in out.split(
        "stale")[1]  # how many moved or went stale, never where or what text
    ragate("reanchor", str(plain), "--write")
    code, out = ragate("reanchor", str(sealed), "--write")
    assert code == 1 and "re-anchored 1 span" in out
    sealed_bytes = (sealed / SEALED_NAME).read_bytes()
    for secret in (b"five working days", b"not when opened", b"returns", b"refund text"):
        assert secret not in sealed_bytes
    assert unsealed_answers(sealed) == (plain / "expected.jsonl").read_bytes()


@pytest.mark.parametrize("key", [None, "not the passphrase"])
def test_without_its_key_a_sealed_goldset_is_refused_and_nothing_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str | None) -> None:
    root = goldset(tmp_path / "gs")
    seal_goldset(root, KEY, kdf=FAST)
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    before = files_of(root)
    for command in (("pin",), ("reanchor",), ("reanchor", "--write")):
        code, out = ragate(*command, str(root))
        assert code == 1, out
        # no key: refused by pin/reanchor; a wrong one: the goldset does not load
        assert ("wrong key" if key else "sealed; nothing changed") in out, out
    assert files_of(root) == before


def test_a_sealed_file_edited_while_resealing_is_not_overwritten(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    seal_goldset(root, KEY, kdf=FAST)
    path = root / SEALED_NAME
    theirs = path.read_bytes() + b"\n"

    def meanwhile(raw: bytes, folder: bool) -> bytes:
        path.write_bytes(theirs)
        return raw.replace(b"9 euros", b"nine euros")

    with pytest.raises(SealError, match="changed while it was being read; nothing written"):
        reseal_answers(root, KEY, meanwhile, write=True)
    assert path.read_bytes() == theirs


def test_a_change_that_would_alter_what_a_sealed_file_shows_is_refused(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    seal_goldset(root, KEY, kdf=FAST)
    before = files_of(root)
    with pytest.raises(SealError, match="question id or whether it has evidence"):
        reseal_answers(root, KEY, lambda raw, _f: raw.replace(b'"express"', b'"other"'),
                       write=True)
    assert files_of(root) == before


def folder_goldset(root: Path) -> Path:
    """The same goldset with its answers as a folder of indented `<question_id>.json`."""
    goldset(root)
    (root / "expected.jsonl").unlink()
    toml = root / "ragate.toml"
    toml.write_text(toml.read_text().replace('"expected.jsonl"', '"expected"'))
    (root / "expected").mkdir()
    for row in EXPECTED:
        (root / "expected" / f"{row['question_id']}.json").write_text(
            json.dumps(row, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root


def test_a_sealed_folder_of_answers_is_pinned_as_its_plaintext_twin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain, sealed = folder_goldset(tmp_path / "plain"), folder_goldset(tmp_path / "sealed")
    seal_goldset(sealed, KEY, kdf=FAST)
    monkeypatch.setenv(KEY_ENV, KEY)
    assert ragate("pin", str(plain))[0] == 0
    code, out = ragate("pin", str(sealed))
    assert code == 0 and out.startswith(f"pinned 3 spans in {sealed / SEALED_NAME}\n")
    assert not (sealed / "expected").exists()
    unseal_goldset(sealed, KEY)
    assert files_of(sealed / "expected") == files_of(plain / "expected")
