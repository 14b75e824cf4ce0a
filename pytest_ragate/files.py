"""Reading line-numbered JSONL into pydantic models, and writing files atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from pytest_ragate.problems import Problem, problems_from_validation

M = TypeVar("M", bound=BaseModel)


def read_lines(path: Path) -> list[str]:
    """Lines split on '\\n' only, so a stray form feed or U+2028 never shifts a position."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def read_jsonl(path: Path, model: type[M], id_field: str | None = None,
               ) -> tuple[list[tuple[int, M]], list[Problem]]:
    """Each non-blank line validated as `model`, kept with its 1-based line number.

    A rejected line's problems carry its `id_field` value when it has one, so callers can
    tell a broken record from a missing one.
    """
    numbered = [(n, line) for n, line in enumerate(read_lines(path), start=1) if line.strip()]
    try:  # the common case, a valid file, in one validation call
        models = TypeAdapter(list[model]).validate_json(  # type: ignore[valid-type]
            "[" + ",".join(line for _, line in numbered) + "]")
        return [(n, m) for (n, _), m in zip(numbered, models, strict=True)], []
    except ValidationError:
        pass  # find every bad line, one by one
    rows: list[tuple[int, M]] = []
    problems: list[Problem] = []
    for lineno, line in numbered:
        try:
            rows.append((lineno, model.model_validate_json(line)))
        except ValidationError as error:
            if any(e["type"] == "json_invalid" for e in error.errors()):
                detail = error.errors()[0]["msg"]
                problems.append(Problem(path, "<json>", f"malformed JSON ({detail})", line=lineno))
            else:
                problems.extend(problems_from_validation(
                    error, path, line=lineno, question_id=_raw_id(line, id_field)))
    return rows, problems


def _raw_id(line: str, id_field: str | None) -> str | None:
    if id_field is None:
        return None
    try:
        value = json.loads(line).get(id_field)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def write_atomic(path: Path, text: str) -> None:
    """Write through a temp file in the same directory and rename, so no reader sees half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600; a report is published, so give it what open() would
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
