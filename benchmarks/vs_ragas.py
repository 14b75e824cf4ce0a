"""ragate's RAGAS judge through a real pytest gate against a plain `ragas.evaluate()`.

The same 100 answered rows (a fixed synthetic set this script writes: question, answer, three
retrieved contexts and a reference per row) are judged for faithfulness, context precision and
answer relevance by both tools, against one loopback OpenAI-compatible server (a separate
process) that answers every request after a fixed latency (200 ms) with scripted verdicts both
tools can compute all three metrics from. The server honours `n` (one choice per generation),
as OpenAI and vLLM do; `--server-ignores-n` makes it answer one choice whatever `n` says.

    ragate   python -m pytest GOLDSET --ragate-judge ragas:ragate-judge -o ragate_judge_url=URL
             (a user's gate: the system returns the row's answer and contexts)
    ragas    ragas.evaluate(dataset, metrics=[Faithfulness(), LLMContextPrecisionWithReference(),
             AnswerRelevancy()], llm=ChatOpenAI(...), embeddings=<the same MiniLM embedder>)

Both run as their own process, timed from start to exit (imports and model loads included),
alternating, `--rounds` times (3), in these configurations: matched concurrency 8 vs 8 and
16 vs 16 (`ragate_judge_concurrency` against `RunConfig(max_workers=)`), each tool's
defaults, and warm (ragate with its verdict cache filled against ragas again). Recorded per
run: wall time, requests and generations (choices) the server answered per tool, and per row
the three scores; per round the ratio ragate / ragas; overall the per-row agreement (exact for
faithfulness and context precision, within 1e-9 for answer relevance) and the rows where
ragas got fewer than 3 generated questions (RAGAS issue #2324). JSON: benchmarks/out/vs_ragas.json.

    .venv/bin/python benchmarks/vs_ragas.py [--rounds 3] [--latency 0.2] [--rows 100]
                                            [--warm-only]

A warm ragate run records which of ragas, openai, instructor, langchain-core and chromadb it
imported (none: the prompt hashes are memoised in the judge cache folder, and the embedder is
made only when RAGAS is).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
RAGATE_MODEL = "ragate-judge"
RAGAS_MODEL = "ragas-judge"
METRICS = ("faithfulness", "context_precision", "answer_relevance")
STRICTNESS = 3
ENV = {"HF_HUB_OFFLINE": "1", "RAGAS_DO_NOT_TRACK": "true", "ANONYMIZED_TELEMETRY": "False",
       "TOKENIZERS_PARALLELISM": "false"}

TOPICS = ["budget", "remote control", "battery", "colour scheme", "deadline", "marketing",
          "prototype", "user survey", "price", "case material"]


# --- the rows --------------------------------------------------------------------------


def make_rows(count: int) -> list[dict[str, Any]]:
    """A fixed synthetic set: varied numbers of statements, supported flags, relevant
    contexts and three distinct generated questions per row."""
    rows = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        k = 2 + i % 3
        statements = [f"In meeting {i} the {topic} point {j} was settled as option {i + j}."
                      for j in range(k)]
        rows.append({
            "question_id": f"q{i:03d}",
            "question": f"What did meeting {i} decide about the {topic}?",
            "answer": " ".join(statements),
            "reference": f"Meeting {i} settled the {topic} on option {i}.",
            "contexts": [f"meeting {i}, turn {t}: " + (f"we go with option {i + t} for the "
                                                        f"{topic}" if (i + t) % 2 == 0
                                                        else "shall we order lunch?")
                         for t in range(3)],
            "relevant": [(i + t) % 2 == 0 or (i + t) % 5 == 0 for t in range(3)],
            "statements": statements,
            "supported": [(i + j) % 3 != 0 for j in range(k)],
            "questions": [f"What did meeting {i} decide about the {topic}?",
                          f"Which option was chosen for the {topic}?",
                          f"When was meeting {i} held?"],
        })
    return rows


# --- the scripted server (its own process) ----------------------------------------------


def prompt_input(prompt: str) -> dict[str, Any]:
    """The input JSON RAGAS's prompts (collections and legacy) put after the last `input:`."""
    start = prompt.rindex("\ninput: ") + len("\ninput: ")
    end = prompt.rindex("\nOutput:")
    data: dict[str, Any] = json.loads(prompt[start:end])
    return data


class Scripted:
    """Answers RAGAS 0.4.3's prompts (ragas.metrics.collections for ragate, the legacy
    metrics for ragas.evaluate) from the rows, and counts what each model was asked."""

    def __init__(self, rows: list[dict[str, Any]], honor_n: bool) -> None:
        self.honor_n = honor_n
        self.by_answer = {r["answer"]: r for r in rows}
        self.by_reference = {r["reference"]: r for r in rows}
        self.supported = {s: ok for r in rows
                          for s, ok in zip(r["statements"], r["supported"], strict=True)}
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.stats: dict[str, dict[str, Any]] = defaultdict(lambda: {
                "requests": 0, "generations": 0, "ar_requests": defaultdict(int),
                "ar_questions": defaultdict(int), "ar_n": defaultdict(int), "unknown": 0,
                "intervals": []})

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return json.loads(json.dumps(self.stats))

    def answer(self, request: dict[str, Any]) -> list[str] | None:
        model = str(request.get("model"))
        prompt = str(request["messages"][-1]["content"])
        n = int(request.get("n") or 1)
        choices = n if self.honor_n else 1
        with self.lock:
            stats = self.stats[model]
            stats["requests"] += 1
            stats["generations"] += choices
        try:
            data = prompt_input(prompt)
        except ValueError:
            data = {}
        if '"title": "StatementGeneratorOutput"' in prompt:
            row = self.by_answer[data["answer"]]
            return [json.dumps({"statements": row["statements"]})] * choices
        if '"title": "NLIStatementOutput"' in prompt:
            return [json.dumps({"statements": [
                {"statement": s, "reason": "scripted", "verdict": int(self.supported[s])}
                for s in data["statements"]]})] * choices
        if '"title": "ContextPrecisionOutput"' in prompt or '"title": "Verification"' in prompt:
            row = self.by_reference.get(data["answer"]) or self.by_answer[data["answer"]]
            useful = row["relevant"][row["contexts"].index(data["context"])]
            return [json.dumps({"reason": "scripted", "verdict": int(useful)})] * choices
        if ('"title": "AnswerRelevanceOutput"' in prompt
                or '"title": "ResponseRelevanceOutput"' in prompt):
            row = self.by_answer[data["response"]]
            with self.lock:
                asked = stats["ar_questions"][row["question_id"]]
                stats["ar_requests"][row["question_id"]] += 1
                stats["ar_questions"][row["question_id"]] += choices
                stats["ar_n"][str(n)] += 1
            return [json.dumps({"question": row["questions"][(asked + k) % STRICTNESS],
                                "noncommittal": 0}) for k in range(choices)]
        with self.lock:
            stats["unknown"] += 1
        return None


def serve(rows_path: Path, latency: float, honor_n: bool, port_file: Path) -> None:
    scripted = Scripted(json.loads(rows_path.read_text()), honor_n)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, scripted.snapshot())

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/reset":
                scripted.reset()
                self._send(200, {})
                return
            request = json.loads(raw)
            start = time.monotonic()
            contents = scripted.answer(request)
            time.sleep(latency)
            with scripted.lock:
                scripted.stats[str(request.get("model"))]["intervals"].append(
                    (start, time.monotonic()))
            if contents is None:
                self._send(400, {"error": {"message": "unknown prompt", "type": "bench"}})
                return
            self._send(200, {
                "id": "chatcmpl-bench", "object": "chat.completion", "created": 0,
                "model": request.get("model"),
                "choices": [{"index": k, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": c}}
                            for k, c in enumerate(contents)],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 128
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


# --- ragas.evaluate (its own process) ---------------------------------------------------


def ragas_worker(rows_path: Path, url: str, workers: int | None, out: Path) -> None:
    """A plain `ragas.evaluate()`: ChatOpenAI at the server, the same MiniLM embedder as
    ragate's judge (each text encoded alone, as RagateEmbeddings does)."""
    from langchain_core.embeddings import Embeddings
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, evaluate
    from ragas.metrics import AnswerRelevancy, Faithfulness, LLMContextPrecisionWithReference
    from ragas.run_config import RunConfig

    from pytest_ragate.builtin_system.retrieval import Embedder

    class SameEmbeddings(Embeddings):
        def __init__(self) -> None:
            self.embedder = Embedder()

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [self.embedder.encode([t])[0].tolist() for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return self.embed_documents([text])[0]

    rows = json.loads(rows_path.read_text())
    dataset = EvaluationDataset.from_list([
        {"user_input": r["question"], "response": r["answer"],
         "retrieved_contexts": r["contexts"], "reference": r["reference"]} for r in rows])
    llm = ChatOpenAI(model=RAGAS_MODEL, base_url=url, api_key="not-needed", max_retries=0,
                     timeout=60)
    config = RunConfig() if workers is None else RunConfig(max_workers=workers)
    result = evaluate(dataset, metrics=[Faithfulness(), LLMContextPrecisionWithReference(),
                                        AnswerRelevancy()],
                      llm=llm, embeddings=SameEmbeddings(), run_config=config,
                      show_progress=False, raise_exceptions=False)
    names = {"faithfulness": "faithfulness", "llm_context_precision_with_reference":
             "context_precision", "answer_relevancy": "answer_relevance"}
    scores = {r["question_id"]: {names[k]: v for k, v in s.items() if k in names}
              for r, s in zip(rows, result.scores, strict=True)}
    out.write_text(json.dumps({"workers": config.max_workers, "scores": scores}))


# --- ragate through pytest ---------------------------------------------------------------

CONFTEST = '''
import json
import sys
from pathlib import Path

import pytest
from pytest_ragate import Answer, Citation, Context

ROWS = {r["question"]: r for r in json.loads(Path(__file__).with_name("rows.json").read_text())}


@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        row = ROWS[text]
        n = int(row["question_id"][1:])
        contexts = [Context(context_id=f"c{t}", doc_id=f"d{n}", first_unit=t, last_unit=t,
                            text=c, distance=0.2) for t, c in enumerate(row["contexts"])]
        return Answer(text=row["answer"], contexts=contexts,
                      citations=[Citation(context_id="c0")])
    return answer


def pytest_sessionfinish(session):
    """Whether this run imported RAGAS (a warm one must not)."""
    Path(__file__).with_name("imported.json").write_text(json.dumps(
        {name: name in sys.modules for name in ("ragas", "openai", "instructor",
                                                "langchain_core", "chromadb")}))
'''


def write_goldset(root: Path, rows: list[dict[str, Any]]) -> None:
    gs = root / "gs"
    gs.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "rows.json").write_text(json.dumps(rows))
    (gs / "ragate.toml").write_text(
        'name = "vs-ragas"\n[corpus]\npaths = ["corpus.jsonl"]\nformat = "segments-jsonl"\n'
        '[questions]\nexpected = "expected.jsonl"\n'
        "[floors]\nfaithfulness = 0.1\ncontext_precision = 0.1\nanswer_relevance = 0.1\n")
    with (gs / "corpus.jsonl").open("w") as corpus:
        for n, row in enumerate(rows):
            for t, text in enumerate(row["contexts"]):
                corpus.write(json.dumps({"doc_id": f"d{n}", "unit": t, "text": text}) + "\n")
    with (gs / "questions.jsonl").open("w") as q, (gs / "expected.jsonl").open("w") as e:
        for n, row in enumerate(rows):
            q.write(json.dumps({"question_id": row["question_id"], "kind": "single_doc",
                                "question": row["question"]}) + "\n")
            e.write(json.dumps({"question_id": row["question_id"], "gist": row["reference"],
                                "evidence": [{"doc_id": f"d{n}", "first_unit": 0,
                                              "last_unit": 0}]}) + "\n")


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    found.update(ENV)
    found["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return found


def run_ragate(root: Path, url: str, concurrency: int | None, cache: str) -> tuple[float, dict]:
    results = root / "results.jsonl"
    results.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "gs",
           f"--ragate-judge=ragas:{RAGATE_MODEL}", "-o", f"ragate_judge_url={url}",
           f"--ragate-cache={cache}", "-o", "ragate_judge_cache_dir=judge-cache",
           f"--ragate-results={results}"]
    if concurrency is not None:
        cmd += ["-o", f"ragate_judge_concurrency={concurrency}"]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env(), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not results.exists():
        sys.exit(f"ragate wrote no results:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    scores: dict[str, Any] = {"imported": json.loads((root / "imported.json").read_text())}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        if "question_id" not in record:  # the header, anchor and item lines
            continue
        metrics = record.get("metrics") or {}
        scores[record["question_id"]] = {m: metrics.get(m) for m in METRICS}
    return wall, scores


def run_ragas(root: Path, url: str, workers: int | None) -> tuple[float, dict]:
    out = root / "ragas_scores.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--ragas-worker",
           str(root / "rows.json"), url, str(out)]
    if workers is not None:
        cmd.append(str(workers))
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=env(), capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0 or not out.exists():
        sys.exit(f"ragas.evaluate failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, json.loads(out.read_text())["scores"]


# --- the comparison -----------------------------------------------------------------------


def http(url: str, body: bytes | None = None) -> dict[str, Any]:
    with urllib.request.urlopen(urllib.request.Request(url, data=body), timeout=10) as reply:
        data: dict[str, Any] = json.loads(reply.read())
        return data


def counted(base: str, model: str) -> dict[str, Any]:
    stats = http(base + "/stats").get(model, {})
    questions = stats.get("ar_questions", {})
    intervals = sorted(stats.get("intervals", []))
    events = sorted([(a, 1) for a, _ in intervals] + [(b, -1) for _, b in intervals])
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    span = (max(b for _, b in intervals) - intervals[0][0]) if intervals else 0.0
    return {"requests": stats.get("requests", 0), "generations": stats.get("generations", 0),
            "answer_relevance_requests": sum(stats.get("ar_requests", {}).values()),
            "answer_relevance_n": stats.get("ar_n", {}),
            "rows_fewer_than_3_questions": sorted(q for q, c in questions.items()
                                                  if c < STRICTNESS),
            "unknown_prompts": stats.get("unknown", 0),
            # first request to last answer, the most requests in flight, and the mean in
            # flight over that span (busy time / span): how well the tool kept the server busy
            "judging_span_s": span, "most_in_flight": most,
            "mean_in_flight": sum(b - a for a, b in intervals) / span if span else 0.0}


def agreement(rows: list[dict[str, Any]], ours: dict, theirs: dict) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for metric in METRICS:
        exact = 0
        close = 0
        worst = 0.0
        missing = 0
        for row in rows:
            a = ours.get(row["question_id"], {}).get(metric)
            b = theirs.get(row["question_id"], {}).get(metric)
            if a is None or b is None or b != b:  # NaN: ragas failed the row
                missing += 1
                continue
            exact += a == b
            close += abs(a - b) <= 1e-9
            worst = max(worst, abs(a - b))
        found[metric] = {"exact": exact, "within_1e-9": close, "max_abs_diff": worst,
                         "missing": missing, "rows": len(rows)}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--server-ignores-n", action="store_true")
    parser.add_argument("--warm-only", action="store_true",
                        help="only the warm configuration (each round still fills the cache "
                        "with one cold run first)")
    parser.add_argument("--json", type=Path, default=OUT / "vs_ragas.json")
    args = parser.parse_args()
    rows = make_rows(args.rows)
    configurations: list[tuple[str, int | None, int | None]] = [] if args.warm_only else [
        ("matched 8", 8, 8), ("matched 16", 16, 16), ("defaults", None, None)]
    runs: list[dict[str, Any]] = []
    last_scores: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_goldset(root, rows)
        port_file = root / "port"
        server = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve", str(root / "rows.json"),
             str(args.latency), "0" if args.server_ignores_n else "1", str(port_file)],
            env=env())
        try:
            while not port_file.exists() or not port_file.read_text():
                time.sleep(0.05)
            base = f"http://127.0.0.1:{port_file.read_text()}"
            url = base + "/v1"
            # one unrecorded run each first: the first process to import RAGAS, LangChain and
            # the model from a cold file cache pays seconds the others do not
            run_ragate(root, url, None, "off")
            run_ragas(root, url, None)
            for round_ in range(1, args.rounds + 1):
                for name, ours, theirs in configurations:
                    # alternate which tool goes first, round by round
                    order = ["ragate", "ragas"] if round_ % 2 else ["ragas", "ragate"]
                    entry: dict[str, Any] = {"round": round_, "configuration": name,
                                             "ragate_concurrency": ours or 16,
                                             "ragas_workers": theirs or 16}
                    for tool in order:
                        http(base + "/reset", b"")
                        if tool == "ragate":
                            wall, scores = run_ragate(root, url, ours, "off")
                            entry["ragate"] = {"wall_s": wall,
                                               **counted(base, RAGATE_MODEL)}
                        else:
                            wall, scores = run_ragas(root, url, theirs)
                            entry["ragas"] = {"wall_s": wall, **counted(base, RAGAS_MODEL)}
                        last_scores[tool] = scores
                    entry["ratio"] = entry["ragate"]["wall_s"] / entry["ragas"]["wall_s"]
                    entry["agreement"] = agreement(rows, last_scores["ragate"],
                                                   last_scores["ragas"])
                    runs.append(entry)
                    print(f"round {round_} {name:>10}: ragate {entry['ragate']['wall_s']:.2f} s"
                          f" ({entry['ragate']['requests']} requests, judging "
                          f"{entry['ragate']['judging_span_s']:.1f} s at "
                          f"{entry['ragate']['mean_in_flight']:.1f} in flight), ragas "
                          f"{entry['ragas']['wall_s']:.2f} s ({entry['ragas']['requests']} "
                          f"requests, judging {entry['ragas']['judging_span_s']:.1f} s at "
                          f"{entry['ragas']['mean_in_flight']:.1f} in flight, "
                          f"{len(entry['ragas']['rows_fewer_than_3_questions'])} "
                          f"rows < 3 questions): {entry['ratio']:.2f}x", flush=True)
                # warm: ragate's cache filled by a cold run with the cache on, then read
                shutil_rmtree(root / "judge-cache")
                http(base + "/reset", b"")
                run_ragate(root, url, None, "on")
                entry = {"round": round_, "configuration": "warm (ragate cache on)",
                         "ragate_concurrency": 16, "ragas_workers": 16}
                for tool in (["ragate", "ragas"] if round_ % 2 else ["ragas", "ragate"]):
                    http(base + "/reset", b"")
                    if tool == "ragate":
                        wall, scores = run_ragate(root, url, None, "on")
                        entry["ragate"] = {"wall_s": wall, **counted(base, RAGATE_MODEL),
                                           "imported": scores["imported"]}
                    else:
                        wall, scores = run_ragas(root, url, None)
                        entry["ragas"] = {"wall_s": wall, **counted(base, RAGAS_MODEL)}
                    last_scores[tool] = scores
                entry["ratio"] = entry["ragate"]["wall_s"] / entry["ragas"]["wall_s"]
                entry["agreement"] = agreement(rows, last_scores["ragate"], last_scores["ragas"])
                runs.append(entry)
                print(f"round {round_} {'warm':>10}: ragate {entry['ragate']['wall_s']:.2f} s "
                      f"({entry['ragate']['requests']} requests, imported "
                      f"{[k for k, v in entry['ragate']['imported'].items() if v]}), ragas "
                      f"{entry['ragas']['wall_s']:.2f} s: {entry['ratio']:.2f}x", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=10)
    report(args, runs)


def shutil_rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    from tabulate import tabulate

    names = list(dict.fromkeys(r["configuration"] for r in runs))
    goals = {"matched 8": 1.0, "matched 16": 1.0, "defaults": 1.0,
             "warm (ragate cache on)": 0.2}
    summary: dict[str, Any] = {}
    table = []
    for name in names:
        mine = [r for r in runs if r["configuration"] == name]
        ratios = [r["ratio"] for r in mine]
        median = statistics.median(ratios)
        fewer = [len(r["ragas"]["rows_fewer_than_3_questions"]) for r in mine]
        summary[name] = {"ratios": ratios, "median_ratio": median, "goal": goals[name],
                         "met": median <= goals[name],
                         "ragas_rows_fewer_than_3_questions": fewer}
        table.append([name, " ".join(f"{x:.2f}" for x in ratios), f"{median:.2f}",
                      f"≤ {goals[name]}", "PASS" if median <= goals[name] else "FAIL",
                      statistics.median(r["ragate"]["wall_s"] for r in mine),
                      statistics.median(r["ragas"]["wall_s"] for r in mine),
                      mine[-1]["ragate"]["requests"], mine[-1]["ragas"]["requests"],
                      " ".join(map(str, fewer))])
    print(tabulate(table, headers=["configuration", "ratios", "median", "goal", "",
                                   "ragate s", "ragas s", "ragate req", "ragas req",
                                   "ragas rows <3 q"], floatfmt=".2f"))
    cold = [r for r in runs if not r["configuration"].startswith("warm")] or runs
    print("agreement (last run):",
          json.dumps({m: {k: v for k, v in a.items() if k != "rows"}
                      for m, a in cold[-1]["agreement"].items()}))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({
        "rows": args.rows, "latency_s": args.latency, "rounds": args.rounds,
        "server_honours_n": not args.server_ignores_n,
        "load_average": os.getloadavg(), "summary": summary, "runs": runs}, indent=2))
    print(f"written {args.json} (load average {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(Path(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1", Path(sys.argv[5]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--ragas-worker":
        ragas_worker(Path(sys.argv[2]), sys.argv[3],
                     int(sys.argv[5]) if len(sys.argv) > 5 else None, Path(sys.argv[4]))
    else:
        main()
