"""The ops namespaces: array functions problems and reference update rules are written against.

One namespace per framework, with the same names (:data:`OPS`, after the Python array API
standard where it has a name): :mod:`optcmp.frameworks.numpy.ops` (numpy; what the problems evaluate with
on the host), :mod:`optcmp.frameworks.torch.ops` and :mod:`optcmp.frameworks.tensorflow.ops` (imported only when a
run or a host gradient needs them). :mod:`optcmp.frameworks.host` differentiates an objective written
against ops on the host, in float64, with a framework's autodiff. This package is a leaf: it
imports no other part of optcmp but :mod:`optcmp._scipy`.
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
#: intra-op thread); added to ``XLA_FLAGS`` before JAX starts.
XLA_CPU_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")


def pin_xla_threads() -> bool:
    """Add :data:`XLA_CPU_FLAGS` to ``XLA_FLAGS`` when JAX has not started yet.

    Returns
    -------
    bool
        True when the flags are in ``XLA_FLAGS`` before JAX starts (added now or set by the
        environment); False when ``jax`` was already imported without them (its CPU pool
        keeps its own size: :func:`optcmp.frameworks.jax.ops.xla_cpu_threads` then reports ``None``).
    """
    flags = os.environ.get("XLA_FLAGS", "")
    missing = [f for f in XLA_CPU_FLAGS if f.split("=")[0] not in flags]
    if not missing:
        return True
    if "jax" in sys.modules:
        return False
    os.environ["XLA_FLAGS"] = " ".join([flags, *missing]).strip()
    return True


__all__ = ["OPS", "XLA_CPU_FLAGS", "pin_xla_threads"]
