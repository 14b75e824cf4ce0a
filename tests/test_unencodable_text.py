"""Issue 46 item 1: odd text never crashes a run. Whatever code points the system's answer, its
contexts, its citations, its knobs, its error or the judge's reply hold (half a surrogate
pair, controls, format and private-use characters, any script), each is taken where it
enters ragate (answer.py's models, the judge runner, a row as it is kept), a lone surrogate
replaced by U+FFFD and counted on the row (`unencodable`), and every output is written: the
results file, JUnit's property values, the Markdown report, the job summary, GitLab's files
and the history line (the HTML report: `test_the_html_report_...`). Hypothesis feeds the pure
parts in-process; the end-to-end case (-n 0, -n 2) is a folder of test_fail_closed.py's shared
run (`test_half_a_surrogate_pair_is_replaced_and_counted_never_a_crash`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from _pytest.junitxml import bin_xml_escape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragate.answer import Answer
from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.items.redacting import kept
from pytest_ragate.judges.runner import JudgedScores
from pytest_ragate.outputs.github import job_summary
from pytest_ragate.outputs.gitlab import code_quality, openmetrics
from pytest_ragate.outputs.history import build_line
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.outputs.results import results_lines
from pytest_ragate.redaction import REPLACEMENT, Redactor, visible
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, Span, score_answer
from tests.test_ci_views import view_of

# any code point, lone surrogates (category Cs) drawn often rather than once in hundreds
CHARACTERS = st.characters(categories=["Cs", "Cc", "Cf", "Co", "Cn", "Zs", "Zl", "Zp", "Lu",
                                       "Ll", "Lo", "Mn", "Nd", "Po", "Sm", "So"])
ANY_TEXT = st.text(CHARACTERS | st.characters(codec=None), max_size=24)
SURROGATE_PAIR = "\ud83d\ude00"  # 😀 as two halves, which is text: joined, not replaced


def row(texts: dict[str, str]) -> tuple[QuestionRecord, QuestionRecord, int]:
    """A scored row built as a question item builds it (the system's answer, the judge's
    failure), an errored row whose error is the system's, both kept as rows are; and how
    many lone surrogates their texts held."""
    answer = Answer.model_validate({
        "text": texts["answer"] or "x", "knobs": {texts["knob"]: texts["knob"]},
        "contexts": [{"context_id": texts["context_id"], "doc_id": "m1", "first_unit": 2,
                      "last_unit": 3, "text": texts["context"], "label": texts["context"]}],
        "citations": [{"context_id": texts["context_id"], "quote": texts["quote"]}]})
    judged = JudgedScores()
    judged.fail("faithfulness", ValueError(texts["judge"]), Redactor())
    fields = score_answer(answer, [Span("m1", 2, 3)])
    replaced = (fields.pop("unencodable") or 0) + judged.unencodable
    scored = QuestionRecord(
        goldset="g", route="gs/ragate.toml", question_id="q1", question="What about q1?",
        kind="single_doc", tags={"lang": "de"}, index=0, eval_version="1", judge="scripted",
        judge_failures=judged.failures, unencodable=replaced or None, **fields)
    errored = QuestionRecord(
        goldset="g", route="gs/ragate.toml", question_id="q2", question="What about q2?",
        kind="single_doc", index=1, eval_version="1", status="error",
        error=f"RuntimeError: {texts['error']}", must_abstain=False, evidence_spans=1)
    lone = sum(visible(texts[name])[1] * times for name, times in (
        ("answer", 1), ("knob", 2), ("context_id", 2), ("context", 2), ("quote", 1),
        ("judge", 1)))
    return kept(scored, Redactor()), kept(errored, Redactor()), lone


def written(run: GoldsetRun) -> dict[str, str]:
    """Every output the pure writers make of `run`, as the text each file would hold."""
    view = view_of(run)
    return {"results": results_lines([run]), "report": markdown([run]),
            "summary": job_summary(view), "code quality": code_quality(view.findings),
            "metrics": openmetrics([run]),
            "history": build_line(run, git=None).model_dump_json()}


def junit_xml(record: QuestionRecord) -> str:
    """The row's JUnit properties as pytest writes them (`bin_xml_escape`), as one element."""
    suite = ET.Element("testcase")
    for name, value in record.junit_properties():
        ET.SubElement(suite, "property", name=name, value=bin_xml_escape(value))
    return ET.tostring(suite, encoding="unicode")


TEXTS = st.fixed_dictionaries({name: ANY_TEXT for name in (
    "answer", "knob", "context_id", "context", "quote", "judge", "error")})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS)
def test_any_text_from_the_system_or_the_judge_reaches_every_output(
        texts: dict[str, str]) -> None:
    scored, errored, lone = row(texts)
    assert scored.unencodable == (lone or None)
    assert errored.unencodable == (visible(texts["error"])[1] or None)
    run = GoldsetRun(name="g", eval_version="1", route="gs/ragate.toml",
                     records=[scored, errored], population=2,
                     gaps=[Gap(member="q2", member_kind="single_doc", kind="errored",
                               why=errored.error or "")])
    run.verdicts = [decide(Floor("citation_accuracy", 0.5), "g", [scored])]
    for name, text in {**written(run), "junit q1": junit_xml(scored),
                       "junit q2": junit_xml(errored)}.items():
        text.encode("utf-8")  # every output can be written, whatever was said
        if name.startswith("junit"):
            ET.fromstring(text)  # and read back
    # as ragate reads it back: lines end at "\n" only (a U+0085 or U+2028 is text)
    rows = [json.loads(line) for line in results_lines([run]).split("\n")[:-1]]
    assert rows[0]["answer_text"] == visible(texts["answer"] or "x")[0]
    assert rows[1]["error"] == f"RuntimeError: {visible(texts['error'])[0]}"


def test_half_a_surrogate_pair_is_shown_replaced_and_a_whole_one_joined() -> None:
    """The replacement is visible (U+FFFD) where the text was; a pair given as two halves is
    one character, not two faults."""
    answer = Answer(text=f"2 euros \ud83d {SURROGATE_PAIR}")
    assert answer.text == f"2 euros {REPLACEMENT} 😀" and answer.unencodable == 1
    assert visible("plain text") == ("plain text", 0)


@pytest.mark.heavy  # matplotlib draws each plot: seconds
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS)
def test_the_html_report_of_any_text_is_written(texts: dict[str, str]) -> None:
    from pytest_ragate.outputs.html import render_html

    scored, errored, _ = row(texts)
    run = GoldsetRun(name="g", eval_version="1", route="gs/ragate.toml",
                     records=[scored, errored], population=2)
    run.verdicts = [decide(Floor("citation_accuracy", 0.5), "g", [scored])]
    render_html([run], history=[], ci="point").encode("utf-8")
