"""Thresholds the user owns: an answer carries the number its abstention was decided on
(`Answer(confidence=...)`), the row keeps it, and `ragate calibrate --on confidence` sweeps a
cut on it. Each case runs a real pytest session (under -n 0 and -n 2) writing results, then
the `ragate` CLI on them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from pytest_ragate.cli import main
from tests.conftest import (
    WORKERS,
    junit_cases,
    rows_of,
    run_command,
    run_here,
    run_pytester,
    write_goldset,
)

# A system whose abstention is a score cut of its own (0.5). The goldset (tests/conftest.py):
# q1 and q2 answerable (m1 2-3, m2 5), q3 cross-meeting (m1 0, m3 4-5), q4 unanswerable.
#   q1 0.90 answers, cites m1 2-3 (right)     q2 0.60 answers, cites m1 2-3 (wrong)
#   q3 0.30 abstains (should answer)          q4 0.55 answers (should abstain), cites m1 0
SCORE_CUT_SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

CUT = 0.5
PLAN = {"q1": (0.90, "m1", 2), "q2": (0.60, "m1", 2), "q3": (0.30, "m1", 0),
        "q4": (0.55, "m1", 0)}
LEAVE_OUT = set()


@pytest.fixture
def ragate_system():
    def answer(question):
        qid = question.split()[-1].rstrip("?")
        confidence, doc, first = PLAN[qid]
        if qid in LEAVE_OUT:
            confidence = None
        contexts = [Context(context_id="c", doc_id=doc, first_unit=first,
                            last_unit=first + 1)]
        if confidence is not None and confidence < CUT:
            return Answer.abstain(contexts, confidence=confidence)
        return Answer(text="an answer", contexts=contexts, confidence=confidence,
                      citations=[Citation(context_id="c")])
    return answer
'''


def record(pytester: pytest.Pytester, workers: str, system: str = SCORE_CUT_SYSTEM,
           *args: str, floors: str = "") -> pytest.RunResult:
    write_goldset(pytester.path / "gs", floors=floors)
    pytester.makeconftest(system)
    return run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", *args)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The SCORE_CUT_SYSTEM's run (results and JUnit) that the cases reading it share: one per
    worker count asked for, in a process of its own (a module's run outlives pytester's
    folders); `recorded(workers)` is its folder."""
    made: dict[str, Path] = {}

    def run(workers: str) -> Path:
        if workers not in made:
            root = tmp_path_factory.mktemp(f"recorded-n{workers}")
            write_goldset(root / "gs")
            (root / "conftest.py").write_text(SCORE_CUT_SYSTEM)
            done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "gs",
                               "--ragate-results=r.jsonl", "--junitxml=j.xml")
            assert done.returncode == pytest.ExitCode.OK, done.stdout[-2000:]
            made[workers] = root
        return made[workers]
    return run


def calibrate(where: pytest.Pytester | Path, *args: str) -> Result:
    """`ragate calibrate` over the r.jsonl in a pytester's folder or the folder given."""
    folder = where.path if isinstance(where, pytest.Pytester) else where
    return CliRunner().invoke(main, ["calibrate", str(folder / "r.jsonl"), *args])


def table(out: Result) -> dict[str, list[str]]:
    """The sweep's rows by cut: abstention, citation accuracy, answered, unknown, margin."""
    rows = {}
    for line in out.output.splitlines():
        cells = [c.strip() for c in line.split("  ") if c.strip()]
        if cells and cells[0].replace(" ← best", "")[:1] in "0123456789>":
            rows[cells[0]] = cells[1:]
    return rows


# --- Answer(confidence=...) is kept on the row ------------------------------------------------


@pytest.mark.heavy  # its shared run is a process of its own
@WORKERS
def test_the_row_and_junit_keep_the_confidence(recorded: Callable[[str], Path],
                                               workers: str) -> None:
    root = recorded(workers)
    rows = rows_of(root / "r.jsonl")
    assert {q: (r["confidence"], r["abstained"]) for q, r in rows.items()} == {
        "q1": (0.9, False), "q2": (0.6, False), "q3": (0.3, True), "q4": (0.55, False)}
    props = junit_cases(root / "j.xml")["gs.ragate.toml::q3"]["props"]
    assert props["confidence"] == "0.3"


# each question's confidence that is no number, and what its error says
NOT_NUMBERS = {"q2": ('float("nan")', "must be finite, not nan"),
               "q3": ('"0.9"', "must be a number, not str '0.9'"),
               "q4": ("True", "must be a number, not bool True")}


def test_a_confidence_that_is_no_number_errors_its_question(pytester: pytest.Pytester) -> None:
    """One run: each of q2, q3 and q4 returns a confidence that is no number (one kind
    each), q1 a good one."""
    bad = {q: value for q, (value, _) in NOT_NUMBERS.items()}
    system = SCORE_CUT_SYSTEM.replace("confidence, doc, first = PLAN[qid]",
                                      f"confidence, doc, first = PLAN[qid]\n"
                                      f"        if qid in {bad!r}:\n"
                                      f"            return {{'text': 'x', "
                                      f"'confidence': eval({bad!r}[qid])}}")
    result = record(pytester, "0", system)
    rows = rows_of(pytester.path / "r.jsonl")
    assert rows["q1"]["status"] == "scored"
    for q, (_, why) in NOT_NUMBERS.items():
        assert rows[q]["status"] == "error"
        assert f"{q}: the system returned a malformed answer (dict)" in rows[q]["error"]
        result.stdout.fnmatch_lines([f"FAILED gs/ragate.toml::{q} - MalformedAnswer: {q}: the "
                                     "system returned a malformed answer (dict): confidence: "
                                     f"Value error, {why}*"])


# --- ragate calibrate --on confidence ----------------------------------------------------------


@pytest.mark.heavy
@WORKERS
def test_calibrate_sweeps_the_cut_and_picks_the_floors_margin(recorded: Callable[[str], Path],
                                                              workers: str) -> None:
    out = calibrate(recorded(workers), "--on", "confidence", "--floor", "abstention_accuracy=0.7")
    assert out.exit_code == 0, out.output
    assert "mini: 4 scored rows, floors abstention_accuracy >= 0.70" in out.output
    assert "no cut turns a recorded abstention into an answer (its text does not exist)" \
        in out.output
    assert table(out) == {
        # q3 abstained at 0.3: at a cut of 0.3 it would answer, and what it would say is not
        # recorded: unknown, and that cut is never chosen
        "0.3": ["0.67 (2/3)", "0.33 (over 3 answers; 1/3 citations right)", "3", "1", "—"],
        "0.55": ["0.50 (2/4)", "0.33 (over 3 answers; 1/3 citations right)", "3", "0",
                 "-0.20"],
        "0.6 ← best": ["0.75 (3/4)", "0.50 (over 2 answers; 1/2 citations right)", "2", "0",
                       "+0.05"],
        "0.9": ["0.50 (2/4)", "1.00 (over 1 answers; 1/1 citations right)", "1", "0",
                "-0.20"],
        "> 0.9 (abstain always)": ["0.25 (1/4)", "—", "0", "0", "-0.45"],
    }
    assert ("best: confidence cut = 0.6 (abstention accuracy 0.75 (3/4), citation accuracy "
            "0.50 (over 2 answers; 1/2 citations right)), margin +0.05") in out.output


@pytest.mark.heavy
def test_the_cut_follows_the_chosen_floor(recorded: Callable[[str], Path]) -> None:
    """A citation floor wants q2's and q4's wrong citations gone (cut 0.9); with both
    floors, the cut whose smallest margin is largest, the lowest of a tie (answering more)."""
    cited = calibrate(recorded("0"), "--on", "confidence", "--floor", "citation_accuracy=0.8")
    assert "best: confidence cut = 0.9 " in cited.output and "margin +0.20" in cited.output
    both = calibrate(recorded("0"), "--on", "confidence", "--floor", "abstention_accuracy=0.8",
                     "--floor", "citation_accuracy=0.8")
    assert table(both)["0.55"][-1] == "-0.47" and table(both)["0.9"][-1] == "-0.30"
    assert table(both)["0.6 ← best"][-1] == "-0.30"
    assert "margin -0.30: no cut reaches every floor" in both.output


def test_no_cut_with_every_figure_known_fails(pytester: pytest.Pytester) -> None:
    """A citation floor over answers that cite nothing has no value at any cut: exit 1,
    never a cut chosen on a missing figure."""
    record(pytester, "0", SCORE_CUT_SYSTEM.replace('citations=[Citation(context_id="c")]',
                                                   "citations=[]"))
    out = calibrate(pytester, "--on", "confidence", "--floor", "citation_accuracy=0.5")
    assert out.exit_code == 1
    assert "no cut: none gives citation_accuracy >= 0.50 a known value" in out.output
    assert "best:" not in out.output


def test_rows_without_confidence_refuse_the_sweep_by_name(pytester: pytest.Pytester) -> None:
    """The refusal reads the rows alone (they travel from -n 2's workers in the cases above).
    A row of an answer without a confidence has no key (rows of systems that return none stay
    byte for byte as before the field existed)."""
    record(pytester, "0", SCORE_CUT_SYSTEM.replace("LEAVE_OUT = set()",
                                                       "LEAVE_OUT = {'q2', 'q4'}"))
    rows = rows_of(pytester.path / "r.jsonl")
    assert "confidence" not in rows["q2"] and rows["q1"]["confidence"] == 0.9
    out = calibrate(pytester, "--on", "confidence", "--floor", "abstention_accuracy=0.7")
    assert out.exit_code == 1
    assert out.output.count("cannot be replayed") == 1
    assert ("mini: a confidence cut cannot be replayed: 2 of 4 scored rows carry no "
            "confidence (q2, q4); return Answer(confidence=...) on every answer and "
            "abstention") in out.output


@pytest.mark.parametrize("args, says", [
    (["--on", "confidence"], "--on confidence needs --floor METRIC=MIN"),
    (["--on", "confidence", "--floor", "evidence_recall=0.5"],
     "'evidence_recall=0.5': METRIC is one of abstention_accuracy, citation_accuracy"),
    (["--on", "confidence", "--floor", "abstention_accuracy=1.5"],
     "'abstention_accuracy=1.5': MIN is a number from 0 to 1"),
    (["--on", "confidence", "--floor", "citation_accuracy=0.5", "--floor",
      "citation_accuracy=0.9"], "'citation_accuracy=0.9': citation_accuracy is given twice"),
    (["--floor", "abstention_accuracy=0.5"], "--floor goes with --on confidence"),
])
@pytest.mark.heavy
def test_calibrate_options_are_checked(recorded: Callable[[str], Path], args: list[str],
                                       says: str) -> None:
    out = calibrate(recorded("0"), *args)
    assert out.exit_code == 2 and says in out.output, out.output


def test_shards_decided_keep_the_confidence_for_calibrate(pytester: pytest.Pytester) -> None:
    """`ragate decide` reads shard rows carrying a confidence and writes them on: the sweep
    over the decided run is the sweep over one run. All in this process, without xdist: a
    confidence travels from -n 2's workers in the shared run's rows (the first test)."""
    record(pytester, "0", SCORE_CUT_SYSTEM, "--ragate-shard=1/2", "--ragate-results=s1.jsonl",
           floors="[floors]\nabstention_accuracy = 0.5\n")
    run_pytester(pytester, "0", "gs", "--ragate-shard=2/2", "--ragate-results=s2.jsonl")
    decided = run_here(pytester, "decide", "s1.jsonl", "s2.jsonl", "--", "gs", "-p",
                       "no:cacheprovider", "--ragate-results=r.jsonl")
    assert decided.returncode == 0, decided.stdout + decided.stderr
    rows = rows_of(pytester.path / "r.jsonl")
    assert {q: r["confidence"] for q, r in rows.items()} == {
        "q1": 0.9, "q2": 0.6, "q3": 0.3, "q4": 0.55}
    out = calibrate(pytester, "--on", "confidence", "--floor", "abstention_accuracy=0.7")
    assert "best: confidence cut = 0.6 " in out.output and "margin +0.05" in out.output


@pytest.mark.parametrize("bad", ["NaN", '"0.9"', "true"])
@pytest.mark.heavy
def test_a_results_row_whose_confidence_is_no_number_is_refused(
        recorded: Callable[[str], Path], tmp_path: Path, bad: str) -> None:
    """A results file edited by hand (or written by another tool) is held to the same rule
    as the answer: refused naming the line and field, never swept."""
    path = tmp_path / "r.jsonl"
    shutil.copyfile(recorded("0") / "r.jsonl", path)
    path.write_text("".join(line.replace('"confidence": 0.6', f'"confidence": {bad}')
                            for line in path.read_text().splitlines(keepends=True)
                            if '"question_id"' in line))
    out = calibrate(tmp_path, "--on", "confidence", "--floor", "abstention_accuracy=0.7")
    assert out.exit_code == 1 and "best:" not in out.output
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if '"question_id": "q2"' in text)
    assert f"r.jsonl:{line}: [q2] confidence: must be " in out.output, out.output
