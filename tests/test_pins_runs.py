"""Pinned evidence in a goldset: pins read with the expected answers, held to the corpus at
load (moved spans scored where their text is now, stale ones named), `ragate pin`,
`ragate reanchor`, `ragate validate`'s lines and warnings, and one gate run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.decision.floors import Gap, Verdict
from pytest_ragate.decision.goldset_floors import said_once
from pytest_ragate.decision.regressions import check
from pytest_ragate.goldsets.forewarnings import same_questions, undecidable_floors
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.figures import kind_counts
from pytest_ragate.scoring.flips import question_outcome
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, Span, tally
from tests.conftest import jsonl, results_rows

RETURNS = ("# Returns\n\nYou can return any product within 30 days.\n\nRefunds go back to the "
           "card you paid with,\nwithin five working days.\n\nOpened software cannot be "
           "returned.\n")
SHIPPING = "Orders ship in two days.\n\nExpress shipping costs 9 euros.\n"
QUESTIONS = [
    {"question_id": "refund", "kind": "single_doc", "question": "How fast is a refund?"},
    {"question_id": "software", "kind": "single_doc", "question": "Can software go back?"},
    {"question_id": "express", "kind": "single_doc", "question": "What does express cost?"},
    {"question_id": "warranty", "kind": "unanswerable", "question": "How long is the warranty?"},
]
EXPECTED = [
    {"question_id": "refund", "gist": "five working days",
     "evidence": [{"doc_id": "returns", "first_unit": 2, "last_unit": 2}]},
    {"question_id": "software", "gist": "not when opened",
     "evidence": [{"doc_id": "returns", "first_unit": 3, "last_unit": 3}]},
    {"question_id": "express", "gist": "9 euros", "notes": "ünïcode kept",
     "evidence": [{"doc_id": "shipping", "first_unit": 1, "last_unit": 1}]},
    {"question_id": "warranty", "gist": None, "evidence": []},
]


def goldset(root: Path, floors: str = "") -> Path:
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "returns.md").write_text(RETURNS)
    (root / "docs" / "shipping.txt").write_text(SHIPPING)
    (root / "ragate.toml").write_text(
        'name = "shop"\n[corpus]\npaths = ["docs/*"]\nformat = "documents"\n'
        '[questions]\nexpected = "expected.jsonl"\n' + floors)
    (root / "questions.jsonl").write_text(jsonl(QUESTIONS))
    (root / "expected.jsonl").write_text(jsonl(EXPECTED))
    return root


def ragate(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def edit_corpus(root: Path) -> None:
    """A paragraph inserted above the refund text (it moves to unit 3), the software text
    edited (stale), shipping left alone."""
    (root / "docs" / "returns.md").write_text(RETURNS.replace(
        "# Returns\n\n", "# Returns\n\nNew: returns are free.\n\n").replace(
        "Opened software cannot be returned.", "Opened software can be returned for a fee."))


def test_pin_adds_only_pins_and_leaves_every_other_byte(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    before = (root / "expected.jsonl").read_text().splitlines()
    code, out = ragate("pin", str(root))
    assert code == 0 and out.startswith("pinned 3 spans"), out
    after = (root / "expected.jsonl").read_text().splitlines()
    assert after[3] == before[3]  # nothing to pin: the line is not rewritten
    for old, new in zip(before[:3], after[:3], strict=True):
        changed = json.loads(new)
        assert all("pin" in e for e in changed["evidence"])
        for entry in changed["evidence"]:
            del entry["pin"]
        assert json.dumps(changed) == old  # same layout (ASCII escapes too), same fields
    assert "\\u00fcn\\u00efcode kept" in after[2]
    assert ragate("pin", str(root)) == (0, "pinned 0 spans\n")


def test_a_moved_span_is_scored_where_its_text_is_now_and_a_stale_one_named(
        tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    ragate("pin", str(root))
    edit_corpus(root)
    cases = {c.question.question_id: c for c in load_goldset(root).cases}
    refund, software, express = cases["refund"], cases["software"], cases["express"]
    assert refund.expected is not None and refund.expected.spans == [Span("returns", 3, 3)]
    assert refund.pins is not None and refund.pins.moved == (
        "evidence moved: returns unit 2 is now unit 3 (scored there; `ragate reanchor "
        "--write` updates the goldset)",)
    assert software.pins is not None and len(software.pins.stale) == 1
    assert "'opened software cannot be returned.'" in software.pins.stale[0]
    assert "nearest now: returns unit 4 'Opened software can be returned for a fee.'" \
        in software.pins.stale[0]
    assert express.pins is not None and not express.pins.moved and not express.pins.stale


def test_a_pinned_span_of_a_deleted_document_fails_its_question_not_the_goldset(
        tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    ragate("pin", str(root))
    (root / "docs" / "shipping.txt").unlink()
    (root / "docs" / "other.txt").write_text("Express shipping costs 12 euros.\n")
    express = {c.question.question_id: c for c in load_goldset(root).cases}["express"]
    assert express.pins is not None
    assert express.pins.stale[0].startswith("stale evidence: document 'shipping' is no "
                                            "longer in the corpus")
    assert "nearest now: other unit 0 'Express shipping costs 12 euros.'" \
        in express.pins.stale[0]


def test_reanchor_is_a_dry_run_until_write_and_rewrites_only_units(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    ragate("pin", str(root))
    edit_corpus(root)
    pinned = (root / "expected.jsonl").read_text()
    code, out = ragate("reanchor", str(root))
    assert code == 1 and "would re-anchor 1 span (--write" in out
    assert "software: stale evidence" in out
    assert (root / "expected.jsonl").read_text() == pinned
    code, out = ragate("reanchor", str(root), "--write")
    lines, old = (root / "expected.jsonl").read_text().splitlines(), pinned.splitlines()
    assert "re-anchored 1 span" in out
    assert lines[1:] == old[1:]
    assert lines[0] == old[0].replace('"first_unit": 2, "last_unit": 2',
                                      '"first_unit": 3, "last_unit": 3')
    assert ragate("reanchor", str(root))[1].startswith("software: stale")


def test_a_sealed_goldset_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    from pytest_ragate.goldsets.sealing import seal_goldset

    root = goldset(tmp_path / "gs")
    seal_goldset(root, "k" * 32)
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    for command in (("pin",), ("reanchor", "--write")):
        code, out = ragate(*command, str(root))
        assert code == 1 and "the expected answers are sealed; nothing changed" in out
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == files


def test_a_file_edited_while_pinning_is_not_overwritten(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_ragate.pinning as pinning

    root = goldset(tmp_path / "gs")
    theirs = jsonl([*EXPECTED[:3], {**EXPECTED[3], "notes": "edited meanwhile"}])
    rewrite = pinning._rewrite

    def meanwhile(*args: object) -> str | None:
        (root / "expected.jsonl").write_text(theirs)
        return rewrite(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pinning, "_rewrite", meanwhile)
    code, out = ragate("pin", str(root))
    assert code == 1 and "changed while it was being read; nothing written" in out
    assert (root / "expected.jsonl").read_text() == theirs


NEIGHBOURS = {"before": "sha256:" + "1" * 64, "after": "sha256:" + "2" * 64}


@pytest.mark.parametrize(("pin", "field"), [
    ({"digest": "sha256:zz", "chars": 3, "quote": "abc", **NEIGHBOURS}, "evidence[0].pin.digest"),
    ({"digest": "sha256:" + "0" * 64, "quote": "abc", **NEIGHBOURS}, "evidence[0].pin.chars"),
    ("abc", "evidence[0].pin"),
])
def test_a_corrupted_pin_is_named_by_line_and_field(tmp_path: Path, pin: object,
                                                    field: str) -> None:
    root = goldset(tmp_path / "gs")
    broken = [{**EXPECTED[0], "evidence": [{**EXPECTED[0]["evidence"][0], "pin": pin}]},
              *EXPECTED[1:]]
    (root / "expected.jsonl").write_text(jsonl(broken))
    with pytest.raises(GoldsetError) as caught:
        load_goldset(root)
    [problem] = caught.value.problems
    assert (problem.line, problem.field, problem.question_id) == (1, field, "refund")


def test_a_pin_on_a_whole_document_is_refused(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    pin = {"digest": "sha256:" + "0" * 64, "chars": 3, "quote": "abc", **NEIGHBOURS}
    (root / "expected.jsonl").write_text(jsonl(
        [{**EXPECTED[0], "evidence": [{"doc_id": "returns", "pin": pin}]}, *EXPECTED[1:]]))
    with pytest.raises(GoldsetError, match="a pin fingerprints a span's text"):
        load_goldset(root)


def test_validate_counts_unpinned_spans_and_fails_on_stale_ones(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs")
    code, out = ragate("validate", str(root))
    assert code == 0 and "3 of 3 evidence spans unpinned" in out
    ragate("pin", str(root))
    assert "spans unpinned" not in ragate("validate", str(root))[1]
    edit_corpus(root)
    code, out = ragate("validate", str(root))
    assert code == 1
    assert "  software: stale evidence: the pinned text of 'returns'" in out
    assert "  refund: evidence moved: returns unit 2 is now unit 3" in out


def test_validate_warns_of_identical_questions_and_floors_never_decided(tmp_path: Path) -> None:
    root = goldset(tmp_path / "gs", '[floors]\nlatency_p95_s = { max = 2.0 }\n'
                   'abstention_accuracy = 0.95\n')
    (root / "questions.jsonl").write_text(jsonl(
        [*QUESTIONS[:2], {**QUESTIONS[2], "question": "  how FAST is a refund? "},
         QUESTIONS[3]]))
    loaded = load_goldset(root)
    assert same_questions(loaded) == [
        "warning: refund, express ask the same question (case and whitespace ignored): every "
        "interval counts them as independent observations"]
    assert list(undecidable_floors(loaded)) == [
        "warning: floor[latency_p95_s] can never be decided over its 4 questions: its 95% "
        "latency quantile has a 95% upper bound only from 59 answers on; it always fails"]
    strict = list(undecidable_floors(loaded, min_n=3, strict=True))
    assert len(strict) == 2 and "95% lower bound under 0.95" in strict[1]
    assert "ragate_min_n = 5" in list(undecidable_floors(loaded, min_n=5))[1]


SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

# where each answer's text is in the edited corpus: refund moved to unit 3
WHERE = {"refund": ("returns", 3), "software": ("returns", 4), "express": ("shipping", 1)}

@pytest.fixture
def ragate_system():
    def answer(text):
        if "warranty" in text:
            return Answer.abstain()
        key = next(k for k in WHERE if k in text.lower() or k[:4] in text.lower())
        doc, unit = WHERE[key]
        context = Context(context_id=f"{doc}#{unit}", doc_id=doc, first_unit=unit,
                          last_unit=unit, text="...")
        return Answer(text="an answer", contexts=[context],
                      citations=[Citation(context_id=context.context_id)])
    return answer
'''


def _row(qid: str, *, right: bool = True, stale: bool = False) -> QuestionRecord:
    return QuestionRecord.model_validate({
        "goldset": "shop", "question_id": qid, "kind": "single_doc", "index": int(qid[1:]),
        "status": "error" if stale else "scored", "must_abstain": False,
        "abstention_correct": right and not stale, "citations": 1,
        "citations_correct": int(right and not stale), "evidence_spans": 1,
        "evidence_spans_found": int(right and not stale), "eval_version": "1",
        "stale_evidence": True if stale else None, "error": "stale evidence" if stale else None})


def test_a_stale_question_is_in_no_figure_and_no_regression_check() -> None:
    """Its floors are not decided (a gap); no figure, kind's column or paired check counts
    it as a miss, as a goldset edit is no regression of the system."""
    rows = [_row("q1"), _row("q2"), _row("q3", stale=True)]
    assert (tally("abstention_accuracy", rows).k, tally("abstention_accuracy", rows).n) == (2, 2)
    assert [(kind, t.n) for kind, t in kind_counts("evidence_recall", rows)] == [("single_doc", 2)]
    assert rows[2].scores().status == "skipped"
    assert question_outcome([rows[2]]) == "skipped"  # no change of outcome in the history
    base = {r.question_id: _row(r.question_id).scores() for r in rows}
    now = {r.question_id: r.scores() for r in rows}
    found = check("shop", "abstention_accuracy", base, now, alpha=0.05)
    assert (found.current, found.pairs) == (1.0, 2)


def test_a_long_cause_many_floors_share_is_said_in_full_once() -> None:
    why = "software: stale evidence: " + "x" * 300
    gap = Gap(member="software", member_kind="single_doc", kind="stale evidence", why=why)
    floors = [Floor(m, 0.5) for m in ("evidence_recall", "citation_accuracy",
                                       "abstention_accuracy")]
    verdicts = {f: Verdict(floor=f, goldset="shop", outcome="failed",
                           said=f"not decided: stale evidence software ({why}) · {f.metric}")
                for f in floors}
    said = said_once(verdicts, [gap])
    messages = [said[f].message for f in floors]
    assert why in messages[0]
    assert messages[1:] == [f"not decided: stale evidence software (said at "
                            f"floor[evidence_recall]) · {f.metric}" for f in floors[1:]]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_gate_scores_moved_evidence_and_leaves_floors_over_stale_undecided(
        pytester: pytest.Pytester, workers: str) -> None:
    root = goldset(pytester.path / "gs", "[floors]\nevidence_recall = 1.0\n"
                   "citation_accuracy = 0.5\nabstention_accuracy = 0.9\n"
                   "[floors.kind.unanswerable]\nabstention_accuracy = 1.0\n")
    ragate("pin", str(root))
    edit_corpus(root)
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-n", workers, "gs", "-rA", "--ragate-results=r.jsonl",
        "--ragate-report=r.md", "--junitxml=j.xml")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    result.assert_outcomes(passed=4, failed=4)  # software, and its three floors
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert rows["refund"]["evidence_spans_found"] == 1
    assert rows["refund"]["evidence_moved"][0].startswith("evidence moved: returns unit 2")
    assert rows["software"]["stale_evidence"] is True
    assert "shop: refund: evidence moved: returns unit 2 is now unit 3" in out
    assert "not decided: 1 of 4 questions have no result: stale evidence software" in out
    # the stale report said in full by its question and by the first floor only; the other
    # floors refer to it; no figure counts the stale question as a miss
    assert out.count("nearest now: returns unit 4") == 2, out
    assert out.count("stale evidence software (said at floor[evidence_recall])") == 2
    report = (pytester.path / "r.md").read_text()
    assert "| single_doc 2/2 · unanswerable 1/1 |" in report  # abstention, not 2/3
    assert "- refund: evidence moved: returns unit 2 is now unit 3" in \
        (pytester.path / "r.md").read_text()
    assert 'name="evidence_moved" value="[&quot;evidence moved: returns unit 2' in \
        (pytester.path / "j.xml").read_text()
