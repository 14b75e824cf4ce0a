"""`ragate compare`: a saved run checked against a baseline, as the gate checks it.

The gate's own check (`decision/run_decision.run_regressions`) with the gate's inputs: the
project's `ragate_alpha` and `ragate_min_n` as pytest reads them (`project.py`; an option
given here wins), the judge `ragate_judge` configures, each goldset run's rows (the first
repeat of each question), its corpus digests from the results header, and the documents each
question's evidence is in, from the goldset (found by the header's route, or `--goldset`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytest_ragate.commands.goldset_paths import find_goldsets, routed_goldsets
from pytest_ragate.commands.options import RESULTS_FILE
from pytest_ragate.commands.project import Project, read_project
from pytest_ragate.commands.saved import saved_file, signed_reads

if TYPE_CHECKING:
    from pytest_ragate.decision.goldset_run import GoldsetRun
    from pytest_ragate.decision.margins import Margins
    from pytest_ragate.outputs.saved_runs import SavedFile
    from pytest_ragate.scoring.pairing import BaselineRun


@click.command("compare")
@click.argument("baseline")
@click.argument("results", type=RESULTS_FILE)
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
              default=None, help="significance level of a drop (default: ragate_alpha as "
              "pytest reads it, else 0.05)")
@click.option("--min-n", type=click.IntRange(0), default=None,
              help="fail a check resting on fewer paired questions (default: ragate_min_n "
              "as pytest reads it, else 0: off)")
@click.option("--accept-judge", metavar="JUDGE", help="accept a judge change: the judge "
              "RESULTS was graded by (as --ragate-accept-judge; docs/judges.md)")
@click.option("--goldset", "goldset_paths", multiple=True,
              type=click.Path(exists=True, path_type=Path),
              help="a goldset of RESULTS, for the documents its questions' evidence is in "
              "(default: each goldset's route in the results' header, from here or the "
              "rootdir)")
def command(baseline: str, results: Path, alpha: float | None, min_n: int | None,
            accept_judge: str | None, goldset_paths: tuple[Path, ...]) -> None:
    """Check a results file against a baseline, question by question, without rerunning.

    BASELINE is a results file or a history file (`PATH:LINE` for one line), as for
    `--ragate-baseline`. The check is the gate's, with the gate's settings as pytest reads
    them here. Prints the same table as the gate and exits 1 on a significant drop (or a
    judge change not accepted, a check refused by ragate_min_n, or a metric the goldset's
    `[regression] max_drop` names worse than its margin or not decided).

    \b
    Example:
      ragate compare main/results.jsonl out/results.jsonl
    """
    from pytest_ragate.decision.rules import rules_of
    from pytest_ragate.decision.run_decision import run_regressions
    from pytest_ragate.modes.saved_lines import decision_settings
    from pytest_ragate.outputs.reports import corpus_lines, regressions_table

    project = read_project()
    signed_reads(f"ragate compare {baseline} {results}")
    base = _baseline(baseline, results)
    gate = decision_settings(project.settings)
    rules = rules_of({**gate, "alpha": gate["alpha"] if alpha is None else alpha,
                      "min_n": gate["min_n"] if min_n is None else min_n,
                      "accept_judge": accept_judge}, baseline=base)
    saved = _current(results)
    margins, evidence = _from_goldsets(saved, project, goldset_paths)
    runs = _runs(saved, evidence)
    for run in runs:
        run.regressions = run_regressions(run, base, rules,
                                          judge_spec=project.settings.judge.judge,
                                          accept_flag="--accept-judge",
                                          margins=margins.get(run.name))
    click.echo(regressions_table(runs, "simple"))
    for line in corpus_lines(runs):
        click.echo(line)
    failed = [c for run in runs for c in run.regressions if c.outcome == "failed"]
    for check in failed:
        click.echo(f"{check.goldset} {check.metric}: {check.message}")
    if failed:
        raise SystemExit(1)


def _baseline(baseline: str, results: Path) -> list[BaselineRun]:
    """The baseline runs, read as `--ragate-baseline` reads them; refused when it is RESULTS
    itself (a run compared with itself shows no change)."""
    from pytest_ragate.outputs.baseline import baseline_location

    base_path, _ = baseline_location(baseline)
    if base_path.is_file() and base_path.samefile(results):
        raise click.ClickException(f"{baseline} and {results} are the same file: a run "
                                   "compared with itself can show no change; pass the "
                                   "results or history file of the earlier run")
    return _loaded(baseline)


def _loaded(baseline: str) -> list[BaselineRun]:
    """Saved runs read as `--ragate-baseline` reads them, refused in this command's words."""
    from pytest_ragate.outputs.baseline import BaselineError, load_baseline

    try:
        return load_baseline(baseline)
    except BaselineError as error:
        raise click.ClickException(str(error).removeprefix("--ragate-baseline")
                                   .lstrip(": ")) from None


def _current(results: Path) -> SavedFile:
    """RESULTS through the one reader, refused as a baseline would be (a partial run: a
    check pairs every question) and when it is a history file."""
    if any(run.source.startswith("history") for run in _loaded(str(results))):
        raise click.ClickException(f"{results} is a history file; RESULTS must be a "
                                   "--ragate-results file")
    return saved_file(results, whole=False)


def _runs(saved: SavedFile, evidence: dict[str, dict[str, list[str]]]) -> list[GoldsetRun]:
    """Each goldset route of a whole saved run as the gate holds it for the check: its
    rows, repeats, corpus digests and its questions' evidence documents."""
    from pytest_ragate.decision.goldset_run import GoldsetRun

    stamps = {stamp.route: stamp for stamp in saved.header.goldsets}
    runs: dict[str, GoldsetRun] = {}
    for _, row in saved.rows:
        run = runs.setdefault(row.route, GoldsetRun(
            name=row.goldset, eval_version=row.eval_version, route=row.route,
            corpus=dict((stamps[row.route].corpus or {}) if row.route in stamps else {})))
        run.records.append(row)
        run.repeats = max(run.repeats, row.repeat)
    if not runs:
        raise click.ClickException(f"{saved.path}: its run asked no question (nothing ran)")
    for run in runs.values():
        run.evidence_docs = evidence.get(run.name, {})
    return list(runs.values())


def _from_goldsets(saved: SavedFile, project: Project, goldset_paths: tuple[Path, ...],
                   ) -> tuple[dict[str, Margins], dict[str, dict[str, list[str]]]]:
    """By goldset name, from each goldset found (`_goldset_configs`): its `[regression]`
    margins, and, by question id, the documents its expected evidence is in, as the gate
    collects them (`Member.asked`). A goldset not found is checked without margins and names
    no question's changed evidence; one whose ragate.toml is malformed stops the command (a
    mistyped margin is never dropped); one that does not load, or whose content is not the
    one the run asked (or sealed without the key, as in the gate), gives no evidence."""
    from pytest_ragate.decision.margins import Margins
    from pytest_ragate.decision.population import Member
    from pytest_ragate.goldsets.config import read_config
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.problems import GoldsetError

    digests = {s.goldset: s.sha256 for s in saved.header.goldsets}
    margins: dict[str, Margins] = {}
    evidence: dict[str, dict[str, list[str]]] = {}
    for path in _goldset_configs(saved, project, goldset_paths):
        try:
            config = read_config(path)
        except GoldsetError as error:
            raise click.ClickException(str(error)) from None
        margins.setdefault(config.name or path.parent.name, Margins(
            max_drop=config.regression.max_drop, inconclusive=config.regression.inconclusive))
        try:
            goldset = load_goldset(path)
        except GoldsetError:
            continue
        if digests.get(goldset.name) not in (None, goldset.content_sha256):
            continue  # changed since the run: its evidence is not the run's
        evidence.setdefault(goldset.name, {
            m.question_id: m.evidence_docs for case in goldset.cases
            for asked in case.repeated(1) if (m := Member.asked(asked, None)).evidence_docs})
    return margins, evidence


def _goldset_configs(saved: SavedFile, project: Project,
                     goldset_paths: tuple[Path, ...]) -> list[Path]:
    """`--goldset`'s, else each route the header names that is found from here, else from
    the rootdir."""
    if goldset_paths:
        return [c for p in goldset_paths for c in find_goldsets(p)]
    return routed_goldsets((stamp.route for stamp in saved.header.goldsets), project.rootdir)
