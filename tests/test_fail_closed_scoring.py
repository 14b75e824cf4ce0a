"""The adversary against scoring: evidence named by a context id, distances that are not
distances, and answers so wide that scoring them would take longer than the run is worth.
Each case is played through pytest (or the `ragate` CLI) as a user would meet it, with and
without `-n 2` where workers are involved, and held to its exit status and message."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import Document as HaystackDocument
from haystack.document_stores.in_memory import InMemoryDocumentStore
from langchain_core.documents import Document as LangchainDocument
from llama_index.core.schema import NodeWithScore, TextNode

from pytest_ragate.adapters import AdapterError, from_haystack, from_langchain, from_llamaindex
from pytest_ragate.answer import Answer, Citation, Context
from pytest_ragate.cli import main
from pytest_ragate.scoring.calibrate import distances_missing, replay, sweep
from pytest_ragate.scoring.records import (
    ContextRef,
    Evidence,
    QuestionRecord,
    Span,
    WholeDocument,
    score_answer,
)
from tests.conftest import (
    BASE_TOML,
    WORKERS,
    WORKERS_SHARED,
    expect,
    junit_cases,
    results_rows,
    rows_of,
    run_pytester,
    write_goldset,
)
from tests.test_adapters import META
from tests.test_fail_closed import planned, write_many

pytestmark = pytest.mark.heavy  # haystack, LlamaIndex and LangChain take seconds to import

# --- 1. evidence by context id is found only in its document ---------------------------------

CHUNK_QUESTIONS = [{"question_id": "q1", "kind": "single_doc", "question": "What about q1?"},
                   {"question_id": "q2", "kind": "single_doc", "question": "What about q2?"}]

# m1's chunk `m1#2`, and a chunk of m2 that its system happens to name `m1#2` too
OWN = "Context(context_id='m1#2', doc_id='m1', first_unit=2, last_unit=3, distance=0.2)"
IMPOSTOR = "Context(context_id='m1#2', doc_id='m2', first_unit=0, last_unit=1, distance=0.2)"


def chunk_goldset(root: Path, evidence: dict[str, str]) -> None:
    write_goldset(root, floors="[floors]\ncitation_accuracy = 0.9\nevidence_recall = 0.9\n",
                  questions=CHUNK_QUESTIONS, expected=[
                      {"question_id": q, "gist": "the budget", "evidence": [evidence]}
                      for q in ("q1", "q2")])


@WORKERS
def test_a_context_named_like_the_evidence_but_from_another_document_is_not_it(
        pytester: pytest.Pytester, workers: str) -> None:
    chunk_goldset(pytester.path / "gs", {"context_id": "m1#2", "doc_id": "m1"})
    pytester.makeconftest(planned({"q1": f"cite({OWN})", "q2": f"cite({IMPOSTOR})"}))
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", "--junitxml=j.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = rows_of(pytester.path / "r.jsonl")
    assert (rows["q1"]["citations_correct"], rows["q1"]["evidence_spans_found"]) == (1, 1)
    assert (rows["q2"]["citations_correct"], rows["q2"]["evidence_spans_found"]) == (0, 0)
    expect(result, "*FAILED gs/ragate.toml::floor[citation_accuracy]*0.50*",
           "*FAILED gs/ragate.toml::floor[evidence_recall]*0.50*")
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::floor[citation_accuracy]"]["outcome"] == "failure"


@WORKERS
def test_evidence_by_context_id_alone_is_refused_naming_question_and_field(
        pytester: pytest.Pytester, workers: str) -> None:
    """Today's form, `{"context_id": "m1#2"}`, cannot tell m1's chunk from m2's: the
    impostor made this gate green."""
    chunk_goldset(pytester.path / "gs", {"context_id": "m1#2"})
    pytester.makeconftest(planned({"q1": f"cite({OWN})", "q2": f"cite({IMPOSTOR})"}))
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl")
    assert result.ret != pytest.ExitCode.OK
    expect(result, "*expected.jsonl:1*q1*evidence[0]*context_id 'm1#2' needs the doc_id "
           "of its document too*", "*expected.jsonl:2*q2*evidence[0]*")
    assert not (pytester.path / "r.jsonl").exists() or not rows_of(pytester.path / "r.jsonl")


# --- 2. a distance is a distance --------------------------------------------------------------

@WORKERS
def test_a_negative_distance_is_a_malformed_answer_naming_its_field(
        pytester: pytest.Pytester, workers: str) -> None:
    """A score turned upside down passed every max_distance and read "nearest distance
    -18.40" in the reports, on a green gate."""
    write_many(pytester.path / "gs", 2, floors="[floors]\ncitation_accuracy = 0.5\n")
    upside_down = ("{'text': 'x', 'citations': [{'context_id': 'c'}], 'contexts': [{"
                   "'context_id': 'c', 'doc_id': 'm1', 'first_unit': 2, 'last_unit': 3, "
                   "'distance': -18.4}]}")
    pytester.makeconftest(planned({"q00": upside_down}))
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl", "--junitxml=j.xml",
                          "--ragate-report=r.md")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    error = rows_of(pytester.path / "r.jsonl")["q00"]["error"]
    assert "malformed answer" in error
    expect(result, "*contexts.0.distance*", "*must be 0 or more (lower is closer), not -18.4*")
    assert "-18.40" not in (pytester.path / "r.md").read_text()
    cases = junit_cases(pytester.path / "j.xml")
    assert cases["gs.ragate.toml::q00"]["outcome"] == "failure"
    assert cases["gs.ragate.toml::floor[citation_accuracy]"]["outcome"] == "failure"


BM25_CORPUS = {"m1": ["You can return any product within 30 days.",
                      "Opened software cannot be returned.",
                      "Refunds go back to the card you paid with", "within five working days."],
               "m2": ["Orders ship within two days.", "Express shipping costs ten euros."]}


def bm25_goldset(root: Path, name: str) -> None:
    """Two questions and an off-topic control, over a corpus a BM25 retriever scores from
    about 1.7 (the control) to 6.9: scores, not distances."""
    write_goldset(
        root, toml=BASE_TOML.replace('"mini"', f'"{name}"'),
        floors="[floors]\ncitation_accuracy = 0.9\n",
        corpus=[{"doc_id": d, "unit": t, "text": text, "speaker": "A"}
                for d, texts in BM25_CORPUS.items() for t, text in enumerate(texts)],
        questions=[{"question_id": "refund", "kind": "single_doc",
                    "question": "When does my refund reach the card I paid with?"},
                   {"question_id": "express", "kind": "single_doc",
                    "question": "What does express shipping cost?"}],
        expected=[{"question_id": "refund", "gist": "five working days",
                   "evidence": [{"doc_id": "m1", "first_unit": 2, "last_unit": 3}]},
                  {"question_id": "express", "gist": "ten euros",
                   "evidence": [{"doc_id": "m2", "first_unit": 1, "last_unit": 1}]}],
        anchors=[{"anchor_id": "lima", "kind": "off_topic_control",
                  "claim": "the weather in Lima", "evidence": None}])


# A team's system over Haystack's InMemoryBM25Retriever, through the adapter; SCORE is what it
# tells the adapter about the scores (None: it says nothing). The conftest.py of its goldset's
# folder (`bm25_run`: one folder per SCORE).
BM25_SYSTEM = '''
import json
from pathlib import Path

import pytest
from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from pytest_ragate import Answer, Citation
from pytest_ragate.adapters import from_haystack

SCORE = {score!r}

@pytest.fixture(scope="session")
def bm25():
    store = InMemoryDocumentStore()
    rows = [json.loads(line) for line in Path(__file__).with_name("corpus").joinpath(
        "meetings.jsonl").open()]
    store.write_documents([Document(content=r["text"], meta={{
        "doc_id": r["doc_id"], "first_unit": r["unit"], "last_unit": r["unit"]}}) for r in rows])
    return InMemoryBM25Retriever(store, top_k=3)

@pytest.fixture
def ragate_system(bm25):
    def answer(question):
        documents = bm25.run(query=question)["documents"]
        kind = {{}} if SCORE is None else {{"score": SCORE}}
        contexts = from_haystack(documents, **kind)
        return Answer(text=contexts[0].text, contexts=contexts,
                      citations=[Citation(context_id=contexts[0].context_id)])
    return answer
'''


@dataclass(frozen=True)
class Bm25Run:
    """One run of two goldsets over the BM25 system, one per thing it tells the adapter:
    `unsaid/` (nothing: SCORE None, goldset "unsaid") and `rank/` (score='none', goldset
    "mini"); its folder, results r.jsonl and JUnit j.xml."""

    root: Path
    result: pytest.RunResult

    def rows(self, goldset: str) -> dict[str, dict[str, Any]]:
        return {r["question_id"]: r for r in results_rows(self.root / "r.jsonl")
                if r["goldset"] == goldset}


@pytest.fixture(scope="module")
def bm25_runs() -> dict[str, Bm25Run]:
    """The BM25 run once per worker count for the module (xdist's workers import Haystack:
    seconds each), kept after its first test."""
    return {}


@pytest.fixture
def bm25_run(pytester: pytest.Pytester, workers: str,
             bm25_runs: dict[str, Bm25Run]) -> Bm25Run:
    """The BM25 run under `-n workers`, made in the first test that asks (in its pytester
    folder, which the later tests only read)."""
    if workers not in bm25_runs:
        for folder, name, score in (("unsaid", "unsaid", None), ("rank", "mini", "none")):
            bm25_goldset(pytester.path / folder, name)
            (pytester.path / folder / "conftest.py").write_text(BM25_SYSTEM.format(score=score))
        result = run_pytester(pytester, workers, "unsaid", "rank", "--ragate-results=r.jsonl",
                              "--junitxml=j.xml")
        bm25_runs[workers] = Bm25Run(pytester.path, result)
    return bm25_runs[workers]


@WORKERS_SHARED
def test_bm25_scores_given_no_kind_are_refused_by_the_adapter(bm25_run: Bm25Run) -> None:
    """Taken for similarities, the BM25 scores were distances of -0.7 to -5.9: every
    question answered on a green floor, and the off-topic control failed for a reason
    nobody could see ("within max_distance 0.7: m1:2-2 (-0.73)")."""
    result = bm25_run.result
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = bm25_run.rows("unsaid")
    assert {q: r["status"] for q, r in rows.items()} == {"refund": "error", "express": "error"}
    assert "Haystack document 1 carries a score (6.93" in rows["refund"]["error"]
    assert "pass score='distance'" in rows["refund"]["error"]
    expect(result, "*FAILED unsaid/ragate.toml::anchor[lima]*carries a score (1.73*")
    cases = junit_cases(bm25_run.root / "j.xml")
    assert cases["unsaid.ragate.toml::floor[citation_accuracy]"]["outcome"] == "failure"


@WORKERS_SHARED
def test_a_rank_only_retriever_scores_questions_and_says_the_control_needs_distances(
        bm25_run: Bm25Run) -> None:
    result = bm25_run.result
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # both goldsets fail; this one by its anchor
    rows = bm25_run.rows("mini")
    assert len(rows) == 2 and all(r["status"] == "scored" and r["citations_correct"] == 1
                                  and r["nearest_distance"] is None for r in rows.values())
    expect(result, "*anchor lima: an off_topic_control anchor is held to a max_distance, and "
           "1 of the 1 contexts in its pool carry no distance (m1:2-2)*drop the anchor*",
           "*PASSED rank/ragate.toml::floor[citation_accuracy]*")
    cases = junit_cases(bm25_run.root / "j.xml")
    assert cases["rank.ragate.toml::anchor[lima]"]["outcome"] == "failure"
    calibrated = CliRunner().invoke(main, ["calibrate", str(bm25_run.root / "r.jsonl")])
    assert calibrated.exit_code == 1, calibrated.output
    assert ("mini: max_distance cannot be replayed: 2 of 2 scored rows retrieved contexts "
            "without a distance (refund, express)") in calibrated.output


def test_calibrate_never_counts_a_row_without_distances_as_far() -> None:
    """Such a row read as "nothing near": an abstention right at every threshold."""
    rows = [QuestionRecord(goldset="g", question_id=q, kind="unanswerable", index=i,
                           eval_version="1", must_abstain=True, abstained=False,
                           contexts=3, nearest_distance=None, evidence_spans=0)
            for i, q in enumerate(("u1", "u2"))]
    assert [(s.abstention_correct, s.unknown) for s in sweep(rows)] == [(0, 2)]
    assert distances_missing("g", rows) is not None
    nothing = rows[0].model_copy(update={"contexts": 0})  # nothing retrieved is far
    assert distances_missing("g", [nothing]) is None
    assert replay([nothing], 0.5).abstention_correct == 1


def test_the_nearest_distance_of_a_pool_with_a_context_without_one_is_unknown() -> None:
    near = Context(context_id="a", doc_id="m1", first_unit=0, last_unit=0, distance=0.9)
    rank_only = Context(context_id="b", doc_id="m1", first_unit=1, last_unit=1)
    assert Answer(text="x", contexts=[near]).nearest_distance == 0.9
    assert Answer(text="x", contexts=[near, rank_only]).nearest_distance is None


def bm25_documents() -> list[Any]:
    """What Haystack's InMemoryBM25Retriever returns for a question: raw BM25 scores."""
    store = InMemoryDocumentStore()
    store.write_documents([
        HaystackDocument(content=text, meta={"doc_id": d, "first_unit": t, "last_unit": t})
        for d, texts in BM25_CORPUS.items() for t, text in enumerate(texts)])
    found = InMemoryBM25Retriever(store, top_k=3).run(
        query="refund card paid working days")["documents"]
    assert found[0].score > 1  # a score, on no scale
    return found


def test_haystack_bm25_scores_are_kept_as_no_distance_only_when_told() -> None:
    documents = bm25_documents()
    with pytest.raises(AdapterError, match=r"Haystack document 1 carries a score \(\d+\.\d+\) "
                       r"and nothing says what it is: pass score='distance'"):
        from_haystack(documents)
    with pytest.raises(AdapterError, match=r"Haystack document 1: score \d+\.\d+ is no "
                       "similarity"):
        from_haystack(documents, score="similarity")
    contexts = from_haystack(documents, score="none")
    assert [(c.doc_id, c.first_unit, c.distance) for c in contexts][:2] == [
        ("m1", 2, None), ("m1", 3, None)]  # rank order kept, no distance made up


def test_a_score_kind_that_cannot_hold_is_refused_by_name() -> None:
    doc = LangchainDocument(page_content="x", metadata=META, id="r#2")
    with pytest.raises(AdapterError, match=r"LangChain result 1 carries a score \(0.25\) and "
                       "nothing says what it is"):
        from_langchain([(doc, 0.25)])  # Chroma's distance, or InMemoryVectorStore's cosine?
    with pytest.raises(AdapterError, match=r"LangChain result 1: score -0\.3 is no distance"):
        from_langchain([(doc, -0.3)], score="distance")
    with pytest.raises(AdapterError, match="LangChain result 1 carries no score, and "
                       "score='distance' says it has one"):
        from_langchain([doc], score="distance")
    with pytest.raises(AdapterError, match="score='cosine' is none of score='distance'"):
        from_langchain([(doc, 0.25)], score="cosine")  # type: ignore[arg-type]
    node = NodeWithScore(node=TextNode(text="x", id_="n1", metadata=META), score=12.5)
    with pytest.raises(AdapterError, match=r"LlamaIndex node 1: score 12\.5 is no similarity"):
        from_llamaindex([node], score="similarity")
    assert from_langchain([doc])[0].distance is None  # no scores: nothing to say
    assert from_langchain([(doc, 0.75)], score="similarity")[0].distance == 0.25


# --- 3. scoring is near-linear in contexts plus citations -------------------------------------
# (benchmarks/wide_answers.py times the gate over 8 answers of 20,000 contexts and citations)

class Passes(list):  # type: ignore[type-arg]
    """The contexts of an answer, counting the passes scoring makes over them."""

    passes = 0

    def __iter__(self) -> Any:
        self.passes += 1
        return super().__iter__()


def passes_to_score(citations: int, evidence: list[Evidence]) -> int:
    contexts = Passes(Context(context_id=f"c{t}", doc_id="m1", first_unit=t, last_unit=t,
                              distance=0.5) for t in range(1000))
    answer = Answer.model_construct(text="x", abstained=False, contexts=contexts, knobs={},
                                    citations=[Citation(context_id=f"c{t}")
                                               for t in range(citations)])
    scored = score_answer(answer, evidence)
    assert scored["citations"] == citations and scored["contexts"] == 1000
    return contexts.passes


@pytest.mark.heavy  # scores pools of 1000 contexts
def test_scoring_passes_over_the_contexts_a_fixed_number_of_times() -> None:
    """Each citation found its context by a scan of the pool (and again for its label), and
    each piece of evidence scanned it too: 8 answers of 20,000 took minutes."""
    few = passes_to_score(10, [Span("m1", 2, 3)])
    assert passes_to_score(1000, [Span("m1", 2, 3)]) == few
    assert passes_to_score(1000, [Span("m1", 2, 3), WholeDocument("m1"),
                                  ContextRef("c9", "m1")]) == few
    assert few <= 3


def test_a_context_is_held_only_to_its_own_documents_evidence(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Span] = []
    real = Span.matches

    def counted(self: Span, context: Context) -> bool:
        calls.append(self)
        return real(self, context)

    monkeypatch.setattr(Span, "matches", counted)
    contexts = [Context(context_id=f"c{t}", doc_id="m1", first_unit=t, last_unit=t)
                for t in range(500)]
    answer = Answer(text="x", contexts=contexts,
                    citations=[Citation(context_id=c.context_id) for c in contexts])
    elsewhere = [Span(f"m{d}", 0, 1) for d in range(2, 40)]
    scored = score_answer(answer, [Span("m1", 2, 3), *elsewhere])
    assert (scored["citations_correct"], scored["evidence_ranks"][0]) == (2, 3)
    assert len(calls) == 2 * 500  # the pool and the citations, each against m1's one span


# --- 4. the built-in answerer's max_distance reads the built-in retriever's distances ---------

@WORKERS
def test_the_built_in_system_over_a_retriever_of_your_own_says_to_override_it_too(
        pytester: pytest.Pytester, workers: str) -> None:
    """It abstains on cosine distances and quotes sentences only the built-in index has (the
    built-in system is asked for: without it, no ragate_system is in scope at all)."""
    write_many(pytester.path / "gs", 2, floors="[floors]\nabstention_accuracy = 0.5\n")
    pytester.makeconftest('''
import pytest
from pytest_ragate import Context

@pytest.fixture
def ragate_retriever():
    def retrieve(query):
        return [Context(context_id="c", doc_id="m1", first_unit=2, last_unit=3)]
    return retrieve
''')
    result = run_pytester(pytester, workers, "gs", "--ragate-results=r.jsonl",
                          "--ragate-builtin-system")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = rows_of(pytester.path / "r.jsonl")
    assert {r["status"] for r in rows.values()} == {"error"}
    expect(result, "*the built-in ragate_system answers over the built-in retriever only*"
           "override ragate_system too when you override ragate_retriever*")


def test_the_built_in_answerer_refuses_a_context_without_a_distance() -> None:
    """A context without one counted as within max_distance (`distance or 0.0`)."""
    from pytest_ragate.builtin_system.extractive import ExtractiveAnswerer

    pool = [Context(context_id="near", doc_id="m1", first_unit=0, last_unit=0, distance=0.3),
            Context(context_id="unknown", doc_id="m1", first_unit=1, last_unit=1)]
    retriever = SimpleNamespace(embed_query=lambda q: None, top_k=2, knobs={},
                                search=lambda query, k, text: pool,
                                embedder=SimpleNamespace(model_id="m"))
    with pytest.raises(ValueError, match="needs every context's distance; without one: unknown"):
        ExtractiveAnswerer(retriever, max_distance=0.7, support=0.35)("q")  # type: ignore[arg-type]


def test_float_rounding_of_a_zero_distance_is_zero_and_no_more() -> None:
    """A cosine distance of a text to itself (1 - a float32 dot product) may be -1e-7."""
    def distance(value: float) -> float | None:
        return Context(context_id="c", doc_id="m", first_unit=0, last_unit=0,
                       distance=value).distance

    assert distance(-2.4e-7) == 0.0 and distance(0.0) == 0.0 and distance(0.3) == 0.3
    with pytest.raises(ValueError, match="must be 0 or more"):
        distance(-1e-4)
    doc = LangchainDocument(page_content="x", metadata=META, id="r#2")
    assert from_langchain([(doc, -2.4e-7)], score="distance")[0].distance == 0.0
    assert from_langchain([(doc, 1.0000002)], score="similarity")[0].distance == 0.0
