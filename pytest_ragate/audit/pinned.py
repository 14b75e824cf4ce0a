"""The rules over pinned evidence: a span whose pinned text moved (warning: collection scores
it where the text is now, `ragate reanchor` rewrites it) or changed or is gone (error). The
fingerprint and its check against the corpus are `goldsets/pins.py`'s; this module only
turns each check into a finding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pytest_ragate.audit.evidence import Answered
from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.goldsets.pins import CorpusText, Moved, Pin, Stale
from pytest_ragate.wording import audit as wording

PinKey = tuple[str, int]  # (question id, index of the evidence entry)


def pins_of(answers: Sequence[Answered]) -> dict[PinKey, Pin]:
    """The pins the expected answers carry (an evidence entry's `pin`, where it has one)."""
    return {(a.question_id, i): pin for a in answers
            for i, entry in enumerate(a.expected.evidence)
            if isinstance(pin := getattr(entry, "pin", None), Pin)}


def pinned(answers: Sequence[Answered], text: CorpusText, pins: Mapping[PinKey, Pin],
           quote: bool = True) -> list[Finding]:
    """A finding for each pinned span whose text moved, changed or is gone; `quote`: whether
    messages may quote the pinned and nearest texts (not for a sealed goldset)."""
    found = []
    for a in answers:
        for i, entry in enumerate(a.expected.evidence):
            pin = pins.get((a.question_id, i))
            if pin is None or entry.doc_id is None or entry.first_turn is None \
                    or entry.last_turn is None:
                continue
            check = text.check(entry.doc_id, entry.first_turn, entry.last_turn, pin)
            at = {"path": a.path, "line": a.line, "question_id": a.question_id}
            if isinstance(check, Moved):
                found.append(finding("moved_evidence", wording.moved_evidence(
                    i, check.doc_id, check.first_unit, check.last_unit, text.corpus.unit,
                    check.places), other=check.doc_id, **at))  # type: ignore[arg-type]
            elif isinstance(check, Stale):
                nearest = check.nearest.text[:80] if check.nearest and quote else None
                found.append(finding("stale_evidence", wording.stale_evidence(
                    i, check.doc_id, check.gone, check.quote if quote else None, nearest),
                    other=check.doc_id, **at))  # type: ignore[arg-type]
    return found
