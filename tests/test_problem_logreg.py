"""LogisticRegression: objective, gradient, curvature, optimum, Lipschitz constant, constructors."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.problems import LogisticRegression, problem_from_spec
from tests.conftest import HAS_TF, HAS_TORCH

FRAMEWORKS = [b for b, ok in (("torch", HAS_TORCH), ("tensorflow", HAS_TF)) if ok]


@pytest.fixture(scope="module")
def small():
    return LogisticRegression(n_samples=500, n_features=4, l2=1e-2, seed=3)


def test_default_size_and_spec_roundtrip():
    p = LogisticRegression(n_samples=2000, n_features=5, seed=1)
    assert (p.n_samples, p.n_params) == (2000, 6)
    assert problem_from_spec(p.spec()).spec() == p.spec()
    assert set(np.unique(p.train_data["y"])) == {0.0, 1.0}
    assert LogisticRegression.__init__.__defaults__[:2] == (100_000, 20)


def test_value_by_hand(small):
    # at x = 0: mean log(1 + e^0) = log 2
    f, g = small.value_and_grad(np.zeros(small.n_params), small.train_data)
    assert f == pytest.approx(np.log(2.0), rel=1e-15)
    y = small.train_data["y"]
    np.testing.assert_allclose(g, small.train_data["A"].T @ (0.5 - y) / y.size, rtol=1e-14)


def test_gradient_matches_finite_differences(small):
    x = np.random.default_rng(0).standard_normal(small.n_params)
    f, g = small.value_and_grad(x, small.train_data)
    h = 1e-6
    fd = np.array([(small.fun64(x + h * e) - small.fun64(x - h * e)) / (2 * h)
                   for e in np.eye(small.n_params)])
    np.testing.assert_allclose(g, fd, rtol=1e-7, atol=1e-9)


def test_stable_for_large_margins():
    X = np.array([[1000.0], [-1000.0]])
    p = LogisticRegression.from_arrays(X, [1, 0], l2=0.0)
    f, g = p.value_and_grad(np.array([1.0, 0.0]), p.train_data)
    assert np.isfinite(f) and f < 1e-300 and np.all(np.isfinite(g))


@pytest.mark.skipif(not FRAMEWORKS, reason="no framework installed")
def test_autodiff_matches_the_analytic_gradient(small):
    from optcmp.frameworks import get_backend

    x = np.random.default_rng(1).standard_normal(small.n_params)
    f0, g0 = small.value_and_grad(x, small.train_data)
    for b in FRAMEWORKS:
        be = get_backend(b, dtype="float64")
        f, g = be.value_and_grad(small)(be.asarray(x), be.place(small.train_data))
        assert float(be.to_numpy(f)) == pytest.approx(f0, rel=1e-12)
        np.testing.assert_allclose(be.to_numpy(g), g0, rtol=1e-10, atol=1e-14)


def test_hess_diag_is_the_hessian_diagonal(small):
    from optcmp.frameworks.numpy.ops import ops

    x = np.random.default_rng(2).standard_normal(small.n_params)
    A = small.train_data["A"]
    s = 1.0 / (1.0 + np.exp(-(A @ x)))
    H = (A * (s * (1 - s))[:, None]).T @ A / A.shape[0]
    H[np.arange(4), np.arange(4)] += small.l2
    np.testing.assert_allclose(small.hess_diag(ops, x, small.train_data), np.diag(H), rtol=1e-12)


def test_optimum_is_a_tight_solve(small):
    opt = small.optimum()
    assert opt.kind == "estimated" and "Newton" in opt.method
    f, g = small.value_and_grad(opt.x, small.train_data)
    assert np.max(np.abs(g)) <= 1e-13
    from optcmp._scipy import optimize

    r = optimize().minimize(lambda x: small.value_and_grad(x, small.train_data),
                            np.zeros(small.n_params), jac=True, method="L-BFGS-B",
                            options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 10_000})
    assert r.fun >= opt.fun - 1e-15 and r.fun - opt.fun < 1e-13


def test_lipschitz_bounds_the_hessian(small):
    A = small.train_data["A"]
    L = small.lipschitz()
    assert L == pytest.approx(np.linalg.norm(A, 2) ** 2 / (4 * A.shape[0]) + small.l2, rel=1e-12)
    x = small.optimum().x
    s = 1.0 / (1.0 + np.exp(-(A @ x)))
    H = (A * (s * (1 - s))[:, None]).T @ A / A.shape[0] + small.l2 * np.diag([1, 1, 1, 1, 0])
    assert np.linalg.eigvalsh(H)[-1] <= L


def test_gd_auto_step_converges_and_reports_accuracy(small):
    r = optcmp.run(small, optcmp.gd(learning_rate="auto"), tol=1e-4, max_iter=20_000,
                       threads=1)
    assert r.status == "converged"
    acc = r.metrics["accuracy"]
    z = small.train_data["A"] @ r.x
    assert acc == pytest.approx(np.mean((z > 0) == (small.train_data["y"] == 1)))
    assert 0.5 < acc <= 1.0


def test_from_arrays_frame_csv_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 2))
    y = (X[:, 0] > 0).astype(int)
    a = LogisticRegression.from_arrays(X, y, l2=0.1)
    df = pd.DataFrame({"u": X[:, 0], "v": X[:, 1], "label": y})
    b = LogisticRegression.from_frame(df, ["u", "v"], "label", l2=0.1)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False, float_format="%.17g")
    c = LogisticRegression.from_csv(path, l2=0.1)
    x = np.array([0.3, -0.2, 0.1])
    fa = a.fun64(x)
    assert b.fun64(x) == fa and c.fun64(x) == pytest.approx(fa, rel=1e-15)
    assert c.name == "d" and c.spec()["source"].startswith("csv:")


@pytest.mark.parametrize("y, match", [([0, 2, 1], "row 1 holds 2.0"), ([0, np.nan, 1], "NaN"),
                                      ([[0, 1, 1]], "shape")])
def test_bad_labels_are_named(y, match):
    with pytest.raises(ValueError, match=match):
        LogisticRegression.from_arrays(np.zeros((3, 1)), y)


@pytest.mark.parametrize("kwargs", [{"n_samples": 0}, {"n_features": -1}, {"l2": -1.0},
                                    {"l2": float("nan")}, {"seed": -1}])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        LogisticRegression(**{"n_samples": 10, **kwargs})


def test_user_data_cannot_be_redrawn():
    p = LogisticRegression.from_arrays(np.zeros((4, 1)), [0, 1, 0, 1])
    with pytest.raises(NotImplementedError, match="your own data"):
        p.with_seed(1)
    assert LogisticRegression(n_samples=10).with_seed(4).spec()["seed"] == 4


def test_one_class_only_is_refused_where_the_loss_has_no_minimizer(tmp_path):
    # all labels 1 used to be accepted; the reference solve then "found" f* = 7.8e-14
    # (the intercept running off to infinity) and runs "converged" to it
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match=r"only label 1 \(6 rows\): with an unpenalized intercept"):
        LogisticRegression.from_arrays(X, np.ones(6))
    with pytest.raises(ValueError, match="only label 0 .*l2=0"):
        LogisticRegression.from_arrays(X, np.zeros(6), fit_intercept=False, l2=0.0)
    path = tmp_path / "one.csv"
    path.write_text("a,b,label\n1,2,1\n3,4,1\n")
    with pytest.raises(ValueError, match="only label 1"):
        LogisticRegression.from_csv(path, target="label")
    # penalized coefficients and no intercept: a unique minimizer exists, accepted
    p = LogisticRegression.from_arrays(X, np.ones(6), fit_intercept=False, l2=1e-2)
    assert p.n_samples == 6


@pytest.mark.parametrize("build", ["from_arrays", "from_frame"])
def test_a_misspelled_keyword_is_refused_naming_the_allowed_ones(build):
    """``from_arrays(X, y, fit_intercep=False)`` was accepted and kept the intercept: it is
    refused, naming ``fit_intercept``."""
    import pandas as pd

    X = np.random.default_rng(0).normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(float)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y})
    with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) \['fit_intercep'\] "
                                        r"\(did you mean 'fit_intercept'\?\); it takes \[.*'l2'"):
        if build == "from_arrays":
            LogisticRegression.from_arrays(X, y, fit_intercep=False)
        else:
            LogisticRegression.from_frame(df, ["a", "b"], "y", fit_intercep=False)
    assert LogisticRegression.from_arrays(X, y, fit_intercept=False).n_params == 2


def test_from_frame_refuses_a_categorical_feature():
    """A categorical column with integer categories was read as numbers by the logistic
    ``from_frame``: it is refused as the linear one refuses it."""
    import pandas as pd

    df = pd.DataFrame({"a": pd.Categorical([1, 2, 3, 1] * 10), "b": np.arange(40.0),
                       "y": [0.0, 1.0] * 20})
    with pytest.raises(ValueError, match="column 'a' is categorical"):
        LogisticRegression.from_frame(df, ["a", "b"], "y")
