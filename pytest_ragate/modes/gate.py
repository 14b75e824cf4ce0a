"""The gate: a run in one process, or the xdist controller of one, that decides every floor
over its goldsets' whole populations, fails on a missing result no floor covers, and writes
and promotes what was asked. The mode of a run with neither `--ragate-shard` nor
`--ragate-decide`, goldsets or not: light until a goldset shows up (`controller.py`).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_ragate.modes.controller import Controller


class Gate(Controller):
    name = "ragate-gate"

    def conclude(self, session: pytest.Session, incomplete: str | None) -> None:
        conclusion = self.gathered()
        if conclusion is None:
            return
        conclusion.decide(session, incomplete=incomplete)
        conclusion.fail_on_gaps(session)
        conclusion.write(session, conclusion.saved() if self.cleared else None)
        conclusion.settle_promoted(session, self.failures)

    def summary(self, terminalreporter: Any) -> None:
        if self.conclusion is not None:
            self.conclusion.terminal_summary(terminalreporter)
        self.hint_nothing_ran(terminalreporter)
