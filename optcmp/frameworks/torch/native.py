"""Native PyTorch adapter: an optimizer's :class:`~optcmp.optimizers.TorchOptimizer`.

Imported only when a run needs it. The optimizer is ``torch.optim.<name>`` built with every
argument its declaration gives (including the ones optcmp does not expose, e.g.
``weight_decay=0``, ``maximize=False``), so no PyTorch default ever decides a run. Every step
starts with ``optimizer.zero_grad(set_to_none=True)``: gradients deposited by anything between
two steps (a monitoring ``backward()``, a warm-up) are discarded and cannot double the next
update. When the problem declares its gradient written against ops
(:meth:`~optcmp.problems.base.Problem.gradient_ops`) and the run does not ask for
``gradient="autodiff"``, the step computes it without a tape and assigns it to ``.grad``
(which discards any deposited gradient just the same), then calls ``optimizer.step()``.

The iterate is one flat leaf tensor on the backend's device, the data are placed once, and a
step does no host round trip: the objective and gradient norm stay device scalars, read by the
monitor off the clock. Optimizers that evaluate the objective themselves
(``TorchOptimizer(closure=True)``, i.e. ``torch.optim.LBFGS``) get a closure, and every
evaluation it makes is counted in ``nfev``/``njev``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from optcmp._imports import first_import
from optcmp.frameworks.base import analytic_value_and_grad
from optcmp.frameworks.stepper import Block, MinibatchAdapter
from optcmp.frameworks.torch.backend import residual_work
from optcmp.optimizers import TorchOptimizer
from optcmp.optimizers.base import NotApplicable


class _Schedulers(list):  # type: ignore[type-arg]
    """The learning-rate schedulers of an optimizer and its second one, stepped together."""

    def step(self) -> None:
        for s in self:
            s.step()


def _adam_in_place(p: torch.Tensor, g: torch.Tensor, state: dict[str, Any],
                   kw: dict[str, Any], work: list[torch.Tensor], t: float | None = None) -> None:
    """One step of torch's single-tensor Adam (no decay, AMSGrad or maximize), its operations
    in its order, the denominator in a reused work tensor; ``t``: the step count after it,
    kept by the caller (None: advance and read ``state["step"]``, as torch does)."""
    b1, b2 = kw["beta1"], kw["beta2"]
    if t is None:
        step_t = state["step"]
        step_t += 1
        t = step_t.item()
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m.lerp_(g, 1 - b1)
    v.mul_(b2).addcmul_(g, g, value=1 - b2)
    if not work:
        work.append(torch.empty_like(v))
    denom = torch.sqrt(v, out=work[0])
    denom.div_((1 - b2 ** t) ** 0.5).add_(kw["eps"])
    p.addcdiv_(m, denom, value=-(kw["lr"] / (1 - b1 ** t)))


def _adam_lean(opt: torch.optim.Optimizer, p: torch.Tensor, group: dict[str, Any],
               keys: set[str]) -> tuple[Callable[[torch.Tensor], Any], str, str]:
    """:meth:`TorchNativeAdapter._lean_update` for ``torch.optim.Adam``: its single-tensor
    arithmetic in place (no decay, AMSGrad, maximize...), the step count a Python number
    within the block (written back by the update's ``done()``), else ``adam.adam``."""
    from torch.optim.adam import adam as adam_update

    state = opt.state[p]
    kw = {k: group[k] for k in (*keys, "amsgrad", "eps", "capturable", "differentiable",
                                "fused", "decoupled_weight_decay") if k in group}
    kw["beta1"], kw["beta2"] = group["betas"]
    plain = not any(kw.get(k) for k in ("weight_decay", "amsgrad", "maximize", "foreach",
                                        "capturable", "differentiable", "fused"))
    work: list[torch.Tensor] = []
    count: list[float] = []  # the step count, while float32's state["step"] holds it exactly

    def adam_step(g: torch.Tensor) -> None:
        if not state:  # the first step creates the state, as step() does
            p.grad = g
            opt.step()
            return
        if not plain:
            adam_update([p], [g], [state["exp_avg"]], [state["exp_avg_sq"]],
                        [state["max_exp_avg_sq"]] if kw["amsgrad"] else [], [state["step"]],
                        has_complex=False, **kw)
            return
        if not count:
            count.append(state["step"].item())
        if count[0] + 1 >= 2.0 ** 24:  # past float32's exact integers: torch's own count
            done()
            _adam_in_place(p, g, state, kw, work)
            return
        count[0] += 1
        _adam_in_place(p, g, state, kw, work, count[0])

    def done() -> None:
        if count:
            state["step"].fill_(count.pop())

    adam_step.done = done  # type: ignore[attr-defined]
    return (adam_step, "in-place" if plain else "functional",
            "torch.optim.adam's single-tensor arithmetic" if plain else "torch.optim.adam.adam")


class TorchNativeAdapter(MinibatchAdapter):
    """``torch.optim.<name>(**options)`` on a flat leaf parameter, on optcmp's minibatches.

    Built like :class:`~optcmp.frameworks.stepper.Adapter`; the spec's optimizer must declare a
    :class:`~optcmp.optimizers.TorchOptimizer`.
    """

    framework = "torch"
    describes = "torch.optim.{name}"
    decl: TorchOptimizer
    #: The objective and gradient norm at the iterate the last step left, when it evaluated
    #: there; whether its incoming iterate's evaluation was that of the step before (both read
    #: by :func:`optcmp.engine.drivers.step_loop`: each iterate is observed once).
    end_value: tuple[Any, Any] | None = None
    incoming_known = False

    def _make(self, x0: Any) -> tuple[torch.Tensor, torch.optim.Optimizer]:
        """A leaf parameter and its optimizer; a schedule becomes torch's ``LambdaLR`` on it
        (``lr_k = lr * s(k)``, stepped after every optimizer step), kept on the optimizer."""
        p = x0.detach().clone().requires_grad_(True)
        views, rest = self._views(p)
        opt = getattr(torch.optim, self.decl.name)(views or [p], **self._options())
        opt._optcmp_views = views  # type: ignore[attr-defined]
        opt._optcmp_rest = None  # type: ignore[attr-defined]
        if rest:  # the parameters the optimizer leaves out, by the declared second one
            assert self.decl.rest is not None
            name, options = self.decl.rest(self.hyper)
            opt._optcmp_rest = getattr(torch.optim, name)(rest, **options)  # type: ignore[attr-defined]
        sched = self.hyper.get("schedule", "constant")
        if sched != "constant":
            from optcmp.optimizers.schedule import parse

            s = parse(sched)
            opt._optcmp_scheduler = _Schedulers([  # type: ignore[attr-defined]
                torch.optim.lr_scheduler.LambdaLR(o, lambda k: float(s.factor(float(k))))
                for o in (opt, opt._optcmp_rest) if o is not None])  # type: ignore[attr-defined]
        return p, opt

    def _views(self, p: torch.Tensor) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """The views of ``p`` the optimizer takes (``TorchOptimizer.matrices``: 2-D, in torch's
        (out, in) layout; ``named``: each parameter in its shape) and those ``rest`` takes;
        none for an optimizer of the flat tensor."""
        layout = self.problem.layout
        if self.decl.named:
            chosen = {n: False for n in layout.names}
        elif self.decl.matrices is not None:
            chosen = dict(self.decl.matrices(self.hyper, layout))
        else:
            return [], []
        left = [n for n in layout.names if n not in chosen]
        if not chosen:
            raise NotApplicable(f"this problem has no parameter torch.optim.{self.decl.name} "
                                f"takes (its parameters: {list(layout.names)}); "
                                "impl='reference' runs the spec on every backend")
        if left and self.decl.rest is None:
            raise NotApplicable(
                f"torch.optim.{self.decl.name} takes 2-D parameters only, and this problem's "
                f"{left} would need a second optimizer beside it; impl='reference' runs the "
                "spec's partition (the rest by AdamW) on every backend")
        views: tuple[list[torch.Tensor], list[torch.Tensor]] = ([], [])
        for name, shape, (a, b) in zip(layout.names, layout.shapes, layout.offsets()):
            v = p.detach()[a:b].view(shape)  # shares p's storage: a step moves p
            views[name not in chosen].append(v.t() if chosen.get(name) else v)
        return views

    def _opt_step(self, opt: torch.optim.Optimizer, p: torch.Tensor) -> None:
        """``opt.step()`` (and the second optimizer's); views first get their part of
        ``p.grad``."""
        views, rest = opt._optcmp_views, opt._optcmp_rest  # type: ignore[attr-defined]
        if views:
            g = p.grad
            assert g is not None
            gv, gr = self._views(g)
            for v, gi in zip([*views, *(rest.param_groups[0]["params"] if rest else ())],
                             [*gv, *gr]):
                v.grad = gi
        opt.step()
        if rest is not None:
            rest.step()

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        first_import("torch._dynamo")  # torch.optim imports it at its first optimizer
        self.param, self.opt = self._make(self.backend.asarray(self.x0))
        self._objective = self.problem.objective
        self._ops = self.backend.ops
        # the problem's gradient written against ops, when it declares one
        value = not self.stochastic or self.decl.closure
        self._analytic = analytic_value_and_grad(self.backend, self.problem, self.gradient,
                                                 value=value)
        into = getattr(self.problem, "gradient_into", None)
        #: the lean blocks' gradient written into one vector (a problem's ``out=``)
        self._into_out: Callable[..., Any] | None = None
        if self._analytic is not None and into is not None:  # the same, on a reused residual
            work = residual_work()
            o = self.backend.ops
            self._analytic = lambda x, batch: into(o, x, batch, work, value=value)
            if "out" in inspect.signature(into).parameters:
                self._into_out = lambda x, batch, g: into(o, x, batch, work, value=False, out=g)
        self._k = 0
        self._calls = self._torch_calls = 1
        self._nit = 1  # torch's own iterations in the last step (LBFGS's state n_iter)
        self._max_iter = int(self._options().get("max_iter", 1))
        if self.stochastic:
            self._init_batches()
        opts = ", ".join(f"{k}={v!r}" for k, v in self._options().items())
        self.implementation = f"torch.optim.{self.decl.name}({opts})"
        if self.opt._optcmp_rest is not None:  # type: ignore[attr-defined]
            assert self.decl.rest is not None
            name, options = self.decl.rest(self.hyper)
            self.implementation += (f" and torch.optim.{name}("
                                    + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")")
        said = self.info.rule.describe(self.problem.layout, self.hyper) if self.info.rule else ""
        self.implementation += f" ({said})" if said else ""

    def _loss_and_grad(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                       batch: dict[str, Any]) -> Any:
        if self._analytic is not None:  # no tape: the gradient replaces .grad (none carried)
            with torch.no_grad():
                f, p.grad = self._analytic(p, batch)
            return f
        opt.zero_grad(set_to_none=True)
        p.grad = None  # not the optimizer's own parameter when it takes views of it
        f = self._objective(self._ops, p, batch)
        f.backward()
        return f

    def _step_on(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                 batch: dict[str, Any]) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        if self.decl.closure:
            return self._closure_step(p, opt, batch)
        f = self._loss_and_grad(p, opt, batch)
        gnorm = None
        clip = self.hyper.get("clip_norm")
        if not self.stochastic or clip is not None:  # minibatch steps report no norm
            with torch.no_grad():
                g = p.grad
                assert g is not None
                gnorm = torch.sqrt(torch.dot(g, g))
                if clip is not None:
                    # the global norm of the whole flat parameter, Keras' global_clipnorm
                    # formula (torch's clip_grad_norm_ divides by norm + 1e-6)
                    c = float(clip)
                    g.mul_(c * torch.clamp(1.0 / gnorm, max=1.0 / c))
        self._opt_step(opt, p)
        sched = getattr(opt, "_optcmp_scheduler", None)
        if sched is not None:
            sched.step()
        if self.stochastic:
            gnorm = None
        return (None if f is None else f.detach()), gnorm

    def _closure_step(self, p: torch.Tensor, opt: torch.optim.Optimizer,
                      batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        """``opt.step(closure)``: the first evaluation is the incoming iterate's. On the full
        batch, when the last ``step()`` already evaluated that very point (its line search's
        accepted one), the closure returns that evaluation instead of making it again, as
        torch's own loop of several iterations in one ``step()`` does: the evaluations are
        torch's own, the iterates unchanged."""
        first: list[torch.Tensor] = []
        calls = [0, 0]  # evaluations made, and answered from the last step's
        seen: list[tuple[torch.Tensor, Any, Any]] = []
        known = [] if self.stochastic else getattr(opt, "_optcmp_evals", [])

        def closure() -> torch.Tensor:
            hit = next((e for e in known if torch.equal(e[0], p)), None) if not first else None
            if hit is not None:
                f, p.grad = hit[1], hit[2]
                calls[1] += 1
            else:
                f = self._loss_and_grad(p, opt, batch)
                calls[0] += 1
                if not self.stochastic:
                    seen.append((p.detach().clone(), f.detach(), p.grad))
            if not first:
                g = p.grad
                assert g is not None
                with torch.no_grad():
                    first.append(torch.sqrt(torch.dot(g, g)))
            return f

        state = opt.state[p]
        n0 = int(state.get("n_iter", 0))
        f0: Any = opt.step(closure)  # type: ignore[arg-type]  # returns the first closure value
        opt._optcmp_evals = seen  # type: ignore[attr-defined]
        self._calls, self._torch_calls = calls[0], calls[0] + calls[1]
        self.incoming_known = calls[1] > 0
        self._nit = int(state.get("n_iter", 0)) - n0
        return f0.detach(), first[0]

    def run(self, n: int, first: int | None = None, every: int = 1,
            iterations: int | None = None) -> Block:
        """The steps; ``torch.optim.LBFGS`` does at most ``iterations`` (an iteration
        budget's remainder) of ``max_iter_per_step`` in its ``step()``, and reports its own
        stop (:meth:`_own_stop`)."""
        if not self.decl.closure:
            return super().run(n, first, every)
        if iterations is not None:
            self.opt.param_groups[0]["max_iter"] = min(self._max_iter, int(iterations))
        blk = super().run(n, first, every)
        blk.stopped = self._own_stop
        return blk

    def _own_stop(self) -> str | None:
        """torch's own reason when the last ``LBFGS.step()`` did fewer iterations than it
        was allowed, tested as ``torch.optim.LBFGS`` tests it (off the clock).

        ``step()`` ends early when the gradient's largest entry is ``<= tolerance_grad``, the
        directional derivative ``g.d > -tolerance_change``, the step's largest entry
        ``|t d| <= tolerance_change``, or the loss changed by ``< tolerance_change``; an early
        end at its evaluation cap ``max_eval`` is no stop (the next step goes on). The
        objective and gradient at the final iterate are recomputed here, uncounted.
        """
        group = self.opt.param_groups[0]
        if not self.decl.closure or self._nit >= int(group["max_iter"]):
            return None
        p, state = self.param, self.opt.state[self.param]
        tg, tc = float(group["tolerance_grad"]), float(group["tolerance_change"])
        with torch.enable_grad():
            f = float(self._loss_and_grad(p, self.opt, self.data))
        with torch.no_grad():
            g = p.grad
            assert g is not None
            gmax = float(g.abs().max())
            d, t = state.get("d"), state.get("t")
            if self._nit == 0 or gmax <= tg:
                why = f"max |gradient| {gmax:.3g} <= tolerance_grad={tg:g}"
            elif torch.equal(state["prev_flat_grad"], g) and float(g.dot(d)) > -tc:
                why = (f"directional derivative g.d = {float(g.dot(d)):.3g} > "
                       f"-tolerance_change={-tc:g}")
            elif self._torch_calls >= int(group["max_eval"]):
                return None
            elif float((d * t).abs().max()) <= tc:
                why = f"max |step| {float((d * t).abs().max()):.3g} <= tolerance_change={tc:g}"
            elif abs(f - float(state["prev_loss"])) < tc:
                why = (f"loss change {abs(f - float(state['prev_loss'])):.3g} < "
                       f"tolerance_change={tc:g}")
            else:
                return None
        return (f"torch: LBFGS stopped by its own tolerance after {self._nit} of "
                f"{int(group['max_iter'])} iterations in its last step(): {why}")

    def _lean_block(self) -> bool:
        """Whether a fused minibatch step is only the gradient (the problem's formula) and
        the optimizer's update: no closure, no clipping, no schedule."""
        return (self.stochastic and self._analytic is not None and not self.decl.closure
                and self.hyper.get("clip_norm") is None
                and getattr(self.opt, "_optcmp_scheduler", None) is None)

    def prepare_execution(self, execution: str) -> None:
        """Choose the fused blocks' update (:meth:`_lean_update`, recorded in
        :attr:`update_path` and said in :attr:`implementation`)."""
        super().prepare_execution(execution)
        self.update_path = "optimizer.step()"
        self._lean = execution == "fused" and self._lean_block()
        lean = self._lean_update() if self._lean else None
        self._lean = lean is not None
        if lean is not None:
            self.update_path = lean[1]
            self.implementation += (f" (fused blocks: its update {lean[2]} with the "
                                    "optimizer's param group, as step() calls it)")

    def _lean_update(self) -> tuple[Callable[[torch.Tensor], Any], str, str] | None:
        """``(update(g), update_path, what)``: one step of ``torch.optim.SGD``/``Adam`` as its
        ``step()`` computes it, without ``step()``'s bookkeeping (hooks, profiler records,
        group gathering): SGD without momentum or decay is ``p.add_(g, alpha=-lr)``, the one
        statement of torch's single-tensor SGD; otherwise torch's functional update on the
        optimizer's state. None for any other optimizer, or several parameter groups."""
        opt, p = self.opt, self.param
        if opt._optcmp_views or len(opt.param_groups) != 1:  # type: ignore[attr-defined]
            return None
        group, state = opt.param_groups[0], opt.state[p]
        keys = {"weight_decay", "lr", "maximize", "foreach"}
        if type(opt) is torch.optim.SGD:
            if (group["momentum"] == 0 and group["weight_decay"] == 0 and not group["maximize"]
                    and not group["foreach"] and not group.get("fused")
                    and isinstance(group["lr"], float)):
                alpha = -group["lr"]
                return (lambda g: p.add_(g, alpha=alpha)), "in-place", "param.add_(grad, alpha=-lr)"
            from torch.optim.sgd import sgd as sgd_update

            kw = {k: group[k] for k in (*keys, "momentum", "dampening", "nesterov", "fused")}
            bufs = [state.get("momentum_buffer")]

            def sgd_step(g: torch.Tensor) -> None:
                sgd_update([p], [g], bufs, **kw)
                if kw["momentum"] != 0:
                    state["momentum_buffer"] = bufs[0]
            return sgd_step, "functional", "torch.optim.sgd.sgd"
        if type(opt) is torch.optim.Adam and not any(
                isinstance(group[k], torch.Tensor) for k in ("lr", "betas")):
            return _adam_lean(opt, p, group, keys)
        return None

    def run_block(self, n: int, first: int | None = None, every: int = 1) -> Block:
        """``n`` minibatch steps in one Python loop: no harness work, no per-step report
        (the ``"fused"`` mode; full-batch runs are not fused by this adapter). With the
        problem's gradient formula, no clipping and no schedule, a step is the gradient
        and the optimizer's update, as a hand-written loop does (``torch.optim.SGD``: its
        update without ``step()``'s bookkeeping, see :meth:`_lean_update`)."""
        if not self.stochastic:
            return super().run_block(n)
        p, opt, batch, k0 = self.param, self.opt, self._batch, self._k
        grad = self._analytic
        lean = self._lean_update() if getattr(self, "_lean", False) else None
        if lean is not None:  # built per block: it holds the optimizer's state tensors
            assert grad is not None
            up, xd = lean[0], p.detach()  # p's storage without autograd's dispatch
            into = self._into_out
            kept = None if into is None else torch.empty_like(xd)  # one gradient, rewritten
            g = None
            with torch.no_grad():
                try:
                    for b in self._batches(k0, n):
                        _, g = grad(xd, b) if into is None else into(xd, b, kept)
                        up(g)
                finally:
                    getattr(up, "done", lambda: None)()
            p.grad = g
        elif self._lean_block():
            assert grad is not None
            opt_step = opt.step if not opt._optcmp_views else (  # type: ignore[attr-defined]
                lambda: self._opt_step(opt, p))
            with torch.no_grad():
                for k in range(k0, k0 + n):
                    _, p.grad = grad(p, batch(k))
                    opt_step()
        else:
            step_on = self._step_on
            for k in range(k0, k0 + n):
                step_on(p, opt, batch(k))
        self._k = k0 + n
        return Block(n, None, None, self._calls, self._calls)

    def step(self) -> Block:
        """One ``step()``; ``torch.optim.LBFGS`` on the full batch also reports its new
        iterate's value (:attr:`end_value`) when its line search evaluated it."""
        batch = self._next_batch()
        fun, gnorm = self._step_on(self.param, self.opt, batch)
        self.end_value = (self._end_value() if self.decl.closure and not self.stochastic
                          else None)
        self._k += 1
        out = self._output(fun, gnorm, self._calls, self._calls)
        out.nit = self._nit if self.decl.closure else 1
        return out

    def _end_value(self) -> tuple[torch.Tensor, torch.Tensor] | None:
        """The objective and gradient norm at the iterate ``step()`` left, from the evaluation
        its line search made there (None: it made none, e.g. a fixed step)."""
        p = self.param
        for x, f, g in reversed(getattr(self.opt, "_optcmp_evals", [])):
            if torch.equal(x, p):
                with torch.no_grad():
                    return f, torch.sqrt(torch.dot(g, g))
        return None

    def warmup(self) -> float:
        """One step of a throwaway parameter/optimizer pair (first-call allocations), untimed."""
        p, opt = self._make(self.param)
        batch = self._batch(0) if self.stochastic else self.data
        t0 = time.perf_counter()
        self._step_on(p, opt, batch)
        self.backend.sync()
        elapsed = time.perf_counter() - t0
        if self.stochastic:
            self._forget_rows()
        return elapsed

    def x_numpy(self) -> np.ndarray:
        return np.asarray(self.backend.to_numpy(self.param), dtype=np.float64).reshape(-1)
