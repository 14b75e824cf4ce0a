"""The `ragate` command: goldset chores that run outside pytest."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.goldset import CONFIG_NAME, load_goldset
from pytest_ragate.problems import GoldsetError


def find_goldsets(path: Path) -> list[Path]:
    """A `ragate.toml`, a goldset folder, or any folder holding goldsets below it."""
    if path.is_file():
        return [path]
    if (path / CONFIG_NAME).is_file():
        return [path / CONFIG_NAME]
    return sorted(path.rglob(CONFIG_NAME))


@click.group()
@click.version_option(package_name="pytest-ragate")
def main() -> None:
    """pytest-ragate: RAG quality gates as pytest outcomes."""


@main.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
def validate(paths: tuple[Path, ...]) -> None:
    """Check goldsets against every rule pytest checks at collection.

    Prints one line per problem (file, line or question id, field) and exits 1 if any.
    """
    configs = [c for p in paths for c in find_goldsets(p)]
    if not configs:
        raise click.ClickException(f"no {CONFIG_NAME} under {', '.join(map(str, paths))}")
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
    if failed:
        raise SystemExit(1)
