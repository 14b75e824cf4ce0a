"""Benchmark: evidence recall@k of the built-in retrievers (hybrid, the default; dense) and BM25.

What it measures: for each shipped goldset (`goldsets/qmsum-val`, `goldsets/tiron-demo`), over
its answerable questions, the share of expected evidence spans that at least one of the top-k
retrieved chunks overlaps (same document, inclusive turn overlap, `metrics.Span.overlaps`),
micro-averaged over spans, for k = 1, 3, 5, 10. This is the gate's `evidence_recall` metric
taken at several depths and without the answerer in between: it isolates retrieval.

Why: evidence recall is the ceiling of everything downstream (an answer can only cite what was
retrieved), and a dense retriever's figure means little on its own. A lexical baseline over the
very same chunks says whether all-MiniLM-L6-v2 earns its cost on these transcripts, and a
reciprocal-rank fusion of the two says whether they fail on different questions.

Four retrievers, all over the same chunks, `Chunker(400).chunk(corpus)`:
- dense: the plugin's `ragate_retriever = dense` (its default until 2026-12-01), `open_index` +
  `Retriever` (all-MiniLM-L6-v2 in Chroma, cosine distance); the index persists under
  `--index-dir`, so a second run embeds only the queries;
- bm25: `bm25s` with its defaults (Lucene variant, k1 = 1.5, b = 0.75) and its English
  stopwords (`stopwords="en"`: Lucene's 33 words), no stemming; chunks are tokenised from
  `fold(Chunk.embed_text)` and queries from `fold(question)`, so both sides get the same
  normalisation (annotation, case, punctuation and fillers dropped); ties keep corpus order;
- bm25_en_plus: the same with bm25s's longer English list (`"en_plus"`, NLTK's 179 words, which
  also drops "what", "did", "about", "we"…): a sensitivity check on the baseline, since
  meeting talk and questions are full of function words the short list keeps;
- hybrid: the plugin's default retriever since 2026-12-01 (`ragate_retriever = hybrid`:
  `Retriever` with a `pipeline.hybrid.Bm25Index`), reciprocal rank fusion of dense and bm25
  (the "en" one, chunks scoring zero left out), score = sum of 1 / (60 + rank) over the two
  rankings, each cut at depth 100; the benchmark calls it, it has no copy of its own.

Per-kind recall@5 is reported too (tiron-demo mixes single- and cross-meeting questions).
For context it also records, per retriever, how many spans have at least one top-5 chunk from
the span's own document (a "right meeting" rate), and checks that the dense ranking read at
depth 100 starts with exactly what the gate's `Retriever(top_k=5)` call returns.

The machine's load average (1, 5 and 15 minutes) is recorded before and after the run, since
the timings mean little without it on a shared machine.

Run from the repository root: `.venv/bin/python benchmarks/retrieval_recall.py
[--index-dir DIR] [--json PATH]`; figures are printed and written to
`benchmarks/out/retrieval_recall.json`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import bm25s
import numpy as np

from pytest_ragate.builtin_system.chunking import Chunk, Chunker
from pytest_ragate.builtin_system.hybrid import RRF_K, Bm25Index
from pytest_ragate.builtin_system.normalize import fold
from pytest_ragate.builtin_system.retrieval import Embedder, Retriever, open_index
from pytest_ragate.goldsets.loader import Case, Goldset, load_goldset
from pytest_ragate.scoring.records import Span

ROOT = Path(__file__).resolve().parents[1]
GOLDSETS = ("qmsum-val", "tiron-demo")
CHUNK_BUDGET = 400
KS = (1, 3, 5, 10)
KIND_K = 5
GATE_TOP_K = 5  # the gate's default top_k, for the prefix check
DEPTH = 100  # ranking depth read from each retriever, and fed to the fusion
BM25_STOPWORDS = {"bm25": "en", "bm25_en_plus": "en_plus"}
RETRIEVERS = ("dense", "bm25", "bm25_en_plus", "hybrid")
DEFAULT_INDEX_DIR = Path("/tmp/ragate-bench-index")
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "retrieval_recall.json"

Ranking = list[int]  # chunk positions, best first


@dataclass(frozen=True)
class Count:
    found: int
    n: int

    @property
    def value(self) -> float | None:
        return self.found / self.n if self.n else None

    def cell(self) -> str:
        return f"{self.found}/{self.n} ({self.value:.2f})" if self.n else "–"

    def as_dict(self) -> dict[str, Any]:
        value = self.value
        return {"found": self.found, "n": self.n,
                "recall": round(value, 4) if value is not None else None}


def _answerable(goldset: Goldset) -> list[Case]:
    return [c for c in goldset.cases if c.expected is not None and not c.expected.must_abstain]


def _spans(case: Case) -> list[Span]:
    assert case.expected is not None
    return case.expected.spans


def _span(chunk: Chunk) -> Span:
    return Span(chunk.doc_id, chunk.first_unit, chunk.last_unit)


# --- the three rankings -----------------------------------------------------------------------


def dense_rankings(goldset: Goldset, chunks: Sequence[Chunk], index_dir: Path,
                   embedder: Embedder,
                   ) -> tuple[dict[str, Ranking], dict[str, Ranking], dict[str, Any]]:
    """The dense and the hybrid retrievers, read to DEPTH; also checks that each one's top 5
    is the gate's top 5."""
    started = time.perf_counter()
    index = open_index(goldset.corpus, Chunker(CHUNK_BUDGET), embedder, cache_dir=index_dir)
    opened = time.perf_counter() - started
    position = {c.chunk_id: i for i, c in enumerate(chunks)}
    if set(index.chunks) != set(position):
        raise SystemExit(f"{goldset.name}: the index does not hold the benchmark's chunks")
    retriever = Retriever(index, embedder, top_k=GATE_TOP_K)
    started = time.perf_counter()
    lexical = Bm25Index.build(list(index.chunks.values()))
    bm25_build = time.perf_counter() - started
    hybrid = Retriever(index, embedder, top_k=GATE_TOP_K, lexical=lexical)
    rankings: dict[str, Ranking] = {}
    fused: dict[str, Ranking] = {}
    prefix_mismatches = hybrid_mismatches = 0
    started = time.perf_counter()
    for case in _answerable(goldset):
        question = case.question.question
        embedding = retriever.embed_query(question)
        deep = [position[ctx.context_id] for ctx in retriever.search(embedding, DEPTH)]
        gate = [position[ctx.context_id] for ctx in retriever.search(embedding, GATE_TOP_K)]
        prefix_mismatches += deep[:GATE_TOP_K] != gate
        rankings[case.question.question_id] = deep
        deep = [position[c] for c in (ctx.context_id for ctx in
                                      hybrid.search(embedding, DEPTH, question))]
        gate = [position[ctx.context_id] for ctx in hybrid.search(embedding, GATE_TOP_K,
                                                                  question)]
        hybrid_mismatches += deep[:GATE_TOP_K] != gate
        fused[case.question.question_id] = deep
    info = {"index_key": index.key, "index_built_now": index.built,
            "index_open_s": round(opened, 2),
            "query_s": round(time.perf_counter() - started, 2),
            "bm25_build_s": round(bm25_build, 3),
            "top5_prefix_mismatches": prefix_mismatches,
            "hybrid_top5_prefix_mismatches": hybrid_mismatches}
    return rankings, fused, info


def bm25_rankings(goldset: Goldset, chunks: Sequence[Chunk],
                  stopwords: str) -> dict[str, Ranking]:
    """bm25s over the folded chunk texts, queried with folded questions; ties in corpus order."""
    corpus_tokens = bm25s.tokenize([fold(c.embed_text) for c in chunks], stopwords=stopwords,
                                   return_ids=False, show_progress=False)
    model = bm25s.BM25()  # defaults: method="lucene", k1=1.5, b=0.75
    model.index(corpus_tokens, show_progress=False)
    rankings: dict[str, Ranking] = {}
    for case in _answerable(goldset):
        tokens = bm25s.tokenize([fold(case.question.question)], stopwords=stopwords,
                                return_ids=False, show_progress=False)[0]
        tokens = [t for t in tokens if t]
        scores = (model.get_scores(tokens) if tokens
                  else np.zeros(len(chunks), dtype=np.float32))
        order = np.argsort(-scores, kind="stable")[:DEPTH]
        rankings[case.question.question_id] = [int(i) for i in order]
    return rankings


# --- scoring --------------------------------------------------------------------------------


def evidence_ranks(spans: Sequence[Span], ranking: Ranking,
                   chunks: Sequence[Chunk]) -> list[int | None]:
    """Per span, the 1-based rank of the first chunk that overlaps it (None beyond DEPTH)."""
    retrieved = [_span(chunks[i]) for i in ranking]
    return [next((r for r, got in enumerate(retrieved, 1) if span.matches(got)), None)
            for span in spans]


def doc_ranks(spans: Sequence[Span], ranking: Ranking,
              chunks: Sequence[Chunk]) -> list[int | None]:
    """Per span, the 1-based rank of the first chunk from the span's document."""
    docs = [chunks[i].doc_id for i in ranking]
    return [next((r for r, doc in enumerate(docs, 1) if doc == span.doc_id), None)
            for span in spans]


def recall_at(ranks: Sequence[int | None], k: int) -> Count:
    return Count(sum(r is not None and r <= k for r in ranks), len(ranks))


def paired(base: Sequence[int | None], other: Sequence[int | None], k: int) -> dict[str, Any]:
    """Spans found within k by one retriever and not the other, with an exact two-sided sign
    test on those discordant spans (spans of one question are not independent: a rough guide)."""
    only_base = sum(a is not None and a <= k and not (b is not None and b <= k)
                    for a, b in zip(base, other, strict=True))
    only_other = sum(b is not None and b <= k and not (a is not None and a <= k)
                     for a, b in zip(base, other, strict=True))
    n, low = only_base + only_other, min(only_base, only_other)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2**n) if n else 1.0
    return {"only_dense": only_base, "only_other": only_other, "sign_test_p": round(p, 3)}


def run_goldset(name: str, index_dir: Path, embedder: Embedder) -> dict[str, Any]:
    goldset = load_goldset(ROOT / "goldsets" / name)
    chunks = Chunker(CHUNK_BUDGET).chunk(goldset.corpus)
    cases = _answerable(goldset)
    dense, hybrid, dense_info = dense_rankings(goldset, chunks, index_dir, embedder)
    started = time.perf_counter()
    rankings = {"dense": dense}
    for variant, stopwords in BM25_STOPWORDS.items():
        rankings[variant] = bm25_rankings(goldset, chunks, stopwords)
    bm25_s = time.perf_counter() - started
    rankings["hybrid"] = hybrid

    per_question: list[dict[str, Any]] = []
    span_ranks: dict[str, list[int | None]] = {r: [] for r in RETRIEVERS}
    span_doc_ranks: dict[str, list[int | None]] = {r: [] for r in RETRIEVERS}
    kind_ranks: dict[str, dict[str, list[int | None]]] = {}
    for case in cases:
        qid, spans = case.question.question_id, _spans(case)
        row: dict[str, Any] = {"question_id": qid, "kind": case.question.kind,
                               "spans": len(spans), "evidence_ranks": {}}
        for retriever in RETRIEVERS:
            ranks = evidence_ranks(spans, rankings[retriever][qid], chunks)
            row["evidence_ranks"][retriever] = ranks
            span_ranks[retriever].extend(ranks)
            span_doc_ranks[retriever].extend(doc_ranks(spans, rankings[retriever][qid], chunks))
            kind_ranks.setdefault(case.question.kind, {r: [] for r in RETRIEVERS})[
                retriever].extend(ranks)
        per_question.append(row)

    return {
        "goldset": goldset.name,
        "documents": len(goldset.corpus),
        "chunks": len(chunks),
        "questions": len(goldset.cases),
        "answerable_questions": len(cases),
        "spans": sum(len(_spans(c)) for c in cases),
        "dense": dense_info,
        "bm25_s": round(bm25_s, 2),
        "recall": {r: {str(k): recall_at(span_ranks[r], k).as_dict() for k in KS}
                   for r in RETRIEVERS},
        "paired_vs_dense": {r: {str(k): paired(span_ranks["dense"], span_ranks[r], k)
                                for k in KS}
                            for r in RETRIEVERS if r != "dense"},
        "right_document_at_5": {r: recall_at(span_doc_ranks[r], KIND_K).as_dict()
                                for r in RETRIEVERS},
        "per_kind": {kind: {r: {str(k): recall_at(ranks[r], k).as_dict() for k in KS}
                            for r in RETRIEVERS}
                     for kind, ranks in sorted(kind_ranks.items())},
        "questions_detail": per_question,
    }


# --- report ---------------------------------------------------------------------------------


def _count(entry: dict[str, Any]) -> Count:
    return Count(int(entry["found"]), int(entry["n"]))


def tables(results: Sequence[dict[str, Any]]) -> str:
    lines = ["| goldset | retriever | " + " | ".join(f"recall@{k}" for k in KS) + " |",
             "|---|---|" + "---:|" * len(KS)]
    for res in results:
        label = (f"{res['goldset']} ({res['answerable_questions']} q, {res['spans']} spans, "
                 f"{res['chunks']} chunks)")
        for i, retriever in enumerate(RETRIEVERS):
            cells = [_count(res["recall"][retriever][str(k)]).cell() for k in KS]
            lines.append(f"| {label if i == 0 else ''} | {retriever} | " + " | ".join(cells)
                         + " |")
    lines += ["", f"Per kind, recall@{KIND_K}:", "",
              "| goldset | kind | " + " | ".join(RETRIEVERS) + " |",
              "|---|---|" + "---:|" * len(RETRIEVERS)]
    for res in results:
        for kind, by_retriever in res["per_kind"].items():
            cells = [_count(by_retriever[r][str(KIND_K)]).cell() for r in RETRIEVERS]
            lines.append(f"| {res['goldset']} | {kind} | " + " | ".join(cells) + " |")
    lines += ["", "Spans found by only one of dense and the other retriever (dense only / other"
              " only, exact sign-test p):", "",
              "| goldset | other | " + " | ".join(f"@{k}" for k in KS) + " |",
              "|---|---|" + "---:|" * len(KS)]
    for res in results:
        for retriever, by_k in res["paired_vs_dense"].items():
            cells = [f"{by_k[str(k)]['only_dense']} / {by_k[str(k)]['only_other']} "
                     f"(p={by_k[str(k)]['sign_test_p']:.2f})" for k in KS]
            lines.append(f"| {res['goldset']} | {retriever} | " + " | ".join(cells) + " |")
    lines += ["", f"Spans with at least one top-{KIND_K} chunk from their own document:", "",
              "| goldset | " + " | ".join(RETRIEVERS) + " |",
              "|---|" + "---:|" * len(RETRIEVERS)]
    for res in results:
        cells = [_count(res["right_document_at_5"][r]).cell() for r in RETRIEVERS]
        lines.append(f"| {res['goldset']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--index-dir", type=Path, default=DEFAULT_INDEX_DIR,
                        help=f"where the dense indexes persist (default {DEFAULT_INDEX_DIR})")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON,
                        help="where to write the figures (default benchmarks/out/...)")
    args = parser.parse_args(argv)

    embedder = Embedder()
    load_before = os.getloadavg()
    started = time.perf_counter()
    results = []
    for name in GOLDSETS:
        print(f"{name}: opening the dense index under {args.index_dir} "
              "(a cold one is embedded first) …", file=sys.stderr, flush=True)
        results.append(run_goldset(name, args.index_dir, embedder))
    elapsed = time.perf_counter() - started
    load = {"before": [round(x, 2) for x in load_before],
            "after": [round(x, 2) for x in os.getloadavg()]}

    report = tables(results)
    print(report)
    for res in results:
        dense = res["dense"]
        print(f"\n{res['goldset']}: dense index {'built' if dense['index_built_now'] else 'reused'}"
              f" ({dense['index_open_s']} s), {res['answerable_questions']} dense queries "
              f"{dense['query_s']} s (dense and hybrid), the plugin's bm25 index built in "
              f"{dense['bm25_build_s']} s, both benchmark bm25 indexes + queries "
              f"{res['bm25_s']} s; top-{GATE_TOP_K} differs from the gate's call for "
              f"{dense['top5_prefix_mismatches']} (dense) and "
              f"{dense['hybrid_top5_prefix_mismatches']} (hybrid) question(s)")

    print(f"load average (1, 5, 15 min) before {load['before']}, after {load['after']} "
          f"on {os.cpu_count()} cpus; {elapsed:.1f} s in all")
    defaults = bm25s.BM25()
    out = {
        "benchmark": "retrieval_recall",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "cpus": os.cpu_count(), "load_average": load},
        "versions": {p: _version(p) for p in ("pytest-ragate", "bm25s", "chromadb",
                                               "sentence-transformers", "torch")},
        "settings": {"chunk_budget": CHUNK_BUDGET, "ks": list(KS), "depth": DEPTH,
                     "rrf_k": RRF_K,
                     "hybrid": "pytest_ragate.builtin_system.hybrid (rrf of dense, bm25)",
                     "embedding_model": embedder.model_id,
                     "bm25": {"method": defaults.method, "k1": defaults.k1,
                              "b": defaults.b, "stopwords": BM25_STOPWORDS,
                              "stemmer": None,
                              "text": "fold(Chunk.embed_text) / fold(question)"},
                     "index_dir": str(args.index_dir)},
        "elapsed_s": round(elapsed, 1),
        "goldsets": results,
        "table": report,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"\nwritten to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
