"""What pytest prints while ragate runs passes through this process's `Redactor`, the one every
output goes through (`redacting.py`; `redaction.py` says what it masks and with what).

Every text is masked where it is made, in the process that makes it, before a handler or a
hook shows it or xdist sends it from a worker to the controller:

- a log record (live logging, `--log-file`, caplog, a report's captured log, JUnit's
  `junit_logging`): its message, exception text and stack are masked as the record is made,
  by this process's record factory (`logging.setLogRecordFactory`), whatever handler takes
  it; a filter on pytest's own handlers (`pytest_internals.log_handlers`) masks a record that
  was filled in after it was made (`logging.makeLogRecord`: a record from another process)
  or made by a factory set after this one. A filter on the root logger would see only the
  records logged on the root logger itself, not those of httpx or openai;
- a warning: `pytest_warning_recorded` (first, before the terminal and xdist take it) masks
  it in place; one shown outside pytest's windows (a judge's thread between tests) passes
  through `warnings.showwarning`, replaced while the test loop runs;
- a report: the failure text and captured sections of every test and collection report
  (`redacting.redact_report`), as soon as it is made;
- an INTERNALERROR: `pytest_internalerror` (first) masks what pytest, xdist and the terminal
  print of it (`pytest_internals.show_redacted`).

Ragate runs in a process once it loads a goldset (`start_printing`; the xdist controller,
which loads none, once a goldset's result arrives), which registers the hooks above on one
object (`Printing`): a pytest run without goldsets prints exactly what it would without
ragate.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TextIO

import pytest

from pytest_ragate.items.keys import is_goldset_item

if TYPE_CHECKING:
    from pytest_ragate.redaction import Redactor

PRINTING_KEY = pytest.StashKey["Printing"]()
# on a log record: what it was masked with. Underscored, as a formatter that shows a record's
# extra attributes (python-json-logger's) leaves those out
MASKED = "_ragate_masked"


def redact_record(record: logging.LogRecord, redact: Callable[[str], str]) -> None:
    """`record` masked in place: its message (formatted now, only when it held a secret),
    its exception text and its stack."""
    try:
        text = record.getMessage()
    except Exception:  # a broken format: logging will show the message and its arguments
        text = f"{record.msg} {record.args!r}"
    clean = redact(text)
    if clean != text:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        shown = logging.Formatter().formatException(record.exc_info)
        clean = redact(shown)
        if clean != shown:
            record.exc_text = clean  # what every formatter shows instead of formatting it
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


def redact_warning(found: warnings.WarningMessage, redact: Callable[[str], str]) -> None:
    """A recorded warning masked in place: the message pytest's summary shows, and the
    arguments xdist sends a worker's warning with (the controller builds it again from
    them)."""
    text = str(found.message)
    clean = redact(text)
    if clean == text:
        return
    if isinstance(found.message, Warning):
        found.message.args = (clean,)
        if str(found.message) == clean:
            return
    found.message = clean  # type: ignore[assignment]  # a warning whose text is not its args


class _Filter(logging.Filter):
    def __init__(self, printing: Printing) -> None:
        super().__init__()
        self.printing = printing

    def filter(self, record: logging.LogRecord) -> bool:
        self.printing.redact(record)
        return True


class Printing:
    """This process's redaction of what pytest prints: registered with pytest's plugin
    manager by `start_printing`, until the config's clean-up (`stop`)."""

    name = "ragate-printing"

    def __init__(self, config: pytest.Config) -> None:
        from pytest_ragate.items.pytest_internals import log_handlers
        from pytest_ragate.items.redacting import redact_report, redactor

        self.config = config
        self._redactor = redactor
        self._redact_report = redact_report
        self._busy = threading.local()  # a redactor being made logs nothing through itself
        self._filter = _Filter(self)
        self._handlers = log_handlers(config)
        for handler in self._handlers:
            handler.addFilter(self._filter)
        self._factory = logging.getLogRecordFactory()
        logging.setLogRecordFactory(self._make_record)
        self._showwarning: Any = None
        self.stopped = False

    def redactor(self) -> Redactor | None:
        if self.stopped or getattr(self._busy, "on", False):
            return None
        self._busy.on = True
        try:
            return self._redactor(self.config)
        finally:
            self._busy.on = False

    def redact(self, record: logging.LogRecord) -> None:
        """Once per record: a record keeps the message and arguments it was masked with
        (`MASKED`), and one that `logging.makeLogRecord` filled in after the factory made it
        is masked again by the handlers' filter."""
        done = record.__dict__.get(MASKED)
        if done is not None and done[0] is record.msg and done[1] is record.args:
            return
        redact = self.redactor()
        if redact is not None:
            redact_record(record, redact)
            record.__dict__[MASKED] = (record.msg, record.args)

    def _make_record(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self._factory(*args, **kwargs)
        self.redact(record)
        return record

    def _show_warning(self, message: Warning | str, category: type[Warning], filename: str,
                      lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
        redact = self.redactor()
        if redact is not None:
            found = warnings.WarningMessage(message, category, filename, lineno, file, line)
            redact_warning(found, redact)
            message = found.message
        self._showwarning(message, category, filename, lineno, file, line)

    # --- pytest's hooks ---------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self) -> None:
        """A warning made while the loop runs, outside a test's window (a judge's thread),
        is shown by `warnings.showwarning`: replaced here, where no `catch_warnings` of
        pytest's is open to put the old one back when it closes."""
        if self._showwarning is None:
            self._showwarning = warnings.showwarning
            warnings.showwarning = self._show_warning

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A test that is no goldset's (a goldset item's report is redacted with its row and
        anchor: plugin.py), as soon as its report is made."""
        report = yield
        if not is_goldset_item(item):
            self._redact_report(self.config, report)
        return report

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_make_collect_report(self) -> Generator[None, pytest.CollectReport,
                                                      pytest.CollectReport]:
        report = yield
        self._redact_report(self.config, report)
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage) -> None:
        """Before the terminal's summary or xdist (sending a worker's) takes it."""
        redact = self.redactor()
        if redact is not None:
            redact_warning(warning_message, redact)

    @pytest.hookimpl(tryfirst=True)
    def pytest_internalerror(self, excrepr: object) -> None:
        """Before pytest, the terminal or xdist (sending a worker's) prints it."""
        redact = self.redactor()
        if redact is not None:
            from pytest_ragate.items.pytest_internals import show_redacted

            show_redacted(excrepr, redact)

    def stop(self) -> None:
        """Unregistered; what was replaced is put back (or, where something replaced it
        since, left passing through)."""
        self.stopped = True
        if self.config.pluginmanager.is_registered(self):
            self.config.pluginmanager.unregister(self)
        for handler in self._handlers:
            handler.removeFilter(self._filter)
        if logging.getLogRecordFactory() == self._make_record:
            logging.setLogRecordFactory(self._factory)
        if self._showwarning is not None and warnings.showwarning == self._show_warning:
            warnings.showwarning = self._showwarning


def start_printing(config: pytest.Config) -> None:
    """This process loaded a goldset: from now on what pytest prints is redacted."""
    if PRINTING_KEY not in config.stash:
        printing = config.stash[PRINTING_KEY] = Printing(config)
        config.pluginmanager.register(printing, printing.name)
        config.add_cleanup(printing.stop)
