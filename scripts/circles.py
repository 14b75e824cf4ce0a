"""List the import circles between pytest-ragate's rooms (its subpackages, the shared leaves
and each top-level module): every import counts, type-only ones (`if TYPE_CHECKING:`) and
imports inside functions included. `python scripts/circles.py` from the repository's root
prints each room-level circle and each pair of modules in two rooms that import each other,
and exits 1 when there is one; tests/test_architecture.py holds the count at zero."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_ragate"
LEAVES = {"answer", "files", "problems", "redaction", "settings"}


def module_name(path: Path) -> str:
    """`pytest_ragate.decision.floors` for pytest_ragate/decision/floors.py."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(module: str) -> str:
    """The room a module is in: its subpackage, `leaves`, or a top-level module its own room
    (`top.cli`: the entry points are not one room, and none imports another's)."""
    parts = module.split(".")
    if len(parts) > 1 and (PACKAGE / parts[1] / "__init__.py").is_file():
        return parts[1]
    if len(parts) == 2 and parts[1] in LEAVES:
        return "leaves"
    return "top." + (parts[1] if len(parts) > 1 else "__init__")


def every_import(source: str) -> set[str]:
    """Every pytest_ragate module a source imports: at module level, in functions and under
    `if TYPE_CHECKING:` alike (a type-only import is a dependency of the reader too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("pytest_ragate")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("pytest_ragate"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                is_module = (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py").is_file() \
                    or (PACKAGE.parent / sub.replace(".", "/") / "__init__.py").is_file()
                found.add(sub if is_module else node.module)
    return found


def module_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of the package and the package's modules it imports (itself aside)."""
    graph = {module_name(p): every_import(p.read_text(encoding="utf-8"))
             for p in sorted(package.rglob("*.py"))}
    return {m: {d for d in deps if d != m and d != "pytest_ragate"} for m, deps in graph.items()}


def room_graph(modules: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    """Room → the other rooms its modules import."""
    rooms: dict[str, set[str]] = {}
    for module, deps in modules.items():
        mine = room_of(module)
        rooms.setdefault(mine, set()).update(r for d in deps if (r := room_of(d)) != mine)
    return rooms


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every simple circle of a small graph, each once, starting at its least node."""
    found: list[list[str]] = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                found.append([*path, start])
            elif nxt > start and nxt not in path:
                walk(start, nxt, [*path, nxt])

    for start in sorted(graph):
        walk(start, start, [start])
    return found


def two_way_pairs(modules: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    """Pairs of modules in two rooms that import each other (the circles a reader meets)."""
    return sorted((a, b) for a, deps in modules.items() for b in deps
                  if a < b and room_of(a) != room_of(b) and a in modules.get(b, ()))


def crossings(modules: Mapping[str, Iterable[str]], source: str, target: str,
              ) -> list[tuple[str, str]]:
    """Each import of a `target` room's module by a `source` room's module."""
    return sorted((m, d) for m, deps in modules.items() if room_of(m) == source
                  for d in deps if room_of(d) == target)


def main() -> int:
    modules = module_graph()
    rooms = room_circles = circles(room_graph(modules))
    pairs = two_way_pairs(modules)
    for circle in rooms:
        print("room circle: " + " -> ".join(circle))
    for a, b in pairs:
        print(f"modules importing each other: {a} <-> {b}")
    across = crossings(modules, "decision", "wording")
    for a, b in across:
        print(f"decision imports wording: {a} -> {b}")
    print(f"{len(room_circles)} room circles, {len(pairs)} two-way module pairs, "
          f"{len(across)} decision -> wording imports")
    return 1 if room_circles or pairs or across else 0


if __name__ == "__main__":
    sys.exit(main())
