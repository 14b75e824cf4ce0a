"""The size of GitHub's job summary and pull-request comment at 100, 1,000 and 10,000
questions, and the time to make every CI view (findings, summary, comment, annotations,
GitLab's metrics and Code Quality reports), beside the Markdown report's over the same run.

    python benchmarks/ci_views.py [--repeat 3]

A worst case for the views: questions tagged with 200 topics and two languages, a third cited
wrong, every tenth errored with an error of its own (each a cause the findings name apart),
and twenty slice floors that fail. Goals: the summary under GitHub's 1 MiB, the comment under
65,536 characters, and all of the views made in under 1 s at 10,000 questions. Each figure is
the median of `--repeat` runs in this process; the ratio to the Markdown report is measured in
the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.population import Collected, Member, Population
from pytest_ragate.outputs.annotations import workflow_commands
from pytest_ragate.outputs.findings import Where, findings
from pytest_ragate.outputs.github import GateView, comment_body, job_summary
from pytest_ragate.outputs.gitlab import code_quality, openmetrics
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.redaction import Redactor
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord

OUT = Path(__file__).resolve().parent / "out"
ROUTE = "gs/ragate.toml"
SIZES = (100, 1_000, 10_000)


def run_of(n: int) -> tuple[GoldsetRun, Collected]:
    records = [QuestionRecord(
        goldset="bench", route=ROUTE, question_id=f"q{i}", question=f"What about q{i}?",
        kind="single_doc", tags={"topic": f"t{i % 200:03d}", "lang": "de" if i % 2 else "en"},
        index=i, abstained=False, must_abstain=False, abstention_correct=True, citations=1,
        citations_correct=int(i % 3 != 0), evidence_spans=1, evidence_spans_found=1,
        evidence_ranks=[1], answer_text="a long answer " * 30, eval_version="1", contexts=1)
        for i in range(n)]
    floors = [Floor("citation_accuracy", 0.99, slice=("topic", f"t{k:03d}")) for k in range(20)]
    run = GoldsetRun(name="bench", eval_version="1", route=ROUTE, records=records, population=n,
                     verdicts=[decide(f, "bench", records) for f in floors],
                     gaps=[Gap(member=f"q{i}", member_kind="single_doc", kind="errored",
                               why=f"the system raised error #{i}") for i in range(0, n, 10)])
    members = [Member(question_id=r.question_id, question=r.question or "", kind=r.kind,
                      tags=r.tags, index=r.index, nodeid=f"{ROUTE}::{r.question_id}",
                      sealed=False, must_abstain=False, evidence_spans=1, line=r.index + 1,
                      expected_line=r.index + 1) for r in records]
    population = Population(route=ROUTE, goldset="bench", eval_version="1", questions=members,
                            anchors=[], questions_file="gs/questions.jsonl",
                            expected_file="gs/expected.jsonl")
    return run, Collected(floors=[], populations=[population])


def views(run: GoldsetRun, collected: Collected) -> dict[str, int]:
    """Every CI view, as the controller makes them: the findings and the view once, then
    each output; their sizes."""
    redact = Redactor(sealed=["a sealed gist nobody echoes"], known=["hunter2-secret"])
    found = findings([run], collected, redact=redact)
    view = GateView(runs=[run], findings=found, exit_status=1, redact=redact,
                    where={ROUTE: Where(collected.populations[0])})
    summary, comment = job_summary(view), comment_body(view)
    annotations = workflow_commands(found)
    metrics, quality = openmetrics([run]), code_quality(found)
    return {"summary_bytes": len(summary.encode()), "comment_chars": len(comment),
            "findings": len(found), "annotations": len(annotations),
            "metrics_bytes": len(metrics.encode()), "codequality_bytes": len(quality.encode())}


def median_seconds(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for n in SIZES:
        run, collected = run_of(n)
        sizes = views(run, collected)
        ci = median_seconds(lambda: views(run, collected), args.repeat)  # noqa: B023
        report = median_seconds(lambda: markdown([run]), args.repeat)  # noqa: B023
        rows.append({"questions": n, **sizes, "ci_views_seconds": ci,
                     "markdown_report_seconds": report, "ci_views_per_report": ci / report})
    print(f"{'questions':>9} {'summary':>10} {'comment':>9} {'findings':>8} {'annot.':>6} "
          f"{'CI views':>9} {'vs report':>9}")
    for row in rows:
        print(f"{row['questions']:>9} {row['summary_bytes']:>8} B {row['comment_chars']:>7} ch "
              f"{row['findings']:>8} {row['annotations']:>6} {row['ci_views_seconds']:>7.2f} s "
              f"{row['ci_views_per_report']:>8.2f}x")
    big = rows[-1]
    ok = (all(r["summary_bytes"] <= 1024 * 1024 and r["comment_chars"] <= 65_536 for r in rows)
          and big["ci_views_seconds"] < 1.0)
    print(f"goals (summary ≤ 1 MiB, comment ≤ 65,536 characters, views < 1 s at 10,000): "
          f"{'met' if ok else 'NOT met'}")
    OUT.mkdir(exist_ok=True)
    (OUT / "ci_views.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
