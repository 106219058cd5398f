"""The ops namespaces: array functions problems and reference update rules are written against.

One namespace per framework, with the same names (:data:`OPS`, after the Python array API
standard where it has a name), in each framework's folder: :mod:`optcmp.frameworks.numpy.ops`
(what the problems evaluate with on the host), :mod:`optcmp.frameworks.torch.ops`,
:mod:`optcmp.frameworks.tensorflow.ops` and :mod:`optcmp.frameworks.jax.ops` (imported only when
a run or a host gradient needs them). :mod:`optcmp.frameworks.host` differentiates an objective
written against ops on the host, in float64, with a framework's autodiff. The ops modules are
leaves: they import no other part of optcmp but :mod:`optcmp._scipy` and this module.

The XLA CPU flags that pin JAX's compute to one thread (:data:`XLA_CPU_FLAGS`) are added to the
process's ``XLA_FLAGS`` by :func:`pin_xla_threads`, which the JAX and TensorFlow backends call
where a run or a backend is set up (never an import): XLA reads ``XLA_FLAGS`` once, when JAX's
runtime starts, so flags set before that start stay for the process (removing them later would
change nothing), and a JAX started without them keeps its own pool (reported as ``None`` in the
run's recorded threads).
"""

import os
import sys

#: The names every ops namespace defines (checked by the tests).
OPS = ("name", "matmul", "mean", "sum", "max", "min", "reshape", "sqrt", "exp", "expm1", "log",
       "log1p", "square", "pow", "power", "abs", "sign", "maximum", "minimum", "clip", "where",
       "tanh", "sin", "cos", "atan", "sigmoid", "softplus", "logaddexp", "logsumexp", "softmax",
       "ones_like", "zeros_like", "full_like", "permute_dims", "transpose", "concat", "stack",
       "norm", "vecdot", "size")

#: XLA CPU flags that make every JAX computation run on one thread (Eigen's thread pool off, one
#: intra-op thread); added to ``XLA_FLAGS`` by :func:`pin_xla_threads` before JAX starts.
XLA_CPU_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")

#: Set when :func:`pin_xla_threads` found JAX started without :data:`XLA_CPU_FLAGS`.
_STARTED_UNPINNED: list[bool] = []


def jax_started() -> bool:
    """Whether JAX's runtime has started in this process (its backends are initialized)."""
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # another JAX: imported counts as started
        return True


def pin_xla_threads() -> bool:
    """Add :data:`XLA_CPU_FLAGS` to ``XLA_FLAGS`` when JAX has not started yet.

    Called where a run or a backend on JAX or TensorFlow is set up, never on import. Once
    added, the flags stay in ``XLA_FLAGS`` for the rest of the process: XLA reads them once,
    when its CPU client starts, so removing them afterwards would change nothing but what the
    environment says.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f for f in XLA_CPU_FLAGS if f.split("=")[0] not in flags]
    if not missing:
        return not _STARTED_UNPINNED
    if jax_started():
        _STARTED_UNPINNED[:] = [True]
        return False
    os.environ["XLA_FLAGS"] = " ".join([flags, *missing]).strip()
    return True


def xla_cpu_threads() -> int | None:
    """Threads of XLA's CPU compute: 1 when :data:`XLA_CPU_FLAGS` were in force at JAX's start."""
    flags = os.environ.get("XLA_FLAGS", "")
    pinned = not _STARTED_UNPINNED and "--xla_cpu_multi_thread_eigen=false" in flags
    return 1 if pinned else None


__all__ = ["OPS", "XLA_CPU_FLAGS", "jax_started", "pin_xla_threads", "xla_cpu_threads"]
