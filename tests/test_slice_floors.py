"""Per-slice floors: questions tagged `{"lang": "de"}`, `[floors.slices.lang]` making one floor
per value, each its own test case, decided together with a correction across the key's slices.
The adversary's case first: a slice that fails while the whole goldset passes must fail the
run, at -n 0 and -n 2; then what the tags file and ragate.toml may say, how a family is
decided, and every way a slice could pass without being decided (gaps, deselection, too few
questions, sequential asking)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.decision.floors import Gap
from pytest_ragate.decision.rules import SliceRules, Strictness
from pytest_ragate.decision.slice_floors import decide_family
from pytest_ragate.goldsets.floors_table import parse_floors
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from tests.conftest import (
    BASE_TOML,
    WORKERS,
    junit_cases,
    rows_of,
    run_here,
    run_pytester,
    write_goldset,
)
from tests.test_fail_closed import planned

# 100 questions: 50 en, 30 de, 20 fr (q00-q49 en, q50-q79 de, q80-q99 fr): each slice all
# right holds (its Wilson lower bound clears 0.80)
LANGS = ["en"] * 50 + ["de"] * 30 + ["fr"] * 20
WHOLE_AND_SLICES = ("[floors]\nabstention_accuracy = 0.80\n\n"
                    "[floors.slices.lang]\nabstention_accuracy = 0.80\n")
DE_CASE = "gs.ragate.toml::floor[lang=de:abstention_accuracy]"
WHOLE_CASE = "gs.ragate.toml::floor[abstention_accuracy]"


def tagged(root: Path, floors: str = WHOLE_AND_SLICES, langs: list[str] = LANGS,
           tags: dict[int, object] | None = None, toml: str = BASE_TOML,
           asked: str = "") -> Path:
    """A goldset of answerable questions q00.. tagged with their `lang`s (`tags` replaces a
    question's tags by index); `asked` starts the id the question's text ends with, which the
    planned system answers by (goldsets of one shared run are answered each its own way)."""
    questions = [{"question_id": f"q{i:02d}", "kind": "single_doc",
                  "question": f"What about {asked}q{i:02d}?",
                  "tags": (tags or {}).get(i, {"lang": lang})} for i, lang in enumerate(langs)]
    return write_goldset(root, toml=toml, floors=floors, questions=questions, expected=[
        {"question_id": q["question_id"], "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for q in questions])


def wrong_on(ids: range | list[int], asked: str = "") -> dict[str, str]:
    """A system that abstains (wrongly: every question is answerable) on these questions
    (of the goldset `tagged` with this `asked`)."""
    return {f"{asked}q{i:02d}": "Answer.abstain()" for i in ids}


def named(name: str) -> str:
    """BASE_TOML under another goldset name (goldsets of one run have names of their own)."""
    return BASE_TOML.replace('name = "mini"', f'name = "{name}"')


# --- the adversary: a slice's failure hidden by a passing whole -------------------------------


@WORKERS
def test_a_slice_that_fails_fails_the_run_though_the_whole_passes(
        pytester: pytest.Pytester, workers: str) -> None:
    """12 of the 30 German questions wrong: the whole is 0.88 (passes 0.80), German is 0.60,
    significantly short after Holm over 3 slices: the run fails, naming the slice. The tags
    travel on the rows and in the results header: `ragate decide` of the run's results file
    gives the same slice cases and outcomes."""
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned(wrong_on(range(50, 62))))
    result = run_pytester(pytester, workers, "gs", "--junitxml=j.xml",
                          "--ragate-results=r.jsonl", "--ragate-report=r.md")
    assert result.ret == 1, result.stdout.str()
    cases = junit_cases(pytester.path / "j.xml")
    assert cases[WHOLE_CASE]["outcome"] == "passed"
    de = cases[DE_CASE]
    assert de["outcome"] == "failure"
    message = str(de["props"]["message"])
    assert "lang=de abstention_accuracy 0.60 < floor 0.80" in message
    assert "n=30" in message and "exact binomial" in message
    assert "Holm-adjusted over 3 slices of lang" in message and "misses" in message
    for other in ("en", "fr"):
        assert cases[f"gs.ragate.toml::floor[lang={other}:abstention_accuracy]"][
            "outcome"] == "passed"
    result.stdout.fnmatch_lines(["FAILED gs/ragate.toml::floor[[]lang=de:abstention_accuracy]*"])
    rows = rows_of(pytester.path / "r.jsonl")
    assert rows["q61"]["tags"] == {"lang": "de"}
    decided = run_here(pytester, "decide", "r.jsonl", "--", "gs", "-p", "no:cacheprovider",
                       "--junitxml=d.xml")
    assert decided.returncode == 1, decided.stdout + decided.stderr
    floors = {name: case["outcome"] for name, case in cases.items() if "floor[" in name}
    again = {name: case["outcome"] for name, case in junit_cases(pytester.path / "d.xml").items()
             if "floor[" in name}
    assert floors == again and floors[DE_CASE] == "failure" and len(floors) == 4


@WORKERS
def test_an_insufficient_or_errored_slice_fails(pytester: pytest.Pytester,
                                                workers: str) -> None:
    """French: 20 questions, 19 right: its interval spans the floor and its shortfall is not
    significant. It fails, saying the n it needs (with `ragate_slice_insufficient = skip` it
    is skipped, never passed: test_slice_adversary's `skipping` run). In the same run a German
    question whose system raises is a gap of the German slice: the slice fails naming it,
    whatever the others say."""
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned({**wrong_on([95]), "q70": "1/0"}))
    failed = run_pytester(pytester, workers, "gs", "--junitxml=j.xml")
    assert failed.ret == 1
    cases = junit_cases(pytester.path / "j.xml")
    fr = cases["gs.ragate.toml::floor[lang=fr:abstention_accuracy]"]
    assert fr["outcome"] == "failure"
    assert "insufficient n: needs about" in str(fr["props"]["message"])
    de = cases[DE_CASE]
    assert de["outcome"] == "failure" and "q70" in str(de["props"]["message"])
    assert cases["gs.ragate.toml::floor[lang=en:abstention_accuracy]"]["outcome"] == "passed"


def test_deselecting_a_slices_question_skips_that_slice_only(pytester: pytest.Pytester) -> None:
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, "0", "gs", "--junitxml=j.xml", "-k", "not q95")
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[lang=fr:abstention_accuracy]"]["outcome"] == "skipped"
    assert cases["gs.ragate.toml::floor[lang=en:abstention_accuracy]"]["outcome"] == "passed"
    assert cases[WHOLE_CASE]["outcome"] == "skipped"  # its population is not whole either
    assert result.ret == 0, result.stdout.str()  # deselected by the user: skipped, not failed


def test_a_goldset_with_slice_floors_is_asked_in_full_when_sequential(
        pytester: pytest.Pytester) -> None:
    """A slice floor is decided with its family's correction, which no confidence sequence
    tracks: a sequential run asks every question and says why."""
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned({}))
    result = run_pytester(pytester, "0", "gs", "--ragate-sequential", "on",
                          "--ragate-sequential-seed", "3", "--ragate-results=r.jsonl")
    rows = rows_of(pytester.path / "r.jsonl")
    assert all(row["status"] == "scored" for row in rows.values()) and len(rows) == 100
    result.stdout.fnmatch_lines(["*floor[[]lang=*cannot be decided before the last question*"])


def test_the_decorator_takes_slice_floors(pytester: pytest.Pytester) -> None:
    tagged(pytester.path / "gs", floors="")
    pytester.makeconftest(planned(wrong_on(range(50, 62))))
    pytester.makepyfile(test_mine="""
        import pytest_ragate as ragate

        @ragate.goldset("gs")
        @ragate.floor(slice="lang", abstention_accuracy=0.8)
        @ragate.floor(slice="lang=fr", abstention_accuracy={"min": 0.5})
        def test_mine(ragate_question, ragate_system):
            return ragate_system(ragate_question.question)
    """)
    result = run_pytester(pytester, "0", "test_mine.py", "--junitxml=j.xml")
    cases = junit_cases(pytester.path / "j.xml")
    names = sorted(n for n in cases if "floor[" in n)
    assert [n.rpartition("::")[2] for n in names] == [
        "floor[lang=de:abstention_accuracy]", "floor[lang=en:abstention_accuracy]",
        "floor[lang=fr:abstention_accuracy]"], names
    assert result.ret == 1
    fr = next(cases[n] for n in names if "lang=fr" in n)
    assert "floor 0.50" in str(fr["props"]["message"])


# --- what a goldset may say -----------------------------------------------------------------


def problems_of(root: Path) -> str:
    with pytest.raises(GoldsetError) as error:
        load_goldset(root)
    return str(error.value)


def test_floors_over_every_value_of_a_key_and_a_named_override(tmp_path: Path) -> None:
    goldset = load_goldset(tagged(tmp_path / "gs", floors=(
        '[floors.slices.lang]\nabstention_accuracy = 0.8\n\n'
        '[floors.slices."lang=fr"]\nabstention_accuracy = { min = 0.5, xfail = "new" }\n\n'
        '[floors.slices.kind]\ncitation_accuracy = 0.3\n')))
    names = [(f.name, f.min, f.xfail) for f in goldset.floors]
    assert names == [("floor[lang=de:abstention_accuracy]", 0.8, None),
                     ("floor[lang=en:abstention_accuracy]", 0.8, None),
                     ("floor[lang=fr:abstention_accuracy]", 0.5, "new"),
                     ("floor[kind=single_doc:citation_accuracy]", 0.3, None)]


@pytest.mark.parametrize(("floors", "tags", "says"), [
    ('[floors.slices."lang=it"]\nabstention_accuracy = 0.8\n', None,
     'floors.slices."lang=it".abstention_accuracy: no question has lang=it (values of lang '
     'here: de, en, fr)'),
    ("[floors.slices.product]\nabstention_accuracy = 0.8\n", None,
     "floors.slices.product.abstention_accuracy: 100 of 100 questions have no tag 'product'"),
    ("[floors.slices.lang]\nabstention_accuracy = 0.8\n", {3: {}, 7: {"topic": "x"}},
     "2 of 100 questions have no tag 'lang': q03 (line 4), q07 (line 8)"),
    ("[floors.slices.lang]\ncost_per_question = { max = 0.1 }\n", None,
     "cost_per_question cannot be a slice floor"),
    ("[floors.slices.lang]\njudge_agreement = 0.5\n", None,
     "judge_agreement cannot be a slice floor"),
    # over anchors only: as a question floor it would have nothing to count, and never pass
    ("[floors.slices.lang]\nhold_rate = 0.5\n", None,
     "floors.slices.lang.hold_rate: hold_rate is the share of a kind's anchors whose check "
     "held: a floor on it is over anchors ([floors.anchors.KIND] hold_rate = …), never over "
     "questions"),
    ("[floors]\nhold_rate = 0.5\n", None, "floors.hold_rate: hold_rate is the share of"),
    ("[floors.kind.single_doc]\nhold_rate = { min = 0.5 }\n", None,
     "floors.kind.single_doc.hold_rate: hold_rate is the share of"),
    ('[floors.slices."lang=d e"]\nabstention_accuracy = 0.8\n', None,
     "not value 'd e'"),
    ("[floors]\nslices = 3\n", None, "floors.slices: must be a table of slice keys"),
    ("", {5: {"lang": "d e"}}, "questions.jsonl:6: [q05] tags.lang"),
    ("", {5: {"kind": "x"}}, "'kind' is the question's kind"),
    ("", {5: {"lang": 3}}, "questions.jsonl:6: [q05] tags.lang"),
])
def test_what_a_goldset_cannot_say_is_one_clear_problem(tmp_path: Path, floors: str,
                                                        tags: dict[int, object] | None,
                                                        says: str) -> None:
    text = problems_of(tagged(tmp_path / "gs", floors=floors, tags=tags))
    assert says in text, text
    assert text.count("\n") < 3, text  # once per cause, not once per question


def test_tags_as_a_list_are_one_error_naming_the_mapping(tmp_path: Path) -> None:
    text = problems_of(tagged(tmp_path / "gs", floors="[floors]\ncitation_accuracy = 0.5\n",
                              tags={5: ["billing"]}))
    assert "\n" not in text and text.endswith(
        "questions.jsonl:6: [q05] tags: tags are a mapping of slices, {\"topic\": \"billing\"}: "
        "the list form ([\"billing\"]) was removed before 0.1"), text


# --- a family decided ------------------------------------------------------------------------


def row(i: int, lang: str, right: bool, **more: object) -> QuestionRecord:
    return QuestionRecord.model_validate({
        "goldset": "g", "question_id": f"q{i}", "kind": "single_doc", "tags": {"lang": lang},
        "index": i, "must_abstain": False, "abstained": not right, "abstention_correct": right,
        "evidence_spans": 1, "eval_version": "1", **more})


def family(right: dict[str, tuple[int, int]], **floors: float) -> list[Floor]:
    return [Floor("abstention_accuracy", floors.get(lang, 0.8), slice=("lang", lang))
            for lang in right]


def rows_for(right: dict[str, tuple[int, int]]) -> list[QuestionRecord]:
    rows, i = [], 0
    for lang, (k, n) in right.items():
        for j in range(n):
            rows.append(row(i, lang, j < k))
            i += 1
    return rows


def test_a_family_calls_each_slice_holds_misses_or_insufficient() -> None:
    right = {"en": (195, 200), "de": (18, 30), "fr": (9, 10)}
    verdicts = {f.slice[1]: v for f, v in decide_family(family(right), "g", rows_for(right)).items()
                if f.slice}
    assert (verdicts["en"].outcome, verdicts["en"].slice_call) == ("passed", "holds")
    assert (verdicts["de"].outcome, verdicts["de"].slice_call) == ("failed", "misses")
    assert (verdicts["fr"].outcome, verdicts["fr"].slice_call) == ("failed", "insufficient")
    assert verdicts["fr"].needs is not None and verdicts["fr"].needs > 10
    skip = decide_family(family(right), "g", rows_for(right),
                         rules=SliceRules(insufficient="skip"))
    assert {f.slice[1]: v.outcome for f, v in skip.items() if f.slice}["fr"] == "skipped"


def test_the_correction_spans_the_family() -> None:
    """A slice barely significant alone is not once two more slices share the budget."""
    alone = {"de": (16, 30)}
    three = {"de": (16, 30), "en": (30, 30), "fr": (30, 30)}
    decided_alone = decide_family(family(alone), "g", rows_for(alone))
    decided_three = decide_family(family(three), "g", rows_for(three))
    de_alone = next(v for f, v in decided_alone.items() if f.slice == ("lang", "de"))
    de_three = next(v for f, v in decided_three.items() if f.slice == ("lang", "de"))
    assert de_alone.slice_call == "misses" and "over 1 slice of lang" in de_alone.message
    assert "over 3 slices of lang" in de_three.message


def test_a_slice_with_a_gap_or_too_few_questions_is_not_decided() -> None:
    right = {"en": (30, 30), "de": (30, 30)}
    gap = Gap(member="q99", member_kind="single_doc", kind="errored", why="boom",
              member_tags={"lang": "de"})
    decided = decide_family(family(right), "g", rows_for(right), gaps=[gap])
    by = {f.slice[1]: v for f, v in decided.items() if f.slice}
    assert by["de"].outcome == "failed" and "q99" in by["de"].message
    assert by["en"].outcome == "passed"
    refused = decide_family(family(right), "g", rows_for(right),
                            strictness=Strictness(min_n=40))
    assert all(v.outcome == "failed" and "ragate_min_n = 40" in v.message
               for v in refused.values())


def test_a_judged_slice_without_a_judge_is_not_a_pass() -> None:
    floors = [Floor("faithfulness", 0.8, slice=("lang", "de"))]
    failed = decide_family(floors, "g", rows_for({"de": (5, 5)}))
    assert next(iter(failed.values())).outcome == "failed"
    skipped = decide_family(floors, "g", rows_for({"de": (5, 5)}), unjudged="skip")
    assert next(iter(skipped.values())).outcome == "skipped"


def test_a_judged_slice_floor_is_refused_where_judged_floors_are_decided_on_ppi(
        tmp_path: Path) -> None:
    root = tagged(tmp_path / "gs", floors=(
        '[judge]\nestimate = "ppi"\nlabels = "labels.jsonl"\n\n'
        "[floors.slices.lang]\nfaithfulness = 0.8\n"))
    (root / "labels.jsonl").write_text("".join(
        f'{{"question_id": "q{i:02d}", "metric": "faithfulness", "score": 1.0}}\n'
        for i in range(10)))
    text = problems_of(root)
    assert "floors.slices.lang.faithfulness: a slice floor of a judged metric" in text, text
    assert text.count("floors.slices.lang.faithfulness") == 1


def test_a_decorator_cannot_put_hold_rate_over_questions(tmp_path: Path) -> None:
    """`@ragate.floor(hold_rate=…)` is read by the same rule as ragate.toml: one problem."""
    with pytest.raises(GoldsetError) as refused:
        parse_floors({"hold_rate": 0.5, "anchors": {"topical_probe": {"hold_rate": 1.0}}},
                     tmp_path / "test_rag.py", where="test_mine @ragate.floor")
    [problem] = refused.value.problems
    assert str(problem).endswith("test_mine @ragate.floor.hold_rate: hold_rate is the share of "
                                 "a kind's anchors whose check held: a floor on it is over "
                                 "anchors ([floors.anchors.KIND] hold_rate = …), never over "
                                 "questions, where it has nothing to count and could never pass")
