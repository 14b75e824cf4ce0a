"""`--ragate-promote`: turning strict xfails that now pass into hard assertions.

Only anchors and floors that ran in this run and XPASSed are promoted, and only their own
lines are rewritten (atomically): every other byte of `anchors.jsonl` and `ragate.toml`,
comments and formatting included, stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import tomlkit

from pytest_ragate.files import write_atomic
from pytest_ragate.goldset import Floor
from pytest_ragate.wire import AnchorOutcome

if TYPE_CHECKING:
    from pytest_ragate.decision import FloorDecision

PROMOTE_HINT = "run `pytest --ragate-promote` to make it a hard assertion"


@dataclass(frozen=True)
class Promotion:
    path: Path
    what: str  # "anchor[a1]" or "floor[kind:metric]"
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{self.what} ({where})"


def promote_anchors(path: Path, anchor_ids: Iterable[str]) -> list[Promotion]:
    """Drop `xfail` from these anchors' lines, leaving every other line byte for byte."""
    wanted = set(anchor_ids)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    done: list[Promotion] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        row: dict[str, Any] = json.loads(line)
        if row.get("anchor_id") in wanted and "xfail" in row:
            del row["xfail"]
            lines[i] = json.dumps(row, ensure_ascii=False)
            done.append(Promotion(path, f"anchor[{row['anchor_id']}]", i + 1))
    if done:
        write_atomic(path, "\n".join(lines))
    return done


def promote_floors(config_path: Path, floors: Iterable[Floor]) -> list[Promotion]:
    """`metric = { min = 0.9, xfail = "…" }` becomes `metric = 0.9` for each floor."""
    doc = tomlkit.parse(config_path.read_text(encoding="utf-8"))
    done: list[Promotion] = []
    for floor in floors:
        table: Any = doc.get("floors", {})
        if floor.kind is not None:
            table = table.get("anchors" if floor.anchors else "kind", {}).get(floor.kind, {})
        value = table.get(floor.metric)
        if isinstance(value, dict) and "xfail" in value:
            table[floor.metric] = value["min"]
            done.append(Promotion(config_path, floor.name))
    if done:
        write_atomic(config_path, tomlkit.dumps(doc))
    return done


def summary(promoted: list[Promotion], not_run: list[str], by_hand: list[str]) -> list[str]:
    """syrupy-style: what changed, with plurals, and what to do next."""
    lines = []
    if promoted:
        n = len(promoted)
        lines.append(f"ragate: promoted {n} strict xfail{'s' * (n != 1)} to hard assertions:")
        lines += [f"  {p}" for p in promoted]
        lines.append("Re-run pytest: they now gate like any other item.")
    else:
        lines.append("ragate: nothing to promote (no xfail anchor or floor passed in this run)")
    if by_hand:
        lines.append("Declared in Python, promote by hand (remove `xfail`): " + ", ".join(by_hand))
    if not_run:
        lines.append("Not promoted, did not run in this run: " + ", ".join(not_run))
    return lines


def promote(anchors: Iterable[AnchorOutcome], floors: Iterable[FloorDecision]) -> list[str]:
    """Rewrite the xfail of every anchor and floor that XPASSed in this run; say what was
    done, what was not run, and what must be promoted by hand."""
    promoted: list[Promotion] = []
    by_file: dict[str, list[str]] = {}
    for anchor in anchors:
        if anchor.outcome == "xpassed":
            by_file.setdefault(anchor.path, []).append(anchor.anchor_id)
    for path, ids in by_file.items():
        promoted += promote_anchors(Path(path), ids)
    by_config: dict[str, list[Floor]] = {}
    by_hand, not_run = [], []
    for spec, verdict in ((d.spec, d.verdict) for d in floors):
        if not spec.floor.xfail:
            continue
        name = f"{spec.goldset}::{spec.floor.name}"
        if verdict.outcome == "skipped":
            not_run.append(name)
        elif verdict.outcome == "xpassed" and spec.config_path is None:
            by_hand.append(spec.nodeid)
        elif verdict.outcome == "xpassed" and spec.config_path is not None:
            by_config.setdefault(spec.config_path, []).append(spec.floor)
    for path, keys in by_config.items():
        promoted += promote_floors(Path(path), keys)
    return summary(promoted, not_run, by_hand)


def anchor_row(item: Any, call: Any, report: Any) -> AnchorOutcome | None:
    """What the controller needs to know of an anchor's outcome (None for the reports that
    say nothing of it), and the promote hint on a strict XPASS.

    The outcome is read from pytest's own xfail state (`xfailed_key`, set by
    `_pytest.skipping`, as syrupy reads it), not from the text pytest wrote into `longrepr`:
    a strict xfail that passed is a failed call report with no exception, under an xfail
    mark that is strict."""
    from _pytest.skipping import xfailed_key

    entry = getattr(item, "anchor_entry", None)
    if entry is None or report.when == "teardown" or (report.when == "setup"
                                                      and report.passed):
        return None
    anchor = entry.anchor
    outcome, error = report.outcome, None
    xfailed = item.stash.get(xfailed_key, None)
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    elif (report.when == "call" and report.failed and call.excinfo is None
          and xfailed is not None and xfailed.strict):
        outcome = "xpassed"
        report.longrepr = f"{report.longrepr}. The anchor holds now: {PROMOTE_HINT}"
    elif report.failed and (report.when != "call" or not isinstance(
            call.excinfo.value, pytest.fail.Exception)):
        error = call.excinfo.exconly().splitlines()[0] if call.excinfo else "error"
    elif report.skipped:
        error = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else "skipped"
    why = None
    if call.excinfo is not None and isinstance(call.excinfo.value, pytest.fail.Exception):
        why = str(call.excinfo.value.msg)
    return AnchorOutcome(goldset=item.goldset_name, anchor_id=anchor.anchor_id,
                         kind=anchor.kind, claim=anchor.claim, path=str(entry.path),
                         line=entry.line, xfail=anchor.xfail, outcome=outcome, error=error,
                         why=why)
