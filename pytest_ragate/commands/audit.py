"""`ragate audit`: goldsets linted (duplicates, evidence against the corpus, floors
against their n)."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.goldset_paths import goldsets_under
from pytest_ragate.commands.project import read_project
from pytest_ragate.commands.saved import signed_reads
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError


@click.command("audit")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--results", "results", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="a --ragate-results file of the goldset (repeat for several runs)")
@click.option("--history", "history", multiple=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="a --ragate-history file (every line of the goldset is a run)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="one line per finding, or a JSON document")
@click.option("--no-embed", is_flag=True, help="skip what embeds (near duplicates; the "
              "embedding side of evidence support)")
@click.option("--cache", "cache", type=click.Path(file_okay=False, path_type=Path),
              default=Path(".pytest_cache/d/ragate-index"), show_default=True,
              help="where embedded texts are kept (the built-in pipeline's index folder)")
def command(paths: tuple[Path, ...], results: tuple[Path, ...], history: tuple[Path, ...],
            fmt: str, no_embed: bool, cache: Path) -> None:
    """Lint goldsets: duplicates, evidence against the corpus, floors against their n.

    Prints one line per finding (file:line: question id: rule (severity): message) and a
    summary per goldset, and exits 1 if any finding is an error (or a goldset does not load).
    With --results or --history, questions every saved run got right or wrong are named
    too. `[audit] rules` in a goldset's ragate.toml switches rules off or sets their
    severity (docs/goldsets.md, "Auditing a goldset").

    \b
    Example:
      ragate audit goldsets/faq --results out/results.jsonl
    """
    from pytest_ragate.audit import render
    from pytest_ragate.audit.run import audit_goldset
    from pytest_ragate.audit.runs import RunsError, read_runs

    configs = goldsets_under(paths)
    read_project(*paths)  # the project's `@ragate.metric` names, which its floors may use
    embedding = None
    if not no_embed:
        from pytest_ragate.audit.vectors import AuditEmbedding

        embedding = AuditEmbedding(cache)
    reports, failed = [], False
    for config in configs:
        try:
            goldset = load_goldset(config)
        except GoldsetError as error:
            failed = True
            click.echo("\n".join(str(problem) for problem in error.problems), err=fmt == "json")
            continue
        if results or history:
            signed_reads("ragate audit --results/--history")
        try:
            runs = read_runs(goldset.name, results, history) if results or history else None
        except RunsError as error:
            raise click.ClickException(str(error)) from None
        embed = embedding.embed(goldset.sealed) if embedding is not None else None
        reports.append(audit_goldset(goldset, embed=embed, runs=runs))
    click.echo(render.json_text(reports) if fmt == "json" else render.text(reports))
    if failed or any(r.errors for r in reports):
        raise SystemExit(1)
