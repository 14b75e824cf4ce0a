"""What every mode that concludes a run shares (the gate, `gate.py`; a shard, `shard.py`; a
decision over saved files, `decide_saved.py`): the base class of the one object
`choosing.py` registers for the run.

It lives only where reports from all workers arrive (the main process, or the xdist
controller), like pytest's LogXML: the xdist controller collects nothing, so it cannot know
in advance whether a run has goldsets. So this module is light. It keeps, as plain values,
what every run has (which items started, which failed and why, which crashed, which workers
went down), and makes the `Conclusion` (the one import of the deciding, reporting and
writing parts) once a goldset shows up: a record, an anchor outcome, a worker's description
of its goldsets, a selected goldset item, or a ragate output to write.

It also says how the run ended: the outputs an earlier run left are cleared once collection
has held them to the goldsets' files (`output_paths.py`), and a run whose loop stopped early
is still concluded (each mode's `conclude`), its outputs marked INCOMPLETE, before the stop
goes on to pytest.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from pytest_ragate.items.keys import (
    ANCHOR_ATTR,
    ITEM_FAILED_ATTR,
    MALFORMED_ATTR,
    NO_SYSTEM_ATTR,
    PROBLEMS_ATTR,
    RECORD_ATTR,
    WORKEROUTPUT_KEY,
    is_goldset_item,
    row_of,
    ungrouped,
)
from pytest_ragate.items.long_lived import settle
from pytest_ragate.items.printed import start_printing
from pytest_ragate.items.reasons import failure_line, summary_line
from pytest_ragate.items.xdist_worker import worker_of
from pytest_ragate.modes.asked import ASKED_KEY
from pytest_ragate.modes.output_paths import check_outputs, clear_outputs, refused
from pytest_ragate.settings import Settings, read_settings, standing

if TYPE_CHECKING:
    from pytest_ragate.decision.regressions import RunJudge
    from pytest_ragate.modes.conclusion import Conclusion
    from pytest_ragate.problems import Problem
    from pytest_ragate.wording.causes import Shared

Location = tuple[str, int | None, str]


def stopped_early(session: pytest.Session, stop: BaseException | None = None) -> str | None:
    """Why the run stopped before every selected item had run, or None: what ended the loop
    (pytest's -x and --maxfail, xdist's stop, an interrupt, `pytest.exit`, an error), else a
    stop pytest asked for that nothing raised yet."""
    if stop is None:
        asked = session.shouldfail or session.shouldstop
        return None if not asked else asked if isinstance(asked, str) else "stopped"
    if isinstance(stop, pytest.exit.Exception):
        return f"pytest.exit: {stop.msg}"
    if isinstance(stop, (session.Failed, session.Interrupted, KeyboardInterrupt)):
        # -x and --maxfail say "stopping after 1 failures", as xdist's Interrupted does
        return str(stop) or "interrupted (KeyboardInterrupt)"
    return f"{type(stop).__name__}: {summary_line(stop)}"


def check_accept_judge(config: pytest.Config, settings: Settings) -> None:
    """`--ragate-accept-judge` before anything runs: refused in the ini file or addopts (a standing
    acceptance would accept every future judge change), without a baseline, and naming
    another judge than the `--ragate-judge` this run is graded by."""
    accept = settings.gate.accept_judge
    if accept is None:
        return
    from pytest_ragate.wording import baseline as wording

    where = standing(config, "accept_judge")  # even under a flag: it would outlive this run
    if where is not None:
        raise pytest.UsageError(wording.accept_judge_standing(where))
    if not settings.gate.baseline:
        raise pytest.UsageError(wording.ACCEPT_JUDGE_WITHOUT_BASELINE)
    configured = _configured_judge(settings)
    if configured is not None and not configured.is_named(accept):
        raise pytest.UsageError(wording.accept_judge_misnamed(accept, configured.names))


def check_keys(config: pytest.Config, settings: Settings, env: Mapping[str, str]) -> None:
    """The key variables before anything runs: one set but empty is refused by name (an
    empty RAGATE_SEAL_KEY is said, in `pytest_report_header` and the summary: the fork
    route); saved runs read without RAGATE_RESULTS_KEY where the ini declares the project's
    results signed are refused."""
    from pytest_ragate.settings import RESULTS_KEY_ENV, empty_keys
    from pytest_ragate.wording import settings as wording

    judge = settings.judge
    calls = (judge.judge or "").startswith("ragas") and judge.cache != "replay"
    empty = empty_keys(env, judge_calls=calls)
    if empty:
        raise pytest.UsageError("\n".join(map(wording.key_empty, empty)))
    reads = [flag for flag, given in (("--ragate-baseline", settings.gate.baseline),
                                      ("--ragate-decide", settings.run.decide)) if given]
    if reads and config.getini("ragate_results_signed") and not env.get(RESULTS_KEY_ENV):
        raise pytest.UsageError(wording.results_unsigned_reads(" and ".join(reads)))


def _configured_judge(settings: Settings) -> RunJudge | None:
    """The judge `--ragate-judge` configures, as its rows will name it; None when none is
    configured (a `ragate_judge` fixture of the user's: known once its rows arrive) or its
    spec is wrong (a usage error of its own)."""
    from pytest_ragate.decision.regressions import RunJudge
    from pytest_ragate.judges.fixture import read_fixture_file
    from pytest_ragate.judges.select import judge_spec

    try:
        spec = judge_spec(settings.judge, need_url=False)
        if spec is None:
            return None
        kind, rest = spec
        named = (f"fixture:{read_fixture_file(Path(rest))[0].judge_id}" if kind == "fixture"
                 else f"ragas:{rest}")
    except pytest.UsageError:
        return None
    return RunJudge(names=(named,), spec=settings.judge.judge)


def rekeyed_line(config: pytest.Config, settings: Settings) -> str | None:
    """The line that says a judge cache index naming judges in full was re-keyed in this run
    (`judges/cache_index.py`, by whichever process opened it first), once; None otherwise."""
    if settings.judge.cache == "off":
        return None
    from pytest_ragate.items.questions import judge_cache_folder

    folder = judge_cache_folder(config)
    if not (folder / "cache.db").is_file():
        return None
    import diskcache

    from pytest_ragate.judges.cache_index import said_rekeyed
    from pytest_ragate.wording.runs import index_rekeyed

    with diskcache.Cache(str(folder)) as cache:
        moved = said_rekeyed(cache)
    return index_rekeyed(str(folder), moved) if moved else None


class Controller(ABC):
    """The base of the modes that conclude a run (`choosing.py` registers one): gathers
    what the reports bring, clears stale outputs, and has the run concluded (`conclude`)
    when its loop ends or stops early."""

    name: ClassVar[str]  # the name it is registered under

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = settings = read_settings(config)
        check_keys(config, settings, os.environ)
        check_before_running(config, settings, decided=self.decided())
        check_accept_judge(config, settings)
        self.selected: list[pytest.Item] | None = None  # this process's items, when it collects
        self.started: dict[str, Location] = {}
        self.failed: dict[str, tuple[str, str]] = {}  # node id -> (phase, why), the first
        self.failures: Counter[str] = Counter()  # node id -> its failed reports
        self.crashed: set[str] = set()  # node ids whose xdist worker died running them
        self.down: list[str] = []  # xdist workers that went down, and why
        self.no_system: dict[str, int] = {}  # goldset file -> items that had no system
        self.shared: list[Shared] = []  # the causes items share, said once (the summary's)
        # goldset items' failed reports (node id, phase, why), to say a shared cause once
        self.item_failures: list[tuple[str, str, str]] = []
        self.malformed: dict[str, int] = {}  # what the system returned -> questions
        # (judge, field of its usage) -> why, the questions whose judge usage broke the rule
        self.invalid_usage: dict[tuple[str, str], tuple[str, list[str]]] = {}
        self.goldset_ran = False  # a worker described goldsets, or a goldset report arrived
        self.collection_failed = False  # something failed to collect (a goldset, a module)
        self.last_on: dict[str, str] = {}  # xdist worker -> the last item it reported
        self.conclusion: Conclusion | None = None
        self.held = False  # this process's collection held the outputs to its goldsets
        self.cleared = False  # the outputs an earlier run left were cleared
        # invalid goldsets' lines, for the CI's annotations (not `problems`: ragate decide's
        # controller keeps its refusals under that name)
        self.invalid_lines: list[Problem] = []
        if settings.gate.baseline or settings.run.outputs or settings.run.promote:
            self.concluding()  # a bad baseline is a usage error before anything runs

    def concluding(self) -> Conclusion:
        if self.conclusion is None:
            from pytest_ragate.modes.conclusion import Conclusion

            self.conclusion = Conclusion(self.config, self.settings)
        return self.conclusion

    def decided(self) -> list[Path]:
        """The results files this run decides instead of running (`ragate decide`): no
        output may overwrite one."""
        return []

    @abstractmethod
    def conclude(self, session: pytest.Session, incomplete: str | None) -> None:
        """Decide, report and write the run (`incomplete`: why its loop stopped early)."""

    @abstractmethod
    def summary(self, terminalreporter: Any) -> None:
        """The mode's own lines at the end of the terminal summary."""

    def gathered(self) -> Conclusion | None:
        """The conclusion, given what this run's reports brought; None when no goldset
        showed up."""
        if self.selected is not None and any(map(is_goldset_item, self.selected)):
            self.concluding()
        if self.conclusion is not None:
            self.conclusion.gather(selected=self.selected, started=self.started,
                                   failed=self.failed, crashed=self.crashed, down=self.down)
            self.conclusion.invalid_lines = self.invalid_lines
        return self.conclusion

    def pytest_runtest_logstart(self, nodeid: str, location: Location) -> None:
        self.started[nodeid] = location

    @pytest.hookimpl(tryfirst=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_of_teardown(self, report: pytest.TestReport) -> None:
        """A question's teardown report, before pytest's JUnit writer closes its test case
        with the properties it carries: given the question's (`Conclusion.close_case`). A
        second `pytest_runtest_logreport` of this class (`specname`), run first; its name
        starts with `pytest_` because pytest reads hook markers only on such names."""
        if report.when == "teardown" and self.conclusion is not None:
            self.conclusion.close_case(report)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Every worker's reports pass through here; keep the ragate records they carry, and
        why any report failed (xdist's report of a crashed worker carries no record)."""
        row = row_of(report)
        if row is not None or getattr(report, ANCHOR_ATTR, None) is not None:
            self.ragate_ran()
        if row is not None:
            self.note_invalid_usage(row)
            self.concluding().add_record(report, row)
            delattr(report, RECORD_ATTR)  # kept as a QuestionRecord now, not twice
            if worker_of(report) is not None:  # (a process asking settles its own questions)
                settle(self.config)  # kept to the end, with its report: out of the GC's way
        anchor = getattr(report, ANCHOR_ATTR, None)
        if anchor is not None:
            self.concluding().add_anchor(report, anchor)
        worker = worker_of(report)
        if worker is not None:
            self.last_on[worker] = report.nodeid
        route = getattr(report, NO_SYSTEM_ATTR, None)
        if route is not None:
            self.no_system[route] = self.no_system.get(route, 0) + 1
        returned = getattr(report, MALFORMED_ATTR, None)
        if returned is not None:
            self.malformed[returned] = self.malformed.get(returned, 0) + 1
        if report.failed and not hasattr(report, "wasxfail"):
            self.failures[report.nodeid] += 1
            why = failure_line(report)
            self.failed.setdefault(report.nodeid, (report.when or "", why))
            if getattr(report, ITEM_FAILED_ATTR, False):
                self.item_failures.append((report.nodeid, report.when or "", why))

    def ragate_ran(self) -> None:
        """A goldset ran (here, or on a worker): from now on what this process prints is
        redacted too, as a worker's is (`items/printed.py`): the controller of xdist loads
        no goldset, and prints what its own hooks and the project's raise and log."""
        if not self.goldset_ran:
            self.goldset_ran = True
            start_printing(self.config)

    def note_invalid_usage(self, row: dict[str, Any]) -> None:
        """A judge usage that broke the rule (`judge_tokens.invalid`), for the run's line."""
        invalid = (row.get("judge_tokens") or {}).get("invalid") or {}
        for name, why in invalid.items():
            _, questions = self.invalid_usage.setdefault((row.get("judge") or "?", name),
                                                         (why, []))
            if row["question_id"] not in questions:  # once, whatever its repeats
                questions.append(row["question_id"])

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        """xdist reports the item a worker died running as failed, right after this hook:
        the item is recorded as crashed here. A worker that died while running a floor died
        tearing down what earlier items set up (a floor does nothing, and logs no start:
        `items.run_floor`). The crash is the last item's that worker reported, at its
        teardown, or the worker's when none did: never the floor's, which the controller
        decides and reports once. A conversation turn's node id comes from the scheduler with
        its xdist group, which its reports do not carry (`conversations.grouped`)."""
        crashitem = report.nodeid = ungrouped(crashitem)
        if crashitem in self.started:
            self.crashed.add(crashitem)
            return
        worker = worker_of(report) or "a worker"
        last = self.last_on.get(worker)
        report.when = "teardown"
        if last is None:
            report.nodeid = report.location[0]
            report.longrepr = (f"worker {worker!r} crashed while tearing down, before any item "
                               "it ran reported")
            return
        report.nodeid, report.location = last, self.started.get(last, report.location)
        report.longrepr = (f"worker {worker!r} crashed while tearing down after {last!r} (its "
                           "session or module fixtures, or a plugin's clean-up)")

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: take its description of the collection. A worker that
        crashed sends none; the others (and its replacement) do."""
        output = getattr(node, "workeroutput", None) or {}
        if WORKEROUTPUT_KEY in output:
            self.ragate_ran()
            self.concluding().add_collected(output[WORKEROUTPUT_KEY])
        if error:
            gateway = getattr(getattr(node, "gateway", None), "id", "a worker")
            self.down.append(f"{gateway}: {summary_line(error)}")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        """After `plugin.pytest_collection_modifyitems` held the outputs to every goldset
        this process loaded (a usage error otherwise)."""
        self.held = True

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """After every selection (-k, -m, --lf), keep what was selected: a run decides
        floors over each goldset's whole population, and tells a missing result from a
        deselected one by it. The description itself is built only when the run ends, so
        collecting (an IDE's --collect-only, `-k other`) costs nothing more."""
        self.selected = list(session.items)
        self.collection_done(session)  # clears the outputs an earlier run left

    def collection_done(self, session: pytest.Session) -> None:
        """This process collected (no xdist), and held the outputs to every goldset it
        loaded (`pytest_collection_modifyitems`): clear what an earlier run left at them.
        pytest's JUnit file too, in a run that has goldsets or ragate outputs."""
        if self.config.option.collectonly or not self.held:
            return
        junit = bool(self.settings.run.outputs) or any(map(is_goldset_item, session.items))
        clear_outputs(self.config, junit=junit)
        self.cleared = True

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_failed = True
            refused(self.config, report)  # an xdist worker refused the outputs
            found = getattr(report, PROBLEMS_ATTR, None)
            if found:
                from pytest_ragate.problems import Problem

                self.invalid_lines += [Problem.from_json(p) for p in found]

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist, a worker that finished collecting has held the outputs to the
        goldsets it loaded: one that refused them sent its refusal first, and the usage
        error it raised here (`pytest_collectreport`) has ended the run."""
        if not self.cleared and not self.config.option.collectonly:
            clear_outputs(self.config, junit=bool(self.settings.run.outputs))
            self.cleared = True

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """After the loop, or when it stops early (-x, --maxfail, an interrupt, pytest.exit):
        the run is concluded, and one that stopped early is written marked INCOMPLETE."""
        try:
            result = yield
        except BaseException as stop:
            if not self.config.option.collectonly and not isinstance(stop, pytest.UsageError):
                self.conclude(session, stopped_early(session, stop))
            raise
        if not self.config.option.collectonly:
            self.conclude(session, stopped_early(session))
        return result

    def saying_once(self, terminalreporter: Any) -> Generator[None, None, None]:
        """Around pytest's own summary (`plugin.pytest_terminal_summary` wraps it): a cause
        many goldset items share is shown once, at the first of them, in its ERRORS or
        FAILURES section and its short summary; the others are said in one line each place
        (`wording/causes.py`)."""
        if not self.item_failures:
            return (yield)
        from pytest_ragate.items.pytest_internals import said_once
        from pytest_ragate.wording.causes import Failed, shared_causes

        self.shared = shared_causes(Failed(nodeid=nodeid, when=when, why=why)
                                    for nodeid, when, why in self.item_failures)
        hidden = {(nodeid, shared.when) for shared in self.shared for nodeid in shared.others}
        with said_once(terminalreporter, hidden):
            result = yield
            chars = getattr(terminalreporter, "reportchars", "")
            if not getattr(terminalreporter, "no_summary", False):
                for shared in self.shared:
                    if ("f" if shared.when == "call" else "E") in chars:
                        terminalreporter.write_line(shared.summary_line(), red=True)
        return result

    def seal_key_note(self) -> str | None:
        """The line an empty RAGATE_SEAL_KEY is said in (a fork's job: `check_keys`)."""
        from pytest_ragate.settings import SEAL_KEY_ENV, set_but_empty

        if not set_but_empty(os.environ, SEAL_KEY_ENV):
            return None
        from pytest_ragate.wording.settings import seal_key_empty

        return seal_key_empty(self.settings.gate.sealed_without_key == "skip")

    def pytest_report_header(self, config: pytest.Config) -> str | None:
        return self.seal_key_note()

    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int) -> None:
        note = self.seal_key_note()
        if note is not None:
            terminalreporter.write_line(note, yellow=True, bold=True)
        if self.config.option.tbstyle != "no":  # where pytest's sections show the first
            for shared in self.shared:
                terminalreporter.write_line(shared.line(), red=True, bold=True)
        if self.no_system:
            from pytest_ragate.items.provenance import missing_summary

            terminalreporter.write_line(missing_summary(self.no_system), red=True, bold=True)
        if self.malformed:
            from pytest_ragate.items.malformed import malformed_summary

            terminalreporter.write_line(malformed_summary(self.malformed), red=True, bold=True)
        if self.invalid_usage:
            from pytest_ragate.judges.runner import invalid_usage_line

            for (judge, name), (why, questions) in self.invalid_usage.items():
                terminalreporter.write_line(invalid_usage_line(judge, name, why, questions),
                                            red=True, bold=True)
        rekeyed = rekeyed_line(self.config, self.settings) if self.goldset_ran else None
        if rekeyed:
            terminalreporter.write_line(rekeyed)
        self.summary(terminalreporter)
        self.show_in_ci(terminalreporter, int(exitstatus))

    def show_in_ci(self, terminalreporter: Any, exitstatus: int) -> None:
        """On GitHub Actions, the job summary and the annotations (`ci_views.py`): once, here,
        when a goldset ran or an invalid one was refused."""
        if not self.settings.ci.github_on(os.environ):
            return
        conclusion = self.conclusion if self.conclusion and self.conclusion.concluded else None
        if conclusion is None and not self.invalid_lines:
            return
        from pytest_ragate.modes.ci_views import gate_view, show_on_github

        shard = getattr(self, "shard", None)
        view = (conclusion.view(exit_status=exitstatus,
                                shard=str(shard) if shard is not None else None)
                if conclusion is not None else
                gate_view(self.config, [], None, problems=self.invalid_lines,
                          exit_status=exitstatus))
        show_on_github(self.config, terminalreporter, view)

    def hint_nothing_ran(self, terminalreporter: Any) -> None:
        """A run that asked for goldsets (`asked.py`) selected no ragate item, here (no
        xdist) or on a worker: where the rootdir's goldsets are, and how to run them (a
        bounded search, only now; the exit status is pytest's own). Not after a collection
        error: the goldset that failed to load may be what the run was given, and its error
        is the news."""
        if not self.config.stash.get(ASKED_KEY, False) or self.config.option.collectonly \
                or self.goldset_ran or self.collection_failed \
                or any(map(is_goldset_item, self.selected or [])):
            return
        from pytest_ragate.modes.nothing_ran import find_goldsets, nothing_ran_hint

        found = find_goldsets(self.config.rootpath)
        if found:
            terminalreporter.write_line(nothing_ran_hint(found), yellow=True, bold=True)


def check_before_running(config: pytest.Config, settings: Settings, *,
                         decided: Sequence[Path] = ()) -> None:
    """Usage errors of a run that concludes, before anything runs: a judge that cannot be
    built (one error, not a failure per item), and outputs that collide, cannot be written
    or would overwrite an input (`output_paths.py`; `decided`: the results files it reads)."""
    fixture_file = None
    if settings.judge.judge:
        from pytest_ragate.judges.select import check_settings

        spec = check_settings(settings.judge)
        fixture_file = spec[1] if spec and spec[0] == "fixture" else None
    check_judge_optional(settings)
    check_outputs(config, fixture_file, decided)


def check_judge_optional(settings: Settings) -> None:
    """`ragate_judge_optional` names judged metrics, each once: a typo would leave a floor
    it meant to skip failing, or one it did not mean to, so an unknown name is a usage error
    (checked only when set: a run without it imports nothing of the decision here)."""
    if not settings.gate.judge_optional:
        return
    from pytest_ragate.decision.rules import optional_metrics
    from pytest_ragate.scoring.registry import METRICS

    wrong = sorted(name for name in optional_metrics(settings.gate.judge_optional)
                   if name not in METRICS or not METRICS[name].judged)
    if wrong:
        from pytest_ragate.wording.floors import not_judged_metrics

        raise pytest.UsageError(not_judged_metrics("ragate_judge_optional", wrong))
