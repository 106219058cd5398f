"""run() and compare(): isolation, time-to-target semantics, callbacks, input checks."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import lr_a, lr_b, lr_s, needs_cuda, needs_tf, needs_torch

import optcmp
from optcmp import MaxIter, RelativeSuboptimality
from optcmp.optimizers import HyperParam, positive_float
from optcmp.optimizers import base as obase
from optcmp.optimizers.gd import GDRule
from optcmp.problems import LinearRegression


# ---------------------------------------------------------------------- a throwaway optimizer
class BoomRule(GDRule):
    """GD whose fourth update raises: the warm-up step and two timed steps go through."""

    def __init__(self) -> None:
        self.calls = 0

    def update(self, ops, x, g, state, hp, curvature):
        self.calls += 1
        if self.calls == 4:
            raise FloatingPointError("boom at step 3")
        return super().update(ops, x, g, state, hp, curvature)


@pytest.fixture
def boom(monkeypatch):
    info = obase.OptimizerInfo(
        name="boom", params={"learning_rate": HyperParam(
            "learning_rate", 0.1, positive_float("learning_rate"))},
        summary="raises", rule=BoomRule())
    monkeypatch.setitem(obase._OPTIMIZERS, "boom", info)
    return obase.get_optimizer("boom")


def test_a_raising_optimizer_is_failed_and_the_others_finish(boom) -> None:
    comp = optcmp.compare(lr_a(), [optcmp.gd(0.1), boom, optcmp.lbfgs], progress=False)
    by = {r.optimizer: r for r in comp}
    assert by["boom"].status == "failed" and not by["boom"].success
    assert by["boom"].message == "FloatingPointError: boom at step 3"
    assert by["boom"].nit == 2 and len(by["boom"].trace) == 2  # what ran before is kept
    assert by["gd"].status == "converged" and by["lbfgs"].status == "converged"
    assert "boom on numpy: failed: FloatingPointError: boom at step 3" in comp.table()


def test_compare_accepts_specs_factories_and_names() -> None:
    comp = optcmp.compare(lr_a(), [optcmp.gd(learning_rate=0.1), optcmp.adadelta, "L-BFGS",
                                   "diag-newton", optcmp.sgd(learning_rate=0.05)],
                          max_iter=5000, censor_ratio=None, progress=False)
    assert [r.optimizer for r in comp] == ["gd", "adadelta", "lbfgs", "diag_newton", "sgd"]
    assert all(r.status == "converged" for r in comp), [r.message for r in comp]
    assert all(r.backend == "numpy" and r.seed == 0 and r.repeat == 0 for r in comp)
    assert comp.settings["target"] == "RelativeSuboptimality(tol=1e-06)"
    # every run starts from the same x0 and sees the same f0, f*
    assert len({r.f0 for r in comp}) == 1 and len({r.fstar for r in comp}) == 1
    best = comp.best()
    assert best is not None and best.time_to_target == min(r.time_to_target for r in comp)
    # a single spec, name or factory is accepted too
    assert len(optcmp.compare(lr_a(), optcmp.lbfgs, progress=False)) == 1
    assert len(optcmp.compare(lr_a(), "gd", progress=False)) == 1


def test_duplicate_labels_are_made_unique() -> None:
    comp = optcmp.compare(lr_a(), [optcmp.gd(0.1), optcmp.gd(0.2)], progress=False)
    assert [r.label for r in comp] == ["gd(learning_rate=0.1)", "gd(learning_rate=0.2)"]


def test_repeats_use_consecutive_seeds() -> None:
    X = np.random.default_rng(0).standard_normal((200, 2))
    p = LinearRegression.from_arrays(X, X @ [1.0, 2.0], init="normal")
    comp = optcmp.compare(p, [optcmp.gd(0.2)], repeats=3, seed=10, progress=False)
    assert [(r.seed, r.repeat) for r in comp] == [(10, 0), (11, 1), (12, 2)]
    assert len({r.f0 for r in comp}) == 3  # a different initial point each repetition
    assert comp.settings["repeats"] == 3


# ---------------------------------------------------------------------- time-to-target
def test_time_to_target_semantics_full_batch() -> None:
    r = optcmp.run(lr_s(100), optcmp.gd(learning_rate=0.1), tol=1e-6)
    assert r.status == "converged" and r.nit_to_target == 34  # N = 100
    # step k + 1 computes f(x_k): the target is known after nit_to_target + 1 steps
    assert r.nit == r.nfev == r.njev == 35
    assert r.nfev_to_target == r.njev_to_target == 35
    t = r.trace
    assert t.iteration.tolist() == list(range(35))
    hit = int(np.flatnonzero(t.iteration == r.nit_to_target)[0])
    assert t.time[hit] == r.time_to_target and t.nfev[hit] == r.nfev_to_target
    assert np.all(np.diff(t.time) >= 0) and t.time[0] == 0.0
    assert r.time_to_target <= r.time <= r.timing.wall
    rel = t.relative_suboptimality(r.f0, r.fstar)
    assert rel[hit] <= 1e-6 < rel[hit - 1]
    assert t.fun[0] == r.f0 and t.grad_norm[0] > 0


def test_time_to_target_semantics_lbfgs() -> None:
    r = optcmp.run(lr_b(), optcmp.lbfgs(), tol=1e-6)
    assert r.status == "converged" and r.nit_to_target == r.nit == 20
    assert r.nfev_to_target == r.nfev >= r.nit and r.njev == r.nfev
    assert r.trace.iteration[-1] == 20 and r.trace.nfev[-1] == r.nfev_to_target
    assert r.trace.time[-1] == r.time_to_target
    assert "scipy" in r.implementation


def test_time_to_target_semantics_sgd() -> None:
    r = optcmp.run(lr_s(1000), optcmp.sgd(learning_rate=0.05, batch_size=100), tol=1e-4)
    # the full objective is evaluated once per epoch (10 steps), off the clock
    assert r.status == "converged"
    assert r.nit_to_target % 10 == 0 and r.nit == r.nit_to_target == r.nfev_to_target
    assert r.trace.iteration.tolist() == list(range(0, r.nit + 1, 10))
    assert r.outcome.epochs == r.nit / 10
    r2 = optcmp.run(lr_s(1000), optcmp.sgd(learning_rate=0.05, batch_size=100), tol=1e-4,
                        eval_every=3)
    assert r2.nit_to_target % 3 == 0 and r2.trace.iteration[1] == 3


def test_x0_already_at_target_converges_at_iteration_zero() -> None:
    X = np.random.default_rng(0).standard_normal((50, 2))
    p = LinearRegression.from_arrays(X, np.zeros(50))  # x0 = 0 is the exact minimizer
    for spec in (optcmp.gd(0.1), optcmp.lbfgs(), optcmp.sgd(learning_rate=0.1, batch_size=25)):
        r = optcmp.run(p, spec)
        assert r.status == "converged" and r.success, r.message
        assert r.nit_to_target == 0 and r.nit == 0 and r.nfev == 0
        assert r.time_to_target == 0.0 and r.time == 0.0
        np.testing.assert_array_equal(r.x, np.zeros(3))


def test_max_iter_status_and_no_time_to_target() -> None:
    r = optcmp.run(lr_b(), optcmp.gd(), max_iter=50)
    assert r.status == "max_iter" and not r.success and r.nit == 50
    assert r.time_to_target is None and r.nit_to_target is None
    assert r.message == "budget exhausted: MaxIter(n=50)"


def test_max_time_status() -> None:
    rule = optcmp.stopping.default_stopping(1e-6, max_time=0.02, max_iter=None)
    r = optcmp.run(lr_b(), optcmp.gd(), stopping=rule)
    assert r.status == "timeout" and r.time >= 0.02 and r.time_to_target is None


def test_max_evals_status_on_step_loop() -> None:
    r = optcmp.run(lr_b(), optcmp.adadelta(), max_evals=7)
    assert r.status == "max_evals" and r.nfev == 7


def test_divergence_inside_compare_does_not_stop_the_others() -> None:
    x = np.array([1, 2, 3, 4, 5, 100, 200.0])
    p = LinearRegression.from_arrays(x[:, None], 2 * x)
    comp = optcmp.compare(p, [optcmp.gd(0.01), optcmp.lbfgs], progress=False)
    assert [r.status for r in comp] == ["diverged", "converged"]


# ---------------------------------------------------------------------- callbacks
def test_callback_receives_intermediate_results() -> None:
    seen = []
    r = optcmp.run(lr_a(), optcmp.gd(0.1), max_iter=5, callback=seen.append)
    assert [s.iterate for s in seen] == [0, 1, 2, 3, 4]
    assert [s.fun for s in seen] == r.trace.fun.tolist()
    assert seen[0].x.shape == (4,) and seen[1].fun == pytest.approx(4.0918780, abs=5e-8)
    np.testing.assert_allclose(seen[1].x, [0.29513334, -0.37602813, 0.10902265, 0.01611765],
                               atol=5e-9)
    assert all(s.time >= 0 and s.nfev >= 0 for s in seen)


def test_callback_stop_iteration_gives_stopped() -> None:
    def cb(res):
        if res.iterate == 3:
            raise StopIteration

    # gd(0.1) explodes on LR-B (f = 1e16 at iteration 1, a divergence); "auto" is stable
    for spec in (optcmp.gd("auto"), optcmp.lbfgs()):
        r = optcmp.run(lr_b(), spec, callback=cb)
        assert r.status == "stopped" and not r.success
        assert r.message == "callback raised StopIteration"
        assert r.trace.iteration[-1] == 3


def test_callback_error_is_failed() -> None:
    def cb(res):
        raise RuntimeError("bad callback")

    r = optcmp.run(lr_a(), optcmp.gd(0.1), callback=cb)
    assert r.status == "failed" and r.message == "RuntimeError: bad callback"


def test_callback_and_monitoring_are_off_the_clock(monkeypatch) -> None:
    """A fake clock that only moves inside the callback: the timed seconds must stay 0."""
    import importlib

    from optcmp.timing import Stopwatch

    oc = importlib.import_module("optcmp.engine.session")

    now = [0.0]
    monkeypatch.setattr(oc, "Stopwatch",
                        lambda sync, **kw: Stopwatch(sync, clock=lambda: now[0], **kw))

    def slow_callback(res):
        now[0] += 100.0  # a very expensive callback

    r = optcmp.run(lr_s(100), optcmp.gd(0.1), max_iter=5, callback=slow_callback)
    assert r.status == "max_iter" and r.nit == 5
    assert r.time == 0.0 and np.all(r.trace.time == 0.0)


# ---------------------------------------------------------------------- bad inputs
def test_compare_input_errors() -> None:
    p = lr_a()
    with pytest.raises(ValueError, match=r"unknown backend 'mxnet'; valid backends: numpy, torch, tensorflow, jax"):
        optcmp.compare(p, [optcmp.gd], backends=["mxnet"], progress=False)
    with pytest.raises(ValueError, match="unknown optimizer 'adamax'"):
        optcmp.compare(p, ["adamax"], progress=False)
    with pytest.raises(ValueError, match="optimizers is empty"):
        optcmp.compare(p, [], progress=False)
    with pytest.raises(ValueError, match="repeats must be a positive integer, got 0"):
        optcmp.compare(p, [optcmp.gd], repeats=0, progress=False)
    with pytest.raises(ValueError, match=r"dtype must be one of \('float64', 'float32'\), got 'int8'"):
        optcmp.compare(p, [optcmp.gd], dtype="int8", progress=False)
    with pytest.raises(ValueError, match="has no budget"):
        optcmp.compare(p, [optcmp.gd], stopping=RelativeSuboptimality(1e-6), progress=False)
    with pytest.raises(TypeError, match="stopping must be an optcmp.stopping.Rule"):
        optcmp.run(p, optcmp.gd, stopping="tol")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        optcmp.compare(p, [3.0], progress=False)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="eval_every must be a positive integer"):
        optcmp.run(p, optcmp.sgd, eval_every=0)
    # numpy always runs on the CPU, whatever device the framework backends get
    with pytest.warns(UserWarning, match="numpy backend always runs on the CPU"):
        assert optcmp.run(p, optcmp.gd, device="cuda", max_iter=2).device == "cpu"


def test_rule_without_target_warns() -> None:
    with pytest.warns(UserWarning, match="has no target"):
        r = optcmp.run(lr_a(), optcmp.gd(0.1), stopping=MaxIter(3))
    assert r.status == "max_iter"


def test_missing_backend_is_skipped_or_strict(monkeypatch) -> None:
    import optcmp.frameworks as ob

    real = ob.is_available
    monkeypatch.setattr(ob, "is_available", lambda n: False if n == "torch" else real(n))
    with pytest.warns(UserWarning, match="backend 'torch' is not installed"):
        comp = optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["numpy", "torch"],
                              progress=False)
    assert [(r.backend, r.status) for r in comp] == [("numpy", "converged"), ("torch", "skipped")]
    # optcmp is on no package index: the hint installs the extra from a checkout, as README does
    assert comp[1].message == ("backend 'torch' is not installed (pip install -c "
                               "constraints/ci.txt '.[torch]' in a checkout of optcmp)")
    with pytest.raises(optcmp.frameworks.BackendUnavailable,
                       match=r"pip install -c constraints/ci.txt '\.\[torch\]' in a checkout"):
        optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["torch"], strict=True,
                       progress=False)


def test_float32_target_is_confirmed_in_float64() -> None:
    """A float32 objective may round below f*: the target is checked in float64."""
    r = optcmp.run(lr_b(), optcmp.lbfgs(), dtype="float32", tol=1e-6)
    assert r.dtype == "float32" and r.status == "converged"
    assert r.x.dtype == np.float64
    assert 0.0 <= r.relative_suboptimality <= 1e-6
    g = optcmp.run(lr_s(1000), optcmp.gd(0.1), dtype="float32", tol=1e-6)
    assert g.status == "converged" and g.nit_to_target == 34


def test_converged_full_batch_run_returns_the_iterate_that_met_the_target() -> None:
    # f(x_k) becomes known during step k+1; the result must be x_k (which met the target), not
    # x_{k+1}, so the final relative suboptimality in float64 is within the tolerance.

    p = lr_a()
    r = optcmp.run(p, optcmp.gd(learning_rate=0.1), tol=1e-8)
    assert r.status == "converged"
    assert r.nit == r.nit_to_target + 1
    assert r.relative_suboptimality <= 1e-8
    assert r.fun == pytest.approx(r.trace.fun[-1], rel=1e-12)
    # x_k by hand: k GD steps from 0
    x = p.init_params(0)
    for _ in range(r.nit_to_target):
        x = x - 0.1 * p.value_and_grad(x, p.train_data)[1]
    np.testing.assert_allclose(r.x, x, rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------------- device and argument types
DEVICE_MSG = (r"device must be None or one of 'cpu', 'cuda', 'cuda:N', 'gpu', 'gpu:N' "
              r"\(N a device index\), got ")


@pytest.mark.parametrize("device", ["tpu", "", "cpu:0", "cuda:x", 3])
def test_a_bad_device_name_is_one_error_before_any_run(device) -> None:
    seen = []
    for backends in (["numpy"], ["numpy", "torch", "tensorflow"]):
        with pytest.raises(ValueError, match=DEVICE_MSG + repr(device)):
            optcmp.compare(lr_a(), [optcmp.gd(0.1), optcmp.lbfgs], backends=backends,
                           device=device, callback=seen.append, progress=False)
    with pytest.raises(ValueError, match=DEVICE_MSG + repr(device)):
        optcmp.run(lr_a(), optcmp.gd(0.1), device=device, callback=seen.append)
    assert seen == []  # nothing ran


@pytest.mark.parametrize("device", [None, "cpu", " CPU ", "cuda", "cuda:1", "GPU", "gpu:0"])
def test_check_device_accepts_the_documented_forms(device) -> None:
    from optcmp.frameworks import check_device

    assert check_device(device) == (None if device is None else device.strip())


def test_numpy_warns_once_that_it_runs_on_the_cpu() -> None:
    import warnings

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        comp = optcmp.compare(lr_a(), [optcmp.gd(0.1), optcmp.lbfgs], backends=["numpy"],
                              device="cuda", max_iter=3, progress=False)
    msgs = [str(w.message) for w in rec if "numpy" in str(w.message)]
    assert msgs == ["the numpy backend always runs on the CPU: device='cuda' applies to the "
                    "torch, tensorflow and jax backends only"]
    assert [r.device for r in comp] == ["cpu", "cpu"] and comp.settings["device"] == "cuda"
    with pytest.warns(UserWarning, match=r"numpy backend always runs on the CPU: device='gpu'"):
        r = optcmp.run(lr_a(), optcmp.gd(0.1), device="gpu", max_iter=2)
    assert r.device == "cpu" and r.status == "max_iter"


@needs_torch
def test_an_absent_cuda_device_is_one_error_before_any_run() -> None:
    from conftest import _cuda_available

    if _cuda_available():
        pytest.skip("this machine has a CUDA device")
    seen = []
    with pytest.warns(UserWarning, match="numpy backend always runs on the CPU"):
        with pytest.raises(ValueError, match=r"torch device 'cuda' is not available .*"
                                             r"available devices: \['cpu'\]"):
            optcmp.compare(lr_a(), [optcmp.gd(0.1), optcmp.lbfgs], backends=["numpy", "torch"],
                           device="cuda", callback=seen.append, progress=False)
    assert seen == []


@needs_tf
def test_an_absent_gpu_is_one_error_before_any_run_on_tensorflow() -> None:
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        pytest.skip("TensorFlow sees a GPU here")
    seen = []
    with pytest.raises(ValueError, match=r"TensorFlow device 'gpu:0' \(/GPU:0\) is not available"
                                         r".*available devices: \['/CPU:0'\]"):
        optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["tensorflow"], device="gpu:0",
                       callback=seen.append, progress=False)
    assert seen == []


@needs_torch
@needs_cuda
def test_cuda_runs_torch_on_the_gpu_and_numpy_on_the_cpu() -> None:
    with pytest.warns(UserWarning, match="numpy backend always runs on the CPU"):
        comp = optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["numpy", "torch"],
                              device="cuda", progress=False)
    by = {r.backend: r for r in comp}
    assert by["numpy"].device == "cpu" and by["torch"].device == "cuda:0"
    assert by["numpy"].status == by["torch"].status == "converged"
    assert by["torch"].nit_to_target == by["numpy"].nit_to_target
    assert by["torch"].fun == pytest.approx(by["numpy"].fun, rel=1e-10)


def test_problem_and_optimizers_of_the_wrong_type_are_type_errors() -> None:
    want = (r"^problem must be an optcmp Problem \(e\.g\. optcmp\.problems\.LinearRegression\(\)\), "
            r"got {}$")
    for bad, name in ((None, "None"), ("linear_regression", "str"), (3, "int")):
        with pytest.raises(TypeError, match=want.format(name)):
            optcmp.compare(bad, [optcmp.gd], progress=False)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=want.format(name)):
            optcmp.run(bad, optcmp.gd)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=want.format(name)):
            optcmp.make_stopping(bad)  # type: ignore[arg-type]
    for bad, name in ((None, "None"), (5, "int"), ({"gd": 1}, "dict")):
        with pytest.raises(TypeError, match=r"^optimizers must be a list of optimizer specs, "
                                            r"factories or names \(e\.g\. \[optcmp\.gd, 'lbfgs'\]\), "
                                            f"got {name}$"):
            optcmp.compare(lr_a(), bad, progress=False)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="an optimizer must be an OptimizerSpec .* got None"):
        optcmp.run(lr_a(), None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- progress bar
class _FakeBar:
    instances: list[_FakeBar] = []

    def __init__(self, *args, **kwargs) -> None:
        self.description = ""
        self.descriptions: list[str] = []
        self.n = kwargs.get("initial", 0)
        self.total = kwargs.get("total")
        self.updates: list[int] = []
        _FakeBar.instances.append(self)

    def set_description(self, d: str) -> None:
        self.description = d
        self.descriptions.append(d)

    def update(self, k: int) -> None:
        self.n += k
        self.updates.append(k)

    def close(self) -> None:
        pass


def test_progress_bar_names_the_run_in_progress(monkeypatch) -> None:
    from concurrent.futures import ThreadPoolExecutor

    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", _FakeBar)
    _FakeBar.instances.clear()
    during = []

    def cb(res):  # the bar's label while a run is running
        if res.iterate == 0:
            during.append(_FakeBar.instances[-1].description)

    specs = [optcmp.gd(0.1), optcmp.lbfgs()]
    comp = optcmp.compare(lr_a(), specs, max_iter=3, callback=cb, progress=True)
    labels = [f"{r.label} on numpy" for r in comp]
    # the bar counts the work: each run's budget of 3 iterations
    assert during == labels and _FakeBar.instances[-1].n == _FakeBar.instances[-1].total == 6
    with ThreadPoolExecutor(max_workers=1) as ex:
        optcmp.compare(lr_a(), specs, max_iter=3, progress=True, executor=ex)
    bar = _FakeBar.instances[-1]
    assert sorted(bar.descriptions) == sorted(f"done: {x}" for x in labels) and bar.n == 6


def test_progress_counts_iterations_round_by_round(monkeypatch) -> None:
    """The bar counted finished runs, so a censored sweep's rounds (every run paused at 100,
    then 400 iterations) showed 0 done until a run ended; it counts each run's iterations of
    its budget as each round ends: 100, then 300 more, then the last 100 of 500."""
    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", _FakeBar)
    p = LinearRegression(n_samples=200, seed=0)
    # two slow steps: neither reaches the target, so neither is censored: three rounds each
    comp = optcmp.compare(p, [optcmp.gd(1e-4), optcmp.gd(1e-5, label="gd-slow")], max_iter=500,
                          progress=True)
    assert [r.status for r in comp] == ["max_iter", "max_iter"]
    bar = _FakeBar.instances[-1]
    assert bar.total == 1000 and bar.updates == [100, 100, 300, 100, 300, 100]


def test_callback_error_is_a_failed_run_with_the_evaluations_spent() -> None:
    def boom(ir):
        if ir.nit >= 5:
            raise ValueError("boom from callback")

    r = optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), callback=boom, max_iter=100)
    assert r.status == "failed"
    assert r.message == "ValueError: boom from callback"
    assert r.nit == 5
    assert r.nfev == r.njev == 5  # one evaluation per GD step


def test_backend_and_repeat_are_refused_as_overrides():
    """``compare`` sets the backend and the repetition of each run itself: a ``backend=``
    (once silently replaced by numpy) or ``repeat=`` override is an error naming the argument
    to use instead."""
    p = LinearRegression(n_samples=200, seed=0)
    with pytest.raises(TypeError, match=r"give backends=\[\.\.\.\] instead of backend='torch'"):
        optcmp.compare(p, [optcmp.gd], backend="torch", progress=False)
    with pytest.raises(TypeError, match="give repeats=N instead of repeat=2"):
        optcmp.compare(p, [optcmp.gd], repeat=2, progress=False)


def test_verdict_repetitions_use_the_settings_the_comparison_recorded():
    """Without a config, the verdict's repetitions take the comparison's recorded settings
    (float32 here, not RunConfig's float64); a config that disagrees is refused."""
    from optcmp.sweep import confirm_leaders

    p = LinearRegression(n_samples=500, seed=0)
    comp = optcmp.compare(p, [optcmp.diag_newton, optcmp.lbfgs], dtype="float32", tol=1e-2,
                          max_iter=2000, progress=False)
    confirmed = confirm_leaders(p, comp)
    assert len(confirmed.verdict_runs) == 8
    assert {r.dtype for r in confirmed.verdict_runs} == {"float32"}
    assert "medians of 5 and 5 repetitions" in confirmed.verdict()
    with pytest.raises(ValueError, match="config has dtype='float64' but the comparison's runs "
                                         "used dtype='float32'"):
        confirm_leaders(p, comp, optcmp.RunConfig())


@pytest.mark.parametrize("kwargs, message", [
    ({"repeats": "5"}, "repeats must be an integer >= 1 (runs of each entry in all), got str '5'"),
    ({"repeats": 2.5}, "repeats must be an integer >= 1"),
    ({"repeats": 0}, "repeats must be an integer >= 1"),
    ({"max_seconds": float("nan")}, "max_seconds must be a finite number of seconds > 0, got "
                                    "float nan"),
    ({"max_seconds": "2"}, "max_seconds must be a finite number of seconds > 0, got str '2'"),
    ({"max_seconds": -1.0}, "max_seconds must be a finite number"),
])
def test_verdict_repetitions_refuse_a_count_or_time_that_is_not_one(kwargs, message):
    """``repeats='5'`` once ran 8 repetitions, ``max_seconds=nan`` was accepted and
    ``max_seconds='2'`` raised a bare TypeError: each is refused by name."""
    from optcmp.sweep import confirm_leaders

    p = LinearRegression(n_samples=200, seed=0)
    comp = optcmp.compare(p, [optcmp.gd], max_iter=5, progress=False)
    with pytest.raises(ValueError, match=re.escape(message)):
        confirm_leaders(p, comp, **kwargs)


def test_verdict_repetitions_refuse_another_problem():
    """Repetitions on a problem with noise 0.5 were mixed into the verdict of a comparison
    of noise 1.0: another problem is refused; ``repeats=5.0`` counts as 5."""
    from optcmp.sweep import confirm_leaders

    p = LinearRegression(n_samples=500, seed=0)
    comp = optcmp.compare(p, [optcmp.diag_newton, optcmp.lbfgs], tol=1e-2, max_iter=2000,
                          progress=False)
    with pytest.raises(ValueError, match=r"problem \{.*'noise': 0.5.* is not the problem the "
                                         r"comparison ran \(.*'noise': 1.0"):
        confirm_leaders(LinearRegression(n_samples=500, noise=0.5, seed=0), comp)
    assert len(confirm_leaders(p, comp, repeats=5.0, max_seconds=1e9).verdict_runs) == 8


def test_a_suite_comparison_keeps_that_its_shared_host_runs_were_warned_about():
    """The suite's comparison is the problems' comparisons joined: the sweep's shared-host
    warning is not given again by the statistics of the joined comparison."""
    from optcmp.sweep.suite import suite_comparison

    suite = optcmp.suites.Suite("two", optcmp.suites.mgh().problems[:2])
    parts = [optcmp.compare(pr, [optcmp.gd], max_iter=5, progress=False) for pr in suite]
    shared = [c.replace(runs=[r.replace(shared_host=True, concurrency=2) for r in c.runs],
                        shared_host_warned=True) for c in parts]
    joined = suite_comparison(suite, shared)
    assert joined.shared_host_warned and len(joined) == 2
    assert joined.settings["suite"] == {"name": "two", "problems": [p.name for p in suite]}


def test_verdict_repeats_a_runner_up_the_medians_bring_forward(monkeypatch):
    """The table's two fastest single runs A (1 s) and B (1.1 s) are repeated; B's repetitions
    take 3 s, so by the medians C (2 s, one run) is second: C is repeated too, and the verdict
    compares A's and C's repetitions."""
    import types

    from _handmade import comparison, make_run

    import optcmp.sweep.verdict as sv

    times = {"A": 1.0, "B": 3.0, "C": 2.0}
    monkeypatch.setattr(sv, "run", lambda problem, spec, cfg: make_run(
        spec.label, times[spec.label], repeat=cfg.repeat))
    monkeypatch.setattr(sv, "_base_config", lambda comp, config: optcmp.RunConfig())
    monkeypatch.setattr(sv, "get_optimizer", lambda name, **kw: types.SimpleNamespace(
        label=kw["label"]))
    table = [make_run("A", 1.0), make_run("B", 1.1), make_run("C", 2.0)]
    comp = comparison(table)
    done = sv.confirm_leaders(types.SimpleNamespace(spec=lambda: {"problem": "P", "seed": 0}),
                              comp, max_seconds=10.0)
    assert sorted({r.label for r in done.verdict_runs}) == ["A", "B", "C"]
    assert len(done.verdict_runs) == 12
    first = done.verdict().splitlines()[0]
    assert first.startswith("verdict: A on numpy reaches the target first (1.000s), 2x faster "
                            "than C on numpy (2.000s)")
    assert "bootstrap of the medians of 5 and 5 repetitions" in first
