"""`--ragate-history PATH`: one JSON line per goldset run, appended, never rewritten.

A line is written whole or not at all: under a lock (`lock_path`), with a single `os.write`
on a descriptor opened `O_APPEND`, then `fsync`; a short or interrupted write is truncated
back before the lock is released. Readers skip, with a warning, any line they cannot parse
(a partial line left by some other tool or a crash), and a new line never fuses with such a
line: it starts with a newline when the file does not end with one.

With `RAGATE_RESULTS_KEY` set, each line carries its signature as its last member
(`signing.py`), which a baseline read from the history holds it to (`saved_runs.py`).

Runs are compared only within one goldset and one `eval_version`: a new `eval_version` means
the questions or the scoring changed, so its figures are listed as not comparable.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pytest_ragate.answer import Knob
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import anchor_name
from pytest_ragate.outputs import signing
from pytest_ragate.scoring import flips
from pytest_ragate.scoring.floor import floor_name
from pytest_ragate.scoring.pairing import corpus_change, scored_metrics
from pytest_ragate.scoring.records import (
    Bill,
    QuestionRecord,
    QuestionScores,
    Tally,
    bill_of,
    fmt_num,
    tally,
)
from pytest_ragate.scoring.registry import METRICS
from pytest_ragate.settings import DEFAULT_FLIP_WINDOW
from pytest_ragate.wording.pins import corpus_changed

FORMAT = 1
LOCK_TIMEOUT = 60.0  # seconds a writer waits for another one before giving up
GIT_TIMEOUT = 3.0
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


class HistoryWarning(UserWarning):
    """A history line that could not be read (skipped, never fatal)."""


class HistoryError(Exception):
    """The history could not be appended to (lock timeout, disk full, ...). Nothing was
    written: the file is as it was."""


class Figure(BaseModel):
    """One metric over a population: `value = k / n` (n counts the metric's unit)."""

    model_config = ConfigDict(extra="ignore")

    value: float | None
    k: int | float
    n: int
    failures: int = 0  # judge failures: rows that should count but got no verdict

    @classmethod
    def of(cls, t: Tally) -> Figure:
        return cls(value=t.value, k=t.k, n=t.n, failures=t.failures)


def _unset(value: object) -> bool:
    """Left out of a line: a field at its empty value, as lines before it existed say."""
    return not value


def _none(value: object) -> bool:
    return value is None


class FloorOutcome(BaseModel):
    model_config = ConfigDict(extra="ignore")

    min: float  # the bound: from below, or from above when `upper`
    outcome: str
    # `{max = …}`; left out of the line when False, as before it existed
    upper: bool = Field(False, exclude_if=_unset)
    # of a judged metric (its outcome is the judge's too); left out when False. A line
    # written before it existed says False: its floors count across a judge change
    judged: bool = Field(False, exclude_if=_unset)


class AgreementFigure(BaseModel):
    """The judge against a metric's human labels in one run (scoring/agreement.py)."""

    model_config = ConfigDict(extra="ignore")

    statistic: str  # kappa or Spearman
    value: float | None
    interval: tuple[float, float] | None = None
    n: int
    missing: list[str] = Field(default_factory=list)  # labelled, without a verdict
class Observed(BaseModel):
    """A question's or an anchor's outcome in one run, and the digest of its definition then
    (`scoring/flips.py`): what flip counting reads."""

    model_config = ConfigDict(extra="ignore")

    outcome: str
    digest: str


class JudgeSegment(BaseModel):
    """A judge change this run accepted (`--ragate-accept-judge`): the judge whose segment of
    the history starts here, and the baseline's judges it replaces. Flips of judged floors
    are not counted across it."""

    model_config = ConfigDict(extra="ignore")

    accepted: list[str]
    replaces: list[str]


class HistoryLine(BaseModel):
    """One goldset run. Unknown fields are ignored so older readers accept newer lines."""

    model_config = ConfigDict(extra="ignore")

    format: int = FORMAT
    time: datetime  # UTC, serialised as 2025-01-31T12:00:00Z
    git_sha: str | None = None
    goldset: str
    eval_version: str
    judges: list[str] | None = None
    knobs: dict[str, Knob | list[Knob]] = Field(default_factory=dict)
    questions: int = 0
    errors: int = 0
    skipped: int = 0
    metrics: dict[str, Figure] = Field(default_factory=dict)
    by_kind: dict[str, dict[str, Figure]] = Field(default_factory=dict)
    floors: dict[str, FloorOutcome] = Field(default_factory=dict)
    scores: dict[str, QuestionScores] = Field(default_factory=dict)  # by question id: what
    # a later run is paired with (--ragate-baseline); absent from lines before this field
    # since the gate fails closed (absent from older lines):
    route: str | None = None  # ragate.toml's node id, or a @ragate.goldset test's
    status: str | None = None  # what the reports' badge said (`GoldsetRun.status`): "passed",
    # "failed", or "nothing_ran", "partial", "not_decided"
    population: int | None = None  # questions collected
    gaps: dict[str, list[str]] = Field(default_factory=dict)  # gap kind -> question ids
    system: str | None = None  # what answered, where it came from
    retriever: str | None = None
    judge_from: str | None = None
    agreement: dict[str, AgreementFigure] = Field(default_factory=dict)  # by judged metric
    # for flips across runs (absent from lines before them, which flip counting passes over):
    outcomes: dict[str, Observed] | None = None  # by question id
    anchors: dict[str, Observed] | None = None  # by anchor id
    # times each question was asked; left out when once. With repeats `questions` counts
    # questions, the metrics every answer, and `scores` holds each question's first repeat
    # (a baseline pairs one run of a question with one)
    repeats: int = Field(1, exclude_if=lambda repeats: repeats == 1)
    # a sequential run (`--ragate-sequential`): its seed and budget, how many questions it
    # asked of how many, and whether it stopped early; left out of every other line
    sequential: dict[str, int | float | bool] | None = Field(None, exclude_if=_none)
    # the run's bill totals (latency p50/p95, tokens, requests, cost); absent from lines of
    # runs that measured nothing, and from lines before it existed
    bill: Bill | None = Field(None, exclude_if=_none)
    # a judge change accepted in this run: left out of every other line, and absent from
    # lines before it existed
    judge_segment: JudgeSegment | None = Field(None, exclude_if=_none)
    # each corpus document's digest, by id: the next run, and a baseline read from this line,
    # say when the corpus changed; absent from lines before it existed
    corpus: dict[str, str] | None = Field(None, exclude_if=_none)


# --- building a line ---------------------------------------------------------------------------


def git_sha(rootdir: Path, timeout: float = GIT_TIMEOUT) -> str | None:
    """`git rev-parse HEAD` in rootdir; None when that is not a git checkout, git is missing,
    or it takes too long. Never raises."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=rootdir, capture_output=True, text=True,
            timeout=timeout, stdin=subprocess.DEVNULL, check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and _SHA.fullmatch(sha) else None


def _knobs(records: Sequence[QuestionRecord]) -> dict[str, Knob | list[Knob]]:
    """The union of the rows' knobs; a knob that differs between rows keeps every value."""
    seen: dict[str, list[Knob]] = {}
    for record in records:
        for name, value in record.knobs.items():
            values = seen.setdefault(name, [])
            if value not in values:
                values.append(value)
    return {name: values[0] if len(values) == 1 else values
            for name, values in sorted(seen.items())}


def build_line(run: GoldsetRun, *, git: str | None, time: datetime | None = None,
               ) -> HistoryLine:
    records = run.records
    metrics = scored_metrics(r.scores() for r in records)
    kinds = list(dict.fromkeys(r.kind for r in records))
    judges = sorted({r.judge for r in records if r.judge})
    gaps: dict[str, list[str]] = {}
    for gap in run.gaps:
        gaps.setdefault(gap.kind, []).append(gap.member)

    def joined(values: Sequence[str | None]) -> str | None:
        return "; ".join(sorted({v for v in values if v})) or None

    return HistoryLine(
        time=(time or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0),
        git_sha=git,
        goldset=run.name,
        eval_version=run.eval_version,
        judges=judges or None,
        knobs=_knobs(records),
        questions=len({r.question_id for r in records}) if run.repeats > 1 else len(records),
        errors=sum(r.status == "error" for r in records),
        skipped=sum(r.status == "skipped" for r in records),
        metrics={m: Figure.of(tally(m, records)) for m in metrics},
        by_kind={kind: {m: Figure.of(tally(m, [r for r in records if r.kind == kind]))
                        for m in metrics} for kind in kinds},
        floors={v.floor.label: FloorOutcome(min=v.floor.min, outcome=v.outcome,
                                            upper=v.floor.upper, judged=v.floor.judged)
                for v in run.verdicts},
        scores={r.question_id: r.scores() for r in records if r.repeat == 1},
        repeats=run.repeats,
        sequential=None if run.sequential is None else {
            "seed": run.sequential.seed, "alpha": run.sequential.alpha,
            "asked": run.sequential.asked, "of": run.sequential.of,
            "stopped": run.sequential.stopped},
        bill=_bill(records),
        judge_segment=_judge_segment(run),
        corpus=run.corpus or None,
        route=run.route or None,
        status=run.status,
        population=run.population,
        gaps=gaps,
        system=joined([r.system for r in records]),
        retriever=joined([r.retriever for r in records]),
        judge_from=joined([r.judge_from for r in records]),
        agreement={a.metric: AgreementFigure(statistic=a.statistic, value=a.value,
                                             interval=a.interval, n=a.n,
                                             missing=[q for q, _ in a.missing])
                   for a in run.agreements},
        outcomes=_question_outcomes(records),
        anchors={a.anchor_id: Observed(outcome=flips.anchor_outcome(a), digest=a.definition
                                       or flips.anchor_digest(a.kind, a.claim, None))
                 for a in run.anchors},
    )


def _judge_segment(run: GoldsetRun) -> JudgeSegment | None:
    """The judge change this run accepted against its baseline, when it accepted one."""
    change = next((g.judge_change for g in run.regressions
                   if g.judge_change is not None and g.judge_change.call == "accepted"), None)
    return None if change is None else JudgeSegment(accepted=list(change.current),
                                                    replaces=list(change.baseline))


def _bill(records: Sequence[QuestionRecord]) -> Bill | None:
    """The run's bill, or None when its rows measured nothing (the line as before)."""
    bill = bill_of(records)
    return bill if bill.answers or bill.judge_requests or bill.judge_cached else None


def _question_outcomes(records: Sequence[QuestionRecord]) -> dict[str, Observed]:
    """Each question's outcome, its rows grouped by question id (several when repeated)."""
    rows: dict[str, list[QuestionRecord]] = {}
    for record in records:
        rows.setdefault(record.question_id, []).append(record)
    return {qid: Observed(outcome=flips.question_outcome(group),
                          digest=flips.question_digest(group[0]))
            for qid, group in rows.items()}


# --- reading -----------------------------------------------------------------------------------


def scan(path: Path) -> tuple[list[HistoryLine], list[str]]:
    """Every readable line in file order, and a note for each line skipped. A missing file
    is an empty history."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    lines: list[HistoryLine] = []
    problems: list[str] = []
    chunks = data.split(b"\n")
    for lineno, chunk in enumerate(chunks, start=1):
        if not chunk.strip():
            continue
        try:
            lines.append(HistoryLine.model_validate_json(chunk))
        except ValidationError as error:
            last = lineno == len(chunks)  # no newline after it: possibly cut short
            why = error.errors()[0]["msg"]
            problems.append(f"{path}:{lineno}: skipped an unreadable history line"
                            f"{' (unterminated)' if last else ''}: {why}")
    return lines, problems


def read_history(path: Path) -> list[HistoryLine]:
    """Every readable line; each unreadable one is skipped with a HistoryWarning."""
    lines, problems = scan(path)
    for problem in problems:
        warnings.warn(problem, HistoryWarning, stacklevel=2)
    return lines


def _lines(history: Path | Sequence[HistoryLine]) -> Sequence[HistoryLine]:
    return read_history(history) if isinstance(history, Path) else history


PART_OF_A_RUN = ("partial", "nothing_ran")  # a line whose figures are not its goldset's


def previous(history: Path | Sequence[HistoryLine], goldset: str, eval_version: str,
             route: str | None = None) -> HistoryLine | None:
    """The last line of this goldset at this eval_version (a path, or lines already read),
    of the same route when both lines know theirs, that measured its whole goldset: a `-k`
    run's figures over 20 of 40 questions are no figure of the goldset to compare with."""
    return next((line for line in reversed(_lines(history))
                 if line.goldset == goldset and line.eval_version == eval_version
                 and (route is None or line.route is None or line.route == route)
                 and line.status not in PART_OF_A_RUN), None)


def others(history: Path | Sequence[HistoryLine], goldset: str, eval_version: str,
           ) -> list[HistoryLine]:
    """Lines of this goldset at any other eval_version, in file order: not comparable."""
    return [line for line in _lines(history)
            if line.goldset == goldset and line.eval_version != eval_version]


# --- appending ---------------------------------------------------------------------------------


def encode(lines: Sequence[HistoryLine], key: bytes | None = None) -> bytes:
    """The lines as JSON, each signed with `key` when one is given (`signing.py`)."""
    texts = [line.model_dump_json() for line in lines]
    return b"".join((text if key is None else signing.sign_line(key, text)).encode("utf-8")
                    + b"\n" for text in texts)


def _append_unlocked(path: Path, data: bytes) -> None:
    """One write of whole lines at the end of the file; the caller holds the lock."""
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # never fuse with a line some other writer left unfinished
        try:
            written = os.write(fd, data)
            if written != len(data):
                raise OSError(f"short write: {written} of {len(data)} bytes")
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, size)  # whole lines or nothing, even when interrupted
            raise
    finally:
        os.close(fd)
    if created:
        _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_path(path: Path) -> Path:
    """Where the writers of `path` take turns: a file in the system's temp folder named by
    the history file's resolved path, so nothing is left beside the history (which people
    commit or publish). Every writer on this machine finds the same lock."""
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"ragate-history-{digest}.lock"


@contextmanager
def _locked(path: Path, timeout: float) -> Iterator[None]:
    """Hold the history's lock; a timeout or an OS error inside becomes a HistoryError."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(lock_path(path), timeout=timeout):
            yield
    except Timeout as error:
        raise HistoryError(f"{path}: another writer held {error.lock_file} for "
                           f"{timeout:g}s; nothing appended") from error
    except OSError as error:
        raise HistoryError(f"{path}: could not append ({error}); nothing appended") from error


def append(path: Path, lines: HistoryLine | Sequence[HistoryLine],
           timeout: float = LOCK_TIMEOUT) -> None:
    """Append whole lines, safe against concurrent writers; earlier bytes are never touched."""
    batch = [lines] if isinstance(lines, HistoryLine) else list(lines)
    if batch:
        with _locked(path, timeout):
            _append_unlocked(path, encode(batch, signing.results_key()))


@dataclass
class Recorded:
    """What `record` did: the lines appended, each goldset's delta lines for the report, its
    flips across runs, the history lines it had to skip, and the history as it stands after
    the append (the lines read under the lock, then ours), for the HTML report's trends."""

    lines: list[HistoryLine] = field(default_factory=list)
    deltas: dict[str, list[str]] = field(default_factory=dict)
    flips: dict[str, FlipReport] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    history: list[HistoryLine] = field(default_factory=list)


def record(path: Path, runs: Sequence[GoldsetRun], rootdir: Path, *,
           time: datetime | None = None, timeout: float = LOCK_TIMEOUT,
           window: int = DEFAULT_FLIP_WINDOW) -> Recorded:
    """Build a line per run, compare each with the history as it stood, and append them all,
    reading and appending under one lock so `previous` is the line just before ours."""
    sha = git_sha(rootdir)
    now = time or datetime.now(UTC)
    result = Recorded(lines=[build_line(run, git=sha, time=now) for run in runs])
    if result.lines:
        with _locked(path, timeout):
            history, result.problems = scan(path)
            for line in result.lines:
                key = line.route or line.goldset
                result.deltas[key] = delta_lines(
                    line, previous(history, line.goldset, line.eval_version, line.route),
                    others(history, line.goldset, line.eval_version))
                result.flips[key] = flip_report(line, history, window)
            _append_unlocked(path, encode(result.lines, signing.results_key()))
            result.history = [*history, *result.lines]
    return result


def assess(path: Path, runs: Sequence[GoldsetRun], window: int = DEFAULT_FLIP_WINDOW,
           ) -> dict[str, FlipReport]:
    """Each run's flips against the history as it stands, appending nothing (a run cut short,
    or one whose append failed, still has its promotion checked). Raises OSError when the
    history cannot be read."""
    history, _ = scan(path)
    return {line.route or line.goldset: flip_report(line, history, window)
            for line in (build_line(run, git=None) for run in runs)}


# --- flips across runs -------------------------------------------------------------------------


def seen_in(line: HistoryLine, judged: bool = True) -> dict[str, flips.Seen]:
    """Each member of one line with its outcome and digest: questions by id, `anchor[id]`,
    `floor[name]`. A run in which no question scored (all errored or skipped) is a crash of
    the run, so its questions are left out; its anchors and floors stay. Without `judged`,
    floors of judged metrics are left out (a run of an earlier judge's segment)."""
    found: dict[str, flips.Seen] = {}
    outcomes = line.outcomes or {}
    if any(o.outcome not in (flips.ERROR, flips.SKIPPED) for o in outcomes.values()):
        found.update({qid: flips.Seen(outcome=o.outcome, digest=o.digest)
                      for qid, o in outcomes.items()})
    found.update({anchor_name(aid): flips.Seen(outcome=o.outcome, digest=o.digest)
                  for aid, o in (line.anchors or {}).items()})
    found.update({floor_name(label): flips.Seen(outcome=flips.floor_outcome(f.outcome),
                                                digest=flips.digest("floor", label, f.min,
                                                                    *["max"] * f.upper))
                  for label, f in line.floors.items() if judged or not f.judged})
    return found


def judge_segment_start(series: Sequence[HistoryLine]) -> int:
    """Where the current judge's segment of a run series starts: after the last line that
    accepted a judge change, or whose judges differ from the line before it. A judged
    floor's change of outcome across that boundary is the judges', not a flip."""
    start = 0
    for i, line in enumerate(series):
        before = series[i - 1].judges if i else None
        if line.judge_segment is not None or (before and line.judges
                                              and before != line.judges):
            start = i
    return start


@dataclass
class FlipReport:
    """One goldset run's flips over its window: the current run and the runs before it of
    the same goldset, route and eval_version that recorded outcomes."""

    eval_version: str
    window: int
    counted: list[HistoryLine]  # the earlier runs counted, oldest first
    uncounted: int  # earlier runs of the same eval_version written without outcomes
    members: list[flips.Flips]

    @property
    def flipped(self) -> list[flips.Flips]:
        return [m for m in self.members if m.flips]

    def lines(self) -> list[str]:
        """What the reports say: nothing on a first run; else the span counted, then each
        member that changed outcome, or one line that none did."""
        older = (f"; {self.uncounted} older run{'s' * (self.uncounted != 1)} recorded no "
                 "outcomes and are not counted" if self.uncounted else "")
        if not self.counted:
            if not self.uncounted:
                return []
            return [f"flips not counted yet: the {self.uncounted} earlier run"
                    f"{'s' * (self.uncounted != 1)} of eval_version {self.eval_version} "
                    "recorded no per-question outcomes; counting starts with this run"]
        runs = len(self.counted) + 1
        head = (f"flips over the last {runs} runs of eval_version {self.eval_version} "
                f"(window {self.window}, history since {fmt_time(self.counted[0].time)}"
                f"{older})")
        found = self.flipped
        if not found:
            return [head, "no question, anchor or floor changed outcome"]
        return [head, *[str(f) for f in found]]


def flip_report(current: HistoryLine, history: Sequence[HistoryLine],
                window: int = DEFAULT_FLIP_WINDOW) -> FlipReport:
    """Flips of `current` over the last `window` runs, itself included: earlier lines of the
    same goldset, eval_version and route (when both know theirs) that recorded outcomes."""
    same = [line for line in history if line is not current
            and line.goldset == current.goldset and line.eval_version == current.eval_version
            and (current.route is None or line.route is None or line.route == current.route)]
    with_outcomes = [line for line in same if line.outcomes is not None]
    counted = with_outcomes[max(0, len(with_outcomes) - (window - 1)):] if window > 1 else []
    series = [*counted, current]
    start = judge_segment_start(series)
    members = flips.count_all([seen_in(line, judged=i >= start)
                               for i, line in enumerate(series)])
    return FlipReport(current.eval_version, window, counted, len(same) - len(with_outcomes),
                      members)


# --- deltas for the report ---------------------------------------------------------------------


def fmt_time(time: datetime) -> str:
    return time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_sha(sha: str | None) -> str:
    return f"git {sha[:12]}" if sha else "no git sha"


def fmt_delta(delta: float) -> str:
    if abs(delta) < 0.005:
        return "±0.00"
    return f"{delta:+.2f}"


def _metric_line(name: str, now: Figure | None, then: Figure | None) -> str | None:
    cur = now.value if now else None
    old = then.value if then else None
    if cur is None and old is None:
        return None
    text = f"{name} {fmt_num(old)} → {fmt_num(cur)}"
    if cur is not None and old is not None:
        text += f" ({fmt_delta(cur - old)})"
    elif old is None:
        text += " (new)"
    else:
        text += " (not measured now)"
    if now and then and now.n != then.n and cur is not None and old is not None:
        text += f", n {then.n} → {now.n}"
    return text


def fmt_knob(value: Knob | list[Knob]) -> str:
    """A knob as the report shows it; a knob that differed between rows shows every value."""
    if isinstance(value, list):
        return "{" + ", ".join(fmt_knob(v) for v in value) + "}"
    return "—" if value is None else str(value)


def delta_lines(current: HistoryLine, previous: HistoryLine | None,
                others: Sequence[HistoryLine]) -> list[str]:
    """Plain-text lines for the Markdown report: each metric against the last run of the same
    eval_version, what changed around it, and the runs of other eval_versions."""
    lines: list[str] = []
    if previous is None:
        lines.append(f"first run of eval_version {current.eval_version} in the history: "
                     "nothing to compare with")
    else:
        lines.append(f"against the previous run of eval_version {current.eval_version}: "
                     f"{fmt_time(previous.time)}, {fmt_sha(previous.git_sha)}")
        order = [*METRICS, *sorted((set(current.metrics) | set(previous.metrics)) - set(METRICS))]
        for name in order:
            text = _metric_line(name, current.metrics.get(name), previous.metrics.get(name))
            if text:
                lines.append(text)
        if current.questions != previous.questions:
            lines.append(f"questions {previous.questions} → {current.questions}: another "
                         "selection, the figures cover different questions")
        if current.errors != previous.errors:
            lines.append(f"errors {previous.errors} → {current.errors}")
        if edited := corpus_change(previous.corpus, current.corpus):
            lines.append(corpus_changed("the previous run", edited))
        if current.system != previous.system and previous.system and current.system:
            lines.append(f"system {previous.system} → {current.system}: figures of another "
                         "system")
        if current.judges != previous.judges:
            lines.append(f"judge {', '.join(previous.judges or ['none'])} → "
                         f"{', '.join(current.judges or ['none'])}: judged figures come from "
                         "another judge")
        changed = [f"{name} {fmt_knob(previous.knobs.get(name))} → "
                   f"{fmt_knob(current.knobs.get(name))}"
                   for name in sorted(set(current.knobs) | set(previous.knobs))
                   if current.knobs.get(name) != previous.knobs.get(name)]
        if changed:
            lines.append(f"knobs changed: {', '.join(changed)}")
    if others:
        groups: dict[str, list[HistoryLine]] = {}
        for line in others:
            groups.setdefault(line.eval_version, []).append(line)
        latest_first = sorted(groups.items(), key=lambda g: g[1][-1].time, reverse=True)
        listed = [f"eval_version {version} ({len(runs)} run{'s' * (len(runs) != 1)}, last "
                  f"{fmt_time(runs[-1].time)}, {fmt_sha(runs[-1].git_sha)})"
                  for version, runs in latest_first]
        lines.append(f"not comparable (another eval_version): {'; '.join(listed)}")
    return lines
