"""MLS, matrix least squares: f(W) = 0.5/N ||X W - Y||_F^2 with W of shape (in, out) = (16, 32).

N = 256, X with singular values log-spaced over a factor 10, Y = X W_true + 0.1 noise,
W0 = 0.1 N(0, 1), seed 0 (``make_mls`` of the field cases). With ``bias=True`` the model is
``X W + b`` (b of 32 entries, starting at 0): a 1-D parameter beside the matrix.
"""

from __future__ import annotations

import numpy as np

import optcmp


def mls(bias: bool = False, seed: int = 0) -> optcmp.problems.FunctionProblem:
    """The MLS problem, parameters ``{"W": (16, 32)}`` (and ``"b"``), optimum by lstsq."""
    rng = np.random.default_rng(seed)
    n, m, k = 256, 16, 32
    u, _ = np.linalg.qr(rng.standard_normal((n, m)))
    v, _ = np.linalg.qr(rng.standard_normal((m, m)))
    x = (u * (np.logspace(0, -1, m) * np.sqrt(n))) @ v.T
    y = x @ rng.standard_normal((m, k)) + 0.1 * rng.standard_normal((n, k))
    w0 = 0.1 * rng.standard_normal((m, k))
    design = np.hstack([x, np.ones((n, 1))]) if bias else x
    best = np.linalg.lstsq(design, y, rcond=None)[0]
    fstar = 0.5 / n * float(np.sum((design @ best - y) ** 2))
    x0 = {"W": w0, "b": np.zeros(k)} if bias else {"W": w0}

    def objective(ops, p, data):
        r = ops.matmul(data["X"], p["W"]) - data["Y"]
        if "b" in p:
            r = r + p["b"]
        return 0.5 * ops.mean(ops.sum(r * r, axis=1))

    def grad(p, data):
        r = data["X"] @ p["W"] - data["Y"] + p.get("b", 0.0)
        out = {"W": data["X"].T @ r / len(r)}
        if "b" in p:
            out["b"] = r.mean(axis=0)
        return out

    return optcmp.problems.from_function(objective, x0, {"X": x, "Y": y}, grad=grad,
                                         optimum=fstar, name="MLS" + ("+b" if bias else ""))
