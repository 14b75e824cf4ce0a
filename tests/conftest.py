"""What the tests share: small goldsets written as real files, the way users keep them; the
ways a test runs pytest (`run_pytester`, `run_command`) and reads what it said; the fixtures
several modules use (`embedder`, `openai_stub`)."""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy  # noqa: F401  (LOADED_BEFORE_RUNS: a pure test's numpy must outlive in-process runs)
import pytest

from tests.openai_stub import openai_stub as openai_stub_fixture

# Every run the suite starts that embeds (the built-in pipeline, a RAGAS judge's answer
# relevance) finds the model's ONNX graph in one folder (builtin_system/encoders.py), exported once
# for the suite rather than once per test's fresh index folder (an export imports torch and
# sentence-transformers: ~10 s of CPU). tests/test_encoders.py tests the export itself without it.
os.environ.setdefault("RAGATE_ENCODER_DIR", str(Path(tempfile.gettempdir()) / "ragate-encoders"))

if TYPE_CHECKING:
    from pytest_ragate.builtin_system.retrieval import Embedder

DOCS = {"m1": 12, "m2": 12, "m3": 6}

QUESTIONS = [
    ("q1", "single_doc"),
    ("q2", "single_doc"),
    ("q3", "multi_doc"),
    ("q4", "unanswerable"),
]
EVIDENCE = {
    "q1": [("m1", 2, 3)],
    "q2": [("m2", 5, 5)],
    "q3": [("m1", 0, 0), ("m3", 4, 5)],
    "q4": [],
}

BASE_TOML = """\
name = "mini"
eval_version = "7"

[corpus]
paths = ["corpus/*.jsonl"]
format = "segments-jsonl"

[questions]
file = "questions.jsonl"
expected = "expected.jsonl"
"""


# A conftest.py fragment: `--ragate-judge fixture:PATH` with a tiny deterministic embedder
# (answer relevance needs one), so judged runs need no model.
FIXTURE_JUDGE_CONFTEST = '''
import pytest

class Embedder:
    def encode(self, texts):
        import numpy as np
        return np.array([[1.0, float(len(t))] for t in texts])

@pytest.fixture(scope="session")
def ragate_judge(pytestconfig):
    from pytest_ragate.judges.select import from_settings
    from pytest_ragate.settings import read_settings
    return from_settings(read_settings(pytestconfig).judge, Embedder)
'''


TWELVE_EUROS = '''
import pytest
from pytest_ragate import Answer, Citation, Context

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        ctx = Context(context_id="c1", doc_id="m1", first_unit=0, last_unit=3,
                      text=f"context of {qid}: the budget is twelve euros", distance=0.2)
        return Answer(text=f"answer to {qid}: twelve euros", contexts=[ctx],
                      citations=[Citation(context_id="c1")])
    return answer
'''
"""A conftest whose system answers every question alike ("answer to q1: twelve euros"), citing
one context of m1: answers a judge can grade the same way in every run."""


def both_routes(pytester: pytest.Pytester, system_conftest: str) -> None:
    """The user's system as a `my_rag` fixture that both routes use: `ragate_system` for the
    goldset's file route, and a `@ragate.goldset("gs")` test, `test_rag.py::test_mine`."""
    pytester.makeconftest(system_conftest.replace("def ragate_system", "def my_rag") + '''
@pytest.fixture
def ragate_system(my_rag):
    return my_rag
''')
    pytester.makepyfile(test_rag='''
import pytest_ragate as ragate

@ragate.goldset("gs")
def test_mine(ragate_question, my_rag):
    return my_rag(ragate_question.question)
''')


def system_test_in_tests(root: Path, goldset: str) -> None:
    """`tests/test_rag.py::test_mine`: a `@ragate.goldset(goldset)` test, under tests/, that
    answers with the `ragate_system` fixture (which conftest.py defines it is the point)."""
    (root / "tests").mkdir()
    (root / "tests" / "test_rag.py").write_text(
        f"import pytest_ragate as ragate\n\n\n@ragate.goldset({goldset!r})\n"
        "def test_mine(ragate_question, ragate_system):\n"
        "    return ragate_system(ragate_question.question)\n")


TIMED = "latency_s"  # what the clock measured: no two runs share it (the bill)


def results_rows(source: Path | str, *, timed: bool = False) -> list[dict[str, Any]]:
    """The question rows of a results file (or its text): every line with a question id (the
    header, anchor and item lines that `ragate decide` reads are left out); without their
    latency unless `timed`, so the rows of two runs compare."""
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    rows = [row for line in text.splitlines()
            if line.strip() and "question_id" in (row := json.loads(line))]
    if not timed:
        for row in rows:
            row.pop(TIMED, None)
    return rows


# a results row's latency, a history line's bill; a results file's trailer, the digest of
# its bytes (latencies included); the reports' bill lines; the HTML's latency column
_CLOCK = [(re.compile(r'("latency_(?:s|p50_s|p95_s|total_s)": ?)[0-9.e+-]+'), r'\1"…"'),
          (re.compile(r'("ragate_trailer".*"sha256": ")[0-9a-f]{64}'), r"\1…"),
          (re.compile(r"\b(latency p50|latency|p95|total) [0-9]+\.[0-9]+ s\b"), r"\1 … s"),
          (re.compile(r'(<td class="num latency">)[^<]*'), r"\1…")]


def untimed(text: str) -> str:
    """An output (results, Markdown, HTML) with what the clock measured masked: the bill's
    latencies (and a results file's digest of them), and the Markdown's `latency (s)` column
    blanked. Two runs' outputs compare; a results file's rows still parse."""
    for pattern, mask in _CLOCK:
        text = pattern.sub(mask, text)
    lines, column = [], None
    for line in text.splitlines(keepends=True):
        cells = line.split("|")
        if line.startswith("|") and any(c.strip() == "latency (s)" for c in cells):
            column = next(i for i, c in enumerate(cells) if c.strip() == "latency (s)")
        elif column is not None and line.startswith("|") and len(cells) > column:
            cells[column] = " " * len(cells[column])
            line = "|".join(cells)
        elif not line.startswith("|"):
            column = None
        lines.append(line)
    return "".join(lines)


def jsonl(rows: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def saved_results(rows: Iterable[Any]) -> str:
    """A whole run's results file of these question rows (`QuestionRecord`s), as a gate
    writes it: a header stamping each goldset route they name, the rows, and the trailer
    that vouches for them (what every reader of a saved run holds a file to)."""
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.outputs.results import GoldsetStamp, Header, results_lines

    runs: dict[tuple[str, str], GoldsetRun] = {}
    for row in rows:
        runs.setdefault((row.route, row.goldset), GoldsetRun(
            name=row.goldset, eval_version=row.eval_version, route=row.route)).records.append(row)
    header = Header(format=1, ragate_version="0", settings={}, goldsets=[
        GoldsetStamp(route=route, goldset=name, eval_version=run.eval_version, sha256=None)
        for (route, name), run in runs.items()])
    return results_lines(list(runs.values()), header)


def corpus_rows(docs: dict[str, int] = DOCS) -> list[dict[str, Any]]:
    return [
        {"doc_id": doc, "unit": t, "text": f"{doc} turn {t}: the budget is {t} euros",
         "speaker": "A" if t % 2 else "B"}
        for doc, n in docs.items() for t in range(n)
    ]


def question_rows(questions: list[tuple[str, str]] = QUESTIONS) -> list[dict[str, Any]]:
    return [{"question_id": q, "kind": k, "question": f"What about {q}?"} for q, k in questions]


def expected_rows(evidence: dict[str, list[tuple[str, int, int]]] = EVIDENCE,
                  ) -> list[dict[str, Any]]:
    return [
        {"question_id": q, "gist": f"gist of {q}" if spans else None,
         "evidence": [{"doc_id": d, "first_unit": a, "last_unit": b} for d, a, b in spans]}
        for q, spans in evidence.items()
    ]


def write_goldset(root: Path, *, toml: str = BASE_TOML, floors: str = "",
                  questions: list[dict[str, Any]] | None = None,
                  expected: list[dict[str, Any]] | None = None,
                  corpus: list[dict[str, Any]] | None = None,
                  anchors: list[dict[str, Any]] | None = None) -> Path:
    """A goldset folder under `root`; every part can be replaced to make it wrong. With
    `anchors`, an anchors.jsonl of them, declared in ragate.toml."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus").mkdir(exist_ok=True)
    if anchors is not None:
        toml += '\n[anchors]\nfile = "anchors.jsonl"\n'
        (root / "anchors.jsonl").write_text(jsonl(anchors))
    (root / "ragate.toml").write_text(toml + ("\n" + floors if floors else ""))
    (root / "corpus" / "meetings.jsonl").write_text(jsonl(corpus_rows() if corpus is None
                                                          else corpus))
    (root / "questions.jsonl").write_text(jsonl(question_rows() if questions is None
                                                else questions))
    (root / "expected.jsonl").write_text(jsonl(expected_rows() if expected is None
                                               else expected))
    return root


# --- running pytest from a test, and reading what it said ------------------------------------

def touched_units(text: str, units: Iterable[str], start: int, end: int) -> list[int]:
    """The units (their texts, in order) with a character in text[start:end], found by
    looking each unit's text up in `text` in turn: a reference for the offset helper that
    shares none of its arithmetic."""
    touched, at = [], 0
    for number, unit in enumerate(units):
        where = text.index(unit, at)
        at = where + len(unit)
        if where < end and start < at:
            touched.append(number)
    return touched


WORKERS = pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])
"""A test run twice: in one process (`-n 0`) and under xdist (`-n 2`), which must agree."""
WORKERS_SHARED = pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"],
                                         scope="module")
"""WORKERS for cases that share one run per worker count: a module-scoped fixture may ask
for `workers` and run it once for all of them (the ids are WORKERS' own)."""


def run_pytester(pytester: pytest.Pytester, workers: str, *args: str,
                 process: bool = False) -> pytest.RunResult:
    """pytest over the pytester folder with `-n workers`; -rA lists every outcome and -vv
    keeps the short summary lines whole (not cut at the terminal's width). The run is in this
    process (pytester puts `sys.modules` back after it), a third of a run's cost in a process of
    its own; `process=True` for a run that may end its own process (a system that kills it)."""
    run = pytester.runpytest_subprocess if process else pytester.runpytest_inprocess
    return run("-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", *args)


def run_command(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest, or a `ragate` command (args starting with "decide", "rejudge" or "plan"), as
    a command line in a process of its own under `root`, with no pytester around it; `env`
    adds variables (the faults a project's system reads)."""
    if args[:1] in (("decide",), ("rejudge",), ("plan",)):
        argv = [sys.executable, "-c", "from pytest_ragate.cli import main; main()", *args]
    else:
        argv = [sys.executable, "-m", "pytest", *args]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=600,
                          env=command_env(**env))


def run_here(pytester: pytest.Pytester, *args: str, **env: str,
             ) -> subprocess.CompletedProcess[str]:
    """What `run_command(pytester.path, *args, **env)` gives, run in this process: pytest with
    these arguments, or `ragate decide ...` through the command's own `main` (`commands.decide`),
    whose pytest session runs as pytester's in-process runs do (`sys.modules` put back after
    it, its output captured). `env` is set for the run and the xdist workers it starts. No
    process is started for it (~1-2 s each): the process boundary is not what these tests are
    about; a system that kills its process is run with run_command."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        result = (ragate_decide(pytester, patch, args) if args[0] in ("decide", "compare")
                  else pytester.runpytest_inprocess(*args))
    return subprocess.CompletedProcess(list(args), int(result.ret), result.stdout.str(),
                                       result.stderr.str())


def ragate_decide(pytester: pytest.Pytester, patch: pytest.MonkeyPatch, args: tuple[str, ...],
                  ) -> pytest.RunResult:
    """`ragate decide ...` or `ragate compare ...` (ARGS) by `cli.main`, its `pytest.main`
    call run by pytester (the command's exit status is that session's)."""
    from pytest_ragate.cli import main  # the decide mode: imported by it alone

    sessions: list[pytest.RunResult] = []

    def session(argv: list[str]) -> int:
        sessions.append(pytester.runpytest_inprocess(*argv))
        return sessions[-1].ret

    patch.setattr(pytest, "main", session)
    with pytest.raises(SystemExit) as exited:
        main(list(args), prog_name="ragate")
    [result] = sessions
    assert exited.value.code == result.ret
    return result


# --- one terminal for every pytest a test starts -----------------------------------------------
# pytest cuts its short summary to the terminal's width unless `CI` is set, colours its output
# when told to, and GitHub's variables switch ragate's own GitHub output on: a test that reads
# what a pytest run printed would pass in one shell and fail in another. Every run a test
# starts (pytester in the test's process, or a process of its own) sees this terminal instead
# of the one the suite was started from: 80 columns, no CI, no colour, UTF-8.
# They also skip the plugins that nothing here uses and every start-up (each xdist worker's
# too) would pay for: langsmith's (the `ragas` extra installs it; ~0.9 s,
# benchmarks/collect_10k.py, as README advises users), Hypothesis's (it imports all of
# Hypothesis: ~1.3 s of CPU here), anyio's (0.05-0.2 s), platformdirs' and xdist's looponfail.
TERMINAL = {"COLUMNS": "80", "LINES": "24", "PYTHONIOENCODING": "utf-8", "PYTHONUTF8": "1",
            "PYTEST_ADDOPTS": "-p no:langsmith_plugin -p no:hypothesispytest -p no:anyio "
                              "-p no:platformdirs -p no:xdist.looponfail"}
NOT_PASSED_ON = ("CI", "BUILD_NUMBER", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITLAB_CI",
                 "FORCE_COLOR", "PY_COLORS", "NO_COLOR", "TERM")


def command_env(**extra: str) -> dict[str, str]:
    """The environment of a process a test starts: this process's less pytest's own variables
    (a test's PYTEST_CURRENT_TEST, PYTEST_ADDOPTS, xdist's) and the shell's terminal
    (`TERMINAL`), offline, with a fixed hash seed; `extra` adds variables."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTEST_") and k not in NOT_PASSED_ON}
    env.update(TERMINAL, HF_HUB_OFFLINE="1", RAGAS_DO_NOT_TRACK="true",
               ANONYMIZED_TELEMETRY="False", PYTHONHASHSEED="0")
    env.update(extra)
    return env


# pytester's runs in this process put `sys.modules` back as they found it: a library first
# imported inside one is imported afresh by the next, which a C extension (numpy, torch, Chroma's
# bindings, pyarrow's types under RAGAS) cannot survive ("cannot load module more than once per
# process", "type extension already defined") and matplotlib's module state does not either,
# and which costs its import again (RAGAS: 4 s of CPU). What a gate may import is imported
# once per process, before pytest's own pytester fixture takes its snapshot of `sys.modules`
# (a session fixture: set up before any test's fixtures); imported after it, the first test's
# teardown took them all out again.
LOADED_BEFORE_RUNS = ("numpy", "scipy.stats", "rapidfuzz", "jinja2", "matplotlib.figure",
                      "matplotlib.backends.backend_agg", "onnxruntime", "tokenizers", "torch",
                      "sentence_transformers", "chromadb", "tiktoken", "ragas", "bm25s")


@pytest.fixture(scope="session")
def loaded_before_runs() -> None:
    for name in LOADED_BEFORE_RUNS:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


@pytest.fixture
def pytester(loaded_before_runs: None, pytester: pytest.Pytester,
             monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's own pytester, its runs (in this process or a subprocess) in `TERMINAL`
    (pytester clears PYTEST_ADDOPTS when it starts: this is set after), with what a gate may
    import loaded first (`LOADED_BEFORE_RUNS`)."""
    for name in NOT_PASSED_ON:
        monkeypatch.delenv(name, raising=False)
    for name, value in TERMINAL.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(pytester, "inline_run", frozen_first(pytester.inline_run))
    return pytester


def frozen_first(inline_run: Callable[..., Any]) -> Callable[..., Any]:
    """pytest in this process (`runpytest_inprocess` and `runpytest` call `inline_run`), with
    every object alive before it frozen. A gate collects the garbage once before it freezes
    its items (items/long_lived.py): in this process, which holds torch, RAGAS and Chroma,
    that full pass walked millions of objects, 0.5 s of the 0.8 s of CPU a 4-question run
    took. Frozen, they are out of its reach (and the gate, finding them frozen, freezes none
    of its own); they are given back when the run ends. tests/test_long_lived.py runs pytest
    without it (`__wrapped__`)."""
    @functools.wraps(inline_run)
    def run(*args: Any, **kwargs: Any) -> Any:
        gc.freeze()
        try:
            return inline_run(*args, **kwargs)
        finally:
            gc.unfreeze()

    return run


def esc(*lines: str) -> list[str]:
    """fnmatch patterns with literal brackets (node ids and intervals are full of them)."""
    table = str.maketrans({"[": "[[]", "]": "[]]"})
    return [line.translate(table) for line in lines]


def expect(result: pytest.RunResult, *patterns: str) -> None:
    """Each line somewhere in stdout, in any order (brackets are literal)."""
    said(result.stdout, *patterns)


def said(stdout: pytest.LineMatcher, *patterns: str) -> None:
    """Each line somewhere in what a run printed (a shared run's, kept as a LineMatcher), in
    any order (brackets are literal)."""
    for pattern in esc(*patterns):
        stdout.fnmatch_lines([pattern])


def junit_cases(path: Path, *, timed: bool = False) -> dict[str, dict[str, object]]:
    """testcase name -> its properties and outcome element, whatever the order (a question's
    latency left out unless `timed`)."""
    cases: dict[str, dict[str, object]] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")
                 if timed or p.get("name") != TIMED}
        outcome = next((child.tag for child in case if child.tag in
                        ("failure", "error", "skipped")), "passed")
        cases[f"{case.get('classname')}::{case.get('name')}"] = {"props": props,
                                                                 "outcome": outcome}
    return cases


def rows_of(path: Path, *, timed: bool = False) -> dict[str, dict[str, Any]]:
    """A results file's question rows by question id (`results_rows`): each question's own,
    not the rows of questions asked again to check a sequential stop."""
    return {r["question_id"]: r for r in results_rows(path, timed=timed)
            if not r.get("reasked")}


# --- fixtures several modules use ------------------------------------------------------------


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real embedder (all-MiniLM-L6-v2), loaded once per process."""
    from pytest_ragate.builtin_system.retrieval import Embedder

    return Embedder()


openai_stub = openai_stub_fixture  # tests/openai_stub.py's fixture, for every test module


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """With RAGATE_KEEP_RESULTS=DIR, the JSON-lines and Markdown files a test leaves in its
    folders (tmp_path, pytester's) are copied to DIR with those folders masked, so two
    snapshots of the suite can be compared byte for byte, as a refactoring that must not
    change any result is checked. Files that carry times (history, JUnit) differ anyway."""
    try:
        return (yield)
    finally:
        keep = os.environ.get("RAGATE_KEEP_RESULTS")
        if keep:
            _keep_results(item, Path(keep))


def _keep_results(item: pytest.Item, keep: Path) -> None:
    funcargs = getattr(item, "funcargs", {})
    folders = [funcargs["tmp_path"]] if "tmp_path" in funcargs else []
    if "pytester" in funcargs:
        folders.append(funcargs["pytester"].path)
    name = re.sub(r"[^\w.-]+", "_", item.nodeid)
    for folder in folders:
        for found in sorted([*folder.rglob("*.jsonl"), *folder.rglob("*.md")]):
            if ".pytest_cache" in found.parts or "history" in found.name:
                continue
            text = found.read_text(encoding="utf-8", errors="replace")
            text = text.replace(str(folder), "<tmp>")
            rel = re.sub(r"[^\w.-]+", "_", str(found.relative_to(folder)))
            (keep / f"{name}__{rel}").write_text(text, encoding="utf-8")


_OPTIONS: list[tuple[set[str], set[str]]] = []


@pytest.fixture
def real_options(pytester: pytest.Pytester) -> tuple[set[str], set[str]]:
    """The plugin's flags and ini names, read from `pytest --help` as a user sees them."""
    if not _OPTIONS:  # asked once per session
        result = pytester.runpytest("--help")
        assert result.ret == 0
        flags = {m.group(1) for line in result.outlines
                 if (m := re.match(r"\s+(--ragate-[\w-]+)", line))}
        inis = {m.group(1) for line in result.outlines
                if (m := re.match(r"\s+(ragate_\w+) \(", line))}
        assert {"--ragate-cache", "--ragate-html", "--ragate-baseline"} <= flags
        assert {"ragate_ci", "ragate_min_n"} <= inis
        _OPTIONS.append((flags, inis))
    return _OPTIONS[0]


# --- the fast tier ---------------------------------------------------------------------------
# `make test-fast` runs the tests that are not `heavy` (-m "not heavy"), for every edit;
# `make test` runs them all, as CI does. A test is heavy when it runs pytest inside itself
# (it uses `pytester`), loads the real embedding model (it uses `embedder`), or is marked
# `@pytest.mark.heavy` for another reason: it starts a process, builds an index, or computes
# for seconds. The rule is held on every run: a test that is not heavy and starts a process
# errors at teardown, naming the command (git, which a history line asks for its commit, is let
# through: it takes milliseconds). The goldsets' own `slow` marker, a judged item, is another
# thing: this one is the suite's.

HEAVY_FIXTURES = frozenset({"pytester", "embedder"})
QUICK_PROGRAMS = frozenset({"git"})
_STARTED = pytest.StashKey[list[str]]()
# Libraries that take seconds to import (torch through sentence-transformers, ragas, the
# adapters' frameworks): the fast tier never imports them, at collection or in a test. A module
# that needs one at import is heavy as a whole (`pytestmark = pytest.mark.heavy` at its top
# level): the fast tier does not even import it.
SLOW_IMPORTS = ("sentence_transformers", "torch", "ragas", "haystack", "llama_index",
                "langchain_community", "chromadb")
HEAVY_MODULE = re.compile(r"^pytestmark = pytest\.mark\.heavy\b", re.MULTILINE)
_IMPORTED = pytest.StashKey[list[str]]()


def fast_tier(config: pytest.Config) -> bool:
    """`make test-fast`: the run deselects every heavy test."""
    return " ".join(str(config.option.markexpr).split()) == "not heavy"


def slow_imports() -> set[str]:
    return {name for name in SLOW_IMPORTS if name in sys.modules}


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The fast tier leaves a module that is heavy as a whole unimported."""
    if (fast_tier(config) and collection_path.suffix == ".py"
            and HEAVY_MODULE.search(collection_path.read_text(encoding="utf-8"))):
        return True
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[pytest.CollectReport]:
    """In the fast tier, a test module that imports a slow library is a collection error."""
    before = slow_imports()
    report = yield
    added = slow_imports() - before
    if isinstance(collector, pytest.Module) and fast_tier(collector.config) and added:
        report.outcome, report.longrepr = "failed", (
            f"{collector.nodeid} imports {', '.join(sorted(added))} at import, which takes "
            "seconds of every fast run: import it in the tests that need it, or make the "
            "module heavy as a whole (`pytestmark = pytest.mark.heavy`; tests/conftest.py, "
            "the fast tier)")
    return report


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "heavy: left out of `make test-fast` (-m 'not heavy'): the test starts a "
        "process, runs pytest, loads the embedding model or computes for seconds; set by "
        "tests/conftest.py on every test that uses pytester or embedder")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marked before `-m` deselects (tryfirst: ahead of pytest's own mark plugin)."""
    for item in items:
        if HEAVY_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.heavy)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[bool]:
    """Every process a fast test starts (setup, call, teardown) is written down."""
    if item.get_closest_marker("heavy"):
        return (yield)
    started = item.stash[_STARTED] = []
    if fast_tier(item.config):
        item.stash[_IMPORTED] = sorted(slow_imports())
    original = subprocess.Popen.__init__

    def noted(self: subprocess.Popen[Any], args: Any, *more: Any, **options: Any) -> None:
        single = isinstance(args, str | bytes | os.PathLike)
        command = os.fsdecode(args) if single else " ".join(map(os.fsdecode, args))
        if Path(command.split(" ", 1)[0]).name not in QUICK_PROGRAMS:
            started.append(command)
        original(self, args, *more, **options)

    subprocess.Popen.__init__ = noted  # type: ignore[method-assign]
    try:
        return (yield)
    finally:
        subprocess.Popen.__init__ = original  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    """A fast test that started a process errors here, after its own teardown."""
    result = yield
    started = item.stash.get(_STARTED, [])
    if _IMPORTED in item.stash and (added := slow_imports() - set(item.stash[_IMPORTED])):
        pytest.fail(f"{item.nodeid} is in the fast tier but imported "
                    f"{', '.join(sorted(added))}, which takes seconds: mark it "
                    "`@pytest.mark.heavy` (tests/conftest.py, the fast tier)", pytrace=False)
    if started:
        first = started[0].splitlines()[0][:80]
        pytest.fail(f"{item.nodeid} is in the fast tier but started {len(started)} "
                    f"process{'es' * (len(started) != 1)} (`{first}`...): mark it "
                    "`@pytest.mark.heavy` (tests/conftest.py, the fast tier)", pytrace=False)
    return result


@pytest.fixture(autouse=True)
def _rubrics_forgotten() -> Iterator[None]:
    """The rubrics a test's goldsets declared (`[rubrics.NAME]`: scoring/rubrics.declare),
    forgotten after it as a run forgets them (items/defined_metrics.forget_metrics): the
    registry is the worker's, and its next test is another project's."""
    yield
    registry = sys.modules.get("pytest_ragate.scoring.registry")
    if registry is not None:
        registry.METRICS.rubrics.clear()


# --- the browser test --------------------------------------------------------------------------
# tests/test_html_report.py opens the HTML report in the system's Chromium. `make test` does not
# install one (that takes root); CI does (`make browser`, .ci/run) and requires it. Where it is
# missing the test skips, and the summary says once how to run it (pytest shows skip reasons
# only with -rs).
BROWSER_SKIP = "needs a browser:"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reasons = {report.longrepr[2].removeprefix("Skipped: ")
               for report in terminalreporter.stats.get("skipped", [])
               if isinstance(report.longrepr, tuple)
               and report.longrepr[2].removeprefix("Skipped: ").startswith(BROWSER_SKIP)}
    for reason in sorted(reasons):
        terminalreporter.write_line(f"skipped the HTML report's browser test, which {reason}")
