"""Shared fixtures: the linear-regression test problems (LR-A, LR-B, LR-C, LR-S) and backend
availability."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

from optcmp.problems import LinearRegression

# Pin TensorFlow's pools to one thread before any test starts its runtime (it fixes them then,
# process-wide): optcmp's default thread count, so that float paths that depend on the
# reduction order give the same result whatever the order of the tests.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ["OPTCMP_CONTENTION_MARGIN"] = "inf"  # see _quiet_contention

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TF = importlib.util.find_spec("tensorflow") is not None

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")
needs_tf = pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")


def _cuda_available() -> bool:
    if not HAS_TORCH:
        return False
    import torch

    return bool(torch.cuda.is_available())


class _NoCuda:
    """True when there is no CUDA device; evaluated when a marked test runs, so loading this
    conftest imports no torch."""

    def __bool__(self) -> bool:
        return not _cuda_available()


needs_cuda = pytest.mark.skipif(_NoCuda(), reason="no CUDA device")


@pytest.fixture(autouse=True)
def _quiet_contention(request, monkeypatch):
    """Tests never depend on the host's load: the contention flag (wall time above CPU time,
    :func:`optcmp.timing.contended`) is off in every test, worker processes included
    (``OPTCMP_CONTENTION_MARGIN=inf``, set below), except those marked ``real_contention``,
    which check the flag itself with hand-made clocks."""
    if request.node.get_closest_marker("real_contention") is not None:
        monkeypatch.delenv("OPTCMP_CONTENTION_MARGIN", raising=False)
    yield


def lr_recipe(n: int, scales, offsets, w, b: float, sigma: float, seed: int = 0):
    """The test problems' data: X ~ N(0,1) scaled/offset per column, y = X w + b + sigma*noise."""
    rng = np.random.default_rng(seed)
    d = len(w)
    X = rng.standard_normal((n, d)) * np.asarray(scales, float) + np.asarray(offsets, float)
    noise = rng.standard_normal(n)
    y = X @ np.asarray(w, float) + b + sigma * noise
    return X, y


def lr_a() -> LinearRegression:
    X, y = lr_recipe(1000, [1, 1, 1], [0, 0, 0], [1.5, -2.0, 0.5], 0.3, 0.1)
    return LinearRegression.from_arrays(X, y, name="LR-A")


def lr_b() -> LinearRegression:
    X, y = lr_recipe(10_000, [1, 100, 10_000], [0, 0, 0], [2.0, -0.03, 0.0005], 5.0, 0.1)
    return LinearRegression.from_arrays(X, y, name="LR-B")


def lr_c() -> LinearRegression:
    X, y = lr_recipe(10_000, [1, 1e3, 1e6], [0, 0, 5e6], [2.0, -3e-3, 5e-7], 5.0, 0.1)
    return LinearRegression.from_arrays(X, y, name="LR-C")


def lr_s(n: int) -> LinearRegression:
    X, y = lr_recipe(n, [1, 1, 1], [0, 0, 0], [1.5, -2.0, 0.5], 0.3, 0.1)
    return LinearRegression.from_arrays(X, y, name=f"LR-S({n})")


@pytest.fixture
def problem_a() -> LinearRegression:
    return lr_a()
