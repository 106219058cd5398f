"""Sweep of ~40 runs: sequential against a Dask LocalCluster, and the run store's overhead.

Prints, measured side by side in one process:

* wall seconds of the sweep run sequentially and on ``LocalCluster(n_workers=2,
  threads_per_worker=1)`` (cluster start-up reported apart), and their ratio;
* the store's cost per run: seconds spent serializing, writing and fsync-ing each record, and
  the wall-time difference of the same sweep with and without a store;
* the time to "resume" a finished sweep (every run read back from the store).

Usage::

    PYTHONPATH=. python benchmarks/sweep_dask.py [--rows 10000] [--repeats 8] [--workers 2]

Both sides use one BLAS thread per process: Dask's nanny starts workers with
``OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=1``, and this script sets the same before
numpy is imported (override by exporting them), otherwise the sequential side measures BLAS
thread oversubscription rather than the sweep. Timings contend with anything else running on the
machine; the runs on the cluster are flagged ``shared_host`` by design. This is a benchmark, not
a test.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy: as on the Dask workers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=1)))  # what the figures below belong to

    import optcmp
    from optcmp.stopping import Divergence, MaxIter, RelativeSuboptimality

    problem = optcmp.problems.LinearRegression(n_samples=args.rows, seed=0, init="normal")
    opts = [optcmp.gd(), optcmp.diag_newton(), optcmp.adadelta(), optcmp.lbfgs(),
            optcmp.sgd(batch_size=256)]
    rule = RelativeSuboptimality(1e-6) | MaxIter(1500) | Divergence()
    n = len(opts) * args.repeats
    kw = dict(stopping=rule, repeats=args.repeats, progress=False)
    print(f"sweep: {len(opts)} optimizers x {args.repeats} seeds = {n} runs on "
          f"LinearRegression(n_samples={args.rows}), numpy float64, stop {rule.describe()}")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other processes on this host may share it
        optcmp.compare(problem, opts[:1], stopping=rule, progress=False)  # warm caches

    t = time.perf_counter()
    seq = optcmp.compare(problem, opts, **kw)
    t_seq = time.perf_counter() - t

    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "runs.jsonl")
    t = time.perf_counter()
    stored = optcmp.compare(problem, opts, store=path, **kw)
    t_store = time.perf_counter() - t
    st = stored.settings["store"]
    t = time.perf_counter()
    resumed = optcmp.compare(problem, opts, store=path, **kw)
    t_resume = time.perf_counter() - t
    assert resumed.settings["store"]["executed"] == 0

    from distributed import Client, LocalCluster

    t = time.perf_counter()
    cluster = LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1,
                           host="127.0.0.1", dashboard_address=":0",
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    client.wait_for_workers(args.workers)
    t_start = time.perf_counter() - t
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the shared-host warning is expected here
            optcmp.compare(problem, opts[:2], executor=client, stopping=rule, progress=False)
            t = time.perf_counter()
            par = optcmp.compare(problem, opts, executor=client, **kw)
            t_par = time.perf_counter() - t
    finally:
        client.close()
        cluster.close()

    same = all((a.status, a.nit) == (b.status, b.nit) for a, b in zip(seq, par))
    conc = [r.conditions.concurrency for r in par]
    print(f"sequential                 : {t_seq:8.3f} s wall ({t_seq / n * 1e3:.1f} ms/run)")
    print(f"LocalCluster({args.workers}) (warm)     : {t_par:8.3f} s wall "
          f"(cluster start-up {t_start:.2f} s apart)")
    print(f"ratio sequential / cluster : {t_seq / t_par:8.2f}x   "
          f"(same status and nit on every run: {same}; runs sharing the host: "
          f"{sum(c > 1 for c in conc)}/{n})")
    print(f"timed seconds, sum of runs : sequential {sum(r.time for r in seq):.3f} s, "
          f"cluster {sum(r.time for r in par):.3f} s (contention inflates the latter)")
    print(f"store: write+fsync         : {st['write_seconds'] / n * 1e3:8.3f} ms/run "
          f"({st['write_seconds']:.3f} s for {n} runs; file {os.path.getsize(path) / 1e3:.0f} kB)")
    print(f"store: sweep wall with/without: {t_store:.3f} s / {t_seq:.3f} s "
          f"(difference {(t_store - t_seq) / n * 1e3:+.2f} ms/run, noise included)")
    print(f"store: resume (all {n} read back): {t_resume:.3f} s")


if __name__ == "__main__":
    main()
