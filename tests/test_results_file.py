"""The results file as its parser reads it back (outputs/results.py): its lines round trip, a
file written before the header existed parses as rows (and no reader takes it:
outputs/saved_runs.py), and every bad line is a problem naming file, line and field, never a
silently shorter file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs.results import (
    Header,
    SavedAnchor,
    SavedItem,
    Shard,
    read_results,
    write_results,
)
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord


def record(qid: str, index: int) -> QuestionRecord:
    return QuestionRecord(goldset="mini", route="gs/ragate.toml", question_id=qid,
                          kind="single_doc", index=index, must_abstain=False,
                          evidence_spans=1, eval_version="7", goldset_sha256="ab" * 32)


HEADER = Header(format=1, ragate_version="0.1.0", shard=Shard(index=2, count=3),
                settings={"top_k": 5}, gate={"ci": "point"})
ANCHOR = SavedAnchor(nodeid="gs/ragate.toml::anchor[a1]", route="gs/ragate.toml",
                     outcome=AnchorOutcome(goldset="mini", anchor_id="a1",
                                           kind="retrieval_miss", claim="the budget",
                                           path="gs/anchors.jsonl", line=1, outcome="xfailed",
                                           xfail="known"))
ITEM = SavedItem(nodeid="gs/ragate.toml::q2", route="gs/ragate.toml", name="q2",
                 phase="???", why="worker 'gw1' crashed", row=False)


def test_every_line_round_trips(tmp_path: Path) -> None:
    run = GoldsetRun(name="mini", eval_version="7", records=[record("q1", 0), record("q2", 1)])
    path = tmp_path / "r.jsonl"
    write_results(path, [run], HEADER, [ANCHOR], [ITEM])
    found = read_results(path)
    assert found.problems == []
    assert found.header == HEADER
    assert [(n, r.question_id) for n, r in found.rows] == [(2, "q1"), (3, "q2")]
    assert found.anchors == [ANCHOR] and found.items == [ITEM]
    assert [r for _, r in found.rows] == run.records and found.unvouched == []


def test_a_file_of_rows_alone_parses_and_no_reader_takes_it(tmp_path: Path) -> None:
    from pytest_ragate.outputs.saved_runs import SavedRunError, read_saved

    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(record(q, i).model_dump(mode="json")) + "\n"
                            for i, q in enumerate(["q1", "q2"])))
    found = read_results(path)
    assert found.header is None and len(found.rows) == 2 and found.problems == []
    with pytest.raises(SavedRunError, match="no header line"):
        read_saved(path, env={})


def test_bad_lines_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_results(path, [GoldsetRun(name="mini", eval_version="7",
                                    records=[record("q1", 0), record("q2", 1)])], HEADER)
    lines = path.read_text().splitlines()[:-1]  # the trailer: these lines are not its
    header = json.loads(lines[0])
    lines[1] = lines[1].replace('"index": 0', '"index": "first"')
    lines += ["{not json", "[1, 2]", json.dumps(header),
              json.dumps({"ragate_item": {"nodeid": "x"}})]
    path.write_text("\n".join(lines) + "\n")
    found = read_results(path)
    assert [r.question_id for _, r in found.rows] == ["q2"]
    text = [str(p) for p in found.problems]
    assert text[0].startswith(f"{path}:2: [q1] index: Input should be a valid integer")
    assert text[1] == f"{path}:4: <json>: malformed JSON (Expecting property name enclosed in " \
        "double quotes)"
    assert text[2] == f"{path}:5: <json>: not a JSON object"
    assert text[3].startswith(f"{path}:6: ragate_results: a second header")
    assert text[4].startswith(f"{path}:7: ragate_item.route: Field required")


def test_a_header_of_another_format_is_a_problem(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    header = HEADER.model_copy(update={"format": 2})
    write_results(path, [], header)
    assert [str(p) for p in read_results(path).problems] == [
        f"{path}:1: ragate_results.format: format 2 is not this ragate's (1)"]


@pytest.mark.parametrize(("text", "message"), [
    ("2/3", None), (" 1 / 1 ", None), ("0/3", "greater than or equal to 1"),
    ("4/3", "the index is at most the count"), ("3", "is not i/N"), ("a/b", "is not i/N"),
    ("1/0", "greater than or equal to 1"), ("-1/3", "is not i/N")])
def test_shard_specs(text: str, message: str | None) -> None:
    if message is None:
        shard = Shard.parse(text)
        assert str(shard) == text.replace(" ", "")
    else:
        with pytest.raises(ValueError, match=message):
            Shard.parse(text)
