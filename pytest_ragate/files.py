"""Reading user files as UTF-8 (naming what is wrong when they are not), line-numbered JSONL
into pydantic models, and writing files atomically (never over a device or a pipe)."""

from __future__ import annotations

import codecs
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from pytest_ragate.problems import Problem, problems_from_validation

M = TypeVar("M", bound=BaseModel)


class UnreadableText(Exception):
    """A user file that is not plain UTF-8; the message says where and what to do."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message

    @property
    def problem(self) -> Problem:
        return Problem(self.path, "<file>", self.message)


def encoding_problem(data: bytes) -> str | None:
    """Why these bytes are not a UTF-8 text file without a byte-order mark, or None.

    A BOM is refused rather than skipped: JSON and TOML forbid it, and a file saved with one
    by an editor is best fixed where it was saved."""
    for bom, name in ((codecs.BOM_UTF8, "UTF-8"), (codecs.BOM_UTF16_LE, "UTF-16"),
                      (codecs.BOM_UTF16_BE, "UTF-16")):
        if data.startswith(bom):
            return (f"starts with a {name} byte-order mark (BOM): save it as UTF-8 without "
                    "a BOM")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        return (f"is not UTF-8: byte 0x{data[error.start]:02x} at line {line}, column "
                f"{column} (save it as UTF-8)")
    return None


def decode(path: Path, data: bytes) -> str:
    problem = encoding_problem(data)
    if problem:
        raise UnreadableText(path, problem)
    return data.decode("utf-8")


def read_text(path: Path) -> str:
    """The file's text; UnreadableText when it is not UTF-8 or starts with a BOM."""
    return decode(path, path.read_bytes())


def read_lines(path: Path) -> list[str]:
    """Lines split on '\\n' only, so a stray form feed or U+2028 never shifts a position."""
    text = read_text(path)
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
    try:
        lines = read_lines(path)
    except UnreadableText as error:
        return [], [error.problem]
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
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
                detail = lone_surrogate(line) or f"malformed JSON ({error.errors()[0]['msg']})"
                problems.append(Problem(path, "<json>", detail, line=lineno))
            else:
                problems.extend(problems_from_validation(
                    error, path, line=lineno, question_id=_raw_id(line, id_field)))
    return rows, problems


_SURROGATE_ESCAPE = re.compile(r"(\\+)u(d[89a-f][0-9a-f]{2})", re.IGNORECASE)


def lone_surrogate(line: str) -> str | None:
    """What is wrong with a JSON line holding half of a surrogate pair as an escape
    (`"\\ud83d"`, an emoji cut in two, which no UTF-8 text can hold), or None: where it is
    and what to do. A goldset's text is its author's: refused, never changed."""
    escapes = [m for m in _SURROGATE_ESCAPE.finditer(line) if len(m[1]) % 2]  # not `\\u…`
    for k, found in enumerate(escapes):
        high = int(found[2], 16) < 0xDC00
        after = escapes[k + 1] if k + 1 < len(escapes) else None
        before = escapes[k - 1] if k else None
        paired = (after is not None and after.start() == found.end()
                  and int(after[2], 16) >= 0xDC00) if high else (
                  before is not None and before.end() == found.start()
                  and int(before[2], 16) < 0xDC00)
        if not paired:
            return (f"column {found.end() - 5}: \\u{found[2]} is half of a surrogate pair (an "
                    "emoji or a rare character cut in two), which no text can hold: write the "
                    "whole character, or remove the half")
    return None


def _raw_id(line: str, id_field: str | None) -> str | None:
    if id_field is None:
        return None
    try:
        value = json.loads(line).get(id_field)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def special_file(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file (a folder, a device, a pipe, a
    socket), following links; None for a regular file or nothing at all."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    for test, kind in ((stat.S_ISREG, None), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


WRITTEN_THROUGH = ("a character device", "a named pipe")  # /dev/null, /dev/stdout, >(cmd)


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write through a temp file in the same directory and rename, so no reader sees half.
    Text is written as UTF-8. A link's target is replaced, not the link; a character device
    or a pipe (`/dev/null`, `/dev/stdout`) is written through, never renamed over; any other
    path that is not a regular file is refused (OSError). The file gets the mode `open()`
    would leave: an existing file's own (a goldset file `ragate pin` rewrites, kept private,
    stays private), else the umask's."""
    payload = data.encode() if isinstance(data, str) else data
    kind = special_file(path)
    if kind in WRITTEN_THROUGH:
        with open(path, "wb") as handle:
            handle.write(payload)
        return
    if kind is not None:
        raise OSError(f"{path} is {kind}, not a file to write")
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600; give it what open() would
        os.fchmod(fd, _mode_of(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_of(path: Path) -> int:
    """The mode `open(path, "w")` leaves: an existing file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def remove_regular(path: Path) -> bool:
    """Remove the regular file `path` names (a link's target, not the link), as a run does
    with the outputs it will write; anything else (a device, a pipe, a folder) is left
    alone. True when a file was removed."""
    if special_file(path) is not None or not path.exists():
        return False
    Path(os.path.realpath(path)).unlink(missing_ok=True)
    return True
