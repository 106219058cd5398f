"""Comparison pitfalls from public reports, on the numpy core: Adadelta's learning rate, scipy's
two budgets, the stopwatch's device sync, iterations to target, monitoring between steps, the
loss reduction, and gradient descent on unscaled features.

The same checks on torch and TensorFlow are in tests/test_pitfalls_backends.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import lr_a, lr_b, lr_s

import optcmp
from optcmp import Divergence, LossTarget, MaxEvals, MaxIter, RelativeSuboptimality
from optcmp.problems import LinearRegression
from optcmp.stopping import default_stopping
from optcmp.timing import Stopwatch

UNSCALED_X = np.array([1, 2, 3, 4, 5, 100, 200.0])


# ---------------------------------------------------------------------- Adadelta's learning rate
@pytest.mark.parametrize("tol, expected", [(1e-2, 468), (1e-3, 546), (1e-4, 586)])
def test_adadelta_with_explicit_values_iterations_to_target(tol, expected) -> None:
    """A user reported Keras' Adadelta MNIST example falling from 99% to 85% accuracy after an
    upgrade (its default learning rate went from 1.0 to 0.001); with lr 1, rho 0.9 and eps 1e-6
    given, Adadelta takes 468, 546 and 586 iterations to 1e-2, 1e-3 and 1e-4."""
    r = optcmp.run(lr_a(), optcmp.adadelta(learning_rate=1.0, rho=0.9, eps=1e-6), tol=tol)
    assert r.status == "converged" and r.nit_to_target == expected


def test_adadelta_at_lr_1_drifts_away_and_ends_diverged_by_its_trend() -> None:
    """Adadelta at lr 1 comes within 3e-6 of the optimum, then its objective rises at every
    iteration (1.2e-4 after 5,000 iterations): the default rule ends it ``diverged`` by its
    trend at 829 iterations (200 rises in a row); without early stops it runs its budget
    ``max_iter``."""
    spec = optcmp.adadelta(learning_rate=1.0, rho=0.9, eps=1e-6)
    early = optcmp.run(lr_a(), spec, max_iter=5000, max_time=None, threads=1)
    assert early.status == "diverged" and early.nit == 829  # the default rule: stopped early
    assert early.message.startswith("diverged: objective rose at every one of the last 200")
    r = optcmp.run(lr_a(), spec, stopping=default_stopping(
        1e-6, max_iter=5000, max_time=None, stall=False))
    assert r.status == "max_iter" and r.time_to_target is None  # not "diverged"
    rel = r.trace.relative_suboptimality(r.f0, r.fstar)
    assert rel[-1] == pytest.approx(1.2e-4, rel=0.02)


def test_adadelta_at_keras_default_learning_rate_barely_moves() -> None:
    """Keras' Adadelta defaults (lr 0.001, rho 0.95, eps 1e-7) close 0.67% of the gap in 2,000
    iterations (``max_iter``); its message says the budget ran out, and nothing extrapolated
    from its rate."""
    spec = optcmp.adadelta(learning_rate=0.001, rho=0.95, eps=1e-7)
    early = optcmp.run(lr_a(), spec, max_iter=2000, max_time=None, threads=1)
    assert early.status == "max_iter" and early.nit == 2000
    assert early.message == "budget exhausted: MaxIter(n=2000)"
    r = optcmp.run(lr_a(), spec, stopping=default_stopping(
        1e-6, max_iter=2000, max_time=None, stall=False))
    assert r.status == "max_iter" and r.time_to_target is None
    assert r.relative_suboptimality == pytest.approx(0.9933, abs=1e-4)


def test_adadelta_without_a_learning_rate_uses_optcmps_documented_default() -> None:
    """No learning rate given: optcmp's documented (1.0, 0.95, 1e-6), recorded in the result."""
    spec = optcmp.get_optimizer("adadelta")
    r = optcmp.run(lr_a(), spec, max_iter=3)
    assert r.hyperparameters == {"learning_rate": 1.0, "rho": 0.95, "eps": 1e-6,
                                 "batch_size": None, "shuffle": True}


# ---------------------------------------------------------------------- scipy's two budgets
def test_optcmp_budgets_set_both_scipy_limits_and_record_the_counts_spent() -> None:
    """Users reported that raising scipy's maxiter alone did nothing and that nfev exceeded
    maxfun; optcmp's budgets set both scipy limits, and the counts recorded are the ones actually
    spent (15 evaluations for a budget of 10)."""
    p = lr_b()
    a = optcmp.run(p, optcmp.lbfgs(), stopping=RelativeSuboptimality(1e-6) | MaxEvals(10)
                       | MaxIter(1000))
    assert a.status == "max_evals" and not a.success
    assert (a.nit, a.nfev) == (4, 15)  # more evaluations than the 10 asked for
    assert a.fun == pytest.approx(27.2714, abs=1e-4)
    assert a.relative_suboptimality == pytest.approx(0.428, abs=1e-3)
    assert "EVALUATIONS EXCEEDS LIMIT" in a.message
    b = optcmp.run(p, optcmp.lbfgs(), stopping=RelativeSuboptimality(1e-6) | MaxIter(5))
    assert b.status == "max_iter" and not b.success
    assert (b.nit, b.nfev) == (5, 16)
    assert b.fun == pytest.approx(15.6792, abs=1e-4)
    assert b.relative_suboptimality == pytest.approx(0.246, abs=1e-3)
    assert "ITERATIONS REACHED LIMIT" in b.message

# ---------------------------------------------------------------------- device sync (CPU part)
class _FakeDevice:
    """A clock that only the device's sync moves by 50 ms; a queued step costs 0.1 ms."""

    def __init__(self) -> None:
        self.now = 0.0
        self.syncs = 0

    def clock(self) -> float:
        return self.now

    def sync(self) -> None:
        self.syncs += 1
        self.now += 0.050

    def queue_step(self) -> None:
        self.now += 0.0001


def test_stopwatch_syncs_the_device_before_every_clock_read() -> None:
    """A published GPU benchmark read the clock without a device sync (a matmul timed at 0.03 ms
    instead of 1.36 ms); optcmp's stopwatch syncs at both ends of every timed interval."""
    dev = _FakeDevice()
    sw = Stopwatch(dev.sync, clock=dev.clock)
    steps = []
    for _ in range(10):
        sw.resume()
        dev.queue_step()
        steps.append(sw.pause())
        dev.now += 1.0  # monitoring between steps: never on the clock
    assert dev.syncs == 20  # at both ends of every timed interval
    assert all(s >= 0.050 for s in steps)  # the device work is counted
    assert sw.elapsed == pytest.approx(10 * 0.0501)
    assert sw.intervals == 10
    unsynced = Stopwatch(None, clock=dev.clock)
    unsynced.resume()
    dev.queue_step()
    assert unsynced.pause() < 0.001  # what a benchmark without sync would report
    with pytest.raises(RuntimeError, match="called while paused"):
        sw.pause()
    sw.resume()
    with pytest.raises(RuntimeError, match="called while running"):
        sw.resume()


# ---------------------------------------------------------------------- iterations to target
@pytest.mark.parametrize("n, tol, expected", [(100, 1e-8, 45), (10_000, 1e-8, 42),
                                              (100, 1e-6, 34), (10_000, 1e-6, 32)])
def test_gd_iterations_to_target_are_reported_with_the_problem_size(n, tol, expected) -> None:
    """Users reported frameworks "N times slower than numpy" on tiny problems, where per-operation
    overhead is the whole cost; iterations are counted apart from time: GD at lr 0.1 takes 45 and
    42 iterations to 1e-8 (34 and 32 to 1e-6) on 100 and 10,000 rows."""
    r = optcmp.run(lr_s(n), optcmp.gd(learning_rate=0.1), tol=tol)
    assert r.status == "converged" and r.nit_to_target == expected
    assert r.identity.n_samples == n  # the size is reported with the time


# ---------------------------------------------------------------------- monitoring between steps
def test_monitoring_between_gd_steps_leaves_the_iterates_identical() -> None:
    """Two implementations of one model drifted apart because the first gradient was deposited
    twice; an evaluation between GD steps leaves the iterates bit-identical (f(theta2) =
    2.6792904, not the doubled deposit's 2.3862)."""
    p = lr_a()
    plain = optcmp.run(p, optcmp.gd(0.1), max_iter=2)
    evals = []

    def monitor(res):  # a full objective-and-gradient evaluation between steps
        evals.append(p.value_and_grad(res.x, p.train_data))

    watched = optcmp.run(p, optcmp.gd(0.1), max_iter=2, callback=monitor)
    assert len(evals) == 2
    np.testing.assert_array_equal(plain.x, watched.x)
    np.testing.assert_allclose(plain.x, [0.53116705, -0.68083855, 0.19432604, 0.03777111],
                               atol=5e-9)
    assert plain.fun == pytest.approx(2.6792904, abs=5e-8)
    assert plain.fun != pytest.approx(2.3862, abs=1e-3)  # not a doubled first deposit


# ---------------------------------------------------------------------- sum vs mean
@pytest.mark.parametrize("lr, expected", [(0.01, 86), (0.04, 16)])
def test_mean_reduction_gd_iterations_and_the_recorded_reduction(lr, expected) -> None:
    """A user reported that autograd GD on y = 2x "never converges" where a hand-written numpy GD
    did; the numpy gradient was a sum, a hidden 4x learning rate: with the mean, GD takes 86
    iterations to 1e-12 at lr 0.01 and 16 at lr 0.04."""
    x = np.array([1.0, 2.0, 3.0, 4.0])
    p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=False)
    assert p.reduction == "mean"
    assert p.fun64(np.zeros(1)) == 30.0
    assert 2 / p.lipschitz() == pytest.approx(0.1333, abs=1e-4)  # GD stability bound
    r = optcmp.run(p, optcmp.gd(lr), tol=1e-12)
    assert r.status == "converged" and r.nit_to_target == expected
    assert r.identity.reduction == "mean"


# ---------------------------------------------------------------------- unscaled features
def test_gd_on_unscaled_features_diverges_and_the_iteration_is_recorded() -> None:
    """A user reported that GD on x = [1..5, 100, 200] "never converges"; at lr 0.01 it diverges:
    the objective is non-finite at iteration 71 (with a non-finite-only rule), recorded."""
    x = UNSCALED_X
    nonfinite_only = RelativeSuboptimality(1e-6) | MaxIter(1000) | Divergence()
    for fit_intercept in (False, True):
        p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=fit_intercept)
        r = optcmp.run(p, optcmp.gd(learning_rate=0.01), stopping=nonfinite_only)
        assert r.status == "diverged" and not r.success
        assert r.message == "diverged: objective is non-finite (inf) at iteration 71 (after 72 steps)"
        assert r.trace.iteration[-1] == 71 and not math.isfinite(r.trace.fun[-1])
        assert np.all(np.isfinite(r.trace.fun[:-1]))
        assert r.relative_suboptimality == math.inf


def test_default_rule_stops_gd_on_unscaled_features_at_the_explosion() -> None:
    """The default rule calls f > 1e10 x max(|f0|, 1) a divergence: iteration 3, not 71."""
    x = UNSCALED_X
    p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=False)
    r = optcmp.run(p, optcmp.gd(learning_rate=0.01), max_iter=1000)
    assert r.status == "diverged" and r.nit == 4 and r.trace.iteration[-1] == 3
    assert r.trace.fun[-1] > 1e10 * r.f0 >= r.trace.fun[-2]
    assert r.message.startswith("diverged: objective exploded: 2.35e+17 > 1e+10 x max(|f0|, 1) "
                                "(f0 = 28602.9) at iteration 3 (after 4 steps)")


def test_default_rule_stops_an_exploding_adadelta_as_diverged() -> None:
    """adadelta(learning_rate=1e6) climbs steadily: the default rule stops it at 1e10 x f0
    instead of spending the whole budget (a non-finite-only rule runs to the budget)."""
    p = LinearRegression(n_samples=1000)
    spec = optcmp.adadelta(learning_rate=1e6)
    early = optcmp.run(p, spec, max_iter=20_000, max_time=None, threads=1)
    assert early.status == "stalled" and early.nit == 201  # no progress for 200 iterations
    assert "the objective rose to" in early.message
    r = optcmp.run(p, spec, stopping=default_stopping(
        1e-6, max_iter=20_000, max_time=None, stall=False))
    assert r.status == "diverged" and not r.success and r.nit == 10_522
    assert r.message.startswith("diverged: objective exploded: ")
    assert "> 1e+10 x max(|f0|, 1) (f0 = 414.623) at iteration 10521 (after 10522 steps)" in (
        r.message)
    assert r.trace.fun[-1] > 1e10 * r.f0 >= r.trace.fun[-2]
    r = optcmp.run(p, spec, stopping=RelativeSuboptimality(1e-6) | MaxIter(11_000)
                       | Divergence())
    assert r.status == "max_iter" and np.all(np.isfinite(r.trace.fun))


def test_gd_on_unscaled_features_converges_below_the_limit_and_when_standardized() -> None:
    """0.99 x the stability limit converges (938 / 46,724 iterations to f <= 1e-12); standardized
    features converge in 85 iterations at lr 0.1 and in 1 at lr 0.5."""
    x = UNSCALED_X
    for fit_intercept, expected in ((False, 938), (True, 46_724)):
        p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=fit_intercept)
        r = optcmp.run(p, optcmp.gd(0.99 * 2 / p.lipschitz()),
                           stopping=LossTarget(1e-12) | MaxIter(60_000))
        assert r.status == "converged" and r.nit_to_target == expected
    xs = (x - 45.0) / x.std()
    p = LinearRegression.from_arrays(xs[:, None], 2 * x)
    for lr, expected in ((0.1, 85), (0.5, 1)):
        r = optcmp.run(p, optcmp.gd(lr), stopping=LossTarget(1e-12) | MaxIter(1000))
        assert r.status == "converged" and r.nit_to_target == expected
        assert r.x[0] / x.std() == pytest.approx(2.0, rel=1e-6)  # slope in original units
