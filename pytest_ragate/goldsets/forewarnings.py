"""What `ragate validate` warns of at once, in a goldset that loads: questions whose texts are
the same (case and whitespace folded: each is counted as an independent observation by every
interval), floors that can never be decided on this goldset's n (a latency quantile over fewer
answers, its questions times the goldset's `repeat`, than its distribution-free bound needs:
scoring/floor.quantile_shortfall, which `ragate audit` asks too; a population under
`ragate_min_n`, a strict proportion floor over questions that even n right of n does not
reach), its evidence pins (moved, stale, unpinned: goldsets/pinned.py), and the facts and
`forbid` statements no answer can state as written (scoring/answer_text.alternative_warning).

A floor's n here is its population's question count, an upper bound of the units it is decided
over: a floor warned of cannot be decided even at that n, so no warning is a false one (one
decided over fewer units, such as answerable questions only, can still go unwarned).
"""

from __future__ import annotations

from collections.abc import Iterator

from pytest_ragate.answer import KEYED, is_keyed
from pytest_ragate.goldsets.loader import Goldset
from pytest_ragate.goldsets.pins import normalise
from pytest_ragate.scoring.answer_match import AnswerLabel, LabelNote, expected_sha256
from pytest_ragate.scoring.answer_text import alternative_warning
from pytest_ragate.scoring.floor import counts_in, quantile_shortfall
from pytest_ragate.scoring.power import smallest_passing
from pytest_ragate.scoring.registry import METRICS, latency_quantile
from pytest_ragate.wording import validation as wording
from pytest_ragate.wording.runs import label_note_lines


def same_questions(goldset: Goldset) -> list[str]:
    """One warning per group of questions asking the same text."""
    groups: dict[str, list[str]] = {}
    for case in goldset.cases:
        groups.setdefault(normalise(case.question.question), []).append(
            case.question.question_id)
    return [wording.same_text(ids) for ids in groups.values() if len(ids) > 1]


def undecidable_floors(goldset: Goldset, *, min_n: int = 0, strict: bool = False,
                       ) -> Iterator[str]:
    """Each question floor its goldset's questions can never decide."""
    for floor in goldset.floors:
        if floor.anchors:
            continue
        n = sum(counts_in(floor, c.question.kind, c.question.slices) for c in goldset.cases)
        metric = METRICS[floor.metric]
        if metric.aggregate == "quantile":
            needs = quantile_shortfall(floor, n * goldset.config.repeat)
            if needs is not None:
                yield wording.never_decided(floor.label, n, wording.quantile_short(
                    latency_quantile(floor.metric), needs))
                continue
        if n < min_n:
            yield wording.never_decided(floor.label, n, wording.under_min_n(min_n))
        elif (strict and not floor.upper and n and metric.aggregate == "proportion"
              and metric.unit == "questions" and goldset.config.repeat == 1
              and smallest_passing(n, floor.min, strict=True) is None):
            yield wording.never_decided(floor.label, n, wording.strict_unreachable(floor.min))


def pin_lines(goldset: Goldset) -> list[str]:
    """The moved and stale spans, by question, and how many spans are unpinned."""
    lines: list[str] = []
    spans = unpinned = 0
    for case in goldset.cases:
        if case.pins is None:
            continue
        qid = case.question.question_id
        lines += [f"{qid}: {line}" for line in (*case.pins.stale, *case.pins.moved)]
        spans, unpinned = spans + case.pins.spans, unpinned + case.pins.unpinned
    if unpinned:
        lines.append(wording.unpinned(unpinned, spans))
    return lines


def label_lines(goldset: Goldset) -> list[str]:
    """Each answer_match label not bound as the run would need, once per question: one that
    predates expected-answer digests, one judged against another expected answer than the
    goldset's, one of a sealed goldset stamped with plain digests (a sealed answer opened
    without its key is not known here: the run says)."""
    expected = {c.question.question_id: c.expected for c in goldset.cases}
    key = goldset.digest_key
    by_note: dict[str, list[str]] = {}
    for qid, labels in goldset.answer_labels.items():
        exp = expected.get(qid)
        digest = (expected_sha256(exp.gist, exp.facts, exp.forbid, key) if exp is not None
                  else None)
        for answer, label in labels.items():
            note = _label_note(goldset.sealed, answer, label, digest)
            if note is not None and qid not in by_note.setdefault(note, []):
                by_note[note].append(qid)
    return label_note_lines(by_note)


def _label_note(sealed: bool, answer: str, label: AnswerLabel, digest: str | None,
                ) -> LabelNote | None:
    """What validate says of one answer_match label: in a sealed goldset, one stamped with
    plain digests predates the keyed rule (known without the key); else one without
    `expected_sha256` predates it, and one judged against another expected answer is stale."""
    if sealed and not (is_keyed(answer) and is_keyed(label.expected_sha256 or KEYED)):
        return "predates_keyed"
    if label.expected_sha256 is None:
        return "predates"
    return "stale_expected" if digest is not None and label.expected_sha256 != digest else None


def fact_lines(goldset: Goldset) -> list[str]:
    """One warning per fact or `forbid` alternative no answer can state as written, by its
    place (`[q1] facts[0][1]`), never its text."""
    lines: list[str] = []
    for case in goldset.cases:
        if case.expected is None:
            continue
        for name in ("facts", "forbid"):
            for i, fact in enumerate(getattr(case.expected, name)):
                texts = [fact] if isinstance(fact, str) else list(fact)
                for k, text in enumerate(texts):
                    why = alternative_warning(text)
                    if why:
                        place = f"{name}[{i}]" + (f"[{k}]" if not isinstance(fact, str) else "")
                        lines.append(wording.unmatchable(case.question.question_id, place, why))
    return lines
