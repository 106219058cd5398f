"""Dask sweep: a resumable sweep of learning rates and repetitions on a local Dask cluster.

Starts a ``dask.distributed.LocalCluster`` with 2 worker processes (1 thread each), runs
gradient descent at three learning rates (0.5/L, 1/L and 1.9/L, with L the Lipschitz
constant of the gradient) and L-BFGS, 3 repetitions each, on a 200,000-row
regression (20,000 rows, 2 repetitions with ``OPTCMP_QUICK=1``), writing every finished run to
a run store (``runs.jsonl`` in a temporary directory). It then runs the same sweep again on the
same store: every run is read back and none is executed, which is how an interrupted sweep
resumes. Runs that shared their host with other runs are flagged (``shared_host``): with 2
workers on one machine they contend for cores, so compare their timings with care.

Expected output: the table of the first sweep, then::

    first sweep: 0 run(s) read back, 6 run(s) executed
    second sweep: 6 run(s) read back, 0 run(s) executed

(12 instead of 6 without ``OPTCMP_QUICK``: two learning rates and 2 repetitions in quick mode.) Skipped with a message when dask is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import warnings
from pathlib import Path

import optcmp

QUICK = os.environ.get("OPTCMP_QUICK") == "1"


def main() -> None:
    if importlib.util.find_spec("distributed") is None:
        print("dask.distributed is not installed: pip install '.[dask]' in a checkout of optcmp")
        return
    from dask.distributed import Client, LocalCluster

    problem = optcmp.problems.LinearRegression(n_samples=20_000 if QUICK else 200_000)
    lipschitz = problem.lipschitz()  # gd is stable for learning rates below 2/L
    fractions = (0.5, 1.9) if QUICK else (0.5, 1.0, 1.9)
    optimizers = [optcmp.gd(learning_rate=c / lipschitz, label=f"gd({c:g}/L)") for c in fractions]
    optimizers.append(optcmp.lbfgs)
    repeats = 2 if QUICK else 3
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None) as cluster, Client(cluster) as client:
        store = Path(tmp) / "runs.jsonl"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the shared-host warning: expected here
            first = optcmp.compare(problem, optimizers, repeats=repeats, max_iter=20_000,
                                   store=store, executor=client, progress=False)
            second = optcmp.compare(problem, optimizers, repeats=repeats, max_iter=20_000,
                                    store=store, executor=client, progress=False)
    print(first.table())
    for name, cmp in (("first", first), ("second", second)):
        st = cmp.settings["store"]
        print(f"{name} sweep: {st['reused']} run(s) read back, {st['executed']} run(s) executed")


if __name__ == "__main__":
    main()
