"""An adversary after the secrets a run holds: sealed answers and credentials never reach an
output. Each run writes every output there is (terminal, JUnit, results, Markdown, HTML,
history) and each is searched for the secret, with and without `-n 2`. Most cases read one
run per worker count that holds every secret at once (`printed`, section 1)."""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import re
import shutil
import sys
import warnings
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import diskcache
import numpy as np
import pytest
from click.testing import CliRunner
from filelock import FileLock

from pytest_ragate.answer import Context
from pytest_ragate.cli import main
from pytest_ragate.decision.population import Member
from pytest_ragate.decision.regressions import JudgeChange
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.goldsets.sealed import (
    Scrypt,
    aesgcm,
    answer_digest,
    associated_data,
    b64,
    manifest_digest,
    open_sealed_keyed,
    pad,
    read_sealed,
)
from pytest_ragate.goldsets.sealing import seal_goldset
from pytest_ragate.items.printed import redact_record, redact_warning
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.cache_index import (
    INDEX_PREFIX,
    INDEX_VERSION,
    index_key,
    memo_key,
    read_entry,
    stamp,
)
from pytest_ragate.judges.ragas_deferred import prompt_version, ragas_judge_id, sampling_params
from pytest_ragate.judges.runner import cache_key
from pytest_ragate.modes.saved_lines import decision_settings, row_settings
from pytest_ragate.redaction import Redactor, known_credentials
from pytest_ragate.scoring.custom import declare
from pytest_ragate.settings import GateSettings, JudgeSettings, Settings
from pytest_ragate.wording.baseline import (
    accept_judge_misnamed,
    accept_judge_unneeded,
    judge_changed,
)
from tests.conftest import (
    FIXTURE_JUDGE_CONFTEST,
    WORKERS,
    WORKERS_SHARED,
    corpus_rows,
    jsonl,
    question_rows,
    results_rows,
    rows_of,
    run_command,
    run_pytester,
    write_goldset,
)
from tests.openai_stub import (
    OpenAIStub,
    Reply,
    completion,
    error,
    prompt_input,
    ragas_script,
)
from tests.test_judge_http import GOOD
from tests.test_judge_http import SYSTEM as TWELVE
from tests.test_plugin import SYSTEM

KEY = "s3cret passphrase"
OUTPUTS = {"junit.xml": "--junitxml", "r.jsonl": "--ragate-results", "r.md": "--ragate-report",
           "r.html": "--ragate-html", "h.jsonl": "--ragate-history"}
GISTS = {  # what the sealed answers say: nothing a system or a judge prompt holds by itself
    "q1": "Zorblax treasury keeps forty quatloos",
    "q2": "the Vogon audit closes on Thursday",
    "q3": "Marvin signs both budget memos personally",
}
NOTES = "sealed note: the answer key came from the Magrathea minutes"
JUDGED = "[floors]\nevidence_recall = 0.1\ncontext_precision = 0.5\nfaithfulness = 0.5\n"


def every_output(pytester: pytest.Pytester, result: pytest.RunResult) -> dict[str, str]:
    """The terminal and every file the run was asked to write, by name."""
    return outputs_in(pytester.path, result.stdout.str(), result.stderr.str(), OUTPUTS)


def outputs_in(root: Path, stdout: str, stderr: str, names: Iterable[str]) -> dict[str, str]:
    """The terminal and the files `names` under `root`, every byte (read as UTF-8, a byte
    that is not shown as a replacement character)."""
    texts = {"stdout": stdout, "stderr": stderr}
    for name in names:
        texts[name] = (root / name).read_text(encoding="utf-8", errors="replace")
    return texts


def flat(text: str) -> str:
    """As an echo may return it: any case, any whitespace (HTML and JSON escape nothing
    in these secrets)."""
    return " ".join(text.casefold().split())


def leaks(texts: dict[str, str], secrets: list[str]) -> list[tuple[str, str]]:
    return [(name, secret) for name, text in texts.items() for secret in secrets
            if flat(secret) in flat(text)]


def run_every_output(pytester: pytest.Pytester, workers: str, *args: str) -> pytest.RunResult:
    """The goldset `gs` run with every output asked for (OUTPUTS)."""
    outputs = [f"{flag}={name}" for name, flag in OUTPUTS.items()]
    return run_pytester(pytester, workers, "gs", *outputs, *args)


# --- 1. one run per worker count, shared: a sealed goldset, an echoing judge, every output ---
# The cases of sections 1 and 3 read one run per worker count (`printed`): a sealed goldset
# with slice floors, pinned and then moved, judged by the real RAGAS judge at the loopback
# server, which echoes the gist it was given as a reference; the judge's URL holds a user, a
# password and a key, the model's name a key, the environment keys; the system's error (q4's
# and q5's, one cause) names that URL; questions are asked sequentially and billed; GitHub's
# views are on (job summary, annotations), and every option that writes or prints: each output
# is searched for every secret.


def write_sealed(root: Path, floors: str = JUDGED, *, unanswerable: int = 1) -> Path:
    """The goldset at `root`, its answers (GISTS, NOTES) sealed with KEY; q4 and, with
    `unanswerable=2`, q5 have no answer."""
    spans: dict[str, list[tuple[str, int, int]]] = {
        "q1": [("m1", 2, 3)], "q2": [("m2", 5, 5)], "q3": [("m1", 0, 0), ("m3", 4, 5)]}
    extra = [f"q{4 + i}" for i in range(unanswerable)]
    expected = [{"question_id": q, "gist": GISTS.get(q), "notes": NOTES,
                 "evidence": [{"doc_id": d, "first_unit": a, "last_unit": b}
                              for d, a, b in spans.get(q, [])]}
                for q in [*spans, *extra]]
    questions = question_rows([("q1", "single_doc"), ("q2", "single_doc"),
                               ("q3", "multi_doc"), *((q, "unanswerable") for q in extra)])
    root = write_goldset(root, floors=floors, questions=questions, expected=expected)
    seal_goldset(root, KEY, kdf=Scrypt(log2_n=10, p=1))
    return root


def sealed_goldset(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                   floors: str = JUDGED) -> Path:
    monkeypatch.setenv("RAGATE_SEAL_KEY", KEY)
    return write_sealed(pytester.path / "gs", floors)


def echo(request: dict[str, Any]) -> Reply:
    """A model that answers in prose, repeating what it was given: q1 as it was, q2 in upper
    case across lines, q3 so long that the judge's excerpt cuts the reference in half."""
    data = prompt_input(str(request["messages"][-1]["content"]))
    said = " ".join(str(value) for value in reversed(data.values()))  # the reference first
    qid = next((q for q in GISTS if f"about {q}?" in json.dumps(data)), None)
    if qid == "q2":
        said = "\n   ".join(said.upper().split())
    elif qid == "q3":
        said = "x" * (190 - len(GISTS["q3"]) // 2) + " " + said
    return completion(f"I will not reply in JSON. {said}")


PASSWORD, QUERY_KEY, API_KEY = "S3CRET-pw", "S3CRET-q", "sk-S3CRET-key"
MODEL_KEY = "sk-S3CRET-model-0123456789"  # the model is named `gpt-x-<key>`
ENV_KEY = "sk-S3CRET-env-0123456789"  # OPENAI_API_KEY; RAGATE_JUDGE_API_KEY is API_KEY
HALVES = [gist[: len(gist) // 2 + 4] for gist in GISTS.values()]
SECRETS = [*GISTS.values(), *HALVES, NOTES, KEY, PASSWORD, QUERY_KEY, API_KEY, ENV_KEY,
           MODEL_KEY, "S3CRET", "alice"]


def with_credentials(url: str, password: str = PASSWORD) -> str:
    """The stub's URL with a user and password, and a key as a query parameter."""
    return url.replace("http://", f"http://alice:{password}@") + f"?api_key={QUERY_KEY}"


SLICED = JUDGED + "\n[floors.slices.kind]\nfaithfulness = 0.5\nevidence_recall = 0.1\n"
CI_OUTPUTS = {"comment.md": "--ragate-comment", "metrics.txt": "--ragate-gitlab-metrics",
              "cq.json": "--ragate-codequality"}
PRINTED_OUTPUTS = (*OUTPUTS, "log.txt")
SHARED_OUTPUTS = (*PRINTED_OUTPUTS, *CI_OUTPUTS, "summary.md")
# q4 and q5 fail for one cause, which the terminal says once (`wording/causes.py`)
FAILING_SYSTEM = "import os\n" + SYSTEM.replace(
    "if qid not in PLAN:", "if qid in ('q4', 'q5'):").replace(
    "            return Answer.abstain()",
    '            raise RuntimeError("upstream " + os.environ["LEAKY_URL"] + " is down")')
# a judge and a test of the project's that say what they hold, as careless code does: the
# judge logs and warns the keys it reads and the reference it was given (issue 39 case 5);
# the test logs, prints, warns and fails with a key (a traceback that is no goldset's)
LOUD = '''
import logging
import os
import warnings

import pytest

log = logging.getLogger("loud.judge")


class Loud:
    """The RAGAS judge of --ragate-judge, saying what it holds before each verdict."""

    def __init__(self, judge):
        self.judge = judge

    def __getattr__(self, name):
        return getattr(self.judge, name)

    async def score(self, item, metric):
        log.warning("judging %s with key %s: reference %r", item.question_id,
                    os.environ["OPENAI_API_KEY"], item.reference)
        warnings.warn(f"the reference of {item.question_id} is {item.reference!r} "
                      f"(key {os.environ['RAGATE_JUDGE_API_KEY']})")
        return await self.judge.score(item, metric)


@pytest.fixture(scope="session")
def ragate_judge(pytestconfig):
    from pytest_ragate.judges.select import from_settings
    from pytest_ragate.settings import read_settings
    return Loud(from_settings(read_settings(pytestconfig).judge, Embedder))
'''
# a metric of the project's (issue 48) that quotes the sealed gist it is given in its error,
# as careless code does: q1's verbatim, q2's in upper case
QUOTING = '''

import pytest_ragate as ragate


@ragate.metric("quotes_gist")
def quotes_gist(question, answer, expected):
    if expected and "treasury" in expected:
        raise ValueError(f"the gist was {expected}")
    if expected and "Vogon" in expected:
        raise KeyError(expected.upper())
    return None if expected is None else True
'''
CARELESS_TEST = '''
import logging
import os
import warnings


def test_careless():
    key = os.environ["OPENAI_API_KEY"]
    logging.getLogger("careless").info("calling with %s", key)
    # a record filled in after it was made (`makeLogRecord`: a process pool's, arriving)
    logging.getLogger("pool").handle(logging.makeLogRecord(
        {"name": "pool", "levelno": logging.INFO, "levelname": "INFO",
         "msg": "a worker of the pool calls with %s", "args": (key,)}))
    print("calling with", key)
    warnings.warn(f"careless: {key}")
    assert key == "the key I expected"
'''
# the shared run's keys, which LOUD reads (and the runs after it hold in their environment)
SHARED_ENV = {"RAGATE_SEAL_KEY": KEY, "OPENAI_API_KEY": ENV_KEY, "RAGATE_JUDGE_API_KEY": API_KEY}


def pinned_and_moved(root: Path) -> None:
    """The sealed goldset's evidence pinned (`ragate pin` with its key), then a first turn
    put before m1's: q1's span and q3's first are re-found one turn on (moved)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAGATE_SEAL_KEY", KEY)
        pinned = CliRunner().invoke(main, ["pin", str(root)])
        assert pinned.exit_code == 0, pinned.output
    rows = [{**r, "unit": r["unit"] + (r["doc_id"] == "m1")} for r in corpus_rows()]
    (root / "corpus" / "meetings.jsonl").write_text(
        jsonl([{"doc_id": "m1", "unit": 0, "text": "a new first line"}, *rows]))


@dataclass(frozen=True)
class Printed:
    """What the shared run printed and wrote, by name (SHARED_OUTPUTS), its exit status, its
    results file's header and question rows, the prompts the judge's server received, and
    the folder it ran in (its goldset, conftest and outputs, for the runs that follow it)."""

    texts: dict[str, str]
    ret: int
    header: dict[str, Any]
    rows: dict[str, dict[str, Any]]
    prompts: list[str]
    root: Path


def shared_run(root: Path, workers: str) -> dict[str, Any]:
    """The run at `root` (`Printed`'s fields, as JSON)."""
    (root / "conftest.py").write_text(FAILING_SYSTEM + FIXTURE_JUDGE_CONFTEST + LOUD + QUOTING)
    floors = SLICED.replace(JUDGED, JUDGED + "quotes_gist = 0.5\n")
    (root / "pytest.ini").write_text("[pytest]\n")  # `ragate pin gs` reads root's conftest
    declare([("quotes_gist", "share")])  # sealing it here loads it, floors included
    try:
        pinned_and_moved(write_sealed(root / "gs", floors, unanswerable=2))
    finally:
        declare([])
    (root / "test_careless.py").write_text(CARELESS_TEST)
    with OpenAIStub(echo) as stub:
        url = with_credentials(stub.url)
        done = run_command(
            root, "-p", "no:cacheprovider", "-p", "no:langsmith_plugin", "-n", workers, "-rA",
            "-vv", "-l", "--tb=long", "--log-cli-level=DEBUG", "--log-file=log.txt",
            "--log-file-level=DEBUG", "-o", "junit_logging=all", "-W", "always::UserWarning",
            *(f"{flag}={name}" for name, flag in {**OUTPUTS, **CI_OUTPUTS}.items()),
            "gs", "test_careless.py", f"--ragate-judge=ragas:gpt-x-{MODEL_KEY}",
            "-o", f"ragate_judge_url={url}", "-o", "ragate_judge_cache_dir=verdicts",
            "--ragate-sequential=on",
            "-o", "ragate_judge_price_in=1", "-o", "ragate_judge_price_out=2", **SHARED_ENV,
            LEAKY_URL=url, GITHUB_ACTIONS="true", GITHUB_STEP_SUMMARY=str(root / "summary.md"))
    header = json.loads((root / "r.jsonl").read_text().splitlines()[0])["ragate_results"]
    texts = outputs_in(root, done.stdout, done.stderr, SHARED_OUTPUTS)
    # the judge cache (the folder the docs say to commit for replay): every byte of it, the
    # SQLite index's keys and values included (read as Latin-1: each byte one character)
    cached = sorted(p for p in (root / "verdicts").rglob("*") if p.is_file())
    assert any(p.name == "cache.db" for p in cached), cached
    texts.update({f"verdicts/{p.relative_to(root / 'verdicts')}": p.read_bytes().decode("latin-1")
                  for p in cached})
    return {"texts": texts,
            "ret": done.returncode, "header": header, "rows": rows_of(root / "r.jsonl"),
            "prompts": stub.prompts()}


@pytest.fixture(scope="module")
def printed(workers: str, tmp_path_factory: pytest.TempPathFactory) -> Printed:
    """The shared run of this worker count, made once per session: under `make test`'s own
    xdist the module's cases are spread over both workers, and each would make the module's
    fixture again; the first to come makes it (a lock in the folder both workers' temporary
    folders are in) and the other reads what it left."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # pytest-N, whose popen-gwN are the workers' own
    root, made = base / f"secrets-printed-n{workers}", base / f"secrets-printed-n{workers}.json"
    with FileLock(str(base / f"secrets-printed-n{workers}.lock")):
        if not made.exists():
            shutil.rmtree(root, ignore_errors=True)  # what a run that failed left
            root.mkdir()
            made.write_text(json.dumps(shared_run(root, workers)))
    return Printed(**json.loads(made.read_text()), root=root)


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
def test_a_judge_echoing_a_sealed_gist_leaves_it_in_no_output(printed: Printed,
                                                              workers: str) -> None:
    """The judge was given each gist as its reference, as it may, and echoed it back in prose
    (a parse failure whose excerpt is the reply): the failure keeps `[sealed]` for it, and no
    output shows a gist, its first half, or a note (`test_the_judge_server_alone_...`)."""
    for qid in GISTS:
        why = printed.rows[qid]["judge_failures"]["context_precision"]
        assert why.startswith("parse: ") and "[sealed]" in why, why
    assert printed.ret == pytest.ExitCode.TESTS_FAILED
    # the gate fails for this judge (the shared run fails for other reasons too)
    assert "FAILED gs/ragate.toml::floor[judge_coverage]" in printed.texts["stdout"]


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_defined_metrics_error_quoting_a_gist_keeps_it_sealed(printed: Printed,
                                                               workers: str) -> None:
    """A project's metric that quotes the sealed gist in its error (QUOTING): the rows keep
    the error with `[sealed]` in the gist's place, its floor is not decided, and no output
    shows a gist (`test_the_judge_server_alone_received_the_gists` reads every output)."""
    for qid in ("q1", "q2"):
        why = printed.rows[qid]["custom_errors"]["quotes_gist"]
        assert "[sealed]" in why and not leaks({qid: why}, SECRETS), why
    assert printed.rows["q3"]["custom"] == {"quotes_gist": 1.0}
    floor = next(line for line in printed.texts["stdout"].splitlines()
                 if "floor[quotes_gist]" in line)
    assert "FAILED" in floor or "ERROR" in floor, floor


@pytest.mark.heavy
@WORKERS_SHARED
def test_sequential_asking_and_the_bill_show_no_gist_and_no_credential(
        printed: Printed, workers: str) -> None:
    """The outputs issues 25 and 26 added (the sequential line, the bill, the judged contexts
    a row keeps), from a sealed goldset whose judge echoes the gist, at a URL that holds a
    password: they are in the shared run, whose every output holds no secret
    (`test_the_judge_server_alone_received_the_gists`)."""
    stdout = printed.texts["stdout"]
    assert "every question asked (sequential, seed" in stdout, stdout[-3000:]
    assert "bill:" in stdout, stdout[-3000:]


@pytest.mark.heavy
@WORKERS_SHARED
def test_rejudging_the_shared_runs_results_shows_no_gist_and_no_credential(
        printed: Printed, workers: str, tmp_path: Path, openai_stub: OpenAIStub) -> None:
    """`ragate rejudge` (issue 26) of the shared run's results, with the key, under another
    judge that echoes the gist at a URL that holds a password: in a process of its own, as a
    user runs it, so whatever it logs or warns is in what it printed."""
    shutil.copytree(printed.root, tmp_path / "run")
    openai_stub.script = echo
    rejudged = run_command(tmp_path / "run", "rejudge", "r.jsonl", "--judge",
                           "ragas:stub-model", "--judge-url", with_credentials(openai_stub.url),
                           RAGATE_SEAL_KEY=KEY)
    assert rejudged.returncode in (0, 1), rejudged.stdout + rejudged.stderr
    assert openai_stub.requests  # it judged
    assert leaks({"stdout": rejudged.stdout, "stderr": rejudged.stderr}, SECRETS) == []


@pytest.mark.heavy  # `ragate plan` imports RAGAS (its version names its requests)
def test_the_plan_of_a_sealed_goldset_shows_no_gist(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        recwarn: pytest.WarningsRecorder) -> None:
    """`ragate plan` (issue 26) reads the goldset alone, so no run and no worker count is
    any of its business: in this process, with the key; what it logs and warns is read too
    (in a process of its own that would be on its stderr)."""
    write_sealed(tmp_path / "gs", SLICED)
    monkeypatch.setenv("RAGATE_SEAL_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.DEBUG)
    planned = CliRunner().invoke(main, ["plan", "gs", "--judge", "ragas:stub-model"])
    assert planned.exit_code == 0, planned.output
    assert "mini" in planned.output and "judge requests" in planned.output, planned.output
    warned = "\n".join(str(w.message) for w in recwarn)
    assert leaks({"plan": planned.output, "logs": caplog.text, "warnings": warned},
                 SECRETS) == []


@pytest.mark.heavy
@WORKERS_SHARED
def test_the_ci_views_show_no_gist_and_no_credential(printed: Printed, workers: str) -> None:
    """What issue 36 added (GitHub's job summary and annotations, the pull-request comment,
    GitLab's metrics and Code Quality reports), from a sealed goldset whose judge echoes the
    gist, at a URL that holds a password, and whose system's error (q4's and q5's, said once
    in the terminal) names that URL: neither reaches any of them, and they do show the error
    and the judge's failures."""
    texts, stdout = printed.texts, printed.texts["stdout"]
    commands = [line for line in stdout.splitlines() if line.startswith("::")]
    assert any(line.startswith("::error ") and re.search(r"q[45] and 1 more errored", line)
               for line in commands), commands  # under -n 2, whichever reported first
    assert any(line.startswith("::warning ") and "judge failure" in line for line in commands)
    assert "q4" in texts["summary.md"] and "q4" in texts["cq.json"]
    assert "upstream http://\\*\\*\\*@" in texts["summary.md"]  # the error, its URL masked
    assert re.search(r"ragate: 2 items of gs/ragate\.toml failed for one cause, shown once "
                     r"above at gs/ragate\.toml::q[45]: RuntimeError: upstream http://\*\*\*@",
                     stdout), stdout[-3000:]
    assert leaks({name: texts[name] for name in (*CI_OUTPUTS, "summary.md")}, SECRETS) == []


@WORKERS_SHARED
def test_slice_floors_and_a_judge_change_show_no_gist_and_no_credential(
        printed: Printed, workers: str, pytester: pytest.Pytester,
        monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub) -> None:
    """The outputs the rest of issue 26 added: slice floors (their cases, tables and plot) in
    the shared run; then a run under another judge with the shared run as its baseline (the
    refusal naming both judges and the `ragate rejudge` to run), and one accepting it (the
    history's judge segment), their judge echoing the gist at a URL holding a password."""
    assert "floor[kind=single_doc:faithfulness]" in printed.texts["stdout"]
    shutil.copytree(printed.root, pytester.path, dirs_exist_ok=True)
    # the shared run's system and judge, not LOUD: a run in this process would warn into the
    # warnings summary of the session around it
    pytester.makeconftest(FAILING_SYSTEM + FIXTURE_JUDGE_CONFTEST + QUOTING)
    (pytester.path / "base.jsonl").write_bytes((pytester.path / "r.jsonl").read_bytes())
    openai_stub.script = echo
    url = with_credentials(openai_stub.url)
    for name, value in {**SHARED_ENV, "LEAKY_URL": url}.items():
        monkeypatch.setenv(name, value)
    texts: dict[str, str] = {}
    for accept, says in (((), "not compared across judges"),
                         (("--ragate-accept-judge=ragas:stub-model-2",), "change accepted")):
        again = run_every_output(pytester, workers, "--ragate-judge=ragas:stub-model-2",
                                 "--ragate-baseline=base.jsonl", "-o", f"ragate_judge_url={url}",
                                 "--ragate-cache=off", *accept)
        assert says in again.stdout.str(), again.stdout.str()
        texts.update({f"{accept} {name}": text
                      for name, text in every_output(pytester, again).items()})
    assert '"judge_segment"' in (pytester.path / "h.jsonl").read_text()
    assert leaks(texts, SECRETS) == []


# --- 2. credentials in the judge's URL and key ---------------------------------------------


def refusing(request: dict[str, Any]) -> Reply:
    """A server that refuses q2 naming the key it was sent (as some proxies do), fails q3,
    and answers q1 with prose (a parse failure whose excerpt is the reply)."""
    data = json.dumps(prompt_input(str(request["messages"][-1]["content"])))
    if "q2" in data:
        return error(401, f"Incorrect API key provided: {API_KEY} (Authorization: Bearer "
                          f"{API_KEY})")
    if "q3" in data:
        return error(500, f"upstream http://alice:{PASSWORD}@10.0.0.9/v1?token={QUERY_KEY} "
                          "is down")
    return completion(f"no JSON today; my key is {API_KEY}")


@WORKERS
def test_credentials_of_the_judge_reach_no_output(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, openai_stub: OpenAIStub,
        workers: str) -> None:
    # every verdict metric gated, so each one's failure path (answer relevance's too) is
    # held to the redaction
    write_goldset(pytester.path / "gs", floors=JUDGED + "answer_relevance = 0.1\n")
    pytester.makeconftest(SYSTEM + FIXTURE_JUDGE_CONFTEST)
    openai_stub.script = refusing
    monkeypatch.setenv("RAGATE_JUDGE_API_KEY", API_KEY)
    result = run_every_output(pytester, workers, "--ragate-judge=ragas:stub-model",
                              "-o", f"ragate_judge_url={with_credentials(openai_stub.url)}",
                              "--ragate-cache=off")
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert set(rows["q2"]["judge_failures"]) == {"faithfulness", "context_precision",
                                                 "answer_relevance"}
    http = rows["q2"]["judge_failures"]["faithfulness"]
    assert http.startswith("http: stub-model at http://***@127.0.0.1:") and "HTTP 401" in http
    assert "api_key=***" in http and "Authorization: ***" in http, http
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    secrets = ["S3CRET", "alice"]
    assert leaks(every_output(pytester, result), secrets) == []


def test_the_verdict_cache_holds_no_credential_and_outlives_its_rotation(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        openai_stub: OpenAIStub) -> None:
    """The cache key is made of what decides a verdict (model, parameters, prompt, inputs),
    not of where the model is served or with which credential: rotating a password must not
    spend the cache, and the cache folder must not hold the password."""
    answers = {"answer to a1: twelve euros": GOOD}
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n",
                  questions=[{"question_id": "a1", "kind": "single_doc",
                              "question": "What about a1?"}],
                  expected=[{"question_id": "a1", "gist": "gist of a1", "evidence": [
                      {"doc_id": "m1", "first_unit": 2, "last_unit": 3}]}])
    pytester.makeconftest(TWELVE + FIXTURE_JUDGE_CONFTEST)
    openai_stub.script = ragas_script(answers)
    monkeypatch.setenv("RAGATE_JUDGE_API_KEY", API_KEY)
    first = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "gs", "--ragate-judge=ragas:stub-model",
        "-o", f"ragate_judge_url={with_credentials(openai_stub.url)}",
        "-o", "ragate_judge_cache_dir=verdicts")
    assert first.ret == pytest.ExitCode.OK
    stored = b"".join(p.read_bytes() for p in (pytester.path / "verdicts").rglob("*")
                      if p.is_file())
    assert stored and b"S3CRET" not in stored and b"alice" not in stored
    asked = len(openai_stub.requests)
    # an index entry as ragate wrote them before issue 46: its key named the judge in full
    with diskcache.Cache(str(pytester.path / "verdicts")) as cache:
        cache.set(INDEX_PREFIX + json.dumps(["mini", "a0", 1, f"ragas:gpt-x-{MODEL_KEY}@t=0"]),
                  {"keys": {}, "stamp": "s", "sentences": [], "contexts": []})
        cache.delete(INDEX_VERSION)
    monkeypatch.setenv("RAGATE_JUDGE_API_KEY", "sk-rotated-key")
    again = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "gs", "--ragate-judge=ragas:stub-model",
        "-o", f"ragate_judge_url={with_credentials(openai_stub.url, 'rotated-pw')}",
        "-o", "ragate_judge_cache_dir=verdicts", "--ragate-cache=replay")
    assert again.ret == pytest.ExitCode.OK
    assert len(openai_stub.requests) == asked
    said = [line for line in again.outlines if "re-keyed" in line]
    assert said == [f"ragate: judge cache {pytester.path / 'verdicts'}: 1 index entry re-keyed "
                    "by the judge's redacted identity (their keys named the judge in full, a "
                    "credential in its name included)"]
    stored = b"".join(p.read_bytes() for p in (pytester.path / "verdicts").rglob("*")
                      if p.is_file())
    assert b"S3CRET" not in stored and b"gpt-x-***@t=0 sha256:" in stored


# A judge of the user's own whose id names its endpoint, credentials and all, and a system
# that fails naming the service it could not reach: provenance lines and error messages.
OWN_PARTS = '''
import pytest
from pytest_ragate import Answer, Citation, Context
from pytest_ragate.judges import JudgeFailure

JUDGE_URL = "https://bob:S3CRET-j@judge.example/v1?api_key=S3CRET-k"

@pytest.fixture(scope="session")
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid == "q3":
            raise ConnectionError("cannot reach http://svc:S3CRET-s@chroma.local:8000/"
                                  "?token=S3CRET-t")
        if qid == "q4":
            return Answer.abstain()
        ctx = Context(context_id="c1", doc_id="m1", first_unit=2, last_unit=3, text="...",
                      distance=0.2)
        return Answer(text="an answer", contexts=[ctx], citations=[Citation(context_id="c1")])
    return answer

class OwnJudge:
    judge_id = f"own@{JUDGE_URL}"
    metrics = ("faithfulness",)
    def prompt_hash(self, metric):
        return "v1"
    async def score(self, item, metric):
        if item.question_id == "q2":
            raise JudgeFailure("http", f"{JUDGE_URL}: HTTP 503")
        return 0.9

@pytest.fixture(scope="session")
def ragate_judge():
    return OwnJudge()
'''


@WORKERS
def test_an_own_judges_id_and_a_systems_error_show_no_credential(
        pytester: pytest.Pytester, workers: str) -> None:
    write_goldset(pytester.path / "gs", floors="[floors]\nfaithfulness = 0.5\n")
    pytester.makeconftest(OWN_PARTS)
    result = run_every_output(pytester, workers)
    rows = {r["question_id"]: r for r in results_rows(pytester.path / "r.jsonl")}
    assert rows["q1"]["judge"] == "own@https://***@judge.example/v1?api_key=***"
    assert rows["q2"]["judge_failures"]["faithfulness"] == (
        "http: https://***@judge.example/v1?api_key=***: HTTP 503")
    assert rows["q3"]["error"] == ("ConnectionError: cannot reach http://***@chroma.local:8000/"
                                   "?token=***")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # q3 errored
    assert leaks(every_output(pytester, result), ["S3CRET", "bob:", "svc:"]) == []


# --- 3. everything pytest prints while ragate runs: logs, warnings, tracebacks, headers -----
# The shared run's (`printed`, section 1): with -l, --tb=long, live logs at DEBUG, a log file,
# JUnit's logs and every UserWarning shown.


@pytest.mark.heavy  # its shared run is a process of its own, not pytester's
@WORKERS_SHARED
def test_the_judge_server_alone_received_the_gists(printed: Printed, workers: str) -> None:
    """A sealed answer leaves the process only as a judge's reference: the server got each
    judged question's gist, and no output, log, warning or byte of the judge cache shows any
    secret (a key in the model's name, in the URL, in the environment), nor where the pinned
    evidence that moved is now."""
    assert printed.ret == pytest.ExitCode.TESTS_FAILED  # test_careless; nothing was judged
    references = [p for p in printed.prompts if '"title": "ContextPrecisionOutput"' in p]
    assert all(any(GISTS[q] in p for p in references) for q in GISTS), references
    assert leaks(printed.texts, SECRETS) == []
    moved = [(name, said.group()) for name in ("stdout", "stderr", *PRINTED_OUTPUTS)
             for said in re.finditer(r"evidence moved[^\"&<\n]*", printed.texts[name])]
    assert {name for name, _ in moved} >= {"stdout", "junit.xml", "r.jsonl", "r.md", "r.html"}
    assert {said for _, said in moved} == {  # its pinned spans moved: counted, never placed
        "evidence moved: 1 pinned span re-found at other units (sealed)"}, moved


@pytest.mark.heavy
@WORKERS_SHARED
def test_the_judge_cache_holds_no_plain_digest_of_a_sealed_questions_judge_input(
        printed: Printed, workers: str, tmp_path: Path) -> None:
    """The adversary holding the committed cache folder and the results file hashes a guess
    of each sealed gist (here the gist itself) with the question, answer and contexts into
    the verdict keys and index stamp a plaintext goldset's would have: none is in any byte of
    the folder. The keys the index does hold are those keyed with the goldset's digest key
    (so the adversary's computation is the run's, bar the key)."""
    digest_key = open_sealed_keyed(printed.root / "gs", KEY)[2]
    folder = "".join(t for n, t in printed.texts.items() if n.startswith("verdicts/"))
    shutil.copytree(printed.root / "verdicts", tmp_path / "verdicts")
    params = sampling_params()
    judge = Judged(judge_id=ragas_judge_id(f"gpt-x-{MODEL_KEY}", params), params=params)
    with diskcache.Cache(str(tmp_path / "verdicts")) as cache:
        for qid, gist in GISTS.items():
            row = printed.rows[qid]
            entry = read_entry(cache.get(index_key("mini", qid, 1, judge.judge_id)))
            assert entry is not None and entry.keys, qid
            judge.prompts = {m: cache.get(memo_key(prompt_version(m, entry.embedder)))
                             for m in entry.keys}
            seen = JudgeInput(qid, row["question"], row["answer_text"], tuple(
                Context.model_validate(c) for c in row["judged_contexts"]), reference=gist)
            for key in (None, digest_key):
                item = dataclasses.replace(seen, digest_key=key)
                keys = {m: cache_key(row["eval_version"], judge, m, item) for m in entry.keys}
                stamped = stamp(eval_version=row["eval_version"], judge_id=judge.judge_id,
                                params=params, question=row["question"], reference=gist,
                                repeat=1, key=key, prompt_versions={
                                    m: prompt_version(m, entry.embedder) for m in entry.keys})
                if key is None:
                    assert [d for d in (*keys.values(), stamped) if d in folder] == [], qid
                else:
                    assert (keys, stamped) == (entry.keys, entry.stamp), qid


@dataclass
class Judged:
    """The judge as its cache keys name it: what an adversary reads off the folder and the
    results file (its id, its sampling, each metric's prompt hash from the memo)."""

    judge_id: str
    params: dict[str, Any]
    prompts: dict[str, str] = dataclasses.field(default_factory=dict)

    def prompt_hash(self, metric: str) -> str:
        return self.prompts[metric]


@pytest.mark.heavy
@WORKERS_SHARED
def test_live_logs_show_httpx_and_openai_records_masked(printed: Printed, workers: str,
                                                         ) -> None:
    """Issue 38 case 6: at INFO httpx logged `POST http://alice:PW@…`, at DEBUG openai dumped
    the request with the sealed gist. The records are shown (in one process, live), masked."""
    if workers == "0":  # an xdist worker's live log is not the terminal's
        stdout = printed.texts["stdout"]
        assert re.search(r"HTTP Request: POST http://\*\*\*@127\.0\.0\.1:\d+/v1\?api_key=\*\*\*",
                         stdout), stdout[-3000:]
        assert re.search(r"Request options: .*\[sealed\]", stdout), stdout[-3000:]
    assert "HTTP Request: POST http://***@127.0.0.1:" in printed.texts["log.txt"]
    assert leaks({k: printed.texts[k] for k in ("stdout", "log.txt")}, SECRETS) == []


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_judges_logs_and_warnings_show_no_key_and_no_gist(printed: Printed, workers: str,
                                                            ) -> None:
    """Issue 39 case 5: what a judge logs and warns passes through the redaction every
    output does: in the log file, and, warned from its thread between tests, on stderr (a
    test's warning, in pytest's warnings summary, sent by an xdist worker under -n 2)."""
    assert re.search(r"judging q\d with key \*\*\*: reference '\[sealed\]'",
                     printed.texts["log.txt"]), printed.texts["log.txt"][-3000:]
    warned = printed.texts["stdout"].partition("warnings summary")[2] + printed.texts["stderr"]
    assert re.search(r"the reference of q\d is '\[sealed\]' \(key \*\*\*\)", warned), warned
    assert "UserWarning: careless: ***" in warned, warned
    assert leaks({"warnings": warned}, SECRETS) == []


@pytest.mark.heavy
@WORKERS_SHARED
def test_a_failing_tests_traceback_log_and_output_show_no_key(printed: Printed, workers: str,
                                                              ) -> None:
    """A test that is no goldset's fails with the key in its assertion, its locals (-l), its
    captured log and output: each is shown masked, in the terminal and JUnit."""
    stdout, junit = printed.texts["stdout"], printed.texts["junit.xml"]
    assert "AssertionError: assert '***' == 'the key I expected'" in stdout, stdout[-3000:]
    assert "calling with ***" in junit
    assert "a worker of the pool calls with ***" in junit
    assert ENV_KEY not in stdout + junit


INTERNAL = '''
import os

def pytest_runtest_logfinish(nodeid):
    key = os.environ["OPENAI_API_KEY"]
    if nodeid.endswith("::q2"):
        raise RuntimeError(f"cannot tell {key}")
'''


@WORKERS
def test_an_internalerror_shows_no_key(pytester: pytest.Pytester,
                                       monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """A hook of the project's that fails, its message and its locals (--fulltrace -l)
    holding a key: under -n 2 the worker's INTERNALERROR is sent to the controller as text,
    masked before it is."""
    write_goldset(pytester.path / "gs", floors="[floors]\nevidence_recall = 0.1\n")
    pytester.makeconftest(SYSTEM + INTERNAL)
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    result = run_pytester(pytester, workers, "gs", "--fulltrace", "-l")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    text = result.stdout.str() + result.stderr.str()
    assert re.search(r"INTERNALERROR> .*RuntimeError: cannot tell \*\*\*", text), text
    assert leaks({"terminal": text}, [ENV_KEY, "S3CRET"]) == []


def test_a_run_without_goldsets_prints_what_it_would_without_ragate(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ragate does not run there: nothing a test logs, warns or fails with is changed."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    pytester.makepyfile(test_plain='''
import logging, os, warnings

def test_plain(caplog):
    factory = logging.getLogRecordFactory()
    logging.getLogger("plain").warning("token=abc %s", os.environ["OPENAI_API_KEY"])
    assert caplog.messages == [f"token=abc {os.environ['OPENAI_API_KEY']}"]
    assert factory is logging.LogRecord
    warnings.warn("password=hunter2")
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*UserWarning: password=hunter2"])


@pytest.mark.heavy
@WORKERS_SHARED
def test_the_results_header_masks_a_key_in_the_models_name(printed: Printed, workers: str,
                                                           ) -> None:
    """As the rows, JUnit and the reports do: the header's settings keep `***` for it; and
    the judge cache's index names the judge by its identity (issue 46 item 2), its id masked
    and a digest that tells judges apart (`test_the_judge_server_alone_received_the_gists`
    finds no secret in any byte of the folder)."""
    assert printed.header["settings"]["judge"] == "ragas:gpt-x-***"
    index = printed.texts["verdicts/cache.db"]
    assert re.search(r'index/\["mini", "q1", 1, "ragas:gpt-x-\*\*\*@[^"]* sha256:[0-9a-f]{16}"\]',
                     index), re.findall(r"index/[^\]]*\]", index)


# --- 4. a collection error after the corpus changed under a sealed goldset ------------------


SHRUNK = [row for row in corpus_rows() if not (row["doc_id"] == "m2" and row["unit"] > 2)]


@pytest.mark.parametrize("change", ["corpus", "kind"])
def test_a_collection_error_of_a_sealed_goldset_does_not_quote_its_evidence(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    """q2's sealed evidence is m2 turn 5: the corpus loses it, or the (public) questions file
    makes q2 a cross-meeting question, which its one-meeting evidence cannot be."""
    root = sealed_goldset(pytester, monkeypatch, floors="[floors]\nevidence_recall = 0.1\n")
    if change == "corpus":
        (root / "corpus" / "meetings.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in SHRUNK))
    else:
        questions = (root / "questions.jsonl").read_text().replace(
            '"q2", "kind": "single_doc"', '"q2", "kind": "multi_doc"')
        (root / "questions.jsonl").write_text(questions)
    pytester.makeconftest(SYSTEM)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "gs")
    validated = CliRunner().invoke(main, ["validate", str(root)])
    assert result.ret == pytest.ExitCode.INTERRUPTED and validated.exit_code == 1
    for text in (result.stdout.str(), validated.output):
        assert re.search(r"expected\.sealed\.json: \[q2\] evidence: .*sealed", text), text
        assert not re.search(r"m2|turns? 5\b|\[.m\d.\]", text), text


# --- what pytest prints, masked where it is made (items/printed.py) ---------------------------


def masked(text: str) -> str:
    return Redactor(SEALED_TEXTS, known=("sk-S3CRET-key",))(text)


def test_a_log_record_is_masked_in_its_message_exception_and_stack() -> None:
    try:
        raise ValueError("bad key sk-S3CRET-key")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "asked %s about %r", ("twelve", GISTS["q3"]),
            sys.exc_info(), sinfo="Stack (most recent call last): key=sk-S3CRET-key")
    redact_record(record, masked)
    assert record.getMessage() == "asked [sealed] about '[sealed]'"
    shown = logging.Formatter().format(record)
    assert "ValueError: bad key ***" in shown and "S3CRET" not in shown
    assert record.stack_info == "Stack (most recent call last): key=***"


def test_a_log_record_without_a_secret_is_left_as_made() -> None:
    record = logging.makeLogRecord({"msg": "asked %s", "args": ("q1",)})
    redact_record(record, masked)
    assert (record.msg, record.args) == ("asked %s", ("q1",))


def test_a_log_record_whose_format_is_broken_is_masked_as_logging_will_show_it() -> None:
    record = logging.makeLogRecord({"msg": "asked %d", "args": ("sk-S3CRET-key",)})
    redact_record(record, masked)
    assert record.getMessage() == "asked %d ('***',)"


class Careful(UserWarning):
    def __str__(self) -> str:
        return f"careful: {self.args[0]}"


@pytest.mark.parametrize("warning", [UserWarning(f"ref {GISTS['q3']}"),
                                     Careful(f"ref {GISTS['q3']}"), f"ref {GISTS['q3']}"],
                         ids=["warning", "own str", "text"])
def test_a_warning_is_masked_in_what_pytest_shows_and_xdist_sends(warning: Any) -> None:
    found = warnings.WarningMessage(warning, UserWarning, "x.py", 1)
    redact_warning(found, masked)
    assert "[sealed]" in str(found.message) and "Marvin" not in str(found.message)
    if isinstance(found.message, Warning):  # xdist builds a worker's warning from its args
        assert found.message.args == ("ref [sealed]",)


def test_the_judges_client_keys_and_a_key_in_the_models_name_are_known() -> None:
    env = {"OPENAI_ADMIN_KEY": "admin-S3CRET", "OPENAI_CUSTOM_HEADERS": "X-Key: hdr-S3CRET\nX: 1",
           "OPENAI_BASE_URL": "https://u:base-S3CRET@h/v1"}
    known = known_credentials(env, texts=(f"ragas:gpt-x-{MODEL_KEY}", "ragas:gpt-4o"))
    assert known == ("admin-S3CRET", "hdr-S3CRET", "base-S3CRET", MODEL_KEY)


@pytest.mark.parametrize("call", ["refused", "accepted", "misnamed"])
def test_a_judge_change_names_the_judges_as_given_with_their_keys_masked(call: Any) -> None:
    """The spec and the accepted judge come from the command line, not from a row: the
    sentences that name them mask a key in a model's name as the rows do."""
    spec = f"ragas:gpt-x-{MODEL_KEY}"
    change = JudgeChange(baseline=("ragas:stub-model@temperature=0",),
                         current=("ragas:gpt-x-***@temperature=0",), call=call, spec=spec,
                         accept=spec, results="base.jsonl")
    said = [judge_changed("faithfulness", change, "the baseline"),
            accept_judge_unneeded(spec), accept_judge_misnamed(spec, [spec])]
    assert all("gpt-x-***" in text and "S3CRET" not in text for text in said), said


def test_a_results_headers_knobs_mask_a_key_as_given_on_the_command_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's settings and deciding knobs, which `ragate decide` compares with its own
    through the same functions (so a masked header still agrees with an unmasked run)."""
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    spec = f"ragas:gpt-x-{MODEL_KEY}"
    settings = Settings(judge=JudgeSettings(judge=spec, judge_model=f"gpt-{ENV_KEY}-env"),
                        gate=GateSettings(accept_judge=spec, baseline="base.jsonl"))
    knobs = {**row_settings(settings), **decision_settings(settings)}
    assert (knobs["judge"], knobs["accept_judge"]) == ("ragas:gpt-x-***", "ragas:gpt-x-***")
    assert knobs["judge_model"] == "gpt-***"  # an sk- key runs to its last word character
    assert "S3CRET" not in json.dumps(knobs)
    assert knobs["baseline"] == "base.jsonl" and knobs["top_k"] == 5  # the rest as it was


# --- the redactor itself --------------------------------------------------------------------


SEALED_TEXTS = (GISTS["q3"], "twelve")


@pytest.mark.parametrize(("text", "kept"), [
    ("got 'Marvin signs both budget memos personally'", "got '[sealed]'"),
    ("MARVIN\n  signs BOTH budget-memos, personally!", "[sealed]!"),  # case, spaces, signs
    ('{"answer": "Marvin\\nsigns both budget memos personally"}', '{"answer": "[sealed]"}'),
    ("xxx Marvin signs bo…'", "xxx [sealed]…'"),  # an excerpt cut inside the gist
    ("xxx Marv…", "xxx [sealed]…"),
    ("Marvin signs, then leaves", "Marvin signs, then leaves"),  # not the whole text, no cut
    ("twelve euros, q12, twelveth", "[sealed] euros, q12, twelveth"),  # whole words only
])
def test_sealed_texts_are_found_by_their_words(text: str, kept: str) -> None:
    assert Redactor(SEALED_TEXTS)(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("at http://alice:S3CRET-pw@host:8000/v1?api_key=S3CRET-q&x=1: HTTP 500",
     "at http://***@host:8000/v1?api_key=***&x=1: HTTP 500"),
    ("token=abc; password = hunter2, 'client_secret': 'zz'",
     "token=***; password = ***, 'client_secret': '***'"),
    ("Authorization: Basic YWxpY2U6czNjcmV0 sent", "Authorization: *** sent"),
    ("header Bearer sk-live-123456 refused", "header Bearer *** refused"),
    ("key sk-S3CRET-key echoed", "key *** echoed"),  # known to the process
    ("a key sk-proj-Abc123def456ghi789 shown", "a key *** shown"),  # shaped like one
    ("ragas:m@temperature=0,max_tokens=256,seed=7", "ragas:m@temperature=0,max_tokens=256,seed=7"),
    ("the Bearer of bad news; cache key is 12", "the Bearer of bad news; cache key is 12"),
])
def test_credentials_are_masked_and_nothing_else(text: str, kept: str) -> None:
    known = known_credentials({"RAGATE_JUDGE_API_KEY": "sk-S3CRET-key", "OPENAI_API_KEY": "x"},
                              ["http://alice:S3CRET-pw@host/v1?api_key=S3CRET-q"])
    assert known == ("sk-S3CRET-key", "S3CRET-pw", "S3CRET-q")  # "x" is too short to search
    assert Redactor(known=known)(text) == kept


def test_the_cache_key_ignores_the_values_of_a_urls_credentials_only() -> None:
    class Judge:
        def __init__(self, url: str) -> None:
            self.judge_id, self.params = f"mine@{url}", {"url": url}

        def prompt_hash(self, metric: str) -> str:
            return "p"

    item = JudgeInput("q1", "What?", "It is.", ())
    keys = {url: cache_key("1", Judge(url), "faithfulness", item) for url in (
        "https://alice:pw1@h/v1?api_key=k1", "https://bob:pw2@h/v1?api_key=k2",
        "https://h/v1?api_key=k3", "https://other/v1?api_key=k1")}
    alike, no_user, other = (keys[url] for url in list(keys)[1:])
    assert keys["https://alice:pw1@h/v1?api_key=k1"] == alike  # only the values changed
    assert len({alike, no_user, other}) == 3  # a URL without a user, another host


def test_a_sealed_answer_that_does_not_validate_is_named_not_quoted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sealing validates every answer, so this takes a sealed file written by hand (or by a
    version of ragate with other rules): q2's span re-sealed running backwards, turn 7 to 5."""
    root = write_goldset(tmp_path / "gs")
    seal_goldset(root, KEY, kdf=Scrypt(log2_n=10, p=1))
    path = root / "expected.sealed.json"
    sealed = read_sealed(path)
    cipher = aesgcm(sealed.kdf.derive(KEY)[:32])
    plain = b'{"question_id": "q2", "gist": "g", "evidence": [{"doc_id": "m2", ' \
            b'"first_unit": 7, "last_unit": 5}]}\n'
    nonce = b64(b"\x00" * 12)
    aad = associated_data(sealed.layout, 1, len(sealed.answers), "q2", True)
    ciphertext = b64(cipher.encrypt(b"\x00" * 12, pad(plain), aad))
    answers = list(sealed.answers)
    answers[1] = answers[1].model_copy(update={
        "nonce": nonce, "ciphertext": ciphertext,
        "digest": answer_digest("q2", True, nonce, ciphertext)})
    draft = sealed.model_copy(update={"answers": answers})
    path.write_text(draft.model_copy(update={"manifest_digest": manifest_digest(draft)})
                    .model_dump_json())
    monkeypatch.setenv("RAGATE_SEAL_KEY", KEY)
    validated = CliRunner().invoke(main, ["validate", str(root)])
    assert validated.exit_code == 1
    assert "[q2] evidence[0].last_unit: does not validate (not shown: it is sealed)" \
        in validated.output
    assert not re.search(r"turn [57]|m2", validated.output), validated.output


# --- 5. the goldset commands on a sealed goldset opened with its key ------------------------
# `ragate validate`, `pin`, `reanchor` (dry run and --write) and `audit` (text and json, its
# embedding on) in this process: no output and no file they write (the audit's vector cache
# among them) shows a gist, a note, or where the sealed evidence is (a document it points
# into, its units, its pinned text).

PLACED = re.compile(r"'m\d'|\bm\d\b.{0,12}\b(?:turns?|units?) \d|evidence in m\d|"
                    r"budget is \d", re.I)


class WordVectors:
    """The audit's embedder isolated from the model: a text's vector is its hashed words (the
    cache it fills is the real one)."""

    model_id, encoder_id = "words", "words"
    given: ClassVar[list[str]] = []  # every text embedded

    def __init__(self, **_: Any) -> None:
        pass

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        WordVectors.given += texts
        rows = np.zeros((len(texts), 384), np.float32)
        for row, text in zip(rows, texts, strict=True):
            for word in re.findall(r"\w+", text.casefold()):
                row[zlib.crc32(word.encode()) % 384] += 1
            row /= max(float(np.linalg.norm(row)), 1.0)
        return rows


@pytest.mark.heavy  # the audit's vector cache is builtin_system/retrieval's, which imports Chroma
def test_the_goldset_commands_show_no_gist_and_no_place_and_keep_none_on_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the module the audit imports its embedder from (`sys.modules`'), not the package's
    # attribute, which an in-process pytest run before this test may have left unset
    monkeypatch.setattr(importlib.import_module("pytest_ragate.builtin_system.retrieval"),
                        "Embedder", WordVectors)
    monkeypatch.setattr(WordVectors, "given", [])
    monkeypatch.setenv("RAGATE_SEAL_KEY", KEY)
    # m1 turn 2 holds one of q1's gist words (so the embedding decides whether it supports
    # it); q3's evidence is a whole document (too wide); m4 is no answer's evidence
    rows = [{**r, "text": "the treasury was discussed"} if (r["doc_id"], r["unit"]) == ("m1", 2)
            else r for r in corpus_rows({"m1": 12, "m2": 12, "m3": 6, "m4": 3})]
    spans = {"q1": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}],
             "q2": [{"doc_id": "m2", "first_unit": 5, "last_unit": 5}],
             "q3": [{"doc_id": "m3"}, {"doc_id": "m2", "first_unit": 1,
                                           "last_unit": 1}], "q4": []}
    root = write_goldset(tmp_path / "gs", corpus=rows, expected=[
        {"question_id": q, "gist": GISTS.get(q), "notes": NOTES, "evidence": evidence}
        for q, evidence in spans.items()])
    seal_goldset(root, KEY, kdf=Scrypt(log2_n=10, p=1))
    said: dict[str, str] = {}

    def ragate(name: str, *args: str) -> None:
        said[name] = CliRunner().invoke(main, [*args, str(root)]).output

    audit = ("audit", "--cache", str(tmp_path / "cache"))
    ragate("pin", "pin")
    ragate("audit", *audit)
    assert any("forty quatloos" in text for text in WordVectors.given)  # q1's gist embedded
    assert "1 document is the evidence of no question" in said["audit"]
    assert "an evidence span is a whole document" in said["audit"]
    # m1 gains a first turn (q1 moves), m2 turn 1 is edited (q3 is stale)
    moved = [{**r, "unit": r["unit"] + (r["doc_id"] == "m1")} for r in rows]
    moved[13]["text"] = "an edited line"
    (root / "corpus" / "meetings.jsonl").write_text(
        jsonl([{"doc_id": "m1", "unit": 0, "text": "a new first line"}, *moved]))
    for name, args in {"validate": ("validate",), "reanchor": ("reanchor",),
                       "audit json": (*audit, "--format", "json"),
                       "reanchor --write": ("reanchor", "--write"),
                       "audit again": (*audit, "--no-embed")}.items():
        ragate(name, *args)
    assert "q1: evidence moved: 1 pinned span" in said["validate"]
    assert "q3: stale evidence: 1 pinned span" in said["reanchor"]
    assert "re-anchored 1 span" in said["reanchor --write"]
    files = {str(p.relative_to(tmp_path)): p.read_text(encoding="utf-8", errors="replace")
             for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".onnx"}
    assert any("queries" in name for name in files)  # the cache the audit keeps
    assert leaks({**said, **files}, [*GISTS.values(), *HALVES, NOTES, KEY]) == []
    assert [(name, m.group()) for name, text in said.items()
            if (m := PLACED.search(text))] == []


def test_a_sealed_question_gives_a_regression_no_evidence_document_to_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A regression against a changed corpus names the questions whose evidence documents
    changed (`corpus_note`): a sealed goldset's members, opened with the key, carry none."""
    monkeypatch.setenv("RAGATE_SEAL_KEY", KEY)
    for root, sealed in ((write_goldset(tmp_path / "plain"), False),
                         (write_sealed(tmp_path / "sealed"), True)):
        members = [Member.asked(c, None) for c in load_goldset(root).cases]
        assert all(c.expected is not None for c in load_goldset(root).cases)
        assert any(m.evidence_docs for m in members) is not sealed, members
