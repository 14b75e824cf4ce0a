"""`ragate init`: a goldset scaffolded over a corpus."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("init")
@click.argument("goldset", type=click.Path(file_okay=False, path_type=Path))
@click.option("--corpus", "corpus_glob", required=True,
              help="the corpus files, a glob relative to here, e.g. 'docs/*.md'")
@click.option("--format", "fmt", default=None,
              help="corpus format (default: guessed: documents, documents-jsonl or tiron)")
@click.option("--units", type=click.Choice(["paragraph", "line"]), default="paragraph",
              show_default=True, help="how documents are split into numbered units")
@click.option("--name", default=None, help="the goldset's name (default: the folder's)")
def command(goldset: Path, corpus_glob: str, fmt: str | None, units: str,
            name: str | None) -> None:
    """Scaffold a goldset in GOLDSET over a corpus: ragate.toml with commented floors, empty
    questions and expected-answers files, a conftest.py stub for ragate_system. What it wrote
    is validated; when the corpus has a problem it writes nothing and exits 1.

    \b
    Example:
      ragate init goldsets/faq --corpus 'docs/*.md'
    """
    from pytest_ragate.scaffold import InitError
    from pytest_ragate.scaffold import init as scaffold

    try:
        done = scaffold(goldset, corpus_glob, fmt, units, name)
    except InitError as error:
        raise click.ClickException(str(error)) from None
    for path in done.written:
        click.echo(f"wrote {path}")
    units_total = sum(len(d.turns) for d in done.corpus.documents.values())
    click.echo(f"corpus: {len(done.corpus)} documents, {units_total} {done.corpus.unit}s")
    for problem in done.problems:
        click.echo(str(problem))
    if done.problems:
        click.echo(f"nothing written to {goldset}: fix the corpus, then run `ragate init` "
                   "again")
        raise SystemExit(1)
    click.echo(f"system: {done.system}")
    click.echo(f"next: add questions to {goldset / 'questions.jsonl'} and their evidence to "
               f"{goldset / 'expected.jsonl'} (`ragate units {goldset}` numbers the "
               f"documents; `ragate pin {goldset}` then pins each span to its text), "
               f"connect your system in ragate_system, then `ragate validate {goldset}` and "
               f"`pytest {goldset}`")
