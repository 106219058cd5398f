"""The default fused blocks of :meth:`Backend.compile_block`: Python loops over the steps, with
no harness work between them and nothing to compile (numpy, eager PyTorch)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


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


__all__ = ["python_block"]
