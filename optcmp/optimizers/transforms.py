r"""Optimizers as chains of small transforms of the update, written once against optcmp's ops.

optax's idea on optcmp's flat parameter vector: a :class:`Transform` maps the incoming update
``u`` (the gradient, first) to a new one and keeps its own state arrays; :func:`chain` composes
them and :class:`TransformRule` turns a chain into a reference rule,
:math:`x_{t} = x_{t-1} - u_{\text{out}}` (so the chain ends with :func:`scale_by_lr`).

A transform's numeric arguments are numbers or the name of a hyperparameter (``"beta1"``), read
from the spec at each step; a structural argument (a shape, ``nesterov``) is fixed when the
chain is built, so a rule's state has the same arrays for every spec. Every transform is
purely functional (no in-place writes), so a chain runs on numpy, in torch, inside a
``tf.function`` and under ``jax.jit``.

The parameter is one flat vector; :func:`scale_by_factored_rms`, :func:`clip_by_block_rms`,
:func:`scale_by_param_rms` and :func:`scale_by_trust_ratio` act per block when given ``shapes``
(``"param_layout"``: the problem's named parameters, which a :class:`TransformRule` receives),
on the whole vector otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from optcmp.optimizers._common import ScheduledRule

#: Where Adam-type rules add epsilon: to the raw root :math:`\sqrt{v_t}` (then bias-corrected),
#: to the bias-corrected root :math:`\sqrt{\hat v_t}`, or inside the root.
EPS_PLACEMENTS = ("raw", "bias_corrected", "inside_sqrt")

Value = float | str
State = tuple[Any, ...]


class Step(NamedTuple):
    """What a transform sees besides the update: iterate, step number (1 first), scheduled
    learning rate and the spec's hyperparameters."""

    x: Any
    t: Any
    lr: Any
    hp: Mapping[str, Any]

    def __call__(self, v: Value) -> Any:
        """A transform argument: the value of the hyperparameter ``v`` names, else ``v``."""
        return self.hp[v] if isinstance(v, str) and v in self.hp else v


class Transform(NamedTuple):
    """``init(ops, x) -> state`` and ``update(ops, u, state, step) -> (u, state)``."""

    init: Callable[[Any, Any], State]
    update: Callable[[Any, Any, State, Step], tuple[Any, State]]


def _stateless(fn: Callable[[Any, Any, Step], Any]) -> Transform:
    """A transform with no state from ``fn(ops, u, step) -> u``."""
    return Transform(lambda ops, x: (), lambda ops, u, s, p: (fn(ops, u, p), s))


def chain(*transforms: Transform) -> Transform:
    """The transforms applied in order, their states concatenated.

    Parameters
    ----------
    *transforms : Transform

    Returns
    -------
    Transform
    """
    sizes: list[int] = []

    def init(ops: Any, x: Any) -> State:
        states = [t.init(ops, x) for t in transforms]
        sizes[:] = [len(s) for s in states]
        return tuple(a for s in states for a in s)

    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        out: list[Any] = []
        i = 0
        for t, n in zip(transforms, sizes or [len(t.init(ops, p.x)) for t in transforms]):
            u, s = t.update(ops, u, tuple(state[i:i + n]), p)
            out.extend(s)
            i += n
        return u, tuple(out)

    return Transform(init, update)


def when(condition: Callable[[Mapping[str, Any]], bool], transform: Transform) -> Transform:
    """``transform`` where ``condition(hp)`` holds, else the identity (its state kept as is).

    Parameters
    ----------
    condition : callable
        ``condition(hp) -> bool`` on the spec's hyperparameters (fixed for a run).
    transform : Transform

    Returns
    -------
    Transform
    """
    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        return transform.update(ops, u, state, p) if condition(p.hp) else (u, state)

    return Transform(transform.init, update)


def round_to_float32(a: Any) -> Any:
    """``a`` rounded to float32's 24-bit significand, by arithmetic alone (Veltkamp's split),
    so that a float64 rule can follow a framework that keeps a scalar in float32.

    Parameters
    ----------
    a : scalar or array
        Of magnitude within float32's normal range; float32 input is returned as it is.

    Returns
    -------
    scalar or array
        Of ``a``'s dtype.
    """
    c = a * 536870913.0  # 2**29 + 1: keeps 53 - 29 = 24 significant bits of a float64
    one = a * 0.0 + 1.0
    wide = ((one + 2.0 ** -30) - one) * 2.0 ** 30  # 1 in float64, 0 in float32
    return wide * (c - (c - a)) + (1.0 - wide) * a


def round_to_bfloat16(a: Any) -> Any:
    """``a`` rounded to bfloat16's 8-bit significand by arithmetic alone (Veltkamp's split, in
    float64 or float32 arithmetic), so that a rule can follow a framework computing in bfloat16.

    Parameters
    ----------
    a : scalar or array
        Of magnitude within bfloat16's normal range.

    Returns
    -------
    scalar or array
        Of ``a``'s dtype.
    """
    one = a * 0.0 + 1.0
    wide = ((one + 2.0 ** -30) - one) * 2.0 ** 30  # 1 in float64, 0 in float32
    c64, c32 = a * (2.0 ** 45 + 1.0), a * (2.0 ** 16 + 1.0)  # keeps 53 - 45 or 24 - 16 bits
    return wide * (c64 - (c64 - a)) + (1.0 - wide) * (c32 - (c32 - a))


def _zeros(n: int) -> Callable[[Any, Any], State]:
    return lambda ops, x: tuple(ops.zeros_like(x) for _ in range(n))


def _rms(ops: Any, a: Any) -> Any:
    """Root mean square of every entry of ``a``."""
    return ops.sqrt(ops.mean(a * a))


def bias_corrected_denominator(ops: Any, v: Any, bc2: Any, eps: Any, placement: str) -> Any:
    r"""The denominator of :math:`\hat m_t` in an Adam-type step, epsilon placed as named.

    Parameters
    ----------
    ops : namespace
    v : array
        The raw second moment :math:`v_t`.
    bc2 : scalar
        :math:`1-\beta_2^t`.
    eps : float
    placement : {"raw", "bias_corrected", "inside_sqrt"}
        :math:`(\sqrt{v_t}+\epsilon)/\sqrt{1-\beta_2^t}` (Keras' Adam, torch's RAdam),
        :math:`\sqrt{\hat v_t}+\epsilon` (torch's Adam, optax) or
        :math:`\sqrt{\hat v_t+\epsilon}` (optax's ``eps_root``).

    Returns
    -------
    array
    """
    if placement == "raw":
        return (ops.sqrt(v) + eps) / ops.sqrt(bc2)
    if placement == "bias_corrected":
        return ops.sqrt(v / bc2) + eps
    if placement == "inside_sqrt":
        return ops.sqrt(v / bc2 + eps)
    raise ValueError(f"eps placement must be one of {EPS_PLACEMENTS}, got {placement!r}")


def _moments(ops: Any, u: Any, state: State, p: Step, b1: Value, b2: Value) -> State:
    """Adam's first and second moments (torch's ``lerp`` order)."""
    m, v = state
    return m + (1.0 - p(b1)) * (u - m), v * p(b2) + (1.0 - p(b2)) * (u * u)


def scale_by_adam(b1: Value = "beta1", b2: Value = "beta2", eps: Value = "eps",
                  placement: Value = "eps_placement") -> Transform:
    r"""Adam's direction :math:`\hat m_t / \mathrm{denominator}` (Kingma and Ba 2015).

    Parameters
    ----------
    b1, b2, eps : float or str
        Moment decays and epsilon (numbers or hyperparameter names).
    placement : str
        One of :data:`EPS_PLACEMENTS`, or the hyperparameter naming it.

    Returns
    -------
    Transform
    """
    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        m, v = _moments(ops, u, state, p, b1, b2)
        den = bias_corrected_denominator(ops, v, 1.0 - p(b2) ** p.t, p(eps), p(placement))
        return m / (1.0 - p(b1) ** p.t) / den, (m, v)

    return Transform(_zeros(2), update)


def scale_by_rms(decay: Value = "rho", eps: Value = "eps", eps_inside: bool = False) -> Transform:
    r"""RMSprop's :math:`u/(\sqrt{v_t}+\epsilon)`, :math:`v_t = \rho v_{t-1} + (1-\rho) u^2`.

    Parameters
    ----------
    decay, eps : float or str
    eps_inside : bool, default False
        :math:`u/\sqrt{v_t+\epsilon}` instead.

    Returns
    -------
    Transform
    """
    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        v = state[0] * p(decay) + (1.0 - p(decay)) * (u * u)
        den = ops.sqrt(v + p(eps)) if eps_inside else ops.sqrt(v) + p(eps)
        return u / den, (v,)

    return Transform(_zeros(1), update)


def scale_by_nadam(b1: Value = "beta1", b2: Value = "beta2", eps: Value = "eps",
                   momentum_decay: Value = "momentum_decay",
                   schedule: Value = "momentum_schedule",
                   rounding: Value = "mu_rounding") -> Transform:
    r"""NAdam (Dozat 2016): Nesterov momentum with the momentum schedule named.

    ``schedule="dozat"``: :math:`\mu_t = \beta_1(1 - \tfrac12 0.96^{t\psi})` with
    :math:`\psi` = ``momentum_decay`` (torch 0.004; Keras' ``Nadam`` is :math:`\psi = 1`);
    ``"constant"``: :math:`\mu_t = \beta_1` (optax). Then
    :math:`u = \big(\frac{(1-\mu_t) g}{1-\prod_{i\le t}\mu_i}
    + \frac{\mu_{t+1} m_t}{1-\prod_{i\le t+1}\mu_i}\big) / (\sqrt{\hat v_t}+\epsilon)`.
    ``rounding`` (of the Dozat schedule): ``"exact"``; ``"float32_product"``,
    :math:`\prod\mu_i` kept in float32 (torch's scalar state); ``"float32_decay"``, 0.96
    rounded to float32 in :math:`\mu_t` and :math:`\mu_{t+1}` but not in the product (Keras'
    cast).

    Parameters
    ----------
    b1, b2, eps, momentum_decay : float or str
    schedule : {"dozat", "constant"} or str
        The value, or the hyperparameter naming it.
    rounding : {"exact", "float32_product", "float32_decay"} or str

    Returns
    -------
    Transform
    """
    def mu(p: Step, t: Any, base: float = 0.96) -> Any:
        if p(schedule) == "constant":
            return p(b1) + 0.0 * t
        return p(b1) * (1.0 - 0.5 * base ** (t * p(momentum_decay)))

    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        m, v = _moments(ops, u, state[:2], p, b1, b2)
        base = 0.9599999785423279 if p(rounding) == "float32_decay" else 0.96
        mu_t, mu_next = mu(p, p.t, base), mu(p, p.t + 1.0, base)
        if p(rounding) == "float32_product" and p(schedule) != "constant":
            prod = round_to_float32(state[2] * round_to_float32(mu_t))
        else:
            prod = state[2] * mu(p, p.t)
        den = ops.sqrt(v / (1.0 - p(b2) ** p.t)) + p(eps)
        step = (1.0 - mu_t) / (1.0 - prod) * u + mu_next / (1.0 - prod * mu_next) * m
        return step / den, (m, v, prod)

    return Transform(lambda ops, x: (*_zeros(2)(ops, x), ops.sum(ops.zeros_like(x)) + 1.0),
                     update)


def scale_by_radam(b1: Value = "beta1", b2: Value = "beta2", eps: Value = "eps",
                   placement: Value = "eps_placement") -> Transform:
    r"""RAdam (Liu et al. 2020): Adam rectified when :math:`\rho_t > 5`, momentum SGD before.

    :math:`\rho_t = \rho_\infty - 2t\beta_2^t/(1-\beta_2^t)`; when :math:`\rho_t > 5` the step
    is :math:`r_t \hat m_t / \mathrm{denominator}` (epsilon placed by ``placement``, see
    :func:`bias_corrected_denominator`), else :math:`\hat m_t`. torch tests :math:`\rho_t > 5`
    and optax :math:`\rho_t \ge 5`: they part only where :math:`\rho_t` is exactly 5.

    Parameters
    ----------
    b1, b2, eps : float or str
    placement : str
        ``"raw"`` (torch) or ``"inside_sqrt"``/``"bias_corrected"`` (optax ``eps_root``/``eps``).

    Returns
    -------
    Transform
    """
    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        m, v = _moments(ops, u, state, p, b1, b2)
        beta2, t = p(b2), p.t
        bc2 = 1.0 - beta2 ** t
        rho_inf = 2.0 / (1.0 - beta2) - 1.0
        rho = rho_inf - 2.0 * t * beta2 ** t / bc2
        r2 = (rho - 4.0) * (rho - 2.0) * rho_inf / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho)
        r = ops.sqrt(ops.maximum(r2, 0.0))  # the other branch where r2 < 0
        mhat = m / (1.0 - p(b1) ** t)
        rect = r * mhat / bias_corrected_denominator(ops, v, bc2, p(eps), p(placement))
        return ops.where(rho > 5.0, rect, mhat), (m, v)

    return Transform(_zeros(2), update)


def scale_by_lion(b1: Value = "beta1", b2: Value = "beta2") -> Transform:
    r"""Lion (Chen et al. 2023): :math:`\operatorname{sign}(\beta_1 m + (1-\beta_1) g)`, then
    :math:`m \leftarrow \beta_2 m + (1-\beta_2) g`.

    Parameters
    ----------
    b1, b2 : float or str

    Returns
    -------
    Transform
    """
    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        m = state[0]
        return ops.sign(p(b1) * m + (1.0 - p(b1)) * u), (p(b2) * m + (1.0 - p(b2)) * u,)

    return Transform(_zeros(1), update)


Shapes = Sequence[tuple[int, ...]] | str | None


def _blocks(shapes: Shapes, p: Step | None = None) -> list[tuple[int, int, tuple[int, ...]]]:
    """``(start, stop, shape)`` of each block of the flat vector (none: None; a str: the
    shapes of the layout that hyperparameter holds)."""
    if isinstance(shapes, str):
        assert p is not None
        shapes = p.hp[shapes].shapes
    out, a = [], 0
    for s in shapes or ():
        n = math.prod(s)
        out.append((a, a + n, tuple(s)))
        a += n
    return out


def _per_block(ops: Any, u: Any, shapes: Shapes, p: Step,
               fn: Callable[[Any, int, int], Any]) -> Any:
    """``fn(u_block, start, stop)`` over the blocks, concatenated (the whole vector: None)."""
    blocks = _blocks(shapes, p)
    if not blocks:
        return fn(u, 0, -1)
    return ops.concat([ops.reshape(fn(u[a:b], a, b), (-1,)) for a, b, _ in blocks])


def scale_by_factored_rms(decay: Value = "decay_rate", eps: Value = "eps1",
                          eps_form: Value = "eps_form", rounding: Value = "decay_rounding",
                          shapes: Shapes = None, min_dim_size_to_factor: Value = 1) -> Transform:
    r"""Adafactor's second-moment scaling (Shazeer and Stern 2018), :math:`u/\sqrt{\hat v_t}`.

    :math:`\hat\beta_{2,t} = 1 - t^{-c}` with :math:`c` = ``decay`` (0.8). A block of ``shapes``
    with at least two dimensions, its last two of at least ``min_dim_size_to_factor`` (optax
    128; torch and Keras factor every matrix), keeps row and column means :math:`R, C` over its
    last two axes and :math:`\hat v = R C^\top / \operatorname{mean}(R)`; the rest keep
    :math:`v` in full (a matrix with a dimension of 1 factors to the same :math:`\hat v`).
    ``eps_form="add"``: :math:`u^2 + \epsilon_1` enters the averages (Keras, optax);
    ``"clamp"``: :math:`\hat v` is clamped below at :math:`\epsilon_1^2` (torch).
    ``rounding="float32"``: :math:`\hat\beta_{2,t}` computed in float32 (optax), else exact.
    The state is two vectors like ``x``: :math:`v`, and :math:`R, C` of each factored block
    stored at the block's start (so it does not depend on the shapes).

    Parameters
    ----------
    decay, eps : float or str
    eps_form : {"add", "clamp"} or str
    rounding : {"exact", "float32"} or str
    shapes : sequence of tuple of int, or str, optional
        Blocks of the flat vector (None: one vector, never factored; a str: the hyperparameter
        holding a :class:`~optcmp.problems.ParamLayout`, as ``"param_layout"``).
    min_dim_size_to_factor : int or str, default 1

    Returns
    -------
    Transform
    """
    def factored(ops: Any, g2: Any, rc: Any, a: int, s: tuple[int, ...], w: Any,
                 p: Step) -> tuple[Any, list[Any]]:
        """``v_hat`` of one factored block and its new ``R, C`` (the unused rest kept)."""
        lead, r, c = math.prod(s[:-2]), s[-2], s[-1]
        sq = ops.reshape(g2, (lead, r, c))
        n, m = lead * r, lead * (r + c)
        rows = rc[a:a + n] + w * (ops.reshape(ops.mean(sq, axis=2), (-1,)) - rc[a:a + n])
        cols = rc[a + n:a + m] + w * (ops.reshape(ops.mean(sq, axis=1), (-1,)) - rc[a + n:a + m])
        den = ops.mean(ops.reshape(rows, (lead, r)), axis=1)
        if p(eps_form) != "add":
            den = ops.maximum(den, p(eps))
        vb = (ops.reshape(rows, (lead, r, 1)) * ops.reshape(cols, (lead, 1, c))
              / ops.reshape(den, (lead, 1, 1)))
        return ops.reshape(vb, (-1,)), [rows, cols, rc[a + m:a + lead * r * c]]

    def update(ops: Any, u: Any, state: State, p: Step) -> tuple[Any, State]:
        if p(rounding) == "float32":  # optax: t, c and every result in float32
            w = 1.0 - round_to_float32(1.0 - round_to_float32(
                p.t ** (-round_to_float32(p(decay)))))
        else:
            w = p.t ** (-p(decay))  # 1 - beta2_t
        add = p(eps_form) == "add"
        g2 = u * u + p(eps) if add else u * u
        v, rc = state[0] + w * (g2 - state[0]), state[1]
        parts: list[Any] = []
        rcs: list[Any] = []
        least = max(2, int(p(min_dim_size_to_factor)))
        for a, b, s in _blocks(shapes, p):
            if len(s) >= 2 and min(s[-2:]) >= least:
                vb, kept = factored(ops, g2[a:b], rc, a, s, w, p)
                parts.append(vb)
                rcs += kept
            else:
                parts.append(v[a:b])
                rcs.append(rc[a:b])
        vhat = ops.concat(parts) if parts else v
        if not add:
            vhat = ops.maximum(vhat, p(eps) * p(eps))
        return u / ops.sqrt(vhat), (v, ops.concat(rcs) if rcs else rc)

    return Transform(_zeros(2), update)


def clip_by_block_rms(threshold: Value = "clip_threshold", shapes: Shapes = None) -> Transform:
    r""":math:`u / \max(1, \mathrm{RMS}(u)/d)` per block (Adafactor's update clipping).

    Parameters
    ----------
    threshold : float or str
    shapes : sequence of tuple of int, or str, optional
        As :func:`scale_by_factored_rms`'s.

    Returns
    -------
    Transform
    """
    return _stateless(lambda ops, u, p: _per_block(
        ops, u, shapes, p, lambda ub, a, b: ub / ops.maximum(_rms(ops, ub) / p(threshold), 1.0)))


def _decayed(x: Any, p: Step, decayed_by: Value | None) -> Any:
    """``x (1 - lr * decayed_by)``: the weights as decayed before the step (``x``: None)."""
    return x * (1.0 - p.lr * p(decayed_by)) if decayed_by is not None and p(decayed_by) else x


def scale_by_param_rms(min_scale: Value = "eps2", shapes: Shapes = None,
                       decayed_by: Value | None = None) -> Transform:
    r""":math:`u \max(\epsilon_2, \mathrm{RMS}(x))` per block (Adafactor's parameter scale).

    Parameters
    ----------
    min_scale : float or str
    shapes : sequence of tuple of int, or str, optional
    decayed_by : float or str, optional
        The RMS of :math:`x(1-\eta_t\lambda)` with this :math:`\lambda` (weights decayed first).

    Returns
    -------
    Transform
    """
    def fn(ops: Any, u: Any, p: Step) -> Any:
        x = _decayed(p.x, p, decayed_by)
        return _per_block(ops, u, shapes, p, lambda ub, a, b: ub * ops.maximum(
            _rms(ops, x if b < 0 else x[a:b]), p(min_scale)))

    return _stateless(fn)


def scale_by_trust_ratio(eps: Value = 0.0, shapes: Shapes = None,
                         decayed_by: Value | None = None) -> Transform:
    r"""LAMB's layer-wise trust ratio :math:`u\,\lVert x\rVert/(\lVert u\rVert+\epsilon)`, 1
    where either norm is 0 (You et al. 2020; optax's ``scale_by_trust_ratio``, Keras' ``Lamb``).

    Parameters
    ----------
    eps : float or str
    shapes : sequence of tuple of int, or str, optional
    decayed_by : float or str, optional
        The norm of :math:`x(1-\eta_t\lambda)` with this :math:`\lambda`: the weights decayed
        before the step, as Keras does.

    Returns
    -------
    Transform
    """
    def ratio(ops: Any, ub: Any, xb: Any, p: Step) -> Any:
        xn, un = ops.norm(_decayed(xb, p, decayed_by)), ops.norm(ub)
        return ops.where((xn > 0.0) & (un > 0.0), ub * (xn / (un + p(eps))), ub)

    return _stateless(lambda ops, u, p: _per_block(
        ops, u, shapes, p, lambda ub, a, b: ratio(ops, ub, p.x if b < 0 else p.x[a:b], p)))


def add_decayed_weights(weight_decay: Value = "weight_decay",
                        scaled_by_lr: bool = False) -> Transform:
    r""":math:`u + \lambda x`: before the learning rate, decoupled decay (AdamW); first in a
    chain, an L2 term in the gradient; after it with ``scaled_by_lr``, :math:`u + \eta_t\lambda x`.

    Parameters
    ----------
    weight_decay : float or str
    scaled_by_lr : bool, default False

    Returns
    -------
    Transform
    """
    def fn(ops: Any, u: Any, p: Step) -> Any:
        wd = p(weight_decay)
        return u + ((p.lr * wd) if scaled_by_lr else wd) * p.x if wd else u

    return _stateless(fn)


def scale_by_lr(relative_step: Value = False) -> Transform:
    r""":math:`\eta_t u`, the last transform; ``relative_step``:
    :math:`\min(\eta_t, 1/\sqrt t)\,u` (Adafactor in torch and Keras).

    Parameters
    ----------
    relative_step : bool or str

    Returns
    -------
    Transform
    """
    def fn(ops: Any, u: Any, p: Step) -> Any:
        if p(relative_step):
            return ops.minimum(1.0 / ops.sqrt(p.t), p.lr) * u
        return p.lr * u

    return _stateless(fn)


class TransformRule(ScheduledRule):
    """A reference rule from a chain: :math:`x_t = x_{t-1} - u`, ``u`` the chain's output for
    the (scheduled, clipped) gradient; the problem's
    :class:`~optcmp.problems.ParamLayout` is ``hp["param_layout"]``.

    Parameters
    ----------
    transform : Transform
    name : str
        Keys the compiled steps optcmp keeps (the optimizer's name).
    """

    needs_layout = True

    def __init__(self, transform: Transform, name: str) -> None:
        self.transform = transform
        self.reuse_parts = ("transforms", name)

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return self.transform.init(ops, x)

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        u, buf = self.transform.update(ops, g, buf, Step(x, t, lr, hp))
        return x - u, buf


__all__ = ["EPS_PLACEMENTS", "Step", "Transform", "TransformRule", "add_decayed_weights",
           "bias_corrected_denominator", "chain", "clip_by_block_rms", "round_to_float32", "scale_by_adam",
           "scale_by_factored_rms", "scale_by_lion", "scale_by_lr", "scale_by_nadam",
           "scale_by_param_rms", "scale_by_radam", "scale_by_rms", "scale_by_trust_ratio",
           "when"]
