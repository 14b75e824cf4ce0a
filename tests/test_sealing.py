"""Sealed expected answers: seal, unseal, verify and open, on real goldset files.

Every test seals with a cheap scrypt cost (`FAST`); the production default is checked apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets.config import Expected, read_expected
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.goldsets.sealed import (
    SEALED_NAME,
    Scrypt,
    SealedFile,
    SealError,
    answer_digest,
    key_from_env,
    manifest_digest,
    open_sealed_keyed,
    read_sealed,
    sealed_index,
    sealed_path,
    verify_goldset,
)
from pytest_ragate.goldsets.sealing import seal_goldset, unseal_goldset
from pytest_ragate.problems import GoldsetError, Problem
from tests.conftest import BASE_TOML, EVIDENCE, expected_rows, write_goldset

KEY = "correct horse battery staple"
FAST = Scrypt(log2_n=10, r=8, p=1)

# A jsonl whose bytes are not what json.dumps would write: blank lines, CRLF, non-ASCII,
# a `notes` field, compact separators, trailing blank lines. Unseal must keep them all.
ODD_JSONL = (
    b"\n"
    b'{"question_id": "q1", "gist": "Le budget est de 3\xe2\x82\xac", "evidence": '
    b'[{"doc_id": "m1", "first_unit": 2, "last_unit": 3}], "notes": "checked twice"}\r\n'
    b"   \n"
    b'{"question_id":"q2","gist":"gist of q2","evidence":[{"doc_id":"m2",'
    b'"first_unit":5,"last_unit":5}]}\n'
    b'{"question_id": "q3", "gist": "gist of q3", "evidence": [{"doc_id": "m1", '
    b'"first_unit": 0, "last_unit": 0}, {"doc_id": "m3", "first_unit": 4, '
    b'"last_unit": 5}]}\n'
    b'{"question_id": "q4", "gist": null, "evidence": []}\n'
    b"\n\n"
)


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under `root` by relative path, with its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def jsonl_goldset(tmp_path: Path) -> Path:
    root = write_goldset(tmp_path / "gs")
    (root / "expected.jsonl").write_bytes(ODD_JSONL)
    return root


def folder_goldset(tmp_path: Path) -> Path:
    """The default answers as a folder of <question_id>.json, each written differently."""
    root = write_goldset(tmp_path / "gs")
    (root / "expected.jsonl").unlink()
    toml = root / "ragate.toml"
    toml.write_text(BASE_TOML.replace('"expected.jsonl"', '"expected"'))
    folder = root / "expected"
    folder.mkdir()
    for i, row in enumerate(expected_rows()):
        text = json.dumps(row, indent=i or None, ensure_ascii=False) + "\n" * (i % 2)
        (folder / f"{row['question_id']}.json").write_text(text, encoding="utf-8")
    return root


@pytest.fixture(params=["jsonl", "folder"])
def goldset(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return jsonl_goldset(tmp_path) if request.param == "jsonl" else folder_goldset(tmp_path)


def seal(root: Path, key: str = KEY) -> None:
    seal_goldset(root, key, kdf=FAST)


def plaintext_answers(root: Path) -> list[Expected]:
    path = root / ("expected" if (root / "expected").is_dir() else "expected.jsonl")
    rows, problems = read_expected(path, root / "ragate.toml")
    assert not problems
    return [exp for _file, _line, exp in rows]


def secrets_of(answers: list[Expected]) -> list[bytes]:
    """Each gist, note and evidence span as it could appear in a file (utf-8, any spacing)."""
    found: list[bytes] = []
    for exp in answers:
        for text in (exp.gist, exp.notes):
            if text:
                found += [text.encode(), json.dumps(text).encode()]
        for span in exp.evidence:
            row: dict[str, Any] = {"doc_id": span.doc_id, "first_unit": span.first_unit,
                                   "last_unit": span.last_unit}
            found += [json.dumps(row).encode(), json.dumps(row, separators=(",", ":")).encode()]
    return found


def edit_sealed(root: Path, change: Any) -> None:
    """Apply `change` to the sealed file's JSON and write it back (no digest recomputed)."""
    path = root / SEALED_NAME
    data = json.loads(path.read_bytes())
    change(data)
    path.write_text(json.dumps(data, indent=1))


def flip_ciphertext(data: dict[str, Any], index: int = 1) -> None:
    text = data["answers"][index]["ciphertext"]
    data["answers"][index]["ciphertext"] = ("B" if text[0] == "A" else "A") + text[1:]


def ids(problems: list[Problem]) -> set[str | None]:
    return {p.question_id for p in problems}


# --- round trip ---------------------------------------------------------------------------


def test_seal_then_unseal_restores_every_byte(goldset: Path) -> None:
    before = files_of(goldset)
    report = seal_goldset(goldset, KEY, kdf=FAST)
    assert report.answers == 4 and report.sealed == goldset / SEALED_NAME
    assert report.unsealed == ()
    assert not report.removed.exists()
    assert sealed_path(goldset).is_file()
    assert set(files_of(goldset)) == {k for k in before if not k.startswith("expected")} | {
        SEALED_NAME}
    assert read_sealed(report.sealed).manifest_digest == report.manifest_digest

    back = unseal_goldset(goldset, KEY)
    assert back.answers == 4 and back.note is None
    assert files_of(goldset) == before
    assert not sealed_path(goldset).is_file()
    load_goldset(goldset)  # still a valid goldset


def test_no_gist_or_evidence_is_readable_after_sealing(goldset: Path) -> None:
    hidden = secrets_of(plaintext_answers(goldset))
    assert len(hidden) > 10
    seal(goldset)
    for name, data in files_of(goldset).items():
        for secret in hidden:
            assert secret not in data, f"{name} still shows an answer"


def test_sealed_index_needs_no_key(goldset: Path) -> None:
    seal(goldset)
    assert sealed_index(goldset) == {q: bool(spans) for q, spans in EVIDENCE.items()}


def test_open_sealed_gives_the_plaintext_answers(goldset: Path) -> None:
    plain = plaintext_answers(goldset)
    seal(goldset)
    rows, problems, _ = open_sealed_keyed(goldset, KEY)
    assert problems == []
    assert [exp for _path, _line, exp in rows] == plain
    assert {(path, line) for path, line, _exp in rows} == {(goldset / SEALED_NAME, None)}


# --- verify, no key -----------------------------------------------------------------------


def test_verify_passes_on_an_untouched_seal(goldset: Path) -> None:
    seal(goldset)
    assert verify_goldset(goldset) == []
    digest = read_sealed(goldset / SEALED_NAME).manifest_digest
    assert verify_goldset(goldset, pin=digest) == []


def test_verify_names_the_question_whose_ciphertext_was_edited(goldset: Path) -> None:
    seal(goldset)
    edit_sealed(goldset, flip_ciphertext)
    problems = verify_goldset(goldset)
    assert ids(problems) == {"q2"}
    assert any("q2" in str(p) and "edited" in p.message for p in problems)
    with pytest.raises(SealError, match="q2") as info:
        unseal_goldset(goldset, KEY)
    assert info.value.question_ids == ("q2",) and info.value.path == goldset / SEALED_NAME


@pytest.mark.parametrize(("name", "change", "question"), [
    ("flag", lambda d: d["answers"][3].update(has_evidence=True), "q4"),
    ("id", lambda d: d["answers"][0].update(question_id="q9"), "q9"),
    ("digest", lambda d: d["answers"][2].update(digest="0" * 64), "q3"),
    ("order", lambda d: d["answers"].reverse(), None),
    ("dropped", lambda d: d["answers"].pop(), None),
    ("layout", lambda d: d["layout"].update(path="other.jsonl"), None),
    ("kdf", lambda d: d["kdf"].update(log2_n=11), None),
    ("key check", lambda d: d.update(key_check="0" * 64), None),
])
def test_verify_catches_an_edited_manifest(goldset: Path, name: str, change: Any,
                                           question: str | None) -> None:
    seal(goldset)
    edit_sealed(goldset, change)
    problems = verify_goldset(goldset)
    assert problems, name
    if question:  # an answer's clear fields: its own digest names it
        assert ids(problems) - {None} == {question}
    else:  # the header, the order or the count: the manifest digest
        assert [p.field for p in problems] == ["manifest_digest"]


def test_verify_reports_a_malformed_sealed_file(goldset: Path) -> None:
    seal(goldset)
    path = goldset / SEALED_NAME
    path.write_bytes(path.read_bytes()[:-40])
    [problem] = verify_goldset(goldset)
    assert problem.path == path and "not a readable sealed file" in problem.message


def test_forged_digests_pass_verify_but_not_the_key(goldset: Path) -> None:
    """What verify does not promise: an editor who recomputes the unkeyed digests passes it.
    The key still catches the edit, naming the question; a pinned digest catches it too."""
    seal(goldset)
    pinned = read_sealed(goldset / SEALED_NAME).manifest_digest

    def forge(data: dict[str, Any]) -> None:
        flip_ciphertext(data, 0)
        one = data["answers"][0]
        one["digest"] = answer_digest(one["question_id"], one["has_evidence"], one["nonce"],
                                      one["ciphertext"])
        data["manifest_digest"] = manifest_digest(SealedFile.model_validate(data))

    edit_sealed(goldset, forge)
    assert verify_goldset(goldset) == []
    [problem] = verify_goldset(goldset, pin=pinned)
    assert problem.field == "manifest_digest"
    before = files_of(goldset)
    with pytest.raises(SealError, match=r"failed authentication.*q1") as info:
        open_sealed_keyed(goldset, KEY)
    assert info.value.question_ids == ("q1",)
    with pytest.raises(SealError, match="q1"):
        unseal_goldset(goldset, KEY)
    assert files_of(goldset) == before


def test_verify_flags_plaintext_left_beside_the_seal(tmp_path: Path) -> None:
    root = jsonl_goldset(tmp_path)
    seal(root)
    (root / "expected.jsonl").write_bytes(ODD_JSONL)  # a seal cut short, or a careless copy
    [problem] = verify_goldset(root)
    assert problem.path == root / "expected.jsonl" and "readable" in problem.message


def test_verify_an_unsealed_goldset_is_a_problem(goldset: Path) -> None:
    [problem] = verify_goldset(goldset)
    assert "not sealed" in problem.message


# --- the key ------------------------------------------------------------------------------


def test_wrong_key_changes_nothing(goldset: Path) -> None:
    seal(goldset)
    before = files_of(goldset)
    with pytest.raises(SealError, match="wrong key") as info:
        unseal_goldset(goldset, "not the passphrase")
    assert info.value.path == goldset / SEALED_NAME
    assert str(info.value) == f"{info.value.path}: {info.value.message}"
    with pytest.raises(SealError, match="wrong key"):
        open_sealed_keyed(goldset, "not the passphrase")
    assert files_of(goldset) == before
    assert not any(p.name.startswith(".") for p in goldset.iterdir())  # no temp left behind


def test_key_comes_from_the_environment() -> None:
    assert key_from_env({"RAGATE_SEAL_KEY": KEY}) == KEY
    for env in ({}, {"RAGATE_SEAL_KEY": ""}):
        with pytest.raises(SealError, match="RAGATE_SEAL_KEY is not set"):
            key_from_env(env)


def test_a_missing_key_is_refused(goldset: Path) -> None:
    with pytest.raises(SealError, match="RAGATE_SEAL_KEY"):
        seal_goldset(goldset, "", kdf=FAST)
    seal(goldset)
    with pytest.raises(SealError, match="RAGATE_SEAL_KEY is not set"):
        open_sealed_keyed(goldset, "")


def test_production_cost_is_strong() -> None:
    cost = Scrypt()
    owasp = {(17, 8, 1), (16, 8, 2), (15, 8, 3), (14, 8, 5), (13, 8, 10)}  # equally strong
    assert (cost.log2_n, cost.r, cost.p) in owasp


def test_each_seal_uses_a_new_salt_and_nonces(tmp_path: Path) -> None:
    root = jsonl_goldset(tmp_path)
    seal(root)
    first = read_sealed(root / SEALED_NAME)
    unseal_goldset(root, KEY)
    seal(root)
    second = read_sealed(root / SEALED_NAME)
    assert first.kdf.salt != second.kdf.salt
    assert not {a.ciphertext for a in first.answers} & {a.ciphertext for a in second.answers}


# --- clear errors -------------------------------------------------------------------------


def test_sealing_twice_is_refused(goldset: Path) -> None:
    seal(goldset)
    before = files_of(goldset)
    with pytest.raises(SealError, match="already sealed"):
        seal(goldset)
    assert files_of(goldset) == before


def test_unsealing_an_unsealed_goldset_is_refused(goldset: Path) -> None:
    before = files_of(goldset)
    with pytest.raises(SealError, match="not sealed"):
        unseal_goldset(goldset, KEY)
    assert files_of(goldset) == before


def test_an_invalid_goldset_is_not_sealed(tmp_path: Path) -> None:
    root = write_goldset(tmp_path / "gs", expected=expected_rows({**EVIDENCE,
                                                                 "q1": [("m1", 2, 99)]}))
    before = files_of(root)
    with pytest.raises(GoldsetError, match=r"\[q1\] evidence\[0\].last_unit"):
        seal(root)
    assert files_of(root) == before


def test_a_folder_with_other_files_is_not_sealed(tmp_path: Path) -> None:
    root = folder_goldset(tmp_path)
    (root / "expected" / "README.md").write_text("how these were written")
    before = files_of(root)
    with pytest.raises(SealError, match=r"README\.md"):
        seal(root)
    assert files_of(root) == before


def test_errors_never_show_an_answer(goldset: Path) -> None:
    hidden = [s.decode() for s in secrets_of(plaintext_answers(goldset))]
    seal(goldset)
    edit_sealed(goldset, flip_ciphertext)
    messages = [str(p) for p in verify_goldset(goldset)]
    for key in (KEY, "wrong"):
        with pytest.raises(SealError) as info:
            unseal_goldset(goldset, key)
        messages.append(str(info.value))
    for message in messages:
        assert not any(secret in message for secret in hidden), message


# --- cut short, and the sealed file named in ragate.toml ----------------------------------


def test_unseal_finishes_a_seal_that_was_cut_short(goldset: Path) -> None:
    before = files_of(goldset)
    seal(goldset)
    for name, data in before.items():  # the plaintext back, as if its removal never happened
        (goldset / name).parent.mkdir(exist_ok=True)
        (goldset / name).write_bytes(data)
    with pytest.raises(SealError, match="already sealed"):
        seal(goldset)
    unseal_goldset(goldset, KEY)
    assert files_of(goldset) == before


def test_unseal_never_overwrites_different_answers(tmp_path: Path) -> None:
    root = jsonl_goldset(tmp_path)
    seal(root)
    (root / "expected.jsonl").write_text("{}\n")
    with pytest.raises(SealError, match="differs"):
        unseal_goldset(root, KEY)
    assert (root / "expected.jsonl").read_text() == "{}\n"
    assert sealed_path(root).is_file()


def test_ragate_toml_may_name_the_sealed_file(tmp_path: Path) -> None:
    root = jsonl_goldset(tmp_path)
    seal(root)
    toml = root / "ragate.toml"
    toml.write_text(toml.read_text().replace('"expected.jsonl"', f'"{SEALED_NAME}"'))
    assert sealed_path(root).is_file() and verify_goldset(root) == []
    assert sealed_index(root)["q4"] is False
    report = unseal_goldset(root, KEY)
    assert report.note and "expected.jsonl" in report.note
    assert (root / "expected.jsonl").read_bytes() == ODD_JSONL


def test_other_files_in_the_goldset_are_named(tmp_path: Path) -> None:
    """A NOTES.md may retell every answer: sealing cannot know, so it says it left it."""
    root = jsonl_goldset(tmp_path)
    (root / "NOTES.md").write_text("q1: see m1 turns 2-3")
    (root / ".hidden").write_text("editor state")
    report = seal_goldset(root, KEY, kdf=FAST)
    assert report.unsealed == (root / "NOTES.md",)
