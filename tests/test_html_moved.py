"""The HTML report says which questions were scored where their pinned evidence is now: on the
question's row and in the run's list, as the Markdown, terminal and JUnit do; a sealed
goldset's note counts the spans and never names a document, unit or quote."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.goldsets.sealed import KEY_ENV, Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from pytest_ragate.outputs.html import render_html
from pytest_ragate.outputs.reports import markdown
from tests.test_html_report import make_run, rec, rows
from tests.test_pins_runs import edit_corpus, goldset, ragate

KEY = "a passphrase for the report"


def moved_notes(root: Path) -> dict[str, list[str]]:
    """Each question's moved-evidence notes, as collection holds them after a corpus edit."""
    assert ragate("pin", str(root))[0] == 0
    edit_corpus(root)
    return {c.question.question_id: list(c.pins.moved) for c in load_goldset(root).cases
            if c.pins is not None and c.pins.moved}


def page_of(notes: dict[str, list[str]], sealed: bool) -> str:
    expected = None if sealed else ["[returns · 3]"]
    run = make_run([rec(qid, index=i, expected=expected, evidence_moved=moved)
                    for i, (qid, moved) in enumerate({"express": [], **notes}.items())])
    assert "evidence moved" in markdown([run])
    return render_html([run], history=[], ci="point")


def test_a_moved_span_is_noted_on_its_question_and_in_the_run(tmp_path: Path) -> None:
    notes = moved_notes(goldset(tmp_path / "gs"))
    assert list(notes) == ["refund"]
    html = page_of(notes, sealed=False)
    by_id = rows(html)
    note = ("evidence moved: returns unit 2 is now unit 3 (scored there; `ragate reanchor "
            "--write` updates the goldset)")
    assert f'<div class="small muted moved">{note}</div>' in by_id["refund"]
    assert "evidence moved" not in by_id["express"]
    assert f"<li>refund: {note}</li>" in html


def test_a_sealed_goldsets_moved_note_counts_and_never_shows_where(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = goldset(tmp_path / "gs")
    seal_goldset(root, KEY, kdf=Scrypt(log2_n=10, r=8, p=1))
    monkeypatch.setenv(KEY_ENV, KEY)
    notes = moved_notes(root)
    assert notes == {"refund": ["evidence moved: 1 pinned span re-found at other units "
                                "(sealed)"]}
    html = page_of(notes, sealed=True)
    assert "re-found at other units (sealed)" in rows(html)["refund"]
    for secret in ("returns", "five working days", "unit 2", "unit 3", "refunds go back"):
        assert secret not in html.lower()
