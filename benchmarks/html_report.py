"""What `--ragate-html` adds to a gate: render time of the HTML (and of the Markdown) over a
gate's own results, as a share of that gate's wall time, both from one run.

    python benchmarks/html_report.py [--results R --junit J]

Without both files it runs the shipped gate itself (`pytest -m rag_gate goldsets/ -n 2`,
writing them under benchmarks/out/gate/). The gate's wall time is the JUnit testsuite's
`time`; rendering is timed in this process several times, reporting the median.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.outputs.results import read_rows

OUT = Path(__file__).resolve().parent / "out"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=OUT / "gate" / "results.jsonl")
    parser.add_argument("--junit", type=Path, default=OUT / "gate" / "junit.xml")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not args.results.is_file() or not args.junit.is_file():
        print("running the shipped gate for its results and wall time ...", flush=True)
        subprocess.run([sys.executable, "-m", "pytest", "-m", "rag_gate", "goldsets/", "-n",
                        "2", "-q", f"--junitxml={args.junit}", f"--ragate-results={args.results}"],
                       cwd=OUT.parent.parent, check=False, stdout=subprocess.DEVNULL)
        if not args.results.is_file():
            print("the gate wrote no results", file=sys.stderr)
            return 2
    runs: dict[str, GoldsetRun] = {}
    rows, problems = read_rows(args.results)
    if problems:
        print("\n".join(map(str, problems)), file=sys.stderr)
        return 2
    for _, record in rows:
        runs.setdefault(record.goldset, GoldsetRun(name=record.goldset,
                                                   eval_version=record.eval_version)
                        ).records.append(record)
    suite = ET.parse(args.junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    assert suite is not None
    gate = float(suite.get("time", "nan"))

    start = time.perf_counter()
    from pytest_ragate.outputs import (
        html as html_report,  # imports matplotlib and jinja2: a one-off cost
    )

    imports = time.perf_counter() - start
    timings: dict[str, list[float]] = {"html": [], "markdown": []}
    for _ in range(args.repeat):
        for name, render in (("html", lambda: html_report.render_html(
                list(runs.values()), history=[], ci="point")),
                             ("markdown", lambda: markdown(list(runs.values())))):
            t0 = time.perf_counter()
            render()
            timings[name].append(time.perf_counter() - t0)
    html, md = statistics.median(timings["html"]), statistics.median(timings["markdown"])
    questions = sum(len(r.records) for r in runs.values())
    figures = {"questions": questions, "gate_seconds": gate, "html_import_seconds": imports,
               "html_render_median_seconds": html, "markdown_render_median_seconds": md,
               "html_share_of_gate": (imports + html) / gate}
    print(f"{questions} questions; gate wall time {gate:.1f} s (JUnit)")
    print(f"HTML: import {imports:.2f} s + render {html:.2f} s (median of {args.repeat}) = "
          f"{figures['html_share_of_gate']:.1%} of the gate; Markdown {md * 1000:.0f} ms")
    OUT.mkdir(exist_ok=True)
    (OUT / "html_report.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
