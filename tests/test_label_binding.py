"""answer_match labels bound to what they judged, as pure functions (issue 45, item 4): a label
carries the sha256 of the raw answer and of the expected answer (gist, facts, forbid) it was
judged against; a change to either leaves it stale, said once per question; a label written
before `expected_sha256` still settles, said once to predate it, until `ragate stamp-labels`
binds it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.goldsets.labels import answer_verdicts, read_labels
from pytest_ragate.scoring.answer_match import (
    AnswerCheck,
    AnswerLabel,
    Expectation,
    check_answer,
    expected_sha256,
    settle,
)
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.runs import label_notes
from tests.conftest import saved_results

ANSWER = "It sells for 25 euros."
RAW = hashlib.sha256(ANSWER.encode()).hexdigest()
AT_25 = {"gist": "The remote sells for 25 euros.", "facts": ["25 euros"], "forbid": []}
AT_30 = {"gist": "The remote sells for 30 euros.", "facts": ["30 euros"],
         "forbid": ["25 euros"]}


def said(verdict: int, expected: str | None = None) -> AnswerLabel:
    """A person's verdict, judged against `expected` (None: before expected digests)."""
    return AnswerLabel(verdict=1 if verdict else 0, expected_sha256=expected)


def digest(expected: dict[str, list[str] | str]) -> str:
    return expected_sha256(expected["gist"], expected["facts"], expected["forbid"])  # type: ignore[arg-type]


def check(answer: str, expected: dict[str, list[str] | str], similarity: float = 0.9,
          ) -> AnswerCheck:
    return check_answer(answer, Expectation(facts=expected["facts"],  # type: ignore[arg-type]
                                            forbid=expected["forbid"],  # type: ignore[arg-type]
                                            gist=str(expected["gist"])),
                        similarity=similarity)


def test_a_label_judged_against_another_expected_answer_no_longer_settles() -> None:
    """The issue's reproduction: labelled right when the price was 25, the same answer is not
    right once the expected answer is 30 with "25 euros" forbidden."""
    labels = {RAW: said(1, digest(AT_25))}
    now = settle(check(ANSWER, AT_30), labels, RAW, digest(AT_30), "label")
    assert now.settled is None and now.value == 0.0 and now.label_note == "stale_expected"
    unsure = check("Maybe 25 or 30 euros.", AT_30)
    assert unsure.outcome == "unsure"
    raw = hashlib.sha256(b"Maybe 25 or 30 euros.").hexdigest()
    again = settle(unsure, {raw: said(1, digest(AT_25))}, raw, digest(AT_30), "label")
    assert again.unsettled and again.label_note == "stale_expected"
    bound = settle(unsure, {raw: said(1, digest(AT_30))}, raw, digest(AT_30), "label")
    assert bound.value == 1.0 and bound.label_note is None
    assert (bound.answer_sha256, bound.expected_sha256) == (raw, digest(AT_30))


def test_the_expected_digest_is_of_gist_facts_and_forbid_each() -> None:
    base = digest(AT_25)
    assert base == digest(dict(AT_25)) and len(base) == 64
    for changed in ({**AT_25, "gist": "The remote sells for 25 euros!"},
                    {**AT_25, "facts": ["25 euros", "remote"]},
                    {**AT_25, "facts": [["25 euros", "€25"]]},
                    {**AT_25, "forbid": ["30 euros"]}):
        assert digest(changed) != base


def test_a_label_of_another_answer_leaves_an_unsure_one_unsure_and_says_so() -> None:
    unsure = check("Maybe 25 or 30 euros.", AT_30)
    other = settle(unsure, {"0" * 64: said(1, digest(AT_30))},
                   hashlib.sha256(b"Maybe 25 or 30 euros.").hexdigest(), digest(AT_30), "label")
    assert other.unsettled and other.label_note == "stale_answer"
    decided = settle(check(ANSWER, AT_30), {"0" * 64: said(1, digest(AT_30))}, RAW,
                     digest(AT_30), "label")
    assert decided.label_note is None  # nothing waits on a label there


def row(qid: str, answer_check: AnswerCheck, repeat: int = 1) -> QuestionRecord:
    return QuestionRecord(goldset="g", question_id=qid, kind="single_doc", index=0,
                          must_abstain=False, evidence_spans=1, eval_version="1", repeat=repeat,
                          abstention_correct=True, answer_text=ANSWER, answer_check=answer_check,
                          metrics={"answer_match": answer_check.value})


def test_a_label_that_predates_expected_digests_settles_and_is_said_once_per_question(
        ) -> None:
    old = {RAW: said(0)}
    settled = settle(check("Maybe 25 or 30 euros.", AT_25), old, RAW, digest(AT_25), "label")
    assert settled.value == 0.0 and settled.label_note == "predates"
    stale = settle(check("Maybe 25 or 30 euros.", AT_30), {RAW: said(1, digest(AT_25))},
                   RAW, digest(AT_30), "label")
    rows = [row("q7", settled), row("q7", settled, 2), row("q8", stale), row("q8", stale, 2)]
    notes = label_notes(rows)
    assert notes[0] == ("label for q7 predates expected-answer digests: run `ragate "
                        "stamp-labels` to bind it")
    assert len(notes) == 2 and notes[1].startswith("label for q8 was judged against another "
                                                   "expected answer")
    assert "25" not in "".join(notes)


def test_labels_read_their_expected_digest_and_refuse_it_off_answer_match(
        tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"question_id": "q1", "metric": "answer_match", "verdict": 1,
                                "answer_sha256": RAW, "expected_sha256": digest(AT_25)})
                    + "\n" + json.dumps({"question_id": "q2", "metric": "faithfulness",
                                         "verdict": 1, "expected_sha256": "a" * 64}) + "\n")
    labels, problems = read_labels(path, {"q1", "q2"}, tmp_path / "ragate.toml")
    assert answer_verdicts(labels) == {"q1": {RAW: said(1, digest(AT_25))}}
    assert [(p.line, p.field) for p in problems] == [(2, "expected_sha256")]


def results(tmp_path: Path, answer_text: str, answer_check: AnswerCheck) -> Path:
    from tests.test_html_report import rec

    path = tmp_path / "res.jsonl"
    path.write_text(saved_results([rec("q1", index=0, answer=answer_text).model_copy(
        update={"answer_check": answer_check})]))
    return path


def test_stamp_labels_stamps_the_raw_answer_and_binds_a_label_that_predates(
        tmp_path: Path) -> None:
    """A sealed run keeps the masked text; the label gets the raw answer's digest the check
    carries (two answers masking alike are two answers), and a label stamped before
    `expected_sha256` gets the expected answer its answer was held to."""
    held = settle(check("Maybe 25 or 30 euros.", AT_25), {}, RAW, digest(AT_25), "label")
    res = results(tmp_path, "Maybe [sealed] or 30 euros.", held)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": "q1", "metric": "answer_match", "verdict": 1}\n')
    out = CliRunner().invoke(main, ["stamp-labels", str(labels), str(res)])
    assert out.exit_code == 0 and "stamped 1 labels" in out.output, out.output
    assert json.loads(labels.read_text()) == {
        "question_id": "q1", "metric": "answer_match", "verdict": 1, "answer_sha256": RAW,
        "expected_sha256": digest(AT_25)}
    labels.write_text(json.dumps({"question_id": "q1", "metric": "answer_match",
                                  "verdict": 0, "answer_sha256": RAW}) + "\n")
    out = CliRunner().invoke(main, ["stamp-labels", str(labels), str(res)])
    assert out.exit_code == 0 and "stamped 1 labels" in out.output, out.output
    assert json.loads(labels.read_text())["expected_sha256"] == digest(AT_25)
    again = CliRunner().invoke(main, ["stamp-labels", str(labels), str(res)])
    assert "stamped 0 labels" in again.output  # bound: left as it is


def test_validate_says_once_which_labels_predate_or_are_stale(tmp_path: Path) -> None:
    from tests.conftest import BASE_TOML, expected_rows, write_goldset

    rows = [{**row, "facts": ["25 euros"]} if row["gist"] else row for row in expected_rows()]
    answered = [row for row in rows if row["gist"]]
    gs = write_goldset(tmp_path / "gs", toml=BASE_TOML + '\n[judge]\nlabels = "labels.jsonl"\n',
                       expected=rows)
    now = {r["question_id"]: expected_sha256(r["gist"], r["facts"], []) for r in answered}
    first, second = answered[0]["question_id"], answered[1]["question_id"]
    (gs / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [
        {"question_id": first, "metric": "answer_match", "verdict": 1, "answer_sha256": RAW},
        {"question_id": first, "metric": "answer_match", "verdict": 0,
         "answer_sha256": "1" * 64},
        {"question_id": second, "metric": "answer_match", "verdict": 1, "answer_sha256": RAW,
         "expected_sha256": digest(AT_25)},
        {"question_id": answered[2]["question_id"], "metric": "answer_match", "verdict": 1,
         "answer_sha256": RAW, "expected_sha256": now[answered[2]["question_id"]]}]))
    out = CliRunner().invoke(main, ["validate", str(gs)])
    assert out.exit_code == 0, out.output
    assert out.output.count(f"label for {first} predates expected-answer digests") == 1
    assert out.output.count(f"label for {second} was judged against another expected") == 1
    said = [line for line in out.output.splitlines() if "label" in line]
    assert len(said) == 2  # the bound label of the third question says nothing


def test_a_judged_label_of_a_masked_answer_is_held_to_the_raw_answer() -> None:
    """Two answers that mask alike in a sealed run are two answers: a label stamped with the
    masked text's digest (as before the rule) is stale for either."""
    from pytest_ragate.scoring.labelled import judged_values
    from tests.test_html_report import rec

    masked = "It sells for [sealed]."
    row = rec("q1", answer=masked, metrics={"faithfulness": 1.0},
              answer_sha256=hashlib.sha256(b"It sells for 25 euros.").hexdigest())
    stale = {"q1": hashlib.sha256(masked.encode()).hexdigest()}
    values, missing = judged_values("faithfulness", [row], stale)
    assert values == {} and missing["q1"].startswith("stale label")
    values, _ = judged_values("faithfulness", [row], {"q1": RAW})
    assert values == {"q1": 1.0}
