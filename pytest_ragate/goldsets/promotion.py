"""`--ragate-promote`: turning strict xfails that now pass into hard assertions.

Only anchors and floors that ran in this run and XPASSed are promoted, and only their own
lines are rewritten (atomically): every other byte of `anchors.jsonl` and `ragate.toml`,
comments and formatting included, stays as it was.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from pytest_ragate.decision.population import anchor_name
from pytest_ragate.files import write_atomic
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.pass_rate import PASS_RATE, QUESTION_TABLE

PROMOTE_HINT = "run `pytest --ragate-promote` to make it a hard assertion"
FORCE_FLAG = "--ragate-promote-flipped"


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
            done.append(Promotion(path, anchor_name(row["anchor_id"]), i + 1))
    if done:
        write_atomic(path, "\n".join(lines))
    return done


def promote_floors(config_path: Path, floors: Iterable[Floor]) -> list[Promotion]:
    """`metric = { min = 0.9, xfail = "…" }` becomes `metric = 0.9` for each floor; an
    upper-bound floor keeps its table without the xfail, `metric = { max = 0.05 }` (a bare
    number is a lower bound)."""
    doc = tomlkit.parse(config_path.read_text(encoding="utf-8"))
    done: list[Promotion] = []
    for floor in floors:
        table: Any = doc.get("floors", {})
        if floor.slice is not None:
            table = _slice_table(table.get("slices", {}), floor)
        elif floor.kind is not None:
            table = table.get("anchors" if floor.anchors else "kind", {}).get(floor.kind, {})
        key = floor.metric
        if floor.metric == PASS_RATE:  # `[floors.question] pass_rate`
            table, key = table.get(QUESTION_TABLE, {}), "pass_rate"
        value = table.get(key)
        if isinstance(value, dict) and "xfail" in value:
            if "max" in value:
                bound = tomlkit.inline_table()
                bound["max"] = value["max"]
                table[key] = bound
            else:
                table[key] = value["min"]
            done.append(Promotion(config_path, floor.name))
    if done:
        write_atomic(config_path, tomlkit.dumps(doc))
    return done


def _slice_table(slices: Any, floor: Floor) -> Any:
    """Where a slice floor's xfail is written: its own table (`[floors.slices."lang=de"]`);
    when the xfail is its key's (`[floors.slices.lang]`, every value), a copy of the key's
    floor made that slice's own table, so that promoting German leaves the other values'
    xfail as it was."""
    assert floor.slice is not None
    key, value = floor.slice
    name = f"{key}={value}"
    if floor.metric in slices.get(name, {}):
        return slices[name]
    every = slices.get(key, {}).get(floor.metric)
    if not isinstance(every, dict) or "xfail" not in every:
        return {}
    if name not in slices:
        slices[name] = tomlkit.table()
    slices[name][floor.metric] = every.copy()
    return slices[name]


def summary(promoted: list[Promotion], not_run: list[str], by_hand: list[str], *,
            refused: Sequence[str] = (), forced: Sequence[str] = (),
            checked: bool = True) -> list[str]:
    """syrupy-style: what changed, with plurals, and what to do next. `refused` and `forced`
    name what flipped across runs (`scoring/flips.py`); `checked` is False without a
    history to count flips in."""
    lines = []
    if promoted:
        n = len(promoted)
        lines.append(f"ragate: promoted {n} strict xfail{'s' * (n != 1)} to hard assertions:")
        lines += [f"  {p}" for p in promoted]
        lines.append("Re-run pytest: they now gate like any other item.")
    elif refused:
        lines.append("ragate: nothing promoted (each xfail that passed was refused, below)")
    else:
        lines.append("ragate: nothing to promote (no xfail anchor or floor passed in this run)")
    lines += [f"{why}; pass {FORCE_FLAG} to promote anyway" for why in refused]
    lines += [f"promoted anyway ({FORCE_FLAG}): {why.replace(' not promoted:', ':')}"
              for why in forced]
    if not checked:
        lines.append("flips across runs not checked: no --ragate-history (pass it to refuse "
                     "anchors and floors whose outcome flips)")
    if by_hand:
        lines.append("Declared in Python, promote by hand (remove `xfail`): " + ", ".join(by_hand))
    if not_run:
        lines.append("Not promoted, did not run in this run: " + ", ".join(not_run))
    return lines
