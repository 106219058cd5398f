"""Whose CPU time a run records: its own threads', not those of a BLAS pool spinning beside it.

Run from the repository root::

    python benchmarks/own_cpu.py            # three processes, 5 rounds each: ~1 min
    python benchmarks/own_cpu.py --rounds 3

A ``threads=1`` numpy diag_newton run on a 20,000-row regression, in three fresh processes:
``OPENBLAS_NUM_THREADS=1``; a BLAS pool of 2 threads (used just before each run, so its workers
spin through it); the same with TensorFlow and JAX loaded and started (their runtimes' thread
pools). Each round times the run twice, interleaved (A B B A): the CPU clock optcmp records (the
run's own threads, :class:`optcmp.timing.ThreadCpu`) and the process CPU time every thread
counts in (:class:`optcmp.timing.ProcessCpu`, what was recorded before). Printed per process:
the machine stamp, the medians of the wall and of each CPU time-to-target, and each CPU over
wall. Expected: the own CPU time within 1.15x of the wall time in every process, on a quiet
machine; the process CPU time near 2x with the 2-thread pool.

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import warnings

SIDES = {"OPENBLAS_NUM_THREADS=1": {"OPENBLAS_NUM_THREADS": "1"},
         "BLAS pool of 2": {"OPENBLAS_NUM_THREADS": "2"},
         "BLAS pool of 2, TensorFlow and JAX started": {"OPENBLAS_NUM_THREADS": "2",
                                                        "OWN_CPU_FRAMEWORKS": "1"}}


def _start_frameworks() -> None:
    """Import torch, TensorFlow and JAX and run one op in each runtime (its pools start)."""
    importlib.import_module("torch")  # torch before TensorFlow in one process
    import jax.numpy as jnp
    import tensorflow as tf
    float(tf.reduce_sum(tf.ones((256, 256)) @ tf.ones((256, 256))))
    float((jnp.ones((256, 256)) @ jnp.ones((256, 256))).sum())


def child(rounds: int) -> None:
    """One process: the rounds of the run on both CPU clocks, and the medians."""
    import numpy as np

    import optcmp
    from optcmp.engine import session
    from optcmp.environment import machine_stamp, stamp_text
    from optcmp.frameworks.base import blas_threads
    from optcmp.problems import LinearRegression
    from optcmp.timing import ProcessCpu, load_average, run_cpu_clock

    if os.environ.get("OWN_CPU_FRAMEWORKS"):
        _start_frameworks()
    p = LinearRegression(n_samples=20_000)
    p.optimum()
    a = np.random.default_rng(0).standard_normal((1500, 1500))
    clocks = {"own": run_cpu_clock, "process": lambda *args: ProcessCpu()}

    def once(clock: str) -> tuple[float, float]:
        session.run_cpu_clock = clocks[clock]  # type: ignore[assignment]
        a @ a  # the pool works just before the run: its workers spin on
        r = optcmp.run(p, optcmp.diag_newton(), threads=1)
        assert r.time_to_target is not None and r.cpu_time_to_target is not None, r.status
        return r.time_to_target, r.cpu_time_to_target

    once("own")  # warm-up
    got: dict[str, list[tuple[float, float]]] = {"own": [], "process": []}
    for _ in range(rounds):
        for clock in ("own", "process", "process", "own"):
            got[clock].append(once(clock))
    print("  machine: " + stamp_text(machine_stamp(threads=1)))
    print(f"  BLAS threads {blas_threads()}, load average {load_average()}, {len(got['own'])} "
          "runs per clock")
    for clock, runs in got.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        ratio = statistics.median(c / w for w, c in runs)
        print(f"  {clock:8s} CPU clock: wall time-to-target {wall * 1e3:7.1f} ms, CPU "
              f"{cpu * 1e3:7.1f} ms, CPU/wall {ratio:.2f}"
              + (f" (within 1.15x: {ratio <= 1.15})" if clock == "own" else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        warnings.simplefilter("ignore")
        child(args.rounds)
        return
    for name, env in SIDES.items():
        print(f"{name}:", flush=True)
        subprocess.run([sys.executable, __file__, "--child", "--rounds", str(args.rounds)],
                       env={**os.environ, "OMP_NUM_THREADS": "1", **env,
                            "TF_CPP_MIN_LOG_LEVEL": "3"},
                       check=True, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
