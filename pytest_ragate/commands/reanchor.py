"""`ragate reanchor`: pinned evidence whose text moved, re-anchored where it is now."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.project import read_project
from pytest_ragate.problems import GoldsetError


@click.command("reanchor")
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
@click.option("--write", is_flag=True, help="rewrite the moved spans' units in the goldset "
              "(without it, only say what would change)")
def command(goldset: Path, write: bool) -> None:
    """Pinned evidence whose text moved in the corpus, re-anchored where it is now.

    A dry run by default; with --write only the moved spans' document and units are
    rewritten. A sealed goldset is changed sealed with RAGATE_SEAL_KEY, refused without it.
    Exit 1 when a pinned span is stale (its text is edited or gone: fix that answer by hand).

    \b
    Example:
      ragate reanchor goldsets/faq            (then, to rewrite: --write)
    """
    from pytest_ragate.pinning import PinningError, reanchor_goldset

    read_project(goldset)  # the project's `@ragate.metric` names, which its floors may use

    try:
        done = reanchor_goldset(goldset, write=write)
    except (GoldsetError, PinningError) as error:
        raise click.ClickException(str(error)) from None
    for line in [*done.lines, *done.problems]:
        click.echo(line)
    verb = "re-anchored" if write else "would re-anchor"
    click.echo(f"{verb} {done.changes} span{'s' * (done.changes != 1)}"
               + ("" if write or not done.changes else " (--write to rewrite the goldset)"))
    for line in done.notes:
        click.echo(line)
    if done.problems:
        raise SystemExit(1)
