"""A conversation turn is named the same with and without xdist: under `-n 2` its node id
carries xdist's `loadgroup` suffix (`@ragate:<goldset>:<conversation>`) only while the
worker's collection goes to the scheduler, never in a report, JUnit test case, terminal line
or results row (`conversations.grouped`, `pytest_internals.out_of_group`). The same runs
check each turn's JUnit text (its conversation so far), that the HTML report, JUnit and the
results file mask a key every answer carries, and that each turn was given the earlier turns'
answers (tests/test_conversations_runs.py's `each_turn_was_given_the_earlier_turns_answers`)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_ragate.items.keys import ungrouped
from pytest_ragate.items.pytest_internals import in_group, out_of_group
from tests.conftest import run_pytester
from tests.test_conversations_runs import (
    SYSTEM,
    conversation_goldset,
    each_turn_was_given_the_earlier_turns_answers,
)


def test_ungrouped_drops_only_a_turns_group_suffix() -> None:
    assert ungrouped("gs/ragate.toml::c1-2@ragate:gs:c1") == "gs/ragate.toml::c1-2"
    assert ungrouped("gs/ragate.toml::q1") == "gs/ragate.toml::q1"
    assert ungrouped("t.py::test_x[a@b]@other") == "t.py::test_x[a@b]@other"


def test_a_grouped_item_gets_its_node_id_back(pytester: pytest.Pytester) -> None:
    item = pytester.getitem("def test_func(): pass\n")
    plain = item.nodeid
    in_group(item, "ragate:gs:c1")
    assert item.nodeid == f"{plain}@ragate:gs:c1"
    out_of_group(item, plain)
    assert item.nodeid == plain


Names = tuple[list[str], list[str], list[str], dict[str, str]]


SECRET = "sk-ragateTurnSecret0123456789"
# every answer carries a key, which the system is given back in its history unmasked (so
# turn 2 still cites right) and no output may show
LEAKY = SYSTEM.replace('f"answer to {conversation}-{t}"',
                       f'f"answer to {{conversation}}-{{t}} {SECRET}"').replace(
                       'f"answer to {qid}"', f'f"answer to {{qid}} {SECRET}"')


def _names(pytester: pytest.Pytester, workers: str) -> Names:
    result = run_pytester(pytester, workers, "gs", f"--junitxml=j{workers}.xml",
                          f"--ragate-results=r{workers}.jsonl",
                          f"--ragate-html=h{workers}.html")
    for output in ("j", "r", "h"):
        found = next(pytester.path.glob(f"{output}{workers}.*")).read_text(encoding="utf-8")
        assert SECRET not in found and "answer to c3-2" in found
    html = (pytester.path / f"h{workers}.html").read_text(encoding="utf-8")
    assert "conversation broken: 3 turns, went wrong at turn 2" in html
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # broken-2 errs, broken-3 is not asked
    each_turn_was_given_the_earlier_turns_answers(result, pytester.path / f"r{workers}.jsonl",
                                                  workers)
    cases = list(ET.parse(pytester.path / f"j{workers}.xml").getroot().iter("testcase"))
    junit = sorted(f"{c.get('classname')}::{c.get('name')}" for c in cases)
    said = {str(c.get("name")): c.findtext("system-out") or "" for c in cases}
    rows = [json.loads(line) for line in
            (pytester.path / f"r{workers}.jsonl").read_text().splitlines()]
    nodeids = sorted(str(r["nodeid"]) for r in rows if "nodeid" in r)
    lines = sorted(m.group(1) for m in re.finditer(r"^(?:PASSED|FAILED|ERROR) (\S+)",
                                                   result.stdout.str(), re.M))
    return junit, nodeids, lines, said


def test_junit_results_and_terminal_name_turns_alike_under_n0_and_n2_and_mask_answers(
        pytester: pytest.Pytester) -> None:
    conversation_goldset(pytester.path / "gs")
    assert LEAKY.count(SECRET) == 2
    pytester.makeconftest(LEAKY)
    alone, xdist = _names(pytester, "0"), _names(pytester, "2")
    assert alone[0] == xdist[0] and any("c3-2" in name for name in alone[0])
    assert not any("@" in name for names in xdist for name in names)
    assert alone[1] == xdist[1]
    assert alone[2] == xdist[2] and any("c3-2" in line for line in alone[2])
    for said in (alone[3], xdist[3]):  # a turn's JUnit text: its conversation so far
        assert said["c3-2"].startswith(
            "conversation c3: 2 turns, right at every turn\n"
            "turn 1 ✓ And then c3-1? (c3-1)\n  answer: answer to c3-1 ***\n"
            "turn 2 ✓ And then c3-2? (c3-2)\n  answer: answer to c3-2 ***\n\nquestion: ")
        assert said["broken-2"].startswith(
            "conversation broken: 2 turns, went wrong at turn 2\nturn 1 ✓")
        assert "turn 2 ✗ And then broken-2? (broken-2)\n  answer: (no answer: " \
               "ZeroDivisionError" in said["broken-2"]
