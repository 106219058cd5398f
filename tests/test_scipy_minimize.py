"""optcmp.scipy_minimize: every unconstrained scipy.optimize.minimize method."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import lr_a, lr_c, needs_torch

import optcmp
from optcmp.optimizers import optimizer_info
from optcmp.optimizers.scipy_minimize import METHODS


def _run(spec, backend="numpy", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optcmp.run(kw.pop("problem", None) or lr_a(), spec, backend=backend,
                              threads=1, max_time=None, **kw)


def test_unknown_method_and_bad_options_are_refused_with_the_allowed_values():
    with pytest.raises(ValueError, match=r"method must be one of \['BFGS', 'CG'"):
        optcmp.scipy_minimize("COBYLA")
    with pytest.raises(ValueError, match="'maxiter' is optcmp's budget"):
        optcmp.scipy_minimize("BFGS", options={"maxiter": 5})
    with pytest.raises(ValueError, match="options must be a mapping"):
        optcmp.scipy_minimize("BFGS", options=3)


def test_method_names_are_canonicalized_and_labelled():
    spec = optcmp.scipy_minimize("newton-cg")
    assert spec.hyperparameters["method"] == "Newton-CG"
    assert spec.label == "scipy_minimize(Newton-CG)"


def test_options_switch_scipys_tests_off_unless_asked_and_add_the_users():
    decl = optimizer_info("scipy_minimize").native("scipy")
    h = optcmp.scipy_minimize("Nelder-Mead", options={"adaptive": True}).hyperparameters
    assert decl.options(h) == {"xatol": 0.0, "fatol": 0.0, "adaptive": True}
    assert decl.planned(h) == {"method": "Nelder-Mead", "derivatives": "none",
                               "max_iter_option": "maxiter", "max_evals_option": "maxfev"}
    h2 = optcmp.scipy_minimize("BFGS", tolerances="scipy").hyperparameters
    assert decl.options(h2) == {}
    assert set(METHODS) >= {"BFGS", "CG", "Newton-CG", "trust-ncg", "trust-krylov",
                            "trust-exact", "TNC", "Nelder-Mead", "Powell", "L-BFGS-B", "SLSQP"}


def test_numpy_skips_hessian_methods_with_the_reason():
    r = _run(optcmp.scipy_minimize("trust-ncg"), max_iter=10)
    assert r.status == "skipped"
    assert "needs Hessian-vector products" in r.message and "run it on torch" in r.message


def test_scipy_defaults_stop_early_and_are_not_converged():
    """LR-C with scipy's own tests: L-BFGS-B says success at f = 0.915 (f* = 0.0103)."""
    r = _run(optcmp.scipy_minimize("L-BFGS-B", tolerances="scipy"), problem=lr_c(), tol=1e-10,
             max_iter=500)
    # 7 iterations under OpenBLAS Haswell and SkylakeX, 12 under Sandybridge (cond ~7e14: the
    # kernel's rounding decides where the line search gives up); the same objective under each
    assert (r.status, r.success) == ("stalled", False) and 5 <= r.nit <= 20
    assert "scipy success=True" in r.message and f"{r.fun:.3f}" == "0.915"
    off = _run(optcmp.scipy_minimize("L-BFGS-B"), problem=lr_c(), tol=1e-10, max_iter=500)
    assert off.status == "converged"


@needs_torch
def test_hessian_vector_products_are_exact_for_least_squares():
    """H v from torch's double backward equals 2/N X^T X v (LR-A, intercept column)."""
    from optcmp.frameworks import get_backend
    from optcmp.frameworks.scipy import hvp_function

    p = lr_a()
    be = get_backend("torch")
    data = be.place(p.train_data)
    hvp = hvp_function(be, p, data, "trust-ncg")
    A = p.train_data["A"]  # the design matrix with its intercept column
    v = np.array([1.0, -2.0, 0.5, 3.0])
    hv = hvp(np.zeros(4), v)
    np.testing.assert_allclose(hv, 2.0 / len(A) * A.T @ (A @ v), rtol=1e-12)
    # symmetric: u^T H v == v^T H u
    u = np.array([0.3, 0.1, -1.0, 2.0])
    assert abs(u @ hv - v @ hvp(np.zeros(4), u)) <= 1e-12 * abs(u @ hv)


def test_spec_with_options_and_schedule_survives_json():
    import json

    from optcmp.optimizers import OptimizerSpec

    for spec in (optcmp.scipy_minimize("BFGS", options={"c2": 0.5}),
                 optcmp.adam(schedule="cosine(total_steps=10, min_factor=0.1)", clip_norm=1.0)):
        back = OptimizerSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
        assert back == spec and hash(back) == hash(spec)


def test_options_are_checked_against_the_methods_own_documentation():
    """A misspelt option or a string for a number is refused when the spec is built."""
    assert dict(optcmp.scipy_minimize("BFGS", options={"gtol": 1e-3}).hyperparameters[
        "options"]) == {"gtol": 1e-3}
    with pytest.raises(ValueError, match=r"gtol='abc': scipy's BFGS takes float, not a string"):
        optcmp.scipy_minimize("BFGS", options={"gtol": "abc"})
    with pytest.raises(ValueError, match=r"'gtoll' is not an option of scipy's BFGS \(it takes: "
                                          r"c1, c2, .*gtol"):
        optcmp.scipy_minimize("BFGS", options={"gtoll": 1e-3})
    optcmp.scipy_minimize("trust-krylov", options={"gtol": 1e-8, "inexact": False})
