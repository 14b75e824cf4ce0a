"""Retrieval anchors: claims whose retrieved pool is checked against a known answer.

A `retrieval_miss` pins evidence the retriever should find (often as a strict xfail until a
fix lands); `true_hallucination` and `topical_probe` pin a passage that must NOT be pulled in
for a fabricated claim (a probe must still get on-topic context); `off_topic_control` must get
nothing within the distance floor. Checks read turn ranges only, like every other score; the
two that read distances (a control's, a probe's on-topic context) are errors over a pool that
carries none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from pytest_ragate.answer import Context, no_old_names, units_in_order
from pytest_ragate.files import read_jsonl
from pytest_ragate.goldsets.corpus import Corpus
from pytest_ragate.problems import Problem
from pytest_ragate.scoring.records import Span

AnchorKind = Literal["retrieval_miss", "true_hallucination", "topical_probe",
                     "off_topic_control"]
NEEDS_EVIDENCE = {"retrieval_miss", "true_hallucination", "topical_probe"}


class AnchorEvidence(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    doc_id: str
    first_unit: Annotated[int, Field(ge=0)]
    last_unit: Annotated[int, Field(ge=0)]

    _renamed = model_validator(mode="before")(no_old_names)
    _ordered = field_validator("last_unit")(units_in_order)

    @property
    def span(self) -> Span:
        return Span(self.doc_id, self.first_unit, self.last_unit)


class Anchor(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    anchor_id: Annotated[str, Field(min_length=1, pattern=r"^[^\[\]\s]+$")]
    kind: AnchorKind
    claim: Annotated[str, Field(min_length=1)]
    evidence: AnchorEvidence | None = None
    xfail: Annotated[str, Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _evidence_by_kind(self) -> Anchor:
        if self.kind in NEEDS_EVIDENCE and self.evidence is None:
            raise ValueError(f"a {self.kind} anchor needs evidence")
        if self.kind == "off_topic_control" and self.evidence is not None:
            raise ValueError("an off_topic_control anchor has no evidence")
        return self


@dataclass(frozen=True)
class AnchorEntry:
    anchor: Anchor
    path: Path
    line: int


def load_anchors(path: Path, corpus: Corpus) -> tuple[list[AnchorEntry], list[Problem]]:
    if not path.is_file():
        return [], [Problem(path, "<file>", "anchors file not found")]
    rows, problems = read_jsonl(path, Anchor, id_field="anchor_id")
    entries: list[AnchorEntry] = []
    seen: dict[str, int] = {}
    for line, anchor in rows:
        aid = anchor.anchor_id
        if aid in seen:
            problems.append(Problem(path, "anchor_id", f"duplicate id (first on line "
                                    f"{seen[aid]})", line=line, question_id=aid))
            continue
        seen[aid] = line
        ev = anchor.evidence
        if ev is not None and corpus.knows(ev.doc_id):
            if ev.doc_id not in corpus:
                problems.append(Problem(path, "evidence.doc_id", f"document {ev.doc_id!r} is "
                                        "not in the corpus", line=line, question_id=aid))
                continue
            n, unit = len(corpus[ev.doc_id].turns), corpus.unit
            if ev.last_unit >= n or ev.last_unit < ev.first_unit:
                problems.append(Problem(path, "evidence.last_unit", f"{unit}s "
                                        f"{ev.first_unit}..{ev.last_unit} do not exist "
                                        f"({ev.doc_id} has {unit}s 0..{n - 1})", line=line,
                                        question_id=aid))
                continue
        entries.append(AnchorEntry(anchor, path, line))
    return entries, problems


def _show(contexts: Sequence[Context]) -> str:
    return ", ".join(f"{c.doc_id}:{c.first_unit}-{c.last_unit} ({c.distance:.2f})"
                     if c.distance is not None else f"{c.doc_id}:{c.first_unit}-{c.last_unit}"
                     for c in contexts) or "nothing"


@dataclass(frozen=True)
class Cut:
    """The distance an anchor's pool is held to, and who declared it: the goldset, the
    system (or retriever) under test, or, for the built-in retriever's pool, its own knob."""

    max_distance: float
    source: str  # "[anchors] max_distance in ragate.toml", "ragate_system.max_distance", …

    def __str__(self) -> str:
        return f"max_distance {self.max_distance:g} ({self.source})"


class NoDistance(Exception):
    """An anchor held to `max_distance` over a pool whose contexts carry no distance: it
    cannot be checked, so it is an error (even under its xfail), never a held or a missed
    check."""


class NoCut(Exception):
    """An anchor that reads distances over a pool whose system declared no cut: the
    built-in pipeline's would judge it by a number that is not its own, so it is an error
    (even under its xfail) until the goldset or the system declares one."""


def _near(anchor: Anchor, contexts: Sequence[Context], cut: Cut | None,
          undeclared: str) -> list[Context]:
    """The contexts within the cut; NoDistance when some carry none (a rank-only
    retriever's), whose nearness nobody knows; NoCut when nobody declared the cut."""
    if not contexts:
        return []  # nothing is near at any cut
    unknown = [c for c in contexts if c.distance is None]
    article = "an" if anchor.kind[0] in "aeiou" else "a"
    if unknown:
        raise NoDistance(f"{article} {anchor.kind} anchor is held to {cut or 'a max_distance'}"
                         f", and {len(unknown)} of the {len(contexts)} contexts in its pool "
                         f"carry no distance ({_show(unknown[:3])}"
                         f"{', …' if len(unknown) > 3 else ''}): return distances from the "
                         "retriever (a rank-only one such as BM25 has none), or drop the anchor")
    if cut is None:
        raise NoCut(f"{article} {anchor.kind} anchor is held to the max_distance its system "
                    f"abstains at, and none is declared {undeclared}: set `max_distance` "
                    "under [anchors] in ragate.toml, or give the system a `max_distance` "
                    "attribute (docs/goldsets.md#anchors)")
    return [c for c in contexts if c.distance is not None and c.distance <= cut.max_distance]


def check(anchor: Anchor, contexts: Sequence[Context], cut: Cut | None, *,
          unit: str = "unit", undeclared: str = "for the system") -> str | None:
    """None when the anchor holds, else why not (naming what was retrieved, its positions
    called by the corpus's `unit`, and the cut with who declared it); NoDistance when it
    reads distances the pool does not carry, NoCut when it reads a cut nobody declared
    (`undeclared` names whose it would be)."""
    if anchor.kind == "off_topic_control":
        near = _near(anchor, contexts, cut, undeclared)
        if near:
            return (f"off-topic control retrieved {len(near)} context(s) within {cut}: "
                    f"{_show(near)}")
        return None
    assert anchor.evidence is not None
    span = anchor.evidence.span
    hits = [c for c in contexts if span.matches(c)]
    where = f"{span.doc_id} {unit}s {span.first_unit}-{span.last_unit}"
    if anchor.kind == "retrieval_miss":
        return None if hits else f"evidence {where} is not in the pool: {_show(contexts)}"
    if hits:
        return (f"{anchor.kind}: the pool holds the passage that would support the claim "
                f"({where}): {_show(hits)}")
    if anchor.kind == "topical_probe" and not _near(anchor, contexts, cut, undeclared):
        return f"topical probe got no on-topic context within {cut}: {_show(contexts)}"
    return None
