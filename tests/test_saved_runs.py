"""The one reader of saved runs (outputs/saved_runs.py), at the lowest level that shows each
case of issue 38 and issue 39's tamper evidence: in process, on results files and history
lines written by the package's own writers, then cut, edited, re-digested or re-signed.

The adversary's cases, each before this reader accepted somewhere:
1. two rows edited, the trailer kept: `--ragate-baseline`, `compare`, `calibrate`, `power
   --results` and `stamp-verdicts` read it unchecked;
2. a baseline cut to its header and 15 of 40 rows, trailer gone: accepted, and `compare cut
   full` exited 0;
3. a history whose last line is a `-k` run's: the baseline paired with it;
WEAK: `suggest` over a `-k` run suggested floors from a biased subset and said "no floors
yet"; and issue 39's: rows swapped and the digest recomputed read as whole (the trailer is a
completeness check; with RAGATE_RESULTS_KEY the signature is the tamper check).
The end-to-end runs of the same cases are in tests/test_partial_runs.py.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from pytest_ragate.cli import main
from pytest_ragate.decision.floors import Gap
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs.baseline import BaselineError, load_baseline
from pytest_ragate.outputs.history import build_line, encode
from pytest_ragate.outputs.results import GoldsetStamp, Header, Shard, results_lines
from pytest_ragate.outputs.saved_runs import (
    Part,
    SavedRunError,
    read_saved,
    read_saved_files,
    require_whole,
)
from pytest_ragate.outputs.signing import KEY_ENV
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.sequential import not_needed
from tests.conftest import write_goldset

ROUTE = "gs/ragate.toml"
N = 40
KEY = b"results-key-for-tests"


def row(i: int, *, right: bool = True, skipped: str | None = None,
        stopped: bool = False) -> QuestionRecord:
    """Question q{i:02d} of goldset `mini`: answered and cited, right or wrong (or skipped
    with a reason; `stopped`: left unasked by a sequential stop)."""
    return QuestionRecord(
        goldset="mini", route=ROUTE, question_id=f"q{i:02d}", kind="single_doc", index=i,
        must_abstain=False, abstained=skipped is None and not right,
        abstention_correct=right, citations=int(right), citations_correct=int(right),
        evidence_spans=1, evidence_spans_found=int(right), evidence_ranks=[1 if right else None],
        contexts=1, nearest_distance=0.2, eval_version="7",
        answer_text=None if skipped or not right else f"answer {i}",
        status="skipped" if skipped else "scored", error=skipped, not_needed=stopped)


def header(*, shard: Shard | None = None, deselected: Sequence[str] = ()) -> Header:
    return Header(format=1, ragate_version="0", shard=shard, settings={}, gate={},
                  goldsets=[GoldsetStamp(route=ROUTE, goldset="mini", eval_version="7",
                                         sha256=None, deselected=list(deselected))])


def write(path: Path, rows: Sequence[QuestionRecord], *, shard: Shard | None = None,
          deselected: Sequence[str] = (), incomplete: str | None = None,
          key: bytes | None = None) -> Path:
    run = GoldsetRun(name="mini", eval_version="7", records=list(rows))
    path.write_text(results_lines([run], header(shard=shard, deselected=deselected),
                                  incomplete=incomplete, key=key), encoding="utf-8")
    return path


def whole(tmp_path: Path, name: str = "full.jsonl", **kw: object) -> Path:
    return write(tmp_path / name, [row(i) for i in range(N)], **kw)  # type: ignore[arg-type]


def edited(tmp_path: Path) -> Path:
    """Two rows made wrong, the trailer kept (case 1)."""
    path = whole(tmp_path, "edited.jsonl")
    lines = path.read_text().splitlines(keepends=True)
    for n in (3, 4):
        lines[n] = json.dumps({**json.loads(lines[n]), "abstention_correct": False},
                              sort_keys=True) + "\n"
    path.write_text("".join(lines))
    return path


def cut(tmp_path: Path) -> Path:
    """The header and 15 of 40 rows, the trailer gone (case 2)."""
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(whole(tmp_path).read_text().splitlines(keepends=True)[:16]))
    return path


def redigested(tmp_path: Path, key: bytes | None = None) -> Path:
    """Two rows swapped and the trailer's digest recomputed (issue 39, case 6): complete as
    far as the trailer can tell, signed or not as written."""
    path = whole(tmp_path, "swapped.jsonl", key=key)
    lines = path.read_text().splitlines(keepends=True)
    lines[1], lines[2] = lines[2], lines[1]
    trailer = json.loads(lines[-1])
    trailer["ragate_trailer"]["sha256"] = hashlib.sha256("".join(lines[:-1]).encode()).hexdigest()
    path.write_text("".join(lines[:-1]) + json.dumps(trailer, sort_keys=True) + "\n")
    return path


# --- what no reader takes ----------------------------------------------------------------------


@pytest.mark.parametrize(("make", "said"), [
    (edited, "ragate_trailer.sha256: the lines before the trailer are not those it was written "
             "after"),
    (cut, "ragate_trailer: no trailer line"),
])
def test_a_cut_or_edited_file_is_refused_in_one_line_naming_it(tmp_path: Path, make: object,
                                                               said: str) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(SavedRunError) as refused:
        read_saved(path, env={})
    assert str(refused.value).startswith(f"{path}:") and said in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_file_without_a_header_is_refused_like_a_shard(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(results_lines([GoldsetRun(name="mini", eval_version="7",
                                              records=[row(0)])]))
    with pytest.raises(SavedRunError, match="no header line"):
        read_saved(path, env={})


SHORT = {f"ragate_{w}" for w in ("trailer", "trailer.sha256", "trailer.signature")}


def readers(tmp_path: Path) -> dict[str, list[str]]:
    """Every command that reads a results file, with `{}` where the file goes (`ragate
    compare` reads its files as `ragate decide` and `--ragate-baseline` do)."""
    write_goldset(tmp_path / "gs")
    (tmp_path / "judge.json").write_text(json.dumps({"judge_id": "j", "answers": {}}))
    (tmp_path / "labels.jsonl").write_text("")
    return {"suggest": ["suggest", "{}"], "calibrate": ["calibrate", "{}"],
            "power --results": ["power", str(tmp_path / "gs"), "--results", "{}"],
            "stamp-verdicts": ["stamp", "{}", "--verdicts", str(tmp_path / "judge.json")],
            "stamp-labels": ["stamp", "{}", "--labels", str(tmp_path / "labels.jsonl")]}


@pytest.mark.parametrize("make", [edited, cut, redigested], ids=["edited", "cut", "swapped"])
def test_every_reader_refuses_what_the_reader_refuses(tmp_path: Path, make: object,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Case 1 and 2 for each command, and `--ragate-baseline`, `decide`'s and `rejudge`'s
    readers; rows swapped with the digest recomputed are refused once a key is set."""
    from pytest_ragate.commands.rejudging import Refused
    from pytest_ragate.commands.rejudging import read_files as rejudge_files
    from pytest_ragate.modes.decide_files import read_files

    monkeypatch.chdir(tmp_path)
    commands = readers(tmp_path)
    if make is redigested:
        monkeypatch.setenv(KEY_ENV, KEY.decode())
    bad = make(tmp_path)  # type: ignore[operator]
    for name, args in commands.items():
        done = CliRunner().invoke(main, [str(bad) if a == "{}" else a for a in args])
        assert done.exit_code == 1, (name, done.output)
        [line] = done.output.splitlines()
        assert str(bad) in line and ("trailer" in line or "no header" in line), (name, line)
    with pytest.raises(BaselineError, match=f"--ragate-baseline: {re.escape(str(bad))}"
                                            r"(:\d+)?: ragate_trailer"):
        load_baseline(str(bad))
    assert read_files([str(bad)], tmp_path)[1][0].startswith(f"{bad}")
    with pytest.raises(Refused, match=str(bad)):
        rejudge_files([str(bad)], tmp_path)


# --- tamper evidence (issue 39, case 6) --------------------------------------------------------


def test_the_trailer_is_a_completeness_check_and_the_signature_a_tamper_check(
        tmp_path: Path) -> None:
    swapped = redigested(tmp_path)
    assert read_saved(swapped, env={}).extent.whole  # no key: what the trailer can tell
    with pytest.raises(SavedRunError, match="is not signed, and RAGATE_RESULTS_KEY is set"):
        read_saved(swapped, key=KEY)
    signed_then_swapped = redigested(tmp_path, key=KEY)
    with pytest.raises(SavedRunError, match="signature is not RAGATE_RESULTS_KEY's: it was "
                                            "changed after it was written"):
        read_saved(signed_then_swapped, key=KEY)
    signed = whole(tmp_path, "signed.jsonl", key=KEY)
    assert read_saved(signed, key=KEY).extent.whole
    assert read_saved(signed, env={}).extent.whole  # without the key: nothing to check
    with pytest.raises(SavedRunError, match="signature is not RAGATE_RESULTS_KEY's"):
        read_saved(signed, key=b"another key")


def test_the_signature_vouches_for_the_trailer_too(tmp_path: Path) -> None:
    """An interrupted run's trailer made to say it ran to its end: the digest of the lines
    before it still holds, the signature does not."""
    path = write(tmp_path / "r.jsonl", [row(0)], incomplete="interrupted", key=KEY)
    text = path.read_text().replace('"incomplete": "interrupted"', '"incomplete": null')
    path.write_text(text)
    with pytest.raises(SavedRunError, match="signature is not"):
        read_saved(path, key=KEY)


def test_without_a_key_nothing_is_signed_and_the_file_is_as_before(tmp_path: Path) -> None:
    path = whole(tmp_path)
    assert '"signature"' not in path.read_text()
    assert '"signature"' in whole(tmp_path, "s.jsonl", key=KEY).read_text().splitlines()[-1]


# --- what part of its run a file holds ---------------------------------------------------------


def test_each_part_is_typed(tmp_path: Path) -> None:
    full = read_saved(whole(tmp_path), env={})
    assert full.extent.whole and full.extent.parts == frozenset()
    shard = read_saved(write(tmp_path / "s.jsonl", [row(i) for i in range(0, N, 2)],
                             shard=Shard(index=1, count=2)), env={})
    assert shard.extent.parts == {Part.SHARD}
    k = read_saved(write(tmp_path / "k.jsonl", [row(i) for i in range(20)],
                         deselected=[f"q{i:02d}" for i in range(20, N)] + ["anchor[a1]"]),
                   env={})
    assert k.extent.parts == {Part.DESELECTED}
    [mini] = k.extent.goldsets
    assert (mini.population, len(mini.deselected)) == (N, 20)
    assert k.extent.why() == "goldset mini: 20 of 40 questions deselected (-k, -m or --lf)"
    stopped = read_saved(write(tmp_path / "seq.jsonl", [
        row(i, skipped=not_needed(26, N), stopped=True) if i >= 26 else row(i)
        for i in range(N)]), env={})
    assert stopped.extent.parts == {Part.SEQUENTIAL}
    assert stopped.extent.goldsets[0].unasked == tuple(f"q{i:02d}" for i in range(26, N))
    assert "stopped after asking 26 of 40 questions" in stopped.extent.why()
    cut_short = read_saved(write(tmp_path / "x.jsonl", [row(0)], incomplete="-x"), env={})
    assert cut_short.extent.parts == {Part.INTERRUPTED}
    assert cut_short.extent.interrupted == "-x"


def test_decide_and_rejudge_refuse_an_interrupted_run_and_take_the_rest(tmp_path: Path) -> None:
    interrupted = write(tmp_path / "x.jsonl", [row(0)], incomplete="interrupted")
    files, problems = read_saved_files([interrupted, whole(tmp_path)], env={})
    assert len(files) == 2 and problems == [
        f"{interrupted}:3: ragate_trailer.incomplete: the run that wrote it stopped early "
        "(interrupted): its results are not a whole run's"]


@pytest.mark.parametrize("partial", ["shard", "deselected", "sequential", "interrupted"])
def test_a_partial_results_file_is_no_baseline(tmp_path: Path, partial: str) -> None:
    """Case 2's cousins: every way a results file holds part of its run is refused as a
    baseline, and by `compare` on either side."""
    path = {
        "shard": lambda: write(tmp_path / "p.jsonl", [row(i) for i in range(0, N, 2)],
                               shard=Shard(index=1, count=2)),
        "deselected": lambda: write(tmp_path / "p.jsonl", [row(i) for i in range(15)],
                                    deselected=[f"q{i:02d}" for i in range(15, N)]),
        "sequential": lambda: write(tmp_path / "p.jsonl", [
            row(i, skipped=not_needed(15, N), stopped=True) if i >= 15 else row(i)
            for i in range(N)]),
        "interrupted": lambda: write(tmp_path / "p.jsonl", [row(i) for i in range(15)],
                                     incomplete="stopped after 1 failure (-x)"),
    }[partial]()
    with pytest.raises(BaselineError) as refused:
        load_baseline(str(path))
    assert str(refused.value).startswith(f"--ragate-baseline: {path}: ")
    assert "a partial run is no baseline: give a run that asked every question" in str(
        refused.value)


# --- history lines -----------------------------------------------------------------------------


def history_run(rows: Sequence[QuestionRecord], deselected: Sequence[str] = ()) -> GoldsetRun:
    return GoldsetRun(name="mini", eval_version="7", route=ROUTE, records=list(rows),
                      population=len(rows) + len(deselected),
                      gaps=[Gap(member=q, member_kind="single_doc", kind="deselected")
                            for q in deselected])


def write_history(path: Path, runs: Sequence[GoldsetRun], key: bytes | None = None) -> Path:
    path.write_bytes(encode([build_line(run, git=None) for run in runs], key))
    return path


def test_a_baseline_from_history_takes_the_last_line_that_asked_every_question(
        tmp_path: Path) -> None:
    """Case 3: the last line, a `-k` run's (20 of 40 deselected), is passed over; its line
    says it was partial (`status`, the deselected gaps)."""
    full = history_run([row(i) for i in range(N)])
    partial = history_run([row(i, right=False) for i in range(20)],
                          [f"q{i:02d}" for i in range(20, N)])
    path = write_history(tmp_path / "h.jsonl", [full, partial])
    line = json.loads(path.read_text().splitlines()[1])
    assert line["status"] == "partial" and len(line["gaps"]["deselected"]) == 20
    [run] = load_baseline(str(path))
    assert run.source.startswith(f"history line {path}:1 ") and len(run.scores) == N
    with pytest.raises(BaselineError, match=f"history line {path}:2: goldset mini: 20 of 40 "
                                            r"questions deselected \(-k, -m or --lf\): a "
                                            "regression check pairs every question"):
        load_baseline(f"{path}:2")
    only = write_history(tmp_path / "only.jsonl", [partial])
    with pytest.raises(BaselineError, match="no line asked every question of its goldset"):
        load_baseline(str(only))


def test_history_lines_are_signed_and_held_to_the_key(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    full = history_run([row(i) for i in range(N)])
    unsigned = write_history(tmp_path / "u.jsonl", [full])
    signed = write_history(tmp_path / "s.jsonl", [full], key=KEY)
    assert json.loads(signed.read_text())["signature"]
    monkeypatch.setenv(KEY_ENV, KEY.decode())
    assert load_baseline(str(signed))
    with pytest.raises(BaselineError, match="history line 1 is not signed, and "
                                            "RAGATE_RESULTS_KEY is set"):
        load_baseline(str(unsigned))
    forged = tmp_path / "f.jsonl"
    forged.write_text(signed.read_text().replace('"errors":0', '"errors":1'))
    with pytest.raises(BaselineError, match="signature is not RAGATE_RESULTS_KEY's"):
        load_baseline(str(forged))
    monkeypatch.delenv(KEY_ENV)
    assert load_baseline(str(forged))  # without the key, a line is what it says


def test_a_line_of_an_older_ragate_says_nothing_of_what_it_asked(tmp_path: Path) -> None:
    line = json.loads(build_line(history_run([row(0)]), git=None).model_dump_json())
    for later in ("status", "gaps", "population", "route"):
        line.pop(later)
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(BaselineError, match="written by an older ragate"):
        load_baseline(str(path))


# --- suggestions over part of a run (WEAK) -----------------------------------------------------


def test_suggest_refuses_part_of_a_run_and_never_says_no_floors_yet(tmp_path: Path) -> None:
    k = write(tmp_path / "k.jsonl", [row(i) for i in range(20)],
              deselected=[f"q{i:02d}" for i in range(20, N)])
    done = CliRunner().invoke(main, ["suggest", str(k)])
    assert done.exit_code == 1
    assert done.output.splitlines() == [
        f"Error: {k}: goldset mini: 20 of 40 questions deselected (-k, -m or --lf): its "
        "figures would be those of part of the goldset: give the results of a run that "
        "asked every question (for a sharded run, `ragate decide`'s --ragate-results)"]
    one = write(tmp_path / "1.jsonl", [row(i) for i in range(0, N, 2)],
                shard=Shard(index=1, count=2))
    done = CliRunner().invoke(main, ["suggest", str(one)])
    assert done.exit_code == 1 and "shard 2/2 missing" in done.output
    two = write(tmp_path / "2.jsonl", [row(i) for i in range(1, N, 2)],
                shard=Shard(index=2, count=2))
    done = CliRunner().invoke(main, ["suggest", str(one), str(two)])
    assert done.exit_code == 0, done.output
    assert "no floors yet" not in done.output
    assert "mini: floors its figures suggest (beside any floors its ragate.toml has)" in (
        done.output)


def test_stamps_take_what_a_partial_run_answered(tmp_path: Path) -> None:
    k = write(tmp_path / "k.jsonl", [row(i) for i in range(2)],
              deselected=[f"q{i:02d}" for i in range(2, N)])
    judge = tmp_path / "judge.json"
    judge.write_text(json.dumps({"judge_id": "j", "answers": {
        q: {"statements": ["s"], "supported": [True]} for q in ("q00", "q01", "q05")}}))
    done = CliRunner().invoke(main, ["stamp", str(k), "--verdicts", str(judge)])
    assert done.exit_code == 0, done.output
    assert "stamped 2 verdicts" in done.output and "not stamped (no answered row" in (
        done.output)


def test_require_whole_names_what_is_allowed_away(tmp_path: Path) -> None:
    shard = read_saved(write(tmp_path / "s.jsonl", [row(0)], shard=Shard(index=1, count=2)),
                       env={})
    require_whole(shard, "x", allow=frozenset({Part.SHARD}))
    with pytest.raises(SavedRunError, match=r"shard 1/2 of a sharded run.*: x$"):
        require_whole(shard, "x")
