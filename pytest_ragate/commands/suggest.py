"""`ragate suggest`: each goldset's figures and the `[floors]` they suggest, from saved runs."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.saved import whole_run_rows


@click.command("suggest")
@click.argument("results", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def command(results: tuple[Path, ...]) -> None:
    """Print each goldset's figures and the `[floors]` they suggest, from saved runs.

    RESULTS are --ragate-results files (one run's, or each shard's). Prints what a run
    without floors prints: every metric its questions can score, with n, the 95% interval
    and kind counts, the figures by tag value, then a `[floors]` block to paste into the
    goldset's ragate.toml (with the slice floors its n decides).

    \b
    Example:
      ragate suggest out/results.jsonl
    """
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.modes.reporting import figures_before_floors

    by_goldset: dict[str, GoldsetRun] = {}
    for record in whole_run_rows(results):
        run = by_goldset.setdefault(record.goldset, GoldsetRun(
            name=record.goldset, eval_version=record.eval_version))
        run.records.append(record)
    figures_before_floors(click.echo, list(by_goldset.values()), floors_known=False)
