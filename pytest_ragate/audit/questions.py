"""The rules over question texts: exact duplicates (the same text once folded, NFKC as
`ragate validate` folds it, with the same numbers and ordinals) and near duplicates (embedding
neighbours through all-MiniLM-L6-v2 that name the same names, numbers and ordinals).

Pure functions of the questions and, for near duplicates, their unit vectors; each returns
findings on the later question, naming the first."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pytest_ragate.audit.findings import Finding, finding
from pytest_ragate.audit.texts import content_stems, numbers, question_key
from pytest_ragate.wording import audit as wording

NEAR = 0.75  # cosine at or above which two questions naming the same things are one
SAME_WORDS = 0.7  # and the Jaccard share of content words they must have in common
# a name or an initial (numbers and ordinals are `texts.numbers`'): two questions that differ
# in one ask different things ("What did A think…" and "What did C think…" are not duplicates)
_MARKER = re.compile(r"(?<!^)\b[A-Z][\w'-]*")


@dataclass(frozen=True, kw_only=True)
class Asked:
    """One question as these rules read it: its id, text and where it is written."""

    question_id: str
    text: str
    path: Path
    line: int


def duplicates(questions: Sequence[Asked]) -> list[Finding]:
    """Each question whose folded text an earlier question has."""
    first: dict[str, Asked] = {}
    found = []
    for q in questions:
        key = question_key(q.text)
        if key in first:
            seen = first[key]
            found.append(finding("duplicate_question",
                                 wording.duplicate_question(seen.question_id, seen.line),
                                 path=q.path, line=q.line, question_id=q.question_id,
                                 other=seen.question_id))
        else:
            first[key] = q
    return found


def markers(text: str) -> frozenset[str]:
    """The names, initials, numbers and ordinals a question names (names: not its first
    word; numbers and ordinals as `texts.numbers` reads them, `3rd` and `third` alike)."""
    return frozenset(m.casefold() for m in _MARKER.findall(text.strip())
                     if m.casefold() not in ("i",)) | frozenset(
        "#" + n for n in numbers(text))


def topic_words(text: str) -> set[str]:
    """A question's content stems but for the names it names (its `markers`): what it asks
    about, whoever it asks about."""
    named = {s for m in markers(text) for s in content_stems(m)}
    return set(content_stems(text)) - named


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def near_duplicates(questions: Sequence[Asked], vectors: np.ndarray,
                    threshold: float = NEAR) -> list[Finding]:
    """Each question whose nearest earlier neighbour is at least `threshold` alike and names
    the same things (exact duplicates are the other rule's)."""
    if len(questions) < 2:
        return []
    keys = [question_key(q.text) for q in questions]
    names = [markers(q.text) for q in questions]
    words = [topic_words(q.text) for q in questions]
    sims = vectors @ vectors.T
    found = []
    for j in range(1, len(questions)):
        row = sims[j, :j]
        for i in np.argsort(-row)[:10]:
            cosine = float(row[i])
            if cosine < threshold:
                break
            if keys[i] == keys[j] or names[i] != names[j] \
                    or _jaccard(words[i], words[j]) < SAME_WORDS:
                continue
            first = questions[int(i)]
            found.append(finding("near_duplicate",
                                 wording.near_duplicate(first.question_id, cosine),
                                 path=questions[j].path, line=questions[j].line,
                                 question_id=questions[j].question_id, measure=cosine,
                                 other=first.question_id))
            break
    return found
