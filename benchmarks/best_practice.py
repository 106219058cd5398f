"""optcmp's per-step cost against the strongest loop of each framework, every variant beside it.

Run from the repository root::

    python benchmarks/best_practice.py                 # 1,000,000-row linear regression
    python benchmarks/best_practice.py --rounds 3 --backends numpy,torch
    python benchmarks/best_practice.py --quick --json /tmp/best-practice.json  # a first look
    python benchmarks/best_practice.py --memory 10000000   # peak memory of the run phase

Workloads: ``gd-1M`` (full-batch GD, ``learning_rate=1/L``, on the 1,000,000-row linear
regression), ``sgd64-1M`` (SGD, batch 64, 3,000 steps on those rows), ``sgd64-fizzbuzz`` and
``adam64-fizzbuzz`` (SGD 0.05 and ``optcmp.adam(1e-3, batch_size=64)`` on the FizzBuzz MLP:
900 rows, 14 batches of 64 and one of 4 per epoch, 200 epochs = 3,000 steps).

For each backend and workload every loop variant below and optcmp's ``run``
(``execution="auto"``, the default, and ``"step"``, stopped by ``MaxIter``) run interleaved
(A B C D, D C B A, ...), ``--rounds`` rounds after one untimed call each, one thread per side
(numpy's BLAS through threadpoolctl, ``torch.set_num_threads``, TensorFlow's pools before its
runtime starts); the figure is the median CPU (and wall) seconds per step. "best" is the
variant with the lowest median CPU per step. optcmp's figure is its own stopwatch's (the timed
region); the benchmark swaps in a stopwatch that also reads the process CPU clock.

The variants (each loop runs all the steps of a measurement and returns the final iterate;
every GD loop computes ``f`` and the gradient's norm at every step, as a run's trace needs
them, and the compiled TF and JAX loops return the last ones: XLA drops what a compiled
program never returns, and such a loop would skip a pass over the residual that optcmp makes):

* layout (GD): the data row-major or column-major (a transposed copy); numpy and torch write
  into ``out=`` buffers, no temporaries (torch also shown with temporaries);
* gather (SGD): the batch's rows gathered at every step, or gathered once (the run's rows on
  1M rows, each epoch's rows on FizzBuzz; timed) and then contiguous slices (``lax.scan`` over
  the pre-gathered batches on JAX, a ``tf.while_loop`` over slices of one ``tf.gather`` on TF);
* backward: the declared gradient (numpy: ``problem.grad``; torch: the MLP's backpropagation
  written in torch with ``out=`` into one flat gradient; TF/JAX: ``problem.gradient_ops``)
  with in-place updates (``sub_``, ``addcdiv_``), or autograd + the framework's optimizer
  (``torch.optim``, ``keras.optimizers`` on a ``tf.Variable``, ``optax``);
* TF and JAX: one compiled loop per measurement (``tf.function(jit_compile=True)`` of a
  ``tf.while_loop``, ``jax.jit`` of a loop; the data passed as arguments, float64), the result
  read back (JAX: ``block_until_ready``) before the clock is read.

It also reports the whole ``run`` call per step (setup, monitoring and bookkeeping included,
warm-up excluded) against the best loop's step for runs of one epoch or more (FizzBuzz 200
epochs, 1M rows one epoch = 15,625 steps), split into the timed steps, the float64 evaluations
of the whole training data on the host (the judge), the device screen (its building and its
evaluations; on a CPU torch's only, or those ``--screen-on-cpu`` names) and the rest, with the
observations each evaluated; and ``--memory ROWS``: the peak resident
memory of the run phase (after the problem is built) of three GD steps, optcmp against a loop
that holds the data once, every backend, a fresh process per side. The load average is printed
before and after. Targets: default execution <= 1.25x the best loop, the whole call <= 1.5x,
memory <= 1.1x. This is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import math
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
from optcmp.engine import screen
from optcmp.engine import session as run_session
from optcmp.problems import FizzBuzzMLP, LinearRegression
from optcmp.timing import Stopwatch

WORKLOADS = ("gd-1M", "sgd64-1M", "sgd64-fizzbuzz", "adam64-fizzbuzz")
BACKENDS = ("numpy", "torch", "tensorflow", "jax")
BS = 64
LR_SGD_LIN, LR_SGD_FIZZ, LR_ADAM, B1, B2, EPS = 1e-4, 0.05, 1e-3, 0.9, 0.999, 1e-8
Loops = dict[str, Callable[[], Any]]


class DualStopwatch(Stopwatch):
    """optcmp's stopwatch with the process's CPU clock (as the loops read theirs), whatever
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


def spec_of(work: str) -> Any:
    """optcmp's optimizer for ``work``."""
    if work == "gd-1M":
        return optcmp.gd("auto")
    if work == "adam64-fizzbuzz":
        return optcmp.adam(LR_ADAM, batch_size=BS)
    return optcmp.sgd(LR_SGD_LIN if work == "sgd64-1M" else LR_SGD_FIZZ, batch_size=BS)


def lin_rows(problem: Any, n: int) -> np.ndarray:
    """The rows of ``n`` SGD steps on the linear regression (one draw, as optcmp's epoch)."""
    return np.random.default_rng(0).permutation(problem.n_samples)[:n * BS]


def epoch_perms(problem: Any, n: int) -> np.ndarray:
    """One permutation per FizzBuzz epoch; ``n`` is a whole number of epochs."""
    spe = -(-problem.n_samples // BS)
    if n % spe:
        raise ValueError(f"FizzBuzz steps must be whole epochs of {spe} steps, got {n}")
    rng = np.random.default_rng(0)
    return np.stack([rng.permutation(problem.n_samples) for _ in range(n // spe)])


def mlp_split(problem: Any) -> tuple[int, int, int, list[int]]:
    """(inputs, hidden, outputs, offsets of W1, b1, W2, b2 in the flat parameter vector)."""
    d, h, o = problem.train_data["X"].shape[1], problem.hidden, problem.train_data["Y"].shape[1]
    if problem.loss != "mse":
        raise ValueError(f"the hand-written backpropagation is for loss='mse', not {problem.loss!r}")
    return d, h, o, list(np.cumsum([0, d * h, h, h * o, o]))


# ---------------------------------------------------------------------------- numpy
def numpy_rule(work: str) -> tuple[Callable[[Any], list], Callable[[Any, Any, list], None]]:
    """(state from x, in-place update of x by g) for SGD or Adam (``bias_corrected_eps``)."""
    if not work.startswith("adam"):
        lr = LR_SGD_FIZZ

        def sgd(x: Any, g: Any, s: list) -> None:
            g *= lr
            x -= g
        return lambda x: [], sgd

    def adam(x: Any, g: Any, s: list) -> None:
        m, v, d = s[:3]
        s[3] += 1
        m *= B1
        m += (1 - B1) * g
        v *= B2
        g *= g
        g *= 1 - B2
        v += g
        np.sqrt(v, out=d)
        d *= 1.0 / math.sqrt(1 - B2 ** s[3])
        d += EPS
        np.divide(m, d, out=d)
        d *= LR_ADAM / (1 - B1 ** s[3])
        x -= d
    return lambda x: [np.zeros_like(x), np.zeros_like(x), np.empty_like(x), 0], adam


def numpy_loops(work: str, problem: Any, n: int) -> Loops:
    """numpy: column- and row-major GD; per-step and once gathers; the declared gradient."""
    if work == "gd-1M":
        y, lr = problem.train_data["y"], 1.0 / problem.lipschitz()
        m = y.size

        def gd(A: np.ndarray) -> Callable[[], Any]:
            def loop() -> Any:
                x, r, g = np.zeros(A.shape[1]), np.empty(m), np.empty(A.shape[1])
                for _ in range(n):
                    np.matmul(A, x, out=r)
                    r -= y
                    _f = float(np.vdot(r, r)) / m
                    np.matmul(r, A, out=g)
                    g *= 2.0 / m
                    _gn = math.sqrt(float(np.vdot(g, g)))
                    g *= lr
                    x -= g
                return x
            return loop
        A = problem.train_data["A"]
        return {"column-major": gd(np.asfortranarray(A)), "row-major": gd(np.ascontiguousarray(A))}
    if work == "sgd64-1M":  # rows gathered from row-major data
        A, y, rows = (np.ascontiguousarray(problem.train_data["A"]), problem.train_data["y"],
                      lin_rows(problem, n))

        def sgd(once: bool) -> Callable[[], Any]:
            def loop() -> Any:
                Ag, yg = (A[rows], y[rows]) if once else (A, y)
                x = np.zeros(A.shape[1])
                for k in range(n):
                    s = slice(k * BS, (k + 1) * BS)
                    Ab, yb = (Ag[s], yg[s]) if once else (A[rows[s]], y[rows[s]])
                    r = Ab @ x
                    r -= yb
                    g = r @ Ab
                    g *= LR_SGD_LIN * 2.0 / BS
                    x -= g
                return x
            return loop
        return {"gather once": sgd(True), "gather per step": sgd(False)}
    X, Y, perms = problem.train_data["X"], problem.train_data["Y"], epoch_perms(problem, n)
    grad, (init, update) = problem.grad, numpy_rule(work)
    starts = range(0, problem.n_samples, BS)

    def fizz(once: bool) -> Callable[[], Any]:
        def loop() -> Any:
            x = problem.init_params(0)
            s = init(x)
            for p in perms:
                Xe, Ye = (X[p], Y[p]) if once else (X, Y)
                for a in starts:
                    if once:
                        b = {"X": Xe[a:a + BS], "Y": Ye[a:a + BS]}
                    else:
                        b = {"X": X[p[a:a + BS]], "Y": Y[p[a:a + BS]]}
                    update(x, grad(x, b), s)
            return x
        return loop
    return {"gather once": fizz(True), "gather per step": fizz(False)}


# ---------------------------------------------------------------------------- torch
def torch_mlp_grad(problem: Any) -> Callable[[Any, Any, Any, Any], None]:
    """The MLP's backpropagation in torch, written into the flat gradient ``g`` (``out=``);
    the views of ``x`` and ``g`` made once per pair (``mm`` then ``add_`` measured faster
    than ``addmm``'s broadcast bias here)."""
    import torch

    d, h, o, off = mlp_split(problem)
    kept: list[Any] = [None, None, ()]

    def views(x: Any, g: Any) -> tuple[Any, ...]:
        if kept[0] is not x or kept[1] is not g:
            kept[:] = [x, g, [(v[off[0]:off[1]].view(d, h), v[off[1]:off[2]],
                               v[off[2]:off[3]].view(h, o), v[off[3]:off[4]]) for v in (x, g)]]
        return kept[2]

    def grad(x: Any, g: Any, Xb: Any, Yb: Any) -> None:
        (W1, b1, W2, b2), (gW1, gb1, gW2, gb2) = views(x, g)
        H = torch.mm(Xb, W1).add_(b1).sigmoid_()
        out = torch.mm(H, W2).add_(b2).sigmoid_()
        dZ = (out - Yb).mul_(out).mul_(1.0 - out).mul_(2.0 / out.numel())
        torch.mm(H.T, dZ, out=gW2)
        torch.sum(dZ, 0, out=gb2)
        dA1 = torch.mm(dZ, W2.T).mul_(H).mul_(1.0 - H)
        torch.mm(Xb.T, dA1, out=gW1)
        torch.sum(dA1, 0, out=gb1)
    return grad


def torch_rule(work: str) -> tuple[Callable[[Any], list], Callable[[Any, Any, list], None]]:
    """(state from x, in-place update) for SGD (``sub_``) or Adam (``addcdiv_``)."""
    import torch

    if not work.startswith("adam"):
        def sgd(x: Any, g: Any, s: list) -> None:
            x.sub_(g, alpha=LR_SGD_FIZZ)
        return lambda x: [], sgd

    def adam(x: Any, g: Any, s: list) -> None:
        m, v = s[:2]
        s[2] += 1
        m.mul_(B1).add_(g, alpha=1 - B1)
        v.mul_(B2).addcmul_(g, g, value=1 - B2)
        denom = v.sqrt().div_(math.sqrt(1 - B2 ** s[2])).add_(EPS)
        x.addcdiv_(m, denom, value=-LR_ADAM / (1 - B1 ** s[2]))
    return lambda x: [torch.zeros_like(x), torch.zeros_like(x), 0], adam


def torch_loops(work: str, problem: Any, n: int) -> Loops:
    """torch: GD with ``out=`` buffers (both layouts) and with temporaries; SGD gathers per step
    and once; the hand-written backward with in-place updates, and autograd + torch.optim."""
    import torch

    with warnings.catch_warnings():  # read-only arrays, shared and never written
        warnings.simplefilter("ignore", UserWarning)
        # row-major: the minibatch loops gather rows (GD's loops choose their own layout)
        data = {k: torch.from_numpy(np.ascontiguousarray(v))
                for k, v in problem.train_data.items()}
    if work == "gd-1M":
        return _torch_gd(problem, data, n)
    if work == "sgd64-1M":
        A, y, rows = data["A"], data["y"], torch.from_numpy(lin_rows(problem, n))

        def sgd(once: bool, autograd: bool = False) -> Callable[[], Any]:
            def loop() -> Any:
                Ag, yg = (A[rows], y[rows]) if once else (A, y)
                x = torch.zeros(A.shape[1], dtype=A.dtype, requires_grad=autograd)
                opt = torch.optim.SGD([x], lr=LR_SGD_LIN) if autograd else None
                for k in range(n):
                    s = slice(k * BS, (k + 1) * BS)
                    Ab, yb = ((Ag[s], yg[s]) if once else
                              (A.index_select(0, rows[s]), y.index_select(0, rows[s])))
                    if opt is not None:
                        opt.zero_grad(set_to_none=True)
                        torch.mean((Ab @ x - yb) ** 2).backward()
                        opt.step()
                    else:
                        r = torch.mv(Ab, x).sub_(yb)
                        x.sub_(torch.mv(Ab.T, r), alpha=LR_SGD_LIN * 2.0 / BS)
                return x.detach()
            return loop
        return {"gather once": sgd(True), "gather per step": sgd(False),
                "autograd + torch.optim.SGD": sgd(True, True)}
    return _torch_fizz(work, problem, data, n)


def _torch_gd(problem: Any, data: dict[str, Any], n: int) -> Loops:
    """torch GD: one buffer per vector (row- and column-major data), or three temporaries."""
    import torch

    y, lr = data["y"], 1.0 / problem.lipschitz()
    m = y.numel()

    def gd(A: Any) -> Callable[[], Any]:
        def loop() -> Any:
            x, r, g = torch.zeros(A.shape[1], dtype=A.dtype), torch.empty(m, dtype=A.dtype), \
                torch.empty(A.shape[1], dtype=A.dtype)
            for _ in range(n):
                torch.mv(A, x, out=r)
                r.sub_(y)
                _f = float(torch.dot(r, r)) / m
                torch.mv(A.T, r, out=g)
                g.mul_(2.0 / m)
                _gn = float(torch.linalg.vector_norm(g))
                x.sub_(g, alpha=lr)
            return x
        return loop

    A = torch.from_numpy(np.ascontiguousarray(problem.train_data["A"]))  # row-major

    def temporaries() -> Any:
        x = torch.zeros(A.shape[1], dtype=A.dtype)
        for _ in range(n):
            r = A @ x - y
            _f = float(torch.mean(r * r))
            g = (r @ A) * (2.0 / m)
            _gn = float(torch.linalg.vector_norm(g))
            x = x - lr * g
        return x
    return {"row-major": gd(A), "column-major": gd(torch.from_numpy(
        np.asfortranarray(problem.train_data["A"]))), "row-major, temporaries": temporaries}


def _torch_fizz(work: str, problem: Any, data: dict[str, Any], n: int) -> Loops:
    """torch FizzBuzz: hand backward + in-place rule (gathers per step / once), and autograd
    + ``torch.optim`` (gather once)."""
    import torch

    X, Y = data["X"], data["Y"]
    perms = torch.from_numpy(epoch_perms(problem, n))
    grad, (init, update) = torch_mlp_grad(problem), torch_rule(work)
    starts, ops = range(0, problem.n_samples, BS), optcmp.get_backend("torch").ops

    def fizz(once: bool) -> Callable[[], Any]:
        def loop() -> Any:
            x = torch.from_numpy(problem.init_params(0))
            g, s = torch.empty_like(x), init(x)
            for p in perms:
                Xe, Ye = (X[p], Y[p]) if once else (X, Y)
                for a in starts:
                    if once:
                        grad(x, g, Xe[a:a + BS], Ye[a:a + BS])
                    else:
                        grad(x, g, X.index_select(0, p[a:a + BS]), Y.index_select(0, p[a:a + BS]))
                    update(x, g, s)
            return x
        return loop

    def autograd() -> Any:
        x = torch.from_numpy(problem.init_params(0)).requires_grad_(True)
        opt = (torch.optim.Adam([x], lr=LR_ADAM, betas=(B1, B2), eps=EPS)
               if work.startswith("adam") else torch.optim.SGD([x], lr=LR_SGD_FIZZ))
        for p in perms:
            Xe, Ye = X[p], Y[p]
            for a in starts:
                opt.zero_grad(set_to_none=True)
                problem.objective(ops, x, {"X": Xe[a:a + BS], "Y": Ye[a:a + BS]}).backward()
                opt.step()
        return x.detach()
    name = "torch.optim.Adam" if work.startswith("adam") else "torch.optim.SGD"
    return {"gather once": fizz(True), "gather per step": fizz(False),
            f"autograd + {name}": autograd}


# ---------------------------------------------------------------------------- TensorFlow
def pure_rule(work: str, sqrt: Callable[[Any], Any]) -> tuple[Callable[[Any], Any], Callable]:
    """(state from x, (x, g, state, t) -> (x, state)): SGD or Adam as array expressions."""
    if not work.startswith("adam"):
        return lambda x: (), lambda x, g, s, t: (x - LR_SGD_FIZZ * g, s)

    def adam(x: Any, g: Any, s: Any, t: Any) -> Any:
        m, v = B1 * s[0] + (1 - B1) * g, B2 * s[1] + (1 - B2) * g * g
        return x - (LR_ADAM / (1 - B1 ** t)) * m / (sqrt(v) / sqrt(1 - B2 ** t) + EPS), (m, v)
    return lambda x: (0.0 * x, 0.0 * x), adam


def tf_loops(work: str, problem: Any, n: int) -> Loops:
    """TensorFlow: one ``tf.function(jit_compile=True)`` ``tf.while_loop`` per measurement, the
    data as arguments."""
    import tensorflow as tf

    data = {k: tf.constant(v) for k, v in problem.train_data.items()}
    if work == "gd-1M":
        A, y = data["A"], data["y"]
        lr, m = 1.0 / problem.lipschitz(), float(problem.n_samples)

        def gd(cols: bool) -> Callable[[], Any]:
            @tf.function(jit_compile=True)
            def run(M: Any, y: Any) -> Any:
                def body(i: Any, x: Any, f: Any, gn: Any) -> Any:
                    r = tf.linalg.matvec(M, x, transpose_a=cols) - y
                    g = tf.linalg.matvec(M, r, transpose_a=not cols) * (2.0 / m)
                    return i + 1, x - lr * g, tf.reduce_sum(r * r) / m, tf.norm(g)
                zero = tf.constant(0.0, tf.float64)
                # f and |g| returned: XLA drops a value the loop computes but never returns
                return tf.while_loop(lambda i, *_: i < n, body,
                                     (0, tf.zeros([A.shape[1]], tf.float64), zero, zero))[1:]
            M = tf.constant(np.ascontiguousarray(problem.train_data["A"].T)) if cols else A
            return lambda: [v.numpy() for v in run(M, y)][0]
        return {"column-major": gd(True), "row-major": gd(False)}
    if work == "sgd64-1M":
        return _tf_sgd_lin(problem, data, n)
    return _tf_fizz(work, problem, data, n)


def _tf_sgd_lin(problem: Any, data: dict[str, Any], n: int) -> Loops:
    import keras
    import tensorflow as tf

    rows, d = tf.constant(lin_rows(problem, n)), problem.n_params

    def grad(Ab: Any, yb: Any, x: Any) -> Any:
        return tf.linalg.matvec(Ab, tf.linalg.matvec(Ab, x) - yb, transpose_a=True) * (2.0 / BS)

    def sgd(once: bool) -> Callable[[], Any]:
        @tf.function(jit_compile=True)
        def run(A: Any, y: Any, rows: Any) -> Any:
            Ag, yg = (tf.gather(A, rows), tf.gather(y, rows)) if once else (A, y)

            def body(i: Any, x: Any) -> Any:
                if once:
                    Ab, yb = tf.slice(Ag, [i * BS, 0], [BS, d]), tf.slice(yg, [i * BS], [BS])
                else:
                    idx = tf.slice(rows, [i * BS], [BS])
                    Ab, yb = tf.gather(A, idx), tf.gather(y, idx)
                return i + 1, x - LR_SGD_LIN * grad(Ab, yb, x)
            return tf.while_loop(lambda i, _: i < n, body, (0, tf.zeros([d], tf.float64)))[1]
        return lambda: run(data["A"], data["y"], rows).numpy()

    var = tf.Variable(np.zeros(d))
    opt = _keras_opt(keras.optimizers.SGD(learning_rate=LR_SGD_LIN), var)

    @tf.function(jit_compile=True)
    def keras_run(A: Any, y: Any, rows: Any) -> Any:
        var.assign(tf.zeros([d], tf.float64))
        Ag, yg = tf.gather(A, rows), tf.gather(y, rows)

        def body(i: Any) -> Any:
            Ab, yb = tf.slice(Ag, [i * BS, 0], [BS, d]), tf.slice(yg, [i * BS], [BS])
            with tf.GradientTape() as tape:
                f = tf.reduce_mean(tf.square(tf.linalg.matvec(Ab, var) - yb))
            opt.apply_gradients([(tape.gradient(f, var), var)])
            return (i + 1,)
        tf.while_loop(lambda i: i < n, body, (0,))
        return var.read_value()
    return {"gather once": sgd(True), "gather per step": sgd(False),
            "tape + keras SGD": lambda: keras_run(data["A"], data["y"], rows).numpy()}


def _keras_opt(opt: Any, var: Any) -> Any:
    """``opt`` built on ``var`` with float64 slots."""
    import keras

    old = keras.config.floatx()
    keras.config.set_floatx("float64")
    try:
        opt.build([var])
    finally:
        keras.config.set_floatx(old)
    return opt


def _tf_fizz(work: str, problem: Any, data: dict[str, Any], n: int) -> Loops:
    """TF FizzBuzz: an epoch loop; the declared gradient + the rule as expressions (gathers per
    step / once per epoch), or tape + the Keras optimizer on a variable (once per epoch)."""
    import keras
    import tensorflow as tf

    ops, N = optcmp.get_backend("tensorflow").ops, problem.n_samples
    full, short, d = N // BS, N % BS, data["X"].shape[1]
    perms, x0 = tf.constant(epoch_perms(problem, n)), tf.constant(problem.init_params(0))
    init, rule = pure_rule(work, tf.sqrt)

    def grad(x: Any, Xb: Any, Yb: Any) -> Any:
        return problem.gradient_ops(ops, x, {"X": Xb, "Y": Yb}, value=False)[1]

    def fizz(once: bool) -> Callable[[], Any]:
        @tf.function(jit_compile=True)
        def run(X: Any, Y: Any, perms: Any, x: Any) -> Any:
            def batch(p: Any, Xe: Any, Ye: Any, a: Any, size: int) -> tuple[Any, Any]:
                if once:
                    return tf.slice(Xe, [a, 0], [size, d]), tf.slice(Ye, [a, 0], [size, 4])
                idx = tf.slice(p, [a], [size])
                return tf.gather(X, idx), tf.gather(Y, idx)

            def epoch(e: Any, x: Any, s: Any) -> Any:
                p = perms[e]
                Xe, Ye = (tf.gather(X, p), tf.gather(Y, p)) if once else (X, Y)

                def step(j: Any, x: Any, s: Any, size: int = BS) -> Any:
                    t = tf.cast(e * (full + 1) + j + 1, tf.float64)
                    return rule(x, grad(x, *batch(p, Xe, Ye, j * BS, size)), s, t)

                j, x, s = tf.while_loop(lambda j, *_: j < full,
                                        lambda j, x, s: (j + 1, *step(j, x, s)), (0, x, s))
                x, s = step(full, x, s, short) if short else (x, s)
                return e + 1, x, s
            return tf.while_loop(lambda e, *_: e < perms.shape[0], epoch, (0, x, init(x)))[1]
        return lambda: run(data["X"], data["Y"], perms, x0).numpy()

    adam = work.startswith("adam")
    var = tf.Variable(problem.init_params(0))
    opt = _keras_opt(keras.optimizers.Adam(LR_ADAM, B1, B2, epsilon=EPS) if adam
                     else keras.optimizers.SGD(LR_SGD_FIZZ), var)

    @tf.function(jit_compile=True)
    def keras_run(X: Any, Y: Any, perms: Any) -> Any:
        var.assign(x0)

        def step(Xe: Any, Ye: Any, a: Any, size: int) -> None:
            b = {"X": tf.slice(Xe, [a, 0], [size, d]), "Y": tf.slice(Ye, [a, 0], [size, 4])}
            with tf.GradientTape() as tape:
                f = problem.objective(ops, var, b)
            opt.apply_gradients([(tape.gradient(f, var), var)])

        def epoch(e: Any) -> Any:
            Xe, Ye = tf.gather(X, perms[e]), tf.gather(Y, perms[e])

            def inner(j: Any) -> Any:
                step(Xe, Ye, j * BS, BS)
                return (j + 1,)
            tf.while_loop(lambda j: j < full, inner, (0,))
            if short:
                step(Xe, Ye, full * BS, short)
            return (e + 1,)
        tf.while_loop(lambda e: e < perms.shape[0], epoch, (0,))
        return var.read_value()
    name = "keras Adam (epsilon-hat)" if adam else "keras SGD"
    return {"gather once": fizz(True), "gather per step": fizz(False),
            f"tape + {name}": lambda: keras_run(data["X"], data["Y"], perms).numpy()}


# ---------------------------------------------------------------------------- JAX
def jax_loops(work: str, problem: Any, n: int) -> Loops:
    """JAX: one ``jax.jit`` of a loop per measurement (float64), the data as arguments,
    ``block_until_ready`` before the clock is read."""
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    data = {k: jax.device_put(v) for k, v in problem.train_data.items()}
    if work == "gd-1M":
        lr, m = 1.0 / problem.lipschitz(), float(problem.n_samples)

        def gd(cols: bool) -> Callable[[], Any]:
            @jax.jit
            def run(M: Any, y: Any) -> Any:
                def body(i: Any, carry: Any) -> Any:
                    x = carry[0]
                    r = (x @ M if cols else M @ x) - y
                    g = (M @ r if cols else r @ M) * (2.0 / m)
                    return x - lr * g, jnp.vdot(r, r) / m, jnp.linalg.norm(g)
                zero = jnp.float64(0.0)
                # f and |g| returned: XLA drops a value the loop computes but never returns
                return jax.lax.fori_loop(0, n, body, (jnp.zeros(problem.n_params), zero, zero))
            M = jax.device_put(np.ascontiguousarray(problem.train_data["A"].T)) if cols \
                else data["A"]
            return lambda: jax.block_until_ready(run(M, data["y"]))[0]
        return {"column-major": gd(True), "row-major": gd(False)}
    if work == "sgd64-1M":
        return _jax_sgd_lin(problem, data, n)
    return _jax_fizz(work, problem, data, n)


def _jax_sgd_lin(problem: Any, data: dict[str, Any], n: int) -> Loops:
    import jax
    import jax.numpy as jnp
    import optax

    lax, rows, d = jax.lax, jax.device_put(lin_rows(problem, n)), problem.n_params

    def step_grad(x: Any, Ab: Any, yb: Any) -> Any:
        return (Ab @ x - yb) @ Ab * (2.0 / BS)

    @jax.jit
    def per_step(A: Any, y: Any, rows: Any) -> Any:
        def body(i: Any, x: Any) -> Any:
            idx = lax.dynamic_slice(rows, (i * BS,), (BS,))
            return x - LR_SGD_LIN * step_grad(x, jnp.take(A, idx, axis=0), jnp.take(y, idx))
        return lax.fori_loop(0, n, body, jnp.zeros(d))

    def once(autodiff: bool) -> Callable[[], Any]:
        opt = optax.sgd(LR_SGD_LIN)

        @jax.jit
        def run(A: Any, y: Any, rows: Any) -> Any:
            batches = (jnp.take(A, rows, axis=0).reshape(n, BS, d), jnp.take(y, rows).reshape(n, BS))

            def body(carry: Any, b: Any) -> Any:
                x, s = carry
                if not autodiff:
                    return (x - LR_SGD_LIN * step_grad(x, *b), s), None
                g = jax.grad(lambda x: jnp.mean((b[0] @ x - b[1]) ** 2))(x)
                u, s = opt.update(g, s, x)
                return (optax.apply_updates(x, u), s), None
            x = jnp.zeros(d)
            return lax.scan(body, (x, opt.init(x)), batches)[0][0]
        return lambda: run(data["A"], data["y"], rows).block_until_ready()
    return {"gather once (scan)": once(False),
            "gather per step": lambda: per_step(data["A"], data["y"], rows).block_until_ready(),
            "autodiff + optax.sgd": once(True)}


def _jax_fizz(work: str, problem: Any, data: dict[str, Any], n: int) -> Loops:
    """JAX FizzBuzz: an epoch loop; the declared gradient + the rule (gathers per step in a
    ``fori_loop``, or once per epoch and ``lax.scan`` over its batches), or autodiff + optax."""
    import jax
    import jax.numpy as jnp
    import optax

    lax, ops, N = jax.lax, optcmp.get_backend("jax").ops, problem.n_samples
    full, short = N // BS, N % BS
    perms, x0 = jax.device_put(epoch_perms(problem, n)), jax.device_put(problem.init_params(0))
    adam = work.startswith("adam")
    tx = optax.adam(LR_ADAM, B1, B2, EPS) if adam else optax.sgd(LR_SGD_FIZZ)
    init, rule = pure_rule(work, jnp.sqrt)

    def make(kind: str) -> Callable[[], Any]:
        def step(x: Any, s: Any, t: Any, Xb: Any, Yb: Any) -> tuple[Any, Any]:
            if kind != "optax":
                g = problem.gradient_ops(ops, x, {"X": Xb, "Y": Yb}, value=False)[1]
                return rule(x, g, s, t.astype(jnp.float64))
            g = jax.grad(lambda x: problem.objective(ops, x, {"X": Xb, "Y": Yb}))(x)
            u, s = tx.update(g, s, x)
            return optax.apply_updates(x, u), s

        @jax.jit
        def run(X: Any, Y: Any, perms: Any, x: Any) -> Any:
            def epoch(e: Any, carry: Any) -> Any:
                x, s, p = (*carry, perms[e])
                t0 = e * (full + 1)
                if kind == "per step":
                    def body(j: Any, c: Any) -> Any:
                        idx = lax.dynamic_slice(p, (j * BS,), (BS,))
                        return step(*c, t0 + j + 1, jnp.take(X, idx, axis=0), jnp.take(Y, idx, axis=0))
                    x, s = lax.fori_loop(0, full, body, (x, s))
                    Xs, Ys = jnp.take(X, p[full * BS:], axis=0), jnp.take(Y, p[full * BS:], axis=0)
                else:
                    Xe, Ye = jnp.take(X, p, axis=0), jnp.take(Y, p, axis=0)
                    bs = (Xe[:full * BS].reshape(full, BS, -1), Ye[:full * BS].reshape(full, BS, -1),
                          t0 + 1 + jnp.arange(full))
                    (x, s), _ = lax.scan(lambda c, b: (step(*c, b[2], b[0], b[1]), None), (x, s), bs)
                    Xs, Ys = Xe[full * BS:], Ye[full * BS:]
                return step(x, s, t0 + full + 1, Xs, Ys) if short else (x, s)
            return lax.fori_loop(0, perms.shape[0], epoch,
                                 (x, tx.init(x) if kind == "optax" else init(x)))[0]
        return lambda: run(data["X"], data["Y"], perms, x0).block_until_ready()
    return {"gather once (scan)": make("once"), "gather per step": make("per step"),
            f"autodiff + optax.{'adam' if adam else 'sgd'} (scan)": make("optax")}


LOOPS = {"numpy": numpy_loops, "torch": torch_loops, "tensorflow": tf_loops, "jax": jax_loops}


# ---------------------------------------------------------------------------- optcmp's side
def optcmp_side(work: str, problem: Any, backend: str, n: int,
                execution: str) -> Callable[[], tuple[float, float]]:
    """One ``run`` of ``n`` steps: its timed (CPU, wall) seconds per step; the whole call's and
    the float64 evaluations' (CPU, wall) per step are kept in ``.whole`` and ``.evals``."""
    spec = spec_of(work)
    whole: list[tuple[float, float]] = []
    evals: list[tuple[float, float]] = []
    screens: list[tuple[float, float]] = []

    def measure() -> tuple[float, float]:
        warm_cpu = WarmupCPU.install()
        with (warnings.catch_warnings(), FullEvaluations(problem) as spent,
              ScreenCalls() as screened):
            warnings.simplefilter("ignore")  # a MaxIter-only rule has no target: said once
            c0, w0 = time.process_time(), time.perf_counter()
            r = optcmp.run(problem, spec, backend=backend, stopping=optcmp.MaxIter(n),
                           threads=1, execution=execution)
            c1, w1 = time.process_time(), time.perf_counter()
        sw = DualStopwatch.last
        assert sw is not None and r.nit == n, (r.status, r.message)
        # the whole call per step, the warm-up (compilation) excluded
        warm_cpu = WarmupCPU.spent - warm_cpu
        whole.append(((c1 - c0 - warm_cpu) / n, (w1 - w0 - r.warmup_time) / n))
        evals.append((spent.cpu / n, spent.wall / n))
        screens.append((screened.cpu / n, screened.wall / n))
        measure.observed = (spent.count, int(np.sum(~r.trace.judged)),  # type: ignore[attr-defined]
                            r.conditions.observations)
        return sw.cpu_elapsed / n, r.time / n
    measure.whole = whole  # type: ignore[attr-defined]
    measure.evals = evals  # type: ignore[attr-defined]
    measure.screens = screens  # type: ignore[attr-defined]
    return measure


class WarmupCPU:
    """Process CPU seconds spent in the adapters' ``warmup`` (every class under optcmp's
    ``Stepper`` that defines one, wrapped once it is loaded; one inside another counts once)."""

    spent, depth = 0.0, 0

    @classmethod
    def install(cls) -> float:
        """Wrap the warm-ups loaded so far; the seconds spent so far."""
        from optcmp.frameworks.stepper import Stepper

        todo: list[type] = [Stepper]
        while todo:
            k = todo.pop()
            todo.extend(k.__subclasses__())
            fn = vars(k).get("warmup")
            if fn is not None and not hasattr(fn, "cpu_wrapped"):
                k.warmup = cls._wrap(fn)  # type: ignore[attr-defined]
        return cls.spent

    @classmethod
    def _wrap(cls, fn: Callable[..., Any]) -> Callable[..., Any]:
        def warmup(*args: Any, **kwargs: Any) -> Any:
            cls.depth += 1
            c0 = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                cls.depth -= 1
                if not cls.depth:
                    cls.spent += time.process_time() - c0
        warmup.cpu_wrapped = True  # type: ignore[attr-defined]
        return warmup


class FullEvaluations:
    """Seconds (CPU, wall) a run spends in float64 evaluations of the whole training data on
    the host: ``fun64``, ``metrics`` and every ``value_and_grad`` call on as many rows as the
    training data has (the data may be a copy of ``train_data``); one inside another counts
    once."""

    NAMES = ("value_and_grad", "fun64", "metrics")

    def __init__(self, problem: Any) -> None:
        self.problem, self.cpu, self.wall, self.count, self._depth = problem, 0.0, 0.0, 0, 0

    def __enter__(self) -> FullEvaluations:
        for name in self.NAMES:
            setattr(self.problem, name, self._timed(name, getattr(self.problem, name)))
        return self

    def __exit__(self, *exc: Any) -> None:
        for name in self.NAMES:
            delattr(self.problem, name)  # the class's method again

    def _whole(self, name: str, args: tuple) -> bool:
        if name != "value_and_grad":
            return True
        data = args[1] if len(args) > 1 else None
        return isinstance(data, dict) and all(
            np.shape(v)[:1] == (self.problem.n_samples,) for v in data.values())

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self._depth or not self._whole(name, args):
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


class ScreenCalls(FullEvaluations):
    """Seconds (CPU, wall) a run spends in its device screen (:mod:`optcmp.engine.screen`):
    building it (compiled and warmed once per problem), and every evaluation, one call per
    iterate or per spanning block; one inside another counts once."""

    NAMES = ("__init__", "__call__", "values")

    def __init__(self) -> None:
        from optcmp.engine.screen import Screen

        super().__init__(Screen)
        self._own = {name: vars(Screen)[name] for name in self.NAMES}

    def __exit__(self, *exc: Any) -> None:
        for name, fn in self._own.items():
            setattr(self.problem, name, fn)

    def _whole(self, name: str, args: tuple) -> bool:
        return True


def interleave(rounds: int, *fns: Callable[[], Any]) -> tuple[list, ...]:
    """Each of ``fns`` once untimed (caches, page faults, compilation), then ``rounds`` times,
    in the order A B C, C B A, A B C, ..."""
    for fn in fns:
        fn()
        for kept in (getattr(fn, n, None) for n in ("whole", "evals", "screens")):
            if kept is not None:
                kept.clear()
    out: list[list[Any]] = [[] for _ in fns]
    for i in range(rounds):
        for j in (range(len(fns)) if i % 2 == 0 else range(len(fns) - 1, -1, -1)):
            out[j].append(fns[j]())
    return tuple(out)


def med(xs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)


def measure(b: str, w: str, p: Any, n: int, rounds: int) -> dict[str, Any]:
    """Every loop variant of ``b`` on ``w``, optcmp auto and step, interleaved: the row."""
    loops = LOOPS[b](w, p, n)
    auto, step = optcmp_side(w, p, b, n, "auto"), optcmp_side(w, p, b, n, "step")
    sides = [lambda f=f: clocked(f, n) for f in loops.values()] + [auto, step]
    got = [med(x) for x in interleave(rounds, *sides)]
    variants = dict(zip(loops, got))
    best = min(variants, key=lambda k: variants[k][0])
    row = {"backend": b, "workload": w, "steps": n, "variants": variants, "best": best,
           "auto": got[-2], "step": got[-1]}
    if "fizzbuzz" in w:  # 200 epochs: the measured runs are the whole-call runs
        row["whole"] = whole_of(auto, got[-2], n)
    elif w == "sgd64-1M":  # one epoch of the rows, a run of its own
        e = p.n_samples // BS
        side = optcmp_side(w, p, b, e, "auto")
        row["whole"] = whole_of(side, med(interleave(max(rounds // 2, 1), side)[0]), e)
    return row


def whole_of(side: Any, steps: tuple[float, float], n: int) -> dict[str, Any]:
    """The whole ``run`` call per step of ``side``'s runs of ``n`` steps (CPU and wall), its
    timed steps, its float64 evaluations of the whole data on the host and its device screen,
    with how many observations each evaluated (a run's last)."""
    wh, ev, sc = med(side.whole), med(side.evals), med(side.screens)
    judged, screened, where = side.observed
    return {"steps": n, "cpu": wh[0], "wall": wh[1], "steps_cpu": steps[0],
            "steps_wall": steps[1], "evals_cpu": ev[0], "evals_wall": ev[1],
            "screen_cpu": sc[0], "screen_wall": sc[1], "judged": judged,
            "screened": screened, "observations": where}


# ---------------------------------------------------------------------------- output
def us(t: float) -> str:
    return f"{t * 1e6:,.1f}"


def print_table(rows: list[dict[str, Any]]) -> None:
    """optcmp's default and ``step`` execution against the best loop, CPU (wall) per step."""
    print("| backend | workload | best loop | best us/step CPU (wall) | optcmp auto us/step CPU "
          "(wall) | auto/best CPU (wall) | optcmp step us/step CPU | step/best CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        h, a, s = r["variants"][r["best"]], r["auto"], r["step"]
        print(f"| {r['backend']} | {r['workload']} | {r['best']} | {us(h[0])} ({us(h[1])}) | "
              f"{us(a[0])} ({us(a[1])}) | {a[0] / h[0]:.2f}x ({a[1] / h[1]:.2f}x) | {us(s[0])} | "
              f"{s[0] / h[0]:.2f}x |")


def print_variants(rows: list[dict[str, Any]]) -> None:
    """Every loop variant, CPU (wall) per step and its ratio to the best."""
    print("| backend | workload | loop variant | us/step CPU (wall) | / best CPU |")
    print("|---|---|---|---|---|")
    for r in rows:
        h = r["variants"][r["best"]][0]
        for name, (c, w) in sorted(r["variants"].items(), key=lambda kv: kv[1][0]):
            print(f"| {r['backend']} | {r['workload']} | {name} | {us(c)} ({us(w)}) | "
                  f"{c / h:.2f}x |")


def print_whole(rows: list[dict[str, Any]]) -> None:
    """The whole ``run`` call per step against the best loop's step (CPU), split; the
    observations each evaluation made (host judge / device screen)."""
    print("| backend | workload | run steps | whole call us/step CPU (wall) | timed steps | "
          "float64 evaluations (host judge) | device screen | the rest | observations judged "
          "/ screened | whole/best loop CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r.get("whole")
        if t is None:
            continue
        h = r["variants"][r["best"]][0]
        sc = t.get("screen_cpu")  # absent: measured before the screen was split out
        rest = t["cpu"] - t["steps_cpu"] - t["evals_cpu"] - (sc or 0.0)
        seen = f"{t['judged']:,} / {t['screened']:,}" if "judged" in t else ""
        print(f"| {r['backend']} | {r['workload']} | {t['steps']:,} | {us(t['cpu'])} "
              f"({us(t['wall'])}) | {us(t['steps_cpu'])} | {us(t['evals_cpu'])} | "
              f"{'' if sc is None else us(sc)} | {us(rest)} | {seen} | {t['cpu'] / h:.2f}x |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--backends", default=",".join(BACKENDS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--steps", default="30,3000,3000",
                    help="steps per measurement of gd-1M, sgd64-1M, the FizzBuzz workloads "
                         "(whole epochs of 15 steps)")
    ap.add_argument("--quick", action="store_true",
                    help="100,000 rows, 2 rounds, 10/300/300 steps: a first look")
    ap.add_argument("--json", default=None, metavar="PATH",
                    help="also write the medians and the machine stamp as JSON")
    ap.add_argument("--screen-on-cpu", default=None, metavar="BACKENDS",
                    help="the backends whose runs on a CPU screen their observations on the "
                         "device, as on a GPU (default: optcmp.engine.screen.SCREEN_ON_CPU, "
                         "'none': none)")
    ap.add_argument("--memory", type=int, default=0, metavar="ROWS",
                    help="only print the peak memory of GD's run phase on ROWS rows, every "
                         "backend: optcmp / a loop holding the data once")
    args = ap.parse_args(argv)
    backends = [b for b in args.backends.split(",") if optcmp.frameworks.is_available(b)]
    if args.memory:
        return peak_memory(args.memory, backends)
    if args.quick:
        args.rows, args.rounds, args.steps = 100_000, 2, "10,300,300"
    if "torch" in backends:
        import torch

        torch.set_num_threads(1)
    if "tensorflow" in backends:
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    run_session.Stopwatch = DualStopwatch  # type: ignore[misc]
    if args.screen_on_cpu is not None:
        screen.SCREEN_ON_CPU = tuple(optcmp.frameworks.canonical_backend(b)
                                     for b in args.screen_on_cpu.split(",") if b != "none")
    with threadpool_limits(limits=1):
        return _main(args, backends)


def _main(args: argparse.Namespace, backends: list[str]) -> int:
    from optcmp.environment import machine_stamp, stamp_text

    t0 = time.process_time()
    lin = LinearRegression(n_samples=args.rows)
    fizz = FizzBuzzMLP()
    problems = {"gd-1M": lin, "sgd64-1M": lin, "sgd64-fizzbuzz": fizz, "adam64-fizzbuzz": fizz}
    s = [int(x) for x in args.steps.split(",")]
    steps = dict(zip(WORKLOADS, (s[0], s[1], s[2], s[2])))
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, optcmp {optcmp.__version__}; "
          f"{os.cpu_count()} CPUs; threads=1; {args.rows:,} rows, {args.steps} steps "
          f"(gd, sgd64, fizzbuzz); {args.rounds} rounds, median")
    print(load() + " (before)")
    print("machine: " + stamp_text(machine_stamp(threads=1)))  # what the figures belong to
    rows = []
    for b in backends:
        for w in args.workloads.split(","):
            rows.append(measure(b, w, problems[w], steps[w], args.rounds))
            r = rows[-1]
            print(f"  measured {b:10s} {w:15s} best {us(r['variants'][r['best']][0])} us CPU "
                  f"({r['best']}), auto {us(r['auto'][0])}, step {us(r['step'][0])}", flush=True)
    print(load() + " (after)")
    print(f"the benchmark's own CPU: {time.process_time() - t0:.0f} s")
    for fn in (print_table, print_variants, print_whole):
        print()
        fn(rows)
    if args.json:
        import json

        stamp = machine_stamp(threads=1)
        out = {"stamp": stamp, "stamp_text": stamp_text(stamp), "rows_1M": args.rows,
               "rounds": args.rounds, "steps": args.steps, "results": rows}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, allow_nan=True)
        print(f"wrote {args.json}")
    return 0


# ---------------------------------------------------------------------------- memory
_MEMORY_SIDE = """
import resource, sys, warnings
import numpy as np
backend, side, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
if backend == "torch":
    import torch
    torch.set_num_threads(1)
elif backend == "tensorflow":
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
elif backend == "jax":
    import jax, jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
from threadpoolctl import threadpool_limits
import optcmp
from optcmp.problems import LinearRegression
threadpool_limits(1)
p = LinearRegression(n_samples=rows)
A0, y0, lr, n = p.train_data["A"], p.train_data["y"], 1.0 / p.lipschitz(), 3
try:  # the run phase only: reset the high-water mark after the problem is built
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    phase = "run phase"
except OSError:
    phase = "whole process"
if side == "optcmp":
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optcmp.run(p, optcmp.gd("auto"), backend=backend, threads=1, stopping=optcmp.MaxIter(n))
elif backend == "numpy":
    x, r, g = np.zeros(A0.shape[1]), np.empty(rows), np.empty(A0.shape[1])
    for _ in range(n):
        np.matmul(A0, x, out=r); r -= y0; np.matmul(r, A0, out=g); x -= lr * (2.0 / rows) * g
elif backend == "torch":
    A, y = torch.from_numpy(A0), torch.from_numpy(y0)
    x, r, g = torch.zeros(A.shape[1], dtype=A.dtype), torch.empty_like(y), torch.empty(A.shape[1], dtype=A.dtype)
    for _ in range(n):
        torch.mv(A, x, out=r); r.sub_(y); torch.mv(A.T, r, out=g); x.sub_(g, alpha=lr * 2.0 / rows)
elif backend == "tensorflow":  # A0.T: the problem's column-major A read row-major, a view
    AT, y = tf.constant(A0.T), tf.constant(y0)
    @tf.function(jit_compile=True)
    def gd(AT, y):
        body = lambda i, x: (i + 1, x - lr * (2.0 / rows) * tf.linalg.matvec(AT, tf.linalg.matvec(AT, x, transpose_a=True) - y))
        return tf.while_loop(lambda i, x: i < n, body, (0, tf.zeros([AT.shape[0]], tf.float64)))[1]
    gd(AT, y).numpy()
else:
    AT, y = jax.device_put(A0.T), jax.device_put(y0)
    @jax.jit
    def gd(AT, y):
        return jax.lax.fori_loop(0, n, lambda i, x: x - lr * (2.0 / rows) * (AT @ (x @ AT - y)), jnp.zeros(AT.shape[0]))
    gd(AT, y).block_until_ready()
with open("/proc/self/status") as fh:
    hwm = [l for l in fh if l.startswith("VmHWM")]
kib = int(hwm[0].split()[1]) if hwm else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(phase, kib)
"""


def peak_memory(rows: int, backends: list[str]) -> int:
    """Peak resident memory (VmHWM, reset after the problem is built) of three GD steps on
    ``rows`` rows, each side in a fresh process: optcmp's ``run`` and a loop holding the data
    once (numpy's arrays, ``torch.from_numpy``, one ``tf.constant``, ``jax.device_put``; JAX and
    TF pass the data as arguments of the compiled loop, and hold the problem's column-major
    design matrix as its transpose, row-major: a view, no host copy)."""
    import subprocess

    print("| backend | loop MiB | optcmp MiB | optcmp / loop |")
    print("|---|---|---|---|")
    phase = ""
    for b in backends:
        kib = {}
        for side in ("loop", "optcmp"):
            out = subprocess.run([sys.executable, "-c", _MEMORY_SIDE, b, side, str(rows)],
                                 check=True, capture_output=True, text=True).stdout.split()
            phase, kib[side] = " ".join(out[-3:-1]), int(out[-1])
        print(f"| {b} | {kib['loop'] / 1024:,.0f} | {kib['optcmp'] / 1024:,.0f} | "
              f"{kib['optcmp'] / kib['loop']:.2f}x |", flush=True)
    print(f"\nGD, 3 steps, {rows:,} rows; peak resident memory of the {phase}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
