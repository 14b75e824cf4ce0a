"""One question item's life: ask the system, score the answer, hand it to the judge, report.

With a judge, an item's reports are held until its verdicts arrive, while the next questions
are already being asked: judge calls overlap across questions (bounded by the runner), and
the record they bring still carries its judged scores (the question's JUnit test case is
written from it where the run is concluded: `modes/reporting.junit_case`). Under xdist a
held report is logged during a later item's protocol: `xdist_worker.reporting_as` tells the
worker whose it is.

A question's record is built once (`ask` scores it; `record_failure` makes the row of a
question that errored or was skipped before it was scored), updated in one place (`_judged`,
with its verdicts), and put on the wire once (`_send`, under `keys.RECORD_ATTR`).
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.population import asked_row
from pytest_ragate.goldsets.loader import Case
from pytest_ragate.items.collection import QuestionItem, ask, wrong_answer
from pytest_ragate.items.conversations import forget, remember
from pytest_ragate.items.correctness import correctness_fields
from pytest_ragate.items.defined_metrics import defined_fields
from pytest_ragate.items.keys import (
    AGAIN_KEY,
    CASE_KEY,
    NEEDED_KEY,
    NOT_NEEDED_KEY,
    RECORD_ATTR,
    ROUTE_KEY,
    RUN_KEY,
)
from pytest_ragate.items.long_lived import settle
from pytest_ragate.items.malformed import as_answer, built_in_one_line
from pytest_ragate.items.provenance import question_parts, session_fixture
from pytest_ragate.items.pytest_internals import function_arguments, run_unlogged
from pytest_ragate.items.reasons import failure_line
from pytest_ragate.items.redacting import redacted_record, redactor
from pytest_ragate.items.timeouts import answer_within
from pytest_ragate.items.xdist_worker import reporting_as
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.cache_folder import JUDGE_CACHE_NAME
from pytest_ragate.judges.cache_folder import judge_cache_folder as cache_folder
from pytest_ragate.judges.runner import JudgedScores, JudgeRunner, judged_metrics
from pytest_ragate.scoring.records import QuestionRecord, in_metric_order, score_answer
from pytest_ragate.settings import read_settings

RECORD_KEY = pytest.StashKey[QuestionRecord]()
VERDICTS_KEY = pytest.StashKey["Future[JudgedScores]"]()


def base_record(item: pytest.Item, case: Case, **fields: Any) -> QuestionRecord:
    """The question's row: what the goldset says of it (the population's base row, as a
    crashed question's error row has it), and `fields` from its outcome; marked `reasked`
    when the item asks it again to check a sequential stop (`items/reasking.py`)."""
    if AGAIN_KEY in item.stash:
        fields["reasked"] = True
    return asked_row(case, item.stash[ROUTE_KEY], **fields)


@dataclass
class QuestionRun:
    """Per process: the judge runner (made on first use) and the reports waiting on it."""

    config: pytest.Config
    runner: JudgeRunner | None = None
    waiting: deque[tuple[pytest.Item, list[pytest.TestReport]]] = field(default_factory=deque)

    def judge_runner(self) -> JudgeRunner:
        if self.runner is None:
            settings = read_settings(self.config).judge
            self.runner = JudgeRunner(settings.judge_concurrency,
                                      judge_cache_folder(self.config), settings.cache,
                                      timeout=settings.judge_timeout,
                                      redact=redactor(self.config),
                                      prices=(settings.judge_price_in,
                                              settings.judge_price_out))
        return self.runner

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()


def judge_cache_folder(config: pytest.Config) -> Path:
    """Where this run's judge verdicts are cached (`judges/cache_folder.py`, which `ragate
    plan` and `ragate rejudge` ask too); in pytest's cache, made by pytest (its README and
    .gitignore with it)."""
    settings = read_settings(config).judge
    cache = getattr(config, "cache", None)
    # `cache_dir` is the cache plugin's ini option: without the plugin, pytest knows no such
    # option (and ragate's verdicts are not in pytest's cache)
    folder = cache_folder(config.rootpath, ragate_dir=settings.judge_cache_dir,
                          pytest_cache_dir=str(config.getini("cache_dir")) if cache else None,
                          cache_plugin=cache is not None)
    if cache is not None and not settings.judge_cache_dir:
        cache.mkdir(JUDGE_CACHE_NAME)
    return folder


def question_run(config: pytest.Config) -> QuestionRun:
    found = config.stash.get(RUN_KEY, None)
    if found is None:
        found = config.stash[RUN_KEY] = QuestionRun(config)
    return found


def answer_and_score(item: pytest.Function, case: Case) -> None:
    """The body of every question item: call the test, score, submit to the judge."""
    assert case.expected is not None  # sealed questions are skipped at collection
    qid = case.question.question_id
    if case.pins is not None and case.pins.stale:  # never scored against the wrong text
        stale = "; ".join(case.pins.stale)
        why = f"{qid}: {stale}"
        _keep(item, base_record(item, case, status="error", error=why, stale_evidence=True))
        forget(item, case, stale)  # its conversation's later turns say why it has no answer
        pytest.fail(why, pytrace=False)
    args = {name: item.funcargs[name] for name in function_arguments(item)}
    if item.obj is ask:  # the file route's: its question given here (`collection.ask`)
        args["ragate_question"] = case.question
    started = time.perf_counter()  # the bill's latency: the system's call, and only it
    with built_in_one_line(qid):  # `Answer(text=5)` in the system: one line, as returned
        result = answer_within(lambda: item.obj(**args),
                               read_settings(item.config).gate.system_timeout, qid)
    latency = time.perf_counter() - started
    answer = as_answer(result, qid)
    if answer.empty:
        pytest.fail(f"{qid}: the system returned an empty answer: no text, contexts or "
                    "citations, and not abstained (to decline, return Answer.abstain())",
                    pytrace=False)
    outside = case.goldset.corpus.outside(answer.contexts)
    if outside:
        pytest.fail(f"{qid}: the system returned contexts outside the goldset's corpus: "
                    + "; ".join(outside), pytrace=False)
    remember(item, case, answer)  # what its conversation's later turns are given
    request = item.funcargs["request"]  # the item's own (`collection.requests_itself`)
    judge = session_fixture(item, request, "ragate_judge")
    fields: dict[str, Any] = score_answer(answer, case.expected.spans,
                                          unit=case.goldset.corpus.unit)
    fields.update(correctness_fields(item.config, case, answer, fields["metrics"]))
    fields.update(defined_fields(item.config, case.question.question, answer,
                                 case.expected.gist))
    fields["answerer_model"] = session_fixture(item, request, "ragate_answerer_model")
    fields.update(latency_s=latency, usage=answer.usage)
    if case.pins is not None and case.pins.moved:  # a note in JUnit, the terminal, reports
        fields["evidence_moved"] = list(case.pins.moved)
    if judge is not None:
        fields["judge"] = judge.judge_id
        fields["judge_model"] = getattr(judge, "model", None)
    fields.update(question_parts(item, judge is not None,
                                 decorated=not isinstance(item, QuestionItem)).fields())
    judging = judge is not None and not fields["must_abstain"] and not answer.abstained
    if judging:  # what the judge sees, kept (redacted) so `ragate rejudge` can grade it again
        fields["judged_contexts"] = list(answer.contexts)
    record = _keep(item, base_record(item, case, **fields))
    if judging:
        judged = JudgeInput(case.question.question_id, case.question.question, answer.text,
                            tuple(answer.contexts), reference=case.expected.gist,
                            repeat=case.repeat, answer_sha256=record.answer_sha256,
                            digest_key=case.goldset.digest_key, rubrics=case.goldset.rubrics)
        needed = item.stash.get(NEEDED_KEY, None)
        metrics = (*judged_metrics(judge, needed), *case.goldset.requested_verdicts,
                   *(m for m in needed or () if m in case.goldset.rubrics))
        item.stash[VERDICTS_KEY] = question_run(item.config).judge_runner().submit(
            judge, judged, tuple(dict.fromkeys(metrics)), case.goldset.eval_version,
            case.goldset.name)
    wrong = wrong_answer(case, record)
    if wrong is not None:
        pytest.fail(wrong, pytrace=False)


def _keep(item: pytest.Item, record: QuestionRecord) -> QuestionRecord:
    """The item's record, built once and redacted (items/redacting.py); the process that
    concludes the run writes the question's JUnit test case from it
    (`modes/reporting.junit_case`)."""
    record = item.stash[RECORD_KEY] = redacted_record(item.config, record)
    return record


def record_failure(item: pytest.Item, call: pytest.CallInfo[None],
                   report: pytest.TestReport) -> None:
    """A question that failed or was skipped before `ask` scored it still gets its row: an
    error or a skip, with the line that says why (`reasons.failure_line`)."""
    case = item.stash.get(CASE_KEY, None)
    if case is None or report.when == "teardown" or RECORD_KEY in item.stash:
        return
    if report.failed or report.skipped:
        forget(item, case, failure_line(report, call.excinfo))
    if report.failed:
        reason = failure_line(report, call.excinfo)
        _keep(item, base_record(item, case, status="error", error=reason))
    elif report.skipped:
        reason = failure_line(report, call.excinfo)
        _keep(item, base_record(item, case, status="skipped", error=reason,
                                not_needed=item.stash.get(NOT_NEEDED_KEY, False)))


def run_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool:
    """Run the item; hold its reports while its verdicts are pending; release what is ready.

    Without a judge nothing is pending and this is pytest's own protocol, report for report.
    """
    run = question_run(item.config)
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    reports = run_unlogged(item, nextitem)
    run.waiting.append((item, reports))
    release(run, wait=False)
    return True


def release(run: QuestionRun, wait: bool) -> None:
    """Report held items in run order, as their verdicts arrive (all of them when `wait`)."""
    while run.waiting:
        item, reports = run.waiting[0]
        future = item.stash.get(VERDICTS_KEY, None)
        if future is not None and not future.done() and not wait:
            return
        run.waiting.popleft()
        if future is not None:
            _judged(item, reports, future.result())
        _send(item, reports)
        hook = item.ihook
        with reporting_as(item):
            for report in reports:
                hook.pytest_runtest_logreport(report=report)
        hook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        # sent (xdist serialises a report inside the hook): the controller keeps its own
        # copy, and pytest keeps every report to the end of the session
        for key in (RECORD_KEY, VERDICTS_KEY):
            if key in item.stash:
                del item.stash[key]
        for report in reports:
            if hasattr(report, RECORD_ATTR):
                delattr(report, RECORD_ATTR)
        settle(item.config)  # what it leaves that lives as long as its items


def _send(item: pytest.Item, reports: list[pytest.TestReport]) -> None:
    """The record rides on the report that closes the question (its call, or the setup that
    failed or skipped it), so it reaches the controller through xdist."""
    record = item.stash.get(RECORD_KEY, None)
    closing = next((r for r in reversed(reports) if r.when != "teardown"), None)
    if record is not None and closing is not None:
        row = record.row_json()  # dumped once, for the results file and JUnit too
        # the row itself to this process's controller; its JSON text across the xdist wire
        # (`keys.row_of` reads either)
        setattr(closing, RECORD_ATTR,
                json.dumps(row) if hasattr(item.config, "workerinput") else row)


def _judged(item: pytest.Item, reports: list[pytest.TestReport], verdicts: JudgedScores) -> None:
    """The verdicts join the record (and so the question's JUnit properties); a replay-mode
    cache miss fails the question's own test case."""
    record = item.stash[RECORD_KEY]
    metrics = dict(record.metrics)
    metrics.update({m: verdicts.values.get(m) for m in (*verdicts.values, *verdicts.failures)})
    item.stash[RECORD_KEY] = redacted_record(item.config, record.model_copy(update={
        "metrics": metrics, "judge_failures": in_metric_order(verdicts.failures),
        "judge_cached": list(verdicts.cached), "judge_vacuous": list(verdicts.vacuous),
        **verdicts.bill.row_fields(),
        "unencodable": (record.unencodable or 0) + verdicts.unencodable or None}))
    for report in reports:
        if report.when == "call" and verdicts.replay_misses and report.passed:
            report.outcome = "failed"
            report.longrepr = "\n".join(verdicts.failures[m] for m in verdicts.replay_misses)
