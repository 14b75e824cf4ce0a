"""`ragate decide`: saved results decided, by pytest in its decide mode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

import click


@click.command("decide", context_settings={"ignore_unknown_options": True,
                                           "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(args: tuple[str, ...]) -> None:
    """Decide the floors over saved results: RESULTS... [-- PYTEST_ARGS...].

    RESULTS are each shard's --ragate-results file (or one run's), folders of them or globs.
    PYTEST_ARGS select the goldsets as the shards did (paths, -m, -k) and name the outputs
    (--junitxml, --ragate-report, --ragate-html, --ragate-history, --ragate-baseline, ...).
    Runs `pytest --ragate-decide RESULTS... PYTEST_ARGS` in one process and exits with its
    status: 0 when every floor holds, 1 when one fails or the files are refused.

    \b
    Example:
      ragate decide shards/ -- goldsets/ --junitxml=junit.xml
    """
    cut = args.index("--") if "--" in args else len(args)
    results, rest = args[:cut], args[cut + 1:]
    if not results:
        raise click.UsageError("give the results files to decide (each shard's "
                               "--ragate-results)")
    run_decide([f"--ragate-decide={path}" for path in results], rest)


def run_decide(flags: Sequence[str], rest: Sequence[str]) -> NoReturn:
    """`pytest FLAGS REST` in one process (whatever addopts say; an explicit -n in REST is
    refused), exiting with its status."""
    import importlib.util

    import pytest

    serial = ["-n", "0"] if importlib.util.find_spec("xdist") else []
    raise SystemExit(int(pytest.main([*flags, *serial, *rest])))
