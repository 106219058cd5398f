"""The TensorFlow backend: ``tf.function`` steps traced once, data resident on the device.

An optimizer step is one graph call with its hyperparameters baked in; XLA compiles once per
concrete shape, so :meth:`TensorFlowBackend.compilations` counts traces and XLA compilations for
the runner. Why: see docs/backends.md, "The framework backends" and "Execution modes".
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp._warn import outside_level
from optcmp.frameworks.base import (
    ALIGNED_BYTES,
    Backend,
    ValueGradFn,
    aligned_copy,
    analytic_value_and_grad,
    gather_steps,
    shareable,
)
from optcmp.frameworks.ops import pin_xla_threads
from optcmp.frameworks.reuse import ReuseKey
from optcmp.frameworks.tensorflow.ops import ops, tf  # imports torch first when installed

if TYPE_CHECKING:
    from optcmp.problems.base import Problem

_DTYPES = {"float64": tf.float64, "float32": tf.float32}


#: Where optcmp's own traced functions are defined, as TensorFlow's retracing warning names them
#: (the backend's compiled steps and blocks, the gradient formula a problem declares, the
#: Keras natives' compiled steps).
OWN_TRACED = ("TensorFlowBackend.", "_minibatch_loop.", "analytic_value_and_grad.",
              "KerasNativeAdapter.")


class _OwnRetracingFilter(logging.Filter):
    """Drop TensorFlow's "triggered tf.function retracing" warning about optcmp's own functions
    (each run traces its own on purpose, off the clock); other functions' pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        return not ("triggered tf.function retracing" in msg
                    and any(name in msg for name in OWN_TRACED))


def quiet_own_retracing() -> None:
    """Install :class:`_OwnRetracingFilter` on TensorFlow's logger, once (when a backend is
    built, not on import)."""
    logger = logging.getLogger("tensorflow")
    if not any(isinstance(f, _OwnRetracingFilter) for f in logger.filters):
        logger.addFilter(_OwnRetracingFilter())


def tf_device(device: str | None) -> str:
    """The TensorFlow device string for an optcmp device name."""
    name = "cpu" if device is None else str(device).strip().lower().lstrip("/")
    if name in ("cpu", "cpu:0"):
        return "/CPU:0"
    kind, colon, num = name.partition(":")
    try:
        index = (int(num) if colon else 0) if kind in ("cuda", "gpu") else None
    except ValueError:
        index = None
    gpus = tf.config.list_physical_devices("GPU")
    available = ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(gpus))]
    if index is None:
        raise ValueError(f"unknown TensorFlow device {device!r}; use 'cpu', 'gpu', 'cuda' or "
                         f"'cuda:N'; available devices: {available}")
    if index < 0 or index >= len(gpus):
        raise ValueError(f"TensorFlow device {device!r} (/GPU:{index}) is not available "
                         f"(tensorflow {tf.__version__}); available devices: {available}")
    return f"/GPU:{index}"


class _Alias:
    """``arr``'s memory described as writeable (``__array_interface__``), ``arr`` kept alive."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr
        self.__array_interface__ = {**arr.__array_interface__, "data": (arr.ctypes.data, False)}


def _writeable_alias(arr: np.ndarray) -> np.ndarray | None:
    """A writeable alias of read-only ``arr`` (numpy's DLPack export refuses read-only arrays;
    TensorFlow never writes into an input), or None for an array that is not contiguous."""
    if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
        return None
    return np.asarray(_Alias(arr))


def _spec_like(t: Any, rows: bool, float_dtype: Any) -> Any:
    """``TensorSpec`` (nests kept) of an example argument; floats take ``float_dtype``."""
    if isinstance(t, dict):
        return {k: _spec_like(v, rows, float_dtype) for k, v in t.items()}
    if isinstance(t, (tuple, list)):
        return tuple(_spec_like(v, rows, float_dtype) for v in t)
    dtype = tf.as_dtype(t.dtype)
    shape = list(t.shape)
    if rows and shape:
        shape[0] = None
    return tf.TensorSpec(shape, float_dtype if dtype.is_floating else dtype)


def _leading(a: Any) -> Any:
    """Leading dimension of an argument (of the first array of a dict or tuple)."""
    if isinstance(a, dict):
        a = next(iter(a.values()), None)
    elif isinstance(a, (tuple, list)):
        a = a[0] if a else None
    shape = getattr(a, "shape", None)
    return None if not shape else shape[0]


def _n_params(fn: Callable[..., Any]) -> int | None:
    """Positional parameters of ``fn`` (None with ``*args``: the signature decides)."""
    import inspect

    params = inspect.signature(fn).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def _flat_call(cf: Any) -> Callable[..., Any]:
    """``cf`` called through its flat entry (``_call_flat``) where every argument is a tensor:
    ``ConcreteFunction.__call__`` binds the structured signature first, ~80 us a call."""
    call_flat = getattr(cf, "_call_flat", None)
    if call_flat is None:
        return cf  # type: ignore[no-any-return]
    flatten, tensor, want = tf.nest.flatten, tf.Tensor, len(cf.inputs) - len(cf.captured_inputs)

    def call(*args: Any) -> Any:
        flat = flatten(args, expand_composites=True)
        if len(flat) == want and all(isinstance(t, tensor) for t in flat):
            return call_flat(flat, cf.captured_inputs)
        return cf(*args)
    return call


def _compiles(call: Any) -> int:
    """Traces plus XLA compilations for new row counts of one compiled call so far."""
    return int(call.tf_function.experimental_get_tracing_count()) + max(
        len(call.shapes_seen) - 1, 0)


def _int32_cache() -> Callable[[Any], Any]:
    """A Python int as an int32 tensor, kept: a block's arguments repeat (every epoch: n =
    steps per epoch, start 0), and converting one costs ~10 us per argument and call."""
    ints: dict[int, Any] = {}

    def as_int32(v: Any) -> Any:
        if not isinstance(v, int):
            return v
        t = ints.get(v)
        if t is None:
            if len(ints) > 4096:
                ints.clear()
            t = ints[v] = tf.constant(v, tf.int32)
        return t
    return as_int32


def _block_key(reuse: ReuseKey | None, kind: str, *sizes: Any) -> ReuseKey | None:
    """The key of a fused block: the step's key, the kind of block and its sizes."""
    return None if reuse is None else ReuseKey(reuse.owner, (reuse.parts, kind, *sizes))


def _gathered(step: Callable[..., Any], extra: tuple[Any, ...], data: dict[str, Any],
              idx: Any, start: Any, shape: tuple[int, int, int, int, int], i0: Any, end: Any,
              x: Any, state: Any) -> Any:
    """Steps ``i0`` to ``end`` (at most ``chunk``, ``shape[4]``) of a minibatch block: their
    rows in one gather, then a contiguous slice per step."""
    bs, rows_, spe, short, chunk = shape
    g = start + i0 + tf.range(chunk)
    e = g // spe
    at = tf.reshape((e * rows_ + (g - e * spe) * bs)[:, None] + tf.range(bs), (-1,))
    rows = tf.gather(idx, tf.minimum(at, tf.cast(tf.shape(idx)[0], tf.int32) - 1))
    buf = {k: tf.reshape(tf.gather(v, rows), [chunk, bs, *v.shape[1:]])
           for k, v in data.items()}

    def on(i: Any, x: Any, state: Any, size: int = bs) -> Any:
        batch = {k: tf.gather(v, i - i0)[:size] for k, v in buf.items()}
        _, _, x2, s2 = step(x, state, batch, *extra)
        return i + 1, x2, tuple(s2)

    def run(a: Any, b: Any, x: Any, state: Any) -> Any:
        return tf.while_loop(lambda i, *_: i < b, on, (a, x, tuple(state)))[1:]
    if not short:
        return run(i0, end, x, state)
    # at most one epoch's shorter last minibatch among them: the full ones before it (k = 0),
    # it, then the full ones after it (k = 1), by one loop of full steps
    last = i0 + spe - 1 - (start + i0) % spe

    def around(k: Any, x: Any, state: Any) -> Any:
        x, state = run(tf.where(k == 0, i0, last + 1),
                       tf.where(k == 0, tf.minimum(last, end), end), x, state)
        x, state = tf.cond((k == 0) & (last < end), lambda: on(last, x, state, short)[1:],
                           lambda: (x, tuple(state)))
        return k + 1, x, tuple(state)
    return tf.while_loop(lambda k, *_: k < 2, around, (tf.constant(0), x, tuple(state)))[1:]


def _minibatch_loop(step: Callable[..., Any], x_ex: Any, fdt: Any, bs: int, rows_: int,
                    spe: int, smax: int, snapshot: Callable[[Any], Any] | None
                    ) -> Callable[..., Any]:
    """The minibatch block of :meth:`TensorFlowBackend.compile_block`: a loop over the
    observations, each an inner ``tf.while_loop`` over its steps, the iterate kept after it."""
    short = rows_ % bs if spe * bs > rows_ else 0
    snap = snapshot or (lambda x: x)
    width = int(np.prod(np.shape(x_ex))) if snapshot is None else None
    chunk = gather_steps(bs, spe)
    shape = (bs, rows_, spe, short, chunk)

    def mini_block(n: Any, x: Any, state: Any, data: Any, idx: Any, start: Any,
                   first: Any, every: Any, *extra: Any) -> Any:
        def on_rows(a: Any, size: int, x: Any, state: Any) -> Any:
            # a gather, not tf.slice: XLA takes a slice's start as a compile-time constant
            # and would compile again for every new start
            rows = tf.gather(idx, a + tf.range(size))
            batch = {k: tf.gather(v, rows) for k, v in data.items()}
            _, _, x2, s2 = step(x, state, batch, *extra)
            return x2, tuple(s2)

        def steps(i0: Any, end: Any, x: Any, state: Any) -> Any:
            def body(i: Any, x: Any, state: Any) -> Any:  # a full minibatch
                g = start + i
                e = g // spe
                return (i + 1, *on_rows(e * rows_ + (g - e * spe) * bs, bs, x, state))

            _, x, state = tf.while_loop(lambda i, *_: i < end, body, (i0, x, tuple(state)))
            return x, state

        def pieces(i: Any, end: Any, x: Any, state: Any) -> Any:
            def piece(i: Any, x: Any, state: Any) -> Any:  # under chunk / 4 full ones: one by one
                stop = tf.minimum(end, i + chunk)
                gather = 4 * (stop - i) >= chunk
                if short:  # and an epoch's shorter last one among them: gathered
                    gather = gather | (spe - 1 - (start + i) % spe < stop - i)
                x, state = tf.cond(gather,
                                   lambda: _gathered(step, extra, data, idx, start, shape, i,
                                                     stop, x, state),
                                   lambda: steps(i, stop, x, state))
                return stop, x, tuple(state)
            _, x, state = tf.while_loop(lambda i, *_: i < end, piece, (i, x, tuple(state)))
            return x, state

        # the steps up to each observation in an inner loop; the iterate kept after it
        def segment(m: Any, i: Any, x: Any, state: Any, kept: Any) -> Any:
            end = tf.minimum(n, tf.where(m == 0, first, first + m * every))
            x, state = pieces(i, end, x, state)
            kept = tf.tensor_scatter_nd_update(
                kept, tf.reshape(tf.minimum(m, smax), (1, 1)),
                tf.reshape(tf.cast(snap(x), fdt), (1, -1)))
            return m + 1, end, x, tuple(state), kept

        size = width if width is not None else int(np.prod(snap(x).shape))
        init = (tf.constant(0), tf.constant(0), x, tuple(state),
                tf.zeros([smax + 1, size], fdt))
        _, _, x, state, kept = tf.while_loop(lambda m, i, *_: i < n, segment, init)
        return x, state, kept, ()
    return mini_block


class TensorFlowBackend(Backend):
    """TensorFlow 2 (graph functions) on the CPU or a GPU."""

    name = "tensorflow"
    ops = ops
    capabilities = frozenset({"autodiff", "compile", "gpu"})
    block_gather = "once per block"
    JIT_COMPILE = True
    """XLA compilation (``jit_compile=True``) of step functions by default: value and gradient
    of 1e6 x 5 float64 least squares took 10.7 ms against 14.3 ms without (one CPU thread);
    iterates agree to 1e-12 relative (tested), for ~0.3 s more warm-up (never timed)."""

    def __init__(self, device: str | None = None, dtype: str = "float64",
                 jit_compile: bool | None = None) -> None:
        super().__init__(device, dtype)
        _pin_xla()
        quiet_own_retracing()
        self.tf_device = tf_device(device)
        self.device = "cpu" if self.tf_device == "/CPU:0" else self.tf_device
        self.tf_dtype = _DTYPES[self.dtype]
        self.jit_compile = self.JIT_COMPILE if jit_compile is None else bool(jit_compile)
        self._gpu = self.tf_device.startswith("/GPU")
        self.shares_from = None if self._gpu else ALIGNED_BYTES
        #: (compiled call, its compile count when this backend took it)
        self._functions: list[tuple[Any, int]] = []

    @property
    def version(self) -> str:
        return str(tf.__version__)

    # ------------------------------------------------------------------ arrays
    def asarray(self, a: Any) -> Any:
        with tf.device(self.tf_device):
            if isinstance(a, (tf.Tensor, tf.Variable)):
                if a.dtype.is_floating:
                    return tf.identity(tf.cast(a, self.tf_dtype))
                return tf.identity(a)
            arr = np.asarray(a)
            return self._put(arr, self.dtype if np.issubdtype(arr.dtype, np.floating)
                             else arr.dtype)

    def _put(self, arr: np.ndarray, dtype: Any) -> Any:
        """``arr`` as ``dtype`` on the device (inside ``tf.device``); a large one on the CPU
        through DLPack, which hands TensorFlow the host buffer without a copy: a
        :func:`shareable` array's own (read in place), else an aligned private copy's."""
        if not self._gpu and arr.size * np.dtype(dtype).itemsize >= ALIGNED_BYTES:
            alias = _writeable_alias(arr) if shareable(arr, dtype) else None
            host = aligned_copy(arr, dtype) if alias is None else alias
            return tf.experimental.dlpack.from_dlpack(host.__dlpack__())
        return tf.constant(arr, dtype=tf.as_dtype(np.dtype(dtype)))

    def shares(self, arr: np.ndarray) -> bool:
        """On the CPU, a large :func:`shareable` array in the run's dtype whose memory can be
        exported (DLPack); the tensor reads it in place (TensorFlow never writes into a buffer
        it does not own)."""
        dt = self.dtype if np.issubdtype(arr.dtype, np.floating) else arr.dtype
        return (self.shares_from is not None and arr.nbytes >= self.shares_from
                and shareable(arr, dt) and _writeable_alias(arr) is not None)

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.array(t.numpy() if hasattr(t, "numpy") else t, copy=True)

    def index_array(self, idx: np.ndarray) -> Any:
        with tf.device(self.tf_device):
            return self._put(np.asarray(idx), np.int64)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        with tf.device(self.tf_device):
            if isinstance(idx, slice):
                return {k: v[idx] for k, v in data.items()}
            return {k: tf.gather(v, idx) for k, v in data.items()}

    def copy(self, t: Any) -> Any:
        with tf.device(self.tf_device):
            return tf.identity(t)

    def sync(self) -> None:
        if self._gpu:
            sync_devices = getattr(tf.test.experimental, "sync_devices", None)
            if sync_devices is not None:
                sync_devices()

    def timing_contract(self) -> dict[str, Any]:
        """The barrier, compute dtype and matmul precision (``"tf32"`` where a float32 run on a
        GPU may use TF32)."""
        tf32 = bool(tf.config.experimental.tensor_float_32_execution_enabled())
        precision = "tf32" if (tf32 and self._gpu and self.dtype == "float32") else "highest"
        return {"barrier": "tf.test.experimental.sync_devices" if self._gpu
                else "none (synchronous)", "compute_dtype": self.dtype,
                "matmul_precision": precision}

    # ------------------------------------------------------------------ compiled functions
    @property
    def compiler(self) -> str:
        """``"xla"`` with :attr:`jit_compile`, else ``"tf.function"``."""
        return "xla" if self.jit_compile else "tf.function"

    def compilations(self) -> int:
        """Traces plus XLA compilations of every function this backend compiled, so far."""
        return sum(_compiles(call) - base for call, base in self._functions)

    def function(self, fn: Callable[..., Any], input_signature: Sequence[Any],
                 rows: Sequence[int] = (), exact: bool = False,
                 reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """``tf.function`` of ``fn`` on this backend's device (and XLA when enabled)."""
        jit = self.jit_compile
        store, key = None, None
        if reuse is not None:
            store = reuse.store()
            key = ("tensorflow", reuse.parts, self.tf_device, self.dtype, bool(jit),
                   tuple(rows), bool(exact), repr(list(input_signature)))
            kept = store.get(key)
            if kept is not None:
                self._functions.append((kept, _compiles(kept)))
                return kept  # type: ignore[no-any-return]
        sig = list(input_signature)
        g = tf.function(fn, input_signature=sig, jit_compile=jit, autograph=False)
        dev = self.tf_device
        seen: set[Any] = set()
        row_args = tuple(rows) if jit else ()
        # the traced concrete function is called directly after the first call:
        # tf.function's dispatch (signature matching) costs ~0.2 ms per call
        concrete = exact or _n_params(fn) == len(input_signature)
        fast: list[Any] = []

        def call(*args: Any) -> Any:
            if row_args:
                seen.add(tuple(_leading(args[i]) for i in row_args))
            with tf.device(dev):
                if fast:
                    return fast[0](*args)
                try:
                    out = call.tf_function(*args)  # type: ignore[attr-defined]
                except tf.errors.OperatorNotAllowedInGraphError:
                    # Python control flow on a tensor: traced again through AutoGraph, which
                    # converts it (AutoGraph's conversion otherwise costs seconds per trace)
                    call.tf_function = tf.function(  # type: ignore[attr-defined]
                        fn, input_signature=sig, jit_compile=jit, autograph=True)
                    out = call.tf_function(*args)  # type: ignore[attr-defined]
                tf_fn = call.tf_function  # type: ignore[attr-defined]
                fast.append(_flat_call(tf_fn.get_concrete_function()) if concrete else tf_fn)
                return out

        call.tf_function = g  # type: ignore[attr-defined]
        call.shapes_seen = seen  # type: ignore[attr-defined]
        self._functions.append((call, 0))
        if store is not None:
            store[key] = call
        return call

    def compile(self, fn: Callable[..., Any], example: Sequence[Any], *,
                rows: Sequence[int] = (), reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """One ``tf.function`` (XLA with :attr:`jit_compile`) with a fixed input signature."""
        signature = [_spec_like(a, i in rows, self.tf_dtype) for i, a in enumerate(example)]
        return self.function(fn, signature, rows=rows, reuse=reuse)

    def compile_block(self, step: Callable[..., Any], example: Sequence[Any], *,
                      batch_size: int | None = None, n_max: int = 1024,
                      n_rows: int | None = None, steps_per_epoch: int | None = None,
                      snapshots: int = 1, snapshot: Callable[[Any], Any] | None = None,
                      reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """Up to ``n_max`` steps in one ``tf.while_loop`` inside one ``tf.function`` (XLA):
        ``n`` and ``start`` are tensors, and an epoch's shorter last minibatch is the other
        branch of a ``tf.cond``, so every block, across epochs, runs one compiled program."""
        fdt, nmax = self.tf_dtype, int(n_max)
        x_ex, state_ex, data_ex, *extra_ex = example
        scalar = tf.TensorSpec([], tf.int32)
        specs = [_spec_like(a, False, fdt) for a in (x_ex, tuple(state_ex), data_ex, *extra_ex)]
        as_int32 = _int32_cache()
        if batch_size is None:
            def block(n: Any, x: Any, state: Any, data: Any, *extra: Any) -> Any:
                def body(i: Any, x: Any, state: Any, funs: Any, gns: Any) -> Any:
                    f, gn, x2, s2 = step(x, state, data, *extra)
                    at = tf.reshape(i, (1, 1))
                    funs = tf.tensor_scatter_nd_update(funs, at, tf.reshape(tf.cast(f, fdt), (1,)))
                    gns = tf.tensor_scatter_nd_update(gns, at, tf.reshape(tf.cast(gn, fdt), (1,)))
                    return i + 1, x2, tuple(s2), funs, gns

                init = (tf.constant(0), x, tuple(state), tf.zeros([nmax], fdt),
                        tf.zeros([nmax], fdt))
                _, x, state, funs, gns = tf.while_loop(lambda i, *_: i < n, body, init,
                                                       maximum_iterations=nmax)
                return x, state, funs, gns
            full = self.function(block, [scalar, *specs], exact=True,
                                 reuse=_block_key(reuse, "block", nmax))
            return lambda n, *args: full(as_int32(n), *args)
        bs, rows_ = int(batch_size), int(n_rows if n_rows is not None else batch_size)
        spe = int(steps_per_epoch or -(-rows_ // bs))
        smax = max(1, int(snapshots))
        mini_block = _minibatch_loop(step, x_ex, fdt, bs, rows_, spe, smax, snapshot)
        idx_spec = tf.TensorSpec([None], tf.int64)
        fn = self.function(mini_block, [scalar, *specs[:3], idx_spec, scalar, scalar, scalar,
                                        *specs[3:]],
                           exact=True, reuse=_block_key(reuse, "minibatch block", bs, rows_,
                                                        spe, smax))

        def int_block(n: Any, x: Any, state: Any, data: Any, idx: Any, start: Any,
                      first: Any, every: Any, *extra: Any) -> Any:
            return fn(as_int32(n), x, state, data, idx, as_int32(start), as_int32(first),
                      as_int32(every), *extra)
        return int_block

    def compile_each(self, fn: Callable[..., Any], example: Sequence[Any], *,
                     reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """``g(m, xs, *args)``: ``fn(xs[i], *args)`` for the first ``m`` rows of ``xs`` in one
        ``tf.function`` (XLA with :attr:`jit_compile`), a ``tf.while_loop`` whose body is
        ``fn``'s own graph; the vector's other entries are zeros."""
        fdt = self.tf_dtype

        def each(m: Any, xs: Any, *args: Any) -> Any:
            def body(i: Any, out: Any) -> Any:
                v = tf.reshape(tf.cast(fn(tf.gather(xs, i), *args), fdt), (1,))
                return i + 1, tf.tensor_scatter_nd_update(out, tf.reshape(i, (1, 1)), v)
            return tf.while_loop(lambda i, _: i < m, body,
                                 (tf.constant(0), tf.zeros([tf.shape(xs)[0]], fdt)))[1]
        specs = [tf.TensorSpec([], tf.int32), *(_spec_like(a, False, fdt) for a in example)]
        g = self.function(each, specs, exact=True, reuse=_block_key(reuse, "each"))
        return lambda m, xs, *args: g(tf.constant(m, tf.int32), xs, *args)

    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        analytic = analytic_value_and_grad(self, problem, gradient)  # gradient_ops, no tape
        if analytic is not None:
            return analytic
        objective = problem.objective
        o = self.ops

        def value_and_grad(x: Any, batch: dict[str, Any]) -> tuple[Any, Any]:
            with tf.GradientTape() as tape:
                tape.watch(x)
                f = objective(o, x, batch)
            return f, tape.gradient(f, x)

        return value_and_grad

    def hessian_vector_product(self, problem: Problem, data: dict[str, Any]
                               ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Nested gradient tapes, eager."""
        objective, o = problem.objective, self.ops

        def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
            xt, vt = self.asarray(x), self.asarray(v)
            with tf.GradientTape() as outer:
                outer.watch(xt)
                with tf.GradientTape() as inner:
                    inner.watch(xt)
                    f = objective(o, xt, data)
                gv = tf.reduce_sum(inner.gradient(f, xt) * vt)
            return np.asarray(outer.gradient(gv, xt).numpy(), dtype=np.float64).reshape(-1)

        return hvp

    # ------------------------------------------------------------------ threads
    @classmethod
    def get_threads(cls) -> int | None:
        """TensorFlow's intra-op pool size (its default, 0, reported as ``os.cpu_count()``)."""
        n = int(tf.config.threading.get_intra_op_parallelism_threads())
        return n if n > 0 else _env_threads() or os.cpu_count()

    @classmethod
    def runtime_started(cls) -> bool:
        """Whether TensorFlow's eager context (its runtime's thread pools) is up."""
        from tensorflow.python.eager import context

        return getattr(context.context(), "_context_handle", None) is not None

    @classmethod
    @contextlib.contextmanager
    def run_settings(cls) -> Iterator[None]:
        """XLA's CPU thread flags added before XLA starts where JAX is installed (they stay)."""
        _pin_xla()
        yield

    @classmethod
    def set_threads(cls, n: int) -> Callable[[], None] | None:
        """Set the intra- and inter-op pools to ``n`` threads if TensorFlow has not started
        (later they keep their size, with a warning). Nothing is restored."""
        cur = tf.config.threading.get_intra_op_parallelism_threads()
        if cur == n or (cur == 0 and _env_threads() == n):
            return None
        try:
            tf.config.threading.set_intra_op_parallelism_threads(n)
            tf.config.threading.set_inter_op_parallelism_threads(n)
        except RuntimeError:
            if (cur, n) in _WARNED_POOLS:  # once per process for each count asked for
                return None
            _WARNED_POOLS.add((cur, n))
            warnings.warn(
                f"TensorFlow's thread pools were already started with "
                f"{cur or 'its default number of'} threads and cannot change to {n} in this "
                "process; the result records the count in force. Start a fresh process (or the "
                "TensorFlow runs first) to control them.", stacklevel=outside_level())
        return None


#: (pool size in force, size asked for) pairs already warned about.
_WARNED_POOLS: set[tuple[int, int]] = set()


def _pin_xla() -> None:
    """XLA's CPU thread flags (:func:`~optcmp.frameworks.ops.pin_xla_threads`) where JAX is installed."""
    if importlib.util.find_spec("jax") is not None:
        pin_xla_threads()


def _env_threads() -> int | None:
    """The intra-op count set by ``TF_NUM_INTRAOP_THREADS`` (read by TensorFlow at start)."""
    try:
        n = int(os.environ.get("TF_NUM_INTRAOP_THREADS", "") or 0)
    except ValueError:
        return None
    return n if n > 0 else None
