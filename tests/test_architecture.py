"""The shape of the code: no import cycle, short functions, layers that depend one way, each
framework's code in its folder, one home per name (no re-export outside package ``__init__``
files). ``docs/architecture.md`` describes the layers; ``python tests/test_architecture.py``
prints who imports whom.

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
ANALYSES = "optcmp.analysis"
RESULTS = "optcmp.results"

#: The frameworks, each a folder ``optcmp/frameworks/<name>/`` (backend, ops, native).
FRAMEWORKS = ("numpy", "torch", "tensorflow", "jax")

# The layers of the table below: module names, and ``package.*`` for a package with everything
# under it (``optcmp.frameworks`` alone is the backend registry: its modules sit in three layers).
#: The array functions objectives and update rules are written against, and the host gradient.
#: A native model's evaluation off the clock (``model``) is array code of its framework too.
OPS = ("optcmp.frameworks.ops", "optcmp.frameworks.host",
       *(f"optcmp.frameworks.{fw}.ops" for fw in FRAMEWORKS),
       *(f"optcmp.frameworks.{fw}.model" for fw in ("torch", "tensorflow", "jax")))
#: Placement, value-and-gradient, compile, sync: the registry, the base class, each backend.
BACKENDS = ("optcmp.frameworks", "optcmp.frameworks.base", "optcmp.frameworks.loops",
            "optcmp.frameworks.reuse", *(f"optcmp.frameworks.{fw}.backend" for fw in FRAMEWORKS))
#: One optimizer on one backend: the stepper contract, the reference and scipy adapters, each
#: framework's natives, and the table of which adapter runs a spec.
STEPPERS = ("optcmp.frameworks.stepper", "optcmp.frameworks.reference",
            "optcmp.frameworks.scipy", "optcmp.frameworks.adapters", "optcmp.frameworks.models",
            "optcmp.frameworks.model_reference",
            *(f"optcmp.frameworks.{fw}.{m}" for fw in FRAMEWORKS if fw != "numpy"
              for m in ("native", "model_stepper", "model_reference")))
PROBLEMS = ("optcmp.problems.*", "optcmp.suites")
OPTIMIZERS = ("optcmp.optimizers.*",)
STOPPING = ("optcmp.stopping.*",)
RUN = ("optcmp.engine.*", "optcmp.equivalence")
SWEEP = ("optcmp.sweep.*", "optcmp.executors", "optcmp.store", "optcmp.tuning",
         "optcmp.tune_result")
FRONTS = ("optcmp.cli.*", "optcmp.comparison")


def _member(name: str, layer: tuple[str, ...]) -> bool:
    """Whether module ``name`` is in ``layer`` (its modules, and its ``package.*`` packages)."""
    return any(name == e or (e.endswith(".*") and _in(name, e[:-2])) for e in layer)


@pytest.mark.parametrize("layer, forbidden", [
    # ops are a leaf: the array functions problems and update rules are written against
    (OPS, (*PROBLEMS, *BACKENDS, *OPTIMIZERS, *STEPPERS, *STOPPING, *RUN, f"{RESULTS}.*",
           f"{ANALYSES}.*", *SWEEP, *FRONTS)),
    # problems depend on nothing that runs them: they evaluate with the ops alone
    (PROBLEMS, (*BACKENDS, *OPTIMIZERS, *STEPPERS, *RUN, f"{RESULTS}.*", f"{ANALYSES}.*",
                *SWEEP, *FRONTS)),
    # backends compute: they know no optimizer, stepper, run or result
    (BACKENDS, (*OPTIMIZERS, *STEPPERS, *RUN, f"{RESULTS}.*", f"{ANALYSES}.*", *SWEEP,
                *FRONTS)),
    # optimizers are declarations: the backend registry names where natives run; no stepper,
    # no native, no run
    (OPTIMIZERS, (*STEPPERS, *RUN, f"{RESULTS}.*", f"{ANALYSES}.*", *SWEEP, *FRONTS)),
    (STEPPERS, (*RUN, f"{RESULTS}.*", f"{ANALYSES}.*", *SWEEP, *FRONTS)),
    # results are data; analyses compute from them and run nothing
    ((f"{RESULTS}.*",), (f"{ANALYSES}.*", *RUN, *SWEEP, *FRONTS, *STEPPERS, *BACKENDS, *OPS)),
    ((f"{ANALYSES}.*",), (*RUN, *SWEEP, *FRONTS, *STEPPERS, *BACKENDS, *OPS)),
    # one run never depends on the sweep, the analyses or the front ends
    (RUN, (*SWEEP, f"{ANALYSES}.*", *FRONTS)),
    (("optcmp.executors",), ("optcmp.sweep.*", "optcmp.tuning", *FRONTS)),
    (("optcmp.sweep.*",), ("optcmp.tuning", "optcmp.cli.*")),
])
def test_layers_depend_one_way(layer, forbidden):
    """Type-checking imports count: a dependency for annotations is still a dependency."""
    members = [m for m in GRAPH_TYPES if _member(m, layer)]
    assert {e for e in layer if not any(_member(m, (e,)) for m in members)} == set(), layer
    for m in members:
        bad = sorted(d for d in _reaches(GRAPH_TYPES, m) if _member(d, forbidden))
        assert not bad, f"{m} reaches {bad}"


def test_a_framework_is_one_folder_and_one_row():
    """Each folder of ``optcmp/frameworks/`` is a framework with a backend and ops, and has
    one row in the registry, whose backend is the folder's."""
    from optcmp.frameworks import BACKENDS

    folders = sorted(p.parent.name for p in (ROOT / "frameworks").glob("*/__init__.py"))
    assert folders == sorted(FRAMEWORKS) == sorted(BACKENDS)
    for fw in FRAMEWORKS:
        assert {f"optcmp.frameworks.{fw}.backend", f"optcmp.frameworks.{fw}.ops"} <= set(MODULES)
        assert BACKENDS[fw].module == f"optcmp.frameworks.{fw}.backend"


def test_each_framework_module_has_one_layer():
    """Every module of ``optcmp/frameworks/`` is ops, backend or stepper (a new module is placed
    in the table above, not let through it); a folder's ``__init__`` holds nothing."""
    for m in (m for m in MODULES if _in(m, "optcmp.frameworks")):
        layers = [n for n, layer in (("ops", OPS), ("backends", BACKENDS), ("steppers", STEPPERS))
                  if _member(m, layer)]
        folder = m.rpartition(".")[2] in FRAMEWORKS and MODULES[m].name == "__init__.py"
        assert len(layers) == 1 or (folder and not layers and not GRAPH_TYPES[m]), (m, layers)


def test_each_framework_folder_imports_no_other_framework():
    """A framework's folder builds on the shared modules, never on another framework's folder."""
    for fw in FRAMEWORKS:
        for m in (m for m in GRAPH_TYPES if _in(m, f"optcmp.frameworks.{fw}")):
            bad = sorted(d for d in GRAPH_TYPES[m] if any(
                _in(d, f"optcmp.frameworks.{other}") for other in FRAMEWORKS if other != fw))
            assert not bad, f"{m} imports {bad}"


#: Modules that import no other part of optcmp (but each other): files, the clock, minibatch
#: orders, machine facts, data fingerprints, the stopping rules.
LEAVES = ("optcmp._io", "optcmp._imports", "optcmp._memory", "optcmp._warn", "optcmp._scipy", "optcmp._storefile", "optcmp._version", "optcmp._dask",
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

    # base: the declarations; schedule: the learning-rate schedules; transforms: the pieces
    # rules are chained from; _*: shared helpers
    files = sorted(p for p in (ROOT / "optimizers").glob("*.py")
                   if p.stem not in ("__init__", "base", "schedule", "transforms")
                   and not p.stem.startswith("_"))
    assert sorted(p.stem for p in files) == sorted(FACTORIES)
    for p in files:
        text = p.read_text()
        assert text.count("register_optimizer(OptimizerInfo(") == 1, p.name
        for backend in ('"numpy"', '"torch"', '"tensorflow"'):
            assert backend not in text, f"{p.name} names the backend {backend}"


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



#: The frameworks' import names -> the one folder of ``optcmp/frameworks/`` that may import them.
FRAMEWORK_IMPORTS = {"torch": "torch", "tensorflow": "tensorflow", "keras": "tensorflow",
                     "tf_keras": "tensorflow", "jax": "jax", "jaxlib": "jax", "optax": "jax"}

#: Modules outside the folders that still import a framework, each with its reason. An entry
#: that no longer imports one fails the test, so the list only shrinks.
FRAMEWORK_IMPORTS_ALLOWED = {
    # XLA's CPU thread flags serve TensorFlow and JAX alike and count only before JAX's runtime
    # starts: whether it has started is read from an already imported jax
    "optcmp/frameworks/ops.py": {"jax"},
    # torch before TensorFlow in one process (the reverse order has crashed it)
    "optcmp/frameworks/tensorflow/ops.py": {"torch"},
}


def _framework_imports(source: str) -> set[str]:
    """Top-level names of the frameworks a source imports: module level, in a function, or by
    ``importlib.import_module("...")`` / ``__import__("...")``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and (
                    isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
                    or isinstance(node.func, ast.Name) and node.func.id in ("import_module",
                                                                            "__import__")):
            names.add(node.args[0].value)
    return {n.split(".")[0] for n in names} & set(FRAMEWORK_IMPORTS)


def test_each_framework_is_imported_only_in_its_folder():
    """torch, TensorFlow/Keras and JAX/optax code lives in ``optcmp/frameworks/<name>/``: no
    other module imports them, at module level or lazily (see :data:`FRAMEWORK_IMPORTS_ALLOWED`)."""
    found: dict[str, set[str]] = {}
    for path in MODULES.values():
        where = path.relative_to(ROOT.parent)
        outside = {n for n in _framework_imports(path.read_text())
                   if ROOT / "frameworks" / FRAMEWORK_IMPORTS[n] not in path.parents}
        if outside:
            found[where.as_posix()] = outside
    assert found == FRAMEWORK_IMPORTS_ALLOWED


def test_framework_imports_are_seen():
    # a lazy import, a submodule's, importlib's are imports (else the test is blind); a look
    # into sys.modules or find_spec is not
    source = ("import numpy\ndef f():\n    import jax.numpy as jnp\n    from optax import adam\n"
              "    return importlib.import_module('keras'), __import__('torch')\n"
              "ok = sys.modules.get('tensorflow'), find_spec('tensorflow')\n")
    assert _framework_imports(source) == {"jax", "optax", "keras", "torch"}


def _bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module defines (def, class, assignment) and those it binds only by import,
    at module level (under ``if``/``try``/``with`` too, not in functions or classes)."""
    defined: set[str] = set()
    imported: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            continue
        if isinstance(node, ast.Import):
            imported.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.update(a.asname or a.name for a in node.names)
        else:
            for target in ast.walk(node):
                if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store):
                    defined.add(target.id)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(node, field, []) or [])
    return defined, imported - defined


def _exported(tree: ast.Module) -> set[str]:
    """The names listed in ``__all__`` (assigned or extended with literals)."""
    out: set[str] = set()
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == "__all__" and node.value is not None:
            out.update(e.value for e in ast.walk(node.value)
                       if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return out


def _re_exports() -> list[str]:
    """``__all__`` names a module only imports, and names imported from a module that only
    imports them itself (package ``__init__`` files, the public faces, excepted)."""
    trees = {name: ast.parse(path.read_text()) for name, path in MODULES.items()}
    bindings = {name: _bindings(tree) for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        path = MODULES[name]
        where = path.relative_to(ROOT.parent).as_posix()
        if path.name != "__init__.py":
            found += [f"{where} exports {n}" for n in sorted(_exported(tree) & bindings[name][1])]
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1]) + (f".{base}" if base else "")
            if base not in MODULES or MODULES[base].name == "__init__.py":
                continue
            defined = bindings[base][0]
            found += [f"{where}:{node.lineno} imports {a.name} from {base}, which does not "
                      f"define it" for a in node.names if a.name not in defined]
    return sorted(found)


def test_re_exports_are_seen():
    # what a module defines (under if/try too) and what it only imports (else the test is blind)
    tree = ast.parse("from a import b, c as d\nimport e.f\ntry:\n    import g\nexcept ImportError:\n"
                     "    g = None\nh = 1\ndef i(): import j\nclass K: pass\n"
                     "__all__ = ['b', 'h']\n__all__ += ['d']\n")
    assert _bindings(tree) == ({"g", "h", "i", "K", "__all__"}, {"b", "d", "e"})
    assert _exported(tree) == {"b", "d", "h"}


def test_no_re_export_outside_package_init_files():
    """A name has one home: a module's ``__all__`` lists only what it defines, and an import
    names the module that defines the name (a package's ``__init__`` may gather its public
    names)."""
    assert _re_exports() == []


def _package_imports() -> dict[str, set[str]]:
    """What each package (and top-level module) imports from the rest of optcmp, annotations
    included; ``frameworks/`` by module and folder, as ``docs/architecture.md`` shows it."""
    def unit(m: str) -> str:
        parts = m.split(".")[1:]
        if parts[:1] == ["frameworks"]:
            return "/".join(["frameworks", *parts[1:3]]) if len(parts) > 1 else "frameworks"
        return parts[0] if parts else "optcmp"

    out: dict[str, set[str]] = {}
    for m, deps in GRAPH_TYPES.items():
        out.setdefault(unit(m), set()).update(unit(d) for d in deps if unit(d) != unit(m))
    return out


def graph_lines() -> list[str]:
    """Each package (``frameworks/`` by module and folder) and what it imports of optcmp."""
    return [f"{name}: {', '.join(sorted(deps))}"
            for name, deps in sorted(_package_imports().items()) if deps]


def test_the_documented_graph_is_todays():
    """docs/architecture.md shows the graph this file computes (regenerate it with
    ``python tests/test_architecture.py``)."""
    text = (ROOT.parent / "docs" / "architecture.md").read_text()
    block = text.split("    ```text\n", 1)[1].split("    ```", 1)[0]
    assert [line.strip() for line in block.splitlines()] == graph_lines()


if __name__ == "__main__":  # python tests/test_architecture.py: who imports whom, today
    print("\n".join(graph_lines()))
