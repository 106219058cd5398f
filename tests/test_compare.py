"""run_one() and compare(): isolation, time-to-target semantics, callbacks, input checks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import lr_a, lr_b, lr_s

import optcmp
from optcmp import MaxIter, RelativeSuboptimality
from optcmp.optimizers import base as obase
from optcmp.optimizers.gd import GDAdapter
from optcmp.problems import LinearRegression


# ---------------------------------------------------------------------- a throwaway optimizer
class BoomAdapter(GDAdapter):
    """GD that raises on its third step."""

    def step(self):
        if self._k == 2:
            raise FloatingPointError("boom at step 3")
        return super().step()


@pytest.fixture
def boom(monkeypatch):
    info = obase.OptimizerInfo(
        name="boom", params={"learning_rate": obase.HyperParam(
            "learning_rate", 0.1, obase.positive_float("learning_rate"))},
        summary="raises")
    monkeypatch.setitem(obase._OPTIMIZERS, "boom", info)
    obase.register_adapter("boom", "numpy", "reference", BoomAdapter)
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
                          max_iter=5000, progress=False)
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
    r = optcmp.run_one(lr_s(100), optcmp.gd(learning_rate=0.1), tol=1e-6)
    assert r.status == "converged" and r.nit_to_target == 34  # FC-09, N = 100
    # step k + 1 computes f(x_k): the target is known after nit_to_target + 1 steps
    assert r.nit == r.nfev == r.njev == 35
    assert r.nfev_to_target == r.njev_to_target == 35
    t = r.trace
    assert t.iteration.tolist() == list(range(35))
    hit = int(np.flatnonzero(t.iteration == r.nit_to_target)[0])
    assert t.time[hit] == r.time_to_target and t.nfev[hit] == r.nfev_to_target
    assert np.all(np.diff(t.time) >= 0) and t.time[0] == 0.0
    assert r.time_to_target <= r.time <= r.wall_time
    rel = t.relative_suboptimality(r.f0, r.fstar)
    assert rel[hit] <= 1e-6 < rel[hit - 1]
    assert t.fun[0] == r.f0 and t.grad_norm[0] > 0


def test_time_to_target_semantics_lbfgs() -> None:
    r = optcmp.run_one(lr_b(), optcmp.lbfgs(), tol=1e-6)
    assert r.status == "converged" and r.nit_to_target == r.nit == 20
    assert r.nfev_to_target == r.nfev >= r.nit and r.njev == r.nfev
    assert r.trace.iteration[-1] == 20 and r.trace.nfev[-1] == r.nfev_to_target
    assert r.trace.time[-1] == r.time_to_target
    assert "scipy" in r.implementation


def test_time_to_target_semantics_sgd() -> None:
    r = optcmp.run_one(lr_s(1000), optcmp.sgd(learning_rate=0.05, batch_size=100), tol=1e-4)
    # the full objective is evaluated once per epoch (10 steps), off the clock
    assert r.status == "converged"
    assert r.nit_to_target % 10 == 0 and r.nit == r.nit_to_target == r.nfev_to_target
    assert r.trace.iteration.tolist() == list(range(0, r.nit + 1, 10))
    assert r.epochs == r.nit / 10
    r2 = optcmp.run_one(lr_s(1000), optcmp.sgd(learning_rate=0.05, batch_size=100), tol=1e-4,
                        eval_every=3)
    assert r2.nit_to_target % 3 == 0 and r2.trace.iteration[1] == 3


def test_x0_already_at_target_converges_at_iteration_zero() -> None:
    X = np.random.default_rng(0).standard_normal((50, 2))
    p = LinearRegression.from_arrays(X, np.zeros(50))  # x0 = 0 is the exact minimizer
    for spec in (optcmp.gd(0.1), optcmp.lbfgs(), optcmp.sgd(learning_rate=0.1)):
        r = optcmp.run_one(p, spec)
        assert r.status == "converged" and r.success, r.message
        assert r.nit_to_target == 0 and r.nit == 0 and r.nfev == 0
        assert r.time_to_target == 0.0 and r.time == 0.0
        np.testing.assert_array_equal(r.x, np.zeros(3))


def test_max_iter_status_and_no_time_to_target() -> None:
    r = optcmp.run_one(lr_b(), optcmp.gd(), max_iter=50)
    assert r.status == "max_iter" and not r.success and r.nit == 50
    assert r.time_to_target is None and r.nit_to_target is None
    assert r.message == "budget exhausted: MaxIter(n=50)"


def test_max_time_status() -> None:
    r = optcmp.run_one(lr_b(), optcmp.gd(), max_time=0.02, max_iter=None)
    assert r.status == "timeout" and r.time >= 0.02 and r.time_to_target is None


def test_max_evals_status_on_step_loop() -> None:
    r = optcmp.run_one(lr_b(), optcmp.adadelta(), max_evals=7)
    assert r.status == "max_evals" and r.nfev == 7


def test_divergence_inside_compare_does_not_stop_the_others() -> None:
    x = np.array([1, 2, 3, 4, 5, 100, 200.0])
    p = LinearRegression.from_arrays(x[:, None], 2 * x)
    comp = optcmp.compare(p, [optcmp.gd(0.01), optcmp.lbfgs], progress=False)
    assert [r.status for r in comp] == ["diverged", "converged"]


# ---------------------------------------------------------------------- callbacks
def test_callback_receives_intermediate_results() -> None:
    seen = []
    r = optcmp.run_one(lr_a(), optcmp.gd(0.1), max_iter=5, callback=seen.append)
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

    for spec in (optcmp.gd(0.1), optcmp.lbfgs()):
        r = optcmp.run_one(lr_b(), spec, callback=cb)
        assert r.status == "stopped" and not r.success
        assert r.message == "callback raised StopIteration"
        assert r.trace.iteration[-1] == 3


def test_callback_error_is_failed() -> None:
    def cb(res):
        raise RuntimeError("bad callback")

    r = optcmp.run_one(lr_a(), optcmp.gd(0.1), callback=cb)
    assert r.status == "failed" and r.message == "RuntimeError: bad callback"


def test_callback_and_monitoring_are_off_the_clock(monkeypatch) -> None:
    """A fake clock that only moves inside the callback: the timed seconds must stay 0."""
    import importlib

    from optcmp.timing import Stopwatch

    oc = importlib.import_module("optcmp.compare")  # the module, not optcmp.compare()

    now = [0.0]
    monkeypatch.setattr(oc, "Stopwatch", lambda sync: Stopwatch(sync, clock=lambda: now[0]))

    def slow_callback(res):
        now[0] += 100.0  # a very expensive callback

    r = optcmp.run_one(lr_s(100), optcmp.gd(0.1), max_iter=5, callback=slow_callback)
    assert r.status == "max_iter" and r.nit == 5
    assert r.time == 0.0 and np.all(r.trace.time == 0.0)


# ---------------------------------------------------------------------- bad inputs
def test_compare_input_errors() -> None:
    p = lr_a()
    with pytest.raises(ValueError, match=r"unknown backend 'jax'; valid backends: numpy, torch, tensorflow"):
        optcmp.compare(p, [optcmp.gd], backends=["jax"], progress=False)
    with pytest.raises(ValueError, match="unknown optimizer 'adam'"):
        optcmp.compare(p, ["adam"], progress=False)
    with pytest.raises(ValueError, match="optimizers is empty"):
        optcmp.compare(p, [], progress=False)
    with pytest.raises(ValueError, match="repeats must be a positive integer, got 0"):
        optcmp.compare(p, [optcmp.gd], repeats=0, progress=False)
    with pytest.raises(ValueError, match=r"dtype must be one of \('float64', 'float32'\), got 'int8'"):
        optcmp.compare(p, [optcmp.gd], dtype="int8", progress=False)
    with pytest.raises(ValueError, match="has no budget"):
        optcmp.compare(p, [optcmp.gd], stopping=RelativeSuboptimality(1e-6), progress=False)
    with pytest.raises(TypeError, match="stopping must be an optcmp.stopping.Rule"):
        optcmp.run_one(p, optcmp.gd, stopping="tol")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        optcmp.compare(p, [3.0], progress=False)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="eval_every must be a positive integer"):
        optcmp.run_one(p, optcmp.sgd, eval_every=0)
    # numpy always runs on the CPU, whatever device the framework backends get
    assert optcmp.run_one(p, optcmp.gd, device="cuda", max_iter=2).device == "cpu"


def test_rule_without_target_warns() -> None:
    with pytest.warns(UserWarning, match="has no target"):
        r = optcmp.run_one(lr_a(), optcmp.gd(0.1), stopping=MaxIter(3))
    assert r.status == "max_iter"


def test_missing_backend_is_skipped_or_strict(monkeypatch) -> None:
    import optcmp.backends as ob

    real = ob.is_available
    monkeypatch.setattr(ob, "is_available", lambda n: False if n == "torch" else real(n))
    with pytest.warns(UserWarning, match="backend 'torch' is not installed"):
        comp = optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["numpy", "torch"],
                              progress=False)
    assert [(r.backend, r.status) for r in comp] == [("numpy", "converged"), ("torch", "skipped")]
    assert "pip install 'optcmp[torch]'" in comp[1].message
    with pytest.raises(optcmp.backends.BackendUnavailable, match=r"optcmp\[torch\]"):
        optcmp.compare(lr_a(), [optcmp.gd(0.1)], backends=["torch"], strict=True,
                       progress=False)


def test_float32_target_is_confirmed_in_float64() -> None:
    """FC-05's kind: a float32 objective may round below f*; the target is checked in float64."""
    r = optcmp.run_one(lr_b(), optcmp.lbfgs(), dtype="float32", tol=1e-6)
    assert r.dtype == "float32" and r.status == "converged"
    assert r.x.dtype == np.float64
    assert 0.0 <= r.relative_suboptimality <= 1e-6
    g = optcmp.run_one(lr_s(1000), optcmp.gd(0.1), dtype="float32", tol=1e-6)
    assert g.status == "converged" and g.nit_to_target == 34
