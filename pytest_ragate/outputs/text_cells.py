"""A text from a system or a user as a Markdown table cell shows it: on one line, cut to a
readable width, and with Markdown's marks escaped so that an answer's `*`, `|`, `<script>` or
`[link](…)` is shown as written, never rendered (CommonMark lets any ASCII punctuation be
escaped with a backslash). The Markdown report, the job summary and the pull-request comment
share these, so an answer reads the same in each.
"""

from __future__ import annotations

import re

from pytest_ragate.redaction import CUT

ANSWER_WIDTH = 120  # characters of an answer a table shows: about two lines of a wide cell
_MARKS = re.compile(r"([\\`*_\[\]<>|~&#!])")


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines too) made one space."""
    return " ".join(text.split())


def cut(text: str, width: int = ANSWER_WIDTH) -> str:
    """`text` on one line, at most `width` characters: cut at the last word boundary that
    fits, and ended with "…" (the mark redaction knows as a cut) when cut."""
    flat = one_line(text)
    if len(flat) <= width:
        return flat
    head = flat[:width - 1]
    space = head.rfind(" ")
    if space > width // 2:
        head = head[:space]
    return head.rstrip() + CUT


def md_inline(text: str) -> str:
    """`text` on one line with Markdown's marks escaped: shown as written in a cell."""
    return _MARKS.sub(r"\\\1", one_line(text))


def md_cut(text: str, width: int = ANSWER_WIDTH) -> str:
    """`cut`, then `md_inline`: an answer as a table cell shows it."""
    return md_inline(cut(text, width))


def tags_text(tags: dict[str, str]) -> str:
    """`lang=de, topic=refunds`, as slice floors name a slice."""
    return ", ".join(f"{key}={value}" for key, value in tags.items())
