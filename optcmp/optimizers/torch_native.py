"""Native PyTorch adapters: ``torch.optim.Adadelta``, ``torch.optim.SGD``, ``torch.optim.LBFGS``.

Imported only when a run needs them (registered as ``"module:Class"`` strings by the optimizer
modules). Every hyperparameter is passed to the constructor explicitly, including the ones optcmp
does not expose (``weight_decay=0``, ``maximize=False``, ``dampening=0``), so no PyTorch default
ever decides a run. Every step starts with ``optimizer.zero_grad(set_to_none=True)``: gradients
deposited by anything between two steps (a monitoring ``backward()``, a warm-up) are discarded
and cannot double the next update (CASES.md FC-11).

The iterate is one flat leaf tensor on the backend's device, the data are placed once, and a
step does no host round trip: the objective and gradient norm stay device scalars, read by the
monitor off the clock (``torch.optim.LBFGS`` is the exception, see :class:`TorchLBFGS`).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from optcmp.optimizers.base import Adapter, MinibatchMixin, StepOutput


class _TorchAdapter(MinibatchMixin, Adapter):
    """Common part: a flat leaf parameter, ``zero_grad`` + closure, warm-up on a throwaway copy."""

    torch_cls: Any = None

    def _options(self) -> dict[str, Any]:
        raise NotImplementedError

    def _make(self, x0: Any) -> tuple[torch.Tensor, torch.optim.Optimizer]:
        p = x0.detach().clone().requires_grad_(True)
        return p, self.torch_cls([p], **self._options())

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        self.param, self.opt = self._make(self.backend.asarray(self.x0))
        self._objective = self.problem.objective
        self._ops = self.backend.ops
        self._k = 0
        if self.stochastic:
            self._init_batches()
        opts = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        self.implementation = f"torch.optim.{self.torch_cls.__name__}({opts})"

    def _loss_and_grad(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                       batch: dict[str, Any]) -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        f = self._objective(self._ops, p, batch)
        f.backward()
        return f

    def _step_on(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                 batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor | None]:
        f = self._loss_and_grad(p, opt, batch)
        gnorm = None
        if not self.stochastic:  # minibatch steps report no gradient norm: don't time one
            with torch.no_grad():
                g = p.grad
                assert g is not None
                gnorm = torch.sqrt(torch.dot(g, g))
        opt.step()
        return f.detach(), gnorm

    def step(self) -> StepOutput:
        batch = self._batch() if self.stochastic else self.data
        fun, gnorm = self._step_on(self.param, self.opt, batch)
        self._k += 1
        if self.stochastic:
            return StepOutput(None, None, 1, 1)
        return StepOutput(fun, gnorm, 1, 1)

    def warmup(self) -> float:
        """One step of a throwaway parameter/optimizer pair (first-call allocations), untimed."""
        p, opt = self._make(self.param)
        batch = self._batch(0) if self.stochastic else self.data
        t0 = time.perf_counter()
        self._step_on(p, opt, batch)
        self.backend.sync()
        return time.perf_counter() - t0

    def x_numpy(self) -> np.ndarray:
        return np.asarray(self.backend.to_numpy(self.param), dtype=np.float64).reshape(-1)


class TorchAdadelta(_TorchAdapter):
    """``torch.optim.Adadelta`` with optcmp's ``learning_rate``, ``rho`` and ``eps``, full batch.

    Same update as :class:`~optcmp.optimizers.adadelta.AdadeltaRule` (the values are matched, not
    torch's defaults ``rho=0.9``).
    """

    torch_cls = torch.optim.Adadelta

    def _options(self) -> dict[str, Any]:
        h = self.hyper
        return {"lr": float(h["learning_rate"]), "rho": float(h["rho"]), "eps": float(h["eps"]),
                "weight_decay": 0.0, "maximize": False}


class TorchSGD(_TorchAdapter):
    """``torch.optim.SGD`` on optcmp's minibatch sequence (the reference adapter's one)."""

    torch_cls = torch.optim.SGD
    stochastic = True

    def _options(self) -> dict[str, Any]:
        h = self.hyper
        return {"lr": float(h["learning_rate"]), "momentum": float(h["momentum"]),
                "dampening": 0.0, "weight_decay": 0.0, "nesterov": bool(h["nesterov"]),
                "maximize": False}


class TorchLBFGS(_TorchAdapter):
    """``torch.optim.LBFGS`` with a strong-Wolfe line search, one L-BFGS iteration per step.

    Options passed: ``lr=1``, ``max_iter=1`` (one optcmp iteration is one L-BFGS iteration),
    ``max_eval=1 + max_linesearch`` (torch caps the line search at ``max_eval`` minus the
    evaluation already spent in the step, so the line search gets ``max_linesearch``
    evaluations, like scipy's ``maxls``), ``history_size`` from the spec,
    ``line_search_fn="strong_wolfe"``, and ``tolerance_grad = tolerance_change = 0`` so that
    torch never stops on its own and optcmp's stopping rule decides.

    Cost of one step: ``1 + m`` closure calls (objective and gradient), where the first one
    re-evaluates the incoming iterate (torch starts every ``step()`` with it; after the first
    step this point was already evaluated at the end of the previous line search) and ``m >= 1``
    are the line-search evaluations. All are counted in ``nfev`` and ``njev``. torch reads the
    loss and a few scalars (``float(loss)``, the curvature test ``y's > 1e-10``) on the host
    inside ``step()``: on CUDA every step synchronizes several times by design of
    ``torch.optim.LBFGS``.
    """

    torch_cls = torch.optim.LBFGS

    def _options(self) -> dict[str, Any]:
        h = self.hyper
        return {"lr": 1.0, "max_iter": 1, "max_eval": 1 + int(h["max_linesearch"]),
                "tolerance_grad": 0.0, "tolerance_change": 0.0,
                "history_size": int(h["history_size"]), "line_search_fn": "strong_wolfe"}

    def setup(self) -> None:
        super().setup()
        self.nfev = 0

    def _step_on(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                 batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        first: list[torch.Tensor] = []
        calls = [0]

        def closure() -> torch.Tensor:
            f = self._loss_and_grad(p, opt, batch)
            calls[0] += 1
            if not first:
                g = p.grad
                assert g is not None
                with torch.no_grad():
                    first.append(torch.sqrt(torch.dot(g, g)))
            return f

        f0: Any = opt.step(closure)  # type: ignore[arg-type]  # returns the first closure value
        self._calls = calls[0]
        return f0.detach(), first[0]

    def step(self) -> StepOutput:
        fun, gnorm = self._step_on(self.param, self.opt, self.data)
        self._k += 1
        self.nfev += self._calls
        return StepOutput(fun, gnorm, self._calls, self._calls)
