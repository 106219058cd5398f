"""Every public name of optcmp has a docstring; public functions have numpydoc sections.

Public names are the API: what ``optcmp`` and its API packages (:data:`API_PACKAGES`) export in
``__all__``, and the public classes and functions of the API modules :data:`API_MODULES`. Their
public methods need a docstring too (an inherited one counts, as :func:`inspect.getdoc` finds
it). Public *functions* must also document their parameters in a numpydoc ``Parameters`` section
and, when they return something, have a ``Returns`` (or ``Yields``) section; numpydoc's own
parser reads the sections. Every module of the package has a docstring (why it exists); the
helpers behind the API say in a line what they are for.

Modules that import an optional framework (torch, TensorFlow, dask, matplotlib, pandas) are
checked when that framework is installed and skipped otherwise.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from collections.abc import Iterator
from typing import Any

import pytest
from numpydoc.docscrape import FunctionDoc

import optcmp

# Names that need no docstring of their own (data or dunders), by qualified name.
_DATA_OK = {"optcmp.__version__"}

#: Packages whose ``__all__`` is the API.
API_PACKAGES = ("optcmp", "optcmp.problems", "optcmp.stopping", "optcmp.optimizers",
                "optcmp.analysis", "optcmp.analysis.stats", "optcmp.analysis.plots",
                "optcmp.sweep", "optcmp.results", "optcmp.frameworks")
#: Modules whose public classes and functions are all API.
API_MODULES = ("optcmp.store", "optcmp.suites")


def _public_modules() -> list[str]:
    names = ["optcmp"]
    for info in pkgutil.walk_packages(optcmp.__path__, prefix="optcmp."):
        parts = info.name.split(".")
        if any(p.startswith("_") and p != "__init__" for p in parts[1:]):
            continue
        names.append(info.name)
    return sorted(names)


def _import(modname: str) -> types.ModuleType:
    try:
        return importlib.import_module(modname)
    except ImportError as exc:  # an optional framework is missing
        pytest.skip(f"{modname} needs an optional dependency: {exc}")


def _api_members(modname: str) -> Iterator[tuple[str, Any]]:
    mod = _import(modname)
    if modname in API_PACKAGES:
        items = [(name, getattr(mod, name)) for name in getattr(mod, "__all__", ())]
    else:
        items = [(name, obj) for name, obj in vars(mod).items() if not name.startswith("_")
                 and getattr(obj, "__module__", None) == modname]
    for name, obj in items:
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield name, obj


def _methods(cls: type) -> Iterator[tuple[str, Any]]:
    for name, obj in vars(cls).items():
        if name.startswith("_"):
            continue
        func = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
        if isinstance(func, property):
            func = func.fget
        if inspect.isfunction(func):
            yield name, getattr(cls, name) if not isinstance(obj, property) else obj


def _has_doc(obj: Any) -> bool:
    doc = inspect.getdoc(obj)
    return bool(doc and doc.strip())


def _returns_something(func: Any) -> bool:
    ann = inspect.signature(func).return_annotation
    if ann is inspect.Signature.empty:
        return False
    return ann not in (None, "None", type(None), "NoReturn")


def _documented_params(doc: FunctionDoc) -> set[str]:
    names: set[str] = set()
    for p in doc["Parameters"] + doc["Other Parameters"]:
        for n in p.name.split(","):
            names.add(n.strip().lstrip("*"))
    return names


def _numpydoc_problems(qualname: str, func: Any) -> list[str]:
    problems: list[str] = []
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return problems
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    doc = FunctionDoc(func)
    if params:
        if not doc["Parameters"]:
            problems.append(f"{qualname}: no 'Parameters' section")
        else:
            missing = [p.name for p in params if p.name not in _documented_params(doc)]
            if missing:
                problems.append(f"{qualname}: parameters not documented: {', '.join(missing)}")
    if _returns_something(func) and not (doc["Returns"] or doc["Yields"]):
        problems.append(f"{qualname}: no 'Returns' section")
    return problems


def test_all_names_exist_and_are_documented() -> None:
    missing = []
    for name in optcmp.__all__:
        obj = getattr(optcmp, name)  # AttributeError is a failure too
        if f"optcmp.{name}" in _DATA_OK:
            continue
        if not _has_doc(obj):
            missing.append(name)
    assert not missing, f"optcmp.__all__ names without a docstring: {missing}"


@pytest.mark.parametrize("modname", _public_modules())
def test_every_module_says_why_it_exists(modname: str) -> None:
    mod = _import(modname)
    assert (mod.__doc__ or "").strip(), f"module {modname} has no docstring"


@pytest.mark.parametrize("modname", API_PACKAGES + API_MODULES)
def test_api_is_documented(modname: str) -> None:
    missing: list[str] = []
    numpydoc: list[str] = []
    for name, obj in _api_members(modname):
        qual = f"{modname}.{name}"
        if not _has_doc(obj):
            missing.append(qual)
            continue
        if inspect.isfunction(obj):
            numpydoc.extend(_numpydoc_problems(qual, obj))
        else:
            for mname, meth in _methods(obj):
                if not _has_doc(meth):
                    missing.append(f"{qual}.{mname}")
    assert not missing, "public names without a docstring:\n  " + "\n  ".join(missing)
    assert not numpydoc, "numpydoc sections lacking:\n  " + "\n  ".join(numpydoc)


def test_checker_catches_a_missing_docstring() -> None:
    """The checks above can fail: an undocumented function and a half-documented one."""

    def undocumented(a: int) -> int:
        return a

    def half(a: int, b: int) -> int:
        """Add.

        Parameters
        ----------
        a : int
        """
        return a + b

    assert not _has_doc(undocumented)
    probs = _numpydoc_problems("half", half)
    assert "half: parameters not documented: b" in probs
    assert "half: no 'Returns' section" in probs
