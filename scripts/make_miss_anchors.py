"""Pin every evidence span a recorded run missed as a strict-xfail `retrieval_miss` anchor.

    python scripts/make_miss_anchors.py RESULTS.jsonl GOLDSET_DIR [--reason TEXT] > anchors.jsonl

RESULTS is a `--ragate-results` file; a span is missed when no retrieved context overlapped it
(`evidence_ranks` is null). The anchor's claim is the question itself, so the anchor asks the
retriever exactly what the gate asked. Every miss is pinned, not a chosen few: the anchors then
measure a fix without picking the cases it happens to fix.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_ragate.files import read_jsonl
from pytest_ragate.goldsets.loader import load_goldset
from pytest_ragate.scoring.records import QuestionRecord


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("goldset", type=Path)
    parser.add_argument("--reason", default="the default retriever misses this evidence")
    args = parser.parse_args()
    goldset = load_goldset(args.goldset)
    cases = {c.question.question_id: c for c in goldset.cases}
    rows, problems = read_jsonl(args.results, QuestionRecord)
    if problems:
        sys.exit("\n".join(map(str, problems)))
    for _, row in sorted(rows, key=lambda r: r[1].index):
        if row.goldset != goldset.name or row.status != "scored":
            continue
        case = cases[row.question_id]
        assert case.expected is not None
        for i, (span, rank) in enumerate(zip(case.expected.evidence, row.evidence_ranks,
                                             strict=True)):
            if rank is None:
                print(json.dumps({
                    "anchor_id": f"{row.question_id}-e{i}", "kind": "retrieval_miss",
                    "claim": case.question.question,
                    "evidence": {"doc_id": span.doc_id, "first_unit": span.first_unit,
                                 "last_unit": span.last_unit},
                    "xfail": args.reason}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
