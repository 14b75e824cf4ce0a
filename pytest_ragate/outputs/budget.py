"""Markdown that must fit a size (GitHub's 1 MiB job summary per step, 65,536 characters of a
pull-request comment), cut by priority and saying so.

A document is a list of sections in display order, each with a priority (0 first). Room is
given in priority order: a section's head (its heading, a table's header) whole or not at
all, then its rows one by one while they fit. A section whose rows were cut ends with a line
counting what was left out; a section left out entirely is counted in one line at the end.
So the verdict and the failing floors are always there, and what is cut is the least useful.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

NOTICE_ROOM = 200  # characters kept free for each section's cut line and the document's


@dataclass(kw_only=True)
class Section:
    """A block of Markdown lines: `head` (kept whole), `rows` (cut from the end), `tail`."""

    priority: int
    head: list[str]
    rows: list[str] = field(default_factory=list)
    tail: list[str] = field(default_factory=list)
    what: str = "rows"  # what a row is, for the cut line: "questions", "floors"


def utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def fit(sections: Sequence[Section], limit: int, *, why: str,
        measure: Callable[[str], int] = len) -> str:
    """The sections as one Markdown text of at most `limit` (as `measure` counts it): the
    most useful first, the rest cut and counted; `why` says whose limit it is."""
    used = NOTICE_ROOM  # the document's own cut line
    kept: dict[int, int] = {}  # section -> rows kept (-1: left out)
    for i in sorted(range(len(sections)), key=lambda k: sections[k].priority):
        section = sections[i]
        cost = sum(measure(line) + 1 for line in (*section.head, *section.tail))
        if used + cost + (NOTICE_ROOM if section.rows else 0) > limit:
            kept[i] = -1
            continue
        used += cost
        count = 0
        for row in section.rows:
            size = measure(row) + 1
            if used + size + NOTICE_ROOM > limit:
                used += NOTICE_ROOM  # this section's cut line
                break
            used += size
            count += 1
        kept[i] = count
    lines: list[str] = []
    dropped = 0
    for i, section in enumerate(sections):
        if kept[i] < 0:
            dropped += 1
            continue
        left = len(section.rows) - kept[i]
        lines += [*section.head, *section.rows[:kept[i]]]
        if left:
            lines += ["", f"*… {left} more {section.what} not shown: cut to stay under {why}; "
                      "the reports have every one.*"]
        lines += section.tail
    if dropped:
        lines += ["", f"*{dropped} section{'s' * (dropped != 1)} left out to stay under "
                  f"{why}; the reports have them.*"]
    return "\n".join(lines) + "\n"
