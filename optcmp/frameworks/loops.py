"""The default fused blocks of :meth:`Backend.compile_block`: Python loops over the steps, with
no harness work between them and nothing to compile (numpy, eager PyTorch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def python_block(backend: Any, step: Callable[..., Any], *, batch_size: int | None,
                 n_rows: int | None, steps_per_epoch: int | None,
                 snapshot: Callable[[Any], Any] | None) -> Callable[..., Any]:
    """The block :meth:`Backend.compile_block` describes, as a Python loop."""
    take = backend.take_rows
    if batch_size is None:
        def block(n: Any, x: Any, state: Any, data: Any, *extra: Any) -> Any:
            funs, gnorms = [], []
            for _ in range(int(n)):
                f, gn, x, state = step(x, state, data, *extra)
                funs.append(f)
                gnorms.append(gn)
            return x, state, funs, gnorms
        return block
    bs = int(batch_size)
    rows_ = int(n_rows if n_rows is not None else batch_size)
    spe = int(steps_per_epoch or -(-rows_ // bs))
    snap = snapshot or (lambda x: x)

    def mini_block(n: Any, x: Any, state: Any, data: Any, idx: Any, start: Any,
                   first: Any, every: Any, *extra: Any) -> Any:
        kept = []
        for i in range(int(n)):
            e, j = divmod(int(start) + i, spe)
            a = e * rows_ + j * bs
            _, _, x, state = step(x, state, take(data, idx[a:min(a + bs, (e + 1) * rows_)]),
                                  *extra)
            m = i + 1 - int(first)
            if m >= 0 and m % int(every) == 0:
                kept.append(backend.copy(snap(x)))
        return x, state, kept, ()
    return mini_block


def in_place_steps(adapter: Any) -> Callable[..., Any] | None:
    """``steps(x, state, n) -> (x, state)``: ``n`` minibatch steps of a rule whose update is
    ``x - lr * g`` (:meth:`~optcmp.optimizers.UpdateRule.plain_step`), the products in place
    on numpy arrays (the same arithmetic, so the same iterates); the block's iterate is its
    own copy, as saved states hold the old one. None where the rule or backend has no such
    path."""
    lr = adapter.rule.plain_step(adapter.hyper)
    problem = adapter.problem
    if (lr is None or adapter.backend.name != "numpy" or adapter.rule.needs_curvature
            or not problem.has_numpy_grad):
        return None
    grad, batch = problem.grad, adapter._batch

    def steps(x: Any, state: tuple[Any, ...], n: int) -> tuple[Any, tuple[Any, ...]]:
        x, d, k0 = x.copy(), np.empty_like(x), adapter._k
        for k in range(k0, k0 + n):
            np.multiply(grad(x, batch(k)), lr, d)  # positional out: less call overhead
            np.subtract(x, d, x)
        return x, ((state[0] + float(n), *state[1:]) if state else state)
    return steps


__all__ = ["in_place_steps", "python_block"]
