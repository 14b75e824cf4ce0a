"""`ragate plan`: the system calls, judge requests, tokens and cost a run would make,
asking nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from pytest_ragate.commands.goldset_paths import goldsets_under
from pytest_ragate.commands.project import read_project
from pytest_ragate.goldsets.loader import gated_rubrics, load_goldset
from pytest_ragate.problems import GoldsetError

if TYPE_CHECKING:
    from pytest_ragate.judges.plan import Plan, PlanJudge, PlannedQuestion


@click.command("plan")
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path))
@click.option("--judge", "judge", default=None,
              help="fixture:PATH or ragas:MODEL (default: ragate_judge as pytest reads it)")
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
def command(paths: tuple[Path, ...], judge: str | None, repeat: int | None,
            cache_dir: Path | None, contexts: int, price_in: float | None,
            price_out: float | None, as_json: bool) -> None:
    """How many system calls and judge requests a run over GOLDSETS would make, given the
    judge cache, their tokens and (with the judge's prices) cost. Asks nothing. What is
    not given is the project's setting, as `pytest` reads it here.

    \b
    Example:
      ragate plan goldsets/ --judge ragas:gpt-4o-mini --price-in 0.15 --price-out 0.6
    """
    from pytest_ragate.judges.plan import plan as make_plan

    project = read_project()
    settings = project.settings
    planned_judge = _plan_judge(judge or settings.judge.judge, settings.judge.judge_model)
    cache_dir = project.judge_cache if cache_dir is None else cache_dir
    questions = _planned_questions(paths, settings.gate.repeat if repeat is None else repeat)
    price_in = settings.judge.judge_price_in if price_in is None else price_in
    price_out = settings.judge.judge_price_out if price_out is None else price_out
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

    configs = goldsets_under(paths)
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
                    metrics=(*verdicts_needed((f.metric for f in goldset.floors),
                                              (label.metric for label in goldset.labels)),
                             *gated_rubrics(goldset.rubrics, goldset.floors)),
                    rubrics=goldset.rubrics))
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
