"""What the judge cache folder keeps beside the verdicts for `ragate plan`: each question's
last keys and the lengths of its last answer and contexts (never their texts), a hash memo
that asks a judge once per prompt version, and a token count that never downloads."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path

import pytest

from pytest_ragate.answer import Context
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.cache_index import (
    INDEX_PREFIX,
    index_key,
    judge_identity,
    migrate_index,
    read_entry,
    said_rekeyed,
    stamp,
)
from pytest_ragate.judges.plan import PlanJudge, PlannedQuestion, _entry, token_counter
from pytest_ragate.judges.ragas_deferred import prompt_version
from pytest_ragate.judges.runner import JudgeRunner, cache_key


class VersionedJudge:
    """A judge of one's own with the optional hooks: a prompt version and late building."""

    judge_id = "mine@1"
    metrics = ("faithfulness",)

    def __init__(self) -> None:
        self.hashed = 0
        self.prepared = 0

    def prompt_version(self, metric: str) -> str:
        return f"v1/{metric}"

    def prompt_hash(self, metric: str) -> str:
        self.hashed += 1
        return "a" * 64

    def prepare(self) -> None:
        self.prepared += 1

    async def score(self, item: JudgeInput, metric: str) -> float:
        return 0.5


ITEM = JudgeInput("q1", "What is the code?", "The code is secret-42.",
                  (Context(context_id="c1", doc_id="d", first_unit=0, last_unit=0,
                           text="the code: secret-42", distance=0.1),), reference="a code")


def test_the_index_keeps_each_question_s_last_keys_and_only_lengths(tmp_path: Path) -> None:
    runner = JudgeRunner(2, tmp_path, "on")
    judge = VersionedJudge()
    try:
        first = runner.submit(judge, ITEM, judge.metrics, "7", "gs").result(timeout=30)
        assert first.values == {"faithfulness": 0.5} and judge.prepared == 1
        again = runner.submit(judge, ITEM, judge.metrics, "7", "gs").result(timeout=30)
        assert again.cached == ["faithfulness"]
        assert judge.hashed == 1  # the memo served the second key
        assert runner.cache is not None
        entry = read_entry(runner.cache.get(index_key("gs", "q1", 1, "mine@1")))
        assert entry is not None
        assert entry.keys == {"faithfulness": cache_key("7", judge, "faithfulness", ITEM)}
        assert entry.sentences == [len("The code is secret-42.")]
        assert entry.contexts == [len("the code: secret-42")]
        stored = repr(runner.cache.get(index_key("gs", "q1", 1, "mine@1")))
        assert "secret-42" not in stored and "code" not in stored
    finally:
        runner.close()


def test_a_sealed_questions_keys_are_keyed_and_a_plaintext_ones_unchanged() -> None:
    """A sealed goldset's question (its `digest_key`) is cached under an HMAC of what the
    judge sees, its gist included, and its index stamp is keyed alike: no one holding the
    committed folder can confirm a guess of the gist by hashing it. A plaintext question
    keeps the plain sha256 it always had, so caches written before stay valid."""
    judge = VersionedJudge()
    plain = hashlib.sha256(json.dumps(
        [ITEM.question, ITEM.answer, [("c1", "the code: secret-42")], "a code"],
        ensure_ascii=False).encode()).hexdigest()
    assert ITEM.digest() == plain
    sealed = [dataclasses.replace(ITEM, digest_key=key) for key in (b"k1", b"k2")]
    digests = {ITEM.digest(), *(item.digest() for item in sealed)}
    assert len(digests) == 3 and all(d.startswith("hmac-sha256:") for d in digests - {plain})
    keys = {cache_key("7", judge, "faithfulness", item) for item in (ITEM, *sealed)}
    assert len(keys) == 3
    fields = {"eval_version": "7", "judge_id": "mine@1", "params": {}, "repeat": 1,
              "prompt_versions": {"faithfulness": "v1"}, "question": ITEM.question,
              "reference": ITEM.reference}
    stamps = {stamp(**fields, key=item.digest_key) for item in (ITEM, *sealed)}
    assert len(stamps) == 3 and stamp(**fields) == hashlib.sha256(json.dumps(
        {"eval_version": "7", "judge": "mine@1", "params": {}, "prompts": {"faithfulness": "v1"},
         "question": ITEM.question, "reference": "a code", "repeat": 1},
        sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def test_a_sealed_questions_index_entry_holds_only_keyed_digests(tmp_path: Path) -> None:
    """The runner's index entry of a sealed question: its verdict key and stamp are the
    keyed ones, and neither the plain key nor the plain stamp is stored."""
    runner, judge = JudgeRunner(2, tmp_path, "on"), VersionedJudge()
    item = dataclasses.replace(ITEM, digest_key=b"k1")
    try:
        runner.submit(judge, item, judge.metrics, "7", "gs").result(timeout=30)
        assert runner.cache is not None
        entry = read_entry(runner.cache.get(index_key("gs", "q1", 1, "mine@1")))
        assert entry is not None
        assert entry.keys == {"faithfulness": cache_key("7", judge, "faithfulness", item)}
        assert entry.stamp.startswith("hmac-sha256:")
        stored = [*runner.cache.iterkeys(), *(repr(runner.cache.get(k))
                                               for k in runner.cache.iterkeys())]
        plain = {cache_key("7", judge, "faithfulness", ITEM), stamp(
            eval_version="7", judge_id="mine@1", params={}, repeat=1, question=ITEM.question,
            prompt_versions={"faithfulness": "v1/faithfulness"}, reference=ITEM.reference)}
        assert not [s for s in stored for p in plain if p in str(s)]
    finally:
        runner.close()


class RagasVersioned(VersionedJudge):
    """A judge whose prompt versions are RAGAS's (what `ragate plan` computes them as)."""

    judge_id = "ragas:stub@t=0"

    def prompt_version(self, metric: str) -> str:
        return prompt_version(metric, "")


def test_the_plan_finds_a_sealed_questions_keys_only_with_its_digest_key(
        tmp_path: Path) -> None:
    """`ragate plan` compares the index's stamp with its own: for a sealed question it
    computes it keyed as the run did (the goldset opened with its key), so the verdicts the
    run cached count as cached; with another key or none they would not."""
    runner, judge = JudgeRunner(2, tmp_path, "on"), RagasVersioned()
    try:
        runner.submit(judge, dataclasses.replace(ITEM, digest_key=b"k1"), judge.metrics, "7",
                      "gs").result(timeout=30)
        planned = PlanJudge(kind="ragas", judge_id=judge.judge_id)
        valid = [_entry(runner.cache, PlannedQuestion(
            goldset="gs", eval_version="7", question_id="q1", question=ITEM.question,
            reference=ITEM.reference, repeat=1, judged=True, digest_key=key), planned)[1]
            for key in (b"k1", b"k2", None)]
        assert valid == [True, False, False]
    finally:
        runner.close()


def test_a_judge_without_prompt_versions_is_not_indexed(tmp_path: Path) -> None:
    class Plain(VersionedJudge):
        prompt_version = None  # type: ignore[assignment]

    runner = JudgeRunner(2, tmp_path, "on")
    judge = Plain()
    try:
        runner.submit(judge, ITEM, judge.metrics, "7", "gs").result(timeout=30)
        runner.submit(judge, ITEM, judge.metrics, "7", "gs").result(timeout=30)
        assert judge.hashed == 2  # no memo without a version to keep it under
        assert runner.cache is not None
        assert runner.cache.get(index_key("gs", "q1", 1, "mine@1")) is None
    finally:
        runner.close()


MODEL_KEY = "sk-S3CRET-model-0123456789"


def test_the_index_names_a_judge_by_its_masked_id_and_a_digest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46 item 2: a key in the model's name, a URL's password, a key the environment
    holds are never in an index key; judges the mask makes alike are still told apart, and
    a URL's credentials (which decide no verdict, as in `cache_key`) do not part them."""
    monkeypatch.setenv("RAGATE_JUDGE_API_KEY", "envS3CRETvalue")
    ids = [f"ragas:gpt-x-{MODEL_KEY}@temperature=0", "ragas:gpt-x-sk-another-key-0123456789@t",
           "mine@https://alice:S3CRET-pw@judge.example/v1", "mine@envS3CRETvalue"]
    keys = [index_key("gs", "q1", 1, judge_id) for judge_id in ids]
    assert all("S3CRET" not in key and "alice" not in key for key in keys), keys
    assert keys[0] == 'index/["gs", "q1", 1, "ragas:gpt-x-***@temperature=0 sha256:' \
        + keys[0][-18:-2] + '"]'
    assert judge_identity(ids[0]) != judge_identity(ids[0].replace("0123", "4567"))
    assert judge_identity(ids[2]) == judge_identity(ids[2].replace("S3CRET-pw", "rotated"))


def test_an_index_written_before_is_re_keyed_once_and_keeps_its_entries(tmp_path: Path) -> None:
    """Keys that named the judge in full are moved under its identity in one transaction,
    their entries kept (`ragate plan` still finds them), and no byte of the folder holds the
    key after; a second call reads one marker and moves nothing."""
    import diskcache

    judge_id = f"ragas:gpt-x-{MODEL_KEY}@temperature=0"
    entry = {"keys": {"faithfulness": "a" * 64}, "stamp": "s", "sentences": [3],
             "contexts": [5]}
    with diskcache.Cache(str(tmp_path)) as cache:
        for i in range(300):  # verdicts, as a used cache holds them
            cache.set(f"{i:064x}", {"value": 0.5, "vacuous": False})
        cache.set(INDEX_PREFIX + json.dumps(["gs", "q1", 1, judge_id]), entry)
        cache.set(index_key("gs", "q2", 1, judge_id), entry)  # written by this version
    assert any(b"S3CRET" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    with diskcache.Cache(str(tmp_path)) as cache:
        assert migrate_index(cache) == 1
        assert migrate_index(cache) == 0
        assert (said_rekeyed(cache), said_rekeyed(cache)) == (1, 0)  # said by one run
        assert read_entry(cache.get(index_key("gs", "q1", 1, judge_id))) is not None
        assert read_entry(cache.get(index_key("gs", "q2", 1, judge_id))) is not None
        assert sorted(k for k in cache.iterkeys() if k.startswith(INDEX_PREFIX)) == sorted(
            index_key("gs", q, 1, judge_id) for q in ("q1", "q2"))
    assert not any(b"S3CRET" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.parametrize("raw", [None, "text", {"keys": {}}, {"keys": 1, "stamp": "s",
                                                              "sentences": [], "contexts": []},
                                 {"keys": {}, "stamp": "s", "answer": "the text",
                                  "contexts": ["a context"]}])
def test_an_index_entry_that_is_not_one_counts_as_missing(raw: object) -> None:
    assert read_entry(raw) is None


def test_tokens_are_counted_by_the_stated_rule_when_no_encoding_file_is_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: a download would follow
    count, rule = token_counter("gpt-4o-mini")
    assert rule.startswith("4 characters a token")
    assert count("x" * 10) == math.ceil(10 / 4)
    assert list(tmp_path.iterdir()) == []  # nothing fetched
