"""`ragate audit`: each rule as a pure function over small inputs, the goldset's `[audit]`
switches, and the command once (lines, exit status, JSON)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from pytest_ragate.audit import contradicted, evidence, floors, pinned, questions
from pytest_ragate.audit.evidence import Answered, CorpusFolded
from pytest_ragate.audit.findings import AuditReports, finding, with_severities
from pytest_ragate.audit.runs import Runs, never_separates
from pytest_ragate.audit.texts import CorpusWords
from pytest_ragate.cli import main
from pytest_ragate.goldsets.config import Expected, GoldsetConfig, Question
from pytest_ragate.goldsets.corpus import Corpus, Document, Turn
from pytest_ragate.goldsets.pinned import hold
from pytest_ragate.goldsets.pins import CorpusText
from pytest_ragate.scoring.floor import Floor

HERE = Path("expected.jsonl")
TURNS = {
    "remote": ["We open the meeting about the remote control.",
               "The battery should last two years with a kinetic charger.",
               "A rubber case in yellow would appeal to young buyers.",
               "Lunch is at noon."],
    "budget": ["The budget is twelve euros per unit.",
               "Marketing wants a scroll wheel and a voice recogniser."],
    "spare": ["Nobody cites this document."],
}


def corpus(turns: dict[str, list[str]] = TURNS) -> Corpus:
    return Corpus({d: Document(d, tuple(Turn(t) for t in ts), Path(f"{d}.json"))
                   for d, ts in turns.items()})


def answer(qid: str, question: str, gist: str | None = None, evidence_: list | None = None,
           facts: list | None = None) -> Answered:
    expected = Expected(question_id=qid, gist=gist, evidence=evidence_ or [],
                        facts=facts or [])
    return Answered(question_id=qid, question=question, expected=expected, path=HERE, line=1)


def span(doc: str, first: int, last: int) -> dict:
    return {"doc_id": doc, "first_turn": first, "last_turn": last}


def asked(*texts: str) -> list[questions.Asked]:
    return [questions.Asked(question_id=f"q{i}", text=t, path=Path("questions.jsonl"),
                            line=i + 1) for i, t in enumerate(texts)]


def rules(found: list) -> list[tuple[str | None, str]]:
    return [(f.question_id, f.rule) for f in found]


def test_an_exact_duplicate_is_named_on_the_later_question_once_folded() -> None:
    found = questions.duplicates(asked("What is the budget?", "what is  the BUDGET ?",
                                       "What is the price?"))
    assert rules(found) == [("q1", "duplicate_question")]
    assert found[0].other == "q0" and found[0].severity == "error"


def test_duplicates_are_found_after_nfkc_folding_as_validate_finds_them() -> None:
    found = questions.duplicates(asked("Was the caf\u00e9 budget cut?",  # NFC
                                       "Was the cafe\u0301 budget cut?",  # NFD
                                       "Was the caf\u00e9 \uff22\uff35\uff24\uff27\uff25\uff34 "
                                       "cut\uff1f"))  # full-width
    assert [(f.question_id, f.other) for f in found] == [("q1", "q0"), ("q2", "q0")]


def test_numbers_and_ordinals_keep_questions_apart_however_they_are_written() -> None:
    found = questions.duplicates(asked(
        "What was done in sprint 3?", "What was done in sprint 4?",
        "What was done in sprint three?",  # the first again
        "What was done in the third sprint?", "What was done in the 3rd sprint?",
        "What was done in the fourth sprint?", "What was done in the first sprint?",
        "What was done in the second sprint?"))
    assert [(f.question_id, f.other) for f in found] == [("q2", "q0"), ("q4", "q3")]
    ordinals = asked("What did A decide in the third sprint?",
                     "What did A decide in the fourth sprint?",
                     "What did A decide in sprint 30?", "What did A decide in sprint 40?")
    alike = np.tile(np.array([1.0, 0.0], np.float32), (4, 1))  # the embedder sees no number
    assert questions.near_duplicates(ordinals, alike) == []


def test_a_near_duplicate_needs_close_vectors_the_same_names_and_the_same_topic() -> None:
    texts = asked("What did A think about the battery charger?",
                  "Which views did A share on the battery charger?",  # paraphrase
                  "What did C think about the battery charger?",  # another speaker
                  "What did A think about the yellow case?")  # another topic
    vectors = np.array([[1.0, 0.0], [0.99, 0.14], [1.0, 0.0], [1.0, 0.0]], np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    found = questions.near_duplicates(texts, vectors)
    assert rules(found) == [("q1", "near_duplicate")]
    assert found[0].other == "q0" and found[0].measure == pytest.approx(0.99, abs=0.01)
    far = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]], np.float32)
    assert questions.near_duplicates(texts[:2], far[:2]) == []


def test_evidence_that_holds_none_of_the_gist_is_unsupported_and_one_that_holds_it_is_not(
        ) -> None:
    c = corpus()
    answers = [answer("ok", "How long does the battery last?",
                      "The battery lasts two years thanks to a kinetic charger.",
                      [span("remote", 1, 1)]),
               answer("bad", "How long does the battery last?",
                      "The budget is twelve euros per unit.", [span("remote", 1, 1)])]
    found = evidence.unsupported(answers, c, CorpusWords(c), embed=None)
    assert rules(found) == [("bad", "unsupported_evidence")]


def test_the_embedding_decides_only_where_the_words_are_unsure() -> None:
    c = corpus()
    asked_for: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        asked_for.append(list(texts))
        return np.tile(np.array([1.0, 0.0], np.float32), (len(texts), 1))

    half = answer("half", "What about the battery?", "Battery in Paris, Milan, Rome.",
                  [span("remote", 1, 1)])
    assert evidence.unsupported([half], c, CorpusWords(c), embed) == []  # cosine 1.0
    assert asked_for and asked_for[0] == [half.expected.gist]


def test_a_fact_no_document_states_is_named_by_its_index() -> None:
    c = corpus()
    answers = [answer("q", "What does it cost?", "Twelve euros.", [span("budget", 0, 0)],
                      facts=["twelve euros", "forty dollars", "/scroll\\s+wheel/"])]
    found = evidence.facts_nowhere(answers, CorpusFolded(c))
    assert rules(found) == [("q", "facts_not_in_corpus")]
    assert "facts[1]" in found[0].message and "facts[0]" not in found[0].message


def test_a_fact_or_a_gists_number_or_name_the_corpus_states_only_negated_is_a_finding(
        ) -> None:
    c = corpus({"fees": ["The fee is not 25 cents.", "The chair was never Alice.",
                         "The fee is 30 cents.", "I do not see why the fee is 30 cents."],
                "other": ["Stamps cost 25 cents.", "Bob met Alice."]})
    fee, chair, other = [span("fees", 0, 0)], [span("fees", 1, 1)], [span("fees", 2, 2)]
    answers = [answer("fee", "?", "The fee is 25 cents.", fee, facts=["25 cents"]),
               answer("chair", "?", "Alice chaired.", chair, facts=["Alice"]),
               answer("gist", "?", "Alice chaired.", chair),  # a gist's name, no fact
               answer("elsewhere", "?", "The fee is low.", other, facts=["25 cents"]),
               answer("gist_number", "?", "The fee is 25 cents.", other),
               answer("said", "?", "The fee is 30 cents.", other, facts=["30 cents"]),
               answer("far", "?", "Nobody saw why.", [span("fees", 3, 3)], facts=["why"]),
               answer("nowhere", "?", "Carol chaired.", chair, facts=["Carol"])]
    found = contradicted.contradicted(answers, CorpusFolded(c))
    assert rules(found) == [(q, "contradicted_fact") for q in
                            ("fee", "chair", "gist", "elsewhere", "gist_number")]
    said = {f.question_id: f.message for f in found}
    assert "facts[0] (1 of 1) stated only negated" in said["chair"]
    assert "facts[0] stated in its evidence only with another number" in said["elsewhere"]
    assert "1 of the gist's numbers stated in its evidence only with another" in said[
        "gist_number"]
    assert all("25" not in m and "Alice" not in m and "fees" not in m for m in said.values())


def test_a_gists_number_has_another_in_its_place_by_two_same_tokens_or_as_the_only_value(
        ) -> None:
    c = corpus({"talk": ["It costs 12 euros, or 17 euros with the screen.",
                         "About 30 hours recorded so far.", "A budget of 12 euros.",
                         "We sell it at 25 euros, it costs 12 euros."]})
    answers = [answer("many", "?", "It would cost 12.5 euros.", [span("talk", 0, 0)]),
               answer("one", "?", "Roughly 40 hours were recorded.", [span("talk", 1, 1)]),
               answer("words", "?", "A twelve euro budget.", [span("talk", 2, 2)]),
               answer("copied", "?", "We sell it at 32 euros.", [span("talk", 3, 3)]),
               answer("denies", "?", "It was never 80 hours.", [span("talk", 1, 1)])]
    assert rules(contradicted.contradicted(answers, CorpusFolded(c))) == [
        ("one", "contradicted_fact"), ("copied", "contradicted_fact")]


def test_a_must_abstain_question_whose_words_one_window_holds_is_flagged() -> None:
    c = corpus()
    answers = [answer("held", "Which rubber case would appeal to young buyers?"),
               answer("miss", "Which airline flies to Lisbon on Sundays?")]
    found = evidence.abstain_answerable(answers, c, CorpusWords(c, size=2))
    assert rules(found) == [("held", "abstain_answerable")]
    assert found[0].other == "remote"


def test_a_whole_document_or_most_of_a_long_one_is_too_wide_however_it_is_written() -> None:
    c = corpus({"long": [f"turn {i} about widgets" for i in range(40)],
                "short": [f"paragraph {i} about gadgets" for i in range(12)]})
    answers = [answer("whole", "q", "g", [{"doc_id": "long"}]),
               answer("most", "q", "g", [span("long", 0, 29)]),
               answer("narrow", "q", "g", [span("long", 3, 5)]),
               answer("halves", "q", "g", [span("long", 0, 9), span("long", 10, 19)]),
               answer("units", "q", "g", [span("short", 0, 11)]),  # all 12 paragraphs
               answer("side", "q", "g", [span("short", 0, 5), span("short", 6, 11)]),
               answer("doc", "q", "g", [{"doc_id": "short"}]),
               answer("part", "q", "g", [span("short", 0, 5)])]
    found = evidence.wide(answers, c)
    assert rules(found) == [(q, "wide_evidence") for q in
                            ("whole", "most", "halves", "units", "side", "doc")]
    by_id = {f.question_id: f.message for f in found}
    assert by_id["units"] == by_id["side"] == by_id["doc"]  # the same finding, however written


def test_a_document_no_evidence_cites_is_named() -> None:
    answers = [answer("q", "q", "g", [span("remote", 0, 1)]), answer("b", "q", "g",
                                                                      [{"doc_id": "budget"}])]
    found = evidence.unasked(answers, corpus())
    assert [(f.rule, f.other) for f in found] == [("unasked_document", "spare")]
    assert evidence.unasked([answer("u", "q")], corpus()) == []  # no evidence anywhere


def test_a_slice_too_small_for_its_floor_and_a_latency_floor_on_too_few_answers() -> None:
    qs = [Question(question_id=f"q{i}", kind="single_meeting", question="?",
                   tags={"lang": "de" if i < 5 else "en"}) for i in range(100)]
    slices = [Floor("abstention_accuracy", 0.95, slice=("lang", v)) for v in ("de", "en")]
    latency = Floor("latency_p95_s", 5.0, upper=True, kind="single_meeting")
    found = floors.too_small([*slices, latency], qs, 1, [], Path("ragate.toml"),
                             {"lang=de:abstention_accuracy": 7})
    assert [(f.message.split()[1], f.line) for f in found] == [
        ("lang=de:abstention_accuracy", 7)]
    assert floors.best_case_needs(slices[0]) > 5
    few = floors.too_small([latency], qs[:30], 1, [], Path("ragate.toml"), {})
    assert len(few) == 1 and "59" in few[0].message
    assert floors.too_small([latency], qs[:30], 2, [], Path("ragate.toml"), {}) == []


def test_a_question_every_saved_run_got_right_or_wrong_separates_nothing() -> None:
    runs = Runs(outcomes={"easy": ["right", "right 3 of 3"], "hard": ["wrong", "right 0 of 2"],
                          "mixed": ["right", "wrong"], "once": ["right"],
                          "broken": ["error", "error"]}, runs=2)
    where = {qid: (Path("questions.jsonl"), n) for n, qid in
             enumerate(["easy", "hard", "mixed", "once", "broken"], start=1)}
    found = never_separates(runs, where)
    assert rules(found) == [("easy", "never_separates"), ("hard", "never_separates")]
    assert "right in every one of 2" in found[0].message


def test_pinned_evidence_that_moved_or_changed_is_a_finding_worded_as_validate_words_it(
        ) -> None:
    before = CorpusText(corpus())
    after = {**TURNS, "remote": ["An inserted turn.", *TURNS["remote"]],
             "budget": [TURNS["budget"][0], "Marketing wants a touch screen."]}
    now = CorpusText(corpus(after))
    answers = []
    for qid, doc, unit in [("moved", "remote", 1), ("edited", "budget", 1), ("same", "budget", 0)]:
        a = answer(qid, "?", "g", [{**span(doc, unit, unit),
                                    "pin": before.pin(doc, unit, unit).model_dump()}])
        answers.append(replace(a, pins=hold(a.expected, now)))
    found = pinned.pinned(answers)
    assert rules(found) == [("moved", "moved_evidence"), ("edited", "stale_evidence")]
    assert [f.message for f in found] == [*answers[0].pins.moved, *answers[1].pins.stale]
    assert [f.severity for f in found] == ["warning", "error"]


def test_a_goldsets_audit_rules_switch_a_rule_off_or_change_its_severity() -> None:
    found = [finding("wide_evidence", "m", path="x"), finding("near_duplicate", "m", path="x")]
    kept = with_severities(found, {"wide_evidence": "error", "near_duplicate": "off"})
    assert [(f.rule, f.severity) for f in kept] == [("wide_evidence", "error")]
    base = {"corpus": {"paths": ["c.jsonl"], "format": "segments-jsonl"}}
    with pytest.raises(ValidationError, match="near_dup"):
        GoldsetConfig.model_validate({**base, "audit": {"rules": {"near_dup": "off"}}})


SEGMENTS = [{"doc_id": "m1", "turn": i, "text": t} for i, t in enumerate(TURNS["remote"])]


def write_goldset(root: Path, audit: str = "") -> Path:
    (root / "corpus.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SEGMENTS))
    qs = [{"question_id": "q1", "kind": "single_meeting", "question": "How long does the "
           "battery last?"},
          {"question_id": "q2", "kind": "single_meeting", "question": "How long does the "
           "BATTERY last ?"}]
    ex = [{"question_id": q, "gist": "Two years with a kinetic charger.",
           "evidence": [{"doc_id": "m1", "first_turn": 1, "last_turn": 1}]} for q in ("q1", "q2")]
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    (root / "expected.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ex))
    (root / "ragate.toml").write_text('[corpus]\npaths = ["corpus.jsonl"]\n'
                                      'format = "segments-jsonl"\n[questions]\n'
                                      'expected = "expected.jsonl"\n' + audit)
    return root


def test_the_command_prints_a_line_per_finding_exits_1_on_an_error_and_speaks_json(
        tmp_path: Path) -> None:
    root = write_goldset(tmp_path)
    result = CliRunner().invoke(main, ["audit", str(root), "--no-embed"])
    assert result.exit_code == 1, result.output
    assert f"{root / 'questions.jsonl'}:2: q2: duplicate_question (error): the same question " \
           "as q1 (line 1)" in result.output
    assert "1 error, 0 warnings, 0 infos" in result.output
    as_json = CliRunner().invoke(main, ["audit", str(root), "--no-embed", "--format", "json"])
    report = AuditReports.model_validate_json(as_json.output).reports[0]
    assert [(f.question_id, f.rule, f.line) for f in report.findings] == [
        ("q2", "duplicate_question", 2)]
    write_goldset(tmp_path, '[audit]\nrules = { duplicate_question = "warning" }\n')
    assert CliRunner().invoke(main, ["audit", str(root), "--no-embed"]).exit_code == 0


def test_history_lines_are_read_through_the_reader_of_saved_runs(tmp_path: Path) -> None:
    from pytest_ragate.audit.runs import RunsError, read_runs

    def line(outcome: str, goldset: str = "g") -> str:
        return json.dumps({"time": "2026-12-01T00:00:00Z", "goldset": goldset,
                           "eval_version": "1", "outcomes": {
                               "q1": {"outcome": outcome, "digest": "abc"}}})

    history = tmp_path / "history.jsonl"
    history.write_text("\n".join([line("right"), line("wrong", "other"), "{torn",
                                  line("right")]) + "\n")
    runs = read_runs("g", [], [history])
    assert (runs.runs, runs.outcomes) == (2, {"q1": ["right", "right"]})
    with pytest.raises(RunsError, match=r"results\.jsonl"):
        (tmp_path / "results.jsonl").write_text("{}\n")
        read_runs("g", [tmp_path / "results.jsonl"], [])


def test_a_history_line_holding_u2028_is_one_line(tmp_path: Path) -> None:
    """JSON lets a string hold U+2028 unescaped (pydantic writes it so): the audit reads the
    history file split on newlines only, as it was written, not into two torn halves."""
    from pytest_ragate.audit.runs import read_runs

    line = json.dumps({"time": "2026-12-01T00:00:00Z", "goldset": "g", "eval_version": "1",
                       "judges": ["a\u2028b"],
                       "outcomes": {"q1": {"outcome": "right", "digest": "abc"}}},
                      ensure_ascii=False)
    history = tmp_path / "history.jsonl"
    history.write_text(f"{line}\n{line}\n", encoding="utf-8")
    runs = read_runs("g", [], [history])
    assert (runs.runs, runs.outcomes) == (2, {"q1": ["right", "right"]})
