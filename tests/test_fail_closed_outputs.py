"""The adversary against what a run leaves: a run that stops early must never leave an
earlier PASS looking current, an output must never overwrite an input, and an output that
is not a regular file (a pipe, a device, a socket) is written through or refused, never
renamed over. Each case runs through pytest (or `ragate decide`) as a user runs it, with and
without `-n 2` where workers are involved, and holds the exit status, the terminal, JUnit,
the reports, the results file and the history to one story."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import stat
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ragate.files import remove_regular, write_atomic
from pytest_ragate.goldsets.sealed import Scrypt
from pytest_ragate.goldsets.sealing import seal_goldset
from tests.conftest import WORKERS, run_command, run_pytester, write_goldset
from tests.test_fail_closed import ANCHORS, USAGE, planned, write_many

FLOORS = "[floors]\ncitation_accuracy = 0.5\n"
OUTPUTS = ("--ragate-results=out/r.jsonl", "--ragate-report=out/r.md",
           "--ragate-html=out/r.html", "--junitxml=out/j.xml", "--ragate-history=out/h.jsonl")


def read(pytester: pytest.Pytester, name: str) -> str:
    return (pytester.path / "out" / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def passing_outputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run that passed and left every output saying so (`gs` and `out`), made once for the
    module in a process of its own; each test copies it (`passing_first`) and stops a run over
    it. What the earlier pass was run with (its worker count) is not what these tests hold:
    the run after it, at `-n 0` and `-n 2`, is."""
    root = tmp_path_factory.mktemp("passed")
    write_many(root / "gs", 10, floors=FLOORS)
    (root / "conftest.py").write_text(planned({}))
    done = run_command(root, "-p", "no:cacheprovider", "-n", "0", "gs", *OUTPUTS)
    assert done.returncode == pytest.ExitCode.OK, done.stdout[-2000:]
    assert "Run: **PASS**" in (root / "out" / "r.md").read_text(encoding="utf-8")
    assert len((root / "out" / "h.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    return root


def passing_first(pytester: pytest.Pytester, passing_outputs: Path) -> None:
    """The passed run's goldset and outputs, in this test's folder."""
    for name in ("gs", "out"):
        shutil.copytree(passing_outputs / name, pytester.path / name)
    assert "Run: **PASS**" in read(pytester, "r.md")


def decided(pytester: pytest.Pytester) -> pytest.RunResult:
    """`ragate decide out/r.jsonl`: what it runs (`pytest --ragate-decide`, `-n 0`), in this
    process (the process boundary is not what these tests hold; a process of its own cost
    1.5 s a call)."""
    return run_pytester(pytester, "0", "gs", "--ragate-decide=out/r.jsonl")


def results_trailer(pytester: pytest.Pytester) -> dict[str, object]:
    return json.loads(read(pytester, "r.jsonl").splitlines()[-1])["ragate_trailer"]


def junit_properties(pytester: pytest.Pytester) -> dict[str | None, str | None]:
    root = ET.parse(pytester.path / "out" / "j.xml").getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    props = suite.find("properties")
    return {} if props is None else {p.get("name"): p.get("value") for p in props}


# --- 1. a run that stops early -----------------------------------------------------------

# how the second run stops: its flags, and what the system does at q03 (`--maxfail=1` is not
# another way: pytest's -x is the option `maxfail` set to 1, the same value in the same place)
STOPS = {
    "-x": (["-x"], "1 / 0"),
    "KeyboardInterrupt": ([], "exec('raise KeyboardInterrupt')"),
    "pytest.exit": ([], "pytest.exit('the system gave up')"),
}


@WORKERS
@pytest.mark.parametrize("stop", STOPS, ids=list(STOPS))
def test_a_run_that_stops_early_marks_every_output_incomplete(
        pytester: pytest.Pytester, passing_outputs: Path, workers: str, stop: str) -> None:
    passing_first(pytester, passing_outputs)
    flags, behaviour = STOPS[stop]
    pytester.makeconftest(planned({"q03": behaviour}))
    # a KeyboardInterrupt in this process would stop the suite's own run
    result = run_pytester(pytester, workers, "gs", *OUTPUTS, *flags,
                          process=stop == "KeyboardInterrupt")
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    result.stdout.fnmatch_lines(["ragate: INCOMPLETE: the run stopped early (*",
                                 "ragate report: out/r.md written marked INCOMPLETE",
                                 "ragate history: out/h.jsonl not appended to",
                                 "ragate history: history not written: the run was cut short*"])
    report = read(pytester, "r.md")
    assert "Run: **PASS**" not in report and "Run: **FAIL**" in report
    assert "**INCOMPLETE: the run stopped early (" in report
    html = read(pytester, "r.html")
    assert '<h1>ragate report <span class="badge o-failed">FAIL</span></h1>' in html
    assert 'data-run-status="incomplete"' in html
    assert str(results_trailer(pytester)["incomplete"])
    assert junit_properties(pytester)["ragate-incomplete"].startswith("INCOMPLETE:")
    assert len(read(pytester, "h.jsonl").splitlines()) == 1  # the stopped run is not history
    again = decided(pytester)
    assert again.ret != pytest.ExitCode.OK  # the partial results are not a pass either


@WORKERS
def test_a_process_killed_mid_run_leaves_no_earlier_pass(
        pytester: pytest.Pytester, passing_outputs: Path, workers: str) -> None:
    """Without xdist the one process dies: the outputs the first run left were removed when
    the second began, so none says PASS. With xdist the controller lives on and writes them,
    failed by the question whose worker died."""
    passing_first(pytester, passing_outputs)
    pytester.makeconftest(planned({"q03": "os._exit(3)"}))
    result = run_pytester(pytester, workers, "gs", *OUTPUTS, process=True)
    assert result.ret != pytest.ExitCode.OK
    if workers == "0":
        for name in ("r.jsonl", "r.md", "r.html", "j.xml"):
            assert not (pytester.path / "out" / name).exists(), name
        assert decided(pytester).ret == USAGE  # no results file: nothing to re-decide
    else:
        assert "Run: **FAIL**" in read(pytester, "r.md")
        assert '<span class="badge o-failed">FAIL</span></h1>' in read(pytester, "r.html")
        assert decided(pytester).ret == pytest.ExitCode.TESTS_FAILED
    history = read(pytester, "h.jsonl").splitlines()
    assert all(json.loads(line)["status"] == "failed" for line in history[1:])


def test_a_shard_stopped_by_x_leaves_an_incomplete_results_file(
        pytester: pytest.Pytester) -> None:
    write_many(pytester.path / "gs", 10, floors=FLOORS)
    pytester.makeconftest(planned({}))
    assert run_pytester(pytester, "0", "gs", "--ragate-shard=1/2",
                        "--ragate-results=out/r.jsonl").ret == pytest.ExitCode.OK
    assert results_trailer(pytester)["incomplete"] is None
    pytester.makeconftest(planned({f"q{i:02d}": "1 / 0" for i in range(10)}))
    result = run_pytester(pytester, "0", "gs", "-x", "--ragate-shard=1/2",
                          "--ragate-results=out/r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert results_trailer(pytester)["incomplete"] == "stopping after 1 failures"


@WORKERS
def test_a_run_in_which_nothing_ran_writes_no_pass_anywhere(pytester: pytest.Pytester,
                                                           workers: str) -> None:
    """`-k` matching nothing, every output asked for (issue 33: the reports said
    `Run: **PASS**`): pytest exits 5, the reports say NOTHING RAN, no history line is
    appended, JUnit holds no case, and `ragate decide` refuses the results file."""
    write_many(pytester.path / "gs", 4, floors=FLOORS)
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, workers, "gs", "-k", "nomatch", *OUTPUTS)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    report = read(pytester, "r.md")
    assert "Run: **NOTHING RAN**: no goldset question or anchor ran" in report
    assert "PASS" not in report
    html = read(pytester, "r.html")
    assert '<span class="badge o-nothing_ran">NOTHING RAN</span></h1>' in html
    assert ">PASS<" not in html
    assert not (pytester.path / "out" / "h.jsonl").exists()
    assert "<testcase" not in read(pytester, "j.xml")
    assert decided(pytester).ret == pytest.ExitCode.TESTS_FAILED


# --- 2. an output never overwrites an input ----------------------------------------------

INPUTS = {  # the output flag, and the goldset's file it names
    "report on the sealed answers": ("--ragate-report", "gs/expected.sealed.json"),
    "results on the questions": ("--ragate-results", "gs/questions.jsonl"),
    "history on ragate.toml": ("--ragate-history", "gs/ragate.toml"),
    "html on the anchors": ("--ragate-html", "gs/anchors.jsonl"),
    "junit on a corpus file": ("--junitxml", "gs/corpus/meetings.jsonl"),
    "results in the corpus glob": ("--ragate-results", "gs/corpus/new.jsonl"),
    "report through ..": ("--ragate-report", "gs/corpus/../questions.jsonl"),
}


@WORKERS
@pytest.mark.parametrize("case", INPUTS, ids=list(INPUTS))
def test_an_output_on_a_goldset_file_is_a_usage_error_and_destroys_nothing(
        pytester: pytest.Pytester, workers: str, case: str) -> None:
    root = write_goldset(pytester.path / "gs", floors=FLOORS, anchors=ANCHORS)
    seal_goldset(root, "s3cret", kdf=Scrypt(log2_n=10, p=1))
    pytester.makeconftest(planned({}))
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    flag, path = INPUTS[case]
    result = run_pytester(pytester, workers, "gs", f"{flag}={path}")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines([f"*of goldset *gs/ragate.toml is also written by {flag} (*): "
                                 "an output never overwrites an input"])
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not (pytester.path / "ran.txt").exists()


@WORKERS
def test_links_to_a_goldset_file_are_refused_too(pytester: pytest.Pytester,
                                                  workers: str) -> None:
    root = pytester.path / "gs"
    write_many(root, 4, FLOORS)
    pytester.makeconftest(planned({}))
    (pytester.path / "soft.md").symlink_to(root / "expected.jsonl")
    os.link(root / "questions.jsonl", pytester.path / "hard.jsonl")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = run_pytester(pytester, workers, "gs", "--ragate-report=soft.md",
                          "--ragate-history=hard.jsonl")
    assert result.ret == USAGE
    for line in ("*the expected answers of goldset * --ragate-report *",
                 "*the questions of goldset * --ragate-history *"):
        result.stderr.fnmatch_lines([line])
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


DECORATED = '''
import pytest_ragate as ragate

@ragate.goldset("../goldsets/gs")
def test_mine(ragate_question, ragate_system):
    return ragate_system(ragate_question.question)
'''


@WORKERS
def test_a_decorated_goldset_outside_the_paths_given_is_held_once_collected(
        pytester: pytest.Pytester, workers: str) -> None:
    """The decorator's folder is not under `tests`: its files are known only once the test
    module is collected, and are checked before anything is removed or written. Under `-n`
    without a ragate flag the controller, which collects nothing, sees no goldset: its
    workers refuse the run as one nobody gates (a usage error too), and pytest's JUnit file
    is not written over the expected answers either."""
    root = write_goldset(pytester.path / "goldsets" / "gs", floors=FLOORS)
    pytester.makeconftest(planned({}))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests" / "test_rag.py").write_text(DECORATED)
    before = (root / "expected.jsonl").read_bytes()
    for flag in ("--ragate-results", "--junitxml"):
        result = run_pytester(pytester, workers, "tests", f"{flag}=goldsets/gs/expected.jsonl")
        assert result.ret == USAGE
        unasked = flag == "--junitxml" and workers != "0"
        result.stderr.fnmatch_lines([
            "*this -n run collected goldset items (tests/test_rag.py::test_mine) but did not "
            "ask for goldsets*" if unasked else f"*the expected answers of goldset "
            f"*goldsets/gs/ragate.toml is also written by {flag} *"])
        assert (root / "expected.jsonl").read_bytes() == before
    assert not (pytester.path / "ran.txt").exists()


def test_a_shard_never_deletes_a_goldset_file_it_is_told_to_write(
        pytester: pytest.Pytester) -> None:
    root = pytester.path / "gs"
    write_many(root, 4, FLOORS)
    pytester.makeconftest(planned({}))
    before = (root / "expected.jsonl").read_bytes()
    result = run_pytester(pytester, "0", "gs", "--ragate-shard=1/2",
                          "--ragate-results=gs/expected.jsonl")
    assert result.ret == USAGE
    assert (root / "expected.jsonl").read_bytes() == before


def test_ragate_decide_never_writes_over_the_results_it_decides(
        pytester: pytest.Pytester) -> None:
    write_many(pytester.path / "gs", 4, FLOORS)
    pytester.makeconftest(planned({}))
    for index in (1, 2):
        assert run_pytester(pytester, "0", "gs", f"--ragate-shard={index}/2",
                            f"--ragate-results=shards/{index}.jsonl").ret == pytest.ExitCode.OK
    before = (pytester.path / "shards" / "1.jsonl").read_bytes()
    for output in ("--ragate-results", "--ragate-report"):
        result = run_pytester(pytester, "0", "gs", "--ragate-decide=shards/",
                              f"{output}=shards/1.jsonl")
        assert result.ret == USAGE
        result.stderr.fnmatch_lines([f"*--ragate-decide *shards/1.jsonl is also written by "
                                     f"{output} *"])
        assert (pytester.path / "shards" / "1.jsonl").read_bytes() == before


# --- 3. only regular files are written ---------------------------------------------------

@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[tuple[Path, list[bytes]]]:
    """A named pipe, and what a reader took from it (every writer, one after another)."""
    path = tmp_path / "pipe"
    os.mkfifo(path)
    got: list[bytes] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            with open(path, "rb") as handle:  # waits for a writer
                got.append(handle.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    yield path, got
    stop.set()
    with contextlib.suppress(OSError):  # a reader waiting in open() is let go
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    thread.join(timeout=5)


def read_through(got: list[bytes], needle: bytes) -> bool:
    """Whether the pipe's reader took `needle`, waiting up to 5 s: it appends what it read
    only after the writer closed, so right after a run it may not have yet."""
    for _ in range(100):
        if any(needle in chunk for chunk in got):
            return True
        threading.Event().wait(0.05)
    return False


def test_write_atomic_writes_through_a_pipe_and_never_replaces_it(
        fifo: tuple[Path, list[bytes]]) -> None:
    path, got = fifo
    write_atomic(path, "through the pipe")
    assert stat.S_ISFIFO(os.stat(path).st_mode)
    assert not remove_regular(path) and stat.S_ISFIFO(os.stat(path).st_mode)
    assert read_through(got, b"through the pipe") and got[0] == b"through the pipe"


def test_write_atomic_refuses_a_socket_and_replaces_a_links_target(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(OSError, match="is a socket, not a file to write"):
            write_atomic(tmp_path / "sock", "x")
        assert stat.S_ISSOCK(os.stat(tmp_path / "sock").st_mode)
    (tmp_path / "target.md").write_text("old")
    (tmp_path / "link.md").symlink_to(tmp_path / "target.md")
    write_atomic(tmp_path / "link.md", "new")
    assert (tmp_path / "link.md").is_symlink()
    assert (tmp_path / "target.md").read_text() == "new"


def test_a_report_to_a_named_pipe_is_written_through_it(
        pytester: pytest.Pytester, fifo: tuple[Path, list[bytes]]) -> None:
    """The controller alone clears and writes the reports (modes/output_paths.py), under
    -n 2 as at -n 0: one run holds it."""
    path, got = fifo
    write_many(pytester.path / "gs", 4, FLOORS)
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, "0", "gs", f"--ragate-report={path}")
    assert result.ret == pytest.ExitCode.OK
    assert stat.S_ISFIFO(os.stat(path).st_mode)
    assert read_through(got, b"# ragate report")


@WORKERS
def test_a_socket_or_a_pipe_as_the_history_is_a_usage_error(
        pytester: pytest.Pytester, workers: str) -> None:
    write_many(pytester.path / "gs", 4, FLOORS)
    pytester.makeconftest(planned({}))
    os.mkfifo(pytester.path / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(pytester.path / "sock"))
        result = run_pytester(pytester, workers, "gs", "--ragate-results=sock",
                              "--ragate-history=pipe")
    assert result.ret == USAGE
    result.stderr.fnmatch_lines(["*--ragate-results *sock: is a socket: give a regular file*",
                                 "*--ragate-history *pipe: is a named pipe: give a regular file "
                                 "(the history is read back and appended to)*"])
    assert not (pytester.path / "ran.txt").exists()


def test_dev_null_as_an_output_stays_the_device(pytester: pytest.Pytester,
                                                tmp_path: Path) -> None:
    """As root, a rename over /dev/null replaces the machine's /dev/null. The writer is
    first shown to write through a pipe (so this test fails, rather than risk /dev/null,
    where it would rename); then a run writes its report and JUnit to /dev/null."""
    probe = tmp_path / "probe"
    os.mkfifo(probe)
    reader = threading.Thread(target=probe.read_bytes, daemon=True)
    reader.start()
    write_atomic(probe, "x")
    reader.join(timeout=5)
    assert stat.S_ISFIFO(os.stat(probe).st_mode), "write_atomic renames over a device"
    write_many(pytester.path / "gs", 4, FLOORS)
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, "0", "gs", "--ragate-report=/dev/null", "--junitxml=/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert result.ret == pytest.ExitCode.OK  # a device written through may take two outputs


def test_every_file_a_goldset_reads_is_an_input(tmp_path: Path) -> None:
    """What the checks hold outputs to, for a goldset with anchors and labels: its toml,
    questions, expected and sealed answers, anchors, labels and corpus globs."""
    from pytest_ragate.modes.output_paths import goldset_inputs, overwritten
    from tests.conftest import BASE_TOML

    root = write_goldset(tmp_path / "gs", toml=BASE_TOML + '\n[judge]\nlabels = "labels.jsonl"\n',
                         anchors=ANCHORS)
    inputs = goldset_inputs(root / "ragate.toml")
    named = {i.what.split(" of goldset")[0] for i in inputs}
    assert named == {"the ragate.toml", "the questions", "the expected answers",
                     "the sealed answers", "the anchors", "the labels",
                     "the corpus glob 'corpus/*.jsonl'"}
    outputs = {(root / name).resolve(): ["--ragate-report"] for name in
               ("labels.jsonl", "expected.sealed.json", "corpus/other.jsonl", "report.md")}
    assert len(overwritten(outputs, inputs)) == 3  # all but report.md
