"""The Markdown report and the terminal tables (floors, figures, regressions, the failing
floors' worst questions).

Both are rendered on the controller from the same records and verdicts, in goldset and
question order, so `-n 0` and `-n N` write the same bytes, but for what the clock measured:
the latencies (the bill line's and the `latency (s)` column's), which no two runs share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tabulate import tabulate

from pytest_ragate.decision.goldset_run import GoldsetRun, RunStatus, run_status
from pytest_ragate.files import write_atomic
from pytest_ragate.outputs.slice_tables import SliceRow, slice_tables
from pytest_ragate.outputs.text_cells import md_cut, md_inline, tags_text
from pytest_ragate.scoring.custom import COMPUTED_BY
from pytest_ragate.scoring.figures import kind_counts
from pytest_ragate.scoring.records import (
    MECHANICAL,
    Bill,
    QuestionRecord,
    bill_of,
    fmt_num,
)
from pytest_ragate.scoring.registry import METRICS, cost_of, figure_digits
from pytest_ragate.scoring.slices import SliceFigure
from pytest_ragate.scoring.suggest import (
    RULE,
    Figure,
    SliceSuggestion,
    figures,
    slice_suggestions,
)
from pytest_ragate.scoring.tag_figures import tag_figures
from pytest_ragate.wording.conversations import wrong_conversations
from pytest_ragate.wording.floors import OUTCOME_WORDS, unsuggested
from pytest_ragate.wording.numbers import (
    floor_figure,
    fmt_counts,
    fmt_interval,
    fmt_n,
    shown,
)
from pytest_ragate.wording.runs import (
    FAILED_NOTE,
    STATUS_WORDS,
    badge_of,
    lines_of,
    run_why,
    status_why,
)
from pytest_ragate.wording.slices import slice_call_cell, slices_title


def shown_as(tablefmt: str) -> Callable[[str], str]:
    """How a table in `tablefmt` shows a user's text (a goldset's name, a kind, a tag, a
    judge): escaped in Markdown (`github`), as it is in the terminal."""
    return md_inline if tablefmt == "github" else str


def floors_table(runs: Sequence[GoldsetRun], tablefmt: str) -> str:
    rows = []
    text = shown_as(tablefmt)
    for run in runs:
        for v in run.verdicts:
            rows.append([
                text(run.label), text(v.floor.label),
                floor_figure(v.floor), shown(v),
                fmt_interval(v.interval, figure_digits(v.floor.metric)),
                fmt_n(v.tally), "—" if v.passes_at is None else str(v.passes_at),
                text(fmt_counts(kind_counts(v.floor.metric, run.records)))
                if v.floor.kind is None and v.floor.slice is None else "", text(v.computed_by),
                OUTCOME_WORDS[v.outcome],
            ])
    headers = ["goldset", "metric", "floor", "value", "95% interval", "n", "passes 80% at",
               "by kind", "computed by", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def worst_lines(run: GoldsetRun) -> list[str]:
    """Each failing floor's worst questions, as the terminal, the Markdown and the HTML
    report list them: `floor[evidence_recall]: worst: q2 found 0/1 spans; …`, and, in a
    goldset of conversations, which went wrong at which turn (`wording/conversations.py`)."""
    floors = [f"{v.floor.name}: worst: {v.worst}" for v in run.verdicts if v.worst]
    return [*floors, *wrong_conversations(run.records)] if floors else []


def slice_cells(row: SliceRow) -> list[str]:
    """One slice's row, as the Markdown and HTML tables show it: value, its figure, 95%
    interval, n, floor, call (`insufficient n: needs about 66`) and test outcome."""
    v = row.verdict
    return [row.value, shown(v), fmt_interval(v.interval, figure_digits(v.floor.metric)),
            fmt_n(v.tally), floor_figure(v.floor),
            slice_call_cell(row.call, v.needs, n=v.tally.n if v.tally else 0,
                            on_floor=v.value == v.floor.min), OUTCOME_WORDS[v.outcome]]


def slices_section(run: GoldsetRun) -> list[str]:
    """The Markdown report's slice tables, one per key and metric, worst first; nothing for
    a run without slice floors."""
    tables = slice_tables(run)
    if not tables:
        return []
    parts = ["### Slices", ""]
    for table in tables:
        rows = [[_cell(value), *cells] for value, *cells in map(slice_cells, table.rows)]
        parts += [f"{_cell(slices_title(table.head))}:", "",
                  tabulate(rows, headers=[_cell(table.key), table.metric, "95% interval",
                                          "n", "floor", "call", "outcome"],
                           tablefmt="github", disable_numparse=True), ""]
    return parts


TAG_HEADERS = ["tag", "metric", "value", "95% interval", "n"]


def tag_rows(records: Sequence[QuestionRecord], metrics: Sequence[str]) -> list[list[str]]:
    """Each metric by tag value (`scoring/tag_figures.py`): information, whether or not a
    slice floor exists; no row for questions without tags."""
    return [[f.name, f.metric, fmt_num(f.tally.value, figure_digits(f.metric)),
             fmt_interval(f.interval, figure_digits(f.metric)), fmt_n(f.tally)]
            for f in tag_figures(records, metrics)]


def tag_table(records: Sequence[QuestionRecord], metrics: Sequence[str], tablefmt: str) -> str:
    """`tag_rows` as one table; empty when no question has a tag."""
    rows = tag_rows(records, metrics)
    if not rows:
        return ""
    if tablefmt == "github":
        rows = [[md_inline(row[0]), *row[1:]] for row in rows]
    return tabulate(rows, headers=TAG_HEADERS, tablefmt=tablefmt, disable_numparse=True)


def figures_table(found: Sequence[tuple[GoldsetRun, list[Figure]]], tablefmt: str) -> str:
    """Each run's figures (`run_figures`): value, interval, n, kinds, suggested floor."""
    text = shown_as(tablefmt)
    rows = [[text(run.label), f.metric, fmt_num(f.tally.value), fmt_interval(f.interval),
             fmt_n(f.tally), text(fmt_counts(f.by_kind)), text(metric_source(run, f.metric)),
             fmt_num(f.suggested)] for run, figs in found for f in figs]
    headers = ["goldset", "metric", "value", "95% interval", "n", "by kind", "computed by",
               "suggested floor"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def floors_block(found: Sequence[Figure], slices: Sequence[SliceSuggestion] = ()) -> list[str]:
    """The `[floors]` table of a goldset's suggestions, ready to paste into its ragate.toml,
    the rule a comment in it. A suggestion of 0 gates nothing: it stays commented out. Then
    its slice floors (`slice_block`)."""
    lines = ["[floors]", f"# {RULE}"]
    for f in found:
        if f.failed:
            lines.append(f"# {f.metric} not suggested: {unsuggested(f.failed)}")
        if f.suggested is None:
            continue
        key = _toml_key(f.metric)
        if f.suggested > 0:
            lines.append(f"{key} = {f.suggested:.2f}")
        else:
            lines.append(f"# {key} = 0.00  (its 95% lower bound is 0 over n={fmt_n(f.tally)} "
                         f"{METRICS[f.metric].unit}: a floor there gates nothing)")
    return lines + slice_block(slices)


def _toml_key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else '"' + name.replace('"', '\\"') + '"'


def slice_block(slices: Sequence[SliceSuggestion]) -> list[str]:
    """Slice floors as a goldset's suggestions name them: a `[floors.slices.<key>]` table
    with each metric whose every slice this n decides; for the others, a comment naming the
    slices that stop it (`lang=de needs about 142 questions (has 31)`), never a floor that
    must fail as insufficient."""
    lines: list[str] = []
    by_key: dict[str, list[SliceSuggestion]] = {}
    for suggestion in slices:
        by_key.setdefault(suggestion.key, []).append(suggestion)
    for key, found in by_key.items():
        table = f"[floors.slices.{_toml_key(key)}]"
        decided = [s for s in found if s.decided]
        lines += ["", table, "# every slice's 95% interval clears these at today's n"] \
            if decided else [""]
        lines += [f"{_toml_key(s.metric)} = {s.floor:.2f}" for s in decided]
        lines += [f"# {table} {s.metric} = {s.floor:.2f} not suggested: "
                  + "; ".join(slice_stop(key, f) for f in s.undecided)
                  for s in found if not s.decided]
    return lines


def slice_stop(key: str, figure: SliceFigure) -> str:
    """Why one slice stops a suggested slice floor: `lang=de needs about 142 questions (has
    31)`, `lang=fr is below it (0.41 [0.25, 0.58], n=31)`."""
    t = figure.tally
    name = f"{key}={figure.value}"
    if figure.call == "misses":
        digits = figure_digits(t.metric)
        return (f"{name} is below it ({fmt_num(t.value, digits)} "
                f"{fmt_interval(figure.interval, digits)}, n={fmt_n(t)})")
    unit = METRICS[t.metric].unit
    if figure.needs is not None:
        return f"{name} needs about {figure.needs} {unit} (has {fmt_n(t)})"
    if not t.n:
        return f"{name} has nothing scored"
    return f"{name} cannot be decided at any n (n={fmt_n(t)}: on the floor, or no spread)"


def suggestion_lines(label: str, found: Sequence[Figure],
                     slices: Sequence[SliceSuggestion] = (), *,
                     floors_known: bool = True) -> list[str]:
    """What a goldset's figures suggest: a run of a goldset without floors is told so;
    `ragate suggest` (`floors_known` False: it reads no ragate.toml) says only what the
    figures suggest."""
    if not any(f.suggested is not None for f in found):
        return [f"{label}: nothing scored, no floor to suggest"]
    head = ("no floors yet; suggested" if floors_known else
            "floors its figures suggest (beside any floors its ragate.toml has)")
    return [f"{label}: {head}, to paste into its ragate.toml:", *floors_block(found, slices)]


def run_figures(runs: Sequence[GoldsetRun]) -> list[tuple[GoldsetRun, list[Figure]]]:
    """The figures of each run that has no floors yet."""
    return [(run, figures(run.records)) for run in runs if not run.verdicts]


def run_slices(run: GoldsetRun, found: Sequence[Figure]) -> list[SliceSuggestion]:
    """The slice floors a run without floors could have (`suggest.slice_suggestions`)."""
    return slice_suggestions(run.records, found)


def regressions_table(runs: Sequence[GoldsetRun], tablefmt: str) -> str:
    text = shown_as(tablefmt)
    rows = [[text(run.label), c.metric, fmt_num(c.baseline), fmt_num(c.current),
             "—" if c.delta is None else f"{c.delta:+.2f}", c.pairs, c.test,
             "—" if c.p_value is None else f"{c.p_value:.3g}",
             "—" if c.detects is None else f"{c.detects:.2f}", OUTCOME_WORDS[c.outcome]]
            for run in runs for c in run.regressions]
    headers = ["goldset", "metric", "baseline", "now", "change", "paired questions", "test",
               "p", "detects a drop of", "outcome"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def corpus_lines(runs: Sequence[GoldsetRun]) -> list[str]:
    """Under the regressions table (the terminal's and `ragate compare`'s): each run whose
    corpus differs from its baseline's, `gs: corpus changed since the baseline: …`."""
    from pytest_ragate.wording.pins import corpus_changed

    return [f"{run.label}: " + corpus_changed("the baseline", edited) for run in runs
            if (edited := next((g.corpus for g in run.regressions if g.corpus is not None),
                               None)) is not None]


def fmt_dollars(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def bill_line(bill: Bill) -> str:
    """The run's bill in one line, as every report says it: `bill: 40 answers, latency p50
    0.05 s, p95 0.31 s, total 3.20 s · system 1200+300 tokens, $0.0400 · judge 120
    requests, 36000+2400 tokens, 12 cached verdicts (no request), $0.0123 · total $0.0523`
    (tokens prompt+completion; a cost only where it is known)."""
    parts = [f"{bill.answers} answer{'s' * (bill.answers != 1)}"]
    if bill.latency_p50_s is not None and bill.latency_p95_s is not None:
        parts[0] += (f", latency p50 {bill.latency_p50_s:.2f} s, p95 "
                     f"{bill.latency_p95_s:.2f} s, total {bill.latency_total_s or 0:.2f} s")
    if bill.usage_reported:
        system = f"system {bill.system_prompt_tokens}+{bill.system_completion_tokens} tokens"
        if bill.system_cost is not None:
            system += f", {fmt_dollars(bill.system_cost)}"
        elif bill.cost_missing:
            system += f", cost not reported for {bill.cost_missing}"
        parts.append(system)
    else:
        parts.append("system usage not reported (Answer.usage)")
    if bill.judge_requests or bill.judge_cached:
        judge = (f"judge {bill.judge_requests} request{'s' * (bill.judge_requests != 1)}, "
                 f"{bill.judge_prompt_tokens}+{bill.judge_completion_tokens} tokens, "
                 f"{bill.judge_cached} cached verdict{'s' * (bill.judge_cached != 1)} "
                 "(no request)")
        if bill.judge_cost is not None:
            judge += f", {fmt_dollars(bill.judge_cost)}"
        parts.append(judge)
    if bill.total_cost is not None:
        parts.append(f"total {fmt_dollars(bill.total_cost)}")
    return "bill: " + " · ".join(parts)


def run_bill_line(run: GoldsetRun) -> str | None:
    """The run's bill line, or None for rows that measured nothing (an old results file)."""
    bill = bill_of(run.records)
    return bill_line(bill) if bill.answers or bill.judge_requests or bill.judge_cached \
        else None


def billed_columns(run: GoldsetRun) -> tuple[bool, bool]:
    """Whether the question tables show a latency column, and a cost column."""
    return (any(r.latency_s is not None for r in run.records),
            any(cost_of(r) is not None for r in run.records))


def bill_cells(r: QuestionRecord, latency: bool, cost: bool) -> list[str]:
    """A question's latency and cost cells, for the columns `billed_columns` shows."""
    return ([fmt_num(r.latency_s)] * latency) + ([fmt_dollars(cost_of(r))] * cost)


def _question_rows(run: GoldsetRun) -> tuple[list[str], list[list[str]]]:
    metrics = run.metrics
    latency, cost = billed_columns(run)
    headers = ["question", "text", "kind", "tags", "status", "answer", "abstained",
               "citations ok", "expected evidence", "evidence found", "contexts",
               "nearest distance",
               *[f"{m} ({_cell(metric_source(run, m))})" for m in metrics],
               *(["latency (s)"] * latency), *(["cost"] * cost), "judge"]
    rows = []
    for r in run.records:
        repeats = f", {r.duplicate_citations} repeated" if r.duplicate_citations else ""
        expected = ("sealed" if r.expected is None else " ".join(r.expected)
                    or "none: must abstain")
        rows.append([
            _cell(run.named(r)),
            _cell(r.question or ""), _cell(r.kind), _cell(tags_text(r.tags)),
            r.status if r.status != "scored" else "", answer_cell(r),
            "" if r.abstained is None else ("yes" if r.abstained else "no")
            + ("" if r.abstention_correct else " ✗"),
            f"{r.citations_correct}/{r.citations}" + (" (uncited)" if r.uncited else "")
            + repeats, _cell(expected),
            f"{r.evidence_spans_found}/{r.evidence_spans}", str(r.contexts),
            fmt_num(r.nearest_distance), *[fmt_num(_value(r, m)) for m in metrics],
            *bill_cells(r, latency, cost),
            _cell("; ".join([f"{m} failed ({why})" for m, why in r.judge_failures.items()]
                            + ([f"vacuous: {', '.join(r.judge_vacuous)}"]
                               if r.judge_vacuous else [])
                            + ([f"cached: {', '.join(r.judge_cached)}"]
                               if r.judge_cached else []))),
        ])
    means = []
    for m in metrics:
        values = [v for r in run.records if (v := _value(r, m)) is not None]
        means.append(fmt_num(sum(values) / len(values)) if values else "—")
    total = fmt_dollars(bill_of(run.records).total_cost)  # latency's totals: the bill line
    rows.append(["**mean**", *[""] * 11, *means, *([""] * latency),
                 *([f"**total** {total}"] * cost), ""])
    return headers, rows


def answer_cell(record: QuestionRecord) -> str:
    """A question's answer as a table cell shows it: cut to a readable width and escaped
    (its text is redacted already, as every kept text is); `(abstained)`, or empty when the
    system gave none."""
    if record.abstained:
        return "(abstained)"
    return md_cut(record.answer_text) if record.answer_text else ""


ANCHOR_HEADERS = ["anchor", "kind", "outcome", "claim", "strict xfail", "why"]
ANCHOR_WORDS = {**OUTCOME_WORDS, "error": "ERROR"}


def anchor_rows(run: GoldsetRun) -> list[list[str]]:
    """Each anchor's outcome (and each anchor that has none, with why), for the reports."""
    rows = [[_cell(a.anchor_id), _cell(a.kind), ANCHOR_WORDS["error" if a.error else a.outcome],
             _cell(a.claim or ""), _cell(a.xfail or ""), _cell(a.error or a.why or "")]
            for a in run.anchors]
    ran = {a.anchor_id for a in run.anchors}
    rows += [[_cell(g.member), _cell(g.member_kind), g.kind.upper(), "", "", _cell(g.why)]
             for g in run.anchor_gaps if g.member not in ran]
    return rows


def _cell(text: str) -> str:
    """A user's or a run's text in the Markdown report (a cell, a list item, a heading):
    one line, shown as written (`text_cells.md_inline`)."""
    return md_inline(text)


def question_text(record: QuestionRecord) -> str:
    """One question's outcome as a person reads it: what CI systems show from a JUnit test
    case's `<system-out>` (few show `<properties>`)."""
    lines = [f"question: {record.question or record.question_id}"]
    if record.status != "scored":
        lines.append(f"{record.status}: {record.error or ''}")
    if record.abstained:
        lines.append("answer: (abstained)")
    elif record.abstained is not None:
        lines.append(f"answer: {record.answer_text or '(no text)'}")
    for c in record.cited:
        quote = f' "{c.quote}"' if c.quote else ""
        lines.append(f"  {'✓' if c.correct else '✗'} {c.label}{quote}")
    if record.uncited:
        lines.append("  (no citation)")
    if record.duplicate_citations:
        lines.append(f"  ({record.duplicate_citations} repeated citations counted once)")
    if record.expected is None:
        lines.append("expected: sealed")
    elif not record.expected:
        lines.append("expected: none, must abstain")
    else:
        lines += ["expected:", *[f"  {label}" for label in record.expected]]
    if record.abstained is not None:
        ranks = ", ".join("—" if k is None else str(k) for k in record.evidence_ranks)
        lines.append(f"abstention {'right' if record.abstention_correct else 'wrong'} · "
                     f"citations {record.citations_correct}/{record.citations} right · "
                     f"evidence {record.evidence_spans_found}/{record.evidence_spans} found"
                     + (f" (ranks {ranks})" if ranks else "")
                     + f" in {record.contexts} contexts")
    if record.answer_check is not None:
        lines.append(record.answer_check.line)
    judged = [f"{m} {v:.2f}" for m, v in record.metrics.items()
              if v is not None and m in METRICS and METRICS[m].judged]
    if judged:
        lines.append(f"judged by {record.judge}: {' · '.join(judged)}")
    lines += [f"judge failed: {m}: {why}" for m, why in record.judge_failures.items()]
    if record.latency_s is not None or record.judge_requests or record.judge_cached:
        lines.append(question_bill(record))
    return "\n".join(lines) + "\n"


def question_bill(record: QuestionRecord) -> str:
    """`latency 0.31 s · system 120+30 tokens, $0.0010 · judge 4 requests, 900+80 tokens`."""
    parts = [f"latency {fmt_num(record.latency_s)} s"]
    if record.usage is not None:
        parts.append(f"system {record.usage.prompt_tokens}+{record.usage.completion_tokens} "
                     f"tokens, {fmt_dollars(record.usage.cost)}")
    if record.judge_requests or record.judge_cached:
        tokens = record.judge_tokens
        parts.append(f"judge {record.judge_requests} requests"
                     + (f", {tokens.prompt}+{tokens.completion} tokens" if tokens else "")
                     + (f", {fmt_dollars(record.judge_cost)}"
                        if record.judge_cost is not None else "")
                     + (f", {len(record.judge_cached)} from the cache"
                        if record.judge_cached else ""))
    return " · ".join(parts)


def _value(record: QuestionRecord, metric: str) -> float | None:
    """A question's own figure of a metric: stored, or (evidence_recall@K) from its ranks."""
    value = METRICS[metric].value
    return None if value is None else value(metric, record)


def metric_source(run: GoldsetRun, metric: str) -> str:
    """Who computed a metric's figures: `mechanical`, `@ragate.metric` (the project's own
    function), or the judges that gave its verdicts."""
    if METRICS[metric].source == "custom":
        return COMPUTED_BY
    if not METRICS[metric].judged:
        return MECHANICAL
    return ", ".join(sorted({r.judge for r in run.records if r.judge})) or "judge"


def badge(status: RunStatus) -> str:
    return f"**{STATUS_WORDS[status]}**"


def status_line(runs: Sequence[GoldsetRun], status: RunStatus) -> str:
    """What follows the whole run's badge: that the run exits non-zero, or why it is
    neither PASS nor FAIL."""
    if status == "failed":
        return f" ({FAILED_NOTE})"
    why = run_why(runs, status)
    return f": {why}" if why else ""


def incomplete_notice(why: str) -> str:
    """What every output of a run that stopped early says (the reports, JUnit, the
    terminal): it is not the whole run."""
    return (f"INCOMPLETE: the run stopped early ({why}); what is here is partial, and "
            "items that never ran count as missing")


def markdown(runs: Sequence[GoldsetRun],
             deltas: Mapping[str, list[str]] | None = None, run_failed: bool = False,
             flips: Mapping[str, list[str]] | None = None, *,
             incomplete: str | None = None) -> str:
    """`deltas` and `flips` are the history's lines by route (or goldset name);
    `incomplete`, why the run stopped early."""
    overall = run_status(runs, failed=run_failed or incomplete is not None)
    parts = ["# ragate report", "", f"Run: {badge(overall)}{status_line(runs, overall)}", ""]
    if incomplete is not None:
        parts += [f"**{_cell(incomplete_notice(incomplete))}.**", ""]
    for run in runs:
        said = lines_of(run)
        reason, why = said.status_reason, status_why(run)
        parts += [f"## {_cell(run.label)} (eval_version {_cell(run.eval_version)}) "
                  f"{badge(run.status)}", ""]
        if reason:
            parts += [f"FAIL: {_cell(reason)}.", ""]
        elif why:
            parts += [f"{_cell(badge_of(run))}.", ""]
        parts += [f"{_cell(said.coverage)}.", ""]
        parts += [f"- {_cell(line)}" for line in [*said.parts, said.pool]]
        parts.append("")
        since = (deltas or {}).get(run.route or run.name) or (deltas or {}).get(run.name)
        if since:
            parts += ["### Since the last run", "", *[f"- {_cell(line)}" for line in since], ""]
        flipped = (flips or {}).get(run.route or run.name) or (flips or {}).get(run.name)
        if flipped:
            parts += ["### Flips across runs", "",
                      _cell(flipped[0]) + (":" if flipped[1:] else "."), "",
                      *[f"- {_cell(line)}" for line in flipped[1:]], *[""] * bool(flipped[1:])]
        billed = run_bill_line(run)
        judged = said.judge
        parts += [f"- {_cell(line)}" for line in [*judged, *([billed] if billed else [])]]
        if judged or billed:
            parts.append("")
        if not run.verdicts:
            parts += _figures_section(run)
        if run.verdicts:
            parts += ["### Floors", "", floors_table([run], "github"), ""]
            worst = worst_lines(run)
            if worst:
                parts += ["Why the failing floors failed:", "",
                          *[f"- {_cell(line)}" for line in worst], ""]
            parts += slices_section(run)
        if run.regressions:
            parts += ["### Against the baseline", "", regressions_table([run], "github"), "",
                      *[f"- {c.metric}: {_cell(c.message)}" for c in run.regressions], ""]
        parts += ["### By kind", ""]
        for metric in run.metrics:
            counts = fmt_counts(kind_counts(metric, run.records))
            if counts:
                parts.append(f"- {metric} ({_cell(metric_source(run, metric))}): "
                             f"{_cell(counts)}")
        uncited = [run.named(r) for r in run.records if r.uncited]
        parts.append(f"- answered without a citation: {len(uncited)}"
                     + (f" ({_cell(', '.join(uncited))})" if uncited else ""))
        parts += [f"- {_cell(line)}" for line in said.flaky]
        parts += [f"- {_cell(line)}" for line in said.answers]
        parts += [f"- {_cell(line)}" for line in said.moved]
        by_tag = tag_table(run.records, run.metrics, "github")
        if by_tag:
            parts += ["", "### By tag", "", "Each metric over the questions of each tag value "
                      "(information; a slice floor decides its own):", "", by_tag]
        headers, rows = _question_rows(run)
        parts += ["", "### Questions", "", tabulate(rows, headers=headers, tablefmt="github",
                                                     disable_numparse=True), ""]
        if run.anchors or run.anchor_gaps:
            parts += ["### Anchors", "", tabulate(anchor_rows(run), headers=ANCHOR_HEADERS,
                                                  tablefmt="github", disable_numparse=True), ""]
    parts += ["Figures marked *mechanical* are computed from unit ranges alone; judged figures "
              "name the judge that produced them.", ""]
    return "\n".join(parts)


def _figures_section(run: GoldsetRun) -> list[str]:
    """A goldset without floors: its figures and the `[floors]` block they suggest."""
    found = run_figures([run])
    if not found or not any(f.suggested is not None for f in found[0][1]):
        return []
    return ["### Figures (no floors yet)", "", figures_table(found, "github"), "",
            "Suggested floors, to paste into its ragate.toml:", "", "```toml",
            *floors_block(found[0][1], run_slices(run, found[0][1])), "```", ""]


def write_markdown(path: Path, runs: Sequence[GoldsetRun],
                   deltas: Mapping[str, list[str]] | None = None,
                   run_failed: bool = False,
                   flips: Mapping[str, list[str]] | None = None, *,
                   incomplete: str | None = None) -> None:
    write_atomic(path, markdown(runs, deltas, run_failed, flips, incomplete=incomplete))
