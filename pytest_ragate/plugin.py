"""pytest-ragate's hooks: thin glue between pytest and the goldset/metrics/gates modules.

Nothing heavy is imported here: a project that only collects stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol
from pydantic import ValidationError

from pytest_ragate.answer import Answer
from pytest_ragate.goldset import CONFIG_NAME, Case, Question
from pytest_ragate.items import (
    CASE_KEY,
    FloorItem,
    GoldsetFile,
    adopt_questions,
    decorated_goldset,
    make_floors,
    route_spec,
)
from pytest_ragate.metrics import QuestionRecord, score_answer
from pytest_ragate.pipeline import add_options, pipeline, read_settings
from pytest_ragate.session import RECORD_ATTR, WIRE_FLOORS, Controller

CONTROLLER_KEY = pytest.StashKey[Controller]()
RECORD_KEY = pytest.StashKey[QuestionRecord]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragate", "RAG quality gates (pytest-ragate)")
    group.addoption("--ragate-results", dest="ragate_results", metavar="PATH", default=None,
                    help="write one JSON line per question to PATH")
    group.addoption("--ragate-report", dest="ragate_report", metavar="PATH", default=None,
                    help="write a Markdown report (floors, per-kind counts, questions) to PATH")
    group.addoption("--ragate-require-judge", dest="ragate_require_judge", action="store_true",
                    default=False, help="fail judged floors when no judge is configured "
                    "instead of skipping them")
    add_options(group, parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "rag_gate: a pytest-ragate question, anchor or floor "
        "(select with `pytest -m rag_gate`)")
    config.addinivalue_line(
        "markers", "slow: needs a judge model (deselect with `-m 'rag_gate and not slow'`)")
    read_settings(config)  # a bad knob is a usage error now, not a failure in every item
    if not hasattr(config, "workerinput"):
        controller = Controller(config)
        config.stash[CONTROLLER_KEY] = controller
        config.pluginmanager.register(controller, "ragate-controller")


def pytest_unconfigure(config: pytest.Config) -> None:
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        del config.stash[CONTROLLER_KEY]
        config.pluginmanager.unregister(controller)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name == CONFIG_NAME:
        return GoldsetFile.from_parent(parent, path=file_path)
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A function decorated with `@ragate.goldset` runs once per question."""
    spec = route_spec(metafunc.function)
    if spec is None:
        return
    name = metafunc.function.__name__
    goldset, _ = decorated_goldset(metafunc.config, metafunc.definition.path, name, spec)
    if "ragate_question" not in metafunc.fixturenames:
        pytest.fail(f"{name}: a @ragate.goldset test takes the `ragate_question` fixture",
                    pytrace=False)
    metafunc.parametrize("ragate_question", goldset.cases, indirect=True,
                         ids=[case.question.question_id for case in goldset.cases])


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Module | pytest.Class, name: str, obj: object,
                              ) -> Generator[None, Any, Any]:
    """A decorated function's questions get their case and marks; its floors follow them."""
    result = yield
    spec = route_spec(obj)
    if spec is None or not isinstance(result, list) or not result:
        return result
    goldset, floors = decorated_goldset(collector.config, collector.path, name, spec)
    return [*adopt_questions(result), *make_floors(collector, goldset, floors,
                                                   prefix=f"{name}::")]


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> Generator[None, None, None]:
    """After -k/-m selection, tell the controller which floors it has to decide: a floor
    decided on one worker would see only that worker's questions."""
    yield
    wire = [item.to_wire() for item in items if isinstance(item, FloorItem)]
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[WIRE_FLOORS] = wire
    controller = config.stash.get(CONTROLLER_KEY, None)
    if controller is not None:
        controller.add_floors(wire)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """Floors run without reporting (keeping the setup/teardown stack in step); the
    controller reports them at the end of the run."""
    if not isinstance(item, FloorItem):
        return None
    runtestprotocol(item, log=False, nextitem=nextitem)
    return True


def _record(case: Case, **fields: Any) -> QuestionRecord:
    q = case.question
    expected = case.expected
    spans = expected.spans if expected else []
    base: dict[str, Any] = {
        "goldset": case.goldset.name, "question_id": q.question_id, "kind": q.kind,
        "index": case.index, "must_abstain": not spans, "evidence_spans": len(spans),
        "eval_version": case.goldset.eval_version,
    }
    base.update(fields)
    return QuestionRecord.model_validate(base)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Call a question's test, score what it returns, and record the scores."""
    case = pyfuncitem.stash.get(CASE_KEY, None)
    if case is None:
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    result = pyfuncitem.obj(**args)
    try:
        answer = result if isinstance(result, Answer) else Answer.model_validate(result)
    except ValidationError as error:
        pytest.fail(f"{case.question.question_id}: the system returned a malformed answer "
                    f"({type(result).__name__}):\n{error}", pytrace=False)
    assert case.expected is not None
    record = _record(case, **score_answer(answer, case.expected.spans))
    pyfuncitem.stash[RECORD_KEY] = record
    pyfuncitem.user_properties.extend(record.junit_properties())
    if case.goldset.config.question_outcome == "assert" and record.wrong:
        pytest.fail(f"{case.question.question_id} is wrong: " + "; ".join(record.wrong),
                    pytrace=False)
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None],
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the question's record to its report, so it reaches the controller via xdist."""
    report = yield
    case = item.stash.get(CASE_KEY, None)
    if case is None or report.when == "teardown":
        return report
    record = item.stash.get(RECORD_KEY, None)
    if record is None and report.failed:
        reason = call.excinfo.exconly().splitlines()[0] if call.excinfo else "failed"
        record = _record(case, status="error", error=reason)
        item.user_properties.extend(record.junit_properties())
    elif record is None and report.skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else "skipped"
        record = _record(case, status="skipped", error=reason)
    elif report.when != "call":
        return report
    if record is not None:
        setattr(report, RECORD_ATTR, record.model_dump(mode="json"))
    return report


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def ragate_question(request: pytest.FixtureRequest) -> Question:
    """The question of the current item (both the file and the decorator route)."""
    case = getattr(request, "param", None) or request.node.stash.get(CASE_KEY, None)
    if case is None:
        pytest.fail("ragate_question is only available in goldset items", pytrace=False)
    return case.question


@pytest.fixture
def ragate_corpus(request: pytest.FixtureRequest) -> Any:
    """The corpus of the current item's goldset, turn positions as in the source files."""
    case = request.node.stash.get(CASE_KEY, None)
    if case is None:
        pytest.fail("ragate_corpus is only available in goldset items", pytrace=False)
    return case.goldset.corpus


@pytest.fixture(scope="session")
def ragate_chunker(pytestconfig: pytest.Config) -> Any:
    """Packs turns into chunks: `.chunk(corpus) -> list[Chunk]` and `.settings` (a dict)."""
    return pipeline(pytestconfig).chunker()


@pytest.fixture
def ragate_retriever(request: pytest.FixtureRequest, ragate_corpus: Any,
                     ragate_chunker: Any) -> Callable[[str], list[Any]]:
    """`retriever(query) -> list[Context]` over the goldset's corpus (embedded Chroma)."""
    return pipeline(request.config).retriever(ragate_corpus, ragate_chunker)


@pytest.fixture
def ragate_system(request: pytest.FixtureRequest,
                  ragate_retriever: Callable[[str], list[Any]]) -> Callable[[str], Answer]:
    """The system under test: question text in, `ragate.Answer` out. Override it in
    conftest.py with your own; the default is an extractive answerer over
    `ragate_retriever`."""
    return pipeline(request.config).system(ragate_retriever)  # type: ignore[arg-type]
