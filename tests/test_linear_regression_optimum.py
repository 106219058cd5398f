"""LinearRegression's optimum on large data: a Householder QR by row chunks, no copy of A.

The size threshold is lowered here so that 50,000 rows take the chunked path, in chunks of a
few hundred rows (several chunks and a shorter last one). Below the threshold the optimum is
``numpy.linalg.lstsq``'s, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import lr_recipe

from optcmp.problems import LinearRegression, _lstsq

N = 50_000


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """50,000 rows of a few columns are "large"; chunks of 2**15 bytes."""
    monkeypatch.setattr(_lstsq, "LSTSQ_COPY_MAX_BYTES", 2**20)
    monkeypatch.setattr(_lstsq, "CHUNK_BYTES", 2**15)


def _lstsq_optimum(p: LinearRegression, equilibrate: bool = False) -> tuple[np.ndarray, float]:
    """W and f* from ``numpy.linalg.lstsq`` on the whole data (on columns scaled to unit
    norm with ``equilibrate``, then scaled back)."""
    A, y = p.train_data["A"], p.train_data["y"]
    scale = np.linalg.norm(A, axis=0) if equilibrate else np.ones(A.shape[1])
    W, *_ = np.linalg.lstsq(A / scale, y, rcond=None)
    W = (W.T / scale).T
    r = A @ W - y
    return W.reshape(-1), float(np.vdot(r, r)) / r.size


def _check_blocked(p: LinearRegression, W: np.ndarray, fun: float) -> None:
    opt = p.optimum()
    rows = _lstsq.chunk_rows(p.train_data["A"].shape[1] + p.n_targets)
    assert rows < N / 10 and N % rows != 0  # several chunks, the last one shorter
    assert opt.method == f"blocked Householder QR (chunks of {rows:,} rows)"
    assert opt.time is not None and opt.time >= 0.0 and opt.kind == "direct"
    np.testing.assert_allclose(opt.x, W, rtol=1e-12, atol=0.0)
    assert opt.fun == pytest.approx(fun, rel=1e-12)


def test_chunked_optimum_equals_lstsq_on_the_default_data(small_threshold) -> None:
    p = LinearRegression(n_samples=N, seed=3)
    _check_blocked(p, *_lstsq_optimum(p))


def test_chunked_optimum_equals_lstsq_with_two_targets(small_threshold) -> None:
    rng = np.random.default_rng(4)
    X = rng.poisson((30.0, 5.0, 2.0), size=(N, 3)).astype(float)
    Y = X @ rng.uniform(-3, 3, (3, 2)) + [4.0, -1.0] + rng.standard_normal((N, 2))
    p = LinearRegression.from_arrays(X, Y)
    assert p.optimum().x.shape == (8,)
    _check_blocked(p, *_lstsq_optimum(p))


@pytest.mark.parametrize("scales, offsets, w", [
    ([1e-4, 1.0, 1e4, 1e6], [0, 0, 0, 0], [2e4, -3.0, 5e-4, 7e-6]),
    ([1.0, 1e3, 1e6], [0, 0, 5e6], [2.0, -3e-3, 5e-7]),  # an offset column, like LR-C
], ids=["scaled", "scaled-offset"])
def test_chunked_optimum_with_badly_scaled_columns(small_threshold, scales, offsets, w) -> None:
    X, y = lr_recipe(N, scales, offsets, w, 5.0, 0.1, seed=5)
    p = LinearRegression.from_arrays(X, y)
    W, fun = _lstsq_optimum(p, equilibrate=True)
    # the QR's accuracy does not depend on the columns' units: W to ~1e-12 per coefficient
    _check_blocked(p, W, fun)
    assert p.optimum().fun == pytest.approx(_lstsq_optimum(p)[1], rel=1e-12)


def test_columns_scaled_beyond_lstsqs_cutoff_keep_their_coefficients(small_threshold) -> None:
    # cond(A) ~ 1e12 > 1 / (eps * n): lstsq's default cutoff would drop a direction, although the
    # columns are independent; the chunked solve keeps them all and reaches the true minimum
    X, y = lr_recipe(N, [1e-6, 1e3, 1e6, 1e-3], [0, 0, 0, 0], [1e6, 1e-3, -1e-6, 1e3], 2.0,
                     0.1, seed=6)
    p = LinearRegression.from_arrays(X, y)
    _check_blocked(p, *_lstsq_optimum(p, equilibrate=True))
    assert p.optimum().fun <= _lstsq_optimum(p)[1] * (1 + 1e-12)


@pytest.mark.parametrize("column", ["twice-another", "zeros"])
def test_rank_deficient_data_give_the_minimum_norm_solution(small_threshold, column) -> None:
    rng = np.random.default_rng(7)
    X = rng.poisson((30.0, 5.0, 2.0, 1.0), size=(N, 4)).astype(float)
    X[:, 3] = 2.0 * X[:, 1] if column == "twice-another" else 0.0
    y = X[:, :3] @ [1.5, -2.0, 0.5] + 4.0 + rng.standard_normal(N)
    p = LinearRegression.from_arrays(X, y)
    opt = p.optimum()
    assert opt.method.startswith("blocked Householder QR") and "rank 4 of 5" in opt.method
    W, fun = _lstsq_optimum(p)  # lstsq's minimum-norm solution
    np.testing.assert_allclose(opt.x, W, rtol=1e-12, atol=1e-12)
    assert opt.fun == pytest.approx(fun, rel=1e-12)


def test_below_the_threshold_the_optimum_is_lstsqs_bit_for_bit() -> None:
    p = LinearRegression(n_samples=20_000, seed=1)
    A, y = p.train_data["A"], p.train_data["y"]
    assert not _lstsq.use_blocked(A, y)
    W, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = np.ascontiguousarray(A) @ W - y  # row-major products, whatever layout the problem holds
    opt = p.optimum()
    assert opt.method == "numpy.linalg.lstsq"
    assert np.array_equal(opt.x, W) and opt.fun == float(np.vdot(r, r)) / r.size


def test_threshold_counts_the_bytes_lstsq_would_copy(monkeypatch) -> None:
    A, y = np.ones((1000, 4)), np.ones(1000)
    monkeypatch.setattr(_lstsq, "LSTSQ_COPY_MAX_BYTES", A.nbytes + y.nbytes)
    assert not _lstsq.use_blocked(A, y)  # at the threshold: lstsq
    monkeypatch.setattr(_lstsq, "LSTSQ_COPY_MAX_BYTES", A.nbytes + y.nbytes - 1)
    assert _lstsq.use_blocked(A, y)
    assert not _lstsq.use_blocked(A[:39], y[:39])  # fewer than 8 rows per column of [A | y]


def test_wide_data_above_the_threshold_keep_lstsq(small_threshold) -> None:
    rng = np.random.default_rng(8)
    X, y = rng.standard_normal((300, 1000)), rng.standard_normal(300)
    p = LinearRegression.from_arrays(X, y)  # 2.4 MB, but more columns than rows
    opt = p.optimum()
    assert opt.method == "numpy.linalg.lstsq" and opt.fun < 1e-20
