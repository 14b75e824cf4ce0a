"""`ragate units`: a goldset's corpus with its unit numbers."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.problems import GoldsetError


@click.command("units")
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
@click.argument("doc_id", required=False)
@click.option("--find", "phrase", metavar="TEXT",
              help="the units holding this phrase (case and line breaks ignored), in DOC_ID "
              "or in every document, each with the evidence that names them")
def command(goldset: Path, doc_id: str | None, phrase: str | None) -> None:
    """A goldset's corpus with its unit numbers: each document and its unit count; DOC_ID
    numbered unit by unit; or, with --find TEXT, where a phrase is. Exit 1 when TEXT is
    found nowhere.

    \b
    Example:
      ragate units goldsets/faq refunds.md --find "within 30 days"
    """
    from pytest_ragate.goldsets.loader import load_goldset_corpus
    from pytest_ragate.numbering import UnknownDocument, document_of, found, numbered, overview

    try:
        corpus = load_goldset_corpus(goldset)
        document = document_of(corpus, doc_id) if doc_id is not None else None
    except GoldsetError as error:
        raise click.ClickException(str(error)) from None
    except UnknownDocument as error:
        raise click.ClickException(str(error)) from None
    root = Path.cwd()
    if phrase is None:
        lines = overview(corpus, root) if document is None else numbered(corpus, document,
                                                                            root)
        click.echo("\n".join(lines))
        return
    lines = found(corpus, [document] if document else list(corpus.documents.values()), phrase)
    if not lines:
        click.echo(f"{phrase!r} is in no {'document' if document is None else doc_id} of the "
                   "corpus (case and line breaks ignored)")
        raise SystemExit(1)
    click.echo("\n".join(lines))
