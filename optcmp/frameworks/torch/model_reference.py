"""optcmp's reference rule on a user's ``torch.nn.Module``, one parameter tensor at a time.

The run's copy of the module is :mod:`optcmp.frameworks.torch.model_stepper`'s; a step is
``backward`` on the module's loss, then the rule through torch's ops on each parameter (a flat
view of it) with its own state, written back in place (eager, as ``torch.optim`` steps).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from optcmp.frameworks.model_reference import ModelReference
from optcmp.frameworks.torch.model_stepper import module_at


class TorchModelReference(ModelReference):
    """The spec's reference rule on a copy of the problem's module."""

    container = "parameters"

    def build(self) -> None:
        self.module, self.params = module_at(self.native, self.x0)
        if self.native.dtype != self.backend.dtype:  # bfloat16, float16: the data cast once
            self.data = {k: v.to(self.native.torch_dtype) if v.is_floating_point() else v
                         for k, v in self.data.items()}
        self.ops = self.backend.ops
        with torch.no_grad():
            self.states = self.init_states(self.ops, [p.reshape(-1) for p in self.params])

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        for p in self.params:
            p.grad = None
        f = self.native.loss(self.module(batch["X"]), batch["y"])
        f.backward()
        with torch.no_grad():
            gs = [torch.zeros_like(p).reshape(-1) if p.grad is None else p.grad.reshape(-1)
                  for p in self.params]
            xs, self.states = self.update(self.ops, [p.reshape(-1) for p in self.params], gs,
                                          self.states)
            for p, x in zip(self.params, xs):
                p.copy_(x.reshape(p.shape))
            gnorm = None if self.stochastic else self.grad_norm(self.ops, gs)
        return f.detach(), gnorm

    def save(self) -> Any:
        return ([p.detach().clone() for p in self.params], self.states, self._k)

    def load(self, saved: Any) -> None:
        params, self.states, self._k = saved
        with torch.no_grad():
            for p, v in zip(self.params, params):
                p.copy_(v)

    def x_numpy(self) -> np.ndarray:
        with torch.no_grad():
            xs = self.evaluated(self.ops, [p.reshape(-1) for p in self.params], self.states)
            return self.flat([x.detach().cpu().double().numpy() for x in xs])


__all__ = ["TorchModelReference"]
