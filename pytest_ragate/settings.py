"""Every knob of the run: a flag `--ragate-<name>` over an ini option `ragate_<name>` over a
default, validated once at start-up so a bad value is a usage error, not a failure per item.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_ragate.chunking import DEFAULT_BUDGET

SETTINGS_KEY = pytest.StashKey["Settings"]()


class PipelineSettings(BaseModel):
    """The embedded default pipeline. max_distance 0.7 and support 0.35 were chosen with
    `ragate calibrate` on the shipped goldsets: no answerable question of either abstains on
    distance at 0.7, and off-topic questions sit above 0.8."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_budget: Annotated[int, Field(ge=20, description="characters of normalised text per "
                                       "chunk")] = DEFAULT_BUDGET
    top_k: Annotated[int, Field(ge=1, le=1000, description="contexts retrieved per "
                                "question")] = 5
    max_distance: Annotated[float, Field(ge=0.0, le=2.0, description="abstain when the nearest "
                                         "context is farther (cosine distance)")] = 0.7
    support: Annotated[float, Field(ge=-1.0, le=1.0, description="abstain when no retrieved "
                                    "sentence is this similar to the question")] = 0.35
    chroma_url: Annotated[str | None, Field(description="a Chroma server (`chroma run`) "
                                            "instead of the embedded client")] = None
    index_dir: Annotated[str | None, Field(description="where embedded indexes persist "
                                           "(default: the pytest cache)")] = None
    rescue: Annotated[bool, Field(description="sentence-level retrieval rescue: add the home "
                                  "chunks of the best-matching sentences to the pool "
                                  "(on/off)")] = False
    rescue_semantic_floor: Annotated[float, Field(ge=-1.0, le=1.0, description="rescue: a "
                                                  "chunk's best sentence cosine must reach "
                                                  "this")] = 0.45
    rescue_lexical_overlap: Annotated[float, Field(gt=0.0, le=1.0, description="rescue: share "
                                                   "of the query's content words a sentence "
                                                   "must hold")] = 0.5
    rescue_cap: Annotated[int, Field(ge=0, le=100, description="rescue: chunks added per "
                                     "query and document at most")] = 6
    rescue_cap_fraction: Annotated[float, Field(ge=0.0, le=1.0, description="rescue: at most "
                                                "this share of a document's chunks")] = 0.30
    rescue_front_matter_penalty: Annotated[float, Field(ge=0.0, le=1.0, description="rescue: "
                                                        "subtracted from a document's first "
                                                        "chunk's scores")] = 0.0


class JudgeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    judge: Annotated[str | None, Field(description="fixture:PATH (exact verdicts from a file) "
                                       "or ragas:MODEL (RAGAS metrics through an "
                                       "OpenAI-compatible model)")] = None
    judge_url: Annotated[str | None, Field(description="base URL of the judge's "
                                           "OpenAI-compatible API, e.g. "
                                           "http://127.0.0.1:8000/v1")] = None
    judge_model: Annotated[str | None, Field(description="the judge model, when --ragate-judge "
                                             "is just `ragas`")] = None
    judge_timeout: Annotated[float, Field(gt=0, description="seconds before a judge call "
                                          "counts as failed")] = 60.0
    judge_concurrency: Annotated[int, Field(ge=1, le=256, description="judge calls in flight "
                                            "per process")] = 8
    cache: Annotated[Literal["on", "off", "replay"], Field(
        description="judge verdict cache: on, off, or replay (any miss fails: a run that "
        "spends nothing)")] = "on"
    judge_cache_dir: Annotated[str | None, Field(description="where the judge verdict cache "
                                                 "lives (default: the pytest cache); a folder "
                                                 "you can commit for --ragate-cache replay in "
                                                 "CI")] = None
    answerer_model: Annotated[str | None, Field(description="the model your system answers "
                                                "with; a judge on the same weights is "
                                                "flagged")] = None


class GateSettings(BaseModel):
    """How sure a gate must be before it passes or calls a regression."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ci: Annotated[Literal["point", "strict"], Field(
        description="point: a floor holds when its value reaches it; strict: only when the "
        "95% interval's lower bound does")] = "point"
    min_n: Annotated[int, Field(ge=0, description="refuse to gate (fail) a floor or a "
                                "regression check scored on fewer questions than this; 0 "
                                "turns it off")] = 0
    baseline: Annotated[str | None, Field(description="a results file (--ragate-results) or a "
                                          "history file (--ragate-history, last line of the "
                                          "same goldset and eval_version; PATH:LINE for "
                                          "another) to check this run against, question by "
                                          "question")] = None
    alpha: Annotated[float, Field(gt=0.0, lt=1.0, description="significance level of the "
                                  "baseline regression checks")] = 0.05
    sealed_without_key: Annotated[Literal["fail", "skip"], Field(
        description="a sealed goldset run without RAGATE_SEAL_KEY: fail its floors, or skip "
        "them (for builds that cannot have the key, such as forks)")] = "fail"
    system_timeout: Annotated[float | None, Field(gt=0, description="seconds a system may "
                                                  "take to answer one question before the "
                                                  "question is an error (default: no "
                                                  "limit)")] = None


class RunSettings(BaseModel):
    """What this run writes, and what it does beyond gating: command-line flags only (no ini
    options), declared by `add_run_options`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    results: str | None = None
    report: str | None = None
    html: str | None = None
    history: str | None = None
    promote: bool = False
    require_judge: bool = False

    @property
    def outputs(self) -> dict[str, str]:
        """The files asked for, by name (`results`, `report`, `html`, `history`)."""
        found = {"results": self.results, "report": self.report, "html": self.html,
                 "history": self.history}
        return {name: path for name, path in found.items() if path}


class Settings(BaseModel):
    pipeline: PipelineSettings
    judge: JudgeSettings
    gate: GateSettings
    run: RunSettings = RunSettings()


SECTIONS: dict[str, type[BaseModel]] = {"pipeline": PipelineSettings, "judge": JudgeSettings,
                                        "gate": GateSettings}


def add_run_options(group: Any) -> None:
    """The flags of `RunSettings`."""
    group.addoption("--ragate-results", dest="ragate_results", metavar="PATH", default=None,
                    help="write one JSON line per question to PATH")
    group.addoption("--ragate-report", dest="ragate_report", metavar="PATH", default=None,
                    help="write a Markdown report (floors, per-kind counts, questions) to PATH")
    group.addoption("--ragate-html", dest="ragate_html", metavar="PATH", default=None,
                    help="write one self-contained HTML report (floors with intervals, plots, "
                    "every question's answer and citations) to PATH; needs "
                    "pytest-ragate[html]")
    group.addoption("--ragate-history", dest="ragate_history", metavar="PATH", default=None,
                    help="append one JSON line per goldset run to PATH (earlier lines are "
                    "never rewritten); the report shows the change since the last run of the "
                    "same eval_version")
    group.addoption("--ragate-promote", dest="ragate_promote", action="store_true",
                    default=False, help="remove `xfail` from every anchor and floor that "
                    "passed in this run (rewriting only their lines) and list them")
    group.addoption("--ragate-require-judge", dest="ragate_require_judge", action="store_true",
                    default=False, help="fail judged floors when no judge is configured "
                    "instead of skipping them")


def add_options(group: Any, parser: pytest.Parser) -> None:
    for model in SECTIONS.values():
        for name, info in model.model_fields.items():
            text = info.description or name
            if info.default is not None:
                text += f" (default: {info.default})"
            kind = {int: int, float: float, bool: _on_off}.get(
                info.annotation, str)  # type: ignore[call-overload]
            group.addoption("--ragate-" + name.replace("_", "-"), dest=f"ragate_{name}",
                            default=None, metavar=name.upper(), type=kind,
                            help=text.replace("%", "%%"))  # argparse formats help with %
            parser.addini(f"ragate_{name}", text, type="string", default=None)


def _on_off(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"on", "true", "yes", "1"}:
        return True
    if lowered in {"off", "false", "no", "0"}:
        return False
    raise ValueError(f"expected on or off, got {value!r}")


def _read(config: pytest.Config, model: type[BaseModel]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in model.model_fields:
        value = config.getoption(f"ragate_{name}")
        if value is None:
            value = config.getini(f"ragate_{name}") or None
        if value is not None:
            values[name] = value
    return values


def read_settings(config: pytest.Config) -> Settings:
    """Validated once per process and kept in the config's stash."""
    found = config.stash.get(SETTINGS_KEY, None)
    if found is not None:
        return found
    problems: list[str] = []
    sections: dict[str, BaseModel] = {}
    for section, model in SECTIONS.items():
        try:
            sections[section] = model.model_validate(_read(config, model))
        except ValidationError as error:
            problems += [f"  ragate_{e['loc'][0]}: {e['msg']}" for e in error.errors()]
    if problems:
        raise pytest.UsageError("invalid pytest-ragate settings:\n" + "\n".join(problems))
    sections["run"] = RunSettings.model_validate(
        {name: config.getoption(f"ragate_{name}") for name in RunSettings.model_fields})
    settings = config.stash[SETTINGS_KEY] = Settings.model_validate(sections)
    return settings
