"""The suite's two tiers, as tests/conftest.py draws them: `make test-fast` runs what is not
heavy; a test that runs pytest or loads the model is heavy by what it uses, and a test outside
the heavy tier that starts a process errors, so the fast tier stays fast as tests are added."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest

SUITE_CONFTEST = Path(__file__).parent / "conftest.py"

TIERS = '''
import subprocess, sys
import pytest

def test_plain():
    pass

def test_runs_pytest(pytester):
    pass

def test_loads_the_model(embedder):
    pass

def test_starts_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.heavy
def test_marked_and_starts_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

def test_asks_git_for_its_commit():
    subprocess.run(["git", "--version"], capture_output=True)
'''


@pytest.fixture
def tiered(pytester: pytest.Pytester) -> pytest.Pytester:
    """The suite's own conftest over a module of one test of each kind."""
    pytester.makeconftest(SUITE_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_tiers=TIERS)
    return pytester


def test_the_fast_tier_leaves_out_what_runs_pytest_or_loads_the_model(
        tiered: pytest.Pytester) -> None:
    result = tiered.runpytest("-p", "no:cacheprovider", "-m", "not heavy", "-q",
                              "--collect-only")
    assert sorted(line for line in result.outlines if "::" in line) == [
        "test_tiers.py::test_asks_git_for_its_commit", "test_tiers.py::test_plain",
        "test_tiers.py::test_starts_python"]
    result.stdout.fnmatch_lines(["3/6 tests collected (3 deselected)*"])


def test_a_fast_test_that_starts_a_process_errors_and_names_it(tiered: pytest.Pytester,
                                                               ) -> None:
    result = tiered.runpytest("-p", "no:cacheprovider", "-k", "plain or starts_python or git")
    result.assert_outcomes(passed=4, errors=1, deselected=2)
    # the error's own report, not the short summary's line of it (cut to the terminal's width)
    [error] = [r for r in result.reprec.getreports("pytest_runtest_logreport")
               if r.when == "teardown" and r.failed]
    assert error.nodeid == "test_tiers.py::test_starts_python"
    assert fnmatch.fnmatch(error.longreprtext, (
        "test_tiers.py::test_starts_python is in the fast tier but started 1 process "
        "(`*python* -c pass`...): mark it `@pytest.mark.heavy` (tests/conftest.py, the fast "
        "tier)"))


ONE_TERMINAL = '''
import os
from conftest import command_env

def test_a_pytester_run_sees_the_suites_terminal(pytester):
    assert "CI" not in os.environ and "GITHUB_ACTIONS" not in os.environ
    assert (os.environ["COLUMNS"], os.environ["PYTHONUTF8"]) == ("80", "1")

def test_a_command_sees_the_suites_terminal():
    env = command_env(EXTRA="1")
    assert "CI" not in env and "GITHUB_ACTIONS" not in env and "PYTEST_XYZ" not in env
    assert (env["COLUMNS"], env["EXTRA"]) == ("80", "1")
'''


def test_every_run_a_test_starts_sees_one_terminal_whatever_the_shell(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell with CI set, a wide terminal and GitHub's variables (as CI has, and a person's
    shell has not): the runs the suite's tests start see neither, so what they print is the
    same in both."""
    pytester.makeconftest(SUITE_CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_terminal=ONE_TERMINAL)
    for name, value in {"CI": "true", "COLUMNS": "300", "GITHUB_ACTIONS": "true",
                        "PYTEST_XYZ": "1"}.items():
        monkeypatch.setenv(name, value)
    pytester.runpytest("-p", "pytester", "-p", "no:cacheprovider").assert_outcomes(passed=2)


SLOW_LIBRARY, SLOW_TOO = "slowlib_of_the_tiers", "slowlib_too"  # stand for torch, ragas...


@pytest.fixture
def slow_tiers(pytester: pytest.Pytester) -> pytest.Pytester:
    """The suite's conftest with one stand-in slow library, a module heavy as a whole, a
    module that imports the library at import and one whose fast test imports it."""
    conftest = SUITE_CONFTEST.read_text(encoding="utf-8")
    start = conftest.index("SLOW_IMPORTS = (")
    end = conftest.index(")", start) + 1
    pytester.makeconftest(conftest[:start] + f"SLOW_IMPORTS = ({SLOW_LIBRARY!r}, {SLOW_TOO!r})"
                          + conftest[end:])
    pytester.makepyfile(**{SLOW_LIBRARY: "LOADED = True", SLOW_TOO: "LOADED = True"})
    pytester.makepyfile(
        test_whole="import pytest\nimport os\n\npytestmark = pytest.mark.heavy  # slow\n\n"
                   "os.environ['TIERS_IMPORTED_WHOLE'] = '1'\n\ndef test_heavy():\n    pass\n",
        test_at_import=f"import {SLOW_LIBRARY}\n\ndef test_fast():\n    pass\n",
        test_in_a_test=f"def test_fast():\n    import {SLOW_TOO}\n\n"
                       "def test_plain():\n    pass\n")
    return pytester


def test_the_fast_tier_imports_no_slow_library_and_no_module_heavy_as_a_whole(
        slow_tiers: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIERS_IMPORTED_WHOLE", raising=False)
    result = slow_tiers.runpytest("-p", "no:cacheprovider", "-m", "not heavy",
                                  "--continue-on-collection-errors")
    result.assert_outcomes(passed=2, errors=2)
    assert "TIERS_IMPORTED_WHOLE" not in os.environ  # never imported, not merely deselected
    errors = {r.nodeid: r.longreprtext for r in result.reprec.getreports(
        ("pytest_collectreport", "pytest_runtest_logreport")) if r.failed}
    assert errors == {
        "test_at_import.py": f"test_at_import.py imports {SLOW_LIBRARY} at import, which takes "
        "seconds of every fast run: import it in the tests that need it, or make the module "
        "heavy as a whole (`pytestmark = pytest.mark.heavy`; tests/conftest.py, the fast tier)",
        "test_in_a_test.py::test_fast": f"test_in_a_test.py::test_fast is in the fast tier but "
        f"imported {SLOW_TOO}, which takes seconds: mark it `@pytest.mark.heavy` "
        "(tests/conftest.py, the fast tier)"}


def test_the_whole_suite_imports_them_all(slow_tiers: pytest.Pytester) -> None:
    slow_tiers.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=4)
