r"""Step-based learning-rate schedules, written once and evaluated the same way on every backend.

Step :math:`k` (from 0) uses :math:`\eta_k = \eta\, s(k)`; the ``schedule=`` hyperparameter is
stored as a canonical string, e.g. ``"step(step_size=30, gamma=0.1)"``:

==========================================================  =======================================
``constant``                                                :math:`s(k) = 1`
``step(step_size=S, gamma=G)``                              :math:`G^{\lfloor k/S \rfloor}`
``multistep(milestones=[m1, m2, ...], gamma=G)``            :math:`G^{\#\{i : m_i \le k\}}`
``exponential(gamma=G)``                                    :math:`G^{k}`
``cosine(total_steps=T, min_factor=m)``                     :math:`m + (1-m)\,\tfrac12(1+\cos(\pi \min(k,T)/T))`
``warmup(warmup_steps=W, start_factor=s)``                  :math:`s + (1-s)\min(k,W)/W` (then 1)
==========================================================  =======================================

Every kind also takes ``every=E`` (default 1: :math:`k` replaced by :math:`\lfloor k/E \rfloor`);
a run replaces ``unit="epoch"`` with ``every=<steps per epoch>`` and records that form. The
reference rules and the native adapters all evaluate :meth:`Schedule.factor`, so the learning
rate of step :math:`k` is the same number on every backend.

References
----------
torch's ``lr_scheduler`` and Keras' ``optimizers.schedules`` define the same shapes.
I. Loshchilov and F. Hutter, "SGDR: Stochastic Gradient Descent with Warm Restarts", ICLR 2017
(cosine); P. Goyal et al., "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour",
arXiv:1706.02677, 2017 (linear warm-up).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

#: Parameters of each kind: name -> (type, required).
KINDS: dict[str, dict[str, str]] = {
    "constant": {},
    "step": {"step_size": "int", "gamma": "float"},
    "multistep": {"milestones": "ints", "gamma": "float"},
    "exponential": {"gamma": "float"},
    "cosine": {"total_steps": "int", "min_factor": "float?"},
    "warmup": {"warmup_steps": "int", "start_factor": "float?"},
}
_COMMON = {"every": "int?", "unit": "unit?"}


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule (see the module docstring for the kinds and their formulas)."""

    kind: str
    params: tuple[tuple[str, Any], ...] = ()
    every: int = 1
    unit: str = "step"

    def __str__(self) -> str:
        items = [f"{k}={_fmt(v)}" for k, v in self.params]
        if self.every != 1:
            items.append(f"every={self.every}")
        if self.unit != "step":
            items.append(f"unit={self.unit!r}")
        return self.kind if not items else f"{self.kind}({', '.join(items)})"

    @property
    def is_constant(self) -> bool:
        """``s(k) = 1`` for every step."""
        return self.kind == "constant"

    def per_step(self, steps_per_epoch: int) -> Schedule:
        """The step-based form of an ``unit="epoch"`` schedule (itself otherwise)."""
        if self.unit == "step":
            return self
        return Schedule(self.kind, self.params, self.every * int(steps_per_epoch), "step")

    def factor(self, k: Any, ns: Any = None) -> Any:
        """The multiplier :math:`s(k)` of step ``k`` (a Python number or a backend scalar)."""
        ns = _PY if ns is None else ns
        p = dict(self.params)
        if self.kind == "constant":
            return 1.0
        if self.every != 1:
            k = k // float(self.every)
        if self.kind == "step":
            return p["gamma"] ** (k // float(p["step_size"]))
        if self.kind == "exponential":
            return p["gamma"] ** k
        if self.kind == "multistep":
            count: Any = 0.0
            for m in p["milestones"]:
                count = count + ns.ge(k, float(m))
            return p["gamma"] ** count
        if self.kind == "cosine":
            T, m = float(p["total_steps"]), p["min_factor"]
            return m + (1.0 - m) * 0.5 * (1.0 + ns.cos(math.pi * ns.minimum(k, T) / T))
        W, s = float(p["warmup_steps"]), p["start_factor"]
        return s + (1.0 - s) * ns.minimum(k, W) / W


def _fmt(v: Any) -> str:
    """A parameter value as the canonical string writes it (milestones as ``[a, b]``)."""
    if isinstance(v, tuple):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return repr(v)


#: :meth:`Schedule.factor`'s functions on Python numbers (:func:`backend_namespace`'s on arrays).
_PY = SimpleNamespace(cos=math.cos, minimum=min, ge=lambda k, m: 1.0 if k >= m else 0.0)


def backend_namespace(ops: Any) -> Any:
    """``cos``, ``minimum`` and ``ge`` (1.0 where ``k >= m``, else 0.0) of a backend's ops, for
    :meth:`Schedule.factor` on the step counter ``k`` (a backend scalar)."""

    def minimum(a: Any, b: float) -> Any:
        return ops.minimum(a, ops.zeros_like(a) + b)

    def ge(k: Any, m: float) -> Any:
        return ops.where(k >= m, ops.ones_like(k), ops.zeros_like(k))

    return SimpleNamespace(cos=ops.cos, minimum=minimum, ge=ge)


_CALL = re.compile(r"^\s*([a-z_]+)\s*(?:\((.*)\))?\s*$", re.S)


def _parse_value(name: str, kind: str, text: str) -> Any:
    """One parameter's value, checked against its type in :data:`KINDS`."""
    text = text.strip()
    if kind.startswith("ints"):
        inner = text.strip("[]() ")
        try:
            floats = [float(t) for t in inner.split(",") if t.strip()]
        except ValueError:  # name the parameter, not only the unparsable text
            raise ValueError(f"{name} must be increasing positive integers separated by commas "
                             f"(e.g. [30, 60]), got {text!r}") from None
        vals = tuple(int(v) for v in floats if math.isfinite(v))
        if not vals or len(vals) != len(floats) or any(v < 1 for v in vals) \
                or list(vals) != sorted(vals) or any(v != int(v) for v in floats):
            raise ValueError(f"{name} must be increasing positive integers, got {text!r}")
        return vals
    if kind.startswith("unit"):
        u = text.strip("'\" ")
        if u not in ("step", "epoch"):
            raise ValueError(f"unit must be 'step' or 'epoch', got {text!r}")
        return u
    try:
        v = float(text)
    except ValueError:  # float()'s own message names no parameter
        what = "a positive integer" if kind.startswith("int") else "a finite float >= 0"
        raise ValueError(f"{name} must be {what}, got {text!r}") from None
    if kind.startswith("int"):
        if not math.isfinite(v) or v != int(v) or v < 1:  # (int() of inf or nan raises)
            raise ValueError(f"{name} must be a positive integer, got {text!r}")
        return int(v)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite float >= 0, got {text!r}")
    return v


def _split_args(body: str) -> list[str]:
    """``body`` split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in body:
        depth += (ch in "[(") - (ch in "])")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return parts


@lru_cache(maxsize=256)
def parse(text: str) -> Schedule:
    """Parse a schedule string (the canonical form or a hand-written one)."""
    m = _CALL.match(text) if isinstance(text, str) else None
    if m is None or m.group(1) not in KINDS:
        raise ValueError(f"schedule must be one of {sorted(KINDS)} written as "
                         f"'kind(param=value, ...)' (e.g. 'step(step_size=30, gamma=0.1)'), "
                         f"got {text!r}")
    kind, body = m.group(1), m.group(2) or ""
    allowed = {**KINDS[kind], **_COMMON}
    given: dict[str, Any] = {}
    for part in _split_args(body):
        key, eq, val = part.partition("=")
        key = key.strip()
        if not eq or key not in allowed:
            raise ValueError(f"schedule {kind!r} takes {sorted(allowed)}, got {part.strip()!r}")
        if key in given:
            raise ValueError(f"schedule {text!r} gives {key} twice; give each parameter once")
        given[key] = _parse_value(key, allowed[key], val)
    return _build(kind, given)


def _build(kind: str, given: dict[str, Any]) -> Schedule:
    """The :class:`Schedule` of ``kind`` from the parsed parameters, defaults and ranges checked."""
    defaults = {"min_factor": 0.0, "start_factor": 0.0}
    params: list[tuple[str, Any]] = []
    for name, typ in KINDS[kind].items():
        if name not in given and not typ.endswith("?"):
            raise ValueError(f"schedule {kind!r} needs {name}=...")
        params.append((name, given.get(name, defaults.get(name))))
    p: dict[str, Any] = dict(params)
    for name in ("gamma", "min_factor", "start_factor"):
        if name in p and not 0 <= p[name] <= (1.0 if name != "gamma" else math.inf):
            raise ValueError(f"schedule {kind!r}: {name} must be in [0, 1], got {p[name]!r}")
    if "gamma" in p and p["gamma"] <= 0:
        raise ValueError(f"schedule {kind!r}: gamma must be > 0, got {p['gamma']!r}")
    return Schedule(kind, tuple(params), int(given.get("every", 1)), given.get("unit", "step"))


def check_schedule(v: Any) -> str:
    """Validator of the ``schedule`` hyperparameter: its canonical string."""
    if v is None:
        return "constant"
    if isinstance(v, Schedule):
        return str(v)
    return str(parse(v))


def step_decay(step_size: int, gamma: float = 0.1, *, unit: str = "step") -> Schedule:
    """Multiply the learning rate by ``gamma`` every ``step_size`` steps (torch ``StepLR``)."""
    return parse(f"step(step_size={step_size}, gamma={gamma!r}, unit={unit!r})")


def multistep(milestones: list[int] | tuple[int, ...], gamma: float = 0.1, *,
              unit: str = "step") -> Schedule:
    """Multiply the learning rate by ``gamma`` at each milestone (torch ``MultiStepLR``)."""
    ms = ", ".join(str(int(m)) for m in milestones)
    return parse(f"multistep(milestones=[{ms}], gamma={gamma!r}, unit={unit!r})")


def exponential(gamma: float, *, unit: str = "step") -> Schedule:
    """Multiply the learning rate by ``gamma`` every step (torch ``ExponentialLR``)."""
    return parse(f"exponential(gamma={gamma!r}, unit={unit!r})")


def cosine(total_steps: int, min_factor: float = 0.0, *, unit: str = "step") -> Schedule:
    """Cosine decay from 1 to ``min_factor`` over ``total_steps``, then flat (Loshchilov and
    Hutter 2017, no restarts; torch ``CosineAnnealingLR``, Keras ``CosineDecay``)."""
    return parse(f"cosine(total_steps={total_steps}, min_factor={min_factor!r}, unit={unit!r})")


def warmup(warmup_steps: int, start_factor: float = 0.0, *, unit: str = "step") -> Schedule:
    """Linear warm-up from ``start_factor`` to 1 over ``warmup_steps``, then constant (Goyal et
    al. 2017; torch ``LinearLR``)."""
    return parse(f"warmup(warmup_steps={warmup_steps}, start_factor={start_factor!r}, "
                 f"unit={unit!r})")


__all__ = ["KINDS", "Schedule", "backend_namespace", "check_schedule", "cosine", "exponential",
           "multistep", "parse", "step_decay", "warmup"]
