"""Problems found in user input, each pointing at a file, a line or question id, and a field.

Loading collects every problem it can before failing, so one run shows the whole list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True)
class Problem:
    path: Path
    field: str
    message: str
    line: int | None = None
    question_id: str | None = None

    def to_json(self) -> dict[str, str | int | None]:
        """As it crosses from an xdist worker to the controller (a collect report's
        attribute: plain JSON types)."""
        return {"path": str(self.path), "field": self.field, "message": self.message,
                "line": self.line, "question_id": self.question_id}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Problem:
        return cls(Path(data["path"]), str(data["field"]), str(data["message"]),
                   line=data.get("line"), question_id=data.get("question_id"))

    def __str__(self) -> str:
        where = str(self.path) if self.line is None else f"{self.path}:{self.line}"
        who = f" [{self.question_id}]" if self.question_id else ""
        return f"{where}:{who} {self.field}: {self.message}"


class GoldsetError(Exception):
    """Raised with every problem found; its text is one problem per line."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def renamed_once(problems: list[Problem]) -> list[Problem]:
    """A name renamed before 0.1 (`first_turn was renamed first_unit`), or a form written
    before 0.1, is one problem per file and message, at its first place, counting the others:
    a file written with the old names says so once, not once per line."""
    counts = Counter((p.path, p.message) for p in problems
                     if " was renamed " in p.message or " before 0.1 " in p.message)
    kept: list[Problem] = []
    for problem in problems:
        key = (problem.path, problem.message)
        if key in counts and counts[key] > 1:
            kept.append(replace(problem, message=f"{problem.message} (and {counts[key] - 1} "
                                "more like it)"))
            counts[key] = 0  # said: the others are dropped
        elif counts.get(key) != 0:
            kept.append(problem)
    return kept


def format_loc(loc: tuple[int | str, ...]) -> str:
    """('evidence', 0, 'last_unit') -> 'evidence[0].last_unit'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def problems_from_validation(
    error: ValidationError,
    path: Path,
    *,
    line: int | None = None,
    question_id: str | None = None,
    prefix: str = "",
) -> list[Problem]:
    """One Problem per pydantic error, the field written as a dotted path."""
    problems = []
    for err in error.errors(include_url=False):
        loc = format_loc(err["loc"])
        field = f"{prefix}.{loc}" if prefix and loc else (prefix or loc or "<record>")
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        problems.append(Problem(path, field, message, line=line, question_id=question_id))
    return problems
