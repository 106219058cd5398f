"""Shared fixtures: the linear-regression test problems (LR-A, LR-B, LR-C, LR-S) and backend
availability."""

from __future__ import annotations

import importlib.util
import os
import re
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import optcmp
from optcmp.problems import LinearRegression

# Pin TensorFlow's pools to one thread before any test starts its runtime (it fixes them then,
# process-wide): optcmp's default thread count, so that float paths that depend on the
# reduction order give the same result whatever the order of the tests.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ["OPTCMP_CONTENTION_MARGIN"] = "inf"  # see _quiet_contention

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TF = importlib.util.find_spec("tensorflow") is not None
HAS_JAX = importlib.util.find_spec("jax") is not None and importlib.util.find_spec("optax") is not None

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


@pytest.fixture
def made(monkeypatch):
    """The backend of every run, in order (their compile counters)."""
    from optcmp.engine import session as session_mod

    backends = []

    def recording(*args, **kwargs):
        backends.append(optcmp.get_backend(*args, **kwargs))
        return backends[-1]

    monkeypatch.setattr(session_mod, "get_backend", recording)
    return backends


#: The pinned versions the counts were measured with (``constraints/ci.txt``).
CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints" / "ci.txt"


def pinned_versions() -> dict[str, str]:
    """``distribution -> version`` of every ``name==version`` line of ``constraints/ci.txt``."""
    pins = {}
    if CONSTRAINTS.exists():
        for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)", line)
            if m:
                pins[m[1].lower().replace("_", "-")] = m[2]
    return pins


def _release(version: str) -> str:
    return version.split("+", 1)[0]  # "2.13.0+cpu" is torch 2.13.0


@pytest.fixture(autouse=True)
def _pinned_versions(request):
    """A test marked ``version_dependent("scipy", ...)`` asserts a value those distributions'
    versions decide (a line search, a framework's float32 kernels): it runs where the installed
    versions are the ones ``constraints/ci.txt`` pins, and is skipped, saying which differ,
    elsewhere."""
    marker = request.node.get_closest_marker("version_dependent")
    if marker is not None:
        pins, other = pinned_versions(), []
        for dist in marker.args:
            try:
                have = metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue  # the test's own importorskip says so
            want = pins.get(dist)
            if want is not None and _release(have) != _release(want):
                other.append(f"{dist} {have} (measured with {want})")
        if other:
            pytest.skip("value measured with the pinned versions of constraints/ci.txt; "
                        "installed: " + ", ".join(other))
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


def _mls_objective(ops, p, d):
    r = ops.matmul(d["X"], p["W"]) - d["Y"]
    return 0.5 * ops.sum(ops.mean(r * r, axis=0))


def _mls_grad(p, d):
    return {"W": d["X"].T @ (d["X"] @ p["W"] - d["Y"]) / d["X"].shape[0]}


def mls():
    """MLS, a matrix least-squares problem: f(W) = 0.5/N ||X W - Y||_F^2, W of shape (16, 32),
    N = 256, X's singular values log-spaced over a factor 10, Y = X W_true + 0.1 noise,
    W0 = 0.1 N(0, 1), seed 0; f* by lstsq: one matrix parameter, named "W"."""
    from optcmp.problems import from_function

    rng = np.random.default_rng(0)
    n, m, k = 256, 16, 32
    U, _ = np.linalg.qr(rng.standard_normal((n, m)))
    V, _ = np.linalg.qr(rng.standard_normal((m, m)))
    X = (U * (np.logspace(0, -1, m) * np.sqrt(n))) @ V.T
    Y = X @ rng.standard_normal((m, k)) + 0.1 * rng.standard_normal((n, k))
    W0 = 0.1 * rng.standard_normal((m, k))
    fstar = 0.5 / n * np.sum((X @ np.linalg.lstsq(X, Y, rcond=None)[0] - Y) ** 2)
    return from_function(_mls_objective, {"W": W0}, {"X": X, "Y": Y}, grad=_mls_grad,
                         optimum=float(fstar), name="MLS")


@pytest.fixture
def problem_a() -> LinearRegression:
    return lr_a()


#: A test slower than this (seconds of wall time on an idle 2-core machine) is marked ``slow``.
SLOW_SECONDS = 3.0
_UNMARKED_SLOW: list[tuple[float, str]] = []


def pytest_runtest_logreport(report):
    if (report.when == "call" and report.duration > SLOW_SECONDS
            and "slow" not in report.keywords):
        _UNMARKED_SLOW.append((report.duration, report.nodeid))


def pytest_terminal_summary(terminalreporter):
    """Lists the tests not marked ``slow`` that took longer than :data:`SLOW_SECONDS` here (a
    note for their authors, not a failure: on a loaded machine every test takes longer)."""
    if not _UNMARKED_SLOW:
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    tr = terminalreporter
    tr.section(f"over {SLOW_SECONDS:g} s and not marked slow (load average {load:.1f}; "
               "mark them @pytest.mark.slow if they are slow on an idle machine too)", sep="-")
    for seconds, nodeid in sorted(_UNMARKED_SLOW, reverse=True)[:15]:
        tr.write_line(f"{seconds:6.1f}s {nodeid}")
    if len(_UNMARKED_SLOW) > 15:
        tr.write_line(f"... and {len(_UNMARKED_SLOW) - 15} more")
