"""The shape of the code: no import cycle, short functions, layers that depend one way.

The import graph is built from the source (nothing is imported): module-level imports,
function-level (lazy) imports, and ``"module:Class"`` strings resolved with ``importlib``. Imports
under ``if TYPE_CHECKING:`` are left out: they exist for annotations and never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "optcmp"
MAX_FUNCTION_LINES = 100


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path) -> set[str]:
    """optcmp modules that ``name`` imports anywhere in its source (see the module docstring)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for n in node.orelse:
                visit(n)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                mod = alias.name
                while mod and mod not in MODULES:
                    mod = mod.rpartition(".")[0]
                if mod:
                    out.add(mod)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]) + (f".{base}" if base else "")
            subs = [f"{base}.{a.name}" for a in node.names]
            found = [s for s in subs if s in MODULES]
            out.update(found)
            if len(found) < len(subs) and base in MODULES:
                out.add(base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            mod = node.value.partition(":")[0]
            if mod in MODULES and (":" in node.value or mod.startswith("optcmp.")):
                out.add(mod)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    out.discard(name)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for w in graph[todo.pop()]:
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_the_graph_sees_lazy_imports():
    # a function-level import and a "module:Class" string are edges (else the test is blind)
    assert "optcmp.sweep" in GRAPH["optcmp.tuning"]  # imported inside tune()
    assert "optcmp.adapters.torch_" in GRAPH["optcmp.adapters"]  # "module:Class" table
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_import_cycle():
    assert _cycles(GRAPH) == []


@pytest.mark.parametrize("layer, forbidden", [
    # backends compute: they know no optimizer, adapter, run or result
    ("optcmp.backends", ("optcmp.optimizers", "optcmp.adapters", "optcmp.runner",
                         "optcmp.results", "optcmp.sweep")),
    # optimizers are declarations: no framework adapter, no runner
    ("optcmp.optimizers", ("optcmp.adapters", "optcmp.runner", "optcmp.sweep",
                           "optcmp.results")),
    # the runner never depends on the sweep or the executors
    ("optcmp.runner", ("optcmp.sweep", "optcmp.executors", "optcmp.store", "optcmp.tuning")),
    ("optcmp.executors", ("optcmp.sweep", "optcmp.tuning")),
    # problems depend on nothing that runs them
    ("optcmp.problems", ("optcmp.backends", "optcmp.optimizers", "optcmp.adapters",
                         "optcmp.runner")),
])
def test_layers_depend_one_way(layer, forbidden):
    members = [m for m in GRAPH if m == layer or m.startswith(layer + ".")]
    for m in members:
        bad = sorted(d for d in _reaches(GRAPH, m)
                     if any(d == f or d.startswith(f + ".") for f in forbidden))
        assert not bad, f"{m} reaches {bad}"


def test_results_is_a_leaf_at_import_time():
    """``optcmp.results`` imports only leaf helpers at module level; analyses are lazy."""
    tree = ast.parse(MODULES["optcmp.results"].read_text())
    top = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optcmp"):
            top.add(node.module)
        elif isinstance(node, ast.Import):
            top.update(a.name for a in node.names if a.name.startswith("optcmp"))
    assert top <= {"optcmp._io", "optcmp._storefile", "optcmp.environment", "optcmp._version"}
    for analysis in ("optcmp.stats", "optcmp.plot", "optcmp.report", "optcmp.export",
                     "optcmp.tables"):
        assert "optcmp.results" not in _reaches(GRAPH, analysis), analysis


def _long_functions() -> list[str]:
    out = []
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > MAX_FUNCTION_LINES:
                    out.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {node.name} "
                               f"({n} lines)")
    return out


def test_no_function_longer_than_100_lines():
    """Docstring and signature included; split long functions into helpers with one job each."""
    assert _long_functions() == []


def test_each_optimizer_module_declares_one_optimizer_and_names_no_backend():
    """An optimizer is declared once: its module registers it and lists no backend names."""
    from optcmp.optimizers import FACTORIES

    # base: the declarations; schedule: the learning-rate schedules; _*: shared helpers
    files = sorted(p for p in (ROOT / "optimizers").glob("*.py")
                   if p.stem not in ("__init__", "base", "schedule") and not p.stem.startswith("_"))
    assert sorted(p.stem for p in files) == sorted(FACTORIES)
    for p in files:
        text = p.read_text()
        assert text.count("register_optimizer(OptimizerInfo(") == 1, p.name
        for backend in ('"numpy"', '"torch"', '"tensorflow"'):
            assert backend not in text, f"{p.name} names the backend {backend}"
