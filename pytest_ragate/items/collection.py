"""Goldsets as pytest items: a `ragate.toml` file route and a decorated-function route.

Question items are `pytest.Function`s so fixtures work in both routes. Floor items are
collected like any item (so `-k`, `-m`, `--collect-only` and the counts see them) but run
silently: the controller decides and reports them once every question has run (`controller.py`).
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.decision.margins import Margins
from pytest_ragate.decision.population import Collected, FloorSpec, Population, anchor_name
from pytest_ragate.goldsets.anchors import AnchorEntry, Cut, NoCut, NoDistance
from pytest_ragate.goldsets.floors_table import parse_floors, slice_floors, with_judge_coverage
from pytest_ragate.goldsets.loader import Case, Goldset, load_goldset
from pytest_ragate.goldsets.promotion import PROMOTE_HINT
from pytest_ragate.goldsets.sealed import locate_sealed
from pytest_ragate.items.conversations import asked, group_mark
from pytest_ragate.items.keys import (
    AGAIN_KEY,
    ANCHOR_KEY,
    CASE_KEY,
    FLOOR_KEY,
    GOLDSET_KEY,
    GOLDSETS_KEY,
    LAST_RUN_KEY,
    NEEDED_KEY,
    ROUTE_KEY,
)
from pytest_ragate.items.long_lived import long_lived
from pytest_ragate.items.printed import start_printing
from pytest_ragate.items.pytest_internals import as_reported, run_unlogged, shared_closure
from pytest_ragate.items.reasons import failure_line
from pytest_ragate.items.route import RouteSpec
from pytest_ragate.items.sequential import plan_of
from pytest_ragate.items.xdist_worker import reporting_as
from pytest_ragate.problems import GoldsetError, Problem
from pytest_ragate.scoring.flips import anchor_digest
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, QuestionRecord
from pytest_ragate.wording.numbers import bound

if TYPE_CHECKING:
    from pytest_ragate.goldsets.config import AnchorsConfig
    from pytest_ragate.items.pytest_internals import TerminalRepr

NAMES_KEY = pytest.StashKey[dict[str, tuple[Path, str]]]()


def cached_goldset(config: pytest.Config, path: Path) -> Goldset:
    """Each goldset is loaded once per process, whichever route asks for it.

    The cyclic garbage collector is paused while it loads: tens of thousands of fresh,
    long-lived records otherwise trigger collections that find nothing to free.
    """
    cache = config.stash.setdefault(GOLDSETS_KEY, {})
    key = path.resolve()
    if key not in cache:
        enabled = gc.isenabled()
        gc.disable()
        try:
            cache[key] = load_goldset(key)
        finally:
            if enabled:
                gc.enable()
        start_printing(config)  # ragate runs here now: what pytest prints is redacted
    return cache[key]


def name_clash(config: pytest.Config, goldset: Goldset, where: str) -> str | None:
    """Two goldset folders with one name would share reports, history lines and baselines:
    the second one collected is an error naming both. (One folder collected by two routes is
    two runs, each keyed by its route.)"""
    names = config.stash.setdefault(NAMES_KEY, {})
    root, first = names.setdefault(goldset.name, (goldset.root.resolve(), where))
    if root == goldset.root.resolve():
        return None
    return (f"two goldsets are named {goldset.name!r}: {root} (collected by {first}) and "
            f"{goldset.root} (collected by {where}); results, history and baselines are kept "
            "by name, so give one of them another `name` in its ragate.toml")


# The file route's test body: the system under test answers the question's text. No docstring
# on purpose: `pytest --collect-only -v` prints the docstring of every item's function, the
# same sentence 10,000 times; the item's own line (`__repr__` below) says what it asks instead.
# The question is given by the plugin as it calls the test (`questions.answer_and_score`), not
# set up by the `ragate_question` fixture: a function-scoped fixture is set up and torn down
# for every question, a few percent of a gate's own cost (benchmarks/overhead.py).
def ask(ragate_system: Callable[[str], Any], ragate_question: Any = None) -> Any:
    return ragate_system(asked(ragate_question))


# A goldset with conversations asks through the fixture, which pytest sets up before the call:
# a turn whose earlier turn has no answer errors at setup (`conversations.with_history`).
def ask_turn(ragate_question: Any, ragate_system: Callable[[str], Any]) -> Any:
    return ragate_system(asked(ragate_question))


# --- how items read in `pytest --collect-only` ---------------------------------------------
# pytest prints `repr(node)` for every node of the collected tree (`-q` prints node ids, which
# stay as they are). The descriptions below are built only when printed: collecting costs the
# same, and `-k`, `-m`, node ids and xdist never see them.

CLIP = 60  # characters of a question, claim or xfail reason shown by default; all with -v


def _clip(node: pytest.Node, text: str) -> str:
    text = " ".join(text.split())
    if node.config.get_verbosity() >= 1 or len(text) <= CLIP:
        return text
    return text[:CLIP - 1].rstrip() + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _xfail(node: pytest.Node, reason: str | None) -> str:
    return f", strict xfail: {_clip(node, reason)}" if reason else ""


class QuestionItem(pytest.Function):
    """One question; its answer is scored by the plugin's `pytest_pyfunc_call`."""

    def __repr__(self) -> str:
        """`<QuestionItem q07 single_doc: "What did …?">`: the question, never its answer."""
        case = self.stash.get(CASE_KEY, None)
        if case is None:
            return super().__repr__()
        question = case.question
        return f'<QuestionItem {self.name} {question.kind}: "{_clip(self, question.question)}">'

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the question is written: its line in the questions file."""
        case = self.stash[CASE_KEY]
        questions = case.goldset.root / case.goldset.config.questions.file
        return questions, case.line - 1, f"{case.goldset.name}::{case.question.question_id}"


class FloorItem(pytest.Item):
    def __init__(self, *, goldset: Goldset, floor: Floor, route: str, prefix: str = "",
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.goldset = goldset
        self.floor = floor
        self.route = route
        self.prefix = prefix  # what its name follows: `test_fn::` for a decorated route

    def __repr__(self) -> str:
        """`<FloorItem floor[evidence_recall] ≥ 0.90, strict xfail: retrieval misses>`."""
        f = self.floor
        judged = ", judged" if f.judged else ""
        return f"<FloorItem {self.name} {bound(f)}{judged}{_xfail(self, f.xfail)}>"

    def runtest(self) -> None:
        """Nothing to do here: the controller decides floors once every question has run."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.goldset.config_path, 0, f"{self.goldset.name}::{self.floor.name}"

    def to_wire(self) -> FloorSpec:
        """What the controller needs to decide this floor."""
        f, g = self.floor, self.goldset
        declared = any(x == f for x in g.floors)  # else from a @ragate.floor decorator
        path, line, text = self.location
        return FloorSpec(nodeid=self.nodeid, location=(path, line, text), route=self.route,
                         beside=f"{self.parent.nodeid}::{self.prefix}" if self.parent else "",
                         goldset=g.name, eval_version=g.eval_version, floor=f,
                         keywords=sorted(self.keywords),
                         config_path=str(g.config_path) if declared else None)


def run_floor(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """A floor's protocol, unreported: the controller decides and reports it at the end.

    Floors are collected last, so the teardown of what earlier items set up (session and
    module fixtures: the system, its clean-up) often runs in a floor's. A failure there is
    not the floor's, and must not vanish with its unlogged reports: it is reported as a
    teardown error of the last item this process ran, as pytest reports a session fixture's
    failed teardown on the last test (an xdist worker that dies there: `Controller`)."""
    reports = run_unlogged(item, nextitem)
    last = item.config.stash.get(LAST_RUN_KEY, None)
    for report in (r for r in reports if r.failed):
        owner = last if report.when == "teardown" and last is not None else item
        if owner is not item:
            report = pytest.TestReport(
                owner.nodeid, owner.location, dict.fromkeys(owner.keywords, 1), "failed",
                report.longrepr, "teardown", sections=report.sections,
                duration=report.duration)
        with reporting_as(owner):
            owner.ihook.pytest_runtest_logreport(report=report)


RAG_GATE, SLOW = pytest.mark.rag_gate, pytest.mark.slow  # built once: 10k items add them


def requests_itself(item: pytest.Function) -> None:
    """A question item's own `request` joins its fixture closure, so once it is set up
    `item.funcargs["request"]` is the item's request, through which the question asks for
    `ragate_judge` and `ragate_answerer_model` when its answer is in (`answer_and_score`).

    Neither route's test function requests those fixtures (`ask` does not, and a
    `@ragate.goldset` test need not), and they are asked for after the answer on purpose:
    in the closure they would be built at setup, before the system answers, and a judge
    that cannot be built would become each question's setup error. `request` is pytest's
    own, built for every item: adding it sets nothing up. Items of one route share one
    closure (`shared_closure`), so the name is added once."""
    if "request" not in item.fixturenames:
        item.fixturenames.append("request")


def _mark(item: pytest.Item, judged: bool, case: Case | None = None) -> None:
    item.add_marker(RAG_GATE)
    if judged:
        item.add_marker(SLOW)
    if case is not None and case.expected is None:  # skip before any fixture is built
        item.add_marker(pytest.mark.skip(reason=f"{case.question.question_id}: the expected "
                                         "answers are sealed; set RAGATE_SEAL_KEY to score"))


def wrong_answer(case: Case, record: QuestionRecord) -> str | None:
    """Why a question's item fails under `question_outcome = "assert"`, or None: one rule,
    for the run that scores the question and for `ragate decide`, which replays its row."""
    if case.goldset.config.question_outcome != "assert" or not record.wrong:
        return None
    return f"{case.item_name} is wrong: " + "; ".join(record.wrong)


def repeats_of(config: pytest.Config, goldset: Goldset) -> int:
    """How many times this run asks each question: `ragate_repeat`
    overrides every goldset's own `repeat`."""
    from pytest_ragate.settings import read_settings

    return read_settings(config).gate.repeat or goldset.config.repeat


def repeated_cases(config: pytest.Config, goldset: Goldset) -> list[Case]:
    """Every question's case, once per repeat (`q07[r1]`..`q07[rN]`; `q07` when once)."""
    repeats = repeats_of(config, goldset)
    return [c for case in goldset.cases for c in case.repeated(repeats)]


def unmeasurable(floors: Iterable[Floor], repeats: int, where: str, questions: int,
                 ) -> str | None:
    """A floor on a metric over repeats (pass^k, pass@k, flaky_rate) that this run's repeats
    cannot measure, or a pass rate per question they cannot decide over the goldset's
    `questions`: a collection error naming the file and field, never a vacuous pass."""
    from pytest_ragate.scoring.pass_rate import PASS_RATE, repeats_short
    from pytest_ragate.scoring.registry import needs_repeats
    from pytest_ragate.wording.pass_rate import too_few_repeats

    problems = []
    for f in floors:
        if f.metric == PASS_RATE and (short := repeats_short(f.min, repeats, questions))[0]:
            problems.append(f"{where}: {too_few_repeats(f.min, repeats, questions, short[1])}")
        need = needs_repeats(f.metric)
        if need > repeats:
            field_ = f"floors.{'kind.' + f.kind + '.' if f.kind else ''}{f.metric}"
            problems.append(f"{where}: {field_}: {f.metric} needs repeat ≥ {need}, and this "
                            f"run asks each question {repeats} time{'s' * (repeats != 1)} (set "
                            "`repeat` in ragate.toml, or ragate_repeat)")
    return "\n".join(problems) or None


def make_questions(parent: pytest.Collector, goldset: Goldset) -> Iterator[pytest.Function]:
    """One Function per question and repeat, sharing one fixture closure (collection of 10k
    stays fast)."""
    fixtureinfo = None
    needed = verdicts_of(goldset, goldset.floors)
    body = ask_turn if any(c.question.conversation is not None for c in goldset.cases) else ask
    for case in repeated_cases(parent.config, goldset):
        item = QuestionItem.from_parent(parent, name=case.item_name, callobj=body,
                                        fixtureinfo=fixtureinfo)
        fixtureinfo = shared_closure(item)
        requests_itself(item)
        if case.repeats > 1:  # `q07[r2]` is a bracketed name, as a floor's is
            as_reported(item)
        item.stash[CASE_KEY] = case
        item.stash[GOLDSET_KEY] = goldset
        item.stash[ROUTE_KEY] = parent.nodeid
        item.stash[NEEDED_KEY] = needed
        _mark(item, judged=False, case=case)
        group_mark(item, case)
        yield item


# An anchor item's body: retrieve for the claim, then hold the pool to the anchor. (No
# docstring, for the reason given at `ask`.)
def check_anchor(ragate_anchor: AnchorEntry, request: pytest.FixtureRequest,
                 pytestconfig: pytest.Config) -> None:
    from pytest_ragate.goldsets.anchors import check
    from pytest_ragate.items.malformed import as_answer, built_in_one_line
    from pytest_ragate.items.provenance import anchor_source, is_builtin_pool
    from pytest_ragate.items.timeouts import answer_within
    from pytest_ragate.settings import read_settings

    anchor = ragate_anchor.anchor
    source, described = anchor_source(request.node)
    settings = read_settings(pytestconfig)
    asked = request.getfixturevalue(f"ragate_{source}")
    with built_in_one_line(f"anchor {anchor.anchor_id}"):
        found = answer_within(lambda: asked(anchor.claim), settings.gate.system_timeout,
                              f"anchor {anchor.anchor_id}", source)
    if source == "retriever":
        pool = found
    else:
        pool = as_answer(found, f"anchor {anchor.anchor_id}").contexts
    goldset = request.node.stash[GOLDSET_KEY]
    cut = anchor_cut(goldset.config.anchors, asked, f"ragate_{source}",
                     settings.pipeline.max_distance if is_builtin_pool(request.node) else None)
    try:
        why = check(anchor, pool, cut, unit=goldset.corpus.unit,
                    undeclared=f"in ragate.toml or on ragate_{source}")
    except (NoDistance, NoCut) as error:
        raise type(error)(f"anchor {anchor.anchor_id}: {error} (pool: {described})") from None
    if why is not None:
        hint = ("; your ragate_system returned no contexts for the claim: return what it "
                "retrieved in Answer.contexts, or override `ragate_retriever` (query -> "
                "list[Context]) to check anchors against your retriever"
                if source == "system" and not pool else "")
        pytest.fail(f"anchor {anchor.anchor_id}: {why} (pool: {described}){hint}",
                    pytrace=False)


def anchor_cut(declared: AnchorsConfig | None, asked: object, fixture: str,
               builtin: float | None) -> Cut | None:
    """The distance an anchor's pool is held to: `[anchors] max_distance` in the goldset's
    ragate.toml, else the `max_distance` the system (or retriever) under test carries, else
    for the built-in retriever's pool its own `ragate_max_distance` (`builtin`); None when
    nobody declared one for the user's own system (the anchor then errors, naming how)."""
    if declared is not None and declared.max_distance is not None:
        return Cut(declared.max_distance, "[anchors] max_distance in ragate.toml")
    own = getattr(asked, "max_distance", None)
    if own is not None:
        if isinstance(own, bool) or not isinstance(own, int | float) or not 0 <= own < math.inf:
            raise NoCut(f"{fixture}.max_distance is {own!r}: a cut is a finite number of 0 or "
                        "more (the distance past which the system abstains)")
        return Cut(float(own), f"{fixture}.max_distance")
    if builtin is not None:
        return Cut(builtin, "the built-in retriever's, ragate_max_distance")
    return None


def anchor_outcome(item: pytest.Item, call: pytest.CallInfo[None], report: pytest.TestReport,
                   ) -> AnchorOutcome | None:
    """What the controller needs to know of an anchor's outcome (None for the reports that
    say nothing of it), and the promote hint on a strict XPASS.

    The outcome is read from the anchor and the report, not from the text pytest wrote into
    `longrepr`: an anchor with an `xfail` reason is marked a strict xfail (`make_anchors`),
    so a failed call report with no exception, of an anchor that has one, is its strict
    XPASS. Why an anchor errored or was skipped is `reasons.failure_line`."""
    entry = getattr(item, "anchor_entry", None)
    if entry is None or report.when == "teardown" or (report.when == "setup"
                                                      and report.passed):
        return None
    anchor = entry.anchor
    outcome, error = report.outcome, None
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif (report.when == "call" and report.failed and call.excinfo is None
          and anchor.xfail):
        outcome = "xpassed"
        report.longrepr = f"{report.longrepr}. The anchor holds now: {PROMOTE_HINT}"
    elif report.skipped or (report.failed and (report.when != "call" or not isinstance(
            getattr(call.excinfo, "value", None), pytest.fail.Exception))):
        error = failure_line(report, call.excinfo)
    why = None
    if call.excinfo is not None and isinstance(call.excinfo.value, pytest.fail.Exception):
        why = str(call.excinfo.value.msg)
    return AnchorOutcome(goldset=item.goldset_name, anchor_id=anchor.anchor_id,
                         kind=anchor.kind, claim=anchor.claim, path=str(entry.path),
                         line=entry.line, xfail=anchor.xfail, outcome=outcome, error=error,
                         why=why, definition=anchor_digest(
                             anchor.kind, anchor.claim, anchor.evidence.model_dump()
                             if anchor.evidence is not None else None))


class AnchorItem(pytest.Function):
    def __repr__(self) -> str:
        """`<AnchorItem anchor[a1] retrieval_miss: "claim", strict xfail: reason>`."""
        entry = self.stash.get(ANCHOR_KEY, None)
        if entry is None:
            return super().__repr__()
        anchor = entry.anchor
        return (f'<AnchorItem {self.name} {anchor.kind}: "{_clip(self, anchor.claim)}"'
                f"{_xfail(self, anchor.xfail)}>")

    @property
    def anchor_entry(self) -> AnchorEntry:
        return self.stash[ANCHOR_KEY]

    @property
    def goldset_name(self) -> str:
        return self.stash[GOLDSET_KEY].name

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     ) -> str | TerminalRepr:
        """An anchor that cannot be checked says why, without the plugin's traceback."""
        if isinstance(excinfo.value, NoDistance | NoCut):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        entry = self.stash[ANCHOR_KEY]
        return entry.path, entry.line - 1, anchor_name(entry.anchor.anchor_id)


def make_anchors(parent: pytest.Collector, goldset: Goldset) -> Iterator[pytest.Function]:
    fixtureinfo = None
    for entry in goldset.anchors:
        item = AnchorItem.from_parent(parent, name=anchor_name(entry.anchor.anchor_id),
                                      callobj=check_anchor, fixtureinfo=fixtureinfo)
        fixtureinfo = shared_closure(item)
        as_reported(item)
        item.stash[ANCHOR_KEY] = entry
        item.stash[GOLDSET_KEY] = goldset
        item.stash[ROUTE_KEY] = parent.nodeid
        _mark(item, judged=False)
        if entry.anchor.xfail:
            # only a failed check is the expected failure: an anchor whose retriever raised
            # is an error, not a known miss
            item.add_marker(pytest.mark.xfail(reason=entry.anchor.xfail, strict=True,
                                              raises=pytest.fail.Exception))
        yield item


def make_floors(parent: pytest.Collector, goldset: Goldset, floors: Iterable[Floor],
                route: str, prefix: str = "") -> Iterator[FloorItem]:
    for floor in floors:
        item = FloorItem.from_parent(parent, name=f"{prefix}{floor.name}", goldset=goldset,
                                     floor=floor, route=route, prefix=prefix)
        as_reported(item)
        item.stash[FLOOR_KEY] = floor
        item.stash[GOLDSET_KEY] = goldset
        item.stash[ROUTE_KEY] = route
        _mark(item, judged=floor.judged)
        yield item


class GoldsetFile(pytest.File):
    """`ragate.toml`: its questions, then its floors."""

    goldset: Goldset | None = None  # set once collected
    problems: Sequence[Problem] = ()  # why it could not be: its GoldsetError's, line by line

    def __repr__(self) -> str:
        """`<GoldsetFile ragate.toml: mini, eval_version 7, 4 questions (…), 3 floors>`."""
        g = self.goldset
        if g is None:
            return super().__repr__()
        kinds = Counter(case.question.kind for case in g.cases)
        parts = [f"eval_version {g.eval_version}", _plural(len(g.cases), "question")
                 + (" (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")"
                    if kinds else "")]
        if g.anchors:
            parts.append(_plural(len(g.anchors), "anchor"))
        parts.append(_plural(len(g.floors), "floor"))
        if g.sealed:
            locked = any(case.expected is None for case in g.cases)
            parts.append("answers sealed" + (" (no RAGATE_SEAL_KEY: scored items skip)"
                                             if locked else ""))
        return f"<GoldsetFile {self.name}: {g.name}, {', '.join(parts)}>"

    def collect(self) -> Iterable[pytest.Item]:
        try:
            goldset = cached_goldset(self.config, self.path)
        except GoldsetError as error:
            self.problems = error.problems  # on its collect report (plugin.py)
            raise self.CollectError(f"invalid goldset {self.path}:\n{error}") from None
        clash = name_clash(self.config, goldset, self.nodeid)
        if clash:
            raise self.CollectError(clash)
        unmeasured = unmeasurable(goldset.floors, repeats_of(self.config, goldset),
                                  str(goldset.config_path), len(goldset.cases))
        if unmeasured:
            raise self.CollectError(f"invalid goldset {self.path}:\n{unmeasured}")
        self.goldset = goldset
        with long_lived(self.config):  # pytest lists a collector's items in one go
            yield from make_questions(self, goldset)
            yield from make_anchors(self, goldset)
            yield from make_floors(self, goldset, goldset.floors, route=self.nodeid)


# --- the decorator route ------------------------------------------------------------------


def resolve_goldset_path(config: pytest.Config, module_path: Path, raw: str) -> Path | None:
    """Relative paths are tried from rootdir first, then from the test module's folder."""
    path = Path(raw)
    candidates = [path] if path.is_absolute() else [config.rootpath / path,
                                                     module_path.parent / path]
    return next((c for c in candidates if c.exists()), None)


def merge_floor_layers(layers: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Stack `@ragate.floor` layers into one `[floors]`-shaped table."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if key in ("kind", "slices"):
                for kind, table in value.items():
                    merged.setdefault(key, {}).setdefault(kind, {}).update(table)
            else:
                merged[key] = value
    return merged


def route_floors(own: Iterable[Floor], decorated: Iterable[Floor]) -> list[Floor]:
    """A `@ragate.goldset` test's floors: the goldset's own (its ragate.toml's), each one the
    decorator names again (same metric, kind and slice) replaced whole by the decorator's,
    bound and xfail alike (a bare number there drops the toml's xfail); the decorator's
    others added; judge_coverage as for any goldset with judged floors. Anchor floors come
    from the toml alone (this route checks no anchor: they are listed, and skipped)."""
    by_key = {(f.kind, f.slice, f.metric): f for f in own}
    by_key.update({(f.kind, f.slice, f.metric): f for f in decorated if not f.anchors})
    return with_judge_coverage(list(by_key.values()))


def decorated_goldset(config: pytest.Config, module_path: Path, name: str,
                      spec: RouteSpec, route: str) -> tuple[Goldset, list[Floor]]:
    """The goldset a decorated test names, and its floors with the decorator's on top.

    Anchors are checked by the file route: a `@ragate.goldset` test is the system under test,
    and anchors check a retriever's pool. The goldset's anchor floors stay listed here, and
    are skipped with that reason rather than left out unseen."""
    if spec.path is None:
        pytest.fail(f"{name}: @ragate.floor needs @ragate.goldset(PATH) too", pytrace=False)
    path = resolve_goldset_path(config, module_path, spec.path)
    if path is None:
        searched = " or ".join(str(f) for f in dict.fromkeys([config.rootpath,
                                                                module_path.parent]))
        where = "" if Path(spec.path).is_absolute() else f" under {searched}"
        pytest.fail(f"{name}: goldset {spec.path!r} not found{where}", pytrace=False)
    try:
        goldset = cached_goldset(config, path)
        overrides = parse_floors(merge_floor_layers(spec.floors), module_path,
                                 where=f"{name} @ragate.floor",
                                 rubrics=set(goldset.config.rubrics))
    except GoldsetError as error:
        pytest.fail(f"invalid goldset for {name}:\n{error}", pytrace=False)
    clash = name_clash(config, goldset, route)
    if clash:
        pytest.fail(clash, pytrace=False)
    overrides, unsliced = slice_floors(overrides, [(c.line, c.question) for c in goldset.cases
                                                   if c.repeat == 1], module_path)
    if unsliced:
        pytest.fail(f"{name} @ragate.floor(slice=…):\n" + "\n".join(map(str, unsliced)),
                    pytrace=False)
    absent = sorted({f.kind for f in overrides if f.kind and f.kind not in goldset.kinds})
    if absent:
        pytest.fail(f"{name} @ragate.floor(kind=…): no question of goldset {goldset.name!r} "
                    f"has kind {', '.join(map(repr, absent))} (kinds: "
                    f"{', '.join(goldset.kinds)}): such a floor could never be decided",
                    pytrace=False)
    floors = route_floors(goldset.floors, overrides)
    unmeasured = unmeasurable(floors, repeats_of(config, goldset), f"{name} (goldset "
                              f"{goldset.config_path})", len(goldset.cases))
    if unmeasured:
        pytest.fail(unmeasured, pytrace=False)
    return goldset, floors


def verdicts_of(goldset: Goldset, floors: Iterable[Floor]) -> tuple[str, ...]:
    """What a route's questions ask the judge for: the verdict metrics its floors gate or
    the goldset's labels label (all of them when none: `registry.verdicts_needed`), and the
    goldset's rubrics its floors gate (a decorator's too)."""
    from pytest_ragate.goldsets.loader import gated_rubrics
    from pytest_ragate.scoring.registry import verdicts_needed

    floors = list(floors)
    return (*verdicts_needed((f.metric for f in floors),
                             (label.metric for label in goldset.labels)),
            *gated_rubrics(goldset.rubrics, floors))


def adopt_questions(items: Iterable[object], route: str, floors: Iterable[Floor] = (),
                    ) -> Iterator[pytest.Function]:
    """The decorator route's parametrized Functions, stashed and marked like file-route ones
    (`floors`: the route's, the decorator's over the goldset's)."""
    floors = list(floors)
    for item in items:
        if isinstance(item, pytest.Function) and hasattr(item, "callspec"):
            case = item.callspec.params.get("ragate_question")
            if isinstance(case, Case):
                item.stash[CASE_KEY] = case
                item.stash[GOLDSET_KEY] = case.goldset
                item.stash[ROUTE_KEY] = route
                item.stash[NEEDED_KEY] = verdicts_of(case.goldset, floors)
                _mark(item, judged=False, case=case)
                group_mark(item, case)
                requests_itself(item)
        yield item  # type: ignore[misc]


# --- what the controller is told ------------------------------------------------------------


def goldset_files(goldset: Goldset, rootdir: Path) -> tuple[str, str]:
    """Its questions file and its expected (or sealed) answers file, as paths relative to
    the rootdir when under it (what a CI annotation names), else absolute."""
    questions = goldset.config.questions
    expected = locate_sealed(goldset.root, questions.expected)
    if not goldset.sealed:
        expected = goldset.root / questions.expected

    def named(path: Path) -> str:
        try:
            return path.resolve().relative_to(rootdir.resolve()).as_posix()
        except ValueError:
            return path.resolve().as_posix()

    return named(goldset.root / questions.file), named(expected)


def collected(items: Iterable[pytest.Item]) -> Collected:
    """The selected floors, and the whole population of every route that has a selected item:
    each question and anchor of its goldset, with the node id it runs as (None when it was
    deselected), so the controller can tell a missing result from a deselected one."""
    floors: list[FloorSpec] = []
    routes: dict[str, Goldset] = {}
    file_routes: set[str] = set()  # anchors are collected by the file route only
    ran: dict[str, dict[str, str]] = {}  # route -> item name (q07[r2], anchor[a1]) -> node id
    judge_fixtures: dict[str, str | None] = {}  # route -> its own ragate_judge, when a user's
    item_config: pytest.Config | None = None
    for item in items:
        item_config = item.config
        if isinstance(item, FloorItem):
            route, goldset = item.route, item.goldset
            floors.append(item.to_wire())
        elif ROUTE_KEY in item.stash and AGAIN_KEY not in item.stash:
            route, goldset = item.stash[ROUTE_KEY], item.stash[GOLDSET_KEY]
            case = item.stash.get(CASE_KEY, None)
            key = case.item_name if case else item.name
            ran.setdefault(route, {})[key] = item.nodeid
        else:
            continue
        routes.setdefault(route, goldset)
        if route not in judge_fixtures:
            judge_fixtures[route] = _judge_fixture(item)
        if isinstance(item.parent, GoldsetFile):
            file_routes.add(route)
    populations = []
    for route, goldset in routes.items():
        assert item_config is not None  # a route is known only from one of the items
        anchors = [e.anchor for e in goldset.anchors] if route in file_routes else None
        populations.append(Population.of(
            route, goldset, repeated_cases(item_config, goldset), anchors, ran.get(route, {}),
            labels=goldset.labels, repeats=repeats_of(item_config, goldset),
            rubrics=list(goldset.rubrics),
            coverage_min=_coverage_min(goldset, [f.floor for f in floors if f.route == route]),
            judge_optional=goldset.config.judge.optional,
            agreement_min=_agreement_min(goldset, [f.floor for f in floors
                                                   if f.route == route]),
            estimate="ppi" if goldset.estimate == "ppi" else "judge",
            judge=_configured_judge(item_config), judge_fixture=judge_fixtures[route],
            sequential=plan_of(item_config, goldset),
            files=goldset_files(goldset, item_config.rootpath),
            margins=Margins(max_drop=goldset.config.regression.max_drop,
                            inconclusive=goldset.config.regression.inconclusive)))
    return Collected(floors=floors, populations=populations)


def _configured_judge(config: pytest.Config) -> str | None:
    """The judge `--ragate-judge` configures (`fixture:PATH`, `ragas:MODEL`), or None."""
    from pytest_ragate.settings import read_settings

    return read_settings(config).judge.judge


def _judge_fixture(item: pytest.Item) -> str | None:
    """Where the user's own `ragate_judge` for this item is defined (`conftest.py:12`), or
    None when it is the built-in one, which gives a judge only with --ragate-judge."""
    from pytest_ragate.items.provenance import fixture_origin

    origin = fixture_origin(item, "ragate_judge")
    return None if origin is None or origin.builtin else origin.where


def _coverage_min(goldset: Goldset, selected: list[Floor]) -> float | None:
    """The route's judge_coverage floor over the whole goldset, selected or not, xfail or
    not: a judged floor is not decided on fewer of its verdicts than it asks."""
    for floors in (selected, goldset.floors):
        found = next((f.min for f in floors if f.metric == "judge_coverage" and f.kind is None
                      and f.slice is None and not f.anchors), None)
        if found is not None:
            return found
    return None


def _agreement_min(goldset: Goldset, selected: list[Floor]) -> float | None:
    """The route's `judge_agreement` floor, selected or not: deselecting that floor does
    not free the judged floors from it."""
    for floors in (selected, goldset.floors):
        found = next((f.min for f in floors if f.metric == "judge_agreement"), None)
        if found is not None:
            return found
    return None
