"""Reports that show the answer and the tags (scoring/tag_figures.py, suggest.py's slice
suggestions, outputs/reports.py, html.py): the Markdown question table has each answer, cut and
escaped, and its tags; every report breaks the metrics down by tag value with n and interval,
floors or not; and a first run suggests only slice floors its n decides, naming the n the
others need instead of suggesting a floor that must fail as insufficient."""

from __future__ import annotations

import tomllib

import pytest

from pytest_ragate.outputs.reports import floors_block, markdown, run_slices
from pytest_ragate.outputs.text_cells import cut, md_cut
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import QuestionRecord, tally
from pytest_ragate.scoring.slices import needs_of
from pytest_ragate.scoring.suggest import figures
from pytest_ragate.scoring.tag_figures import tag_figures
from tests.test_ci_views import record, run_of


def abstaining(i: int, lang: str, right: bool) -> QuestionRecord:
    """A question of `lang` whose abstention is right or wrong."""
    return record(i, tags={"lang": lang}).model_copy(update={"abstention_correct": right})


def test_a_slice_this_n_cannot_decide_is_named_with_the_n_it_needs_not_suggested() -> None:
    rows = ([abstaining(i, "en", i % 20 != 0) for i in range(200)]
            + [abstaining(200 + i, "de", i not in (0, 1)) for i in range(31)])
    found = figures(rows)
    block = "\n".join(floors_block(found, run_slices(run_of(rows, []), found)))
    abstention = next(f for f in found if f.metric == "abstention_accuracy")
    assert abstention.suggested == 0.9  # 219/231: the whole goldset's floor
    de = [r for r in rows if r.tags["lang"] == "de"]
    needs = needs_of(Floor("abstention_accuracy", 0.9), tally("abstention_accuracy", de))
    assert needs is not None and needs > 31
    assert (f"# [floors.slices.lang] abstention_accuracy = 0.90 not suggested: lang=de needs "
            f"about {needs} questions (has 31)") in block
    parsed = tomllib.loads(block)
    assert "abstention_accuracy" not in parsed["floors"].get("slices", {}).get("lang", {})


def test_slices_every_one_of_which_holds_are_suggested_as_a_table() -> None:
    rows = [abstaining(i, "de" if i % 2 else "en", True) for i in range(1000)]
    found = figures(rows)
    parsed = tomllib.loads("\n".join(floors_block(found, run_slices(run_of(rows, []), found))))
    assert parsed["floors"]["abstention_accuracy"] == 0.95
    assert parsed["floors"]["slices"]["lang"]["abstention_accuracy"] == 0.95


def test_the_markdown_report_shows_each_answer_its_tags_and_figures_by_tag() -> None:
    long = "The budget is *twelve* euros | per <em>head</em>\n" + "and more " * 30
    rows = [record(i, right=i % 2 == 0, tags={"lang": "de" if i < 3 else "en"}, answer=long)
            for i in range(8)]
    text = markdown([run_of(rows, [Floor("citation_accuracy", 0.4)])])
    header = next(line for line in text.splitlines() if line.startswith("| question"))
    assert [c.strip() for c in header.split("|")[1:7]] == [
        "question", "text", "kind", "tags", "status", "answer"]
    q0 = next(line for line in text.splitlines() if line.startswith("| q0 "))
    assert md_cut(long) in q0 and "lang=de" in q0
    assert md_cut(long).startswith("The budget is \\*twelve\\* euros \\| per \\<em>head")
    assert len(cut(long)) <= 120 and cut(long).endswith("more and…")
    assert q0.count(" | ") == header.count(" | ")  # the answer's pipe stayed in its cell
    by_tag = text.split("### By tag")[1].split("###")[0]
    assert "| lang=de | citation_accuracy   | 0.67    | [0.21, 0.94]   | 3   |" in by_tag


def test_tag_figures_have_n_and_an_interval_for_every_value() -> None:
    rows = [record(i, right=i % 4 != 0, tags={"lang": ["de", "en", "fr"][i % 3]})
            for i in range(30)]
    found = {(f.name, f.metric): f for f in tag_figures(rows, ["citation_accuracy"])}
    assert sorted(found) == [("lang=de", "citation_accuracy"), ("lang=en", "citation_accuracy"),
                             ("lang=fr", "citation_accuracy")]
    for f in found.values():
        low, high = f.interval or (None, None)
        assert f.tally.n == 10 and low is not None and low < (f.tally.value or 0) < high


def test_the_html_report_shows_figures_by_tag_and_each_questions_tags() -> None:
    pytest.importorskip("matplotlib")
    from pytest_ragate.outputs.html import render_html

    rows = [record(i, tags={"lang": "de" if i % 2 else "en"}) for i in range(6)]
    page = render_html([run_of(rows, [Floor("citation_accuracy", 0.5)])])
    assert "<h3>By tag</h3>" in page and "<code>lang=de</code>" in page
    assert '<div class="muted small tags">lang=en</div>' in page
