"""LinearRegression: math (gradient, optimum, curvature, L), default data, bring-your-own data."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import lr_a, lr_b, lr_c, lr_recipe, lr_s

from optcmp.frameworks.numpy.ops import ops as np_ops
from optcmp.problems import LinearRegression


def _fd_grad(p: LinearRegression, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central finite differences of the float64 objective."""
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h * max(1.0, abs(x[i]))
        g[i] = (p.fun64(x + e) - p.fun64(x - e)) / (2 * e[i])
    return g


def _multi() -> LinearRegression:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 3))
    Y = X @ rng.standard_normal((3, 2)) + [1.0, -2.0] + 0.1 * rng.standard_normal((200, 2))
    return LinearRegression.from_arrays(X, Y)


# ---------------------------------------------------------------------- math
@pytest.mark.parametrize("make", [lr_a, _multi], ids=["single", "two-targets"])
def test_gradient_matches_finite_differences(make) -> None:
    p = make()
    x = np.random.default_rng(1).standard_normal(p.n_params)
    f, g = p.value_and_grad(x, p.train_data)
    assert f == pytest.approx(p.fun64(x), rel=1e-15)
    np.testing.assert_allclose(g, _fd_grad(p, x), rtol=1e-7, atol=1e-8)


def test_objective_through_ops_equals_value_and_grad() -> None:
    for p in (lr_a(), _multi()):
        x = np.linspace(-1, 1, p.n_params)
        assert float(p.objective(np_ops, x, p.train_data)) == pytest.approx(
            p.value_and_grad(x, p.train_data)[0], rel=1e-14)


def test_objective_is_mse_by_hand() -> None:
    X = np.array([[1.0, 2.0], [3.0, 5.0], [0.0, -1.0]])
    y = np.array([1.0, 0.0, 2.0])
    p = LinearRegression.from_arrays(X, y)
    x = np.array([0.5, -1.0, 2.0])  # coef (2,), intercept
    r = X @ x[:2] + x[2] - y
    assert p.fun64(x) == pytest.approx(np.mean(r**2), rel=1e-15)
    assert p.layout.names == ("coef", "intercept")
    assert p.reduction == "mean"


@pytest.mark.parametrize("make, fstar", [(lr_a, 0.010104511467), (lr_b, 0.010319959216),
                                         (lr_c, 0.010319959216)], ids=["LR-A", "LR-B", "LR-C"])
def test_optimum_matches_lstsq_and_the_test_problems_fstar(make, fstar) -> None:
    p = make()
    opt = p.optimum()
    A = p.train_data["A"]
    w, *_ = np.linalg.lstsq(A, p.train_data["y"], rcond=None)
    np.testing.assert_allclose(opt.x, w, rtol=1e-10, atol=1e-12)
    assert opt.fun == pytest.approx(fstar, rel=1e-9)  # f* of the test problems' recipes
    assert opt.method == "numpy.linalg.lstsq" and opt.time >= 0.0
    # x* is a stationary point of the analytic gradient
    g = p.value_and_grad(opt.x, p.train_data)[1]
    assert np.linalg.norm(g) < 1e-8 * np.linalg.norm(p.value_and_grad(np.zeros(4), p.train_data)[1])


def test_f0_matches_the_test_problems_f0() -> None:
    for make, f0 in ((lr_a, 6.264749383), (lr_b, 63.678636587), (lr_c, 69.553199731)):
        p = make()
        assert p.fun64(p.init_params(0)) == pytest.approx(f0, rel=1e-9)


def test_lr_s_values() -> None:
    p = lr_s(100)
    assert p.optimum().fun == pytest.approx(0.0080971726, rel=1e-8)
    assert p.fun64(np.zeros(4)) == pytest.approx(6.6896, rel=1e-4)


@pytest.mark.parametrize("make", [lr_a, _multi], ids=["single", "two-targets"])
def test_hessian_diagonal_exact(make) -> None:
    p = make()
    A = p.train_data["A"]
    n, k = A.shape[0], p.n_targets
    H = np.kron(2.0 / (n * k) * A.T @ A, np.eye(k))  # Hessian of f in the packed layout
    hd = np.asarray(p.hess_diag(np_ops, np.zeros(p.n_params), p.train_data))
    np.testing.assert_allclose(hd, np.diag(H), rtol=1e-14)
    np.testing.assert_allclose(p.hess_diag_numpy(), np.diag(H), rtol=1e-14)
    assert p.hess_diag_is_constant
    # and the Hessian itself: f is quadratic, so grad differences are exact
    x, d = np.zeros(p.n_params), np.arange(1.0, p.n_params + 1)
    g0 = p.value_and_grad(x, p.train_data)[1]
    g1 = p.value_and_grad(x + d, p.train_data)[1]
    np.testing.assert_allclose(g1 - g0, H @ d, rtol=1e-10)


def test_lipschitz_constant() -> None:
    p = lr_a()
    A = p.train_data["A"]
    L = 2.0 / A.shape[0] * np.linalg.eigvalsh(A.T @ A)[-1]
    assert p.lipschitz() == pytest.approx(L, rel=1e-12)
    # lambda_max of the Hessian on the unscaled x = [1..5, 100, 200]
    x = np.array([1, 2, 3, 4, 5, 100, 200.0])
    no_b = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=False)
    with_b = LinearRegression.from_arrays(x[:, None], 2 * x)
    assert no_b.lipschitz() == pytest.approx(14_301.43, abs=0.01)
    assert with_b.lipschitz() == pytest.approx(14_301.995, abs=0.001)
    # two targets: the Hessian is (2/(n k)) A^T A kron I_k
    m = _multi()
    A = m.train_data["A"]
    assert m.lipschitz() == pytest.approx(2.0 / (A.shape[0] * 2) * np.linalg.eigvalsh(A.T @ A)[-1])


def test_lipschitz_bounds_the_gradient_change() -> None:
    p = lr_b()
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, z = rng.standard_normal((2, 4))
        gx = p.value_and_grad(x, p.train_data)[1]
        gz = p.value_and_grad(z, p.train_data)[1]
        assert np.linalg.norm(gx - gz) <= p.lipschitz() * np.linalg.norm(x - z) * (1 + 1e-12)


# ---------------------------------------------------------------------- default data
def test_default_data_story() -> None:
    p = LinearRegression(n_samples=20_000, seed=0)
    X = p.train_data["A"][:, :4]
    np.testing.assert_allclose(X.mean(axis=0), [30, 5, 2, 1], rtol=0.03)
    assert np.all(X == np.round(X)) and X.min() >= 0  # counts
    np.testing.assert_array_equal(p.train_data["A"][:, 4], 1.0)
    assert p.n_params == 5 and p.layout.shapes == ((4,), ())
    # the fit recovers the generating coefficients (noise 1, 20k rows)
    opt = p.optimum()
    np.testing.assert_allclose(opt.x[:4], p.true_coef, atol=0.02)
    assert opt.x[4] == pytest.approx(p.true_intercept, abs=0.3)
    assert opt.fun == pytest.approx(1.0, rel=0.03)  # noise variance
    assert p.spec() == {"problem": "linear_regression", "source": "generated", "n_samples": 20_000,
                        "n_features": 4, "noise": 1.0, "seed": 0, "fit_intercept": True,
                        "init": "zeros"}


def test_default_data_from_one_seed() -> None:
    a, b, c = LinearRegression(500, seed=1), LinearRegression(500, seed=1), LinearRegression(500, seed=2)
    np.testing.assert_array_equal(a.train_data["A"], b.train_data["A"])
    np.testing.assert_array_equal(a.train_data["y"], b.train_data["y"])
    assert not np.array_equal(a.train_data["y"], c.train_data["y"])
    assert LinearRegression(100, n_features=7).n_params == 8
    assert np.all(LinearRegression(100, noise=0.0).optimum().fun < 1e-20)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_samples": 0}, "n_samples must be a positive integer, got 0"),
    ({"n_samples": 2.5}, "n_samples must be a positive integer"),
    ({"n_features": 0}, "n_features must be a positive integer"),
    ({"noise": -1.0}, r"noise must be a finite number >= 0, got -1.0"),
    ({"noise": float("nan")}, "noise must be a finite number"),
    ({"noise": "loud"}, "noise must be a finite number >= 0, got 'loud'"),
    ({"init": "ones"}, "init must be 'zeros' or 'normal', got 'ones'"),
])
def test_default_data_bad_parameters(kwargs, match) -> None:
    kwargs.setdefault("n_samples", 10)
    with pytest.raises(ValueError, match=match):
        LinearRegression(**kwargs)


def test_init_normal_depends_on_seed() -> None:
    X, y = lr_recipe(50, [1, 1], [0, 0], [1.0, 2.0], 0.0, 0.1)
    p = LinearRegression.from_arrays(X, y, init="normal")
    np.testing.assert_array_equal(p.init_params(3), np.random.default_rng(3).standard_normal(3))
    assert not np.array_equal(p.init_params(3), p.init_params(4))
    np.testing.assert_array_equal(lr_a().init_params(7), np.zeros(4))


# ---------------------------------------------------------------------- y shapes
def test_targets_n_and_n1_are_the_same_problem() -> None:
    X, y = lr_recipe(300, [1, 2], [0, 1], [1.0, -1.0], 0.5, 0.1)
    p1 = LinearRegression.from_arrays(X, y)
    p2 = LinearRegression.from_arrays(X, y[:, None])
    assert p1.n_targets == p2.n_targets == 1
    assert p1.layout == p2.layout
    assert p2.train_data["y"].shape == (300,)  # never (n, 1) against (n,) predictions
    x = np.array([0.3, -0.2, 0.1])
    assert p1.fun64(x) == p2.fun64(x)
    # the loss is the per-sample mean, not a broadcast (n, n) mean
    r = X @ x[:2] + x[2] - y
    assert p2.fun64(x) == pytest.approx(np.mean(r**2), rel=1e-14)
    assert p1.optimum().fun == p2.optimum().fun


def test_multiple_targets_layout_and_loss() -> None:
    p = _multi()
    assert p.n_targets == 2 and p.n_params == 8
    assert p.layout.names == ("coef", "intercept") and p.layout.shapes == ((3, 2), (2,))
    x = np.arange(8.0) / 10
    parts = p.layout.unflatten(x)
    A = p.train_data["A"]
    pred = A[:, :3] @ parts["coef"] + parts["intercept"]
    assert p.fun64(x) == pytest.approx(np.mean((pred - p.train_data["y"]) ** 2), rel=1e-14)


# ---------------------------------------------------------------------- bad inputs
def _xy(n: int = 10, d: int = 2):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    return X, X.sum(axis=1)


def test_nan_and_inf_counted_and_located() -> None:
    X, y = _xy()
    X[3, 1] = np.nan
    X[5, 0] = np.inf
    with pytest.raises(ValueError, match=r"X contains 2 non-finite value\(s\) \(NaN or inf\); "
                                         r"first at row 3, column 1\b"):
        LinearRegression.from_arrays(X, y)
    with pytest.raises(ValueError, match=r"first at row 3, column 1 \('b'\)"):
        LinearRegression.from_arrays(X, y, feature_names=["a", "b"])
    X, y = _xy()
    y[7] = -np.inf
    with pytest.raises(ValueError, match=r"y contains 1 non-finite value\(s\).*first at row 7"):
        LinearRegression.from_arrays(X, y)


@pytest.mark.parametrize("X, y, match", [
    (np.ones((10, 2)), np.ones(9), "X has 10 rows but y has 9; they must match"),
    (np.ones((0, 2)), np.ones(0), "X has zero rows"),
    (np.ones((10, 2)), np.ones((1, 10)), "X has 10 rows but y has 1"),
    (np.ones(10), np.ones(10), r"X must be 2-D .* got shape \(10,\).*reshape\(-1, 1\)"),
    (np.ones((10, 2)), np.ones((10, 1, 1)), r"y must have shape \(n_samples,\) or \(n_samples, k\)"),
    (np.ones((10, 2)), np.ones((10, 0)), "y has zero target columns"),
    (np.array([["a", "b"]] * 10), np.ones(10), "X must be numeric; got dtype <U1"),
    ([[1.0, None]] * 10, np.ones(10), "X must be numeric; got dtype object"),
    (np.ones((10, 2)), np.array(["1"] * 10), "y must be numeric"),
    (np.ones((10, 2)) * 1j, np.ones(10), "X must be real-valued"),
])
def test_from_arrays_bad_inputs(X, y, match) -> None:
    with pytest.raises(ValueError, match=match):
        LinearRegression.from_arrays(X, y)


def test_zero_columns_without_intercept() -> None:
    with pytest.raises(ValueError, match="nothing to fit"):
        LinearRegression.from_arrays(np.ones((5, 0)), np.ones(5), fit_intercept=False)
    p = LinearRegression.from_arrays(np.ones((5, 0)), np.arange(5.0))  # intercept only
    assert p.optimum().x == pytest.approx([2.0])


# ---------------------------------------------------------------------- from_frame / from_csv
@pytest.fixture
def frame():
    pandas = pytest.importorskip("pandas")
    X, y = lr_recipe(40, [1, 3], [0, 2], [1.0, -0.5], 2.0, 0.1)
    return pandas.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": ["u"] * 40, "y": y,
                             "y2": 2 * y})


def test_from_frame_equals_from_arrays(frame) -> None:
    p = LinearRegression.from_frame(frame, features=["a", "b"], targets="y")
    q = LinearRegression.from_arrays(frame[["a", "b"]].to_numpy(), frame["y"].to_numpy())
    np.testing.assert_array_equal(p.train_data["A"], q.train_data["A"])
    np.testing.assert_array_equal(p.train_data["y"], q.train_data["y"])
    assert p.feature_names == ["a", "b"] and p.target_names == ["y"]
    one = LinearRegression.from_frame(frame, features=["a", "b"], targets=["y"])
    assert one.n_targets == 1 and one.train_data["y"].shape == (40,)
    two = LinearRegression.from_frame(frame, features=["a", "b"], targets=["y", "y2"])
    assert two.n_targets == 2 and two.train_data["y"].shape == (40, 2)


def test_from_frame_bad_columns(frame) -> None:
    with pytest.raises(KeyError, match=r"unknown column\(s\) \['zz'\]; available columns: "
                                       r"\['a', 'b', 'label', 'y', 'y2'\]"):
        LinearRegression.from_frame(frame, features=["a", "zz"], targets="y")
    with pytest.raises(ValueError, match=r"column 'label' is not numeric \(dtype .*\)"):
        LinearRegression.from_frame(frame, features=["a", "label"], targets="y")
    with pytest.raises(ValueError, match=r"column\(s\) \['a'\] are both features and targets"):
        LinearRegression.from_frame(frame, features=["a", "b"], targets=["a"])
    with pytest.raises(ValueError, match="features is empty"):
        LinearRegression.from_frame(frame, features=[], targets="y")
    f2 = frame.copy()
    f2.loc[4, "b"] = np.nan
    f2.loc[9, "b"] = np.nan
    with pytest.raises(ValueError, match=r"X contains 2 non-finite .* row 4, column 1 \('b'\)"):
        LinearRegression.from_frame(f2, features=["a", "b"], targets="y")


def test_from_frame_bool_and_nullable_columns(frame) -> None:
    pandas = pytest.importorskip("pandas")
    f = frame.copy()
    f["flag"] = np.arange(40) % 2 == 0
    p = LinearRegression.from_frame(f, features=["a", "flag"], targets="y")
    np.testing.assert_array_equal(p.train_data["A"][:4, 1], [1.0, 0.0, 1.0, 0.0])
    f["n"] = pandas.array([1, None] + [3] * 38, dtype="Int64")
    with pytest.raises(ValueError, match=r"X contains 1 non-finite .* row 1, column 1 \('n'\)"):
        LinearRegression.from_frame(f, features=["a", "n"], targets="y")


def _write(tmp_path, text: str):
    f = tmp_path / "data.csv"
    f.write_text(text)
    return f


def test_from_csv_equals_from_arrays(tmp_path, frame) -> None:
    f = tmp_path / "d.csv"
    frame.to_csv(f, index=False)
    p = LinearRegression.from_csv(f, features=["a", "b"], targets="y")
    q = LinearRegression.from_frame(frame, features=["a", "b"], targets="y")
    np.testing.assert_allclose(p.train_data["A"], q.train_data["A"], rtol=1e-15)
    np.testing.assert_allclose(p.train_data["y"], q.train_data["y"], rtol=1e-15)
    assert p.name == "d" and p.spec()["source"].startswith("csv:")
    # defaults: last column is the target, every other column a feature
    g = _write(tmp_path, "u,v,t\n1,2,3\n4,5,6.5\n7,8,10\n")
    r = LinearRegression.from_csv(g)
    assert r.feature_names == ["u", "v"] and r.target_names == ["t"]
    np.testing.assert_array_equal(r.train_data["y"], [3, 6.5, 10])


@pytest.mark.parametrize("text, kwargs, exc, match", [
    ("", {}, ValueError, "the file is empty; expected a header row"),
    ("a,b,y\n", {}, ValueError, "no data rows after the header"),
    ("a,b,y\n1,2,3\n4,5\n", {}, ValueError, r"line 3: 2 fields, the header has 3"),
    ("a,b,y\n1,2,3\n4,x,6\n", {}, ValueError, r"line 3: column 'b' is not numeric: it holds 'x'"),
    ("a,b,y\n1,2,3\n4,,6\n7,nan,1\n8,inf,2\n", {}, ValueError,
     r"3 missing or non-finite value\(s\) \(empty, NaN or inf\); first at line 3, column 'b'"),
    ("a,b,y\n1,2,3\n", {"features": ["a", "q"], "targets": "y"}, KeyError,
     r"unknown column\(s\) \['q'\]; available columns: \['a', 'b', 'y'\]"),
])
def test_from_csv_bad_files(tmp_path, text, kwargs, exc, match) -> None:
    f = _write(tmp_path, text)
    with pytest.raises(exc, match=match):
        LinearRegression.from_csv(f, **kwargs)


def test_from_csv_missing_file(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        LinearRegression.from_csv(tmp_path / "nope.csv")


def test_with_seed_keeps_drop_last():
    """``with_seed`` (a redrawn repetition) once dropped ``drop_last=True``: the redrawn
    problem drops the short last minibatch too, and only its data differ."""
    p = LinearRegression(n_samples=100, seed=0, drop_last=True)
    q = p.with_seed(5)
    assert q.drop_last is True
    assert q.spec() == {**p.spec(), "seed": 5}


@pytest.mark.parametrize("blocked", [False, True])
def test_the_column_major_design_matrix_gives_the_row_major_values_to_the_bit(blocked, monkeypatch):
    """The design matrix is held once, column-major: f*, its minimizer, the Lipschitz constant,
    the curvature and the data's fingerprint are those of the same data held row-major, bit for
    bit (the QR by row chunks too)."""
    from optcmp.fingerprint import data_fingerprint
    from optcmp.problems import _lstsq

    if blocked:
        monkeypatch.setattr(_lstsq, "LSTSQ_COPY_MAX_BYTES", 0)
    cols, rows = LinearRegression(n_samples=20_000), LinearRegression(n_samples=20_000)
    A = cols.train_data["A"]
    assert A.flags.f_contiguous and not A.flags.c_contiguous and not A.flags.writeable
    rows._data = {**rows._data, "A": np.ascontiguousarray(A)}
    assert ("blocked" in cols.optimum().method) is blocked
    assert cols.optimum().fun == rows.optimum().fun
    assert np.array_equal(cols.optimum().x, rows.optimum().x)
    assert cols.lipschitz() == rows.lipschitz()
    assert np.array_equal(cols.hess_diag_numpy(), rows.hess_diag_numpy())
    assert data_fingerprint(cols) == data_fingerprint(rows)


def test_the_float64_judge_sums_blocks_of_rows_as_value_and_grad_does():
    """fun64 computes the residual in blocks of SUM_ROWS rows (no array of the data's size)
    and gives value_and_grad's value to the bit, one target or several, with a last block
    shorter than the others."""
    from optcmp.frameworks import get_backend
    from optcmp.problems._scratch import work_arrays
    from optcmp.problems.linear_regression import SUM_ROWS

    rng = np.random.default_rng(0)
    for t in (1, 3):
        X = rng.standard_normal((2 * SUM_ROWS + 17, 4))
        Y = X @ rng.standard_normal((4, t)) + rng.standard_normal((len(X), t))
        p = LinearRegression.from_arrays(X, Y[:, 0] if t == 1 else Y)
        for _ in range(3):
            x = rng.standard_normal(p.n_params)
            assert p.fun64(x) == p.value_and_grad(x, p.train_data)[0]
            plain = float(p.objective(get_backend("numpy").ops, x, p.train_data))
            assert p.fun64(x) == pytest.approx(plain, rel=1e-12)
    kept = work_arrays((SUM_ROWS, 3), np.float64, 1)
    assert kept is not None and kept[0].shape == (SUM_ROWS, 3)
