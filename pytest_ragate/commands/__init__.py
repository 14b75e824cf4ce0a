"""The `ragate` commands, one module each; `cli.py` is the group that registers them.

Shared by several: `project.py` (the project's settings, read by pytest itself),
`goldset_paths.py` (the goldsets a command is pointed at), `saved.py` (saved runs read through
the one reader, `outputs/saved_runs.py`) and `options.py` (argument types).
"""
