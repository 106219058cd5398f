"""Native Keras adapter: an optimizer's :class:`~optcmp.optimizers.KerasOptimizer` on TF.

Imported only when a run needs it. The iterate is one flat ``tf.Variable`` on the backend's
device; a step is one compiled call (:meth:`~optcmp.frameworks.base.Backend.compile`, traced once,
during warm-up): objective and gradient under a ``tf.GradientTape`` (a fresh tape each step, so
no gradient is ever carried over), then ``optimizer.apply_gradients``. Every argument the
declaration gives is passed to the constructor explicitly (Keras' own defaults are
``learning_rate=0.001, rho=0.95, epsilon=1e-7`` for Adadelta and ``learning_rate=0.01`` for
SGD), and the optimizer is built with Keras' ``floatx`` set to the run's dtype, so
that its learning-rate variable is float64 in float64 runs (with Keras' float32 default, 0.1
would become 0.10000000149).

A repetition compiles nothing: the variable, the optimizer and the compiled step (and fused
blocks) are kept on the problem as a bundle, under a key of everything they bake in (the
problem, the optimizer's name and constructor arguments, the run's dtype, device and compiler,
the gradient, minibatches or not). A run checks a kept bundle out at setup and resets it (the
iterate to ``x0``, the optimizer's variables to their values right after ``build``), so it runs
bit for bit as a fresh build, and gives it back when done (:meth:`KerasNativeAdapter.close`).
A bundle serves one run at a time: a run that finds every kept one taken (runs in threads)
builds, compiles and keeps its own.

Keras 3 follows one process-wide backend. When Keras was already imported with a backend other
than TensorFlow, its optimizers cannot update TensorFlow variables: the adapter then runs the
optimizer's reference update rule instead, and says so in :attr:`implementation` (recorded in
every result).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np

from optcmp.fingerprint import canonical_json
from optcmp.frameworks.base import analytic_value_and_grad, host_key
from optcmp.frameworks.reference import ReferenceAdapter
from optcmp.frameworks.reuse import ReuseKey, problem_parts
from optcmp.frameworks.stepper import Block
from optcmp.frameworks.tensorflow.backend import TensorFlowBackend
from optcmp.frameworks.tensorflow.ops import tf
from optcmp.implementation import Implementation
from optcmp.optimizers import KerasOptimizer


def keras_backend_name() -> str:
    """Backend Keras runs on in this process (imports Keras with TensorFlow if not yet loaded)."""
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras

    return str(keras.backend.backend())


def _plain(v: Any) -> Any:
    """numpy scalars as Python numbers (for the implementation text)."""
    return v.item() if isinstance(v, np.generic) else v


def _schedule_class(keras: Any) -> type:
    """A ``keras.optimizers.schedules.LearningRateSchedule`` running an optcmp schedule."""
    from optcmp.optimizers.schedule import backend_namespace, parse

    base = keras.optimizers.schedules.LearningRateSchedule

    class OptcmpSchedule(base):  # type: ignore[misc, valid-type]
        """``learning_rate * s(step)`` (:mod:`optcmp.optimizers.schedule`), in ``dtype``."""

        def __init__(self, learning_rate: float, schedule: str, dtype: str) -> None:
            self.learning_rate, self.schedule, self.dtype = learning_rate, schedule, dtype
            self._s = parse(schedule)

        def __call__(self, step: Any) -> Any:
            from optcmp.frameworks.tensorflow.ops import ops as tf_ops

            k = tf.cast(step, self.dtype)
            return self.learning_rate * self._s.factor(k, backend_namespace(tf_ops))

        def get_config(self) -> dict[str, Any]:
            return {"learning_rate": self.learning_rate, "schedule": self.schedule,
                    "dtype": self.dtype}

    return OptcmpSchedule


#: Guards the lists of kept bundles (a run takes one while another may add one).
_POOL_LOCK = threading.Lock()
_SERIAL = itertools.count()


class _Bundle:
    """A ``tf.Variable``, its built Keras optimizer and the step's body, kept for later runs.

    ``initial`` holds the optimizer's variables right after ``build`` (:meth:`reset` restores
    them); ``lock`` is held by the run using it; ``key`` (this bundle's own, with a serial
    number: the compiled functions close over its variable) keeps its compiled step and
    blocks on the problem.
    """

    def __init__(self, var: Any, opt: Any, body: Any, key: ReuseKey | None) -> None:
        self.var, self.opt, self.body = var, opt, body
        self.initial = [v.numpy() for v in opt.variables]
        self.lock = threading.Lock()
        self.lock.acquire()
        self.key = None if key is None else ReuseKey(key.owner, (key.parts, next(_SERIAL)))
        if key is not None:
            with _POOL_LOCK:
                _pool(key).append(self)

    def reset(self, x0: Any) -> None:
        """The state of a new bundle: the iterate ``x0`` (a tensor), the optimizer as built."""
        self.var.assign(x0)
        for v, value in zip(self.opt.variables, self.initial):
            v.assign(value)


@contextlib.contextmanager
def _floatx(keras: Any, dtype: str) -> Iterator[None]:
    """Keras' ``floatx`` set to ``dtype`` for the block (the process-wide setting restored)."""
    old = keras.config.floatx()
    keras.config.set_floatx(dtype)
    try:
        yield
    finally:
        keras.config.set_floatx(old)


class _Named:
    """One Keras variable per named parameter (its ``path`` the parameter's name, which Keras'
    Muon reads), read and assigned as the flat iterate."""

    def __init__(self, layout: Any, x0: Any, keras: Any) -> None:
        self.layout = layout
        self.variables = [keras.Variable(tf.reshape(x0[a:b], shape), dtype=x0.dtype.name,
                                         name=name, trainable=True)
                          for name, shape, (a, b) in zip(layout.names, layout.shapes,
                                                         layout.offsets())]

    def read_value(self) -> Any:
        return tf.concat([tf.reshape(v.value, (-1,)) for v in self.variables], 0)

    def numpy(self) -> np.ndarray:
        return np.concatenate([v.numpy().reshape(-1) for v in self.variables])

    def assign(self, x: Any) -> None:
        for v, part in zip(self.variables, self.split(x)):
            v.assign(part)

    def split(self, x: Any) -> list[Any]:
        """The flat ``x`` as the variables' shapes."""
        return [tf.reshape(x[a:b], s) for s, (a, b) in zip(self.layout.shapes,
                                                             self.layout.offsets())]


def _pool(key: ReuseKey) -> list[_Bundle]:
    """The bundles kept under ``key`` on its problem (hold :data:`_POOL_LOCK`)."""
    pools = key.store()
    return pools.setdefault(("keras bundles", key.parts), [])  # type: ignore[no-any-return]


def _checkout(key: ReuseKey) -> _Bundle | None:
    """A kept bundle of ``key`` no other run holds, now held; None if there is none."""
    with _POOL_LOCK:
        return next((bd for bd in _pool(key) if bd.lock.acquire(blocking=False)), None)


class KerasNativeAdapter(ReferenceAdapter):
    """``keras.optimizers.<name>(**options)`` on a ``tf.Variable``; the reference rule when
    Keras is not on TensorFlow in this process.

    Built like :class:`~optcmp.frameworks.stepper.Adapter`; the spec's optimizer must declare a
    :class:`~optcmp.optimizers.KerasOptimizer`.
    """

    framework = "keras"
    describes = "keras.optimizers.{name}"
    decl: KerasOptimizer

    def setup(self) -> None:
        kb = keras_backend_name()
        self.native = kb == "tensorflow" and isinstance(self.backend, TensorFlowBackend)
        if not self.native:
            super().setup()
            self.implementation = (
                f"optcmp reference update rule (fallback: Keras runs on backend {kb!r} in this "
                f"process, so keras.optimizers.{self.decl.name} cannot update TensorFlow "
                f"variables)"
            )
            self.implemented_by = Implementation("optcmp", self.spec.name)
            return
        import keras

        self.data, shared = self.backend.place_sharing(
            self.problem.train_data, self.layout, self._transposed, keep=host_key(self.problem))
        self._placed = (dict(self.data), shared)
        self.resolve_learning_rate()
        self._build(keras)
        self._k = 0
        if self.stochastic:
            self._init_batches()
        opts = ", ".join(f"{k}={_plain(v)!r}" for k, v in self._options().items())
        said = self.info.rule.describe(self.problem.layout, self.hyper) if self.info.rule else ""
        self.implementation = (f"keras.optimizers.{self.decl.name}({opts}) on "
                               + ("one variable per named parameter" if self.decl.named
                                  else "a tf.Variable") + f" (Keras {keras.__version__})"
                               + (f" ({said})" if said else ""))

    def _bundle_key(self) -> ReuseKey | None:
        """What the variable, the optimizer and the compiled step bake in (None: not kept).

        The problem (its description and functions), the optimizer's name and every
        constructor argument (the schedule included), the dtype, device and compiler, the
        gradient choice and whether the steps see minibatches. A fused block's sizes are
        part of the keys of the blocks compiled on the bundle
        (:meth:`~optcmp.frameworks.tensorflow.backend.TensorFlowBackend.compile_block`).
        """
        b = self.backend
        assert isinstance(b, TensorFlowBackend)
        described = problem_parts(self.problem)
        if described is None or "compile" not in b.capabilities:
            return None
        try:
            options = canonical_json(self._options())
        except (TypeError, ValueError):
            return None
        return ReuseKey(self.problem, (
            "keras bundle", *described, self.decl.name, options,
            str(self.hyper.get("schedule", "constant")), b.dtype, b.tf_device,
            bool(b.jit_compile), self.gradient, bool(self.stochastic)))

    def _build(self, keras: Any) -> None:
        """Check out a bundle (variable, optimizer, step) an earlier run of equal key left,
        reset to ``x0`` and the optimizer's built state; else build one. Then the compiled
        step: the bundle's, when it was compiled already, is not compiled again."""
        key = self._bundle_key()
        bundle = None if key is None else _checkout(key)
        fresh = bundle is None
        if bundle is None:
            bundle = self._new_bundle(keras, key)
        self._give_back = weakref.finalize(self, bundle.lock.release)
        if not fresh:
            bundle.reset(self.backend.asarray(self.x0))
        self.var, self.opt, self._body = bundle.var, bundle.opt, bundle.body
        self._reuse = bundle.key
        self._fn = self.backend.compile(bundle.body, (self.data,), rows=(0,),
                                        reuse=bundle.key)

    def _new_bundle(self, keras: Any, key: ReuseKey | None) -> _Bundle:
        """A new variable and optimizer (in the run's floatx) and the step's body, checked
        out; kept under ``key`` for later runs (none: kept by nobody)."""
        b = self.backend
        assert isinstance(b, TensorFlowBackend)
        with tf.device(b.tf_device):
            var: Any = (_Named(self.problem.layout, b.asarray(self.x0), keras) if self.decl.named
                        else tf.Variable(b.asarray(self.x0), name="x", trainable=True))
        variables = var.variables if self.decl.named else [var]
        with _floatx(keras, b.dtype):
            opt = getattr(keras.optimizers, self.decl.name)(**self._keras_options(keras))
            with tf.device(b.tf_device):
                opt.build(variables)
        objective, o = self.problem.objective, b.ops
        with_norm = not self.stochastic  # minibatch steps report no gradient norm
        analytic = analytic_value_and_grad(b, self.problem, self.gradient)
        named = self.decl.named

        def body(batch: dict[str, Any]) -> Any:
            if analytic is not None:  # the problem's gradient written against ops: no tape
                f, g = analytic(var.read_value() if named else var, batch)
            else:
                with tf.GradientTape() as tape:
                    x = var.read_value() if named else var
                    f = objective(o, x, batch)
                g = tape.gradient(f, x)
            gnorm = o.norm(g) if with_norm else None
            if named:  # traced in the run's floatx: Keras' Muon casts shapes through it
                with _floatx(keras, b.dtype):
                    opt.apply_gradients(list(zip(var.split(g), variables)))
            else:
                opt.apply_gradients([(g, var)])
            return f, gnorm

        return _Bundle(var, opt, body, key)

    def close(self) -> None:
        """Give the variable, the optimizer and the compiled step back for the next run of an
        equal key (an adapter collected without closing gives them back then)."""
        give_back = getattr(self, "_give_back", None)
        if give_back is not None:
            give_back()

    # the fused execution mode and the warm-up of every batch shape
    def fuse_blocker(self) -> str:
        """Full-batch Keras steps are not fused (no replay of a block); minibatches are."""
        if self.native:
            return "" if self.stochastic else "native Keras full-batch steps are not fused"
        return super().fuse_blocker()

    def prepare_execution(self, execution: str) -> None:
        """Compile the fused minibatch loops: ``apply_gradients`` inside one XLA loop."""
        if not self.native:
            super().prepare_execution(execution)
            return
        self.execution = execution
        if execution != "fused":
            return
        b, body, order = self.backend, self._body, self.order

        def step(x: Any, state: Any, batch: dict[str, Any]) -> Any:
            f, _ = body(batch)
            return f, None, x, state

        ex = (np.zeros(()), (), self.problem.train_data)
        var = self.var
        kept_rows = self._init_span(int(np.size(self.x0)))
        self._block = b.compile_block(step, ex, batch_size=order.batch_size,
                                      n_rows=order.n_samples,
                                      steps_per_epoch=order.steps_per_epoch,
                                      snapshots=kept_rows, snapshot=lambda _: var.read_value(),
                                      reuse=self._reuse)
        self._slice_only_in_blocks()
        self._all_rows = None if order.shuffle else b.index_array(order.epoch_indices(0))
        self._dummy = b.asarray(np.zeros(()))

    def _mini_block(self, block: Any, n: int, first: int | None = None,
                    every: int = 1) -> Any:
        if not self.native:
            return super()._mini_block(block, n, first, every)
        idx, start = self._block_rows()
        _, _, kept, _ = block(n, self._dummy, (), self.data, idx, start,
                              n + 1 if first is None else first, every)
        self._k += n
        return kept

    def save(self) -> Any:
        """Copies of the variable and the optimizer's variables (updated in place), and the
        step."""
        if not self.native:
            return super().save()
        return self.var.numpy(), [v.numpy() for v in self.opt.variables], self._k

    def load(self, saved: Any) -> None:
        if not self.native:
            super().load(saved)
            return
        x, opt_vars, self._k = saved
        self.var.assign(x)
        for v, value in zip(self.opt.variables, opt_vars):
            v.assign(value)

    def run_block(self, n: int, first: int | None = None, every: int = 1) -> Any:
        """``n`` minibatch steps in one XLA call (``"fused"``)."""
        if not self.native:
            return super().run_block(n, first, every)
        kept = self._mini_block(self._block, n, first, every)
        return Block(n, kept=None if first is None else kept)

    def _keras_options(self, keras: Any) -> dict[str, Any]:
        """The declaration's arguments; a schedule becomes a Keras ``LearningRateSchedule``
        evaluating optcmp's formula in the run's dtype (``lr_k = lr * s(k)``, ``k`` the
        optimizer's ``iterations``)."""
        opts = self._options()
        if self.backend.dtype == "float32":  # numpy.float64 scalars (exact in float64 runs)
            opts = {k: float(v) if isinstance(v, np.float64) else v  # meet float32 tensors
                    for k, v in opts.items()}
        sched = self.hyper.get("schedule", "constant")
        if sched != "constant":
            opts["learning_rate"] = _schedule_class(keras)(
                float(opts["learning_rate"]), sched, self.backend.dtype)
        return opts

    def step(self) -> Block:
        if not self.native:
            return super().step()
        if self.execution == "fused":  # one step of the fused block
            self._mini_block(self._block, 1)
            return self._output(None, None)
        fun, gnorm = self._fn(self._next_batch())
        self._k += 1
        return self._output(fun, gnorm)

    def warmup(self) -> float:
        """Trace and compile the step for every batch shape (a full and the shorter last
        minibatch), untimed, and restore the variable and the optimizer state."""
        if not self.native:
            return super().warmup()
        saved = [v.numpy() for v in self.opt.variables]
        x = self.var.numpy()
        t0 = time.perf_counter()
        for k in self._step_warmup_steps():  # every batch shape: XLA compiles once per shape
            self._k = k
            self.step()
        self.backend.sync()
        elapsed = time.perf_counter() - t0
        self._k = 0
        self.var.assign(x)
        for v, s in zip(self.opt.variables, saved):
            v.assign(s)
        self._forget_rows()
        return elapsed

    def x_numpy(self) -> np.ndarray:
        if not self.native:
            return super().x_numpy()
        return np.asarray(self.var.numpy(), dtype=np.float64).reshape(-1)
