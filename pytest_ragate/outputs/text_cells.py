"""A text from a system or a user as Markdown shows it: on one line, cut to a readable width,
and with Markdown's marks escaped so that an answer's `*`, `|`, `<script>`, `<img src=…>` or
`[link](…)` is shown as written, never rendered (CommonMark lets any ASCII punctuation be
escaped with a backslash). `md_inline` is the one escaping of the Markdown outputs (the
report, the job summary, the pull-request comment): every id, name, tag, kind, answer and
message they show passes through it, or through `md_code` inside a code span. (The HTML
report escapes with Jinja2's autoescape; GitLab's files are JSON and OpenMetrics, escaped by
their own rules.) A bare `https://…` is left as written: GitHub shows it as a link, never
loads it.
"""

from __future__ import annotations

import re

from pytest_ragate.redaction import CUT

ANSWER_WIDTH = 120  # characters of an answer a table shows: about two lines of a wide cell
# a mark that makes an element wherever it stands (a code span, emphasis, a table's cell, a
# strikethrough), or only where it stands here: `_` out of a word (`evidence_recall` is text
# as it is), `<` before a tag's or an autolink's first character, `&` before an entity's, `]`
# before a link's target or label (a definition, `[x]: …`, starts a text: `_START`)
_MARKS = re.compile(r"[\\`*|~]|_(?![^\W_])|(?<![^\W_])_|<(?=[A-Za-z/!?])|&(?=[#A-Za-z])"
                    r"|\](?=[(\[])")
# what starts a block or a link's definition at the start of a text: a quote, a heading, a
# list item, a rule, `[label]:`
_START = re.compile(r"^([>#+=\[-]|\d+(?=[.)]))")


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
    """`text` on one line with Markdown's marks escaped: shown as written in a cell, a list
    item or a heading."""
    flat = _MARKS.sub(r"\\\g<0>", one_line(text))
    return _START.sub(lambda m: m[1] + "\\" if m[1][0].isdigit() else "\\" + m[1], flat)


def md_code(text: str) -> str:
    """`text` on one line as a Markdown code span, whatever it holds: fenced by one more
    backtick than its longest run of them, and a table's `|` escaped (GitHub's tables split
    cells on it even in code)."""
    flat = one_line(text).replace("|", "\\|")
    fence = "`" * (max(map(len, re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def md_cut(text: str, width: int = ANSWER_WIDTH) -> str:
    """`cut`, then `md_inline`: an answer as a table cell shows it."""
    return md_inline(cut(text, width))


def tags_text(tags: dict[str, str]) -> str:
    """`lang=de, topic=refunds`, as slice floors name a slice."""
    return ", ".join(f"{key}={value}" for key, value in tags.items())
