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


#: The stepper of each framework's native models (:mod:`optcmp.problems.native`).
MODEL_STEPPERS: dict[str, str] = {
    "torch": "optcmp.frameworks.torch.model_stepper:TorchModelStepper",
    "keras": "optcmp.frameworks.tensorflow.model_stepper:KerasModelStepper",
    "jax": "optcmp.frameworks.jax.model_stepper:JaxModelStepper",
}


#: optcmp's reference rule on each framework's native models.
MODEL_REFERENCES: dict[str, str] = {
    "torch": "optcmp.frameworks.torch.model_reference:TorchModelReference",
    "keras": "optcmp.frameworks.tensorflow.model_reference:KerasModelReference",
    "jax": "optcmp.frameworks.jax.model_reference:JaxModelReference",
}


def _load(path: str) -> type[Any]:
    """The class ``"module:Class"`` names."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]


def resolve_model_stepper(spec: OptimizerSpec, framework: str) -> tuple[type[Any], str]:
    """The stepper class of a ``framework`` model and the impl it records.

    ``impl="auto"`` takes the framework's optimizer where ``impl="auto"`` would on optcmp's
    own problems (declared ``auto``, running the spec's convention or, where the epsilon
    convention alone differs, its own: :func:`~optcmp.frameworks.models.own_convention`),
    else optcmp's reference rule; ``"reference"`` the rule; anything else the framework's.
    """
    from optcmp.frameworks.models import own_convention
    from optcmp.optimizers.base import optimizer_info

    native = _load(MODEL_STEPPERS[framework])
    info = optimizer_info(spec.name)
    if spec.impl == "auto" and info.rule is not None:
        decl = next((n for n in info.natives if n.framework == native.framework), None)
        own = own_convention(spec, native.framework).hyperparameters
        if decl is None or not decl.auto or decl.unsupported(own) is not None:
            return _load(MODEL_REFERENCES[framework]), "reference"
    if spec.impl == "reference":
        return _load(MODEL_REFERENCES[framework]), "reference"
    return native, "native" if spec.impl == "auto" else spec.impl


def resolve_adapter(spec: OptimizerSpec, backend: str) -> tuple[type[Any], str]:
    """The adapter class and concrete impl running ``spec`` on ``backend``."""
    impl, decl = resolve_impl(spec, backend)
    kind = decl.framework if isinstance(decl, Native) else "reference"
    module, _, attr = ADAPTERS[kind].partition(":")
    return getattr(importlib.import_module(module), attr), impl


__all__ = ["ADAPTERS", "MODEL_REFERENCES", "MODEL_STEPPERS", "resolve_adapter", "resolve_model_stepper"]
