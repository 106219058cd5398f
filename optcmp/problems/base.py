"""The :class:`Problem` base class: data, initial point, objective, gradient, curvature.

Why numpy float64 data and one flat iterate ``x``: see docs/problems.md.
"""

from __future__ import annotations

import functools
import itertools
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Optimum:
    """A known minimizer and minimum of a problem."""

    fun: float
    """The optimal objective value ``f*``."""
    x: Array | None
    """A minimizer, shape (n_params,), or ``None`` when only ``f*`` is known."""
    method: str
    """How it was computed (e.g. ``"numpy.linalg.lstsq"``)."""
    time: float | None
    """Wall time of that solve in seconds (``None``: not solved here)."""
    kind: str = "direct"
    """``"direct"`` (closed form), ``"estimated"`` (a tight iterative solve) or ``"given"``."""

    def to_dict(self) -> dict[str, Any]:
        """``{"fun", "method", "time", "kind"}``: the record a comparison keeps."""
        return {"fun": float(self.fun), "method": self.method, "time": self.time, "kind": self.kind}


@dataclass(frozen=True)
class ParamLayout:
    """Names and shapes of the parameter arrays packed in the flat iterate ``x``."""

    names: tuple[str, ...]
    """Parameter names, in packing order."""
    shapes: tuple[tuple[int, ...], ...]

    @functools.cached_property
    def sizes(self) -> tuple[int, ...]:
        """Number of scalars in each named array."""
        return tuple(math.prod(int(d) for d in s) for s in self.shapes)

    @property
    def size(self) -> int:
        """Total number of scalars (the length of ``x``)."""
        return int(sum(self.sizes))

    @functools.cached_property
    def _offsets(self) -> tuple[tuple[int, int], ...]:
        """``(start, stop)`` of each named array, computed once (a step asks every time)."""
        stops = tuple(itertools.accumulate(self.sizes))
        return tuple(zip((0,) + stops[:-1], stops))

    def offsets(self) -> list[tuple[int, int]]:
        """``(start, stop)`` of each named array inside ``x``."""
        return list(self._offsets)

    def unflatten(self, x: Any, ops: Any = None) -> dict[str, Any]:
        """Split a flat vector ``x`` into named arrays (views), reshaped by ``ops`` (or numpy)."""
        reshape = ops.reshape if ops is not None else np.reshape
        return {name: reshape(x[a:b], shape)
                for name, shape, (a, b) in zip(self.names, self.shapes, self.offsets())}

    def flatten(self, params: dict[str, Any]) -> Array:
        """Pack named numpy arrays into one flat float64 vector."""
        missing = [n for n in self.names if n not in params]
        if missing:
            raise KeyError(f"missing parameter arrays {missing}; expected {list(self.names)}")
        parts = []
        for name, shape in zip(self.names, self.shapes):
            a = np.asarray(params[name], dtype=np.float64)
            if a.shape != shape:
                raise ValueError(f"parameter {name!r} has shape {a.shape}, expected {shape}")
            parts.append(a.ravel())
        return np.concatenate(parts) if parts else np.zeros(0)


def one_blas_thread() -> Any:
    """A context limiting numpy's BLAS to one thread (threadpoolctl), else a no-op.

    For reference solves of ``f*``: one reduction order whatever the thread count.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a runtime dependency
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def count_rows(data: dict[str, Any], name: str = "problem") -> int:
    """The common number of rows (axis 0) of a problem's training arrays; 0 without data."""
    if not data:
        return 0
    counts = {}
    for key, a in data.items():
        shape = np.shape(a)
        if len(shape) == 0:
            raise ValueError(f"problem {name!r}: training array {key!r} is 0-d (a scalar); every "
                             "training array needs a sample axis 0 (pass constants through the "
                             "objective's closure or as arrays of shape (n_samples, ...))")
        counts[key] = int(shape[0])
    if len(set(counts.values())) > 1:
        raise ValueError(f"problem {name!r}: training arrays have different numbers of rows "
                         f"{counts}; every array is indexed by sample along axis 0")
    return next(iter(counts.values()))



def same_as_value(fun64: Any) -> Any:
    """Mark a ``fun64`` whose value is :meth:`Problem.value_and_grad`'s to the bit: where the
    gradient is needed too, one ``value_and_grad`` call gives both (a subclass that overrides
    ``fun64`` drops the mark)."""
    fun64.same_as_value = True
    return fun64


def transposed_key(name: str) -> str:
    """The batch key of training array ``name`` held transposed (:attr:`Problem.products_only`)."""
    return f"{name}_T"


#: The methods reading a batch that a :attr:`Problem.products_only` declaration speaks for.
_BATCH_READERS = ("objective", "gradient_ops", "gradient_into", "hess_diag")


def transposed_arrays(problem: Problem) -> tuple[str, ...]:
    """The arrays a column-major placement may hold transposed: ``problem.products_only``,
    unless a subclass (or the instance) redefines a method reading the batch after declaring.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    tuple of str
    """
    names = tuple(getattr(problem, "products_only", ()))
    mro = type(problem).__mro__
    if not names or any(m in vars(problem) for m in _BATCH_READERS):
        return ()
    declared = next(i for i, c in enumerate(mro) if "products_only" in c.__dict__)
    owners = [next((i for i, c in enumerate(mro) if m in c.__dict__), len(mro))
              for m in _BATCH_READERS]
    return names if min(owners) >= declared else ()


class Problem(ABC):
    """A backend-agnostic optimization problem ``min_x f(x)`` (see the module docstring).

    A run store tells problems apart by :meth:`spec`, the bytes of :attr:`train_data` and, for
    a subclass written outside optcmp, its class's code, and by nothing else: an instance
    attribute :meth:`spec` leaves out, the contents of a module-level dict and state changed
    during a sweep are not seen, so a store keeps serving the runs of their old values. An
    attribute that changes the objective belongs in :meth:`spec` (docs/problems.md, "What a
    run store tells apart").
    """

    name: str = "problem"
    """Short name used in tables and on the command line."""
    reduction: str = "mean"
    """The one reduction of the loss over samples (``"mean"``), recorded in every result."""
    hess_diag_is_constant: bool = False
    """True when :meth:`hess_diag` does not depend on ``x`` (computed once per run)."""
    has_gradient_ops: bool = False
    """True when the framework backends use :meth:`gradient_ops` (unless ``gradient="autodiff"``)."""
    has_numpy_grad: bool = False
    """True when :meth:`grad` skips the objective (numpy minibatch steps then call it)."""
    reads_only_own_data: bool = True
    """True when the objective reads nothing but ``x`` and the problem's own data, so that
    ``f(x0)`` computed by one run is kept for the next (False: a user's function or model,
    which may read state that changes between runs)."""
    products_only: tuple[str, ...] = ()
    """Arrays of :attr:`train_data` that enter only matrix products (``A @ w``, ``A.T @ r``):
    :meth:`objective`, :meth:`gradient_ops` and :meth:`hess_diag` also read each one held
    transposed and contiguous under :func:`transposed_key` instead (:func:`transposed_arrays`)."""

    def __getstate__(self) -> dict[str, Any]:
        """The state to pickle, without the compiled functions runs kept on it in this process."""
        state = dict(self.__dict__)
        state.pop("_optcmp_compiled", None)
        return state

    @property
    @abstractmethod
    def layout(self) -> ParamLayout:
        """How the flat iterate maps to named parameter arrays."""

    @property
    def n_params(self) -> int:
        """Length of the flat iterate ``x``."""
        return self.layout.size

    @property
    @abstractmethod
    def train_data(self) -> dict[str, np.ndarray]:
        """Training arrays (float64 or int), each indexed by sample along axis 0."""

    @property
    def n_samples(self) -> int:
        """Number of training samples (rows used for minibatches); 0 for a data-free problem."""
        return count_rows(self.train_data, self.name)

    @abstractmethod
    def init_params(self, seed: int = 0) -> Array:
        """Initial point (float64, shape (n_params,)) from the run's ``seed``."""

    @abstractmethod
    def objective(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        """The objective, written once against a backend's ops namespace.

        Parameters
        ----------
        ops : ops namespace
        x : backend array, shape (n_params,)
        batch : dict of str to backend array
            The training arrays, or the rows of one minibatch.

        Returns
        -------
        backend scalar
        """

    @abstractmethod
    def value_and_grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> tuple[float, np.ndarray]:
        """``(fun, grad)`` in numpy, ``grad`` in ``x``'s dtype: the numpy backend's path."""

    def grad(self, x: np.ndarray, batch: dict[str, np.ndarray]) -> np.ndarray:
        """The gradient of :meth:`value_and_grad` alone (faster where :attr:`has_numpy_grad`)."""
        return self.value_and_grad(x, batch)[1]

    def gradient_ops(self, ops: Any, x: Any, batch: dict[str, Any], *,
                     value: bool = True) -> tuple[Any, Any]:
        """``(fun, grad)`` on ``ops``, arguments as for :meth:`objective`.

        Used where :attr:`has_gradient_ops`; with ``value=False`` ``fun`` may be None.
        """
        raise NotImplementedError(f"problem {self.name!r} declares no gradient written "
                                  "against ops; its framework backends use autodiff")

    def describe_param(self, j: int) -> str:
        """Which entry of the flat iterate ``x[j]`` is, for messages (e.g. ``"coef[2]"``)."""
        lay = self.layout
        for name, shape, (a, b) in zip(lay.names, lay.shapes, lay.offsets()):
            if a <= j < b:
                if not shape:
                    return name
                idx = np.unravel_index(j - a, shape)
                return f"{name}[{', '.join(str(int(i)) for i in idx)}]"
        return f"x[{j}]"

    def hess_diag(self, ops: Any, x: Any, batch: dict[str, Any]) -> Any:
        """Positive diagonal curvature, shape (n_params,), for diagonal-Newton scaling."""
        raise NotImplementedError(f"problem {self.name!r} provides no diagonal curvature")

    def with_seed(self, seed: int) -> Problem:
        """A new problem, its data redrawn from ``seed`` (``compare(redraw_data=True)``)."""
        raise NotImplementedError(
            f"problem {self.name!r} ({type(self).__name__}) cannot redraw its data from a seed; "
            "use redraw_data=False (repetitions then vary only the initial point and minibatch "
            "order)")

    def optimum(self) -> Optimum | None:
        """The known optimum, or ``None`` (then the default stop is a loss target)."""
        return None

    def default_target(self, tol: float | None = None) -> Any:
        """The stop (a Rule or None) when :meth:`optimum` is ``None``; ``tol``: the run's."""
        return None

    def unsupported_backend(self, backend: str) -> str | None:
        """Why the problem cannot run on ``backend`` (the run is ``skipped``), or ``None``."""
        return None

    def lipschitz(self) -> float:
        """Lipschitz constant ``L`` of the gradient (for ``learning_rate="auto"``)."""
        raise NotImplementedError(f"problem {self.name!r} has no known gradient Lipschitz "
                                  "constant; give learning_rate as a positive float")

    @same_as_value
    def fun64(self, x: np.ndarray) -> float:
        """Full objective at ``x`` re-evaluated in numpy float64 (for the record)."""
        xf = np.asarray(x, dtype=np.float64)
        return float(self.value_and_grad(xf, self.train_data)[0])

    def metrics(self, x: np.ndarray) -> dict[str, float]:
        """Extra figures reported next to the loss (e.g. accuracy); empty by default."""
        return {}

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        """JSON-serializable description (class and data parameters) of the problem: with the
        data and a user class's code, all a run store tells problems apart by."""

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> Problem:
        """Rebuild a problem whose data are generated from its :meth:`spec` (on a worker).

        By default the spec holds, besides ``"problem"`` and ``"source"``, the constructor's
        keyword arguments; subclasses with another layout override this.
        """
        if spec.get("source") != "generated":
            raise ValueError(
                f"problem {spec.get('name', spec.get('problem'))!r} was built from user data "
                f"(source {spec.get('source')!r}) and cannot be rebuilt from its spec")
        kwargs = {k: v for k, v in spec.items() if k not in ("problem", "source")}
        problem = cls(**kwargs)
        if problem.spec() != spec:
            raise ValueError(f"rebuilding {cls.__name__} from {spec} gave {problem.spec()}")
        return problem

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.spec().items() if k != "problem")
        return f"{type(self).__name__}({args})"


def read_only(data: dict[str, Any]) -> dict[str, np.ndarray]:
    """``data`` with each array (one the problem owns, never the caller's) made read-only for
    good: a view of a read-only buffer, whose flag cannot be set back (an array that owns its
    memory could be made writeable again)."""
    for k, a in data.items():
        owner = a
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        owner.flags.writeable = False
        a.flags.writeable = False
        if a is owner:
            data[k] = a.view()
    return data


class StoredProblem(Problem):
    """A problem whose constructor stores its layout in ``_layout`` and its data in ``_data``.

    The data are the problem's own read-only copies (:func:`read_only`): its fingerprint, its
    optimum and its run store key cannot go stale through the caller's arrays.
    """

    _layout: ParamLayout
    _data: dict[str, np.ndarray]

    def __getstate__(self) -> dict[str, Any]:
        """:meth:`Problem.__getstate__`, with the names of the read-only training arrays."""
        state = super().__getstate__()
        state["_read_only"] = [k for k, v in self._data.items() if not v.flags.writeable]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """The pickled state, those arrays read-only again (a pickle keeps no flag)."""
        names = state.pop("_read_only", ())
        self.__dict__.update(state)
        self._data.update(read_only({k: self._data[k] for k in names}))

    @property
    def layout(self) -> ParamLayout:
        return self._layout

    @property
    def train_data(self) -> dict[str, np.ndarray]:
        """A new dict of the problem's read-only training arrays (replacing one changes nothing)."""
        return dict(self._data)
