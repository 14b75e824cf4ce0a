"""Why an item failed is said once (`items/reasons.failure_line`): a question's row, an
anchor's outcome and the controller's account of each failed report (the `why` a results
file keeps, and `ragate decide` replays) give the same line, with and without xdist, and it
is the line pytest's own short summary shows.

Before, a row took the first line of the exception and the controller the last line of the
report's text: `ValueError: the service said no` in one, `conftest.py:12: ValueError` in
the other.
"""

from __future__ import annotations

import pytest

from pytest_ragate.outputs.results import read_results
from tests.conftest import write_goldset

WORKERS = pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])

# q1 raises, q2 answers nothing, q3 trips an assert (rewritten: conftest.py is), q4 cannot
# even be set up; the anchor's retriever is down.
FAILING = '''
import pytest
from pytest_ragate import Answer


@pytest.fixture
def ragate_system(request):
    if request.node.name == "q4":
        raise LookupError("no index for q4")

    def answer(text):
        qid = text.split()[-1].rstrip("?")
        if qid == "q1":
            raise ValueError("the service said no\\nand said it at length")
        if qid == "q2":
            return Answer()
        n = 2
        assert n == 3
    return answer


@pytest.fixture
def ragate_retriever():
    def retrieve(claim):
        raise RuntimeError("the index is down")
    return retrieve
'''
ANCHORS = [{"anchor_id": "a1", "kind": "retrieval_miss", "claim": "the budget",
            "evidence": {"doc_id": "m1", "first_unit": 2, "last_unit": 3}}]
WHY = {
    "q1": "ValueError: the service said no",
    "q2": "Failed: q2: the system returned an empty answer: no text, contexts or citations, "
          "and not abstained (to decline, return Answer.abstain())",
    "q3": "assert 2 == 3",
    "q4": "LookupError: no index for q4",
    "anchor[a1]": "RuntimeError: the index is down",
}


@WORKERS
def test_a_failure_says_the_same_line_in_its_row_its_outcome_and_the_controllers_account(
        pytester: pytest.Pytester, workers: str) -> None:
    write_goldset(pytester.path / "gs", anchors=ANCHORS)
    pytester.makeconftest(FAILING)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-n", workers, "-rA",
                                           "-vv", "gs", "--ragate-results=r.jsonl")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    found = read_results(pytester.path / "r.jsonl")
    rows = {row.question_id: row.error for _, row in found.rows}
    anchors = {f"anchor[{a.outcome.anchor_id}]": a.outcome.error for a in found.anchors}
    items = {item.name: item.why for item in found.items}
    assert {**rows, **anchors} == WHY  # where each item ran
    assert items == WHY  # on the controller, from the reports alone
    for name, why in WHY.items():  # and what pytest's short summary says
        word = "ERROR" if name == "q4" else "FAILED"
        assert f"{word} gs/ragate.toml::{name} - {why}" in result.stdout.lines
