"""CASES.md field cases on the numpy core (expected values from ../shared/cases/CASES.md).

Cross-backend parts of these cases (torch, TensorFlow) live with the backends' tests.
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

FC15_X = np.array([1, 2, 3, 4, 5, 100, 200.0])


# ---------------------------------------------------------------------- FC-01
@pytest.mark.parametrize("tol, expected", [(1e-2, 468), (1e-3, 546), (1e-4, 586)])
def test_fc01a_adadelta_matched_values(tol, expected) -> None:
    r = optcmp.run_one(lr_a(), optcmp.adadelta(learning_rate=1.0, rho=0.9, eps=1e-6), tol=tol)
    assert r.status == "converged" and r.nit_to_target == expected


def test_fc01a_adadelta_bounces_and_ends_max_iter() -> None:
    spec = optcmp.adadelta(learning_rate=1.0, rho=0.9, eps=1e-6)
    early = optcmp.run_one(lr_a(), spec, max_iter=5000, max_time=None, threads=1)
    assert early.status == "stalled" and early.nit == 829  # the default rule: stopped early
    assert early.message.startswith("objective flat: best value improved by <= 1e-06")
    r = optcmp.run_one(lr_a(), spec, stopping=default_stopping(
        1e-6, max_iter=5000, max_time=None, stall=False, projection=False))
    assert r.status == "max_iter" and r.time_to_target is None  # not "diverged"
    rel = r.trace.relative_suboptimality(r.f0, r.fstar)
    assert rel[-1] == pytest.approx(1.2e-4, rel=0.02)


def test_fc01b_keras_default_learning_rate_barely_moves() -> None:
    spec = optcmp.adadelta(learning_rate=0.001, rho=0.95, eps=1e-7)
    early = optcmp.run_one(lr_a(), spec, max_iter=2000, max_time=None, threads=1)
    assert early.status == "projected" and early.nit == 101  # hopeless: stopped early
    assert early.projected_nit_to_target > 10 * 2000
    r = optcmp.run_one(lr_a(), spec, stopping=default_stopping(
        1e-6, max_iter=2000, max_time=None, stall=False, projection=False))
    assert r.status == "max_iter" and r.time_to_target is None
    assert r.relative_suboptimality == pytest.approx(0.9933, abs=1e-4)


def test_fc01c_no_learning_rate_uses_optcmps_documented_default() -> None:
    spec = optcmp.get_optimizer("adadelta")
    r = optcmp.run_one(lr_a(), spec, max_iter=3)
    assert r.hyperparameters == {"learning_rate": 1.0, "rho": 0.95, "eps": 1e-6}


# ---------------------------------------------------------------------- FC-07
def test_fc07_scipy_budgets() -> None:
    """FC-07: optcmp's budgets set both scipy limits; counts are the ones actually spent."""
    p = lr_b()
    a = optcmp.run_one(p, optcmp.lbfgs(), stopping=RelativeSuboptimality(1e-6) | MaxEvals(10)
                       | MaxIter(1000))
    assert a.status == "max_evals" and not a.success
    assert (a.nit, a.nfev) == (4, 15)  # more evaluations than the 10 asked for
    assert a.fun == pytest.approx(27.2714, abs=1e-4)
    assert a.relative_suboptimality == pytest.approx(0.428, abs=1e-3)
    assert "EVALUATIONS EXCEEDS LIMIT" in a.message
    b = optcmp.run_one(p, optcmp.lbfgs(), stopping=RelativeSuboptimality(1e-6) | MaxIter(5))
    assert b.status == "max_iter" and not b.success
    assert (b.nit, b.nfev) == (5, 16)
    assert b.fun == pytest.approx(15.6792, abs=1e-4)
    assert b.relative_suboptimality == pytest.approx(0.246, abs=1e-3)
    assert "ITERATIONS REACHED LIMIT" in b.message

# ---------------------------------------------------------------------- FC-08 (CPU part)
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


def test_fc08_stopwatch_syncs_before_every_clock_read() -> None:
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


# ---------------------------------------------------------------------- FC-09
@pytest.mark.parametrize("n, tol, expected", [(100, 1e-8, 45), (10_000, 1e-8, 42),
                                              (100, 1e-6, 34), (10_000, 1e-6, 32)])
def test_fc09_iterations_to_target(n, tol, expected) -> None:
    r = optcmp.run_one(lr_s(n), optcmp.gd(learning_rate=0.1), tol=tol)
    assert r.status == "converged" and r.nit_to_target == expected
    assert r.n_samples == n  # the size is reported with the time


# ---------------------------------------------------------------------- FC-11
def test_fc11_monitoring_between_steps_leaves_iterates_identical() -> None:
    p = lr_a()
    plain = optcmp.run_one(p, optcmp.gd(0.1), max_iter=2)
    evals = []

    def monitor(res):  # a full objective-and-gradient evaluation between steps
        evals.append(p.value_and_grad(res.x, p.train_data))

    watched = optcmp.run_one(p, optcmp.gd(0.1), max_iter=2, callback=monitor)
    assert len(evals) == 2
    np.testing.assert_array_equal(plain.x, watched.x)
    np.testing.assert_allclose(plain.x, [0.53116705, -0.68083855, 0.19432604, 0.03777111],
                               atol=5e-9)
    assert plain.fun == pytest.approx(2.6792904, abs=5e-8)
    assert plain.fun != pytest.approx(2.3862, abs=1e-3)  # not a doubled first deposit


# ---------------------------------------------------------------------- FC-12
@pytest.mark.parametrize("lr, expected", [(0.01, 86), (0.04, 16)])
def test_fc12_mean_reduction(lr, expected) -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0])
    p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=False)
    assert p.reduction == "mean"
    assert p.fun64(np.zeros(1)) == 30.0
    assert 2 / p.lipschitz() == pytest.approx(0.1333, abs=1e-4)  # GD stability bound
    r = optcmp.run_one(p, optcmp.gd(lr), tol=1e-12)
    assert r.status == "converged" and r.nit_to_target == expected
    assert r.reduction == "mean"


# ---------------------------------------------------------------------- FC-15
def test_fc15_divergence_recorded_with_iteration() -> None:
    """CASES.md: fun becomes non-finite at iteration 71 (with a non-finite-only rule)."""
    x = FC15_X
    nonfinite_only = RelativeSuboptimality(1e-6) | MaxIter(1000) | Divergence()
    for fit_intercept in (False, True):
        p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=fit_intercept)
        r = optcmp.run_one(p, optcmp.gd(learning_rate=0.01), stopping=nonfinite_only)
        assert r.status == "diverged" and not r.success
        assert r.message == "diverged: objective is non-finite (inf) at iteration 71 (after 72 steps)"
        assert r.trace.iteration[-1] == 71 and not math.isfinite(r.trace.fun[-1])
        assert np.all(np.isfinite(r.trace.fun[:-1]))
        assert r.relative_suboptimality == math.inf


def test_fc15_default_rule_stops_the_explosion_early() -> None:
    """The default rule calls f > 1e10 x max(|f0|, 1) a divergence: iteration 3, not 71."""
    x = FC15_X
    p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=False)
    r = optcmp.run_one(p, optcmp.gd(learning_rate=0.01), max_iter=1000)
    assert r.status == "diverged" and r.nit == 4 and r.trace.iteration[-1] == 3
    assert r.trace.fun[-1] > 1e10 * r.f0 >= r.trace.fun[-2]
    assert r.message.startswith("diverged: objective exploded: 2.35e+17 > 1e+10 x max(|f0|, 1) "
                                "(f0 = 28602.9) at iteration 3 (after 4 steps)")


def test_default_rule_stops_an_exploding_adadelta_as_diverged() -> None:
    """adadelta(learning_rate=1e6) climbs steadily: the default rule stops it at 1e10 x f0
    instead of spending the whole budget (a non-finite-only rule runs to the budget)."""
    p = LinearRegression(n_samples=1000)
    spec = optcmp.adadelta(learning_rate=1e6)
    early = optcmp.run_one(p, spec, max_iter=20_000, max_time=None, threads=1)
    assert early.status == "stalled" and early.nit == 201  # no progress for 200 iterations
    assert "the objective rose to" in early.message
    r = optcmp.run_one(p, spec, stopping=default_stopping(
        1e-6, max_iter=20_000, max_time=None, stall=False, projection=False))
    assert r.status == "diverged" and not r.success and r.nit == 10_522
    assert r.message.startswith("diverged: objective exploded: ")
    assert "> 1e+10 x max(|f0|, 1) (f0 = 414.623) at iteration 10521 (after 10522 steps)" in (
        r.message)
    assert r.trace.fun[-1] > 1e10 * r.f0 >= r.trace.fun[-2]
    r = optcmp.run_one(p, spec, stopping=RelativeSuboptimality(1e-6) | MaxIter(11_000)
                       | Divergence())
    assert r.status == "max_iter" and np.all(np.isfinite(r.trace.fun))


def test_fc15_limit_and_standardized() -> None:
    """0.99 x the stability limit converges (938 / 46,724 iterations to f <= 1e-12)."""
    x = FC15_X
    for fit_intercept, expected in ((False, 938), (True, 46_724)):
        p = LinearRegression.from_arrays(x[:, None], 2 * x, fit_intercept=fit_intercept)
        r = optcmp.run_one(p, optcmp.gd(0.99 * 2 / p.lipschitz()),
                           stopping=LossTarget(1e-12) | MaxIter(60_000))
        assert r.status == "converged" and r.nit_to_target == expected
    xs = (x - 45.0) / x.std()
    p = LinearRegression.from_arrays(xs[:, None], 2 * x)
    for lr, expected in ((0.1, 85), (0.5, 1)):
        r = optcmp.run_one(p, optcmp.gd(lr), stopping=LossTarget(1e-12) | MaxIter(1000))
        assert r.status == "converged" and r.nit_to_target == expected
        assert r.x[0] / x.std() == pytest.approx(2.0, rel=1e-6)  # slope in original units
