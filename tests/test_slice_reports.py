"""Slice floors in every report (outputs/slice_tables.py): one table per key and metric, worst
slice first, in the Markdown report, the HTML report (with a plot of each slice's interval
against the floor), the terminal's line per key and the JUnit properties of a slice floor.

The runs are built by hand from the slice decision itself (scoring/slices.py: `decide_slices`,
`slice_message`), as the gate's wiring hands them to the outputs; the end-to-end runs of a
goldset with tags come with that wiring."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from typing import Any

import matplotlib
import pytest

from pytest_ragate.decision.floors import Outcome, Verdict, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.modes.reporting import Outputs, floor_properties, terminal_summary
from pytest_ragate.outputs.html import RC, kind_plot, render_html
from pytest_ragate.outputs.reports import floors_table, markdown
from pytest_ragate.outputs.slice_tables import slice_tables
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.registry import Tally
from pytest_ragate.scoring.slices import decide_slices, family_size
from pytest_ragate.wording import slices as messages
from tests.test_html_report import rec

FLOOR = Floor("abstention_accuracy", 0.85)


def share(k: int, n: int) -> Tally:
    return Tally(metric="abstention_accuracy", k=k, n=n, questions=n)


# the calls (tests/test_slices.py): pl and es miss; de (needs about N), fr (on the floor) and
# it (nothing scored) are insufficient; en holds
LANGS = {"de": share(30, 42), "en": share(115, 120), "fr": share(17, 20), "it": share(0, 0),
         "es": share(40, 60), "pl": share(50, 100)}
WORST_FIRST = ["pl", "es", "de", "fr", "it", "en"]


def slice_verdicts(key: str, floor: Floor, tallies: dict[str, Tally], *,
                   insufficient: Outcome = "failed", own: dict[str, float] | None = None,
                   ) -> list[Verdict]:
    """Each slice's verdict as the gate decides it, in a shuffled order (the tables sort);
    `own` gives a named slice its own floor."""
    figures = decide_slices(floor, tallies)
    outcome: dict[str, Outcome] = {"holds": "passed", "misses": "failed",
                                   "insufficient": insufficient}
    verdicts = [Verdict(
        floor=replace(floor, slice=(key, f.value), min=(own or {}).get(f.value, floor.min)),
        goldset="g", outcome=outcome[f.call],
        said=messages.slice_message(floor, key, f, tested=family_size(figures),
                                       correction="holm", alpha=0.05),
        tally=f.tally, interval=f.interval, slice_call=f.call, needs=f.needs,
        correction="Holm")
        for f in figures]
    random.Random(7).shuffle(verdicts)
    return verdicts


def sliced_run(**options: Any) -> GoldsetRun:
    records = [rec("q1", index=0), rec("q2", "unanswerable", index=1, must_abstain=True,
                                      abstained=True, cited=0, correct=0, spans=0, found=0)]
    run = GoldsetRun(name="g", eval_version="1", records=records)
    run.verdicts = [decide(Floor("citation_accuracy", 0.5), "g", records),
                    *slice_verdicts("lang", FLOOR, LANGS, **options)]
    return run


def needs_of_de() -> int:
    needs = next(f.needs for f in decide_slices(FLOOR, LANGS) if f.value == "de")
    assert needs is not None and needs > 42
    return needs


# --- the tables -------------------------------------------------------------------------------


def test_a_keys_slices_are_one_table_worst_first() -> None:
    (table,) = slice_tables(sliced_run())
    assert (table.key, table.metric, table.correction) == ("lang", "abstention_accuracy", "Holm")
    assert [row.value for row in table.rows] == WORST_FIRST
    assert [row.call for row in table.rows] == [
        "misses", "misses", "insufficient", "insufficient", "insufficient", "holds"]
    assert table.bound == "≥ 0.85" and table.overrides == []


def test_within_a_call_the_furthest_on_the_wrong_side_comes_first_for_an_upper_floor() -> None:
    at_most = Floor("abstention_accuracy", 0.20, upper=True)
    run = GoldsetRun(name="g", eval_version="1")
    run.verdicts = slice_verdicts("product", at_most, {
        "a": share(10, 20), "b": share(30, 40), "c": share(0, 100), "d": share(1, 100)})
    (table,) = slice_tables(run)
    # b (0.75) and a (0.50) miss, b further above the bound; of those that hold, d (0.01)
    # is nearer the bound than c (0.00)
    assert [(row.value, row.call) for row in table.rows] == [
        ("b", "misses"), ("a", "misses"), ("d", "holds"), ("c", "holds")]


def test_each_key_and_metric_is_its_own_table_in_the_order_the_floors_come() -> None:
    run = sliced_run()
    run.verdicts += slice_verdicts("product", Floor("abstention_accuracy", 0.5),
                                   {"billing": share(9, 10), "search": share(2, 10)})
    run.verdicts += slice_verdicts("lang", Floor("citation_accuracy", 0.5),
                                   {"de": share(9, 10)})
    assert [(t.key, t.metric) for t in slice_tables(run)] == [
        ("lang", "abstention_accuracy"), ("product", "abstention_accuracy"),
        ("lang", "citation_accuracy")]


def test_a_run_without_slice_floors_has_no_slices_anywhere() -> None:
    run = sliced_run()
    run.verdicts = [v for v in run.verdicts if v.floor.slice is None]
    assert slice_tables(run) == []
    assert "### Slices" not in markdown([run])
    html = render_html([run], history=[], ci="point")
    assert "<h3>Slices</h3>" not in html and 'class="slices"' not in html
    empty = GoldsetRun(name="g", eval_version="1")
    assert slice_tables(empty) == [] and "Slices" not in markdown([empty])


# --- Markdown ---------------------------------------------------------------------------------


def slices_markdown(md: str) -> list[str]:
    section = md.split("### Slices\n", 1)[1].split("\n### ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ")]


def test_the_markdown_report_has_a_slice_table_worst_first() -> None:
    md = markdown([sliced_run()])
    assert md.index("### Floors") < md.index("### Slices") < md.index("### By kind")
    assert ("slices of lang (abstention_accuracy ≥ 0.85, Holm), worst first:" in md)
    header, *rows = slices_markdown(md)
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "lang", "abstention_accuracy", "95% interval", "n", "floor", "call", "outcome"]
    cells = {row.split("|")[1].strip(): [c.strip() for c in row.strip("|").split("|")]
             for row in rows}
    assert [row.split("|")[1].strip() for row in rows] == WORST_FIRST
    assert cells["pl"][1:] == ["0.50", "[0.40, 0.60]", "100", "0.85", "misses", "FAIL"]
    assert cells["de"][5:] == [f"insufficient n: needs about {needs_of_de()}", "FAIL"]
    assert cells["fr"][5] == "insufficient n: on the floor, no n decides it"
    assert cells["it"][5] == "insufficient n: nothing scored"
    assert cells["it"][1:4] == ["—", "—", "0"]
    assert cells["en"][5:] == ["holds", "PASS"]


def test_an_insufficient_slice_skipped_by_the_setting_says_skip() -> None:
    rows = slices_markdown(markdown([sliced_run(insufficient="skipped")]))[1:]
    outcomes = {row.split("|")[1].strip(): row.strip("|").split("|")[-1].strip()
                for row in rows}
    assert outcomes == {"pl": "FAIL", "es": "FAIL", "de": "SKIP", "fr": "SKIP", "it": "SKIP",
                        "en": "PASS"}


def test_a_named_slices_own_floor_is_its_rows_and_the_title_names_it() -> None:
    run = sliced_run(own={"en": 0.90})
    (table,) = slice_tables(run)
    assert table.overrides == [("en", "≥ 0.90")]
    md = markdown([run])
    assert "slices of lang (abstention_accuracy ≥ 0.85; lang=en ≥ 0.90, Holm)" in md
    en = next(r for r in slices_markdown(md) if r.startswith("| en "))
    assert "| 0.90 " in en


def test_slice_floors_show_no_whole_goldset_by_kind_figures() -> None:
    table = floors_table([sliced_run()], "simple")
    whole = next(line for line in table.splitlines() if "citation_accuracy" in line)
    de = next(line for line in table.splitlines() if "lang=de:" in line)
    assert "single_doc" in whole and "single_doc" not in de


# --- HTML -------------------------------------------------------------------------------------


def test_the_html_report_has_the_slice_table_and_its_plot() -> None:
    run = sliced_run()
    html = render_html([run], history=[], ci="point")
    assert "<h3>Slices</h3>" in html
    table = re.search(r'<table class="slices" data-slices="lang:abstention_accuracy">(.*?)'
                      r"</table>", html, re.S).group(1)  # type: ignore[union-attr]
    rows = re.findall(r'<tr class="slice o-row-(\w+)( wrong)?"[^>]*>\s*<td><code>(.*?)</code>',
                      table)
    assert [(name, outcome, bool(wrong)) for outcome, wrong, name in rows] == [
        ("pl", "failed", True), ("es", "failed", True), ("de", "failed", True),
        ("fr", "failed", True), ("it", "failed", True), ("en", "passed", False)]
    assert f"insufficient n: needs about {needs_of_de()}" in table
    plot = re.search(r'<figure class="plot wide" data-plot="(gs1-g-slices-1-lang-'
                     r'abstention_accuracy)">\s*(<svg .*?</svg>)', html, re.S)
    assert plot is not None
    svg = plot.group(2)
    assert 'aria-label="slices of lang (abstention_accuracy ≥ 0.85, Holm), worst first"' in svg
    # the slices in the table's order on the axis, each with its count
    ticks = [t for t in re.findall(r"<text[^>]*>([^<]+)</text>", svg) if t in LANGS]
    assert ticks == WORST_FIRST
    assert "50/100" in svg and "115/120" in svg
    # a failing slice is named in red (vermilion), bold; the one that holds is not
    styles = {name: style for style, name in
              re.findall(r'<text style="([^"]*)"[^>]*>([^<]+)</text>', svg) if name in LANGS}
    assert {name for name, style in styles.items()
            if "fill: #d55e00" in style and "font-weight: 700" in style} == set(LANGS) - {"en"}
    without = GoldsetRun(name="g", eval_version="1", records=run.records,
                         verdicts=[v for v in run.verdicts if v.floor.slice is None])
    plots = int(re.search(r'name="ragate-plots" content="(\d+)"', html).group(1))  # type: ignore[union-attr]
    before = int(re.search(r'name="ragate-plots" content="(\d+)"',  # type: ignore[union-attr]
                           render_html([without], history=[], ci="point")).group(1))
    assert plots == before + 1


def test_slice_values_are_escaped_in_the_html() -> None:
    run = GoldsetRun(name="g", eval_version="1")
    run.verdicts = slice_verdicts("lang", FLOOR, {"<b>x</b>": share(9, 10)})
    html = render_html([run], history=[], ci="point")
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def kind_plot_texts(run: GoldsetRun) -> list[str]:
    with matplotlib.rc_context(RC):
        return re.findall(r"<text[^>]*>([^<]*)</text>",
                          str(kind_plot(run, "abstention_accuracy", "k").svg))


def test_a_slice_floor_draws_no_goldset_wide_line_on_the_kind_plot() -> None:
    run = sliced_run()
    assert not any("floor" in t for t in kind_plot_texts(run))
    run.verdicts.append(decide(Floor("abstention_accuracy", 0.5), "g", run.records))
    assert any("floor 0.50" in t for t in kind_plot_texts(run))


# --- the terminal and JUnit -------------------------------------------------------------------


def test_the_terminal_line_per_key_counts_and_names_the_calls() -> None:
    (table,) = slice_tables(sliced_run())
    assert table.summary() == (
        "slices of lang (abstention_accuracy ≥ 0.85, Holm): 2 misses (pl, es), "
        f"3 insufficient (de: needs about {needs_of_de()}, fr, it), 1 holds")


class Lines:
    """A terminal reporter that keeps what it is told (the summary's only collaborator)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, bool]]] = []

    def write_line(self, line: str, **markup: bool) -> None:
        self.lines.append((line, markup))

    def write_sep(self, sep: str, title: str) -> None:
        self.lines.append((title, {}))


def test_the_terminal_summary_writes_the_slice_line_red_when_a_slice_fails() -> None:
    passing = GoldsetRun(name="h", eval_version="1")
    passing.verdicts = slice_verdicts("lang", FLOOR, {"de": share(115, 120),
                                                     "fr": share(17, 20)},
                                      insufficient="skipped")
    out = Lines()
    terminal_summary(out, [sliced_run(), passing], down=[], promotion=[],
                     outputs=Outputs(paths={}), history_notes=[])
    said = {line: markup for line, markup in out.lines if "slices of" in line}
    assert len(said) == 2
    assert said[f"g: {slice_tables(sliced_run())[0].summary()}"]["red"] is True
    h = ("h: slices of lang (abstention_accuracy ≥ 0.85, Holm): 0 misses, 1 insufficient (fr), "
         "1 holds")
    assert said[h] == {"red": False, "yellow": True}


def test_a_slice_floors_junit_properties_carry_the_slice_and_its_call() -> None:
    by_name = {v.floor.name: v for v in sliced_run().verdicts}
    de = dict(floor_properties(by_name["floor[lang=de:abstention_accuracy]"]))
    assert de["slice"] == "lang=de" and de["call"] == "insufficient"
    assert de["needs"] == str(needs_of_de())
    assert de["value"] == pytest.approx(30 / 42) and de["n"] == "42"
    assert de["ci_low"] < 30 / 42 < de["ci_high"]
    en = dict(floor_properties(by_name["floor[lang=en:abstention_accuracy]"]))
    assert en["call"] == "holds" and "needs" not in en
    whole = [name for name, _ in floor_properties(by_name["floor[citation_accuracy]"])]
    assert not {"slice", "call", "needs"} & set(whole)


def test_a_slice_of_the_key_kind_is_drawn_over_its_kinds_bar_like_a_kind_floor() -> None:
    run = sliced_run()
    before = "".join(kind_plot_texts(run))
    with matplotlib.rc_context(RC):
        plain = str(kind_plot(run, "abstention_accuracy", "k").svg)
    run.verdicts += slice_verdicts("kind", FLOOR, {"unanswerable": share(1, 1),
                                                  "single_doc": share(1, 1)})
    with matplotlib.rc_context(RC):
        sliced = str(kind_plot(run, "abstention_accuracy", "k").svg)
    kind = next(v for v in run.verdicts if v.floor.slice == ("kind", "unanswerable"))
    assert "".join(kind_plot_texts(run)) == before  # no goldset-wide floor in the title
    # one vermilion segment per kind bar, as a kind floor draws (none before)
    assert plain.count("#d55e00") == 0 and sliced.count("#d55e00") == 2
    with matplotlib.rc_context(RC):
        as_kind = GoldsetRun(name="g", eval_version="1", records=run.records, verdicts=[
            replace(kind, floor=replace(kind.floor, slice=None, kind="unanswerable"))])
        assert str(kind_plot(as_kind, "abstention_accuracy", "k").svg).count("#d55e00") == 1
