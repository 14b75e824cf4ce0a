"""Print pytest-ragate's layout: one line per module, its part and the first sentence of its
docstring (what the module holds). `python scripts/layout.py` from the repository's root; the
architecture test holds that every module has such a sentence and that docs/architecture.md
names every module."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_ragate"


def first_sentence(path: Path) -> str | None:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        return None
    text = " ".join(doc.split("\n\n")[0].split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return match.group(1) if match else text


def modules() -> list[Path]:
    """Packages first within each folder, then modules by name."""
    return sorted(PACKAGE.rglob("*.py"), key=lambda p: (p.parent.relative_to(PACKAGE).parts,
                                                         p.name != "__init__.py", p.name))


def main() -> None:
    for path in modules():
        name = path.relative_to(PACKAGE.parent).as_posix()
        print(f"{name:44} {first_sentence(path) or '(no docstring)'}")


if __name__ == "__main__":
    main()
