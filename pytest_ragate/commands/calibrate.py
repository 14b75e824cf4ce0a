"""`ragate calibrate`: a threshold swept over a saved run (max_distance, a confidence cut,
an answer_similarity cut)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pytest_ragate.commands.options import UNIT
from pytest_ragate.commands.saved import scored_rows

if TYPE_CHECKING:
    from pytest_ragate.scoring.calibrate import Cited, Cut
    from pytest_ragate.scoring.records import QuestionRecord


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


@click.command("calibrate")
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
def command(results: Path, step: float, on: str, floors: dict[str, float]) -> None:
    """Sweep max_distance (and top_k), or a confidence cut, over a `--ragate-results` file.

    Prints, per goldset, the abstention/citation trade-off at each threshold and the best
    setting, then evidence recall at each k up to the recorded top_k. `--on confidence
    --floor METRIC=MIN` replays "abstain when confidence < cut" instead, and picks the cut
    with the largest margin over the floors. `--on answer_similarity` calls an answer right
    when its cosine to the gist reaches a cut, and picks the cut whose calls agree best
    (Cohen's kappa) with a person's answer_match label, else answer_match's own call.

    \b
    Example:
      ragate calibrate out/results.jsonl --on confidence --floor abstention_accuracy=0.9
    """
    if on == "confidence" and not floors:
        raise click.UsageError("--on confidence needs --floor METRIC=MIN (abstention_accuracy "
                               "or citation_accuracy): the cut is chosen for a floor")
    if on != "confidence" and floors:
        raise click.UsageError("--floor goes with --on confidence")
    by_goldset = scored_rows(results)
    if on == "confidence":
        _calibrate_confidence(by_goldset, floors)
    elif on == "answer_similarity":
        _calibrate_similarity(by_goldset, step)
    else:
        _calibrate_distance(by_goldset, step)


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
                          _cited(s), s.answered, s.unknown])
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


def _cited(cut: Cited) -> str:
    if cut.citation_accuracy is None:
        return "—"
    return (f"{cut.citation_accuracy:.2f} (over {cut.cited_answers} answers; "
            f"{cut.citations_correct}/{cut.citations} citations right)")


def _margin(margin: float | None) -> str:
    return "—" if margin is None else f"{margin:+.2f}"
