"""Is a problem's gradient right? :func:`check_gradient` compares it with a reference.

At the start point **and** at perturbed points (a wrong term can vanish at the start), in
float64. The references and the error measure: see docs/problems.md, "Checking a gradient".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optcmp.frameworks.host import host_value_and_grad
from optcmp.frameworks.numpy.ops import ops as numpy_ops
from optcmp.problems.base import Problem

#: The references :func:`check_gradient` can compare with.
REFERENCES = ("central", "complex_step", "autodiff")

#: Default relative-error tolerance at each point.
DEFAULT_RTOL = 1e-6


class GradientError(ValueError):
    """A problem's gradient disagrees with the reference at a point (see ``check``)."""

    def __init__(self, message: str, check: GradientCheck) -> None:
        super().__init__(message)
        self.check = check


@dataclass
class GradientCheck:
    """What :func:`check_gradient` found: one entry of each list per point."""

    problem: str
    reference: str
    """One of :data:`REFERENCES`."""
    rtol: float
    labels: list[str] = field(default_factory=list)
    """``"x0"``, ``"perturbed point 1"``, ... (or ``"point 0"``, ... for given points)."""
    points: list[np.ndarray] = field(default_factory=list)
    """Each point (float64, flat), the relative error, the gradient and the reference there."""
    errors: list[float] = field(default_factory=list)
    gradients: list[np.ndarray] = field(default_factory=list)
    references: list[np.ndarray] = field(default_factory=list)
    components: list[list[int]] = field(default_factory=list)
    """At each point, the (at most 5) worst components whose error exceeds ``rtol``."""
    names: list[str] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        """Whether the relative error is at most ``rtol`` at every point."""
        return all(e <= self.rtol for e in self.errors)

    @property
    def failed(self) -> list[int]:
        """Indices of the points where the check failed."""
        return [i for i, e in enumerate(self.errors) if not e <= self.rtol]

    def table(self) -> str:
        """One line per point: label, relative error, verdict."""
        out = [f"gradient check of {self.problem!r} against a {self.reference} reference "
               f"(relative error <= {self.rtol:g}):"]
        for lab, x, e in zip(self.labels, self.points, self.errors):
            out.append(f"  {lab:<20} x = {_short(x):<40} relative error {e:.2e}  "
                       f"{'ok' if e <= self.rtol else 'WRONG'}")
        return "\n".join(out)

    def message(self) -> str:
        """Why the check failed (empty when it passed): the points and the components."""
        if self.ok:
            return ""
        parts = []
        for i in self.failed:
            comps = "; ".join(
                f"{self.names[j] if j < len(self.names) else f'x[{j}]'}: "
                f"{self.gradients[i][j]:.6g} vs {self.references[i][j]:.6g}"
                for j in self.components[i])
            parts.append(f"at {self.labels[i]} x = {_short(self.points[i])} the relative "
                         f"error is {self.errors[i]:.3g} > {self.rtol:g} (grad vs reference: "
                         f"{comps or 'non-finite values'})")
        good = [self.labels[i] for i, e in enumerate(self.errors) if e <= self.rtol]
        tail = (f"; it agrees at {', '.join(good)}, so a check there alone would not see it"
                if good else "")
        return (f"the gradient of problem {self.problem!r} disagrees with a {self.reference} "
                f"reference {'; '.join(parts)}{tail}")

    def __str__(self) -> str:
        return self.table()


def _short(x: np.ndarray, k: int = 4) -> str:
    """The first ``k`` entries of ``x``, for messages."""
    body = ", ".join(f"{v:.6g}" for v in x[:k])
    return f"[{body}{', ...' if x.size > k else ''}]"


def _central(problem: Problem, x: np.ndarray) -> np.ndarray:
    """Fourth-order central difference of ``problem.fun64`` at ``x``."""
    g = np.empty_like(x)
    for j in range(x.size):
        h = np.finfo(np.float64).eps ** 0.2 * max(1.0, abs(float(x[j])))
        f = []
        for s in (-2.0, -1.0, 1.0, 2.0):
            xs = x.copy()
            xs[j] += s * h
            f.append(problem.fun64(xs))
        g[j] = (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h)
    return g


def _complex_step(problem: Problem, x: np.ndarray) -> np.ndarray:
    """``Im f(x + i h e_j) / h`` with ``h = 1e-20``, the objective on the numpy ops."""
    h = 1e-20
    g = np.empty_like(x)
    data = problem.train_data
    for j in range(x.size):
        xc = x.astype(np.complex128)
        xc[j] += 1j * h
        try:
            val = problem.objective(numpy_ops, xc, data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"the objective of problem {problem.name!r} does not take complex "
                             f"input ({exc}); use reference='central'") from None
        g[j] = float(np.imag(val)) / h
    return g


def _points(problem: Problem, points: int | Sequence[Any], scale: float, seed: int
            ) -> tuple[list[str], list[np.ndarray]]:
    """The labels and points to check: x0 and perturbed points, or the points given."""
    n = problem.n_params
    if isinstance(points, (int, np.integer)) and not isinstance(points, bool):
        if points < 1:  # x0 alone: a wrong term that vanishes there passes
            raise ValueError(f"points must be >= 1 perturbed points (a wrong gradient term can "
                             f"vanish at x0) or a list of points, got {points!r}")
        x0 = np.asarray(problem.init_params(0), dtype=np.float64).reshape(-1)
        step = scale * max(1.0, float(np.max(np.abs(x0))))
        rng = np.random.default_rng(seed)
        pts = [x0] + [x0 + step * rng.standard_normal(n) for _ in range(int(points))]
        return ["x0"] + [f"perturbed point {i + 1}" for i in range(int(points))], pts
    if isinstance(points, (str, bytes)) or not isinstance(points, (Sequence, np.ndarray)):
        raise TypeError(f"points must be an int (perturbed points) or a list of points, got "
                        f"{type(points).__name__}")
    pts = [np.asarray(p, dtype=np.float64).reshape(-1) for p in points]
    bad = [i for i, p in enumerate(pts) if p.shape != (n,) or not np.all(np.isfinite(p))]
    if not pts or bad:
        raise ValueError(f"points must be a non-empty list of finite vectors of length {n}; "
                         f"point {bad[0] if bad else 0} is not")
    return [f"point {i}" for i in range(len(pts))], pts


def check_gradient(problem: Problem, points: int | Sequence[Any] = 3, *,
                   reference: str = "central", rtol: float = DEFAULT_RTOL, scale: float = 0.1,
                   seed: int = 0, raise_on_failure: bool = False) -> GradientCheck:
    """Compare a problem's numpy gradient with a reference at x0 and perturbed points.

    Parameters
    ----------
    problem : Problem
        Its :meth:`~optcmp.problems.base.Problem.value_and_grad` is checked, on the full data.
    points : int or list of array_like, default 3
        The number of perturbed points besides ``x0`` (at least 1), or the points themselves.
    reference : {"central", "complex_step", "autodiff"}, default "central"
    rtol : float, default 1e-6
    scale : float, default 0.1
        Size of the perturbations, relative to ``max(1, |x0|_inf)``.
    seed : int, default 0
    raise_on_failure : bool, default False
        Raise :class:`GradientError` on failure.

    Returns
    -------
    GradientCheck
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"check_gradient needs an optcmp Problem (e.g. from_function(...)), got "
                        f"{type(problem).__name__}")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    for what, v in (("rtol", rtol), ("scale", scale)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < np.inf):
            raise ValueError(f"{what} must be a positive finite float, got {v!r}")
    labels, pts = _points(problem, points, float(scale), int(seed))
    ref_fn = _reference(problem, reference)
    out = GradientCheck(problem.name, reference, float(rtol), labels, pts,
                        names=[problem.describe_param(j) for j in range(problem.n_params)])
    data = problem.train_data
    for x in pts:
        with np.errstate(all="ignore"):
            f, g = problem.value_and_grad(x.copy(), data)
            g = np.asarray(g, dtype=np.float64).reshape(-1)
            r = np.asarray(ref_fn(x.copy()), dtype=np.float64).reshape(-1)
            denom = max(float(np.linalg.norm(r)), 1e-6 * max(1.0, abs(float(f))))
            diff = np.abs(g - r)
            err = float(np.linalg.norm(g - r)) / denom
        out.errors.append(err if np.isfinite(err) else float("inf"))
        out.gradients.append(g)
        out.references.append(r)
        bad = np.flatnonzero(~(diff <= rtol * denom))
        out.components.append([int(j) for j in bad[np.argsort(-np.nan_to_num(
            diff[bad], nan=np.inf))][:5]])
    if raise_on_failure and not out.ok:
        raise GradientError(out.message(), out)
    return out


def _reference(problem: Problem, reference: str) -> Any:
    """The reference gradient as a function of ``x``."""
    if reference == "central":
        return lambda x: _central(problem, x)
    if reference == "complex_step":
        return lambda x: _complex_step(problem, x)
    host = host_value_and_grad(problem.objective)
    if host is None:
        raise ValueError("reference='autodiff' needs PyTorch or TensorFlow installed; use "
                         "reference='central'")
    data = problem.train_data
    return lambda x: host(x, data)[1]


__all__ = ["DEFAULT_RTOL", "REFERENCES", "GradientCheck", "GradientError", "check_gradient"]
