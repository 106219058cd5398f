"""optcmp.engine: one run, one path; RunConfig validated once; every run owns its stopping state."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import lr_a

import optcmp
from optcmp.engine.config import RunConfig
from optcmp.engine.runner import run
from optcmp.problems import LinearRegression
from optcmp.stopping import Divergence, MaxIter, RelativeChange, RelativeSuboptimality


def _stall_rule():
    # RelativeChange keeps the previous objective between observations: per-run state
    return (RelativeChange(1e-10, patience=3) | RelativeSuboptimality(1e-300) | MaxIter(50_000)
            | Divergence())


class _Lockstep:
    """A callback that holds concurrent runs in step: every observation waits for the others.

    The runs then interleave observation by observation, however the machine schedules its
    threads; once a run has ended, the others go on alone (the barrier breaks).
    """

    def __init__(self, n: int) -> None:
        self.barrier = threading.Barrier(n, timeout=10)

    def __call__(self, intermediate_result) -> None:
        if not self.barrier.broken:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                pass


def _key(r):
    return (r.status, r.nit, r.fun)


def test_sequential_runs_of_a_stall_rule_stop_at_the_same_iteration():
    p = lr_a()
    rule = _stall_rule()
    runs = [optcmp.run(p, optcmp.gd(0.05), stopping=rule, threads=1) for _ in range(2)]
    assert runs[0].status == "stalled" and runs[0].nit == runs[1].nit == 125
    assert _key(runs[0]) == _key(runs[1])


def test_four_identical_runs_on_a_thread_pool_give_identical_results():
    """No race: concurrent runs each work on their own copy of one shared rule object."""
    p = lr_a()
    rule = _stall_rule()
    sequential = optcmp.run(p, optcmp.gd(0.05), stopping=rule, threads=1)
    with ThreadPoolExecutor(4) as pool, pytest.warns(UserWarning, match="shared their host"):
        comp = optcmp.compare(p, [optcmp.gd(0.05, label=f"gd{i}") for i in range(4)],
                              stopping=rule,
                              executor=pool, threads=1, callback=_Lockstep(4), progress=False)
    assert all(r.conditions.shared_host for r in comp), "the runs did not overlap: the test proves nothing"
    assert [_key(r) for r in comp] == [_key(sequential)] * 4
    stall = rule.rules()[0]
    assert stall._last is None and stall._count == 0  # the caller's rule was never touched


def _nested(share: bool, monkeypatch) -> tuple[int, int]:
    """A run whose callback runs a second, identical run at its observation 124.

    The runs stall at 125 (three changes below 1e-10 in a row). A shared rule would leave the
    inner run's count of small changes (3) to the outer run, which would stop at 124.
    """
    from optcmp.engine import runner

    if share:  # what runs did before each owned its rule: reset the caller's object, use it
        monkeypatch.setattr(runner, "own_rule", lambda rule: (rule.reset(), rule)[1])
    p, inner = lr_a(), []

    def callback(res):
        if res.nit == 124:
            inner.append(run(p, optcmp.gd(0.05), RunConfig(stopping=rule, threads=1)))

    rule = _stall_rule()
    outer = run(p, optcmp.gd(0.05), RunConfig(stopping=rule, threads=1, callback=callback))
    return outer.nit, inner[0].nit


def test_a_run_inside_another_run_shares_no_state(monkeypatch):
    assert _nested(False, monkeypatch) == (125, 125)


def test_the_nested_run_test_fails_when_runs_share_their_rule(monkeypatch):
    """Control: with one rule object for both runs, the outer run's stall test is corrupted."""
    assert _nested(True, monkeypatch) == (124, 125)


def test_run_takes_a_config_or_its_settings_as_keywords_alike():
    p = lr_a()
    cfg = RunConfig(tol=1e-8, max_iter=5000, threads=1)
    a = run(p, optcmp.gd(0.1), cfg)
    b = optcmp.run(p, optcmp.gd(0.1), tol=1e-8, max_iter=5000, threads=1)
    assert a.status == b.status == "converged"
    assert a.nit_to_target == b.nit_to_target and a.fun == b.fun
    np.testing.assert_array_equal(a.x, b.x)
    assert run(p, "lbfgs").status == "converged"  # RunConfig() by default


def test_run_config_is_frozen_and_validated_once():
    cfg = RunConfig(backend="np", device=" cpu ", dtype=np.float32)
    assert (cfg.backend, cfg.device, cfg.dtype) == ("numpy", "cpu", "float32")
    with pytest.raises(AttributeError):
        cfg.seed = 3  # type: ignore[misc]
    assert cfg.replace(seed=3).seed == 3 and cfg.seed == 0
    assert RunConfig(backend="torch", device="cuda").run_device == "cuda"
    assert RunConfig(backend="numpy", device="cuda").run_device is None
    with pytest.raises(ValueError, match="unknown backend 'mxnet'"):
        RunConfig(backend="mxnet")
    with pytest.raises(ValueError, match="dtype must be one of"):
        RunConfig(dtype="float16")
    with pytest.raises(ValueError, match="eval_every must be a positive integer, got 0"):
        RunConfig(eval_every=0)
    with pytest.raises(ValueError, match="threads must be a positive integer or None, got 0"):
        RunConfig(threads=0)
    with pytest.raises(ValueError, match="eval_every must be a positive integer, got 2.7"):
        RunConfig(eval_every=2.7)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="eval_every must be a positive integer, got '5'"):
        RunConfig(eval_every="5")  # type: ignore[arg-type]
    assert RunConfig(eval_every=np.int64(5), threads=np.int64(1)).eval_every == 5
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got 1.5"):
        RunConfig(seed=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        RunConfig(seed=-1)
    with pytest.raises(ValueError, match="repeat must be a non-negative integer, got -1"):
        RunConfig(repeat=-1)
    with pytest.raises(ValueError, match=r"dtype must be one of .*got None"):
        RunConfig(dtype=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dtype must be one of .*got 42"):
        RunConfig(dtype=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"tol must be a relative suboptimality in \(0, 1\)"):
        RunConfig(tol=2.0)
    with pytest.raises(ValueError, match="max_iter must be a positive integer, got 0"):
        RunConfig(max_iter=0)
    with pytest.raises(ValueError, match="max_time must be a finite number > 0"):
        RunConfig(max_time=-1.0)
    with pytest.raises(TypeError, match="stopping must be an optcmp.stopping.Rule, got str"):
        RunConfig(stopping="tol")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callback must be callable"):
        RunConfig(callback=42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="config must be an optcmp.engine.RunConfig, got dict"):
        run(lr_a(), optcmp.gd, {"tol": 1e-3})  # type: ignore[arg-type]


def test_a_bad_callback_is_refused_before_any_run():
    with pytest.raises(TypeError, match="callback must be callable"):
        optcmp.compare(lr_a(), [optcmp.gd(0.1)], callback=42, progress=False)


def test_the_stopping_rule_of_the_config_is_copied_per_run():
    p = lr_a()
    rule = RelativeChange(1e-3) | RelativeSuboptimality(1e-300) | MaxIter(10_000)
    r1 = run(p, optcmp.gd(0.1), RunConfig(stopping=rule, threads=1))
    r2 = run(p, optcmp.gd(0.1), RunConfig(stopping=rule, threads=1))
    assert r1.status == "stalled" and r1.nit == r2.nit
    assert rule.rules()[0]._last is None  # the runs kept their state to themselves


def test_run_takes_overrides_of_its_config():
    p = lr_a()
    a = run(p, optcmp.gd(0.1), RunConfig(max_iter=7, threads=1), seed=2)
    b = optcmp.run(p, optcmp.gd(0.1), max_iter=7, threads=1, seed=2)
    assert (a.nit, a.seed, a.fun) == (b.nit, b.seed, b.fun) == (7, 2, b.fun)
    with pytest.raises(TypeError, match=r"run\(\) got unexpected keyword argument\(s\) 'tols'"):
        run(p, optcmp.gd(0.1), tols=1e-3)
    with pytest.raises(TypeError, match=r"run\(\) got unexpected keyword argument"):
        optcmp.run(p, optcmp.gd(0.1), backends="numpy")


def test_a_run_records_its_host_and_times_itself():
    """The result is complete when the run builds it: host, start, end, runs active at once."""
    import socket
    import time

    t0 = time.time()
    r = optcmp.run(lr_a(), optcmp.gd(0.1), max_iter=3)
    assert r.conditions.host == socket.gethostname() and (r.conditions.concurrency, r.conditions.shared_host) == (1, False)
    assert t0 <= r.timing.started_at <= r.timing.finished_at <= time.time()


@pytest.mark.parametrize("execution", ["step", "fused"])
def test_minibatch_runs_observe_the_full_objective_through_the_monitor(execution, monkeypatch):
    from optcmp.engine.monitor import Monitor

    seen = []
    real = Monitor.observe_full

    def spy(self, nit, x, nfev, njev):
        seen.append(nit)
        return real(self, nit, x, nfev, njev)

    monkeypatch.setattr(Monitor, "observe_full", spy)
    r = optcmp.run(lr_a(), optcmp.sgd(0.05, batch_size=64), max_iter=40, eval_every=8,
                       execution=execution, threads=1)
    assert r.conditions.execution == execution and seen == [8, 16, 24, 32, 40]
    assert list(r.trace.iteration) == [0, 8, 16, 24, 32, 40]


@pytest.mark.parametrize("spec", [optcmp.gd(0.1), optcmp.sgd(0.05, batch_size=64), "lbfgs"],
                         ids=["gd", "sgd", "lbfgs"])
def test_a_run_frees_its_adapter_and_placed_data_when_it_returns(spec, monkeypatch):
    """No reference cycle keeps a finished run's adapter alive: its placed data (a copy of the
    training data on the device) are freed at once, not at the next garbage collection (a
    cycle made the next run's setup several times slower on a million rows)."""
    import gc
    import weakref

    from optcmp.engine.session import Session

    refs = []
    start = Session.start

    def spy(self, *args, **kwargs):
        adapter = start(self, *args, **kwargs)
        refs.append(weakref.ref(adapter))
        return adapter

    monkeypatch.setattr(Session, "start", spy)
    gc.disable()
    try:
        r = optcmp.run(lr_a(), spec, max_iter=20, threads=1)
        assert r.nit > 0 and refs and refs[0]() is None
    finally:
        gc.enable()


def test_run_takes_a_config_with_keyword_overrides_and_names_unknown_settings():
    p = LinearRegression(n_samples=200, seed=0)
    r = optcmp.run(p, optcmp.gd, RunConfig(max_iter=3), seed=1)
    assert r.nit == 3 and r.seed == 1
    with pytest.raises(TypeError, match="RunConfig has no setting 'tolerance'; the settings "
                                        "are: backend, device"):
        RunConfig().replace(tolerance=1e-3)
    with pytest.raises(ValueError, match="tol must be a number in \\(0, 1\\), got '1e-3'"):
        RunConfig(tol="1e-3")  # type: ignore[arg-type]


def test_check_equivalence_refuses_settings_it_does_not_use_and_steps_by_default():
    p = LinearRegression(n_samples=200, seed=0)
    with pytest.raises(TypeError, match="'tol' do not apply"):
        optcmp.check_equivalence(p, optcmp.gd(0.1), backends=("numpy",), steps=2, tol=1e-3)
    res = optcmp.check_equivalence(p, optcmp.gd(0.1), backends=("numpy",), steps=2,
                                   config=RunConfig(gradient="autodiff"))
    assert res.executions == {"numpy": "step"}  # the config's "auto" is the check's "step"


def test_runs_of_one_problem_from_one_start_evaluate_it_once():
    """f(x0) and its gradient are computed by the first run and kept on the problem: a second
    run from the same x0 reads them (one evaluation fewer, the same f0 and first trace row), a
    run from another seed computes its own."""
    p = LinearRegression(n_samples=2_000, seed=3, init="normal")
    calls = []
    full = p.value_and_grad

    def counted(x, batch):
        calls.append(1)
        return full(x, batch)

    p.value_and_grad = counted
    runs, counts = [], []
    for seed in (0, 0, 1):
        n = len(calls)
        runs.append(optcmp.run(p, optcmp.gd(0.1), backend="numpy", max_iter=3, seed=seed,
                               threads=1))
        counts.append(len(calls) - n)
    assert counts[1] == counts[0] - 1 and counts[2] == counts[0]
    assert runs[0].f0 == runs[1].f0 == float(full(p.init_params(0), p.train_data)[0])
    assert runs[0].trace.grad_norm[0] == runs[1].trace.grad_norm[0] > 0
    assert runs[2].f0 != runs[0].f0


_SCALE = np.array([1.0])


def test_an_objective_reading_mutable_state_is_evaluated_afresh_at_x0():
    """f(x0) of a user's objective is not kept across runs: after the module-level array it
    reads changes from 1 to 100, f0 = 100 * 0.5 * |x0|^2 = 50 (a kept value would say 0.5)."""
    def fun(ops, x, data):
        return 0.5 * _SCALE[0] * ops.sum(x * x)

    p = optcmp.problems.from_function(fun, np.array([1.0, 0.0]), optimum=0.0)
    f0 = [optcmp.run(p, optcmp.gd(0.1), backend="numpy", max_iter=2).f0]
    _SCALE[0] = 100.0
    try:
        f0.append(optcmp.run(p, optcmp.gd(0.1), backend="numpy", max_iter=2).f0)
    finally:
        _SCALE[0] = 1.0
    assert f0 == [0.5, 50.0]


def test_a_huge_eval_every_observes_at_the_budget_on_every_backend():
    """eval_every = 2^31 (past int32) runs to the budget as eval_every = 10^6 does."""
    p = LinearRegression(n_samples=1_000, seed=0)
    for backend in ("numpy", "tensorflow", "jax"):
        pytest.importorskip({"numpy": "numpy", "tensorflow": "tensorflow", "jax": "jax"}[backend])
        r = optcmp.run(p, optcmp.sgd(1e-4, batch_size=64), backend=backend, eval_every=2**31,
                       max_iter=100, threads=1)
        assert r.nit == 100 and r.status == "max_iter", backend


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_a_run_that_ends_between_observations_ends_its_trace_at_its_last_iterate(backend):
    """A budget of 100 steps with an observation every 30 (or every 1,000) records its 100th
    iterate's judged value as the trace's last row (the trace once ended at step 90 or 0)."""
    pytest.importorskip(backend)
    p = LinearRegression(n_samples=2_000, seed=0)
    for every, rows in ((30, [0, 30, 60, 90, 100]), (1000, [0, 100])):
        r = optcmp.run(p, optcmp.sgd(1e-4, batch_size=64), backend=backend, eval_every=every,
                       max_iter=100, threads=1, tol=1e-12)
        assert r.status == "max_iter" and list(r.trace.iteration) == rows
        assert r.trace.fun[-1] == r.fun == p.fun64(r.x) and r.trace.judged[-1]
        assert r.trace.time[-1] == r.time
