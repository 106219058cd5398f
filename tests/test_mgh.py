"""The Moré-Garbow-Hillstrom set: values at the standard starts, the paper's minima, gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import optcmp
from optcmp.problems.mgh import MGHProblem
from optcmp.problems.mgh_functions import MGH, MGH_NAMES
from tests.conftest import HAS_TF, HAS_TORCH

FRAMEWORKS = [b for b, ok in (("torch", HAS_TORCH), ("tensorflow", HAS_TF)) if ok]

# f(x0) at the standard start, 6 significant digits. The paper prints the starting points, not
# f(x0): these are exact by hand where marked (=), else the values of the literature's tables
# (e.g. Jennrich-Sampson 4171.31, Meyer 1.69361e9), checked against closed forms where they exist.
F0 = {
    1: 24.2,  # = 4.84 * 5
    2: 400.5,  # = 19.5^2 + 4.5^2
    3: 1.13526,  # = 1 + (e^-1 - 1e-4)^2
    4: 9.99998e11,  # = (1e6 - 1)^2 + (1 - 2e-6)^2 + 1
    5: 14.2031,  # = 14.203125
    6: 4171.31, 7: 2500.0,  # = 50^2
    8: 41.6817, 9: 3.88811e-6, 10: 1.69361e9, 11: 12.1107, 12: 1031.15,
    13: 215.0,  # = 11^2 + 5 + 4 + 10 * 2^4 ... exactly 215
    14: 19192.0, 15: 5.31317e-3, 16: 7.92669e6, 17: 0.879026, 18: 0.77907, 19: 2.09342,
    20: 30.0,  # = 29 + 1 at x = 0
    21: 121.0,  # = 5 * 24.2
    22: 645.0,  # = 3 * 215
    23: 148032.565,  # = 1e-5 * 285 + 384.75^2
    24: 162.653, 25: 2198551.1625,  # = 3.85 + 38.5^2 + 1482.25^2
    26: 7.07576e-3, 27: 273.248,  # = 9 * 5.5^2 + (1 - 2^-10)^2
    28: 7.88519e-4, 29: 6.34168e-2,
    30: 21.0,  # = 8 * 1 + 2^2 + 3^2
    31: 360.0,  # = 10 * 6^2
    32: 50.0,  # = 10 * 1 + 10 * 2^2
    33: 8658670.0,  # = sum_{i=1}^{20} (55 i - 1)^2
    34: 4.068e6, 35: 3.86177e-2,
}

# Where the standard start leads a local least-squares solve to a minimum other than f* (the
# paper lists these too): Freudenstein-Roth 48.9842 (local), Brown almost-linear 1.
LOCAL = {2: 48.9842, 27: 1.0}


def _digits(v: float, ref: float, sig: int = 6) -> bool:
    """``v`` equals ``ref`` to ``ref``'s printed digits (truncated or rounded: one unit)."""
    if ref == 0.0:
        return abs(v) <= 1e-10
    unit = 10.0 ** (math.floor(math.log10(abs(ref))) - sig + 1)
    return abs(v - ref) <= unit


def test_the_suite_has_the_35_problems_of_the_paper():
    s = optcmp.suites.mgh()
    assert len(s) == 35 and [p.info.number for p in s] == list(range(1, 36))
    assert s.names[0] == "mgh01_rosenbrock" and s.names[-1] == "mgh35_chebyquad"
    assert len(MGH_NAMES) == 35
    dims = {p.info.number: (p.n, p.m) for p in s}
    assert dims[6] == (2, 10) and dims[19] == (11, 65) and dims[20] == (9, 31)
    assert dims[17] == (5, 33) and dims[35] == (8, 8) and dims[24] == (10, 20)


@pytest.mark.parametrize("k", sorted(MGH))
def test_value_at_the_standard_start(k):
    p = MGHProblem(k)
    f0 = p.fun64(p.init_params())
    assert _digits(f0, F0[k]), (p.name, f0, F0[k])


@pytest.mark.parametrize("k", sorted(MGH))
def test_minimum_value_matches_the_paper(k):
    """A tight Levenberg-Marquardt solve from the standard start reaches the printed minimum."""
    optimize = pytest.importorskip("scipy.optimize")
    from optcmp.frameworks.numpy.ops import ops

    p = MGHProblem(k)
    opt = p.optimum()
    assert opt is not None and opt.kind == "given"
    r = optimize.least_squares(lambda x: p.residuals(ops, x, p.train_data), p.init_params(),
                               method="lm", xtol=1e-15, ftol=1e-15, gtol=1e-15,
                               max_nfev=20_000)
    f = float(r.fun @ r.fun)
    if k == 26:  # trigonometric: f* = 0, the standard start leads to a local minimum
        assert 0.0 < f < 1e-4
        return
    assert _digits(f, LOCAL.get(k, opt.fun)), (p.name, f, opt.fun)


def test_printed_minima_of_other_sizes():
    assert MGHProblem("watson", n=6).optimum().fun == 2.28767e-3
    assert MGHProblem("watson", n=12).optimum().fun == 4.72238e-10
    assert MGHProblem("penalty1", n=4).optimum().fun == 2.24997e-5
    assert MGHProblem("penalty2", n=4).optimum().fun == 9.37629e-6
    assert MGHProblem("chebyquad", n=10, m=10).optimum().fun == 6.50395e-3
    assert MGHProblem("chebyquad", n=7, m=7).optimum().fun == 0.0
    assert MGHProblem("chebyquad", n=11, m=11).optimum() is None
    assert MGHProblem("linear_rank1", n=5, m=10).optimum().fun == pytest.approx(90 / 42)


@pytest.mark.parametrize("kwargs, match", [
    ({"problem": 36}, "1..35"), ({"problem": "nope"}, "unknown MGH problem"),
    ({"problem": 1, "n": 3}, "n = 2 only"), ({"problem": 21, "n": 7}, "even"),
    ({"problem": 22, "n": 6}, "multiple of 4"), ({"problem": 32, "n": 10, "m": 5}, "m must be"),
    ({"problem": 23, "n": 4, "m": 9}, "m = 5"), ({"problem": 20, "n": 40}, "2..31"),
    ({"problem": 1, "n": 0}, "positive"),
])
def test_bad_sizes_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MGHProblem(**kwargs)


def test_m_follows_a_given_n_where_it_must_be_at_least_n():
    # MGHProblem("chebyquad", n=10) used to fail with "m must be >= n, got n=10, m=8"
    cheb = MGHProblem("chebyquad", n=10)
    assert (cheb.n, cheb.m) == (10, 10) and cheb.optimum().fun == 6.50395e-3
    assert MGHProblem("chebyquad", n=7).m == 7 and MGHProblem("chebyquad").m == 8
    assert MGHProblem("linear_full_rank", n=30).m == 30
    lin = MGHProblem("linear_full_rank", n=5)
    assert lin.m == 20 and lin.optimum().fun == pytest.approx(20 - 5)  # f* = m - n
    assert MGHProblem("linear_full_rank", n=30, m=40).m == 40


def _points(p):
    x0 = p.init_params()
    rng = np.random.default_rng(p.info.number)
    return [x0, x0 + 0.1 * rng.standard_normal(p.n) * np.maximum(np.abs(x0), 0.1)]


@pytest.mark.parametrize("k", sorted(MGH))
def test_gradients_agree_with_finite_differences_and_across_backends(k):
    p = MGHProblem(k)
    for x in _points(p):
        f, g = p.value_and_grad(x, p.train_data)
        scale = max(np.max(np.abs(g)), 1e-300)
        # central differences, step relative to x: truncation and rounding ~1e-7 relative
        h = 1e-6 * np.maximum(np.abs(x), 1.0)
        fd = np.array([(p.fun64(x + hk * e) - p.fun64(x - hk * e)) / (2 * hk)
                       for hk, e in zip(h, np.eye(p.n))])
        np.testing.assert_allclose(fd, g, rtol=0, atol=2e-5 * scale + 1e-9 * abs(f),
                                   err_msg=f"{p.name}: finite differences")
        for b in FRAMEWORKS:
            from optcmp.frameworks import get_backend

            be = get_backend(b, dtype="float64")
            fb, gb = be.value_and_grad(p)(be.asarray(x), be.place(p.train_data))
            assert float(be.to_numpy(fb)) == pytest.approx(f, rel=1e-12, abs=1e-300)
            np.testing.assert_allclose(be.to_numpy(gb), g, rtol=0, atol=1e-10 * scale,
                                       err_msg=f"{p.name}: {b} autodiff vs numpy")


def test_rosenbrock_lbfgsb_on_three_backends_same_iterations():
    p = MGHProblem("rosenbrock")
    backends = ["numpy", *FRAMEWORKS]
    comp = optcmp.compare(p, [optcmp.lbfgs(impl="scipy")], backends=backends, progress=False,
                          stopping=optcmp.AbsoluteSuboptimality(1e-10) | optcmp.MaxIter(500))
    runs = comp.runs
    assert [r.backend for r in runs] == backends
    assert all(r.status == "converged" and r.fun <= 1e-10 for r in runs), comp.table()
    assert len({r.nit_to_target for r in runs}) == 1, [r.nit_to_target for r in runs]
    assert len({r.nfev_to_target for r in runs}) == 1


def test_lipschitz_estimate_is_the_hessian_norm_at_the_start():
    """gd's learning_rate='auto' on MGH uses ||Hessian(x0)||_2: Rosenbrock at (-1.2, 1) has the
    closed-form Hessian [[1330, 480], [480, 200]]; the linear full-rank function (32) the
    constant 2 J^T J with J = [I - 2/m 11^T; -2/m 11^T]."""
    rosen = np.linalg.eigvalsh(np.array([[1330.0, 480.0], [480.0, 200.0]]))[-1]
    assert MGHProblem("rosenbrock").lipschitz() == pytest.approx(rosen, rel=1e-6)
    p = MGHProblem(32)
    J = np.vstack([np.eye(p.n), np.zeros((p.m - p.n, p.n))]) - 2.0 / p.m
    assert p.lipschitz() == pytest.approx(np.linalg.eigvalsh(2 * J.T @ J)[-1], rel=1e-6)


def test_gd_auto_runs_on_mgh_with_the_estimated_step():
    p = MGHProblem(32)
    r = optcmp.run(p, optcmp.gd(), tol=1e-6, max_iter=100)
    assert r.status == "converged"
    assert r.hyperparameters["learning_rate"] == pytest.approx(1.0 / p.lipschitz(), rel=1e-15)
