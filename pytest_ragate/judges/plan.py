"""`ragate plan`: what a run would ask, before it asks anything: the system calls, the judge
requests the verdict cache would not serve, their tokens and, with the judge's prices, cost.

Nothing is called: no system, no judge, no network. The counts follow RAGAS 0.4.3's metric
code (`ragas.metrics.collections`) as `ragas.py` runs it, per judged answer:

    faithfulness       2 requests: statement extraction, then one NLI verdict over every
                       statement against the contexts joined (1 when no statement comes back)
    context_precision  1 request per retrieved context (with the gist as reference when the
                       goldset has one, else the answer)
    answer_relevance   1 request asking n=3 generations (3 requests to a server that ignores n)

ragate caches no answers: every question is asked of the system, each repeat again. A
verdict's cache key holds the answer, which the plan cannot know without asking, so the plan
gives two figures: every judged answer a miss (a changed system), and the misses if the
system answers as in the run the cache last saw (the cache's index, `cache_index.py`: the last
keys of each question, still valid only while the goldset, judge and RAGAS are unchanged).

Tokens are estimated from RAGAS's own prompts, rendered as `ragas.py` sends them (its system
message, the prompt with the question, the answer and contexts), counted with tiktoken when
its encoding file is already on this machine (it is a RAGAS dependency; the plan downloads
nothing), else at 4 characters a token; plus 3 tokens a message and 3 for the reply (OpenAI's
counting rule for chat requests). What the run will send depends on the answers: where the
index holds the last answer and contexts they are used, else the gist (or the question)
stands in for the answer and `contexts` stand-ins of one built-in chunk's budget (400
characters) for the contexts. A reply is estimated as long as RAGAS's own example replies for
that prompt (their mean), and the NLI step's statements as the answer's sentences.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ragate.judges.cache_index import (
    IndexEntry,
    index_key,
    migrate_index,
    read_entry,
    sentences,
    stamp,
    stand_in,
)
from pytest_ragate.judges.ragas_deferred import (
    ANSWER_RELEVANCY_STRICTNESS,
    RAGAS_METRICS,
    prompt_version,
)
from pytest_ragate.scoring.rubrics import Rubric

CHARS_PER_TOKEN = 4  # the rule when no tokenizer file is at hand
MESSAGE_TOKENS = 3  # per chat message, and once more for the reply's priming
STAND_IN_CONTEXT_CHARS = 400  # settings.DEFAULT_BUDGET: one built-in chunk
REQUESTS_PER_VERDICT = {"faithfulness": "2 (statements, then NLI)",
                        "context_precision": "1 per retrieved context",
                        "answer_relevance": f"1 (n={ANSWER_RELEVANCY_STRICTNESS}; "
                                            f"{ANSWER_RELEVANCY_STRICTNESS} if the server "
                                            "ignores n)"}


@dataclass(frozen=True, kw_only=True)
class PlannedQuestion:
    """One question as a run would ask it: one repeat of it."""

    goldset: str
    eval_version: str
    question_id: str
    question: str
    reference: str | None
    repeat: int
    judged: bool  # not a must-abstain question (a must-abstain answer is never judged)
    metrics: tuple[str, ...] = RAGAS_METRICS  # what its goldset asks the judge for
    # the goldset's rubrics by name: those among `metrics` are asked too (one request each)
    rubrics: Mapping[str, Rubric] = field(default_factory=dict)
    # a sealed goldset's digest key: the index's stamp is keyed with it (`cache_index.stamp`)
    digest_key: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True, kw_only=True)
class PlanJudge:
    """The judge a run would use, as its cache keys name it."""

    kind: str  # "ragas", "fixture" or "none"
    judge_id: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    model: str = ""


@dataclass(kw_only=True)
class Figures:
    """Requests and tokens of one figure (all misses, or unchanged answers)."""

    requests: int = 0
    verdicts: int = 0
    cached: int = 0  # verdicts the cache would serve
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None

    def add(self, other: Figures) -> None:
        self.requests += other.requests
        self.verdicts += other.verdicts
        self.cached += other.cached
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens


@dataclass(kw_only=True)
class GoldsetPlan:
    goldset: str
    questions: int
    system_calls: int
    judged_answers: int
    changed: Figures  # every judged answer a miss
    unchanged: Figures  # the system answers as in the run the cache last saw
    indexed: int = 0  # judged answers the cache's index knows


@dataclass(kw_only=True)
class Plan:
    judge: str
    cache_dir: str
    tokens_counted_with: str
    goldsets: list[GoldsetPlan]
    total: GoldsetPlan
    notes: list[str]

    def as_json(self) -> str:
        from dataclasses import asdict

        return json.dumps(asdict(self), indent=2, ensure_ascii=False)


# --- counting tokens -----------------------------------------------------------------------


@contextmanager
def _no_download() -> Iterator[None]:
    """tiktoken fetches a missing encoding file over the network: here it may not."""
    import tiktoken.load

    def refuse(blobpath: str) -> bytes:
        raise OSError(f"not downloading {blobpath}")

    original = tiktoken.load.read_file
    tiktoken.load.read_file = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        tiktoken.load.read_file = original  # type: ignore[assignment]


def token_counter(model: str) -> tuple[Callable[[str], int], str]:
    """(count, what counts): tiktoken's encoding for `model` (o200k_base for a model it does
    not know) when its file is already cached here, else 4 characters a token."""
    try:
        import tiktoken

        with _no_download():
            try:
                encoding = tiktoken.encoding_for_model(model)
            except KeyError:
                encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # not installed, or its file not on this machine
        return (lambda text: math.ceil(len(text) / CHARS_PER_TOKEN),
                f"{CHARS_PER_TOKEN} characters a token (no tiktoken encoding file on this "
                "machine, and the plan downloads nothing)")
    return (lambda text: len(encoding.encode(text, disallowed_special=())),
            f"tiktoken {encoding.name}")


# --- the requests of one judged answer --------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Request:
    prompt: int  # tokens
    completion: int


class Prompts:
    """RAGAS's prompts rendered as `ragas.py` sends them, counted."""

    def __init__(self, count: Callable[[str], int]) -> None:
        os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # before ragas: no analytics
        from ragas.metrics.collections.answer_relevancy.util import (
            AnswerRelevanceInput,
            AnswerRelevanceOutput,
            AnswerRelevancePrompt,
        )
        from ragas.metrics.collections.context_precision.util import (
            ContextPrecisionInput,
            ContextPrecisionOutput,
            ContextPrecisionPrompt,
        )
        from ragas.metrics.collections.faithfulness.util import (
            NLIStatementInput,
            NLIStatementOutput,
            NLIStatementPrompt,
            StatementGeneratorInput,
            StatementGeneratorOutput,
            StatementGeneratorPrompt,
        )

        from pytest_ragate.judges.ragas import RagateInstructorLLM

        self.count = count
        self.messages = RagateInstructorLLM.messages
        self.kinds: dict[str, tuple[Any, Any, Any]] = {
            "statements": (StatementGeneratorPrompt(), StatementGeneratorInput,
                           StatementGeneratorOutput),
            "nli": (NLIStatementPrompt(), NLIStatementInput, NLIStatementOutput),
            "context": (ContextPrecisionPrompt(), ContextPrecisionInput,
                        ContextPrecisionOutput),
            "relevance": (AnswerRelevancePrompt(), AnswerRelevanceInput, AnswerRelevanceOutput),
        }
        self.replies = {kind: self._example_reply(prompt)
                        for kind, (prompt, _, _) in self.kinds.items()}
        self.rubric_reply = self.count('{"reason": "' + "word " * 20 + '", "value": "pass"}')

    def _example_reply(self, prompt: Any) -> int:
        lengths = [self.count(output.model_dump_json()) for _, output in prompt.examples]
        return round(statistics.mean(lengths)) if lengths else 0

    def request(self, kind: str, replies: int = 1, **fields: Any) -> Request:
        prompt, input_model, output_model = self.kinds[kind]
        messages = self.messages(prompt.to_string(input_model(**fields)), output_model)
        tokens = sum(self.count(m["content"]) + MESSAGE_TOKENS for m in messages)
        return Request(prompt=tokens + MESSAGE_TOKENS,
                       completion=self.replies[kind] * replies)

    def rubric(self, rubric: Rubric, *, question: str, answer: str) -> list[Request]:
        """The one request of a rubric's verdict, as `RagasJudge._rubric` sends it."""
        from ragas.metrics.collections.domain_specific_rubrics.util import (
            RubricScoreInput,
            RubricScoreOutput,
            RubricScorePrompt,
            format_rubrics,
        )

        from pytest_ragate.judges.ragas import rubric_prompt

        if rubric.binary:
            text = rubric_prompt(rubric.criteria).format(question=question, answer=answer)
            messages = self.messages(text, RubricScoreOutput)  # a schema as long, near enough
            reply = self.rubric_reply
        else:
            prompt = RubricScorePrompt()
            described = {f"score{i}_description": d for i, d in enumerate(rubric.scores, 1)}
            prompt.instruction += ("\n\nScoring Rubrics:\n" + format_rubrics(
                {"criteria": rubric.criteria, **described}) + "\n")
            messages = self.messages(prompt.to_string(RubricScoreInput(
                user_input=question, response=answer)), RubricScoreOutput)
            reply = self._example_reply(prompt)
        tokens = sum(self.count(m["content"]) + MESSAGE_TOKENS for m in messages)
        return [Request(prompt=tokens + MESSAGE_TOKENS, completion=reply)]

    def verdicts(self, metric: str, *, question: str, answer: str, contexts: Sequence[str],
                 reference: str | None) -> list[Request]:
        """The requests of one verdict of `metric` (what `RagasJudge.score` sends)."""
        if metric == "faithfulness":
            return [self.request("statements", question=question, answer=answer),
                    self.request("nli", context="\n".join(contexts),
                                 statements=sentences(answer))]
        if metric == "context_precision":
            return [self.request("context", question=question, context=c,
                                 answer=reference or answer) for c in contexts]
        if metric == "answer_relevance":
            return [self.request("relevance", replies=ANSWER_RELEVANCY_STRICTNESS,
                                 response=answer)]
        return []


# --- the plan ----------------------------------------------------------------------------


def _cost(figures: Figures, price_in: float | None, price_out: float | None) -> None:
    if price_in is not None or price_out is not None:
        figures.cost_usd = (figures.prompt_tokens * (price_in or 0.0)
                            + figures.completion_tokens * (price_out or 0.0)) / 1e6


def _entry(cache: Any, question: PlannedQuestion, judge: PlanJudge,
           ) -> tuple[IndexEntry | None, bool]:
    """The index's entry for this question, and whether its keys are still the run's keys
    (the last answer and contexts stand in for the next either way)."""
    if cache is None:
        return None, False
    entry = read_entry(cache.get(index_key(question.goldset, question.question_id,
                                           question.repeat, judge.judge_id)))
    if entry is None:
        return None, False
    now = stamp(eval_version=question.eval_version, judge_id=judge.judge_id,
                params=judge.params,
                prompt_versions={m: prompt_version(m, entry.embedder) for m in entry.keys},
                question=question.question, reference=question.reference,
                repeat=question.repeat, key=question.digest_key)
    return entry, now == entry.stamp


def plan(questions: Sequence[PlannedQuestion], judge: PlanJudge, cache_dir: Path, *,
         contexts: int, price_in: float | None = None, price_out: float | None = None,
         ) -> Plan:
    """The plan of a run over `questions` (every repeat of every question it would ask)."""
    import diskcache

    count, counted_with = (token_counter(judge.model) if judge.kind == "ragas"
                           else (lambda text: 0, "no judge requests"))
    prompts = Prompts(count) if judge.kind == "ragas" else None
    cache = diskcache.Cache(str(cache_dir)) if (cache_dir / "cache.db").is_file() else None
    if cache is not None:
        migrate_index(cache)  # an index written before judges were named by their identity
    by_goldset: dict[str, GoldsetPlan] = {}
    try:
        for question in questions:
            row = by_goldset.setdefault(question.goldset, GoldsetPlan(
                goldset=question.goldset, questions=0, system_calls=0, judged_answers=0,
                changed=Figures(), unchanged=Figures()))
            row.system_calls += 1
            row.questions += question.repeat == 1
            if not question.judged or judge.kind == "none":
                continue
            row.judged_answers += 1
            if prompts is None:  # the fixture judge: verdicts from its file, no requests
                continue
            entry, valid = _entry(cache, question, judge)
            row.indexed += valid
            _judged(row, question, entry, cache if valid else None, prompts, contexts)
    finally:
        if cache is not None:
            cache.close()
    total = GoldsetPlan(goldset="total", questions=0, system_calls=0, judged_answers=0,
                        changed=Figures(), unchanged=Figures())
    for row in by_goldset.values():
        for figures in (row.changed, row.unchanged):
            _cost(figures, price_in, price_out)
        total.questions += row.questions
        total.system_calls += row.system_calls
        total.judged_answers += row.judged_answers
        total.indexed += row.indexed
        total.changed.add(row.changed)
        total.unchanged.add(row.unchanged)
    _cost(total.changed, price_in, price_out)
    _cost(total.unchanged, price_in, price_out)
    return Plan(judge=judge.judge_id or judge.kind, cache_dir=str(cache_dir),
                tokens_counted_with=counted_with, goldsets=list(by_goldset.values()),
                total=total, notes=notes(judge, contexts, cache is not None))


def _judged(row: GoldsetPlan, question: PlannedQuestion, entry: IndexEntry | None,
            cache: Any, prompts: Prompts, contexts: int) -> None:
    """One judged answer's verdicts into both figures; `cache` is None when the entry's
    keys are stale."""
    if entry is not None:
        answer, texts = stand_in(entry.sentences), ["x" * n for n in entry.contexts]
    else:
        answer = question.reference or question.question
        texts = ["x" * STAND_IN_CONTEXT_CHARS] * contexts
    asked = [*(m for m in RAGAS_METRICS if m in question.metrics),
             *(m for m in question.metrics if m in question.rubrics)]
    for metric in asked:
        requests = (prompts.rubric(question.rubrics[metric], question=question.question,
                                   answer=answer) if metric in question.rubrics
                    else prompts.verdicts(metric, question=question.question, answer=answer,
                                          contexts=texts, reference=question.reference))
        hit = (cache is not None and entry is not None and metric in entry.keys
               and entry.keys[metric] in cache)
        for figures, served in ((row.changed, False), (row.unchanged, hit)):
            figures.verdicts += 1
            if served:
                figures.cached += 1
                continue
            figures.requests += len(requests)
            figures.prompt_tokens += sum(r.prompt for r in requests)
            figures.completion_tokens += sum(r.completion for r in requests)


def notes(judge: PlanJudge, contexts: int, has_cache: bool) -> list[str]:
    said = ["ragate caches no answers: every question is asked of the system, each repeat "
            "again (system calls = questions x repeats, sealed questions without the key "
            "skipped as the run skips them)"]
    if judge.kind == "fixture":
        said.append("the fixture judge reads its verdicts from a file: no judge requests")
    elif judge.kind == "none":
        said.append("no judge (--judge or ragate_judge): no judge requests")
    else:
        said += [
            "judge requests per judged answer (RAGAS 0.4.3): " + "; ".join(
                f"{m} {n}" for m, n in REQUESTS_PER_VERDICT.items()),
            "'all misses' is a changed system (every answer new); 'unchanged answers' is "
            "the system answering as in the run the cache last saw (its index): a question "
            "the index does not hold, or whose goldset, judge or RAGAS changed since, "
            "counts as a miss",
            "depends on the answers, so not known before the run: answers the system "
            "abstains on are not judged (counted here as judged); a faithfulness verdict "
            "with no statements sends 1 request, not 2; context precision sends 1 per "
            f"context the system returns ({contexts} assumed where the index does not "
            "hold the last answer)",
        ]
        if not has_cache:
            said.append("no judge cache at this folder: nothing would be served")
    return said
