"""optcmp's reference rule on a user's own model (:mod:`optcmp.problems.native`), per tensor.

The :class:`~optcmp.optimizers.UpdateRule` of the spec runs on each of the model's parameter
tensors in the framework's containers, through the framework's ops (``backend.ops``), each
tensor with its own state: a rule written against one flat vector acts elementwise, and a
rule that reads ``hp["param_layout"]`` (Muon, LAMB, Adafactor) acts per named parameter
anyway, so each tensor gets a one-parameter layout with its name and shape. What a rule needs
across every parameter is taken across every tensor: the global-norm clip here, Prodigy's
distance estimate in its :meth:`~optcmp.optimizers.UpdateRule.update_all`. Nothing is
flattened into one vector on the hot path. Each framework's ``model_reference`` module builds
the model copy and the step as its ``model_stepper`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from optcmp.frameworks.models import ModelStepper
from optcmp.optimizers.base import NotApplicable, OptimizerSpec, optimizer_info


def reference_refusal(spec: OptimizerSpec) -> str | None:
    """Why the spec's reference rule cannot run on a native model's tensors, or None."""
    rule, name = optimizer_info(spec.name).rule, spec.name
    if rule is None:
        return f"{name} has no reference rule (impl='reference') to run on a native model"
    if rule.needs_curvature:
        return (f"{name} divides by the objective's curvature diagonal, which a native model "
                "does not give")
    return None


def stored_transposed(model: Any, i: int, shape: tuple[int, ...]) -> bool:
    """Whether 2-D parameter ``i`` is stored (out, in), the transpose of the (in, out) layout
    optcmp's problems, Keras and Flax use (torch's ``Linear``: ``model.canonical`` says so)."""
    if len(shape) != 2:
        return False
    a = np.arange(shape[0] * shape[1]).reshape(shape)
    return not np.array_equal(model.canonical(i, a), a)


class ModelReference(ModelStepper):
    """The spec's reference rule on a copy of a native model, one tensor at a time; a
    subclass builds the copy and the step (:meth:`build`, :meth:`step_on`, ...) and calls
    :meth:`update` there with the framework's ops."""

    framework = ""  # no native declaration: optcmp's rule
    reference = True
    describes = "optcmp reference update rule"

    def __init__(self, spec: OptimizerSpec, *args: Any, **kwargs: Any) -> None:
        why = reference_refusal(spec)
        if why is not None:
            raise NotApplicable(why)
        super().__init__(spec, *args, **kwargs)
        if self.native.dtype in self.LOW_PRECISION:
            raise NotApplicable(
                f"{spec.name} impl='reference' on a {self.native.dtype} model would keep the "
                f"rule's state (its step count among it) in {self.native.dtype}, where "
                "counting stops being exact at 256; run the framework's optimizer, or the "
                "model in float32")
        if getattr(self.native, "scheduler", None) is not None:
            raise NotApplicable(
                f"{spec.name} impl='reference': the module's torch LR scheduler steps a "
                "torch.optim optimizer, which optcmp's reference rule is not; give the rule "
                "a schedule= instead, or run a torch.optim optimizer (impl='native')")

    def resolve_learning_rate(self) -> None:
        """The resolved hyperparameters, then each tensor's (:meth:`tensor_hyper`)."""
        super().resolve_learning_rate()
        self.tensor_hyper()

    def tensor_hyper(self) -> None:
        """Each tensor's hyperparameters (the rule's
        :meth:`~optcmp.optimizers.UpdateRule.tensor_hyper`), the clip taken apart
        (:meth:`update`)."""
        rule = self.info.rule
        assert rule is not None
        self.rule = rule
        model, hp = self.native, dict(self.hyper)
        layout = self.problem.layout
        said = rule.describe(layout, hp)  # refuses a Muon partition that finds no matrix
        self._clip = hp.pop("clip_norm", None)
        hp["clip_norm"] = None
        self.hps: list[dict[str, Any]] = [
            rule.tensor_hyper(hp, layout, i, stored_transposed(model, i, shape))
            for i, shape in enumerate(model.shapes)]
        self.implementation = (f"{self.describes}{f' ({said})' if said else ''} on the "
                               f"model's {model.dtype} {self.container}, "
                               f"each of its {len(self.hps)} tensors with its own state")

    #: What the framework keeps the parameters in (the implementation text).
    container = "parameters"

    def init_states(self, ops: Any, xs: Sequence[Any]) -> list[tuple[Any, ...]]:
        """The rule's initial state of each flat tensor."""
        return [tuple(self.rule.init_state(ops, x)) for x in xs]

    def update(self, ops: Any, xs: Sequence[Any], gs: Sequence[Any],
               states: Sequence[tuple[Any, ...]]) -> tuple[list[Any], list[tuple[Any, ...]]]:
        """One step of the rule on every flat tensor ``xs`` with gradients ``gs`` (clipped to
        ``clip_norm`` by their global norm first, Keras' formula as the rule's)."""
        if self._clip is not None:
            n = ops.sqrt(sum(ops.sum(g * g) for g in gs))
            c = float(self._clip)
            scale = c * ops.minimum(1.0 / n, ops.zeros_like(n) + 1.0 / c)
            gs = [g * scale for g in gs]
        joint = self.rule.update_all(ops, list(xs), list(gs), list(states), self.hps[0])
        if joint is not None:
            return joint
        out = [self.rule.update(ops, x, g, s, h, None)
               for x, g, s, h in zip(xs, gs, states, self.hps)]
        return [o[0] for o in out], [tuple(o[1]) for o in out]

    def evaluated(self, ops: Any, xs: Sequence[Any],
                  states: Sequence[tuple[Any, ...]]) -> list[Any]:
        """The iterate the run judges, per flat tensor (Schedule-Free's ``x``, else ``xs``)."""
        return [self.rule.evaluated(ops, x, s, h) for x, s, h in zip(xs, states, self.hps)]

    def grad_norm(self, ops: Any, gs: Sequence[Any]) -> Any:
        """The global norm of the gradient tensors."""
        return ops.sqrt(sum(ops.sum(g * g) for g in gs))

    @staticmethod
    def flat(parts: Sequence[Any]) -> np.ndarray:
        """Host arrays of each tensor as one float64 vector (off the clock)."""
        return np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1) for p in parts])


__all__ = ["ModelReference", "reference_refusal", "stored_transposed"]
