"""One verdict, whichever path reaches it (a metamorphic property, checked with Hypothesis):
for random goldsets, rows, judges with gaps, slices, kinds, anchors, labels, answer_match's
facts and its unsure answers (labelled, counted wrong or not settled) and floors, each floor's
verdict is the same

- (a) from the gate's `decide_run` over what was collected and what arrived, in any order
  of arrival (xdist's workers report in any order: the -n 0 / -n 2 runs themselves are held
  to each other end to end elsewhere);
- (b) from the same rows written as a results file and decided as `ragate decide` decides
  them: read back, held to the collection (`decide_holding.hold`), decided again;
- (c) from `ragate rejudge` with the same judge (the current side), and from its candidate's
  prediction against the gate run with the candidate's rows;
- (d) from a sequential goldset's replay when every question was asked; and a sequential
  goldset large enough to stop (`test_a_stop_never_passes_over_a_question_without_a_result`)
  never stops over an errored or unsure, unlabelled answer it asked, and stops only once the
  share of the rest without a result is bounded (issue 45).

Pure functions only: no pytest run inside Hypothesis. Seeded (derandomized) and small, so
the suite is reproducible and fast.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ragate.commands.rejudging import saved_arrivals, with_rows
from pytest_ragate.decision.population import (
    AnchorMember,
    Collected,
    FloorSpec,
    LabelSpec,
    Member,
    Population,
    SequentialPlan,
)
from pytest_ragate.decision.rejudge import Comparison, compare_judges
from pytest_ragate.decision.rules import Rules, SliceRules, Strictness
from pytest_ragate.decision.run_decision import Arrived, Decision, Failure, decide_run
from pytest_ragate.items.keys import ANCHOR_KEY, CASE_KEY
from pytest_ragate.modes.decide_holding import asked_as_saved, hold, judged_as_saved
from pytest_ragate.modes.saved_lines import saved_lines
from pytest_ragate.outputs.results import ResultsFile, read_results, results_lines
from pytest_ragate.scoring.answer_match import AnswerCheck
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from pytest_ragate.scoring.rejudge import Regraded, RowKey, judged_rows, key_of, regraded_rows
from pytest_ragate.settings import GateSettings, JudgeSettings, RunSettings, Settings

ROUTE = "gs/ragate.toml"
JUDGE = "fixture:current"
KINDS = ("single_doc", "unanswerable")
LANGS = ("en", "de")
MINS = (0.3, 0.5, 0.7, 0.9)
EXAMPLES = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# a question's fate in the run: its row, or why it has none
FATES = ("scored",) * 12 + ("error", "skipped", "crashed", "lost", "deselected", "never ran")


@dataclass(frozen=True)
class Scenario:
    collected: Collected
    arrived: Arrived
    rules: Rules
    order: tuple[int, ...]  # a permutation of the arrivals


def _row(member: Member, **fields: Any) -> QuestionRecord:
    return QuestionRecord(goldset="gs", route=ROUTE, question_id=member.question_id,
                          question=member.question, kind=member.kind, tags=member.tags,
                          index=member.index, must_abstain=member.must_abstain,
                          evidence_spans=member.evidence_spans, eval_version="1",
                          goldset_sha256="sha", **fields)


@st.composite
def scored_row(draw: st.DrawFn, member: Member, judged: bool, quality: int) -> QuestionRecord:
    """A scored row, each of its figures right `quality` times in 10."""
    def right() -> bool:
        return draw(st.integers(0, 9)) < quality

    abstained = member.must_abstain == right()
    found = [right() for _ in range(member.evidence_spans)]
    citations = draw(st.integers(0, 2)) if not abstained else 0
    fields: dict[str, Any] = dict(
        abstained=abstained, abstention_correct=abstained == member.must_abstain,
        citations=citations, citations_correct=sum(right() for _ in range(citations)),
        evidence_spans_found=sum(found),
        evidence_ranks=[1 if f else None for f in found], answer_text="an answer",
        metrics={"evidence_recall": (sum(found) / len(found)) if found else None},
        answer_check=None if member.must_abstain else draw(answer_checks(right())))
    if judged and not abstained and not member.must_abstain:
        fields["judge"] = JUDGE
        if draw(st.integers(0, 9)) == 0:  # the judge failed on it
            fields["judge_failures"] = {"faithfulness": "timeout"}
        else:
            fields["metrics"] = {**fields["metrics"], "faithfulness": (
                1.0 if right() else draw(st.sampled_from((0.0, 0.5))))}
    return _row(member, **fields)


@st.composite
def answer_checks(draw: st.DrawFn, right: bool) -> AnswerCheck:
    """What answer_match found in an answer with facts: right or wrong, or unsure (one in
    four), which a person's label settles either way, the goldset's `unsure = "wrong"`
    counts wrong, or nothing settles (the full run then does not decide its floor)."""
    facts = draw(st.integers(1, 3))
    if draw(st.integers(0, 3)):
        return AnswerCheck(outcome="right" if right else "wrong", why="checked", facts=facts,
                           found=list(range(1, facts + 1)) if right else [])
    settled = draw(st.sampled_from(("label", "label", "unsure_wrong", None)))
    return AnswerCheck(outcome="unsure", why="fact 1 not stated", facts=facts, missing=[1],
                       settled=settled,
                       label=draw(st.sampled_from((0, 1))) if settled == "label" else None)


@st.composite
def floors(draw: st.DrawFn, tagged: bool, labelled: bool) -> list[Floor]:
    bound = st.sampled_from(MINS)
    xfail = st.sampled_from((None, None, None, "known"))
    catalogue = [Floor("abstention_accuracy", draw(bound), xfail=draw(xfail)),
                 Floor("abstention_accuracy", draw(bound), kind="unanswerable"),
                 Floor("evidence_recall", draw(bound)),
                 Floor("citation_accuracy", draw(bound)),
                 Floor("faithfulness", draw(bound), xfail=draw(xfail)),
                 Floor("faithfulness", draw(bound), kind="single_doc"),
                 Floor("judge_coverage", draw(st.sampled_from((0.5, 0.95))), xfail=draw(xfail)),
                 Floor("answer_match", draw(bound), xfail=draw(xfail)),
                 Floor("hold_rate", draw(bound), kind="retrieval_miss", anchors=True)]
    if tagged:
        for metric in ("faithfulness", "abstention_accuracy"):
            family = draw(bound)
            catalogue += [Floor(metric, family, slice=("lang", lang)) for lang in LANGS]
    if labelled:
        catalogue.append(Floor("judge_agreement", draw(st.sampled_from((0.2, 0.6)))))
    chosen = draw(st.lists(st.sampled_from(range(len(catalogue))), min_size=1, unique=True))
    found = [catalogue[i] for i in sorted(chosen)]
    # a slice floor comes with its family: every slice of its key on its metric
    families = {(f.metric) for f in found if f.slice}
    return [f for f in found if not f.slice] + [f for f in catalogue
                                                if f.slice and f.metric in families]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    n = draw(st.integers(1, 24))
    gappy = draw(st.integers(0, 2)) == 0  # a third of the runs miss some results
    quality = draw(st.sampled_from((5, 8, 10)))
    tagged = draw(st.booleans())
    judged = draw(st.booleans())
    members = []
    fates: dict[str, str] = {}
    for i in range(n):
        kind = draw(st.sampled_from(KINDS))
        spans = 0 if kind == "unanswerable" else draw(st.integers(1, 2))
        fate = draw(st.sampled_from(FATES)) if gappy else "scored"
        fates[f"q{i:02d}"] = fate
        members.append(Member(
            question_id=f"q{i:02d}", question=f"what is q{i:02d}?", kind=kind,
            tags={"lang": draw(st.sampled_from(LANGS))} if tagged else {}, index=i,
            nodeid=None if fate == "deselected" else f"{ROUTE}::q{i:02d}", sealed=False,
            must_abstain=kind == "unanswerable", evidence_spans=spans))
    arrived = Arrived()
    for member in members:
        fate, node = fates[member.question_id], member.nodeid
        if node is None or fate == "never ran":
            continue
        arrived.started[node] = (ROUTE, member.index, member.question_id)
        if fate == "scored":
            arrived.records[node] = draw(scored_row(member, judged, quality))
        elif fate == "error":
            arrived.records[node] = _row(member, status="error", error="it raised")
            arrived.failed[node] = Failure(phase="call", why="it raised")
        elif fate == "skipped":
            arrived.records[node] = _row(member, status="skipped", error="Skipped: no")
        elif fate == "crashed":
            arrived.failed[node] = Failure(phase="call", why="worker died", crashed=True)
    labels = []
    scored_ids = [m.question_id for m in members if fates[m.question_id] == "scored"
                  and not m.must_abstain]
    if judged and draw(st.booleans()) and scored_ids:
        binary = draw(st.booleans())
        for qid in draw(st.lists(st.sampled_from(scored_ids), unique=True)):
            labels.append(LabelSpec(question_id=qid, metric="faithfulness",
                                    value=draw(st.sampled_from((0.0, 1.0) if binary
                                                               else (0.0, 0.5, 1.0))),
                                    binary=binary))
    anchors = []
    for i in range(draw(st.integers(0, 4))):
        fate = draw(st.sampled_from(("passed",) * 6 + ("failed", "error", "deselected")))
        anchor = AnchorMember(anchor_id=f"a{i}", kind="retrieval_miss",
                              nodeid=None if fate == "deselected" else f"{ROUTE}::anchor[a{i}]")
        anchors.append(anchor)
        if anchor.nodeid is not None:
            arrived.started[anchor.nodeid] = (ROUTE, None, anchor.anchor_id)
            arrived.anchors[anchor.nodeid] = AnchorOutcome(
                goldset="gs", anchor_id=anchor.anchor_id, kind="retrieval_miss", claim="c",
                path="gs/anchors.jsonl", line=i + 1,
                outcome="failed" if fate == "failed" else "passed",
                error="it raised" if fate == "error" else None)
    chosen = draw(floors(tagged, bool(labels)))
    agreement = next((f.min for f in chosen if f.metric == "judge_agreement"), None)
    population = Population(
        route=ROUTE, goldset="gs", eval_version="1", sha256="sha", questions=members,
        anchors=anchors, labels=labels, agreement_min=agreement,
        estimate="ppi" if labels and draw(st.booleans()) else "judge",
        judge=JUDGE if judged else None)
    specs = [FloorSpec(nodeid=f"{ROUTE}::{f.name}", location=(ROUTE, 0, f.name), route=ROUTE,
                       goldset="gs", eval_version="1", floor=f, keywords=["rag_gate"],
                       config_path=ROUTE) for f in chosen]
    rules = Rules(strictness=Strictness(ci=draw(st.sampled_from(("point", "strict"))),
                                        min_n=draw(st.sampled_from((0, 0, 3)))),
                  require_judge=draw(st.booleans()),
                  slices=SliceRules(insufficient=draw(st.sampled_from(("fail", "skip")))))
    order = tuple(draw(st.permutations(range(len(arrived.records)))))
    return Scenario(collected=Collected(floors=specs, populations=[population]),
                    arrived=arrived, rules=rules, order=order)


def verdicts(decision: Decision, messages: bool = True) -> dict[str, tuple[object, ...]]:
    """Each floor's verdict as every output shows it: outcome, figure, interval, n, message."""
    return {d.spec.floor.name: (d.verdict.outcome, d.verdict.value, d.verdict.interval,
                                d.verdict.tally.n if d.verdict.tally else None,
                                *((d.verdict.message,) if messages else ()))
            for d in decision.floors}


def _reordered(arrived: Arrived, order: tuple[int, ...]) -> Arrived:
    records = list(arrived.records.items())
    return Arrived(records=dict(records[i] for i in order),
                   anchors=dict(reversed(arrived.anchors.items())),
                   failed=dict(reversed(arrived.failed.items())), started=arrived.started)


def _settings(rules: Rules, judge: str | None) -> Settings:
    s = rules.strictness
    return Settings(judge=JudgeSettings(judge=judge),
                    gate=GateSettings(ci=s.ci, min_n=s.min_n,
                                      sealed_without_key=s.sealed_without_key,
                                      slice_insufficient=rules.slices.insufficient),
                    run=RunSettings(require_judge=rules.require_judge))


def _items(collected: Collected) -> dict[str, Any]:
    """What `hold` reads of the session's goldset items: node id, location, keywords, and the
    question (its goldset's `question_outcome`) or the anchor (kind, claim, where)."""
    found: dict[str, Any] = {}
    case = SimpleNamespace(goldset=SimpleNamespace(config=SimpleNamespace(
        question_outcome="record")))
    for p in collected.populations:
        for m in p.questions:
            if m.nodeid is not None:
                found[m.nodeid] = SimpleNamespace(nodeid=m.nodeid, keywords={"rag_gate": 1},
                                                  location=(ROUTE, m.index, m.item_name),
                                                  stash={CASE_KEY: case})
        for i, a in enumerate(p.anchors):
            if a.nodeid is not None:
                entry = SimpleNamespace(anchor=SimpleNamespace(kind=a.kind, claim="c",
                                                               anchor_id=a.anchor_id),
                                        path="gs/anchors.jsonl", line=i + 1)
                found[a.nodeid] = SimpleNamespace(nodeid=a.nodeid, keywords={"rag_gate": 1},
                                                  location=(ROUTE, None, a.item_name),
                                                  stash={ANCHOR_KEY: entry})
    return found


def results_file(scenario: Scenario, decision: Decision) -> ResultsFile:
    """The gate's results file, written and read back."""
    judge = scenario.collected.populations[0].judge
    saved = saved_lines(_settings(scenario.rules, judge), scenario.collected, scenario.arrived,
                        decision.lost)
    text = results_lines(decision.runs, saved.header, saved.anchors, saved.items)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.jsonl"
        path.write_text(text, encoding="utf-8")
        found = read_results(path)
    assert not found.problems and not found.unvouched
    return found


def decided_from_file(scenario: Scenario, decision: Decision) -> Decision | None:
    """The gate's rows written as its results file, read back and decided as `ragate decide`
    decides them; None when the decide mode refuses the file (a selected member that never
    ran has no result: the run did not finish)."""
    files = [results_file(scenario, decision)]
    row_knobs = files[0].header.settings if files[0].header else {}
    collected, problems = asked_as_saved(judged_as_saved(scenario.collected, row_knobs), files)
    assert problems == []
    held = hold(files, collected, _items(collected))
    if held.problems:
        return None
    return decide_run(collected, held.arrived, scenario.rules)


def rejudged(scenario: Scenario, decision: Decision,
             candidate: dict[RowKey, Regraded] | None) -> Comparison:
    """`ragate rejudge` over the gate's results file: the saved rows' arrivals as it rebuilds
    them, each judged floor decided under the current judge and under the candidate's
    verdicts (None: the current judge's own)."""
    saved = results_file(scenario, decision)
    rows = [row for _, row in saved.rows]
    [population] = scenario.collected.populations
    current = saved_arrivals(population, rows, saved.items, saved.anchors)
    graded = rows if candidate is None else regraded_rows(rows, "fixture:candidate", candidate)
    return compare_judges(goldset="gs", collected=scenario.collected, current=current,
                          candidate=with_rows(current, graded), rules=scenario.rules,
                          shifts=(), candidate_judge="fixture:candidate")


@st.composite
def candidates(draw: st.DrawFn, rows: list[QuestionRecord]) -> dict[RowKey, Regraded]:
    """A candidate judge's verdicts on the judged rows, some of them failures."""
    return {key_of(r): draw(st.sampled_from((
        Regraded(values={"faithfulness": 1.0}), Regraded(values={"faithfulness": 0.5}),
        Regraded(values={"faithfulness": 0.0}),
        Regraded(failures={"faithfulness": "timeout"}))))
        for r in judged_rows(rows)}


def _outcomes(decision: Decision, judged: bool = False) -> dict[str, str]:
    return {d.spec.floor.name: d.verdict.outcome for d in decision.floors
            if not judged or (d.spec.floor.judged and not d.spec.floor.anchors)}


def _sequential(collected: Collected) -> Collected:
    return collected.model_copy(update={"populations": [
        p.model_copy(update={"sequential": SequentialPlan(seed=7, alpha=0.05)})
        for p in collected.populations]})


@EXAMPLES
@given(scenarios(), st.data())
def test_every_path_reaches_each_floors_verdict_alike(scenario: Scenario,
                                                      data: st.DataObject) -> None:
    gate = decide_run(scenario.collected, scenario.arrived, scenario.rules)
    expected = verdicts(gate)
    # (a) the order results arrive in decides nothing
    assert verdicts(decide_run(scenario.collected, _reordered(scenario.arrived, scenario.order),
                               scenario.rules)) == expected
    # (b) `ragate decide` over the run's results file
    never_ran = any(g.kind == "never ran" for run in gate.runs for g in run.gaps)
    again = decided_from_file(scenario, gate)
    assert (again is None) == never_ran
    if again is not None:
        assert verdicts(again) == expected
    # (d) a sequential goldset every question of which was asked: decided as asked in full
    sequential = decide_run(_sequential(scenario.collected), scenario.arrived, scenario.rules)
    assert verdicts(sequential, messages=False) == verdicts(gate, messages=False)
    # (c) `ragate rejudge` with the same judge, over the run's results file, and its
    # candidate's prediction against the gate run with the candidate's rows
    if any(judged_rows(list(scenario.arrived.records.values()))):
        same = rejudged(scenario, gate, None)
        assert {f.floor.name: f.current for f in same.floors} == _outcomes(gate, judged=True)
        assert not any(f.changed for f in same.floors)
        candidate = data.draw(candidates(list(scenario.arrived.records.values())))
        predicted = rejudged(scenario, gate, candidate)
        rows = {key_of(r): r for r in regraded_rows(list(scenario.arrived.records.values()),
                                                    "fixture:candidate", candidate)}
        with_candidate = Arrived(
            records={n: rows[key_of(r)] for n, r in scenario.arrived.records.items()},
            anchors=scenario.arrived.anchors, failed=scenario.arrived.failed,
            started=scenario.arrived.started)
        by_gate = decide_run(scenario.collected, with_candidate, scenario.rules)
        assert {f.floor.name: f.candidate for f in predicted.floors} == _outcomes(
            by_gate, judged=True)


@settings(max_examples=25, deadline=None, derandomize=True, database=None)
@given(n=st.sampled_from((120, 200, 300)), seed=st.integers(0, 10**6),
       gaps=st.lists(st.tuples(st.integers(0, 299),
                               st.sampled_from(("error", "unsure", "labelled"))),
                     max_size=3))
def test_a_stop_never_passes_over_a_question_without_a_result(
        n: int, seed: int, gaps: list[tuple[int, str]]) -> None:
    """(d'), issue 45: a sequential goldset of answers right by answer_match, but a few
    errored, unsure and not labelled, or unsure and labelled (a result). Whatever the order,
    a stop is made only when none of the questions it asked lacks a result and the bound on
    the rest was proved at the goldset's budget (issue 49: it need not share it with the
    floors); every question without a result is then among those it did not ask. Without
    any, it stops (a clear goldset still stops early)."""
    from pytest_ragate.decision.sequential import Stopping

    members = [Member(question_id=f"q{i:03d}", question="?", kind="single_doc", index=i,
                      nodeid=f"{ROUTE}::q{i:03d}", sealed=False, must_abstain=False,
                      evidence_spans=1) for i in range(n)]
    right = AnswerCheck(outcome="right", why="checked", facts=1, found=[1])
    rows = {m.item_name: _row(m, answer_check=right) for m in members}
    lacking = set()
    for at, kind in gaps:
        name = f"q{at % n:03d}"
        if kind == "error":
            rows[name] = _row(members[at % n], status="error", error="it raised")
        else:
            labelled = kind == "labelled"
            rows[name] = _row(members[at % n], answer_check=AnswerCheck(
                outcome="unsure", why="fact 1 not stated", facts=1, missing=[1],
                settled="label" if labelled else None, label=1 if labelled else None))
        if kind != "labelled":
            lacking.add(name)
        else:
            lacking.discard(name)
    population = Population(route=ROUTE, goldset="gs", eval_version="1", sha256="sha",
                            questions=members, anchors=[],
                            sequential=SequentialPlan(seed=seed, alpha=0.05))
    stopping = Stopping.of(population, [Floor("answer_match", 0.6)])
    assert stopping is not None
    again = {name: row.model_copy(update={"reasked": True}) for name, row in rows.items()}
    stopping.replay(rows, again)
    if stopping.stopped:
        assert stopping.gaps is not None and stopping.gaps.decided
        assert stopping.gaps.p <= 0.05
        assert lacking <= stopping.not_needed
    if not lacking:
        assert stopping.stopped
