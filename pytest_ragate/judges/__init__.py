"""Judged metrics. What a judge of your own needs is importable from here:
`JudgeInput` (what it is asked about), `Vacuous` (a verdict with nothing to judge) and
`JudgeFailure` (no verdict: counted as a failure, never as a score)."""

from pytest_ragate.judges.base import Judge, JudgeFailure, JudgeInput, Vacuous

__all__ = ["Judge", "JudgeFailure", "JudgeInput", "Vacuous"]
