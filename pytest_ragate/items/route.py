"""The mark `@ragate.goldset` and `@ragate.floor` leave on a test function: light, so that
`import pytest_ragate` and every collected function's check stay cheap."""

from __future__ import annotations

from typing import Any


class RouteSpec:
    """Set on a test function by `@ragate.goldset` / `@ragate.floor`, in either order."""

    def __init__(self) -> None:
        self.path: str | None = None
        self.floors: list[dict[str, Any]] = []


def route_spec(obj: object) -> RouteSpec | None:
    spec = getattr(obj, "__ragate__", None)
    return spec if isinstance(spec, RouteSpec) else None
