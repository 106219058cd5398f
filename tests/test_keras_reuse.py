"""Native Keras runs reuse the variable, optimizer and compiled step an earlier run left.

A repetition of a run takes the bundle of the run before it, reset to ``x0`` and the
optimizer's state right after ``build``: nothing traces or compiles, and its iterates are
bit-identical to those of a fresh build. A bundle serves one run at a time: a run that finds
it taken builds its own. No test reads a clock; every run pins ``threads=1``.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import needs_tf

import optcmp
from optcmp.engine.config import RunConfig
from optcmp.engine.session import CompileInTimedWarning, Session
from optcmp.problems import LinearRegression

pytestmark = needs_tf


def _run(problem, spec, execution="step", max_iter=30, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileInTimedWarning)
        r = optcmp.run(problem, spec, backend="tensorflow", execution=execution,
                           threads=1, max_iter=max_iter, max_time=None, eval_every=1, **kw)
    assert r.impl == "native" and r.conditions.compiles_in_timed == 0, r.message
    assert r.status == "max_iter" and r.nit == max_iter, r.message
    return r


def _same_run(a, b):
    assert a.nit == b.nit
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.trace.fun, b.trace.fun)
    np.testing.assert_array_equal(a.trace.grad_norm, b.trace.grad_norm)


MINIBATCH = [optcmp.sgd(1e-4, batch_size=64, momentum=0.9, nesterov=True,
                        label="sgd-nesterov"),
             optcmp.sgd(1e-4, batch_size=64, momentum=0.9),
             optcmp.adam(1e-2, batch_size=64, impl="native", convention="eps_hat",
                         schedule="step(step_size=7, gamma=0.5)", label="adam-schedule")]
FULL_BATCH = [optcmp.adam(1e-2, impl="native", convention="eps_hat"),
              optcmp.adadelta(1.0, 0.9)]


@pytest.mark.slow
@pytest.mark.parametrize("spec, execution",
                         [(s, e) for s in MINIBATCH for e in ("step", "fused")]
                         + [(s, "step") for s in FULL_BATCH],
                         ids=lambda v: v if isinstance(v, str) else v.label + str(v.hyperparameters.get(
                             "batch_size") or ""))
def test_a_reused_bundle_runs_as_a_fresh_build(made, spec, execution):
    """A run of 40 steps (another seed) leaves the variable and the optimizer's state
    (momentum buffers, moments, step count) advanced; the next run of 30 takes them, reset,
    compiles nothing and observes exactly what a fresh build of another problem object
    does."""
    fresh = _run(LinearRegression(n_samples=1000), spec, execution)
    assert made[-1].compilations() >= 1
    p = LinearRegression(n_samples=1000)
    longer = _run(p, spec, execution, max_iter=40, seed=1)  # another minibatch order
    assert made[-1].compilations() >= 1
    again = _run(p, spec, execution)
    assert made[-1].compilations() == 0
    assert again.conditions.execution == execution
    assert not np.array_equal(longer.x, again.x)
    _same_run(again, fresh)


@pytest.mark.slow
def test_a_taken_bundle_is_not_shared(made):
    """While a session holds the bundle, a run of the same key builds and compiles its own
    and leaves the held variable alone; once given back, runs take the two kept bundles."""
    p = LinearRegression(n_samples=1000)
    spec = optcmp.sgd(1e-4, batch_size=64, momentum=0.9)
    first = _run(p, spec)
    session = Session(p, spec, RunConfig(backend="tensorflow", threads=1, execution="step"))
    with session.limits():
        session.open_backend()
        held = session.start()
        assert made[-1].compilations() == 0  # it took the first run's bundle
        np.testing.assert_array_equal(held.x_numpy(), session.x0)
        other = _run(p, spec)
        assert made[-1].compilations() >= 1  # its own bundle
        np.testing.assert_array_equal(held.x_numpy(), session.x0)
        session.release()
        session.release()  # a second give-back does nothing
    _same_run(other, first)
    def concurrent(_):
        return optcmp.run(p, spec, backend="tensorflow", execution="step", threads=1,
                              max_iter=30, max_time=None, eval_every=1)

    with ThreadPoolExecutor(2) as pool:  # two bundles kept: two runs at once take one each
        both = list(pool.map(concurrent, range(4)))
    for r in both:
        assert r.conditions.compiles_in_timed == 0
        _same_run(r, first)
    assert _run(p, spec).conditions.compiles_in_timed == 0 and made[-1].compilations() == 0


@pytest.mark.slow
def test_a_failed_run_gives_its_bundle_back(made):
    """A run that fails in its steps (a raising callback) gives the bundle back: the next
    run takes it, reset, and compiles nothing."""
    p = LinearRegression(n_samples=1000)
    spec = optcmp.sgd(1e-4, batch_size=64, momentum=0.9)

    def crash(*_):
        raise RuntimeError("stop here")

    _run(p, spec)  # builds the bundle and the problem's screen, and gives the bundle back
    assert made[-1].compilations() >= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        failed = optcmp.run(p, spec, backend="tensorflow", execution="step", threads=1,
                                max_iter=30, max_time=None, callback=crash)
    assert failed.status == "failed" and "stop here" in failed.message
    assert made[-1].compilations() == 0  # it took the bundle
    again = _run(p, spec)
    assert made[-1].compilations() == 0
    _same_run(again, _run(LinearRegression(n_samples=1000), spec))
