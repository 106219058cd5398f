"""Gradients on the host: a framework's autodiff of an objective written against ops, in float64.

For problems without an analytic numpy gradient, off the clock: PyTorch (TensorFlow when only it
is loaded: importing torch after TensorFlow is unsafe), imported on the first call. A returned
function keeps each thread's last converted batch itself, never on the user's objective.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

#: ``(x, batch) -> (fun, grad)`` in numpy float64.
HostValueGrad = Callable[[np.ndarray, dict[str, Any]], tuple[float, np.ndarray]]


def framework() -> str | None:
    """The framework host gradients use: ``"torch"``, ``"tensorflow"`` or None (neither)."""
    names = [n for n in ("torch", "tensorflow") if importlib.util.find_spec(n) is not None]
    if "tensorflow" in names and "tensorflow" in sys.modules and "torch" not in sys.modules:
        return "tensorflow"
    return names[0] if names else None


def host_value_and_grad(objective: Callable[..., Any]) -> HostValueGrad | None:
    """``(x, batch) -> (fun, grad)`` of ``objective(ops, x, batch)`` in float64, by autodiff."""
    name = framework()
    if name == "torch":
        from optcmp.frameworks.torch.ops import host_value_and_grad as build
    elif name == "tensorflow":
        from optcmp.frameworks.tensorflow.ops import host_value_and_grad as build
    else:
        return None
    return build(objective, _cached)  # type: ignore[no-any-return]


def _cached(convert: Callable[[dict[str, Any]], dict[str, Any]]
            ) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``convert`` of a batch, kept per thread while the same batch object comes back."""
    slot = threading.local()  # each thread's (batch, its converted copy)

    def get(batch: dict[str, Any]) -> dict[str, Any]:
        kept = getattr(slot, "kept", None)
        if kept is None or kept[0] is not batch:
            kept = slot.kept = (batch, convert(batch))
        return kept[1]  # type: ignore[no-any-return]

    return get


__all__ = ["HostValueGrad", "framework", "host_value_and_grad"]
