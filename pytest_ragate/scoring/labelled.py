"""What the judge said about the questions people labelled: the one reading that agreement
(agreement.py) and the prediction-powered estimate (ppi.py, decision/floors.py) share, so
neither can count a question the other names as missing.

A labelled question without a usable verdict is named with why, never left out: it errored,
was skipped, the judge failed on it, it abstained, or its label was stamped for another answer
than the one judged (`ragate stamp --labels`), which would compare a person's word on one answer
with a judge's on another.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pytest_ragate.answer import answer_sha256
from pytest_ragate.scoring.records import QuestionRecord


def judged_values(metric: str, records: Sequence[QuestionRecord],
                  stamps: Mapping[str, str] | None = None,
                  ) -> tuple[dict[str, float], dict[str, str]]:
    """The judge's `metric` per question (the mean of its repeats), and why each question
    without one has none. A question with a verdict in one repeat and none in another is
    missing: its figure would rest on part of its runs. `stamps` (question id → the sha256 of
    the answer its label was written for) makes a label of another answer stale."""
    stamps = stamps or {}
    values: dict[str, list[float]] = {}
    missing: dict[str, str] = {}
    for r in records:
        qid = r.question_id
        value = r.metrics.get(metric)
        stamp = stamps.get(qid)
        if r.status == "error":
            missing[qid] = f"errored: {r.error or 'no answer'}"
        elif r.status == "skipped":
            missing[qid] = f"skipped: {r.error or 'not run'}"
        elif stamp and (r.answer_text is None or raw_sha256(r) != stamp):
            missing[qid] = (f"stale label: written for another answer (answer_sha256 "
                            f"{stamp[:12]}…); label the new one, or `ragate stamp --labels`")
        elif metric in r.judge_failures:
            missing[qid] = f"judge failure: {r.judge_failures[metric]}"
        elif value is None and r.abstained:
            missing[qid] = "abstained: nothing for the judge to judge"
        elif value is None:
            missing[qid] = f"no {metric} verdict"
        else:
            values.setdefault(qid, []).append(float(value))
    return ({q: statistics.fmean(v) for q, v in values.items() if q not in missing}, missing)


def raw_sha256(record: QuestionRecord) -> str:
    """The sha256 of the answer a row records, as given (a masked answer's row keeps it),
    never of its masked text."""
    return record.answer_sha256 or answer_sha256(record.answer_text or "")
