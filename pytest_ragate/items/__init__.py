"""A goldset's pytest items and their life in one process: how goldsets become items
(`collection.py`), how a question is asked, scored and judged (`questions.py`), and what keeps
that honest (provenance, redaction, time limits, the fences around private pytest and xdist
state)."""
