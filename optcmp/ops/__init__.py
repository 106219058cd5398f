"""The ops namespaces: array functions problems and reference update rules are written against.

One namespace per framework, with the same names (:data:`OPS`, after the Python array API
standard where it has a name): :mod:`optcmp.ops.numpy_` (numpy; what the problems evaluate with
on the host), :mod:`optcmp.ops.torch_` and :mod:`optcmp.ops.tensorflow_` (imported only when a
run or a host gradient needs them). :mod:`optcmp.ops.host` differentiates an objective written
against ops on the host, in float64, with a framework's autodiff. This package is a leaf: it
imports no other part of optcmp but :mod:`optcmp._scipy`.
"""

#: The names every ops namespace defines (checked by the tests).
OPS = ("name", "matmul", "mean", "sum", "max", "min", "reshape", "sqrt", "exp", "expm1", "log",
       "log1p", "square", "pow", "power", "abs", "sign", "maximum", "minimum", "clip", "where",
       "tanh", "sin", "cos", "atan", "sigmoid", "softplus", "logaddexp", "logsumexp", "softmax",
       "ones_like", "zeros_like", "full_like", "permute_dims", "transpose", "concat", "stack",
       "norm", "vecdot", "size")

__all__ = ["OPS"]
