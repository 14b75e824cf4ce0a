"""`ragate seal`: a goldset's expected answers sealed (`--unseal`: restored; `--verify`:
checked without the key), one command for the seal's three jobs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from pytest_ragate.commands.options import DIRECTORY
from pytest_ragate.commands.project import read_project
from pytest_ragate.problems import GoldsetError

T = TypeVar("T")


@click.command("seal")
@click.argument("directory", type=DIRECTORY)
@click.option("--unseal", is_flag=True, help="restore the expected answers (RAGATE_SEAL_KEY) "
              "and remove the sealed file")
@click.option("--verify", is_flag=True, help="check the sealed goldset without the key; exit "
              "1 if anything was edited")
@click.option("--pin", default=None, metavar="DIGEST", help="with --verify: the manifest "
              "digest the sealed file must have")
def command(directory: Path, unseal: bool, verify: bool, pin: str | None) -> None:
    """Encrypt a goldset's expected answers with the passphrase in RAGATE_SEAL_KEY; with
    --unseal restore them, with --verify check the sealed goldset without the key.

    \b
    Example:
      ragate seal goldsets/faq                    (RAGATE_SEAL_KEY set)
      ragate seal --verify --pin 3f2a... goldsets/faq
    """
    if unseal and verify:
        raise click.UsageError("--unseal and --verify are two jobs: give one")
    if pin is not None and not verify:
        raise click.UsageError("--pin goes with --verify")
    read_project(directory)  # the project's `@ragate.metric` names, which its floors may use
    if verify:
        _verify(directory, pin)
    elif unseal:
        _unseal(directory)
    else:
        _seal(directory)


def _sealing(action: Callable[[], T]) -> T:
    """What sealing or unsealing did, or its one error (a goldset's problems, one a line)."""
    from pytest_ragate.goldsets.sealed import SealError

    try:
        return action()
    except SealError as error:
        raise click.ClickException(str(error)) from None
    except GoldsetError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        raise SystemExit(1) from None


def _seal(directory: Path) -> None:
    from pytest_ragate.goldsets.sealed import key_from_env
    from pytest_ragate.goldsets.sealing import seal_goldset

    report = _sealing(lambda: seal_goldset(directory, key_from_env()))
    click.echo(f"sealed {report.answers} answers into {report.sealed}; removed "
               f"{report.removed}")
    click.echo(f"manifest digest {report.manifest_digest} (pin it: ragate seal --verify "
               "--pin)")
    for other in report.unsealed:
        click.echo(f"warning: {other} is not sealed; make sure it tells no answer", err=True)


def _unseal(directory: Path) -> None:
    from pytest_ragate.goldsets.sealed import key_from_env
    from pytest_ragate.goldsets.sealing import unseal_goldset

    report = _sealing(lambda: unseal_goldset(directory, key_from_env()))
    click.echo(f"restored {report.answers} answers to {report.restored}; removed "
               f"{report.removed}")
    if report.note:
        click.echo(f"note: {report.note}")


def _verify(directory: Path, pin: str | None) -> None:
    from pytest_ragate.goldsets.sealed import read_sealed, sealed_path, verify_goldset

    problems = verify_goldset(directory, pin=pin)
    for problem in problems:
        click.echo(str(problem))
    if problems:
        raise SystemExit(1)
    sealed = read_sealed(sealed_path(directory))
    click.echo(f"ok {sealed_path(directory)}: {len(sealed.answers)} sealed answers, "
               f"manifest digest {sealed.manifest_digest}")
