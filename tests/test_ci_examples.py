"""The CI examples users copy (`examples/*.yml`) and their guide (`docs/ci.md`) stay true.

Every example is valid against its CI system's own schema, checked offline
(`check-jsonschema --builtin-schema vendor.github-workflows` and `vendor.gitlab-ci`); each
runs the gate with the agreed command; every `--ragate-*` flag and `ragate_*` ini option they
or the guide name is one the plugin really defines; the cache paths they keep are where the
plugin really writes; the report is published when the gate fails; the GitHub gate runs with
read-only permissions and the comment is posted by a `workflow_run` workflow that never runs
the pull request's code; GitLab's job hands its metrics and Code Quality reports to GitLab.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
GITHUB = ROOT / "examples" / "github-actions.yml"
GITLAB = ROOT / "examples" / "gitlab-ci.yml"
COMMENT = ROOT / "examples" / "github-actions-comment.yml"
GUIDE = ROOT / "docs" / "ci.md"
ENV = {"HF_HUB_OFFLINE": "1", "RAGAS_DO_NOT_TRACK": "true", "ANONYMIZED_TELEMETRY": "False"}

FLAG = re.compile(r"--ragate-[a-z0-9]+(?:-[a-z0-9]+)*")
INI = re.compile(r"\bragate_[a-z0-9]+(?:_[a-z0-9]+)*\b")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), path
    return data


def github_steps() -> list[dict[str, Any]]:
    jobs = load(GITHUB)["jobs"]
    assert list(jobs) == ["rag-gate"]
    return jobs["rag-gate"]["steps"]


def gitlab_job() -> dict[str, Any]:
    jobs = {name: job for name, job in load(GITLAB).items()
            if isinstance(job, dict) and "script" in job}
    assert list(jobs) == ["rag-gate"]
    return jobs["rag-gate"]


def gate_command(scripts: list[str]) -> list[str]:
    """The one `pytest -m rag_gate` command among shell scripts, continuations joined."""
    commands = [line for script in scripts
                for line in script.replace("\\\n", " ").splitlines()
                if line.strip().startswith("pytest ") and "rag_gate" in line]
    assert len(commands) == 1, commands
    return shlex.split(commands[0])


def github_command() -> list[str]:
    return gate_command([step["run"] for step in github_steps() if "run" in step])


def gitlab_command() -> list[str]:
    job = gitlab_job()
    return gate_command([*job.get("before_script", []), *job["script"]])


def has_option(argv: list[str], name: str, value: str | None = None) -> bool:
    """`--name value`, `--name=value`, or (value None) the option with any value."""
    for i, arg in enumerate(argv):
        if arg == name and (value is None or argv[i + 1:i + 2] == [value]):
            return True
        if arg.startswith(name + "=") and value in (None, arg.partition("=")[2]):
            return True
    return False


def unknown_names(text: str, flags: set[str], inis: set[str]) -> list[str]:
    """The flags and ini names `text` names that do not exist; the keys of a results file's
    own lines (`ragate_trailer`, quoted from a refusal) are names too, not options."""
    from pytest_ragate.items.keys import ANCHOR_ATTR
    from pytest_ragate.outputs.results import HEADER_KEY, TRAILER_KEY

    known = inis | {HEADER_KEY, TRAILER_KEY, ANCHOR_ATTR}
    return sorted({*(set(FLAG.findall(text)) - flags), *(set(INI.findall(text)) - known)})


@pytest.mark.parametrize("command", [github_command, gitlab_command],
                         ids=["github", "gitlab"])
def test_the_gate_command(command: Any) -> None:
    argv = command()
    assert argv[:1] == ["pytest"]
    assert has_option(argv, "-m", "rag_gate")
    assert has_option(argv, "-n", "auto")
    assert has_option(argv, "--junitxml", "out/junit.xml")
    assert has_option(argv, "--ragate-cache", "replay")
    assert has_option(argv, "--ragate-html", "out/report.html")
    assert has_option(argv, "--ragate-results", "out/results.jsonl")
    assert argv[-1] == "$BASELINE"  # `--ragate-baseline PATH` only when the download worked


SCHEMAS = {"vendor.github-workflows": sorted((ROOT / "examples").glob("github-*.yml")),
           "vendor.gitlab-ci": sorted((ROOT / "examples").glob("gitlab-*.yml"))}


def check_jsonschema(*args: str) -> tuple[int, str]:
    """check-jsonschema's command, in this process (its click command), offline."""
    pytest.importorskip("check_jsonschema")
    from check_jsonschema.cli.main_command import main as command
    from click.testing import CliRunner

    done = CliRunner().invoke(command, list(args))
    return done.exit_code, done.output


@pytest.mark.parametrize("schema", sorted(SCHEMAS))
def test_every_example_is_valid_against_its_ci_systems_schema(schema: str) -> None:
    """The schemas check-jsonschema carries (SchemaStore's), offline: a misspelt key, a step
    with both `uses` and `run`, a trigger GitHub does not have, fail here, not in CI."""
    files = SCHEMAS[schema]
    assert len(files) >= 2, files
    status, said = check_jsonschema("--builtin-schema", schema, *map(str, files))
    assert status == 0, said


def test_the_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(GITHUB.read_text(encoding="utf-8").replace("runs-on:", "run-on:"))
    status, said = check_jsonschema("--builtin-schema", "vendor.github-workflows", str(broken))
    assert status == 1 and "run-on" in said, said


@pytest.mark.parametrize("path", [GITHUB, GITLAB, GUIDE], ids=lambda p: p.name)
def test_every_ragate_flag_and_ini_option_exists(path: Path,
                                                 real_options: tuple[set[str], set[str]],
                                                 ) -> None:
    text = path.read_text(encoding="utf-8")
    flags, inis = real_options
    assert FLAG.search(text), f"{path.name} names no --ragate-* flag: is the check blind?"
    assert unknown_names(text, flags, inis) == [], f"{path.name} names options that do not exist"


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
        ROOT / "examples" / "handbook" / "README.md"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_flag_ini_option_and_fixture_the_docs_name_exists(
        path: Path, pytester: pytest.Pytester, real_options: tuple[set[str], set[str]],
        ) -> None:
    """A page that names `--ragate-x`, `ragate_x` or a `ragate_x` fixture names a real one."""
    result = pytester.runpytest("--fixtures")
    fixtures = {m.group(1) for line in result.outlines
                if (m := re.match(r"(ragate_\w+)(?: \[.*\])? -- ", line))}
    assert {"ragate_system", "ragate_retriever", "ragate_judge"} <= fixtures
    flags, inis = real_options
    assert unknown_names(path.read_text(encoding="utf-8"), flags, inis | fixtures) == []


def test_the_option_check_catches_an_invented_flag(real_options: tuple[set[str], set[str]],
                                                   ) -> None:
    flags, inis = real_options
    text = "pytest --ragate-cache replay --ragate-cache-dir x -o ragate_min_n=3 -o ragate_cis=1"
    assert unknown_names(text, flags, inis) == ["--ragate-cache-dir", "ragate_cis"]


INDEX_DIR = re.compile(r'ragate_index_dir = "([^"]+)"')


def test_the_cached_folder_is_the_users_index_folder_and_holds_ragates(
        pytester: pytest.Pytester) -> None:
    """Both examples cache one folder, named once in their variables (RAG_INDEX_DIR): the
    user's system's index, with ragate's own (`ragate_index_dir`, as the files and the guide
    set it) inside, where the plugin really writes; never only pytest's cache (ragate's
    built-in index alone). The judge cache is the committed folder the plugin reads."""
    folder = load(GITHUB)["env"]["RAG_INDEX_DIR"]
    assert load(GITLAB)["rag-gate"]["variables"]["RAG_INDEX_DIR"] == folder
    [ragates] = {m for path in (GITHUB, GITLAB, GUIDE)
                 for m in INDEX_DIR.findall(path.read_text(encoding="utf-8"))}
    pytester.makepyfile(test_where="""
        from pathlib import Path
        from pytest_ragate.builtin_system.builtin import pipeline
        from pytest_ragate.items.questions import question_run

        def test_where(pytestconfig):
            root = pytestconfig.rootpath
            judge = question_run(pytestconfig).judge_runner().cache  # ragate_judge_cache_dir
            print("INDEX", Path(pipeline(pytestconfig).cache_dir()).resolve().relative_to(root))
            print("JUDGE", Path(judge.directory).relative_to(root))
    """)
    result = pytester.runpytest("-s", "test_where.py", "-o", f"ragate_index_dir={ragates}",
                                "-o", "ragate_judge_cache_dir=ragate-verdicts")
    assert result.ret == 0, result.stdout.str()
    text = result.stdout.str()
    index, judge = (Path(re.search(rf"{name} (\S+)", text).group(1))  # type: ignore[union-attr]
                    for name in ("INDEX", "JUDGE"))
    assert index == Path(ragates) and Path(folder) in index.parents
    cached = [step["with"]["path"] for step in github_steps()
              if str(step.get("uses", "")).startswith("actions/cache/")]
    assert cached == ["${{ env.RAG_INDEX_DIR }}"] * 2  # restore, then save
    assert [c["paths"] for c in gitlab_job()["cache"]
            if "rag-index" in str(c["key"])] == [["$RAG_INDEX_DIR/"]]
    for path in (GITHUB, GITLAB, GUIDE):
        text = path.read_text(encoding="utf-8")
        assert f"git add {judge}" in text, path.name
        assert f'ragate_judge_cache_dir = "{judge}"' in text, path.name
        assert path == GUIDE or ".pytest_cache" not in text, path.name


def test_github_installs_runs_and_publishes_even_when_the_gate_fails() -> None:
    workflow = load(GITHUB)
    assert workflow["env"] == {**ENV, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
                               "RAG_INDEX_DIR": ".rag-index"}
    steps = github_steps()
    python = next(s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python"))
    assert python["with"]["python-version"] == "3.11"
    assert python["with"]["cache"] == "pip"
    run = "\n".join(s.get("run", "") for s in steps)
    assert "pip install -r requirements.txt" in run  # the user's system, then a light extra
    assert "pip install 'pytest-ragate[html]'" in run and "[all]" not in run

    gate = next(i for i, s in enumerate(steps) if "rag_gate" in s.get("run", ""))
    after = steps[gate + 1:]
    uses = {str(s.get("uses", "")).partition("@")[0]: s for s in after}
    upload = uses["actions/upload-artifact"]
    assert upload["with"]["path"] == "out/"
    for step in after:  # nothing after the gate is skipped by its failure
        assert "always()" in step.get("if", ""), step
    fetch = next(s for s in steps if "gh run download" in s.get("run", ""))
    assert fetch["continue-on-error"] is True  # no baseline yet must not fail the job
    assert f"--name {upload['with']['name']}" in fetch["run"]


def test_the_github_gate_runs_read_only_and_leaves_its_comment_for_the_comment_workflow(
        ) -> None:
    workflow = load(GITHUB)
    assert set(workflow["permissions"].values()) == {"read"}  # forks get no more anyway
    argv = github_command()
    assert has_option(argv, "--ragate-comment", "out/comment.md")  # inside the artifact
    [named] = [s for s in github_steps() if "out/pr-number" in s.get("run", "")]
    assert named["env"]["PR_NUMBER"] == "${{ github.event.pull_request.number }}"
    assert "github.event_name == 'pull_request'" in named["if"]
    assert "${{" not in named["run"]  # the number reaches the shell as data, not as code


def test_the_comment_workflow_posts_from_the_artifact_and_never_runs_the_forks_code() -> None:
    """A `workflow_run` of the gate, with the write permission the gate lacks: it downloads
    the gate run's artifact, checks the number it names, and updates the comment that starts
    with the marker `outputs/github.py` writes (or posts one); it checks nothing out and runs
    no program the pull request could have changed."""
    from pytest_ragate.outputs.github import MARKER

    workflow = load(COMMENT)
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on == {"workflow_run": {"workflows": [load(GITHUB)["name"]],
                                   "types": ["completed"]}}
    assert workflow["permissions"] == {"actions": "read", "pull-requests": "write"}
    [job] = workflow["jobs"].values()
    assert job["if"] == "github.event.workflow_run.event == 'pull_request'"
    steps = job["steps"]
    actions = [str(s.get("uses", "")).partition("@")[0] for s in steps if "uses" in s]
    assert actions == ["actions/download-artifact"]  # no checkout
    download = steps[0]["with"]
    upload = next(s for s in github_steps() if "upload-artifact" in str(s.get("uses", "")))
    assert download["name"] == upload["with"]["name"]
    assert download["run-id"] == "${{ github.event.workflow_run.id }}"
    script = "\n".join(s.get("run", "") for s in steps)
    code = re.sub(r"'[^']*'|\"[^\"]*\"", "''", script)  # the shell's words, not its strings
    assert not re.search(r"\b(python3?|pip|pytest|ragate|npm|make|bash|sh|source)\b|\./",
                         code), code
    assert "*[!0-9]*" in script  # the artifact's number is checked to be one
    assert ".head.sha" in script and "HEAD_SHA" in script  # ... and to be the gate's PR
    assert f'startswith("{MARKER}")' in script
    assert 'select(.user.login == "github-actions[bot]")' in script  # only its own comment
    assert "--method PATCH" in script and "--method POST" in script
    assert "-F body=@gate/comment.md" in script


def test_gitlab_installs_runs_and_publishes_even_when_the_gate_fails() -> None:
    job = gitlab_job()
    assert job["image"].startswith("python:3.11")
    assert {k: job["variables"][k] for k in ENV} == ENV
    assert job["before_script"] == [
        "pip install -r requirements.txt", "pip install 'pytest-ragate[html]'"]
    assert any(c["paths"] == [".cache/pip/"] for c in job["cache"])
    assert job["variables"]["PIP_CACHE_DIR"] == "$CI_PROJECT_DIR/.cache/pip"
    artifacts = job["artifacts"]
    assert artifacts["when"] == "always"
    assert artifacts["paths"] == ["out/"]
    assert artifacts["reports"]["junit"] == "out/junit.xml"
    argv = gitlab_command()
    assert has_option(argv, "--ragate-gitlab-metrics", artifacts["reports"]["metrics"])
    assert has_option(argv, "--ragate-codequality", artifacts["reports"]["codequality"])
    assert artifacts["reports"]["metrics"].startswith("out/")
    assert artifacts["expose_as"]
    script = "\n".join(job["script"])
    assert "raw/out/results.jsonl" in script and "|| rm -f baseline/results.jsonl" in script
