"""Tests generated from the optimizer database (``tests/optimizer_db.py``)."""

from __future__ import annotations

import importlib.util
import itertools
import warnings

import pytest
from conftest import HAS_TF, HAS_TORCH
from optimizer_db import ROWS, Band, Count, Row, on_plateau

import optcmp
from optcmp.frameworks import BACKENDS
from optcmp.frameworks.adapters import resolve_adapter
from optcmp.optimizers import optimizer_info, optimizer_names

HAS_JAX = all(importlib.util.find_spec(m) is not None for m in ("jax", "optax"))
INSTALLED = {"numpy": True, "torch": HAS_TORCH, "tensorflow": HAS_TF, "jax": HAS_JAX}
IMPLS = ("reference", "native", "scipy")


def _installed(backend: str):
    return pytest.mark.skipif(not INSTALLED[backend], reason=f"{backend} is not installed")


def _owners(backend: str, impl: str) -> tuple[str, ...]:
    """The distributions whose code takes the steps of an implementation: their version decides
    its count (a new scipy may change its line search), so the row's count holds for the
    versions ``constraints/ci.txt`` pins. optcmp's reference implementations are its own code."""
    if impl == "scipy":
        return ("scipy",)
    if impl == "native":
        return ("torch",) if backend == "torch" else ("keras", "tensorflow-cpu")
    return ()


def _cases():
    for row in ROWS:
        for key in row.nit:
            backend, impl = key.split("/")
            owners = _owners(backend, impl)
            marks = [_installed(backend)]
            if owners:
                marks.append(pytest.mark.version_dependent(*owners))
            yield pytest.param(row, backend, impl, id=f"{row.id}-{key}", marks=marks)


def _missing():
    for row in ROWS:
        for backend, impl in itertools.product(BACKENDS, IMPLS):
            if f"{backend}/{impl}" not in row.nit and f"{backend}/{impl}" not in row.skip:
                yield pytest.param(row, backend, impl, id=f"{row.id}-{backend}/{impl}")


def _equivalence():
    for row in ROWS:
        for impl, tol in row.equivalence.items():
            yield pytest.param(row, impl, tol, id=f"{row.id}-{impl}",
                               marks=pytest.mark.skipif(not (HAS_TORCH or HAS_TF),
                                                        reason="one backend only"))


@pytest.mark.parametrize("row, backend, impl", list(_cases()))
def test_iterations_to_target(row: Row, backend: str, impl: str) -> None:
    kw = {} if row.tol is None else {"tol": row.tol}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # framework deprecation chatter
        r = optcmp.run(row.problem(), row.spec(impl), backend=backend, threads=1,
                           max_iter=row.max_iter, max_time=None, **kw)
    key = f"{backend}/{impl}"
    nit = row.nit[key]
    assert (r.impl, r.backend) == (impl, backend)
    if isinstance(nit, Band) and nit.stalls and r.status in ("stalled", "max_iter"):
        # the rounding decided this path's end too (see the row): it ended on its own, or it
        # sits on a plateau above the target for the last half of its budget
        assert r.time_to_target is None, r.message
        if r.status == "stalled":
            assert r.nit < row.max_iter, r.message
        else:
            assert on_plateau(r), r.message
        return
    assert r.status == "converged", r.message
    _assert_count(r.nit_to_target, nit, "iterations")
    if isinstance(nit, int):
        _assert_count(r.nfev_to_target, row.nfev.get(key, nit + 1), "evaluations")
    elif key in row.nfev:  # a band's evaluations: its own band, where the row gives one
        _assert_count(r.nfev_to_target, row.nfev[key], "evaluations")
    assert r.success and r.time_to_target is not None and r.time_to_target <= r.time


def _assert_count(got: int | None, want: Count, what: str) -> None:
    """Exact counts equal; a :class:`Band` (a count that follows the BLAS kernel) contains it."""
    if isinstance(want, Band):
        assert got in want, f"{what} to the target {got} outside {want}"
    else:
        assert got == want, f"{what} to the target {got}, expected {want}"


@pytest.mark.parametrize("row, backend, impl", list(_missing()))
def test_implementations_not_in_the_table_do_not_exist(row: Row, backend: str, impl: str):
    with pytest.raises(ValueError, match=f"has no impl='{impl}' on backend '{backend}'"):
        resolve_adapter(row.spec(impl), backend)


@pytest.mark.parametrize("row, impl, tol", list(_equivalence()))
def test_backends_agree_step_by_step(row: Row, impl: str, tol: float | str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(row.problem(), row.spec("auto"), steps=row.steps,
                                       impl=impl, tolerance=None if tol == "different"
                                       else max(tol, 1e-10))
    assert len(res.backends) >= 2
    if tol == "different":
        assert res.verdict == "different" and res.first_step_above() is not None
    else:
        assert res.verdict == "equivalent", str(res)
        assert res.max_rel_diff <= tol


def test_every_optimizer_and_implementation_has_a_row() -> None:
    """A new optimizer, or a new native of an old one, fails here until its row exists."""
    covered = {(r.optimizer, key) for r in ROWS for key in (*r.nit, *r.skip)}
    for name in optimizer_names():
        info = optimizer_info(name)
        for backend in BACKENDS:
            for impl in info.implementations(backend):
                assert (name, f"{backend}/{impl}") in covered, f"no row runs {name} {backend}/{impl}"


def test_rows_are_consistent() -> None:
    ids = [r.id for r in ROWS]
    assert len(ids) == len(set(ids))
    for r in ROWS:
        assert r.optimizer in optimizer_names(), r.id
        assert r.spec("auto").name == r.optimizer, r.id
        assert set(r.nfev) <= set(r.nit) and not set(r.skip) & set(r.nit), r.id
        assert set(r.equivalence) <= {k.split("/")[1] for k in r.nit}, r.id
