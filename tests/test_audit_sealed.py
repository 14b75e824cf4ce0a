"""`ragate audit` on a sealed goldset, its key set: the rules still run, and what they say
names no place of the sealed evidence (a sealed goldset never shows its expected spans, even
to someone holding the key: `Case.expected_labels`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragate.goldsets.sealed import KEY_ENV, Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from tests.conftest import jsonl
from tests.test_pins_runs import EXPECTED, goldset, ragate

KEY = "a passphrase for the audit"
FAST = Scrypt(log2_n=10, r=8, p=1)
GIFTS = "Gift cards never expire.\n"  # a document no evidence cites
SAID_NOT = "be returned"  # what the corpus says only negated


def wide_goldset(root: Path) -> Path:
    """The pins tests' goldset with a whole document as one answer's evidence, a fact its
    evidence states only negated ("Opened software cannot be returned."), and a document
    that no answer cites."""
    goldset(root)
    (root / "docs" / "gifts.txt").write_text(GIFTS)
    expected = [dict(e) for e in EXPECTED]
    expected[0]["evidence"] = [{"doc_id": "returns"}]
    expected[1]["facts"] = [SAID_NOT]
    (root / "expected.jsonl").write_text(jsonl(expected))
    return root


def findings(root: Path) -> tuple[str, dict[str, list[dict]]]:
    code, out = ragate("audit", "--no-embed", "--format", "json", str(root))
    assert code == 0, out
    by_rule: dict[str, list[dict]] = {}
    for f in json.loads(out)["reports"][0]["findings"]:
        by_rule.setdefault(f["rule"], []).append(f)
    return out, by_rule


def test_a_sealed_goldsets_audit_names_no_document_its_evidence_is_in(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = wide_goldset(tmp_path / "plain")
    _, said = findings(plain)
    assert [f["other"] for f in said["wide_evidence"]] == ["returns"]
    assert [f["other"] for f in said["unasked_document"]] == ["gifts"]
    assert [f["question_id"] for f in said["contradicted_fact"]] == ["software"]

    sealed = wide_goldset(tmp_path / "sealed")
    seal_goldset(sealed, KEY, kdf=FAST)
    monkeypatch.setenv(KEY_ENV, KEY)
    out, said = findings(sealed)
    assert [f["question_id"] for f in said["wide_evidence"]] == ["refund"]
    assert len(said["unasked_document"]) == 1  # still said, as a count
    assert [f["question_id"] for f in said["contradicted_fact"]] == ["software"]
    for place in ("returns", "gifts", "units of", SAID_NOT):
        assert place not in out, place
