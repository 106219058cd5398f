"""Steppers of a user's own model (:mod:`optcmp.problems.native`): the framework's optimizer
on the model's own parameters, in the framework's containers between steps.

:class:`ModelStepper` is the part the three frameworks share: what the framework's optimizer
refuses (closures, clipping), the minibatch sequence of
:class:`~optcmp.frameworks.stepper.MinibatchAdapter` (the same rows for every optimizer and
framework), the untimed warm-up on every minibatch shape a run sees, and the one-step
:class:`~optcmp.frameworks.stepper.Block`; each framework's ``model_stepper`` module builds
the model copy and the optimizer and takes the step, its ``model_reference`` module the same
with optcmp's reference rule (:mod:`optcmp.frameworks.model_reference`;
:data:`optcmp.frameworks.adapters.MODEL_STEPPERS` names them).
"""

from __future__ import annotations

import time
from abc import abstractmethod
from typing import Any

import numpy as np

from optcmp.frameworks.stepper import Block, MinibatchAdapter
from optcmp.optimizers.adam import CONVENTIONS
from optcmp.optimizers.base import NotApplicable, OptimizerSpec, optimizer_info
from optcmp.optimizers.muon import NS_DTYPES

#: The conventions a native model's optimizer runs as its framework does: their values.
OWN = {"convention": CONVENTIONS, "ns_dtype": NS_DTYPES}


def own_convention(spec: OptimizerSpec, framework: str) -> OptimizerSpec:
    """``spec`` under the ``framework`` optimizer's own epsilon convention (or Muon's
    Newton-Schulz precision) where that alone keeps the native from running (a native model
    runs its framework's optimizer as people run it; the convention it ran is recorded with
    the hyperparameters)."""
    decl = next((n for n in optimizer_info(spec.name).natives if n.framework == framework), None)
    hp = spec.hyperparameters
    key = next((k for k in OWN if k in hp), None)
    if decl is None or key is None or decl.unsupported(hp) is None:
        return spec
    own = [c for c in OWN[key] if decl.unsupported({**hp, key: c}) is None]
    return spec.replace(**{key: own[0]}) if own else spec

def options_text(options: dict[str, Any]) -> str:
    """The optimizer's arguments for the implementation text (numpy scalars as numbers)."""
    return ", ".join(f"{k}={v.item() if isinstance(v, np.generic) else v!r}"
                     for k, v in options.items())


class ModelStepper(MinibatchAdapter):
    """The framework's optimizer on a copy of a native model (under its own epsilon
    convention, :func:`own_convention`); a subclass implements
    :meth:`build`, :meth:`step_on`, :meth:`save`, :meth:`load` and :meth:`x_numpy`."""

    #: optcmp's reference rule (:class:`~optcmp.frameworks.model_reference.ModelReference`),
    #: not the framework's optimizer.
    reference = False

    def __init__(self, spec: OptimizerSpec, *args: Any, **kwargs: Any) -> None:
        name, what = spec.name, self.framework
        if not self.reference:
            if spec.impl not in ("auto", "native"):
                raise NotApplicable(f"{name} impl={spec.impl!r}: a native {what} model runs "
                                    "its framework's own optimizers (impl='native' or 'auto') "
                                    "or optcmp's reference rules (impl='reference')")
            if not any(n.framework == what for n in optimizer_info(name).natives):
                raise NotApplicable(f"{name} has no {what} implementation to run a native "
                                    f"{what} model")
            spec = own_convention(spec, what)
        super().__init__(spec, *args, **kwargs)
        if self.hyper.get("clip_norm") is not None and not self.reference:
            raise NotApplicable(f"{name}: clip_norm on a native {what} model is not supported "
                                "by its framework's optimizer here; leave clip_norm unset or "
                                "run impl='reference'")
        if getattr(self.decl, "closure", False) or getattr(self.decl, "linesearch", False):
            raise NotApplicable(f"{name}: its {what} optimizer evaluates the objective itself; "
                                "a native model runs optimizers that step from a gradient")
        self.gradient = "autodiff"

    #: Parameter dtypes whose updates can round away: their no-op steps are counted.
    LOW_PRECISION = ("bfloat16", "float16")
    #: Steps that changed no parameter (low-precision models; None: not counted).
    noop_steps: int | None = None
    _before: np.ndarray | None = None
    _seen = 0

    @property
    def native(self) -> Any:
        """The problem's model evaluator (``TorchModel``, ``KerasModel`` or ``JaxModel``)."""
        return getattr(self.problem, "model")  # noqa: B009 - a ModelProblem's, untyped here

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        self.build()
        self._k = 0
        if self.stochastic:
            self._init_batches()

    @abstractmethod
    def build(self) -> None:
        """The run's copy of the model at ``x0``, its optimizer and the step (untimed)."""

    @abstractmethod
    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        """One training step on ``batch``: the loss before it and (full batch) the gradient
        norm, as framework scalars."""

    def fuse_blocker(self) -> str:
        if self.native.dtype in self.LOW_PRECISION:
            return (f"the steps that change no {self.native.dtype} parameter are counted "
                    "between steps, off the clock")
        return super().fuse_blocker()

    def ready(self, n: int) -> int:
        """Count the step before as a no-op when it changed no parameter (low precision)."""
        self.count_noop()
        return super().ready(n)

    def count_noop(self) -> None:
        """Compare the parameters with those before the last step (off the clock); the runner
        calls it once more after the last step."""
        if self._before is None or self._k == self._seen:
            return
        now = self.x_numpy()
        if self.noop_steps is not None and np.array_equal(now, self._before):
            self.noop_steps += 1
        self._before, self._seen = now, self._k

    def step(self) -> Block:
        fun, gnorm = self.step_on(self._next_batch())
        self._k += 1
        return self._output(fun, gnorm)

    def warmup(self) -> float:
        """A step on every minibatch shape a run sees (tracing, compiling, first-call
        allocations), untimed, then back to the state before."""
        saved = self.save()
        t0 = time.perf_counter()
        for k in self._warmup_steps():
            self.step_on(self._batch(k) if self.stochastic else self.data)
        self.load(saved)
        self.backend.sync()
        elapsed = time.perf_counter() - t0
        if self.stochastic:
            self._forget_rows()
        if self.native.dtype in self.LOW_PRECISION:  # counted from the first timed step
            self.noop_steps, self._before, self._seen = 0, self.x_numpy(), self._k
        # the observations' evaluations compile here too, not between timed steps
        self.x_numpy()
        self.problem.value_and_grad(self.x0, self.problem.train_data)
        self.problem.fun64(self.x0)
        self.problem.metrics(self.x0)
        return elapsed


__all__ = ["ModelStepper", "options_text", "own_convention"]
