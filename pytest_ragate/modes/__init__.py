"""What a run is, chosen once (`choosing.py`): a gate (`gate.py`), a shard (`shard.py`) or a
decision over saved results files (`decide_saved.py`, with `decide_files.py` and
`decide_holding.py`), each one object on the shared `controller.Controller`, and an xdist
worker's `worker.Worker`; and what a concluding mode does at the end: decide
(`conclusion.py`), report (`reporting.py`), save (`saved_lines.py`), check and clear its
outputs (`output_paths.py`), or say why nothing ran (`nothing_ran.py`)."""
