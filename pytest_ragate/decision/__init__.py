"""The decision of a run, pure (no pytest, no files): the population a run is decided over
(`population.py`) and the decision itself (`run_decision.py`)."""
