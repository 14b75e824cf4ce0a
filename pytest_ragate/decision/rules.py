"""How a run's floors and checks are decided (`Rules`), built in one place (`rules_of`) from
the deciding knobs as a run has them (`modes/saved_lines.decision_settings`) or as a results
header keeps them (`Header.gate`, the same keys): so the gate, `ragate decide` and `ragate
rejudge` hold a goldset to one set of rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_ragate.scoring.pairing import BaselineRun
from pytest_ragate.scoring.slices import Correction

CiMode = Literal["point", "strict"]
Insufficient = Literal["fail", "skip"]


@dataclass(frozen=True, kw_only=True)
class Strictness:
    """How sure a floor must be: `ci` and `min_n` from the gate settings; and whether a
    sealed goldset without its key fails (the default) or skips its floors."""

    ci: CiMode = "point"
    min_n: int = 0
    sealed_without_key: Literal["fail", "skip"] = "fail"
    # the flag with which pytest's cache narrowed the run to its last failures (`--lf`,
    # `--sw`): a member it deselected is missing, not the user's choice, and fails its floors
    narrowed_by: str | None = None

    @property
    def strict(self) -> bool:
        """`ragate_ci = strict`: a floor holds only when its 95% interval's bound clears it."""
        return self.ci == "strict"


POINT = Strictness()


@dataclass(frozen=True, kw_only=True)
class SliceRules:
    """How slice floors are decided: the error rate of the correction across a key's slices,
    which correction, and what a slice too small to decide does."""

    alpha: float = 0.05
    correction: Correction = "holm"
    insufficient: Insufficient = "fail"


@dataclass(frozen=True, kw_only=True)
class Rules:
    """How the run is decided: the gate settings and, with --ragate-baseline, the baseline."""

    strictness: Strictness = POINT
    require_judge: bool = False
    baseline: Sequence[BaselineRun] | None = None
    alpha: float = 0.05
    slices: SliceRules = field(default_factory=SliceRules)
    accept_judge: str | None = None  # --ragate-accept-judge: a judge change it accepts
    # judged metrics whose floors a run without a judge skips (`ragate_judge_optional`)
    judge_optional: frozenset[str] = frozenset()


DEFAULT_RULES = Rules()


def optional_metrics(names: str | None) -> frozenset[str]:
    """`ragate_judge_optional`'s metric names, separated by spaces or commas."""
    return frozenset((names or "").replace(",", " ").split())


def rules_of(gate: Mapping[str, Any], baseline: Sequence[BaselineRun] | None = None, *,
             narrowed_by: str | None = None) -> Rules:
    """The rules the deciding knobs `gate` say (a knob it lacks, as a results file written
    before that knob existed, takes its default), with the baseline runs when checked, and the
    flag that narrowed the run to its last failures, when one did."""
    slices = SliceRules()
    return Rules(strictness=Strictness(ci=gate.get("ci", POINT.ci),
                                       min_n=int(gate.get("min_n", POINT.min_n)),
                                       sealed_without_key=gate.get("sealed_without_key",
                                                                   POINT.sealed_without_key),
                                       narrowed_by=narrowed_by),
                 require_judge=bool(gate.get("require_judge", False)), baseline=baseline,
                 alpha=float(gate.get("alpha", Rules.alpha)),
                 accept_judge=gate.get("accept_judge"),
                 judge_optional=optional_metrics(gate.get("judge_optional")),
                 slices=SliceRules(alpha=float(gate.get("slice_alpha", slices.alpha)),
                                   correction=gate.get("slice_correction", slices.correction),
                                   insufficient=gate.get("slice_insufficient",
                                                         slices.insufficient)))
