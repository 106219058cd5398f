"""FizzBuzz MLP: time-to-target and per-step cost of every optimizer on every backend.

The default :class:`optcmp.problems.FizzBuzzMLP` (900 training rows, 10 -> 100 -> 4, 1504
parameters, mean squared error) is tiny: a minibatch step is about 0.5 MFLOP, well under a
millisecond of arithmetic on any CPU. What a step costs is the per-operation overhead of the
framework (Python dispatch, autograd bookkeeping, graph-function call), so the
framework that does the least per operation wins, whatever it does per FLOP. This script puts
the numbers side by side, measured in one run:

1. per-call cost of the objective-and-gradient on a 64-row minibatch and on the full 900 rows,
   per backend (median of repeated calls, device synced): when 14x more rows cost much less
   than 14x more time, the cost is overhead;
2. for each optimizer on each backend: status, iterations and time to the training-loss target
   and the timed cost per step (``time / nit``), with the ratio to numpy's per-step cost.

Every framework gets one thread unless the environment says otherwise (``--threads``): at this
size threads buy nothing, and oversubscribed cores make per-step times meaningless.

Usage::

    PYTHONPATH=. python benchmarks/fizzbuzz_overhead.py            # about 4 minutes on 2 cores
    PYTHONPATH=. python benchmarks/fizzbuzz_overhead.py --quick    # or OPTCMP_QUICK=1: ~1 min

Numbers are noisy on a shared machine; compare ratios measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import sys


def _threads_from_argv() -> str:
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "1"


_T = _threads_from_argv()
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
    os.environ.setdefault(_var, _T)

import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import optcmp  # noqa: E402
from optcmp.batching import BatchOrder  # noqa: E402
from optcmp.frameworks import BackendUnavailable, available_backends, get_backend  # noqa: E402
from optcmp.problems import FizzBuzzMLP  # noqa: E402
from optcmp.results import RunResult  # noqa: E402


def _backends(names: list[str] | None) -> list[str]:
    out = []
    for b in names or available_backends():
        try:
            get_backend(b)
            out.append(b)
        except BackendUnavailable as exc:
            print(f"# {b}: skipped ({exc})")
    return out


def per_call(problem: FizzBuzzMLP, backends: list[str], dtype: str, calls: int) -> None:
    print("\n1. objective + gradient, one call (median of "
          f"{calls}, device synced), {dtype}")
    print(f"   {'backend':11s} {'64 rows':>10s} {'900 rows':>10s} {'900/64 time':>12s}"
          f" {'vs numpy (64)':>14s}")
    idx = BatchOrder(problem.n_samples, 64, True, 0).batch_indices(0)
    base = None
    for b in backends:
        be = get_backend(b, dtype=dtype)
        vg = be.make_value_and_grad(problem)
        data = be.place(problem.train_data)
        small = be.take_rows(data, be.index_array(idx))
        x = be.asarray(problem.init_params(0))
        res = []
        for batch in (small, data):
            for _ in range(5):  # warm-up: tracing, first calls
                vg(x, batch)
            be.sync()
            ts = []
            for _ in range(calls):
                t0 = time.perf_counter()
                f, g = vg(x, batch)
                be.sync()
                ts.append(time.perf_counter() - t0)
            res.append(statistics.median(ts))
        base = base or res[0]
        print(f"   {b:11s} {res[0] * 1e6:8.1f}us {res[1] * 1e6:8.1f}us {res[1] / res[0]:11.2f}x"
              f" {res[0] / base:13.2f}x")


def optimizers() -> list[optcmp.OptimizerSpec]:
    return [
        optcmp.sgd(learning_rate=2.56, batch_size=64, label="sgd"),
        optcmp.sgd(learning_rate=2.56, batch_size=64, impl="reference", label="sgd (reference)"),
        optcmp.lbfgs(impl="scipy", label="lbfgs (scipy)"),
        optcmp.gd(learning_rate=2.0),
        optcmp.adadelta(learning_rate=1.0, rho=0.95, eps=1e-6),
        optcmp.diag_newton(learning_rate=10.0),
    ]


def runs(problem: FizzBuzzMLP, backends: list[str], dtype: str, max_time: float) -> list[RunResult]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = optcmp.compare(problem, optimizers(), backends=backends, dtype=dtype,
                              max_time=max_time, max_iter=1_000_000, progress=False)
        out = list(comp)
        if "torch" in backends:
            out.append(optcmp.run(problem, optcmp.lbfgs(impl="native",
                                                            label="lbfgs (torch.optim)"),
                                      backend="torch", dtype=dtype, max_time=max_time,
                                      max_iter=1_000_000))
    return out


def table(results: list[RunResult], backends: list[str]) -> None:
    print("\n2. to the training-loss target: status, iterations, time-to-target, timed cost per "
          "step (x numpy's)")
    labels = list(dict.fromkeys(r.label for r in results))
    cell = {(r.label, r.backend): r for r in results}
    w = 37
    print(f"   {'optimizer':20s}" + "".join(f"{b:>{w}s}" for b in backends))
    for lab in labels:
        base = cell.get((lab, "numpy"))
        base_step = base.time / base.nit if base is not None and base.nit else None
        row = f"   {lab:20s}"
        for b in backends:
            r = cell.get((lab, b))
            if r is None:
                row += f"{'-':>{w}s}"
                continue
            if r.status in ("failed", "skipped"):
                row += f"{r.status:>{w}s}"
                continue
            step = r.time / r.nit if r.nit else float("nan")
            ttt = "-" if r.time_to_target is None else f"{r.time_to_target:.2f}s"
            its = r.nit_to_target if r.nit_to_target is not None else r.nit
            ratio = f" ({step / base_step:.1f}x)" if base_step else ""
            text = f"{r.status[:9]} {its} {ttt} {step * 1e6:.0f}us{ratio}"
            row += f"{text:>{w}s}"
        print(row)
    for r in results:
        if r.status in ("failed", "skipped"):
            lines = [x.strip() for x in r.message.splitlines() if x.strip()]
            why = lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"
            print(f"   note: {r.label} on {r.backend}: {r.status}: {why[:200]}")
    print("   per step: timed seconds / iterations (one minibatch for sgd, one full-batch "
          "step for gd/adadelta/diag_newton, one L-BFGS iteration incl. its line search)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="reduced budget (also OPTCMP_QUICK=1)")
    ap.add_argument("--max-time", type=float, default=None,
                    help="timed seconds per run (default 20, quick 3)")
    ap.add_argument("--target", type=float, default=None,
                    help="training-loss target (default: the problem's, 0.0155; quick 0.1)")
    ap.add_argument("--backends", default=None, help="comma-separated (default: all installed)")
    ap.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    ap.add_argument("--threads", default=_T, help="threads per framework (default 1)")
    args = ap.parse_args(argv)
    from optcmp.environment import machine_stamp, stamp_text

    print("machine: " + stamp_text(machine_stamp(threads=int(args.threads) if str(args.threads).isdigit() else None)))  # what the figures below belong to
    quick = args.quick or os.environ.get("OPTCMP_QUICK", "") not in ("", "0")
    max_time = args.max_time or (3.0 if quick else 20.0)
    target = args.target if args.target is not None else (0.1 if quick else None)
    problem = FizzBuzzMLP(target_loss=target)
    backends = _backends(args.backends.split(",") if args.backends else None)
    import platform

    print(f"FizzBuzzMLP: {problem.n_samples} training rows, {problem.n_params} parameters, "
          f"loss {problem.loss} ({problem.reduction}); target: training loss <= "
          f"{problem.target_loss:.4g}; {args.dtype}; budget {max_time:g} timed s per run")
    print(f"threads per framework: {os.environ['OMP_NUM_THREADS']}; numpy {np.__version__}; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    per_call(problem, backends, args.dtype, 100 if quick else 300)
    t0 = time.perf_counter()
    table(runs(problem, backends, args.dtype, max_time), backends)
    print(f"\n(wall time of the runs: {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
