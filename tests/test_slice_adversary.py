"""The adversary of per-slice floors: every way found for a run with slice floors to go green
(exit 0, or a slice case passed) while a slice is bad or undecided, or to rewrite the wrong
floor, each tried through the user's surface (pytester runs, `ragate decide`, ragate.toml)."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.registry import Tally
from pytest_ragate.scoring.slices import decide_slices
from tests.conftest import (
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    junit_cases,
    results_rows,
    run_here,
    run_pytester,
)
from tests.test_fail_closed import planned, scripted_judge
from tests.test_rejudge import ragate
from tests.test_sharding import reseal
from tests.test_slice_floors import DE_CASE, LANGS, named, tagged, wrong_on

GERMAN_WRONG = range(50, 62)  # 12 of the 30 German questions: German 0.60, the whole 0.88


def decide(pytester: pytest.Pytester, results: str, *args: str) -> tuple[int, str]:
    """`ragate decide` of a results file in pytester's folder (in this process)."""
    ran = run_here(pytester, "decide", results, "--", "gs", "-p", "no:cacheprovider",
                   "--junitxml=d.xml", *args)
    return ran.returncode, ran.stdout + ran.stderr


# --- a results file whose rows say other tags than the goldset ------------------------------


def retag(path: Path, ids: range, tags: dict[str, str] | None) -> None:
    """These questions' rows given other tags (None: none), the file sealed again so that its
    trailer vouches for it: what decide checks behind the trailer is reached."""
    lines = path.read_text().splitlines(keepends=True)
    for n, line in enumerate(lines):
        row = json.loads(line)
        if row.get("question_id") in {f"q{i:02d}" for i in ids}:
            row.pop("tags", None)
            if tags is not None:
                row["tags"] = tags
            lines[n] = json.dumps(row) + "\n"
    path.write_text("".join(lines))
    reseal(path)


def test_decide_refuses_rows_whose_tags_are_not_the_goldsets(pytester: pytest.Pytester) -> None:
    """The German questions that were wrong, their rows' tags dropped (or moved to English):
    decided on the rows' tags, German held over the 18 that were right and the run passed.
    Decide takes a question's slices from the goldset, as it takes its kind: refused."""
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned(wrong_on(GERMAN_WRONG)))
    assert run_pytester(pytester, "0", "gs", "--ragate-results=r.jsonl").ret == 1
    for name, tags in (("dropped", None), ("moved", {"lang": "en"})):
        shutil.copy(pytester.path / "r.jsonl", pytester.path / f"{name}.jsonl")
        retag(pytester.path / f"{name}.jsonl", GERMAN_WRONG, tags)
        code, out = decide(pytester, f"{name}.jsonl")
        assert code == 1, (name, out)
        assert "refused to decide" in out, (name, out)
        said = "{}" if tags is None else "{'lang': 'en'}"
        assert f"[q50] tags: {said} in this row, but the goldset says {{'lang': 'de'}}" in out, (
            name, out)


# --- a judge that fails on one slice's questions only, and a slice of one question -----------

FRENCH_UNREAD = [f"q{i}" for i in range(80, 85)]  # 5 of the 20 French questions
UNREAD_JUDGE = scripted_judge(f"""
    if item.question_id in {FRENCH_UNREAD!r}:
        return float("nan") if item.question_id == "q80" else 1 / 0
    return 1.0
""")
FR_FAITHFULNESS = "gs.ragate.toml::floor[lang=fr:faithfulness]"


@WORKERS
def test_a_judged_slice_the_judge_could_not_read_or_of_one_question_is_not_decided(
        pytester: pytest.Pytester, workers: str) -> None:
    """The judge fails (or answers NaN) on 5 of the 20 French questions only: 95 of 100
    verdicts clear the goldset's judge_coverage floor of 0.95, and French was decided on the
    15 verdicts it got, and held. A slice is held to the coverage floor on its own verdicts:
    15 of 20 is not a decision, whatever the rest of the goldset's coverage. In the same run
    one question is tagged Italian, judged 1.0: the bootstrap interval of one score is
    [1.00, 1.00], which "cleared" the floor, and Italian passed on one question (three
    scores 1.0, 0.9, 1.0 did too). A mean slice is held no more readily than a proportion
    with the same sum: Italian is insufficient (failed); German's 30 scores of 1.0 hold
    (thirty of 0.99 would not: `test_a_mean_slice_is_held_no_more_readily_than_a_proportion`)."""
    tagged(pytester.path / "gs", floors="[floors.slices.lang]\nfaithfulness = 0.8\n",
           tags={49: {"lang": "it"}})
    pytester.makeconftest(planned({}) + UNREAD_JUDGE)
    result = run_pytester(pytester, workers, "gs", "--junitxml=j.xml", "--ragate-cache=off")
    assert result.ret == 1, result.stdout.str()
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[judge_coverage]"]["outcome"] == "passed"
    fr = cases[FR_FAITHFULNESS]
    assert fr["outcome"] == "failure", fr
    message = str(fr["props"]["message"])
    assert "15 of 20 verdicts of lang=fr" in message and "judge_coverage floor 0.95" in message
    assert "q80" in message, message
    italian = cases["gs.ragate.toml::floor[lang=it:faithfulness]"]
    assert italian["outcome"] == "failure", italian
    assert "insufficient n" in str(italian["props"]["message"])
    for other in ("de", "en"):
        assert cases[f"gs.ragate.toml::floor[lang={other}:faithfulness]"]["outcome"] == "passed"


# --- --ragate-promote of a slice floor ------------------------------------------------------

PROMOTED = {
    # the whole goldset's floor of the metric an xfail too, still short: it was the one
    # rewritten (a hard 0.95 that fails), and German stayed an xfail
    "named": ('[floors]\nabstention_accuracy = { min = 0.95, xfail = "whole not yet" }\n\n'
              '[floors.slices."lang=de"]\nabstention_accuracy = { min = 0.8, xfail = "new" }\n',
              {"abstention_accuracy": {"min": 0.95, "xfail": "whole not yet"},
               "slices": {"lang=de": {"abstention_accuracy": 0.8}}},
              {"floor[lang=de:abstention_accuracy]": "passed",
               "floor[abstention_accuracy]": "skipped"}),
    # an xfail over every value of lang: English (0.80, undecided) stays one; German and
    # French, which held, become floors of their own
    "every": ('[floors.slices.lang]\nabstention_accuracy = { min = 0.8, xfail = "new" }\n',
              {"slices": {"lang": {"abstention_accuracy": {"min": 0.8, "xfail": "new"}},
                          "lang=de": {"abstention_accuracy": 0.8},
                          "lang=fr": {"abstention_accuracy": 0.8}}},
              {"floor[lang=de:abstention_accuracy]": "passed",
               "floor[lang=fr:abstention_accuracy]": "passed",
               "floor[lang=en:abstention_accuracy]": "skipped"}),
}


def test_promoting_a_slice_floor_rewrites_that_slice(pytester: pytest.Pytester) -> None:
    """English wrong on 10 of 50 (the whole 0.90). Promoting German's xpassed xfail rewrote
    `[floors] abstention_accuracy` (the whole goldset's xfail, still short) and left German
    an xfail: the next bad German run would be green. Only the slices that xpassed are
    promoted, in their own tables (each case a goldset of one run, promoted and run again)."""
    for case, (floors, _, _) in PROMOTED.items():
        tagged(pytester.path / case, floors=floors, toml=named(case))
    pytester.makeconftest(planned(wrong_on(range(10))))
    promoted = run_pytester(pytester, "0", *PROMOTED, "--ragate-promote")
    promoted.stdout.fnmatch_lines(["ragate: promoted *",
                                   "  floor[[]lang=de:abstention_accuracy] (*"])
    again = run_pytester(pytester, "0", *PROMOTED, "--junitxml=j.xml")
    cases = junit_cases(pytester.path / "j.xml")
    for case, (_, after, rerun) in PROMOTED.items():
        toml = tomllib.loads((pytester.path / case / "ragate.toml").read_text())
        assert toml["floors"] == after, (case, toml["floors"])
        for name, outcome in rerun.items():
            assert cases[f"{case}.ragate.toml::{name}"]["outcome"] == outcome, (
                case, name, again.stdout.str())


# --- one run under ragate_slice_insufficient = skip, a goldset folder per case -------------------

TWO_KEYS = ("[floors.slices.lang]\nabstention_accuracy = 0.80\n\n"
            '[floors.slices."lang=fr"]\nabstention_accuracy = { min = 0.8, xfail = "new" }\n\n'
            "[floors.slices.product]\nabstention_accuracy = 0.80\n")
# slice: (JUnit, history, Markdown and terminal): German misses, English holds, French (19 of
# 20) is an insufficient xfail, both products (0.86, 0.88 of 50) insufficient and skipped
OUTCOMES = {"lang=de": ("failure", "failed", "FAIL"), "lang=en": ("passed", "passed", "PASS"),
            "lang=fr": ("skipped", "xfailed", "XFAIL"),
            "product=billing": ("skipped", "skipped", "SKIP"),
            "product=search": ("skipped", "skipped", "SKIP")}
SKIPPING = {  # folder: the questions its system gets wrong
    "skipping": [95],  # French 19 of 20: insufficient, skipped; the rest holds
    "repeated": list(GERMAN_WRONG),  # asked three times each (`repeat = 3`)
    "outputs": [*GERMAN_WRONG, 95],  # two keys, every outcome a slice can have
}


@WORKERS
def test_under_skip_only_an_undecided_slice_skips_and_every_output_says_so(
        pytester: pytest.Pytester, workers: str) -> None:
    """One run with `ragate_slice_insufficient = skip`, a goldset folder per case:

    - `skipping`: French 19 of 20 right: its interval spans the floor, it is skipped (never
      passed) and the rest of the goldset holds.
    - `repeated`: German wrong on 12 of 30 questions, asked three times each (`repeat = 3`):
      0.60, its 95% interval [0.42, 0.75] wholly below the floor of 0.80. Over questions'
      rates the betting test is not significant after Holm, so German was "insufficient" and
      skipped: a green run. A slice too small to decide is one whose interval spans the floor;
      this one fails, whatever the setting.
    - `outputs`: two keys, each outcome a slice can have: every slice case in the terminal,
      JUnit, the history line and the Markdown and HTML reports, with one outcome everywhere,
      and the exit status and the report's run line those outcomes' (a failed slice: exit 1,
      FAIL)."""
    tagged(pytester.path / "skipping", toml=named("skipping"), asked="skipping-")
    tagged(pytester.path / "repeated", asked="repeated-",
           toml=named("repeated").replace("\n[corpus]", "repeat = 3\n\n[corpus]"))
    tagged(pytester.path / "outputs", floors=TWO_KEYS, toml=named("outputs"), asked="outputs-",
           tags={i: {"lang": lang, "product": "billing" if i % 2 else "search"}
                 for i, lang in enumerate(LANGS)})
    pytester.makeconftest(planned({wrong: how for folder, ids in SKIPPING.items()
                                   for wrong, how in wrong_on(ids, f"{folder}-").items()}))
    result = run_pytester(pytester, workers, *SKIPPING, "-o", "ragate_slice_insufficient=skip",
                          "--junitxml=j.xml", "--ragate-history=h.jsonl", "--ragate-report=r.md",
                          "--ragate-html=r.html", "--ragate-results=r.jsonl")
    assert result.ret == 1, result.stdout.str()
    cases = junit_cases(pytester.path / "j.xml")
    # skipping: French skipped, nothing of the folder failed
    fr = cases["skipping.ragate.toml::floor[lang=fr:abstention_accuracy]"]
    assert fr["outcome"] == "skipped", fr
    assert not [n for n, c in cases.items()
                if n.startswith("skipping.") and c["outcome"] in ("failure", "error")]
    assert "FAILED skipping/" not in result.stdout.str()
    # repeated: German's interval wholly below its floor fails
    de = cases[DE_CASE.replace("gs.", "repeated.")]
    assert de["outcome"] == "failure", de
    message = str(de["props"]["message"])
    assert "[0.42, 0.75]" in message and "wholly below the floor" in message, message
    # outputs: one outcome per slice in every output
    history = next(line for text in (pytester.path / "h.jsonl").read_text().splitlines()
                   if (line := json.loads(text))["goldset"] == "outputs")["floors"]
    report, html = ((pytester.path / name).read_text() for name in ("r.md", "r.html"))
    assert "Run: **FAIL**" in report
    floors = sorted(n for n in cases if n.startswith("outputs.") and "floor[" in n)
    assert len(floors) == len(OUTCOMES) and len(history) == len(OUTCOMES), (floors, history)
    for name, (junit, line, shown) in OUTCOMES.items():
        floor = f"{name}:abstention_accuracy"
        assert cases[f"outputs.ragate.toml::floor[{floor}]"]["outcome"] == junit, name
        assert history[floor]["outcome"] == line, name
        assert any(row.startswith("| outputs ") and f"| {floor} " in row
                   and row.rstrip(" |").endswith(shown) for row in report.splitlines()), name
        assert floor in html, name
        result.stdout.fnmatch_lines([f"outputs *{floor} *{shown}*"])
    rows = [row for row in results_rows(pytester.path / "r.jsonl")
            if row["goldset"] == "outputs" and row["question_id"] == "q51"]
    assert rows[0]["tags"] == {"lang": "de", "product": "billing"}


# --- ragate rejudge decides slice floors as the gate does -----------------------------------


def statements(path: Path, judge_id: str, unsupported: set[str]) -> None:
    """A fixture judge's file: three statements an answer, two unsupported for `unsupported`
    (faithfulness 0.33), all supported otherwise (1.0)."""
    path.write_text(json.dumps({"judge_id": judge_id, "answers": {
        f"q{i:02d}": {"statements": ["s1", "s2", "s3"],
                      "supported": [True] + [f"q{i:02d}" not in unsupported] * 2}
        for i in range(len(LANGS))}}))


def test_rejudge_decides_a_slice_floor_as_the_gate_does(pytester: pytest.Pytester) -> None:
    """A candidate judge harsher on 3 of the 20 French answers: French 0.90, over the floor
    of 0.72 but no longer held (its interval reaches 0.70), and the gate under that judge
    fails it. rejudge decided slice floors by the point rule (0.90 >= 0.72: passed under
    both) and said no floor's outcome changes, exit 0; it decides them as the gate does."""
    tagged(pytester.path / "gs", floors="[floors.slices.lang]\nfaithfulness = 0.72\n")
    pytester.makeconftest(planned({}) + FIXTURE_JUDGE_CONFTEST)
    statements(pytester.path / "current.json", "current", set())
    statements(pytester.path / "harsh.json", "harsh", {"q80", "q81", "q82"})
    ran = run_pytester(pytester, "0", "gs", "--ragate-judge=fixture:current.json",
                       "--ragate-results=res.jsonl")
    assert ran.ret == 0, ran.stdout.str()
    harsh = run_pytester(pytester, "0", "gs", "--ragate-judge=fixture:harsh.json")
    assert harsh.ret == 1  # what the gate says under the candidate
    result = ragate(pytester.path, "rejudge", "res.jsonl", "--cache-dir", "jc", "--judge",
                    "fixture:harsh.json")
    assert result.exit_code == 1, result.output
    fr = next(line for line in result.output.splitlines()
              if line.startswith("floor[lang=fr:faithfulness]"))
    assert fr.split()[1:3] == ["passed", "failed"], result.output
    assert any(line.split()[1:4] == ["passed", "passed", "same"] for line in
               result.output.splitlines() if line.startswith("floor[lang=de:")), result.output


@pytest.mark.parametrize(("scores", "floor", "held"), [
    ([0.99], 0.8, False), ([1.0, 0.9, 1.0], 0.8, False), ([0.99] * 15, 0.8, False),
    ([0.99] * 30, 0.8, False), ([0.99] * 35, 0.8, True),
    ([1.0] * 17 + [1 / 3] * 3, 0.72, False)])
def test_a_mean_slice_is_held_no_more_readily_than_a_proportion(scores: list[float],
                                                                floor: float,
                                                                held: bool) -> None:
    """A bootstrap of identical scores has no width; the betting interval does, and so does
    Wilson over their sum (0.99 × 15 reaches 0.78): thirty scores of 0.99 reach 0.80 (the
    betting interval's lower bound), thirty-five 0.82. An insufficient mean slice needs more
    questions than it has, never fewer (French at 0.90 of 20 against 0.72 said "needs about
    15")."""
    t = Tally(metric="faithfulness", k=sum(scores), n=len(scores), values=tuple(scores),
              questions=len(scores))
    [figure] = decide_slices(Floor("faithfulness", floor), {"it": t})
    assert (figure.call == "holds") == held, figure
    if not held and figure.needs is not None:
        assert figure.needs > len(scores), figure


# --- the gate's own settings reach slices ------------------------------------------------------


def test_min_n_strict_ci_and_a_required_judge_hold_slices_too(pytester: pytest.Pytester) -> None:
    """`ragate_min_n = 25` refuses French (20 questions) though it is all right, `--ragate-ci
    strict` keeps the calls, and a judged slice floor with no judge whose metric is named
    optional is skipped, not passed, and fails under `--ragate-require-judge` (without the
    optional name it fails anyway: test_slice_floors)."""
    tagged(pytester.path / "gs", floors=("[floors.slices.lang]\nabstention_accuracy = 0.8\n"
                                         "faithfulness = 0.8\n"))
    pytester.makeconftest(planned({}))
    optional = ("-o", "ragate_judge_optional=faithfulness")
    result = run_pytester(pytester, "0", "gs", "--junitxml=j.xml", "-o", "ragate_min_n=25",
                          "--ragate-ci", "strict", *optional)
    assert result.ret == 1
    cases = junit_cases(pytester.path / "j.xml")
    fr = cases["gs.ragate.toml::floor[lang=fr:abstention_accuracy]"]
    assert fr["outcome"] == "failure" and "ragate_min_n = 25" in str(fr["props"]["message"])
    assert cases[DE_CASE]["outcome"] == "passed"
    assert cases["gs.ragate.toml::floor[lang=de:faithfulness]"]["outcome"] == "skipped"
    required = run_pytester(pytester, "0", "gs", "--junitxml=k.xml", "--ragate-require-judge",
                            *optional)
    assert required.ret == 1
    judged = junit_cases(pytester.path / "k.xml")["gs.ragate.toml::floor[lang=de:faithfulness]"]
    assert judged["outcome"] == "failure", judged
