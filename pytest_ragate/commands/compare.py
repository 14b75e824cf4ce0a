"""`ragate compare`: a saved run checked against a baseline by the gate itself, in `ragate
decide`'s mode (`pytest --ragate-decide RESULTS --ragate-baseline BASELINE`): the goldsets
collected as a run collects them, the settings pytest reads, and the regression check (with
the floors) decided by the gate's code from the gate's inputs."""

from __future__ import annotations

from pathlib import Path

import click

from pytest_ragate.commands.decide import run_decide
from pytest_ragate.commands.options import RESULTS_FILE


@click.command("compare", context_settings={"ignore_unknown_options": True,
                                            "allow_interspersed_args": False})
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              help="significance level of a drop (as `-o ragate_alpha=`)")
@click.option("--min-n", type=click.IntRange(0), help="fail a check resting on fewer paired "
              "questions (as `-o ragate_min_n=`)")
@click.option("--accept-judge", metavar="JUDGE", help="accept a judge change: the judge "
              "RESULTS was graded by (as --ragate-accept-judge; docs/judges.md)")
@click.argument("baseline")
@click.argument("results", type=RESULTS_FILE)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def command(alpha: float | None, min_n: int | None, accept_judge: str | None, baseline: str,
            results: Path, args: tuple[str, ...]) -> None:
    """Check a results file against a baseline without rerunning: BASELINE RESULTS
    [-- PYTEST_ARGS...].

    BASELINE is a results file or a history file (`PATH:LINE` for one line), as for
    --ragate-baseline. Runs `ragate decide RESULTS -- --ragate-baseline=BASELINE
    PYTEST_ARGS`: the gate's check with the gate's settings, goldsets and outputs. PYTEST_ARGS
    select the goldsets (default: each one RESULTS' header names, found from here).
    Exits 0 when every check and floor holds, 1 when one fails (a significant drop, a judge
    change not accepted, a check refused by ragate_min_n, a `[regression] max_drop` margin not
    held) or the files are refused.

    \b
    Example:
      ragate compare main/results.jsonl out/results.jsonl -- goldsets/
    """
    from pytest_ragate.outputs.baseline import baseline_location

    base_path, _ = baseline_location(baseline)
    if base_path.is_file() and base_path.samefile(results):
        raise click.ClickException(f"{baseline} and {results} are the same file: a run "
                                   "compared with itself can show no change; pass the "
                                   "results or history file of the earlier run")
    rest = list(args[1:] if args[:1] == ("--",) else args) or _routes(results)
    for knob, value in (("alpha", alpha), ("min_n", min_n)):
        rest += ["-o", f"ragate_{knob}={value}"] * (value is not None)
    rest += [f"--ragate-accept-judge={accept_judge}"] * (accept_judge is not None)
    run_decide([f"--ragate-decide={results}", f"--ragate-baseline={baseline}"], rest)


def _routes(results: Path) -> list[str]:
    """The `ragate.toml` of each goldset RESULTS' header names that is found from here (the
    decide mode says what is wrong with the file, if anything is)."""
    from pytest_ragate.commands.goldset_paths import routed_goldsets
    from pytest_ragate.outputs.saved_runs import read_saved_files

    return [str(path) for path in routed_goldsets(read_saved_files([results])[0], Path.cwd())]
