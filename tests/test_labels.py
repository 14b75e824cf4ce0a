"""Human labels through pytest: a judge its labels do not vouch for cannot pass a judged
floor, a judge that fails on labelled questions cannot escape agreement, a biased judge
cannot pass a floor on the prediction-powered estimate, malformed labels stop collection.
Each run with and without `-n 2`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError
from tests.conftest import (
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    expect,
    jsonl,
    junit_cases,
    run_pytester,
    write_goldset,
)
from tests.test_fail_closed import collection_failed, planned

N = 12  # questions q00..q11, every one answered with the right citation


def write_labelled(root: Path, floors: str, labels: list[dict[str, Any]] | str,
                   judge: str = '[judge]\nlabels = "labels.jsonl"\n') -> None:
    write_goldset(root, floors=f"{judge}\n{floors}", questions=[
        {"question_id": f"q{i:02d}", "kind": "single_doc", "question": f"What about "
         f"q{i:02d}?"} for i in range(N)], expected=[
        {"question_id": f"q{i:02d}", "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(N)])
    (root / "labels.jsonl").write_text(labels if isinstance(labels, str) else jsonl(labels))


def judge_file(path: Path, supported: dict[str, list[bool]]) -> None:
    """Fixture verdicts: faithfulness is the share of supported statements; the other two
    metrics get a verdict too (context c... none relevant, no generated questions)."""
    path.write_text(json.dumps({"judge_id": "sim", "answers": {
        q: {"statements": [f"s{i}" for i in range(len(s))], "supported": s}
        for q, s in supported.items()}}))


def project(pytester: pytest.Pytester, floors: str, labels: list[dict[str, Any]] | str,
            supported: dict[str, list[bool]], judge: str = '[judge]\nlabels = "labels.jsonl"\n',
            ) -> None:
    write_labelled(pytester.path / "gs", floors, labels, judge)
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    judge_file(pytester.path / "judge.json", supported)


def cases_of(pytester: pytest.Pytester) -> dict[str, dict[str, Any]]:
    """JUnit test cases by their name alone (`floor[faithfulness]`)."""
    return {name.rpartition("::")[2]: case
            for name, case in junit_cases(pytester.path / "j.xml").items()}


def judged(pytester: pytest.Pytester, workers: str, *args: str) -> pytest.RunResult:
    return run_pytester(pytester, workers, "gs", "--ragate-judge=fixture:judge.json",
                        "--ragate-cache=off", "--junitxml=j.xml", "--ragate-report=r.md", *args)


ALL_SUPPORTED = {f"q{i:02d}": [True, True] for i in range(N)}
# people found half the answers unfaithful; the judge calls every one faithful
HALF_BAD = [{"question_id": f"q{i:02d}", "metric": "faithfulness", "verdict": i % 2}
            for i in range(N)]
AGREES = [{"question_id": f"q{i:02d}", "metric": "faithfulness", "verdict": 1}
          for i in range(N)]
FLOORS = "[floors]\nfaithfulness = 0.8\njudge_agreement = 0.6\n"


@WORKERS
def test_a_judge_that_disagrees_with_its_labels_cannot_pass_a_judged_floor(
        pytester: pytest.Pytester, workers: str) -> None:
    # its own faithfulness is 1.00, far above the floor; kappa with the labels is 0
    project(pytester, FLOORS, HALF_BAD, ALL_SUPPORTED)
    result = judged(pytester, workers)
    expect(result,
           "FAILED gs/ragate.toml::floor[faithfulness] - judge not calibrated: kappa 0.00 "
           "* < 0.60 on 12 labelled questions (faithfulness) · faithfulness 1.00 ≥ floor 0.80*",
           "FAILED gs/ragate.toml::floor[judge_agreement] - judge not calibrated: *",
           "FAILED gs/ragate.toml::floor[judge_coverage] - judge not calibrated: *",
           "*judge agreement with the labels, faithfulness: kappa 0.00 * on 12 labelled "
           "questions*")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = cases_of(pytester)
    assert cases["floor[judge_agreement]"]["outcome"] == "failure"
    assert cases["floor[faithfulness]"]["outcome"] == "failure"
    report = (pytester.path / "r.md").read_text()
    assert "FAIL" in report and "faithfulness: kappa 0.00" in report


@WORKERS
def test_a_judge_its_labels_vouch_for_passes(pytester: pytest.Pytester, workers: str) -> None:
    supported = {q: [bool(i % 2)] * 2 for i, q in enumerate(ALL_SUPPORTED)}
    project(pytester, "[floors]\nfaithfulness = 0.4\njudge_agreement = 0.6\n", HALF_BAD,
            supported)
    result = judged(pytester, workers, "--ragate-history=h.jsonl")
    expect(result, "PASSED gs/ragate.toml::floor[faithfulness]",
           "PASSED gs/ragate.toml::floor[judge_agreement]",
           "*judge agreement with the labels, faithfulness: kappa 1.00 * on 12 labelled*")
    assert result.ret == pytest.ExitCode.OK
    cases = cases_of(pytester)
    props = cases["floor[judge_agreement]"]["props"]
    assert props["value"] == "1.0" and props["n"] == "12"
    # each question's own test case carries its judged score, however late it came
    assert {q: cases[q]["props"]["faithfulness"] for q in ("q00", "q01")} == {  # type: ignore[index]
        "q00": "0.0", "q01": "1.0"}
    line = json.loads((pytester.path / "h.jsonl").read_text())
    # every resample agrees, so the interval is not a point: kappa's lower bound takes the
    # agreement rate at its rule-of-three bound, 0.05^(1/12), with balanced marginals
    low = (0.05 ** (1 / 12) - 0.5) / 0.5
    assert line["agreement"] == {"faithfulness": {"statistic": "kappa", "value": 1.0,
                                                  "interval": [pytest.approx(low), 1.0],
                                                  "n": 12, "missing": []}}
    assert ("judge agreement with the labels, faithfulness: kappa 1.00 [0.56, 1.00] on 12 "
            "labelled questions") in (pytester.path / "r.md").read_text()


@WORKERS
def test_without_a_judge_judged_floors_fail_unless_named_optional(
        pytester: pytest.Pytester, workers: str) -> None:
    """A judged floor without a judge is not decided: it fails, naming the flag; one whose
    metric the ini file names optional is skipped (judge_agreement with it, once every judged
    metric is), unless --ragate-require-judge overrules the opt-out."""
    project(pytester, FLOORS, HALF_BAD, ALL_SUPPORTED)
    result = run_pytester(pytester, workers, "gs")
    expect(result, "FAILED * faithfulness needs a judge: none configured (--ragate-judge): a "
           "judged floor is not decided without one; give --ragate-judge*",
           "FAILED * judge_agreement needs a judge: none configured*")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    optional = ("-o", "ragate_judge_optional=faithfulness")
    if workers == "0":  # a skip the settings decide, reported alike under xdist
        skipped = run_pytester(pytester, workers, "gs", *optional, "--ragate-report=r.md")
        expect(skipped, "SKIPPED * faithfulness needs a judge: none configured "
               "(--ragate-judge); skipped: its metric is named optional*",
               "SKIPPED * judge_agreement needs a judge: none configured*")
        assert skipped.ret == pytest.ExitCode.OK
        assert "judge agreement" not in (pytester.path / "r.md").read_text()
    required = run_pytester(pytester, workers, "gs", *optional, "--ragate-require-judge")
    expect(required, "FAILED gs/ragate.toml::floor[judge_agreement] - judge_agreement needs a "
           "judge: none configured (--ragate-judge): not decided, though named optional, as "
           "--ragate-require-judge is set")
    assert required.ret == pytest.ExitCode.TESTS_FAILED


@WORKERS
def test_a_judge_that_fails_on_labelled_questions_cannot_escape_agreement(
        pytester: pytest.Pytester, workers: str) -> None:
    # the judge agrees on every question it answers, and has no verdict for q01 and q03,
    # the two labelled questions people found unfaithful
    labels = [*AGREES[:1], {"question_id": "q01", "metric": "faithfulness", "verdict": 0},
              *AGREES[2:3], {"question_id": "q03", "metric": "faithfulness", "verdict": 0}]
    supported = {q: [True] for q in ALL_SUPPORTED if q not in ("q01", "q03")}
    project(pytester, "[floors]\nfaithfulness = 0.8\njudge_agreement = 0.6\n"
            "judge_coverage = 0.5\n", labels, supported)
    result = judged(pytester, workers)
    expect(result, "FAILED gs/ragate.toml::floor[judge_agreement] - judge not calibrated: "
           "faithfulness: kappa undefined on 2 labelled questions; 2 labelled without a "
           "verdict: q01 (judge failure: missing: *); q03 (judge failure: missing: *",
           "FAILED gs/ragate.toml::floor[faithfulness] - judge not calibrated: *")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


@WORKERS
def test_a_biased_judge_cannot_pass_on_the_ppi_estimate(pytester: pytest.Pytester,
                                                        workers: str) -> None:
    # the judge finds 3 or 4 of 4 statements supported; people, on the 10 they labelled
    # (ppi.MIN_LABELS), one fewer, or two fewer on q01, q05 and q09
    shares = [4 if i % 3 else 3 for i in range(N)]
    supported = {f"q{i:02d}": [True] * k + [False] * (4 - k) for i, k in enumerate(shares)}
    labels = [{"question_id": f"q{i:02d}", "metric": "faithfulness",
               "score": (shares[i] - (2 if i % 4 == 1 else 1)) / 4} for i in range(10)]
    floors = "[floors]\nfaithfulness = 0.8\n"
    project(pytester, floors, labels, supported)
    if workers == "0":  # the contrast: the judge's own mean passes (one process is enough)
        plain = judged(pytester, workers)
        expect(plain, "PASSED gs/ragate.toml::floor[faithfulness]")  # judge mean 0.92 ≥ 0.80
    project(pytester, floors, labels, supported,
            judge='[judge]\nlabels = "labels.jsonl"\nestimate = "ppi"\n')
    result = judged(pytester, workers)
    expect(result, "FAILED gs/ragate.toml::floor[faithfulness] - faithfulness 0.59 (ppi) < "
           "floor 0.80 · over 12/12 judged, 10 labelled · ppi: judge 0.92 − bias +0.33 on "
           "the labelled · 95% CI [0.49, 0.69] (ppi, normal approximation)*",
           "*judged floors decided on the ppi estimate*: faithfulness*")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "0.59 (ppi)" in (pytester.path / "r.md").read_text()


@WORKERS
def test_a_label_written_for_another_answer_is_stale_not_agreement(
        pytester: pytest.Pytester, workers: str) -> None:
    """Labels stamped from the run people read (`ragate stamp --labels`) hold the judge to
    them; once the system answers differently, the person's word on the old answer is not
    compared with the judge's on the new one: the label is stale, agreement and the ppi
    estimate are not decided, and every judged floor fails."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    supported = {q: [bool(i % 2)] * 2 for i, q in enumerate(ALL_SUPPORTED)}
    floors = "[floors]\nfaithfulness = 0.4\njudge_agreement = 0.6\n"
    project(pytester, floors, HALF_BAD, supported,
            judge='[judge]\nlabels = "labels.jsonl"\nestimate = "ppi"\n')
    first = judged(pytester, workers, "--ragate-results=res.jsonl")
    assert first.ret == pytest.ExitCode.OK
    labels = pytester.path / "gs" / "labels.jsonl"
    stamp = CliRunner().invoke(main, ["stamp", str(pytester.path / "res.jsonl"),
                                      "--labels", str(labels)])
    assert stamp.exit_code == 0, stamp.output
    assert f"stamped {N} labels in {labels}" in stamp.output
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    assert all(len(row["answer_sha256"]) == 64 for row in rows)
    assert [{k: v for k, v in row.items() if k != "answer_sha256"} for row in rows] == HALF_BAD

    if workers == "0":  # the answers the labels were written for: calibrated (the contrast)
        same = judged(pytester, workers)
        expect(same, "PASSED gs/ragate.toml::floor[judge_agreement]",
               "PASSED gs/ragate.toml::floor[faithfulness]")
        assert same.ret == pytest.ExitCode.OK

    rows[3]["answer_sha256"] = "0" * 64  # q03 was labelled for an answer no longer given
    labels.write_text(jsonl(rows))
    stale = judged(pytester, workers)
    expect(stale, "FAILED gs/ragate.toml::floor[judge_agreement] - judge not calibrated: "
           "faithfulness: kappa 1.00 * on 11 labelled questions; 1 labelled without a "
           "verdict: q03 (stale label: written for another answer (answer_sha256 "
           "000000000000…); label the new one, or `ragate stamp --labels`)*",
           "FAILED gs/ragate.toml::floor[faithfulness] - judge not calibrated: * · not "
           "decided: the ppi estimate * needs a verdict for every labelled question: none "
           "for q03 (stale label: *")
    assert stale.ret == pytest.ExitCode.TESTS_FAILED


def test_stamp_labels_refuses_a_malformed_file_and_names_what_it_could_not_stamp(
        tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from tests.conftest import saved_results
    from tests.test_html_report import rec

    results = tmp_path / "res.jsonl"
    results.write_text(saved_results([rec("q00", index=0, answer="An answer.")]))
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"question_id": "q00", "metric": "faithfulness", "verdict": 1}\n'
                      '{"question_id": "q07", "metric": "faithfulness",  "verdict": 0}\n')
    out = CliRunner().invoke(main, ["stamp", str(results), "--labels", str(labels)])
    assert out.exit_code == 0, out.output
    assert "stamped 1 labels" in out.output
    assert "not stamped (no answered row in" in out.output and "q07 (faithfulness, line 2)" \
        in out.output
    lines = labels.read_text().splitlines()
    assert lines[1] == '{"question_id": "q07", "metric": "faithfulness",  "verdict": 0}'
    assert json.loads(lines[0])["answer_sha256"] == hashlib.sha256(b"An answer.").hexdigest()
    labels.write_text('{"question_id": "q00", "metric": "faithfulness", "verdict": 2}\n')
    bad = CliRunner().invoke(main, ["stamp", str(results), "--labels", str(labels)])
    assert bad.exit_code == 1 and "labels.jsonl:1: [q00] verdict" in bad.output


@WORKERS
def test_malformed_labels_are_a_collection_error_naming_line_and_field(
        pytester: pytest.Pytester, workers: str) -> None:
    labels = jsonl([
        {"question_id": "q00", "metric": "faithfulness", "verdict": 1},
        {"question_id": "q01", "metric": "faithfulness", "verdict": 1, "score": 0.5},
        {"question_id": "q99", "metric": "faithfulness", "verdict": 1},
        {"question_id": "q02", "metric": "citation_accuracy", "score": 0.5},
        {"question_id": "q00", "metric": "faithfulness", "verdict": 0},
        {"question_id": "q03", "metric": "faithfulness", "score": 0.5},
    ]) + "{not json\n"
    project(pytester, FLOORS, labels, ALL_SUPPORTED)
    result = judged(pytester, workers)
    assert result.ret == collection_failed(workers)
    expect(result,
           "*labels.jsonl:2: [q01] <record>: a label has a verdict (0 or 1) or a score*",
           "*labels.jsonl:3: [q99] question_id: no question 'q99' in this goldset*",
           "*labels.jsonl:4: [q02] metric: not a metric labels settle 'citation_accuracy'*",
           "*labels.jsonl:5: [q00] question_id: duplicate label for faithfulness (first on "
           "line 1)*",
           "*labels.jsonl:6: [q03] score: faithfulness's labels are verdicts (line 1)*",
           "*labels.jsonl:7: <json>: malformed JSON*")
    assert "passed" not in result.parseoutcomes()


# --- collection rules, without a run -------------------------------------------------------


def test_judge_agreement_without_labels_is_a_collection_error(tmp_path: Path) -> None:
    write_labelled(tmp_path / "gs", FLOORS, AGREES, judge="")
    with pytest.raises(GoldsetError, match=r"floors.judge_agreement: needs human labels"):
        load_goldset(tmp_path / "gs")


def test_a_judged_floor_without_labels_of_its_metric_is_a_collection_error(
        tmp_path: Path) -> None:
    write_labelled(tmp_path / "gs", FLOORS + "context_precision = 0.5\n", AGREES)
    with pytest.raises(GoldsetError, match=r"floors.context_precision: floors.judge_agreement "
                       r"need labels of context_precision in labels.jsonl, which has none"):
        load_goldset(tmp_path / "gs")


def test_ppi_without_labels_and_agreement_per_kind_are_collection_errors(
        tmp_path: Path) -> None:
    write_labelled(tmp_path / "gs", "[floors]\nfaithfulness = 0.5\n"
                   "kind.single_doc.judge_agreement = 0.6\n", AGREES,
                   judge='[judge]\nestimate = "ppi"\n')
    with pytest.raises(GoldsetError) as error:
        load_goldset(tmp_path / "gs")
    text = str(error.value)
    assert "judge.estimate: needs human labels" in text
    assert "floors.kind.single_doc.judge_agreement: judge_agreement is a floor of the " \
           "whole goldset" in text


def test_statements_must_say_what_the_label_says(tmp_path: Path) -> None:
    write_labelled(tmp_path / "gs", "", [
        {"question_id": "q00", "metric": "faithfulness", "score": 0.5,
         "statements": [{"text": "a", "supported": True}, {"text": "b", "supported": True}]},
        {"question_id": "q01", "metric": "faithfulness", "score": 0.5,
         "statements": [{"text": "a", "supported": True}, {"text": "b", "supported": False}]},
        {"question_id": "q02", "metric": "answer_relevance", "score": 1,
         "statements": [{"text": "a", "supported": True}]}])
    with pytest.raises(GoldsetError) as error:
        load_goldset(tmp_path / "gs")
    problems = [(p.line, p.field) for p in error.value.problems]
    assert problems == [(1, "<record>"), (3, "statements")]


def test_labels_load_with_their_values(tmp_path: Path) -> None:
    write_labelled(tmp_path / "gs", FLOORS, [*AGREES[:2], {
        "question_id": "q05", "metric": "answer_relevance", "score": 1}])
    goldset = load_goldset(tmp_path / "gs")
    assert [(x.question_id, x.metric, x.value, x.binary) for x in goldset.labels] == [
        ("q00", "faithfulness", 1.0, True), ("q01", "faithfulness", 1.0, True),
        ("q05", "answer_relevance", 1.0, False)]
    assert goldset.estimate == "judge"


def test_the_html_report_shows_agreement_and_the_ppi_estimate() -> None:
    pytest.importorskip("jinja2")
    from pytest_ragate.decision.floors import decide
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.outputs.html import render_html
    from pytest_ragate.scoring.agreement import agree
    from pytest_ragate.scoring.floor import Floor
    from tests.test_html_report import rec

    records = [rec(f"q{i}", index=i, judge="fixture:sim",
                   metrics={"faithfulness": 1.0 if i % 2 else 0.75}) for i in range(12)]
    labels = {f"q{i}": (0.75 if i % 2 else 0.5) for i in range(10)}  # ppi.MIN_LABELS
    run = GoldsetRun(name="g", eval_version="1", records=records)
    run.agreements = [agree("faithfulness", labels, False, records)]
    run.verdicts = [decide(Floor("faithfulness", 0.8), "g", records, judge="fixture:sim",
                           labels=labels)]
    assert run.verdicts[0].estimate == "ppi" and run.verdicts[0].outcome == "failed"
    html = render_html([run], history=[], ci="point")
    assert "judge agreement with the labels, faithfulness: Spearman 1.00" in html
    assert f"{run.verdicts[0].value:.2f} (ppi)" in html
