"""The screen of a minibatch run's observations, the host judge, and the trace's judged rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import optcmp
from optcmp import Comparison
from optcmp.engine import screen as screen_module
from optcmp.engine.screen import Screen, host_value
from optcmp.frameworks import get_backend
from optcmp.problems import FizzBuzzMLP, LinearRegression
from optcmp.results import Trace
from optcmp.stopping import GradientNorm, LossTarget, MaxIter

BACKENDS = ["torch", "jax"]
#: a fifth of 1 / L of :func:`_problem`: SGD-64 decreases the objective epoch by epoch
LR = 1e-4


#: Every framework backend: their runs on the CPU screen as on a GPU.
EVERY = ("torch", "tensorflow", "jax")


@pytest.fixture
def screen_on_cpu(monkeypatch):
    """Runs on the CPU screen their observations, as a GPU run does."""
    monkeypatch.setattr(screen_module, "SCREEN_ON_CPU", EVERY)


def _problem() -> LinearRegression:
    return LinearRegression(n_samples=2000, n_features=4, seed=0)


def _host_values(backend: str, epochs: int) -> tuple[int, list[tuple[int, float]]]:
    """Steps per epoch and the host judge's value at every epoch of SGD-64 (a callback makes
    every observation the host's)."""
    seen: list[tuple[int, float]] = []
    r = optcmp.run(_problem(), optcmp.sgd(learning_rate=LR, batch_size=64), backend=backend,
                   max_iter=32 * epochs, threads=1,
                   callback=lambda ir: seen.append((int(ir.nit), float(ir.fun))))
    assert r.trace.judged.all()
    return 32, seen


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_screen_just_above_a_target_the_host_meets_still_stops_there(backend, monkeypatch,
                                                                       screen_on_cpu):
    """Screen values 0.9 of the margin above the host's: the target the host meets at epoch 6
    is met at epoch 6, on the host's value."""
    spe, seen = _host_values(backend, 10)
    value = seen[6][1]
    first = next(k for k, f in seen if f <= value)
    screened: list[float] = []
    real = Screen.__call__

    def above(self: Screen, x: np.ndarray) -> float:
        s = real(self, x)
        s += 0.9 * self.margin(s, 0.0)
        screened.append(s)
        return s

    monkeypatch.setattr(Screen, "__call__", above)
    r = optcmp.run(_problem(), optcmp.sgd(learning_rate=LR, batch_size=64), backend=backend,
                   stopping=LossTarget(value) | MaxIter(10 * spe), threads=1)
    assert r.status == "converged" and r.nit_to_target == first
    assert screened and min(screened) > value  # every screen value stayed above the target
    assert r.trace.fun[-1] == value and r.trace.judged[-1]
    assert not r.trace.judged[1:first // spe - 1].any()  # clear of the target: not judged


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("problem", [_problem(), FizzBuzzMLP()], ids=["linreg", "fizzbuzz"])
def test_the_screen_lies_well_inside_its_margin(backend, problem):
    """The backend's float64 objective of the whole data is within a hundredth of the margin
    of the host's, at x0 and at points far from it."""
    b = get_backend(backend)
    x0 = np.asarray(problem.init_params(0), dtype=np.float64)
    screen = Screen(b, problem, b.place(problem.train_data), x0)
    rng = np.random.default_rng(1)
    for x in [x0, *(x0 + rng.standard_normal(x0.shape) for _ in range(3))]:
        s, h = screen(x), host_value(problem, x)
        assert abs(s - h) <= screen.margin(s, 0.0) / 100, (s, h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_screened_rows_are_marked_and_survive_a_round_trip(backend, screen_on_cpu):
    """A float64 SGD run on a framework judges its first and last rows on the host and screens
    the others (no target near); the column saves and loads; a trace without it reads as all
    judged."""
    r = optcmp.run(_problem(), optcmp.sgd(learning_rate=LR, batch_size=64), backend=backend,
                   max_iter=32 * 5, tol=1e-12, threads=1)
    tr = r.trace
    assert r.conditions.observations == "screen"
    # the budget's last observation is judged: it is the result's value
    assert tr.judged.tolist() == [True] + [False] * 4 + [True] and r.fun == tr.fun[-1]
    assert np.isnan(tr.grad_norm[1:]).all()  # no rule reads the gradient: not computed
    back = Trace.from_dict(tr.to_dict())
    assert back.judged.tolist() == tr.judged.tolist()
    old = {k: v for k, v in tr.to_dict().items() if k != "judged"}
    assert Trace.from_dict(old).judged.all()
    with pytest.raises(ValueError, match="judged"):
        Trace.from_dict({**tr.to_dict(), "judged": [1.5] * len(tr)})
    with pytest.raises(ValueError, match="'judged' has 5 rows, the trace 6"):
        Trace.from_dict({**tr.to_dict(), "judged": [True] * 5})


def test_a_numpy_run_judges_every_row_without_the_gradient():
    """numpy's host evaluation is its own judge: every row judged, and the gradient's norm
    nowhere, x0 included (no rule reads it: the start is fun64's value alone)."""
    r = optcmp.run(_problem(), optcmp.sgd(learning_rate=LR, batch_size=64), backend="numpy",
                   max_iter=32 * 3, tol=1e-12, threads=1)
    assert r.trace.judged.all() and np.isnan(r.trace.grad_norm).all()


@pytest.mark.parametrize("backend", ["numpy", *BACKENDS])
def test_a_gradient_norm_rule_still_gets_the_gradient(backend, screen_on_cpu):
    """A rule that reads the gradient's norm gets it at every observation, judged on the host:
    the norm of numpy's float64 gradient there."""
    p = _problem()
    r = optcmp.run(p, optcmp.sgd(learning_rate=LR, batch_size=64), backend=backend,
                   stopping=GradientNorm(1e-12) | MaxIter(32 * 3), threads=1)
    tr = r.trace
    assert tr.judged.all() and np.isfinite(tr.grad_norm).all() and len(tr) == 4
    x = r.x
    assert tr.grad_norm[-1] == pytest.approx(np.linalg.norm(p.grad(x, p.train_data)),
                                             rel=1e-12)


@pytest.mark.parametrize("backend", [pytest.param("tensorflow", marks=pytest.mark.slow),
                                     *BACKENDS])
def test_a_cpu_run_judges_every_observation_and_meets_the_screened_runs_target(
        backend, monkeypatch):
    """A run judged at every observation (recorded as "judge", by default on a CPU but for
    torch) meets FizzBuzz SGD-64's loss target at the same step and iterate as with the
    screen, whose judged rows hold the same values and screened rows values within its
    margin."""
    problem, sgd = FizzBuzzMLP(), optcmp.sgd(learning_rate=0.5, batch_size=64)

    def run(screens: tuple[str, ...]) -> optcmp.RunResult:
        monkeypatch.setattr(screen_module, "SCREEN_ON_CPU", screens)
        return optcmp.run(problem, sgd, backend=backend, threads=1,
                          stopping=LossTarget(0.19) | MaxIter(15 * 60))

    judged, screened = run(()), run(EVERY)
    assert (judged.conditions.observations, screened.conditions.observations) == (
        "judge", "screen")
    assert judged.trace.judged.all() and not screened.trace.judged[1:-1].any()
    assert judged.status == screened.status == "converged"
    assert judged.nit_to_target == screened.nit_to_target and judged.fun == screened.fun
    np.testing.assert_array_equal(judged.x, screened.x)
    a, b, ok = judged.trace.fun, screened.trace.fun, screened.trace.judged
    assert len(a) == len(b) and (a[ok] == b[ok]).all()
    rtol = 2.0 * (problem.n_samples + problem.n_params) * 2.0 ** -53 * 1000
    assert (np.abs(a - b) <= rtol * (np.abs(b) + b[0])).all()


def test_where_a_cpu_run_observes_by_default():
    """On a CPU a minibatch run is judged at every observation on numpy, TensorFlow and JAX,
    and screened first on torch; a full-batch run's observations are its steps' values."""
    p, sgd = _problem(), optcmp.sgd(learning_rate=LR, batch_size=64)
    where = {b: optcmp.run(p, sgd, backend=b, max_iter=32 * 3, tol=1e-12, threads=1)
             for b in ("numpy", *EVERY)}
    assert {b: r.conditions.observations for b, r in where.items()} == {
        "numpy": "judge", "torch": "screen", "tensorflow": "judge", "jax": "judge"}
    assert {b: r.trace.judged.tolist() for b, r in where.items()} == {
        "numpy": [True] * 4, "torch": [True, False, False, True], "tensorflow": [True] * 4,
        "jax": [True] * 4}
    assert optcmp.run(p, optcmp.gd(), backend="jax", max_iter=5).conditions.observations == ""


def test_saved_files_from_before_the_column_load_as_judged():
    """A file saved by optcmp 0.1.0 has no judged column: its rows read as judged."""
    src = Path(__file__).parent / "data" / "saved_v0_1" / "linreg.json"
    comp = Comparison.load(src)
    assert all(len(r.trace) and r.trace.judged.all() for r in comp.runs)
    assert "judged" not in comp.runs[0].trace.to_dict()


def test_the_host_judge_is_fun64_and_equals_value_and_grad_to_the_bit():
    """The judge's value without the gradient (``fun64``) is the value ``value_and_grad``
    gives, to the bit, so a value-only observation records what a full one did."""
    from optcmp.engine.screen import host_value
    from optcmp.problems import FizzBuzzMLP, LinearRegression, LogisticRegression

    for p in (FizzBuzzMLP(), FizzBuzzMLP(loss="cross_entropy"),
              LinearRegression(n_samples=200_000), LogisticRegression()):
        for s in range(2):
            x = p.init_params(s) + 0.01 * s
            assert host_value(p, x) == p.fun64(x) == float(p.value_and_grad(x, p.train_data)[0])
