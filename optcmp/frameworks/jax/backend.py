"""The JAX backend: ``jax.jit`` steps (XLA) warmed up for every shape, data resident on the device.

Every compiled call's outputs are kept until :meth:`JaxBackend.sync` waits for them (JAX
dispatches asynchronously, on the CPU too). A float64 backend switches ``jax_enable_x64`` on when
built and leaves it on: switching it back would retrace every program at the next float64 run
(35 ms inside a resumed run's timed steps). See docs/backends.md, "The framework backends".
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import jax
import jax.numpy as jnp
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
from optcmp.frameworks.jax.ops import ops
from optcmp.frameworks.ops import pin_xla_threads, xla_cpu_threads
from optcmp.frameworks.reuse import ReuseKey

if TYPE_CHECKING:
    from optcmp.problems.base import Problem

#: The barrier before every clock read (a module attribute, so that a test can replace it).
block_until_ready = jax.block_until_ready


_COMPILES = threading.local()
_LISTENING: list[bool] = []


def _on_event(event: str, duration_secs: float, **_: str | int) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES.n = getattr(_COMPILES, "n", 0) + 1


def xla_compiles() -> int:
    """XLA compilations (every jit cache miss) in this thread since the first
    :class:`JaxBackend` was built."""
    if not _LISTENING:
        jax.monitoring.register_event_duration_secs_listener(_on_event)
        _LISTENING.append(True)
    return int(getattr(_COMPILES, "n", 0))


def x64_enabled() -> bool:
    """Whether ``jax_enable_x64`` is on in this process."""
    return bool(jax.config.read("jax_enable_x64"))


def require_x64(what: str = "a float64 run") -> None:
    """Switch ``jax_enable_x64`` on, or refuse when it cannot be."""
    if not x64_enabled():
        jax.config.update("jax_enable_x64", True)
    if jnp.zeros((), dtype=jnp.float64).dtype != jnp.float64:
        raise ValueError(f"{what} on JAX needs jax_enable_x64, which is off: JAX would compute "
                         "in float32; set jax.config.update('jax_enable_x64', True) or use "
                         "dtype='float32'")


def jax_device(device: str | None) -> Any:
    """The ``jax.Device`` for an optcmp device name."""
    name = "cpu" if device is None else str(device).strip().lower()
    if name == "cpu":
        return jax.devices("cpu")[0]
    kind, _, num = name.partition(":")
    if kind not in ("cuda", "gpu"):
        raise ValueError(f"unknown JAX device {device!r}; use 'cpu', 'gpu', 'cuda' or 'cuda:N'")
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:
        gpus = []
    available = ["cpu"] + [f"cuda:{i}" for i in range(len(gpus))]
    try:
        index = int(num) if num else 0
    except ValueError:
        index = -1
    if not 0 <= index < len(gpus):
        raise ValueError(f"JAX device {device!r} is not available (jax {jax.__version__}); "
                         f"available devices: {available}")
    return gpus[index]


def _gathered(step: Callable[..., Any], extra: tuple[Any, ...], data: dict[str, Any],
              idx: Any, start: Any, shape: tuple[int, int, int, int, int], i0: Any, end: Any,
              carry: Any) -> Any:
    """Steps ``i0`` to ``end`` (at most ``chunk``, ``shape[4]``) of a minibatch block: their
    rows in one gather, then a contiguous slice per step."""
    lax = jax.lax
    bs, rows_, spe, short, chunk = shape
    e, j = jnp.divmod(start + i0 + jnp.arange(chunk), spe)
    at = ((e * rows_ + j * bs)[:, None] + jnp.arange(bs)).reshape(-1)
    rows = jnp.take(idx, jnp.minimum(at, idx.shape[0] - 1), axis=0)
    buf = {k: jnp.take(v, rows, axis=0).reshape(chunk, bs, *v.shape[1:])
           for k, v in data.items()}

    def on(i: Any, carry: Any, size: int = bs, batch: Any = None) -> Any:
        if batch is None:
            batch = {k: lax.dynamic_index_in_dim(v, i - i0, keepdims=False)[:size]
                     for k, v in buf.items()}
        _, _, x2, s2 = step(*carry, batch, *extra)
        return x2, tuple(s2)
    if not short:  # a whole chunk: lax.scan over its batches (a static trip count)
        return lax.cond(end - i0 == chunk, lambda c: lax.scan(
            lambda c, b: (on(i0, c, batch=b), None), c, buf)[0],
            lambda c: lax.fori_loop(i0, end, on, c), carry)
    # at most one epoch's shorter last minibatch among them: the full ones before it (k = 0),
    # it, then the full ones after it (k = 1), by one loop of full steps
    last = i0 + spe - 1 - (start + i0) % spe

    def around(k: Any, carry: Any) -> Any:
        carry = lax.fori_loop(jnp.where(k == 0, i0, last + 1),
                              jnp.where(k == 0, jnp.minimum(last, end), end), on, carry)
        return lax.cond((k == 0) & (last < end), lambda c: on(last, c, short), lambda c: c,
                        carry)
    return lax.fori_loop(0, 2, around, carry)


def _minibatch_loop(step: Callable[..., Any], fdt: Any, geometry: tuple[int, int, int],
                    smax: int, snapshot: Callable[[Any], Any] | None) -> Callable[..., Any]:
    """The minibatch block of :meth:`JaxBackend.compile_block`: a loop over the observations,
    each over its steps in pieces of :func:`gather_steps` steps, the iterate kept after it."""
    lax = jax.lax
    bs, rows_, spe = geometry
    short = rows_ % bs if spe * bs > rows_ else 0
    snap = snapshot or (lambda x: x)
    chunk = gather_steps(bs, spe)

    def mini_block(n: Any, x: Any, state: Any, data: Any, idx: Any, start: Any,
                   first: Any, every: Any, *extra: Any) -> Any:
        def on_rows(a: Any, size: int, x: Any, state: Any) -> Any:
            rows = lax.dynamic_slice(idx, (a,), (size,))
            batch = {k: jnp.take(v, rows, axis=0) for k, v in data.items()}
            _, _, x2, s2 = step(x, state, batch, *extra)
            return x2, tuple(s2)

        def body(i: Any, carry: Any) -> Any:  # a full minibatch
            e, j = jnp.divmod(start + i, spe)
            return on_rows(e * rows_ + j * bs, bs, *carry)

        def piece(carry: Any) -> Any:  # under chunk / 4 full steps: gathered one by one
            i, end, x, state = carry
            stop = jnp.minimum(end, i + chunk)
            gather = 4 * (stop - i) >= chunk
            if short:  # and an epoch's shorter last one among them: gathered
                gather = gather | (spe - 1 - (start + i) % spe < stop - i)
            x, state = lax.cond(
                gather,
                lambda: _gathered(step, extra, data, idx, start, (bs, rows_, spe, short, chunk),
                                  i, stop, (x, tuple(state))),
                lambda: lax.fori_loop(i, stop, body, (x, tuple(state))))
            return stop, end, x, tuple(state)

        # the steps up to each observation in an inner loop; the iterate kept after it
        def segment(carry: Any) -> Any:
            m, i, x, state, kept = carry
            end = jnp.minimum(n, jnp.where(m == 0, first, first + m * every))
            _, _, x, state = lax.while_loop(lambda c: c[0] < c[1], piece,
                                            (i, end, x, tuple(state)))
            kept = kept.at[jnp.minimum(m, smax)].set(jnp.reshape(snap(x), (-1,)).astype(fdt))
            return m + 1, end, x, tuple(state), kept

        size = int(np.prod(np.shape(snap(x))))
        init = (jnp.int32(0), jnp.int32(0), x, tuple(state), jnp.zeros((smax + 1, size), fdt))
        _, _, x, state, kept = lax.while_loop(lambda c: c[1] < n, segment, init)
        return x, state, kept, ()
    return mini_block


class JaxBackend(Backend):
    """JAX (``jax.jit``, XLA) on the CPU or a GPU."""

    name = "jax"
    ops = ops
    capabilities = frozenset({"autodiff", "compile", "gpu"})
    block_gather = "once per block"
    MATMUL_PRECISION = "highest"
    """How matrix products are computed (``jax.lax.Precision`` of ``ops.matmul``)."""

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        super().__init__(device, dtype)
        pin_xla_threads()  # before jax_device starts JAX's runtime
        if self.dtype == "float64":
            require_x64()
        self._x64 = x64_enabled()
        self.jax_device = jax_device(device)
        self.device = "cpu" if self.jax_device.platform == "cpu" else \
            f"cuda:{self.jax_device.id}"
        self.jnp_dtype = jnp.float64 if self.dtype == "float64" else jnp.float32
        self._pending: list[Any] = []
        self._xla0 = xla_compiles()
        self.shares_from = ALIGNED_BYTES if self.jax_device.platform == "cpu" else None

    @property
    def version(self) -> str:
        return str(jax.__version__)

    def timing_contract(self) -> dict[str, Any]:
        """What this backend's clock reads stand on: barrier, compute dtype, matmul precision,
        whether a CPU step returns before its work is done (asynchronous dispatch)."""
        x64 = self._x64
        dt = self.dtype if (self.dtype == "float32" or x64) else "float32"
        default = getattr(jax.config, "jax_default_matmul_precision", None)
        return {"barrier": "jax.block_until_ready", "compute_dtype": dt,
                "matmul_precision": self.MATMUL_PRECISION, "x64": x64,
                "default_matmul_precision": "default" if default is None else str(default),
                "cpu_async_dispatch": bool(jax.config.read("jax_cpu_enable_async_dispatch"))}

    # ------------------------------------------------------------------ arrays
    def _check_x64(self) -> None:
        if self.dtype == "float64" and not x64_enabled():
            raise ValueError("a float64 run on JAX found jax_enable_x64 off: JAX would compute "
                             "in float32; turn it on again or use dtype='float32'")

    def asarray(self, a: Any) -> Any:
        self._check_x64()
        if isinstance(a, jax.Array):
            if jnp.issubdtype(a.dtype, jnp.floating):
                a = a.astype(self.jnp_dtype)
            return jax.device_put(a, self.jax_device)
        arr = np.asarray(a)
        return self._put(arr, self.dtype if np.issubdtype(arr.dtype, np.floating) else arr.dtype)

    def _put(self, arr: np.ndarray, dtype: Any) -> Any:
        """``arr`` as ``dtype`` on the device: read in place where :func:`shareable` on the
        CPU, else a private copy (``device_put`` of an aligned writeable array would share it,
        and a later write to it change the device's values); a large one aligned first."""
        dt = np.dtype(dtype)
        if self.jax_device.platform == "cpu" and not shareable(arr, dt):
            arr = (aligned_copy(arr, dt) if arr.size * dt.itemsize >= ALIGNED_BYTES
                   else np.array(arr, dtype=dt))
        return jax.device_put(arr if arr.dtype == dt else arr.astype(dt), self.jax_device)

    def shares(self, arr: np.ndarray) -> bool:
        """On the CPU, a :func:`shareable` array in the run's dtype (``device_put`` reads it
        in place; checked by the tests with ``unsafe_buffer_pointer``)."""
        dt = self.dtype if np.issubdtype(arr.dtype, np.floating) else arr.dtype
        return self.jax_device.platform == "cpu" and shareable(arr, dt)

    def to_numpy(self, t: Any) -> np.ndarray:
        return np.array(jax.device_get(t), copy=True)

    def index_array(self, idx: np.ndarray) -> Any:
        return self._put(np.asarray(idx), np.int64 if x64_enabled() else np.int32)

    def take_rows(self, data: dict[str, Any], idx: Any) -> dict[str, Any]:
        if isinstance(idx, slice):
            return {k: v[idx] for k, v in data.items()}
        return {k: jnp.take(v, idx, axis=0) for k, v in data.items()}

    def copy(self, t: Any) -> Any:
        """``t`` itself: JAX arrays are immutable, no later update can change them."""
        return t

    def place_state(self, state: Any) -> Any:
        """Every leaf committed to the device: jit compiles once for an uncommitted state
        (``zeros_like``, optax's ``init``) and once more for the committed outputs."""
        return jax.device_put(state, self.jax_device)

    def sync(self) -> None:
        """Wait for the outputs of every compiled call since the last sync."""
        pending, self._pending = self._pending, []
        if pending:
            block_until_ready(pending)

    # ------------------------------------------------------------------ compiled functions
    @property
    def compiler(self) -> str:
        """``"xla"`` (``jax.jit``)."""
        return "xla"

    def compilations(self) -> int:
        """XLA compilations in this thread since the backend was built (:func:`xla_compiles`),
        retraced or not (an argument newly committed to a device compiles all the same)."""
        return xla_compiles() - self._xla0

    def _jit(self, fn: Callable[..., Any], reuse: ReuseKey | None = None,
             *kind: Any) -> Callable[..., Any]:
        """``jax.jit`` of ``fn`` that checks x64 when it traces and whose outputs wait for
        :meth:`sync`; with ``reuse``, kept under the key, device, dtype and ``kind`` for a later
        run with an equal key (``fn`` then unused)."""
        store, key = None, None
        if reuse is not None:
            store = reuse.store()
            key = ("jax", reuse.parts, str(self.jax_device), self.dtype, *kind)
        jitted = None if store is None else store.get(key)
        if jitted is None:
            check = self._check_x64

            def traced(*args: Any) -> Any:
                check()  # the Python body runs only when jit traces (a cache miss)
                return fn(*args)

            jitted = jax.jit(traced)
            if store is not None:
                store[key] = jitted

        def call(*args: Any) -> Any:
            out = jitted(*args)
            self._pending.append(out)
            return out

        call.jitted = jitted  # type: ignore[attr-defined]
        return call

    def compile(self, fn: Callable[..., Any], example: Sequence[Any], *,
                rows: Sequence[int] = (), reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """``jax.jit`` of ``fn``, compiled on the first call of each shape (:meth:`_jit`)."""
        return self._jit(fn, reuse, "step", tuple(rows))

    def compile_block(self, step: Callable[..., Any], example: Sequence[Any], *,
                      batch_size: int | None = None, n_max: int = 1024,
                      n_rows: int | None = None, steps_per_epoch: int | None = None,
                      snapshots: int = 1, snapshot: Callable[[Any], Any] | None = None,
                      reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """Up to ``n_max`` steps in one ``lax.fori_loop`` inside one ``jax.jit``, as the
        TensorFlow backend's; ``reuse`` is ignored with a ``snapshot`` (it may close over a
        run's objects)."""
        fdt, nmax = self.jnp_dtype, int(n_max)
        lax = jax.lax
        if batch_size is None:
            def block(n: Any, x: Any, state: Any, data: Any, *extra: Any) -> Any:
                def body(i: Any, carry: Any) -> Any:
                    x, state, funs, gns = carry
                    f, gn, x2, s2 = step(x, state, data, *extra)
                    funs = funs.at[i].set(jnp.asarray(f, fdt))
                    gns = gns.at[i].set(jnp.asarray(gn, fdt))
                    return x2, tuple(s2), funs, gns

                init = (x, tuple(state), jnp.zeros(nmax, fdt), jnp.zeros(nmax, fdt))
                return lax.fori_loop(0, jnp.minimum(n, nmax), body, init)
            full = self._jit(block, reuse, "block", nmax)
            return lambda n, *args: full(np.int32(n), *args)
        bs = int(batch_size)
        rows_ = int(n_rows if n_rows is not None else batch_size)
        spe = int(steps_per_epoch or -(-rows_ // bs))
        smax = max(1, int(snapshots))
        mini_block = _minibatch_loop(step, fdt, (bs, rows_, spe), smax, snapshot)
        fn = self._jit(mini_block, None if snapshot is not None else reuse,
                       "minibatch block", bs, rows_, spe, smax)

        def int_block(n: Any, x: Any, state: Any, data: Any, idx: Any, start: Any,
                      first: Any, every: Any, *extra: Any) -> Any:
            # observations past the block's n steps are not in it: capped at n, int32 holds them
            # numpy scalars: a jnp.int32 is a dispatched operation per argument and call
            return fn(np.int32(n), x, state, data, idx, np.int32(start),
                      np.int32(min(first, n)), np.int32(min(every, max(n, 1))), *extra)
        return int_block

    def compile_each(self, fn: Callable[..., Any], example: Sequence[Any], *,
                     reuse: ReuseKey | None = None) -> Callable[..., Any]:
        """``g(m, xs, *args)``: ``fn(xs[i], *args)`` for the first ``m`` rows of ``xs`` in one
        ``jax.jit``, a loop whose body is ``fn``'s own program (the same values as a call per
        row); the vector's other entries are zeros."""
        lax = jax.lax

        def each(m: Any, xs: Any, *args: Any) -> Any:
            def body(i: Any, out: Any) -> Any:
                x = lax.dynamic_index_in_dim(xs, i, keepdims=False)
                return out.at[i].set(jnp.asarray(fn(x, *args), xs.dtype))
            return lax.fori_loop(0, m, body, jnp.zeros(xs.shape[0], xs.dtype))
        jitted = self._jit(each, reuse, "each")
        return lambda m, xs, *args: jitted(np.int32(m), xs, *args)

    def value_and_grad(self, problem: Problem, gradient: str = "auto") -> ValueGradFn:
        analytic = analytic_value_and_grad(self, problem, gradient)  # gradient_ops
        if analytic is not None:
            return analytic
        objective, o = problem.objective, self.ops
        vg: ValueGradFn = jax.value_and_grad(lambda x, batch: objective(o, x, batch))
        return vg

    def hessian_vector_product(self, problem: Problem, data: dict[str, Any]
                               ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Forward over reverse (``jax.jvp`` of ``jax.grad``), compiled with ``jax.jit``."""
        objective, o = problem.objective, self.ops
        grad = jax.grad(lambda z: objective(o, z, data))
        hv_fn = jax.jit(lambda z, w: jax.jvp(grad, (z,), (w,))[1])

        def hvp(x: np.ndarray, v: np.ndarray) -> np.ndarray:
            hv = hv_fn(self.asarray(x), self.asarray(v))
            return np.asarray(self.to_numpy(hv), dtype=np.float64).reshape(-1)

        return hvp

    # ------------------------------------------------------------------ threads
    @classmethod
    def get_threads(cls) -> int | None:
        """XLA's CPU compute threads: 1 when JAX started with optcmp's flags, else None."""
        return xla_cpu_threads()

    @classmethod
    def runtime_started(cls) -> bool:
        """Whether JAX's backends (its runtime's threads) are up."""
        from jax._src import xla_bridge

        return bool(getattr(xla_bridge, "backends_are_initialized", lambda: False)())

    def resume_settings(self) -> None:
        """A resumed float64 run switches ``jax_enable_x64`` on again."""
        if self.dtype == "float64":
            require_x64()

    @classmethod
    @contextlib.contextmanager
    def run_settings(cls) -> Iterator[None]:
        """XLA's CPU thread flags added before JAX starts (they stay for the process)."""
        pin_xla_threads()
        yield

    @classmethod
    def set_threads(cls, n: int) -> Callable[[], None] | None:
        """XLA fixes its CPU threads when JAX starts; a different count only warns."""
        cur = xla_cpu_threads()
        if cur != n:
            warnings.warn(
                f"JAX's XLA CPU threads are fixed when JAX starts ({cur or 'its default'}) and "
                f"cannot change to {n} in this process; the result records the count in force",
                stacklevel=outside_level())
        return None
