"""What the judge cache folder keeps beside the verdicts for `ragate plan`: each question's
last keys and the lengths of its last answer and contexts (never their texts), a hash memo
that asks a judge once per prompt version, and a token count that never downloads."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ragate.answer import Context
from pytest_ragate.judges.base import JudgeInput
from pytest_ragate.judges.cache_index import index_key, read_entry
from pytest_ragate.judges.plan import token_counter
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
