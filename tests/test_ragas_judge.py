"""The RAGAS judge: bridges that fit RAGAS's interfaces, RAGAS's numbers equal to the fixture
judge's for the same verdicts, and every way a judge model can fail reported as a failure."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("ragas")
pytest.importorskip("sentence_transformers")

from ragas.embeddings.base import BaseRagasEmbedding
from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics.collections.faithfulness.util import (
    StatementGeneratorOutput,
    StatementGeneratorPrompt,
)

from pytest_ragate.answer import Context
from pytest_ragate.builtin_system.retrieval import Embedder
from pytest_ragate.judges.base import (
    JudgeFailure,
    JudgeInput,
    Vacuous,
    answer_relevance,
)
from pytest_ragate.judges.fixture import FixtureJudge
from pytest_ragate.judges.ragas import (
    ChatTransport,
    RagasJudge,
    RagateEmbeddings,
    RagateInstructorLLM,
    parse_json_reply,
)
from pytest_ragate.scoring.registry import asked_metrics
from tests.openai_stub import (
    OpenAIStub,
    Reply,
    RowVerdicts,
    completion,
    error,
    prompt_input,
    ragas_script,
)

pytestmark = pytest.mark.heavy  # ragas and sentence-transformers take seconds to import

METRICS = ("faithfulness", "context_precision", "answer_relevance")
TIMEOUT = 2.0  # generous: a loaded CI machine must not turn a good reply into a timeout


def make_judge(stub: OpenAIStub, embedder: Any, **kwargs: Any) -> RagasJudge:
    options: dict[str, Any] = {"api_key": None, "timeout": TIMEOUT, "embedder": embedder}
    return RagasJudge("stub-model", stub.url, **(options | kwargs))


def contexts(*texts: str) -> tuple[Context, ...]:
    return tuple(Context(context_id=f"c{i}", doc_id="m1", first_unit=i, last_unit=i, text=text)
                 for i, text in enumerate(texts))


def item(answer: str = "The budget is 12 euros.", **kwargs: Any) -> JudgeInput:
    fields: dict[str, Any] = {"question_id": "q1", "question": "What is the budget?",
                              "answer": answer,
                              "contexts": contexts("turn one", "turn two", "turn three")}
    return JudgeInput(**(fields | kwargs))


def score(judge: RagasJudge, row: JudgeInput, metric: str) -> float:
    return asyncio.run(judge.score(row, metric))


def failure(judge: RagasJudge, row: JudgeInput, metric: str) -> JudgeFailure:
    with pytest.raises(JudgeFailure) as caught:
        value = score(judge, row, metric)
        pytest.fail(f"expected a failure, got {value!r}")  # never a 0.0 or a NaN
    return caught.value


# --- surface: nothing RAGAS calls can be missing -----------------------------------------


def public_callables(base: type) -> list[str]:
    names = {n for n in dir(base) if not n.startswith("_") and callable(getattr(base, n))}
    return sorted(names | set(getattr(base, "__abstractmethods__", ())))


def compatible(base: Callable[..., Any], bridge: Callable[..., Any]) -> list[str]:
    """What a call valid for `base` would break on `bridge` (empty: nothing)."""
    problems = []
    if inspect.iscoroutinefunction(base) != inspect.iscoroutinefunction(bridge):
        problems.append("async-ness differs")
    ours = inspect.signature(bridge).parameters
    var_kw = any(p.kind is p.VAR_KEYWORD for p in ours.values())
    base_params = inspect.signature(base).parameters
    for name, param in base_params.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            if not any(p.kind is param.kind for p in ours.values()):
                problems.append(f"no {param.kind.description} parameter")
            continue
        mine = ours.get(name)
        if mine is None:
            if not (var_kw and param.kind is param.KEYWORD_ONLY):
                problems.append(f"missing parameter {name!r}")
            continue
        if mine.kind is not param.kind:
            problems.append(f"{name!r} is {mine.kind.description}, RAGAS: "
                            f"{param.kind.description}")
        if param.default is not param.empty and mine.default != param.default:
            problems.append(f"{name!r} defaults to {mine.default!r}, RAGAS: {param.default!r}")
    positional = [n for n, p in base_params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if [n for n in ours if n in positional] != positional:
        problems.append("positional parameters in another order")
    extra = [n for n, p in ours.items() if n not in base_params
             and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty]
    if extra:
        problems.append(f"required parameters RAGAS never passes: {extra}")
    return problems


@pytest.mark.parametrize(("bridge", "base"), [
    (RagateInstructorLLM, InstructorBaseRagasLLM),
    (RagateEmbeddings, BaseRagasEmbedding),
], ids=["instructor-llm", "embeddings"])
def test_each_bridge_has_every_public_method_of_its_ragas_base(bridge: type, base: type) -> None:
    assert issubclass(bridge, base)
    assert not inspect.isabstract(bridge), bridge.__abstractmethods__
    names = public_callables(base)
    assert names
    problems = {name: compatible(getattr(base, name), getattr(bridge, name))
                for name in names if hasattr(bridge, name)}
    missing = [name for name in names if not hasattr(bridge, name)]
    assert not missing
    assert {name: p for name, p in problems.items() if p} == {}


def test_the_instructor_bridge_has_what_ragas_reads_off_an_instructor_llm() -> None:
    # ragas.prompt.pydantic_prompt reads .is_async before choosing agenerate or generate
    llm = RagateInstructorLLM(ChatTransport("m", "http://127.0.0.1:9/v1"))
    assert llm.is_async is True and llm.model == "m" and llm.provider == "openai"


# --- cross-check: RAGAS's code and the fixture judge compute the same numbers --------------


ROWS: list[dict[str, Any]] = [
    {   # faithfulness 2/3, the relevant context first, three generated questions
        "question_id": "q1", "question": "What budget did the team agree on?",
        "answer": "The team agreed on a budget of 12 euros. The budget covers the case. "
                  "The case is blue.",
        "contexts": ["q1 turn: we agree on twelve euros", "q1 turn: the case is included",
                     "q1 turn: unrelated chatter"],
        "relevant": [0],
        "statements": ["The team agreed on a budget of 12 euros.",
                       "The budget covers the case.", "The case is blue."],
        "supported": [True, True, False],
        "questions": ["What budget did the team agree on?", "How much money is available?",
                      "What does the budget cover?"],
    },
    {   # all supported, the relevant context second, judged against a reference
        "question_id": "q2", "question": "Who draws on the whiteboard?",
        "answer": "The project manager draws on the whiteboard. She draws a cat.",
        "reference": "The project manager draws a cat on the whiteboard.",
        "contexts": ["q2 turn: coffee break", "q2 turn: the PM draws a cat",
                     "q2 turn: lunch plans"],
        "relevant": [1],
        "statements": ["The project manager draws on the whiteboard.",
                       "The project manager draws a cat."],
        "supported": [True, True],
        "questions": ["Who draws on the whiteboard?", "What does the project manager draw?",
                      "Who draws a cat?"],
    },
    {   # no statements (vacuous: a failure of a model judge), the relevant context third, a
        # noncommittal answer
        "question_id": "q3", "question": "When is the next meeting?",
        "answer": "Hmm, hard to say.",
        "contexts": ["q3 turn: the remote", "q3 turn: the colours", "q3 turn: see you Monday"],
        "relevant": [2],
        "statements": [], "supported": [],
        "questions": ["When is the next meeting?"] * 3, "noncommittal": 1,
    },
]


def judge_input(row: dict[str, Any]) -> JudgeInput:
    return JudgeInput(row["question_id"], row["question"], row["answer"],
                      contexts(*row["contexts"]), row.get("reference"))


def fixture_file(tmp_path: Path) -> Path:
    """The same verdicts as a fixture judge file; a noncommittal answer's questions are
    written as none (RAGAS scores an all-noncommittal answer 0.0, as no questions)."""
    answers = {row["question_id"]: {
        "statements": row["statements"], "supported": row["supported"],
        "relevant_contexts": [f"c{i}" for i in row["relevant"]],
        "generated_questions": [] if row.get("noncommittal") else row["questions"],
    } for row in ROWS}
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"judge_id": "same-verdicts", "answers": answers}))
    return path


def scripted_rows() -> dict[str, RowVerdicts]:
    return {row["answer"]: RowVerdicts(
        statements=row["statements"], supported=row["supported"],
        relevant=[row["contexts"][i] for i in row["relevant"]], questions=row["questions"],
        noncommittal=row.get("noncommittal", 0), reference=row.get("reference"),
    ) for row in ROWS}


EXPECTED = {
    "faithfulness": [2 / 3, 1.0, 1.0],
    "context_precision": [1.0, 1 / 2, 1 / 3],
}


def test_ragas_and_the_fixture_judge_agree_on_the_same_verdicts(
        tmp_path: Path, openai_stub: OpenAIStub, embedder: Embedder) -> None:
    openai_stub.script = ragas_script(scripted_rows())
    ragas_judge = make_judge(openai_stub, embedder, timeout=10.0)
    fixture_judge = FixtureJudge(fixture_file(tmp_path), embedder)
    got: dict[str, list[tuple[float, float]]] = {m: [] for m in METRICS}
    for row in ROWS:
        for metric in METRICS:
            ours = asyncio.run(fixture_judge.score(judge_input(row), metric))
            if metric == "faithfulness" and not row["statements"]:
                # nothing to judge: the fixture declares it (a vacuous 1.0, counted apart);
                # a model that extracts nothing from an answer with text is a judge failure
                assert ours == Vacuous(1.0, "no statements")
                caught = failure(ragas_judge, judge_input(row), metric)
                assert caught.kind == "empty" and "no statements" in caught.message
                got[metric].append((1.0, 1.0))
                continue
            theirs = score(ragas_judge, judge_input(row), metric)
            got[metric].append((ours, theirs))
    for metric, pairs in got.items():
        for ours, theirs in pairs:
            assert theirs == pytest.approx(ours, abs=1e-9, rel=0), (metric, pairs)
    for metric, expected in EXPECTED.items():
        assert [t for _, t in got[metric]] == pytest.approx(expected, abs=1e-9, rel=0)
    relevance = [t for _, t in got["answer_relevance"]]
    assert 0.5 < relevance[0] < 1.0 and 0.5 < relevance[1] < 1.0 and relevance[2] == 0.0

    # context precision used the reference where the row has one, the answer elsewhere
    compared = [prompt_input(p)["answer"] for p in openai_stub.prompts()
                if '"title": "ContextPrecisionOutput"' in p]
    assert compared == [ROWS[0]["answer"]] * 3 + [ROWS[1]["reference"]] * 3 + \
        [ROWS[2]["answer"]] * 3
    # answer relevance asked RAGAS's strictness (3) times per answer
    asked = [p for p in openai_stub.prompts() if '"title": "AnswerRelevanceOutput"' in p]
    assert len(asked) == 9


def test_the_agreement_covers_every_metric_a_judge_is_asked_for() -> None:
    """The test above runs both judges on METRICS: that must be every metric the registry
    has a judge ask for, and the RAGAS judge must compute each of them."""
    assert set(RagasJudge.metrics) == set(asked_metrics()) == set(METRICS)


def test_answer_relevance_is_the_mean_cosine_of_the_generated_questions(
        openai_stub: OpenAIStub, embedder: Embedder) -> None:
    row = ROWS[0]
    openai_stub.script = ragas_script(scripted_rows())
    value = score(make_judge(openai_stub, embedder), judge_input(row), "answer_relevance")
    texts = [row["question"], *row["questions"]]
    vectors = np.vstack([embedder.encode([t]) for t in texts]).astype(np.float64)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    assert value == pytest.approx(float(np.mean(unit[1:] @ unit[0])), abs=1e-9, rel=0)
    assert value == pytest.approx(answer_relevance(vectors[0], vectors[1:]), abs=1e-9, rel=0)


def test_an_empty_verdict_list_is_a_parse_failure_not_a_score(
        openai_stub: OpenAIStub, embedder: Embedder) -> None:
    # statements but no NLI verdicts: RAGAS says NaN; only no *statements* means 1.0
    def script(request: dict[str, Any]) -> Reply:
        prompt = str(request["messages"][-1]["content"])
        if '"title": "StatementGeneratorOutput"' in prompt:
            return completion(json.dumps({"statements": ["The budget is 12 euros."]}))
        return completion(json.dumps({"statements": []}))

    openai_stub.script = script
    caught = failure(make_judge(openai_stub, embedder), item(), "faithfulness")
    assert caught.kind == "parse" and "nan" in caught.message.lower()


# --- HTTP: a good run, and every failure with its kind -------------------------------------


def test_a_good_run_sends_the_judges_parameters(openai_stub: OpenAIStub,
                                                embedder: Embedder) -> None:
    answer = "The budget is 12 euros."
    openai_stub.script = ragas_script({answer: RowVerdicts(
        statements=[answer], supported=[True], relevant=["turn two"],
        questions=["What is the budget?"])})
    judge = make_judge(openai_stub, embedder, max_tokens=256, seed=7)
    assert judge.judge_id == "ragas:stub-model@temperature=0,max_tokens=256,seed=7"
    assert judge.params == {"temperature": 0.0, "max_tokens": 256, "seed": 7}
    assert score(judge, item(answer), "faithfulness") == 1.0
    assert score(judge, item(answer), "context_precision") == pytest.approx(0.5)
    for request in openai_stub.requests:
        assert request["model"] == "stub-model"
        assert (request["temperature"], request["max_tokens"], request["seed"]) == (0, 256, 7)
        assert request["response_format"] == {"type": "json_object"}
        assert request["messages"][0]["role"] == "system"
    assert set(openai_stub.paths) == {"/v1/chat/completions"}


FAILURES: dict[str, tuple[Callable[[dict[str, Any]], Reply], str]] = {
    "timeout": (lambda r: completion("{}", delay=60.0), "timeout"),
    "http-500": (lambda r: error(500, "model crashed"), "http"),
    "http-503": (lambda r: error(503, "overloaded"), "http"),
    "body-not-json": (lambda r: Reply(200, "<html>not json"), "parse"),
    "body-not-a-completion": (lambda r: Reply(200, {"object": "list"}), "parse"),
    "content-not-json": (lambda r: completion("The statements are: it is 12 euros."),
                         "parse"),
    "content-wrong-schema": (lambda r: completion('{"verdicts": [1, 0]}'), "parse"),
    "content-null": (lambda r: completion(None), "parse"),
    "cut-at-max-tokens": (lambda r: completion('{"statements": ["The bud',
                                               finish_reason="length"), "parse"),
}


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("case", list(FAILURES))
def test_every_failure_is_a_judge_failure_of_its_kind(
        case: str, metric: str, openai_stub: OpenAIStub, embedder: Embedder) -> None:
    script, kind = FAILURES[case]
    openai_stub.script = script
    caught = failure(make_judge(openai_stub, embedder), item(), metric)
    assert caught.kind == kind, caught  # a timeout not honoured would end as a good reply
    assert len(openai_stub.requests) == 1  # no retries
    if case.startswith("http"):
        assert case.split("-")[1] in caught.message


def test_an_unreachable_server_is_an_http_failure(embedder: Embedder) -> None:
    stub = OpenAIStub().start()
    stub.stop()  # the port is closed now
    caught = failure(make_judge(stub, embedder), item(), "faithfulness")
    assert caught.kind == "http" and "connect" in caught.message


def test_a_server_refusing_json_mode_is_asked_again_without_it(
        openai_stub: OpenAIStub, embedder: Embedder) -> None:
    answer = "The budget is 12 euros."
    verdicts = ragas_script({answer: RowVerdicts(statements=[answer], supported=[False])})

    def script(request: dict[str, Any]) -> Reply:
        if "response_format" in request:
            return error(400, "response_format is not supported")
        return verdicts(request)

    openai_stub.script = script
    judge = make_judge(openai_stub, embedder)
    assert score(judge, item(answer), "faithfulness") == 0.0
    assert ["response_format" in r for r in openai_stub.requests] == [True, False, False]
    assert judge.transport.json_mode is False


def test_inputs_ragas_refuses_are_missing_without_asking(openai_stub: OpenAIStub,
                                                         embedder: Embedder) -> None:
    judge = make_judge(openai_stub, embedder)
    assert failure(judge, item(contexts=()), "faithfulness").kind == "missing"
    assert failure(judge, item(contexts=()), "context_precision").kind == "missing"
    assert failure(judge, item(answer=""), "answer_relevance").kind == "missing"
    assert failure(judge, item(), "recall").kind == "error"
    assert openai_stub.requests == []


# --- prompt hash, parsing and the text bridge ----------------------------------------------


def test_the_prompt_hash_follows_the_ragas_prompts(monkeypatch: pytest.MonkeyPatch,
                                                   embedder: Embedder) -> None:
    def hashes() -> dict[str, str]:
        judge = RagasJudge("m", "http://127.0.0.1:9/v1", api_key=None, timeout=1.0,
                           embedder=embedder)
        return {m: judge.prompt_hash(m) for m in METRICS}

    before = hashes()
    assert before == hashes() and len(set(before.values())) == 3
    assert all(len(h) == 64 for h in before.values())
    monkeypatch.setattr(StatementGeneratorPrompt, "instruction",
                        StatementGeneratorPrompt.instruction + " Be brief.")
    after = hashes()
    assert after["faithfulness"] != before["faithfulness"]
    assert {m: after[m] for m in METRICS[1:]} == {m: before[m] for m in METRICS[1:]}


@pytest.mark.parametrize("text", [
    '{"statements": ["a"]}',
    '```json\n{"statements": ["a"]}\n```',
    '<think>the answer has one claim</think>\n{"statements": ["a"]}',
    'Here you go: {"statements": ["a"]} Hope that helps.',
])
def test_replies_around_one_json_object_parse(text: str) -> None:
    assert parse_json_reply(text, StatementGeneratorOutput).statements == ["a"]


def test_the_schema_is_added_only_when_the_prompt_lacks_it() -> None:
    from pytest_ragate.judges.ragas import schema_text

    schema = schema_text(StatementGeneratorOutput)
    bare = RagateInstructorLLM.messages("list the statements", StatementGeneratorOutput)
    assert schema in bare[0]["content"]
    ragas_prompt = f"instructions {schema} input"
    assert schema not in RagateInstructorLLM.messages(ragas_prompt,
                                                      StatementGeneratorOutput)[0]["content"]


def test_ragas_legacy_prompts_run_through_the_instructor_bridge(openai_stub: OpenAIStub,
                                                                ) -> None:
    from ragas.metrics._faithfulness import StatementGeneratorInput
    from ragas.metrics._faithfulness import StatementGeneratorPrompt as LegacyPrompt

    openai_stub.script = lambda r: completion('{"statements": ["It costs 12 euros."]}')
    data = StatementGeneratorInput(question="What does it cost?", answer="12 euros.")
    llm = RagateInstructorLLM(ChatTransport("stub-model", openai_stub.url, timeout=TIMEOUT))
    out = asyncio.run(LegacyPrompt().generate(llm=llm, data=data))
    assert out.statements == ["It costs 12 euros."]


def test_the_sync_instructor_call_works_inside_a_running_loop(openai_stub: OpenAIStub) -> None:
    openai_stub.script = lambda r: completion('{"statements": []}')
    llm = RagateInstructorLLM(ChatTransport("stub-model", openai_stub.url, timeout=TIMEOUT))

    async def inside() -> StatementGeneratorOutput:
        return llm.generate("prompt", StatementGeneratorOutput)

    assert llm.generate("prompt", StatementGeneratorOutput).statements == []
    assert asyncio.run(inside()).statements == []


def test_the_embeddings_bridge_returns_our_embedders_vectors(embedder: Embedder) -> None:
    bridge = RagateEmbeddings(embedder)
    texts = ["What is the budget?", "Who draws?"]
    expected = np.vstack([embedder.encode([text]) for text in texts])
    got = asyncio.run(bridge.aembed_texts(texts))
    assert all(isinstance(x, float) for x in got[0])
    assert np.array_equal(np.asarray(got, np.float32), expected)
    assert bridge.embed_text(texts[0]) == got[0]
    assert math.isclose(float(np.linalg.norm(got[1])), 1.0, rel_tol=1e-6)
