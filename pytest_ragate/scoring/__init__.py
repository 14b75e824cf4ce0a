"""Figures and statistics, pure (no pytest, no files, no verdicts, no wording): one answer's
scores, the metric registry, a floor's figures, intervals and tests, paired tests against a
baseline, flips, power, judge agreement and the shift between two judges."""
