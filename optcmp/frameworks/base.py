"""The :class:`Backend` interface: data placement, ops, value-and-gradient, compile, sync, threads.

A backend *computes* and knows no optimizer, so problems are written once and the adapters
compose every optimizer's step from these pieces: see docs/backends.md, "What a backend does".
"""

from __future__ import annotations

import contextlib
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optcmp._memory import aligned, aligned_empty
from optcmp.frameworks.reuse import ReuseKey, problem_parts

if TYPE_CHECKING:
    from optcmp.problems.base import Problem

#: dtypes a backend accepts.
DTYPES = ("float64", "float32")

#: ``value_and_grad(x, batch) -> (fun, grad)``
ValueGradFn = Callable[[Any, dict[str, Any]], tuple[Any, Any]]

#: How a framework backend computes gradients (``RunConfig.gradient``): ``"auto"`` (the
#: problem's gradient written against ops when it declares one, else autodiff), ``"autodiff"``,
#: ``"analytic"`` (the declared one, or an error).
GRADIENTS = ("auto", "autodiff", "analytic")


def declares_gradient_ops(problem: Problem) -> bool:
    """Whether ``problem.gradient_ops`` is the gradient of ``problem.objective``."""
    if not getattr(problem, "has_gradient_ops", False) or "objective" in getattr(
            problem, "__dict__", {}):
        return False
    mro = type(problem).__mro__

    def owner(name: str) -> type | None:
        return next((c for c in mro if name in c.__dict__), None)

    return owner("objective") is owner("gradient_ops")


def gradient_kind(backend: Backend, problem: Problem, gradient: str = "auto") -> str:
    """Which gradient a backend computes for a problem: ``"analytic"`` or ``"autodiff"``."""
    if gradient not in GRADIENTS:
        raise ValueError(f"gradient must be one of {GRADIENTS}, got {gradient!r}")
    if "autodiff" not in backend.capabilities:
        return "analytic"
    if gradient == "autodiff":
        return "autodiff"
    if declares_gradient_ops(problem):
        return "analytic"
    if gradient == "analytic":
        raise ValueError(f"gradient='analytic': problem {problem.name!r} declares no gradient "
                         f"written against ops (Problem.gradient_ops) for backend "
                         f"{backend.name!r}; use gradient='auto' or 'autodiff'")
    return "autodiff"


def minibatch_gradient(backend: Backend, problem: Problem,
                       gradient: str = "auto") -> ValueGradFn | None:
    """The declared gradient formula without the objective (never read: the monitor evaluates
    the full one) for eager minibatch steps, or None (compiled backends drop it anyway)."""
    if backend.compiler != "eager" or not declares_gradient_ops(problem):
        return None
    return analytic_value_and_grad(backend, problem, gradient, value=False)


def analytic_value_and_grad(backend: Backend, problem: Problem, gradient: str = "auto", *,
                            value: bool = True) -> ValueGradFn | None:
    """The problem's ``gradient_ops`` bound to the backend's ops, or None (use autodiff)."""
    if "autodiff" not in backend.capabilities or gradient_kind(backend, problem,
                                                                gradient) != "analytic":
        return None
    fn, o = problem.gradient_ops, backend.ops
    if value:
        return lambda x, batch: fn(o, x, batch)
    return lambda x, batch: fn(o, x, batch, value=False)


#: Rows a compiled minibatch block gathers in one go (its steps then read contiguous slices).
GATHER_ROWS = 1 << 14


def gather_steps(batch_size: int, steps_per_epoch: int) -> int:
    """Steps whose rows a compiled minibatch block gathers in one go (:data:`GATHER_ROWS`)."""
    return max(1, min(GATHER_ROWS // max(batch_size, 1), steps_per_epoch))


#: Bytes from which a host array reaches a CPU device through a copy aligned to 64 bytes,
#: which JAX's ``device_put`` and TensorFlow's DLPack import then use as it is (an unaligned
#: array they copy, more slowly than ``numpy`` does): the copy is private, nothing writes to it.
ALIGNED_BYTES = 1 << 20


def aligned_copy(arr: np.ndarray, dtype: Any) -> np.ndarray:
    """``arr`` as ``dtype``, C-contiguous, in a new buffer that starts on a 64-byte boundary."""
    out = aligned_empty(arr.shape, dtype)
    np.copyto(out, arr, casting="unsafe")
    return out


def shareable(arr: np.ndarray, dtype: Any) -> bool:
    """Whether a CPU device may read ``arr`` in place as ``dtype``: in that dtype, row-major,
    on a 64-byte boundary and read-only (a writeable array shared would change the device's
    values when written)."""
    return (arr.dtype == np.dtype(dtype) and arr.flags.c_contiguous and aligned(arr)
            and not arr.flags.writeable)


def kept_host(arr: np.ndarray, dtype: Any, keep: ReuseKey | None, name: str, *,
              align: bool = True) -> np.ndarray:
    """``arr`` as ``dtype``, row-major (and :func:`shareable` where ``align``) without a copy
    per run: ``arr`` itself where it already is (or is writeable, and may change: the run
    copies it), else a read-only aligned copy kept under ``keep`` (one per array name, dtype
    and shape, made by the first run that needs it).

    Parameters
    ----------
    arr : ndarray
        A training array of the problem (or a view of one).
    dtype : dtype
    keep : ReuseKey or None
        Where the copy is kept (:func:`host_key`); None: ``arr`` itself.
    name : str
        The array's name in the placed data.
    align : bool, default True
        Whether the array must also start on a 64-byte boundary.

    Returns
    -------
    ndarray
    """
    dt = np.dtype(dtype)
    ready = shareable(arr, dt) if align else arr.dtype == dt and arr.flags.c_contiguous
    if ready or keep is None or arr.flags.writeable:
        return arr
    store, slot = keep.store(), (*keep.parts, name, dt.str, arr.shape)
    found = store.get(slot)
    if found is not None and found[0].__array_interface__ == arr.__array_interface__:
        return found[1]  # type: ignore[no-any-return]
    out = aligned_copy(arr, dt)
    out.flags.writeable = False
    store[slot] = (arr, out)  # the source kept alive: its address names it
    return out


def host_key(problem: Problem) -> ReuseKey:
    """Where a problem keeps the host copies of its data that placements share
    (:func:`kept_host`): on the problem, freed with it, one copy for every run and backend."""
    return ReuseKey(problem, ("host copy",))


class BackendUnavailable(ImportError):
    """A backend's framework is not installed; the message names the extra to install."""


def check_dtype(dtype: str) -> str:
    """Validate a dtype name."""
    name = dtype
    if not isinstance(dtype, str) and dtype is not None:
        try:
            name = str(np.dtype(dtype))
        except TypeError:
            name = None
    if name not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return str(name)


#: Device names :func:`check_device` accepts (``N`` is a device index).
DEVICE_FORMS = ("cpu", "cuda", "cuda:N", "gpu", "gpu:N")

_DEVICE_RE = re.compile(r"(cpu|cuda|gpu)(:[0-9]+)?")


def check_device(device: str | None) -> str | None:
    """Validate a device name's form (whether the device exists is the backend's check).

    Parameters
    ----------
    device : str or None
        ``None`` (the CPU) or one of :data:`DEVICE_FORMS`, case-insensitive.

    Returns
    -------
    str or None
        ``device`` stripped of surrounding whitespace.
    """
    if device is None:
        return None
    if isinstance(device, str):
        name = device.strip()
        m = _DEVICE_RE.fullmatch(name.lower())
        if m is not None and not (m.group(1) == "cpu" and m.group(2)):
            return name
    raise ValueError(f"device must be None or one of {', '.join(repr(f) for f in DEVICE_FORMS)} "
                     f"(N a device index), got {device!r}")


def is_cpu_device(device: str | None) -> bool:
    """Whether a (valid) device name means the CPU."""
    return device is None or device.strip().lower() == "cpu"


class Backend(ABC):
    """A numerical framework on one device, in one floating dtype.

    Parameters
    ----------
    device : str, optional
        ``"cpu"`` (default) or an accelerator (:data:`DEVICE_FORMS`).
    dtype : {"float64", "float32"}, default "float64"
    """

    name: ClassVar[str] = "backend"
    """Registry name."""
    ops: Any
    """The array functions of :data:`optcmp.frameworks.ops.OPS`."""
    capabilities: ClassVar[frozenset[str]] = frozenset()
    """``"autodiff"`` (else the problem's analytic gradient is used), ``"compile"``, ``"gpu"``."""
    slices_are_views: ClassVar[bool] = False
    """``take_rows(data, slice(a, b))`` shares memory."""
    fortran: ClassVar[bool] = False
    """The column-major layout is Fortran-order arrays (numpy's): no array is held transposed."""
    strided: ClassVar[bool] = False
    """:meth:`place` shares arrays in the order the problem holds them, and row gathers of a
    column-major array give row-major batches at little cost (numpy): :func:`run_layout`."""
    block_gather: ClassVar[str] = "per-step"
    """How a :meth:`compile_block` minibatch block gathers its rows (:data:`GATHERS`)."""
    host_work: ClassVar[bool] = False
    """Its runs reuse the host evaluation's work arrays (numpy's steps, torch's residual):
    those ``f(x0)`` allocates are kept for them, else dropped after it."""

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        self.dtype = check_dtype(dtype)
        self.device = device or "cpu"

    # ------------------------------------------------------------------ metadata
    @property
    @abstractmethod
    def version(self) -> str:
        """Version string of the underlying framework."""

    def describe(self) -> dict[str, Any]:
        """Backend, device, dtype and framework version, for results."""
        return {"backend": self.name, "device": self.device, "dtype": self.dtype,
                "framework_version": self.version}

    # ------------------------------------------------------------------ arrays
    @abstractmethod
    def asarray(self, a: np.ndarray) -> Any:
        """Convert a numpy array to this backend on its device (floats cast to ``dtype``)."""

    @abstractmethod
    def to_numpy(self, t: Any) -> np.ndarray:
        """Copy a backend array to the host as a numpy array."""

    def place(self, data: dict[str, np.ndarray], layout: str = "row-major",
              transposed: Sequence[str] = (), keep: ReuseKey | None = None) -> dict[str, Any]:
        """Place a dict of arrays on the device, once, before timing.

        Parameters
        ----------
        data : dict of str to ndarray
        layout : {"row-major", "column-major"}, default "row-major"
            Memory layout of the 2-D arrays (:meth:`best_layout`), where a backend has two.
        transposed : sequence of str, optional
            Arrays the column-major layout holds transposed and contiguous, under
            :func:`~optcmp.problems.base.transposed_key` (:func:`run_layout`).
        keep : ReuseKey, optional
            Where the problem keeps the host copies a CPU device then reads in place
            (:func:`host_key`, :func:`kept_host`); None: no copy is kept.

        Returns
        -------
        dict of str to backend array
        """
        return self.place_sharing(data, layout, transposed, keep)[0]

    def place_sharing(self, data: dict[str, np.ndarray], layout: str = "row-major",
                      transposed: Sequence[str] = (), keep: ReuseKey | None = None
                      ) -> tuple[dict[str, Any], bool]:
        """:meth:`place`, and whether the device reads every array in host memory the
        problem holds (its own array or the copy it keeps): no copy per run."""
        if type(self).place is not Backend.place:  # a subclass that places its own way
            return self.place(data, layout, transposed), False
        return self._place_sharing(data, layout, transposed, keep)

    def _place_sharing(self, data: dict[str, np.ndarray], layout: str,
                       transposed: Sequence[str], keep: ReuseKey | None
                       ) -> tuple[dict[str, Any], bool]:
        """:meth:`place_sharing`'s placement (each backend's own)."""
        out, shared = {}, True
        for k, v in layout_arrays(data, layout, transposed).items():
            arr = np.asarray(v)
            dt = np.dtype(self.dtype) if np.issubdtype(arr.dtype, np.floating) else arr.dtype
            if self.shares_from is not None and arr.size * dt.itemsize >= self.shares_from:
                arr = kept_host(arr, dt, keep, k)
            out[k] = self.asarray(arr)
            shared = shared and self.shares(arr)
        return out, shared

    #: Bytes from which :meth:`place` hands a CPU device an array it reads in place (None:
    #: never, every array is copied to the device).
    shares_from: int | None = None

    def shares(self, arr: np.ndarray) -> bool:
        """Whether :meth:`asarray` hands ``arr`` to the device without copying it."""
        return False

    def best_layout(self, minibatch: bool) -> str:
        """The data layout (:data:`LAYOUTS`) fastest for this backend's steps: column-major for
        full-batch steps (both products of a least-squares step, ``A @ x`` and ``A.T @ r``,
        stream each column once: numpy's BLAS on Fortran arrays, torch's ``mv`` and XLA's dot on
        the transposed matrix), row-major for minibatch steps, whose row gathers want rows
        contiguous (:func:`run_layout` decides from it and the problem).

        Parameters
        ----------
        minibatch : bool
            Whether steps gather minibatch rows or read the whole data.

        Returns
        -------
        str
        """
        return "row-major" if minibatch else "column-major"

    # ------------------------------------------------------------------ compilation
    @property
    def compiler(self) -> str:
        """How :meth:`compile` compiles a step: ``"xla"``, ``"tf.function"``,
        ``"torch.compile"``, ``"eager"`` or ``"numpy"`` (``RunResult.conditions.compiled``)."""
        return "eager"

    def compilations(self) -> int:
        """Compilations and traces so far of the functions this backend compiled (the runner
        records those in the timed region, ``RunResult.conditions.compiles_in_timed``).

        Returns
        -------
        int
        """
        return 0

    def compile_block(self, step: Callable[..., Any], example: Sequence[Any], *,
                      batch_size: int | None = None, n_max: int = 1024,
                      n_rows: int | None = None, steps_per_epoch: int | None = None,
                      snapshots: int = 1, snapshot: Callable[[Any], Any] | None = None,
                      reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """Many steps of ``step`` in one call (the ``"fused"`` execution mode): a Python loop
        here (numpy, eager PyTorch), one XLA call on TensorFlow and JAX.

        Parameters
        ----------
        step : callable
            ``step(x, state, batch, *extra) -> (fun, grad_norm, x_new, state_new)``.
        example : sequence
            ``(x, state, data, *extra)`` fixing the compiled signature.
        batch_size : int, optional
            Minibatch rows per step; ``None`` for full-batch steps.
        n_max : int, default 1024
        n_rows, steps_per_epoch : int, optional
            Rows of one epoch's row order, its minibatches (``ceil(n_rows / batch_size)``).
        snapshots : int, default 1
            Rows of the buffer of iterates a minibatch block keeps at its observations.
        snapshot : callable, optional
            ``snapshot(x) -> vector``, what is kept (default ``x``).
        reuse : ReuseKey, optional

        Returns
        -------
        callable
            Full batch: ``block(n, x, state, data, *extra) -> (x, state, funs, grad_norms)``.
            Minibatches: ``block(n, x, state, data, idx, start, first, every, *extra) -> (x,
            state, kept, ())``: ``idx`` holds epochs' row orders one after the other, step
            ``i`` is minibatch ``start + i`` counted across them, and the iterate after
            ``first + m * every`` steps is row ``m`` of ``kept``.
        """
        from optcmp.frameworks.loops import python_block

        return python_block(self, step, batch_size=batch_size, n_rows=n_rows,
                            steps_per_epoch=steps_per_epoch, snapshot=snapshot)

    @abstractmethod
    def index_array(self, idx: np.ndarray) -> Any:
        """An int64 index vector on the device (a minibatch order)."""

    @abstractmethod
    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        """Rows ``idx`` (backend index vector or slice) of every array in ``data``."""

    @abstractmethod
    def copy(self, t: Any) -> Any:
        """A copy of a backend array that later in-place updates cannot change."""

    def place_state(self, state: Any) -> Any:
        """An optimizer state placed on the device as the steps' outputs will be."""
        return state

    def sync(self) -> None:  # noqa: B027 - a no-op default is the right one for CPU backends
        """Wait until all queued device work is done (no-op on CPU)."""

    # ------------------------------------------------------------------ functions
    @abstractmethod
    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        """``(x, batch) -> (fun, grad)`` of the problem's objective in backend arrays, not
        compiled: autodiff or the declared gradient as :func:`gradient_kind` decides."""

    def compile(self, fn: Callable[..., Any], example: Sequence[Any], *,
                rows: Sequence[int] = (), reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """``fn`` compiled for arguments like ``example`` (the framework's fast path).

        Parameters
        ----------
        fn : callable
            A function of backend arrays (nests of tuples and dicts allowed).
        example : sequence
            One example argument per positional parameter.
        rows : sequence of int, optional
            Positions of the arguments whose leading (row) dimension varies between calls.
        reuse : ReuseKey, optional
            Keep the compiled function under this key and return it when the key comes again.

        Returns
        -------
        callable
            Same arguments and results as ``fn``; ``fn`` itself on numpy and eager PyTorch.
        """
        return fn

    def make_value_and_grad(self, problem: Problem, gradient: str = "auto",
                            data: dict[str, Any] | None = None) -> ValueGradFn:
        """:meth:`value_and_grad` compiled on its own, once for every row count of ``batch``.

        Parameters
        ----------
        problem : Problem
        gradient : {"auto", "autodiff", "analytic"}, default "auto"
        data : dict, optional
            The data as placed (:meth:`place`), fixing the signature; default the problem's
            training data, row-major.

        Returns
        -------
        callable
            ``(x, batch) -> (fun, grad)``.
        """
        example = (np.zeros(problem.n_params), data or problem.train_data)
        described = problem_parts(problem)
        reuse = None if described is None else ReuseKey(
            problem, ("value and gradient", *described, gradient, tuple(sorted(example[1]))))
        return self.compile(self.value_and_grad(problem, gradient), example, rows=(1,),
                            reuse=reuse)

    def hessian_vector_product(self, problem: Problem, data: dict[str, Any]
                               ) -> Callable[[np.ndarray, np.ndarray], np.ndarray] | None:
        """``hvp(x, v) -> H(x) v`` of the problem's objective on ``data``, by autodiff.

        Parameters
        ----------
        problem : Problem
        data : dict
            The placed training data.

        Returns
        -------
        callable or None
            On float64 numpy vectors; None without autodiff.
        """
        return None

    # ------------------------------------------------------------------ threads
    @classmethod
    def get_threads(cls) -> int | None:
        """Threads of this framework's CPU compute pool now (None if unknown)."""
        return blas_threads()

    def resume_settings(self) -> None:  # noqa: B027 - most frameworks set nothing per run
        """Set again what this backend's runs need of the process when a paused run resumes;
        the default sets nothing."""

    @classmethod
    def runtime_started(cls) -> bool:
        """Whether the framework's runtime (its thread pools) has started in this process;
        False for a framework that computes on the caller's threads."""
        return False

    @classmethod
    def run_settings(cls) -> contextlib.AbstractContextManager[None]:
        """The framework's process-wide settings for a run, entered before the backend is built
        (never on import).

        Returns
        -------
        context manager
        """
        return contextlib.nullcontext()

    @classmethod
    def set_threads(cls, n: int) -> Callable[[], None] | None:
        """Give this framework's own CPU compute pool ``n`` threads.

        Parameters
        ----------
        n : int

        Returns
        -------
        callable or None
            Restores the previous count, where there is one to restore.
        """
        return None


def blas_threads() -> int | None:
    """Threads of the first BLAS pool numpy uses, or None if unknown."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a runtime dependency
        return None
    pools = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    # numpy's own pool first: other BLAS copies (scipy's, a framework's) may load later
    pools.sort(key=lambda i: "numpy" not in str(i.get("filepath", "")))
    return int(pools[0]["num_threads"]) if pools else None


#: Data layouts a backend can place the training arrays in (``RunResult.conditions.layout``).
LAYOUTS = ("row-major", "column-major")
#: How minibatch steps gather their rows (``RunResult.conditions.gather``): each step its own,
#: or the rows of many steps in one gather that the steps then slice.
GATHERS = ("per-step", "once per block")


def check_layout(layout: str) -> str:
    """Validate a layout name."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def layout_arrays(data: dict[str, np.ndarray], layout: str,
                  transposed: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """``data`` with the arrays named in ``transposed`` replaced, in the column-major layout,
    by their transposes under :func:`~optcmp.problems.base.transposed_key`, contiguous (a view
    of an array the problem holds column-major, else a copy)."""
    from optcmp.problems.base import transposed_key

    if check_layout(layout) == "row-major" or not transposed:
        return data
    return {(transposed_key(k) if k in transposed else k):
            (np.ascontiguousarray(np.asarray(v).T) if k in transposed else v)
            for k, v in data.items()}


def held_layout(data: dict[str, Any]) -> str:
    """``"column-major"`` where a 2-D array of ``data`` is held in Fortran order, else
    ``"row-major"``."""
    fortran = any(np.ndim(v) == 2 and v.flags.f_contiguous and not v.flags.c_contiguous
                  for v in data.values() if isinstance(v, np.ndarray))
    return "column-major" if fortran else "row-major"


def run_layout(backend: Backend, problem: Problem, minibatch: bool) -> tuple[str, tuple[str, ...]]:
    """The layout a run places its data in and the arrays it holds transposed.

    The backend's :meth:`~Backend.best_layout`. Its column-major layout is Fortran-order
    arrays on a :attr:`~Backend.fortran` backend (numpy), elsewhere the arrays of
    :func:`~optcmp.problems.base.transposed_arrays` held transposed (a view of the problem's
    column-major design matrix). Otherwise a :attr:`~Backend.strided` backend keeps the data as
    the problem holds them (:func:`held_layout`: no copy), and the others place them row-major.

    Parameters
    ----------
    backend : Backend
    problem : Problem
    minibatch : bool

    Returns
    -------
    layout : str
    transposed : tuple of str
    """
    from optcmp.problems.base import transposed_arrays

    layout = backend.best_layout(minibatch)
    if layout == "column-major":
        names = () if backend.fortran else transposed_arrays(problem)
        if backend.fortran or names:
            return layout, names
    return (held_layout(problem.train_data) if backend.strided else "row-major"), ()
