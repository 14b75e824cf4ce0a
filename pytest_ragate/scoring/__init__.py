"""Scoring and statistics, pure (no pytest, no files): one answer's scores, the metric
registry, intervals and tests, floors, regressions, flips, power and judge agreement."""
