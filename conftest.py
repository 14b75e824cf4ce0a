"""Repository-level pytest configuration: the test suite drives pytest itself (pytester).

The gate over `goldsets/` needs nothing here: the plugin's default fixtures are the
embedded pipeline. A team's own `conftest.py` is where `ragate_system` is overridden.
"""

pytest_plugins = ["pytester"]
