r"""The Moré-Garbow-Hillstrom function table: residuals, sizes, starts, constants and minima.

Each of the paper's 35 problems (see :mod:`optcmp.problems.mgh`) is one :class:`MGHInfo` row of
:data:`MGH`, its residuals :math:`f_i(x)` written once against the ops namespace.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Residuals = Callable[[Any, Any, dict[str, Any]], Any]


@dataclass(frozen=True)
class MGHInfo:
    """One problem of the set: its number, name, sizes, start, constants and known minimum.

    ``constants(n, m)`` default none, ``fstar(n, m)`` the paper's minimum (default 0),
    ``check(n, m)`` why a size is refused (default: never).
    """

    number: int
    name: str
    title: str
    n: int
    m: int
    residuals: Residuals
    x0: Callable[[int], np.ndarray]
    constants: Callable[[int, int], dict[str, np.ndarray]] = lambda n, m: {}
    fstar: Callable[[int, int], float | None] = lambda n, m: 0.0
    note: str = ""
    variable_n: bool = False
    variable_m: bool = False
    check: Callable[[int, int], str | None] = lambda n, m: None


def _v(*a: float) -> np.ndarray:
    """A float64 vector of the values."""
    return np.array(a, dtype=np.float64)


def _idx(m: int) -> np.ndarray:
    """``1, 2, ..., m`` as float64."""
    return np.arange(1, m + 1, dtype=np.float64)


def _zero(ops: Any, x: Any) -> Any:
    """A one-element zero on ``x``'s backend."""
    return x[:1] * 0.0


# ---------------------------------------------------------------------------- 1-10
def _rosenbrock(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([10.0 * (x[1] - x[0] ** 2), 1.0 - x[0]])


def _freudenstein_roth(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([-13.0 + x[0] + ((5.0 - x[1]) * x[1] - 2.0) * x[1],
                      -29.0 + x[0] + ((x[1] + 1.0) * x[1] - 14.0) * x[1]])


def _powell_badly_scaled(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([1e4 * x[0] * x[1] - 1.0, ops.exp(-x[0]) + ops.exp(-x[1]) - 1.0001])


def _brown_badly_scaled(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([x[0] - 1e6, x[1] - 2e-6, x[0] * x[1] - 2.0])


def _beale(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([1.5 - x[0] * (1.0 - x[1]), 2.25 - x[0] * (1.0 - x[1] ** 2),
                      2.625 - x[0] * (1.0 - x[1] ** 3)])


def _jennrich_sampson(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    i = c["i"]
    return 2.0 + 2.0 * i - (ops.exp(i * x[0]) + ops.exp(i * x[1]))


def _helical_valley(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    x1, x2, x3 = x[0:1], x[1:2], x[2:3]  # one-element arrays (ops.where wants arrays)
    theta = ops.atan(x2 / x1) / (2.0 * math.pi)
    theta = ops.where(x1 < 0.0, theta + 0.5, theta)
    return ops.concat([10.0 * (x3 - 10.0 * theta),
                       10.0 * (ops.sqrt(x1 * x1 + x2 * x2) - 1.0), x3])


def helical_value_and_grad(x: np.ndarray) -> tuple[float, np.ndarray]:
    """Analytic value and gradient of the helical valley (problem 7, not complex-analytic)."""
    x1, x2, x3 = (float(v) for v in x)
    theta = math.atan(x2 / x1) / (2.0 * math.pi) + (0.5 if x1 < 0 else 0.0)
    rho2 = x1 * x1 + x2 * x2
    rho = math.sqrt(rho2)
    r = np.array([10.0 * (x3 - 10.0 * theta), 10.0 * (rho - 1.0), x3])
    dth = np.array([-x2, x1]) / (2.0 * math.pi * rho2)
    J = np.array([[-100.0 * dth[0], -100.0 * dth[1], 10.0],
                  [10.0 * x1 / rho, 10.0 * x2 / rho, 0.0],
                  [0.0, 0.0, 1.0]])
    return float(r @ r), 2.0 * J.T @ r


_BARD_Y = _v(0.14, 0.18, 0.22, 0.25, 0.29, 0.32, 0.35, 0.39, 0.37, 0.58, 0.73, 0.96, 1.34,
             2.10, 4.39)


def _bard_constants(n: int, m: int) -> dict[str, np.ndarray]:
    u = _idx(15)
    v = 16.0 - u
    return {"y": _BARD_Y, "u": u, "v": v, "w": np.minimum(u, v)}


def _bard(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return c["y"] - (x[0] + c["u"] / (c["v"] * x[1] + c["w"] * x[2]))


_GAUSS_Y = _v(0.0009, 0.0044, 0.0175, 0.0540, 0.1295, 0.2420, 0.3521, 0.3989, 0.3521, 0.2420,
              0.1295, 0.0540, 0.0175, 0.0044, 0.0009)


def _gaussian(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    d = c["t"] - x[2]
    return x[0] * ops.exp(-x[1] * d * d / 2.0) - c["y"]


_MEYER_Y = _v(34780, 28610, 23650, 19630, 16370, 13720, 11540, 9744, 8261, 7030, 6005, 5147,
              4427, 3820, 3307, 2872)


def _meyer(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return x[0] * ops.exp(x[1] / (c["t"] + x[2])) - c["y"]


# ---------------------------------------------------------------------------- 11-20
def _gulf_constants(n: int, m: int) -> dict[str, np.ndarray]:
    t = _idx(m) / 100.0
    return {"t": t, "y": 25.0 + (-50.0 * np.log(t)) ** (2.0 / 3.0)}


def _gulf(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    d = c["y"] - x[1]
    ad = ops.sqrt(d * d)  # |d|, differentiable (and complex-step safe) away from 0
    return ops.exp(-ops.exp(x[2] * ops.log(ad)) / x[0]) - c["t"]


def _box3d(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]
    return (ops.exp(-t * x[0]) - ops.exp(-t * x[1])
            - x[2] * (ops.exp(-t) - ops.exp(-10.0 * t)))


def _powell_singular(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([x[0] + 10.0 * x[1], math.sqrt(5.0) * (x[2] - x[3]),
                      (x[1] - 2.0 * x[2]) ** 2, math.sqrt(10.0) * (x[0] - x[3]) ** 2])


def _wood(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.stack([10.0 * (x[1] - x[0] ** 2), 1.0 - x[0],
                      math.sqrt(90.0) * (x[3] - x[2] ** 2), 1.0 - x[2],
                      math.sqrt(10.0) * (x[1] + x[3] - 2.0), (x[1] - x[3]) / math.sqrt(10.0)])


_KOWALIK_Y = _v(0.1957, 0.1947, 0.1735, 0.1600, 0.0844, 0.0627, 0.0456, 0.0342, 0.0323, 0.0235,
                0.0246)
_KOWALIK_U = _v(4.0, 2.0, 1.0, 0.5, 0.25, 0.167, 0.125, 0.1, 0.0833, 0.0714, 0.0625)


def _kowalik_osborne(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    u = c["u"]
    return c["y"] - x[0] * (u * u + u * x[1]) / (u * u + u * x[2] + x[3])


def _brown_dennis(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]
    a = x[0] + t * x[1] - ops.exp(t)
    b = x[2] + x[3] * ops.sin(t) - ops.cos(t)
    return a * a + b * b


_OSBORNE1_Y = _v(0.844, 0.908, 0.932, 0.936, 0.925, 0.908, 0.881, 0.850, 0.818, 0.784, 0.751,
                 0.718, 0.685, 0.658, 0.628, 0.603, 0.580, 0.558, 0.538, 0.522, 0.506, 0.490,
                 0.478, 0.467, 0.457, 0.448, 0.438, 0.431, 0.424, 0.420, 0.414, 0.411, 0.406)


def _osborne1(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]
    return c["y"] - (x[0] + x[1] * ops.exp(-t * x[3]) + x[2] * ops.exp(-t * x[4]))


def _biggs_constants(n: int, m: int) -> dict[str, np.ndarray]:
    t = 0.1 * _idx(m)
    return {"t": t, "y": np.exp(-t) - 5.0 * np.exp(-10.0 * t) + 3.0 * np.exp(-4.0 * t)}


def _biggs_exp6(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]
    return (x[2] * ops.exp(-t * x[0]) - x[3] * ops.exp(-t * x[1]) + x[5] * ops.exp(-t * x[4])
            - c["y"])


_OSBORNE2_Y = _v(1.366, 1.191, 1.112, 1.013, 0.991, 0.885, 0.831, 0.847, 0.786, 0.725, 0.746,
                 0.679, 0.608, 0.655, 0.616, 0.606, 0.602, 0.626, 0.651, 0.724, 0.649, 0.649,
                 0.694, 0.644, 0.624, 0.661, 0.612, 0.558, 0.533, 0.495, 0.500, 0.423, 0.395,
                 0.375, 0.372, 0.391, 0.396, 0.405, 0.428, 0.429, 0.523, 0.562, 0.607, 0.653,
                 0.672, 0.708, 0.633, 0.668, 0.645, 0.632, 0.591, 0.559, 0.597, 0.625, 0.739,
                 0.710, 0.729, 0.720, 0.636, 0.581, 0.428, 0.292, 0.162, 0.098, 0.054)


def _osborne2(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]

    def bump(a: Any, s: Any, mu: Any) -> Any:
        d = t - mu
        return a * ops.exp(-d * d * s)

    return c["y"] - (x[0] * ops.exp(-t * x[4]) + bump(x[1], x[5], x[8])
                     + bump(x[2], x[6], x[9]) + bump(x[3], x[7], x[10]))


def _watson_constants(n: int, m: int) -> dict[str, np.ndarray]:
    t = _idx(29) / 29.0
    k = np.arange(n, dtype=np.float64)
    P = t[:, None] ** k[None, :]  # t_i^(j-1)
    D = np.zeros_like(P)
    D[:, 1:] = k[None, 1:] * t[:, None] ** (k[None, 1:] - 1.0)  # (j-1) t_i^(j-2)
    return {"P": P, "D": D}


def _watson(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    s = ops.matmul(c["P"], x)
    r = ops.matmul(c["D"], x) - s * s - 1.0
    return ops.concat([r, x[:1], x[1:2] - x[:1] ** 2 - 1.0])


# ---------------------------------------------------------------------------- 21-35
def _ext_rosenbrock(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    odd, even = x[0::2], x[1::2]
    return ops.concat([10.0 * (even - odd * odd), 1.0 - odd])


def _ext_powell(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    a, b, cc, d = x[0::4], x[1::4], x[2::4], x[3::4]
    return ops.concat([a + 10.0 * b, math.sqrt(5.0) * (cc - d), (b - 2.0 * cc) ** 2,
                       math.sqrt(10.0) * (a - d) ** 2])


def _penalty1(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return ops.concat([math.sqrt(1e-5) * (x - 1.0),
                       ops.reshape(ops.sum(x * x) - 0.25, (1,))])


def _penalty2_constants(n: int, m: int) -> dict[str, np.ndarray]:
    i = np.arange(2, n + 1, dtype=np.float64)
    return {"y": np.exp(i / 10.0) + np.exp((i - 1.0) / 10.0),
            "w": np.arange(n, 0, -1, dtype=np.float64)}


def _penalty2(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    a = math.sqrt(1e-5)
    e = ops.exp(x / 10.0)
    return ops.concat([x[:1] - 0.2, a * (e[1:] + e[:-1] - c["y"]),
                       a * (e[1:] - math.exp(-0.1)),
                       ops.reshape(ops.sum(c["w"] * x * x) - 1.0, (1,))])


def _variably_dimensioned(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    s = ops.reshape(ops.sum(c["j"] * (x - 1.0)), (1,))
    return ops.concat([x - 1.0, s, s * s])


def _trigonometric(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    n = c["j"].shape[0]
    cx = ops.cos(x)
    return float(n) - ops.sum(cx) + c["j"] * (1.0 - cx) - ops.sin(x)


def _brown_almost_linear(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    n = c["j"].shape[0]
    p = x[0]
    for j in range(1, n):
        p = p * x[j]
    return ops.concat([x[:-1] + ops.sum(x) - float(n + 1), ops.reshape(p - 1.0, (1,))])


def _grid_constants(n: int, m: int) -> dict[str, np.ndarray]:
    h = 1.0 / (n + 1)
    t = _idx(n) * h
    K = np.where(np.arange(n)[None, :] <= np.arange(n)[:, None],  # j <= i: t_j (1 - t_i)
                 t[None, :] * (1.0 - t[:, None]), t[:, None] * (1.0 - t[None, :]))
    return {"t": t, "K": K * (h / 2.0)}


def _grid_x0(n: int) -> np.ndarray:
    t = _idx(n) / (n + 1)
    return t * (t - 1.0)


def _discrete_bv(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    t = c["t"]
    h = t[0]
    z = _zero(ops, x)
    left, right = ops.concat([z, x[:-1]]), ops.concat([x[1:], z])
    u = x + t + 1.0
    return 2.0 * x - left - right + h * h * u * u * u / 2.0


def _discrete_ie(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    u = x + c["t"] + 1.0
    return x + ops.matmul(c["K"], u * u * u)


def _broyden_tridiagonal(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    z = _zero(ops, x)
    left, right = ops.concat([z, x[:-1]]), ops.concat([x[1:], z])
    return (3.0 - 2.0 * x) * x - left - 2.0 * right + 1.0


def _band_constants(n: int, m: int) -> dict[str, np.ndarray]:
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    return {"B": ((j != i) & (j >= i - 5) & (j <= i + 1)).astype(np.float64)}


def _broyden_banded(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    return x * (2.0 + 5.0 * x * x) + 1.0 - ops.matmul(c["B"], x * (1.0 + x))


def _linear_full_rank(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    m = c["i"].shape[0]
    s = ops.sum(x) * (2.0 / m)
    return ops.concat([x - s - 1.0, c["i"][x.shape[0]:] * 0.0 - s - 1.0])


def _linear_rank1(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    # also problem 34, whose constants zero the first and last columns and rows
    return c["i"] * ops.sum(c["j"] * x) - 1.0


def _chebyquad_constants(n: int, m: int) -> dict[str, np.ndarray]:
    i = _idx(m)
    even = i % 2 == 0
    c = np.zeros(m)
    c[even] = -1.0 / (i[even] ** 2 - 1.0)  # the integral of T_i over [0, 1]
    return {"c": c}


def _chebyquad(ops: Any, x: Any, c: dict[str, Any]) -> Any:
    y = 2.0 * x - 1.0
    t_prev, t_cur = ops.ones_like(y), y
    vals = [ops.mean(t_cur)]
    for _ in range(1, c["c"].shape[0]):
        t_prev, t_cur = t_cur, 2.0 * y * t_cur - t_prev
        vals.append(ops.mean(t_cur))
    return ops.stack(vals) - c["c"]


def _cheby_fstar(n: int, m: int) -> float | None:
    if m == n and n in (1, 2, 3, 4, 5, 6, 7, 9):
        return 0.0
    return {(8, 8): 3.51687e-3, (10, 10): 6.50395e-3}.get((n, m))


def _need_multiple(k: int, what: str) -> Callable[[int, int], str | None]:
    return lambda n, m: None if n % k == 0 else f"n must be {what}, got {n}"


def _need_m_ge_n(n: int, m: int) -> str | None:
    return None if m >= n else f"m must be >= n, got n={n}, m={m}"


def _index_constants(n: int, m: int) -> dict[str, np.ndarray]:
    return {"i": _idx(m), "j": _idx(n)}


def _rank1_zero_constants(n: int, m: int) -> dict[str, np.ndarray]:
    # c["j"]: j for 2 <= j <= n-1, else 0; c["i"]: i-1 for 2 <= i <= m-1, else 0
    j, i = _idx(n), _idx(m)
    return {"j": np.where((j >= 2) & (j <= n - 1), j, 0.0),
            "i": np.where((i >= 2) & (i <= m - 1), i - 1.0, 0.0)}


def _const(**arrays: np.ndarray) -> Callable[[int, int], dict[str, np.ndarray]]:
    return lambda n, m: dict(arrays)


def _fixed(*x0: float) -> Callable[[int], np.ndarray]:
    return lambda n: _v(*x0)


def _fs(value: float | None) -> Callable[[int, int], float | None]:
    return lambda n, m: value


def _by_n(table: dict[int, float]) -> Callable[[int, int], float | None]:
    return lambda n, m: table.get(n)


_INFO = [
    MGHInfo(1, "rosenbrock", "Rosenbrock", 2, 2, _rosenbrock, _fixed(-1.2, 1.0)),
    MGHInfo(2, "freudenstein_roth", "Freudenstein and Roth", 2, 2, _freudenstein_roth,
            _fixed(0.5, -2.0), note="f = 48.9842... at (11.41..., -0.8968...) (local)"),
    MGHInfo(3, "powell_badly_scaled", "Powell badly scaled", 2, 2, _powell_badly_scaled,
            _fixed(0.0, 1.0)),
    MGHInfo(4, "brown_badly_scaled", "Brown badly scaled", 2, 3, _brown_badly_scaled,
            _fixed(1.0, 1.0)),
    MGHInfo(5, "beale", "Beale", 2, 3, _beale, _fixed(1.0, 1.0)),
    MGHInfo(6, "jennrich_sampson", "Jennrich and Sampson", 2, 10, _jennrich_sampson,
            _fixed(0.3, 0.4), lambda n, m: {"i": _idx(m)},
            lambda n, m: 124.362 if m == 10 else None, variable_m=True),
    MGHInfo(7, "helical_valley", "Helical valley", 3, 3, _helical_valley,
            _fixed(-1.0, 0.0, 0.0)),
    MGHInfo(8, "bard", "Bard", 3, 15, _bard, _fixed(1.0, 1.0, 1.0), _bard_constants,
            _fs(8.21487e-3), note="f = 17.4286... at (0.8406..., -inf, -inf)"),
    MGHInfo(9, "gaussian", "Gaussian", 3, 15, _gaussian, _fixed(0.4, 1.0, 0.0),
            _const(t=(8.0 - _idx(15)) / 2.0, y=_GAUSS_Y), _fs(1.12793e-8)),
    MGHInfo(10, "meyer", "Meyer", 3, 16, _meyer, _fixed(0.02, 4000.0, 250.0),
            _const(t=45.0 + 5.0 * _idx(16), y=_MEYER_Y), _fs(87.9458)),
    MGHInfo(11, "gulf", "Gulf research and development", 3, 99, _gulf,
            _fixed(5.0, 2.5, 0.15), _gulf_constants, variable_m=True),
    MGHInfo(12, "box_3d", "Box three-dimensional", 3, 10, _box3d, _fixed(0.0, 10.0, 20.0),
            lambda n, m: {"t": 0.1 * _idx(m)}, variable_m=True,
            note="f = 0 at (1, 10, 1), (10, 1, -1), and wherever x1 = x2, x3 = 0"),
    MGHInfo(13, "powell_singular", "Powell singular", 4, 4, _powell_singular,
            _fixed(3.0, -1.0, 0.0, 1.0)),
    MGHInfo(14, "wood", "Wood", 4, 6, _wood, _fixed(-3.0, -1.0, -3.0, -1.0)),
    MGHInfo(15, "kowalik_osborne", "Kowalik and Osborne", 4, 11, _kowalik_osborne,
            _fixed(0.25, 0.39, 0.415, 0.39), _const(u=_KOWALIK_U, y=_KOWALIK_Y),
            _fs(3.07505e-4), note="f = 1.02734...e-3 at (+inf, -14.07..., -inf, -inf)"),
    MGHInfo(16, "brown_dennis", "Brown and Dennis", 4, 20, _brown_dennis,
            _fixed(25.0, 5.0, -5.0, -1.0), lambda n, m: {"t": _idx(m) / 5.0},
            lambda n, m: 85822.2 if m == 20 else None, variable_m=True),
    MGHInfo(17, "osborne1", "Osborne 1", 5, 33, _osborne1, _fixed(0.5, 1.5, -1.0, 0.01, 0.02),
            _const(t=10.0 * (_idx(33) - 1.0), y=_OSBORNE1_Y), _fs(5.46489e-5)),
    MGHInfo(18, "biggs_exp6", "Biggs EXP6", 6, 13, _biggs_exp6,
            _fixed(1.0, 2.0, 1.0, 1.0, 1.0, 1.0), _biggs_constants, variable_m=True,
            note="f = 5.65565...e-3 (local) if m = 13; f = 0 at (1, 10, 1, 5, 4, 3)"),
    MGHInfo(19, "osborne2", "Osborne 2", 11, 65, _osborne2,
            _fixed(1.3, 0.65, 0.65, 0.7, 0.6, 3.0, 5.0, 7.0, 2.0, 4.5, 5.5),
            _const(t=(_idx(65) - 1.0) / 10.0, y=_OSBORNE2_Y), _fs(4.01377e-2)),
    MGHInfo(20, "watson", "Watson", 9, 31, _watson, lambda n: np.zeros(n), _watson_constants,
            _by_n({6: 2.28767e-3, 9: 1.39976e-6, 12: 4.72238e-10}), variable_n=True,
            check=lambda n, m: None if 2 <= n <= 31 else f"n must be in 2..31, got {n}"),
    MGHInfo(21, "extended_rosenbrock", "Extended Rosenbrock", 10, 10, _ext_rosenbrock,
            lambda n: np.tile([-1.2, 1.0], n // 2), variable_n=True,
            check=_need_multiple(2, "even")),
    MGHInfo(22, "extended_powell", "Extended Powell singular", 12, 12, _ext_powell,
            lambda n: np.tile([3.0, -1.0, 0.0, 1.0], n // 4), variable_n=True,
            check=_need_multiple(4, "a multiple of 4")),
    MGHInfo(23, "penalty1", "Penalty I", 10, 11, _penalty1, lambda n: _idx(n),
            fstar=_by_n({4: 2.24997e-5, 10: 7.08765e-5}), variable_n=True),
    MGHInfo(24, "penalty2", "Penalty II", 10, 20, _penalty2, lambda n: np.full(n, 0.5),
            _penalty2_constants, _by_n({4: 9.37629e-6, 10: 2.93660e-4}), variable_n=True),
    MGHInfo(25, "variably_dimensioned", "Variably dimensioned", 10, 12, _variably_dimensioned,
            lambda n: 1.0 - _idx(n) / n, lambda n, m: {"j": _idx(n)}, variable_n=True),
    MGHInfo(26, "trigonometric", "Trigonometric", 10, 10, _trigonometric,
            lambda n: np.full(n, 1.0 / n), lambda n, m: {"j": _idx(n)}, variable_n=True),
    MGHInfo(27, "brown_almost_linear", "Brown almost-linear", 10, 10, _brown_almost_linear,
            lambda n: np.full(n, 0.5), lambda n, m: {"j": _idx(n)}, variable_n=True,
            note="f = 1 at (0, ..., 0, n + 1)"),
    MGHInfo(28, "discrete_boundary_value", "Discrete boundary value", 10, 10, _discrete_bv,
            _grid_x0, _grid_constants, variable_n=True),
    MGHInfo(29, "discrete_integral_equation", "Discrete integral equation", 10, 10,
            _discrete_ie, _grid_x0, _grid_constants, variable_n=True),
    MGHInfo(30, "broyden_tridiagonal", "Broyden tridiagonal", 10, 10, _broyden_tridiagonal,
            lambda n: np.full(n, -1.0), variable_n=True),
    MGHInfo(31, "broyden_banded", "Broyden banded", 10, 10, _broyden_banded,
            lambda n: np.full(n, -1.0), _band_constants, variable_n=True),
    MGHInfo(32, "linear_full_rank", "Linear function - full rank", 10, 20, _linear_full_rank,
            lambda n: np.ones(n), _index_constants, lambda n, m: float(m - n),
            variable_n=True, variable_m=True, check=_need_m_ge_n),
    MGHInfo(33, "linear_rank1", "Linear function - rank 1", 10, 20, _linear_rank1,
            lambda n: np.ones(n), _index_constants,
            lambda n, m: m * (m - 1.0) / (2.0 * (2.0 * m + 1.0)), variable_n=True,
            variable_m=True, check=_need_m_ge_n),
    MGHInfo(34, "linear_rank1_zero", "Linear function - rank 1 with zero columns and rows",
            10, 20, _linear_rank1, lambda n: np.ones(n), _rank1_zero_constants,
            lambda n, m: (m * m + 3.0 * m - 6.0) / (2.0 * (2.0 * m - 3.0)), variable_n=True,
            variable_m=True, check=_need_m_ge_n),
    MGHInfo(35, "chebyquad", "Chebyquad", 8, 8, _chebyquad, lambda n: _idx(n) / (n + 1),
            _chebyquad_constants, _cheby_fstar, variable_n=True, variable_m=True,
            check=_need_m_ge_n),
]

#: The 35 problems by number (1..35).
MGH: dict[int, MGHInfo] = {p.number: p for p in _INFO}
#: Names -> numbers.
MGH_NAMES: dict[str, int] = {p.name: p.number for p in _INFO}

#: Problems whose ``m`` follows from ``n``: number -> ``m(n)``.
M_OF_N: dict[int, Callable[[int], int]] = {21: lambda n: n, 22: lambda n: n, 23: lambda n: n + 1,
                                           24: lambda n: 2 * n, 25: lambda n: n + 2,
                                           26: lambda n: n, 27: lambda n: n, 28: lambda n: n,
                                           29: lambda n: n, 30: lambda n: n, 31: lambda n: n,
                                           20: lambda n: 31}


def mgh_info(problem: int | str) -> MGHInfo:
    """The table row of a problem, by number or name."""
    if isinstance(problem, str):
        key = problem.strip().lower()
        if key not in MGH_NAMES:
            raise ValueError(f"unknown MGH problem {problem!r}; known: {', '.join(MGH_NAMES)}")
        return MGH[MGH_NAMES[key]]
    if isinstance(problem, bool) or not isinstance(problem, (int, np.integer)) \
            or int(problem) not in MGH:
        raise ValueError(f"MGH problem number must be an integer in 1..35, got {problem!r}")
    return MGH[int(problem)]


__all__ = ["M_OF_N", "MGH", "MGHInfo", "MGH_NAMES", "Residuals", "helical_value_and_grad",
           "mgh_info"]
