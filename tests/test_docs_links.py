"""The docs' links lead somewhere: every relative link of README.md and docs/*.md names a file
that exists and, with `#anchor`, a heading of that file (GitHub's slugs). README is short and
points into docs/ for everything else, so a moved or renamed section must not strand a
reader. Fast tier: text only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
CODE = re.compile(r"`[^`\n]*`")  # inline code: `[x](…)` there is an example, not a link


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces
    to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def broken(page: Path) -> list[str]:
    """The relative links of `page` that lead nowhere."""
    found = []
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        unknown = file.exists() and anchor and file.suffix == ".md" and anchor not in anchors(file)
        if not file.exists() or unknown:
            found.append(target)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    assert broken(page) == []


def test_the_check_sees_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Its `section`: one\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#its-section-one) [gone](c.md#x) [no](a.md#nothing) "
                    "[web](https://x.y) `[code](d.md)`\n")
    assert broken(page) == ["c.md#x", "a.md#nothing"]


def test_readme_takes_a_newcomer_to_a_first_run_in_150_lines() -> None:
    """README: install, a first goldset, the system, the first green run, floors, CI and
    links; everything else is reference in docs/."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "def ragate_system" in text and "ragate init" in text
