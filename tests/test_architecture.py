"""The shape of the code: no import cycle, short functions, layers that depend one way.

The import graph is built from the source (nothing is imported): module-level imports,
function-level (lazy) imports, and ``"module:Class"`` strings resolved with ``importlib``.
:data:`GRAPH` leaves out imports under ``if TYPE_CHECKING:`` (they never run);
:data:`GRAPH_TYPES` counts them too, since a dependency for annotations is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "optcmp"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


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


def _imports(name: str, path: Path, types: bool = False) -> set[str]:
    """optcmp modules that ``name`` imports anywhere in its source (see the module docstring);
    with ``types``, imports under ``if TYPE_CHECKING:`` too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not types:
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
GRAPH_TYPES = {name: _imports(name, path, types=True) for name, path in MODULES.items()}


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
    assert "optcmp.frameworks.torch.native" in GRAPH["optcmp.frameworks.adapters"]  # "module:Class" table
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_import_cycle():
    assert _cycles(GRAPH) == []


#: Packages of analyses (functions of results) and of the results themselves.
ANALYSES = ("optcmp.analysis", "optcmp.analysis.tables", "optcmp.analysis.stats", "optcmp.analysis.plots", "optcmp.analysis.report",
            "optcmp.analysis.export")
RESULTS = "optcmp.results"

#: The layers from the bottom up; each may import the ones below it, never those above.
RUN = ("optcmp.engine", "optcmp.engine", "optcmp.engine.monitor")
SWEEP = ("optcmp.sweep", "optcmp.executors", "optcmp.store", "optcmp.tuning",
         "optcmp.tune_result")
FRONTS = ("optcmp.cli", "optcmp.comparison")


@pytest.mark.parametrize("layer, forbidden", [
    # ops are a leaf: the array functions problems and update rules are written against
    ("optcmp.frameworks.ops", ("optcmp.problems", "optcmp.frameworks", "optcmp.optimizers",
                    "optcmp.frameworks.adapters", "optcmp.stopping", *RUN, RESULTS, *ANALYSES, *SWEEP)),
    # problems depend on nothing that runs them
    ("optcmp.problems", ("optcmp.frameworks", "optcmp.optimizers", "optcmp.frameworks.adapters", *RUN,
                         RESULTS, *ANALYSES, *SWEEP, *FRONTS)),
    # backends compute: they know no optimizer, adapter, run or result
    ("optcmp.frameworks", ("optcmp.optimizers", "optcmp.frameworks.adapters", *RUN, RESULTS, *ANALYSES,
                         *SWEEP, *FRONTS)),
    # optimizers are declarations: no framework adapter, no run
    ("optcmp.optimizers", ("optcmp.frameworks.adapters", *RUN, RESULTS, *ANALYSES, *SWEEP, *FRONTS)),
    ("optcmp.frameworks.adapters", (*RUN, RESULTS, *ANALYSES, *SWEEP, *FRONTS)),
    # results are data; analyses compute from them and run nothing
    (RESULTS, (*ANALYSES, *RUN, *SWEEP, *FRONTS, "optcmp.frameworks.adapters", "optcmp.frameworks")),
    ("optcmp.analysis", (*RUN, *SWEEP, *FRONTS, "optcmp.frameworks.adapters", "optcmp.frameworks")),
    # one run never depends on the sweep, the analyses or the front ends
    ("optcmp.engine", (*SWEEP, *ANALYSES, *FRONTS)),
    ("optcmp.executors", ("optcmp.sweep", "optcmp.tuning", *FRONTS)),
    ("optcmp.sweep", ("optcmp.tuning", "optcmp.cli")),
])
def test_layers_depend_one_way(layer, forbidden):
    """Type-checking imports count: a dependency for annotations is still a dependency."""
    members = [m for m in GRAPH_TYPES if m == layer or m.startswith(layer + ".")]
    assert members, layer
    for m in members:
        bad = sorted(d for d in _reaches(GRAPH_TYPES, m)
                     if any(d == f or d.startswith(f + ".") for f in forbidden))
        assert not bad, f"{m} reaches {bad}"


#: Modules that import no other part of optcmp (but each other): files, the clock, minibatch
#: orders, machine facts, data fingerprints, the stopping rules.
LEAVES = ("optcmp._io", "optcmp._warn", "optcmp._scipy", "optcmp._storefile", "optcmp._version", "optcmp._dask",
          "optcmp.timing", "optcmp.batching", "optcmp.environment", "optcmp.fingerprint",
          "optcmp.implementation",
          "optcmp.stopping")


def test_leaves_import_only_leaves():
    for m in (m for m in GRAPH_TYPES if _in(m, LEAVES)):
        bad = sorted(d for d in _reaches(GRAPH_TYPES, m) if not _in(d, LEAVES))
        assert not bad, f"{m} reaches {bad}"


def test_results_is_a_leaf_at_import_time():
    """The results package imports only leaf helpers and its own modules at module level."""
    leaves = {"optcmp._io", "optcmp._storefile", "optcmp.environment", "optcmp._version",
              "optcmp.implementation"}
    for name in (m for m in MODULES if _in(m, RESULTS)):
        tree = ast.parse(MODULES[name].read_text())
        top = set()
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optcmp"):
                top.add(node.module)
            elif isinstance(node, ast.Import):
                top.update(a.name for a in node.names if a.name.startswith("optcmp"))
        assert {m for m in top if not _in(m, RESULTS)} <= leaves, name


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


def test_no_function_longer_than_80_lines():
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


# ------------------------------------------------------------------------------------------



def _in(name: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_no_import_cycle_counting_type_checking_imports():
    assert _cycles(GRAPH_TYPES) == []


def test_results_never_import_analyses():
    """Results are data: no results module reaches an analysis, not even for annotations."""
    for m in (m for m in GRAPH_TYPES if _in(m, RESULTS)):
        bad = sorted(d for d in _reaches(GRAPH_TYPES, m) if _in(d, ANALYSES))
        assert not bad, f"{m} reaches {bad}"


def _area(name: str) -> str:
    """What counts as one's own for registration: a subpackage, or the top-level module."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or MODULES[name].name == "__init__.py" \
        else name


def _imported_names(name: str, tree: ast.Module) -> dict[str, str]:
    """Names bound at module level by imports from other optcmp modules -> their module."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]) + (f".{base}" if base else "")
            if _in(base, "optcmp") and base != name:
                for a in node.names:
                    out[a.asname or a.name] = base
        elif isinstance(node, ast.Import):
            for a in node.names:
                if _in(a.name, "optcmp") and a.name != name:
                    out[(a.asname or a.name).split(".")[0]] = a.name
    return out


def _root(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _import_time_statements(tree: ast.Module) -> list[ast.stmt]:
    """Statements that run when the module is imported (function bodies left out)."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        out.append(node)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, []) or [])
    return out


def _registrations() -> list[str]:
    """Import-time calls of another area's functions, and writes into another area's objects."""
    found = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        imported = _imported_names(name, tree)
        foreign = {n for n, mod in imported.items() if _area(mod) != _area(name)}
        statements = _import_time_statements(tree)
        for node in statements:  # a loop over foreign objects binds foreign objects
            if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(
                    node.iter, (ast.Tuple, ast.List)) and {_root(e) for e in node.iter.elts} \
                    <= foreign:
                foreign.add(node.target.id)
        for node in statements:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                targets: list[ast.AST] = [node.value.func]
            elif isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = [t for t in getattr(node, "targets", [getattr(node, "target", None)])
                           if isinstance(t, (ast.Attribute, ast.Subscript))]
            else:
                continue
            for t in targets:
                if _root(t) in foreign:
                    found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    return found


def test_no_module_registers_into_another_at_import_time():
    """No hook is installed into another package when a module is imported (a dependency the
    import graph shows the wrong way round); a package's own modules may fill its registry."""
    assert _registrations() == []


def _private_definitions(tree: ast.Module) -> set[str]:
    """Private names (one leading underscore) a module defines: functions, classes, module and
    class attributes, and attributes it assigns on any object (``self._x = ...``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if n.startswith("_") and not n.startswith("__")}


def _on_self(node: ast.Attribute) -> bool:
    """``self._x``, ``cls._x``, ``super()._x``: a class's own (or a base class's) member."""
    v = node.value
    return (isinstance(v, ast.Name) and v.id in ("self", "cls")) or (
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super")


def _private_uses() -> list[str]:
    trees = {name: ast.parse(path.read_text()) for name, path in MODULES.items()}
    defined = {name: _private_definitions(t) for name, t in trees.items()}
    anywhere = set().union(*defined.values())
    found = []
    for name, tree in trees.items():
        where = MODULES[name].relative_to(ROOT.parent)
        modules = {n for n, mod in _imported_names(name, tree).items() if mod in MODULES
                   and (mod == n or mod.endswith("." + n) or n not in defined[name])}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _in(node.module or "", "optcmp"):
                for a in node.names:
                    if a.name.startswith("_") and not a.name.startswith("__"):
                        found.append(f"{where}:{node.lineno} imports {a.name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and not _on_self(node):
                on_module = isinstance(node.value, ast.Name) and node.value.id in modules
                if on_module or (node.attr in anywhere and node.attr not in defined[name]):
                    found.append(f"{where}:{node.lineno} uses .{node.attr}")
    return found


def test_no_private_name_used_across_modules():
    """A leading underscore means "this module's own": no other module imports or reads it
    (a subclass may use its base class's members through ``self``)."""
    assert _private_uses() == []


def test_no_module_longer_than_600_lines():
    long = [f"{p.relative_to(ROOT.parent)} ({n} lines)" for p in MODULES.values()
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES]
    assert long == []
