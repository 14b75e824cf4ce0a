"""`ragate audit GOLDSET`: a goldset linter over its corpus, its expected answers and, when
given, saved runs (docs/goldsets.md, "Auditing a goldset")."""
