"""Where teams read the gate: GitHub's job summary, annotations and pull-request comment,
GitLab's metrics and Code Quality reports (outputs/findings.py, annotations.py, github.py,
gitlab.py, budget.py; modes/ci_views.py).

The pure functions first, over runs decided by the gate's own `decide`: the workflow commands
parsed back with a parser written from GitHub's grammar (not the module's), GitHub's limits
(10 errors and 10 warnings a step, the rest counted in one notice), the comment under 65,536
characters and the summary under 1 MiB at 10,000 questions, cut by priority and saying so,
and every text through the run's redaction. Then one gate run, with and without `-n 2`, as
GitHub Actions runs it, and one over an invalid goldset.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import Collected, Member, Population
from pytest_ragate.outputs.annotations import workflow_commands
from pytest_ragate.outputs.findings import Finding, Where, findings
from pytest_ragate.outputs.github import (
    COMMENT_LIMIT,
    MARKER,
    SUMMARY_LIMIT,
    GateView,
    append_summary,
    comment_body,
    job_summary,
)
from pytest_ragate.outputs.gitlab import code_quality, openmetrics
from pytest_ragate.redaction import Redactor
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.runs import STATUS_WORDS, status_why
from tests.conftest import TWELVE_EUROS, WORKERS, question_rows, run_pytester, write_goldset

ROUTE = "gs/ragate.toml"

# --- GitHub's grammar, read back -------------------------------------------------------------
# "Workflow commands for GitHub Actions": `::{command} {key}={value},{key}={value}::{message}`,
# a property's value escaped (% \r \n : ,), the message's too (% \r \n).

COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")
UNESCAPE = {"%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ",", "%25": "%"}


def unescape(text: str) -> str:
    return re.sub(r"%(?:0D|0A|3A|2C|25)", lambda m: UNESCAPE[m.group()], text)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """One workflow command: its name, properties and message, unescaped; an error when the
    line is not one (a raw `:` or `,` in a property, a raw newline in the message)."""
    found = COMMAND.match(line)
    assert found is not None, f"not a workflow command: {line!r}"
    assert "\n" not in line and "\r" not in line
    props: dict[str, str] = {}
    for pair in filter(None, (found.group("props") or "").split(",")):
        key, sep, value = pair.partition("=")
        assert sep and key in {"file", "line", "endLine", "col", "endColumn", "title"}, pair
        props[key] = unescape(value)
    return found.group("name"), props, unescape(found.group("data"))


def commands_in(text: str) -> list[tuple[str, dict[str, str], str]]:
    return [parse_command(line) for line in text.splitlines() if line.startswith("::")]


# --- runs decided by the gate's own rule -------------------------------------------------------


def record(i: int, *, right: bool = True, tags: dict[str, str] | None = None,
           answer: str = "an answer", status: str = "scored") -> QuestionRecord:
    return QuestionRecord(
        goldset="mini", route=ROUTE, question_id=f"q{i}", question=f"What about q{i}?",
        kind="single_doc", tags=tags or {}, index=i, status=status, abstained=False,
        must_abstain=False, abstention_correct=True, citations=1,
        citations_correct=int(right), evidence_spans=1, evidence_spans_found=1,
        evidence_ranks=[1], answer_text=answer, eval_version="1", contexts=1)


def population(records: list[QuestionRecord]) -> Population:
    return Population(route=ROUTE, goldset="mini", eval_version="1", anchors=[],
                      questions_file="gs/questions.jsonl", expected_file="gs/expected.jsonl",
                      questions=[Member(question_id=r.question_id, question=r.question or "",
                                        kind=r.kind, tags=r.tags, index=r.index,
                                        nodeid=f"{ROUTE}::{r.question_id}", sealed=False,
                                        must_abstain=False, evidence_spans=1, line=r.index + 1,
                                        expected_line=r.index + 3)
                                 for r in records])


def run_of(records: list[QuestionRecord], floors: list[Floor], gaps: list[Gap] = ()
           ) -> GoldsetRun:
    scored = [r for r in records if r.status == "scored"]
    return GoldsetRun(name="mini", eval_version="1", route=ROUTE, records=records,
                      population=len(records), gaps=list(gaps),
                      verdicts=[decide(f, "mini", scored) for f in floors])


def view_of(run: GoldsetRun, *, redact: Redactor | None = None, exit_status: int = 1,
            ) -> GateView:
    collected = Collected(floors=[], populations=[population(run.records)])
    shown = redact or Redactor()
    return GateView(runs=[run], findings=findings([run], collected, redact=shown),
                    exit_status=exit_status, where={ROUTE: Where(collected.populations[0])},
                    redact=shown)


def test_a_failing_floor_points_at_its_worst_questions_lines_with_their_answers() -> None:
    records = [record(i, right=i % 3 != 0, tags={"lang": "de" if i % 2 else "en"},
                      answer=f"answer {i} | with a pipe\nand a <b>tag</b>") for i in range(12)]
    run = run_of(records, [Floor("citation_accuracy", 0.9), Floor("abstention_accuracy", 0.5)])
    view = view_of(run)
    commands = commands_in("\n".join(workflow_commands(view.findings)))
    assert [c[1]["line"] for c in commands] == ["1", "4", "7", "10"]  # q0, q3, q6, q9
    name, props, message = commands[0]
    assert name == "error" and props["file"] == "gs/questions.jsonl"
    assert props["title"] == "ragate mini: q0 is behind floor[citation_accuracy]"
    assert "answer 0 | with a pipe and a <b>tag</b>" in message  # on one line, as written
    assert "expected answer: gs/expected.jsonl:3" in message
    summary = job_summary(view)
    assert summary.startswith("## ragate: ❌ FAIL (exit status 1)")
    worst = [line for line in summary.splitlines() if line.startswith("| `q")]
    assert len(worst) == 4
    for line in worst:  # an answer's pipe, tag and newline cannot break the table
        assert line.count(" | ") == 5, line
        assert "answer 3 \\| with a pipe and a \\<b>tag\\</b>" in worst[1]
    assert "| `gs/questions.jsonl:4` |" in worst[1] and "lang=de" in worst[1]
    assert "Other floors:" in summary  # abstention_accuracy held: after the failing ones


def test_annotations_keep_within_githubs_limits_and_count_the_rest() -> None:
    found = [Finding(level="error", path="gs/questions.jsonl", line=i, title=f"t{i}: a, b",
                     message=f"100% wrong\r\non line {i}", check="x", key=str(i))
             for i in range(1, 26)]
    found += [Finding(level="warning", path="gs/questions.jsonl", line=i, title="w",
                      message="m", check="y", key=str(i)) for i in range(13)]
    commands = commands_in("\n".join(workflow_commands(found)))
    names = [c[0] for c in commands]
    assert names.count("error") == 10 and names.count("warning") == 10
    assert names[-1] == "notice" and names.count("notice") == 1
    assert "18 more goldset lines not annotated (15 errors, 3 warnings)" in commands[-1][2]
    assert commands[0][1]["title"] == "t1: a, b"  # `:` and `,` survive as themselves
    assert commands[0][2] == "100% wrong\r\non line 1"
    assert [c[1]["line"] for c in commands[:10]] == [str(i) for i in range(1, 11)]  # first


def test_one_cause_of_many_missing_results_is_one_finding() -> None:
    records = [record(i) for i in range(40)]
    gaps = [Gap(member=f"q{i}", member_kind="single_doc", kind="errored",
                why="fixture 'ragate_sytem' not found") for i in range(40)]
    run = run_of(records, [Floor("citation_accuracy", 0.5)], gaps)
    found = findings([run], Collected(floors=[], populations=[population(records)]))
    missing = [f for f in found if f.check == "question-errored"]
    assert len(missing) == 1 and missing[0].line == 1
    assert missing[0].title == "ragate mini: q0 and 39 more errored"
    assert "40 questions of mini have no result (errored): q0, q1, q2, q3, q4 and 35 more" \
        in missing[0].message


def big_run(n: int) -> GoldsetRun:
    """`n` questions, a third cited wrong, every tenth errored with its own error (each a
    cause of its own), tagged with 200 topics and two languages, and twenty floors that fail."""
    records = [record(i, right=i % 3 != 0, answer="a long answer " * 30,
                      tags={"topic": f"t{i % 200:03d}", "lang": "de" if i % 2 else "en"})
               for i in range(n)]
    gaps = [Gap(member=f"q{i}", member_kind="single_doc", kind="errored",
                why=f"the system raised error #{i}") for i in range(0, n, 10)]
    floors = [Floor("citation_accuracy", 0.99, slice=("topic", f"t{k:03d}")) for k in range(20)]
    run = run_of(records, floors)
    run.gaps = gaps
    return run


@pytest.mark.parametrize("n", [100, 10_000])
def test_the_comment_and_the_summary_fit_githubs_limits_and_say_what_was_cut(n: int) -> None:
    run = big_run(n)
    view = view_of(run)
    comment = comment_body(view)
    assert comment.splitlines()[0] == MARKER
    assert len(comment) <= COMMENT_LIMIT
    failing = [v.floor.name for v in run.verdicts if v.outcome == "failed"]
    assert len(failing) == (20 if n == 10_000 else 7)
    assert all(f"| `{name}` | ≥ 0.99 |" in comment for name in failing)  # never cut
    summary = job_summary(view)
    assert len(summary.encode()) <= SUMMARY_LIMIT
    if n == 10_000:  # 1,000 causes of missing results: more than a comment holds
        assert re.search(r"\*… \d+ more lines not shown: cut to stay under GitHub's "
                         r"65,536-character limit of a comment", comment)
        assert "more lines not shown" not in summary  # a summary has room for them
    else:
        assert "not shown" not in comment


def test_the_summary_appends_within_what_the_step_has_left(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    earlier = "# an earlier command's summary\n" + "x" * (SUMMARY_LIMIT - 40_000)
    path.write_text(earlier)
    written = append_summary(path, view_of(big_run(10_000)))
    text = path.read_text()
    assert text.startswith(earlier) and written == len(text.encode()) - len(earlier.encode())
    assert len(text.encode()) <= SUMMARY_LIMIT
    assert "cut to stay under GitHub's 1 MiB limit of a step's job summary" in text


SEALED = "the refund window closes after thirty days"
PASSWORD = "hunter2-S3CRET"


def test_every_ci_view_passes_its_texts_through_the_runs_redaction() -> None:
    """Rows are redacted where they are made; these views redact what they show again, with
    the controller's Redactor: a secret in an answer, an error or a message shows in none."""
    leaky = f"{SEALED}, says http://alice:{PASSWORD}@judge.example/v1"
    records = [record(i, right=False, answer=leaky, tags={"lang": leaky[:12]})
               for i in range(6)]
    gaps = [Gap(member="q5", member_kind="single_doc", kind="errored", why=leaky)]
    run = run_of(records, [Floor("citation_accuracy", 0.9)], gaps)
    view = view_of(run, redact=Redactor(sealed=[SEALED], known=[PASSWORD]))
    shown = {"summary": job_summary(view), "comment": comment_body(view),
             "annotations": "\n".join(workflow_commands(view.findings)),
             "code quality": code_quality(view.findings), "metrics": openmetrics([run])}
    assert "[sealed]" in shown["summary"] and "***" in shown["annotations"]
    for name, text in shown.items():
        assert SEALED not in text and "thirty days" not in text, name
        assert PASSWORD not in text, name


# --- GitLab ----------------------------------------------------------------------------------

SAMPLE = re.compile(r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)\{(?P<labels>.*)\} (?P<value>\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\["\\n])*)"(?:,|$)')


def parse_openmetrics(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Samples of an OpenMetrics text (the gauges' subset), checked as the specification
    says: every family's TYPE before its samples, label values escaped, `# EOF` last."""
    lines = text.splitlines()
    assert lines[-1] == "# EOF" and text.endswith("\n")
    typed: set[str] = set()
    found = []
    for line in lines[:-1]:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind == "gauge" and name not in typed
            typed.add(name)
        elif not line.startswith("# HELP "):
            sample = SAMPLE.match(line)
            assert sample is not None, line
            assert sample.group("name") in typed, line
            labels = dict(LABEL.findall(sample.group("labels")))
            labels = {k: v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
                      for k, v in labels.items()}
            found.append((sample.group("name"), labels, float(sample.group("value"))))
    return found


def test_gitlab_reports_parse_and_point_at_the_goldset() -> None:
    records = [record(i, right=i % 2 == 0) for i in range(10)]
    run = run_of(records, [Floor("citation_accuracy", 0.9)])
    run.label = 'mini "v2"\\x'  # a label that must be escaped
    samples = parse_openmetrics(openmetrics([run]))
    values = {(name, labels.get("floor", "")): value for name, labels, value in samples}
    assert values[("pytest_ragate_floor_value", "floor[citation_accuracy]")] == 0.5
    assert values[("pytest_ragate_floor_held", "floor[citation_accuracy]")] == 0
    assert values[("pytest_ragate_passed", "")] == 0
    assert values[("pytest_ragate_questions", "")] == 10
    assert {labels["goldset"] for _, labels, _ in samples} == {'mini "v2"\\x'}
    issues = json.loads(code_quality(view_of(run).findings))
    assert {i["location"]["path"] for i in issues} == {"gs/questions.jsonl"}
    assert [i["location"]["lines"]["begin"] for i in issues] == [2, 4, 6, 8, 10]
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["severity"] for i in issues} == {"major"}


def test_a_run_where_nothing_ran_says_nothing_ran_never_pass() -> None:
    """Every question deselected (`-k` matching nothing: pytest exits 5), or the comment written
    before the exit status is known: the summary and the comment say NOTHING RAN, the status
    word of wording/runs, as the reports do; a failure elsewhere still says FAIL."""
    records = [record(i) for i in range(3)]
    gaps = [Gap(member=r.question_id, member_kind=r.kind, kind="deselected") for r in records]
    run = GoldsetRun(name="mini", eval_version="1", route=ROUTE, population=3, gaps=gaps,
                     verdicts=[decide(Floor("citation_accuracy", 0.9), "mini", [], gaps=gaps)])
    nothing = STATUS_WORDS["nothing_ran"]
    for exit_status in (pytest.ExitCode.NO_TESTS_COLLECTED, 0, None):
        view = view_of(run, exit_status=exit_status)
        assert view.status == "nothing_ran"
        summary, comment = job_summary(view), comment_body(view)
        assert summary.startswith(f"## ragate: ⚠️ {nothing}")
        assert comment.startswith(f"{MARKER}\n## ragate gate: ⚠️ {nothing}")
        for text in (summary, comment):
            assert STATUS_WORDS["passed"] not in text.replace(nothing, "")
            assert f"mini: {status_why(run)}" in text  # `3 of 3 questions deselected (-k or -m)`
    failed = view_of(run, exit_status=pytest.ExitCode.TESTS_FAILED)
    assert failed.status == "failed"
    assert job_summary(failed).startswith(f"## ragate: ❌ {STATUS_WORDS['failed']}")


# --- as GitHub Actions runs it -----------------------------------------------------------------

FAILING = "[floors]\ncitation_accuracy = 0.9\nabstention_accuracy = 0.99\n"


@WORKERS
def test_a_gate_on_github_actions_writes_its_summary_and_annotates_once(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    rows = question_rows()
    for i, row in enumerate(rows):
        row["tags"] = {"lang": "de" if i % 2 else "en"}
    write_goldset(pytester.path / "gs", floors=FAILING, questions=rows)
    pytester.makeconftest(TWELVE_EUROS)
    summary = pytester.path / "summary.md"
    summary.write_text("earlier step output\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_pytester(pytester, workers, "gs", "--ragate-comment=out/comment.md",
                          "--ragate-gitlab-metrics=out/metrics.txt",
                          "--ragate-codequality=out/cq.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    commands = commands_in(result.stdout.str())
    assert [(c[0], c[1]["file"], c[1]["line"]) for c in commands] == [
        ("error", "gs/questions.jsonl", "2"), ("error", "gs/questions.jsonl", "4")]
    assert commands[1][1]["title"] == ("ragate mini: q4 is behind floor[citation_accuracy], "
                                       "floor[abstention_accuracy]")
    text = summary.read_text()
    assert text.startswith("earlier step output\n## ragate: ❌ FAIL (exit status 1)")
    assert text.count("## ragate:") == 1  # once, by the controller
    assert "| `q4` | `floor[abstention_accuracy]` | q4 answered, should abstain | answer to " \
           "q4: twelve euros | lang=de | `gs/questions.jsonl:4` |" in text
    comment = (pytester.path / "out" / "comment.md").read_text()
    assert comment.startswith(MARKER + "\n## ragate gate: ❌ FAIL")
    assert parse_openmetrics((pytester.path / "out" / "metrics.txt").read_text())
    issues = json.loads((pytester.path / "out" / "cq.json").read_text())
    assert [i["location"]["lines"]["begin"] for i in issues] == [2, 4]


@WORKERS
def test_a_gate_that_ran_nothing_on_github_actions_says_so(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """`-k` matching no question: exit 5, and the job summary and the comment say NOTHING
    RAN (they said PASS: no floor failed), as the Markdown report does."""
    write_goldset(pytester.path / "gs", floors=FAILING)
    pytester.makeconftest(TWELVE_EUROS)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_pytester(pytester, workers, "gs", "-k", "nomatch",
                          "--ragate-comment=out/comment.md", "--ragate-report=out/report.md")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    nothing = STATUS_WORDS["nothing_ran"]
    assert summary.read_text().startswith(f"## ragate: ⚠️ {nothing} (exit status 5)")
    comment = (pytester.path / "out" / "comment.md").read_text()
    assert comment.startswith(f"{MARKER}\n## ragate gate: ⚠️ {nothing}")
    assert f"Run: **{nothing}**" in (pytester.path / "out" / "report.md").read_text()
    for text in (summary.read_text(), comment):
        assert STATUS_WORDS["passed"] not in text.replace(nothing, "")


@WORKERS
def test_an_invalid_goldsets_lines_are_annotated_from_any_worker(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    rows = question_rows()
    rows[2]["kind"] = 7
    write_goldset(pytester.path / "gs", questions=rows)
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = run_pytester(pytester, workers, "gs")
    assert result.ret != 0
    assert commands_in(result.stdout.str()) == [
        ("error", {"file": "gs/questions.jsonl", "line": "3",
                   "title": "ragate: invalid goldset line [q3]: kind"},
         "kind: Input should be a valid string")]
    assert "1 invalid goldset line: collection refused the goldset" in summary.read_text()


def test_off_and_a_plain_run_show_nothing(pytester: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragate_github = off` on GitHub, and a run without goldsets: no summary, no command."""
    write_goldset(pytester.path / "gs", floors=FAILING)
    pytester.makeconftest(TWELVE_EUROS)
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    summary = pytester.path / "summary.md"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    off = pytester.runpytest("gs", "-o", "ragate_github=off", "-p", "no:cacheprovider")
    plain = pytester.runpytest("test_plain.py", "-p", "no:cacheprovider")
    assert off.ret == 1 and plain.ret == 0
    assert not summary.exists()
    printed = (off.stdout.str() + plain.stdout.str()).splitlines()
    assert not [line for line in printed if line.startswith("::")]


@pytest.mark.parametrize("flag", ["--ragate-comment", "--ragate-gitlab-metrics",
                                  "--ragate-codequality", "GITHUB_STEP_SUMMARY"])
def test_no_ci_output_overwrites_a_goldset_file(pytester: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch,
                                                flag: str) -> None:
    """Every new output goes through the check every output does: one that names a goldset
    file is a usage error before anything runs, and the file is left as it was."""
    write_goldset(pytester.path / "gs", floors=FAILING)
    pytester.makeconftest(TWELVE_EUROS)
    target = pytester.path / "gs" / "questions.jsonl"
    before = target.read_bytes()
    args = ["gs", "-p", "no:cacheprovider"]
    if flag == "GITHUB_STEP_SUMMARY":
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    else:
        args.append(f"{flag}={target}")
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "an output never overwrites an input" in result.stderr.str()
    assert target.read_bytes() == before


def test_anchors_that_do_not_hold_and_judge_failures_are_found_at_their_lines() -> None:
    from pytest_ragate.scoring.records import AnchorOutcome

    records = [record(i) for i in range(3)]
    records[1] = records[1].model_copy(update={"judge_failures": {
        "faithfulness": "stale: stale fixture verdict: v.json judged another answer"}})
    run = run_of(records, [])
    run.anchors = [AnchorOutcome(goldset="mini", anchor_id=a, kind="retrieval_miss",
                                 claim="the budget", path="/nowhere/gs/anchors.jsonl", line=n,
                                 outcome=outcome, error=error)
                   for a, n, outcome, error in (("a1", 1, "passed", None),
                                                ("a2", 2, "failed", None),
                                                ("a3", 3, "skipped", "its retriever raised"))]
    found = findings([run], Collected(floors=[], populations=[population(records)]))
    assert [(f.level, f.path.endswith("anchors.jsonl"), f.line, f.title) for f in found] == [
        ("error", True, 2, "ragate mini: anchor[a2] does not hold"),
        ("error", True, 3, "ragate mini: anchor[a3] could not be checked"),
        ("warning", False, 2, "ragate mini: judge failure (stale) on q1")]


def test_every_run_status_has_its_sign_and_reason_in_the_summary() -> None:
    """PARTIAL and FLOOR NOT DECIDED (saved runs' statuses) reach the job summary and the
    comment as the reports show them, with why; a status without a sign raised KeyError."""
    from typing import get_args

    from pytest_ragate.decision.goldset_run import RunStatus
    from pytest_ragate.outputs.github import SIGNS

    assert set(SIGNS) == set(get_args(RunStatus))
    records = [record(i) for i in range(3)]
    gaps = [Gap(member="q9", member_kind="single_doc", kind="deselected")]
    run = GoldsetRun(name="mini", eval_version="1", route=ROUTE, population=4, records=records,
                     gaps=gaps, verdicts=[decide(Floor("citation_accuracy", 0.0), "mini",
                                                 records, gaps=gaps)])
    view = view_of(run, exit_status=0)
    assert view.status == "partial", view.status
    for text in (job_summary(view), comment_body(view)):
        assert STATUS_WORDS["partial"] in text and status_why(run) in text, text
