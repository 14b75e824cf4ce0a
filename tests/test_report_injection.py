"""Issue 46 item 3: no output that a viewer renders takes markup from a run's texts. A run
whose goldset name, question ids, kinds, tags, anchors, answers, errors, judge failures and
messages hold HTML and Markdown payloads (an image that phones home, links, raw HTML, a
reference definition, a heading, a list) is rendered by every writer in-process: report.md,
the job summary and the pull-request comment through a real CommonMark renderer with GitHub's
tables (markdown-it-py), whose elements must be those of the same run with plain texts; the
HTML report through an HTML parser, which must find no element or attribute of theirs."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from pytest_ragate.decision.floors import Gap, decide
from pytest_ragate.decision.goldset_run import GoldsetRun
from pytest_ragate.outputs.github import MARKER, comment_body, job_summary
from pytest_ragate.outputs.html import render_html
from pytest_ragate.outputs.reports import markdown
from pytest_ragate.outputs.text_cells import md_code, md_inline
from pytest_ragate.scoring.floor import Floor
from pytest_ragate.scoring.records import AnchorOutcome, Cited, QuestionRecord
from tests.test_ci_views import view_of

TRACKER = "tracker.invalid"
# what a payload is made of: each would be an element, a link or a block if rendered
PAYLOADS = {
    "img": f"<img src=https://{TRACKER}/p.png>",
    "link": f"[click](https://{TRACKER}/x)",
    "image": f"![i](https://{TRACKER}/i.png)",
    "autolink": f"<https://{TRACKER}/a>",
    "html": f'<a href="https://{TRACKER}/h">h</a><script>alert(1)</script>',
    "code": "`code` *em* __strong__ ~~gone~~ | cell",
    "entity": "&lt;img src=x&gt; &#60;",
}
ALL = " ".join(PAYLOADS.values())
# what starts a block where a text starts a line of its own (a list item, a heading)
STARTS = {"definition": f"[x]: https://{TRACKER}/d", "heading": "# big", "quote": "> quoted",
          "list": "1. one", "rule": "---", "dash": "- item"}


def texts(evil: bool) -> dict[str, str]:
    """The run's texts: the payloads, or as many plain words in their place."""
    if not evil:
        plain = {name: f"x{name}" for name in [*PAYLOADS, *STARTS]}
        return {**plain, "all": "plain words"}
    return {**PAYLOADS, **STARTS, "all": ALL}


def record(i: int, t: dict[str, str], qid: str, **extra: Any) -> QuestionRecord:
    return QuestionRecord(
        goldset=t["gs"], route="gs/ragate.toml", question_id=qid, question=f"{t['all']} {i}?",
        kind=t["kind"], tags={"lang": t["tag"], t["key"]: "v"}, index=i, abstained=False,
        must_abstain=False, abstention_correct=True, citations=1, citations_correct=i % 2,
        evidence_spans=1, evidence_spans_found=1, evidence_ranks=[1], answer_text=t["all"],
        eval_version=t["version"], contexts=1, expected=[f"[{t['doc']} · turns 2–3]"],
        cited=[Cited(context_id=t["img"], label=f"[{t['doc']}]", correct=True,
                     quote=t["all"])],
        judge=t["judge"], judge_failures={"faithfulness": t["all"]},
        metrics={"citation_accuracy": float(i % 2)}, **extra)


def a_run(evil: bool) -> GoldsetRun:
    """Eight questions (ids of every payload and block start), half cited wrong, one errored;
    floors over all, a kind and a tag's slice, failing; an anchor; a question without a
    result."""
    t = texts(evil)
    t.update(gs=f"gs{t['html']}", kind=f"single{t['img']}", tag=f"de{t['link']}",
             key=f"k{t['image']}", version=f"7{t['autolink']}", doc=f"m{t['img']}",
             judge=f"ragas:{t['html']}")
    ids = [f"q{i}{t[name]}" if i < len(PAYLOADS) else t[name]
           for i, name in enumerate([*PAYLOADS, *STARTS])]
    records = [record(i, t, qid) for i, qid in enumerate(ids)]
    records[-1] = records[-1].model_copy(update={"status": "error", "error": t["all"]})
    floors = [Floor("citation_accuracy", 0.9), Floor("citation_accuracy", 0.9, kind=t["kind"]),
              Floor("citation_accuracy", 0.9, slice=("lang", t["tag"]))]
    scored = [r for r in records if r.status == "scored"]
    run = GoldsetRun(name=t["gs"], eval_version=t["version"], route="gs/ragate.toml",
                     records=records, population=len(records) + 1,
                     verdicts=[decide(f, t["gs"], scored) for f in floors])
    run.gaps = [Gap(member=ids[-1], member_kind=t["kind"], kind="errored", why=t["all"]),
                Gap(member=t["definition"], member_kind=t["kind"], kind="missing",
                    why=t["heading"])]
    run.anchors = [AnchorOutcome(goldset=t["gs"], anchor_id=t["definition"], kind=t["kind"],
                                 claim=t["all"], path="gs/anchors.jsonl", line=1,
                                 outcome="failed", why=t["all"], xfail=t["quote"])]
    run.anchor_gaps = [Gap(member=t["list"], member_kind=t["kind"], kind="errored",
                           why=t["rule"])]
    return run


def markdowns(evil: bool) -> dict[str, str]:
    run = a_run(evil)
    view = view_of(run)
    t = texts(evil)
    deltas = {run.route: [t["all"], t["heading"]]}
    return {"report.md": markdown([run], deltas, flips={run.route: [t["all"], t["list"]]}),
            "job summary": job_summary(view),
            "PR comment": comment_body(view).removeprefix(MARKER)}  # its own HTML comment


RENDERER = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def elements(text: str) -> list[str]:
    """What a Markdown viewer builds from `text`: its elements, in order, without the text
    they hold (a text's pieces as escapes split them are one text)."""
    found: list[str] = []

    def walk(tokens: list[Token]) -> None:
        for token in tokens:
            if token.type in ("text", "text_special", "softbreak"):
                if not found or found[-1] != "text":
                    found.append("text")
            elif token.children is not None and token.type == "inline":
                walk(token.children)
            else:  # raw HTML with what it says, a link or an image with where it points
                said = token.content if token.type.startswith("html") else ""
                found.append(" ".join(filter(None, (token.type, token.tag, said,
                                                    *map(str, token.attrs.values())))))

    walk(RENDERER.parse(text))
    return found


@pytest.mark.parametrize("output", ["report.md", "job summary", "PR comment"])
def test_a_markdown_output_takes_no_element_from_a_runs_texts(output: str) -> None:
    evil, plain = markdowns(True)[output], markdowns(False)[output]
    made = elements(evil)
    assert made == elements(plain)  # no element, raw HTML or link that plain texts lack
    assert not [m for m in made if TRACKER in m]
    html = RENDERER.render(evil)
    assert TRACKER not in "".join(html.split('"')[1::2])  # in no attribute: shown as text
    assert f"q0{PAYLOADS['img']}".replace("<", "&lt;").replace(">", "&gt;") in html \
        or output != "report.md"  # the question shown as written


class Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


@pytest.mark.heavy  # matplotlib draws each plot: seconds
def test_the_html_report_takes_no_element_or_attribute_from_a_runs_texts() -> None:
    page = Tags()
    page.feed(render_html([a_run(True)], history=[], ci="point"))
    tags = {tag for tag, _ in page.found}
    assert not tags & {"img", "script", "iframe", "object", "embed"}, tags
    assert [(tag, name) for tag, attrs in page.found for name, value in attrs
            if name.startswith("on") or (name in ("href", "src", "srcset", "action", "style")
                                         and TRACKER in (value or ""))] == []


@pytest.mark.parametrize("text", [*PAYLOADS.values(), *STARTS.values(), "a``b` c", "`", "|"])
def test_md_inline_and_md_code_show_a_text_as_written(text: str) -> None:
    """One escaping helper per Markdown place: the text a viewer shows is the text given."""
    for shown in (md_inline(text), md_code(text)):
        tokens = RENDERER.parseInline(shown)[0].children or []
        said = "".join(t.content for t in tokens if t.type in ("text", "text_special",
                                                               "code_inline"))
        assert said.replace("\\|", "|") == text, (shown, tokens)
