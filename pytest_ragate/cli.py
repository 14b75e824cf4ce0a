"""The `ragate` command: goldset chores that run outside pytest."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from pytest_ragate.goldsets import CONFIG_NAME
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.problems import GoldsetError

if TYPE_CHECKING:
    from pytest_ragate.judges.plan import Plan, PlanJudge, PlannedQuestion
    from pytest_ragate.outputs.saved_runs import Part, SavedFile
    from pytest_ragate.scoring.calibrate import Cut
    from pytest_ragate.scoring.records import QuestionRecord

T = TypeVar("T")


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
    import os

    from pytest_ragate.settings import RESULTS_KEY_ENV, set_but_empty
    from pytest_ragate.wording.settings import key_empty

    if set_but_empty(os.environ, RESULTS_KEY_ENV):  # read as no key, nothing would be checked
        raise click.UsageError(key_empty(RESULTS_KEY_ENV))


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
        for line in _validate_notes(goldset, config):
            click.echo(f"  {line}")
        stale = sum(bool(c.pins and c.pins.stale) for c in goldset.cases)
        failed += bool(stale)
    if failed:
        raise SystemExit(1)


@main.command()
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
def audit(paths: tuple[Path, ...], results: tuple[Path, ...], history: tuple[Path, ...],
          fmt: str, no_embed: bool, cache: Path) -> None:
    """Lint goldsets: duplicates, evidence against the corpus, floors against their n.

    Prints one line per finding (file:line: question id: rule (severity): message) and a
    summary per goldset, and exits 1 if any finding is an error (or a goldset does not load).
    With --results or --history, questions every saved run got right or wrong are named
    too. `[audit] rules` in a goldset's ragate.toml switches rules off or sets their
    severity (docs/goldsets.md, "Auditing a goldset").
    """
    from pytest_ragate.audit import render
    from pytest_ragate.audit.run import audit_goldset
    from pytest_ragate.audit.runs import RunsError, read_runs

    configs = [c for p in paths for c in find_goldsets(p)]
    if not configs:
        raise click.ClickException(f"no {CONFIG_NAME} under {', '.join(map(str, paths))}")
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


def _validate_notes(goldset: Any, config: Path) -> list[str]:
    """A loaded goldset's evidence pins and cheap warnings (goldsets/forewarnings.py)."""
    from pytest_ragate.goldsets.forewarnings import (
        fact_lines,
        label_lines,
        pin_lines,
        same_questions,
        undecidable_floors,
    )

    options = _ini_options(config.parent)[1]
    min_n = click.IntRange(0).convert(options.get("ragate_min_n", "0"), None, None)
    strict = options.get("ragate_ci", "point") == "strict"
    return [*pin_lines(goldset), *label_lines(goldset), *same_questions(goldset),
            *undecidable_floors(goldset, min_n=min_n, strict=strict), *fact_lines(goldset)]


@main.command()
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
def pin(goldset: Path) -> None:
    """Pin every expected evidence span that has no pin: a fingerprint of the text it points
    at now and of the text around it, so that collection can tell when a corpus edit moves or
    changes it. A pin that predates neighbouring text is brought up to date where its units
    still hold its text.

    Only the answers that gain a pin are rewritten, and in them only the spans' `pin`.
    A sealed goldset is changed sealed with RAGATE_SEAL_KEY, refused without it. Exit 1
    when a span cannot be pinned."""
    from pytest_ragate.pinning import PinningError, pin_goldset

    try:
        done = pin_goldset(goldset)
    except (GoldsetError, PinningError) as error:
        raise click.ClickException(str(error)) from None
    for line in done.problems:
        click.echo(line)
    click.echo(f"pinned {done.changes} span{'s' * (done.changes != 1)}"
               + (f" in {', '.join(map(str, done.written))}" if done.written else ""))
    for line in [*done.lines, *done.notes]:
        click.echo(line)
    if done.problems:
        raise SystemExit(1)


@main.command()
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
@click.option("--write", is_flag=True, help="rewrite the moved spans' units in the goldset "
              "(without it, only say what would change)")
def reanchor(goldset: Path, write: bool) -> None:
    """Pinned evidence whose text moved in the corpus, re-anchored where it is now.

    A dry run by default; with --write only the moved spans' document and units are
    rewritten. A sealed goldset is changed sealed with RAGATE_SEAL_KEY, refused without it.
    Exit 1 when a pinned span is stale (its text is
    edited or gone: fix that answer by hand)."""
    from pytest_ragate.pinning import PinningError, reanchor_goldset

    try:
        done = reanchor_goldset(goldset, write=write)
    except (GoldsetError, PinningError) as error:
        raise click.ClickException(str(error)) from None
    for line in [*done.lines, *done.problems]:
        click.echo(line)
    verb = "re-anchored" if write else "would re-anchor"
    click.echo(f"{verb} {done.changes} span{'s' * (done.changes != 1)}"
               + ("" if write or not done.changes else " (--write to rewrite the goldset)"))
    for line in done.notes:
        click.echo(line)
    if done.problems:
        raise SystemExit(1)


def _floor_option(_ctx: click.Context, _param: click.Parameter,
                  values: tuple[str, ...]) -> dict[str, float]:
    """`--floor METRIC=MIN`, each a floor a confidence cut is chosen for."""
    from pytest_ragate.scoring.calibrate import CONFIDENCE_FLOORS

    floors: dict[str, float] = {}
    for value in values:
        metric, _, low = value.partition("=")
        if metric not in CONFIDENCE_FLOORS:
            raise click.BadParameter(f"{value!r}: METRIC is one of "
                                     f"{', '.join(CONFIDENCE_FLOORS)} (METRIC=MIN)")
        if metric in floors:
            raise click.BadParameter(f"{value!r}: {metric} is given twice")
        try:
            floors[metric] = UNIT.convert(low, None, None)
        except click.BadParameter:
            raise click.BadParameter(f"{value!r}: MIN is a number from 0 to 1 "
                                     "(METRIC=MIN)") from None
    return floors


@main.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--step", type=click.FloatRange(0.005, 1.0), default=0.05, show_default=True,
              help="spacing of the max_distance grid shown (the best cut is exact)")
@click.option("--on", "on", type=click.Choice(["max_distance", "confidence",
                                               "answer_similarity"]),
              default="max_distance", show_default=True,
              help="the threshold to sweep: the built-in max_distance, a cut on the "
                   "confidence your answers carry (Answer(confidence=...)), or the "
                   "answer_similarity cut that best agrees with what is known of each answer")
@click.option("--floor", "floors", multiple=True, callback=_floor_option,
              metavar="METRIC=MIN", help="with --on confidence: a floor to choose the cut "
              "for (abstention_accuracy or citation_accuracy); repeat for several")
def calibrate(results: Path, step: float, on: str, floors: dict[str, float]) -> None:
    """Sweep max_distance (and top_k), or a confidence cut, over a `--ragate-results` file.

    Prints, per goldset, the abstention/citation trade-off at each threshold and the best
    setting, then evidence recall at each k up to the recorded top_k. `--on confidence
    --floor METRIC=MIN` replays "abstain when confidence < cut" instead, and picks the cut
    with the largest margin over the floors. `--on answer_similarity` calls an answer right
    when its cosine to the gist reaches a cut, and picks the cut whose calls agree best
    (Cohen's kappa) with a person's answer_match label, else answer_match's own call.
    """
    if on == "confidence" and not floors:
        raise click.UsageError("--on confidence needs --floor METRIC=MIN (abstention_accuracy "
                               "or citation_accuracy): the cut is chosen for a floor")
    if on == "max_distance" and floors:
        raise click.UsageError("--floor goes with --on confidence")
    if on == "answer_similarity" and floors:
        raise click.UsageError("--floor goes with --on confidence")
    by_goldset = _scored_rows(results)
    if on == "confidence":
        _calibrate_confidence(by_goldset, floors)
    elif on == "answer_similarity":
        _calibrate_similarity(by_goldset, step)
    else:
        _calibrate_distance(by_goldset, step)


# why a command that sums a goldset up (a threshold, a floor's n, a suggested floor) reads
# only a run that asked every question: over part of it, the figure is a subset's
WHOLE_RUN = ("its figures would be those of part of the goldset: give the results of a run "
             "that asked every question (for a sharded run, `ragate decide`'s "
             "--ragate-results)")


def _saved(results: Path, whole: bool = True) -> SavedFile:
    """A results file through the one reader of saved runs (`outputs/saved_runs.py`): its
    trailer, its signature with RAGATE_RESULTS_KEY set, and (`whole`) the whole run; one
    line naming the file and what is wrong otherwise."""
    from pytest_ragate.outputs.saved_runs import SavedRunError, read_saved

    signed_reads(f"ragate {click.get_current_context().info_name} {results}")
    try:
        saved = read_saved(results)
    except SavedRunError as error:
        raise click.ClickException(str(error)) from None
    if whole:
        _whole(saved)
    return saved


def _whole(saved: SavedFile, allow: frozenset[Part] = frozenset()) -> None:
    """Refused, in one line, unless it holds its whole run (but for the parts `allow`ed)."""
    from pytest_ragate.outputs.saved_runs import SavedRunError, require_whole

    try:
        require_whole(saved, WHOLE_RUN, allow=allow)
    except SavedRunError as error:
        raise click.ClickException(str(error)) from None


def _scored_rows(results: Path) -> dict[str, list[QuestionRecord]]:
    """The scored rows of a whole run's results file by goldset, or an error saying why
    there are none."""
    by_goldset: dict[str, list[QuestionRecord]] = {}
    for _, row in _saved(results).rows:
        if row.status == "scored":
            by_goldset.setdefault(row.goldset, []).append(row)
    if not by_goldset:
        raise click.ClickException(f"no scored rows in {results}")
    return by_goldset


def _calibrate_distance(by_goldset: dict[str, list[QuestionRecord]], step: float) -> None:
    from tabulate import tabulate

    from pytest_ragate.scoring.calibrate import best, distances_missing, recall_at, replay, sweep

    refused = [why for name, group in by_goldset.items()
               if (why := distances_missing(name, group)) is not None]
    if refused:
        raise click.ClickException("\n".join(refused))
    for name, group in by_goldset.items():
        chosen = best(sweep(group))
        grid = sorted({round(i * step, 6) for i in range(int(1.0 / step) + 1)}
                      | {chosen.max_distance})
        table = []
        for s in (replay(group, t) for t in grid):
            table.append([f"{s.max_distance:.3f}" + (" ← best" if s == chosen else ""),
                          f"{s.abstention_accuracy:.2f} ({s.abstention_correct}/{s.n})",
                          "—" if s.citation_accuracy is None else
                          f"{s.citation_accuracy:.2f} (over {s.cited_answers} answers; "
                          f"{s.citations_correct}/{s.citations} citations right)",
                          s.answered, s.unknown])
        recorded = sorted({str(r.knobs.get("max_distance")) for r in group})
        click.echo(f"\n{name}: {len(group)} scored rows, recorded max_distance "
                   f"{', '.join(recorded)}")
        click.echo(tabulate(table, headers=["max_distance", "abstention accuracy",
                                            "citation accuracy", "answered", "unknown"],
                            disable_numparse=True))
        cited = chosen.citation_accuracy
        click.echo(f"best: max_distance = {chosen.max_distance:.3f} (abstention accuracy "
                   f"{chosen.abstention_accuracy:.2f}, citation accuracy "
                   f"{'—' if cited is None else f'{cited:.2f}'})")
        if chosen.unknown:
            click.echo("note: every threshold leaves rows unknown; record with a looser "
                       "ragate_max_distance (-o ragate_max_distance=2)")
        recall = recall_at(group)
        if recall:
            click.echo(tabulate([[k, f"{found / n:.2f} ({found}/{n})" if n else "—"]
                                 for k, found, n in recall],
                                headers=["top_k", "evidence recall"], disable_numparse=True))


def _calibrate_similarity(by_goldset: dict[str, list[QuestionRecord]], step: float) -> None:
    """Per goldset, agreement of "right when answer_similarity ≥ cut" with what is known of
    each answer, on a grid and at the best cut; exit 1 when no goldset has such answers."""
    from tabulate import tabulate

    from pytest_ragate.scoring.calibrate import (
        best_similarity_cut,
        known_answers,
        sweep_similarity,
    )

    calibrated = 0
    for name, group in by_goldset.items():
        known = known_answers(group)
        click.echo(f"\n{name}: {len(known.pairs)} answers whose correctness is known "
                   f"({known.labelled} by a person's label, {known.matched} by answer_match); "
                   f"left out: {known.unknown} unsure and not labelled, {known.without} "
                   "without facts")
        cuts = sweep_similarity(known.pairs)
        chosen = best_similarity_cut(cuts)
        if chosen is None:
            click.echo("no cut: the known answers are all right or all wrong (kappa is "
                       "undefined): label answers of both kinds")
            continue
        calibrated += 1
        grid = [c for c in cuts if c is chosen or _on_grid(c.cut, step, cuts)]
        click.echo(tabulate([[f"{c.cut:.3f}" + (" ← best" if c is chosen else ""),
                              f"{c.accuracy:.2f} ({c.agree}/{c.n})",
                              "—" if c.kappa is None else f"{c.kappa:.2f}", c.called_right]
                             for c in grid],
                            headers=["answer_similarity cut", "agreement", "kappa",
                                     "called right"], disable_numparse=True))
        click.echo(f"best: answer_similarity cut = {chosen.cut:.3f} (kappa {chosen.kappa:.2f}, "
                   f"agreement {chosen.accuracy:.2f} over {chosen.n} answers)")
    if not calibrated:
        raise SystemExit(1)


def _on_grid(cut: float, step: float, cuts: Sequence[Any]) -> bool:
    """The first cut at or above each multiple of `step`: a table of the sweep, not of every
    distinct value."""
    slot = math.floor(cut / step + 1e-9)
    first = next(c.cut for c in cuts if math.floor(c.cut / step + 1e-9) == slot)
    return cut == first


REPLAYABLE = ("replayed: abstain when confidence < cut. A higher cut turns a recorded answer "
              "into an abstention; no cut turns a recorded abstention into an answer (its "
              "text does not exist), so an abstained row at or above a cut is unknown there, "
              "and a cut with unknown rows is never chosen")


def _calibrate_confidence(by_goldset: dict[str, list[QuestionRecord]],
                          floors: dict[str, float]) -> None:
    from tabulate import tabulate

    from pytest_ragate.scoring.calibrate import best_cut, confidences_missing, sweep_confidence

    refused = [why for name, group in by_goldset.items()
               if (why := confidences_missing(name, group)) is not None]
    if refused:
        raise click.ClickException("\n".join(refused))
    wanted = ", ".join(f"{m} >= {low:.2f}" for m, low in floors.items())
    unreached = []
    for name, group in by_goldset.items():
        cuts = sweep_confidence(group)
        chosen = best_cut(cuts, floors)
        top = max(r.confidence for r in group if r.confidence is not None)
        table = [[_cut_label(c, top) + (" ← best" if c == chosen else ""),
                  _share(c.abstention_accuracy, c.abstention_correct, c.known),
                  _cited(c), c.answered, c.unknown, _margin(c.margin(floors))] for c in cuts]
        click.echo(f"\n{name}: {len(group)} scored rows, floors {wanted}\n{REPLAYABLE}")
        click.echo(tabulate(table, headers=["confidence cut", "abstention accuracy",
                                            "citation accuracy", "answered", "unknown",
                                            "margin"], disable_numparse=True))
        if chosen is None:
            unreached.append(name)
            click.echo(f"no cut: none gives {wanted} a known value")
            continue
        margin = chosen.margin(floors)
        click.echo(f"best: confidence cut = {_cut_label(chosen, top)} (abstention accuracy "
                   f"{_share(chosen.abstention_accuracy, chosen.abstention_correct, chosen.known)}"
                   f", citation accuracy {_cited(chosen)}), margin {_margin(margin)}"
                   + ("" if margin is not None and margin >= 0 else
                      ": no cut reaches every floor"))
    if unreached:
        raise SystemExit(1)


def _cut_label(cut: Cut, top: float) -> str:
    return f"> {top:.4g} (abstain always)" if cut.above_all else f"{cut.cut:.4g}"


def _share(value: float | None, k: int, n: int) -> str:
    return "—" if value is None else f"{value:.2f} ({k}/{n})"


def _cited(cut: Cut) -> str:
    if cut.citation_accuracy is None:
        return "—"
    return (f"{cut.citation_accuracy:.2f} (over {cut.cited_answers} answers; "
            f"{cut.citations_correct}/{cut.citations} citations right)")


def _margin(margin: float | None) -> str:
    return "—" if margin is None else f"{margin:+.2f}"


UNIT = click.FloatRange(0.0, 1.0)


@main.command()
@click.argument("goldset", required=False,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--results", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="with GOLDSET: the run (a --ragate-results file) whose n and values to use")
@click.option("--floor", "floor_", type=UNIT, help="the floor's min (a proportion floor)")
@click.option("--expect", type=UNIT, help="the true rate you expect the system to have")
@click.option("--n", "n", type=click.IntRange(1), help="the units the floor is decided over")
@click.option("--ci", type=click.Choice(["point", "strict"]), default="point",
              show_default=True, help="the gate mode (ragate_ci)")
@click.option("--pairs", type=click.IntRange(1), help="paired units of a regression check")
@click.option("--discordant", type=click.FloatRange(0.0, 1.0, min_open=True),
              help="share of the pairs whose outcome differs between the runs")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=0.05, show_default=True, help="significance level of the check")
@click.option("--power", "target", type=click.FloatRange(0.0, 1.0, min_open=True,
                                                         max_open=True),
              default=0.80, show_default=True, help="the chance to reach")
@click.option("--min-n", "min_n", type=click.IntRange(0), default=None,
              help="ragate_min_n: a floor over fewer is refused, so no n below it is "
              "enough (default: the ini file's ragate_min_n, else 0)")
def power(goldset: Path | None, results: Path | None, floor_: float | None,
          expect: float | None, n: int | None, ci: str, pairs: int | None,
          discordant: float | None, alpha: float, target: float, min_n: int | None) -> None:
    """How many units a floor needs, and what n units can tell apart.

    \b
    GOLDSET --results R    for each floor of the goldset, over the run in R: its n, the
                           true value it passes at with --power, and the n it would need
                           to pass that often at the value R measured
    --floor F --expect E   the fewest units at which the floor passes with --power at rate E
    --floor F --n N        the true rate at which a floor over N units passes with --power
    --pairs N --discordant D
                           the smallest drop a regression check over N pairs detects
    Units are what the metric counts: questions, spans, anchors. Exact binomial figures
    under the gate's own rule (point: k/n reaches the floor; strict: its Wilson lower bound).
    """
    from pytest_ragate.scoring.power import detectable_drop, passing_rate, questions_needed

    strict, chance = ci == "strict", f"{target:.0%} of the time"
    if min_n is None:
        min_n = click.IntRange(0).convert(_ini_options(Path.cwd())[1].get("ragate_min_n", "0"),
                                          None, None)
    refused = f" (ragate_min_n = {min_n} refuses a floor over fewer)" if min_n else ""
    if goldset is not None:
        if results is None:
            raise click.UsageError("GOLDSET needs --results (a --ragate-results file of it)")
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


def _goldset_power(root: Path, results: Path, strict: bool, target: float,
                   min_n: int) -> None:
    """`ragate power GOLDSET --results R`: one row per floor of the goldset."""
    from tabulate import tabulate

    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError
    from pytest_ragate.scoring.figures import figures_of, floor_tally
    from pytest_ragate.scoring.power import needed_for_mean, questions_needed
    from pytest_ragate.scoring.registry import METRICS
    from pytest_ragate.wording.numbers import floor_figure, fmt_n

    try:
        goldset = load_goldset(root)
    except GoldsetError as error:
        raise click.ClickException(str(error)) from None
    records = [row for _, row in _saved(results).rows if row.goldset == goldset.name]
    if not records:
        raise click.ClickException(f"{results} has no row of goldset {goldset.name!r}")
    table = []
    for floor in goldset.floors:
        if floor.anchors:
            continue  # anchor floors count anchors, which a results file does not hold
        # the floor's figures over the saved rows: what n can tell apart, not a verdict
        t = floor_tally(floor, records)
        value = t.value
        passes = figures_of(floor, t, strict, min_n=min_n).passes_at if t.n else None
        needed: int | None = None
        # over independent units from below: an upper bound or repeats say "—", not a
        # figure that would be wrong
        if value is not None and value > floor.min and not floor.upper and t.repeats == 1:
            needed = (questions_needed(floor.min, value, strict, target, min_n=min_n)
                      if METRICS[floor.metric].aggregate == "proportion"
                      else needed_for_mean(t.values, floor.min, strict, target,
                                           min_n=min_n))
        table.append([floor.label, floor_figure(floor),
                      "—" if value is None else f"{value:.2f}", fmt_n(t),
                      "—" if passes is None else str(passes),
                      "—" if needed is None else needed])
    click.echo(f"{goldset.name}: {len(records)} rows of {results} "
               f"({'strict' if strict else 'point'} mode, {target:.0%} power"
               f"{f', ragate_min_n = {min_n}' if min_n else ''})")
    click.echo(tabulate(table, headers=["floor", "min", "value", "n", f"passes {target:.0%} at",
                                        "n needed at this value"], disable_numparse=True))
    click.echo("≈: normal approximation with the run's own spread; —: the value does not "
               "clear the floor (no n will), or nothing was scored")


@main.command()
@click.argument("baseline")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=0.05, show_default=True, help="significance level of a drop")
@click.option("--min-n", type=click.IntRange(0), default=0, show_default=True,
              help="fail a check resting on fewer paired questions (0: off)")
@click.option("--accept-judge", metavar="JUDGE", help="accept a judge change: the judge "
              "RESULTS was graded by (as --ragate-accept-judge; docs/judges.md)")
def compare(baseline: str, results: Path, alpha: float, min_n: int,
            accept_judge: str | None) -> None:
    """Check a results file against a baseline, question by question, without rerunning.

    BASELINE is a results file or a history file (`PATH:LINE` for one line), as for
    `--ragate-baseline`. Prints the same table as the gate and exits 1 on a significant drop.
    """
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.decision.regressions import RunJudge, check_run
    from pytest_ragate.outputs.baseline import BaselineError, baseline_location, load_baseline
    from pytest_ragate.outputs.reports import corpus_lines, regressions_table

    signed_reads(f"ragate compare {baseline} {results}")
    base_path, _ = baseline_location(baseline)
    if base_path.is_file() and base_path.samefile(results):
        raise click.ClickException(f"{baseline} and {results} are the same file: a run "
                                   "compared with itself can show no change; pass the "
                                   "results or history file of the earlier run")
    try:
        base = load_baseline(baseline)
        current = load_baseline(str(results))
    except BaselineError as error:
        raise click.ClickException(str(error).removeprefix("--ragate-baseline")
                                   .lstrip(": ")) from None
    if any(run.source.startswith("history") for run in current):
        raise click.ClickException(f"{results} is a history file; RESULTS must be a "
                                   "--ragate-results file")
    runs = [GoldsetRun(name=run.goldset, eval_version=run.eval_version,
                       regressions=check_run(run.goldset, run.eval_version, run.scores, base,
                                             alpha=alpha, min_n=min_n,
                                             judge=RunJudge(names=run.judges,
                                                            accept=accept_judge,
                                                            flag="--accept-judge"),
                                             corpus=run.corpus))
            for run in current]
    click.echo(regressions_table(runs, "simple"))
    for line in corpus_lines(runs):
        click.echo(line)
    failed = [c for run in runs for c in run.regressions if c.outcome == "failed"]
    for check in failed:
        click.echo(f"{check.goldset} {check.metric}: {check.message}")
    if failed:
        raise SystemExit(1)


@main.command()
@click.argument("results", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
def suggest(results: tuple[Path, ...]) -> None:
    """Print each goldset's figures and the `[floors]` they suggest, from saved runs.

    RESULTS are --ragate-results files (one run's, or each shard's). Prints what a run
    without floors prints: every metric its questions can score, with n, the 95% interval
    and kind counts, the figures by tag value, then a `[floors]` block to paste into the
    goldset's ragate.toml (with the slice floors its n decides).
    """
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.modes.reporting import figures_before_floors

    by_goldset: dict[str, GoldsetRun] = {}
    for record in _saved_rows(results):
        run = by_goldset.setdefault(record.goldset, GoldsetRun(
            name=record.goldset, eval_version=record.eval_version))
        run.records.append(record)
    figures_before_floors(click.echo, list(by_goldset.values()), floors_known=False)


def _saved_rows(paths: tuple[Path, ...]) -> list[QuestionRecord]:
    """The question rows of one whole run: its results file, or each of its shard files
    once; a file that cannot be read, that its trailer (or signature) does not vouch for, or
    that holds part of its run (shards missing, questions deselected, a sequential stop, a
    run interrupted) is refused by name, as is a question twice."""
    from pytest_ragate.outputs.saved_runs import Part, shard_problems

    files = [_saved(path, whole=False) for path in paths]
    shards = shard_problems([f.found for f in files])
    if shards:
        raise click.ClickException(f"{shards[0]}: {WHOLE_RUN}")
    for saved in files:
        _whole(saved, allow=frozenset({Part.SHARD}))
    rows: list[QuestionRecord] = []
    seen: dict[tuple[str, str, int], str] = {}
    for saved in files:
        path = saved.path
        for line, record in saved.rows:
            key = (record.goldset, record.question_id, record.repeat)
            where = f"{path}:{line}"
            if key in seen:
                raise click.ClickException(
                    f"{where}: [{record.question_id}] question_id: goldset {record.goldset} "
                    f"has this question already at {seen[key]}: give each run's results once")
            seen[key] = where
            rows.append(record)
    if not rows:
        raise click.ClickException(f"no question rows in {', '.join(map(str, paths))}")
    return rows


@main.command()
@click.argument("goldset", type=click.Path(file_okay=False, path_type=Path))
@click.option("--corpus", "corpus_glob", required=True,
              help="the corpus files, a glob relative to here, e.g. 'docs/*.md'")
@click.option("--format", "fmt", default=None,
              help="corpus format (default: guessed: documents, documents-jsonl or tiron)")
@click.option("--units", type=click.Choice(["paragraph", "line"]), default="paragraph",
              show_default=True, help="how documents are split into numbered units")
@click.option("--name", default=None, help="the goldset's name (default: the folder's)")
def init(goldset: Path, corpus_glob: str, fmt: str | None, units: str,
         name: str | None) -> None:
    """Scaffold a goldset in GOLDSET over a corpus: ragate.toml with commented floors, empty
    questions and expected-answers files, a conftest.py stub for ragate_system. What it wrote
    is validated; when the corpus has a problem it writes nothing and exits 1."""
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


@main.command()
@click.argument("goldset", type=click.Path(exists=True, path_type=Path))
@click.argument("doc_id", required=False)
@click.option("--find", "phrase", metavar="TEXT",
              help="the units holding this phrase (case and line breaks ignored), in DOC_ID "
              "or in every document, each with the evidence that names them")
def units(goldset: Path, doc_id: str | None, phrase: str | None) -> None:
    """A goldset's corpus with its unit numbers: each document and its unit count; DOC_ID
    numbered unit by unit; or, with --find TEXT, where a phrase is. Exit 1 when TEXT is
    found nowhere."""
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


@main.command("stamp-verdicts")
@click.argument("judge_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def stamp_verdicts(judge_file: Path, results: Path) -> None:
    """Record in a fixture judge file which answer each verdict judged.

    For every question of RESULTS (a `--ragate-results` file) with an answer, sets
    `answer_sha256` on its verdicts in JUDGE_FILE. From then on a changed answer is a judge
    failure ("stale fixture verdict"), not the old score. Check the answers first: stamping
    says "these verdicts are right for these answers".
    """
    import json

    from pytest_ragate.files import write_atomic
    from pytest_ragate.judges.fixture import read_fixture_file

    try:
        fixture, _ = read_fixture_file(judge_file)
    except Exception as error:  # a usage error from the reader: its message says what
        raise click.ClickException(str(error)) from None
    answers = _answers(results, "a fixture verdict")
    stamped = changed = 0
    for qid, verdicts in fixture.answers.items():
        if qid in answers:
            digest = answers[qid]
            changed += verdicts.answer_sha256 not in (None, digest)
            verdicts.answer_sha256 = digest
            stamped += 1
    data = fixture.model_dump(mode="json", exclude_none=True)
    write_atomic(judge_file, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    unmatched = sorted(set(fixture.answers) - set(answers))
    click.echo(f"stamped {stamped} verdicts in {judge_file}"
               + (f" ({changed} had been stamped for another answer)" if changed else ""))
    if unmatched:
        click.echo(f"not stamped (no answered row in {results}): {', '.join(unmatched)}")


def _answers(results: Path, what: str) -> dict[str, str]:
    """Each answered question's answer sha256 in a results file, of the raw answer (a masked
    answer's row keeps it), read whole or not: what was answered is stamped, the rest is
    named as not stamped; refused when a question's repeats answered differently, since
    `what` is stamped for one answer."""
    from pytest_ragate.answer import is_keyed
    from pytest_ragate.scoring.labelled import raw_sha256

    answers: dict[str, str] = {}
    for _, r in _saved(results, whole=False).rows:
        if r.status != "scored" or r.abstained or r.answer_text is None:
            continue
        if r.expected is None and r.answer_sha256 and not is_keyed(r.answer_sha256):
            raise click.ClickException(
                f"{results}: question {r.question_id} of a sealed goldset keeps a plain digest "
                "of its masked answer (a run made before sealed goldsets' digests were keyed): "
                f"stamp from a run made with RAGATE_SEAL_KEY set")
        if answers.setdefault(r.question_id, raw_sha256(r)) != raw_sha256(r):
            raise click.ClickException(
                f"{results}: question {r.question_id} has different answers in its "
                f"repeats; {what} is stamped for one answer: stamp from a run with repeat = 1")
    return answers


@main.command("stamp-labels")
@click.argument("labels_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def stamp_labels(labels_file: Path, results: Path) -> None:
    """Record in a human labels file which answer each label judged.

    For every label whose question has an answer in RESULTS (a `--ragate-results` file), sets
    `answer_sha256`. From then on a changed answer leaves that question labelled without a
    verdict ("stale label"), which fails judge_agreement and the ppi estimate, instead of
    holding a judge's word on the new answer to a person's word on the old one. An
    answer_match label is stamped once, with the raw answer it settles (the question's one
    answer, or its one unsure answer) and the expected answer it was judged against
    (`expected_sha256`), and never moved to another answer; one stamped before labels carried
    `expected_sha256` is bound to the expected answer its answer was held to in RESULTS. Lines
    not stamped keep their text. Stamp right after labelling, from the run you labelled.

    In a sealed goldset the digests are keyed (HMAC under a key derived from RAGATE_SEAL_KEY):
    RESULTS must come from a run made with the key, and a label stamped with plain digests
    before they were keyed is bound again only with RAGATE_SEAL_KEY set, where its answer is
    one RESULTS shows and its expected answer the goldset's.
    """
    import json

    from pytest_ragate.answer import is_keyed
    from pytest_ragate.files import read_jsonl, read_lines, write_atomic
    from pytest_ragate.goldsets.labels import LabelRow
    from pytest_ragate.scoring.answer_match import ANSWER_MATCH
    from pytest_ragate.stamping import StampError

    labelled, problems = read_jsonl(labels_file, LabelRow, id_field="question_id")
    if problems:
        raise click.ClickException("\n".join(map(str, problems)))
    judged = any(row.metric != ANSWER_MATCH for _, row in labelled)
    answers = _answers(results, "a label") if judged else {}
    rows = [r for _, r in _saved(results, whole=False).rows]
    lines = read_lines(labels_file)
    stamped = changed = 0
    unmatched: list[str] = []
    refused: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        row = json.loads(line)
        qid, where = row["question_id"], f"{row['question_id']} ({row['metric']}, line {i + 1})"
        if row["metric"] == ANSWER_MATCH:
            try:
                stamp, why = _answer_match_stamp(row, rows, labels_file)
            except StampError as error:
                raise click.ClickException(str(error)) from None
            if stamp is None:
                (refused if why else unmatched).append(f"{where}{': ' + why if why else ''}")
                continue
        elif qid in answers:
            stamp = {"answer_sha256": answers[qid]}
        else:
            unmatched.append(where)
            continue
        if all(row.get(k) == v for k, v in stamp.items()):
            continue
        old = row.get("answer_sha256")
        changed += old not in (None, stamp["answer_sha256"]) and is_keyed(old) == is_keyed(
            stamp["answer_sha256"])  # a plain stamp bound again with keyed digests: the same
        row.update(stamp)
        lines[i] = json.dumps(row, ensure_ascii=False)
        stamped += 1
    if stamped:
        write_atomic(labels_file, "\n".join(lines) + "\n")
    click.echo(f"stamped {stamped} labels in {labels_file}"
               + (f" ({changed} had been stamped for another answer)" if changed else ""))
    if unmatched:
        click.echo(f"not stamped (no answered row in {results}): {', '.join(unmatched)}")
    if refused:
        click.echo("not stamped, which answer is not clear:\n" + "\n".join(refused))
        raise SystemExit(1)


def _answer_match_stamp(row: dict[str, Any], rows: list[Any], labels_file: Path,
                        ) -> tuple[dict[str, str] | None, str]:
    """The digests to stamp on an answer_match label (`answer_sha256`, `expected_sha256`), or
    None and why not (empty: no answered row). A label already stamped with its answer keeps
    it: only the expected answer that answer was held to in the run is added (a label that
    predates `expected_sha256`); a label bound to both is left as it is. A sealed question's
    stamps are keyed (stamping.py)."""
    from pytest_ragate.answer import is_keyed
    from pytest_ragate.scoring.answer_match import answer_to_label, label_digests
    from pytest_ragate.stamping import rebound, sealed_labels, sealed_question, unkeyed

    qid, answer = row["question_id"], row.get("answer_sha256")
    sealed = sealed_question(qid, rows)
    if answer is None:
        record, why = answer_to_label(qid, rows)
        if record is None:
            return None, why
        raw, expected = label_digests(record)
        stamp = {"answer_sha256": raw} | ({"expected_sha256": expected} if expected else {})
        return (None, why) if sealed and (why := unkeyed(stamp)) else (stamp, "")
    if sealed and not (is_keyed(answer) and is_keyed(row.get("expected_sha256") or answer)):
        return rebound(row, rows, sealed_labels(labels_file))
    if "expected_sha256" in row:
        return {}, ""  # bound to what it judged, and to nothing else
    held = {label_digests(r)[1] for r in rows if r.question_id == qid
            and r.status == "scored" and r.answer_check is not None
            and label_digests(r)[0] == answer}
    held.discard(None)
    if len(held) != 1:
        return None, ""
    return {"answer_sha256": answer, "expected_sha256": held.pop()}, ""


_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


def _sealing(action: Callable[[], T]) -> T:
    from pytest_ragate.goldsets.sealed import SealError

    try:
        return action()
    except SealError as error:
        raise click.ClickException(str(error)) from None
    except GoldsetError as error:
        for problem in error.problems:
            click.echo(str(problem), err=True)
        raise SystemExit(1) from None


@main.command()
@click.argument("directory", type=_DIR)
def seal(directory: Path) -> None:
    """Encrypt a goldset's expected answers with the passphrase in RAGATE_SEAL_KEY."""
    from pytest_ragate.goldsets.sealed import key_from_env
    from pytest_ragate.goldsets.sealing import seal_goldset

    report = _sealing(lambda: seal_goldset(directory, key_from_env()))
    click.echo(f"sealed {report.answers} answers into {report.sealed}; removed "
               f"{report.removed}")
    click.echo(f"manifest digest {report.manifest_digest} (pin it: ragate verify --pin)")
    for other in report.unsealed:
        click.echo(f"warning: {other} is not sealed; make sure it tells no answer", err=True)


@main.command()
@click.argument("directory", type=_DIR)
def unseal(directory: Path) -> None:
    """Restore the expected answers (RAGATE_SEAL_KEY) and remove the sealed file."""
    from pytest_ragate.goldsets.sealed import key_from_env
    from pytest_ragate.goldsets.sealing import unseal_goldset

    report = _sealing(lambda: unseal_goldset(directory, key_from_env()))
    click.echo(f"restored {report.answers} answers to {report.restored}; removed "
               f"{report.removed}")
    if report.note:
        click.echo(f"note: {report.note}")


@main.command()
@click.argument("directory", type=_DIR)
@click.option("--pin", default=None, help="the manifest digest the sealed file must have")
def verify(directory: Path, pin: str | None) -> None:
    """Check a sealed goldset without the key; exit 1 if anything was edited."""
    from pytest_ragate.goldsets.sealed import read_sealed, sealed_path, verify_goldset

    problems = verify_goldset(directory, pin=pin)
    for problem in problems:
        click.echo(str(problem))
    if problems:
        raise SystemExit(1)
    sealed = read_sealed(sealed_path(directory))
    click.echo(f"ok {sealed_path(directory)}: {len(sealed.answers)} sealed answers, "
               f"manifest digest {sealed.manifest_digest}")


@main.command(context_settings={"ignore_unknown_options": True,
                                "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def decide(args: tuple[str, ...]) -> None:
    """Decide the floors over saved results: RESULTS... [-- PYTEST_ARGS...].

    RESULTS are each shard's --ragate-results file (or one run's), folders of them or globs.
    PYTEST_ARGS select the goldsets as the shards did (paths, -m, -k) and name the outputs
    (--junitxml, --ragate-report, --ragate-html, --ragate-history, --ragate-baseline, ...).
    Runs `pytest --ragate-decide RESULTS... PYTEST_ARGS` in one process and exits with its
    status: 0 when every floor holds, 1 when one fails or the files are refused.
    """
    import importlib.util

    import pytest

    cut = args.index("--") if "--" in args else len(args)
    results, rest = args[:cut], args[cut + 1:]
    if not results:
        raise click.UsageError("give the results files to decide (each shard's "
                               "--ragate-results)")
    flags = [f"--ragate-decide={path}" for path in results]
    # one process, whatever addopts say; an explicit -n in PYTEST_ARGS is refused
    serial = ["-n", "0"] if importlib.util.find_spec("xdist") else []
    raise SystemExit(int(pytest.main([*flags, *serial, *rest])))


# --- ragate plan -------------------------------------------------------------------------

INI_FILES = (("pytest.ini", "pytest"), ("pyproject.toml", "tool.pytest.ini_options"),
             ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _ini_options(start: Path) -> tuple[Path, dict[str, str]]:
    """(rootdir, options) from the first pytest ini file in `start` or above it, as pytest
    finds it (a pyproject.toml, tox.ini or setup.cfg counts only with a pytest section);
    (`start`, {}) when there is none."""
    import tomllib

    import iniconfig

    for folder in (start, *start.parents):
        for name, section in INI_FILES:
            path = folder / name
            if not path.is_file():
                continue
            if name == "pyproject.toml":
                table: Any = tomllib.loads(path.read_text(encoding="utf-8"))
                for part in section.split("."):
                    table = table.get(part, {}) if isinstance(table, dict) else {}
                if table or name == "pytest.ini":
                    return folder, {k: str(v) for k, v in table.items()}
                continue
            parsed = iniconfig.IniConfig(str(path))
            if section in parsed:
                return folder, dict(parsed[section].items())
            if name == "pytest.ini":
                return folder, {}
    return start, {}


def signed_reads(what: str) -> None:
    """A project whose saved runs are signed (`ragate_results_signed = true` in the pytest
    ini file found from here, as pytest finds it) reads one only with RAGATE_RESULTS_KEY
    set, as the gate and `ragate decide` do: without the key nothing would be checked."""
    import os

    from pytest_ragate.settings import RESULTS_KEY_ENV
    from pytest_ragate.wording.settings import results_unsigned_reads

    signed = _ini_options(Path.cwd())[1].get("ragate_results_signed", "false")
    try:
        required = _ini_bool(signed)
    except ValueError:
        raise click.UsageError(f"ragate_results_signed = {signed}: true or false") from None
    if required and not os.environ.get(RESULTS_KEY_ENV):
        raise click.UsageError(results_unsigned_reads(what))


def _ini_bool(value: str) -> bool:
    """An ini bool as pytest reads one (`addini(type="bool")`)."""
    folded = value.strip().lower()
    if folded in ("y", "yes", "t", "true", "on", "1"):
        return True
    if folded in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(value)


def _price(value: str | None, where: str) -> float | None:
    if value is None:
        return None
    try:
        price = float(value)
    except ValueError:
        price = -1.0
    if not price >= 0.0:
        raise click.ClickException(f"{where} = {value!r}: a price is a number ≥ 0 (US dollars "
                                   "per million tokens)")
    return price


@main.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--judge", "judge", default=None,
              help="fixture:PATH or ragas:MODEL (default: ragate_judge in the ini file)")
@click.option("--repeat", type=click.IntRange(1, 100), default=None,
              help="answers per question (default: ragate_repeat, else each goldset's own)")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="the judge cache folder (default: the run's: ragate_judge_cache_dir, "
              "else d/ragate-judge in pytest's cache_dir, .pytest_cache by default)")
@click.option("--contexts", type=click.IntRange(1, 1000), default=5, show_default=True,
              help="retrieved contexts assumed per answer where the cache does not hold the "
              "last one")
@click.option("--price-in", type=click.FloatRange(0.0), default=None,
              help="the judge's US dollars per million prompt tokens "
              "(default: ragate_judge_price_in)")
@click.option("--price-out", type=click.FloatRange(0.0), default=None,
              help="the judge's US dollars per million completion tokens "
              "(default: ragate_judge_price_out)")
@click.option("--json", "as_json", is_flag=True, help="the plan as JSON, for machines")
def plan(paths: tuple[Path, ...], judge: str | None, repeat: int | None,
         cache_dir: Path | None, contexts: int, price_in: float | None,
         price_out: float | None, as_json: bool) -> None:
    """How many system calls and judge requests a run over GOLDSETS would make, given the
    judge cache, their tokens and (with the judge's prices) cost. Asks nothing."""
    from pytest_ragate.judges.cache_folder import judge_cache_folder
    from pytest_ragate.judges.plan import plan as make_plan

    rootdir, ini = _ini_options(Path.cwd())
    planned_judge = _plan_judge(judge or ini.get("ragate_judge"), ini.get("ragate_judge_model"))
    if cache_dir is None:
        cache_dir = judge_cache_folder(rootdir, ragate_dir=ini.get("ragate_judge_cache_dir"),
                                       pytest_cache_dir=ini.get("cache_dir"))
    if repeat is None and ini.get("ragate_repeat"):
        repeat = click.IntRange(1, 100).convert(ini["ragate_repeat"], None, None)
    questions = _planned_questions(paths, repeat)
    if price_in is None:
        price_in = _price(ini.get("ragate_judge_price_in"), "ragate_judge_price_in")
    if price_out is None:
        price_out = _price(ini.get("ragate_judge_price_out"), "ragate_judge_price_out")
    if (price_in is None) != (price_out is None):
        raise click.ClickException("the judge's prices go together: --price-in and "
                                   "--price-out (or ragate_judge_price_in and _out), 0 for a "
                                   "side that is free")
    made = make_plan(questions, planned_judge, cache_dir, contexts=contexts,
                     price_in=price_in, price_out=price_out)
    click.echo(made.as_json() if as_json else _plan_text(made))


def _plan_judge(spec: str | None, model: str | None) -> PlanJudge:
    from pytest_ragate.judges.plan import PlanJudge
    from pytest_ragate.judges.ragas_deferred import ragas_judge_id, sampling_params
    from pytest_ragate.judges.select import judge_spec
    from pytest_ragate.settings import JudgeSettings

    try:
        checked = judge_spec(JudgeSettings(judge=spec, judge_model=model), need_url=False)
    except Exception as error:  # pytest's UsageError: the same one line pytest would print
        raise click.ClickException(str(error).replace("--ragate-judge ", "--judge ")) from None
    if checked is None:
        return PlanJudge(kind="none")
    kind, rest = checked
    if kind == "fixture":
        return PlanJudge(kind="fixture", judge_id=f"fixture:{rest}")
    params = sampling_params()
    return PlanJudge(kind="ragas", judge_id=ragas_judge_id(rest, params), params=params,
                     model=rest)


def _planned_questions(paths: tuple[Path, ...], repeat: int | None) -> list[PlannedQuestion]:
    from pytest_ragate.judges.plan import PlannedQuestion
    from pytest_ragate.scoring.registry import verdicts_needed

    configs = [c for p in paths for c in find_goldsets(p)]
    if not configs:
        raise click.ClickException(f"no {CONFIG_NAME} under {', '.join(map(str, paths))}")
    questions: list[PlannedQuestion] = []
    for config in configs:
        try:
            goldset = load_goldset(config)
        except GoldsetError as error:
            raise click.ClickException(f"{config}: not a valid goldset ("
                                       f"{len(error.problems)} problems; the first: "
                                       f"{error.problems[0]}); `ragate validate` lists "
                                       "them all") from None
        for case in goldset.cases:
            if case.expected is None:  # sealed without the key: the run skips it too
                continue
            for asked in case.repeated(repeat or goldset.config.repeat):
                questions.append(PlannedQuestion(
                    goldset=goldset.name, eval_version=goldset.eval_version,
                    question_id=asked.question.question_id, question=asked.question.question,
                    reference=case.expected.gist, repeat=asked.repeat,
                    judged=not case.must_abstain, digest_key=goldset.digest_key,
                    metrics=verdicts_needed(
                        (f.metric for f in goldset.floors),
                        (label.metric for label in goldset.labels))))
    return questions


def _money(value: float | None) -> str:
    return "—" if value is None else f"${value:,.4f}"


def _plan_text(made: Plan) -> str:
    from tabulate import tabulate

    rows = []
    for row in [*made.goldsets, made.total] if len(made.goldsets) > 1 else made.goldsets:
        for label, figures in (("all misses", row.changed),
                               ("unchanged answers", row.unchanged)):
            rows.append([row.goldset, row.questions, row.system_calls, row.judged_answers,
                         label, figures.requests, f"{figures.cached}/{figures.verdicts}",
                         figures.prompt_tokens, figures.completion_tokens,
                         _money(figures.cost_usd)])
    table = tabulate(rows, headers=["goldset", "questions", "system calls", "judged",
                                    "figure", "judge requests", "cached verdicts",
                                    "prompt tokens", "completion tokens", "cost"])
    lines = [f"ragate plan: judge {made.judge}; cache {made.cache_dir}; tokens by "
             f"{made.tokens_counted_with}; nothing was asked", table,
             *(f"- {note}" for note in made.notes)]
    return "\n".join(lines)


# --- ragate rejudge ----------------------------------------------------------------------


class RejudgeUsage(click.ClickException):
    """A rejudge that cannot start (a bad judge spec, a file it cannot read or use): one
    line, exit 2, so exit 1 stays the judge change's own answer."""

    exit_code = 2


@main.command()
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
              help="judge requests in flight (default: ragate_judge_concurrency, else 16)")
@click.option("--timeout", type=click.FloatRange(0.0, min_open=True), default=None,
              help="seconds per judge call (default: ragate_judge_timeout, else 60)")
@click.option("--json", "as_json", is_flag=True, help="the comparison as JSON, for machines")
def rejudge(results: tuple[str, ...], spec: str, judge_url: str | None,
            goldset_paths: tuple[Path, ...], cache_dir: Path | None, concurrency: int | None,
            timeout: float | None, as_json: bool) -> None:
    """Re-grade the answers saved in RESULTS under a candidate judge, asking the system
    nothing, and compare the two judges per judged metric: the paired shift, the questions
    that flipped at the floor, each floor's outcome and, where the goldset has labels, each
    judge's agreement with them. Exit 0: the change moves no floor and no shift is
    significant (alpha 0.05, Holm-corrected); 1: it does; 2: it could not be compared.
    RESULTS are --ragate-results files (folders of them, or globs), each goldset's from one
    run: its results file, or each of its --ragate-shard files."""
    from pytest_ragate.rejudging import Ask, Refused
    from pytest_ragate.rejudging import rejudge as rejudged

    signed_reads(f"ragate rejudge {' '.join(results)}")
    rootdir, ini = _ini_options(Path.cwd())
    configs = [c for p in goldset_paths for c in find_goldsets(p)] if goldset_paths else None
    try:
        made = rejudged(Ask(results=results, spec=spec, judge_url=judge_url, goldsets=configs,
                            cache_dir=cache_dir, concurrency=concurrency, timeout=timeout,
                            rootdir=rootdir, ini=ini))
    except Refused as error:
        raise RejudgeUsage(str(error)) from None
    click.echo(made.shown(as_json))
    raise SystemExit(made.exit_status)
