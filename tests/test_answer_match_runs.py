"""answer_match in a run, end to end, with and without `-n 2`: a sealed goldset with facts
whose system answers one question right, one with a list of candidate days (unsure), one with
a forbidden statement; the unsure answer is named in every output and keeps the floor from
being decided; no fact reaches an output; a person's label, stamped from the results file,
settles it; `ragate calibrate --on answer_similarity` reads the same rows. Labels bound to
what they judged: q2's label was judged against an older expected answer (stale: q2 stays
unsure, said once), and q3's was stamped, as before the rule, with a plain digest (of its
masked text, which any answer masking alike would share): in a sealed goldset it predates the
keyed rule and settles nothing. No output holds a plain sha256 of a sealed expected answer or
of a masked answer: each would confirm a guess of it (the digests are keyed). A second goldset
in the same run (`adv`, issue 45) is answered by the adversary, one answer per class (a
negation after the fact, a refusal, a hedge, a bound, a sign, another unit, a version read as
a decimal, a possessive, candidates across sentences, a zero-width negation): none is right,
so its floor fails, where before every one of them was counted right."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.answer import answer_sha256
from pytest_ragate.cli import main
from pytest_ragate.goldsets.sealed import Scrypt, open_sealed_keyed
from pytest_ragate.goldsets.sealing import seal_goldset
from pytest_ragate.scoring.answer_match import expected_sha256
from tests.conftest import (
    BASE_TOML,
    WORKERS_SHARED,
    expected_rows,
    results_rows,
    run_command,
    write_goldset,
)

KEY = "answer key passphrase"
GISTS = {"q1": "The Zorblax treasury keeps forty quatloos.",
         "q2": "The Vogon audit closes on Thursday.",
         "q3": "Marvin signs both budget memos personally."}
FACTS = {"q1": {"facts": ["Zorblax", ["forty quatloos", "40 quatloos"]]},
         "q2": {"facts": ["Thursday"]},
         "q3": {"facts": ["Marvin", ["both memos", "/\\btwo\\s+memos/"]],
                "forbid": ["Zaphod signs"]}}
SECRETS = ["Zorblax", "forty quatloos", "40 quatloos", "Thursday", "Marvin", "both memos",
           "two\\s+memos", "Zaphod signs", *GISTS.values()]
SAID = {"q1": "The treasury of Zorblax keeps 40 quatloos.",
        "q2": "The audit closes on Monday, Tuesday or Thursday.",
        "q3": "Zaphod signs the memos."}
SYSTEM = f'''
import pytest
from pytest_ragate import Answer, Citation, Context

SAID = {{**ADV, **{SAID!r}}}

@pytest.fixture(scope="session")
def ragate_system():
    def answer(question):
        qid = question.split()[-1].rstrip("?")
        ctx = Context(context_id="c1", doc_id="m1", first_unit=2, last_unit=3,
                      text="m1 turns 2-3", distance=0.2)
        if qid not in SAID:
            return Answer.abstain(contexts=[ctx])
        return Answer(text=SAID[qid], contexts=[ctx], citations=[Citation(context_id="c1")])
    return answer
'''
MASKED_Q3 = "[sealed] the memos."  # q3's answer as a sealed run keeps it


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def old_labels(key: bytes) -> list[dict[str, object]]:
    """q2's judged when the audit closed on Tuesday (keyed, as stamped now); q3's stamped
    before digests were keyed, from its masked text."""
    return [{"question_id": "q2", "metric": "answer_match", "verdict": 1,
             "answer_sha256": answer_sha256("The audit closes on Monday, Tuesday or Thursday.",
                                            key),
             "expected_sha256": expected_sha256("The Vogon audit closes on Tuesday.",
                                                ["Tuesday"], [], key)},
            {"question_id": "q3", "metric": "answer_match", "verdict": 1,
             "answer_sha256": sha(MASKED_Q3)}]


def plain_digests() -> list[str]:
    """What an adversary would hash a guess into: the plain sha256 of each sealed expected
    answer's gist, facts and forbid, and of each raw answer (each is masked in the outputs)."""
    return [*(expected_sha256(GISTS[q], FACTS[q]["facts"], FACTS[q].get("forbid", []))
              for q in GISTS), *map(sha, SAID.values())]


def digest_key(gs: Path) -> bytes:
    return open_sealed_keyed(gs, KEY)[2]


# the adversary's answers (issue 45): question id -> (gist, facts, answer), none of them right
ADVERSARY = {
    "a01": ("Alice chaired the meeting.", ["Alice"], "Alice did not chair the meeting."),
    "a02": ("The fee is 25 cents.", ["25 cents"], "There is no information in the provided "
            "context confirming that the fee is 25 cents."),
    "a03": ("Alice chaired the meeting.", ["Alice"], "I think Alice chaired the meeting."),
    "a04": ("The plan costs 25 euros.", ["25 euros"], "The plan costs over 25 euros."),
    "a05": ("Churn fell by 2.5 percent.", ["2.5 percent"], "Churn changed by -2.5%."),
    "a06": ("The plan costs 25 euros.", ["25 euros"], "The plan costs 25 euro cents."),
    "a07": ("It requires Python 3.10.", ["3.10"], "It requires Python 3.1."),
    "a08": ("Bob signed the contract.", ["Bob"], "Bob's lawyer signed the contract."),
    "a09": ("The summit is in Lyon.", ["Lyon"], "It was Lyon. Or maybe Lille."),
    "a10": ("The fee is 25 cents.", ["25 cents"], "The fee is n\u200bot 25 cents."),
}
FLOORS = "[floors]\nanswer_match = 0.5\nanswer_similarity = 0.0\n"
OUTPUTS = {"junit.xml": "--junitxml", "r.jsonl": "--ragate-results", "r.md": "--ragate-report",
           "r.html": "--ragate-html", "h.jsonl": "--ragate-history"}


def goldset(root: Path, labels: bool = True) -> Path:
    expected = [{**row, "gist": GISTS.get(row["question_id"]), **FACTS.get(row["question_id"],
                                                                             {})}
                for row in expected_rows()]
    toml = BASE_TOML + ('\n[judge]\nlabels = "labels.jsonl"\n' if labels else "")
    gs = write_goldset(root / "gs", toml=toml, floors=FLOORS, expected=expected)
    (gs / "labels.jsonl").write_text("")  # sealing loads the goldset; its labels are keyed
    seal_goldset(gs, KEY, kdf=Scrypt(log2_n=10, p=1))
    (gs / "labels.jsonl").write_text("\n".join(json.dumps(x) for x in old_labels(
        digest_key(gs))) + "\n")
    answers = {q: answer for q, (_, _, answer) in ADVERSARY.items()}
    (root / "conftest.py").write_text(f"ADV = {answers!r}\n{SYSTEM}")
    adversary(root)
    return gs


def adversary(root: Path) -> Path:
    """The `adv` goldset: the adversary's answers, unsure ones counted wrong so that its
    floor is decided on what answer_match calls them."""
    ids = list(ADVERSARY)
    return write_goldset(
        root / "adv",
        toml=BASE_TOML.replace('"mini"', '"adv"') + '\n[answers]\nunsure = "wrong"\n',
        floors="[floors]\nanswer_match = 0.5\n",
        questions=[{"question_id": q, "kind": "single_doc", "question": f"What about {q}?"}
                   for q in ids],
        expected=[{"question_id": q, "gist": gist, "facts": facts,
                   "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                  for q, (gist, facts, _) in ADVERSARY.items()])


@dataclass(frozen=True)
class Ran:
    root: Path
    ret: int
    texts: dict[str, str]


def run(root: Path, workers: str) -> Ran:
    done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", "gs", "adv",
                       *(f"{flag}={name}" for name, flag in OUTPUTS.items()),
                       RAGATE_SEAL_KEY=KEY)
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    texts.update({name: (root / name).read_text(encoding="utf-8") for name in OUTPUTS})
    return Ran(root=root, ret=done.returncode, texts=texts)


@pytest.fixture(scope="module")
def ran(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    root = tmp_path_factory.mktemp(f"answers-n{workers}")
    goldset(root)
    return run(root, workers)


pytestmark = [pytest.mark.heavy, WORKERS_SHARED]  # a process of its own, the embedded model


def junit_cases(ran: Ran, folder: str = "gs") -> dict[str, ET.Element]:
    """The testcases of one goldset folder of the run, by name."""
    tree = ET.fromstring(ran.texts["junit.xml"])
    return {case.get("name", ""): case for case in tree.iter("testcase")
            if case.get("classname", "").split(".")[0] == folder}


def test_an_unsure_answer_is_named_everywhere_and_leaves_the_floor_not_decided(
        ran: Ran) -> None:
    assert ran.ret == pytest.ExitCode.TESTS_FAILED, ran.texts["stdout"][-3000:]
    out = ran.texts["stdout"]
    assert "answer_match over 3 answers with facts: 1 right, 1 wrong, 1 unsure" in out
    assert "unsure, not labelled (1: review each" in out and "q2 (gives other candidate values" \
        in out
    floor = junit_cases(ran)["floor[answer_match]"]
    failure = floor.find("failure")
    assert failure is not None and "not decided" in failure.get("message", "")
    assert "1 unsure answer not labelled: q2" in failure.get("message", "")
    for report in ("r.md", "r.html"):
        assert "unsure, not labelled" in ran.texts[report] and "q2 (" in ran.texts[report]
    rows = {r["question_id"]: r for r in results_rows(ran.root / "r.jsonl")}
    assert {q: rows[q]["answer_check"]["outcome"] for q in GISTS} == {
        "q1": "right", "q2": "unsure", "q3": "wrong"}
    assert rows["q1"]["metrics"]["answer_match"] == 1.0
    assert rows["q2"]["metrics"]["answer_match"] is None
    assert "answer_check" not in rows["q4"] and "answer_similarity" not in rows["q4"]["metrics"]


def test_a_label_binds_the_raw_answer_and_the_expected_answer_it_judged(ran: Ran) -> None:
    """q2's label, judged against another expected answer, leaves it unsure, said once with
    its id; q3's, stamped with a plain digest (of the masked text two answers may share),
    predates the keyed rule and settles nothing, said once. The rows carry keyed digests."""
    out = ran.texts["stdout"]
    assert out.count("label for q2 was judged against another expected answer") == 1, out
    assert out.count("label for q3 predates keyed digests") == 1, out
    rows = {r["question_id"]: r for r in results_rows(ran.root / "r.jsonl")}
    assert rows["q3"]["answer_text"] == MASKED_Q3
    assert rows["q3"]["answer_check"].get("settled") is None
    assert rows["q3"]["metrics"]["answer_match"] == 0.0
    keyed = answer_sha256("Zaphod signs the memos.", digest_key(ran.root / "gs"))
    assert keyed.startswith("hmac-sha256:")
    assert rows["q3"]["answer_check"]["answer_sha256"] == keyed
    assert rows["q3"]["answer_check"]["label_note"] == "predates_keyed"
    assert rows["q2"]["answer_check"]["label_note"] == "stale_expected"
    assert rows["q3"]["answer_sha256"] == keyed  # the row's too


def test_each_answer_says_which_facts_it_stated_by_number(ran: Ran) -> None:
    props = {q: {p.get("name"): p.get("value") for p in junit_cases(ran)[q].iter("property")}
             for q in GISTS}
    assert props["q1"]["answer_match.found"] == "1,2"
    assert props["q3"]["answer_match.forbidden"] == "1"
    assert props["q3"]["answer_match.missing"] == "1,2"
    assert props["q2"]["answer_match.outcome"] == "unsure"


def test_no_fact_or_forbidden_statement_of_the_sealed_goldset_reaches_an_output(
        ran: Ran) -> None:
    flat = {name: " ".join(text.casefold().split()) for name, text in ran.texts.items()}
    leaks = [(name, secret) for name, text in flat.items() for secret in SECRETS
             if " ".join(secret.casefold().split()) in text]
    assert leaks == []
    assert "[sealed]" in ran.texts["r.jsonl"]  # the right answer spelt the facts: masked


def test_no_output_holds_a_plain_digest_of_a_sealed_answer_or_a_masked_one(ran: Ran) -> None:
    """The adversary with every output of the run: hashing a guess of a short fact ("40
    quatloos") or of a masked answer confirms nothing, as no output holds a plain sha256 of
    an expected answer (gist, facts, forbid) or of a raw answer; the keyed ones are there."""
    found = [(name, digest[:12]) for name, text in ran.texts.items()
             for digest in plain_digests() if digest in text]
    assert found == []
    assert len(re.findall(r'"expected_sha256": ?"hmac-sha256:', ran.texts["r.jsonl"])) >= 3


def test_a_label_stamped_from_the_results_settles_the_unsure_answer(ran: Ran,
                                                                    workers: str) -> None:
    if workers == "2":
        pytest.skip("one relabelled run is enough: labels are read on every process alike")
    labels = ran.root / "gs" / "labels.jsonl"
    labels.write_text(json.dumps({"question_id": "q2", "metric": "answer_match",
                                  "verdict": 0}) + "\n")
    stamped = CliRunner().invoke(main, ["stamp", str(ran.root / "r.jsonl"),
                                        "--labels", str(labels)])
    assert stamped.exit_code == 0 and "stamped 1 labels" in stamped.output, stamped.output
    again = run(ran.root, "0")
    assert again.ret == pytest.ExitCode.TESTS_FAILED  # decided now: 1 of 3 < 0.5
    message = junit_cases(again)["floor[answer_match]"].find("failure")
    assert message is not None and "not decided" not in message.get("message", "")
    assert "answer_match 0.33 < floor 0.50" in message.get("message", "")
    assert "1 settled by a person's label" in again.texts["stdout"]
    calibrated = CliRunner().invoke(main, ["calibrate", str(ran.root / "r.jsonl"), "--on",
                                           "answer_similarity"])
    assert "3 answers whose correctness is known (1 by a person's label, 2 by " \
        "answer_match)" in calibrated.output, calibrated.output


def test_no_adversarial_answer_is_counted_right_and_the_floor_fails(ran: Ran) -> None:
    rows = {r["question_id"]: r for r in results_rows(ran.root / "r.jsonl")
            if r["question_id"] in ADVERSARY}
    called = {q: rows[q]["answer_check"]["outcome"] for q in ADVERSARY}
    assert "right" not in called.values(), called
    assert all(rows[q]["metrics"]["answer_match"] == 0.0 for q in ADVERSARY)
    failure = junit_cases(ran, "adv")["floor[answer_match]"].find("failure")
    assert failure is not None and "answer_match 0.00 < floor 0.50" in failure.get("message", "")
