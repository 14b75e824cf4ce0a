"""`ragate validate`: goldsets checked against every rule pytest checks at collection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pytest_ragate.commands.goldset_paths import goldsets_under
from pytest_ragate.commands.project import read_project
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError


@click.command("validate")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
def command(paths: tuple[Path, ...]) -> None:
    """Check goldsets against every rule pytest checks at collection.

    Prints one line per problem (file, line or question id, field) and exits 1 if any.
    The notes on floors a goldset's n cannot decide use ragate_min_n and ragate_ci as
    `pytest PATHS` reads them.

    \b
    Example:
      ragate validate goldsets/
    """
    configs = goldsets_under(paths)
    settings = read_project(*paths).settings.gate
    failed = 0
    for config in configs:
        try:
            goldset = load_goldset(config)
        except GoldsetError as error:
            failed += 1
            for problem in error.problems:
                click.echo(str(problem))
            continue
        click.echo(f"ok {config}: {goldset.name}, {len(goldset.cases)} questions, "
                   f"{len(goldset.corpus)} documents, {len(goldset.floors)} floors")
        for line in _validate_notes(goldset, min_n=settings.min_n,
                                   strict=settings.ci == "strict"):
            click.echo(f"  {line}")
        stale = sum(bool(c.pins and c.pins.stale) for c in goldset.cases)
        failed += bool(stale)
    if failed:
        raise SystemExit(1)


def _validate_notes(goldset: Any, *, min_n: int, strict: bool) -> list[str]:
    """A loaded goldset's evidence pins and cheap warnings (goldsets/forewarnings.py)."""
    from pytest_ragate.goldsets.forewarnings import (
        fact_lines,
        label_lines,
        pin_lines,
        same_questions,
        undecidable_floors,
    )

    return [*pin_lines(goldset), *label_lines(goldset), *same_questions(goldset),
            *undecidable_floors(goldset, min_n=min_n, strict=strict), *fact_lines(goldset)]
