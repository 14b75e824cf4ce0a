"""`ragate pin`: expected evidence spans pinned to the text they point at."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.project import read_project
from pytest_ragate.problems import GoldsetError


@click.command("pin")
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
def command(goldset: Path) -> None:
    """Pin every expected evidence span that has no pin: a fingerprint of the text it points
    at now and of the text around it, so that collection can tell when a corpus edit moves or
    changes it.

    Only the answers that gain a pin are rewritten, and in them only the spans' `pin`.
    A sealed goldset is changed sealed with RAGATE_SEAL_KEY, refused without it. Exit 1
    when a span cannot be pinned.

    \b
    Example:
      ragate pin goldsets/faq
    """
    from pytest_ragate.pinning import PinningError, pin_goldset

    read_project(goldset)  # the project's `@ragate.metric` names, which its floors may use

    try:
        done = pin_goldset(goldset)
    except (GoldsetError, PinningError) as error:
        raise click.ClickException(str(error)) from None
    for line in done.problems:
        click.echo(line)
    click.echo(f"pinned {done.changes} span{'s' * (done.changes != 1)}"
               + (f" in {', '.join(map(str, done.written))}" if done.written else ""))
    for line in [*done.lines, *done.notes]:
        click.echo(line)
    if done.problems:
        raise SystemExit(1)
