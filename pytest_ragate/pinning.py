"""`ragate pin GOLDSET` and `ragate reanchor GOLDSET [--write]`: fingerprints added to the
expected evidence spans that lack one, and the unit ranges of pinned spans whose text moved
rewritten where it is now (goldsets/pins.py, goldsets/pinned.py).

Both read a `.jsonl` file of answers as the loader does (files.read_lines): lines end at
'\n' only, so a JSON string holding U+2028, U+0085 or a form feed is one line's text, never
a line break.

Only the lines (a `.jsonl` file) or files (a folder of `<question_id>.json`) that change are
rewritten, and in them only the evidence entries concerned: every other field keeps its value
and order, and the line its JSON layout (ASCII escapes, separators, indentation as found). A
file is written whole through the one atomic writer, and only if it still holds the bytes it
was read from (an edit made meanwhile is never overwritten: nothing is written, and the
command says so). A sealed goldset's answers are changed the same way in memory and sealed
again with RAGATE_SEAL_KEY (goldsets/sealing.reseal_answers), its lines saying how many spans
moved, never where; without the key it is refused and nothing changes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragate.files import write_atomic
from pytest_ragate.goldsets.config import EvidenceEntry, Expected
from pytest_ragate.goldsets.loader import Goldset, load_goldset
from pytest_ragate.goldsets.pinned import hold, pinned_entry
from pytest_ragate.goldsets.pins import CorpusText, Unpinnable

_LINES = re.compile(r"(?<=\n)")  # after each '\n' only, as files.read_lines splits


class PinningError(Exception):
    """Nothing was written: the message says why."""


@dataclass
class Pinning:
    """What a pin or reanchor pass found and did: one line per change or problem, the files
    it wrote (none on a dry run)."""

    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    changes: int = 0
    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said after the count (a new digest)


@dataclass(frozen=True)
class _Source:
    """One file of expected answers as read: its bytes, and each answer's place in it."""

    path: Path
    data: bytes
    folder: bool  # a `<question_id>.json` file (else a `.jsonl` file of lines)


def _sources(goldset: Goldset) -> list[_Source]:
    path = goldset.root / goldset.config.questions.expected
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    return [_Source(f, f.read_bytes(), path.is_dir()) for f in files]


def _layout(text: str, folder: bool) -> dict[str, Any]:
    """json.dumps's arguments that give back `text`'s own layout."""
    indent = None
    if folder and "\n" in text.strip():
        second = text.strip().split("\n")[1]
        indent = len(second) - len(second.lstrip()) or None
    compact = '": ' not in text and '", ' not in text
    return {"ensure_ascii": text.isascii(), "indent": indent,
            "separators": (",", ":") if compact and indent is None else None}


def _rewrite(text: str, folder: bool, change: Any) -> str | None:
    """`text` (one answer) with `change` applied to its parsed JSON, in its own layout; None
    when `change` changed nothing."""
    answer = json.loads(text)
    if not change(answer):
        return None
    body = json.dumps(answer, **_layout(text, folder))
    lead = text[:len(text) - len(text.lstrip())]  # a sealed line keeps the blanks before it
    return lead + body + text[len(text.rstrip("\r\n")):]


def _edit(goldset: Goldset, change: Any, write: bool, done: Pinning) -> None:
    """Apply `change(answer_dict) -> bool` to every answer; write the files that changed."""
    if goldset.sealed:
        _edit_sealed(goldset, change, write, done)
        return
    for source in _sources(goldset):
        text = source.data.decode("utf-8-sig")
        pieces = [text] if source.folder else _LINES.split(text)
        changed = False
        for i, piece in enumerate(pieces):
            if piece.strip():
                new = _rewrite(piece, source.folder, change)
                if new is not None:
                    pieces[i], changed = new, True
        if changed and write:
            if source.path.read_bytes() != source.data:
                raise PinningError(f"{source.path} changed while it was being read; nothing "
                                   "written to it: run the command again")
            write_atomic(source.path, "".join(pieces))
            done.written.append(source.path)


def _edit_sealed(goldset: Goldset, change: Any, write: bool, done: Pinning) -> None:
    """A sealed goldset's answers changed in memory and sealed again with RAGATE_SEAL_KEY
    (goldsets/sealing.reseal_answers: no plaintext on disk); without the key, refused."""
    from pytest_ragate.goldsets.sealed import KEY_ENV, SealError, locate_sealed, read_sealed
    from pytest_ragate.goldsets.sealing import reseal_answers

    key = os.environ.get(KEY_ENV, "")
    if not key:
        raise PinningError(f"{goldset.config_path}: the expected answers are sealed; nothing "
                           f"changed ({KEY_ENV} is not set: set it to the goldset's "
                           "passphrase to change them sealed)")

    def one(raw: bytes, folder: bool) -> bytes | None:
        new = _rewrite(raw.decode("utf-8-sig"), folder, change)
        return None if new is None else new.encode("utf-8")

    try:
        changed = reseal_answers(goldset.root, key, one, write=write)
    except SealError as error:
        raise PinningError(f"{error}; nothing changed") from None
    if changed and write:
        path = locate_sealed(goldset.root, goldset.config.questions.expected)
        done.written.append(path)
        done.notes.append(f"manifest digest {read_sealed(path).manifest_digest} (the sealed "
                          "file changed: pin it again, ragate seal --verify --pin)")


def pin_goldset(config: Path) -> Pinning:
    """Pins added to every evidence span that has none, of the corpus as it is now."""
    goldset = load_goldset(config)
    text = CorpusText(goldset.corpus)
    done = Pinning()

    def change(answer: dict[str, Any]) -> bool:
        changed = False
        for i, raw in enumerate(answer.get("evidence") or []):
            entry = EvidenceEntry.model_validate(raw)
            if entry.last_unit is None or entry.pin is not None:
                continue
            try:
                raw["pin"] = pinned_entry(entry, text).pin.model_dump()  # type: ignore[union-attr]
            except Unpinnable as why:  # a sealed span's place is not shown
                reason = "cannot be pinned (why not shown: sealed)" if goldset.sealed else why
                done.problems.append(f"{answer.get('question_id')}: evidence[{i}]: {reason}")
                continue
            done.changes += 1
            changed = True
        return changed

    _edit(goldset, change, write=True, done=done)
    return done


def reanchor_goldset(config: Path, *, write: bool) -> Pinning:
    """Every pinned span whose text moved, re-anchored where its text is now (written with
    `write`); the stale ones named, as they cannot be."""
    goldset = load_goldset(config)
    text = CorpusText(goldset.corpus)
    done = Pinning()

    def change(answer: dict[str, Any]) -> bool:
        held = hold(Expected.model_validate(answer), text, sealed=goldset.sealed)
        qid = answer.get("question_id")
        done.lines += [f"{qid}: {line}" for line in held.moved]
        done.problems += [f"{qid}: {line}" for line in held.stale]
        for i, (doc_id, first, last) in held.moves:
            raw = answer["evidence"][i]
            raw["doc_id"], raw["first_unit"], raw["last_unit"] = doc_id, first, last
            done.changes += 1
        return bool(held.moves)

    _edit(goldset, change, write=write, done=done)
    return done
