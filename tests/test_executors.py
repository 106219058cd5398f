"""Executors without Dask: the shared per-run task, thread and process pools, host sharing."""

from __future__ import annotations

import multiprocessing
import socket
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest
from conftest import lr_a

import optcmp
from optcmp.engine.config import RunConfig
from optcmp.engine.host import host_activity
from optcmp.executors import ProblemRef, RunTask, execute_run
from optcmp.fingerprint import data_fingerprint
from optcmp.problems import LinearRegression
from optcmp.stopping import Divergence, MaxIter, RelativeSuboptimality

RULE = RelativeSuboptimality(1e-8) | MaxIter(3000) | Divergence()
OPTS = [optcmp.diag_newton(), optcmp.lbfgs()]


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


def small() -> LinearRegression:
    return LinearRegression(n_samples=200, seed=3, init="normal")


def key(comp):
    return [(r.label, r.seed, r.status, r.nit, r.fun) for r in comp]


def test_sequential_runs_record_host_and_no_sharing():
    comp = optcmp.compare(small(), OPTS, stopping=RULE, repeats=2, progress=False)
    for r in comp:
        assert r.conditions.host == socket.gethostname()
        assert r.conditions.concurrency == 1 and r.conditions.shared_host is False
        assert r.timing.started_at is not None and r.timing.started_at <= r.timing.finished_at
    assert "shared their host" not in comp.table()


def test_host_activity_counts_overlapping_runs():
    with host_activity() as a:
        with host_activity() as b:
            pass
        with host_activity() as c:
            pass
    with host_activity() as d:
        pass
    assert (a.peak, b.peak, c.peak, d.peak) == (2, 2, 2, 1)


def test_thread_pool_matches_sequential_and_flags_shared_timing():
    barrier = threading.Barrier(2, timeout=60)

    def meet(r):  # both runs are surely active at once: they wait for each other
        if r.nit == 0:
            barrier.wait()

    seq = optcmp.compare(lr_a(), OPTS, stopping=RULE, progress=False)
    with ThreadPoolExecutor(max_workers=2) as ex:
        with pytest.warns(UserWarning, match=r"^2 of 2 runs shared their host with other runs "
                                             r"\(up to 2 at once\): .*time comparisons need the "
                                             r"default sequential execution \(executor=None\)$"):
            par = optcmp.compare(lr_a(), OPTS, stopping=RULE, progress=False, executor=ex,
                                 callback=meet)
    assert key(par) == key(seq)
    assert [(r.conditions.concurrency, r.conditions.shared_host) for r in par] == [(2, True), (2, True)]
    assert "2 run(s) shared their host" in par.table()
    assert par.to_frame()["shared_host"].tolist() == [True, True]
    assert_warned_once(par)


def assert_warned_once(comp) -> None:
    """compare() warned already: the summary's fairness checks do not repeat it (same runs),
    the issue stays listed, and copies of the runs (e.g. loaded back) are warned about again."""
    import copy
    import warnings

    from optcmp.analysis.stats.fairness import UnfairComparisonWarning, check_fairness

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        comp.summary_table()
    assert not [w for w in rec if "shared their host" in str(w.message)]
    assert any("shared their host with other optcmp runs" in m for m in comp.fairness_issues())
    with pytest.warns(UnfairComparisonWarning,
                      match=r"2 run\(s\) shared their host with other optcmp runs while timed "
                            r"\(up to 2 at once, from an executor or from other optcmp "
                            r"processes\): their timings contend"):
        check_fairness([copy.copy(r) for r in comp.runs])


def test_sequential_runs_overlapping_another_sweep_say_so():
    """executor=None and still shared: the overlap came from elsewhere in this process (here a
    registered activity standing in for another sweep); the warning names that cause."""
    with host_activity():
        with pytest.warns(UserWarning) as rec:
            comp = optcmp.compare(lr_a(), OPTS, stopping=RULE, progress=False)
    msgs = [str(w.message) for w in rec if "host" in str(w.message)]
    assert msgs == ["2 of 2 runs overlapped with other optcmp runs of this process (up to 2 "
                    "at once): their timings contend and are flagged shared_host; for time "
                    "comparisons run one sweep at a time"]
    assert [(r.conditions.concurrency, r.conditions.shared_host) for r in comp] == [(2, True), (2, True)]
    assert_warned_once(comp)


@pytest.mark.filterwarnings("ignore:.*shared their host:UserWarning")
def test_process_pool_rebuilds_a_generated_problem():
    # censoring compares CPU times, which two runs at once on two cores change: off here
    seq = optcmp.compare(small(), OPTS, stopping=RULE, repeats=2, censor_ratio=None,
                         progress=False)
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        par = optcmp.compare(small(), OPTS, stopping=RULE, repeats=2, censor_ratio=None,
                             progress=False, executor=ex)
    assert [(r.label, r.seed, r.status, r.nit) for r in par] == [
        (r.label, r.seed, r.status, r.nit) for r in seq]
    for a, b in zip(seq, par):
        assert b.fun == pytest.approx(a.fun, rel=1e-12)


def test_process_pool_refuses_a_problem_built_from_arrays():
    with ProcessPoolExecutor(max_workers=1) as ex:
        with pytest.raises(ValueError, match="LR-A.*cannot be rebuilt.*dask.distributed.Client"):
            optcmp.compare(lr_a(), OPTS, stopping=RULE, progress=False, executor=ex)


def test_executor_must_be_an_executor_or_a_dask_client():
    with pytest.raises(TypeError, match="concurrent.futures.Executor or a dask"):
        optcmp.compare(small(), OPTS, stopping=RULE, progress=False, executor=object())


def test_a_worker_that_generates_other_data_fails_the_run_without_storing_it():
    p = small()
    task = RunTask(index=0, key="", optimizer=optcmp.lbfgs(), config=RunConfig(stopping=RULE))
    res, storable = execute_run(task, ProblemRef(p.spec(), "0" * 64))
    assert res.status == "failed" and not storable
    assert "other data" in res.message and res.problem == "linear_regression"
    res, storable = execute_run(task, ProblemRef(p.spec(), data_fingerprint(p)))
    assert res.status == "converged" and storable


def test_optimizer_specs_pickle():
    import pickle

    s = optcmp.adadelta(rho=0.9, label="mine")
    t = pickle.loads(pickle.dumps(s))
    assert t == s and dict(t.hyperparameters) == dict(s.hyperparameters) and t.label == "mine"


def test_ctrl_c_with_a_thread_pool_keeps_finished_runs(tmp_path):
    path = tmp_path / "runs.jsonl"
    seen = []

    def interrupt_third(r):
        if r.nit == 0:
            seen.append(1)
            if len(seen) == 3:
                raise KeyboardInterrupt

    with ThreadPoolExecutor(max_workers=1) as ex:
        with pytest.raises(optcmp.store.Interrupted, match="2 of 6 runs are finished") as info:
            optcmp.compare(small(), OPTS + [optcmp.gd()], stopping=RULE, repeats=2,
                           censor_ratio=None,  # one execution per run: the callback counts
                           progress=False, executor=ex, store=path, callback=interrupt_third)
    assert len(info.value.comparison) == 2
    resumed = optcmp.compare(small(), OPTS + [optcmp.gd()], stopping=RULE, repeats=2,
                             censor_ratio=None, progress=False, store=path)
    assert resumed.settings["store"]["reused"] == 2 and resumed.settings["store"]["executed"] == 4


def test_results_of_runs_that_never_started_are_complete():
    """Skipped and failed-before-start results carry their host and times; a worker whose
    cache already holds the problem still refuses a client's other data fingerprint."""
    p = small()
    execute_run(RunTask(index=0, key="", optimizer=optcmp.gd(), config=RunConfig(max_iter=2)),
                ProblemRef(p.spec(), data_fingerprint(p)))  # the worker's cache holds p now
    task = RunTask(index=0, key="", optimizer=optcmp.lbfgs(), config=RunConfig(stopping=RULE),
                   skip_message="backend 'torch' is not installed")
    res, storable = execute_run(task, p)
    assert (res.status, storable, res.conditions.host) == ("skipped", False, socket.gethostname())
    assert res.timing.started_at is not None and res.timing.started_at <= res.timing.finished_at
    res, _ = execute_run(task, ProblemRef(p.spec(), "0" * 64))
    assert res.status == "failed" and res.conditions.host == socket.gethostname()
    assert res.timing.started_at <= res.timing.finished_at
