"""A user's ``torch.nn.Module`` trained by ``torch.optim.<name>`` on its own parameters.

Each run trains its own copy of the module (``copy.deepcopy``, untimed), set to the run's
initial point: the user's module is never changed and runs in threads share nothing. A step
is what a training loop does: ``zero_grad``, the module's forward pass and the loss,
``backward``, ``optimizer.step()`` (and torch's ``LambdaLR`` after it for a schedule). The
parameters stay in the module between steps; the flat iterate is built only off the clock.
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np
import torch

from optcmp._imports import first_import
from optcmp.frameworks.models import ModelStepper
from optcmp.optimizers import TorchOptimizer
from optcmp.optimizers.base import NotApplicable


class TorchModelStepper(ModelStepper):
    """``torch.optim.<name>(parameters, **options)`` on a copy of the problem's module."""

    framework = "torch"
    describes = "torch.optim.{name}"
    decl: TorchOptimizer

    @property
    def compiled(self) -> str:
        """``"eager"``; ``"torch.compile"`` for a module the user compiled or a compiled step;
        ``"torch.compile -> eager fallback"`` once dynamo hit its recompile limit (it then runs
        the frame eagerly, silently)."""
        if not (hasattr(self.native.model, "_orig_mod") or self.native.compile_step):
            return "eager"
        return "torch.compile -> eager fallback" if recompile_limit_hit() else "torch.compile"

    def build(self) -> None:
        model = self.native
        self.module, self.params = module_at(model, self.x0)
        self.loss = model.loss
        if model.dtype != self.backend.dtype:  # bfloat16, float16: the data cast once
            self.data = {k: v.to(model.torch_dtype) if v.is_floating_point() else v
                         for k, v in self.data.items()}
        opts = self._options()
        self._main, rest = self._split()
        first_import("torch._dynamo")  # torch.optim imports it at its first optimizer
        self.opt = getattr(torch.optim, self.decl.name)(self._main, **opts)
        self.rest = None
        if rest:  # the parameters the optimizer leaves out (torch.optim.Muon: all but 2-D)
            assert self.decl.rest is not None
            name, options = self.decl.rest(self.hyper)
            self.rest = getattr(torch.optim, name)(rest, **options)
        opts_all = [o for o in (self.opt, self.rest) if o is not None]
        self._scheds = scheds = self._schedulers(opts_all)
        self.sched = scheds[0] if scheds else None

        def update() -> None:
            for o in opts_all:
                o.step()
            for sch in scheds:
                sch.step()

        how = model.compile_step
        if how or hasattr(model.model, "_orig_mod"):  # this run's compiles, from empty caches
            import torch._dynamo as dynamo
            from torch._dynamo.utils import counters

            dynamo.reset()
            counters.clear()
        if how:  # the timed steps start from the state the warm-up compiled for
            for o in opts_all:
                fresh_state(o)
        self._update = update if not how else torch.compile(
            update, **({} if how is True else {"backend": how}))
        text = ", ".join(f"{k}={v!r}" for k, v in opts.items())
        beside = "" if self.rest is None else (
            f" ({len(self._main)} parameters; torch.optim.{type(self.rest).__name__} takes the "
            f"other {len(rest)})")
        after = f", {type(self.sched).__name__} after each step" if model.scheduler else ""
        self.implementation = (f"torch.optim.{self.decl.name}({text}) on the module's "
                               f"{model.dtype} parameters{beside}{after}" + (
                                   " (the update under torch.compile)" if how else ""))

    def _schedulers(self, opts: list[Any]) -> list[Any]:
        """The user's schedulers (``from_torch(scheduler=...)``) or ``LambdaLR`` of the spec's
        schedule, one per optimizer, stepped after it; none for a constant rate."""
        sched, factory = self.hyper.get("schedule", "constant"), self.native.scheduler
        if factory is not None:
            if sched != "constant":
                raise NotApplicable(f"{self.spec.label}: schedule={sched!r} and the module's "
                                    "scheduler both set the learning rate; give one")
            out = [factory(o) for o in opts]
            lr_scheduler = torch.optim.lr_scheduler
            for o, s in zip(opts, out):
                if not isinstance(s, lr_scheduler.LRScheduler):
                    raise TypeError(f"scheduler(optimizer) must return a torch LR scheduler "
                                    f"(torch.optim.lr_scheduler.LRScheduler), got "
                                    f"{type(s).__name__}")
                if isinstance(s, lr_scheduler.ReduceLROnPlateau):
                    raise NotApplicable("ReduceLROnPlateau steps on a metric the training loop "
                                        "passes it; optcmp steps a scheduler after each step "
                                        "without one: use a scheduler of the step count")
                if s.optimizer is not o:
                    raise TypeError("scheduler(optimizer) must schedule the optimizer it is "
                                    "given, not another one")
            return out
        if sched == "constant":
            return []
        from optcmp.optimizers.schedule import parse

        s = parse(sched)
        return [torch.optim.lr_scheduler.LambdaLR(o, lambda k: float(s.factor(float(k))))
                for o in opts]

    def _split(self) -> tuple[list[Any], list[Any]]:
        """The parameters the optimizer takes (``TorchOptimizer.matrices``: the spec's
        partition; a module's weights are in torch's own layout already) and the rest."""
        if self.decl.matrices is None:
            return self.params, []
        chosen = dict(self.decl.matrices(self.hyper, self.problem.layout))
        named = dict(zip(self.native.names, self.params))
        main = [p for n, p in named.items() if n in chosen]
        rest = [p for n, p in named.items() if n not in chosen]
        if not main or (rest and self.decl.rest is None):
            raise NotApplicable(f"torch.optim.{self.decl.name} takes none of this module's "
                                f"parameters {list(named)}; impl='reference' runs the spec")
        return main, rest

    def step_on(self, batch: dict[str, Any]) -> tuple[Any, Any]:
        self.opt.zero_grad(set_to_none=True)
        if self.rest is not None:
            self.rest.zero_grad(set_to_none=True)
        f = self.loss(self.module(batch["X"]), batch["y"])
        f.backward()
        gnorm = None
        if not self.stochastic:
            with torch.no_grad():
                gnorm = torch.sqrt(torch.stack([torch.sum(p.grad * p.grad) for p in self.params
                                                if p.grad is not None]).sum())
        self._update()
        return f.detach(), gnorm

    def save(self) -> Any:
        return ([p.detach().clone() for p in self.params], copy.deepcopy(self.opt.state_dict()),
                [s.state_dict() for s in self._scheds], self._k,
                None if self.rest is None else copy.deepcopy(self.rest.state_dict()))

    def load(self, saved: Any) -> None:
        params, state, scheds, self._k, rest = saved
        with torch.no_grad():
            for p, v in zip(self.params, params):
                p.copy_(v)
        self._load_optimizer(self.opt, state)
        if self.rest is not None:
            self._load_optimizer(self.rest, rest)
        for s, st in zip(self._scheds, scheds):
            s.load_state_dict(st)

    @staticmethod
    def _load_optimizer(opt: Any, state: dict[str, Any]) -> None:
        """The optimizer's saved state restored in place: its state dict and tensors stay the
        objects a compiled update guards on (an empty saved state clears it), else
        ``load_state_dict``."""
        now = opt.state_dict()
        if state["state"] and now["state"].keys() != state["state"].keys():
            opt.load_state_dict(copy.deepcopy(state))
            return
        params = [p for g in opt.param_groups for p in g["params"]]
        if not state["state"]:
            opt.state.clear()
        with torch.no_grad():
            for i, per in state["state"].items():
                live = opt.state[params[i]]
                for k, v in per.items():
                    if isinstance(v, torch.Tensor) and isinstance(live.get(k), torch.Tensor):
                        live[k].copy_(v)
                    else:
                        live[k] = copy.deepcopy(v)
        for group, saved in zip(opt.param_groups, state["param_groups"]):
            group.update({k: v for k, v in saved.items() if k != "params"})

    def x_numpy(self) -> np.ndarray:
        return torch.cat([p.detach().reshape(-1) for p in self.params]).cpu().double().numpy()


def module_at(model: Any, x0: np.ndarray) -> tuple[Any, list[Any]]:
    """A copy of a ``TorchModel``'s module at flat ``x0`` and its trainable parameters."""
    module = model.module_copy()  # another run's evaluation may be swapping its parameters
    params = [p for n, p in module.named_parameters() if n in model.names]
    with torch.no_grad():
        for p, t in zip(params, model.params(x0).values()):
            p.copy_(t)
    return module, params


def fresh_state(opt: Any) -> None:
    """Initialise ``opt``'s state as its first step does (``_init_group`` of an eager step on
    zero gradients, whose effect is undone): dynamo compiles a step for the state as the
    step initialised it, so a compiled update entered with an empty state compiles anew."""
    init = getattr(type(opt), "_init_group", None)
    params = [p for g in opt.param_groups for p in g["params"]]
    if init is None or opt.state:
        return
    fresh: dict[Any, dict[str, Any]] = {}

    def capture(group: Any, *args: Any, **kwargs: Any) -> Any:
        out = init(opt, group, *args, **kwargs)
        fresh.update({p: {k: v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v)
                          for k, v in opt.state[p].items()}
                      for p in group["params"] if p in opt.state})
        return out

    values = [p.detach().clone() for p in params]
    groups = copy.deepcopy([{k: v for k, v in g.items() if k != "params"}
                            for g in opt.param_groups])
    for p in params:
        p.grad = torch.zeros_like(p)
    opt._init_group = capture
    try:
        opt.step()
    finally:
        del opt._init_group
    with torch.no_grad():
        for p, v in zip(params, values):
            p.copy_(v)
            p.grad = None
    for g, saved in zip(opt.param_groups, groups):
        g.update(saved)
    opt.state.clear()
    opt.state.update(fresh)


def recompile_limit_hit() -> bool:
    """Whether dynamo gave up compiling a frame at its ``recompile_limit`` since its reset."""
    utils = sys.modules.get("torch._dynamo.utils")
    gave_up = {} if utils is None else utils.counters.get("unimplemented", {})
    return any("recompile_limit" in str(k) for k in gave_up)


__all__ = ["TorchModelStepper", "fresh_state", "module_at", "recompile_limit_hit"]
