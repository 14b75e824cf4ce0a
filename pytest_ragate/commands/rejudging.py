"""`ragate rejudge`: the answers a results file saved, graded again by a candidate judge and
held to the current judge's verdicts, asking the system nothing.

The command's glue around the pure comparison (`scoring/rejudge.py`: the shifts;
`decision/rejudge.py`: the floors under both judges), one step a function: the
results files read, each whole (`read_files`); the candidate judge built from its spec
(`candidate_judge`); the saved rows gathered per goldset route, each route's from one run (its
results file, or each of its shard files once; `hold_to_one_run`), and some row judged
(`saved_routes`: a comparison of nothing would say "no change"); each goldset opened (a sealed
one with RAGATE_SEAL_KEY: the judge's reference comes from the goldset, never from a results
file) and held to every digest its rows were written under (`open_goldsets`); the judge runner
over every saved answer, with a run's cache, concurrency and timeout (`judge_runner`,
`regrade`); the run's population and arrivals as its results files keep them
(`saved_collection`, `saved_arrivals`), decided by the gate's own decision under each judge
(`compare_route`); rendered as text or JSON with the
sealed texts and the judge URL's credentials masked (`Rejudged.shown`).

Whatever stops a rejudge before it compares is a `Refused`: one line, which `ragate rejudge`
prints with exit 2, so exit 1 stays the judge change's own answer.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pytest_ragate.commands.goldset_paths import routed_goldsets
from pytest_ragate.decision.population import (
    Collected,
    FloorSpec,
    Population,
    SequentialPlan,
    anchor_name,
)
from pytest_ragate.decision.rejudge import Comparison, compare_judges
from pytest_ragate.decision.rules import rules_of
from pytest_ragate.decision.run_decision import Arrived, Failure
from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.loader import Goldset, load_goldset
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.runner import JudgedScores, JudgeRunner, judged_metrics
from pytest_ragate.modes.saved_lines import saved_failure
from pytest_ragate.outputs.results import (
    NoResultsFile,
    ResultsFile,
    SavedAnchor,
    SavedItem,
    results_paths,
)
from pytest_ragate.outputs.saved_runs import (
    extent_of,
    first_of,
    read_saved_files,
    shard_problems,
)
from pytest_ragate.problems import GoldsetError
from pytest_ragate.redaction import Redactor, known_credentials
from pytest_ragate.scoring.agreement import AGREEMENT
from pytest_ragate.scoring.records import QuestionRecord, fmt_some
from pytest_ragate.scoring.rejudge import (
    Regraded,
    RowKey,
    judge_shifts,
    judged_rows,
    key_of,
    regraded_rows,
)
from pytest_ragate.scoring.rubrics import Rubric
from pytest_ragate.settings import JudgeSettings
from pytest_ragate.wording.agreement import agreement_figure
from pytest_ragate.wording.numbers import NAMED, fmt_p, fmt_shift
from pytest_ragate.wording.rejudge import changes, judge_change_verdict, no_judged_contexts


class Refused(Exception):
    """A rejudge that cannot start (a bad judge spec, a file it cannot read or use): one
    line naming what and why."""


@dataclass(frozen=True, kw_only=True)
class Ask:
    """What `ragate rejudge` was asked: its arguments, where not given the settings a run
    of the project would take (read by pytest: `commands/project.py`), and its rootdir."""

    results: Sequence[str]  # results files, folders of them, globs
    spec: str  # the candidate judge: fixture:PATH or ragas:MODEL
    judge_url: str | None
    goldsets: Sequence[Path] | None  # the ragate.toml files --goldset named; None: none was
    cache_dir: Path
    concurrency: int
    timeout: float
    rootdir: Path


@dataclass(frozen=True, kw_only=True)
class SavedRoute:
    """One goldset route's saved rows, and the results files they were read from."""

    goldset: str
    route: str
    rows: list[QuestionRecord]
    files: list[ResultsFile]
    label: str = ""  # as the run labels it: the name, with the route when two routes share it
    # the questions its run never asked (deselected, or left by a sequential stop), and why
    unasked: tuple[str, ...] = ()
    partial: str = ""


@dataclass(frozen=True, kw_only=True)
class Rejudged:
    """Each route's comparison, and the texts no output may show."""

    comparisons: list[Comparison]
    sealed: tuple[str, ...]
    credentials: tuple[str, ...]
    not_judged: Mapping[str, str] = dataclasses.field(default_factory=dict)  # by goldset
    # label: the questions its run never asked, which neither judge graded (`not_judged`)

    @property
    def exit_status(self) -> int:
        """1 when the judge change moves the gate (a floor's outcome, a significant shift,
        an answer the candidate could not grade) or cannot be held to every question (the
        run did not ask some), else 0."""
        return 1 if any(c.reasons for c in self.comparisons) or self.not_judged else 0

    def shown(self, as_json: bool) -> str:
        said = (render_json(self.comparisons, self.not_judged) if as_json
                else render_text(self.comparisons, self.not_judged))
        return Redactor(self.sealed, self.credentials)(said)


def rejudge(ask: Ask) -> Rejudged:
    """The saved answers graded by the candidate and compared, route by route; a `Refused`
    (its text masked of the judge URL's credentials) when it cannot be."""
    credentials = known_credentials(urls=(ask.judge_url,))
    try:
        return _rejudged(ask, credentials)
    except Refused as error:
        raise Refused(Redactor((), credentials)(str(error))) from None


def _rejudged(ask: Ask, credentials: tuple[str, ...]) -> Rejudged:
    files = read_files(ask.results, ask.rootdir)
    judge = candidate_judge(ask.spec, ask.judge_url, ask.timeout)
    routes = saved_routes(files)
    goldsets = open_goldsets(files, ask.goldsets, ask.rootdir, {r.goldset for r in routes})
    sealed = tuple(t for g in goldsets.values() for t in g.sealed_texts)
    runner = judge_runner(ask, judge, routes, Redactor(sealed, credentials))
    try:
        comparisons = [compare_route(saved, goldsets[saved.goldset], judge, runner)
                       for saved in routes]
    finally:
        runner.close()
    return Rejudged(comparisons=comparisons, sealed=sealed, credentials=credentials,
                    not_judged={saved.label: not_judged(saved) for saved in routes
                                if saved.unasked})


# --- the inputs ------------------------------------------------------------------------------


def read_files(results: Sequence[str], rootdir: Path) -> list[ResultsFile]:
    """The results files (files, folders of `*.jsonl`, globs; from here, then from the
    rootdir), each read through `saved_runs` (a header, its trailer and, with
    RAGATE_RESULTS_KEY, its signature vouching for it; its run not interrupted)."""
    try:
        paths = results_paths(results, rootdir)
    except NoResultsFile as error:
        raise Refused(str(error)) from None
    files, problems = read_saved_files(paths)
    if problems:
        raise Refused(first_of(problems))
    return files


def candidate_judge(spec: str, judge_url: str | None, timeout: float) -> Any:
    """The judge `spec` names, built as `--ragate-judge` would build it; its usage error
    said with this command's option names."""
    from pytest_ragate.builtin_system import MODEL_ID
    from pytest_ragate.judges.select import check_settings, from_settings

    def embedder() -> Any:
        from pytest_ragate.builtin_system.retrieval import Embedder

        return Embedder()

    try:
        settings = JudgeSettings(judge=spec, judge_url=judge_url, judge_timeout=timeout)
        check_settings(settings)
        return from_settings(settings, embedder, embedder_id=MODEL_ID)
    except Exception as error:  # pytest's UsageError: the one line pytest would print
        raise Refused(str(error).replace("ragate_judge_url", "--judge-url")
                      .replace("--ragate-judge ", "--judge ")) from None


def saved_routes(files: Sequence[ResultsFile]) -> list[SavedRoute]:
    """The rows of each goldset route, in the order they were read, each route's from one
    run; refused when a judged row keeps no judged contexts (the candidate would grade it
    against nothing), or when no row was judged (there is nothing to compare: "no change"
    would be a pass of nothing)."""
    routes = _rows_by_route(files)
    names = Counter(saved.goldset for saved in routes)
    routes = [replace(saved, label=saved.goldset if names[saved.goldset] == 1
                      else f"{saved.goldset} ({saved.route})") for saved in routes]
    for saved in routes:
        hold_to_one_run(saved, files)
    routes = [unasked_of(saved) for saved in routes]
    if not any(judged_rows(saved.rows) for saved in routes):
        raise Refused(nothing_judged())
    return routes


def unasked_of(saved: SavedRoute) -> SavedRoute:
    """The route with the questions its run never asked (each file's header and rows say
    which: `saved_runs.extent_of`), which the candidate cannot be held to."""
    extents = [e for f in saved.files if (e := extent_of(f).of(saved.route)) is not None]
    unasked = tuple(name for e in extents for name in e.unasked)
    why = "; ".join(line for e in extents for line in e.why())
    return replace(saved, unasked=unasked, partial=why)


def _rows_by_route(files: Sequence[ResultsFile]) -> list[SavedRoute]:
    by_route: dict[tuple[str, str], SavedRoute] = {}
    for found in files:
        for line, row in found.rows:
            if row in judged_rows([row]) and row.judged_contexts is None:
                raise Refused(no_judged_contexts(str(found.path), line,
                                                          row.question_id))
            saved = by_route.setdefault((row.goldset, row.route), SavedRoute(
                goldset=row.goldset, route=row.route, rows=[], files=[]))
            saved.rows.append(row)
            if not saved.files or saved.files[-1] is not found:
                saved.files.append(found)
    return list(by_route.values())


def hold_to_one_run(saved: SavedRoute, files: Sequence[ResultsFile]) -> None:
    """Refused unless the files that hold this route are one run's: its one results file,
    or each of its shard files once (`saved_runs.shard_problems`), under one judge. Rows of
    two runs (a copy of the file, another run's) would be paired as if they were more
    answers, and one shard's would decide a floor over part of the run."""
    mine = [f for f in files if any(f is g for g in saved.files) or any(
        s.route == saved.route and s.goldset == saved.goldset
        for s in (f.header.goldsets if f.header else []))]
    label = f"{saved.goldset} ({saved.route})"
    problems = shard_problems(mine)
    if problems:
        raise Refused(f"goldset {label}: {problems[0]}")
    judges = sorted({row.judge for row in saved.rows if row.judge})
    if len(judges) > 1:
        raise Refused(judges_differ(label, judges))


def open_goldsets(files: Sequence[ResultsFile], configs: Sequence[Path] | None,
                  rootdir: Path, names: set[str]) -> dict[str, Goldset]:
    """Each goldset the rows name, by name, loaded from `configs` (else from the routes the
    results' headers name) and held to what its rows were written under."""
    loaded: dict[str, Goldset] = {}
    if configs is None:
        configs = routed_goldsets(files, rootdir)
    for config in dict.fromkeys(configs):
        goldset = load(config)
        loaded.setdefault(goldset.name, goldset)
    for name in sorted(names):
        hold(loaded.get(name), name, files)
    return loaded


def load(config: Path) -> Goldset:
    try:
        return load_goldset(config)
    except GoldsetError as error:
        raise Refused(invalid_goldset(config, str(error.problems[0]))) from None


def hold(goldset: Goldset | None, name: str, files: Sequence[ResultsFile]) -> None:
    """The goldset `name`, refused when it was not found, is sealed without its key (the
    judge's reference would be missing), or changed since the rows were written."""
    if goldset is None:
        raise Refused(goldset_not_found(name))
    if goldset.sealed and any(c.expected is None for c in goldset.cases):
        raise Refused(sealed_without_key(goldset.config_path))
    if any(sha != goldset.content_sha256 for sha in written_under(name, files)):
        raise Refused(goldset_changed(goldset.config_path))


def written_under(name: str, files: Sequence[ResultsFile]) -> set[str]:
    """The content digests of goldset `name` its rows were written under: each header's
    stamp, and each row's own (every one must be the goldset's as it is now)."""
    stamped = {s.sha256 for f in files for s in (f.header.goldsets if f.header else [])
               if s.goldset == name and s.sha256}
    return stamped | {row.goldset_sha256 for f in files for _, row in f.rows
                      if row.goldset == name and row.goldset_sha256}


# --- the candidate's verdicts ----------------------------------------------------------------


def judge_runner(ask: Ask, judge: Any, routes: Sequence[SavedRoute],
                 redact: Redactor) -> JudgeRunner:
    """A run's judge runner: its cache folder and concurrency, as the project sets them.

    A verdict's cache key names the judge, not its server: a candidate with the current
    judge's own id (the same model at another URL) is graded afresh, never served the
    current judge's verdicts from the cache."""
    same = any(row.judge == judge.judge_id for saved in routes for row in saved.rows)
    return JudgeRunner(ask.concurrency, ask.cache_dir, "off" if same else "on",
                       timeout=ask.timeout, redact=redact)


def regrade(rows: Sequence[QuestionRecord], goldset: Goldset, judge: Any,
            runner: JudgeRunner) -> tuple[dict[RowKey, Regraded], list[str]]:
    """The candidate's verdicts on every judged row, for the metrics the current judge was
    asked there (and the candidate gives), and those metrics in order. Every answer is
    submitted before any is awaited: the runner bounds how many are in flight."""
    wanted = {*judged_metrics(judge), *goldset.requested_verdicts}
    gists = {c.question.question_id: c.expected.gist for c in goldset.cases
             if c.expected is not None}
    futures = {}
    metrics: dict[str, None] = {}
    for row in judged_rows(rows):
        asked = [m for m in row.judge_attempted if m in wanted]
        metrics.update(dict.fromkeys(asked))
        futures[key_of(row)] = runner.submit(
            judge, judge_input(row, gists, goldset.digest_key, goldset.rubrics), asked,
            row.eval_version)
    return {key: regraded(future.result()) for key, future in futures.items()}, list(metrics)


def judge_input(row: QuestionRecord, gists: Mapping[str, str],
                key: bytes | None = None, rubrics: Mapping[str, Rubric] | None = None,
                ) -> JudgeInput:
    """What the current judge was shown for this row: the saved answer and judged
    contexts, and the goldset's reference; `key`, a sealed goldset's digest key (the
    cache key is keyed with it, as the run's was)."""
    return JudgeInput(row.question_id, row.question or "", row.answer_text or "",
                      tuple(row.judged_contexts or ()), reference=gists.get(row.question_id),
                      repeat=row.repeat, answer_sha256=row.answer_sha256, digest_key=key,
                      rubrics=rubrics or {})


def regraded(got: JudgedScores) -> Regraded:
    return Regraded(values=got.values, failures=got.failures)


# --- the comparison --------------------------------------------------------------------------


def compare_route(saved: SavedRoute, goldset: Goldset, judge: Any,
                  runner: JudgeRunner) -> Comparison:
    """One route's saved rows under both judges, each judged floor decided by the gate's own
    decision over the run's population: over the saved rows, and over the same rows graded
    by the candidate."""
    verdicts, metrics = regrade(saved.rows, goldset, judge, runner)
    collected = saved_collection(saved, goldset)
    [population] = collected.populations
    files = [f for f in saved.files if f.header is not None]
    current = saved_arrivals(population, saved.rows, [i for f in files for i in f.items],
                             [a for f in files for a in f.anchors])
    return compare_judges(
        goldset=saved.label, collected=collected, current=current,
        candidate=with_rows(current, regraded_rows(saved.rows, judge.judge_id, verdicts)),
        rules=rules_of(gate_of(saved.files)), candidate_judge=judge.judge_id,
        shifts=judge_shifts(metrics, saved.rows, verdicts, goldset.floors))


def gate_of(files: Sequence[ResultsFile]) -> dict[str, Any]:
    """The deciding knobs of the run that wrote the rows, as its results header keeps them."""
    return next((f.header.gate for f in files if f.header is not None), {})


def saved_collection(saved: SavedRoute, goldset: Goldset) -> Collected:
    """The population the run that wrote the rows decided its floors over (every question of
    the goldset once per repeat it was asked, but those its header says it deselected; its
    anchors on the file route; its labels, configured judge and sequential plan), and the
    goldset's floors."""
    headers = [f.header for f in saved.files if f.header is not None]
    stamps = [s for h in headers for s in h.goldsets if s.route == saved.route]
    settings = headers[0].settings if headers else {}
    repeats = int(settings.get("repeat") or goldset.config.repeat)
    cases = [c for case in goldset.cases for c in case.repeated(repeats)]
    anchors = ([e.anchor for e in goldset.anchors] if saved.route.endswith(CONFIG_NAME)
               else None)
    deselected = {name for stamp in stamps for name in stamp.deselected}
    names = [c.item_name for c in cases] + [anchor_name(a.anchor_id) for a in anchors or ()]
    plan = next((s.sequential for s in stamps if s.sequential), None)
    population = Population.of(
        saved.route, goldset, cases, anchors,
        {n: f"{saved.route}::{n}" for n in names if n not in deselected},
        labels=goldset.labels, repeats=repeats,
        agreement_min=next((f.min for f in goldset.floors if f.metric == AGREEMENT), None),
        coverage_min=next((f.min for f in goldset.floors if f.metric == "judge_coverage"
                           and f.kind is None and f.slice is None), None),
        judge_optional=goldset.config.judge.optional,
        estimate="ppi" if goldset.estimate == "ppi" else "judge", judge=settings.get("judge"),
        sequential=SequentialPlan.model_validate(plan) if plan else None,
        rubrics=list(goldset.rubrics))
    floors = [FloorSpec(nodeid=f"{saved.route}::{f.name}", location=(saved.route, None, f.name),
                        route=saved.route, goldset=goldset.name,
                        eval_version=goldset.eval_version, floor=f, keywords=[])
              for f in goldset.floors]
    return Collected(floors=floors, populations=[population])


def saved_arrivals(population: Population, rows: Sequence[QuestionRecord],
                   items: Sequence[SavedItem], anchors: Sequence[SavedAnchor]) -> Arrived:
    """What a run's reports brought, as its results file keeps it: each selected question's
    row (but the one a crashed item's run made up, which the decision makes again), the
    failure its item line names (else its row's error), its loss; each anchor's outcome."""
    arrived = Arrived()
    nodes = {(m.question_id, m.repeat): m for m in population.questions if m.nodeid}
    kept = {i.name: i for i in items if i.route == population.route}
    for row in rows:
        member = nodes.get((row.question_id, row.repeat))
        if row.route != population.route or member is None or member.nodeid is None:
            continue
        node, item = member.nodeid, kept.get(member.item_name)
        if item is not None and item.lost:
            arrived.started[node] = (population.route, None, member.item_name)
            continue
        if item is None or item.row:
            arrived.records[node] = row
        if item is not None:
            arrived.failed[node] = saved_failure(item.phase, item.why)
        elif row.status == "error":
            arrived.failed[node] = Failure(phase="call", why=row.error or "error")
    by_id = {a.anchor_id: a.nodeid for a in population.anchors if a.nodeid}
    for saved in anchors:
        node = by_id.get(saved.outcome.anchor_id)
        if saved.route == population.route and node is not None:
            arrived.anchors[node] = saved.outcome
    return arrived


def with_rows(arrived: Arrived, rows: Sequence[QuestionRecord]) -> Arrived:
    """The same arrivals with `rows` (the same questions, graded by another judge) in place
    of their rows."""
    by_key = {key_of(r): r for r in rows}
    return dataclasses.replace(arrived, records={
        node: by_key.get(key_of(r), r) for node, r in arrived.records.items()})


# --- what it says ----------------------------------------------------------------------------


def render_text(comparisons: Sequence[Comparison],
                not_judged: Mapping[str, str] | None = None) -> str:
    """Per route: the shifts table, the floors table, the flipped answers, each judge's
    agreement with the labels, why the change moves the gate (the questions its run never
    asked among the reasons: `not_judged`, by label), and the verdict line."""
    out: list[str] = []
    for c in comparisons:
        out.append(f"ragate rejudge: goldset {c.goldset}: current judge {c.current_judge}, "
                   f"candidate {c.candidate_judge}")
        out.append(_shifts_table(c))
        floors = [[f.floor.name, f.current, f.candidate,
                   "CHANGES" if f.changed else "same"] for f in c.floors]
        if floors:
            out.append(_tabulate(floors, ["floor", "current judge", "candidate judge", ""]))
        out += _flipped(c)
        for a in c.agreements:
            out.append(f"labels, {a.metric}: current {agreement_figure(a.current)}; "
                       f"candidate {agreement_figure(a.candidate)} "
                       f"(n {a.current.n}, {a.candidate.n})")
        said = [*changes(c), *([not_judged[c.goldset]] if c.goldset in (not_judged or {})
                               else [])]
        out += [f"- {why}" for why in said]
        out.append(judge_change_verdict(said, c.alpha))
    return "\n".join(out)


def _shifts_table(c: Comparison) -> str:
    rows = []
    for s in c.shifts:
        rows.append([s.name, s.n, "—" if s.current is None or s.candidate is None
                     else f"{s.current:.2f} → {s.candidate:.2f}",
                     fmt_shift(s.shift, s.interval), fmt_p(s.p_bootstrap),
                     "—" if s.floor is None else f"{s.floor:.2f}",
                     f"{s.passed_to_failed}/{s.failed_to_passed}" if s.floor is not None
                     else "—",
                     fmt_p(s.p_mcnemar), "yes" if s.significant else "no"])
    return _tabulate(rows, ["metric", "n", "current → candidate", "shift [95% CI]",
                            "bootstrap p", "floor", "pass→fail/fail→pass", "McNemar p",
                            "significant"])


def _flipped(c: Comparison) -> list[str]:
    """`flipped faithfulness: q01 1.00→0.33, …` for each metric whose answers flipped."""
    out = []
    for s in c.shifts:
        if s.flips and s.kind is None:
            named = fmt_some([f"{f.name} {f.current:.2f}→{f.candidate:.2f}"
                              for f in s.flips], NAMED)
            out.append(f"flipped {s.metric}: {named}")
    return out


def _tabulate(rows: list[list[Any]], headers: list[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers)


def render_json(comparisons: Sequence[Comparison],
                not_judged: Mapping[str, str] | None = None) -> str:
    said = [{**dataclasses.asdict(c), "changes": changes(c),
             "floors": [{**dataclasses.asdict(f), "floor": f.floor.name} for f in c.floors]}
            for c in comparisons]
    for c, shown in zip(comparisons, said, strict=True):
        if c.goldset in (not_judged or {}):
            shown["not_judged"] = not_judged[c.goldset]  # type: ignore[index]
            shown["changes"] = [*changes(c), shown["not_judged"]]
    return json.dumps(said, indent=2, ensure_ascii=False)


def judges_differ(label: str, judges: Sequence[str]) -> str:
    return (f"goldset {label}: its rows were graded by different judges ({', '.join(judges)}):"
            " rejudge one run's results, graded by one current judge")


def not_judged(saved: SavedRoute) -> str:
    """Why a route's comparison cannot vouch for the candidate on every question."""
    return (f"not judged: {len(saved.unasked)} question{'s' * (len(saved.unasked) != 1)} "
            f"the run never asked ({saved.partial}: {fmt_some(saved.unasked, NAMED)}); "
            "neither judge graded them, so every floor counting them is not decided here: "
            "rejudge a run that asked every question")


def nothing_judged() -> str:
    return ("no saved answer was graded by a judge (the run had no --ragate-judge, or every "
            "question abstained or failed): nothing to hold the candidate judge to")


def invalid_goldset(config: Path, problem: str) -> str:
    return f"{config}: not a valid goldset ({problem}); `ragate validate` lists every problem"


def goldset_not_found(name: str) -> str:
    return (f"goldset {name!r}: its ragate.toml was not found from the results' header; "
            "pass it with --goldset PATH")


def sealed_without_key(config: Path) -> str:
    return (f"{config}: the goldset is sealed: set RAGATE_SEAL_KEY to open it (the judge's "
            "reference is read from the goldset, never from a results file)")


def goldset_changed(config: Path) -> str:
    return (f"{config}: the goldset changed since the results were written (its content "
            "digest differs from the header's); rerun the gate, then rejudge its results")
