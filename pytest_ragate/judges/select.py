"""Which judge a run uses: `--ragate-judge fixture:PATH` or `ragas:MODEL`, checked once
before anything runs. RAGAS (the `[ragas]` extra) is looked for, not imported: the judge
(`ragas_deferred.py`) imports it at the first verdict the cache does not hold.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ragate.judges.base import Embeds, Judge
from pytest_ragate.judges.fixture import FixtureJudge, LazyEmbedder, read_fixture_file, usage_error
from pytest_ragate.redaction import redact_credentials
from pytest_ragate.settings import JudgeSettings

if TYPE_CHECKING:
    from pytest_ragate.judges.ragas import RagasJudge


def judge_spec(settings: JudgeSettings, need_url: bool = True) -> tuple[str, str] | None:
    """("fixture", PATH) or ("ragas", MODEL) from --ragate-judge, checked: a bad spec is one
    usage error before anything runs, not a failure in every item. `ragate plan` asks
    nothing, so it needs no URL."""
    if not settings.judge:
        return None
    kind, _, rest = settings.judge.partition(":")
    if kind == "fixture" and rest:
        return kind, rest
    if kind == "ragas" and (rest or settings.judge_model):
        if need_url and not settings.judge_url:
            raise usage_error("--ragate-judge ragas:… needs ragate_judge_url (the base URL of an "
                         "OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1)")
        return kind, rest or str(settings.judge_model)
    raise usage_error(f"--ragate-judge {redact_credentials(repr(settings.judge))}: expected "
                      "fixture:PATH or ragas:MODEL (or ragas with ragate_judge_model)")


def check_settings(settings: JudgeSettings) -> tuple[str, str] | None:
    """Everything about the configured judge that can be wrong before the first question:
    the spec, the fixture file (read and validated), the RAGAS extra. Returns the spec."""
    spec = judge_spec(settings)
    if spec is None:
        return None
    kind, rest = spec
    if kind == "fixture":
        read_fixture_file(Path(rest))
    elif importlib.util.find_spec("ragas") is None:
        raise usage_error(f"--ragate-judge {redact_credentials(settings.judge or '')}: needs "
                          "RAGAS: pip install 'pytest-ragate[ragas]'")
    return spec


def from_settings(settings: JudgeSettings, embedder: Callable[[], Embeds],
                  embedder_id: str | None = None) -> Judge | None:
    """`--ragate-judge fixture:PATH` or `ragas:MODEL` (or `ragas` + ragate_judge_model).
    With `embedder_id` (what `embedder()` will make), the embedder is made only when RAGAS
    is built: a run whose verdicts are all cached never makes it (the built-in one imports
    Chroma)."""
    spec = judge_spec(settings)
    if spec is None:
        return None
    kind, rest = spec
    if kind == "fixture":
        return FixtureJudge(Path(rest), LazyEmbedder(embedder))
    from pytest_ragate.judges.ragas_deferred import DeferredRagasJudge
    from pytest_ragate.judges.ragas_deferred import embedder_id as ragas_embedder_id

    url = settings.judge_url
    assert url is not None  # judge_spec checked it
    api_key = os.environ.get("RAGATE_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
    made = [] if embedder_id is not None else [embedder()]

    def build() -> RagasJudge:
        from pytest_ragate.judges.ragas import RagasJudge

        return RagasJudge(rest, url, api_key=api_key, timeout=settings.judge_timeout,
                          embedder=made[0] if made else embedder())

    # replay embeds nothing: every verdict comes from the cache or fails
    return DeferredRagasJudge(rest, build=build,
                              embedder_id=embedder_id or ragas_embedder_id(made[0]),
                              warm=settings.cache != "replay")


