"""`ragate stamp`: which answer each label and fixture verdict judged, recorded from a saved
run (one job for both files: a person's labels, `--labels`, and a fixture judge's verdicts,
`--verdicts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pytest_ragate.commands.options import RESULTS_FILE
from pytest_ragate.commands.saved import saved_file


@click.command("stamp")
@click.argument("results", type=RESULTS_FILE)
@click.option("--labels", "labels_file", type=RESULTS_FILE, metavar="LABELS",
              help="a human labels file (a goldset's labels.jsonl) to stamp")
@click.option("--verdicts", "judge_file", type=RESULTS_FILE, metavar="JUDGE_FILE",
              help="a fixture judge file (fixture:PATH's file) to stamp")
def command(results: Path, labels_file: Path | None, judge_file: Path | None) -> None:
    """Record which answer of RESULTS (a `--ragate-results` file) each label (--labels) and
    each fixture verdict (--verdicts) judged: its `answer_sha256`. Give either or both.

    From then on a changed answer is a judge failure ("stale fixture verdict"), not the old
    score; and leaves its question labelled without a verdict ("stale label"), which fails
    judge_agreement and the ppi estimate, instead of holding a judge's word on the new answer
    to a person's word on the old one. Check the answers first: stamping says "these
    verdicts are right for these answers"; stamp labels right after labelling, from the run
    you labelled.

    An answer_match label is stamped once, with the raw answer it settles (the question's
    one answer, or its one unsure answer) and the expected answer it was judged against
    (`expected_sha256`), and never moved to another answer; one stamped before labels carried
    `expected_sha256` is bound to the expected answer its answer was held to in RESULTS.
    Lines not stamped keep their text.

    In a sealed goldset the digests are keyed (HMAC under a key derived from RAGATE_SEAL_KEY):
    RESULTS must come from a run made with the key, and a label stamped with plain digests
    before they were keyed is not bound again: label it anew. Exit 1 when a label's answer is
    not clear.

    \b
    Example:
      ragate stamp out/results.jsonl --labels goldsets/faq/labels.jsonl
      ragate stamp out/results.jsonl --verdicts judge.json
    """
    if labels_file is None and judge_file is None:
        raise click.UsageError("give what to stamp: --labels LABELS, --verdicts JUDGE_FILE, "
                               "or both")
    if judge_file is not None:
        _stamp_verdicts(judge_file, results)
    if labels_file is not None and not _stamp_labels(labels_file, results):
        raise SystemExit(1)


def _stamp_verdicts(judge_file: Path, results: Path) -> None:
    """`answer_sha256` set on the verdicts of every question of RESULTS with an answer."""
    import json

    from pytest_ragate.files import write_atomic
    from pytest_ragate.judges.fixture import read_fixture_file

    try:
        fixture, _ = read_fixture_file(judge_file)
    except Exception as error:  # a usage error from the reader: its message says what
        raise click.ClickException(str(error)) from None
    answers = _answers(results, "a fixture verdict")
    stamped = changed = 0
    for qid, verdicts in fixture.answers.items():
        if qid in answers:
            digest = answers[qid]
            changed += verdicts.answer_sha256 not in (None, digest)
            verdicts.answer_sha256 = digest
            stamped += 1
    data = fixture.model_dump(mode="json", exclude_none=True)
    write_atomic(judge_file, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    unmatched = sorted(set(fixture.answers) - set(answers))
    click.echo(f"stamped {stamped} verdicts in {judge_file}"
               + (f" ({changed} had been stamped for another answer)" if changed else ""))
    if unmatched:
        click.echo(f"not stamped (no answered row in {results}): {', '.join(unmatched)}")


def _answers(results: Path, what: str) -> dict[str, str]:
    """Each answered question's answer sha256 in a results file, of the raw answer (a masked
    answer's row keeps it), read whole or not: what was answered is stamped, the rest is
    named as not stamped; refused when a question's repeats answered differently, since
    `what` is stamped for one answer."""
    from pytest_ragate.answer import is_keyed
    from pytest_ragate.scoring.labelled import raw_sha256

    answers: dict[str, str] = {}
    for _, r in saved_file(results, whole=False).rows:
        if r.status != "scored" or r.abstained or r.answer_text is None:
            continue
        if r.expected is None and r.answer_sha256 and not is_keyed(r.answer_sha256):
            raise click.ClickException(
                f"{results}: question {r.question_id} of a sealed goldset keeps a plain digest "
                "of its masked answer (a run made before sealed goldsets' digests were keyed): "
                f"stamp from a run made with RAGATE_SEAL_KEY set")
        if answers.setdefault(r.question_id, raw_sha256(r)) != raw_sha256(r):
            raise click.ClickException(
                f"{results}: question {r.question_id} has different answers in its "
                f"repeats; {what} is stamped for one answer: stamp from a run with repeat = 1")
    return answers


def _stamp_labels(labels_file: Path, results: Path) -> bool:
    """`answer_sha256` (and an answer_match label's `expected_sha256`) set on every label
    whose question has an answer in RESULTS; False when a label's answer is not clear."""
    import json

    from pytest_ragate.answer import is_keyed
    from pytest_ragate.files import read_jsonl, read_lines, write_atomic
    from pytest_ragate.goldsets.labels import LabelRow
    from pytest_ragate.scoring.answer_match import ANSWER_MATCH

    labelled, problems = read_jsonl(labels_file, LabelRow, id_field="question_id")
    if problems:
        raise click.ClickException("\n".join(map(str, problems)))
    judged = any(row.metric != ANSWER_MATCH for _, row in labelled)
    answers = _answers(results, "a label") if judged else {}
    rows = [r for _, r in saved_file(results, whole=False).rows]
    lines = read_lines(labels_file)
    stamped = changed = 0
    unmatched: list[str] = []
    refused: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        row = json.loads(line)
        qid, where = row["question_id"], f"{row['question_id']} ({row['metric']}, line {i + 1})"
        if row["metric"] == ANSWER_MATCH:
            stamp, why = _answer_match_stamp(row, rows)
            if stamp is None:
                (refused if why else unmatched).append(f"{where}{': ' + why if why else ''}")
                continue
        elif qid in answers:
            stamp = {"answer_sha256": answers[qid]}
        else:
            unmatched.append(where)
            continue
        if all(row.get(k) == v for k, v in stamp.items()):
            continue
        old = row.get("answer_sha256")
        changed += old not in (None, stamp["answer_sha256"]) and is_keyed(old) == is_keyed(
            stamp["answer_sha256"])  # a plain stamp bound again with keyed digests: the same
        row.update(stamp)
        lines[i] = json.dumps(row, ensure_ascii=False)
        stamped += 1
    if stamped:
        write_atomic(labels_file, "\n".join(lines) + "\n")
    click.echo(f"stamped {stamped} labels in {labels_file}"
               + (f" ({changed} had been stamped for another answer)" if changed else ""))
    if unmatched:
        click.echo(f"not stamped (no answered row in {results}): {', '.join(unmatched)}")
    if refused:
        click.echo("not stamped, which answer is not clear:\n" + "\n".join(refused))
    return not refused


def _answer_match_stamp(row: dict[str, Any], rows: list[Any],
                        ) -> tuple[dict[str, str] | None, str]:
    """The digests to stamp on an answer_match label (`answer_sha256`, `expected_sha256`), or
    None and why not (empty: no answered row). A label already stamped with its answer keeps
    it: only the expected answer that answer was held to in the run is added (a label that
    predates `expected_sha256`); a label bound to both is left as it is. A sealed question's
    stamps are keyed: plain ones, from RESULTS or on the label, are refused."""
    from pytest_ragate.answer import is_keyed
    from pytest_ragate.scoring.answer_match import answer_to_label, label_digests

    qid, answer = row["question_id"], row.get("answer_sha256")
    sealed = any(r.question_id == qid and r.expected is None for r in rows)  # no spans shown
    if answer is None:
        record, why = answer_to_label(qid, rows)
        if record is None:
            return None, why
        raw, expected = label_digests(record)
        stamp = {"answer_sha256": raw} | ({"expected_sha256": expected} if expected else {})
        if sealed and not all(map(is_keyed, stamp.values())):
            return None, UNKEYED_RESULTS
        return stamp, ""
    if sealed and not (is_keyed(answer) and is_keyed(row.get("expected_sha256") or answer)):
        return None, PLAIN_LABEL
    if "expected_sha256" in row:
        return {}, ""  # bound to what it judged, and to nothing else
    held = {label_digests(r)[1] for r in rows if r.question_id == qid
            and r.status == "scored" and r.answer_check is not None
            and label_digests(r)[0] == answer}
    held.discard(None)
    if len(held) != 1:
        return None, ""
    return {"answer_sha256": answer, "expected_sha256": held.pop()}, ""


UNKEYED_RESULTS = ("RESULTS holds plain digests for this sealed question (a run made without "
                   "RAGATE_SEAL_KEY, or before sealed goldsets' digests were keyed): stamp from "
                   "a run made with RAGATE_SEAL_KEY set")
PLAIN_LABEL = ("stamped with plain digests, before a sealed goldset's were keyed: label it "
               "again (without answer_sha256 and expected_sha256) and stamp it from a run made "
               "with RAGATE_SEAL_KEY set")
