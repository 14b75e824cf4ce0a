"""Benchmark: the gate's default pipeline, cold against a bare script, and warm against cold.

Why: the gate's cost is dominated by embedding (torch) and the vector store (Chroma). The
plugin's own machinery (pytest start-up, items, fixtures, per-question pydantic records, the
controller, reports) should add next to nothing on top: goal, a cold gate within 1.05x of a
bare script doing the same work. And a warm rerun, which finds its index by content hash and
its question vectors stored, should cost at most a tenth of a cold run: that is what makes the
gate cheap enough to run on every commit.

What it runs, each as a subprocess, in ONE run of this script:
(a) cold gate: `python -m pytest -p no:cacheprovider -q -ra goldsets/ -o ragate_index_dir=<fresh>
    --ragate-results <file>`: both shipped goldsets (qmsum-val 170 questions over 29 meetings,
    with its anchors; tiron-demo 28 over 17), chunking, embedding every chunk and sentence,
    Chroma, answering, scoring, anchors, floors, reports (`-ra` only lists the items that did
    not pass, so the anchors' outcomes can be checked);
(b) bare: `python benchmarks/bare_pipeline.py --index-dir <fresh>`: the same work with the same
    libraries and the same pure functions, no pytest and no plugin (see its docstring);
(c) warm gate: (a) again on (a)'s index directory, with `-n 0` and with `-n 2` (xdist).
Each round runs (a) and (b) back to back, swapping their order every round, then (c) -n 0 and
-n 2 in ABBA order, so a busy spell on a shared machine hits both sides of a ratio alike.
Wall time and CPU time (user + sys of the process and its reaped children, from `wait4`) are
recorded; each ratio is taken within a round, and its median over the runs is reported.

Both sides read a copy of `goldsets/` and of the pytest configuration (`pyproject.toml`,
`conftest.py`) made when the benchmark starts, so edits to the work tree meanwhile cannot reach
one side only; the plugin's source (installed editable) cannot be copied, so a change to it
during the run is reported as a warning.

Like for like is checked, not assumed: every gate run's `--ragate-results` must give, per
goldset, the same citations correct/total, abstention correct/total and evidence spans
found/total as the bare script, the same outcome for every question and every anchor; any
difference, or a cold run that does not embed / a warm run that does, stops the benchmark with
exit status 1. Missing a goal prints FAIL but exits 0: timings on a shared 2-core machine are
noisy.

Run: `.venv/bin/python benchmarks/pipeline.py` (`--rounds N`, default 2; `--warm-repeat N`
warm runs of each kind per round, default 2; `--work DIR` keeps logs); figures are printed and
written to `benchmarks/out/pipeline.json`. `--encoder onnx|torch` (default onnx) picks what
embeds, on both sides.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BARE = Path(__file__).resolve().parent / "bare_pipeline.py"
DEFAULT_JSON = Path(__file__).resolve().parent / "out" / "pipeline.json"
COLD_GOAL = 1.05  # cold gate / bare, wall
WARM_GOAL = 0.10  # warm gate (-n 0) / cold gate, wall
CONFIG_FILES = ("pyproject.toml", "conftest.py")  # the gate's pytest configuration
GATE_OK = (0, 1)  # 1: a floor failed; the figures are still comparable
EMBEDDING_BAR = "ragate: embedding"  # the gate's progress bar: shown only when it embeds
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ \w+.*?) in (?P<secs>[\d.]+)s", re.MULTILINE)
FIGURES = ("questions", "citations", "citations_correct", "abstention_correct",
           "evidence_spans", "evidence_spans_found")
OUTCOME = ("abstained", "citations", "citations_correct", "abstention_correct",
           "evidence_spans_found")
# `-ra` lists every item that did not pass: an anchor not listed passed
ANCHOR_LINE = re.compile(r"^(?P<word>XFAIL|XPASS|FAILED|ERROR)\s+goldsets/(?P<dir>[^/\s]+)/"
                         r"\S*?::anchor\[(?P<id>[^\]\s]+)\]", re.MULTILINE)
ANCHOR_WORDS = {"XFAIL": "xfailed", "XPASS": "xpassed", "FAILED": "failed", "ERROR": "failed"}


@dataclass
class Run:
    config: str
    round: int
    argv: list[str]
    log: Path
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_mb: float = 0.0
    exit_code: int = 0
    pytest_summary: str | None = None
    pytest_reported_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"config": self.config, "round": self.round,
                "command": " ".join(_short(a) for a in self.argv),
                "wall_s": round(self.wall_s, 3), "cpu_s": round(self.cpu_s, 3),
                "max_rss_mb": round(self.max_rss_mb, 1), "exit_code": self.exit_code,
                "pytest_summary": self.pytest_summary,
                "pytest_reported_s": self.pytest_reported_s, **self.extra}


def _short(arg: str) -> str:
    return "python" if arg == sys.executable else arg


def execute(run: Run, env: dict[str, str], ok: Sequence[int], cwd: Path) -> Run:
    """Run `run.argv` in `cwd`, output to `run.log`; time it; check its exit status."""
    with run.log.open("w", encoding="utf-8") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(run.argv, cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        run.wall_s = time.perf_counter() - start
    proc.returncode = run.exit_code = os.waitstatus_to_exitcode(status)
    run.cpu_s = usage.ru_utime + usage.ru_stime
    run.max_rss_mb = usage.ru_maxrss / 1024
    text = run.log.read_text(encoding="utf-8", errors="replace")
    matches = list(SUMMARY.finditer(text))  # the last one is pytest's final line
    if matches:
        found = matches[-1]
        run.pytest_summary = found.group("counts").strip()
        run.pytest_reported_s = float(found.group("secs"))
    print(f"  [{run.config}] wall {run.wall_s:7.2f}s  CPU {run.cpu_s:7.2f}s  "
          f"exit {run.exit_code}" + (f"  ({run.pytest_summary})" if run.pytest_summary else ""),
          flush=True)
    if run.exit_code not in ok:
        sys.stdout.write(text[-4000:])
        raise SystemExit(f"`{' '.join(_short(a) for a in run.argv)}` exited {run.exit_code}")
    return run


# --- like for like --------------------------------------------------------------------------


Figures = tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]], dict[str, str]]


def gate_figures(results: Path, log: Path, anchor_keys: Sequence[str]) -> Figures:
    """Per-goldset totals (as the floors tally them), per-question outcomes, and the outcome
    of each anchor (`anchor_keys`: the bare script's, so an unlisted one passed)."""
    totals: dict[str, dict[str, int]] = {}
    outcomes: dict[str, dict[str, Any]] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "question_id" not in row or row["status"] == "skipped":  # rows only
            continue
        t = totals.setdefault(row["goldset"], dict.fromkeys(FIGURES, 0))
        t["questions"] += 1
        for key in FIGURES[1:]:
            t[key] += int(row[key])
        outcomes[f"{row['goldset']}::{row['question_id']}"] = {k: row[k] for k in OUTCOME}
    anchors = dict.fromkeys(anchor_keys, "passed")
    for m in ANCHOR_LINE.finditer(log.read_text(encoding="utf-8", errors="replace")):
        anchors[f"{m['dir']}::{m['id']}"] = ANCHOR_WORDS[m["word"]]
    return totals, outcomes, anchors


def bare_figures(path: Path) -> Figures:
    data = json.loads(path.read_text(encoding="utf-8"))
    totals = {g["goldset"]: {k: g[k] for k in FIGURES} for g in data["goldsets"]}
    outcomes = {f"{g['goldset']}::{qid}": row for g in data["goldsets"]
                for qid, row in g["question_outcomes"].items()}
    anchors = {f"{g['dir']}::{aid}": outcome for g in data["goldsets"]
               for aid, outcome in g["anchor_outcomes"].items()}
    return totals, outcomes, anchors


def fmt_totals(totals: dict[str, dict[str, int]]) -> str:
    return "; ".join(f"{name}: citations {t['citations_correct']}/{t['citations']}, "
                     f"abstention {t['abstention_correct']}/{t['questions']}, "
                     f"evidence {t['evidence_spans_found']}/{t['evidence_spans']}"
                     for name, t in sorted(totals.items()))


def check_same(run: Run, results: Path, reference: Figures) -> None:
    """Stop the benchmark unless this gate run scored exactly what the bare script scored."""
    want_totals, want_outcomes, want_anchors = reference
    totals, outcomes, anchors = gate_figures(results, run.log, list(want_anchors))
    differing = sorted(q for q in set(outcomes) | set(want_outcomes)
                       if outcomes.get(q) != want_outcomes.get(q))
    differing += sorted(a for a in set(anchors) | set(want_anchors)
                        if anchors.get(a) != want_anchors.get(a))
    run.extra["figures"] = totals
    run.extra["anchors"] = dict(Counter(anchors.values()))
    if totals != want_totals or differing:
        print(f"\nNOT LIKE FOR LIKE: {run.config} (round {run.round}) and the bare script "
              f"disagree, so their times cannot be compared.\n  gate: {fmt_totals(totals)}\n"
              f"  bare: {fmt_totals(want_totals)}\n  questions or anchors differing: "
              f"{len(differing)}" + "".join(
                  f"\n    {q}: gate {outcomes.get(q, anchors.get(q))} / "
                  f"bare {want_outcomes.get(q, want_anchors.get(q))}" for q in differing[:10]),
              file=sys.stderr)
        raise SystemExit(1)


def check_embedding(run: Run, expect: bool) -> None:
    embedded = EMBEDDING_BAR in run.log.read_text(encoding="utf-8", errors="replace")
    run.extra["embedded_corpus"] = embedded
    if embedded != expect:
        what = "did not embed the corpora" if expect else "embedded the corpora again"
        raise SystemExit(f"{run.config} (round {run.round}) {what}: see {run.log}")


# --- the run ----------------------------------------------------------------------------------


def snapshot(into: Path) -> Path:
    """Copy the goldsets (corpora included) and the pytest configuration, so edits made to the
    work tree while the benchmark runs do not reach one side and not the other."""
    into.mkdir()
    shutil.copytree(ROOT / "goldsets", into / "goldsets")
    for name in CONFIG_FILES:
        if (ROOT / name).is_file():
            shutil.copy2(ROOT / name, into / name)
    return into


def code_fingerprint() -> str:
    """pytest-ragate's source (installed editable, so not snapshotted): a change mid-run is
    reported, since the figures would then mix two versions."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "pytest_ragate").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _env(as_is: bool) -> dict[str, str]:
    dropped = {"PYTEST_ADDOPTS"} if as_is else {"PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", RAGAS_DO_NOT_TRACK="true",
               ANONYMIZED_TELEMETRY="False")
    return env


def gate_argv(index_dir: Path, results: Path, workers: int | None = None,
              encoder: str = "onnx") -> list[str]:
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-ra", "goldsets/",
            "-o", f"ragate_index_dir={index_dir}", "--ragate-results", str(results),
            "-o", f"ragate_encoder={encoder}"]
    return argv + ([] if workers is None else ["-n", str(workers)])


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _version(dist: str) -> str:
    from importlib.metadata import version

    return version(dist)


def run(work: Path, rounds: int, warm_repeat: int, json_path: Path,
        env_as_is: bool, encoder: str = "onnx") -> int:
    env = _env(env_as_is)
    load = [os.getloadavg()[0]]
    runs: list[Run] = []
    site = snapshot(work / "snapshot")  # both sides read these copies
    code = [code_fingerprint()]

    def timed(one: Run, ok: Sequence[int]) -> None:
        execute(one, env, ok, site)
        code.append(code_fingerprint())
        if code[-1] != code[-2]:
            print(f"  WARNING: pytest_ragate/ changed during `{one.config}` (round "
                  f"{one.round}): the figures mix two versions of the plugin", flush=True)

    print(f"warm-up (untimed): pytest --collect-only, bare script's imports and model; "
          f"goldsets and pytest configuration copied to {site}", flush=True)
    timed(Run("warm-up collect", 0, [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                     "-q", "--collect-only", "goldsets/"],
              work / "warmup-collect.log"), (0,))
    timed(Run("warm-up bare", 0, [sys.executable, str(BARE), "--warmup", "--encoder", encoder],
              work / "warmup-bare.log"), (0,))

    for r in range(1, rounds + 1):
        print(f"round {r} of {rounds} (1-minute load average {os.getloadavg()[0]:.2f})",
              flush=True)
        here = work / f"round{r}"
        here.mkdir()
        gate_index, bare_index = here / "gate-index", here / "bare-index"
        cold = Run("gate cold", r, gate_argv(gate_index, here / "cold.results.jsonl",
                                             encoder=encoder), here / "cold.log")
        bare = Run("bare cold", r, [sys.executable, str(BARE), "--goldsets",
                                    str(site / "goldsets"), "--encoder", encoder,
                                    "--index-dir", str(bare_index),
                                    "--json", str(here / "bare.json")], here / "bare.log")
        for one in ((cold, bare) if r % 2 else (bare, cold)):
            timed(one, GATE_OK if one is cold else (0,))
        reference = bare_figures(here / "bare.json")
        bare.extra["figures"] = reference[0]
        bare.extra["anchors"] = dict(Counter(reference[2].values()))
        bare.extra["phases_s"] = {k: round(v, 2) for k, v in json.loads(
            (here / "bare.json").read_text(encoding="utf-8"))["phases_s"].items()}
        check_embedding(cold, expect=True)
        check_same(cold, here / "cold.results.jsonl", reference)
        runs += [cold, bare]

        # warm: -n 0 and -n 2 in ABBA order (BAAB next round), warm_repeat pairs
        order = [0, 2, 2, 0] if r % 2 else [2, 0, 0, 2]
        for k, workers in enumerate((order * warm_repeat)[: 2 * warm_repeat]):
            name = f"warm-n{workers}-{k}"
            warm = Run(f"gate warm -n {workers}", r,
                       gate_argv(gate_index, here / f"{name}.results.jsonl", workers,
                                 encoder),
                       here / f"{name}.log")
            timed(warm, GATE_OK)
            check_embedding(warm, expect=False)
            check_same(warm, here / f"{name}.results.jsonl", reference)
            runs.append(warm)
        shutil.rmtree(gate_index, ignore_errors=True)
        shutil.rmtree(bare_index, ignore_errors=True)
    load.append(os.getloadavg()[0])
    figures = summarise(runs, rounds, load)
    figures.update(encoder=encoder, warm_repeat=warm_repeat,
                   bytecode_cache="PYTHONDONTWRITEBYTECODE" not in env,
                   plugin_source=sorted(set(code)), plugin_changed_mid_run=len(set(code)) > 1)
    if len(set(code)) > 1:
        print("WARNING: pytest_ragate/ changed while the benchmark ran (see above)")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {json_path}")
    return 0


def summarise(runs: list[Run], rounds: int, load: list[float]) -> dict[str, Any]:
    """Print the table and the verdicts; return the figures for the JSON file."""

    def of(config: str, r: int | None = None) -> list[Run]:
        return [x for x in runs if x.config == config and r in (None, x.round)]

    def ratios(num: str, den: str, attr: str) -> list[float]:
        """Within each round: the k-th `num` run over the k-th `den` run (or its only one)."""
        found = []
        for r in range(1, rounds + 1):
            nums, dens = of(num, r), of(den, r)
            for k, a in enumerate(nums):
                b = dens[k] if len(dens) == len(nums) else dens[0]
                found.append(getattr(a, attr) / getattr(b, attr))
        return found

    comparisons = [  # (label, numerator, denominator, goal)
        ("cold gate / bare", "gate cold", "bare cold", COLD_GOAL),
        ("warm gate -n 0 / cold gate", "gate warm -n 0", "gate cold", WARM_GOAL),
        ("warm gate -n 2 / warm gate -n 0", "gate warm -n 2", "gate warm -n 0", None),
    ]
    reference_of = {num: den for _, num, den, _ in comparisons}
    table: list[dict[str, Any]] = []
    print(f"\npipeline: {rounds} round(s); {os.cpu_count()} CPUs; 1-minute load average "
          f"{load[0]:.2f} -> {load[1]:.2f}; medians over runs; each ratio is taken within a round")
    print(f"{'configuration':<18}{'wall s':>9}{'CPU s':>9}{'ratio to':>17}{'wall':>7}{'CPU':>7}"
          f"  runs (wall s)")
    for config in ("bare cold", "gate cold", "gate warm -n 0", "gate warm -n 2"):
        rows = of(config)
        den = reference_of.get(config)
        row: dict[str, Any] = {"config": config,
                               "wall_s": [round(x.wall_s, 2) for x in rows],
                               "cpu_s": [round(x.cpu_s, 2) for x in rows],
                               "wall_median_s": round(_median([x.wall_s for x in rows]), 2),
                               "cpu_median_s": round(_median([x.cpu_s for x in rows]), 2)}
        text = f"{'-':>17}{'':>7}{'':>7}"
        if den:
            wall_r, cpu_r = ratios(config, den, "wall_s"), ratios(config, den, "cpu_s")
            row.update(ratio_to=den, wall_ratios=[round(x, 3) for x in wall_r],
                       cpu_ratios=[round(x, 3) for x in cpu_r],
                       wall_ratio_median=round(_median(wall_r), 3),
                       cpu_ratio_median=round(_median(cpu_r), 3))
            text = f"{den:>17}{_median(wall_r):>7.3f}{_median(cpu_r):>7.3f}"
        table.append(row)
        per = "  ".join(f"{x.wall_s:.1f}" for x in rows)
        print(f"{config:<18}{row['wall_median_s']:>9.1f}{row['cpu_median_s']:>9.1f}{text}  {per}")

    verdicts = {}
    for label, num, den, goal in comparisons:
        if goal is None:
            continue
        value = _median(ratios(num, den, "wall_s"))
        verdicts[label] = {"goal": goal, "wall_ratio_median": round(value, 3),
                           "verdict": "PASS" if value <= goal else "FAIL"}
        print(f"{verdicts[label]['verdict']}: {label} = {value:.3f} (wall, median) "
              f"against a goal of <= {goal:.2f}")
    first = of("bare cold")[0].extra["figures"]
    anchors = of("bare cold")[0].extra["anchors"]
    print(f"figures (gate = bare, checked for every gate run): {fmt_totals(first)}; anchors "
          + (", ".join(f"{n} {o}" for o, n in sorted(anchors.items())) or "none"))

    return {
        "benchmark": "pipeline",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "versions": {d: _version(d) for d in ("pytest", "pytest-xdist", "torch",
                                                          "onnxruntime",
                                                          "sentence-transformers", "chromadb",
                                                          "pytest-ragate")},
                    "load_average_1m": [round(x, 2) for x in load]},
        "rounds": rounds,
        "table": table,
        "goals": verdicts,
        "figures": first,
        "anchors": anchors,
        "bare_phases_s": [x.extra.get("phases_s") for x in of("bare cold")],
        "runs": [x.as_json() for x in runs],
    }


RATE_CHUNKS = 515  # the measure: 515 transcript chunks of about 400 characters


def compare_encoders(rounds: int, json_path: Path) -> int:
    """Texts per second of ONNX Runtime and of torch on the same chunks, in one process,
    alternating (ABBA over rounds), each ratio taken within a round; beside them the graph
    alone (ONNX Runtime's `session.run` on the pre-tokenised batches, without tokenising or
    pooling), the most this machine gives for the model. Checks the vectors agree."""
    import numpy as np

    from pytest_ragate.builtin_system.chunking import Chunker
    from pytest_ragate.builtin_system.retrieval import Embedder
    from pytest_ragate.goldsets.loader import load_goldset

    goldset = load_goldset(ROOT / "goldsets" / "qmsum-val")
    texts = [c.embed_text for c in Chunker(400).chunk(goldset.corpus)][:RATE_CHUNKS]
    threads = os.cpu_count()
    with tempfile.TemporaryDirectory(prefix="ragate-bench-encoders-") as tmp:
        embedders = {name: Embedder(threads=threads, encoder=name, cache_dir=Path(tmp))
                     for name in ("onnx", "torch")}
        for embedder in embedders.values():  # load and warm up, untimed
            embedder.encode(texts[:64])
        vectors: dict[str, Any] = {}
        rates: dict[str, list[float]] = {"onnx": [], "torch": [], "graph alone": []}
        onnx = embedders["onnx"].backend
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [onnx.tokenizer.encode_batch([texts[i] for i in order[s:s + 64]])  # type: ignore[attr-defined]
                   for s in range(0, len(order), 64)]
        feeds = [{"input_ids": np.array([e.ids for e in b], np.int64),
                  "attention_mask": np.array([e.attention_mask for e in b], np.int64),
                  "token_type_ids": np.array([e.type_ids for e in b], np.int64)}
                 for b in batches]
        for r in range(rounds):
            names = ["onnx", "torch"] if r % 2 == 0 else ["torch", "onnx"]
            for name in names:
                start = time.perf_counter()
                vectors[name] = embedders[name].encode(texts)
                rates[name].append(len(texts) / (time.perf_counter() - start))
            start = time.perf_counter()
            for feed in feeds:
                onnx.session.run(None, feed)  # type: ignore[attr-defined]
            rates["graph alone"].append(len(texts) / (time.perf_counter() - start))
    ratios = [a / b for a, b in zip(rates["onnx"], rates["torch"], strict=True)]
    diff = float(np.abs(vectors["onnx"] - vectors["torch"]).max())
    print(f"encoders: {len(texts)} qmsum-val chunks (~400 characters), {threads} threads, "
          f"{rounds} rounds alternating; 1-minute load average {os.getloadavg()[0]:.2f}")
    for name, found in rates.items():
        print(f"  {name:<12} texts/s median {_median(found):7.1f}   runs "
              + "  ".join(f"{x:.1f}" for x in found))
    print(f"  onnx / torch texts/s within a round: median {_median(ratios):.2f} "
          f"(runs {', '.join(f'{x:.2f}' for x in ratios)}); max |onnx - torch| {diff:.1e}")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps({
        "benchmark": "encoders", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "texts": len(texts), "threads": threads, "rounds": rounds,
        "texts_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
        "onnx_over_torch": [round(x, 3) for x in ratios], "max_abs_diff": diff,
        "load_average_1m": round(os.getloadavg()[0], 2)}, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {json_path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of cold gate + bare, each followed by warm runs (2)")
    parser.add_argument("--warm-repeat", type=int, default=2,
                        help="warm runs of each of -n 0 and -n 2 per round (2)")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, dest="json_path",
                        help=f"where to write the figures ({DEFAULT_JSON})")
    parser.add_argument("--work", type=Path, default=None,
                        help="keep the logs, results and snapshot here instead of a temporary dir")
    parser.add_argument("--env-as-is", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE if set (dropped by default, as on a "
                        "developer machine)")
    parser.add_argument("--encoder", choices=("onnx", "torch", "compare"), default="onnx",
                        help="what embeds, in the gate (ragate_encoder) and the bare script "
                        "alike (onnx); compare: only texts/s of both on the same 515 chunks, "
                        "alternating, in one process (to benchmarks/out/encoders.json)")
    args = parser.parse_args(argv)
    if args.encoder == "compare":
        json_path = args.json_path if args.json_path != DEFAULT_JSON else \
            DEFAULT_JSON.with_name("encoders.json")
        return compare_encoders(max(args.rounds, 2) * 2, json_path)
    if args.rounds < 1 or args.warm_repeat < 1:
        parser.error("--rounds and --warm-repeat must be at least 1")
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
        if any(args.work.iterdir()):
            parser.error(f"{args.work} is not empty")
        return run(args.work.resolve(), args.rounds, args.warm_repeat, args.json_path,
                   args.env_as_is, args.encoder)
    with tempfile.TemporaryDirectory(prefix="ragate-bench-pipeline-") as tmp:
        return run(Path(tmp), args.rounds, args.warm_repeat, args.json_path,
                   args.env_as_is, args.encoder)


if __name__ == "__main__":
    sys.exit(main())
