"""`ragate power`: how many units a floor needs, and what n units can tell apart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytest_ragate.commands.options import UNIT
from pytest_ragate.commands.project import read_project
from pytest_ragate.commands.saved import saved_file

if TYPE_CHECKING:
    from pytest_ragate.goldsets.loader import Goldset
    from pytest_ragate.scoring.floor import Floor
    from pytest_ragate.scoring.records import QuestionRecord


@click.command("power")
@click.argument("goldset", required=False,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--results", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="with GOLDSET: the run (a --ragate-results file) whose n and values to use "
              "(without it, only a pass rate's repeats are said)")
@click.option("--floor", "floor_", type=UNIT, help="the floor's min (a proportion floor)")
@click.option("--expect", type=UNIT, help="the true rate you expect the system to have")
@click.option("--n", "n", type=click.IntRange(1), help="the units the floor is decided over")
@click.option("--ci", type=click.Choice(["point", "strict"]), default=None,
              help="the gate mode (default: ragate_ci as pytest reads it, else point)")
@click.option("--pairs", type=click.IntRange(1), help="paired units of a regression check")
@click.option("--discordant", type=click.FloatRange(0.0, 1.0, min_open=True),
              help="share of the pairs whose outcome differs between the runs")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=None, help="significance level of the check (default: ragate_alpha "
              "as pytest reads it, else 0.05)")
@click.option("--power", "target", type=click.FloatRange(0.0, 1.0, min_open=True,
                                                         max_open=True),
              default=0.80, show_default=True, help="the chance to reach")
@click.option("--min-n", "min_n", type=click.IntRange(0), default=None,
              help="ragate_min_n: a floor over fewer is refused, so no n below it is "
              "enough (default: ragate_min_n as pytest reads it, else 0)")
def command(goldset: Path | None, results: Path | None, floor_: float | None,
            expect: float | None, n: int | None, ci: str, pairs: int | None,
            discordant: float | None, alpha: float | None, target: float,
            min_n: int | None) -> None:
    """How many units a floor needs, and what n units can tell apart.

    \b
    GOLDSET --results R    for each floor of the goldset, over the run in R: its n, the
                           true value it passes at with --power, and the n it would need
                           to pass that often at the value R measured
    GOLDSET                each [floors.question] pass_rate: the repeats it needs over the
                           goldset's questions, as `ragate validate` says (exit 1: the
                           repeats a run from here asks are too few)
    --floor F --expect E   the fewest units at which the floor passes with --power at rate E
    --floor F --n N        the true rate at which a floor over N units passes with --power
    --pairs N --discordant D
                           the smallest drop a regression check over N pairs detects
    Units are what the metric counts: questions, spans, anchors. Exact binomial figures
    under the gate's own rule (point: k/n reaches the floor; strict: its Wilson lower bound).
    What is not given is the project's setting, as `pytest` reads it here.

    \b
    Example:
      ragate power --floor 0.8 --expect 0.9
    """
    from pytest_ragate.scoring.power import detectable_drop, passing_rate, questions_needed

    gate = read_project().settings.gate
    ci, alpha = ci or gate.ci, gate.alpha if alpha is None else alpha
    min_n = gate.min_n if min_n is None else min_n
    strict, chance = ci == "strict", f"{target:.0%} of the time"
    refused = f" (ragate_min_n = {min_n} refuses a floor over fewer)" if min_n else ""
    if goldset is not None:
        if results is None:
            _pass_rates(goldset, gate.repeat)
            return
        _goldset_power(goldset, results, strict, target, min_n)
        return
    if pairs is not None or discordant is not None:
        if pairs is None or discordant is None:
            raise click.UsageError("--pairs and --discordant go together")
        found = detectable_drop(pairs, discordant, alpha=alpha, power=target)
        if found.drop is None:
            click.echo(f"no drop: a McNemar check over {pairs} pairs, {discordant:.0%} of them "
                       f"discordant, never reaches α {alpha:g} {chance}")
            raise SystemExit(1)
        click.echo(f"a McNemar check over {pairs} pairs, {discordant:.0%} of them discordant, "
                   f"detects a drop of {found.drop:.3f} or more {chance} (α {alpha:g})")
        return
    if floor_ is None or (expect is None) == (n is None):
        raise click.UsageError("give --floor with --expect or with --n (or --pairs with "
                               "--discordant)")
    if n is not None:
        rate = passing_rate(n, floor_, strict, target, min_n=min_n)
        if rate is None:
            click.echo(f"never: a floor of {floor_:.2f} ({ci}) cannot pass over {n} units"
                       + (refused if n < min_n else ""))
            raise SystemExit(1)
        click.echo(f"over {n} units a floor of {floor_:.2f} ({ci}) passes {chance} once the "
                   f"true rate is {rate:.3f}")
        return
    assert expect is not None
    needed = questions_needed(floor_, expect, strict, target, min_n=min_n)
    if needed is None:
        click.echo(f"never: at a true rate of {expect:.2f} a floor of {floor_:.2f} ({ci}) "
                   f"does not pass {chance}"
                   + ("" if expect <= floor_ else " with up to 20,000 units"))
        raise SystemExit(1)
    click.echo(f"{needed} units: a floor of {floor_:.2f} ({ci}) passes {chance} at a true "
               f"rate of {expect:.2f} from {needed} units on"
               + (refused if needed == min_n else ""))


def _loaded(root: Path) -> Goldset:
    """The goldset at `root`, or its problems as the command's error."""
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError

    try:
        return load_goldset(root)
    except GoldsetError as error:
        raise click.ClickException(str(error)) from None


def _pass_rates(root: Path, repeat: int | None) -> None:
    """`ragate power GOLDSET`: each pass rate per question of the goldset, and the repeats it
    needs over its questions at the repeats a run from here asks (ragate_repeat, else the
    goldset's `repeat`), as `ragate validate` says; the other floors need a run's n."""
    from pytest_ragate.scoring.pass_rate import PASS_RATE, repeats_short
    from pytest_ragate.wording.pass_rate import repeats_decide

    goldset = _loaded(root)
    repeats, questions = repeat or goldset.config.repeat, len(goldset.cases)
    rates = [f.min for f in goldset.floors if f.metric == PASS_RATE]
    if not rates:
        raise click.UsageError("GOLDSET needs --results (a --ragate-results file of it)")
    undecidable = False
    for rate in rates:
        short, need = repeats_short(rate, repeats, questions)
        undecidable |= short
        click.echo(f"{goldset.name}: {repeats_decide(rate, repeats, questions, need, short=short)}")
    if len(goldset.floors) > len(rates):
        click.echo("its other floors: with --results R (a --ragate-results file of it)")
    if undecidable:
        raise SystemExit(1)


def _goldset_power(root: Path, results: Path, strict: bool, target: float,
                   min_n: int) -> None:
    """`ragate power GOLDSET --results R`: one row per floor of the goldset, and below the
    table a line per floor the gate would not decide at any n (a metric of the project's that
    failed) and per pass rate (the repeats it needs, `ragate validate`'s words)."""
    from tabulate import tabulate

    goldset = _loaded(root)
    records = [row for _, row in saved_file(results).rows if row.goldset == goldset.name]
    if not records:
        raise click.ClickException(f"{results} has no row of goldset {goldset.name!r}")
    table, notes = [], []
    for floor in goldset.floors:
        if floor.anchors:
            continue  # anchor floors count anchors, which a results file does not hold
        cells, note = floor_power(floor, records, len(goldset.cases), strict, target, min_n)
        table.append(cells)
        notes += [f"{floor.label}: {note}"] if note else []
    click.echo(f"{goldset.name}: {len(records)} rows of {results} "
               f"({'strict' if strict else 'point'} mode, {target:.0%} power"
               f"{f', ragate_min_n = {min_n}' if min_n else ''})")
    click.echo(tabulate(table, headers=["floor", "min", "value", "n", f"passes {target:.0%} at",
                                        "n needed at this value"], disable_numparse=True))
    below = ", or as said below" if notes else ""
    click.echo("≈: normal approximation with the run's own spread; —: the value does not "
               "clear the floor (no n will), nothing was scored, or (over repeats, or a "
               f"bound from above) no figure would be right{below}")
    for note in notes:
        click.echo(note)


def floor_power(floor: Floor, records: Sequence[QuestionRecord], questions: int, strict: bool,
                target: float, min_n: int) -> tuple[list[str], str | None]:
    """One floor's row of `ragate power GOLDSET --results R` over the saved rows (its figures:
    what n can tell apart, not a verdict), and what to say of it below the table, or None.

    A pass rate per question is decided question by question on its repeats: its row says
    the repeats it needs over the goldset's `questions` (`repeats_short`, what `ragate
    validate` and collection refuse it by), never a number of questions. A floor over a
    metric of the project's that failed on some rows is not decided at any n: no figure of
    power, and the gate's own sentence."""
    from pytest_ragate.scoring.custom import failures_by_cause
    from pytest_ragate.scoring.figures import Counted, computed_by, figures_of, floor_tally
    from pytest_ragate.scoring.floor import counts_in
    from pytest_ragate.scoring.pass_rate import PASS_RATE, repeats_short
    from pytest_ragate.scoring.power import needed_for_mean, questions_needed
    from pytest_ragate.scoring.registry import METRICS, right_counts
    from pytest_ragate.wording.floors import metric_failed
    from pytest_ragate.wording.numbers import floor_figure, fmt_n
    from pytest_ragate.wording.pass_rate import repeats_decide

    t = floor_tally(floor, records)
    value = t.value
    head = [floor.label, floor_figure(floor), "—" if value is None else f"{value:.2f}", fmt_n(t)]
    if floor.metric == PASS_RATE:
        repeats = min((n for _, n in right_counts(records).values()), default=0)
        short, need = repeats_short(floor.min, repeats, questions)
        return ([*head, "—", "—" if need is None else f"repeat ≥ {need}"],
                repeats_decide(floor.min, repeats, questions, need, short=short))
    if t.failures and METRICS[floor.metric].source == "custom":
        causes = failures_by_cause(floor.metric, [
            r for r in records if r.status == "scored" and counts_in(floor, r.kind, r.tags)])
        return [*head, "—", "—"], metric_failed(floor, causes, t, Counted(
            computed_by=computed_by(floor, records)))
    passes = figures_of(floor, t, strict, min_n=min_n).passes_at if t.n else None
    needed: int | None = None
    # over independent units from below: an upper bound or repeats say "—", not a figure
    # that would be wrong
    if value is not None and value > floor.min and not floor.upper and t.repeats == 1:
        needed = (questions_needed(floor.min, value, strict, target, min_n=min_n)
                  if METRICS[floor.metric].aggregate == "proportion"
                  else needed_for_mean(t.values, floor.min, strict, target, min_n=min_n))
    return [*head, "—" if passes is None else str(passes),
            "—" if needed is None else str(needed)], None
