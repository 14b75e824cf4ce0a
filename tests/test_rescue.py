"""The sentence rescue's merge rules, isolated from Chroma by a two-method stand-in."""

from __future__ import annotations

from typing import Any

import numpy as np

from pytest_ragate.builtin_system.rescue import RescueSettings, SentenceRescue, content_tokens

# (chunk, doc, text, cosine to the query)
SENTENCES = [
    ("d1#0", "d1", "Welcome everyone to the kick-off meeting.", 0.20),
    ("d1#1", "d1", "The remote should glow in the dark.", 0.80),
    ("d1#2", "d1", "A glowing remote costs twelve euros extra.", 0.70),
    ("d1#3", "d1", "Lunch is at noon today.", 0.10),
    ("d2#0", "d2", "Battery life of the glowing remote matters.", 0.60),
    ("d2#1", "d2", "The twelve euro budget for a glowing case.", 0.30),
]


class Sentences:
    """Answers `get` and `query` the way a Chroma collection does."""

    def get(self, include: list[str]) -> dict[str, Any]:
        return {"documents": [s[2] for s in SENTENCES],
                "metadatas": [{"chunk_id": s[0], "doc_id": s[1]} for s in SENTENCES]}

    def query(self, query_embeddings: list[list[float]], n_results: int,
              include: list[str]) -> dict[str, Any]:
        ranked = sorted(SENTENCES, key=lambda s: -s[3])[:n_results]
        return {"metadatas": [[{"chunk_id": s[0], "doc_id": s[1]} for s in ranked]],
                "distances": [[1.0 - s[3] for s in ranked]]}


def rescue(**settings: Any) -> SentenceRescue:
    return SentenceRescue(RescueSettings(**settings), Sentences(), {"d1": 10, "d2": 10},
                          {"d1": "d1#0", "d2": "d2#0"})


QUERY = "how much does the glowing remote cost in euros"
VECTOR = np.zeros(3)


def test_content_tokens_drop_function_words() -> None:
    assert content_tokens(QUERY) == {"much", "glowing", "remote", "cost", "euros"}


def test_semantic_path_keeps_chunks_over_the_floor_best_first() -> None:
    assert [c for c, _, _ in rescue().semantic(VECTOR)] == ["d1#1", "d1#2", "d2#0"]


def test_lexical_path_catches_what_the_embedding_misses() -> None:
    # d1#2 holds glowing, remote, euros: 3 of the query's 5 content words; the others hold
    # at most 2 (d2#0: glowing, remote), under the 0.5 share
    assert [(c, s) for c, _, s in rescue().lexical(QUERY)] == [("d1#2", 0.6)]


def test_merge_is_round_robin_capped_and_never_repeats_the_pool() -> None:
    added = rescue(cap=3).rescue(QUERY, VECTOR, pool=["d1#1"])
    assert added[0] == "d1#2"  # semantic's best not already pooled
    assert len(added) <= 3 and "d1#1" not in added and len(set(added)) == len(added)


def test_cap_by_share_of_the_document() -> None:
    # 10 chunks per document at 0.10 → at most 1 rescued chunk from each
    added = rescue(cap_fraction=0.10).rescue(QUERY, VECTOR, pool=[])
    assert added == ["d1#1", "d2#0"]


def test_front_matter_penalty_demotes_a_first_chunk() -> None:
    plain = rescue(semantic_floor=0.5).semantic(VECTOR)
    assert ("d2#0", "d2", 0.6) in [(c, d, round(s, 6)) for c, d, s in plain]
    penalised = rescue(semantic_floor=0.5, front_matter_penalty=0.2).semantic(VECTOR)
    assert "d2#0" not in [c for c, _, _ in penalised]
