"""What the judge cache folder holds beside the verdicts: the prompt-hash memo and the index
of the last answer each question's verdicts were keyed by.

The folder is one diskcache (`runner.py`); verdicts are stored under their sha256 keys, and
these two under keys that no sha256 can equal (a prefix and JSON):

* the memo, `prompt/<prompt version>`: a judge's `prompt_hash(metric)` under the cheap text
  it is computed from (`ragas_deferred.prompt_version`: ragas's and pydantic's versions, the
  metric, our RAGAS module's bytes), so a run whose every verdict is cached computes its
  keys without importing RAGAS. Another version is another key: never served.
* the index, `index/[goldset, question, repeat, judge]`: the key of each metric's verdict the
  last time that question was judged (the judge named by `judge_identity`: its id with
  credentials masked, and a digest that still tells judges apart; an index written when keys
  named the judge in full is re-keyed once, `migrate_index`), a stamp of everything else the
  keys were computed from, and the lengths of the answer's sentences and of the contexts, so
  `ragate plan` can say which verdicts an unchanged system would find in the cache and
  estimate the tokens of the others. Lengths, never texts: the folder is often committed for
  `--ragate-cache replay`, and what a system answered or retrieved is the user's own.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from pytest_ragate.answer import keyed_digest
from pytest_ragate.redaction import Redactor, known_credentials, redact_url_credentials

MEMO_PREFIX = "prompt/"
INDEX_PREFIX = "index/"
INDEX_VERSION = "index-version"  # set once the index names judges by `judge_identity`
REKEYED = "index-rekeyed"  # how many entries were re-keyed, until a run has said so
_IDENTITY = re.compile(r" sha256:[0-9a-f]{16}$")


def memo_key(prompt_version: str) -> str:
    return MEMO_PREFIX + prompt_version


def judge_identity(judge_id: str) -> str:
    """How the cache names a judge: its id with every credential masked (a key inside the
    model's name, a URL's user and password, the environment's keys: `redaction.py`), then
    a digest of the id (its URL's credentials left out, as a verdict's key leaves them), so
    two judges the mask makes alike are still told apart: `ragas:gpt-x-*** sha256:1a2b…`."""
    shown = Redactor(known=known_credentials())(judge_id)
    digest = hashlib.sha256(redact_url_credentials(judge_id).encode()).hexdigest()[:16]
    return f"{shown} sha256:{digest}"


def index_key(goldset: str, question_id: str, repeat: int, judge_id: str) -> str:
    return INDEX_PREFIX + json.dumps([goldset, question_id, repeat, judge_identity(judge_id)])


def migrate_index(cache: Any) -> int:
    """Re-key, in one transaction, the index entries written when their keys named the judge
    in full (a key in its model's name included) under `judge_identity`; how many (kept
    under `REKEYED` too, for the run's controller to say: `said_rekeyed`). Done once: the
    folder is marked (`INDEX_VERSION`) and later calls read one key."""
    if cache.get(INDEX_VERSION) == 2:
        return 0
    moved = 0
    cache.reset("sqlite_secure_delete", 1, update=False)  # a deleted key leaves no bytes behind
    with cache.transact():
        for key in [k for k in cache.iterkeys()
                    if isinstance(k, str) and k.startswith(INDEX_PREFIX)]:
            try:
                goldset, question_id, repeat, judge_id = json.loads(key[len(INDEX_PREFIX):])
            except (ValueError, TypeError):
                continue
            if not isinstance(judge_id, str) or _IDENTITY.search(judge_id):
                continue
            value = cache.get(key)
            if value is not None:
                cache.set(index_key(goldset, question_id, repeat, judge_id), value)
                moved += 1
            cache.delete(key)
        cache.set(INDEX_VERSION, 2)
        if moved:
            cache.set(REKEYED, moved)
    return moved


def said_rekeyed(cache: Any) -> int:
    """How many index entries a process of this run (or an earlier command) re-keyed that no
    run has said yet; 0 once said."""
    moved = cache.pop(REKEYED, 0)
    return moved if isinstance(moved, int) else 0


def stamp(*, eval_version: str, judge_id: str, params: Mapping[str, Any],
          prompt_versions: Mapping[str, str], question: str, reference: str | None,
          repeat: int, key: bytes | None = None) -> str:
    """What a question's keys depend on besides its answer and contexts: when a plan's stamp
    differs from the index's (a new eval_version, judge, RAGAS, question or gist), the keys
    the index holds are not the keys the run would compute. Keyed with a sealed goldset's
    digest key (`key`, answer.py `keyed_digest`): it covers the sealed gist."""
    material = {"eval_version": eval_version, "judge": judge_id, "params": dict(params),
                "prompts": dict(prompt_versions), "question": question,
                "reference": reference, "repeat": repeat}
    return keyed_digest(json.dumps(material, sort_keys=True, ensure_ascii=False,
                                   default=str).encode(), key)


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
