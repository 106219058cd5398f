"""Adapters: run an optimizer spec on a backend, composed from the backend's pieces.

One adapter per *kind* of implementation, not per optimizer:

* ``impl="reference"``: the optimizer's :class:`~optcmp.optimizers.UpdateRule`, run by
  :class:`~optcmp.frameworks.reference.ReferenceAdapter` on every backend;
* ``impl="native"``: a :class:`~optcmp.optimizers.TorchOptimizer`, run by
  :class:`~optcmp.frameworks.torch.native.TorchNativeAdapter`, or a
  :class:`~optcmp.optimizers.KerasOptimizer`, run by
  :class:`~optcmp.frameworks.tensorflow.native.KerasNativeAdapter`, or an
  :class:`~optcmp.optimizers.OptaxOptimizer`, run by
  :class:`~optcmp.frameworks.jax.native.OptaxNativeAdapter`;
* ``impl="scipy"``: a :class:`~optcmp.optimizers.ScipyMinimize`, run by
  :class:`~optcmp.frameworks.scipy.ScipyAdapter` on every backend.

The framework adapters are imported only when a run needs them, so ``import optcmp`` loads no
torch, TensorFlow or Keras.
"""

from __future__ import annotations

import importlib
from typing import Any

from optcmp.optimizers import Native
from optcmp.optimizers.base import OptimizerSpec, resolve_impl

#: Adapter class of each kind of declaration (``"reference"`` or a native's framework), as
#: ``"module:Class"`` imported on first use.
ADAPTERS: dict[str, str] = {
    "reference": "optcmp.frameworks.reference:ReferenceAdapter",
    "torch": "optcmp.frameworks.torch.native:TorchNativeAdapter",
    "keras": "optcmp.frameworks.tensorflow.native:KerasNativeAdapter",
    "optax": "optcmp.frameworks.jax.native:OptaxNativeAdapter",
    "scipy": "optcmp.frameworks.scipy:ScipyAdapter",
}


def resolve_adapter(spec: OptimizerSpec, backend: str) -> tuple[type[Any], str]:
    """The adapter class and concrete impl running ``spec`` on ``backend``."""
    impl, decl = resolve_impl(spec, backend)
    kind = decl.framework if isinstance(decl, Native) else "reference"
    module, _, attr = ADAPTERS[kind].partition(":")
    return getattr(importlib.import_module(module), attr), impl


__all__ = ["ADAPTERS", "resolve_adapter"]
