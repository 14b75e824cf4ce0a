"""Evidence pins (pytest_ragate/goldsets/pins.py) against seeded corpus edits, on the shipped
QMSum validation goldset (170 questions, 29 meetings, real annotators' spans).

Every evidence span is pinned; then, per seed, each meeting gets one of the edits below and
every pin is checked against the edited corpus:

- `insert`: one new turn inserted at a random place: spans after it must come back `moved`
  to exactly their old units + 1, spans before it `unchanged`, spans it splits `stale`;
- `unrelated`: one turn that is in no span edited: no span may be `moved` or `stale`
  (0 false findings);
- `edit`: one word of one span's text replaced: that span must be `stale`, and the nearest
  text it names must hold the edited unit;
- `delete`: the meeting removed: its spans must be `stale` and `gone` (unless their text is
  also in another meeting, then `moved` there).

    .venv/bin/python benchmarks/pins.py            # --seeds N (5), --json PATH

It prints the exact re-anchoring rate, the false findings, stale recall, and the seconds a
full check of every pin took against the time to load the corpus (a ratio, not bare seconds).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from dataclasses import replace
from pathlib import Path

from pytest_ragate.goldsets.corpus import Corpus, Turn
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.goldsets.pins import CorpusText, Moved, Pin, Stale, Unchanged

ROOT = Path(__file__).parents[1]
GOLDSET = ROOT / "goldsets" / "qmsum-val"
Spans = list[tuple[str, int, int]]


def _spans() -> tuple[Corpus, Spans, float]:
    started = time.perf_counter()
    goldset = load_goldset(GOLDSET)
    loaded = time.perf_counter() - started
    spans = [(s.doc_id, s.first_unit, s.last_unit) for c in goldset.cases
             if c.expected is not None for s in c.expected.spans if hasattr(s, "first_unit")]
    return goldset.corpus, spans, loaded


def _with(corpus: Corpus, doc_id: str, turns: tuple[Turn, ...] | None) -> Corpus:
    documents = dict(corpus.documents)
    if turns is None:
        del documents[doc_id]
    else:
        documents[doc_id] = replace(documents[doc_id], turns=turns)
    return Corpus(documents, unit=corpus.unit)


def _checks(corpus: Corpus, spans: Spans, pins: list[Pin]) -> list[object]:
    text = CorpusText(corpus)
    return [text.check(d, a, b, p) for (d, a, b), p in zip(spans, pins, strict=True)]


def run(seeds: int) -> dict[str, object]:
    corpus, spans, loaded = _spans()
    started = time.perf_counter()
    text = CorpusText(corpus)
    pins = [text.pin(d, a, b) for d, a, b in spans]
    first = _checks(corpus, spans, pins)
    checked = time.perf_counter() - started
    assert all(isinstance(c, Unchanged) for c in first)
    found = {"moved_exact": 0, "moved_expected": 0, "unchanged_kept": 0, "unchanged_expected": 0,
             "inside_expected": 0, "inside_stale": 0,
             "false_findings": 0, "unrelated_spans": 0, "stale_found": 0, "stale_expected": 0,
             "nearest_right": 0, "gone_found": 0, "gone_expected": 0,
             "gone_moved": 0}
    by_doc: dict[str, list[int]] = {}
    for i, (d, _, _) in enumerate(spans):
        by_doc.setdefault(d, []).append(i)
    for seed in range(seeds):
        rng = random.Random(seed)
        for doc_id, members in sorted(by_doc.items()):
            turns = corpus[doc_id].turns
            # insert
            at = rng.randrange(len(turns) + 1)
            edited = _with(corpus, doc_id, (*turns[:at], Turn(f"inserted turn {seed}"),
                                            *turns[at:]))
            checks = _checks(edited, [spans[i] for i in members], [pins[i] for i in members])
            for i, check in zip(members, checks, strict=True):
                _, a, b = spans[i]
                if a < at <= b:  # inserted inside the span: its text is no longer one run
                    found["inside_expected"] += 1
                    found["inside_stale"] += isinstance(check, Stale)
                elif a >= at:
                    found["moved_expected"] += 1
                    found["moved_exact"] += check == Moved(doc_id=doc_id, first_unit=a + 1,
                                                           last_unit=b + 1,
                                                           places=getattr(check, "places", 1))
                else:
                    found["unchanged_expected"] += 1
                    found["unchanged_kept"] += isinstance(check, Unchanged)
            # an unrelated turn edited
            used = {u for i in members for u in range(spans[i][1], spans[i][2] + 1)}
            free = [u for u in range(len(turns)) if u not in used and turns[u].text.strip()]
            if free:
                u = rng.choice(free)
                changed = (*turns[:u], Turn(turns[u].text + " (edited)", turns[u].speaker),
                           *turns[u + 1:])
                checks = _checks(_with(corpus, doc_id, changed),
                                 [spans[i] for i in members], [pins[i] for i in members])
                found["unrelated_spans"] += len(members)
                found["false_findings"] += sum(not isinstance(c, Unchanged) for c in checks)
            # one span's text edited
            i = rng.choice(members)
            d, a, b = spans[i]
            u = rng.randrange(a, b + 1)
            words = turns[u].text.split()
            if words:
                k = rng.randrange(len(words))
                words[k] = "zzqx" + words[k]
                changed = (*turns[:u], Turn(" ".join(words), turns[u].speaker), *turns[u + 1:])
                [check] = _checks(_with(corpus, doc_id, changed), [spans[i]], [pins[i]])
                found["stale_expected"] += 1
                if isinstance(check, Stale):
                    found["stale_found"] += 1
                    near = check.nearest
                    found["nearest_right"] += (near is not None and near.doc_id == d
                                               and near.first_unit <= u <= near.last_unit)
            # the meeting deleted
            checks = _checks(_with(corpus, doc_id, None), [spans[i] for i in members],
                             [pins[i] for i in members])
            found["gone_expected"] += len(members)
            found["gone_found"] += sum(isinstance(c, Stale) and c.gone for c in checks)
            found["gone_moved"] += sum(isinstance(c, Moved) for c in checks)
    return {"spans": len(spans), "documents": len(corpus), "seeds": seeds, **found,
            "check_all_vs_load": round(checked / loaded, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    figures = run(args.seeds)
    for key, value in figures.items():
        print(f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
