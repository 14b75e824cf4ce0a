"""What a question asks pytest for once its answer is in (`provenance.session_fixture`): the
built-in `ragate_judge` and `ragate_answerer_model`, whose value is the session's, once a run;
anything else (the user's own definition, a fixture the item parametrizes, one that raised)
every time. Pure: the definition that applies is given as `fixture_origin` caches it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ragate.items.provenance import ORIGINS_KEY, Origin, session_fixture


class Request:
    """A request that counts what it is asked for and answers a new object each time."""

    def __init__(self, fails: bool = False) -> None:
        self.asked: list[str] = []
        self.fails = fails

    def getfixturevalue(self, name: str) -> object:
        self.asked.append(name)
        if self.fails:
            raise RuntimeError(f"{name} cannot be built")
        return object()


def items(origins: dict[str, Origin], params: dict[str, Any] | None = None) -> list[Any]:
    """Two items of one run under one parent, whose definitions are `origins`."""
    config = SimpleNamespace(stash=pytest.Stash())
    config.stash[ORIGINS_KEY] = {("goldset/ragate.toml", name): origin
                                 for name, origin in origins.items()}
    parent = SimpleNamespace(nodeid="goldset/ragate.toml")
    made = [SimpleNamespace(config=config, parent=parent) for _ in range(2)]
    if params is not None:
        for item in made:
            item.callspec = SimpleNamespace(params=params)
    return made


BUILTIN = {name: Origin(name, "built-in", True)
           for name in ("ragate_judge", "ragate_answerer_model")}
USERS = {name: Origin(name, "conftest.py:3", False) for name in BUILTIN}


def test_a_builtin_session_fixture_is_asked_of_pytest_once_a_run() -> None:
    request = Request()
    values = [session_fixture(item, request, name)  # type: ignore[arg-type]
              for item in items(BUILTIN) for name in BUILTIN]
    assert request.asked == list(BUILTIN)
    assert values[:2] == values[2:]


@pytest.mark.parametrize(("origins", "params"), [(USERS, None), (BUILTIN, {"ragate_judge": 1})],
                         ids=["the user's own", "parametrized by the item"])
def test_any_other_definition_is_asked_every_time(origins: dict[str, Origin],
                                                  params: dict[str, Any] | None) -> None:
    request = Request()
    for item in items(origins, params):
        session_fixture(item, request, "ragate_judge")  # type: ignore[arg-type]
    assert request.asked == ["ragate_judge"] * 2


def test_a_builtin_fixture_that_raised_is_asked_again_and_raises_again() -> None:
    request = Request(fails=True)
    for item in items(BUILTIN):
        with pytest.raises(RuntimeError, match="cannot be built"):
            session_fixture(item, request, "ragate_judge")  # type: ignore[arg-type]
    assert request.asked == ["ragate_judge"] * 2
