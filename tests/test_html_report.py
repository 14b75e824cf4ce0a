"""`--ragate-html`: the page's contents on hand-built runs, then a real run opened in Chromium.

The browser test is the one that proves the page is self-contained: every request the page
makes is recorded, and the only one allowed is the file itself.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.decision.regressions import Regression
from pytest_ragate.outputs.history import Figure, HistoryLine, build_line
from pytest_ragate.outputs.html import max_distance_of, render_html, write_html
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import Cited, QuestionRecord
from tests.conftest import BROWSER_SKIP, FIXTURE_JUDGE_CONFTEST, untimed, write_goldset

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
EVIL = '<script>alert("pwned")</script> & <img src=x onerror=alert(1)>'


def rec(qid: str, kind: str = "single_doc", *, index: int = 0, must_abstain: bool = False,
        abstained: bool = False, correct: int = 1, cited: int = 1, spans: int = 1,
        found: int = 1, distance: float | None = 0.3, expected: list[str] | None = None,
        answer: str | None = "an answer", knobs: dict[str, Any] | None = None,
        **extra: Any) -> QuestionRecord:
    """A scored record as the pipeline would leave it (mechanical metrics filled in)."""
    return QuestionRecord.model_validate({
        "goldset": "g", "question_id": qid, "kind": kind, "index": index,
        "abstained": abstained, "must_abstain": must_abstain,
        "abstention_correct": abstained == must_abstain, "citations": cited,
        "citations_correct": correct, "evidence_spans": spans, "evidence_spans_found": found,
        "evidence_ranks": [1] * found + [None] * (spans - found), "nearest_distance": distance,
        "answer_text": answer, "expected": expected, "eval_version": "1",
        "cited": [{"context_id": f"c{i}", "label": f"[ES2004a · A, B · 01:0{i}–01:40]",
                   "correct": i < correct} for i in range(cited)],
        "metrics": {"citation_accuracy": correct / cited if cited else None,
                    "abstention_accuracy": float(abstained == must_abstain),
                    "evidence_recall": found / spans if spans else None},
        "knobs": {"max_distance": 0.6} if knobs is None else knobs, **extra,
    })


def make_run(records: list[QuestionRecord], floors: list[Floor] | None = None,
             regressions: list[Regression] | None = None) -> GoldsetRun:
    run = GoldsetRun(name="g", eval_version="1", records=records, regressions=regressions or [])
    run.verdicts = [decide(f, "g", records) for f in floors or []]
    return run


def small_run() -> GoldsetRun:
    return make_run(
        [rec("q1", index=0, cited=2, correct=2, expected=["[ES2004a · 01:00–01:40]"]),
         rec("q2", index=1, correct=0, found=0, expected=["[ES2004a · 02:00–02:10]"]),
         rec("q3", "unanswerable", index=2, must_abstain=True, abstained=True, cited=0,
             correct=0, spans=0, found=0, distance=0.8, expected=[], answer=None)],
        [Floor("citation_accuracy", 0.6), Floor("abstention_accuracy", 1.0, kind="unanswerable"),
         Floor("evidence_recall", 0.9, xfail="retrieval misses")])


def rows(html: str) -> dict[str, str]:
    """question id -> the HTML of its row in the questions table."""
    found = re.findall(r'<tr id="[^"]+" class="question[^"]*">(.*?)</tr>', html, re.S)
    return {re.search(r'<code class="qid">(.*?)</code>', row).group(1): row  # type: ignore[union-attr]
            for row in found}


def plot_keys(html: str) -> list[str]:
    return re.findall(r'<figure class="plot[^"]*" data-plot="([^"]+)">\s*<svg class="plot"',
                      html)


# --- the page, rendered from hand-built runs -------------------------------------------------


def test_answer_text_and_labels_are_escaped() -> None:
    run = make_run([rec("q<b>1</b>", answer=EVIL, kind="<i>kind</i>",
                        error=None, judge_failures={"faithfulness": "<script>x</script>"})])
    run.records[0].cited[0] = Cited(context_id="c0", label="[<svg onload=alert(1)>]",
                                    correct=True, quote='"><script>q</script>')
    html = render_html([run], history=[], ci="point")
    assert "<script" not in html.lower()
    assert "<img" not in html and "<svg onload" not in html  # as text only, escaped
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; &lt;img" in html
    assert "q&lt;b&gt;1&lt;/b&gt;" in html and "&lt;i&gt;kind&lt;/i&gt;" in html
    assert "[&lt;svg onload=alert(1)&gt;]" in html


def test_sealed_records_show_sealed_and_never_expected_spans() -> None:
    run = make_run([rec("open", index=0, expected=["[ES2004a · 01:00–01:40]"]),
                    rec("sealed", index=1, expected=None),
                    rec("none", "unanswerable", index=2, must_abstain=True, abstained=True,
                        cited=0, correct=0, spans=0, found=0, expected=[])])
    by_id = rows(render_html([run], history=[], ci="point"))
    assert '<span class="sealed">sealed</span>' in by_id["sealed"]
    assert '<span class="span">' not in by_id["sealed"]
    assert '<span class="span">[ES2004a · 01:00–01:40]</span>' in by_id["open"]
    assert "sealed" not in by_id["open"]
    assert "none: must abstain" in by_id["none"]


def test_floors_table_shows_value_interval_n_and_outcome() -> None:
    html = render_html([small_run()], history=[], ci="strict")
    table = re.search(r'<table class="floors">(.*?)</table>', html, re.S).group(1)  # type: ignore[union-attr]
    # citation accuracy is one vote per cited answer: q1 2/2 right, q2 0/1 → 0.50 over 2
    assert re.search(r"<code>citation_accuracy</code></td>\s*<td class=\"num\">0.60</td>\s*"
                     r"<td class=\"num\">0.50</td>\s*<td class=\"num\">\[0.00, 1.00\]</td>\s*"
                     r"<td class=\"num\">2</td>", table)
    assert '<span class="badge o-passed">PASS</span>' in table
    assert '<span class="badge o-xfailed">XFAIL</span>' in table
    assert "<code>unanswerable:abstention_accuracy</code>" in table
    assert "single_doc 1/2" in table  # by kind, for goldset-wide floors
    assert "ragate_ci = strict" in html and "lower bound of its 95% interval" in html


def test_plot_count_ids_and_no_urls() -> None:
    run = small_run()
    html = render_html([run], history=[], ci="point")
    keys = plot_keys(html)
    # one per metric (3 mechanical ones), plus the calibration picture; no history, no trend
    assert keys == ["gs1-g-kinds-citation_accuracy", "gs1-g-kinds-abstention_accuracy",
                    "gs1-g-kinds-evidence_recall", "gs1-g-calibration"]
    assert html.count("<svg") == 4 and '<meta name="ragate-plots" content="4">' in html
    assert "pass <code>--ragate-history PATH</code>" in html
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))  # several SVGs in one page: ids are prefixed per plot
    refs = set(re.findall(r'(?:url\(#|href="#)([^")]+)', html))
    assert refs <= set(ids) | {"gs1-g"}
    # the only URLs are namespace names, which are never fetched
    for match in re.finditer(r"https?://", html):
        before = html[max(0, match.start() - 20):match.start()]
        assert re.search(r'xmlns(?::\w+)?="$', before), html[match.start() - 40:match.end() + 40]
    assert "<link" not in html and "@import" not in html and "url(http" not in html


def test_no_distance_no_calibration_and_max_distance_notes() -> None:
    run = make_run([rec("q1", distance=None)])
    html = render_html([run], history=[], ci="point")
    assert len(plot_keys(html)) == 3
    assert "No question recorded a nearest distance" in html
    mixed = [rec("a", knobs={"max_distance": 0.5}), rec("b", knobs={"max_distance": 0.7})]
    assert max_distance_of(mixed) == (None, "the records carry several max_distance values "
                                      "(0.5, 0.7): no threshold line")
    assert max_distance_of([rec("a", knobs={})])[0] is None
    assert max_distance_of([rec("a", knobs={"max_distance": "auto"})]) == (
        None, "max_distance 'auto' is not a number: no threshold line")
    assert max_distance_of([rec("a"), rec("b")]) == (0.6, None)
    html = render_html([make_run(mixed)], history=[], ci="point")
    assert "several max_distance values (0.5, 0.7)" in html


def test_trend_uses_the_same_eval_version_and_never_doubles_this_run() -> None:
    run = small_run()
    old = HistoryLine(time=T0, goldset="g", eval_version="1", questions=3,
                      metrics={"citation_accuracy": Figure(value=0.5, k=1, n=2)})
    other = old.model_copy(update={"eval_version": "0", "time": T0 - timedelta(days=1)})
    foreign = old.model_copy(update={"goldset": "h"})
    mine = build_line(run, git="ab" * 20, time=T0 + timedelta(hours=1))
    recorded = render_html([run], history=[other, old, foreign, mine], ci="point")
    unrecorded = render_html([run], history=[other, old, foreign], ci="point")
    for html in (recorded, unrecorded):
        trend = [k for k in plot_keys(html) if "-trend-" in k]
        assert trend == ["gs1-g-trend-citation_accuracy", "gs1-g-trend-abstention_accuracy",
                         "gs1-g-trend-evidence_recall"]
        table = re.search(r'<table class="runs">(.*?)</table>', html, re.S).group(1)  # type: ignore[union-attr]
        assert table.count("<tr>") == 3  # header, the old run, this run: not eval_version 0
        assert "2025-03-01T12:00:00Z" in table
        assert "citation_accuracy 0.50 → 0.50 (±0.00)" in html
        assert "not comparable (another eval_version): eval_version 0 (1 run" in html
    assert "2025-03-01T13:00:00Z" in recorded and "git abababababab" in recorded
    assert "this run (not recorded)" in unrecorded and "this run (not recorded)" not in recorded


def test_regressions_table_and_judge_lines() -> None:
    run = small_run()
    run.regressions = [Regression(goldset="g", metric="citation_accuracy", test="McNemar (exact)",
                                  pairs=40, baseline=0.8, current=0.6, p_value=0.0123,
                                  outcome="failed", said="citation_accuracy got worse")]
    run.records[0] = run.records[0].model_copy(update={
        "judge": "fixture:v1", "metrics": {**run.records[0].metrics, "faithfulness": 0.5},
        "judge_failures": {"context_precision": "timeout after 60s"},
        "judge_cached": ["faithfulness"]})
    html = render_html([run], history=[], ci="point")
    table = re.search(r'<table class="regressions">(.*?)</table>', html, re.S).group(1)  # type: ignore[union-attr]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table, re.S)
    assert cells[:7] == ["<code>citation_accuracy</code>", "McNemar (exact)", "40", "0.80",
                         "0.60", "-0.20", "0.012"]
    assert '<span class="badge o-failed">FAIL</span>' in table
    assert "judge fixture:v1: 1/2 verdicts, judge failures 1, vacuous 0, cache hits 1" in html
    q1 = rows(html)["q1"]
    assert "context_precision</span> → timeout after 60s" in q1 and "cached: faithfulness" in q1
    assert "1 of 4 worse" not in html and "1 of 1 worse" in html  # the summary line


def test_render_is_deterministic_and_write_html_writes_it(tmp_path: Path) -> None:
    run = small_run()
    first = render_html([run], history=[], ci="point")
    write_html(tmp_path / "sub" / "r.html", [run], history=[], ci="point")
    assert (tmp_path / "sub" / "r.html").read_text(encoding="utf-8") == first
    assert render_html([], history=[], ci="point").count("No goldset ran") == 1


def test_a_run_that_ran_nothing_says_nothing_ran_and_never_pass() -> None:
    """`-k nomatch` with report outputs wrote `Run: **PASS**` (and a PASS badge) over a run
    in which nothing ran; a goldset whose every question was deselected said PASS too."""
    gaps = [Gap(member=q, member_kind="single", kind="deselected") for q in ("q1", "q2")]
    deselected = GoldsetRun(name="mini", eval_version="1", population=2, gaps=gaps,
                            verdicts=[decide(Floor("evidence_recall", 0.5), "mini", [],
                                             gaps=gaps)])
    assert deselected.verdicts[0].outcome == "skipped"
    for runs, why in (([], "no goldset question or anchor ran (none selected, or every one "
                           "deselected)"),
                      ([deselected], "mini: 2 of 2 questions deselected (-k or -m)")):
        md = markdown(runs)
        assert md.splitlines()[2] == f"Run: **NOTHING RAN**: {why}"
        html = render_html(runs, history=[], ci="point")
        assert '<h1>ragate report <span class="badge o-nothing_ran">NOTHING RAN</span></h1>' \
            in html
        assert f'data-run-status="nothing_ran"><strong>NOTHING RAN: {why}.</strong>' in html
        assert ">PASS<" not in html and "**PASS**" not in md
    assert "Run: **FAIL**" in markdown([], run_failed=True)


def test_the_history_handed_over_renders_as_the_history_read_back(tmp_path: Path) -> None:
    """The writers give the HTML report the history lines `record` read and appended, not the
    file read again: the page is the same either way."""
    from pytest_ragate.outputs import history

    path = tmp_path / "h.jsonl"
    runs = [small_run()]
    history.record(path, runs, tmp_path, time=T0)
    with path.open("a", encoding="utf-8") as out:
        out.write('{"a line": "no reader can use"}\n')
    with pytest.warns(history.HistoryWarning):
        done = history.record(path, runs, tmp_path, time=T0 + timedelta(hours=1))
        again = history.read_history(path)
    assert [ln.time.hour for ln in done.history] == [12, 13] and len(done.problems) == 1
    assert render_html(runs, history=done.history, ci="point") == \
        render_html(runs, history=again, ci="point")


# --- a real run, opened in a browser ---------------------------------------------------------

SYSTEM = '''
import pytest
from pytest_ragate import Answer, Citation, Context

PLAN = {  # question id -> retrieved (doc, first, last, distance); all are cited
    "q1": [("m1", 2, 3, 0.21)],
    "q2": [("m1", 0, 1, 0.34)],
    "q3": [("m1", 0, 0, 0.28), ("m2", 8, 9, 0.52)],
}
KNOBS = {"max_distance": 0.6, "top_k": 2}

@pytest.fixture
def ragate_system():
    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid not in PLAN:
            near = Context(context_id="c9", doc_id="m3", first_unit=0, last_unit=1,
                           distance=0.83)
            return Answer.abstain([near], knobs=KNOBS)
        contexts = [Context(context_id=f"c{i}", doc_id=d, first_unit=a, last_unit=b,
                            text="...", distance=dist,
                            label=f"[{d} · A, B · 0{a}:02–0{b}:40]")
                    for i, (d, a, b, dist) in enumerate(PLAN[qid])]
        return Answer(text=TEXT, contexts=contexts, knobs=KNOBS,
                      citations=[Citation(context_id=c.context_id, quote="the budget")
                                 for c in contexts])
    return answer
''' + FIXTURE_JUDGE_CONFTEST

FLOORS = """\
[floors]
citation_accuracy = 0.60
evidence_recall = { min = 0.90, xfail = "retrieval misses m3" }
abstention_accuracy = 1.0
faithfulness = 0.60

[floors.kind.unanswerable]
abstention_accuracy = 1.0
"""

VERDICTS = {  # q3 has none: a judge failure per judged metric
    "q1": {"statements": ["s1", "s2"], "supported": [True, True], "relevant_contexts": ["c0"],
           "generated_questions": ["What about q1?"]},
    "q2": {"statements": ["s1", "s2"], "supported": [True, False], "relevant_contexts": [],
           "generated_questions": []},
}
QUESTION_IDS = ["q1", "q2", "q3", "q4"]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]


def chromium() -> Path:
    """The system Chromium. Missing, it fails the test where the browser is required
    (RAGATE_REQUIRE_BROWSER=1: CI sets it, after `make browser`), and skips it elsewhere with
    how to get one (the suite's summary says so once: tests/conftest.py, BROWSER_SKIP)."""
    path = Path(os.environ.get("RAGATE_CHROMIUM") or "/usr/bin/chromium")
    required = os.environ.get("RAGATE_REQUIRE_BROWSER", "") not in ("", "0")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if required:
            pytest.fail("playwright is required for the HTML report test (pip install -e "
                        "'.[dev]')")
        pytest.skip(f"{BROWSER_SKIP} playwright is not installed (pip install -e '.[dev]')")
    if not path.is_file():
        if required:
            pytest.fail(f"no Chromium at {path}: `make browser` installs it, or set "
                        "RAGATE_CHROMIUM")
        pytest.skip(f"{BROWSER_SKIP} no Chromium at {path}: `make browser` installs Debian's "
                    "chromium (as root or through sudo), or set RAGATE_CHROMIUM to one you have")
    return path


@pytest.fixture
def html_project(pytester: pytest.Pytester) -> pytest.Pytester:
    write_goldset(pytester.path / "gs", floors=FLOORS)
    pytester.makeconftest(f"TEXT = {EVIL!r}\n" + SYSTEM)
    (pytester.path / "judge.json").write_text(json.dumps({"judge_id": "fixture-v1",
                                                         "answers": VERDICTS}))
    return pytester


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_html_report_end_to_end_in_chromium(html_project: pytest.Pytester) -> None:
    browser_path = chromium()
    out, base = html_project.path / "out.html", ("-p", "no:cacheprovider", "gs",
                                                 "--ragate-judge=fixture:judge.json")
    for _ in range(2):  # two runs: the trend has two points, the second one's cache hits
        run = html_project.runpytest(*base, f"--ragate-html={out}", "--ragate-history=h.jsonl")
        run.assert_outcomes(passed=6, failed=3, xfailed=1)  # q1..q4 pass as items; the
        # citation_accuracy (2/4) and judge_coverage floors fail, evidence_recall xfails,
        # and faithfulness is not decided on a judge that delivered fewer verdicts than
        # judge_coverage asks (it passed on them before issue 39's rule)
    html = out.read_text(encoding="utf-8")
    keys = plot_keys(html)
    # bars for 3 mechanical + 2 judged metrics (answer relevance is asked only where a floor
    # or a label needs it), the calibration picture, and a trend for each of those and
    # judge_coverage
    assert len([k for k in keys if "-kinds-" in k]) == 5
    assert len([k for k in keys if "-trend-" in k]) == 6
    assert len(keys) == 5 + 1 + 6
    assert "max_distance 0.6" in html and html.count("cached: ") == 2  # q1, q2 from the cache

    # -n 0 and -n 2 write the same bytes (no history: its lines carry the time of the run)
    nocache = (*base, "--ragate-cache=off")
    serial = html_project.runpytest(*nocache, "-n", "0", "--ragate-html=n0.html")
    parallel = html_project.runpytest(*nocache, "-n", "2", "--ragate-html=n2.html")
    assert serial.ret == parallel.ret == 1
    assert untimed((html_project.path / "n0.html").read_text(encoding="utf-8")) == \
        untimed((html_project.path / "n2.html").read_text(encoding="utf-8"))

    from playwright.sync_api import Route, sync_playwright

    url, shot = out.resolve().as_uri(), html_project.path / "report.png"
    requests: list[str] = []
    dialogs: list[str] = []

    def only_the_file(route: Route) -> None:
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(browser_path), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.route("**/*", only_the_file)
            page.goto(url, wait_until="load")
            plots = page.locator("svg.plot")
            assert plots.count() == len(keys)
            for i in range(plots.count()):
                box = plots.nth(i).bounding_box()
                assert box and box["width"] > 100 and box["height"] > 50, (keys[i], box)
            floors = page.locator("table.floors")
            assert floors.is_visible()
            assert "[0.15, 0.85]" in floors.inner_text()  # citation_accuracy 2/4, Wilson
            for qid in QUESTION_IDS:
                assert page.locator(f'code.qid:text-is("{qid}")').is_visible(), qid
            answer = page.locator("td.answer .answer-text").first.inner_text()
            assert answer.startswith('<script>alert("pwned")</script>')
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert requests == [url]
    assert dialogs == []
    width, height = png_size(shot)
    assert width == 1280 and height > 2000 and shot.stat().st_size > 50_000

    # the docs' screenshot script, on the same page: exit 0 means nothing else was requested
    script = Path(__file__).resolve().parents[1] / "scripts" / "screenshot_report.py"
    docs = html_project.path / "docs" / "report.png"
    done = subprocess.run([sys.executable, str(script), str(out), str(docs), "--width", "1440"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "RAGATE_CHROMIUM": str(browser_path)})
    assert done.returncode == 0, done.stderr
    assert png_size(docs)[0] == 1440


def test_the_page_reads_the_runs_metrics_a_fixed_number_of_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`GoldsetRun.metrics` walks every row: read once per row, a 10,000-question page took
    minutes (benchmarks/memory_10k.py). The count must not grow with the rows."""
    reads: list[int] = []
    metrics = GoldsetRun.metrics

    def counted(run: GoldsetRun) -> list[str]:
        reads.append(len(run.records))
        return metrics.fget(run)  # type: ignore[attr-defined]

    monkeypatch.setattr(GoldsetRun, "metrics", property(counted))
    for size in (3, 60):
        reads.clear()
        render_html([make_run([rec(f"q{i}", index=i) for i in range(size)])], history=[],
                    ci="point")
        assert reads, "the page no longer reads the run's metrics: update this test"
        assert len(reads) <= 3, f"{len(reads)} reads of run.metrics for {size} rows"
