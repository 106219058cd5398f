"""The screen of a spanning block's kept iterates: one compiled call, the single call's values."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.engine import screen as screen_module
from optcmp.engine.screen import Screen
from optcmp.frameworks import get_backend
from optcmp.problems import FizzBuzzMLP, LinearRegression

BACKENDS = ["tensorflow", "jax"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("problem", [LinearRegression(n_samples=2000, n_features=4, seed=0),
                                     FizzBuzzMLP()], ids=["linreg", "fizzbuzz"])
def test_a_block_of_kept_iterates_screens_to_the_single_calls_values(backend, problem):
    """The screen of 5 of a 9-row buffer of iterates in one call equals, to the last bit,
    the screen of each iterate on its own; the rows past them are not evaluated (zeros)."""
    b = get_backend(backend)
    data = b.place(problem.train_data)
    x0 = np.asarray(problem.init_params(0), dtype=np.float64)
    rng = np.random.default_rng(2)
    xs = x0 + 0.5 * rng.standard_normal((9, x0.size))
    single, each = Screen(b, problem, data, x0), Screen(b, problem, data, x0, kept=9)
    values = each.values(b.asarray(xs), 5)
    assert values.tolist() == [single(x) for x in xs[:5]]
    padded = np.asarray(b.to_numpy(each._each(5, b.asarray(xs), data)))
    assert (padded[5:] == 0).all() and len(set(values.tolist())) == 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_spanning_run_screens_each_block_in_one_call(backend, monkeypatch):
    """FizzBuzz SGD-64 over 40 epochs, screened on the CPU as on a GPU: every observation but
    the budget's last is screened, in one screen call per block (fewer calls than
    observations)."""
    monkeypatch.setattr(screen_module, "SCREEN_ON_CPU", (backend,))
    problem = FizzBuzzMLP()
    sgd = optcmp.sgd(learning_rate=0.5, batch_size=64)
    optcmp.run(problem, sgd, backend=backend, max_iter=15, threads=1)  # compiled, warmed
    calls: list[int] = []
    real = Screen.values

    def counted(self: Screen, kept, m):  # noqa: ANN001, ANN202
        calls.append(m)
        return real(self, kept, m)

    monkeypatch.setattr(Screen, "values", counted)
    r = optcmp.run(problem, sgd, backend=backend, max_iter=15 * 40, tol=1e-12, threads=1)
    assert r.trace.judged.tolist() == [True] + [False] * 39 + [True]
    assert sum(calls) == 39 and len(calls) < 39
