"""Chunk turn ranges are exact: every citation is scored on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ragate.builtin_system.chunking import Chunker
from pytest_ragate.builtin_system.normalize import normalize
from pytest_ragate.goldsets.corpus import Document, Turn
from pytest_ragate.goldsets.loader import load_goldset

GOLDSETS = Path(__file__).parent.parent / "goldsets"


def doc(*texts: str) -> Document:
    return Document("m", tuple(Turn(t, f"S{i % 2}", float(10 * i), float(10 * i + 9))
                               for i, t in enumerate(texts)), Path("m"))


def test_turns_pack_exactly_up_to_the_budget() -> None:
    # 9 + 1 + 9 = 19 characters fit a budget of 20 (turns join with one newline)
    chunks = list(Chunker(20).chunk_document(doc("a" * 9, "b" * 9, "c" * 9)))
    assert [(c.first_unit, c.last_unit) for c in chunks] == [(0, 1), (2, 2)]
    assert chunks[0].text == "a" * 9 + "\n" + "b" * 9
    chunks = list(Chunker(21).chunk_document(doc("a" * 10, "b" * 10, "c" * 10)))
    assert [(c.first_unit, c.last_unit) for c in chunks] == [(0, 1), (2, 2)]
    chunks = list(Chunker(20).chunk_document(doc("a" * 10, "b" * 10, "c" * 10)))
    assert [(c.first_unit, c.last_unit) for c in chunks] == [(0, 0), (1, 1), (2, 2)]


def test_a_turn_is_split_only_when_it_alone_exceeds_the_budget() -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(12))
    chunks = list(Chunker(100).chunk_document(doc("short one", long, "after")))
    assert (chunks[0].first_unit, chunks[0].last_unit) == (0, 0)
    pieces = [c for c in chunks if c.first_unit == c.last_unit == 1]
    assert len(pieces) == len(chunks) - 2 >= 3
    assert all(len(p.text) <= 100 for p in pieces)
    assert " ".join(p.text for p in pieces) == long  # cut at spaces, nothing lost
    assert [p.chunk_id for p in pieces] == [f"m#1-1.p{k}" for k in range(len(pieces))]
    assert (chunks[-1].first_unit, chunks[-1].last_unit) == (2, 2)


def test_chunks_carry_speakers_and_times_and_render_a_label() -> None:
    chunk = next(Chunker(400).chunk_document(doc("hello there", "general kenobi")))
    assert chunk.speakers == ("S0", "S1")
    assert (chunk.t_start, chunk.t_end) == (0.0, 19.0)
    assert chunk.label == "[m · S0, S1 · 00:00–00:19]"


@pytest.mark.parametrize("goldset", [  # qmsum-val is large: seconds to chunk
    "tiron-demo", pytest.param("qmsum-val", marks=pytest.mark.heavy)])
@pytest.mark.parametrize("budget", [120, 400])
def test_real_corpora_chunk_into_a_partition_of_their_turns(goldset: str, budget: int) -> None:
    corpus = load_goldset(GOLDSETS / goldset).corpus
    chunker = Chunker(budget)
    for document in corpus.documents.values():
        chunks = list(chunker.chunk_document(document))
        covered: list[int] = []
        for c in chunks:
            assert c.doc_id == document.doc_id
            whole = [normalize(t.text) for t in document.turns[c.first_unit:c.last_unit + 1]]
            if c.first_unit == c.last_unit and len(whole[0]) > budget:
                continue  # a piece of one long turn
            assert len(normalize(c.text)) <= budget + c.last_unit - c.first_unit
            assert c.text == "\n".join(t.text for t in
                                       document.turns[c.first_unit:c.last_unit + 1])
            covered.extend(range(c.first_unit, c.last_unit + 1))
        assert covered == sorted(covered)  # in order, never overlapping
        spoken = {i for i, t in enumerate(document.turns) if normalize(t.text)}
        split = {c.first_unit for c in chunks if c.chunk_id.endswith(".p0")}
        assert spoken <= set(covered) | split  # no turn with words is dropped


def test_budget_too_small_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        Chunker(5)
