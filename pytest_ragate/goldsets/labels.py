"""A goldset's human labels (`[judge] labels = "labels.jsonl"`): what people said about some
answers, per question and judged metric, that a judge is held to (scoring/agreement.py) and
that corrects its figures (scoring/ppi.py).

One JSON line per question and metric: `{"question_id": "q03", "metric": "faithfulness",
"verdict": 1}` or `"score": 0.75`; faithfulness may list its statements, `"statements":
[{"text": "…", "supported": true}]`, which must say what the verdict or score says. A metric's
labels are all verdicts (Cohen's kappa) or all scores (Spearman and MAE), so each metric has
one statistic.

`answer_match` labels settle answers `answer_match` was unsure of (scoring/answer_match.py):
a verdict, the `answer_sha256` of the raw answer it was written for (never of its masked text
in a sealed goldset) and the `expected_sha256` of the expected answer it was judged against
(its gist, facts and forbid: scoring/answer_match.expected_sha256), both stamped by `ragate
stamp --labels` from the run read. A person's word on one answer against one expected answer
says nothing of another: a change to either leaves the label stale. `answer_sha256` is
required; a label without `expected_sha256` predates it and still settles its answer, said
once, until `ragate stamp --labels` binds it. In a sealed goldset both digests are keyed
(`hmac-sha256:…`, answer.py `keyed_digest`); one stamped with plain digests predates that and
settles nothing (scoring/answer_match.settle). A question may have one label per answer.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from pytest_ragate.answer import DIGEST_PATTERN
from pytest_ragate.files import read_jsonl
from pytest_ragate.goldsets.config import _Model
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.answer_match import ANSWER_MATCH, AnswerLabel
from pytest_ragate.scoring.registry import METRICS, verdict_metrics
from pytest_ragate.scoring.rubrics import Rubric, is_rubric


def _zero_or_one(value: object) -> object:
    """A verdict is the number 0 or 1 (or absent): `true`, `1.0` or `"1"` are refused, not
    read as 1 (a strict reading: `true` may mean something else, `1.0` is a score)."""
    if value is not None and (type(value) is not int or value not in (0, 1)):
        raise ValueError(f"a verdict is 0 or 1, not {json.dumps(value)}")
    return value


class StatementLabel(_Model):
    text: Annotated[str, Field(min_length=1)]
    supported: bool


class LabelRow(_Model):
    """One line of the labels file."""

    question_id: Annotated[str, Field(min_length=1)]
    metric: str
    verdict: Annotated[Literal[0, 1] | None, BeforeValidator(_zero_or_one)] = None
    score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    statements: Annotated[list[StatementLabel], Field(min_length=1)] | None = None
    # sha256 of the answer text the person labelled (`ragate stamp --labels`): a label of
    # another answer is stale, and its question counts as labelled without a verdict
    answer_sha256: Annotated[str, Field(pattern=DIGEST_PATTERN)] | None = None
    # sha256 of the expected answer an answer_match label was judged against (gist, facts,
    # forbid): another expected answer leaves the label stale. In a sealed goldset both are
    # keyed (`hmac-sha256:…`, answer.py `keyed_digest`)
    expected_sha256: Annotated[str, Field(pattern=DIGEST_PATTERN)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _int_score(cls, data: object) -> object:
        """`"score": 1` is a score (strict mode would refuse an int for a float)."""
        if isinstance(data, dict) and type(data.get("score")) is int:
            return {**data, "score": float(data["score"])}
        return data

    @model_validator(mode="after")
    def _one_value(self) -> LabelRow:
        if (self.verdict is None) == (self.score is None):
            raise ValueError("a label has a verdict (0 or 1) or a score in [0, 1]: exactly "
                             "one of them")
        if self.statements is not None:
            share = sum(s.supported for s in self.statements) / len(self.statements)
            if self.score is not None and not math.isclose(share, self.score, abs_tol=1e-9):
                raise ValueError(f"statements: {share:.2f} of them supported, but the score "
                                 f"is {self.score:.2f}")
            if self.verdict is not None and self.verdict != int(share == 1.0):
                raise ValueError(f"statements: {share:.2f} of them supported, but the verdict "
                                 f"is {self.verdict} (1 means every statement is supported)")
        return self

    @property
    def value(self) -> float:
        return float(self.verdict) if self.verdict is not None else float(self.score or 0.0)


@dataclass(frozen=True)
class Label:
    """A human label as the gate reads it: `value` is the verdict (0/1) or the score."""

    question_id: str
    metric: str
    value: float
    binary: bool
    answer_sha256: str | None = None  # the answer it was written for, when stamped
    expected_sha256: str | None = None  # answer_match: the expected answer it judged against


def read_labels(path: Path, question_ids: set[str], config_path: Path, *,
                sealed: bool = False, rubrics: Mapping[str, Rubric] | None = None,
                ) -> tuple[list[Label], list[Problem]]:
    """The labels, or the problems of each bad line (file, line, question id, field): an
    unknown question or metric, a metric no judge gives, a duplicate, a metric mixing
    verdicts and scores, per-statement labels in a sealed goldset; a label of one of the
    goldset's `rubrics` is a verdict for a pass/fail rubric, a score (in [0, 1], as its
    figure is) for a scaled one."""
    if not path.is_file():
        return [], [Problem(config_path, "judge.labels", f"{path} not found")]
    rows, problems = read_jsonl(path, LabelRow, id_field="question_id")
    rubrics = rubrics or {}
    judged = {m for m in verdict_metrics() if not is_rubric(m)} | set(rubrics)
    seen: dict[tuple[str, str, str | None], int] = {}
    kinds: dict[str, tuple[bool, int]] = {}  # metric -> (binary, first line)
    labels: list[Label] = []
    for line, row in rows:
        qid, metric = row.question_id, row.metric

        def problem(field: str, message: str, line: int = line, qid: str = qid) -> None:
            problems.append(Problem(path, field, message, line=line, question_id=qid))

        if qid not in question_ids:
            problem("question_id", f"no question {qid!r} in this goldset")
            continue
        settled = judged | {ANSWER_MATCH}
        if metric not in settled:
            known = "unknown metric" if metric not in METRICS else "not a metric labels settle"
            close = difflib.get_close_matches(metric, sorted(settled), n=1, cutoff=0.75)
            problem("metric", f"{known} {metric!r}"
                    + (f": did you mean {close[0]}?" if close else "")
                    + f" (labels are for {', '.join(sorted(settled))})")
            continue
        if metric == ANSWER_MATCH and (why := _answer_match_label(row)):
            problem(*why)
            continue
        if row.expected_sha256 is not None and metric != ANSWER_MATCH:
            problem("expected_sha256", "only an answer_match label is bound to an expected "
                    "answer")
            continue
        if row.statements is not None and metric != "faithfulness":
            problem("statements", "per-statement labels are for faithfulness only")
            continue
        if row.statements is not None and sealed:
            problem("statements", "a sealed goldset keeps no statement text in plain labels "
                    "(it would show what a right answer says): give the verdict or score only")
            continue
        if metric in rubrics and (why := _rubric_label(rubrics[metric], row)):
            problem(*why)
            continue
        answer = row.answer_sha256 if metric == ANSWER_MATCH else None
        if (qid, metric, answer) in seen:
            problem("question_id", f"duplicate label for {metric}"
                    f"{' of this answer' if answer else ''} (first on line "
                    f"{seen[qid, metric, answer]})")
            continue
        seen[qid, metric, answer] = line
        binary = row.verdict is not None
        first = kinds.setdefault(metric, (binary, line))
        if first[0] != binary:
            problem("verdict" if binary else "score", f"{metric}'s labels are "
                    f"{'verdicts' if first[0] else 'scores'} (line {first[1]}): one metric's "
                    "labels are all verdicts or all scores")
            continue
        labels.append(Label(qid, metric, row.value, binary, row.answer_sha256,
                            row.expected_sha256))
    return labels, problems


def _rubric_label(rubric: Rubric, row: LabelRow) -> tuple[str, str] | None:
    """(field, message) when a rubric's label is not of its kind: a verdict for a pass/fail
    rubric, a score in [0, 1] (its figure's (score − 1) / (scale − 1)) for a scaled one."""
    if rubric.binary and row.verdict is None:
        return "score", f"rubric {rubric.name} is pass/fail: its labels are verdicts, 0 or 1"
    if not rubric.binary and row.verdict is not None:
        return "verdict", (f"rubric {rubric.name} is scored 1 to {rubric.scale}: its labels "
                           f"are scores in [0, 1], (score - 1) / {rubric.top - 1}")
    return None


def _answer_match_label(row: LabelRow) -> tuple[str, str] | None:
    """(field, message) when an answer_match label cannot settle an answer: a score, or no
    `answer_sha256` tying it to the answer it was written for."""
    if row.verdict is None:
        return "score", "an answer_match label is a verdict, 0 (wrong) or 1 (right)"
    if row.answer_sha256 is None:
        return ("answer_sha256", "an answer_match label settles one answer: stamp it with the "
                "answer it was written for (`ragate stamp RESULTS --labels LABELS`, from the run "
                "whose answer you read)")
    return None


def answer_verdicts(labels: Sequence[Label]) -> dict[str, dict[str, AnswerLabel]]:
    """The answer_match labels by question: each labelled answer's sha256 → its verdict and
    the expected answer it was judged against."""
    found: dict[str, dict[str, AnswerLabel]] = {}
    for label in labels:
        if label.metric == ANSWER_MATCH and label.answer_sha256:
            found.setdefault(label.question_id, {})[label.answer_sha256] = AnswerLabel(
                verdict=1 if label.value else 0, expected_sha256=label.expected_sha256)
    return found
