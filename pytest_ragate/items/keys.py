"""The names the plugin's hooks and processes share: stash keys, and the report attributes
and `workeroutput` key the wire's models ride under (`population.py`).

Light on purpose: every pytest run imports this through the plugin, goldsets or not, so it
holds names only; the types they carry are spelled as strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    pass

# on items: what each goldset item is
GROUP_KEY = pytest.StashKey[str]()  # a conversation turn's xdist group
GROUPED = "@ragate:"  # what starts the suffix xdist's `loadgroup` gives a turn's node id


def ungrouped(nodeid: str) -> str:
    """A node id from xdist's scheduler (a crashed item's) without a turn's group suffix."""
    return nodeid.partition(GROUPED)[0]


ROUTE_KEY = pytest.StashKey[str]()  # the node id of the route that collected a goldset item
GOLDSET_KEY = pytest.StashKey["Goldset"]()
CASE_KEY = pytest.StashKey["Case"]()  # a question item's question
ANCHOR_KEY = pytest.StashKey["AnchorEntry"]()  # an anchor item's anchor
FLOOR_KEY = pytest.StashKey["Floor"]()  # a floor item's floor
# a question item's verdict metrics: what its route's floors and labels need of the judge
NEEDED_KEY = pytest.StashKey[tuple[str, ...]]()
AGAIN_KEY = pytest.StashKey[bool]()  # a question asked again to check a stop (`q07[again]`)

# on the config
GOLDSETS_KEY = pytest.StashKey["dict[Path, Goldset]"]()  # the goldsets this process loaded
RUN_KEY = pytest.StashKey["QuestionRun"]()  # this process's judge runner and held reports
NOT_NEEDED_KEY = pytest.StashKey[bool]()  # a sequential question its goldset no longer needed
LAST_RUN_KEY = pytest.StashKey[pytest.Item]()  # the last item this process ran, floors aside

# on test reports, and in xdist's `workeroutput`: what crosses to the controller
# a question's report: its QuestionRecord as JSON, from an xdist worker as JSON text (`row_of`)
RECORD_ATTR = "ragate_record"
ANCHOR_ATTR = "ragate_anchor"  # an anchor's report: its AnchorOutcome, as JSON
NO_SYSTEM_ATTR = "ragate_no_system"  # a goldset item's setup report, when no system of the
# user's was in scope (`provenance.MissingSystem`): the file its goldset was collected from
MALFORMED_ATTR = "ragate_malformed"  # a question's call report, when the system returned no
# ragate.Answer (`malformed.MalformedAnswer`): what it returned (`str`, `a dict with wrong fields`)
ITEM_FAILED_ATTR = "ragate_item_failed"  # a question's or an anchor's failed report: True, so
# the controller can say a cause many of them share once (`wording/causes.py`)
PROBLEMS_ATTR = "ragate_problems"  # a goldset file's failed collect report: its problems,
# each as `Problem.to_json` (file, line, field), for the CI's annotations (outputs/findings.py)
WORKEROUTPUT_KEY = "ragate_collected"  # a worker's `workeroutput`: its population.Collected


def is_goldset_item(item: pytest.Item) -> bool:
    return ROUTE_KEY in item.stash


def row_of(report: pytest.TestReport) -> dict[str, Any] | None:
    """The row a question's report brought (`RECORD_ATTR`), or None. An xdist worker sends
    it as its JSON text: one string crosses xdist's wire in one write, where a dict of some
    fifty fields is serialized field by field by execnet, in Python, on both sides. Decoded
    once, here, for every reader; in the process that asked it, the row itself."""
    row = getattr(report, RECORD_ATTR, None)
    if isinstance(row, str):
        import json

        row = json.loads(row)
        setattr(report, RECORD_ATTR, row)
    return row
