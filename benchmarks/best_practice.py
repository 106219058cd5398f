"""optcmp's per-step cost against the best hand-written loop of each framework.

Run from the repository root::

    python benchmarks/best_practice.py                 # 1,000,000-row linear regression
    python benchmarks/best_practice.py --rounds 3 --backends numpy,torch
    python benchmarks/best_practice.py --quick --json /tmp/best-practice.json  # < 60 s
    python benchmarks/best_practice.py --memory 10000000   # torch peak memory, 1e7 rows

For each backend (numpy, torch, tensorflow, jax) and each workload

* ``gd-1M``: full-batch GD (``learning_rate=1/L``) on the 1,000,000-row linear regression,
* ``sgd64-1M``: SGD with batch 64 on the same data,
* ``sgd64-fizzbuzz``: SGD with batch 64 on the FizzBuzz MLP (900 rows, 14 batches of 64 and
  one of 4 per epoch),

it measures optcmp's timed seconds per step (``run`` with the default ``execution="auto"``
and ``execution="step"``, stopped by ``MaxIter``) and the best loop written by hand for that
framework, interleaved (hand, optcmp, optcmp, hand, ...), ``--rounds`` rounds, median. optcmp's
time is its own stopwatch's (the timed region only: setup, warm-up and monitoring are outside);
the benchmark swaps in a stopwatch that also reads the process CPU clock over the same
intervals, so both CPU and wall seconds per step come from the same runs. Every side runs with
one thread (numpy's BLAS through threadpoolctl, ``torch.set_num_threads``, TensorFlow's pools
set before its runtime starts). The load average is printed before and after.

The hand loops (the best the author could write; each one warmed up first):

* numpy: column-major data for full-batch GD (both BLAS products stream columns); row gathers
  (``A[idx]``) on row-major data for SGD; FizzBuzz through the problem's analytic gradient.
* torch: the analytic gradients (linear regression; the MLP's backpropagation written against
  ops, ``FizzBuzzMLP.gradient_ops``: no autograd, faster than any autograd step),
  ``index_select`` gathers, no optimizer object.
* tensorflow: all steps in one ``tf.function(jit_compile=True)`` ``tf.while_loop`` (the
  steps of a measurement in one XLA call, gathers inside it), analytic linear-regression
  gradient, ``tf.GradientTape`` for the MLP.
* jax (``jax_hand``): all steps in one ``jax.jit`` of a ``lax.fori_loop`` (float64 with
  ``jax_enable_x64``), the data passed as arguments, ``lax.dynamic_slice`` + ``jnp.take``
  minibatch gathers inside the loop, the shorter last FizzBuzz batch in a ``lax.cond``, the
  MLP's declared backpropagation; ``block_until_ready`` before the clock is read.

Two more hand loops separate what optcmp's harness costs from what its default
choices cost:

* the hand loop around the framework's own optimizer, the one optcmp's default SGD runs
  (``torch.optim.SGD``: the declared analytic gradient assigned to ``.grad``, no tape;
  Keras ``SGD.apply_gradients`` on a ``tf.Variable`` inside the one XLA loop), interleaved with the two above (A B C, C B A, ...);
* TensorFlow and JAX FizzBuzz: the best hand loop called once per epoch (15 steps), the cost
  of a driver that ends a call at every observation (optcmp's blocks on these backends span
  epochs instead and keep each epoch's iterate), interleaved with the one-call loop.

It also measures numpy's two-pass bandwidth floor for a full-batch GD step: the time of two
streaming reads of the data (``numpy.vdot`` of the whole buffer with itself, twice),
interleaved with optcmp's GD runs, median of rounds.

Prints one table: per-step CPU and wall times, and the ratios optcmp/hand (CPU and wall), for
``auto`` and ``step``; the optcmp-JAX / hand ratios; then TensorFlow's and torch's SGD figures against numpy's, and numpy
GD against the floor, the two extra comparisons, and for the minibatch workloads the whole
``run`` call per step (setup, monitoring and bookkeeping included, warm-up excluded)
against the hand loop's step, split into the timed steps, the float64 evaluations of the whole
training data on the host (``f(x0)``, one per observation, the returned point: off the clock,
and none of them in a hand loop) and the rest. Targets: default execution <= 1.25x the hand
loop everywhere, the whole call <= 1.5x for runs of 1,000 steps or more;
TensorFlow SGD-64 <= 1.5x numpy on FizzBuzz and <= 2x on 1M rows; numpy GD <= 1.3x the
two-pass floor. This is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

import optcmp
from optcmp.engine import session as run_session
from optcmp.problems import FizzBuzzMLP, LinearRegression
from optcmp.timing import Stopwatch

WORKLOADS = ("gd-1M", "sgd64-1M", "sgd64-fizzbuzz")
BS = 64
LR_SGD_LIN = 1e-4
LR_SGD_FIZZ = 0.05


class DualStopwatch(Stopwatch):
    """optcmp's stopwatch with the process's CPU clock (as the hand loops read theirs), whatever
    clock the run would choose; the last one made is kept."""

    __slots__ = ()
    last: DualStopwatch | None = None

    def __init__(self, sync: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter, cpu_clock: Any = None) -> None:
        super().__init__(sync, clock)
        DualStopwatch.last = self


def load() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "load average unknown"


def clocked(fn: Callable[[], Any], n: int) -> tuple[float, float]:
    """(CPU, wall) seconds per step of ``fn()`` running ``n`` steps."""
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - c0) / n, (time.perf_counter() - w0) / n


# ---------------------------------------------------------------------------- numpy by hand
def numpy_hand(work: str, problem: Any, n: int) -> Callable[[], None]:
    if work == "gd-1M":
        A = np.asfortranarray(problem.train_data["A"])
        y = problem.train_data["y"]
        lr, m = 1.0 / problem.lipschitz(), y.size

        def gd() -> None:
            x = np.zeros(A.shape[1])
            for _ in range(n):
                r = A @ x
                r -= y
                _f = float(np.vdot(r, r)) / m
                g = A.T @ r
                g *= 2.0 / m
                _gn = float(np.sqrt(np.vdot(g, g)))
                x = x - lr * g
        return gd
    perm = np.random.default_rng(0).permutation(problem.n_samples)
    if work == "sgd64-1M":
        A, y = problem.train_data["A"], problem.train_data["y"]

        def sgd() -> None:
            x = np.zeros(A.shape[1])
            for k in range(n):
                idx = perm[k * BS:(k + 1) * BS]
                Ab = A[idx]
                r = Ab @ x
                r -= y[idx]
                g = Ab.T @ r
                g *= 2.0 / BS
                x = x - LR_SGD_LIN * g
        return sgd
    X, Y = problem.train_data["X"], problem.train_data["Y"]
    vg, spe = problem.value_and_grad, -(-problem.n_samples // BS)

    def sgd_fizz() -> None:
        x = problem.init_params(0)
        for k in range(n):
            i = k % spe
            idx = perm[i * BS:(i + 1) * BS]
            _f, g = vg(x, {"X": X[idx], "Y": Y[idx]})
            x = x - LR_SGD_FIZZ * g
    return sgd_fizz


# ---------------------------------------------------------------------------- torch by hand
def torch_hand(work: str, problem: Any, n: int) -> Callable[[], None]:
    import torch

    data = {k: torch.tensor(v) for k, v in problem.train_data.items()}
    if work == "gd-1M":
        A, y = data["A"], data["y"]
        lr, m = 1.0 / problem.lipschitz(), y.numel()

        def gd() -> None:
            x = torch.zeros(A.shape[1], dtype=A.dtype)
            for _ in range(n):
                r = torch.mv(A, x) - y
                _f = torch.dot(r, r) / m
                g = torch.mv(A.T, r) * (2.0 / m)
                _gn = torch.linalg.vector_norm(g)
                x = x - lr * g
        return gd
    perm = torch.tensor(np.random.default_rng(0).permutation(problem.n_samples))
    if work == "sgd64-1M":
        A, y = data["A"], data["y"]

        def sgd() -> None:
            x = torch.zeros(A.shape[1], dtype=A.dtype)
            for k in range(n):
                idx = perm[k * BS:(k + 1) * BS]
                Ab = torch.index_select(A, 0, idx)
                r = torch.mv(Ab, x) - torch.index_select(y, 0, idx)
                x = x - (LR_SGD_LIN * 2.0 / BS) * torch.mv(Ab.T, r)
        return sgd
    ops = optcmp.get_backend("torch").ops
    objective, spe = problem.objective, -(-problem.n_samples // BS)
    grad_ops = problem.gradient_ops if getattr(problem, "has_gradient_ops", False) else None
    X, Y = data["X"], data["Y"]

    def sgd_fizz() -> None:
        x = torch.tensor(problem.init_params(0))
        for k in range(n):
            i = k % spe
            idx = perm[i * BS:(i + 1) * BS]
            batch = {"X": torch.index_select(X, 0, idx), "Y": torch.index_select(Y, 0, idx)}
            if grad_ops is not None:  # backpropagation by hand, no tape
                _, g = grad_ops(ops, x, batch, value=False)
            else:
                xg = x.requires_grad_(True)
                (g,) = torch.autograd.grad(objective(ops, xg, batch), xg)
                x = x.detach()
            x = x - LR_SGD_FIZZ * g
    return sgd_fizz


# ---------------------------------------------------------------------------- TF by hand
def tf_hand(work: str, problem: Any, n: int) -> Callable[[], None]:
    import tensorflow as tf

    data = {k: tf.constant(v) for k, v in problem.train_data.items()}
    n_t = tf.constant(n)
    if work == "gd-1M":
        A, y = data["A"], data["y"]
        lr, m = 1.0 / problem.lipschitz(), float(problem.n_samples)

        @tf.function(jit_compile=True)
        def gd(n_t: Any) -> Any:
            def body(i: Any, x: Any, f: Any) -> Any:
                r = tf.linalg.matvec(A, x) - y
                f = tf.reduce_sum(r * r) / m
                g = tf.linalg.matvec(A, r, transpose_a=True) * (2.0 / m)
                return i + 1, x - lr * g, f + 0.0 * tf.norm(g)
            return tf.while_loop(lambda i, *_: i < n_t, body,
                                 (0, tf.zeros([A.shape[1]], tf.float64),
                                  tf.constant(0.0, tf.float64)))
        gd(tf.constant(1))
        return lambda: gd(n_t)[1].numpy().sum() and None
    perm = tf.constant(np.random.default_rng(0).permutation(problem.n_samples))
    if work == "sgd64-1M":
        A, y = data["A"], data["y"]

        @tf.function(jit_compile=True)
        def sgd(n_t: Any) -> Any:
            def body(i: Any, x: Any) -> Any:
                idx = tf.gather(perm, i * BS + tf.range(BS))
                Ab = tf.gather(A, idx)
                r = tf.linalg.matvec(Ab, x) - tf.gather(y, idx)
                g = tf.linalg.matvec(Ab, r, transpose_a=True) * (2.0 / BS)
                return i + 1, x - LR_SGD_LIN * g
            return tf.while_loop(lambda i, *_: i < n_t, body,
                                 (0, tf.zeros([A.shape[1]], tf.float64)))
        sgd(tf.constant(1))
        return lambda: sgd(n_t)[1].numpy().sum() and None
    ops = optcmp.get_backend("tensorflow").ops
    objective, X, Y = problem.objective, data["X"], data["Y"]
    full = problem.n_samples // BS  # 14 full batches, then the 4-row one, per epoch
    short = problem.n_samples - full * BS

    def step(x: Any, rows: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(x)
            f = objective(ops, x, {"X": tf.gather(X, rows), "Y": tf.gather(Y, rows)})
        return x - LR_SGD_FIZZ * tape.gradient(f, x)

    @tf.function(jit_compile=True)
    def epochs(n_t: Any, x: Any) -> Any:
        def body(i: Any, x: Any) -> Any:
            j = i % (full + 1)
            return i + 1, tf.cond(
                j < full, lambda: step(x, tf.gather(perm, j * BS + tf.range(BS))),
                lambda: step(x, tf.gather(perm, full * BS + tf.range(short))))
        return tf.while_loop(lambda i, *_: i < n_t, body, (0, x))[1]
    x0 = tf.constant(problem.init_params(0))
    epochs(tf.constant(1), x0)
    spe_t = tf.constant(full + 1)

    def per_epoch() -> None:  # one call per epoch: a call ended at every observation
        x = x0
        for _ in range(n // (full + 1)):
            x = epochs(spe_t, x)
        x.numpy()

    def one_call() -> None:
        epochs(n_t, x0).numpy()
    one_call.per_epoch = per_epoch  # type: ignore[attr-defined]
    return one_call


# ---------------------------------------------------------------------------- JAX by hand
def _wait(out: Any) -> None:
    """Block until ``out`` (a JAX array) is computed."""
    out.block_until_ready()


def jax_hand(work: str, problem: Any, n: int) -> Callable[[], None]:
    """All ``n`` steps in one ``jax.jit`` of a ``lax.fori_loop`` (float64: x64 on), the data
    passed as arguments (not baked into the program), gathers inside the loop."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    lax = jax.lax
    data = {k: jax.device_put(v) for k, v in problem.train_data.items()}
    n_j = jnp.int32(n)
    if work == "gd-1M":
        lr, m = 1.0 / problem.lipschitz(), float(problem.n_samples)

        @jax.jit
        def gd(n_j: Any, A: Any, y: Any) -> Any:
            def body(i: Any, carry: Any) -> Any:
                x, f = carry
                r = A @ x - y
                g = (r @ A) * (2.0 / m)  # r^T A: XLA would copy A for A^T r
                return x - lr * g, f + jnp.vdot(r, r) / m + 0.0 * jnp.linalg.norm(g)
            return lax.fori_loop(0, n_j, body, (jnp.zeros(A.shape[1]), jnp.float64(0.0)))
        gd(jnp.int32(1), data["A"], data["y"])[0].block_until_ready()
        return lambda: _wait(gd(n_j, data["A"], data["y"])[0])
    perm = jax.device_put(np.random.default_rng(0).permutation(problem.n_samples))
    if work == "sgd64-1M":

        @jax.jit
        def sgd(n_j: Any, A: Any, y: Any, perm: Any) -> Any:
            def body(i: Any, x: Any) -> Any:
                idx = lax.dynamic_slice(perm, (i * BS,), (BS,))
                Ab = jnp.take(A, idx, axis=0)
                r = Ab @ x - jnp.take(y, idx)
                return x - (LR_SGD_LIN * 2.0 / BS) * (Ab.T @ r)
            return lax.fori_loop(0, n_j, body, jnp.zeros(A.shape[1]))
        sgd(jnp.int32(1), data["A"], data["y"], perm).block_until_ready()
        return lambda: _wait(sgd(n_j, data["A"], data["y"], perm))
    ops = optcmp.get_backend("jax").ops
    objective, full = problem.objective, problem.n_samples // BS
    short = problem.n_samples - full * BS  # 14 full batches, then the 4-row one, per epoch
    grad_ops = problem.gradient_ops if getattr(problem, "has_gradient_ops", False) else None

    def grad(x: Any, batch: dict[str, Any]) -> Any:
        if grad_ops is not None:  # the declared backpropagation, as optcmp's default uses
            return grad_ops(ops, x, batch, value=False)[1]
        return jax.grad(lambda x: objective(ops, x, batch))(x)

    @jax.jit
    def epochs(n_j: Any, x: Any, X: Any, Y: Any, perm: Any) -> Any:
        def on_rows(a: Any, size: int, x: Any) -> Any:
            rows = lax.dynamic_slice(perm, (a,), (size,))
            batch = {"X": jnp.take(X, rows, axis=0), "Y": jnp.take(Y, rows, axis=0)}
            return x - LR_SGD_FIZZ * grad(x, batch)

        def body(i: Any, x: Any) -> Any:
            j = i % (full + 1)
            return lax.cond(j < full, lambda: on_rows(j * BS, BS, x),
                            lambda: on_rows(full * BS, short, x))
        return lax.fori_loop(0, n_j, body, x)
    x0 = jax.device_put(problem.init_params(0))
    args = (data["X"], data["Y"], perm)
    epochs(jnp.int32(1), x0, *args).block_until_ready()
    spe_j = jnp.int32(full + 1)

    def per_epoch() -> None:  # one call per epoch: a call ended at every observation
        x = x0
        for _ in range(n // (full + 1)):
            x = epochs(spe_j, x, *args)
        _wait(x)

    def one_call() -> None:
        _wait(epochs(n_j, x0, *args))
    one_call.per_epoch = per_epoch  # type: ignore[attr-defined]
    return one_call


HAND = {"numpy": numpy_hand, "torch": torch_hand, "tensorflow": tf_hand, "jax": jax_hand}


# ------------------------------------------------- by hand, with the framework's own optimizer
def torch_same(work: str, problem: Any, n: int) -> Callable[[], None] | None:
    """The loop an expert writes around ``torch.optim.SGD`` (optcmp's default SGD on torch):
    the problem's analytic gradient assigned to ``.grad`` (no tape; ``zero_grad`` +
    ``backward`` for a problem that declares none), ``index_select`` gathers."""
    import torch

    if work == "gd-1M":
        return None  # optcmp's default GD on torch is its reference rule: the hand loop above
    data = {k: torch.tensor(v) for k, v in problem.train_data.items()}
    perm = torch.tensor(np.random.default_rng(0).permutation(problem.n_samples))
    spe = -(-problem.n_samples // BS)
    if work == "sgd64-1M":
        A, y = data["A"], data["y"]

        def sgd() -> None:
            p = torch.zeros(A.shape[1], dtype=A.dtype, requires_grad=True)
            opt = torch.optim.SGD([p], lr=LR_SGD_LIN)
            for k in range(n):
                idx = perm[k * BS:(k + 1) * BS]
                Ab = torch.index_select(A, 0, idx)
                with torch.no_grad():
                    r = torch.mv(Ab, p) - torch.index_select(y, 0, idx)
                    p.grad = torch.mv(Ab.T, r) * (2.0 / BS)
                opt.step()
        return sgd
    ops = optcmp.get_backend("torch").ops
    objective, X, Y = problem.objective, data["X"], data["Y"]
    grad_ops = problem.gradient_ops if getattr(problem, "has_gradient_ops", False) else None

    def sgd_fizz() -> None:
        p = torch.tensor(problem.init_params(0)).requires_grad_(True)
        opt = torch.optim.SGD([p], lr=LR_SGD_FIZZ)
        for k in range(n):
            i = k % spe
            idx = perm[i * BS:(i + 1) * BS]
            batch = {"X": torch.index_select(X, 0, idx), "Y": torch.index_select(Y, 0, idx)}
            if grad_ops is not None:  # the declared gradient, as optcmp's adapter uses it
                with torch.no_grad():
                    _, p.grad = grad_ops(ops, p, batch, value=False)
            else:
                opt.zero_grad(set_to_none=True)
                objective(ops, p, batch).backward()
            opt.step()
    return sgd_fizz


def tf_same(work: str, problem: Any, n: int) -> Callable[[], None] | None:
    """``keras.optimizers.SGD.apply_gradients`` on a ``tf.Variable`` inside the one XLA loop
    (optcmp's default SGD on TensorFlow), gradients as in :func:`tf_hand`."""
    if work == "gd-1M":
        return None  # optcmp's default GD on TensorFlow is its reference rule
    import keras
    import tensorflow as tf

    data = {k: tf.constant(v) for k, v in problem.train_data.items()}
    perm = tf.constant(np.random.default_rng(0).permutation(problem.n_samples))
    n_t, full = tf.constant(n), problem.n_samples // BS
    short = problem.n_samples - full * BS
    ops = optcmp.get_backend("tensorflow").ops
    lin = work == "sgd64-1M"
    var = tf.Variable(np.zeros(problem.n_params) if lin else problem.init_params(0))
    old = keras.config.floatx()
    keras.config.set_floatx("float64")
    opt = keras.optimizers.SGD(learning_rate=LR_SGD_LIN if lin else LR_SGD_FIZZ)
    opt.build([var])
    keras.config.set_floatx(old)

    def step(rows: Any) -> None:
        batch = {k: tf.gather(v, rows) for k, v in data.items()}
        if lin:
            Ab = batch["A"]
            r = tf.linalg.matvec(Ab, var) - batch["y"]
            g = tf.linalg.matvec(Ab, r, transpose_a=True) * (2.0 / BS)
        else:
            with tf.GradientTape() as tape:
                f = problem.objective(ops, var, batch)
            g = tape.gradient(f, var)
        opt.apply_gradients([(g, var)])

    @tf.function(jit_compile=True)
    def loop(n_t: Any) -> Any:
        def body(i: Any) -> Any:
            j = i % (full + (1 if short else 0))
            if short:
                tf.cond(j < full, lambda: step(tf.gather(perm, j * BS + tf.range(BS))),
                        lambda: step(tf.gather(perm, full * BS + tf.range(short))))
            else:
                step(tf.gather(perm, j * BS + tf.range(BS)))
            return (i + 1,)
        tf.while_loop(lambda i: i < n_t, body, (0,))
        return var.read_value()
    loop(tf.constant(1))
    return lambda: loop(n_t).numpy().sum() and None


SAME = {"torch": torch_same, "tensorflow": tf_same}


def optcmp_side(work: str, problem: Any, backend: str, n: int,
                execution: str) -> Callable[[], tuple[float, float]]:
    spec = (optcmp.gd("auto") if work == "gd-1M" else
            optcmp.sgd(LR_SGD_LIN if work == "sgd64-1M" else LR_SGD_FIZZ, batch_size=BS))

    whole: list[tuple[float, float]] = []
    evals: list[tuple[float, float]] = []

    def measure() -> tuple[float, float]:
        with warnings.catch_warnings(), FullEvaluations(problem) as spent:
            warnings.simplefilter("ignore")  # a MaxIter-only rule has no target: said once
            c0, w0 = time.process_time(), time.perf_counter()
            r = optcmp.run(problem, spec, backend=backend, stopping=optcmp.MaxIter(n),
                               threads=1, execution=execution)
            c1, w1 = time.process_time(), time.perf_counter()
        sw = DualStopwatch.last
        assert sw is not None and r.nit == n, (r.status, r.message)
        # the whole call per step: setup, monitoring and bookkeeping included, the warm-up
        # (compilation) excluded; its CPU share taken as its wall share
        warm = r.warmup_time
        whole.append((max(c1 - c0 - warm, 0.0) / n, (w1 - w0 - warm) / n))
        evals.append((spent.cpu / n, spent.wall / n))
        return sw.cpu_elapsed / n, r.time / n
    measure.whole = whole  # type: ignore[attr-defined]
    measure.evals = evals  # type: ignore[attr-defined]
    return measure


class FullEvaluations:
    """Seconds (CPU, wall) a run spends in float64 evaluations of the whole training data on
    the host, off the clock: ``f(x0)``, the monitor's observations and the returned point
    (calls of the problem's ``value_and_grad`` on ``train_data``, ``fun64`` and ``metrics``;
    an evaluation inside another counts once). The minibatch steps never pass the whole data."""

    def __init__(self, problem: Any) -> None:
        self.problem, self.cpu, self.wall, self.count, self._depth = problem, 0.0, 0.0, 0, 0

    def __enter__(self) -> FullEvaluations:
        p = self.problem
        for name in ("value_and_grad", "fun64", "metrics"):
            setattr(p, name, self._timed(name, getattr(p, name)))
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in ("value_and_grad", "fun64", "metrics"):
            delattr(self.problem, name)  # the class's method again

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            whole = name != "value_and_grad" or args[1] is self.problem.train_data
            if not whole or self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            c0, w0 = time.process_time(), time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu += time.process_time() - c0
                self.wall += time.perf_counter() - w0
                self.count += 1
                self._depth -= 1
        return timed


def floor_two_pass(problem: Any) -> Callable[[], tuple[float, float]]:
    """(CPU, wall) seconds of two streaming reads of the data (``numpy.vdot``)."""
    A = np.asfortranarray(problem.train_data["A"]).reshape(-1, order="F")
    return lambda: clocked(lambda: (np.vdot(A, A), np.vdot(A, A)), 1)


def interleave(rounds: int, *fns: Callable[[], Any]) -> tuple[list, ...]:
    """Each of ``fns`` once untimed (a first call pays for caches, page faults and, for a
    hand loop, its compilation), then ``rounds`` times, in the order A B C, C B A, A B C, ..."""
    for fn in fns:
        fn()
        for kept in (getattr(fn, "whole", None), getattr(fn, "evals", None)):
            if kept is not None:
                kept.clear()
    out: list[list[Any]] = [[] for _ in fns]
    for i in range(rounds):
        order = range(len(fns)) if i % 2 == 0 else range(len(fns) - 1, -1, -1)
        for j in order:
            out[j].append(fns[j]())
    return tuple(out)


def med(xs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)


def us(t: float) -> str:
    return f"{t * 1e6:10.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backends", default="numpy,torch,tensorflow,jax")
    ap.add_argument("--steps", default="30,3000,3000",
                    help="steps per measurement of gd-1M, sgd64-1M, sgd64-fizzbuzz")
    ap.add_argument("--quick", action="store_true",
                    help="100,000 rows, 2 rounds, 10/200/200 steps: a first look (the whole-call "
                         "target is for runs of 1,000 steps or more)")
    ap.add_argument("--json", default=None, metavar="PATH",
                    help="also write the medians and the machine stamp as JSON")
    ap.add_argument("--memory", type=int, default=0, metavar="ROWS",
                    help="only print torch's peak memory of GD on ROWS rows: optcmp / hand loop")
    args = ap.parse_args(argv)
    if args.memory:
        return peak_memory(args.memory)
    if args.quick:
        args.rows, args.rounds, args.steps = 100_000, 2, "10,200,200"
    backends = [b for b in args.backends.split(",") if optcmp.frameworks.is_available(b)]
    if "torch" in backends:
        import torch

        torch.set_num_threads(1)
    if "tensorflow" in backends:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    run_session.Stopwatch = DualStopwatch  # type: ignore[misc]
    with threadpool_limits(limits=1):
        return _main(args, backends)


def _main(args: argparse.Namespace, backends: list[str]) -> int:
    lin = LinearRegression(n_samples=args.rows)
    problems = {"gd-1M": lin, "sgd64-1M": lin, "sgd64-fizzbuzz": FizzBuzzMLP()}
    steps = dict(zip(WORKLOADS, (int(s) for s in args.steps.split(","))))
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, optcmp {optcmp.__version__}; "
          f"{os.cpu_count()} CPUs; threads=1; {args.rows:,} rows, {args.steps} steps "
          f"(gd, sgd64, fizzbuzz); {args.rounds} rounds, median")
    print(load() + " (before)")
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=1)))  # what the figures belong to
    table: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    floor = (float("nan"), float("nan"))
    for b in backends:
        for w in WORKLOADS:
            p, n = problems[w], steps[w]
            hand = HAND[b](w, p, n)
            same_fn = SAME[b](w, p, n) if b in SAME else None
            auto_side = optcmp_side(w, p, b, n, "auto")
            sides = [lambda hand=hand, n=n: clocked(hand, n), auto_side]
            if same_fn is not None:
                sides.append(lambda same_fn=same_fn, n=n: clocked(same_fn, n))
            hs, auto, *same = interleave(args.rounds, *sides)
            if (b, w) == ("numpy", "gd-1M"):  # the floor, interleaved with optcmp's GD too
                fl, auto2 = interleave(args.rounds, floor_two_pass(lin),
                                       optcmp_side(w, p, b, n, "auto"))
                floor, auto = med(fl), auto + auto2
            _, step = interleave(max(args.rounds // 2, 1), lambda: (0.0, 0.0),
                                 optcmp_side(w, p, b, n, "step"))
            table[(b, w)] = {"hand": med(hs), "auto": med(auto), "step": med(step),
                             "whole": med(auto_side.whole),  # type: ignore[attr-defined]
                             "evals": med(auto_side.evals)}  # type: ignore[attr-defined]
            if same:
                table[(b, w)]["same"] = med(same[0])
            per_epoch = getattr(hand, "per_epoch", None)
            if per_epoch is not None:  # the hand loop cut at every epoch, interleaved with it
                pe, _ = interleave(args.rounds, lambda pe=per_epoch, n=n: clocked(pe, n),
                                   lambda hand=hand, n=n: clocked(hand, n))
                table[(b, w)]["per_epoch"] = med(pe)
            h, a, s = table[(b, w)]["hand"], table[(b, w)]["auto"], table[(b, w)]["step"]
            print(f"  measured {b:10s} {w:15s} hand {us(h[0])} us CPU  auto {us(a[0])}  "
                  f"step {us(s[0])}", flush=True)
    print(load() + " (after)")
    _print_table(table, floor)
    _print_same(table)
    if args.json:
        _write_json(args, table, floor)
    return 0


def _write_json(args: argparse.Namespace,
                table: dict[tuple[str, str], dict[str, tuple[float, float]]],
                floor: tuple[float, float]) -> None:
    """Medians (seconds per step, CPU and wall) and the machine stamp, as JSON."""
    import json

    from optcmp.environment import machine_stamp, stamp_text

    stamp = machine_stamp(threads=1)
    rows = [{"backend": b, "workload": w,
             **{f"{side}_cpu": v[0] for side, v in t.items()},
             **{f"{side}_wall": v[1] for side, v in t.items()}} for (b, w), t in table.items()]
    out = {"stamp": stamp, "stamp_text": stamp_text(stamp), "rows_1M": args.rows,
           "rounds": args.rounds, "steps": args.steps, "floor_two_pass_cpu": floor[0],
           "floor_two_pass_wall": floor[1], "results": rows}
    with open(args.json, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, allow_nan=True)
    print(f"wrote {args.json}")


_MEMORY_SIDE = """
import resource, sys, warnings
import numpy as np, torch
torch.set_num_threads(1)
import optcmp
from optcmp.problems import LinearRegression
p = LinearRegression(n_samples={rows})
if sys.argv[1] == "hand":
    A, y = (torch.from_numpy(p.train_data[k]) for k in ("A", "y"))
    x = torch.zeros(p.n_params, dtype=torch.float64)
    lr = 1.0 / p.lipschitz()
    for _ in range(3):
        r = torch.matmul(A, x) - y
        x -= lr * (2.0 / r.numel()) * torch.matmul(r, A)
else:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optcmp.run(p, optcmp.gd("auto"), backend="torch", threads=1,
                       stopping=optcmp.MaxIter(3))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_memory(rows: int) -> int:
    """Peak resident memory (``ru_maxrss``) of 3 torch GD steps on ``rows`` rows, each side in
    its own process (data generation included on both): optcmp's ``run`` and a hand loop
    on ``torch.from_numpy`` of the problem's arrays."""
    import subprocess

    code = _MEMORY_SIDE.format(rows=int(rows))
    kib = {side: int(subprocess.run([sys.executable, "-c", code, side], check=True,
                                    capture_output=True, text=True).stdout.split()[-1])
           for side in ("hand", "optcmp")}
    print(f"torch GD, {rows:,} rows: peak memory hand loop {kib['hand'] / 1024:.0f} MiB, "
          f"optcmp {kib['optcmp'] / 1024:.0f} MiB; optcmp / hand = "
          f"{kib['optcmp'] / kib['hand']:.2f}x")
    return 0


def _print_same(table: dict[tuple[str, str], dict[str, tuple[float, float]]]) -> None:
    """optcmp's default against the hand loop around the same framework optimizer."""
    rows = [(k, t) for k, t in table.items() if "same" in t]
    if not rows:
        return
    print()
    print("| backend | workload | hand loop, framework optimizer us/step CPU (wall) | "
          "auto/that loop CPU (wall) | that loop/best hand loop CPU |")
    print("|---|---|---|---|---|")
    for (b, w), t in rows:
        s, a, h = t["same"], t["auto"], t["hand"]
        print(f"| {b} | {w} | {s[0] * 1e6:.1f} ({s[1] * 1e6:.1f}) | {a[0] / s[0]:.2f}x "
              f"({a[1] / s[1]:.2f}x) | {s[0] / h[0]:.2f}x |")


def _print_table(table: dict[tuple[str, str], dict[str, tuple[float, float]]],
                 floor: tuple[float, float]) -> None:
    print()
    print("| backend | workload | hand us/step CPU (wall) | optcmp auto us/step CPU (wall) | "
          "auto/hand CPU (wall) | optcmp step us/step CPU | step/hand CPU |")
    print("|---|---|---|---|---|---|---|")
    for (b, w), t in table.items():
        h, a, s = t["hand"], t["auto"], t["step"]
        print(f"| {b} | {w} | {h[0] * 1e6:.1f} ({h[1] * 1e6:.1f}) | {a[0] * 1e6:.1f} "
              f"({a[1] * 1e6:.1f}) | {a[0] / h[0]:.2f}x ({a[1] / h[1]:.2f}x) | "
              f"{s[0] * 1e6:.1f} | {s[0] / h[0]:.2f}x |")
    print()
    for w in ("sgd64-fizzbuzz", "sgd64-1M"):
        if ("numpy", w) not in table:
            continue
        base = table[("numpy", w)]["auto"]
        for b in ("torch", "tensorflow"):
            if (b, w) in table:
                a = table[(b, w)]["auto"]
                print(f"{w}: optcmp {b} / optcmp numpy = {a[0] / base[0]:.2f}x CPU "
                      f"({a[1] / base[1]:.2f}x wall)")
    for (b, w), t in table.items():
        if "per_epoch" in t:
            pe, a = t["per_epoch"], t["auto"]
            print(f"{b} {w}: the best hand loop called once per epoch (a call ended at every "
                  f"observation) {pe[0] * 1e6:.1f} us/step CPU ({pe[1] * 1e6:.1f} wall); "
                  f"optcmp auto / that = {a[0] / pe[0]:.2f}x CPU ({a[1] / pe[1]:.2f}x wall)")
    for w in WORKLOADS:
        if ("jax", w) in table:
            h, a = table[("jax", w)]["hand"], table[("jax", w)]["auto"]
            print(f"{w}: optcmp-JAX / hand (jit + fori_loop) = {a[0] / h[0]:.2f}x CPU "
                  f"({a[1] / h[1]:.2f}x wall)")
    for (b, w), t in table.items():
        if "whole" in t and not w.startswith("gd"):
            wh, h, ev, a = t["whole"], t["hand"], t["evals"], t["auto"]
            print(f"{b} {w}: the whole run per step (warm-up excluded) {wh[1] * 1e6:.1f} "
                  f"us wall = steps {a[1] * 1e6:.1f} + float64 evaluations of the whole data "
                  f"{ev[1] * 1e6:.1f} + the rest (setup, bookkeeping) "
                  f"{(wh[1] - a[1] - ev[1]) * 1e6:.1f}; whole / hand = {wh[1] / h[1]:.2f}x wall, "
                  f"without the evaluations {(wh[1] - ev[1]) / h[1]:.2f}x")
    if ("numpy", "gd-1M") in table:
        a = table[("numpy", "gd-1M")]["auto"]
        print(f"gd-1M numpy: two-pass floor {floor[0] * 1e3:.2f} ms CPU ({floor[1] * 1e3:.2f} ms "
              f"wall); optcmp / floor = {a[0] / floor[0]:.2f}x CPU ({a[1] / floor[1]:.2f}x wall)")


if __name__ == "__main__":
    sys.exit(main())
