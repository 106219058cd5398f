"""Native optax adapter: an optimizer's :class:`~optcmp.optimizers.OptaxOptimizer` on JAX.

Imported only when a run needs it. The optimizer is ``optax.<name>(**options)`` built with every
argument its declaration gives (optax's own defaults never decide a run: e.g. ``optax.adagrad``
starts its accumulator at 0.1 and puts epsilon 1e-7 inside the square root, ``optax.rmsprop``
puts it inside by default and its learning rate inside the momentum buffer), wrapped as an
:class:`~optcmp.optimizers.UpdateRule` (:class:`OptaxRule`) and run by the reference
adapter's machinery: one ``jax.jit`` step, the fused ``lax.fori_loop`` blocks, optcmp's
minibatch sequence, the warm-up of every shape. A schedule becomes a callable learning rate
``lr * s(count)`` (optax's own step counter, from 0), clipping is optcmp's global-norm formula
before the update (the reference rule's).

``optax.lbfgs`` (:attr:`~optcmp.optimizers.OptaxOptimizer.linesearch`) takes the objective:
a step evaluates the incoming iterate only when optax's state holds no value from the previous
line search (:func:`optax.value_and_grad_from_state`, the first step), then runs the zoom line
search; every evaluation is counted in ``nfev``/``njev``, read off the clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import optax

from optcmp.frameworks.jax.backend import JaxBackend
from optcmp.frameworks.reference import ReferenceAdapter, build_step, reuse_key
from optcmp.frameworks.reuse import ReuseKey
from optcmp.frameworks.stepper import Adapter, Block
from optcmp.optimizers import OptaxOptimizer, UpdateRule, clip_global_norm
from optcmp.optimizers.base import NotApplicable


class OptaxRule(UpdateRule):
    """An optax gradient transformation as an update rule; the state is ``(optax_state,)``."""

    def __init__(self, tx: Any, clip_norm: float | None = None, described: str = "",
                 layout: Any = None, eval_params: Callable[..., Any] | None = None) -> None:
        self.tx, self.clip_norm = tx, clip_norm
        #: what a compiled step of this rule is kept under: the transformation's name and
        #: every argument it was built with (its functions' addresses change from run to run)
        self.reuse_parts = (described, clip_norm) if described else None
        #: the parameters' names and shapes: the transformation sees the named arrays
        self.layout, self.eval_params = layout, eval_params

    def _tree(self, x: Any) -> Any:
        """``x`` as the transformation sees it: the named arrays, or the flat vector."""
        return x if self.layout is None else self.layout.unflatten(x, jnp)

    def _flat(self, tree: Any) -> Any:
        """The inverse of :meth:`_tree`."""
        if self.layout is None:
            return tree
        return jnp.concatenate([jnp.reshape(tree[n], (-1,)) for n in self.layout.names])

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        """``(tx.init(x),)`` with every leaf of a fixed dtype (optax starts some as weakly
        typed scalars, which a step makes strong: the second step would compile again)."""
        state = self.tx.init(self._tree(x))
        return (jax.tree.map(lambda a: jnp.array(a, dtype=jnp.asarray(a).dtype), state),)

    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        g = clip_global_norm(ops, g, self.clip_norm)
        updates, new = self.tx.update(self._tree(g), state[0], self._tree(x))
        return optax.apply_updates(x, self._flat(updates)), (new,)

    def evaluated(self, ops: Any, x: Any, state: tuple[Any, ...], hp: dict[str, Any]) -> Any:
        """The parameters optax's ``eval_params`` gives (Schedule-Free's average), else ``x``."""
        if self.eval_params is None or hp.get("eval_at", "y") == "y":
            return x
        return self._flat(self.eval_params(state[0], self._tree(x)))


class DeviceCount:
    """An evaluation count held on the device, converted when it is added to a Python int (by
    the loop driver, off the clock)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __int__(self) -> int:
        return int(self.value)

    def __radd__(self, other: int) -> int:
        return other + int(self.value)


def learning_rate(lr: float, schedule: str, ops: Any, dtype: Any) -> Callable[[Any], Any]:
    """optcmp's schedule as optax's callable learning rate: ``lr * s(count)``."""
    from optcmp.optimizers.schedule import backend_namespace, parse

    s, ns = parse(schedule), backend_namespace(ops)
    return lambda count: lr * s.factor(jnp.asarray(count, dtype), ns)


def lbfgs_step(problem: Any, ops: Any, tx: Any) -> Callable[..., Any]:
    """One optax L-BFGS iteration, not compiled."""
    objective = problem.objective

    def step(x: Any, state: tuple[Any, ...], batch: dict[str, Any]) -> Any:
        st = state[0]

        def value_fn(z: Any) -> Any:
            return objective(ops, z, batch)

        prev = optax.tree.get(st, "value")
        v, g = optax.value_and_grad_from_state(value_fn)(x, state=st)
        updates, st = tx.update(g, st, x, value=v, grad=g, value_fn=value_fn)
        info = optax.tree.get(st, "info")
        searched = 0 if info is None else info.num_linesearch_steps
        first = jnp.where(jnp.isfinite(prev), 0, 1)
        nfev = jnp.asarray(first + searched, jnp.int32)
        return v, ops.norm(g), optax.apply_updates(x, updates), (st, nfev)

    return step


class OptaxNativeAdapter(ReferenceAdapter):
    """``optax.<name>(**options)`` on the JAX backend, run like the reference rule.

    Built like :class:`~optcmp.frameworks.stepper.Adapter`; the spec's optimizer must declare an
    :class:`~optcmp.optimizers.OptaxOptimizer`.
    """

    framework = "optax"
    describes = "optax.{name}"
    decl: OptaxOptimizer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self.backend, JaxBackend):
            raise NotApplicable(f"optax runs on the JAX backend, not {self.backend.name!r}")
        if self.decl.linesearch:
            if kwargs.get("gradient", "auto") == "analytic":
                raise NotApplicable("optax.lbfgs: its line search differentiates the objective "
                                    "itself (gradient='analytic' cannot be honoured); use "
                                    "gradient='auto' or 'autodiff'")
            self.gradient = "autodiff"

    def transform(self) -> tuple[Any, dict[str, Any]]:
        """The optax transformation and the arguments it was built with (every one explicit)."""
        opts = self._options()
        sched = self.hyper.get("schedule", "constant")
        built = dict(opts)
        if sched not in (None, "constant") and opts.get("learning_rate") is not None:
            built["learning_rate"] = learning_rate(float(opts["learning_rate"]), sched,
                                                   self.backend.ops,
                                                   self.backend.jnp_dtype)  # type: ignore[attr-defined]
            opts["learning_rate"] = f"{opts['learning_rate']!r} * schedule {sched!r}"
        if self.decl.linesearch:
            ls = opts.get("linesearch")
            built["linesearch"] = None if ls is None else optax.scale_by_zoom_linesearch(**ls)
        if self.decl.tree is not None:
            named = self.decl.tree(self.hyper, self.problem.layout, optax)
            built.update(named)
            opts.update({k: tuple(v.items()) if isinstance(v, Mapping) else v
                         for k, v in named.items()})
        tx = optax_function(self.decl.name)(**built)
        l2 = 0.0 if self.decl.l2 is None else float(self.decl.l2(self.hyper))
        if l2:
            tx = optax.chain(optax.add_decayed_weights(l2), tx)
            opts["add_decayed_weights (before)"] = l2
        return tx, opts

    def setup(self) -> None:
        Adapter.setup(self)
        self.resolve_learning_rate()
        tx, opts = self.transform()
        text = ", ".join(f"{k}={_plain(v)}" for k, v in opts.items())
        named = self.problem.layout if self.decl.tree is not None else None
        self.rule = OptaxRule(tx, self.hyper.get("clip_norm"), f"optax.{self.decl.name}({text})",
                              named, optax_function(self.decl.eval_params)
                              if self.decl.eval_params else None)
        b = self.backend
        self.x = b.asarray(self.x0)
        self.state = b.place_state(self.rule.init_state(b.ops, self.x))
        self.curvature = None
        if self.decl.linesearch:
            self.state = b.place_state((self.state[0], jnp.zeros((), jnp.int32)))
        self._example = (self.x, self.state, self.data)
        if self.decl.linesearch:
            key = reuse_key(b, self.problem, self.rule, self.hyper, grad_norm=True,
                            gradient=self.gradient, value=True)
            self._step = b.compile(lbfgs_step(self.problem, b.ops, tx), self._example,
                                   rows=(2,), reuse=None if key is None else ReuseKey(
                                       key.owner, (*key.parts, "optax line-search step")))
        else:
            self._step = build_step(b, self.problem, self.rule, self.hyper,
                                    grad_norm=not self.stochastic, example=self._example,
                                    gradient=self.gradient, value=not self.stochastic)
        self._k = 0
        if self.stochastic:
            self._init_batches()
        said = self.info.rule.describe(self.problem.layout, self.hyper) if self.info.rule else ""
        self.implementation = (f"optax.{self.decl.name}({text}) (optax {optax.__version__})"
                               + (f" ({said})" if said else ""))

    def fuse_blocker(self) -> str:
        """L-BFGS steps are not fused (the line search's evaluations vary from step to step)."""
        if self.decl.linesearch:
            return "optax L-BFGS spends a varying number of evaluations per step"
        return super().fuse_blocker()

    def step(self) -> Block:
        out = super().step()
        if self.decl.linesearch:
            out.nfev = out.njev = DeviceCount(self.state[1])  # type: ignore[assignment]
        return out


def optax_function(name: str) -> Any:
    """``optax.<name>``, a dotted name (``"contrib.muon"``) looked up part by part."""
    out: Any = optax
    for part in name.split("."):
        out = getattr(out, part)
    return out


def _plain(v: Any) -> str:
    """An argument for the implementation text (nested line-search options included)."""
    if isinstance(v, Mapping):
        return "scale_by_zoom_linesearch(" + ", ".join(f"{k}={_plain(x)}" for k, x in
                                                      v.items()) + ")"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return repr(v) if not isinstance(v, str) or "schedule" not in v else v


__all__ = ["DeviceCount", "OptaxNativeAdapter", "OptaxRule", "lbfgs_step", "learning_rate",
           "optax_function"]
