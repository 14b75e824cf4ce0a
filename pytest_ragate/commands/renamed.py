"""The commands merged into others before the first release: each old name is one clear
error naming the command that does its job now (hidden from `ragate --help`)."""

from __future__ import annotations

import click

RENAMED = {
    "stamp-labels": "ragate stamp RESULTS --labels LABELS",
    "stamp-verdicts": "ragate stamp RESULTS --verdicts JUDGE_FILE",
    "unseal": "ragate seal --unseal DIRECTORY",
    "verify": "ragate seal --verify [--pin DIGEST] DIRECTORY",
}


def renamed(old: str, new: str) -> click.Command:
    """A hidden command `old` that only says what to run instead (exit 2)."""

    def refuse(args: tuple[str, ...]) -> None:
        raise click.UsageError(f"`ragate {old}` is now `{new}`")

    return click.Command(old, callback=refuse, hidden=True, add_help_option=False,
                         context_settings={"ignore_unknown_options": True},
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
                         help=f"Now `{new}`.")


COMMANDS = [renamed(old, new) for old, new in RENAMED.items()]
