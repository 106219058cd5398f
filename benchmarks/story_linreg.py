"""The first story behind optcmp, measured: linear regression on 1,000,000 rows, GD and Adadelta
on numpy, PyTorch and TensorFlow, side by side in one process.

Prints, per (optimizer, backend): iterations, seconds per iteration (median over timed steps),
time-to-target (or the relative suboptimality reached within the time budget), warm-up time, and
the per-iteration ratio to numpy. Then two "naive" TensorFlow loops against optcmp's way (data
resident on the device, the step traced once): one that converts the numpy data to tensors on
every step (the feed-dictionary pattern), and one that re-creates the step graph every step (ops
built inside the training loop), each as a ratio.

Every framework gets the same number of CPU threads (``--threads``, default 1): on a shared
machine, oversubscribed BLAS thread pools make timings meaningless.

Usage::

    PYTHONPATH=. python benchmarks/story_linreg.py                 # CPU, 1 thread
    PYTHONPATH=. python benchmarks/story_linreg.py --device cuda   # torch/TF on the GPU
    PYTHONPATH=. python benchmarks/story_linreg.py --threads 2 --budget 20 --tol 1e-3
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def _parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-samples", type=int, default=1_000_000)
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, gpu")
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--threads", type=int, default=1,
                    help="CPU threads for every framework (default 1); 0 = library defaults")
    ap.add_argument("--tol", type=float, default=1e-3, help="relative suboptimality target")
    ap.add_argument("--budget", type=float, default=15.0, help="timed seconds per run")
    ap.add_argument("--iters", type=int, default=20, help="iterations for per-iteration time")
    ap.add_argument("--rounds", type=int, default=3,
                    help="interleaved rounds over the backends for per-iteration time")
    ap.add_argument("--backends", default="numpy,torch,tensorflow")
    return ap.parse_args()


ARGS = _parse() if __name__ == "__main__" else None
if ARGS is not None and ARGS.threads > 0:  # before numpy/torch/TF start their pools
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

import optcmp  # noqa: E402


def _threads(backends: list[str], n: int) -> None:
    if n <= 0:
        return
    if "torch" in backends or "tensorflow" in backends:
        import torch

        torch.set_num_threads(n)
    if "tensorflow" in backends:
        import tensorflow as tf

        import optcmp.frameworks.tensorflow.backend  # noqa: F401  (torch first, then TF)

        tf.config.threading.set_intra_op_parallelism_threads(n)
        tf.config.threading.set_inter_op_parallelism_threads(n)


def _per_iteration(problem, spec, backend, device, dtype, iters) -> tuple[float, float, str]:
    """Median timed seconds per step over ``iters`` steps (after warm-up), warm-up, impl."""
    times: list[float] = []
    last = [0.0]

    def cb(ir):
        times.append(ir.time - last[0])
        last[0] = ir.time

    r = optcmp.run(problem, spec, backend=backend, device=device, dtype=dtype,
                       stopping=optcmp.MaxIter(iters) | optcmp.RelativeSuboptimality(1e-300),
                       callback=cb)
    if r.status == "failed":
        raise RuntimeError(r.message)
    steps = np.asarray(times[2:])  # rows 0/1 hold iterate 0 and the first two steps
    return float(np.median(steps)), r.warmup_time, r.implementation


def _naive_tf(problem, iters: int, dtype: str, device: str) -> tuple[float, float, float]:
    """Feed-dict pattern and graph rebuilds vs resident data in one traced tf.function.

    Returns seconds per GD step (median) for: the data converted numpy -> tensor every step;
    the data resident but the step function re-created (re-traced) every step, as when graph
    ops are built inside the training loop; and optcmp's way (resident data, traced once).
    """
    import tensorflow as tf

    from optcmp.frameworks.tensorflow.backend import tf_device

    dev = tf_device(device)

    tdt = tf.float64 if dtype == "float64" else tf.float32
    A_np = problem.train_data["A"].astype(dtype)
    y_np = problem.train_data["y"].astype(dtype)
    lr = 1.0 / problem.lipschitz()

    def gd_step(x, A, y):
        with tf.GradientTape() as tape:
            tape.watch(x)
            r = tf.linalg.matvec(A, x) - y
            f = tf.reduce_mean(r * r)
        return x - lr * tape.gradient(f, x), f

    step = tf.function(gd_step, reduce_retracing=True)

    x = tf.zeros(problem.n_params, tdt)

    def run(mode: str) -> float:
        with tf.device(dev):
            return _run(mode)

    def _run(mode: str) -> float:
        A_res, y_res = tf.constant(A_np), tf.constant(y_np)
        xx = x
        xx, _ = step(xx, A_res, y_res)  # trace
        out = []
        for _ in range(iters):
            t0 = time.perf_counter()
            if mode == "feed":  # numpy -> tensor conversion on every step
                xx, f = step(xx, tf.constant(A_np), tf.constant(y_np))
            elif mode == "rebuild":  # a new graph every step (ops built inside the loop)
                xx, f = tf.function(gd_step)(xx, A_res, y_res)
            else:
                xx, f = step(xx, A_res, y_res)
            f.numpy()
            out.append(time.perf_counter() - t0)
        return float(np.median(out))

    return run("feed"), run("rebuild"), run("resident")


def main() -> int:
    args = ARGS if ARGS is not None else _parse()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    backends = [b for b in backends if b == "numpy" or optcmp.frameworks.is_available(b)]
    _threads(backends, args.threads)
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=args.threads or None)))  # what the figures below belong to
    problem = optcmp.problems.LinearRegression(n_samples=args.n_samples)
    problem.optimum()
    problem.lipschitz()
    print(f"# story_linreg: {problem!r}, dtype={args.dtype}, device={args.device}, "
          f"threads={args.threads or 'default'}, target rel. subopt {args.tol:g}, "
          f"budget {args.budget:g} s/run")
    specs = [("gd", optcmp.gd()), ("adadelta", optcmp.adadelta())]
    rows = []
    for label, spec in specs:
        # per-iteration time: backends interleaved, round after round, so that load on a shared
        # machine hits them alike; median of the rounds' medians
        samples: dict[str, list[float]] = {b: [] for b in backends}
        info: dict[str, tuple[float, str]] = {}
        for _ in range(args.rounds):
            for b in backends:
                dev = None if b == "numpy" else args.device
                per_it, warm, impl = _per_iteration(problem, spec, b, dev, args.dtype, args.iters)
                samples[b].append(per_it)
                info.setdefault(b, (warm, impl))
        base = None
        for b in backends:
            dev = None if b == "numpy" else args.device
            per_it = float(np.median(samples[b]))
            warm, impl = info[b]
            r = optcmp.run(problem, spec, backend=b, device=dev, dtype=args.dtype,
                               tol=args.tol, max_time=args.budget, max_iter=10**7)
            base = per_it if b == "numpy" else base
            ratio = per_it / base if base else float("nan")
            rel = (r.fun - r.fstar) / (r.f0 - r.fstar)
            ttt = f"{r.time_to_target:.2f} s" if r.time_to_target is not None else "-"
            rows.append((label, b, r.device, per_it * 1e3, ratio, r.nit, ttt, rel, warm, impl))
    hdr = ("optimizer", "backend", "device", "ms/iter", "x numpy", "iters", "time-to-target",
           "rel.subopt", "warm-up s", "implementation")
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    for lab, b, dev, ms, ratio, nit, ttt, rel, warm, impl in rows:
        print(f"| {lab} | {b} | {dev} | {ms:.2f} | {ratio:.2f} | {nit} | {ttt} | {rel:.3g} | "
              f"{warm:.3f} | {impl[:48]} |")
    if "tensorflow" in backends:
        feed, rebuild, resident = _naive_tf(problem, min(args.iters, 20), args.dtype,
                                            args.device)
        print(f"\nnaive TF loops, GD step on resident data traced once: {resident * 1e3:.2f} "
              "ms/iter")
        print(f"  numpy -> tensor every step (feed-dict pattern): {feed * 1e3:.2f} ms/iter, "
              f"ratio {feed / resident:.2f}x")
        print(f"  graph re-created every step (ops built in the loop): {rebuild * 1e3:.2f} "
              f"ms/iter, ratio {rebuild / resident:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
