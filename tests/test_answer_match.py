"""`answer_match` as pure functions: the folding that finds a fact, the right/wrong/unsure
rule and the adversary's answers (whole documents, lists of every candidate), the labels that
settle an unsure answer, and the floor that is not decided while one is unsettled."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ragate.decision.floors import decide
from pytest_ragate.scoring.answer_match import (
    AnswerCheck,
    AnswerLabel,
    Expectation,
    answer_to_label,
    check_answer,
    settle,
    unsettled,
)
from pytest_ragate.scoring.answer_text import Folded, alternative_problem, same_statement, tokens
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.wording.runs import answer_lines

PRICE = Expectation(facts=[["25 euros", "€25"], "12.50 euros"],
                    gist="The remote sells for 25 euros and costs 12.50 euros to make.",
                    question="What are the selling price and the production cost?")
TIGER = Expectation(facts=["tiger", "majestic", "independent", "proud"],
                    gist="She drew a tiger and described tigers as majestic, independent and "
                         "proud.", question="Which animal did she draw, and why?")


def words(text: str) -> list[str]:
    return [t.text for t in tokens(text)]


@pytest.mark.parametrize(("written", "folded"), [
    ("€0.25", ["0.25", "eur"]), ("EUR 0,25", ["0.25", "eur"]), ("0.250 euros", ["0.25", "eur"]),
    (".25 €", ["0.25", "eur"]), ("1,000.50 dollars", ["1000.5", "usd"]),
    ("2.000,50 €", ["2000.5", "eur"]), ("1 000 000", ["1000000"]), ("50M", ["50000000"]),
    ("fifty million", ["50000000"]), ("twenty-five", ["25"]), ("two hundred thousand",
                                                             ["200000"]),
    ("eighty-two point seven percent", ["82.7", "percent"]), ("20 per cent", ["20", "percent"]),
    ("twelve and a half", ["12.5"]), ("the 23rd of February", ["23", "february"]),
    ("twenty third February", ["23", "february"]), ("Café Zürich", ["cafe", "zurich"]),
    ("isn't", ["is", "not"]), ("uh twenty five um euros", ["25", "eur"]),
])
def test_numbers_currencies_dates_and_accents_fold_to_one_form(written: str,
                                                                folded: list[str]) -> None:
    assert words(written) == folded


def test_one_and_second_alone_stay_words_and_five_six_is_no_number() -> None:
    assert words("the one who came second") == ["one", "who", "came", "second"]
    assert words("five six") == ["5", "6"]


def test_a_fact_is_found_in_a_row_within_a_sentence_and_not_under_a_negation() -> None:
    answer = Folded("It is not 30 euros but 25 euros. Euros.")
    assert answer.states("25 euros") and not answer.states("30 euros")
    assert not Folded("It cost 25. Euros were paid.").states("25 euros")
    assert Folded("Not only 25 euros but more.").states("25 euros")  # a pseudo-negation
    assert Folded("She drew two tigers.").states("tiger")  # a plural's singular
    assert Folded("It costs 25 EUR").states("/25\\s*eur/")


def test_a_regular_expression_fact_never_matches_by_an_empty_or_wordless_match() -> None:
    assert not Folded("nothing here").states("/(?=x)|x/")
    assert alternative_problem("/x*/") is not None
    assert alternative_problem("/\\b/") is not None
    why = alternative_problem("/secretword(/")
    assert why is not None and "compile" in why and "secretword" not in why


@pytest.mark.parametrize("fact", ["", "   ", "the", "!!"])
def test_a_fact_that_states_nothing_is_refused(fact: str) -> None:
    assert alternative_problem(fact) is not None


def test_forbid_equal_to_a_fact_is_told_once_folded() -> None:
    assert same_statement("25 Euros", ["€25"])
    assert not same_statement("30 euros", "25 euros")


# --- the rule ---------------------------------------------------------------------------------


def call(answer: str | None, expected: Expectation = PRICE, similarity: float = 0.0) -> str:
    return check_answer(answer, expected, similarity=similarity).outcome


@pytest.mark.parametrize("answer", [
    "It sells for €25 and costs EUR 12.50 to make.",
    "Twenty-five euros to sell, twelve and a half euros to make.",
    "Selling price 25 euros; production cost 12,50 euros.",
])
def test_every_fact_stated_is_right(answer: str) -> None:
    assert call(answer) == "right"


@pytest.mark.parametrize(("answer", "why"), [
    (None, "no answer"), ("", "no answer"),
    ("It sells for 30 euros and costs 12.50 euros.", "another value in its place"),
    ("It does not sell for 25 euros; it costs 12.50 euros.", "denies fact 1"),
    ("It costs 12.50 euros.", "a value is stated or not"),
])
def test_a_missing_fact_is_wrong(answer: str | None, why: str) -> None:
    check = check_answer(answer, PRICE, similarity=0.99)
    assert (check.outcome, why in check.why) == ("wrong", True), check.why


def test_a_forbidden_statement_makes_an_answer_wrong_whatever_it_states() -> None:
    expected = Expectation(facts=["25 euros"], forbid=["30 euros"], gist=PRICE.gist)
    assert call("25 euros, or was it 30 euros?", expected) == "wrong"
    assert call("25 euros, not 30 euros.", replace(expected, plain=False)) == "right"


def test_a_paraphrase_close_to_the_gist_is_unsure_and_a_distant_answer_wrong() -> None:
    expected = Expectation(facts=["hour"], gist="Almost an hour per dog.")
    assert call("Sixty-ish minutes for each dog, roughly.", expected, 0.81) == "unsure"
    assert call("The groomers asked about payment.", expected, 0.30) == "wrong"


def test_near_weighs_a_missing_fact_against_the_gist_around_it() -> None:
    asked: list[str] = []

    def near(text: str) -> float:
        asked.append(text)
        return 0.2

    check = check_answer("She drew a tiger.", TIGER, similarity=0.9, near=near)
    assert check.outcome == "wrong" and check.similarity == 0.2
    assert asked and "majestic" in asked[0]


def test_an_answer_in_another_language_is_unsure_not_wrong() -> None:
    check = check_answer("Sie zeichnete einen Tiger, majestätisch, unabhängig und stolz.", TIGER,
                         similarity=0.1)
    assert check.outcome == "unsure" and "language" in check.why


# --- the adversary: whole documents and every candidate ------------------------------------

DOCUMENT = ("The Lumo lamp sells for 25 euros. It costs 12.50 euros to make. Shipping takes "
            "three working days and returns are accepted within 30 days. ") * 30


def test_a_pasted_document_is_never_right() -> None:
    check = check_answer(DOCUMENT, PRICE, similarity=0.9)
    assert check.outcome == "wrong" and "pasted text" in check.why
    long_quote = " ".join(DOCUMENT.split()[:70])  # too long to tell, not yet a dump
    assert call(long_quote, PRICE, 0.9) == "unsure"


@pytest.mark.parametrize("answer", [
    "25 or 30 euros; 12.50 euros.",
    "Somewhere between 20, 25 and 30 euros, costing 12.50 euros.",
    "It sells for 25 euros or 35 euros and costs 12.50 euros.",
])
def test_a_list_of_candidate_values_is_never_right(answer: str) -> None:
    """Unsure when every fact is stated beside other values, wrong when a fact's unit went
    with another value ("25 or 30 euros" states 30 euros, not 25 euros)."""
    assert call(answer, PRICE, 0.9) in ("unsure", "wrong")
    assert call(answer, PRICE, 0.9) != "right"


@pytest.mark.parametrize("answer", [
    "A tiger, a lion, a bear or an eagle; majestic, independent and proud.",
    "Tiger or lion. Majestic, independent and proud.",
    "- tiger\n- lion\n- wolf\n- majestic\n- independent\n- proud",
    "She drew a tiger or a lynx: majestic, independent and proud.",
])
def test_a_list_of_candidate_words_is_never_right(answer: str) -> None:
    assert call(answer, TIGER, 0.9) in ("unsure", "wrong")


@pytest.mark.parametrize(("answer", "expected", "outcome"), [
    # a list of short items joined by `or` offers the fact among candidates: wrong
    ("Tiger or lion. Majestic, independent and proud.", TIGER, "wrong"),
    ("A tiger, a lion, a bear or an eagle; majestic, independent and proud.", TIGER, "wrong"),
    ("25 euros, 30 euros or 35 euros; it costs 12.50 euros.", PRICE, "wrong"),
    # not a list: a bound (`at or below`), or items that are clauses (`whether you pay`)
    ("Keep the water bath at or below 60 degrees Celsius.",
     Expectation(facts=["60 degrees"], question="What is the maximum water bath temperature?",
                 gist="The water bath must not exceed 60 degrees Celsius."), "unsure"),
    ("40 seats, whether you pay monthly or yearly.",
     Expectation(facts=["40 seats"], question="How many seats does the Team plan include?",
                 gist="The Team plan includes 40 seats."), "unsure"),
])
def test_candidates_joined_by_or_are_wrong_and_a_bound_is_no_list(
        answer: str, expected: Expectation, outcome: str) -> None:
    assert call(answer, expected, 0.9) == outcome


def test_a_right_answer_listing_the_gists_own_words_stays_right() -> None:
    assert call("She drew a tiger: tigers are majestic, independent and proud.", TIGER) == "right"


# --- settling, counting, the floor ---------------------------------------------------------


def unsure() -> AnswerCheck:
    return check_answer("Sixty-ish minutes.", Expectation(facts=["hour"], gist="An hour."),
                        similarity=0.9)


def test_a_label_settles_only_the_answer_it_was_written_for() -> None:
    check = unsure()
    assert check.value is None and check.unsettled
    one = AnswerLabel(verdict=1, expected_sha256="e" * 64)
    zero = AnswerLabel(verdict=0, expected_sha256="e" * 64)
    assert settle(check, {"a" * 64: one}, "a" * 64, "e" * 64, "label").value == 1.0
    assert settle(check, {"a" * 64: one}, "b" * 64, "e" * 64, "label").value is None
    assert settle(check, {}, "b" * 64, "e" * 64, "wrong").value == 0.0
    assert settle(check, {"a" * 64: zero}, "a" * 64, "e" * 64, "wrong").value == 0.0


def row(qid: str, check: AnswerCheck | None, repeat: int = 1, text: str = "x") -> QuestionRecord:
    return QuestionRecord(goldset="g", question_id=qid, kind="single_doc", index=0,
                          must_abstain=False, evidence_spans=1, eval_version="1", repeat=repeat,
                          abstention_correct=True, answer_text=text, answer_check=check,
                          metrics={"answer_match": None if check is None else check.value})


def test_an_unsettled_answer_counts_neither_way_and_fails_the_floor_naming_it() -> None:
    right = check_answer("25 euros and 12.50 euros", PRICE, similarity=0.5)
    rows = [row("q1", right), row("q2", unsure())]
    t = tally("answer_match", rows)
    assert (t.k, t.n, t.failures) == (1, 1, 1)
    assert [r.question_id for r in unsettled(rows)] == ["q2"]
    verdict = decide(Floor("answer_match", 0.5), "g", rows)
    assert verdict.outcome == "failed" and "not decided" in verdict.message
    assert "q2" in verdict.message and "unsure = \"wrong\"" in verdict.message
    repeated = decide(Floor("answer_match", 0.5), "g", [*rows, row("q2", unsure(), repeat=2)])
    assert "2 unsure answers not labelled: q2[r1], q2[r2]" in repeated.message
    assert decide(Floor("answer_match", 0.5, xfail="goal"), "g", rows).outcome == "failed"
    wrong = settle(unsure(), {}, None, "e" * 64, "wrong")
    assert decide(Floor("answer_match", 0.5), "g", [rows[0], row("q2", wrong)]
                  ).outcome == "passed"


def test_the_lines_people_read_name_unsure_answers_by_number_never_a_fact() -> None:
    rows = [row("q1", check_answer("25 euros", PRICE, similarity=0.1)),
            row("q2", unsure(), repeat=2)]
    lines = answer_lines(rows, lambda r: f"{r.question_id}[r{r.repeat}]")
    assert "1 wrong, 1 unsure" in lines[0] and "q2[r2]" in lines[1]
    text = "\n".join(lines) + str(rows[0].answer_check.properties())
    assert "12.50" not in text and "euros" not in text
    assert ("answer_match.missing", "2") in rows[0].answer_check.properties()


def test_the_answer_a_label_settles_is_the_one_answer_or_the_one_unsure_one() -> None:
    right = check_answer("25 euros and 12.50 euros", PRICE, similarity=0.5)
    one = [row("q1", unsure(), text="a"), row("q1", unsure(), 2, text="a")]
    assert answer_to_label("q1", one) == (one[0], "")
    mixed = [row("q1", right, text="a"), row("q1", unsure(), 2, text="b")]
    assert answer_to_label("q1", mixed) == (mixed[1], "")
    two = [row("q1", unsure(), text="a"), row("q1", unsure(), 2, text="b")]
    text, why = answer_to_label("q1", two)
    assert text is None and "repeat 1" in why and "repeat 2" in why
    assert answer_to_label("q9", one) == (None, "")


# --- wherever a metric works: kinds, slices, sequential, baselines, shards, suggest, power ----


def graded(qid: str, outcome: str, kind: str = "single_doc", lang: str = "en",
           repeat: int = 1) -> QuestionRecord:
    """A scored row whose answer_match is `right`, `wrong` or `unsure` (not labelled)."""
    check = {"right": check_answer("25 euros and 12.50 euros", PRICE, similarity=0.5),
             "wrong": check_answer("30 euros", PRICE, similarity=0.1),
             "unsure": unsure()}[outcome]
    return row(qid, check, repeat).model_copy(update={"kind": kind, "tags": {"lang": lang}})


def test_an_unsure_answer_holds_back_only_the_kind_and_slice_floors_it_is_in() -> None:
    from pytest_ragate.decision.slice_floors import decide_family
    from pytest_ragate.scoring.slices import sliceable

    rows = [*(graded(f"a{i}", "right") for i in range(6)),
            graded("b1", "unsure", kind="multi_doc", lang="de"), graded("b2", "right",
                                                                       kind="multi_doc")]
    assert decide(Floor("answer_match", 0.5, kind="single_doc"), "g", rows).outcome == "passed"
    held = decide(Floor("answer_match", 0.5, kind="multi_doc"), "g", rows)
    assert held.outcome == "failed" and "not labelled: b1" in held.message
    assert sliceable("answer_match") and sliceable("answer_similarity")
    family = [Floor("answer_match", 0.5, slice=("lang", lang)) for lang in ("en", "de")]
    by = {f.slice[1]: v for f, v in decide_family(family, "g", rows).items() if f.slice}
    assert by["de"].outcome == "failed" and "not labelled: b1" in by["de"].message
    assert "not labelled" not in by["en"].message


def test_sequential_asking_counts_a_decided_answer_and_stops_at_an_unsure_one() -> None:
    """An unsure answer cannot be fed to the floor's test: it stops it, so the floor is
    decided over every question (and then held back by the unsure answer), never early."""
    from pytest_ragate.scoring.stopping import FloorTrack, sequential_metric, share

    assert sequential_metric("answer_match") and sequential_metric("answer_similarity")
    assert share("answer_match", graded("q1", "right")) == (1.0, 1)
    assert share("answer_match", graded("q1", "wrong")) == (0.0, 1)
    assert share("answer_match", graded("q1", "unsure")) is None
    track = FloorTrack.of(metric="answer_match", minimum=0.5, upper=False, population=40,
                          bound=1, alpha=0.05)
    for i in range(3):
        track.feed(graded(f"q{i}", "right"))
    track.feed(graded("q9", "unsure"))
    assert track.stuck is not None and track.stuck.question_id == "q9" and track.units == 3


def test_a_baseline_pairs_answer_match_answer_by_answer() -> None:
    from pytest_ragate.decision.regressions import check_run
    from pytest_ragate.scoring.pairing import BaselineRun

    base = {f"q{i}": graded(f"q{i}", "right").scores() for i in range(30)}
    now = {f"q{i}": graded(f"q{i}", "wrong" if i < 10 else "right").scores() for i in range(30)}
    run = BaselineRun(goldset="g", eval_version="1", source="base.jsonl", scores=base)
    checks = {c.metric: c for c in check_run("g", "1", now, [run], alpha=0.05, min_n=0)}
    drop = checks["answer_match"]
    assert drop.test == "McNemar (exact)" and drop.outcome == "failed"
    assert (drop.pairs, drop.baseline, drop.current) == (30, 1.0, pytest.approx(20 / 30))


def test_a_results_file_carries_the_check_so_decide_and_power_read_it(tmp_path: Path) -> None:
    """What `ragate decide` (shards) and `ragate power` read back from a results file: the
    same answer_match, the unsure answer still holding the floor back."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main
    from pytest_ragate.outputs.saved_runs import read_saved
    from tests.conftest import expected_rows, saved_results, write_goldset

    rows = [graded("q1", "right"), graded("q2", "unsure"), graded("q3", "wrong")]
    rows = [r.model_copy(update={"goldset": "mini", "eval_version": "7"}) for r in rows]
    path = tmp_path / "r.jsonl"
    path.write_text(saved_results(rows))
    read = read_saved(path).rows
    assert [r.answer_check for _, r in read] == [r.answer_check for r in rows]
    floor = Floor("answer_match", 0.5)
    assert decide(floor, "mini", [r for _, r in read]).message == decide(
        floor, "mini", rows).message
    facts = {"q1": ["gist"], "q2": ["gist"], "q3": ["gist"]}
    expected = [{**e, "facts": facts[e["question_id"]]} if e["question_id"] in facts else e
                for e in expected_rows()]
    root = write_goldset(tmp_path / "gs", expected=expected,
                         floors="[floors]\nanswer_match = 0.5\n")
    shown = CliRunner().invoke(main, ["power", str(root), "--results", str(path)])
    assert shown.exit_code == 0, shown.output
    assert any(line.split()[:3] == ["answer_match", "0.50", "0.50"]
               for line in shown.output.splitlines()), shown.output


def test_the_first_run_figures_and_suggest_show_answer_match_over_decided_answers() -> None:
    from pytest_ragate.outputs.reports import suggestion_lines
    from pytest_ragate.scoring.suggest import figures

    rows = [*(graded(f"r{i}", "right") for i in range(12)), graded("w", "wrong"),
            graded("u", "unsure")]
    found = figures(rows)
    match = next(f for f in found if f.metric == "answer_match")
    assert (match.tally.k, match.tally.n, match.tally.failures) == (12, 13, 1)  # unsure: apart
    assert match.suggested is not None and 0 < match.suggested < 12 / 13
    assert any(line.startswith("answer_match = ") for line in suggestion_lines("g", found))


# --- bad input: one clear error each, never quoting a fact ------------------------------------

def load_problems(tmp_path: Path, facts_of: dict, floors: str = "",
                  labels: list[dict] | None = None) -> list[str]:
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError
    from tests.conftest import BASE_TOML, expected_rows, jsonl, write_goldset

    expected = [{**row, **facts_of.get(row["question_id"], {})} for row in expected_rows()]
    toml = BASE_TOML + ('\n[judge]\nlabels = "labels.jsonl"\n' if labels is not None else "")
    root = write_goldset(tmp_path / "gs", toml=toml, expected=expected, floors=floors)
    if labels is not None:
        (root / "labels.jsonl").write_text(jsonl(labels))
    try:
        load_goldset(root)
    except GoldsetError as error:
        return [str(p) for p in error.problems]
    return []


SECRET = "Zorblaxquatloos"


@pytest.mark.parametrize(("facts", "field", "says"), [
    ({"facts": [""]}, "facts[0]", "is empty"),
    ({"facts": [[f"{SECRET} ok", f"/{SECRET}(/"]]}, "facts[0]", "does not compile"),
    ({"facts": [f"/({SECRET})?/"]}, "facts[0]", "matches the empty string"),
    ({"facts": [[]]}, "facts[0]", "empty list"),
    ({"facts": [25]}, "facts[0]", "not a text"),
    ({"facts": [SECRET], "forbid": [SECRET.upper()]}, "forbid[0]", "also facts[0]"),
])
def test_a_bad_fact_is_one_error_naming_its_place_and_never_its_text(
        tmp_path: Path, facts: dict, field: str, says: str) -> None:
    problems = load_problems(tmp_path, {"q1": facts})
    assert len(problems) == 1, problems
    assert f"[q1] {field}" in problems[0] and says in problems[0]
    assert SECRET.casefold() not in problems[0].casefold()


def test_facts_on_a_question_that_must_abstain_and_a_floor_without_facts(
        tmp_path: Path) -> None:
    problems = load_problems(tmp_path, {"q4": {"facts": ["anything"]},
                                        "q1": {"facts": ["turn"]}},
                             floors="[floors]\nanswer_match = 0.5\n")
    assert any("[q4] facts: a question that must be abstained from" in p for p in problems)
    assert any("floors.answer_match: 2 answerable questions of its population have no "
               "facts: q2, q3" in p for p in problems), problems


def test_an_answer_match_label_needs_the_answer_it_settles_and_a_verdict(
        tmp_path: Path) -> None:
    problems = load_problems(tmp_path, {"q1": {"facts": ["turn"]}}, labels=[
        {"question_id": "q1", "metric": "answer_match", "verdict": 1},
        {"question_id": "q2", "metric": "answer_match", "score": 0.5, "answer_sha256": "a" * 64},
    ])
    assert any("[q1] answer_sha256: an answer_match label settles one answer" in p
               for p in problems)
    assert any("[q2] score: an answer_match label is a verdict" in p for p in problems)
    fine = load_problems(tmp_path / "ok", {"q1": {"facts": ["turn"]}}, labels=[
        {"question_id": "q1", "metric": "answer_match", "verdict": 1, "answer_sha256": "a" * 64},
        {"question_id": "q1", "metric": "answer_match", "verdict": 0, "answer_sha256": "b" * 64},
    ])
    assert fine == []


# --- right means right (issue 45): every way an answer states a fact without committing to it --

FEE = Expectation(facts=[["25 cents", "€0.25"]], forbid=["40 cents"],
                  gist="The late-payment fee is 25 cents per day.",
                  question="What is the late-payment fee?")
CHAIR = Expectation(facts=[["Alice", "Alice Martin"]], forbid=["Bob chaired", "Bob chairs"],
                    gist="Alice Martin chaired the budget meeting.",
                    question="Who chaired the budget meeting?")
CITY = Expectation(facts=["Lyon"], forbid=["Lille"], gist="The summit is held in Lyon.",
                   question="Where is the summit held?")
PLAN = Expectation(facts=[["25 euros", "€25"]], forbid=["30 euros"],
                   gist="The Pro plan costs 25 euros per month.",
                   question="How much does the Pro plan cost?")


def outcome(answer: str, expected: Expectation) -> str:
    return check_answer(answer, expected, similarity=0.9).outcome


@pytest.mark.parametrize(("answer", "expected"), [
    ("Alice did not chair the meeting.", CHAIR), ("25 cents is not the fee.", FEE),
    ("Lyon was ruled out.", CITY), ("Alice never chaired it.", CHAIR),
    ("It is untrue that the fee is 25 cents.", FEE),
    ("The summit moved to Paris instead of Lyon.", CITY),
])
def test_a_negation_after_or_around_the_fact_denies_it(answer: str,
                                                        expected: Expectation) -> None:
    assert outcome(answer, expected) == "wrong"


@pytest.mark.parametrize("answer", [
    "There is no information in the provided context confirming that the fee is 25 cents.",
    "I don't know whether the fee is 25 cents.", "Is it 25 cents? The context does not say.",
])
def test_a_refusal_that_restates_the_fact_is_never_right(answer: str) -> None:
    assert outcome(answer, FEE) != "right"


@pytest.mark.parametrize(("answer", "expected"), [
    ("I think Alice chaired the meeting.", CHAIR), ("Maybe Alice Martin.", CHAIR),
    ("The fee is probably 25 cents.", FEE), ("Lyon, perhaps.", CITY),
    ("It might be 25 cents.", FEE),
])
def test_a_hedged_fact_is_unsure(answer: str, expected: Expectation) -> None:
    assert outcome(answer, expected) == "unsure"


def test_a_hedge_the_gist_shares_is_no_doubt() -> None:
    maybe = Expectation(facts=["Lyon"], gist="The summit is probably held in Lyon.")
    assert outcome("It is probably in Lyon.", maybe) == "right"


@pytest.mark.parametrize("answer", [
    "It costs over 25 euros a month.", "It is up to 25 euros per month.",
    "At least 25 euros a month.", "25+ euros a month.", "About 25 euros a month.",
    "25 euros or more a month.",
])
def test_a_bounded_value_is_never_right(answer: str) -> None:
    assert outcome(answer, PLAN) in ("unsure", "wrong")
    assert outcome(answer, PLAN) == "unsure" or "+" in answer  # `25+ euros` is not `25 euros`


def test_a_bound_the_gist_gives_too_is_the_value() -> None:
    hours = Expectation(facts=["100 hours"], gist="They aim to collect over 100 hours.")
    assert outcome("Over 100 hours.", hours) == "right"
    later = Expectation(facts=["3.10"], gist="It requires Python 3.10 or later.")
    assert outcome("Python 3.10 or later.", later) == "right"
    assert outcome("It requires Python 3.10+.", replace(later, plain=False)) == "right"


@pytest.mark.parametrize(("answer", "fact"), [
    ("Churn changed by -2.5%.", "2.5 percent"), ("It fell to minus 25 degrees.", "25 degrees"),
    ("The change was +2.5%.", "2.5 percent"),
])
def test_a_value_keeps_its_sign(answer: str, fact: str) -> None:
    expected = Expectation(facts=[fact], gist=f"It changed by {fact}.")
    assert outcome(answer, expected) != "right"


@pytest.mark.parametrize("answer", [
    "The Pro plan costs 25 euro cents per month.", "The Pro plan costs 25 euros per year.",
    "The Pro plan costs 25 euros per user per month.",
])
def test_another_unit_subdivision_or_rate_is_wrong(answer: str) -> None:
    assert outcome(answer, PLAN) == "wrong"


@pytest.mark.parametrize(("answer", "fact", "call"), [
    ("Release 4.2 requires Python 3.1.", "3.10", "wrong"),
    ("It needs Python 3.80.", "3.8", "wrong"), ("bcrypt 5.0.0", "5.0.0", "right"),
    ("The lockfile pins bcrypt v5.0.0.", "5.0.0", "right"),
    ("Chart v2.14.0b2 changed it.", "2.14.0b2", "right"),
    ("Chart 2.14.0-beta.2 changed it.", "2.14.0b2", "right"),
    ("Chart 2.14.0 changed it.", "2.14.0b2", "wrong"), ("bcrypt 5.0.1", "5.0.0", "wrong"),
    ("TLS v1.0 is deprecated.", "TLS 1.0", "right"),
])
def test_a_version_is_one_token(answer: str, fact: str, call: str) -> None:
    # how a value matches, apart from the plain-statement check (`lockfile`, `pins`)
    expected = Expectation(facts=[fact], gist=f"It is {fact}.", plain=False)
    assert outcome(answer, expected) == call


@pytest.mark.parametrize(("answer", "fact", "call"), [
    ("It starts at 10:30 UTC.", "10:30", "right"), ("It starts at 10:45.", "10:30", "wrong"),
    ("Stand-up is at 9:15.", "09:15", "right"),
    ("Write to Security@Example.com.", "security@example.com", "right"),
    ("Write to security@example.org.", "security@example.com", "wrong"),
    ("See https://docs.example.com/api/v2/auth.", "https://docs.example.com/api/v2/auth",
     "right"),
    ("See [the docs](https://docs.example.com/api/v2/auth).",
     "https://docs.example.com/api/v2/auth", "right"),
    ("See https://docs.example.com/api/v1/auth.", "https://docs.example.com/api/v2/auth",
     "wrong"),
    ("Dr. Smith signed it.", "Dr. Smith", "right"), ("Dr Smith signed it.", "Dr. Smith", "right"),
])
def test_times_addresses_urls_and_abbreviations_are_single_tokens(answer: str, fact: str,
                                                                  call: str) -> None:
    expected = Expectation(facts=[fact], gist=f"It is {fact}.", plain=False)
    assert outcome(answer, expected) == call


@pytest.mark.parametrize("answer", [
    "Alice's assistant chaired the meeting.", "Alice Martin's team chaired the meeting.",
    "The assistant of Alice chaired it.", "The Alice-led committee chaired it.",
])
def test_the_fact_inside_a_longer_possessive_or_compound_phrase_is_never_right(
        answer: str) -> None:
    assert outcome(answer, CHAIR) == "unsure"


def test_a_possessive_that_is_the_fact_itself_stays_right() -> None:
    answer = "Alice Martin chaired it; her assistant took the minutes."
    assert outcome(answer, replace(CHAIR, plain=False)) == "right"
    assert '"assistant" is a word' in check_answer(answer, CHAIR, similarity=0.9).why


@pytest.mark.parametrize(("answer", "expected"), [
    ("It was Alice. Or maybe Bob.", CHAIR), ("Possibly Lyon, but it may have been Lille.", CITY),
    ("Alice chaired it. Or Carol.", CHAIR),
])
def test_candidates_across_sentences_are_never_right(answer: str,
                                                      expected: Expectation) -> None:
    assert outcome(answer, expected) != "right"


@pytest.mark.parametrize(("answer", "expected"), [
    ("No wonder people complain: the Pro plan is 30 euros now.", PLAN),
    ("Nobody doubts that Bob chairs the board.", CHAIR),
    ("No one doubts Bob chairs the board.", CHAIR),
])
def test_a_pseudo_negation_never_hides_a_forbidden_statement(answer: str,
                                                              expected: Expectation) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "wrong" and check.forbidden


@pytest.mark.parametrize(("answer", "call"), [
    ("The late fee is n\u200bot 25 cents.", "wrong"), ("The fee is 2\u200b5 cents.", "right"),
    ("The fee is 25\u00a0cents.", "right"), ("The fee is \uff12\uff15 cents.", "right"),
    ("The late fee is n\u043et 25 cents.", "unsure"),
])
def test_zero_width_and_look_alike_letters_read_as_a_reader_sees_them(answer: str,
                                                                      call: str) -> None:
    check = check_answer(answer, FEE, similarity=0.9)
    assert check.outcome == call
    if call == "unsure":
        assert "alphabets" in check.why


@pytest.mark.parametrize("answer", [
    "See https://docs.example.com/install#linux and `pip install ragate-tool==2.0`.",
    "## Install\n- [guide](https://example.com/a/b/c)\n- `make setup`\n- `make test`",
])
def test_a_url_or_markdown_answer_is_not_said_to_be_in_another_language(answer: str) -> None:
    expected = Expectation(facts=["version 3"], gist="Install version 3 with pip.")
    assert "language" not in check_answer(answer, expected, similarity=0.1).why


def test_a_fact_that_cannot_be_matched_as_written_is_warned_of() -> None:
    from pytest_ragate.scoring.answer_text import alternative_warning

    assert alternative_warning("Smith. Jones") is not None
    assert alternative_warning("10:30") is None and alternative_warning("Dr. Smith") is None
    assert alternative_warning("n\u043et") is not None
    assert alternative_warning("/a.b/") is None and alternative_warning("25 euros") is None


def test_validate_warns_of_each_fact_that_cannot_be_stated_by_its_place_never_its_text(
        tmp_path: Path) -> None:
    from pytest_ragate.goldsets.forewarnings import fact_lines
    from pytest_ragate.goldsets.loader import load_goldset
    from tests.conftest import expected_rows, write_goldset

    facts = {"q1": {"facts": [[f"{SECRET}. Jones", "ok"]], "forbid": [f"n\u043et {SECRET}"]},
             "q2": {"facts": ["10:30", "Dr. Smith", "support@example.com"]}}
    expected = [{**row, **facts.get(row["question_id"], {})} for row in expected_rows()]
    lines = fact_lines(load_goldset(write_goldset(tmp_path / "gs", expected=expected)))
    assert [line.split(" ", 3)[1:3] for line in lines] == [["[q1]", "facts[0][0]"],
                                                            ["[q1]", "forbid[0]"]], lines
    assert "split it into two facts" in lines[0] and "alphabet" in lines[1]
    assert all(SECRET.casefold() not in line.casefold() for line in lines)


@pytest.mark.parametrize(("answer", "expected", "call"), [
    ("Lyon hosts a fair that week, so the summit is not in Lyon.", CITY, "unsure"),
    ("The notes do not say why, but the fee is 25 cents.", FEE, "unsure"),  # not a refusal of it
    ("Dr. Mensah's registrar chaired it.",
     Expectation(facts=["Mensah"], gist="Dr. Mensah chaired it."), "unsure"),
    ("It starts at 10:30 p.m.", Expectation(facts=["10:30"], gist="It starts at 10:30."),
     "wrong"),
    ("It dropped 2.5% in Q3.", Expectation(facts=["2.5%"], gist="It rose by 2.5% in Q3."),
     "wrong"),
    ("The Lyon Part-Dieu office hosts it.", CITY, "unsure"),
    ("Reserves changed by \u2212£1.2 million.",
     Expectation(facts=["£1.2 million"], gist="Reserves grew by £1.2 million."), "wrong"),
])
def test_what_the_held_out_adversary_found(answer: str, expected: Expectation,
                                           call: str) -> None:
    """Classes the held-out adversarial set found after the rule was frozen (issue 45):
    a fact stated and denied, a refusal parted from the fact by `but`, the owner of a word
    the gist lacks, p.m., a change in the other direction, a longer name, a minus before a
    currency."""
    assert outcome(answer, expected) == call


# --- a fact stated plainly (`Expectation.plain`) -------------------------------------------

OUTAGE = Expectation(facts=["47 minutes"], gist="The 3 March outage lasted 47 minutes.",
                     question="How long did the 3 March outage last?", plain=True)
PIPELINE = Expectation(facts=[["Python 3.10", "3.10"]],
                       gist="The analysis pipeline requires Python 3.10.",
                       question="Which Python version does the pipeline require?",
                       plain=True)
CREDIT = Expectation(facts=[["25%", "25 percent"]],
                     gist="Below 99.0% monthly uptime, customers receive a 25% service credit.",
                     question="What service credit applies below 99.0% uptime?", plain=True)


@pytest.mark.parametrize(("expected", "answer", "word"), [
    (OUTAGE, "The 3 March outage lasted north of 47 minutes.", "north of"),  # word, link, fact
    (OUTAGE, "The outage lasted just shy of 47 minutes.", "shy of"),
    (OUTAGE, "The outage lasted from 47 minutes.", "from"),  # a link the gist lacks
    (PIPELINE, "The analysis pipeline requires Python 3.10 or newer.", "or newer"),  # link after
    (CREDIT, "Below 99.0% uptime, customers are charged a 25% surcharge.", "surcharge"),
    (OUTAGE, "The outage was short, though some lasted 47 minutes.", "though"),  # concession
])
def test_a_word_beside_a_fact_that_the_gist_and_question_lack_leaves_it_unsure(
        expected: Expectation, answer: str, word: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert (check.outcome, f'"{word}" qualifies fact 1' in check.why) == ("unsure", True), \
        check.why


@pytest.mark.parametrize(("expected", "answer"), [
    (OUTAGE, "It lasted 47 minutes."),
    (OUTAGE, "The outage lasted 47 minutes on 3 March."),  # `on`: a neutral link
    (PIPELINE, "It requires Python 3.10."),
    (Expectation(facts=["40 students"], gist="The seminar takes a minimum of 40 students.",
                 plain=True), "A minimum of 40 students."),  # the gist's own modifier
    (CREDIT, "They receive a 25% service credit below 99.0% uptime."),
])
def test_a_fact_beside_the_gists_and_questions_own_words_stays_right(
        expected: Expectation, answer: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "right", check.why


# --- right only as a plain statement (`PLAIN`, `_unplain`) -------------------------------------

SIGNER = Expectation(facts=["HR director"], gist="The HR director signs off on them.",
                     question="Who signs off on parental leave requests longer than 12 weeks?")
CARRY = Expectation(facts=["5 days"], gist="You can carry forward 5 days.",
                    question="How many days of leave can I carry forward?")


@pytest.mark.parametrize(("expected", "answer", "word"), [
    # a negation out of every list's reach, a retraction, a misconception, a refusal
    (SIGNER, "Contrary to what many assume, the HR director has no role in signing them off.",
     "contrary"),
    (SIGNER, "That the HR director signs off on them is a common misconception.", "common"),
    (SIGNER, "My sources stop short of saying the HR director signs off on them.", "sources"),
    # a bound, a hedge, an approximation, a rival candidate in a sentence of its own
    (CARRY, "You can carry forward 5 days, give or take.", "give"),
    (CARRY, "Something like 5 days, I'd imagine.", "something"),
    (SIGNER, "The HR director signs off on them. In small teams it could equally be the team "
             "lead.", "small"),
    # a stale value and an other unit, each in words no list holds
    (CARRY, "You can carry forward 5 days, a figure since superseded.", "figure"),
    # a modal, a past before the past, hearsay, a rate: closed-class words kept off the list
    (SIGNER, "The HR director would sign off on them.", "would"),
    (SIGNER, "The HR director had signed off on them.", "had"),
    (SIGNER, "They say the HR director signs off on them.", "say"),
    (CARRY, "You can carry forward 5 days each.", "each"),
])
def test_a_word_the_rule_does_not_recognise_as_plain_leaves_a_stated_fact_unsure(
        expected: Expectation, answer: str, word: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert (check.outcome, f'"{word}" is a word' in check.why) == ("unsure", True), check.why
    assert check_answer(answer, replace(expected, plain=False),
                        similarity=0.9).outcome != "unsure" or word in ("small",)


@pytest.mark.parametrize(("expected", "answer"), [
    (SIGNER, "The HR director."),  # a bare answer
    (SIGNER, "The HR director signs off on them."),  # the gist's own words
    (SIGNER, "Requests longer than 12 weeks: the HR director."),  # the question's words
    (SIGNER, "She said the HR director signs off on them."),  # a reporting verb of `PLAIN`
    (TIGER, "A tiger: she described tigers as majestic, independent and proud."),  # the facts
    (CARRY, "You can carry forward 5 days."),  # `can`: an auxiliary, not a hedging modal
])
def test_a_plain_statement_of_the_facts_stays_right(expected: Expectation, answer: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "right", check.why


# --- each fact in its role (`_swapped`) ----------------------------------------------------------

RETRO = Expectation(facts=["Priya", "Tom"],
                    gist="Priya chaired the retro and Tom took the minutes.",
                    question="Who chaired the sprint retro and who took the minutes?")
LAMP = Expectation(facts=["25 euros", "12.50 euros"],
                   gist="It sells for 25 euros and costs 12.50 euros to make.",
                   question="What does the desk lamp sell for, and what does it cost to make?")
DIGITS = Expectation(facts=[["under 1 percent", "/(under|below)\\s?(one|1)\\s?(percent|%)/"],
                            "1.4 percent"],
                     gist="Under one percent on TI-digits; about 1.4 percent on the meeting "
                          "digits.", question="What digit error rates are reported?")


@pytest.mark.parametrize(("expected", "answer", "word"), [
    (RETRO, "Tom chaired the retro and Priya took the minutes.", "chaired"),
    (RETRO, "Minutes: Priya. Chair: Tom.", "minutes"),  # a label and its value across a colon
    (RETRO, "Priya took the minutes; Tom chaired.", "took"),
    (LAMP, "It sells for 12.50 euros and costs 25 euros to make.", "sells"),
    (LAMP, "Costs 25 euros to make, sells for 12.50 euros.", "costs"),
    (LAMP, "Selling price 12.50 euros, cost to make 25 euros.", "selling"),
    (DIGITS, "About 1.4 percent on TI-digits and under one percent on the meeting digits.", "ti"),
    (Expectation(facts=["25 euros", "15"], gist="It sells for 25 euros and costs 15 euros to "
                 "make."), "It sells for 15 euros and costs 25 euros to make.", "sells"),  # no unit
    (Expectation(facts=["Monday", "Friday"], gist="The review is on Monday and the release on "
                 "Friday."), "Release Monday, review Friday.", "release"),  # weekdays
])
def test_facts_that_swap_roles_are_never_right(expected: Expectation, answer: str,
                                               word: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert (check.outcome, f'"{word}" goes with fact' in check.why) == ("unsure", True), \
        check.why
    assert "swapped" in check_answer(answer, replace(expected, plain=False),
                                     similarity=0.9).why  # not the plain-statement check's


@pytest.mark.parametrize("answer", [
    "Tom and Priya chaired and took the minutes.",  # respectively? which is which
    "Tom and Priya: chair and minutes.",
    "Tom, Priya.",
])
def test_facts_with_roles_side_by_side_out_of_the_gists_order_are_never_right(
        answer: str) -> None:
    check = check_answer(answer, RETRO, similarity=0.9)
    assert (check.outcome, "side by side" in check.why) == ("unsure", True), check.why


@pytest.mark.parametrize(("expected", "answer"), [
    (RETRO, "Priya chaired the retro and Tom took the minutes."),
    (RETRO, "Tom took the minutes; Priya chaired."),  # reordered, each word with its fact
    (RETRO, "Tom took the minutes and Priya chaired the retro."),
    (RETRO, "Chair: Priya. Minutes: Tom."),
    (RETRO, "Priya and Tom."),  # side by side in the gist's order
    (RETRO, "Tom took the minutes, and Priya chaired the retro."),  # `, and`: two clauses
    (LAMP, "It costs 12.50 euros to make, and it sells for 25 euros."),
    (LAMP, "It costs 12.50 euros to make and sells for 25 euros."),
    (Expectation(facts=["20 percent", "3 months"], question="What cut, for how long?",
                 gist="Every department has to cut 20 percent, for 3 months."),
     "A 20 percent cut in every department for 3 months."),  # facts of different kinds
])
def test_facts_reordered_with_their_roles_stay_right(expected: Expectation,
                                                     answer: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "right", check.why


OFFICE = Expectation(facts=["Lisbon"], gist="The board approves the Lisbon office and its colour "
                     "scheme.", question="Which office does the board back?")


@pytest.mark.parametrize("answer", [
    "The board approved the Lisbon office.",  # -ed
    "The board is approving the Lisbon office and its color scheme.",  # -ing, US spelling
    "Lisbon: the board approves offices and colours.",  # -s
    "The Lisbon office was approved by the board.",  # the passive: `by` and the gist's verb
])
def test_the_gists_words_in_another_inflection_or_spelling_stay_right(answer: str) -> None:
    check = check_answer(answer, OFFICE, similarity=0.9)
    assert check.outcome == "right", check.why


@pytest.mark.parametrize(("answer", "word"), [
    ("The board disapproved the Lisbon office.", "disapproved"),  # a prefix is no inflection
    ("The board approver backs the Lisbon office.", "approver"),  # nor is -er
    ("The board backs the Lisbon office colourless.", "colourless"),  # nor -less
])
def test_a_suffix_or_prefix_that_changes_the_word_leaves_it_unsure(answer: str,
                                                                    word: str) -> None:
    check = check_answer(answer, OFFICE, similarity=0.9)
    assert (check.outcome, f'"{word}" is a word' in check.why) == ("unsure", True), check.why


def test_an_irregular_verbs_other_form_is_the_same_word() -> None:
    check = check_answer("The minutes were taken by Tom; Priya chaired.", RETRO, similarity=0.9)
    assert check.outcome == "right", check.why
    check = check_answer("Priya chaired; Tom had taken the minutes.", RETRO, similarity=0.9)
    assert (check.outcome, '"had" is a word' in check.why) == ("unsure", True), check.why


# --- each statement in its clause (`_unbound`) --------------------------------------------------

REFUND = Expectation(facts=["14 days"], gist="A customer can request a refund within 14 days of "
                     "purchase; refunds are paid within 30 days.",
                     question="Within how many days of purchase can a customer request a refund?")
SEATS = Expectation(facts=["10 seats", "50 seats"], gist="The Team plan includes 10 seats and the "
                    "Business plan includes 50 seats.",
                    question="How many seats do the Team and Business plans include?")
PRIORITY = Expectation(facts=["1 hour", "4 hours"], gist="Priority 1 tickets get a first response "
                       "within 1 hour and Priority 2 tickets within 4 hours.",
                       question="What are the first-response times for Priority 1 and 2 tickets?")
MEMBERSHIP = Expectation(facts=["30 euros"], gist="The annual membership fee for 2024 is 30 euros, "
                         "up from 25 euros in 2023.",
                         question="What is the annual membership fee for 2024?")
BACKUP = Expectation(facts=["02:00"], gist="The nightly backup runs at 02:00 UTC; the weekly full "
                     "backup runs at 04:00 UTC on Sundays.",
                     question="At what time does the nightly backup run?")
RETENTION = Expectation(facts=["365 days"], gist="Audit logs are kept for 365 days; application "
                        "logs are kept for 30 days.", question="How long are audit logs kept?")
RAISE = Expectation(facts=["12 euros"], gist="The Pro plan's monthly price went up to 12 euros "
                    "from 9 euros.", question="What is the new monthly price of the Pro plan?")
RISE = Expectation(facts=["3 euros"], gist="The Pro plan's monthly price rose by 3 euros, from 9 "
                   "euros to 12 euros.", question="By how much did the monthly price rise?")
VENDOR = Expectation(facts=["Halcyon"], gist="The committee chose Halcyon for the new CRM over "
                     "Brightline.", question="Which vendor did the committee choose for the CRM?")
DISCOUNT = Expectation(facts=["40%"], gist="Nonprofits get a 40% discount on the list price; "
                       "education customers get 25%.", question="What discount do nonprofits get?")


@pytest.mark.parametrize(("expected", "answer", "why"), [
    # a word of the gist's other clause beside the fact (`_misplaced`)
    (REFUND, "Refunds are paid within 14 days.", '"paid" is said of fact 1'),
    (SEATS, "The Business plan includes 10 seats and the Team plan includes 50 seats.",
     '"business" goes with fact 1'),  # `_swapped` reads roles by clause, before this rule
    (Expectation(facts=["Alice", "Bob"], gist="Alice chaired the 3 June budget meeting and Bob "
                 "took the minutes."), "Alice and Bob took the minutes; Alice chaired the 3 June "
     "budget meeting.", '"took" is said of fact 1'),  # facts joined by `and` share the verb
    # a value the gist puts in another clause than the fact (`_apart`)
    (PRIORITY, "Priority 2: 1 hour. Priority 1: 4 hours.", "together"),
    (MEMBERSHIP, "The annual membership fee was 30 euros in 2023.", "together"),
    # a value with no word of its own clause to say of what (`_anchored`)
    (BACKUP, "The nightly backup runs at 02:00 UTC and at 04:00 UTC.", "no word"),
    (RETENTION, "Audit logs are kept for 365 days and for 30 days.", "no word"),
    # another linking word before a fact or value than the gist's (`_linked`)
    (RAISE, "The Pro plan's monthly price went up from 12 euros.", '"from" links fact 1'),
    (RISE, "The Pro plan's monthly price rose to 3 euros.", '"to" links fact 1'),
    (VENDOR, "The committee chose Halcyon and Brightline for the new CRM.",
     '"and" links value brightline'),
    (VENDOR, "The committee chose Brightline for the new CRM over Halcyon.",
     '"chose" links value brightline'),
    # `of` after an amount the gist follows with what it is (`_followed`)
    (DISCOUNT, "Nonprofits get 40% of the list price.", '"of" follows fact 1'),
])
def test_a_statement_out_of_its_gist_clause_is_never_right(expected: Expectation, answer: str,
                                                            why: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert (check.outcome, why in check.why) == ("unsure", True), check.why


@pytest.mark.parametrize(("expected", "answer"), [
    (REFUND, "A customer can request a refund within 14 days of purchase; refunds are paid "
             "within 30 days."),
    (REFUND, "Within 14 days of purchase."),
    (SEATS, "The Team plan includes 10 seats and the Business plan includes 50 seats."),
    (PRIORITY, "Priority 1 tickets get a first response within 1 hour and Priority 2 tickets "
               "within 4 hours."),
    (MEMBERSHIP, "The annual membership fee for 2024 is 30 euros, up from 25 euros in 2023."),
    (BACKUP, "The nightly backup runs at 02:00 UTC; the weekly full backup runs at 04:00 UTC on "
             "Sundays."),
    (RAISE, "It went up to 12 euros."),
    (VENDOR, "The committee chose Halcyon over Brightline."),
    (DISCOUNT, "Nonprofits get a 40% discount."),
    (Expectation(facts=["billing@acme.io"], gist="Billing questions go to billing@acme.io; "
                 "technical questions go to support@acme.io."),
     "billing@acme.io (technical questions go to support@acme.io)."),  # an aside of its own
    (Expectation(facts=["0455560", "NLSSD", "M browser"], gist="In his user directory, number "
                 "0455560, in a folder NLSSD, under M browser."),
     "Directory 0455560 → NLSSD → M browser."),  # facts each in a phrase of their own
])
def test_a_statement_in_its_gist_clause_stays_right(expected: Expectation, answer: str) -> None:
    check = check_answer(answer, expected, similarity=0.9)
    assert check.outcome == "right", check.why


FEE = Expectation(facts=["25 cents"], forbid=["30 cents"], gist="The card transaction fee is "
                  "25 cents.", question="What is the card transaction fee?")


@pytest.mark.parametrize("answer", [
    "The card transaction fee is 25 cents [1].",
    "The card transaction fee is 25 cents [doc 3][4].",
    "Sure! The card transaction fee is 25 cents.",
    "Thanks for reaching out! The card transaction fee is 25 cents. Is there anything else I "
    "can help you with?",
    "According to the fee notes, the card transaction fee is 25 cents.",
    "Based on the provided context, the card transaction fee is 25 cents.",
    "The card transaction fee is 25 cents, according to the fee schedule.",
    "Answer: 25 cents",
])
def test_the_frame_a_system_writes_around_a_statement_is_not_read_as_its_words(
        answer: str) -> None:
    """Citation markers, greetings and politeness formulas, and an attribution to a document
    state nothing of the fact (`_unframed`)."""
    assert call(answer, FEE, 0.9) == "right"


@pytest.mark.parametrize(("answer", "outcome"), [
    ("According to a rumour, the card transaction fee is 25 cents.", "unsure"),
    ("According to the old draft notes, the card transaction fee is 25 cents.", "unsure"),
    ("The card transaction fee is 25 cents [unverified].", "unsure"),
    ("Sure, the card transaction fee is probably 25 cents.", "unsure"),
    ("Not sure! The card transaction fee is 25 cents.", "unsure"),
    ("The card transaction fee is 25 cents [30 cents].", "wrong"),
    ("The card transaction fee is 25 [30] cents.", "wrong"),  # no citation: 30 cents
    ("The card transaction fee[2] is 25 cents.", "unsure"),  # an index, not a citation
    ("Per month, the card transaction fee is 25 cents.", "unsure"),
])
def test_a_frame_that_may_change_the_statement_is_read(answer: str, outcome: str) -> None:
    """A source the rule cannot vouch for, a bracket that is no citation number, a formula
    that is not the whole sentence keep their words."""
    assert call(answer, FEE, 0.9) == outcome


@pytest.mark.parametrize(("answer", "language"), [
    # another language: said so, whichever check found it unsure first
    ("Sie stieg von 82,7 Prozent auf 85,1 Prozent.", True),
    ("Er bot seine 18-Gigabyte-Festplatte an, die er nicht benutzte.", True),
    ("Der Oktopus war viel teurer als erwartet und musste ersetzt werden.", True),
    # a terse English fragment is no other language
    ("Windows ARM wheels first shipped in release 1.8.0.", False),
    ("St. Mary-le-Bow Clinic.", False),
    ("Half past ten, Central European Time.", False),
])
def test_an_unsure_answer_in_another_language_says_so_and_a_fragment_does_not(
        answer: str, language: bool) -> None:
    expected = Expectation(facts=["85.1 percent"], gist="It improved from 82.7 percent to 85.1 "
                           "percent.", question="How much did the recognition rate improve?")
    check = check_answer(answer, expected, similarity=0.5)
    assert check.outcome != "right"
    if check.outcome == "unsure":
        assert ("not in the expected answer's language" in check.why) == language, check.why


def test_a_fact_stated_in_another_language_is_unsure_for_its_language_not_a_word() -> None:
    expected = Expectation(facts=["18 gigabyte"], question="What did he offer?",
                           gist="He offered his 18 gigabyte drive, which he was not using.")
    check = check_answer("Er bot seine 18 Gigabyte Festplatte an, die er nicht benutzte.",
                         expected, similarity=0.5)
    assert check.outcome == "unsure"
    assert check.why.startswith("states fact 1, but the answer is not in the expected "
                                "answer's language"), check.why


HOUR = Expectation(facts=["an hour"], gist="Grooming one dog takes almost an hour.",
                   question="How long does grooming one dog take?")
DATA = Expectation(facts=["100 hours"], gist="They want over 100 hours of recordings.",
                   question="How much data do they want?")


@pytest.mark.parametrize(("answer", "expected", "outcome"), [
    # the gist's bound or approximation in another wording of the same group (`WORDINGS`)
    ("Nearly an hour.", HOUR, "right"),
    ("More than 100 hours of recordings.", DATA, "right"),
    ("Above 100 hours of recordings.", DATA, "right"),
    # another group, or a bound the gist does not give, is still read
    ("Roughly an hour.", HOUR, "unsure"),
    ("Less than 100 hours of recordings.", DATA, "unsure"),
    ("At least 100 hours of recordings.", DATA, "unsure"),
    # words that affirm the statement as made
    ("Yes, definitely over 100 hours of recordings.", DATA, "right"),
    ("Exactly an hour.", HOUR, "unsure"),  # `almost` is the gist's: exactly is not almost
])
def test_a_bound_or_approximation_worded_otherwise_is_the_gists(
        answer: str, expected: Expectation, outcome: str) -> None:
    assert call(answer, expected, 0.9) == outcome


def test_an_attribution_holds_no_word_of_the_gist_only() -> None:
    """`the old schedule` where the gist tells the old fee from the new: the source's words
    must be a document's or the question's, not the gist's."""
    expected = Expectation(facts=["25 euros"], question="What is the fee?",
                           gist="The old fee was 30 euros; the new fee is 25 euros.")
    assert call("According to the old schedule, the fee is 25 euros.", expected, 0.9) != "right"
    assert call("According to the fee schedule, the fee is 25 euros.", expected, 0.9) == "right"
