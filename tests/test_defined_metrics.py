"""Metrics a project defines (issue 48 item 1): `@ragate.metric("mentions_product")` in
conftest.py, its value saved in each question's row, gated like a built-in metric's, and
failing closed: a function that raises, returns another type or a value outside [0, 1] is a
gap of that question (its floors not decided, each cause said once with its questions).

The pure parts (names, values, floors over rows) are tested directly; one run per worker
count (`-n 0`, `-n 2`) of a project with a passing metric and a failing one, decided again
from its saved rows by `ragate decide` with the functions made to raise: decide never calls
them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_ragate as ragate
from pytest_ragate.decision.floors import decide
from pytest_ragate.goldsets.loader import parse_floors
from pytest_ragate.problems import GoldsetError
from pytest_ragate.scoring.custom import (
    Defined,
    NotAValue,
    checked,
    define,
    found_in,
    measure,
    name_problem,
)
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.scoring.registry import METRICS, run_metrics
from tests.conftest import (
    BASE_TOML,
    WORKERS_SHARED,
    junit_cases,
    results_rows,
    rows_of,
    run_here,
    run_pytester,
    write_goldset,
)


def always(question: str, answer: Any, expected: str | None) -> bool:
    return True


def defined_as(name: str, kind: Any, function: Any = always) -> Defined:
    return Defined(name=name, kind=kind, function=function, where="conftest.py:1")


@pytest.fixture
def defined() -> Iterator[None]:
    """`mentions_product` (a share) and `tone` (a mean) defined, as a run's conftest would."""
    define([defined_as("mentions_product", "share"), defined_as("tone", "mean")])
    yield
    define([])


@pytest.mark.parametrize(("kind", "value", "kept"), [
    ("share", True, 1.0), ("share", False, 0.0), ("share", None, None),
    ("mean", 0.25, 0.25), ("mean", 1, 1.0), ("mean", 0, 0.0), ("mean", None, None),
])
def test_a_value_of_its_kind_is_kept(kind: Any, value: object, kept: float | None) -> None:
    assert checked(kind, value) == kept


@pytest.mark.parametrize(("kind", "value", "said"), [
    ("share", 1, "returned int 1: a share metric returns True, False or None"),
    ("share", 0.9, "returned float 0.9"),
    ("share", "yes", "returned str 'yes'"),
    ("mean", True, "returned bool True: a mean metric returns a number in [0, 1] or None"),
    ("mean", 1.5, "returned 1.5, outside [0, 1]"),
    ("mean", -0.1, "returned -0.1, outside [0, 1]"),
    ("mean", float("nan"), "returned nan, outside [0, 1]"),
    ("mean", "0.5", "returned str '0.5'"),
])
def test_anything_else_is_not_a_value(kind: Any, value: object, said: str) -> None:
    """A share is a bool and nothing else (1 or 0.9 is not "right"); a mean a number in
    [0, 1], never a bool, NaN or a string."""
    with pytest.raises(NotAValue, match=said.replace("[", r"\[").replace("(", r"\(")):
        checked(kind, value)


def test_a_metric_that_fails_gives_its_question_an_error_and_no_value() -> None:
    """Each failure is the question's own error, and the other metrics keep their values."""
    def raises(question: str, answer: Any, expected: str | None) -> float:
        raise ZeroDivisionError("division by zero")

    def too_big(question: str, answer: Any, expected: str | None) -> float:
        return 1.5

    values, errors = measure([defined_as("ok", "share"), defined_as("raises", "mean", raises),
                              defined_as("too_big", "mean", too_big)], "q?", None, None)
    assert values == {"ok": 1.0}
    assert errors == {"raises": "raised ZeroDivisionError: division by zero",
                      "too_big": "returned 1.5, outside [0, 1]"}


@pytest.mark.parametrize(("name", "why"), [
    ("faithfulness", "'faithfulness' is a built-in metric"),
    ("flaky_rate", "'flaky_rate' is a built-in metric"),
    ("cost_per_question", "'cost_per_question' is a built-in metric"),
    ("latency_p90_s", "'latency_p90_s' is a built-in metric"),
    ("ndcg@5", "lower-case letters, digits and '_'"),
    ("Mentions", "lower-case letters, digits and '_'"),
])
def test_a_name_that_shadows_a_built_in_metric_is_refused_when_decorated(name: str,
                                                                         why: str) -> None:
    with pytest.raises(ValueError, match=f"ragate.metric\\({name!r}\\): .*{why[:20]}"):
        ragate.metric(name)


def test_a_name_of_a_row_field_a_wrong_kind_or_signature_is_refused() -> None:
    assert name_problem("kind", QuestionRecord.model_fields) == (
        "'kind' is a field of every question's row: name the metric otherwise")
    with pytest.raises(ValueError, match="kind is 'share' or 'mean', not 'ratio'"):
        ragate.metric("polite", kind="ratio")
    with pytest.raises(TypeError, match=r"takes \(question, answer, expected\) by those names"):
        ragate.metric("polite")(lambda text: True)


def test_a_name_defined_by_two_functions_is_refused() -> None:
    """Two conftest files (or a plugin and a conftest) defining one name: which one gates
    would depend on load order."""
    class Module:
        def __init__(self, fn: Any) -> None:
            self.fn = fn

    first = ragate.metric("polite")(lambda question, answer, expected: True)
    second = ragate.metric("polite")(lambda question, answer, expected: False)
    found, problems = found_in([Module(first), Module(second), Module(first)])
    assert [d.name for d in found] == ["polite"]
    assert len(problems) == 1 and problems[0].startswith("metric 'polite' is defined twice: at ")


def test_a_floor_on_an_unregistered_name_says_which_was_meant(defined: None) -> None:
    assert [f.metric for f in parse_floors({"mentions_product": 0.9, "kind": {
        "single_doc": {"tone": 0.5}}}, Path("ragate.toml"))] == ["mentions_product", "tone"]
    with pytest.raises(GoldsetError) as error:
        parse_floors({"mentions_prodcut": 0.9}, Path("ragate.toml"))
    assert "unknown metric 'mentions_prodcut': did you mean mentions_product?" in str(error.value)
    define([])
    with pytest.raises(GoldsetError, match="unknown metric 'mentions_product'"):
        parse_floors({"mentions_product": 0.9}, Path("ragate.toml"))


def row(qid: str, custom: dict[str, float | None], errors: dict[str, str] | None = None,
        ) -> QuestionRecord:
    return QuestionRecord(goldset="gs", question_id=qid, kind="single_doc", index=int(qid[1:]),
                          must_abstain=False, evidence_spans=1, eval_version="1",
                          custom=custom, custom_errors=errors or {})


def test_a_share_is_a_proportion_and_not_applicable_counts_nowhere(defined: None) -> None:
    rows = [row("q1", {"mentions_product": 1.0, "tone": 0.5}),
            row("q2", {"mentions_product": 0.0, "tone": 1.0}),
            row("q3", {"mentions_product": None, "tone": None})]
    share, mean = tally("mentions_product", rows), tally("tone", rows)
    assert (share.k, share.n, share.values) == (1.0, 2, ())
    assert (mean.k, mean.n, mean.values) == (1.5, 2, (0.5, 1.0))
    assert METRICS["mentions_product"].aggregate == "proportion"
    assert run_metrics(())[-2:] == ["mentions_product", "tone"]


def test_a_floor_over_a_metric_that_failed_is_not_decided_each_cause_once(defined: None,
                                                                         ) -> None:
    """The adversary: the questions it failed on left out, the others (all right) would pass
    the floor; it is not decided, naming each cause once and its questions."""
    rows = [row(f"q{i}", {"mentions_product": 1.0}) for i in range(1, 21)]
    rows += [row("q21", {}, {"mentions_product": "raised KeyError: 'name'"}),
             row("q22", {}, {"mentions_product": "raised KeyError: 'title'"}),
             row("q23", {}, {"mentions_product": "returned int 1: a share metric returns "
                                                 "True, False or None"})]
    verdict = decide(Floor("mentions_product", 0.5), "gs", rows)
    assert verdict.outcome == "failed"
    assert verdict.message.startswith(
        "not decided: mentions_product 1.00 over the other 20, metric mentions_product "
        "failed on 3 questions: raised KeyError: 'name' (q21, q22); returned int 1: a share "
        "metric returns True, False or None (q23) · fix the metric function")
    assert decide(Floor("mentions_product", 0.5), "gs", rows[:20]).outcome == "passed"


# --- one project, run and decided ---------------------------------------------------------------

CONFTEST = '''
import pytest
import pytest_ragate as ragate
from pytest_ragate import Answer, Citation, Context

CALLED = {called}

@ragate.metric("mentions_product")
def mentions_product(question, answer, expected):
    assert CALLED, "ragate decide called a metric function"
    if "s2" in question:
        raise LookupError("no product list")
    return None if expected is None else "euros" in answer.text

@ragate.metric("tone", kind="mean")
def tone(question, answer, expected):
    assert CALLED, "ragate decide called a metric function"
    if "q1" in question or "q2" in question:
        return {{}}["tone"]
    return 1.5 if "q3" in question else 0.5

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        ctx = Context(context_id="c1", doc_id="m1", first_unit=2, last_unit=3,
                      text=f"the budget of {{qid}} is twelve euros", distance=0.2)
        return Answer(text=f"answer to {{qid}}: twelve euros", contexts=[ctx],
                      citations=[Citation(context_id="c1")])
    return answer
'''

FLOORS = """\
[floors]
mentions_product = 0.5
tone = 0.1

[floors.kind.single_doc]
mentions_product = 1.0
"""

# a second goldset in the same run: each question asked twice, in two slices by language;
# mentions_product raises on s2 (German), in both its repeats
TAGGED = [(f"s{i}", "de" if i <= 2 else "en") for i in range(1, 5)]


def write_tagged(root: Path) -> None:
    write_goldset(root, toml=BASE_TOML.replace('"mini"', '"tagged"').replace(
        'eval_version = "7"\n', 'eval_version = "7"\nrepeat = 2\n'),
        floors="[floors.slices.lang]\nmentions_product = 0.1\n",
        questions=[{"question_id": q, "kind": "single_doc", "question": f"What about {q}?",
                    "tags": {"lang": lang}} for q, lang in TAGGED],
        expected=[{"question_id": q, "gist": f"gist of {q}",
                   "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                  for q, _ in TAGGED])


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Path, pytest.RunResult, Any]]:
    """Per worker count: the folder, the run, and `ragate decide` over its saved rows."""
    return {}


@pytest.fixture
def ran(pytester: pytest.Pytester, workers: str,
        runs: dict[str, tuple[Path, pytest.RunResult, Any]],
        ) -> tuple[Path, pytest.RunResult, Any]:
    if workers not in runs:
        write_goldset(pytester.path / "gs", floors=FLOORS)
        write_tagged(pytester.path / "gs2")
        pytester.makeconftest(CONFTEST.format(called=True))
        result = run_pytester(pytester, workers, "--ragate-results=out/results.jsonl",
                              "--junitxml=out/junit.xml")
        for i in (1, 2):  # the same gate in two shards, decided below as one run
            run_pytester(pytester, workers, f"--ragate-shard={i}/2",
                         f"--ragate-results=out/s{i}.jsonl")
        pytester.makeconftest(CONFTEST.format(called=False))
        decided = run_here(pytester, "decide", "out/results.jsonl", "--", ".", "-rA",
                           "--junitxml=decided/junit.xml")
        run_here(pytester, "decide", "out/s1.jsonl", "out/s2.jsonl", "--", ".",
                 "--junitxml=sharded/junit.xml")
        runs[workers] = (pytester.path, result, decided)
    return runs[workers]


FLOOR_CASES = ("gs.ragate.toml::floor[mentions_product]", "gs.ragate.toml::floor[tone]",
               "gs.ragate.toml::floor[single_doc:mentions_product]")


@WORKERS_SHARED
def test_a_defined_metric_is_gated_and_one_that_fails_is_not_decided(ran: Any) -> None:
    root, result, _ = ran
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = junit_cases(root / "out" / "junit.xml")
    assert [cases[c]["outcome"] for c in FLOOR_CASES] == ["passed", "failure", "passed"]
    result.stdout.fnmatch_lines([
        "FAILED gs/ragate.toml::floor?tone? - not decided: tone 0.50 over the other 1, "
        "metric tone failed on 3 questions: raised KeyError: 'tone' (q1, q2); returned 1.5, "
        "outside ?0, 1? (q3) · fix the metric function*"])
    rows = rows_of(root / "out" / "results.jsonl")
    assert {q: (r.get("custom"), r.get("custom_errors")) for q, r in rows.items()
            if r["goldset"] == "mini"} == {
        "q1": ({"mentions_product": 1.0}, {"tone": "raised KeyError: 'tone'"}),
        "q2": ({"mentions_product": 1.0}, {"tone": "raised KeyError: 'tone'"}),
        "q3": ({"mentions_product": 1.0}, {"tone": "returned 1.5, outside [0, 1]"}),
        "q4": ({"mentions_product": None, "tone": 0.5}, None)}
    q1, q4 = cases["gs.ragate.toml::q1"]["props"], cases["gs.ragate.toml::q4"]["props"]
    assert (q1["mentions_product"], q1["metric_error.tone"]) == ("1.0", "raised KeyError: 'tone'")
    assert "mentions_product" not in q4 and q4["tone"] == "0.5"


@WORKERS_SHARED
def test_decide_decides_a_defined_metric_from_the_saved_rows_alone(ran: Any) -> None:
    """The conftest's functions now fail if called: decide gives the run's outcomes, from its
    results file and from two shards of the same gate (`--ragate-shard 1/2`, `2/2`)."""
    root, _, decided = ran
    assert decided.returncode == 1, decided.stdout
    assert "ragate decide: decided from 1 results file" in decided.stdout
    assert "ragate decide called" not in decided.stdout
    for decision in ("decided", "sharded"):  # from the run's rows, and from two shards'
        cases = junit_cases(root / decision / "junit.xml")
        assert [cases[c]["outcome"] for c in FLOOR_CASES] == ["passed", "failure", "passed"]
        assert [cases[c]["outcome"] for c in SLICE_CASES] == ["failure", "passed"]


SLICE_CASES = ("gs2.ragate.toml::floor[lang=de:mentions_product]",
               "gs2.ragate.toml::floor[lang=en:mentions_product]")


@WORKERS_SHARED
def test_a_slice_floor_over_repeats_is_not_decided_where_the_metric_failed(ran: Any) -> None:
    """Each repeat measured (its row carries its own value or error), each question's tags
    on its rows: the German slice, where the metric raised on both repeats of s2, is not
    decided, naming them; the English one passes, at -n 0 and -n 2 and decided again from
    the saved rows."""
    root, result, _ = ran
    cases = junit_cases(root / "out" / "junit.xml")
    assert [cases[c]["outcome"] for c in SLICE_CASES] == ["failure", "passed"]
    result.stdout.fnmatch_lines([
        "FAILED gs2/ragate.toml::floor?lang=de:mentions_product? - not decided: "
        "mentions_product 1.00 over the other 2, metric mentions_product failed on 2 "
        "questions: raised LookupError: no product list (s2?r1?, s2?r2?) · fix the metric "
        "function*"])
    rows = [r for r in results_rows(root / "out" / "results.jsonl") if r["goldset"] == "tagged"]
    assert sorted((r["question_id"], r.get("repeat", 1), r["tags"]["lang"]) for r in rows) == [
        (q, k, lang) for q, lang in TAGGED for k in (1, 2)]
    assert {r["question_id"]: r.get("custom_errors") for r in rows}["s2"] == {
        "mentions_product": "raised LookupError: no product list"}
    again = junit_cases(root / "decided" / "junit.xml")
    assert [again[c]["outcome"] for c in SLICE_CASES] == ["failure", "passed"]


def test_the_commands_read_the_declared_names_without_running_conftest(tmp_path: Path) -> None:
    """`ragate validate`, `power` and `suggest` import no conftest.py: they read the
    decorators as written, so a floor on a defined metric is not refused there."""
    from pytest_ragate.commands.defined_metrics import conftest_files, declare_metrics
    from pytest_ragate.scoring.custom import declared_in

    source = '''
import pytest_ragate as ragate
from pytest_ragate import metric
raise SystemExit("never run")

@ragate.metric("mentions_product")
def a(question, answer, expected): ...

@metric("tone", kind="mean")
def b(question, answer, expected): ...

@ragate.metric("faithfulness")  # refused when run: not declared
def c(question, answer, expected): ...

@ragate.metric(NAME)  # not a literal: not read
def d(question, answer, expected): ...
'''
    assert declared_in(source) == [("mentions_product", "share"), ("tone", "mean")]
    assert declared_in("def (") == []
    (tmp_path / "conftest.py").write_text(source)
    (tmp_path / "gs").mkdir()
    (tmp_path / "gs" / "conftest.py").write_text('@ragate.metric("polite")\ndef p(**k): ...\n')
    assert conftest_files(tmp_path, [tmp_path / "gs"]) == [tmp_path / "conftest.py",
                                                          tmp_path / "gs" / "conftest.py"]
    try:
        declare_metrics(tmp_path, [tmp_path / "gs"])
        assert list(METRICS.custom) == ["mentions_product", "polite", "tone"]
        assert METRICS["tone"].aggregate == "mean"
    finally:
        define([])


@pytest.mark.heavy  # each command reads the project's settings through pytest.main
def test_the_goldset_commands_accept_a_floor_on_a_defined_metric(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`ragate pin`, `reanchor` and `seal` (its three jobs) load the goldset, floors included:
    a floor on a metric the project's conftest.py declares is one they accept, as the run
    does, and one it does not declare they refuse (`ragate audit` reads the names the same
    way; it is left out here because it loads the embedding model)."""
    from click.testing import CliRunner

    from pytest_ragate.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGATE_SEAL_KEY", "a passphrase for the test")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        'import pytest_ragate as ragate\n\n@ragate.metric("mine")\n'
        "def mine(question, answer, expected):\n    return True\n")
    write_goldset(tmp_path / "gs", floors="[floors]\nmine = 0.5\n")
    try:
        for command in (["pin", "gs"], ["reanchor", "gs"], ["seal", "gs"],
                        ["seal", "--verify", "gs"], ["seal", "--unseal", "gs"]):
            done = CliRunner().invoke(main, command)
            assert done.exit_code == 0, (command, done.output)
        (tmp_path / "conftest.py").write_text("")
        done = CliRunner().invoke(main, ["seal", "gs"])
        assert done.exit_code == 1 and "unknown metric 'mine'" in done.output, done.output
    finally:
        define([])


def test_a_saved_value_a_share_cannot_have_is_not_decided_as_one(defined: None) -> None:
    """Rows saved while `mentions_product` was a mean (0.5), decided after it became a
    share: half a right answer is no right answer, nor a wrong one."""
    rows = [row(f"q{i}", {"mentions_product": 1.0}) for i in range(1, 11)]
    rows.append(row("q11", {"mentions_product": 0.5}))
    assert (tally("mentions_product", rows).k, tally("mentions_product", rows).n) == (10.0, 10)
    verdict = decide(Floor("mentions_product", 0.5), "gs", rows)
    assert verdict.outcome == "failed"
    assert ("failed on 1 question: saved 0.5, not a share's True or False (declared a mean "
            "when it ran?) (q11)") in verdict.message


def test_a_metric_that_edits_the_answer_changes_nothing_but_its_own_copy() -> None:
    """The adversary: a metric that empties the contexts would change what the judge grades
    after it (and what the next metric reads)."""
    from pytest_ragate import Answer, Context

    answer = Answer(text="twelve euros", contexts=[Context(
        context_id="c1", doc_id="m1", first_unit=0, last_unit=1, text="t", distance=0.1)])

    def edits(question: str, answer: Any, expected: str | None) -> bool:
        answer.contexts.clear()
        answer.text = ""
        return True

    def reads(question: str, answer: Any, expected: str | None) -> bool:
        return bool(answer.contexts) and answer.text == "twelve euros"

    values, _ = measure([defined_as("edits", "share", edits),
                         defined_as("reads", "share", reads)], "q?", answer, None)
    assert values == {"edits": 1.0, "reads": 1.0}
    assert len(answer.contexts) == 1 and answer.text == "twelve euros"


def test_a_baseline_check_pairs_a_defined_metric_question_by_question(defined: None) -> None:
    """A share by McNemar, a mean by the paired bootstrap, as the built-in metrics of each
    kind; a question where it failed (no value) pairs nowhere."""
    from pytest_ragate.decision.regressions import check_run
    from pytest_ragate.scoring.pairing import BaselineRun

    def scores(product: float, tone: float) -> dict[str, Any]:
        found = {f"q{i}": row(f"q{i}", {"mentions_product": product, "tone": tone}).scores()
                 for i in range(1, 31)}
        found["q31"] = row("q31", {}, {"tone": "raised KeyError: 'x'"}).scores()
        return found

    base = BaselineRun(goldset="gs", eval_version="1", scores=scores(1.0, 0.9), source="h")
    found = {r.metric: r for r in check_run("gs", "1", scores(0.0, 0.9), [base], alpha=0.05,
                                            min_n=1)}
    assert (found["mentions_product"].test, found["mentions_product"].outcome) == (
        "McNemar (exact)", "failed")
    assert (found["tone"].test, found["tone"].outcome) == ("paired bootstrap", "passed")
    assert base.scores["q31"].custom == {}


# --- every path a floor is decided by: slices, turns, repeats, a sequential stop --------------


def rows_over(values: dict[str, float | None], errors: dict[str, str] | None = None,
              **fields: Any) -> list[QuestionRecord]:
    """A row per question (`q1`...), its `mentions_product` value or error; `fields`: each
    field's values by question, `tags` among them."""
    found = []
    for qid, value in values.items():
        failed = {"mentions_product": errors[qid]} if errors and qid in errors else {}
        made = row(qid, {} if failed else {"mentions_product": value}, failed)
        found.append(made.model_copy(update={k: v[qid] for k, v in fields.items()}))
    return found


def test_a_slice_where_the_metric_failed_is_not_decided_the_others_are(defined: None) -> None:
    """The adversary: the metric raises only on the German questions; over the rest of that
    slice (all right) the slice would pass. It is not decided; the English slice, whose
    questions all have a value, is decided as a built-in metric's slice."""
    from pytest_ragate.decision.slice_floors import decide_family

    langs = {f"q{i}": "de" if i <= 30 else "en" for i in range(1, 61)}
    rows = rows_over(dict.fromkeys(langs, 1.0), {"q1": "raised KeyError: 'Preis'"},
                     tags={q: {"lang": lang} for q, lang in langs.items()})
    de, en = (Floor("mentions_product", 0.5, slice=("lang", v)) for v in ("de", "en"))
    verdicts = decide_family([de, en], "gs", rows)
    assert verdicts[de].outcome == "failed"
    assert verdicts[de].message.startswith(
        "not decided: mentions_product 1.00 over the other 29, metric mentions_product failed "
        "on 1 question: raised KeyError: 'Preis' (q1)")
    assert verdicts[en].outcome == "passed" and verdicts[en].slice_call == "holds"
    clean = decide_family([de, en], "gs", [r for r in rows if r.question_id != "q1"])
    assert clean[de].outcome == "passed"  # what it would say without the question it failed on
    # a slice where it applies to no question has nothing scored: failed, never passed
    fr = Floor("mentions_product", 0.5, slice=("lang", "fr"))
    unscored = rows + rows_over({"q61": None, "q62": None},
                                tags={"q61": {"lang": "fr"}, "q62": {"lang": "fr"}})
    assert decide_family([de, en, fr], "gs", unscored)[fr].outcome == "failed"


def test_a_turn_floor_over_a_defined_metric_clusters_by_conversation_and_fails_closed(
        defined: None) -> None:
    """`[floors.turn.later] mentions_product`: the conversation is the unit (its interval
    over conversations, as a built-in metric's); a later turn where it failed leaves the
    later turns not decided, the first turns decided."""
    from pytest_ragate.decision.slice_floors import decide_family

    qids = [f"q{i}" for i in range(1, 61)]  # 20 conversations of 3 turns
    turn = {q: (i % 3) + 1 for i, q in enumerate(qids)}
    fields = {"conversation": {q: f"c{i // 3}" for i, q in enumerate(qids)}, "turn": turn,
              "tags": {q: {"turn": "1" if turn[q] == 1 else "later"} for q in qids}}
    first, later = (Floor("mentions_product", 0.5, slice=("turn", v)) for v in ("1", "later"))
    rows = rows_over(dict.fromkeys(qids, 1.0), **fields)
    decided = decide_family([first, later], "gs", rows)
    assert [decided[f].outcome for f in (first, later)] == ["passed", "passed"]
    assert decided[later].tally is not None and decided[later].tally.by == "conversations"
    assert decided[later].tally.questions == 20  # conversations, not its 40 turns
    failing = rows_over(dict.fromkeys(qids, 1.0), {"q3": "returned str 'yes'"}, **fields)
    decided = decide_family([first, later], "gs", failing)
    assert decided[first].outcome == "passed"
    assert decided[later].outcome == "failed"
    assert "metric mentions_product failed on 1 question: returned str 'yes' (q3)" in (
        decided[later].message)


def test_with_repeats_the_question_is_the_unit_and_one_failed_repeat_is_a_gap(
        defined: None) -> None:
    """Three repeats of 20 questions: the interval over questions (a built-in metric's
    clusters); the metric failing on one repeat leaves the floor not decided, naming that
    repeat, though its other repeats and every other question are right."""
    rows = [row(f"q{i}", {"mentions_product": 1.0, "tone": 0.8}).model_copy(
        update={"repeat": r}) for i in range(1, 21) for r in (1, 2, 3)]
    t = tally("tone", rows)
    assert (t.questions, t.repeats, len(t.clusters)) == (20, 3, 20)
    assert decide(Floor("mentions_product", 0.9), "gs", rows).outcome == "passed"
    rows[4] = row("q2", {"tone": 0.8}, {"mentions_product": "raised ValueError: nope"}
                  ).model_copy(update={"repeat": 2})
    verdict = decide(Floor("mentions_product", 0.9), "gs", rows)
    assert verdict.outcome == "failed"
    assert "failed on 1 question: raised ValueError: nope (q2[r2])" in verdict.message


SEQUENTIAL_FLOOR = Floor("mentions_product", 0.5)


def sequential_rows(n: int, fields: dict[int, dict[str, Any]] | None = None,
                    ) -> tuple[list[Any], dict[str, QuestionRecord]]:
    """n questions, each mentioning the product, but for `fields` (by position in the
    asking order of seed 5: the row's fields there), as a sequential goldset's rows."""
    from pytest_ragate.decision.population import SequentialPlan
    from tests.test_decision import member, population, scored

    members = [member(f"q{i:03d}", index=i) for i in range(n)]
    rows = {m.item_name: scored(m).model_copy(update={"custom": {"mentions_product": 1.0}})
            for m in members}
    pop = population(members).model_copy(update={
        "sequential": SequentialPlan(seed=5, alpha=0.05, gaps=0.9)})
    from pytest_ragate.decision.sequential import asking_order

    order = asking_order(5, pop.route, list(rows))
    for position, update in (fields or {}).items():
        rows[order[position]] = rows[order[position]].model_copy(update=update)
    return members, rows


def stopping_over(rows: dict[str, QuestionRecord], members: list[Any],
                  again: dict[str, QuestionRecord] | None = None) -> Any:
    from pytest_ragate.decision.population import SequentialPlan
    from pytest_ragate.decision.sequential import Stopping
    from tests.test_decision import population

    pop = population(members).model_copy(update={
        "sequential": SequentialPlan(seed=5, alpha=0.05, gaps=0.9)})
    stopping = Stopping.of(pop, [SEQUENTIAL_FLOOR])
    assert stopping is not None
    return stopping.replay(rows, {n: r.model_copy(update={"reasked": True})
                                  for n, r in (again or rows).items()})


def test_a_sequential_goldset_stops_on_a_defined_metric_as_on_a_built_in_one(
        defined: None) -> None:
    """200 questions, every one mentioning the product: the floor is decided early, and the
    decision of the run that stopped is the full run's."""
    from tests.test_sequential_adversary import decided

    members, rows = sequential_rows(200)
    stopping = stopping_over(rows, members)
    assert stopping.stopped and stopping.stopped_at < 60, stopping.halted
    full = decided(members, rows, [SEQUENTIAL_FLOOR], sequential=False)
    assert decided(members, rows, [SEQUENTIAL_FLOOR], sequential=True) == full == {
        "floor[mentions_product]": "passed"}


@pytest.mark.parametrize("failed", [
    {"custom": {}, "custom_errors": {"mentions_product": "raised KeyError: 'name'"}},
    {"custom": {"mentions_product": 0.5}},  # saved while it was a mean
], ids=["raised", "saved-as-a-mean"])
def test_a_value_that_failed_before_the_stop_asks_every_question(defined: None,
                                                                 failed: dict[str, Any]) -> None:
    """The adversary: the metric fails on the third question asked; the rest, all right,
    would stop the goldset early and pass. The floor's test cannot count it: no stop, every
    question asked, and the floor not decided."""
    from pytest_ragate.wording.sequential import stuck
    from tests.test_sequential_adversary import decided

    members, rows = sequential_rows(200, {2: failed})
    stopping = stopping_over(rows, members)
    assert not stopping.stopped
    track = stopping.tracks[SEQUENTIAL_FLOOR.name]
    assert track.stuck is not None and track.stuck.metric == "mentions_product"
    assert stuck(track.stuck).endswith(": no value of mentions_product: every floor decided "
                                       "over every question")
    assert decided(members, rows, [SEQUENTIAL_FLOOR], sequential=True) == {
        "floor[mentions_product]": "failed"}


def test_a_value_that_failed_when_asked_again_refuses_the_stop(defined: None) -> None:
    """The adversary: every question is right when first asked, and the metric raises on
    them when asked again (what a stop's re-check compares): the stop is refused."""
    members, rows = sequential_rows(200)
    again = {n: r.model_copy(update={"custom": {}, "custom_errors": {
        "mentions_product": "raised RuntimeError: quota"}}) for n, r in rows.items()}
    stopping = stopping_over(rows, members, again)
    assert not stopping.stopped and stopping.halted is not None
    assert (stopping.halted.kind, stopping.halted.metric) == ("reask uncounted",
                                                              "mentions_product")


def test_power_gives_no_figure_for_a_floor_its_metric_failed_on(defined: None) -> None:
    """The adversary: 39 questions mention the product and the metric raised on one; over
    the others `ragate power` would say how many questions pass the floor. No n decides it:
    its row says so, and below the table the gate's own sentence names the question."""
    from pytest_ragate.commands.power import floor_power

    floor = Floor("mentions_product", 0.5)
    clean = rows_over(dict.fromkeys([f"q{i}" for i in range(1, 41)], 1.0))
    cells, said = floor_power(floor, clean, 40, strict=False, target=0.8, min_n=0)
    assert said is None and cells[4] != "—" and cells[5] != "—"
    failed = rows_over(dict.fromkeys([f"q{i}" for i in range(1, 41)], 1.0),
                       {"q7": "raised KeyError: 'name'"})
    cells, said = floor_power(floor, failed, 40, strict=False, target=0.8, min_n=0)
    assert cells[4:] == ["—", "—"]
    assert said is not None and said.startswith(
        "not decided: mentions_product 1.00 over the other 39, metric mentions_product failed "
        "on 1 question: raised KeyError: 'name' (q7) · fix the metric function")


def test_suggest_suggests_no_floor_on_a_metric_that_failed(defined: None) -> None:
    """The adversary: the metric raised on two of 60 questions, all others right: over
    them `ragate suggest` would paste a floor the gate could only fail as not decided (and
    a slice floor by tag). It suggests none, saying why; clean rows get theirs, by tag too."""
    from pytest_ragate.outputs.reports import floors_block
    from pytest_ragate.scoring.suggest import figures, slice_suggestions

    qids = [f"q{i}" for i in range(1, 61)]
    tags = {q: {"lang": "de" if i % 2 else "en"} for i, q in enumerate(qids)}
    clean = rows_over(dict.fromkeys(qids, 1.0), tags=tags)
    found = {f.metric: f for f in figures(clean)}
    assert found["mentions_product"].suggested == 0.90
    assert "mentions_product = 0.90" in floors_block(list(found.values()),
                                                     slice_suggestions(clean, list(found.values())))
    failed = rows_over(dict.fromkeys(qids, 1.0), {"q3": "raised KeyError: 'x'",
                                                  "q4": "returned int 1"}, tags=tags)
    found = {f.metric: f for f in figures(failed)}
    assert found["mentions_product"].suggested is None and found["mentions_product"].failed == 2
    block = floors_block(list(found.values()), slice_suggestions(failed, list(found.values())))
    assert not [line for line in block if line.startswith("mentions_product")]
    assert ("# mentions_product not suggested: metric failed on 2 questions, so a floor on it "
            "would not be decided: fix the metric function and run again") in block
