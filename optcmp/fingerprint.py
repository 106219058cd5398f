"""What makes two problems, or two runs, the same: canonical JSON and the data fingerprint (for
the run store's keys and the executors' workers). A leaf: numpy and :mod:`optcmp._io`."""

from __future__ import annotations

import functools
import hashlib
import json
import types
from collections.abc import Iterable
from typing import Any

import numpy as np

from optcmp._io import jsonable


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of ``obj``: sorted keys, no spaces, numpy scalars as Python numbers."""
    return json.dumps(jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True)


def data_fingerprint(problem: Any) -> str:
    """SHA-256 of the problem's training arrays (names, dtypes, shapes and bytes), cached."""
    cached = getattr(problem, "_optcmp_data_sha256", None)
    if cached is not None:
        return str(cached)
    h = hashlib.sha256()
    for name in sorted(problem.train_data):
        a = np.atleast_1d(np.asarray(problem.train_data[name]))
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        step = max(1, 2**22 // max(a[:1].nbytes, 1))
        for i in range(0, len(a) if a.size else 0, step):  # row-major bytes, by row chunks
            h.update(np.ascontiguousarray(a[i:i + step]).data.cast("B"))
    fp = h.hexdigest()
    try:
        problem._optcmp_data_sha256 = fp
    except AttributeError:  # pragma: no cover - slotted problems
        pass
    return fp


def problem_identity(problem: Any) -> dict[str, Any]:
    """``{"problem": spec, "data_sha256": fingerprint}``: what makes two problems the same."""
    return {"problem": jsonable(problem.spec()), "data_sha256": data_fingerprint(problem)}


#: How deep :func:`code_fingerprint` follows functions a function refers to.
_DEPTH = 4


def _feed(h: Any, v: Any, depth: int, seen: set[int]) -> None:
    """Hash ``v``: code by its bytecode, constants, names and the values it closes over."""
    if id(v) in seen:
        h.update(b"<seen>")
        return
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        h.update(f"{type(v).__name__}:{v!r}|".encode())
        return
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.ascontiguousarray(v)
        h.update(f"array|{a.dtype.str}|{a.shape}|".encode())
        if a.size and a.dtype != object:
            h.update(a.data.cast("B"))
        return
    if isinstance(v, types.ModuleType):
        h.update(f"module:{v.__name__}|".encode())
        return
    seen = seen | {id(v)}
    if isinstance(v, types.CodeType):
        h.update(v.co_code)
        h.update(repr((v.co_names, v.co_varnames, v.co_freevars)).encode())
        for c in v.co_consts:
            _feed(h, c, depth, seen)
        return
    if isinstance(v, (tuple, list, frozenset, set)):
        items: Iterable[Any] = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
        h.update(f"{type(v).__name__}[".encode())
        for x in items:
            _feed(h, x, depth, seen)
        h.update(b"]")
        return
    if isinstance(v, dict):
        h.update(b"{")
        for k in sorted(v, key=repr):
            _feed(h, k, depth, seen)
            _feed(h, v[k], depth, seen)
        h.update(b"}")
        return
    module = getattr(v, "__module__", None) or type(v).__module__
    name = getattr(v, "__qualname__", None) or type(v).__qualname__
    h.update(f"{module}.{name}|".encode())
    if depth <= 0 or _library(module):
        return  # a library's function is its name (its version is recorded elsewhere)
    if isinstance(v, types.MethodType):
        _feed(h, v.__func__, depth - 1, seen)
        _feed(h, v.__self__, depth - 1, seen)
    elif isinstance(v, types.FunctionType):
        _feed_function(h, v, depth, seen)
    elif isinstance(v, functools.partial):
        _feed(h, (v.func, v.args, dict(v.keywords)), depth - 1, seen)
    elif isinstance(v, type):
        for k in sorted(vars(v)):
            if not k.startswith("__") or k == "__call__":
                _feed(h, (k, vars(v)[k]), depth - 1, seen)
    else:  # an object: its class and its attributes
        _feed(h, type(v), depth - 1, seen)
        _feed(h, getattr(v, "__dict__", {}), depth - 1, seen)


def _feed_function(h: Any, f: types.FunctionType, depth: int, seen: set[int]) -> None:
    """Hash a function: code, defaults, closure and the module-level names it uses."""
    code = f.__code__
    _feed(h, code, depth, seen)
    _feed(h, (f.__defaults__, f.__kwdefaults__), depth - 1, seen)
    cells = [c.cell_contents if _filled(c) else None for c in (f.__closure__ or ())]
    _feed(h, cells, depth - 1, seen)
    names = set(code.co_names)
    for c in code.co_consts:  # names used by nested functions and comprehensions
        if isinstance(c, types.CodeType):
            names.update(c.co_names)
    for n in sorted(names):
        if n in f.__globals__:
            v = f.__globals__[n]
            # a module-level container may be state the objective updates (a call counter):
            # its type only, so a resume is not refused for it
            _feed(h, (n, type(v).__name__ if isinstance(v, (dict, list, set)) else v),
                  depth - 1, seen)


#: Containers whose contents a function may change between runs (or during one).
_CONTAINERS = (dict, list, set, bytearray)


def mutable_state(fn: Any) -> list[str]:
    """The mutable containers and objects ``fn`` closes over, and the module-level containers it
    reads (whose contents :func:`code_fingerprint` does not cover), e.g. ``["cache (closure)"]``.

    Parameters
    ----------
    fn : callable

    Returns
    -------
    list of str
    """
    fn = getattr(fn, "__func__", fn)
    if not isinstance(fn, types.FunctionType):
        return []
    code = fn.__code__
    plain = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
             types.MethodType, functools.partial)
    found = [f"{n} (closure)" for n, c in zip(code.co_freevars, fn.__closure__ or ())
             if _filled(c) and (isinstance(c.cell_contents, _CONTAINERS) or (
                 hasattr(c.cell_contents, "__dict__") and not isinstance(c.cell_contents, plain)
                 and not _library(type(c.cell_contents).__module__)))]
    names = set(code.co_names).union(*(c.co_names for c in code.co_consts
                                       if isinstance(c, types.CodeType)))
    return found + [f"{n} (module-level {type(fn.__globals__[n]).__name__})" for n in sorted(names)
                    if isinstance(fn.__globals__.get(n), _CONTAINERS)]


def _filled(cell: Any) -> bool:
    """Whether a closure cell holds a value."""
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _library(module: str | None) -> bool:
    """Whether ``module`` is installed code (optcmp, numpy, the frameworks, the stdlib)."""
    top = (module or "").partition(".")[0]
    return top in {"optcmp", "numpy", "scipy", "torch", "tensorflow", "jax", "builtins", "math",
                   "functools", "operator", "keras", "pandas"}


def code_fingerprint(obj: Any) -> str:
    """SHA-256 of what a callable computes: its code and the values it refers to (:func:`_feed`)."""
    h = hashlib.sha256()
    _feed(h, obj, _DEPTH, set())
    return h.hexdigest()


def problem_inputs(problem: Any) -> dict[str, Any]:
    """What else can change a problem's runs: ``key_inputs()``, a user problem class's code."""
    get = getattr(problem, "key_inputs", None)
    out = dict(get()) if callable(get) else {}
    cls = type(problem)
    if not _library(cls.__module__):
        out["class_code"] = code_fingerprint(cls)
    return jsonable(out)  # type: ignore[no-any-return]


def rule_inputs(rule: Any) -> dict[str, str]:
    """The code of the stopping rules written outside optcmp in ``rule`` (by class name)."""
    out = {}
    for r in rule.rules():
        cls = type(r)
        if not _library(cls.__module__):
            out[f"{cls.__module__}.{cls.__qualname__}"] = code_fingerprint(cls)
    return out
