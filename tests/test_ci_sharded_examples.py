"""The sharded CI examples (`examples/*-sharded.yml`) stay true, and their commands work.

Both YAML files parse; the shard count of the matrix (GitHub) or `parallel` (GitLab) is the N
of `--ragate-shard i/N`; each shard writes its results into the folder it uploads, which the
decide job downloads and hands to `ragate decide`; the decide job waits for the shards and
runs when one fails; every `--ragate-*` flag they name exists. Then the very commands of each
file run, shard by shard and decided, over the synthetic project of tests/test_sharding.py,
and decide as one unsharded run of that project does: as the job's shell hands them to
`pytest` and `ragate`, each run in this process (`conftest.run_here`): the argv is what
is tested, not a process start.
"""

from __future__ import annotations

import fnmatch
import glob
import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_here
from tests.test_ci_examples import FLAG, INI, ROOT, has_option, load, unknown_names
from tests.test_sharding import FLOORS, floors_of, make_project, verdicts

GITHUB = ROOT / "examples" / "github-actions-sharded.yml"
GITLAB = ROOT / "examples" / "gitlab-ci-sharded.yml"
GITHUB_SINGLE = ROOT / "examples" / "github-actions.yml"
GITLAB_SINGLE = ROOT / "examples" / "gitlab-ci.yml"
GUIDE = ROOT / "docs" / "ci.md"
INSTALL = ["pip install -r requirements.txt", "pip install 'pytest-ragate[html]'"]


def decide_command(scripts: list[str]) -> str:
    """The one `ragate decide` command among shell scripts, continuations joined."""
    commands = [line.strip() for script in scripts
                for line in script.replace("\\\n", " ").splitlines()
                if line.strip().startswith("ragate decide ")]
    assert len(commands) == 1, commands
    return commands[0]


def shard_line(scripts: list[str]) -> str:
    """The shard job's pytest command, unsplit: its `${{ ... }}` would not survive shlex."""
    commands = [line.strip() for script in scripts
                for line in script.replace("\\\n", " ").splitlines()
                if line.strip().startswith("pytest ") and "rag_gate" in line]
    assert len(commands) == 1, commands
    return commands[0]


def option(argv: list[str], name: str) -> str:
    """The value of `--name value` or `--name=value`, which must be there once."""
    found = [argv[i + 1] if arg == name else arg.partition("=")[2]
             for i, arg in enumerate(argv) if arg == name or arg.startswith(name + "=")]
    assert len(found) == 1, (name, argv)
    return found[0]


@dataclass
class Sharded:
    """What the tests need from one sharded example, read from its YAML."""

    count: int  # the shard count the CI system runs
    shard: Callable[[int], list[str]]  # shard i's command, as that job runs it
    uploaded: str  # the folder each shard job keeps
    downloaded: str  # the folder the decide job finds them in
    decide: str  # the `ragate decide` command, `$BASELINE` and glob left to the shell
    runs_after_shards: bool  # the decide job waits for every shard
    runs_when_a_shard_fails: bool
    install: tuple[list[str], list[str]]  # the install commands of both jobs


def github() -> Sharded:
    workflow = load(GITHUB)
    jobs = workflow["jobs"]
    assert list(jobs) == ["shard", "decide"]
    shard, decide = jobs["shard"], jobs["decide"]
    assert shard["strategy"]["fail-fast"] is False  # one failing shard must not cancel others
    matrix = shard["strategy"]["matrix"]["shard"]
    count = len(matrix)
    assert matrix == list(range(1, count + 1)), matrix

    line = shard_line([s["run"] for s in shard["steps"] if "run" in s])
    assert "${{ matrix.shard }}" in line

    upload = next(s for s in shard["steps"]
                  if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    assert "always()" in upload.get("if", "")
    download = next(s for s in decide["steps"]
                    if str(s.get("uses", "")).startswith("actions/download-artifact"))
    assert download["with"]["merge-multiple"] is True  # one folder, not one per artifact
    for i in range(1, count + 1):  # the pattern fetches every shard's artifact
        name = upload["with"]["name"].replace("${{ matrix.shard }}", str(i))
        assert fnmatch.fnmatch(name, download["with"]["pattern"]), (name, download)

    runs = [[s["run"] for s in job["steps"] if "run" in s] for job in (shard, decide)]
    return Sharded(
        count=count,
        shard=lambda i: shlex.split(line.replace("${{ matrix.shard }}", str(i))),
        uploaded=upload["with"]["path"].rstrip("/"),
        downloaded=download["with"]["path"].rstrip("/"),
        decide=decide_command(runs[1]),
        runs_after_shards=decide.get("needs") in ("shard", ["shard"]),
        runs_when_a_shard_fails="always()" in str(decide.get("if", "")),
        install=(runs[0], runs[1]))


def gitlab() -> Sharded:
    config = load(GITLAB)
    jobs = {name: job for name, job in config.items()
            if isinstance(job, dict) and "script" in job and not name.startswith(".")}
    assert list(jobs) == ["rag-gate-shard", "rag-gate-decide"]
    shard, decide = jobs["rag-gate-shard"], jobs["rag-gate-decide"]
    templates = {name: config[name] for name in (shard.get("extends"), decide.get("extends"))
                 if name}

    def before(job: dict[str, Any]) -> list[str]:
        return job.get("before_script") or templates.get(job.get("extends"), {}).get(
            "before_script", [])

    count = shard["parallel"]
    assert isinstance(count, int) and count >= 2
    stages = config["stages"]
    assert stages.index(decide["stage"]) > stages.index(shard["stage"])
    line = shard_line(shard["script"])
    assert "$CI_NODE_INDEX" in line

    assert shard["artifacts"]["when"] == "always"  # a failed shard's results are kept too
    [uploaded] = shard["artifacts"]["paths"]
    assert "reports" not in shard["artifacts"]  # the test report is decide's, not each shard's
    needs = [n for n in decide["needs"] if isinstance(n, dict) and n["job"] == "rag-gate-shard"]
    rules = decide.get("rules", [])
    always = (decide.get("when") == "always" if not rules
              else all(rule.get("when") == "always" for rule in rules))
    return Sharded(
        count=count,
        shard=lambda i: shlex.split(line.replace("$CI_NODE_INDEX", str(i))
                                    .replace("$CI_NODE_TOTAL", str(count))),
        uploaded=uploaded.rstrip("/"),
        # needs' artifacts are extracted where their jobs wrote them, in the project folder
        downloaded=uploaded.rstrip("/") if needs and needs[0].get("artifacts") else "",
        decide=decide_command(decide["script"]),
        runs_after_shards=len(needs) == 1,
        runs_when_a_shard_fails=always,
        install=(before(shard), before(decide)))


EXAMPLES = [pytest.param(github, id="github"), pytest.param(gitlab, id="gitlab")]


@pytest.mark.parametrize("read", EXAMPLES)
def test_the_shards_and_the_decision_fit_together(read: Callable[[], Sharded]) -> None:
    example = read()
    for i in range(1, example.count + 1):
        argv = example.shard(i)
        assert argv[:1] == ["pytest"]
        assert has_option(argv, "-m", "rag_gate")
        assert has_option(argv, "-n", "auto")
        assert has_option(argv, "--ragate-cache", "replay")
        assert option(argv, "--ragate-shard") == f"{i}/{example.count}"  # N is the job count
        results = option(argv, "--ragate-results")
        assert Path(results).parent == Path(example.uploaded), results
        junit = option(argv, "--junitxml")
        assert Path(junit).parent == Path(example.uploaded), junit
        # decide's glob takes every shard's results file and nothing else that is uploaded
        pattern = shlex.split(example.decide)[2]
        assert fnmatch.fnmatch(results, pattern) and not fnmatch.fnmatch(junit, pattern)
    for name in ("--ragate-report", "--ragate-html", "--ragate-history", "--ragate-baseline"):
        assert not has_option(example.shard(1), name)  # a shard refuses them: decide's outputs

    assert example.downloaded == example.uploaded
    decide = shlex.split(example.decide)
    assert decide[:2] == ["ragate", "decide"]
    assert decide[2] == f"{example.downloaded}/*.jsonl"
    assert decide[3] == "--"
    pytest_args = decide[4:]
    assert has_option(pytest_args, "-m", "rag_gate")  # the goldsets the shards collected
    assert has_option(pytest_args, "--junitxml", "out/junit.xml")
    assert has_option(pytest_args, "--ragate-results", "out/results.jsonl")
    assert has_option(pytest_args, "--ragate-html", "out/report.html")
    assert pytest_args[-1] == "$BASELINE"
    assert example.runs_after_shards
    assert example.runs_when_a_shard_fails

    shard_install, decide_install = ("\n".join(script) for script in example.install)
    for command in INSTALL:  # as the single-job examples install
        assert command in shard_install and command in decide_install


def test_github_caches_fetches_and_publishes_as_the_single_job_example() -> None:
    single = load(GITHUB_SINGLE)
    single_steps = single["jobs"]["rag-gate"]["steps"]
    workflow = load(GITHUB)
    assert workflow["env"] == single["env"]
    assert workflow["permissions"] == single["permissions"]
    shard, decide = workflow["jobs"]["shard"]["steps"], workflow["jobs"]["decide"]["steps"]

    def uses(steps: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
        return [s for s in steps if str(s.get("uses", "")).partition("@")[0] == action]

    for action in ("actions/cache/restore", "actions/cache/save"):
        assert [s["with"] for s in uses(shard, action)] == [
            s["with"] for s in uses(single_steps, action)]
    assert uses(decide, "actions/cache/restore") == []  # decide asks nothing: no index
    [fetch] = [s for s in decide if "gh run download" in s.get("run", "")]
    [single_fetch] = [s for s in single_steps if "gh run download" in s.get("run", "")]
    assert {k: v for k, v in fetch.items() if k != "name"} == {
        k: v for k, v in single_fetch.items() if k != "name"}
    [out] = [s for s in uses(decide, "actions/upload-artifact") if s["with"]["path"] == "out/"]
    assert out["with"]["name"] == "ragate-out"  # what the baseline step downloads
    assert [s["with"] for s in uses(decide, "mikepenz/action-junit-report")] == [
        s["with"] for s in uses(single_steps, "mikepenz/action-junit-report")]
    gate = next(i for i, s in enumerate(decide) if "ragate decide" in s.get("run", ""))
    for step in decide[gate + 1:]:  # nothing after the decision is skipped by its failure
        assert "always()" in step.get("if", ""), step


def test_gitlab_caches_fetches_and_publishes_as_the_single_job_example() -> None:
    single = next(job for job in load(GITLAB_SINGLE).values()
                  if isinstance(job, dict) and "script" in job)
    config = load(GITLAB)
    template = config[config["rag-gate-shard"]["extends"]]
    assert template["variables"] == single["variables"]
    assert template["image"] == single["image"]
    shard, decide = config["rag-gate-shard"], config["rag-gate-decide"]
    assert shard["cache"] == single["cache"]
    assert shard["rules"] == single["rules"]
    assert [{k: v for k, v in r.items() if k != "when"} for r in decide["rules"]] == single["rules"]
    assert [s for s in decide["script"] if "curl" in s] == [
        s for s in single["script"] if "curl" in s]
    assert decide["artifacts"] == single["artifacts"]


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=lambda p: p.name)
def test_every_ragate_flag_and_ini_option_exists(path: Path,
                                                 real_options: tuple[set[str], set[str]],
                                                 ) -> None:
    text = path.read_text(encoding="utf-8")
    flags, inis = real_options
    assert {"--ragate-shard", "--ragate-decide"} <= flags
    assert FLAG.search(text) and INI.search(text), f"{path.name}: is the check blind?"
    assert unknown_names(text, flags, inis) == [], f"{path.name} names options that do not exist"


def test_the_guide_points_at_both_files() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.partition("## Sharding across runners")[2].partition("\n## ")[0]
    assert section, "docs/ci.md has no sharding section"
    for path in (GITHUB, GITLAB):
        assert f"examples/{path.name}" in section
    assert "--ragate-shard i/N" in section
    for example in (github(), gitlab()):  # the decision it shows is the files' decision
        assert example.decide.startswith("ragate decide shards/*.jsonl -- -m rag_gate")
        assert "ragate decide shards/*.jsonl -- -m rag_gate" in section


# --- the commands, run ----------------------------------------------------------------------


def full_verdicts() -> dict[str, Any]:
    """The project's fixture judge with a verdict for every question: a replay misses none,
    so a shard fails only if the example's command is wrong."""
    found = verdicts()
    for i in range(300):
        found["answers"].setdefault(f"q{i:03d}", {
            "statements": ["s1"], "supported": [True], "relevant_contexts": ["c0"],
            "generated_questions": [f"What was decided about q{i:03d}?"]})
    return found


def execute(argv: list[str], pytester: pytest.Pytester) -> subprocess.CompletedProcess[str]:
    """`pytest ...` or `ragate decide ...` as the job's shell would run it, in pytester's
    folder (in this process: `run_here`)."""
    assert argv[0] == "pytest" or argv[:2] == ["ragate", "decide"], argv
    return run_here(pytester, *argv[1:])


def shell_words(command: str, root: Path) -> list[str]:
    """What the shell hands the program: `$BASELINE` empty (no baseline yet), globs expanded."""
    words = []
    for word in shlex.split(command):
        if word == "$BASELINE":
            continue
        assert "$" not in word, word
        if "*" in word:
            expanded = sorted(glob.glob(word, root_dir=root))
            assert expanded, f"{word} matches nothing"
            words += expanded
        else:
            words.append(word)
    return words


@pytest.mark.parametrize("read, floors, status", [
    # a floor fails: the shards pass (they decide none), decide fails as one run does
    pytest.param(github, FLOORS.replace("citation_accuracy = 0.70", "citation_accuracy = 0.90"),
                 1, id="github-a-floor-fails"),
    pytest.param(gitlab, FLOORS, 0, id="gitlab-the-floors-hold"),
])
@pytest.mark.heavy  # runs the example's commands
def test_the_example_commands_decide_as_one_run(read: Callable[[], Sharded], floors: str,
                                                status: int, pytester: pytest.Pytester,
                                                ) -> None:
    example = read()
    root = make_project(pytester.path, floors)
    (root / "judge.json").write_text(json.dumps(full_verdicts()))
    with (root / "pytest.ini").open("a") as ini:  # as the examples ask the project to be set
        ini.write("testpaths = gs\nragate_judge_cache_dir = ragate-verdicts\n")

    # the judged run on the developer's machine, which fills the committed cache; also the
    # unsharded run the decision must agree with
    single = execute(["pytest", "-m", "rag_gate", "--junitxml=single.xml"], pytester)
    assert single.returncode == status, single.stdout[-3000:]
    assert (root / "ragate-verdicts").is_dir()

    (root / example.uploaded).mkdir()  # the jobs' `mkdir -p`
    for i in range(1, example.count + 1):
        shard = execute(example.shard(i) if i == 1 else one_process(example.shard(i)),
                        pytester)
        assert shard.returncode == 0, (i, shard.stdout[-3000:], shard.stderr[-2000:])
        assert (root / option(example.shard(i), "--ragate-results")).is_file()
        assert "floor[" not in shard.stdout.partition("short test summary")[2]

    (root / "out").mkdir()
    decided = execute(shell_words(example.decide, root), pytester)
    assert decided.returncode == single.returncode, (decided.stdout[-3000:],
                                                     decided.stderr[-2000:])
    junit = root / "out" / "junit.xml"
    assert junit.is_file() and (root / "out" / "report.html").is_file()
    assert (root / "out" / "results.jsonl").is_file()
    found = floors_of(junit)
    assert any("floor[" in name for name in found)
    expected = floors_of(root / "single.xml")
    assert {name: (outcome, props.get("value"), props.get("n"))
            for name, (outcome, props) in found.items()} == {
        name: (outcome, props.get("value"), props.get("n"))
        for name, (outcome, props) in expected.items()}

    # the decision is not vacuous: without one shard's file, the same command refuses
    (root / option(example.shard(example.count), "--ragate-results")).unlink()
    refused = execute(shell_words(example.decide, root), pytester)
    assert refused.returncode == 1
    assert f"shard {example.count}/{example.count} missing" in refused.stdout
    assert "ragate-decide" in (root / "out" / "junit.xml").read_text()


def one_process(argv: list[str]) -> list[str]:
    """A shard's command with `-n 0` for its `-n auto`: the first shard runs under xdist as
    written; the others, in one process, cost a third of it (the flag's value is read above,
    and shards under xdist are tests/test_sharding.py's)."""
    at = argv.index("-n")
    return [*argv[:at + 1], "0", *argv[at + 2:]]

