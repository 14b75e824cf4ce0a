"""pytest-ragate's hooks: thin glue between pytest and the parts (items, modes, goldsets,
scoring, judges, pipeline, outputs; see docs/architecture.md).

It keeps the hooks that are the same in every mode. What differs between a gate, a shard and
a decision over saved files is on the one object registered for the run's mode
(`modes/choosing.py`): at `pytest_configure` in a run that asked for goldsets, otherwise when
collection first meets one (`pytest_collect_file`, `pytest_pycollect_makeitem`); a run that
neither asks nor collects a goldset gets none, and ragate changes nothing in it.

Every pytest run in an environment that has pytest-ragate installed imports this module,
goldsets or not. So at module level it imports only pytest and light modules (`settings`,
`items.keys`, `route`, `modes.choosing` with `modes.asked`, `long_lived`); a mode is imported
when it starts, and each hook imports the part it needs once it meets a goldset's file, item or
decorated test (tests/test_architecture.py holds that a run without goldsets loads nothing
heavier than pytest).
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.items.keys import (
    ANCHOR_ATTR,
    ANCHOR_KEY,
    CASE_KEY,
    FLOOR_KEY,
    GOLDSET_KEY,
    ITEM_FAILED_ATTR,
    LAST_RUN_KEY,
    NO_SYSTEM_ATTR,
    PROBLEMS_ATTR,
    ROUTE_KEY,
    RUN_KEY,
    is_goldset_item,
)
from pytest_ragate.items.long_lived import long_lived, thaw
from pytest_ragate.items.route import route_spec
from pytest_ragate.modes.choosing import (
    MODE_KEY,
    activate,
    begin,
    check_gated,
    configure_node,
    given_dist,
    grouping,
    refused_by_a_worker,
    stop,
)
from pytest_ragate.settings import (
    add_options,
    add_run_options,
    configuration_flags_given,
    read_settings,
)

if TYPE_CHECKING:
    from pytest_ragate.answer import Answer, Context
    from pytest_ragate.builtin_system.chunking import Chunker
    from pytest_ragate.goldsets.anchors import AnchorEntry
    from pytest_ragate.goldsets.config import Question
    from pytest_ragate.goldsets.corpus import Corpus
    from pytest_ragate.judges import Judge


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragate", "RAG quality gates (pytest-ragate)")
    add_run_options(group)
    add_options(group, parser)


def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    """Before pytest's parser meets it: a flag of a knob that is configuration only, refused
    naming its ini option (not argparse's bare "unrecognized arguments")."""
    given = configuration_flags_given(args)
    if given:
        from pytest_ragate.wording.settings import configuration_only_flags

        raise pytest.UsageError(configuration_only_flags(given))


def pytest_configure(config: pytest.Config) -> None:
    # first, so it runs after the clean-up pytest's unraisableexception plugin adds (LIFO)
    config.add_cleanup(functools.partial(thaw, config))
    config.addinivalue_line(
        "markers", "rag_gate: a pytest-ragate question, anchor or floor "
        "(select with `pytest -m rag_gate`)")
    config.addinivalue_line(
        "markers", "slow: needs a judge model (deselect with `-m 'rag_gate and not slow'`)")
    settings = read_settings(config)  # a bad knob is a usage error now, not one per item
    if settings.run.html:
        missing = [m for m in ("matplotlib", "jinja2") if importlib.util.find_spec(m) is None]
        if missing:
            raise pytest.UsageError(f"--ragate-html needs {' and '.join(missing)}: "
                                    "pip install 'pytest-ragate[html]'")
    from pytest_ragate.items.defined_metrics import define_metrics

    define_metrics(config)  # `@ragate.metric` functions: before any goldset's floors are read
    begin(config, settings)  # the run's mode, if it asked or is an xdist gate's (`choosing`)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, Any, Any]:
    """Before xdist reads `-n N` as `--dist load`: the `--dist` the user gave."""
    given_dist(config)
    return (yield)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist's controller starting a worker: whether it gates, and how it deals items."""
    configure_node(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """A gate's run under `-n N`: xdist's `load`, or its `loadgroup` when a collected goldset
    has conversations, with a crashed item never handed to another worker
    (`items/xdist_worker.grouping_scheduler`); xdist's own otherwise (`choosing.grouping`)."""
    if not grouping(config):
        return None
    from pytest_ragate.items.xdist_worker import grouping_scheduler

    return grouping_scheduler(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """On an xdist controller that started no mode: a worker that refused its collection
    (goldset items no controller gates) made this run's usage error, and pytest's JUnit file
    is not written (a gate's controller raises it from its own `pytest_collectreport`)."""
    config = node.config
    if MODE_KEY not in config.stash:
        refused_by_a_worker(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    from pytest_ragate.items.defined_metrics import forget_metrics

    stop(config)
    forget_metrics()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name != CONFIG_NAME:
        return None
    activate(parent.config)  # a run that did not ask is gated all the same (`choosing`)
    from pytest_ragate.items.collection import GoldsetFile

    return GoldsetFile.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A function decorated with `@ragate.goldset` runs once per question."""
    spec = route_spec(metafunc.function)
    if spec is None:
        return
    from pytest_ragate.items.collection import decorated_goldset, repeated_cases

    name = metafunc.function.__name__
    route = f"{metafunc.definition.parent.nodeid}::{name}"
    goldset, _ = decorated_goldset(metafunc.config, metafunc.definition.path, name, spec, route)
    if "ragate_question" not in metafunc.fixturenames:
        pytest.fail(f"{name}: a @ragate.goldset test takes the `ragate_question` fixture",
                    pytrace=False)
    cases = repeated_cases(metafunc.config, goldset)
    metafunc.parametrize("ragate_question", cases, indirect=True,
                         ids=[case.item_name for case in cases])


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str, obj: object,
                              ) -> Generator[None, Any, Any]:
    """A decorated function's questions get their case and marks; its floors follow them.
    They are built and kept like a goldset file's items (`items/long_lived.py`)."""
    if route_spec(obj) is None:
        return (yield)
    activate(collector.config)  # before its items are made (`choosing.activate`)
    with long_lived(collector.config):
        result = yield
        spec = route_spec(obj)
        if spec is None or not isinstance(result, list) or not result:
            return result
        from pytest_ragate.items.collection import adopt_questions, decorated_goldset, make_floors

        route = f"{collector.nodeid}::{name}"
        goldset, floors = decorated_goldset(collector.config, collector.path, name, spec, route)
        return [*adopt_questions(result, route, floors),
                *make_floors(collector, goldset, floors, route, prefix=f"{name}::")]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """After `-k` and `-m`, no output may be a file of a goldset collected here (a usage
    error): before an xdist worker says it has collected, so its controller clears no
    output before that, and before the mode's own selection (registered later, its
    `trylast` hook runs after this one: a shard keeps its slice, `modes/shard.py`; a
    decision keeps the floors, `modes/decide_saved.py`)."""
    if MODE_KEY in config.stash:  # it started when a goldset was collected, if not before
        from pytest_ragate.modes.output_paths import check_collected

        check_collected(config, items)
    check_gated(config, items)  # an xdist worker's goldsets its controller would not gate


def pytest_report_collectionfinish(config: pytest.Config, items: list[pytest.Item],
                                   ) -> list[str]:
    """Which goldsets were collected, by which route, with how many items of each sort (the
    xdist controller collects nothing; its workers do, and the summary names the goldsets)."""
    counts: dict[str, dict[str, int]] = {}
    names: dict[str, str] = {}
    repeats: dict[str, int] = {}
    for item in filter(is_goldset_item, items):
        route = item.stash[ROUTE_KEY]
        names[route] = item.stash[GOLDSET_KEY].name
        case = item.stash.get(CASE_KEY, None)
        if case is not None:
            repeats[route] = case.repeats
        sort = ("question" if case is not None else "anchor" if ANCHOR_KEY in item.stash
                else "floor")
        tally = counts.setdefault(route, {"question": 0, "anchor": 0, "floor": 0})
        tally[sort] += 1

    def counted(route: str, sort: str, n: int) -> str:
        times = repeats.get(route, 1)
        if sort == "question" and times > 1:
            return f"{n} question items ({times} repeats a question)"
        return f"{n} {sort}{'s' * (n != 1)}"

    return [f"ragate: {names[route]} ({route}): "
            + ", ".join(counted(route, sort, n) for sort, n in tally.items() if n)
            for route, tally in counts.items()]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Floors run without reporting (the controller reports them at the end; a teardown that
    fails in one is the last item's, `run_floor`); questions hold their reports while their
    judge verdicts are pending."""
    if FLOOR_KEY in item.stash:
        from pytest_ragate.items.collection import run_floor

        run_floor(item, nextitem)
        return True
    item.config.stash[LAST_RUN_KEY] = item  # a floor's failed teardown is blamed on it
    if CASE_KEY in item.stash:
        from pytest_ragate.items.questions import run_protocol

        return run_protocol(item, nextitem)
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A question or anchor that only the built-in pipeline would answer, where the goldset
    did not opt in to it, is an error before any fixture is built (the built-in retriever
    would embed the corpus first). After pytest's skip marks (tryfirst): a sealed question
    without the key still skips."""
    if CASE_KEY in item.stash or ANCHOR_KEY in item.stash:
        from pytest_ragate.items.provenance import check_system

        check_system(item)


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, object, object]:
    """Before the loop ends (and before the controller decides floors), every held question
    report is released: the judge's last verdicts are waited for here."""
    try:
        return (yield)
    finally:
        run = session.config.stash.get(RUN_KEY, None)
        if run is not None:
            from pytest_ragate.items.questions import release

            release(run, wait=True)
            run.close()


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Call a question's test, score what it returns, and hand it to the judge."""
    case = pyfuncitem.stash.get(CASE_KEY, None)
    if case is None:
        return None
    from pytest_ragate.items.questions import answer_and_score

    answer_and_score(pyfuncitem, case)
    return True


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config,
                            ) -> Generator[None, None, None]:
    """Around pytest's summary (outside its own wrapper): the run's controller says a cause
    many goldset items share once (`Controller.saying_once`); an xdist worker prints none."""
    saying_once = getattr(config.stash.get(MODE_KEY, None), "saying_once", None)
    if saying_once is None:
        return (yield)
    return (yield from saying_once(terminalreporter))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector,
                               ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """An invalid goldset's collect report carries its problems (file, line, field), so the
    controller can point CI annotations at them, from an xdist worker too."""
    report = yield
    problems = getattr(collector, "problems", None) if report.failed else None
    if problems:
        setattr(report, PROBLEMS_ATTR, [problem.to_json() for problem in problems])
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None],
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A question that fails before it is scored still gets its row; an anchor's outcome
    rides on its report, so it reaches the controller through xdist; what either report
    shows is redacted."""
    report = yield
    if call.excinfo is not None and is_goldset_item(item):
        _missing_system(item, call, report)
    if CASE_KEY in item.stash:
        from pytest_ragate.items.malformed import one_line
        from pytest_ragate.items.questions import record_failure

        one_line(call, report)
        record_failure(item, call, report)
    elif ANCHOR_KEY in item.stash:
        from pytest_ragate.items.collection import anchor_outcome
        from pytest_ragate.items.malformed import one_line

        one_line(call, report, question=False)
        anchor = anchor_outcome(item, call, report)
        if anchor is not None:
            setattr(report, ANCHOR_ATTR, anchor.model_dump(mode="json"))
    if CASE_KEY in item.stash or ANCHOR_KEY in item.stash:
        if report.failed:
            setattr(report, ITEM_FAILED_ATTR, True)  # said once if its cause is shared
        from pytest_ragate.items.redacting import redact_report

        redact_report(item.config, report)  # no sealed text or credential in what it shows
    return report


def _missing_system(item: pytest.Item, call: pytest.CallInfo[None],
                    report: pytest.TestReport) -> None:
    """An item without a system reads as its one line (as `pytest.fail(pytrace=False)` does),
    and tells the controller which goldset it belongs to, for the run's one summary line."""
    from pytest_ragate.items.provenance import MissingSystem

    if call.excinfo is not None and call.excinfo.errisinstance(MissingSystem):
        report.longrepr = call.excinfo.getrepr(style="value")
        setattr(report, NO_SYSTEM_ATTR, item.nodeid.partition("::")[0])


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def ragate_question(request: pytest.FixtureRequest) -> Question:
    """The question of the current item (both the file and the decorator route)."""
    case = getattr(request, "param", None) or request.node.stash.get(CASE_KEY, None)
    if case is None:
        pytest.fail("ragate_question is only available in goldset items", pytrace=False)
    if case.question.conversation is None:
        return case.question
    from pytest_ragate.items.conversations import with_history

    return with_history(request.node, case)  # the earlier turns, with this run's answers


@pytest.fixture
def ragate_repeat(request: pytest.FixtureRequest) -> int:
    """Which repeat of its question the current item asks (1-based; 1 when asked once), for
    a system that seeds its sampling per call, or a test that wants to know."""
    case = getattr(request, "param", None) or request.node.stash.get(CASE_KEY, None)
    if case is None:
        pytest.fail("ragate_repeat is only available in goldset items", pytrace=False)
    return int(case.repeat)


@pytest.fixture
def ragate_corpus(request: pytest.FixtureRequest) -> Corpus:
    """The corpus of the current item's goldset, unit positions as in the source files."""
    goldset = request.node.stash.get(GOLDSET_KEY, None)
    if goldset is None:
        pytest.fail("ragate_corpus is only available in goldset items", pytrace=False)
    return goldset.corpus


@pytest.fixture
def ragate_anchor(request: pytest.FixtureRequest) -> AnchorEntry:
    """The anchor of the current `anchor[...]` item."""
    entry = request.node.stash.get(ANCHOR_KEY, None)
    if entry is None:
        pytest.fail("ragate_anchor is only available in anchor items", pytrace=False)
    return entry


@pytest.fixture(scope="session")
def ragate_judge(pytestconfig: pytest.Config) -> Judge | None:
    """The judge of faithfulness, context precision and answer relevance, or None (judged
    floors then skip). Built from --ragate-judge; override it to bring your own."""
    from pytest_ragate.builtin_system import MODEL_ID
    from pytest_ragate.builtin_system.builtin import pipeline
    from pytest_ragate.judges.select import from_settings

    return from_settings(read_settings(pytestconfig).judge,
                         lambda: pipeline(pytestconfig).embedder, embedder_id=MODEL_ID)


@pytest.fixture(scope="session")
def ragate_answerer_model(pytestconfig: pytest.Config) -> str | None:
    """The model your system answers with (ragate_answerer_model): a judge on the same
    weights is flagged in the report."""
    return read_settings(pytestconfig).judge.answerer_model


@pytest.fixture(scope="session")
def ragate_chunker(pytestconfig: pytest.Config) -> Chunker:
    """Packs units into chunks: `.chunk(corpus) -> list[Chunk]` and `.settings` (a dict)."""
    from pytest_ragate.builtin_system.builtin import pipeline

    return pipeline(pytestconfig).chunker()


@pytest.fixture
def ragate_retriever(request: pytest.FixtureRequest, ragate_corpus: Corpus,
                     ragate_chunker: Chunker) -> Callable[[str], list[Context]]:
    """`retriever(query) -> list[Context]` over the goldset's corpus (embedded Chroma)."""
    from pytest_ragate.builtin_system.builtin import pipeline

    return pipeline(request.config).retriever(ragate_corpus, ragate_chunker,
                                              known=lambda: known_queries(request.session))


def known_queries(session: pytest.Session) -> list[str]:
    """What the session's goldset items will ask the retriever: the same list in every
    process (xdist workers collect every item), whatever runs where."""
    from pytest_ragate.builtin_system import follow_up_query

    questions = [item.stash[CASE_KEY].question for item in session.items
                 if CASE_KEY in item.stash]
    turns = {(q.conversation, q.turn): q.question for q in questions if q.conversation}
    queries = [follow_up_query(turns.get((q.conversation, (q.turn or 1) - 1)), q.question)
               if q.conversation else q.question for q in questions]
    return queries + [item.stash[ANCHOR_KEY].anchor.claim for item in session.items
                      if ANCHOR_KEY in item.stash]


@pytest.fixture
def ragate_system(request: pytest.FixtureRequest,
                  ragate_retriever: Callable[[str], list[Context]]) -> Callable[[str], Answer]:
    """The system under test: question text in, `ragate.Answer` out. Override it in
    conftest.py with your own; the default is an extractive answerer over
    `ragate_retriever`."""
    from pytest_ragate.builtin_system.builtin import pipeline

    return pipeline(request.config).system(ragate_retriever)  # type: ignore[arg-type]
