"""The framework factor per optimizer: per iteration over the common iterations where the
trajectories are proven identical, time-to-target otherwise."""

from __future__ import annotations

import numpy as np
import pytest
from _handmade import make_run
from conftest import lr_a, needs_torch

import optcmp
from optcmp.analysis.framework import framework_factors
from optcmp.comparison import Comparison
from optcmp.equivalence import EquivalenceResult
from optcmp.results import Trace

HP = {"learning_rate": 0.1}


def _trace(per_iteration: float, n: int) -> Trace:
    k = np.arange(n + 1, dtype=np.int64)
    return Trace(iteration=k, time=per_iteration * k, fun=np.logspace(0, -3, n + 1),
                 grad_norm=np.ones(n + 1), nfev=k, njev=k)


def _gd(backend: str, per_iteration: float, n: int, status: str, dtype: str = "float64",
        hp: dict | None = None):
    run = make_run("gd", None, backend=backend, status=status, nit=n, dtype=dtype,
                   time=per_iteration * n, trace=_trace(per_iteration, n))
    return run.replace(hyperparameters=dict(hp or HP), impl="reference", gradient="analytic")


def _equivalence(verdict_ok: bool = True, dtype: str = "float64",
                 optimizer: str = "gd(learning_rate=0.1)") -> EquivalenceResult:
    d = np.full(51, 1e-15 if verdict_ok else 1e-3)
    return EquivalenceResult(
        problem="P", optimizer=optimizer, dtype=dtype, steps=50, reference="numpy",
        backends=["numpy", "torch"], impls={"numpy": "reference", "torch": "reference"},
        implementations={}, skipped={}, fun={}, x={}, fun_rel_diff=d, x_rel_diff=d,
        tolerance=1e-10, gradients={"numpy": "analytic", "torch": "analytic"})


@pytest.fixture
def censored_pair():
    # neither reached the target: numpy censored at iteration 400 (2 us/iteration), torch ended
    # by its budget at 500 (6 us/iteration); they share iterations 0..400
    return Comparison([_gd("numpy", 2e-6, 400, "censored"), _gd("torch", 6e-6, 500, "max_iter")])


def test_proven_identical_trajectories_give_the_per_iteration_factor_over_common_iterations(
        censored_pair):
    (fac,) = censored_pair.framework_factors(equivalence=_equivalence())
    assert fac.basis == "per-iteration" and fac.iterations == 400
    assert list(fac.seconds) == ["numpy", "torch"]
    assert fac.seconds["numpy"] == pytest.approx(2e-6)
    assert fac.factor("torch") == pytest.approx(3.0)
    assert fac.max_rel_diff == pytest.approx(1e-15) and fac.checked_steps == 50
    text = censored_pair.verdict(equivalence=_equivalence())
    assert text.startswith("verdict: no optimizer reached")
    assert ("gd (optcmp's reference gd rule): per-iteration factor over the 400 common "
            "iterations, trajectories identical to 1e-15 (checked over 50 steps): numpy first "
            "(2.0us/iteration); PyTorch 3x slower (6.0us/iteration)") in text


@pytest.mark.parametrize("eq", [
    _equivalence(verdict_ok=False),                    # verdict "different"
    _equivalence(dtype="float32"),                     # not float64
    _equivalence(optimizer="gd(learning_rate=0.2)"),   # another hyperparameter
], ids=["different", "float32", "other-hyperparameters"])
def test_an_unproven_equivalence_leaves_only_time_to_target(censored_pair, eq):
    (fac,) = censored_pair.framework_factors(equivalence=eq)
    assert fac.basis == "time-to-target" and fac.seconds == {}  # nobody reached the target
    assert "per-iteration" not in censored_pair.verdict(equivalence=eq)


def test_without_equivalence_the_framework_line_is_time_to_target():
    a = make_run("gd", 0.002, backend="numpy").replace(hyperparameters=HP, impl="reference")
    b = make_run("gd", 0.006, backend="torch").replace(hyperparameters=HP, impl="reference")
    comp = Comparison([a, b])
    (fac,) = comp.framework_factors()
    assert fac.basis == "time-to-target" and fac.factor("torch") == pytest.approx(3.0)
    assert "per-iteration" not in comp.verdict()
    with pytest.raises(KeyError, match="'jax'"):
        fac.factor("jax")


def test_equivalence_must_be_an_equivalence_result(censored_pair):
    with pytest.raises(TypeError, match="EquivalenceResult.*got str"):
        framework_factors(censored_pair.runs, "equivalent")


@pytest.mark.slow
@needs_torch
def test_a_real_equivalence_check_proves_a_compared_pair():
    """gd on numpy and torch, float64: check_equivalence says equivalent, so the factor is per
    iteration over the iterations both runs made (no timing is asserted)."""
    p = lr_a()
    comp = optcmp.compare(p, [optcmp.gd(0.1)], backends=("numpy", "torch"), max_iter=40,
                          progress=False)
    eq = optcmp.check_equivalence(p, optcmp.gd(0.1), backends=("numpy", "torch"), steps=10)
    assert eq.verdict == "equivalent"
    (fac,) = comp.framework_factors(equivalence=eq)
    assert fac.basis == "per-iteration"
    assert fac.iterations == min(int(r.trace.iteration[-1]) for r in comp.runs)
    assert "common iterations, trajectories identical" in comp.verdict(equivalence=eq)
