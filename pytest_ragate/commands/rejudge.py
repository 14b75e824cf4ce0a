"""`ragate rejudge`: saved answers graded again by a candidate judge (`commands/rejudging.py`)."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.goldset_paths import find_goldsets
from pytest_ragate.commands.project import read_project
from pytest_ragate.commands.saved import signed_reads


class RejudgeUsage(click.ClickException):
    """A rejudge that cannot start (a bad judge spec, a file it cannot read or use): one
    line, exit 2, so exit 1 stays the judge change's own answer."""

    exit_code = 2


@click.command("rejudge")
@click.argument("results", nargs=-1, required=True)
@click.option("--judge", "spec", required=True,
              help="the candidate judge: fixture:PATH or ragas:MODEL")
@click.option("--judge-url", default=None,
              help="the candidate's OpenAI-compatible base URL (ragas:MODEL)")
@click.option("--goldset", "goldset_paths", multiple=True,
              type=click.Path(exists=True, path_type=Path),
              help="a goldset of the results (its folder or ragate.toml; default: each "
              "goldset's route in the results' header, from the rootdir)")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="the judge cache folder (default: the run's: ragate_judge_cache_dir, "
              "else d/ragate-judge in pytest's cache_dir, .pytest_cache by default)")
@click.option("--concurrency", type=click.IntRange(1, 256), default=None,
              help="judge requests in flight (default: ragate_judge_concurrency as pytest "
              "reads it, else 16)")
@click.option("--timeout", type=click.FloatRange(0.0, min_open=True), default=None,
              help="seconds per judge call (default: ragate_judge_timeout as pytest reads "
              "it, else 60)")
@click.option("--json", "as_json", is_flag=True, help="the comparison as JSON, for machines")
def command(results: tuple[str, ...], spec: str, judge_url: str | None,
            goldset_paths: tuple[Path, ...], cache_dir: Path | None, concurrency: int | None,
            timeout: float | None, as_json: bool) -> None:
    """Re-grade the answers saved in RESULTS under a candidate judge, asking the system
    nothing, and compare the two judges per judged metric: the paired shift, the questions
    that flipped at the floor, each floor's outcome and, where the goldset has labels, each
    judge's agreement with them. Exit 0: the change moves no floor and no shift is
    significant (alpha 0.05, Holm-corrected); 1: it does; 2: it could not be compared.
    RESULTS are --ragate-results files (folders of them, or globs), each goldset's from one
    run: its results file, or each of its --ragate-shard files.

    \b
    Example:
      ragate rejudge out/results.jsonl --judge ragas:gpt-4o --judge-url http://127.0.0.1:8000/v1
    """
    from pytest_ragate.commands.rejudging import Ask, Refused
    from pytest_ragate.commands.rejudging import rejudge as rejudged

    project = read_project()
    judge = project.settings.judge
    signed_reads(f"ragate rejudge {' '.join(results)}")
    configs = [c for p in goldset_paths for c in find_goldsets(p)] if goldset_paths else None
    try:
        made = rejudged(Ask(results=results, spec=spec, judge_url=judge_url, goldsets=configs,
                            cache_dir=project.judge_cache if cache_dir is None else cache_dir,
                            concurrency=concurrency or judge.judge_concurrency,
                            timeout=timeout or judge.judge_timeout, rootdir=project.rootdir))
    except Refused as error:
        raise RejudgeUsage(str(error)) from None
    click.echo(made.shown(as_json))
    raise SystemExit(made.exit_status)
