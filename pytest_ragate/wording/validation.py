"""What `ragate validate` says of a goldset that loads: its pinned evidence (moved, stale,
unpinned) and the cheap warnings (identical question texts, a floor its goldset's n can never
decide)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ragate.scoring.floor import floor_name
from pytest_ragate.wording.numbers import plural


def unpinned(count: int, spans: int) -> str:
    """`3 of 40 evidence spans unpinned: …`."""
    return (f"{count} of {plural(spans, 'evidence span')} unpinned: a corpus edit that moves "
            "or changes their text goes unnoticed (`ragate pin` pins them)")


def same_text(question_ids: Sequence[str]) -> str:
    """Questions whose texts are the same once case and whitespace are folded."""
    return (f"warning: {', '.join(question_ids)} ask the same question (case and whitespace "
            "ignored): every interval counts them as independent observations")


def never_decided(label: str, n: int, why: str) -> str:
    """A floor this goldset's questions can never decide, and why."""
    return (f"warning: {floor_name(label)} can never be decided over its {plural(n, 'question')}: "
            f"{why}")


def quantile_short(q: float, needs: int) -> str:
    return (f"its {q:.0%} latency quantile has a 95% upper bound only from {needs} answers "
            "on; it always fails")


def under_min_n(min_n: int) -> str:
    return f"ragate_min_n = {min_n} refuses a floor over fewer; it always fails"


def strict_unreachable(bound: float) -> str:
    return (f"with ragate_ci = \"strict\", even all of them right gives a 95% lower bound under "
            f"{bound:g}; it always fails")


def unmatchable(question_id: str, place: str, why: str) -> str:
    """A fact (or `forbid`) alternative no answer can state as written, and how to write it."""
    return f"warning: [{question_id}] {place} {why}"
