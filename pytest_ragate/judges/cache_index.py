"""What the judge cache folder holds beside the verdicts: the prompt-hash memo and the index
of the last answer each question's verdicts were keyed by.

The folder is one diskcache (`runner.py`); verdicts are stored under their sha256 keys, and
these two under keys that no sha256 can equal (a prefix and JSON):

* the memo, `prompt/<prompt version>`: a judge's `prompt_hash(metric)` under the cheap text
  it is computed from (`ragas_deferred.prompt_version`: ragas's and pydantic's versions, the
  metric, our RAGAS module's bytes), so a run whose every verdict is cached computes its
  keys without importing RAGAS. Another version is another key: never served.
* the index, `index/[goldset, question, repeat, judge]`: the key of each metric's verdict the
  last time that question was judged, a stamp of everything else the keys were computed
  from, and the lengths of the answer's sentences and of the contexts, so `ragate plan` can
  say which verdicts an unchanged system would find in the cache and estimate the tokens of
  the others. Lengths, never texts: the folder is often committed for `--ragate-cache
  replay`, and what a system answered or retrieved is the user's own.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

MEMO_PREFIX = "prompt/"
INDEX_PREFIX = "index/"


def memo_key(prompt_version: str) -> str:
    return MEMO_PREFIX + prompt_version


def index_key(goldset: str, question_id: str, repeat: int, judge_id: str) -> str:
    return INDEX_PREFIX + json.dumps([goldset, question_id, repeat, judge_id])


def stamp(*, eval_version: str, judge_id: str, params: Mapping[str, Any],
          prompt_versions: Mapping[str, str], question: str, reference: str | None,
          repeat: int) -> str:
    """What a question's keys depend on besides its answer and contexts: when a plan's stamp
    differs from the index's (a new eval_version, judge, RAGAS, question or gist), the keys
    the index holds are not the keys the run would compute."""
    material = {"eval_version": eval_version, "judge": judge_id, "params": dict(params),
                "prompts": dict(prompt_versions), "question": question,
                "reference": reference, "repeat": repeat}
    return hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False,
                                     default=str).encode()).hexdigest()


class IndexEntry(BaseModel):
    """One question's last judged verdicts: read back checked (the folder is a file tree)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: dict[str, str]  # metric -> the verdict's cache key
    stamp: str
    embedder: str = ""  # the embedder answer relevance's prompt version names
    sentences: list[int]  # the answer's sentences' lengths (characters): for estimating tokens
    contexts: list[int]  # the contexts' lengths (characters), in rank order


def read_entry(raw: object) -> IndexEntry | None:
    """An index entry, or None when it is missing or not one (then every verdict counts as a
    miss: a plan never reports a saving it cannot show)."""
    if raw is None:
        return None
    try:
        return IndexEntry.model_validate(raw)
    except ValidationError:
        return None


def sentences(text: str) -> list[str]:
    """The NLI step's statements, estimated as the answer's sentences."""
    found = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    return found or [text]


def stand_in(lengths: list[int]) -> str:
    """A text of these sentences' lengths: what the plan renders a prompt with in place of
    an answer the index keeps only the shape of."""
    return " ".join("x" * max(n - 1, 0) + "." for n in lengths)
