"""Choosing `max_distance` and `top_k` from recorded rows instead of by guesswork.

A run records each question's nearest distance, outcome and evidence ranks; replaying other
thresholds over those rows needs no new run. What a row cannot tell (a question that
abstained on distance would have said what, under a looser threshold?) is counted as
unknown, never guessed: record with a loose `max_distance` to calibrate the whole range. So is
a row whose contexts carry no distance (a rank-only retriever's): nothing says how near it was.

A system with its own abstention rule records the number it decided on (`Answer.confidence`,
higher is surer); `sweep_confidence` replays "abstain when confidence < cut". Only one way is
replayable: a higher cut turns a recorded answer into an abstention, but no cut turns a
recorded abstention into an answer (its text does not exist), so an abstained row at or
above a cut is unknown there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_ragate.scoring.records import QuestionRecord, fmt_some


@dataclass(frozen=True, kw_only=True)
class Cited:
    """The answers a replayed threshold keeps, and their citations."""

    answered: int = 0
    citations_correct: int = 0
    citations: int = 0
    cited_answers: int = 0  # answers with a citation: citation accuracy's votes
    shares: float = 0.0  # the sum of their shares of right citations

    @property
    def citation_accuracy(self) -> float | None:
        """One vote per answer that cited something, as the floors count it."""
        return self.shares / self.cited_answers if self.cited_answers else None


def _cited(answers: Sequence[QuestionRecord]) -> dict[str, Any]:
    """`Cited`'s figures over the answers a replay keeps."""
    cited = [r for r in answers if r.citations]
    return {"answered": len(answers), "citations": sum(r.citations for r in answers),
            "citations_correct": sum(r.citations_correct for r in answers),
            "cited_answers": len(cited),
            "shares": sum((r.citations_correct / r.citations for r in cited), 0.0)}


@dataclass(frozen=True, kw_only=True)
class Setting(Cited):
    max_distance: float
    abstention_correct: int
    unknown: int
    n: int

    @property
    def abstention_accuracy(self) -> float:
        return self.abstention_correct / self.n if self.n else 0.0


def replay(rows: Sequence[QuestionRecord], threshold: float) -> Setting:
    """Outcomes had the answerer abstained whenever the nearest context was farther."""
    abst = unknown = 0
    answers: list[QuestionRecord] = []
    for r in rows:
        if without_distance(r):
            unknown += 1
            continue
        recorded = r.knobs.get("max_distance")
        far = r.nearest_distance is None or r.nearest_distance > threshold
        if far:
            abst += r.must_abstain
            continue
        distance_abstained = (r.abstained and isinstance(recorded, int | float)
                              and r.nearest_distance is not None
                              and r.nearest_distance > recorded)
        if distance_abstained:
            unknown += 1
            continue
        abst += r.abstention_correct
        if not r.abstained:
            answers.append(r)
    return Setting(max_distance=threshold, abstention_correct=abst, unknown=unknown,
                   n=len(rows), **_cited(answers))


def without_distance(row: QuestionRecord) -> bool:
    """The row retrieved contexts and has no nearest distance: some carried none."""
    return row.contexts > 0 and row.nearest_distance is None


def distances_missing(goldset: str, rows: Sequence[QuestionRecord]) -> str | None:
    """Why `max_distance` cannot be replayed over these rows, or None when it can."""
    missing = [r.question_id for r in rows if without_distance(r)]
    if not missing:
        return None
    return (f"{goldset}: max_distance cannot be replayed: {len(missing)} of {len(rows)} scored "
            f"rows retrieved contexts without a distance ({fmt_some(missing, 5)}); calibrating "
            "needs every context's distance (a rank-only retriever such as BM25 has none)")


def sweep(rows: Sequence[QuestionRecord]) -> list[Setting]:
    """Every threshold that changes an outcome: each recorded distance, plus 'never abstain'."""
    distances = sorted({r.nearest_distance for r in rows if r.nearest_distance is not None})
    cuts = [0.0, *distances]
    return [replay(rows, t) for t in cuts]


def best(settings: Sequence[Setting]) -> Setting:
    """Highest abstention accuracy with no unknowns; then citation accuracy; then the
    loosest threshold (answering more is better when the rest ties)."""
    known = [s for s in settings if not s.unknown] or list(settings)
    return max(known, key=lambda s: (s.abstention_accuracy, s.citation_accuracy or 0.0,
                                     s.max_distance))


def recall_at(rows: Sequence[QuestionRecord]) -> list[tuple[int, int, int]]:
    """(k, spans found within the first k contexts, spans) for k up to the recorded top_k."""
    spans = [rank for r in rows for rank in r.evidence_ranks]
    depth = max((int(k) for r in rows if isinstance(k := r.knobs.get("top_k"), int | float)),
                default=max((s for s in spans if s is not None), default=0))
    return [(k, sum(s is not None and s <= k for s in spans), len(spans))
            for k in range(1, depth + 1)]


CONFIDENCE_FLOORS = ("abstention_accuracy", "citation_accuracy")  # what a replay recomputes


@dataclass(frozen=True, kw_only=True)
class Cut(Cited):
    """The figures had the system abstained whenever its confidence was below `cut`.
    `above_all`: the cut lies above every recorded confidence (everything abstains)."""

    cut: float
    above_all: bool = False
    abstention_correct: int
    known: int  # rows whose outcome at this cut is recorded, not guessed
    unknown: int  # abstained at a confidence >= cut: what they would have said is not recorded

    @property
    def n(self) -> int:
        return self.known + self.unknown

    @property
    def abstention_accuracy(self) -> float | None:
        return self.abstention_correct / self.known if self.known else None

    def value(self, metric: str) -> float | None:
        return self.abstention_accuracy if metric == "abstention_accuracy" else \
            self.citation_accuracy

    def margin(self, floors: Mapping[str, float]) -> float | None:
        """The smallest `value - min` over the floors; None when a figure is unknown (a row
        unknown, or no answer cited anything) so such a cut is never chosen."""
        values = [self.value(metric) for metric in floors]
        if self.unknown or any(v is None for v in values):
            return None
        return min(v - floors[m] for m, v in zip(floors, values, strict=True)
                   if v is not None)


def replay_confidence(rows: Sequence[QuestionRecord], cut: float,
                      above_all: bool = False) -> Cut:
    """Outcomes had the system abstained whenever its confidence was below `cut`."""
    abst = known = unknown = 0
    answers: list[QuestionRecord] = []
    for r in rows:
        low = r.confidence is not None and r.confidence < cut
        if r.confidence is None or (r.abstained and not low):
            unknown += 1
            continue
        known += 1
        if r.abstained or low:
            abst += r.must_abstain
            continue
        abst += r.abstention_correct
        answers.append(r)
    return Cut(cut=cut, above_all=above_all, abstention_correct=abst, known=known,
               unknown=unknown, **_cited(answers))


def confidences_missing(goldset: str, rows: Sequence[QuestionRecord]) -> str | None:
    """Why a confidence cut cannot be replayed over these rows, or None when it can."""
    missing = [r.question_id for r in rows if r.confidence is None]
    if not missing:
        return None
    return (f"{goldset}: a confidence cut cannot be replayed: {len(missing)} of {len(rows)} "
            f"scored rows carry no confidence ({fmt_some(missing, 5)}); return "
            "Answer(confidence=...) on every answer and abstention")


def sweep_confidence(rows: Sequence[QuestionRecord]) -> list[Cut]:
    """Every cut that changes an outcome: each recorded confidence (the lowest abstains
    nothing by the cut), then one above them all (everything abstains)."""
    values = sorted({r.confidence for r in rows if r.confidence is not None})
    cuts = [replay_confidence(rows, v) for v in values]
    if values:
        cuts.append(replay_confidence(rows, math.nextafter(values[-1], math.inf), True))
    return cuts


def best_cut(cuts: Sequence[Cut], floors: Mapping[str, float]) -> Cut | None:
    """The cut with the largest smallest margin over `floors`; on a tie the lowest cut
    (answering more is better when the rest ties). None when no cut's figures are all known."""
    scored = [(margin, c) for c in cuts if (margin := c.margin(floors)) is not None]
    if not scored:
        return None
    return max(scored, key=lambda mc: (mc[0], -mc[1].cut))[1]


# --- answer_similarity: the cut that best agrees with what is known of each answer -----------


@dataclass(frozen=True, kw_only=True)
class SimilarityCut:
    """"Right when answer_similarity ≥ cut", against the answers whose correctness is known:
    agreement (accuracy) and Cohen's kappa, and how many it calls right."""

    cut: float
    agree: int
    n: int
    kappa: float | None
    called_right: int

    @property
    def accuracy(self) -> float:
        return self.agree / self.n if self.n else 0.0


@dataclass(frozen=True, kw_only=True)
class Known:
    """The answers `sweep_similarity` is calibrated on: (similarity, right) pairs, and how
    many came from a person's label, from answer_match's own call, or were left out."""

    pairs: list[tuple[float, bool]]
    labelled: int
    matched: int
    unknown: int  # unsure answers no label settled, or counted wrong by `unsure = "wrong"`
    without: int  # answers with a similarity but no facts: nothing known of them


def known_answers(rows: Sequence[QuestionRecord]) -> Known:
    """Each scored answer's similarity beside what is known of its correctness: a person's
    answer_match label where the run applied one, else answer_match's right or wrong; an
    unsure answer nothing settled (or one `unsure = "wrong"` counted wrong: a policy, not a
    finding) is unknown."""
    pairs: list[tuple[float, bool]] = []
    labelled = matched = unknown = without = 0
    for r in rows:
        similarity = r.metrics.get("answer_similarity")
        if r.status != "scored" or similarity is None:
            continue
        check = r.answer_check
        if check is None:
            without += 1
        elif check.settled == "label":
            labelled += 1
            pairs.append((similarity, bool(check.label)))
        elif check.outcome == "unsure":
            unknown += 1
        else:
            matched += 1
            pairs.append((similarity, check.outcome == "right"))
    return Known(pairs=pairs, labelled=labelled, matched=matched, unknown=unknown,
                 without=without)


def sweep_similarity(pairs: Sequence[tuple[float, bool]]) -> list[SimilarityCut]:
    """Every cut that changes a call: each distinct similarity (an answer at the cut is called
    right), and one above them all (nothing right), in increasing order."""
    from pytest_ragate.scoring.agreement import cohen_kappa

    values = sorted({s for s, _ in pairs})
    cuts = [*values, (values[-1] + 1e-4) if values else 1.0]
    found = []
    for cut in cuts:
        calls = [(int(s >= cut), int(right)) for s, right in pairs]
        found.append(SimilarityCut(cut=cut, agree=sum(a == b for a, b in calls), n=len(calls),
                                   kappa=cohen_kappa(calls),
                                   called_right=sum(a for a, _ in calls)))
    return found


def best_similarity_cut(cuts: Sequence[SimilarityCut]) -> SimilarityCut | None:
    """The cut with the highest kappa (then accuracy; then the lowest such cut); None when no
    cut has a kappa (every known answer right, or every one wrong)."""
    rated = [c for c in cuts if c.kappa is not None]
    if not rated:
        return None
    return max(rated, key=lambda c: (round(c.kappa or 0.0, 12), c.agree, -c.cut))
