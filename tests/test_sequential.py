"""`--ragate-sequential`: a goldset asked in a seeded order stops once every floor is decided,
and no way of stopping passes a floor that asking everything would fail: a system right only
on the questions asked first, one that errors, one slow exactly where it is wrong, a skip
forged with the "not needed" reason. Each run with and without `-n 2`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ragate.decision.population import Collected, Population, SequentialPlan
from pytest_ragate.decision.run_decision import Arrived, decide_run
from pytest_ragate.decision.sequential import Stopping, asking_order
from pytest_ragate.outputs.results import HEADER_KEY
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord
from pytest_ragate.wording.sequential import not_needed
from tests.conftest import (
    BASE_TOML,
    WORKERS,
    WORKERS_SHARED,
    junit_cases,
    rows_of,
    run_command,
    run_pytester,
    write_goldset,
)
from tests.test_decision import member, node, population, scored, spec
from tests.test_fail_closed import planned, scripted_judge, write_many

N = 200
FLOOR = "[floors]\ncitation_accuracy = 0.85\n"
FLOOR_CASE = "gs.ragate.toml::floor[citation_accuracy]"
SEQUENTIAL = ("--ragate-sequential", "on", "--ragate-sequential-seed", "7")


def asked_in(root: Path) -> list[str]:
    """The questions the system run in `root` was asked, in the order it was asked them (one
    asked again to check a stop, twice)."""
    path = root / "ran.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line.split()[-1].rstrip("?") for line in lines]


def asked(pytester: pytest.Pytester) -> list[str]:
    """The questions the system was asked, in the order it was asked them (one asked again
    to check a stop, twice)."""
    return asked_in(pytester.path)


def asked_once(pytester: pytest.Pytester) -> list[str]:
    """The questions the system was asked, each once, in the order it was first asked."""
    return list(dict.fromkeys(asked(pytester)))


PACE = 0.02  # seconds each answer takes under xdist: the stop must be posted before the end


def paced(behaviour: dict[str, str], n: int = N, *, workers: str = "2") -> dict[str, str]:
    """Every question's behaviour (a right citation unless said otherwise); under xdist
    (`workers` not "0") each answer takes PACE seconds, as a remote system's do: without it,
    under load, two workers can answer all n before the controller has read the answers that
    decide the goldset. In one process no answer needs it: the report of one question is fed
    before the next question is set up, which reads the stop. Nor does a run that halts at
    one of the first questions of the order (an error, a forged skip): no stop is raced."""
    behaviours = {f"q{i:02d}": behaviour.get(f"q{i:02d}", "cite(right)") for i in range(n)}
    if workers == "0":
        return behaviours
    return {q: f"(time.sleep({PACE}), {b})[1]" for q, b in behaviours.items()}


def goldset(pytester: pytest.Pytester, behaviour: dict[str, str], floors: str = FLOOR,
            toml_extra: str = "", workers: str = "0", n: int = N) -> None:
    write_many(pytester.path / "gs", n, floors)
    if toml_extra:
        toml = pytester.path / "gs" / "ragate.toml"
        toml.write_text(toml_extra + "\n" + toml.read_text())
    pytester.makeconftest(planned(paced(behaviour, n, workers=workers)))


def every_20th_wrong() -> dict[str, str]:
    """95% of the questions cited right: clears a floor of 0.85 by far."""
    return {f"q{i:02d}": "cite(wrong)" for i in range(N) if i % 20 == 0}


def decide(pytester: pytest.Pytester, results: str, *args: str) -> pytest.RunResult:
    """`ragate decide RESULTS -- gs ARGS`: what it runs (`pytest --ragate-decide`, `-n 0`), in
    this process (the process boundary is not what these tests hold)."""
    return run_pytester(pytester, "0", "gs", f"--ragate-decide={results}", *args)


def stop_message(junit: Path) -> str:
    """The citation_accuracy floor's message in a JUnit file."""
    return str(junit_cases(junit)[FLOOR_CASE]["props"]["message"])


def stopped_after(message: str) -> int:
    """k of a floor's "decided after k of 200" message."""
    return int(message.split("decided after ")[1].split(" of")[0])


# --- one sequential run that stops, read by the tests below (one per worker count) ---------

# every 20th answer wrong, and slow: under xdist the right answers after it arrive first
SLOW_WRONG = {q: "(time.sleep(0.05), cite(wrong))[1]" for q in every_20th_wrong()}

# Beside `mini` (200 questions q00.., which stops), the shared run asks goldsets of 60
# questions each, of their own question ids, each a way a stop could pass what asking
# everything fails. Every goldset opts in (`sequential = true`), so the run gives only the
# seed; `-o ragate_min_n=30` holds for all (mini stops after 38 anyway).
SMALL = 60
LAX = "sequential_gaps = 0.5\n"  # proved after 5 questions: these small goldsets could stop


def write_small(root: Path, name: str, prefix: str, floors: str, toml_extra: str = "") -> None:
    """A goldset `name` of SMALL answerable questions {prefix}00.., opting in."""
    toml = BASE_TOML.replace('name = "mini"', f'name = "{name}"')
    write_goldset(root, toml="sequential = true\n" + toml_extra + toml, floors=floors,
                  questions=[{"question_id": f"{prefix}{i:02d}", "kind": "single_doc",
                              "question": f"What about {prefix}{i:02d}?"}
                             for i in range(SMALL)],
                  expected=[{"question_id": f"{prefix}{i:02d}", "gist": "the budget",
                             "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}
                            for i in range(SMALL)])


def small_order(folder: str, prefix: str) -> list[str]:
    return asking_order(7, f"{folder}/ragate.toml", [f"{prefix}{i:02d}" for i in range(SMALL)])


# gappy (issue 45): all right but e48 (the last seed 7 asks), which raises; asked in full its
# floor is not decided (a gap), and a stop after the few questions its floor needs passed it
# (after 7, exit 0): the bound on the questions a stop does not ask (`sequential_gaps`) keeps
# asking, and the floor fails
# erring: the third question asked raises, where a lax bound would let it stop early
ERRS = small_order("erring", "r")[2]
# forger: the system skips every question it would get wrong with the very reason a stop
# gives
FORGED_SKIPS = [q for i, q in enumerate(small_order("forger", "f")) if i % 3 == 1]
FORGED = f"pytest.skip({not_needed(3, SMALL)!r})"
# sparse: citation_accuracy counts cited answers: 29 of 60 cite, fewer than ragate_min_n
UNCITED = "Answer(text='an answer', contexts=[right])"
GOLDSETS = ("gs", "gappy", "erring", "forger", "sparse")


def write_shared(root: Path, workers: str) -> None:
    """The shared run's goldsets and its system."""
    write_many(root / "gs", N, FLOOR)
    toml = root / "gs" / "ragate.toml"
    toml.write_text("sequential = true\n" + toml.read_text())
    write_small(root / "gappy", "gappy", "e", "[floors]\ncitation_accuracy = 0.5\n")
    write_small(root / "erring", "erring", "r", FLOOR, LAX)
    write_small(root / "forger", "forger", "f", FLOOR, LAX)
    write_small(root / "sparse", "sparse", "m", "[floors]\ncitation_accuracy = 0.3\n", LAX)
    wrong = {f"r{i:02d}": "cite(wrong)" for i in range(0, SMALL, 20)}
    behaviour = (paced(SLOW_WRONG, workers=workers) | wrong | {"e48": "1/0", ERRS: "1/0"}
                 | dict.fromkeys(FORGED_SKIPS, FORGED)
                 | {f"m{i:02d}": UNCITED for i in range(29, SMALL)})
    (root / "conftest.py").write_text(planned(behaviour))


@dataclass(frozen=True)
class Ran:
    """A run in a folder of its own: the folder, its exit status, what it printed."""

    root: Path
    ret: int
    stdout: str


SHARED_ARGS = ("--ragate-sequential-seed", "7", "-o", "ragate_min_n=30")


@pytest.fixture(scope="module")
def stopped(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """The goldsets above asked sequentially (seed 7) with a results file and JUnit: the run
    the tests below share (one per worker count). It fails on all but `mini`."""
    root = tmp_path_factory.mktemp(f"stopped-n{workers}")
    write_shared(root, workers)
    done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv",
                       *GOLDSETS, *SHARED_ARGS, "--ragate-results=out.jsonl",
                       "--junitxml=junit.xml")
    return Ran(root=root, ret=done.returncode, stdout=done.stdout + done.stderr)


def case_of(ran: Ran, folder: str, junit: str = "junit.xml") -> dict[str, object]:
    """A goldset's citation_accuracy floor in a JUnit file of the shared run's folder."""
    return junit_cases(ran.root / junit)[f"{folder}.ragate.toml::floor[citation_accuracy]"]


def asked_of(ran: Ran, prefix: str) -> list[str]:
    """The questions of one goldset (by its ids' prefix) asked, in order (again: twice)."""
    return [q for q in asked_in(ran.root) if q.startswith(prefix)]


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
def test_a_goldset_that_clears_its_floor_stops_asking(stopped: Ran) -> None:
    """`sequential = true` in a goldset's ragate.toml asks it sequentially: mini stops."""
    assert stopped.ret == 1, stopped.stdout  # the other goldsets' floors
    ran = list(dict.fromkeys(asked_of(stopped, "q")))
    assert 0 < len(ran) < N
    rows = {q: row for q, row in rows_of(stopped.root / "out.jsonl").items()
            if q.startswith("q")}
    skipped = [q for q, row in rows.items() if row["status"] == "skipped"]
    assert len(skipped) + len(ran) == N and not set(skipped) & set(ran)
    assert all(rows[q]["error"].startswith("Skipped: not needed: every floor decided after")
               for q in skipped)
    floor = case_of(stopped, "gs")
    assert floor["outcome"] == "passed"
    message = str(floor["props"]["message"])  # type: ignore[index]
    assert "by a confidence sequence" in message and "not asked" in message
    out = pytest.LineMatcher(stopped.stdout.splitlines())
    out.re_match_lines([r".*not needed \(sequential, seed 7: every floor decided "
                        r"after \d+, and fewer than 0.07 of the questions not asked "
                        r"without a result \(sequential_gaps = 0.07: errors, unsure "
                        r"answers not labelled\); a sample of those questions asked again "
                        r"answered as before within their flakiness \(\d+ re-asked, enough "
                        r"to catch a change in 50% of their answers with chance ≥ 95%\); "
                        r"chance of a "
                        r"decision other than asking all ≤ 0.05, which assumes a "
                        r"question's answer does not depend on when it is asked\).*"])


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_errored_question_a_stop_would_not_ask_fails_the_floor(stopped: Ran) -> None:
    """One errored question in 60 (issue 45): a stop cannot show that the questions it did
    not ask have a result, so every question is asked and the floor is not decided, as when
    asked in full; never a pass."""
    assert sorted(set(asked_of(stopped, "e"))) == [f"e{i:02d}" for i in range(SMALL)]
    assert case_of(stopped, "gappy")["outcome"] == "failure"
    assert "gappy: 60 questions" in stopped.stdout and "every question asked (sequential, " \
        "seed 7:" in stopped.stdout


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_errored_question_asks_every_question_and_fails(stopped: Ran) -> None:
    """An error is a failure, never a skip: from the errored question on (the third asked,
    where the lax bound would let a stop come), nothing stops, and the floor fails over its
    gap."""
    assert len(asked_of(stopped, "r")) == SMALL
    assert re.search(rf"every question asked \(sequential, seed 7: {ERRS} errored: from "
                     r"there every question was asked", stopped.stdout), stopped.stdout
    assert case_of(stopped, "erring")["outcome"] == "failure"


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_system_that_skips_its_wrong_answers_as_not_needed_fails(stopped: Ran) -> None:
    """The system skips every question it would get wrong, with the very reason a stop
    gives: the first such skip is no stop the rule made, so every question is asked, each
    forged skip is a missing result, and the floor fails."""
    assert case_of(stopped, "forger")["outcome"] == "failure"
    assert len(asked_of(stopped, "f")) == SMALL
    assert f"{FORGED_SKIPS[0]} was skipped: from there every question was asked" \
        in stopped.stdout


@pytest.mark.heavy
@WORKERS_SHARED
def test_min_n_counts_the_floors_units_not_the_questions_asked(stopped: Ran) -> None:
    """citation_accuracy counts cited answers: 29 of 60 questions cite, fewer than
    `ragate_min_n = 30`, so the full run refuses (fails) the floor; a stop after 30 or
    more questions, on fewer than 30 cited answers, must not pass it."""
    assert case_of(stopped, "sparse")["outcome"] == "failure"
    assert "fewer than ragate_min_n = 30" in stopped.stdout
    line = next(x for x in stopped.stdout.splitlines() if x.startswith("sparse: 60 questions"))
    assert "floor[citation_accuracy] undecided until the last question" in line, line


def stop_of_the_rule(wrong: set[str]) -> int | None:
    """Where the rule stops the goldset above (seed 7, its route) fed its answers in asking
    order: each question one citation, wrong for `wrong`; the questions asked again to check
    the stop answer as before."""
    members = [member(f"q{i:02d}", index=i) for i in range(N)]
    rows = {m.item_name: scored(m).model_copy(update={
        "citations": 1, "citations_correct": int(m.item_name not in wrong)}) for m in members}
    pop = population(members).model_copy(
        update={"sequential": SequentialPlan(seed=7, alpha=0.05)})
    stopping = Stopping.of(pop, [Floor("citation_accuracy", 0.85)], min_n=30)
    assert stopping is not None
    return stopping.replay(rows, asked_again(rows)).stopped_at


@pytest.mark.heavy
@WORKERS_SHARED
def test_the_order_is_the_seeds_and_arrival_does_not_change_the_decision(
        stopped: Ran, workers: str) -> None:
    """The run asks in the seed's order (`asking_order`: the same for every run and process,
    test_the_order_depends_on_the_seed_not_on_the_collection_order), not the collection's
    (a system right only on the questions collected first gains nothing); a system slow
    exactly where it is wrong (so its right answers arrive first under xdist) stops after the
    question the rule stops at when fed in asking order, at -n 0 and -n 2 alike: results are
    fed in asking order, not in arrival order."""
    expected = stop_of_the_rule(set(every_20th_wrong()))
    assert expected is not None and expected < N
    assert stopped_after(str(case_of(stopped, "gs")["props"]["message"])) == expected  # type: ignore[index]
    if workers == "0":  # under xdist the workers' calls interleave
        order = list(dict.fromkeys(asked_of(stopped, "q")))
        assert order == asking_order(7, "gs/ragate.toml",
                                     [f"q{i:02d}" for i in range(N)])[:len(order)]


@pytest.mark.heavy
@WORKERS_SHARED
def test_ragate_decide_of_a_sequential_results_file_decides_as_the_run(
        stopped: Ran, pytester: pytest.Pytester) -> None:
    """`ragate decide` of one sequential run's results file replays its rows through the
    rule that stopped it (seed and budget from the file, each goldset's own opt-in): the
    same verdicts, not 'missing' for every question the run did not need; without the seed
    in the file, it refuses."""
    for folder in GOLDSETS:
        shutil.copytree(stopped.root / folder, pytester.path / folder)
    shutil.copy(stopped.root / "conftest.py", pytester.path)
    shutil.copy(stopped.root / "out.jsonl", pytester.path)
    decided = run_pytester(pytester, "0", *GOLDSETS, "--ragate-decide=out.jsonl",
                           "-o", "ragate_min_n=30", "--junitxml=dec.xml")
    assert decided.ret == 1, decided.stdout.str()  # the other goldsets' floors, as in the run
    dec = Ran(root=pytester.path, ret=decided.ret, stdout="")
    for folder in GOLDSETS:
        run_case, dec_case = case_of(stopped, folder), case_of(dec, folder, "dec.xml")
        assert dec_case["outcome"] == run_case["outcome"], folder
        assert dec_case["props"]["message"] == run_case["props"]["message"], folder  # type: ignore[index]
    message = str(case_of(dec, "gs", "dec.xml")["props"]["message"])  # type: ignore[index]
    # under -n 2 a question or two in flight at the stop is answered, not counted
    assert stopped_after(message) <= len(asked_of(stopped, "q"))
    assert not asked(pytester)  # decide asked no one
    lines = (pytester.path / "out.jsonl").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if HEADER_KEY in json.loads(line))
    data = json.loads(lines[header])
    for entry in data[HEADER_KEY]["goldsets"]:
        del entry["sequential"]["seed"]
    lines[header] = json.dumps(data)
    (pytester.path / "out.jsonl").write_text("\n".join(lines) + "\n")
    decided = decide(pytester, "out.jsonl", *GOLDSETS[1:])
    assert decided.ret != 0
    out = decided.stdout.str() + decided.stderr.str()
    assert "out.jsonl (the run): goldset mini: sequential: " in out, out


# --- each its own run ----------------------------------------------------------------------


@pytest.mark.heavy
def test_the_run_overrules_a_goldsets_opt_in(pytester: pytest.Pytester) -> None:
    """`--ragate-sequential off` overrules the goldset's `sequential = true`: every question
    is asked. In one process only: asking everything cannot depend on the worker count (a
    stop under xdist needs the controller to post it and the workers to skip, both reading
    the one command line; either one off, nothing is skipped)."""
    goldset(pytester, every_20th_wrong(), toml_extra="sequential = true\n" + LAX, n=SMALL)
    result = run_pytester(pytester, "0", "gs", "--ragate-sequential", "off")
    assert result.ret == 0
    assert len(asked(pytester)) == SMALL


@pytest.mark.heavy
@pytest.mark.parametrize(("args", "toml_extra", "says"), [
    (("--ragate-shard", "1/2", "--ragate-results", "s.jsonl"), "", "--ragate-shard"),
    (("-o", "ragate_repeat=2"), "", "repeats"),
    (("--ragate-ci", "strict"), "", "ragate_ci = strict"),
    ((), "sequential = true\nrepeat = 2", "gs/ragate.toml: sequential = true: "),
    ((), 'sequential = true\nquestion_outcome = "assert"', "question_outcome"),
], ids=["shard", "repeat-flag", "strict", "repeat-toml", "assert"])
def test_what_sequential_is_not_defined_for_is_refused(pytester: pytest.Pytester,
                                                      args: tuple[str, ...], toml_extra: str,
                                                      says: str) -> None:
    goldset(pytester, {}, toml_extra=toml_extra)
    flags = ("--ragate-sequential", "on") if not toml_extra else ()
    result = run_pytester(pytester, "0", "gs", *flags, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()
    assert says in result.stderr.str() + result.stdout.str()
    assert not asked(pytester)


def logging_judge(failing: str) -> str:
    """A judge asked for faithfulness that logs each question it is asked about, and fails
    on `failing`."""
    return scripted_judge(f"""
        with open("judge.log", "a") as log:
            log.write(item.question_id + "\\n")
        await asyncio.sleep(0.01)
        if item.question_id == {failing!r}:
            raise RuntimeError("the judge's model said nothing")
        return 1.0
    """, preamble="import asyncio")


# three floors and the bound on the questions not asked share the budget (0.0125 each): a
# citation floor of 0.80 (0.85 would need past half the goldset) keeps the stop early
JUDGED = "[floors]\ncitation_accuracy = 0.80\nfaithfulness = 0.80\n"


def judged(pytester: pytest.Pytester, workers: str, failing: str = "", n: int = N) -> None:
    """A goldset of n questions (a lax bound on the rest when fewer than N) with a judge."""
    goldset(pytester, every_20th_wrong(), floors=JUDGED, workers=workers, n=n,
            toml_extra=LAX if n < N else "")
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + logging_judge(failing))


def judge_asked(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "judge.log"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.heavy
@WORKERS
def test_a_judged_goldset_stops_and_the_judge_is_asked_only_what_was_asked(
        pytester: pytest.Pytester, workers: str) -> None:
    judged(pytester, workers)
    result = run_pytester(pytester, workers, "gs", *SEQUENTIAL, "--ragate-cache", "off",
                          "--junitxml=junit.xml")
    assert result.ret == 0, result.stdout.str()
    ran, verdicts = asked(pytester), judge_asked(pytester)  # questions asked again included
    assert 0 < len(set(ran)) < N and sorted(verdicts) == sorted(ran)
    cases = junit_cases(pytester.path / "junit.xml")
    for floor in ("faithfulness", "judge_coverage", "citation_accuracy"):
        case = cases[f"gs.ragate.toml::floor[{floor}]"]
        assert case["outcome"] == "passed"
        assert "decided after" in str(case["props"]["message"])


def test_a_question_asked_again_asks_the_judge_what_it_asked(pytester: pytest.Pytester,
                                                             ) -> None:
    """A question asked again to check a stop asks its judge for the verdicts its route
    needs, as the question did: faithfulness, not answer relevance (which no floor gates,
    and whose embedding model a re-ask would otherwise load)."""
    from pytest_ragate.items.keys import NEEDED_KEY
    from pytest_ragate.items.reasking import again_item

    write_many(pytester.path / "gs", 3, JUDGED)
    items, _ = pytester.inline_genitems("gs", "-p", "no:cacheprovider")
    question = next(i for i in items if i.name == "q00")
    again = again_item(question)  # type: ignore[arg-type]
    assert question.stash[NEEDED_KEY] == ("faithfulness", "context_precision")
    assert again.stash[NEEDED_KEY] == question.stash[NEEDED_KEY]


@pytest.mark.heavy
@WORKERS
def test_a_judge_failure_on_a_floors_metric_asks_every_question(pytester: pytest.Pytester,
                                                               workers: str) -> None:
    """A question without its verdict cannot be counted: the floor's test stops there, and
    the goldset is asked to the end and decided over every question."""
    failing = asking_order(7, "gs/ragate.toml", [f"q{i:02d}" for i in range(SMALL)])[1]
    judged(pytester, workers, failing=failing, n=SMALL)  # paced: a wrong stop would show
    result = run_pytester(pytester, workers, "gs", *SEQUENTIAL, "--ragate-cache", "off")
    assert len(asked(pytester)) == SMALL
    result.stdout.re_match_lines([rf".*every question asked \(sequential, seed 7: {failing}: "
                                  r"no verdict of faithfulness.*"])


# --- the run decision, pure: what it accepts as "not needed" -------------------------------

PLAN = SequentialPlan(seed=5, alpha=0.05, gaps=0.9)  # a lax bound on the rest: these hold the rest
RECALL = Floor("evidence_recall", 0.5)


def sequential_population(n: int, seed: int = 5) -> tuple[Population, dict[str, QuestionRecord]]:
    """A sequential goldset of n questions, each found its evidence: decided early."""
    members = [member(f"q{i:03d}", index=i) for i in range(n)]
    pop = population(members).model_copy(
        update={"sequential": SequentialPlan(seed=seed, alpha=0.05, gaps=0.9)})
    return pop, {m.item_name: scored(m) for m in members}


def asked_again(rows: dict[str, QuestionRecord],
                changed: dict[str, dict[str, object]] | None = None,
                ) -> dict[str, QuestionRecord]:
    """Every row asked again to check a stop: the same answers, but for `changed` (question
    name -> the fields its second answer has)."""
    return {name: row.model_copy(update={"reasked": True, **(changed or {}).get(name, {})})
            for name, row in rows.items()}


def arrive_again(arrived: Arrived, again: dict[str, QuestionRecord]) -> Arrived:
    """The rows asked again, as their test cases report them (`q07[again]`)."""
    for name, row in again.items():
        arrived.records[f"{row.route}::{name}[again]"] = row
    return arrived


def skipped_after(pop: Population, rows: dict[str, QuestionRecord], *, forge_first: bool,
                  ) -> tuple[Arrived, list[str]]:
    """Each row as it arrived: the questions after the stop skipped as not needed, and with
    `forge_first` the first question of the order too (which was needed); and the questions
    asked before the stop, asked again."""
    order = asking_order(PLAN.seed, pop.route, list(rows))
    stopping = Stopping.of(pop, [RECALL])
    assert stopping is not None
    again = asked_again(rows)
    stop = stopping.replay(rows, again).stopped_at
    assert stop is not None and stop < len(rows)
    arrived = arrive_again(Arrived(), {n: again[n] for n in order[:stop]})
    for m in pop.questions:
        row, position = rows[m.item_name], order.index(m.item_name)
        if position >= stop or (forge_first and position == 0):
            row = row.model_copy(update={"status": "skipped", "not_needed": True,
                                         "error": "Skipped: " + not_needed(stop, len(rows))})
        arrived.records[node(m)] = row
    return arrived, order


def test_the_decision_accepts_only_skips_after_the_stop() -> None:
    pop, rows = sequential_population(60)
    collected = Collected(floors=[spec(RECALL)], populations=[pop])
    arrived, _ = skipped_after(pop, rows, forge_first=False)
    run = decide_run(collected, arrived).runs[0]
    assert not run.gaps and run.verdicts[0].outcome == "passed", run.verdicts[0].message
    assert run.sequential is not None and run.sequential.stopped
    assert "decided after" in run.verdicts[0].message
    arrived, order = skipped_after(pop, rows, forge_first=True)
    run = decide_run(collected, arrived).runs[0]
    # the forged skip halts the replay before any stop: every skip is then a gap
    assert run.verdicts[0].outcome == "failed"
    assert order[0] in {g.member for g in run.gaps}
    assert {g.kind for g in run.gaps} == {"skipped"}
    assert run.sequential is not None and not run.sequential.stopped


def test_results_arriving_out_of_order_stop_where_in_order_ones_do() -> None:
    pop, rows = sequential_population(80, seed=9)
    in_order, shuffled = Stopping.of(pop, [RECALL]), Stopping.of(pop, [RECALL])
    assert in_order is not None and shuffled is not None
    again = asked_again(rows)
    in_order.replay(rows, again)
    for name in sorted(rows, reverse=True):
        shuffled.offer(name, rows[name])
    for name in sorted(again, reverse=True):
        shuffled.offer_again(name, again[name])
    assert in_order.stopped_at == shuffled.stopped_at
    assert in_order.stopped_at is not None


def test_an_error_before_the_stop_halts_and_a_missing_row_never_stops() -> None:
    pop, rows = sequential_population(80)
    order = asking_order(PLAN.seed, pop.route, list(rows))
    errored = dict(rows)
    errored[order[1]] = rows[order[1]].model_copy(update={"status": "error", "error": "boom"})
    stopping = Stopping.of(pop, [RECALL])
    assert stopping is not None
    stopping.replay(errored)
    assert not stopping.stopped and stopping.halted is not None
    assert (stopping.halted.kind, stopping.halted.names) == ("not scored", (order[1],))
    missing = {name: row for name, row in rows.items() if name != order[0]}
    stopping = Stopping.of(pop, [RECALL])
    assert stopping is not None
    assert not stopping.replay(missing).stopped


def test_a_floor_over_labels_or_no_floor_over_questions_asks_everything() -> None:
    pop, rows = sequential_population(30)
    for floors in ([Floor("judge_agreement", 0.5)], [Floor("hold_rate", 0.5, anchors=True)]):
        stopping = Stopping.of(pop, floors)
        assert stopping is not None
        assert not stopping.replay(rows).stopped and stopping.halted


def test_the_order_depends_on_the_seed_not_on_the_collection_order() -> None:
    names = [f"q{i:03d}" for i in range(50)]
    assert asking_order(1, "r", names) == asking_order(1, "r", list(reversed(names)))
    assert asking_order(1, "r", names) != asking_order(2, "r", names)
    assert asking_order(1, "r", names) != names


@pytest.mark.heavy
def test_deciding_a_run_asked_in_full_does_not_load_the_sequential_test() -> None:
    """numpy (the betting test's) loads with the first sequential goldset, not with every
    decision: deciding, reporting and saving a run import none of it."""
    code = ("import sys\n"
            "import pytest_ragate.decision.run_decision, pytest_ragate.decision.goldset_run\n"
            "import pytest_ragate.outputs.results, pytest_ragate.outputs.history\n"
            "print(sorted(m for m in sys.modules if m == 'numpy'\n"
            "             or m == 'pytest_ragate.scoring.confidence_sequence'))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
