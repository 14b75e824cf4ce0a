"""answer_match labels bound to what they judged, as pure functions (issue 45, item 4): a label
carries the sha256 of the raw answer and of the expected answer (gist, facts, forbid) it was
judged against; a change to either leaves it stale, said once per question; a label written
before `expected_sha256` still settles, said once to predate it, until `ragate stamp --labels`
binds it."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest
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
                        "stamp --labels` to bind it")
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
    path.write_text(saved_results([rec("q1", index=0, answer=answer_text, expected=[]).model_copy(
        update={"answer_check": answer_check})]))
    return path


def test_stamp_labels_stamps_the_raw_answer_and_binds_a_label_that_predates(
        tmp_path: Path) -> None:
    """A run that masked the answer keeps the masked text; the label gets the raw answer's
    digest the check carries (two answers masking alike are two answers), and a label
    stamped before `expected_sha256` gets the expected answer its answer was held to. (A
    sealed goldset's are keyed: `test_stamp_labels_keeps_a_sealed_goldsets_stamps_keyed`.)"""
    held = settle(check("Maybe 25 or 30 euros.", AT_25), {}, RAW, digest(AT_25), "label")
    res = results(tmp_path, "Maybe [sealed] or 30 euros.", held)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": "q1", "metric": "answer_match", "verdict": 1}\n')
    out = CliRunner().invoke(main, ["stamp", str(res), "--labels", str(labels)])
    assert out.exit_code == 0 and "stamped 1 labels" in out.output, out.output
    assert json.loads(labels.read_text()) == {
        "question_id": "q1", "metric": "answer_match", "verdict": 1, "answer_sha256": RAW,
        "expected_sha256": digest(AT_25)}
    labels.write_text(json.dumps({"question_id": "q1", "metric": "answer_match",
                                  "verdict": 0, "answer_sha256": RAW}) + "\n")
    out = CliRunner().invoke(main, ["stamp", str(res), "--labels", str(labels)])
    assert out.exit_code == 0 and "stamped 1 labels" in out.output, out.output
    assert json.loads(labels.read_text())["expected_sha256"] == digest(AT_25)
    again = CliRunner().invoke(main, ["stamp", str(res), "--labels", str(labels)])
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


# --- a sealed goldset's digests are keyed (no digest kept confirms a guess of a sealed text) --

KEYS = (b"k" * 32, b"j" * 32)
SEAL = "label binding passphrase"


def sealed_with_labels(root: Path) -> Path:
    """A sealed goldset whose answered questions list the fact "25 euros", with a labels file
    (empty until a test writes it)."""
    from pytest_ragate.goldsets.sealed import Scrypt
    from pytest_ragate.goldsets.sealing import seal_goldset
    from tests.conftest import BASE_TOML, expected_rows, write_goldset

    rows = [{**row, "facts": ["25 euros"]} if row["gist"] else row for row in expected_rows()]
    gs = write_goldset(root / "gs", toml=BASE_TOML + '\n[judge]\nlabels = "labels.jsonl"\n',
                       expected=rows)
    (gs / "labels.jsonl").write_text("")
    seal_goldset(gs, SEAL, kdf=Scrypt(log2_n=10, p=1))
    return gs


def test_a_digest_is_keyed_with_a_key_and_plain_without(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         ) -> None:
    """Plain sha256 where there is no key (a plaintext goldset: files stamped before stay
    valid); `hmac-sha256:` and the HMAC under a sealed goldset's key, another per key. The key
    is a sub-key of the seal's scrypt output, never the passphrase or the AES key, the same
    for every process that opens the seal."""
    from pytest_ragate.answer import answer_sha256, is_keyed
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.goldsets.sealed import (
        digest_key,
        open_sealed_keyed,
        read_sealed,
        sealed_path,
    )

    assert answer_sha256(ANSWER) == RAW and not is_keyed(RAW)
    keyed = [answer_sha256(ANSWER, key) for key in KEYS]
    assert keyed[0] == "hmac-sha256:" + hmac.new(KEYS[0], ANSWER.encode(),
                                                 hashlib.sha256).hexdigest()
    assert keyed[0] != keyed[1] and RAW not in "".join(keyed)
    expected = [expected_sha256(AT_25["gist"], AT_25["facts"], [], key)  # type: ignore[arg-type]
                for key in (None, *KEYS)]
    assert expected[0] == digest(AT_25) and len(set(expected)) == 3
    assert all(is_keyed(x) and digest(AT_25) not in x for x in expected[1:])
    gs = sealed_with_labels(tmp_path)
    derived = read_sealed(sealed_path(gs)).kdf.derive(SEAL)
    key = open_sealed_keyed(gs, SEAL)[2]
    assert key == digest_key(derived) == hmac.new(derived, b"ragate answer digests/1",
                                                  hashlib.sha256).digest()
    assert key not in (SEAL.encode(), derived[:32], derived[32:])
    assert load_goldset(gs).digest_key is None  # without the key: nothing to key with
    monkeypatch.setenv("RAGATE_SEAL_KEY", SEAL)
    assert load_goldset(gs).digest_key == key
    assert sealed_with_labels(tmp_path / "again") != gs
    assert open_sealed_keyed(tmp_path / "again" / "gs", SEAL)[2] != key  # another seal


def test_a_sealed_label_settles_by_keyed_digests_and_a_plain_one_predates_them() -> None:
    """In a sealed goldset a label settles its answer by keyed digests only: one stamped with
    plain digests (before they were keyed) or under another key settles nothing, and the
    first is said once per question to predate the keyed rule."""
    from pytest_ragate.answer import answer_sha256

    text = "Maybe 25 or 30 euros."
    unsure = check(text, AT_30)
    key, other = KEYS
    answer = answer_sha256(text, key)
    expected = expected_sha256(AT_30["gist"], AT_30["facts"], AT_30["forbid"], key)  # type: ignore[arg-type]
    bound = settle(unsure, {answer: said(0, expected)}, answer, expected, "label")
    assert bound.settled == "label" and bound.value == 0.0 and bound.label_note is None
    assert (bound.answer_sha256, bound.expected_sha256) == (answer, expected)
    another = settle(unsure, {answer_sha256(text, other): said(0, expected)}, answer,
                     expected, "label")
    assert another.unsettled and another.label_note == "stale_answer"
    plain = hashlib.sha256(text.encode()).hexdigest()
    for labels in ({plain: said(0, digest(AT_30))}, {plain: said(0)},
                   {answer: said(0, digest(AT_30))}):
        old = settle(unsure, labels, answer, expected, "label")
        assert old.unsettled and old.label_note == "predates_keyed", labels
    notes = label_notes([row("q7", old), row("q7", old, 2)])
    assert len(notes) == 1 and notes[0].startswith("label for q7 predates keyed digests")
    assert "RAGATE_SEAL_KEY" in notes[0] and "euros" not in notes[0]


def sealed_results(tmp_path: Path, text: str, answer: str, expected: str,
                   name: str = "res.jsonl") -> Path:
    """A results file whose q1 (a sealed question: no expected spans shown) answered `text`,
    unsure, its check carrying these digests."""
    from tests.test_html_report import rec

    held = AnswerCheck(outcome="unsure", why="gives other candidate values", facts=1,
                       answer_sha256=answer, expected_sha256=expected)
    path = tmp_path / name
    path.write_text(saved_results([rec("q1", index=0, answer=text, expected=None).model_copy(
        update={"answer_check": held})]))
    return path


def test_stamp_labels_keeps_a_sealed_goldsets_stamps_keyed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From a sealed run's results the stamps are its keyed digests; plain ones (a run
    without the key, or before digests were keyed) are refused, and so is a label stamped
    with plain digests (before they were keyed: it is labelled again, never bound anew)."""
    from pytest_ragate.answer import answer_sha256
    from pytest_ragate.goldsets.sealed import open_sealed_keyed

    gs = sealed_with_labels(tmp_path)
    key = open_sealed_keyed(gs, SEAL)[2]
    text, labels = "Maybe 25 or 30 euros.", gs / "labels.jsonl"
    plain = [hashlib.sha256(text.encode()).hexdigest(),
             expected_sha256("gist of q1", ["25 euros"], [])]
    keyed = [answer_sha256(text, key), expected_sha256("gist of q1", ["25 euros"], [], key)]
    res = sealed_results(tmp_path, text, *keyed)
    fresh = '{"question_id": "q1", "metric": "answer_match", "verdict": 1}\n'
    labels.write_text(fresh)
    out = CliRunner().invoke(main, ["stamp", str(res), "--labels", str(labels)])
    assert out.exit_code == 0 and "stamped 1 labels" in out.output, out.output
    stamped = json.loads(labels.read_text())
    assert [stamped["answer_sha256"], stamped["expected_sha256"]] == keyed
    labels.write_text(fresh)
    old_run = sealed_results(tmp_path, text, *plain, name="old.jsonl")
    out = CliRunner().invoke(main, ["stamp", str(old_run), "--labels", str(labels)])
    assert out.exit_code == 1 and "RESULTS holds plain digests" in out.output, out.output
    assert labels.read_text() == fresh
    before = json.dumps({"question_id": "q1", "metric": "answer_match", "verdict": 1,
                         "answer_sha256": plain[0], "expected_sha256": plain[1]}) + "\n"
    labels.write_text(before)
    monkeypatch.setenv("RAGATE_SEAL_KEY", SEAL)
    out = CliRunner().invoke(main, ["stamp", str(res), "--labels", str(labels)])
    assert out.exit_code == 1 and labels.read_text() == before
    assert "stamped with plain digests, before a sealed goldset's were keyed: label it again" \
        in out.output, out.output


def test_validate_says_once_that_a_sealed_goldsets_plain_labels_predate_keyed_digests(
        tmp_path: Path) -> None:
    """Known without the key: a sealed goldset's label stamped with plain digests."""
    gs = sealed_with_labels(tmp_path)
    (gs / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [
        {"question_id": "q1", "metric": "answer_match", "verdict": 1, "answer_sha256": RAW,
         "expected_sha256": expected_sha256("gist of q1", ["25 euros"], [])},
        {"question_id": "q1", "metric": "answer_match", "verdict": 0,
         "answer_sha256": "1" * 64}]))
    out = CliRunner().invoke(main, ["validate", str(gs)])
    assert out.exit_code == 0, out.output
    assert out.output.count("label for q1 predates keyed digests") == 1, out.output
    assert "predates expected-answer digests" not in out.output


def test_fixture_verdicts_of_a_masked_sealed_answer_are_stamped_and_held_keyed(
        tmp_path: Path) -> None:
    """`ragate stamp --verdicts` stamps the keyed digest a sealed run keeps of a masked answer,
    and refuses a results file that keeps a plain one (written before digests were keyed);
    the fixture judge holds its verdicts to the digest the row keeps, so the keyed stamp
    applies to that answer and to no other."""
    import asyncio

    from pytest_ragate.answer import answer_sha256
    from pytest_ragate.judges.base import JudgeFailure, JudgeInput
    from pytest_ragate.judges.fixture import FixtureJudge
    from tests.test_html_report import rec

    masked, key = "It sells for [sealed].", KEYS[0]
    judge = tmp_path / "judge.json"
    verdicts = '{"judge_id": "v", "answers": {"q1": {"statements": ["s"], "supported": [true]}}}'
    for name, digest_kept in (("keyed.jsonl", answer_sha256(ANSWER, key)), ("old.jsonl", RAW)):
        (tmp_path / name).write_text(saved_results([rec(
            "q1", index=0, answer=masked, expected=None, answer_sha256=digest_kept)]))
    judge.write_text(verdicts)
    old = CliRunner().invoke(main, ["stamp", str(tmp_path / "old.jsonl"),
                                    "--verdicts", str(judge)])
    assert old.exit_code == 1 and "plain digest of its masked answer" in old.output, old.output
    assert old.output.count("\n") == 1 and judge.read_text() == verdicts
    out = CliRunner().invoke(main, ["stamp", str(tmp_path / "keyed.jsonl"),
                                    "--verdicts", str(judge)])
    assert out.exit_code == 0, out.output
    stamped = json.loads(judge.read_text())["answers"]["q1"]["answer_sha256"]
    assert stamped == answer_sha256(ANSWER, key)
    fixture = FixtureJudge(judge, embedder=None)  # type: ignore[arg-type]

    def judged(text: str, kept: str | None) -> float:
        item = JudgeInput("q1", "How much?", text, (), answer_sha256=kept)
        return float(asyncio.run(fixture.score(item, "faithfulness")))

    assert judged(ANSWER, stamped) == 1.0
    with pytest.raises(JudgeFailure, match="stale fixture verdict"):
        judged("It sells for 30 euros.", answer_sha256("It sells for 30 euros.", key))
    with pytest.raises(JudgeFailure, match="stale fixture verdict"):
        judged(ANSWER, None)  # its plain digest is not the keyed stamp
