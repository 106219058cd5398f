r"""Muon (Jordan et al. 2024): momentum orthogonalised by Newton-Schulz, on the matrix parameters.

For a matrix parameter :math:`W` with gradient :math:`G`, momentum :math:`\mu`:

.. math::

    M_t &= \mu M_{t-1} + (1-\mu) G_t \ (\text{ema}) \quad\text{or}\quad
           \mu M_{t-1} + G_t \ (\text{sum}) \\
    U_t &= \mu M_t + (1-\mu) G_t \ (\text{Nesterov, ema}), \quad G_t + \mu M_t
           \ (\text{Nesterov, sum}), \quad M_t \ (\text{else}) \\
    W_t &= W_{t-1} (1 - \eta\lambda) - \eta\, s(W)\, \mathrm{NS}_k(U_t)

with ``bias_correction`` dividing :math:`M_t` by :math:`1-\mu^t` (and, with Nesterov, the
gradient term by :math:`1-\mu^t`, the momentum term by :math:`1-\mu^{t+1}`: optax's form).
:math:`\mathrm{NS}_k` is ``ns_steps`` quintic Newton-Schulz iterations
:math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^\top`, on :math:`U/(\lVert U\rVert_F +
\epsilon)` (transposed when it has more rows than columns). The step multiplier :math:`s(W)` is a
convention: ``"shape"`` :math:`\sqrt{\max(1, d_{out}/d_{in})}` (torch's default on its (out, in)
weights, optax's on (in, out)), ``"rms"`` :math:`r\sqrt{\max(m, n)}` (Keras' default, r = 0.2;
torch's ``match_rms_adamw``, optax's ``consistent_rms``), ``"none"`` 1. Which axis is the input
is ``layout``: ``"in_out"`` (optcmp's problems, Keras, Flax: ``x @ W``) or ``"out_in"``
(torch's ``Linear``). The other parameters (and the matrices ``partition`` leaves out) take
AdamW steps (epsilon placed as ``adam_convention`` says, decoupled decay
``adam_weight_decay``).

References
----------
K. Jordan et al., "Muon: An optimizer for hidden layers in neural networks", 2024,
https://kellerjordan.github.io/posts/muon/. J. Liu et al., "Muon is Scalable for LLM
Training", arXiv:2502.16982, 2025.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._common import (
    ScheduledRule,
    common_params,
    f64,
    keras_common,
    minibatch_params,
    requires,
    spec_from,
)
from optcmp.optimizers._hyperparams import (
    HyperParam,
    boolean,
    by_name,
    one_of,
    optional_positive_float,
    positive_float,
    positive_int,
)
from optcmp.optimizers._implementations import KerasOptimizer, OptaxOptimizer, TorchOptimizer
from optcmp.optimizers.base import (
    Conversion,
    NotApplicable,
    OptimizerInfo,
    OptimizerSpec,
    get_optimizer,
    register_optimizer,
)
from optcmp.optimizers.schedule import Schedule
from optcmp.optimizers.transforms import round_to_bfloat16

#: Step-multiplier rules.
SCALES = ("shape", "rms", "none")
#: Which axis of a stored matrix is its input.
LAYOUTS = ("in_out", "out_in")
MOMENTUM_FORMS = ("ema", "sum")
#: The named partitions: every 2-D parameter, or those whose name has no "embedding" (Keras).
PARTITIONS = ("2d", "2d_no_embedding")
#: Where the AdamW side adds epsilon (as ``optcmp.adam``'s ``convention``).
ADAM_CONVENTIONS = ("bias_corrected_eps", "eps_hat")
#: Newton-Schulz precisions: the run's dtype, or bfloat16 rounding at each of torch's operations.
NS_DTYPES = ("run", "bfloat16")
#: Keller Jordan's quintic coefficients (the default of torch, optax and Keras).
NS_COEFFS = (3.4445, -4.775, 2.0315)


def _ns_coeffs(v: Any) -> tuple[float, float, float]:
    """Validator: three finite floats (a, b, c), or them comma-separated (the command line)."""
    try:
        out = tuple(float(c) for c in (v.split(",") if isinstance(v, str) else v))
    except (TypeError, ValueError):
        out = ()
    if len(out) != 3 or not all(math.isfinite(c) for c in out):
        raise ValueError(f"ns_coeffs must be three finite floats (a, b, c), got {v!r}")
    return out  # type: ignore[return-value]


def _partition(v: Any) -> str | tuple[str, ...]:
    """Validator: a named partition or the names of the parameters that get Muon (a list, or
    comma-separated)."""
    if isinstance(v, str):
        named = v.strip().lower().replace("-", "_")
        if named in PARTITIONS:
            return named
        v = [n.strip() for n in v.split(",") if n.strip()]
    if isinstance(v, (list, tuple)) and all(isinstance(n, str) for n in v):
        return tuple(v)
    raise ValueError(f"partition must be one of {list(PARTITIONS)} or parameter names (a list "
                     f"or comma-separated), got {v!r}")


def _check(hp: Mapping[str, Any]) -> None:
    """Cross-check of a spec: the bias correction is of the averaged (``ema``) momentum, and
    ``adam_nesterov`` of the bias-corrected epsilon form."""
    if hp["bias_correction"] and hp["momentum_form"] != "ema":
        raise ValueError("bias_correction=True corrects the averaged momentum "
                         "(momentum_form='ema', optax's form), not momentum_form='sum'")
    if hp["adam_nesterov"] and hp["adam_convention"] != "bias_corrected_eps":
        raise ValueError("adam_nesterov=True is optax's AdamW side "
                         "(adam_convention='bias_corrected_eps'), not adam_convention='eps_hat'")


def muon_names(layout: Any, hp: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the parameters that take Muon steps under ``hp["partition"]``.

    Parameters
    ----------
    layout : ParamLayout
    hp : mapping

    Returns
    -------
    tuple of str
    """
    part = hp["partition"]
    shapes = dict(zip(layout.names, layout.shapes))
    if isinstance(part, str):
        return tuple(n for n, s in shapes.items()
                     if len(s) == 2 and not (part == "2d_no_embedding"
                                             and "embedding" in n.lower()))
    for n in part:
        if len(shapes.get(n, ())) != 2:
            what = f"has shape {shapes[n]}" if n in shapes else "is not a parameter"
            raise ValueError(f"partition names {n!r}, which {what}; Muon takes 2-D parameters "
                             f"only (the problem's parameters: {shapes})")
    return tuple(part)


def step_multiplier(shape: tuple[int, ...], hp: Mapping[str, Any]) -> float:
    """:math:`s(W)` of a matrix of ``shape`` under ``hp["scale"]`` and ``hp["layout"]``."""
    if hp["scale"] == "rms":
        return float(hp["rms_rate"]) * math.sqrt(max(shape))
    if hp["scale"] == "none":
        return 1.0
    d_in, d_out = shape if hp["layout"] == "in_out" else shape[::-1]
    return math.sqrt(max(1.0, d_out / d_in))


def newton_schulz(ops: Any, u: Any, coeffs: tuple[float, float, float], steps: int,
                  eps: float, dtype: str = "run") -> Any:
    """``steps`` quintic Newton-Schulz iterations on ``u / (||u||_F + eps)`` (a matrix); in
    ``dtype="bfloat16"`` each result rounded to bfloat16 where torch's Muon rounds it."""
    r = round_to_bfloat16 if dtype == "bfloat16" else (lambda v: v)
    tall = u.shape[0] > u.shape[1]
    x = r(ops.transpose(u) if tall else u)
    x = r(x / (r(ops.sqrt(ops.sum(x * x))) + eps))
    a, b, c = coeffs
    for _ in range(steps):
        gram = r(ops.matmul(x, ops.transpose(x)))
        x = r(a * x + ops.matmul(r(b * gram + c * ops.matmul(gram, gram)), x))
    return ops.transpose(x) if tall else x


class MuonRule(ScheduledRule):
    """Muon on the partition's matrices, AdamW on the rest; buffers: first moments (Muon's
    momentum and Adam's), Adam's second moments."""

    needs_layout = True

    def buffers(self, ops: Any, x: Any) -> tuple[Any, ...]:
        return (ops.zeros_like(x), ops.zeros_like(x))

    def describe(self, layout: Any, hp: Mapping[str, Any]) -> str:
        on = set(muon_names(layout, hp))
        if not on and isinstance(hp["partition"], str):  # [] asks for AdamW on every one
            raise ValueError(f"Muon takes 2-D parameters, and partition={hp['partition']!r} "
                             f"finds none among the problem's {dict(zip(layout.names, layout.shapes))}"
                             ": every step would be AdamW's; give the problem named matrix "
                             "parameters (x0 a dict of 2-D arrays) or compare adamw")
        sides = [(side, [(n, sz) for n, sz in zip(layout.names, layout.sizes)
                         if (n in on) == (side == "Muon")]) for side in ("Muon", "AdamW")]
        return "; ".join(f"{side}: {sum(sz for _, sz in ps):,} parameters in {len(ps)} "
                         f"array{'' if len(ps) == 1 else 's'}"
                         + (f" ({', '.join(n for n, _ in ps)})" if ps else "")
                         for side, ps in sides)

    def tensor_hyper(self, hp: dict[str, Any], layout: Any, i: int,
                     transposed: bool) -> dict[str, Any]:
        """Parameter ``i``'s side of the partition of the whole layout; a matrix stored
        (out, in) with the spec's ``layout`` (which names the (in, out) orientation) turned."""
        out = super().tensor_hyper(hp, layout, i, transposed)
        out["partition"] = (layout.names[i],) if layout.names[i] in muon_names(layout, hp) else ()
        if transposed:
            out["layout"] = LAYOUTS[1 - LAYOUTS.index(hp["layout"])]
        return out

    def apply(self, ops: Any, x: Any, g: Any, buf: tuple[Any, ...], hp: dict[str, Any], lr: Any,
              t: Any) -> tuple[Any, tuple[Any, ...]]:
        layout = hp["param_layout"]
        on = set(muon_names(layout, hp))
        m, v = buf
        xs, ms, vs = [], [], []
        for name, shape, (a, b) in zip(layout.names, layout.shapes, layout.offsets()):
            if name in on:
                xi, mi = self._muon(ops, x[a:b], g[a:b], m[a:b], shape, hp, lr, t)
                vi = v[a:b]
            else:
                xi, mi, vi = self._adamw(ops, x[a:b], g[a:b], m[a:b], v[a:b], hp, lr, t)
            xs.append(xi)
            ms.append(mi)
            vs.append(vi)
        return ops.concat(xs), (ops.concat(ms), ops.concat(vs))

    @staticmethod
    def _muon(ops: Any, x: Any, g: Any, m: Any, shape: tuple[int, ...], hp: dict[str, Any],
              lr: Any, t: Any) -> tuple[Any, Any]:
        """One Muon step of a matrix stored flat."""
        mu, sum_form = hp["momentum"], hp["momentum_form"] == "sum"
        m = mu * m + g if sum_form else mu * m + (1.0 - mu) * g
        bc = hp["bias_correction"]
        if hp["nesterov"] and sum_form:
            u = g + mu * m
        elif hp["nesterov"]:
            u = (mu * m / (1.0 - mu ** (t + 1.0)) + (1.0 - mu) * g / (1.0 - mu ** t) if bc
                 else mu * m + (1.0 - mu) * g)
        else:
            u = m / (1.0 - mu ** t) if bc else m
        o = newton_schulz(ops, ops.reshape(u, shape), hp["ns_coeffs"], hp["ns_steps"],
                          hp["ns_eps"], hp["ns_dtype"])
        step = step_multiplier(shape, hp) * ops.reshape(o, (-1,))
        wd = hp["weight_decay"]
        return (x * (1.0 - lr * wd) if wd else x) - lr * step, m

    @staticmethod
    def _adamw(ops: Any, x: Any, g: Any, m: Any, v: Any, hp: dict[str, Any], lr: Any,
               t: Any) -> tuple[Any, Any, Any]:
        """One AdamW step of a parameter left out (epsilon as ``adam_convention`` says)."""
        b1, b2 = hp["adam_beta1"], hp["adam_beta2"]
        if hp["adam_learning_rate"] is not None:
            lr = lr * (hp["adam_learning_rate"] / hp["learning_rate"])
        m = (1.0 - b1) * g + b1 * m
        v = (1.0 - b2) * (g * g) + b2 * v
        if hp["adam_convention"] == "eps_hat":  # Keras: epsilon on the uncorrected root
            upd = m * (ops.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)) / (ops.sqrt(v) + hp["adam_eps"])
        else:
            mhat = (b1 * m / (1.0 - b1 ** (t + 1.0)) + (1.0 - b1) * g / (1.0 - b1 ** t)
                    if hp["adam_nesterov"] else m / (1.0 - b1 ** t))
            upd = mhat / (ops.sqrt(v / (1.0 - b2 ** t)) + hp["adam_eps"])
        wd = hp["adam_weight_decay"]
        return x - lr * (upd + wd * x if wd else upd), m, v


def muon(learning_rate: float = 0.02, momentum: float = 0.95, nesterov: bool = True,
         momentum_form: str = "ema", bias_correction: bool = False,
         weight_decay: float = 0.0, scale: str = "shape", rms_rate: float = 0.2,
         layout: str = "in_out", ns_coeffs: tuple[float, float, float] = NS_COEFFS,
         ns_steps: int = 5, ns_eps: float = 1e-8, ns_dtype: str = "run", partition: str | tuple[str, ...] = "2d",
         adam_learning_rate: float | None = None, adam_beta1: float = 0.9,
         adam_beta2: float = 0.999, adam_eps: float = 1e-8, adam_weight_decay: float = 0.0,
         adam_nesterov: bool = False, adam_convention: str = "bias_corrected_eps",
         schedule: str | Schedule | None = "constant",
         clip_norm: float | None = None, batch_size: int | None = None, shuffle: bool = True,
         *, impl: str = "auto", label: str = "") -> OptimizerSpec:
    r"""Muon on the matrix parameters, AdamW on the others, every convention named.

    The frameworks' defaults, in these terms: ``torch.optim.Muon`` is ``momentum_form="ema",
    bias_correction=False, weight_decay=0.1, scale="shape", layout="out_in",
    ns_dtype="bfloat16"``; ``optax.contrib.muon`` is ``bias_correction=True, weight_decay=0,
    scale="shape", layout="in_out", adam_nesterov=True``; ``keras.optimizers.Muon`` is
    ``momentum_form="sum", weight_decay=0.004, scale="rms", rms_rate=0.2, ns_eps=1e-7,
    partition="2d_no_embedding", adam_weight_decay=0.004, adam_eps=1e-7,
    adam_convention="eps_hat"``. :meth:`OptimizerSpec.describe` shows every value a run
    used; the run's implementation text says which parameters each side got.

    Parameters
    ----------
    learning_rate : float, default 0.02
    momentum : float, default 0.95
    nesterov : bool, default True
    momentum_form : {"ema", "sum"}, default "ema"
        ``ema`` (torch, optax) or ``sum`` (Keras): the same direction after orthogonalisation
        up to ``ns_eps``.
    bias_correction : bool, default False
        Divide the momentum by :math:`1-\mu^t` (optax).
    weight_decay : float, default 0.0
        Decoupled, ``W (1 - lr * weight_decay)``, on the Muon side (torch 0.1, optax 0, Keras
        0.004).
    scale : {"shape", "rms", "none"}, default "shape"
    rms_rate : float, default 0.2
        The factor of ``scale="rms"``.
    layout : {"in_out", "out_in"}, default "in_out"
        Which axis of the problem's matrices is the input (optcmp's problems: ``in_out``).
    ns_coeffs : tuple of 3 floats, default (3.4445, -4.775, 2.0315)
    ns_steps : int, default 5
    ns_eps : float, default 1e-8
        Added to the Frobenius norm before Newton-Schulz (torch clamps the norm at 1e-7).
    ns_dtype : {"run", "bfloat16"}, default "run"
        Newton-Schulz in the run's dtype (optax, Keras) or rounded to bfloat16 after each
        operation, as ``torch.optim.Muon`` computes it for every weight dtype (the only
        setting torch's native runs; it agrees with this rule to bfloat16's rounding).
    partition : {"2d", "2d_no_embedding"} or list of str, default "2d"
        Which parameters get Muon: every 2-D one, those without "embedding" in their name, or
        these names (a list, or one comma-separated string).
    adam_learning_rate : float, optional
        The AdamW side's rate (None: ``learning_rate``; the schedule applies to both).
    adam_beta1, adam_beta2, adam_eps, adam_weight_decay : float
    adam_nesterov : bool, default False
        Nesterov momentum on the AdamW side (optax uses ``nesterov`` for both sides).
    adam_convention : {"bias_corrected_eps", "eps_hat"}, default "bias_corrected_eps"
        Where the AdamW side adds epsilon (torch and optax; Keras: ``eps_hat``, no Nesterov).
    schedule : str or Schedule, default "constant"
    clip_norm : float, optional
    batch_size : int, optional
    shuffle : bool, default True
    impl : {"auto", "native", "reference"}
    label : str, optional

    Returns
    -------
    OptimizerSpec
    """
    return spec_from("muon", locals())


def _optax_tree(h: Mapping[str, Any], layout: Any, optax: Any) -> dict[str, Any]:
    """``optax.contrib.muon``'s dimension numbers: the spec's partition and layout."""
    on = set(muon_names(layout, h))
    axes = (0, 1) if h["layout"] == "in_out" else (1, 0)
    dims = optax.contrib.MuonDimensionNumbers
    return {"muon_weight_dimension_numbers": {
        n: dims(*axes) if n in on else None for n in layout.names}}


def _optax_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``optax.contrib.muon`` arguments, every one explicit."""
    lr = float(h["learning_rate"])
    return {"learning_rate": lr, "ns_coeffs": tuple(h["ns_coeffs"]),
            "ns_steps": int(h["ns_steps"]), "beta": float(h["momentum"]),
            "eps": float(h["ns_eps"]), "weight_decay": float(h["weight_decay"]),
            "weight_decay_mask": None, "mu_dtype": None, "nesterov": bool(h["nesterov"]),
            "adaptive": False, "preconditioning": "frobenius",
            "adam_b1": float(h["adam_beta1"]), "adam_b2": float(h["adam_beta2"]),
            "adam_eps_root": 0.0, "adam_weight_decay": float(h["adam_weight_decay"]),
            "adam_learning_rate": None if h["adam_learning_rate"] is None
            else float(h["adam_learning_rate"]),
            "consistent_rms": float(h["rms_rate"]) if h["scale"] == "rms" else None}


def _optax_requires(h: Mapping[str, Any]) -> str | None:
    """optax's Muon: bias-corrected EMA momentum, one epsilon, Nesterov on both sides."""
    why = requires("momentum_form", "ema", "optax.contrib.muon")(h) or requires(
        "ns_dtype", "run", "optax.contrib.muon")(h)
    if why is None and not h["bias_correction"]:
        why = ("optax.contrib.muon bias-corrects its momentum (bias_correction=True); the "
               "reference rule (impl='reference') runs bias_correction=False on every backend")
    if why is None and h["scale"] == "none":
        why = ("optax.contrib.muon scales by scale='shape' or 'rms', not 'none'; the reference "
               "rule (impl='reference') runs scale='none' on every backend")
    if why is None and (h["ns_eps"] != h["adam_eps"] or h["adam_nesterov"] != h["nesterov"]):
        why = ("optax.contrib.muon uses one eps for Newton-Schulz and its AdamW side "
               f"(ns_eps={h['ns_eps']!r} = adam_eps={h['adam_eps']!r}) and Nesterov on both "
               f"(adam_nesterov=nesterov={h['nesterov']!r}); the reference rule "
               "(impl='reference') runs other values on every backend")
    if why is None and h["adam_learning_rate"] is not None and h.get("schedule") != "constant":
        why = ("optax.contrib.muon schedules adam_learning_rate only when it is None; the "
               "reference rule (impl='reference') runs it here")
    return why


#: Each framework's Muon: the settings it fixes, and its step multipliers as (scale, rms_rate;
#: "any": a free rate, None: unused).
TARGETS: dict[str, tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {
    TorchOptimizer.framework: ({"momentum_form": "ema", "bias_correction": False, "ns_eps": 1e-7,
               "adam_convention": "bias_corrected_eps", "ns_dtype": "bfloat16"}, (("shape", None), ("rms", 0.2))),
    KerasOptimizer.framework: ({"momentum_form": "sum", "bias_correction": False, "ns_eps": 1e-7,
               "adam_convention": "eps_hat", "adam_nesterov": False, "ns_dtype": "run"},
              (("rms", "any"), ("none", None))),
    OptaxOptimizer.framework: ({"momentum_form": "ema", "bias_correction": True,
               "adam_convention": "bias_corrected_eps", "ns_dtype": "run"}, (("shape", None), ("rms", "any"))),
}


def _matched_scale(h: dict[str, Any], to: str, mats: dict[str, tuple[int, ...]]
                   ) -> tuple[dict[str, Any], float]:
    """A step multiplier of ``to`` that is the spec's on every matrix up to one factor (1
    where one is): its hyperparameters and that factor (the learning rate's)."""
    src = {n: step_multiplier(shape, h) for n, shape in mats.items()}
    found = []
    for scale, rate in TARGETS[to][1]:
        trial = {**h, "scale": scale}
        if rate == "any":
            trial["rms_rate"] = next((src[n] / math.sqrt(max(s)) for n, s in mats.items()),
                                     h["rms_rate"])
        elif rate is not None:
            trial["rms_rate"] = rate
        ratios = [src[n] / step_multiplier(shape, trial) for n, shape in mats.items()] or [1.0]
        if max(ratios) - min(ratios) <= 1e-12 * max(ratios):
            rho = 1.0 if math.isclose(ratios[0], 1.0, rel_tol=1e-12) else ratios[0]
            found.append((rho != 1.0, {k: trial[k] for k in ("scale", "rms_rate")}, rho))
    if found:
        _, scale_hp, rho = min(found, key=lambda f: f[0])
        return scale_hp, rho
    raise ValueError(f"{to}'s Muon has no step multiplier equal to scale={h['scale']!r} on "
                     f"every matrix (multipliers {src}); no one learning rate converts it")


def _effective_eps(h: Mapping[str, Any]) -> float:
    """``ns_eps`` in the units of the averaged momentum (the sum form is 1/(1-mu) larger)."""
    return h["ns_eps"] * ((1.0 - h["momentum"]) if h["momentum_form"] == "sum" else 1.0)


def _convert(spec: OptimizerSpec, to: str, layout: Any) -> Conversion:
    """:meth:`OptimizerSpec.convert` of a Muon spec (step multiplier, momentum form, epsilon)."""
    if to not in TARGETS:
        raise ValueError(f"to must be one of {sorted(TARGETS)}, got {to!r}")
    if layout is None:
        raise ValueError("Muon's step multiplier depends on the matrices' shapes: pass "
                         "layout=problem.layout")
    h = dict(spec.hyperparameters)
    on = set(muon_names(layout, h))
    mats = {n: s for n, s in zip(layout.names, layout.shapes) if n in on}
    scale, rho = _matched_scale(h, to, mats)
    new = {**h, **TARGETS[to][0], **scale}
    if rho != 1.0:  # the decay's and the AdamW side's steps kept
        new.update(learning_rate=h["learning_rate"] * rho, weight_decay=h["weight_decay"] / rho,
                   adam_learning_rate=h["adam_learning_rate"] or h["learning_rate"])
    if to == OptaxOptimizer.framework:  # one epsilon, one Nesterov switch for both sides
        new.update(adam_eps=new["ns_eps"], adam_nesterov=new["nesterov"])
    notes = [f"{k}={h[k]!r} -> {new[k]!r}" for k in new if new[k] != h[k]]
    exact = math.isclose(_effective_eps(new), _effective_eps(h), rel_tol=1e-12)
    if not exact:
        notes.append("the Newton-Schulz normalisation's epsilon, in the momentum's units, "
                     f"moves from {_effective_eps(h):.3g} to {_effective_eps(new):.3g}")
    if new["bias_correction"] != h["bias_correction"]:
        exact = False
        notes.append("the bias correction divides the momentum by 1 - momentum**t: "
                     "step-dependent (its direction too, with Nesterov)")
    left = [n for n in layout.names if n not in on]
    torch = to == TorchOptimizer.framework
    if left and (torch or any(new[k] != h[k] for k in ("adam_eps", "adam_nesterov",
                                                       "adam_convention"))):
        exact = False
        notes.append(f"the AdamW side {left}: " + {
            TorchOptimizer.framework: "torch.optim.AdamW beside torch.optim.Muon, without "
            "Nesterov",
            KerasOptimizer.framework: "Keras' AdamW adds epsilon to the uncorrected root (eps * "
            "sqrt(1 - beta2**t) in the other form's terms) without Nesterov: step-dependent",
            OptaxOptimizer.framework: "optax uses ns_eps and nesterov for it too"}[to])
    if torch:
        exact = False
        notes.append("torch clamps the norm at ns_eps (the reference adds it)")
    out = get_optimizer("muon", impl=spec.impl, label=spec.own_label, **new)
    return Conversion(out, exact, tuple(notes))


def _torch_matrices(h: Mapping[str, Any], layout: Any) -> tuple[tuple[str, bool], ...]:
    """The partition's matrices, transposed to torch's (out, in) where stored (in, out)."""
    return tuple((n, h["layout"] == "in_out") for n in muon_names(layout, h))


def _torch_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``torch.optim.Muon`` arguments, every one explicit."""
    return {"lr": float(h["learning_rate"]), "weight_decay": float(h["weight_decay"]),
            "momentum": float(h["momentum"]), "nesterov": bool(h["nesterov"]),
            "ns_coefficients": tuple(h["ns_coeffs"]), "eps": float(h["ns_eps"]),
            "ns_steps": int(h["ns_steps"]),
            "adjust_lr_fn": "original" if h["scale"] == "shape" else "match_rms_adamw"}


def _torch_rest(h: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """``torch.optim.AdamW`` beside ``torch.optim.Muon`` (as torch's documentation pairs them)
    with the spec's AdamW side, every argument explicit."""
    if h["adam_nesterov"] or h["adam_convention"] != "bias_corrected_eps":
        raise NotApplicable(
            "torch.optim.AdamW (the parameters torch.optim.Muon leaves out) adds epsilon to the "
            "bias-corrected root without Nesterov (adam_convention='bias_corrected_eps', "
            f"adam_nesterov=False), not adam_convention={h['adam_convention']!r}, "
            f"adam_nesterov={h['adam_nesterov']!r}; the reference rule (impl='reference') runs "
            "these on every backend")
    lr = h["adam_learning_rate"] if h["adam_learning_rate"] is not None else h["learning_rate"]
    return "AdamW", {"lr": float(lr), "betas": (float(h["adam_beta1"]), float(h["adam_beta2"])),
                     "eps": float(h["adam_eps"]), "weight_decay": float(h["adam_weight_decay"]),
                     "amsgrad": False, "maximize": False, "foreach": False,
                     "capturable": False, "differentiable": False, "fused": None}


def _torch_requires(h: Mapping[str, Any]) -> str | None:
    """torch's Muon: EMA momentum without bias correction; its two scale rules."""
    why = requires("momentum_form", "ema", "torch.optim.Muon")(h) or requires(
        "ns_dtype", "bfloat16", "torch.optim.Muon")(h)
    if why is None and h["bias_correction"]:
        why = ("torch.optim.Muon does not bias-correct its momentum (bias_correction=False); "
               "the reference rule (impl='reference') runs bias_correction=True on every "
               "backend")
    if why is None and (h["scale"] == "none" or (h["scale"] == "rms" and h["rms_rate"] != 0.2)):
        why = ("torch.optim.Muon scales by scale='shape' ('original') or scale='rms' with "
               f"rms_rate=0.2 ('match_rms_adamw'), not scale={h['scale']!r}, "
               f"rms_rate={h['rms_rate']!r}; the reference rule (impl='reference') runs it")
    return why


def _keras_exclude(partition: str | tuple[str, ...]) -> list[str] | None:
    """Keras' ``exclude_layers`` for a partition of names: a pattern every other path matches."""
    if isinstance(partition, str):
        return None
    return [f"^(?!(?:{'|'.join(re.escape(n) for n in partition)})$)"]


def _keras_options(h: Mapping[str, Any]) -> dict[str, Any]:
    """``keras.optimizers.Muon`` arguments, every one explicit (floats as numpy.float64)."""
    return {"learning_rate": float(h["learning_rate"]), "adam_beta_1": f64(h["adam_beta1"]),
            "adam_beta_2": f64(h["adam_beta2"]), "adam_weight_decay": f64(h["adam_weight_decay"]),
            "epsilon": f64(h["adam_eps"]), "weight_decay": f64(h["weight_decay"]),
            "exclude_layers": _keras_exclude(h["partition"]),
            "exclude_embeddings": h["partition"] == "2d_no_embedding",
            # Python floats where Keras multiplies a variable by them (a numpy scalar first
            # would ask the variable for a numpy array inside the compiled step)
            "muon_a": float(h["ns_coeffs"][0]), "muon_b": float(h["ns_coeffs"][1]),
            "muon_c": float(h["ns_coeffs"][2]), "adam_lr_ratio": 1,
            "momentum": float(h["momentum"]), "ns_steps": int(h["ns_steps"]),
            "nesterov": bool(h["nesterov"]),
            "rms_rate": None if h["scale"] == "none" else float(h["rms_rate"]), **keras_common(h)}


def _keras_requires(h: Mapping[str, Any]) -> str | None:
    """Keras' Muon: the sum form, its fixed epsilon, scales, partitions and AdamW side."""
    want = {"momentum_form": "sum", "bias_correction": False, "ns_eps": 1e-7,
            "adam_convention": "eps_hat", "adam_nesterov": False, "adam_learning_rate": None,
            "ns_dtype": "run"}
    bad = {k: v for k, v in want.items() if h[k] != v}
    if h["scale"] == "shape":
        bad["scale"] = "'rms' or 'none'"
    if not bad:
        return None
    return ("keras.optimizers.Muon implements " + ", ".join(f"{k}={v!r}" if k != "scale"
                                                            else f"{k}={v}"
                                                            for k, v in bad.items())
            + f", not {', '.join(f'{k}={h[k]!r}' for k in bad)}; the reference rule "
            "(impl='reference') runs these values on every backend")


register_optimizer(OptimizerInfo(
    name="muon",
    params=by_name(
        HyperParam("learning_rate", 0.02, positive_float("learning_rate"), "step size"),
        HyperParam("momentum", 0.95, positive_float("momentum", upper=1.0, allow_zero=True),
                   "momentum coefficient, in [0, 1)"),
        HyperParam("nesterov", True, boolean("nesterov"), "Nesterov momentum"),
        HyperParam("momentum_form", "ema", one_of("momentum_form", MOMENTUM_FORMS),
                   "ema (torch, optax) or sum (Keras)"),
        HyperParam("bias_correction", False, boolean("bias_correction"),
                   "bias-correct the momentum (optax)"),
        HyperParam("weight_decay", 0.0, positive_float("weight_decay", allow_zero=True),
                   "decoupled decay of the Muon side (torch 0.1, optax 0, Keras 0.004)"),
        HyperParam("scale", "shape", one_of("scale", SCALES),
                   "step multiplier: shape sqrt(max(1, out/in)), rms rms_rate*sqrt(max(m, n)), "
                   "none"),
        HyperParam("rms_rate", 0.2, positive_float("rms_rate"), "factor of scale='rms'"),
        HyperParam("layout", "in_out", one_of("layout", LAYOUTS),
                   "which axis of a matrix is the input: in_out (x @ W) or out_in (torch)"),
        HyperParam("ns_coeffs", NS_COEFFS, _ns_coeffs, "Newton-Schulz coefficients (a, b, c)"),
        HyperParam("ns_steps", 5, positive_int("ns_steps"), "Newton-Schulz iterations"),
        HyperParam("ns_eps", 1e-8, positive_float("ns_eps"), "added to the norm before NS"),
        HyperParam("ns_dtype", "run", one_of("ns_dtype", NS_DTYPES),
                   "Newton-Schulz precision: run (the run's dtype) or bfloat16 (torch)"),
        HyperParam("partition", "2d", _partition,
                   "parameters that get Muon: 2d, 2d_no_embedding or a list of names"),
        HyperParam("adam_learning_rate", None, optional_positive_float("adam_learning_rate"),
                   "AdamW side's rate (None: learning_rate)"),
        HyperParam("adam_beta1", 0.9, positive_float("adam_beta1", upper=1.0, allow_zero=True),
                   "AdamW side's first-moment decay"),
        HyperParam("adam_beta2", 0.999, positive_float("adam_beta2", upper=1.0,
                                                       allow_zero=True),
                   "AdamW side's second-moment decay"),
        HyperParam("adam_eps", 1e-8, positive_float("adam_eps"), "AdamW side's epsilon"),
        HyperParam("adam_weight_decay", 0.0, positive_float("adam_weight_decay",
                                                            allow_zero=True),
                   "AdamW side's decoupled decay"),
        HyperParam("adam_nesterov", False, boolean("adam_nesterov"),
                   "Nesterov momentum on the AdamW side (optax)"),
        HyperParam("adam_convention", "bias_corrected_eps",
                   one_of("adam_convention", ADAM_CONVENTIONS),
                   "the AdamW side's epsilon: bias_corrected_eps (torch, optax) or eps_hat "
                   "(Keras)"),
        common_params(), minibatch_params()),
    summary="Muon on matrices (scale rule, layout, NS, momentum form named), AdamW on the rest",
    reference="Jordan et al. (2024); Liu et al. (2025), arXiv:2502.16982",
    check=_check,
    rule=MuonRule(),
    stochastic=True,
    convert=_convert,
    natives=(TorchOptimizer("Muon", _torch_options, requires=_torch_requires, auto=False,
                            matrices=_torch_matrices, rest=_torch_rest),
             KerasOptimizer("Muon", _keras_options, requires=_keras_requires, named=True),
             OptaxOptimizer("contrib.muon", _optax_options, requires=_optax_requires,
                            tree=_optax_tree),),
), muon)
