"""`--ragate-sequential`: a goldset asked in a seeded order stops once every floor is decided,
and no way of stopping passes a floor that asking everything would fail: a system right only
on the questions asked first, one that errors, one slow exactly where it is wrong, a skip
forged with the "not needed" reason. Each run with and without `-n 2`."""

from __future__ import annotations

import json
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
            toml_extra: str = "", workers: str = "0") -> None:
    write_many(pytester.path / "gs", N, floors)
    if toml_extra:
        toml = pytester.path / "gs" / "ragate.toml"
        toml.write_text(toml_extra + "\n" + toml.read_text())
    pytester.makeconftest(planned(paced(behaviour, workers=workers)))


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

# a second goldset of the shared run (issue 45): 60 questions e00.., all right but e48 (the
# last seed 7 asks), which raises; asked in full its floor is not decided (a gap), and a stop
# after the few questions its floor needs passed it (after 7, exit 0): the bound on the
# questions a stop does not ask (`sequential_gaps`) keeps asking, and the floor fails
GAPPY = 60
GAPPY_CASE = "gappy.ragate.toml::floor[citation_accuracy]"


def write_gappy(root: Path) -> None:
    write_goldset(root, toml=BASE_TOML.replace('name = "mini"', 'name = "gappy"'),
                  floors="[floors]\ncitation_accuracy = 0.5\n", questions=[
        {"question_id": f"e{i:02d}", "kind": "single_doc", "question": f"What about "
         f"e{i:02d}?"} for i in range(GAPPY)], expected=[
        {"question_id": f"e{i:02d}", "gist": "the budget",
         "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]} for i in range(GAPPY)])


@dataclass(frozen=True)
class Ran:
    """A run in a folder of its own: the folder, its exit status, what it printed."""

    root: Path
    ret: int
    stdout: str


@pytest.fixture(scope="module")
def stopped(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Ran:
    """A goldset that clears its floor by far, asked sequentially (seed 7) with its results
    file and JUnit, beside the 60 questions of `gappy`, one of which errors: the run the tests
    below share (one per worker count). It fails on `gappy` alone."""
    root = tmp_path_factory.mktemp(f"stopped-n{workers}")
    write_many(root / "gs", N, FLOOR)
    write_gappy(root / "gappy")
    (root / "conftest.py").write_text(planned(paced(SLOW_WRONG, workers=workers)
                                                  | {"e48": "1/0"}))
    done = run_command(root, "-p", "no:cacheprovider", "-n", workers, "-rA", "-vv", "gs",
                       "gappy", *SEQUENTIAL, "--ragate-results=out.jsonl",
                       "--junitxml=junit.xml")
    return Ran(root=root, ret=done.returncode, stdout=done.stdout + done.stderr)


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
def test_a_goldset_that_clears_its_floor_stops_asking(stopped: Ran) -> None:
    assert stopped.ret == 1, stopped.stdout  # gappy's floor
    ran = [q for q in dict.fromkeys(asked_in(stopped.root)) if q.startswith("q")]
    assert 0 < len(ran) < N
    rows = {q: row for q, row in rows_of(stopped.root / "out.jsonl").items()
            if q.startswith("q")}
    skipped = [q for q, row in rows.items() if row["status"] == "skipped"]
    assert len(skipped) + len(ran) == N and not set(skipped) & set(ran)
    assert all(rows[q]["error"].startswith("Skipped: not needed: every floor decided after")
               for q in skipped)
    floor = junit_cases(stopped.root / "junit.xml")[FLOOR_CASE]
    assert floor["outcome"] == "passed"
    message = str(floor["props"]["message"])
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
    assert "ragate: sequential: questions asked in a random order, seed 7" in stopped.stdout


@pytest.mark.heavy
@WORKERS_SHARED
def test_an_errored_question_a_stop_would_not_ask_fails_the_floor(stopped: Ran) -> None:
    """One errored question in 60 (issue 45): a stop cannot show that the questions it did
    not ask have a result, so every question is asked and the floor is not decided, as when
    asked in full; never a pass."""
    assert stopped.ret == 1, stopped.stdout
    assert sorted(q for q in set(asked_in(stopped.root)) if q.startswith("e")) == [
        f"e{i:02d}" for i in range(GAPPY)]
    assert junit_cases(stopped.root / "junit.xml")[GAPPY_CASE]["outcome"] == "failure"
    assert "gappy: 60 questions" in stopped.stdout and "every question asked (sequential, " \
        "seed 7:" in stopped.stdout


def stop_of_the_rule(wrong: set[str]) -> int | None:
    """Where the rule stops the goldset above (seed 7, its route) fed its answers in asking
    order: each question one citation, wrong for `wrong`; the questions asked again to check
    the stop answer as before."""
    members = [member(f"q{i:02d}", index=i) for i in range(N)]
    rows = {m.item_name: scored(m).model_copy(update={
        "citations": 1, "citations_correct": int(m.item_name not in wrong)}) for m in members}
    pop = population(members).model_copy(
        update={"sequential": SequentialPlan(seed=7, alpha=0.05)})
    stopping = Stopping.of(pop, [Floor("citation_accuracy", 0.85)])
    assert stopping is not None
    return stopping.replay(rows, asked_again(rows)).stopped_at


@pytest.mark.heavy
@WORKERS_SHARED
def test_the_order_is_the_seeds_and_arrival_does_not_change_the_decision(
        stopped: Ran, workers: str) -> None:
    """The run asks in the seed's order (`asking_order`: the same for every run and process,
    test_the_order_depends_on_the_seed_not_on_the_collection_order); a system slow exactly
    where it is wrong (so its right answers arrive first under xdist) stops after the
    question the rule stops at when fed in asking order, at -n 0 and -n 2 alike: results are
    fed in asking order, not in arrival order."""
    assert stopped.ret == 1, stopped.stdout
    expected = stop_of_the_rule(set(every_20th_wrong()))
    assert expected is not None and expected < N
    assert stopped_after(stop_message(stopped.root / "junit.xml")) == expected
    if workers == "0":  # under xdist the workers' calls interleave
        order = [q for q in dict.fromkeys(asked_in(stopped.root)) if q.startswith("q")]
        assert order == asking_order(7, "gs/ragate.toml",
                                     [f"q{i:02d}" for i in range(N)])[:len(order)]


@pytest.mark.heavy
@WORKERS_SHARED
def test_ragate_decide_of_a_sequential_results_file_decides_as_the_run(
        stopped: Ran, pytester: pytest.Pytester) -> None:
    """`ragate decide` of one sequential run's results file replays its rows through the
    rule that stopped it (seed and budget from the file): the same verdict, not 'missing'
    for every question the run did not need; without the seed in the file, it refuses."""
    assert stopped.ret == 1, stopped.stdout
    for folder in ("gs", "gappy"):
        shutil.copytree(stopped.root / folder, pytester.path / folder)
    shutil.copy(stopped.root / "conftest.py", pytester.path)
    shutil.copy(stopped.root / "out.jsonl", pytester.path)
    message = stop_message(stopped.root / "junit.xml")
    decided = decide(pytester, "out.jsonl", "gappy", "--junitxml=dec.xml")
    assert decided.ret == 1, decided.stdout.str()  # gappy's floor, as in the run
    cases = junit_cases(pytester.path / "dec.xml")
    assert cases[GAPPY_CASE]["outcome"] == "failure"
    case = cases[FLOOR_CASE]
    assert case["outcome"] == "passed" and case["props"]["message"] == message
    # under -n 2 a question or two in flight at the stop is answered, not counted
    assert stopped_after(message) <= len(asked_in(stopped.root))
    assert not asked(pytester)  # decide asked no one
    lines = (pytester.path / "out.jsonl").read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if HEADER_KEY in json.loads(line))
    data = json.loads(lines[header])
    for entry in data[HEADER_KEY]["goldsets"]:
        del entry["sequential"]["seed"]
    lines[header] = json.dumps(data)
    (pytester.path / "out.jsonl").write_text("\n".join(lines) + "\n")
    decided = decide(pytester, "out.jsonl", "gappy")
    assert decided.ret != 0
    out = decided.stdout.str() + decided.stderr.str()
    assert "out.jsonl (the run): goldset mini: sequential: " in out, out


# --- each its own run ----------------------------------------------------------------------


@pytest.mark.heavy
@WORKERS
def test_a_system_right_only_on_the_first_questions_fails(pytester: pytest.Pytester,
                                                         workers: str) -> None:
    """Right on the first 60 questions in collection order, wrong on the 140 after: the
    seeded order does not ask the first ones first, and the floor fails."""
    goldset(pytester, {f"q{i:02d}": "cite(wrong)" for i in range(60, N)}, workers=workers)
    result = run_pytester(pytester, workers, "gs", *SEQUENTIAL, "--junitxml=junit.xml")
    assert result.ret == 1
    assert junit_cases(pytester.path / "junit.xml")[FLOOR_CASE]["outcome"] \
        == "failure"
    assert asked(pytester)[:60] != [f"q{i:02d}" for i in range(60)]


@pytest.mark.heavy
@WORKERS
def test_an_errored_question_asks_every_question_and_fails(pytester: pytest.Pytester,
                                                          workers: str) -> None:
    """An error is a failure, never a skip: from the errored question on, nothing stops,
    and the floor fails over its gap."""
    first = asking_order(7, "gs/ragate.toml", [f"q{i:02d}" for i in range(N)])[2]
    behaviour = every_20th_wrong() | {first: "1/0"}
    goldset(pytester, behaviour, workers=workers)  # paced: a wrong stop would show
    result = run_pytester(pytester, workers, "gs", *SEQUENTIAL, "--junitxml=junit.xml")
    assert result.ret == 1
    assert len(asked(pytester)) == N
    result.stdout.re_match_lines([rf".*every question asked \(sequential, seed 7: {first} "
                                  r"errored: from there every question was asked.*"])
    cases = junit_cases(pytester.path / "junit.xml")
    assert cases[FLOOR_CASE]["outcome"] == "failure"


@pytest.mark.heavy
@WORKERS
def test_a_goldset_opts_in_and_ragate_decide_of_its_run_decides_as_the_run(
        pytester: pytest.Pytester, workers: str) -> None:
    """`sequential = true` in the goldset's ragate.toml asks it sequentially, and `ragate
    decide` of that run's results file decides as the run (it does not refuse the goldset's
    own opt-in)."""
    goldset(pytester, every_20th_wrong(), toml_extra="sequential = true", workers=workers)
    result = run_pytester(pytester, workers, "gs", "--ragate-sequential-seed", "3",
                          "--ragate-results=out.jsonl", "--junitxml=junit.xml")
    assert result.ret == 0, result.stdout.str()
    assert len(asked_once(pytester)) < N
    (pytester.path / "ran.txt").unlink()
    decided = decide(pytester, "out.jsonl", "--junitxml=dec.xml")
    assert decided.ret == 0, decided.stdout.str()
    case = junit_cases(pytester.path / "dec.xml")[FLOOR_CASE]
    assert case["props"]["message"] == stop_message(pytester.path / "junit.xml")
    assert "decided after" in str(case["props"]["message"]) and not asked(pytester)


@pytest.mark.heavy
def test_the_run_overrules_a_goldsets_opt_in(pytester: pytest.Pytester) -> None:
    """`--ragate-sequential off` overrules the goldset's `sequential = true`: every question
    is asked. In one process only: asking everything cannot depend on the worker count (a
    stop under xdist needs the controller to post it and the workers to skip, both reading
    the one command line; either one off, nothing is skipped)."""
    goldset(pytester, every_20th_wrong(), toml_extra="sequential = true")
    result = run_pytester(pytester, "0", "gs", "--ragate-sequential", "off")
    assert result.ret == 0
    assert len(asked(pytester)) == N


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


def judged(pytester: pytest.Pytester, workers: str, failing: str = "") -> None:
    goldset(pytester, every_20th_wrong(), floors=JUDGED, workers=workers)
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
    failing = asking_order(7, "gs/ragate.toml", [f"q{i:02d}" for i in range(N)])[1]
    judged(pytester, workers, failing=failing)  # paced: a wrong stop would show
    result = run_pytester(pytester, workers, "gs", *SEQUENTIAL, "--ragate-cache", "off")
    assert len(asked(pytester)) == N
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
