"""The `ragate` command: the group that registers each command of `commands/`."""

from __future__ import annotations

import click

from pytest_ragate.commands import (
    audit,
    calibrate,
    compare,
    decide,
    init,
    pin,
    plan,
    power,
    reanchor,
    rejudge,
    renamed,
    seal,
    stamp,
    suggest,
    units,
    validate,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="pytest-ragate")
def main() -> None:
    """pytest-ragate: RAG quality gates as pytest outcomes.

    \b
    Example:
      ragate init gs --corpus 'docs/*.md'   then   ragate validate gs
    """
    import os

    from pytest_ragate.settings import RESULTS_KEY_ENV, set_but_empty
    from pytest_ragate.wording.settings import key_empty

    if set_but_empty(os.environ, RESULTS_KEY_ENV):  # read as no key, nothing would be checked
        raise click.UsageError(key_empty(RESULTS_KEY_ENV))


for module in (init, validate, audit, units, pin, reanchor, seal, stamp, plan, power,
               calibrate, suggest, compare, decide, rejudge):
    main.add_command(module.command)
for old in renamed.COMMANDS:
    main.add_command(old)
