"""The adversary of per-slice floors: every way found for a run with slice floors to go green
(exit 0, or a slice case passed) while a slice is bad or undecided, or to rewrite the wrong
floor, each tried through the user's surface (pytester runs, `ragate decide`, ragate.toml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_command, run_pytester
from tests.test_fail_closed import planned
from tests.test_sharding import reseal
from tests.test_slice_floors import tagged, wrong_on

GERMAN_WRONG = range(50, 62)  # 12 of the 30 German questions: German 0.60, the whole 0.88


def decide(root: Path, results: str, *args: str) -> tuple[int, str]:
    ran = run_command(root, "decide", results, "--", "gs", "-p", "no:cacheprovider",
                      "--junitxml=d.xml", *args)
    return ran.returncode, ran.stdout + ran.stderr


# --- a results file whose rows say other tags than the goldset ------------------------------


def retag(path: Path, ids: range, tags: dict[str, str] | None) -> None:
    """These questions' rows given other tags (None: none), the file sealed again so that its
    trailer vouches for it: what decide checks behind the trailer is reached."""
    lines = path.read_text().splitlines(keepends=True)
    for n, line in enumerate(lines):
        row = json.loads(line)
        if row.get("question_id") in {f"q{i:02d}" for i in ids}:
            row.pop("tags", None)
            if tags is not None:
                row["tags"] = tags
            lines[n] = json.dumps(row) + "\n"
    path.write_text("".join(lines))
    reseal(path)


@pytest.mark.parametrize("tags", [None, {"lang": "en"}], ids=["dropped", "moved"])
def test_decide_refuses_rows_whose_tags_are_not_the_goldsets(pytester: pytest.Pytester,
                                                             tags: dict[str, str] | None,
                                                             ) -> None:
    """The German questions that were wrong, their rows' tags dropped (or moved to English):
    decided on the rows' tags, German held over the 18 that were right and the run passed.
    Decide takes a question's slices from the goldset, as it takes its kind: refused."""
    tagged(pytester.path / "gs")
    pytester.makeconftest(planned(wrong_on(GERMAN_WRONG)))
    assert run_pytester(pytester, "0", "gs", "--ragate-results=r.jsonl").ret == 1
    retag(pytester.path / "r.jsonl", GERMAN_WRONG, tags)
    code, out = decide(pytester.path, "r.jsonl")
    assert code == 1, out
    assert "refused to decide" in out, out
    said = "{}" if tags is None else "{'lang': 'en'}"
    assert f"[q50] tags: {said} in this row, but the goldset says {{'lang': 'de'}}" in out, out
