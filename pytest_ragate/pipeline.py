"""The embedded default pipeline's settings and its per-process objects.

Settings come from flags over ini values over defaults, validated once at start-up. The heavy
parts (torch, chromadb) are imported only when a fixture first asks for them.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_ragate.chunking import DEFAULT_BUDGET, Chunker
from pytest_ragate.corpus import Corpus

if TYPE_CHECKING:
    from pytest_ragate.answering import ExtractiveAnswerer
    from pytest_ragate.retrieval import ChunkIndex, Embedder, Retriever

PIPELINE_KEY = pytest.StashKey["Pipeline"]()

class Settings(BaseModel):
    """Each field is a flag `--ragate-<name>` and an ini option `ragate_<name>`.

    max_distance 0.7 and support 0.35 were chosen with `ragate calibrate` on the shipped
    goldsets: no answerable question of either abstains on distance at 0.7.
    """

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


def add_options(group: Any, parser: pytest.Parser) -> None:
    for name, info in Settings.model_fields.items():
        text = info.description + ("" if info.default is None else f" (default: {info.default})")
        kind = {int: int, float: float}.get(info.annotation, str)  # type: ignore[call-overload]
        group.addoption("--ragate-" + name.replace("_", "-"), dest=f"ragate_{name}",
                        default=None, metavar=name.upper(), type=kind, help=text)
        parser.addini(f"ragate_{name}", text, type="string", default=None)


def read_settings(config: pytest.Config) -> Settings:
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = config.getoption(f"ragate_{name}")
        if value is None:
            value = config.getini(f"ragate_{name}") or None
        if value is not None:
            values[name] = value
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        lines = [f"  ragate_{e['loc'][0]}: {e['msg']}" for e in error.errors()]
        raise pytest.UsageError("invalid pytest-ragate settings:\n" + "\n".join(lines)) from None


@dataclass
class Pipeline:
    """One per process: the embedder and the indexes it opened, shared by every item."""

    config: pytest.Config
    settings: Settings
    _embedder: Embedder | None = None
    indexes: dict[tuple[str, str], ChunkIndex] = field(default_factory=dict)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from pytest_ragate.retrieval import Embedder

            self._embedder = Embedder(threads=self._fair_share())
        return self._embedder

    def _fair_share(self) -> int | None:
        """Under xdist, each worker gets its share of the cores: N workers each running
        torch on every core spin against each other and run several times slower."""
        workerinput = getattr(self.config, "workerinput", None)
        if not workerinput:
            return None
        workers = int(workerinput.get("workercount", 1))
        return max(1, (os.cpu_count() or 1) // workers)

    def cache_dir(self) -> Path:
        if self.settings.index_dir:
            return Path(self.settings.index_dir)
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            return Path(cache.mkdir("ragate-index"))
        return self.config.rootpath / ".ragate-index"

    def chunker(self) -> Chunker:
        return Chunker(self.settings.chunk_budget)

    def index(self, corpus: Corpus, chunker: Chunker) -> ChunkIndex:
        from pytest_ragate.retrieval import index_key, open_index

        key = (index_key(corpus, chunker, self.embedder.model_id), self.settings.chroma_url or "")
        if key not in self.indexes:
            with self._terminal() as stream:
                progress = _ProgressBar(stream, f"ragate: embedding {len(corpus)} documents")
                try:
                    self.indexes[key] = open_index(
                        corpus, chunker, self.embedder, cache_dir=self.cache_dir(),
                        url=self.settings.chroma_url, progress=progress)
                finally:
                    progress.close()
        return self.indexes[key]

    def retriever(self, corpus: Corpus, chunker: Chunker) -> Retriever:
        from pytest_ragate.retrieval import Retriever

        return Retriever(self.index(corpus, chunker), self.embedder, self.settings.top_k,
                         knobs=dict(chunker.settings))

    def system(self, retriever: Retriever) -> ExtractiveAnswerer:
        from pytest_ragate.answering import ExtractiveAnswerer

        return ExtractiveAnswerer(retriever, self.settings.max_distance, self.settings.support)

    def _terminal(self) -> AbstractContextManager[Any]:
        """Lift pytest's capture while an index builds, so its progress bar is seen."""
        capman = self.config.pluginmanager.getplugin("capturemanager")
        if capman is None:
            return nullcontext(sys.stderr)
        return _Uncaptured(capman)


class _Uncaptured:
    def __init__(self, capman: Any) -> None:
        self._cm = capman.global_and_fixture_disabled()

    def __enter__(self) -> Any:
        self._cm.__enter__()
        return sys.stderr

    def __exit__(self, *exc: object) -> None:
        self._cm.__exit__(*exc)


class _ProgressBar:
    """A tqdm bar that appears only when embedding actually happens (a cold index)."""

    def __init__(self, stream: Any, description: str) -> None:
        self.stream = stream
        self.description = description
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.description, unit="chunk", file=self.stream,
                            leave=True, mininterval=0.5)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def pipeline(config: pytest.Config) -> Pipeline:
    found = config.stash.get(PIPELINE_KEY, None)
    if found is None:
        found = config.stash[PIPELINE_KEY] = Pipeline(config, read_settings(config))
    return found
