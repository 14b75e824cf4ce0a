"""The rules over pinned evidence: a span whose pinned text moved (warning: collection scores
it where the text is now, `ragate reanchor` rewrites it) or changed or is gone (error). Each
expected answer's pins are held to the corpus once, as the goldset loads
(`goldsets/pinned.hold`, through `goldsets/pins.py`); this module turns what that found into
findings, worded as `ragate validate` words them (`wording/pins.py`)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.audit.evidence import Answered
from pytest_ragate.audit.findings import Finding, finding


def pinned(answers: Sequence[Answered]) -> list[Finding]:
    """A finding for each pinned span whose text moved, changed or is gone."""
    found = []
    for a in answers:
        if a.pins is None:
            continue
        at = {"path": a.path, "line": a.line, "question_id": a.question_id}
        found += [finding("moved_evidence", line, **at) for line in a.pins.moved]  # type: ignore[arg-type]
        found += [finding("stale_evidence", line, **at) for line in a.pins.stale]  # type: ignore[arg-type]
    return found
