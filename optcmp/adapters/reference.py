"""The reference adapter: an optimizer's :class:`~optcmp.optimizers.base.UpdateRule` on any backend.

The step is composed from the backend's pieces and nothing else: its
:meth:`~optcmp.backends.base.Backend.value_and_grad` (autodiff, or the problem's analytic
gradient on numpy), its ``ops`` (the gradient norm and the update rule) and its
:meth:`~optcmp.backends.base.Backend.compile` (one XLA call on TensorFlow, the plain function on
numpy and eager PyTorch). A new backend therefore runs every reference optimizer unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.adapters.base import Adapter, MinibatchMixin, StepOutput
from optcmp.optimizers.base import NotApplicable, UpdateRule

if TYPE_CHECKING:
    from optcmp.backends.base import Backend
    from optcmp.problems.base import Problem

#: ``step(x, state, batch[, curvature]) -> (fun, grad_norm, x_new, state_new)``
StepFn = Callable[..., tuple[Any, Any, Any, tuple[Any, ...]]]


def build_step(backend: Backend, problem: Problem, rule: UpdateRule,
               hyper: Mapping[str, Any], *, grad_norm: bool = True,
               example: tuple[Any, ...] | None = None) -> StepFn:
    """One compiled optimizer iteration from the backend's pieces and an update rule.

    Parameters
    ----------
    backend : Backend
    problem : Problem
    rule : UpdateRule
    hyper : mapping
        Resolved hyperparameters (Python floats: constants of a compiled graph).
    grad_norm : bool, default True
        Compute the 2-norm of the gradient inside the step. Minibatch steps pass False: nobody
        reads it, so it is not timed.
    example : tuple, optional
        Example arguments ``(x, state, batch[, curvature])`` fixing the compiled signature;
        default: zeros and the problem's training data.

    Returns
    -------
    callable
        ``step(x, state, batch)`` (``step(x, state, batch, curvature)`` when
        ``rule.needs_curvature``) returning ``(fun, grad_norm, x_new, state_new)``: ``fun`` is
        the objective at the **incoming** iterate (computed by the step anyway), ``grad_norm``
        its gradient's norm or None; both stay backend scalars, read off the clock.
    """
    vg = backend.value_and_grad(problem)
    o = backend.ops
    update = rule.update
    hp = dict(hyper)
    norm = o.norm if grad_norm else None

    def step(x: Any, state: tuple[Any, ...], batch: dict[str, Any], curv: Any = None) -> Any:
        f, g = vg(x, batch)
        gnorm = None if norm is None else norm(g)
        x_new, state_new = update(o, x, g, state, hp, curv)
        return f, gnorm, x_new, tuple(state_new)

    if example is None:
        x0 = backend.asarray(np.zeros(problem.n_params))
        example = (x0, rule.init_state(o, x0), problem.train_data)
        if rule.needs_curvature:
            example = (*example, x0)
    return backend.compile(step, example, rows=(2,))


class ReferenceAdapter(MinibatchMixin, Adapter):
    """Runs the optimizer's :class:`~optcmp.optimizers.base.UpdateRule` on any backend.

    Full batch unless the optimizer is stochastic (then minibatches in the
    :class:`~optcmp.batching.BatchOrder` drawn from the run's seed, identical on every backend,
    see :class:`~optcmp.adapters.base.MinibatchMixin`).
    """

    implementation = "optcmp reference update rule"

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        rule = self.info.rule
        assert rule is not None, f"optimizer {self.spec.name!r} has no reference rule"
        self.rule = rule
        b = self.backend
        self.x = b.copy(b.asarray(self.x0))
        self.state = rule.init_state(b.ops, self.x)
        self.curvature = None
        if rule.needs_curvature and self.problem.hess_diag_is_constant:
            from optcmp.backends.numpy_ import ops as np_ops

            curvature = np.asarray(self.problem.hess_diag(np_ops, self.x0,
                                                          self.problem.train_data))
            _check_curvature(self.problem, self.spec.name, curvature)  # issue 15
            self.curvature = b.asarray(curvature)
        example: tuple[Any, ...] = (self.x, self.state, self.data)
        if rule.needs_curvature:
            example = (*example, self.x)
        self._step = build_step(b, self.problem, rule, self.hyper,
                                grad_norm=not self.stochastic, example=example)
        self._k = 0
        if self.stochastic:
            self._init_batches()

    def step(self) -> StepOutput:
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

    def warmup(self) -> float:
        b = self.backend
        saved = (b.copy(self.x), tuple(b.copy(s) for s in self.state), self._k)
        t0 = time.perf_counter()
        self.step()
        b.sync()
        elapsed = time.perf_counter() - t0
        self.x, self.state, self._k = saved[0], saved[1], saved[2]
        return elapsed

    def x_numpy(self) -> np.ndarray:
        return np.asarray(self.backend.to_numpy(self.x), dtype=np.float64).reshape(-1)


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
