"""Every verdict ragate makes, pure (no pytest, no files): the population a run is decided
over (`population.py`), the rules (`rules.py`), the decision of a run (`run_decision.py`) and of
a goldset's floors (`goldset_floors.py`, over `floors.py`, `slice_floors.py`,
`agreement_floor.py`, `sequential.py`), checks against a baseline (`regressions.py`), a judge
change (`rejudge.py`) and whether a goldset run passed (`goldset_run.py`); what each says,
as a typed value (`said.py`), which wording/ writes: decision/ imports nothing of it."""
