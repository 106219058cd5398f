"""Linear warm-up's first factor: 0 at k = 0 (Hugging Face, optax), so the first step is wasted."""

import numpy as np
import pytest

import optcmp
from optcmp.optimizers import schedule as S
from optcmp.problems import from_function


def _lr_a():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 3))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.1 * rng.standard_normal(1000)
    A = np.hstack([X, np.ones((1000, 1))])
    th = np.linalg.lstsq(A, y, rcond=None)[0]
    fstar = float(np.mean((A @ th - y) ** 2))

    def f(ops, x, data):
        r = ops.matmul(data["A"], x) - data["y"]
        return ops.mean(r * r)

    def g(x, data):
        return 2.0 * data["A"].T @ (data["A"] @ x - data["y"]) / len(data["y"])

    return from_function(f, np.zeros(4), {"A": A, "y": y}, grad=g, optimum=fstar, name="lr_a")


def test_warmup_factors_name_the_first_step():
    # optcmp's warmup(100) gives 0, 0.01, 0.99, 1 at k = 0, 1, 99, 100 (as optax.linear_schedule
    # and Hugging Face); torch's LinearLR(start_factor=1/W) starts at 0.01
    w = S.warmup(100)
    assert [w.factor(k) for k in (0, 1, 99, 100)] == pytest.approx([0.0, 0.01, 0.99, 1.0])
    assert S.warmup(100, start_factor=0.01).factor(0) == pytest.approx(0.01)
    assert str(w) == "warmup(warmup_steps=100, start_factor=0.0)"  # the k = 0 factor is recorded


def test_adam_with_a_zero_first_warmup_factor_does_not_move_at_step_one_and_counts_it():
    # Adam lr 0.01 on LR-A with warmup(100): theta_1 == theta_0 bit for bit; 712 iterations to
    # 1e-6 (586 without warm-up)
    p = _lr_a()
    cfg = optcmp.RunConfig(backend="numpy", tol=1e-6, max_iter=1000, threads=1)
    one = optcmp.run(p, optcmp.adam(learning_rate=0.01, schedule=S.warmup(100)),
                         cfg.replace(max_iter=1))
    assert one.nit == 1 and np.array_equal(one.x, np.zeros(4))
    r = optcmp.run(p, optcmp.adam(learning_rate=0.01, schedule=S.warmup(100)), cfg)
    assert r.status == "converged"
    # the count is the first iterate below 1e-6 on a geometric decrease that passes the
    # threshold by a wide margin each step, so no BLAS kernel's rounding moves it
    assert r.nit_to_target == 712
    # torch's LinearLR(start_factor=1/W) form: 710
    torch_form = optcmp.run(p, optcmp.adam(learning_rate=0.01,
                                               schedule=S.warmup(100, start_factor=0.01)), cfg)
    assert torch_form.nit_to_target == 710
    plain = optcmp.run(p, optcmp.adam(learning_rate=0.01), cfg)
    assert plain.nit_to_target == 586
