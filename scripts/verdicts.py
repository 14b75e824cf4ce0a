"""Where pytest-ragate makes a verdict: every function that returns one (a floor's `Verdict`,
a check's `Regression`, a run's `Decision`, a judge change's `Comparison`, an `Outcome`) and
every place one is built, by module; exit 1 when any is outside `pytest_ragate/decision/`
(glue that only returns what a decision/ entry point returned makes none of its own).

    python scripts/verdicts.py

Read from the code's syntax tree (nothing is imported or run); tests/test_architecture.py
holds the same rules, and shows that each catches a planted violation.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "pytest_ragate"
DECISION = "pytest_ragate.decision"
# what a verdict is: the types that carry an outcome decided by a rule
VERDICT_TYPES = frozenset({"Verdict", "Regression", "FloorDecision", "Decision", "FloorChange",
                           "Comparison", "Outcome", "RegressionOutcome"})
# the only verdict functions modules outside decision/ may call: the entry points
ENTRY_POINTS = frozenset({"decide_run", "run_regressions", "compare_judges"})


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def names_in(node: ast.AST | None) -> set[str]:
    """The names an annotation mentions (`Verdict | None`, `list[Regression]`, `"Decision"`)."""
    if node is None:
        return set()
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
    for const in (n for n in ast.walk(node) if isinstance(n, ast.Constant)):
        if isinstance(const.value, str):
            try:
                found |= names_in(ast.parse(const.value, mode="eval"))
            except SyntaxError:
                continue
    return found


def verdict_functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions (and methods) whose return annotation names a verdict type."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and names_in(node.returns) & VERDICT_TYPES):
            yield node


def delegates(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Glue that hands decision/'s verdict on: every `return` returns a call to an entry
    point (`return compare_judges(...)`), so it makes no verdict of its own."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    return bool(returns) and all(isinstance(r.value, ast.Call)
                                 and _called(r.value) in ENTRY_POINTS for r in returns)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else (
        func.attr if isinstance(func, ast.Attribute) else "")


def verdicts_built(tree: ast.AST) -> Iterator[ast.Call]:
    """Calls that build a verdict (`Verdict(...)`) or rewrite one's outcome
    (`replace(verdict, outcome=...)`)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _called(node)
        if name in VERDICT_TYPES or (name in ("replace", "model_copy")
                                     and any(k.arg == "outcome" for k in node.keywords)):
            yield node


def findings(source: str, module: str, decision_verdicts: frozenset[str] = frozenset(),
             ) -> list[str]:
    """What `module` does with verdicts that only decision/ may: defines a verdict function,
    builds a verdict, or calls a verdict function of decision/ other than its entry points."""
    if module == DECISION or module.startswith(DECISION + "."):
        return []
    tree = ast.parse(source)
    found = [f"{module}:{f.lineno} defines verdict function {f.name}"
             for f in verdict_functions(tree) if not delegates(f)]
    found += [f"{module}:{c.lineno} builds a verdict: {_called(c)}(...)"
              for c in verdicts_built(tree)]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(DECISION):
            found += [f"{module}:{node.lineno} imports verdict function {a.name} of "
                      f"{node.module} (call an entry point: {', '.join(sorted(ENTRY_POINTS))})"
                      for a in node.names
                      if a.name in decision_verdicts and a.name not in ENTRY_POINTS]
    return found


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def decision_verdict_functions(paths: dict[str, Path]) -> dict[str, list[str]]:
    """decision/'s verdict functions, by module."""
    return {m: sorted(f.name for f in verdict_functions(ast.parse(p.read_text("utf-8"))))
            for m, p in paths.items() if m.startswith(DECISION + ".")}


def main() -> int:
    paths = modules()
    inside = decision_verdict_functions(paths)
    names = frozenset(n for found in inside.values() for n in found)
    for module, found in inside.items():
        if found:
            print(f"{module}: {', '.join(found)}")
    outside = [line for m, p in paths.items()
               for line in findings(p.read_text("utf-8"), m, names)]
    for line in outside:
        print(f"OUTSIDE decision/: {line}")
    print(f"{sum(map(len, inside.values()))} verdict functions, all in decision/" if not outside
          else f"{len(outside)} verdicts made outside decision/")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
