"""The reference adapter: an optimizer's :class:`~optcmp.optimizers.UpdateRule` on any backend.

The step is composed from the backend's pieces and nothing else: its
:meth:`~optcmp.frameworks.base.Backend.value_and_grad` (autodiff, or the problem's analytic
gradient on numpy), its ``ops`` (the gradient norm and the update rule) and its
:meth:`~optcmp.frameworks.base.Backend.compile` (one XLA call on TensorFlow, the plain function on
numpy and eager PyTorch). A new backend therefore runs every reference optimizer unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.fingerprint import canonical_json
from optcmp.frameworks.base import minibatch_gradient
from optcmp.frameworks.reuse import ReuseKey, problem_parts
from optcmp.frameworks.stepper import Block, MinibatchAdapter
from optcmp.optimizers import UpdateRule
from optcmp.optimizers.base import NotApplicable

if TYPE_CHECKING:
    from optcmp.frameworks.base import Backend
    from optcmp.problems.base import Problem

#: ``step(x, state, batch[, curvature]) -> (fun, grad_norm, x_new, state_new)``
StepFn = Callable[..., tuple[Any, Any, Any, tuple[Any, ...]]]


def step_function(backend: Backend, problem: Problem, rule: UpdateRule,
                  hyper: Mapping[str, Any], *, grad_norm: bool = True,
                  gradient: str = "auto", value: bool = True) -> StepFn:
    """One optimizer iteration from the backend's pieces and an update rule, not compiled."""
    # minibatch steps skip the objective nobody reads
    vg = None if value else minibatch_gradient(backend, problem, gradient)
    if vg is None:
        vg = backend.value_and_grad(problem, gradient)
        if not value and backend.compiler == "numpy" and problem.has_numpy_grad:
            grad = problem.grad

            def vg(x: Any, batch: dict[str, Any]) -> tuple[None, Any]:
                return None, grad(x, batch)
    o = backend.ops
    update = rule.update
    hp = dict(hyper)
    if rule.needs_layout:
        hp["param_layout"] = problem.layout
    norm = o.norm if grad_norm else None

    def step_curv(x: Any, state: tuple[Any, ...], batch: dict[str, Any], curv: Any) -> Any:
        f, g = vg(x, batch)
        gnorm = None if norm is None else norm(g)
        x_new, state_new = update(o, x, g, state, hp, curv)
        return f, gnorm, x_new, tuple(state_new)

    def step(x: Any, state: tuple[Any, ...], batch: dict[str, Any]) -> Any:
        f, g = vg(x, batch)
        gnorm = None if norm is None else norm(g)
        x_new, state_new = update(o, x, g, state, hp, None)
        return f, gnorm, x_new, tuple(state_new)

    return step_curv if rule.needs_curvature else step


def reuse_key(backend: Backend, problem: Problem, rule: UpdateRule, hyper: Mapping[str, Any],
              *, grad_norm: bool, gradient: str, value: bool) -> ReuseKey | None:
    """The key a compiled step of these pieces is kept under (None: the backend never
    compiles, or the problem has no JSON description)."""
    if "compile" not in backend.capabilities:
        return None
    described = problem_parts(problem)
    if described is None:
        return None
    try:
        hp = canonical_json(dict(hyper))
    except (TypeError, ValueError):
        return None
    described_rule = getattr(rule, "reuse_parts", None)  # a rule wrapping a library's object
    rule_parts = (type(rule).__module__, type(rule).__qualname__,
                  described_rule if described_rule is not None
                  else repr(sorted(getattr(rule, "__dict__", {}).items())))
    return ReuseKey(problem, ("reference step", *described, rule_parts, hp, gradient,
                              bool(grad_norm), bool(value)))


def build_step(backend: Backend, problem: Problem, rule: UpdateRule,
               hyper: Mapping[str, Any], *, grad_norm: bool = True,
               example: tuple[Any, ...] | None = None, gradient: str = "auto",
               value: bool = True) -> StepFn:
    """One compiled optimizer iteration from the backend's pieces and an update rule."""
    step = step_function(backend, problem, rule, hyper, grad_norm=grad_norm, gradient=gradient,
                         value=value)
    if example is None:
        x0 = backend.asarray(np.zeros(problem.n_params))
        example = (x0, rule.init_state(backend.ops, x0), problem.train_data)
        if rule.needs_curvature:
            example = (*example, x0)
    key = reuse_key(backend, problem, rule, hyper, grad_norm=grad_norm, gradient=gradient,
                    value=value)
    if key is None:
        return backend.compile(step, example, rows=(2,))
    return backend.compile(step, example, rows=(2,), reuse=key)


class ReferenceAdapter(MinibatchAdapter):
    """Runs the optimizer's :class:`~optcmp.optimizers.UpdateRule` on any backend.

    Full batch unless the optimizer is stochastic (then minibatches in the
    :class:`~optcmp.batching.BatchOrder` drawn from the run's seed, identical on every backend,
    see :class:`~optcmp.frameworks.stepper.MinibatchAdapter`).
    """

    implementation = "optcmp reference update rule"
    fuses_full_batch = True

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        rule = self.info.rule
        assert rule is not None, f"optimizer {self.spec.name!r} has no reference rule"
        self.rule = rule
        said = rule.describe(self.problem.layout, self.hyper)
        self.implementation = type(self).implementation + (f" ({said})" if said else "")
        b = self.backend
        self.x = b.copy(b.asarray(self.x0))
        self.state = b.place_state(rule.init_state(b.ops, self.x))
        self.curvature = None
        if rule.needs_curvature and self.problem.hess_diag_is_constant:
            from optcmp.frameworks.numpy.ops import ops as np_ops

            curvature = np.asarray(self.problem.hess_diag(np_ops, self.x0,
                                                          self.problem.train_data))
            _check_curvature(self.problem, self.spec.name, curvature)
            self.curvature = b.asarray(curvature)
        example: tuple[Any, ...] = (self.x, self.state, self.data)
        if rule.needs_curvature:
            example = (*example, self.x)
        self._example = example
        self._step = build_step(b, self.problem, rule, self.hyper,
                                grad_norm=not self.stochastic, example=example,
                                gradient=self.gradient, value=not self.stochastic)
        self._k = 0
        self._in_place: Any = None
        self.update_path = "functional"
        if self.stochastic:
            self._init_batches()

    def _extra(self) -> tuple[Any, ...]:
        """The constant curvature argument of the step, when the rule takes one."""
        return (self.curvature,) if self.rule.needs_curvature else ()

    def fuse_blocker(self) -> str:
        """Why the steps cannot run fused: a curvature computed every step; else ``""``."""
        if self.rule.needs_curvature and self.curvature is None:
            return "its update uses a curvature computed every step"
        return super().fuse_blocker()

    def prepare_execution(self, execution: str) -> None:
        """Compile the fused block (minibatch steps: the shorter last minibatch included)."""
        super().prepare_execution(execution)
        if execution != "fused":
            return
        b, ex, full = self.backend, self._example, not self.stochastic
        step = step_function(b, self.problem, self.rule, self.hyper, grad_norm=full,
                             gradient=self.gradient, value=full)
        key = reuse_key(b, self.problem, self.rule, self.hyper, grad_norm=full,
                        gradient=self.gradient, value=full)
        kept: dict[str, Any] = {} if key is None else {"reuse": key}
        if full:
            self._block = b.compile_block(step, ex, n_max=self.block_max, **kept)
            return
        order = self.order
        self._all_rows = None
        if b.slices_are_views:  # a Python loop over the epoch's minibatch views
            self._block = None  # type: ignore[assignment]
            self._in_place = self._in_place_steps()
            if self._in_place is not None:
                self.update_path = "in-place"
            return
        kept_rows = self._init_span(int(np.size(self.x0)))
        self._block = b.compile_block(step, ex, batch_size=order.batch_size,
                                      n_rows=order.n_samples,
                                      steps_per_epoch=order.steps_per_epoch,
                                      snapshots=kept_rows, **kept)
        self._slice_only_in_blocks()
        self._all_rows = None if order.shuffle else b.index_array(order.epoch_indices(0))

    def _in_place_steps(self) -> Callable[..., Any] | None:
        """``steps(x, state, n, batches) -> (x, state)``: ``n`` minibatch steps on the
        minibatches ``batches`` hands out, of a rule whose update is
        ``x - lr * g`` (:meth:`~optcmp.optimizers.UpdateRule.plain_step`) on numpy, the
        products written in place (the same arithmetic, so the same iterates) into the block's
        own copy of the iterate (saved states hold the old one); None where there is none."""
        lr = self.rule.plain_step(self.hyper)
        problem = self.problem
        if (lr is None or self.backend.name != "numpy" or self.rule.needs_curvature
                or not problem.has_numpy_grad):
            return None
        grad = problem.grad  # the closure holds no reference to the adapter: runs free it

        def steps(x: Any, state: tuple[Any, ...], n: int,
                  batches: Any) -> tuple[Any, tuple[Any, ...]]:
            x, d = x.copy(), np.empty_like(x)
            for b in batches:
                np.multiply(grad(x, b), lr, d)  # positional out: less call overhead
                np.subtract(x, d, x)
            return x, ((state[0] + float(n), *state[1:]) if state else state)
        return steps

    def step(self) -> Block:
        if self.execution == "fused" and self.stochastic:  # one step of the fused block
            self._mini_block(self._block, 1)
            return self._output(None, None)
        batch = self._next_batch()
        if self.rule.needs_curvature:
            curv = self.curvature
            if curv is None:
                curv = self.problem.hess_diag(self.backend.ops, self.x, batch)
            fun, gnorm, self.x, self.state = self._step(self.x, self.state, batch, curv)
        else:
            fun, gnorm, self.x, self.state = self._step(self.x, self.state, batch)
        self._k += 1
        return self._output(fun, gnorm)

    def _mini_block(self, block: Any, n: int, first: int | None = None,
                    every: int = 1) -> Any:
        """``n`` minibatch steps; the compiled block returns the iterates it kept."""
        if block is None and self._in_place is not None:
            self.x, self.state = self._in_place(self.x, self.state, n, self._batches(self._k, n))
            self._k += n
            return None
        if block is None:  # uncompiled steps on the epoch's minibatches, nothing else
            step, x, state, extra = self._step, self.x, self.state, self._extra()
            for b in self._batches(self._k, n):
                _, _, x, state = step(x, state, b, *extra)
            self.x, self.state = x, state
            self._k += n
            return None
        idx, start = self._block_rows()
        self.x, self.state, kept, _ = block(n, self.x, self.state, self.data, idx, start,
                                            n + 1 if first is None else first, every,
                                            *self._extra())
        self._k += n
        return kept

    def save(self) -> Any:
        """The iterate, the optimizer state and the step: references, as the compiled steps
        update functionally."""
        return self.x, self.state, self._k

    def load(self, saved: Any) -> None:
        """Go back to a saved state."""
        self.x, self.state, self._k = saved

    def run_block(self, n: int, first: int | None = None, every: int = 1) -> Block:
        """``n`` steps in one call of the fused block (see :meth:`Backend.compile_block`)."""
        if self.stochastic:
            kept = self._mini_block(self._block, n, first, every)
            return Block(n, kept=None if first is None else kept)
        self.x, self.state, funs, gnorms = self._block(n, self.x, self.state, self.data,
                                                       *self._extra())
        self._k += n
        return Block(n, funs, gnorms)

    def warmup(self) -> float:
        """Every compiled shape once, untimed: the step on a full and on the shorter last
        minibatch, and the fused block; then the state is restored."""
        b = self.backend
        saved = (b.copy(self.x), tuple(b.copy(s) for s in self.state), self._k)
        t0 = time.perf_counter()
        if self.execution == "fused" and not self.stochastic:
            self.run_block(1)  # the only compiled program a fused full-batch run calls
        for k in self._step_warmup_steps() if self.execution == "step" or self.stochastic else ():
            self._k = k
            self.step()
        b.sync()
        elapsed = time.perf_counter() - t0
        self.x, self.state, self._k = saved[0], saved[1], saved[2]
        if self.stochastic:
            self._forget_rows()
        return elapsed

    def x_numpy(self) -> np.ndarray:
        x = self.rule.evaluated(self.backend.ops, self.x, self.state, self.hyper)
        return np.asarray(self.backend.to_numpy(x), dtype=np.float64).reshape(-1)


def _check_curvature(problem: Any, optimizer: str, curvature: np.ndarray) -> None:
    """A rule that divides by the curvature diagonal cannot run where it is not positive."""
    bad = np.flatnonzero(~(np.isfinite(curvature) & (curvature > 0)))
    if bad.size == 0:
        return
    j = int(bad[0])
    what = "zero" if curvature[j] == 0 else f"{curvature[j]:.3g}"
    hint = (" (the feature is zero in every row: drop the column)"
            if curvature[j] == 0 and hasattr(problem, "feature_names") else "")
    raise NotApplicable(
        f"{optimizer} divides the gradient by the curvature diagonal, which is {what} at "
        f"{problem.describe_param(j)}{hint}; {bad.size} of {curvature.size} entries are not "
        "positive")
