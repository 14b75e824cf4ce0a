"""Repository-level pytest configuration: the test suite drives pytest itself (pytester).

The gate over `goldsets/` needs nothing here: the shipped goldsets opt in to the embedded
pipeline (`system = "builtin"` in their ragate.toml). A team's own `conftest.py` is where
`ragate_system` is defined.
"""

pytest_plugins = ["pytester"]
