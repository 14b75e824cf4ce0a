"""What `ragate stamp` holds a sealed goldset's stamps to.

In a sealed goldset every digest a label or a verdict is bound by is keyed (answer.py
`keyed_digest`, under the goldset's `digest_key`): a plain sha256 of a short gist or of a
masked answer would let anyone holding the file confirm a guess of it. So a stamp taken from a
results file of a sealed question must be keyed (a run made with RAGATE_SEAL_KEY set), and a
label stamped with plain digests before they were keyed is bound again only where both of its
digests are checked: its answer's against an answer RESULTS shows, its expected answer's
against the goldset's, opened with the key (`SealedLabels`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ragate.answer import answer_sha256, is_keyed
from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.scoring.records import QuestionRecord

ABOVE = 3  # how many folders above a labels file its goldset's ragate.toml may be


class StampError(Exception):
    """A stamp refused as a whole: one line saying why and what to do."""


@dataclass(frozen=True)
class SealedLabels:
    """The sealed goldset a labels file belongs to, opened with its key: each question's
    expected-answer digest, plain (as labels were stamped before digests were keyed) and
    keyed."""

    root: Path
    expected: dict[str, tuple[str, str]]


def goldset_of(labels_file: Path) -> Path | None:
    """The goldset directory whose `[judge] labels` is this file (its folder or one up to
    ABOVE folders above it), or None."""
    from pytest_ragate.goldsets.config import read_config
    from pytest_ragate.problems import GoldsetError

    target = labels_file.resolve()
    for folder in list(target.parents)[:ABOVE + 1]:
        toml = folder / CONFIG_NAME
        if not toml.is_file():
            continue
        try:
            labels = read_config(toml).judge.labels
        except GoldsetError:
            continue
        if labels is not None and (folder / labels).resolve() == target:
            return folder
    return None


@functools.cache
def sealed_labels(labels_file: Path) -> SealedLabels:
    """The sealed goldset of `labels_file`, opened with RAGATE_SEAL_KEY; StampError (one
    line) when it cannot be found, the key is not set, or the goldset does not load."""
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.goldsets.sealed import KEY_ENV
    from pytest_ragate.problems import GoldsetError
    from pytest_ragate.scoring.answer_match import expected_sha256

    root = goldset_of(labels_file)
    if root is None:
        raise StampError(f"{labels_file}: labels stamped with plain digests of a sealed "
                         f"goldset are bound again against the goldset, and no {CONFIG_NAME} "
                         "whose [judge] labels is this file was found above it")
    if not os.environ.get(KEY_ENV):
        raise StampError(f"{labels_file}: the labels of the sealed goldset {root} are bound "
                         f"by keyed digests: set {KEY_ENV} to its passphrase to stamp them")
    try:
        goldset = load_goldset(root)
    except GoldsetError as error:
        raise StampError(f"{root}: does not load ({error.problems[0]})") from None
    key = goldset.digest_key
    return SealedLabels(root=root, expected={
        c.question.question_id: (expected_sha256(c.expected.gist, c.expected.facts,
                                                 c.expected.forbid),
                                 expected_sha256(c.expected.gist, c.expected.facts,
                                                 c.expected.forbid, key))
        for c in goldset.cases if c.expected is not None})


def sealed_question(qid: str, rows: Sequence[QuestionRecord]) -> bool:
    """Whether RESULTS says `qid`'s expected answer is sealed (its rows show no expected
    spans, as only a sealed goldset's do)."""
    return any(r.question_id == qid and r.expected is None for r in rows)


def unkeyed(digests: dict[str, str]) -> str:
    """Why digests taken from RESULTS for a sealed question cannot be stamped, or empty."""
    if all(is_keyed(d) for d in digests.values()):
        return ""
    return ("RESULTS holds plain digests for this sealed question (a run made without "
            "RAGATE_SEAL_KEY, or before sealed goldsets' digests were keyed): stamp from a run "
            "made with RAGATE_SEAL_KEY set")


def rebound(row: dict[str, Any], rows: Sequence[QuestionRecord], sealed: SealedLabels,
            ) -> tuple[dict[str, str] | None, str]:
    """A label of a sealed question stamped with plain digests, bound again with keyed ones:
    its answer's digest must be the plain sha256 of an answer RESULTS shows unmasked, its
    expected answer's (when it has one) the plain digest of the goldset's expected answer;
    else None and why."""
    from pytest_ragate.scoring.answer_match import label_digests

    qid = row["question_id"]
    plain, keyed = sealed.expected.get(qid, (None, None))
    if keyed is None:
        return None, "its expected answer is not in the sealed goldset"
    if row.get("expected_sha256") not in (None, plain):
        return None, ("stamped with plain digests and judged against another expected "
                      "answer: label it again from a run made with RAGATE_SEAL_KEY set")
    shown = [r for r in rows if r.question_id == qid and r.status == "scored"
             and r.answer_check is not None and r.answer_text is not None
             and r.answer_sha256 is None and answer_sha256(r.answer_text) == row["answer_sha256"]]
    if not shown:
        return None, ("stamped with plain digests of an answer RESULTS does not show (masked, "
                      "or not given in that run): label it again from a run made with "
                      "RAGATE_SEAL_KEY set")
    answer, expected = label_digests(shown[0])
    if not is_keyed(answer) or expected != keyed:
        return None, unkeyed({"answer": answer}) or (
            "RESULTS held this answer to another expected answer, or was run under another "
            "seal key: stamp from a run of the goldset as it is")
    return {"answer_sha256": answer, "expected_sha256": keyed}, ""
