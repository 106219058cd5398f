"""Runs on a real dask.distributed LocalCluster: 2 worker processes on loopback.

One cluster serves the module (about 5 s to start, closed in the fixture); the worker-killing
tests cost one worker restart per kill (about 1-3 s each).
"""

from __future__ import annotations

import json
import logging
import os
import socket

import pytest

distributed = pytest.importorskip("distributed")

from _killer import KillerRegression  # noqa: E402 - after the importorskip

import optcmp  # noqa: E402
from optcmp.problems import LinearRegression  # noqa: E402
from optcmp.stopping import Divergence, MaxIter, RelativeSuboptimality  # noqa: E402

RULE = RelativeSuboptimality(1e-8) | MaxIter(3000) | Divergence()
OPTS = [optcmp.diag_newton(), optcmp.lbfgs()]
HERE = os.path.dirname(os.path.abspath(__file__))

pytestmark = [
    pytest.mark.timeout(300),
    # runs on 2 workers usually overlap, and then compare() warns: tolerated here
    pytest.mark.filterwarnings("ignore:.*shared their host:UserWarning"),
]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    import dask

    saved = {k: os.environ.get(k) for k in ("OPTCMP_ACTIVITY_DIR", "PYTHONPATH")}
    os.environ["OPTCMP_ACTIVITY_DIR"] = str(tmp_path_factory.mktemp("activity"))
    # workers import optcmp and tests/_killer.py (the killing problem) from here
    root = os.path.dirname(HERE)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [root, HERE] + ([saved["PYTHONPATH"]] if saved["PYTHONPATH"] else []))
    # allowed-failures 1: a run that kills every worker fails after 2 deaths (fast test);
    # worker-saturation 1.0: a 1-thread worker holds only the task it runs, so a death makes
    # no other task "suspicious"
    with dask.config.set({"distributed.scheduler.allowed-failures": 1,
                          "distributed.scheduler.worker-saturation": 1.0}):
        cluster = distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
            dashboard_address=":0", silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    try:
        c.wait_for_workers(2, timeout=120)
        yield c
    finally:
        c.close(timeout=60)
        cluster.close(timeout=60)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def sweep(problem, opts=OPTS, **kw):
    # censoring compares CPU times, which runs in parallel on shared cores change: off here, so
    # that every run's outcome depends on its iterations only
    kw.setdefault("censor_ratio", None)
    return optcmp.compare(problem, opts, stopping=RULE, repeats=3, progress=False, **kw)


def assert_same_runs(par, seq, skip=()):
    assert len(par) == len(seq)
    for i, (b, a) in enumerate(zip(par, seq)):
        if i in skip:
            continue
        assert (b.label, b.seed, b.status, b.nit) == (a.label, a.seed, a.status, a.nit)
        assert b.fun == pytest.approx(a.fun, rel=1e-12)


def run_records(path):
    with open(path) as fh:
        return [r for r in map(json.loads, fh) if r["record"] == "run"]


def test_dask_results_equal_sequential_and_feed_the_store(client, tmp_path):
    p = LinearRegression(n_samples=300, seed=2, init="normal")  # rebuilt on each worker
    opts = OPTS + [optcmp.gd()]
    seq = sweep(p, opts)
    store = tmp_path / "runs.jsonl"
    par = sweep(p, opts, executor=client, store=store)
    assert_same_runs(par, seq)
    for r in par:
        assert r.conditions.host == socket.gethostname()
        assert r.conditions.concurrency in (1, 2) and r.conditions.shared_host == (r.conditions.concurrency > 1)
    assert len(run_records(store)) == 9
    again = sweep(p, opts, store=store)  # sequential resume: nothing left to run
    assert again.settings["store"]["executed"] == 0
    assert [(r.nit, r.fun) for r in again] == [(r.nit, r.fun) for r in par]


def test_a_killed_worker_loses_only_its_run_which_is_retried(client, tmp_path):
    marker = tmp_path / "killed"
    p = KillerRegression.make(kill_seed=1, marker=str(marker))  # user arrays: shipped once
    seq = sweep(p)  # in this process nothing is killed
    store = tmp_path / "runs.jsonl"
    par = sweep(p, executor=client, store=store)
    assert marker.exists()  # a worker did die on seed 1
    assert_same_runs(par, seq)
    assert len(run_records(store)) == 6


@pytest.mark.slow
def test_a_run_that_kills_every_worker_is_failed_and_not_stored(client, tmp_path):
    p = KillerRegression.make(kill_seed=1, marker=None)
    seq = sweep(p)
    store = tmp_path / "runs.jsonl"
    par = sweep(p, executor=client, store=store)
    lost = [i for i, r in enumerate(par) if r.seed == 1]
    assert len(lost) == 2
    for i in lost:
        assert par[i].status == "failed" and not par[i].success
        assert "worker" in par[i].message and "died" in par[i].message
    assert_same_runs(par, seq, skip=lost)
    assert len(run_records(store)) == 4  # the lost runs are not stored...
    counter = []
    resumed = sweep(p, store=store, callback=lambda r: counter.append(1) if r.nit == 0 else None)
    assert len(counter) == 2  # ...so a resumed sweep runs exactly them
    assert_same_runs(resumed, seq)


@pytest.mark.parametrize("ratio", [pytest.param(10.0, marks=pytest.mark.slow), 9.0])
def test_readme_sweep_has_the_same_statuses_sequentially_and_on_dask(client, monkeypatch,
                                                                    ratio):
    """README's sweep (5 repetitions of its tuned GD and diag_newton) gives the same statuses
    and iterations in this process and on the 2-worker cluster: runs resumed here and rerun
    there from their start feed one decision per entry (they used to end "converged 3,
    censored 2" on Dask). Censoring's clock is the work done (a run spent its iterations, the
    leader took its iterations to the target), so that the comparison is the executors', not
    the load's: at 1,600 iterations GD is 9.9 times diag_newton's 161."""
    from optcmp.sweep import censor

    monkeypatch.setattr(censor, "measures", lambda run, best: (
        float(run.nit), float(best.nit_to_target), "s CPU"))
    problem = LinearRegression(n_samples=20_000)
    specs = [optcmp.gd(learning_rate=0.001), optcmp.diag_newton(learning_rate=1.0)]
    seq = optcmp.compare(problem, specs, tol=1e-3, repeats=5, censor_ratio=ratio,
                         progress=False)
    par = optcmp.compare(problem, specs, tol=1e-3, repeats=5, censor_ratio=ratio,
                         progress=False, executor=client)
    assert [(r.label, r.status, r.nit) for r in par] == [(r.label, r.status, r.nit) for r in seq]
    gd = {(r.status, r.nit) for r in seq if r.optimizer == "gd"}
    assert gd == ({("converged", 5179)} if ratio == 10.0 else {("censored", 1600)})
