"""A whole ``compare()`` of a native model against a hand-written training loop, per step.

Run from the repository root::

    python benchmarks/native_models.py                      # torch, keras, jax; 5 epochs
    python benchmarks/native_models.py torch --epochs 10 --rounds 3

For each framework, the digits MLP (:func:`optcmp.problems.digits_mlp`, float32) trained by the
framework's own Adam (lr 0.01, minibatches of 64 in optcmp's order) for ``--epochs`` epochs:

* A, by hand: the loop a user writes (torch: ``zero_grad``/forward/``backward``/``step``;
  Keras: a ``tf.function`` train step with ``apply_gradients``; JAX: one ``jax.jit`` of the
  gradient and optax's update), the validation accuracy after every epoch;
* B, optcmp: the whole ``optcmp.compare(p, [optcmp.adam(1e-2, batch_size=64)],
  stopping=MaxIter(steps))`` call (its setup, warm-up, observations every epoch with the
  validation accuracy, and the result).

Both sides run in this process with one thread per framework, in the order A B, then B A per
round (a load that rises or falls weighs on both alike); printed: the machine stamp, each
side's CPU and wall seconds per step (medians), and the ratio B/A. A benchmark, not a test: it
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402
import torch  # noqa: E402 - torch before TensorFlow

import optcmp  # noqa: E402
from optcmp.batching import BatchOrder  # noqa: E402
from optcmp.environment import machine_stamp, stamp_text  # noqa: E402
from optcmp.timing import load_average  # noqa: E402

BATCH = 64


def _batches(n: int, steps: int) -> list[np.ndarray]:
    """The rows of each step, in optcmp's order (seed 0)."""
    order = BatchOrder(n, BATCH, True, 0)
    out = []
    for k in range(steps):
        a, b = order.bounds(k)
        out.append(order.epoch_indices(k // order.steps_per_epoch)[a:b])
    return out


def by_hand(framework: str, steps: int) -> Callable[[], None]:
    """A hand-written training loop of ``steps`` Adam steps, validation every epoch."""
    p = optcmp.problems.digits_mlp(framework)
    X, y = p.train_data["X"], p.train_data["y"]
    (_, _), (Xv, yv) = optcmp.problems.load_digits()
    rows, spe = _batches(len(y), steps), -(-len(y) // BATCH)
    model: Any = p.model
    if framework == "torch":
        import copy

        def loop() -> None:
            net = copy.deepcopy(model.model)
            opt = torch.optim.Adam(net.parameters(), lr=1e-2)
            Xt, yt, Xvt = torch.as_tensor(X), torch.as_tensor(y), torch.as_tensor(Xv, dtype=torch.float32)
            for k, r in enumerate(rows):
                idx = torch.as_tensor(r)
                opt.zero_grad()
                torch.nn.functional.cross_entropy(net(Xt[idx]), yt[idx]).backward()
                opt.step()
                if (k + 1) % spe == 0:
                    with torch.no_grad():
                        float((net(Xvt).argmax(1).numpy() == yv).mean())
        return loop
    if framework == "keras":
        import keras
        import tensorflow as tf

        def loop() -> None:
            net = keras.models.clone_model(model.model)
            net.set_weights(model.model.get_weights())
            opt = keras.optimizers.Adam(1e-2)
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

            @tf.function(jit_compile=True)
            def step(xb: Any, yb: Any) -> None:
                with tf.GradientTape() as tape:
                    f = loss(yb, net(xb, training=True))
                opt.apply_gradients(zip(tape.gradient(f, net.trainable_variables),
                                        net.trainable_variables))
            Xt, yt = tf.constant(X), tf.constant(y)
            for k, r in enumerate(rows):
                idx = tf.constant(r)
                step(tf.gather(Xt, idx), tf.gather(yt, idx))
                if (k + 1) % spe == 0:
                    float((np.argmax(net(Xv.astype(np.float32)).numpy(), 1) == yv).mean())
        return loop
    import jax
    import optax

    def loop() -> None:
        tx, params = optax.adam(1e-2), model.tree(p.init_params())
        state = tx.init(params)

        @jax.jit
        def step(params: Any, state: Any, xb: Any, yb: Any) -> Any:
            g = jax.grad(model.objective)(params, xb, yb)
            updates, state = tx.update(g, state, params)
            return optax.apply_updates(params, updates), state

        Xj, yj = jax.numpy.asarray(X), jax.numpy.asarray(y)
        for k, r in enumerate(rows):
            params, state = step(params, state, Xj[r], yj[r])
            if (k + 1) % spe == 0:
                float((np.argmax(np.asarray(model.apply(params, Xv.astype(np.float32))), 1)
                       == yv).mean())
        jax.block_until_ready(params)
    return loop


def by_optcmp(framework: str, steps: int) -> Callable[[], None]:
    """The whole ``compare()`` call for the same steps."""
    p = optcmp.problems.digits_mlp(framework)

    def call() -> None:
        comp = optcmp.compare(p, [optcmp.adam(1e-2, batch_size=BATCH)], threads=1,
                              stopping=optcmp.MaxIter(steps), progress=False)
        assert comp.runs[0].nit == steps, comp.runs[0].message
    return call


def timed(fn: Callable[[], None]) -> tuple[float, float]:
    """CPU and wall seconds of one call."""
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    """Parse the arguments, run the rounds, print the medians per step and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("frameworks", nargs="*", default=["torch", "keras", "jax"])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2, help="rounds of A B / B A (default 2)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(stamp_text(machine_stamp(threads=1)))
    steps = args.epochs * -(-1437 // BATCH)
    import warnings

    warnings.simplefilter("ignore")
    for fw in args.frameworks:
        a, b = by_hand(fw, steps), by_optcmp(fw, steps)
        a(), b()  # the first calls import and compile what later calls reuse
        got: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
        for _ in range(args.rounds):
            for side, fn in (("A", a), ("B", b), ("B", b), ("A", a)):
                got[side].append(timed(fn))
        med = {s: (statistics.median(c for c, _ in v) / steps,
                   statistics.median(w for _, w in v) / steps) for s, v in got.items()}
        print(f"{fw}: {steps} steps, load {load_average()}; per step A by hand "
              f"{med['A'][0] * 1e3:.3f} ms CPU {med['A'][1] * 1e3:.3f} ms wall, B compare() "
              f"{med['B'][0] * 1e3:.3f} ms CPU {med['B'][1] * 1e3:.3f} ms wall; B/A "
              f"{med['B'][0] / med['A'][0]:.2f} CPU {med['B'][1] / med['A'][1]:.2f} wall")


if __name__ == "__main__":
    main()
