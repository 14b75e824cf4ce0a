"""Where a run keeps texts from a judge or a system, they pass through this process's
`Redactor` (`redaction.py` says what it masks and with what): a question's row (hence its JUnit
properties, the results file, the reports and the history), an anchor's outcome, and the
failure text and captured output of a goldset item's reports (the terminal, JUnit, and the
`why` a results file keeps of a failed item).

Each process redacts what it makes, so under xdist the workers, which open the sealed
answers, redact before anything crosses to the controller.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from pytest_ragate.answer import answer_sha256
from pytest_ragate.items.keys import ANCHOR_ATTR, GOLDSETS_KEY
from pytest_ragate.items.pytest_internals import redacted_repr
from pytest_ragate.redaction import Redactor, known_credentials, visible
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.settings import Settings, read_settings

M = TypeVar("M", bound=BaseModel)
REDACTOR_KEY = pytest.StashKey[tuple[int, Redactor]]()
# what a row or an anchor says of the goldset itself: names and ids, never a judge's or a
# system's words (a short gist must not blank out a question id that spells it)
RECORD_AS_IS = frozenset({"goldset", "route", "question_id", "repeat", "question", "kind",
                          "index", "eval_version", "goldset_sha256", "expected"})
ANCHOR_AS_IS = frozenset({"goldset", "anchor_id", "kind", "claim", "path", "definition"})


def redactor(config: pytest.Config) -> Redactor:
    """This process's redactor: the sealed texts of every goldset it loaded, the credentials
    of its environment and its settings (`credentials_of`). Made again when another goldset
    loads."""
    goldsets = config.stash.get(GOLDSETS_KEY, {})
    held = config.stash.get(REDACTOR_KEY, None)
    if held is None or held[0] != len(goldsets):
        sealed = tuple(text for goldset in goldsets.values() for text in goldset.sealed_texts)
        known = credentials_of(read_settings(config))
        held = config.stash[REDACTOR_KEY] = (len(goldsets), Redactor(sealed, known))
    return held[1]


def credentials_of(settings: Settings) -> tuple[str, ...]:
    """The credentials of this process's environment and of its settings: the judge's and
    Chroma's URLs, and what is shaped like one in the judge's and the answerer's model."""
    judge = settings.judge
    return known_credentials(urls=(judge.judge_url, settings.pipeline.chroma_url),
                             texts=(judge.judge, judge.judge_model, judge.answerer_model))


def without_credentials(settings: Settings, values: dict[str, Any]) -> dict[str, Any]:
    """Settings as an output may show them (a results header): each text with the
    credentials `credentials_of` knows, and those the rules find, masked."""
    return scrubbed(values, Redactor(known=credentials_of(settings)), frozenset())


_NO_TEXT = frozenset({int, float, bool, type(None)})  # most of a row: nothing to look at


def _scrub(value: Any, redact: Callable[[str], str]) -> Any:
    if type(value) in _NO_TEXT:
        return value
    if isinstance(value, str):
        return redact(visible(value)[0])
    if isinstance(value, list):
        return [_scrub(v, redact) for v in value]
    if isinstance(value, dict):
        return {visible(k)[0] if isinstance(k, str) else k: _scrub(v, redact)
                for k, v in value.items()}
    return value


def _masks(value: Any, redact: Callable[[str], str]) -> bool:
    """Whether `_scrub` would change `value`: found without building its copy. (Called on
    every text of every row: a text's type is asked first, and a text that is already
    visible, nearly every one, is the same object `visible` returns.)"""
    kind = type(value)
    if kind is str or isinstance(value, str):
        return visible(value)[0] is not value or (redact is not str and redact(value) != value)
    if kind is list or isinstance(value, list):
        return any(type(v) not in _NO_TEXT and _masks(v, redact) for v in value)
    if kind is dict or isinstance(value, dict):
        return any((isinstance(k, str) and visible(k)[0] is not k)
                   or (type(v) not in _NO_TEXT and _masks(v, redact))
                   for k, v in value.items())
    return False


def scrubbed(data: dict[str, Any], redact: Callable[[str], str], as_is: frozenset[str],
             ) -> dict[str, Any]:
    """`data` (a model as JSON) with every text but the fields `as_is` redacted, and every
    text one each output can write (`redaction.visible`)."""
    return {k: v if type(v) in _NO_TEXT else _scrub(v, str if k in as_is else redact)
            for k, v in data.items()}


def redacted_record(config: pytest.Config, record: M) -> M:
    """A question's row as it may be kept (`kept`), with this process's redactor and, in a
    sealed goldset, its answer digests' key."""
    return kept(record, redactor(config),
                key=digest_key(config, getattr(record, "goldset", None)))


def kept(record: M, redact: Callable[[str], str], *, key: bytes | None = None) -> M:
    """A row as it may be kept: the same object when there was nothing to mask. A masked
    answer keeps the digest of the raw one (`answer_sha256`): two answers that mask alike are
    still two answers to a label or a fixture verdict. In a sealed goldset that digest is
    keyed (`key`, its `digest_key`): a plain sha256 would confirm a guess of the raw text.
    The characters of its texts no output could write (an error message's, a judge's reply)
    are replaced and added to its `unencodable` count (the answer's were, as it entered)."""
    data = record.row_json() if isinstance(record, QuestionRecord) else (
        record.model_dump(mode="json"))
    for name, value in data.items():
        if type(value) not in _NO_TEXT and _masks(value, str if name in RECORD_AS_IS
                                                  else redact):
            break
    else:  # nearly every row: nothing to mask
        return record
    clean = scrubbed(data, redact, RECORD_AS_IS)
    if clean == data:
        return record
    raw = data.get("answer_text")
    if isinstance(raw, str) and clean.get("answer_text") != raw:
        clean["answer_sha256"] = answer_sha256(raw, key)
    replaced = unencodable_in(data)
    if replaced and "unencodable" in type(record).model_fields:
        clean["unencodable"] = (data.get("unencodable") or 0) + replaced
    return type(record).model_validate(clean)


def unencodable_in(value: Any) -> int:
    """How many characters of the texts in `value` (a model as JSON) no output could write."""
    if isinstance(value, str):
        return visible(value)[1]
    if isinstance(value, list):
        return sum(map(unencodable_in, value))
    if isinstance(value, dict):
        return sum(unencodable_in(k) + unencodable_in(v) for k, v in value.items())
    return 0


def digest_key(config: pytest.Config, name: object) -> bytes | None:
    """The answer digests' key of the goldset named `name` this process loaded: a sealed one
    opened with its key has one (goldsets/sealed.py `digest_key`), any other none."""
    return next((g.digest_key for g in config.stash.get(GOLDSETS_KEY, {}).values()
                 if g.name == name and g.digest_key is not None), None)


def redact_report(config: pytest.Config, report: pytest.TestReport | pytest.CollectReport,
                  ) -> None:
    """A report as it may be shown and sent: its failure or skip text, its captured output,
    and the anchor outcome it carries."""
    redact = redactor(config)
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        report.longrepr = (longrepr[0], longrepr[1], redact(str(longrepr[2])))
    elif longrepr is not None:
        report.longrepr = redacted_repr(longrepr, redact)
    report.sections = [(title, redact(body)) for title, body in report.sections]
    anchor = getattr(report, ANCHOR_ATTR, None)
    if anchor is not None:
        setattr(report, ANCHOR_ATTR, scrubbed(anchor, redact, ANCHOR_AS_IS))
