"""Every knob of the run: an ini option `ragate_<name>` over a default, with a flag
`--ragate-<name>` over both for the knobs a person sets for one run (`knob(..., flag=True)`:
the judge, its cache, the baseline, the CI mode, the sequential order; `RunSettings` holds the
outputs and the other flags only a command line gives). Validated once at start-up so a bad
value is a usage error, not a failure per item; a flag that is configuration only is refused
by name (`configuration_only`), naming its ini option.

The knobs are plain frozen dataclasses whose constraints are `annotated_types` markers:
declaring the options costs no pydantic import, and pydantic validates a section only when
one of its knobs was given (a section left at its defaults is built as it is declared;
tests/test_settings.py checks that every default passes its own constraints).

Every pytest run imports this module, so it imports neither pydantic nor `annotated_types`
(~15-25 ms with `typing_extensions`): the annotations stay text (`from __future__ import
annotations`), their markers are reached through `at`, a module that loads on first use
(when pydantic evaluates the annotations), and the flags' types are read from that text.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any, Literal

import pytest

if TYPE_CHECKING:
    import annotated_types as at

SETTINGS_KEY = pytest.StashKey["Settings"]()
DEFAULT_BUDGET = 400  # characters of normalised text per chunk (the built-in chunker's)
DEFAULT_FLIP_WINDOW = 8  # runs in which flips are counted, the current one included
# A hung system ends as an error naming its question, well inside CI job limits (GitLab's
# default is 60 minutes), while a slow local system keeps ample room: a 7B model on a laptop
# CPU writes a 500-token answer in about two minutes. Five times the judge's 60 s per call
# (which the system's answer does not include: verdicts are asked for after it).
DEFAULT_SYSTEM_TIMEOUT = 300.0


def _lazy_module(name: str) -> ModuleType:
    """`name`, executed only when one of its attributes is first read (the stdlib recipe of
    `importlib.util.LazyLoader`); the module already loaded if something imported it."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


if not TYPE_CHECKING:
    at = _lazy_module("annotated_types")


def knob(default: Any, help: str, *, flag: bool = False) -> Any:
    """A knob's default and the help text its ini option (and its flag, with `flag`) shows."""
    return dataclasses.field(default=default, metadata={"help": help, "flag": flag})


@dataclass(frozen=True)
class PipelineSettings:
    """The embedded default pipeline. max_distance 0.7 and support 0.35 were chosen with
    `ragate calibrate` on the shipped goldsets: no answerable question of either abstains on
    distance at 0.7, and off-topic questions sit above 0.8."""

    chunk_budget: Annotated[int, at.Ge(20)] = knob(DEFAULT_BUDGET, "characters of normalised text "
        "per chunk")
    top_k: Annotated[int, at.Ge(1), at.Le(1000)] = knob(5, "contexts retrieved per question")
    max_distance: Annotated[float, at.Ge(0.0), at.Le(2.0)] = knob(0.7, "abstain when the nearest "
        "context is farther (cosine distance)")
    support: Annotated[float, at.Ge(-1.0), at.Le(1.0)] = knob(0.35, "abstain when no retrieved "
        "sentence is this similar to the question")
    encoder: Literal["onnx", "torch"] = knob("onnx", "what embeds: onnx (ONNX Runtime over a "
        "graph exported once from the packaged weights, cached beside the indexes) or torch "
        "(sentence-transformers); a failed export falls back to torch and the run says so")
    retriever: Literal["dense", "hybrid"] = knob("hybrid", "the built-in retriever: dense "
        "(all-MiniLM-L6-v2 in Chroma) or hybrid (dense and bm25s over the same chunks, fused by "
        "reciprocal rank, k=60); contexts keep their dense cosine distance either way")
    chroma_url: str | None = knob(None, "a Chroma server (`chroma run`) instead of the embedded "
        "client")
    index_dir: str | None = knob(None, "where embedded indexes persist (default: the pytest cache)")
    rescue: bool = knob(False, "sentence-level retrieval rescue: add the home chunks of the "
        "best-matching sentences to the pool (on/off)")
    rescue_semantic_floor: Annotated[float, at.Ge(-1.0), at.Le(1.0)] = knob(0.45, "rescue: a "
        "chunk's best sentence cosine must reach this")
    rescue_lexical_overlap: Annotated[float, at.Gt(0.0), at.Le(1.0)] = knob(0.5, "rescue: share of "
        "the query's content words a sentence must hold")
    rescue_cap: Annotated[int, at.Ge(0), at.Le(100)] = knob(6, "rescue: chunks added per query and "
        "document at most")
    rescue_cap_fraction: Annotated[float, at.Ge(0.0), at.Le(1.0)] = knob(0.30, "rescue: at most "
        "this share of a document's chunks")
    rescue_front_matter_penalty: Annotated[float, at.Ge(0.0), at.Le(1.0)] = knob(0.0, "rescue: "
        "subtracted from a document's first chunk's scores")


@dataclass(frozen=True)
class JudgeSettings:
    judge: str | None = knob(None, "the judge: fixture:PATH (exact verdicts from a file) or "
        "ragas:MODEL (RAGAS metrics through an OpenAI-compatible model; its URL, timeout and "
        "prices are ini options)", flag=True)
    judge_url: str | None = knob(None, "base URL of the judge's OpenAI-compatible API, e.g. "
        "http://127.0.0.1:8000/v1")
    judge_model: str | None = knob(None, "the judge model, when ragate_judge is just `ragas`")
    judge_timeout: Annotated[float, at.Gt(0)] = knob(60.0, "seconds before a judge call counts as "
        "failed")
    judge_concurrency: Annotated[int, at.Ge(1), at.Le(256)] = knob(16, "judge model requests "
        "in flight per process")
    cache: Literal["on", "off", "replay"] = knob("on", "judge verdict cache: on, off, or replay "
        "(any miss fails: a run that spends nothing)", flag=True)
    judge_cache_dir: str | None = knob(None, "where the judge verdict cache lives (default: the "
        "pytest cache); a folder you can commit for `ragate_cache = replay` in CI")
    answerer_model: str | None = knob(None, "the model your system answers with; a judge on the "
        "same weights is flagged")
    judge_price_in: Annotated[float, at.Ge(0.0)] | None = knob(None, "the judge's price in US "
        "dollars per million prompt tokens, for `ragate plan` and the reports' cost")
    judge_price_out: Annotated[float, at.Ge(0.0)] | None = knob(None, "the judge's price in US "
        "dollars per million completion tokens")


@dataclass(frozen=True)
class GateSettings:
    """How sure a gate must be before it passes or calls a regression."""

    ci: Literal["point", "strict"] = knob("point", "point: a floor holds when its value reaches "
        "it; strict: only when the 95% interval's lower bound does", flag=True)
    min_n: Annotated[int, at.Ge(0)] = knob(0, "refuse to gate (fail) a floor or a regression check "
        "scored on fewer questions than this; 0 turns it off")
    baseline: str | None = knob(None, "a saved run to check this one against, question by "
        "question: a results file, or a history file (its last line of the same goldset and "
        "eval_version; PATH:LINE for another)", flag=True)
    alpha: Annotated[float, at.Gt(0.0), at.Lt(1.0)] = knob(0.05, "significance level of the "
        "baseline regression checks")
    accept_judge: str | None = knob(None, "accept a change of judge since the baseline: the "
        "judge of this run (its id, e.g. fixture:v2, or its spec); its judged checks are then "
        "skipped, not compared, and the history starts the judge's segment (without it they "
        "fail). Refused in the ini file, where it would accept every future change", flag=True)
    sealed_without_key: Literal["fail", "skip"] = knob("fail", "a sealed goldset run without "
        "RAGATE_SEAL_KEY: fail its floors, or skip them (for builds that cannot have the key, "
        "such as forks)")
    system_timeout: Annotated[float, at.Ge(0)] = knob(DEFAULT_SYSTEM_TIMEOUT, "seconds a system "
        "may take to answer one question (or an anchor's claim) before the item is an error; 0 "
        "for no limit")
    flip_window: Annotated[int, at.Ge(2), at.Le(1000)] = knob(DEFAULT_FLIP_WINDOW, "runs over "
        "which the history counts each question's, anchor's and floor's changes of outcome, "
        "this run included; promoting refuses what changed outcome more than once in them")
    repeat: Annotated[int, at.Ge(1), at.Le(100)] | None = knob(None, "ask every question this many "
        "times, each repeat its own item (q07[r2]), overriding every goldset's own `repeat`; "
        "floors count questions, not answers (default: the goldset's, else 1)")
    sequential: bool | None = knob(None, "on: ask each goldset's questions in a seeded random "
        "order and stop once a confidence sequence has decided every floor (docs/sequential.md); "
        "off: ask every question; unset: as each goldset's ragate.toml says (`sequential`). A "
        "release gate should ask everything", flag=True)
    sequential_seed: Annotated[int, at.Ge(0)] | None = knob(None, "the order's seed, to replay "
        "one run's order (default: a fresh one per run, printed and recorded in the results "
        "header); refused in the ini file, where every run would ask in one known order",
        flag=True)
    slice_alpha: Annotated[float, at.Gt(0.0), at.Le(0.2)] = knob(0.05, "the chance, per key and "
        "metric of a goldset's slice floors, that any slice whose true value clears its floor "
        "fails (Holm), or the expected share of false fails among the failing slices (bh)")
    slice_correction: Literal["holm", "bh"] = knob("holm", "the correction across one key's "
        "slices: holm (the chance of any false fail at most slice_alpha) or bh "
        "(Benjamini-Hochberg: the expected share of false fails among failing slices)")
    slice_insufficient: Literal["fail", "skip"] = knob("fail", "a slice whose n cannot decide it "
        "either way (its interval spans the floor and its shortfall is not significant): fail "
        "it, or skip it with the n it would need; never a pass")
    judge_optional: str | None = knob(None, "judged metrics (names separated by spaces or "
        "commas, e.g. `faithfulness answer_relevancy`) whose floors a run without a judge skips; "
        "any other judged floor without a judge fails, naming --ragate-judge (a goldset names "
        "its own in ragate.toml: [judge] optional)")
    sequential_alpha: Annotated[float, at.Gt(0.0), at.Le(0.2)] = knob(0.05, "the chance, per "
        "goldset, that stopping early decides a floor otherwise than asking every question "
        "would; split evenly across the goldset's floors")


@dataclass(frozen=True)
class CiSettings:
    """Where a CI system shows the gate, beyond the files a run is asked to write."""

    github: Literal["on", "off", "auto"] = knob("auto", "GitHub Actions' own views: the job "
        "summary ($GITHUB_STEP_SUMMARY) and annotations on the goldset lines of failing "
        "floors' worst questions and of invalid goldsets; auto: on when GITHUB_ACTIONS=true")

    def github_on(self, env: Mapping[str, str]) -> bool:
        """Whether this run shows itself in GitHub Actions."""
        if self.github == "auto":
            return env.get("GITHUB_ACTIONS") == "true"
        return self.github == "on"


@dataclass(frozen=True)
class RunSettings:
    """What this run writes, and what it does beyond gating: command-line flags only (no ini
    options), declared by `add_run_options`."""

    results: str | None = None
    report: str | None = None
    html: str | None = None
    history: str | None = None
    comment: str | None = None  # a pull-request comment's Markdown (outputs/github.py)
    gitlab_metrics: str | None = None  # GitLab's metrics report, OpenMetrics (outputs/gitlab.py)
    codequality: str | None = None  # GitLab's Code Quality report
    promote: bool = False
    promote_flipped: bool = False  # implies promote
    require_judge: bool = False
    builtin_system: bool = False  # the built-in pipeline answers goldsets that define no system
    shard: str | None = None  # `i/N`: run one slice and decide nothing (modes/shard.py)
    decide: tuple[str, ...] = ()  # results files decided instead of running (decide_saved.py)

    @property
    def outputs(self) -> dict[str, str]:
        """The files asked for, by name (`results`, `report`, `html`, `history`, `comment`,
        `gitlab-metrics`, `codequality`), as their flags name them."""
        found = {"results": self.results, "report": self.report, "html": self.html,
                 "history": self.history, "comment": self.comment,
                 "gitlab-metrics": self.gitlab_metrics, "codequality": self.codequality}
        return {name: path for name, path in found.items() if path}


@dataclass(frozen=True)
class Settings:
    pipeline: PipelineSettings = PipelineSettings()
    judge: JudgeSettings = JudgeSettings()
    gate: GateSettings = GateSettings()
    ci: CiSettings = CiSettings()
    run: RunSettings = RunSettings()


Section = PipelineSettings | JudgeSettings | GateSettings | CiSettings
SECTIONS: dict[str, type[Section]] = {"pipeline": PipelineSettings, "judge": JudgeSettings,
                                      "gate": GateSettings, "ci": CiSettings}


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
                    "same eval_version and what flipped outcome across runs")
    group.addoption("--ragate-comment", dest="ragate_comment", metavar="PATH", default=None,
                    help="write the Markdown body of one pull-request comment to PATH (the "
                    "verdict, floors, changes since the baseline, the worst questions with "
                    "their answers; under GitHub's 65,536 characters, with a hidden marker "
                    "so a workflow updates the same comment on every push)")
    group.addoption("--ragate-gitlab-metrics", dest="ragate_gitlab_metrics", metavar="PATH",
                    default=None, help="write GitLab's metrics report (OpenMetrics text: "
                    "each floor's value, bound, interval and n) to PATH, for "
                    "artifacts:reports:metrics")
    group.addoption("--ragate-codequality", dest="ragate_codequality", metavar="PATH",
                    default=None, help="write GitLab's Code Quality report (JSON) to PATH: "
                    "the goldset lines of failing floors' worst questions, missing results "
                    "and invalid goldsets, for artifacts:reports:codequality")
    group.addoption("--ragate-promote", dest="ragate_promote", action="store_true",
                    default=False, help="remove `xfail` from every anchor and floor that "
                    "passed in this run (rewriting only their lines) and list them")
    group.addoption("--ragate-promote-flipped", dest="ragate_promote_flipped",
                    action="store_true", default=False, help="as --ragate-promote, and promote "
                    "also what changed outcome more than once in the last ragate_flip_window "
                    "runs of --ragate-history (refused otherwise)")
    group.addoption("--ragate-require-judge", dest="ragate_require_judge", action="store_true",
                    default=False, help="in a run without a judge, fail the judged "
                    "floors of optional metrics too (ragate_judge_optional, a goldset's [judge] "
                    "optional), which it would skip")
    group.addoption("--ragate-builtin-system", dest="ragate_builtin_system",
                    action="store_true", default=False, help="let the built-in pipeline "
                    "(MiniLM in Chroma, extractive answers) answer every goldset item with no "
                    "ragate_system of your own in scope; without it only goldsets whose "
                    "ragate.toml says `system = \"builtin\"` use it, and any other such item "
                    "is an error")
    group.addoption("--ragate-shard", dest="ragate_shard", metavar="I/N", default=None,
                    help="run shard I of N (e.g. 2/3): a stable split of every goldset's "
                    "questions and anchors, balanced per goldset; it decides no floor: "
                    "`ragate decide` does, over the shards' results files")
    group.addoption("--ragate-decide", dest="ragate_decide", metavar="RESULTS",
                    action="append", default=None,
                    help="decide the floors over saved results files (a folder or a "
                    "glob for many; repeatable) instead of asking the system: what `ragate "
                    "decide` runs")


RESULTS_KEY_ENV = "RAGATE_RESULTS_KEY"  # outputs/signing.py's
SEAL_KEY_ENV = "RAGATE_SEAL_KEY"  # goldsets/sealed.py's
JUDGE_KEY_ENVS = ("RAGATE_JUDGE_API_KEY", "OPENAI_API_KEY")  # judges/select.py's, in order
RESULTS_SIGNED_HELP = ("true: this project's saved runs are signed (RAGATE_RESULTS_KEY): a run "
                       "that reads one (--ragate-baseline, --ragate-decide) without the key is "
                       "refused, and with it an unsigned one is, whatever the environment holds "
                       "(default: false)")


# pytest 9's own TOML table (`[tool.pytest]`, `pytest.toml`) keeps a value's TOML type and
# checks it against the option's: declared as strings, `ragate_min_n = 30` was refused there.
# pytest 9.2 takes a union: a string file (ini, `-o`) still gives the text, TOML its number or
# boolean, which `ini_text` writes back as the text every knob's parser reads.
INI_TYPE: Any = (str | int | float | bool) if pytest.version_tuple >= (9, 2) else "string"


def ini_text(value: object) -> str | None:
    """An ini option's value as the knob's parser reads it: None when not given; TOML's
    `true`/`false` as "true"/"false", its numbers as written (`0` is a value, not unset)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def add_options(group: Any, parser: pytest.Parser) -> None:
    parser.addini("ragate_results_signed", RESULTS_SIGNED_HELP, type="bool", default=False)
    for model in SECTIONS.values():
        for knob_ in dataclasses.fields(model):
            name = knob_.name
            text = knob_.metadata["help"]
            if knob_.default is not None:
                text += f" (default: {knob_.default})"
            if knob_.metadata["flag"]:
                kind = _flag_type(knob_.type)
                group.addoption(flag_of(name), dest=f"ragate_{name}", default=None,
                                metavar="on|off" if knob_.type.startswith("bool") else name.upper(),
                                type=kind, help=text.replace("%", "%%"))  # argparse formats %
            parser.addini(f"ragate_{name}", text, type=INI_TYPE, default=None)


def flag_of(name: str) -> str:
    """The command-line flag a knob has, or had: `--ragate-<name>` with dashes."""
    return "--ragate-" + name.replace("_", "-")


def configuration_only() -> dict[str, str]:
    """The knobs set in configuration only, by the flag a command line might still give:
    `{"--ragate-index-dir": "index_dir", ...}`."""
    return {flag_of(k.name): k.name for model in SECTIONS.values()
            for k in dataclasses.fields(model) if not k.metadata["flag"]}


def configuration_flags_given(args: list[str]) -> list[tuple[str, str]]:
    """Each flag in `args` (as pytest receives them, addopts included) that is configuration
    only, once, with its knob's name: `--ragate-index-dir x` or `--ragate-index-dir=x`, up to
    a `--` (after which an argument is a path)."""
    known = configuration_only()
    found: dict[str, str] = {}
    for arg in args:
        if arg == "--":
            break
        flag = arg.split("=", 1)[0]
        if flag in known:
            found.setdefault(flag, known[flag])
    return list(found.items())


_FLAG_TYPES: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "bool": bool}
_BASE_TYPE = re.compile(r"(?:Annotated\[)?(\w+)")


def _flag_type(annotation: str) -> Callable[[str], Any]:
    """The flag's type from the knob's annotation text, read without evaluating it (which
    would import annotated_types): int, float or on/off for `int`, `float`, `bool` or their
    `Annotated` forms; str for the rest, optional knobs included, which pydantic validates."""
    found = _BASE_TYPE.match(annotation)
    kind = _FLAG_TYPES.get(found.group(1), str) if found and "|" not in annotation else str
    return _on_off if kind is bool else kind


def _on_off(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in {"on", "true", "yes", "1"}:
        return True
    if lowered in {"off", "false", "no", "0"}:
        return False
    raise ValueError(f"expected on or off, got {value!r}")


def given(config: pytest.Config, model: type[Section]) -> dict[str, Any]:
    """The knobs of a section set by a flag (the knobs that have one) or an ini option (flags
    win)."""
    values: dict[str, Any] = {}
    for knob_ in dataclasses.fields(model):
        value = config.getoption(f"ragate_{knob_.name}") if knob_.metadata["flag"] else None
        if value is None:
            value = ini_text(config.getini(f"ragate_{knob_.name}"))
        if value is not None:
            values[knob_.name] = value
    return values


def standing(config: pytest.Config, name: str) -> str | None:
    """Where a knob that holds for one run only (`accept_judge`, `sequential_seed`) was given
    for every run: "the ini file" (its `ragate_<name>`, or `-o`), "addopts" (the ini's, which
    pytest puts on the command line) or "PYTEST_ADDOPTS"; None when the command line alone
    gives it, or nothing does."""
    if ini_text(config.getini(f"ragate_{name}")) is not None:
        return "the ini file"
    flag = flag_of(name)
    if _names_flag(flag, config.getini("addopts")):
        return "addopts"
    if _names_flag(flag, shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))):
        return "PYTEST_ADDOPTS"
    return None


def _names_flag(flag: str, args: list[str]) -> bool:
    """Whether `args` give `flag` (`--flag VALUE` or `--flag=VALUE`; pytest's parser takes
    no abbreviation)."""
    return any(arg == flag or arg.startswith(flag + "=") for arg in args)


def set_but_empty(env: Mapping[str, str], name: str) -> bool:
    """Whether the variable `name` is set to nothing (or blanks): a CI secret this job cannot
    see, which would otherwise read as no key at all."""
    return name in env and not env[name].strip()


def empty_keys(env: Mapping[str, str], *, judge_calls: bool) -> list[str]:
    """The key variables this run reads that are set but empty: RAGATE_RESULTS_KEY (signing
    and checking would be off without a word), and, when a judge model is called, the key it
    is called with (RAGATE_JUDGE_API_KEY, else OPENAI_API_KEY). Not RAGATE_SEAL_KEY: a fork's
    empty one is the documented route (its sealed floors fail, or skip when told to)."""
    found = [RESULTS_KEY_ENV] if set_but_empty(env, RESULTS_KEY_ENV) else []
    read = next((name for name in JUDGE_KEY_ENVS if name in env), None)
    if judge_calls and read is not None and set_but_empty(env, read):
        found.append(read)
    return found


def validated(model: type[Section], values: dict[str, Any]) -> Section:
    """A section from raw values (strings from an ini file too), or ValidationError."""
    if not values:
        return model()
    from pydantic import TypeAdapter

    return TypeAdapter(model).validate_python(values)


def _section(model: type[Section], values: dict[str, Any]) -> tuple[Section | None, list[str]]:
    """The section, or what is wrong with each knob given for it."""
    if not values:
        return model(), []
    from pydantic import ValidationError

    try:
        return validated(model, values), []
    except ValidationError as error:
        return None, [f"  ragate_{e['loc'][0]}: {e['msg']}" for e in error.errors()]


def read_settings(config: pytest.Config) -> Settings:
    """Validated once per process and kept in the config's stash."""
    found = config.stash.get(SETTINGS_KEY, None)
    if found is not None:
        return found
    problems: list[str] = []
    sections: dict[str, Any] = {}
    for section, model in SECTIONS.items():
        sections[section], found = _section(model, given(config, model))
        problems += found
    judge = sections.get("judge")
    if judge is not None and (judge.judge_price_in is None) != (judge.judge_price_out is None):
        problems.append("  ragate_judge_price_in and ragate_judge_price_out go together: a "
                        "judge's cost needs both (0 for a side that is free)")
    if problems:
        raise pytest.UsageError("invalid pytest-ragate settings:\n" + "\n".join(problems))
    run = RunSettings(**{f.name: config.getoption(f"ragate_{f.name}")
                         for f in dataclasses.fields(RunSettings)})
    if run.promote_flipped:
        run = dataclasses.replace(run, promote=True)
    run = dataclasses.replace(run, decide=tuple(run.decide or ()))
    settings = config.stash[SETTINGS_KEY] = Settings(run=run, **sections)
    return settings
