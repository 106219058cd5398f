"""Native torch models in low precision and under torch.compile: the steps whose updates round
away are counted and the run that stops on them is flagged; compiles are counted per run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optcmp
from optcmp.problems.digits import load_digits

torch = pytest.importorskip("torch")


def _least_squares() -> tuple[np.ndarray, np.ndarray, float, float]:
    """1,000 rows, y = 1.5 x1 - 2 x2 + 0.5 x3 + 0.3 + noise: X, y, f* and f(0) of half the MSE."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 3))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.3 + 0.1 * rng.standard_normal(1000)
    A = np.c_[X, np.ones(1000)]
    theta = np.linalg.lstsq(A, y, rcond=None)[0]
    return X, y, 0.5 * np.mean((A @ theta - y) ** 2), 0.5 * np.mean(y ** 2)


def _half_mse(out: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    return 0.5 * torch.mean((out.reshape(-1) - t) ** 2)


@pytest.mark.slow
def test_bfloat16_adamw_steps_round_away_and_the_run_is_flagged_not_converged():
    """Claimed: AdamW on bfloat16 weights "converged" (its loss went flat). Right: at lr 1e-3
    Adam's step (about lr) is below half an ulp of weights near 1-2 (2^-7 at 1), so about 97%
    of 20,000 steps change no parameter and the run stalls near half its initial
    suboptimality; the same model in float32 reaches relative suboptimality 1e-6 in about
    4,580 steps. (bfloat16 products differ by CPU kernel: the shares, not exact counts.)"""
    X, y, fstar, f0 = _least_squares()
    target = optcmp.LossTarget(fstar + 1e-6 * (f0 - fstar)) | optcmp.MaxIter(20_000)
    runs = {}
    for dtype in (torch.float32, torch.bfloat16):
        lin = torch.nn.Linear(3, 1, dtype=dtype)
        with torch.no_grad():
            lin.weight.zero_()
            lin.bias.zero_()
        p = optcmp.problems.from_torch(lin, _half_mse, (X, y))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs[dtype] = optcmp.run(p, optcmp.adamw(1e-3, weight_decay=0.0), stopping=target)
    f32, bf16 = runs[torch.float32], runs[torch.bfloat16]
    assert f32.status == "converged" and 4400 < f32.nit < 4800
    assert f32.conditions.noop_steps is None  # float32 updates are not counted
    assert bf16.dtype == "bfloat16" and bf16.status == "rounded" and bf16.nit == 20_000
    assert 0.96 <= bf16.conditions.noop_steps / 20_000 <= 0.99
    assert bf16.message.startswith(f"stalled by rounding: {bf16.conditions.noop_steps:,} of "
                                   "20,000 steps")
    assert 0.4 < (bf16.fun - fstar) / (f0 - fstar) < 0.6


def _linear(framework: str, dtype: str) -> optcmp.problems.ModelProblem:
    """The least-squares problem as a zero-initialised linear model of ``framework`` with every
    parameter in ``dtype`` (Keras: the layers' dtype policy; JAX: the pytree's leaves)."""
    X, y, _, _ = _least_squares()
    if framework == "keras":
        keras = pytest.importorskip("keras")
        tf = pytest.importorskip("tensorflow")
        net = keras.Sequential([keras.Input((3,), dtype=dtype), keras.layers.Dense(
            1, dtype=dtype, kernel_initializer="zeros")])
        return optcmp.problems.from_keras(net, lambda t, out: 0.5 * tf.reduce_mean(
            (tf.reshape(out, [-1]) - t) ** 2), (X, y))
    jnp = pytest.importorskip("jax").numpy
    return optcmp.problems.from_jax(lambda p, X: X @ p["w"] + p["b"], {
        "w": jnp.zeros(3, dtype), "b": jnp.zeros((), dtype)},
        lambda out, t: 0.5 * jnp.mean((out - t) ** 2), (X, y))


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["jax", "keras"])
def test_bfloat16_adamw_on_keras_and_jax_is_flagged_rounded(framework):
    """Claimed: bfloat16 AdamW "converged". Right: optax's AdamW on a bfloat16 pytree stalls
    as torch's does (about 97% of 20,000 steps change nothing, relative suboptimality about
    0.5); Keras' AdamW on bfloat16 variables never moves at all (it casts beta_2 = 0.999 to
    bfloat16, where it is 1.0, so its bias correction sqrt(1 - beta_2^t) is 0). Both runs are
    ``rounded``; the same model in float32 reaches 1e-6 in 4,579 steps on either framework
    (4,400-4,800 asserted: float32 sums differ by kernel)."""
    _, _, fstar, f0 = _least_squares()
    target = optcmp.LossTarget(fstar + 1e-6 * (f0 - fstar)) | optcmp.MaxIter(20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f32, bf16 = (optcmp.run(_linear(framework, dt), optcmp.adamw(1e-3, weight_decay=0.0),
                                stopping=target) for dt in ("float32", "bfloat16"))
    assert f32.status == "converged" and 4400 < f32.nit < 4800
    assert f32.conditions.noop_steps is None
    assert bf16.dtype == "bfloat16" and bf16.status == "rounded" and bf16.nit == 20_000
    assert "bfloat16" in bf16.implementation
    rel = (bf16.fun - fstar) / (f0 - fstar)
    if framework == "keras":
        assert bf16.conditions.noop_steps == 20_000 and rel == pytest.approx(1.0, abs=1e-2)
    else:
        assert 0.96 <= bf16.conditions.noop_steps / 20_000 <= 0.99 and 0.4 < rel < 0.6


@pytest.mark.parametrize("name", ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "NAdam"])
def test_a_fresh_optimizer_state_set_before_the_first_step_leaves_the_steps_unchanged(name):
    """The state a compiled update starts from (each optimizer's own first-step
    initialisation, set before the warm-up) gives the same steps, bit for bit, as an
    optimizer whose first step initialises it."""
    from optcmp.frameworks.torch.model_stepper import fresh_state

    kw = {"SGD": {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}}.get(name, {"lr": 0.01})
    got = []
    for prime in (False, True):
        torch.manual_seed(0)
        ps = [torch.nn.Parameter(torch.randn(5, 3, dtype=torch.float64)),
              torch.nn.Parameter(torch.randn(3, dtype=torch.float64))]
        opt = getattr(torch.optim, name)(ps, **kw)
        if prime:
            before = [p.detach().clone() for p in ps]
            fresh_state(opt)
            assert len(opt.state) == 2 and all(torch.equal(p, b) for p, b in zip(ps, before))
        g = torch.Generator().manual_seed(1)
        for _ in range(5):
            for p in ps:
                p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64)
            opt.step()
        got.append(torch.cat([p.detach().reshape(-1) for p in ps]))
    assert torch.equal(got[0], got[1])


@pytest.mark.slow
def test_a_compiled_update_counts_its_own_compiles_from_the_state_the_warmup_compiled_for():
    """Claimed: a torch.compile'd step is N% faster, after a one-step warm-up. Right (torch
    2.13): each run's compiles are counted from empty dynamo caches, so two runs of one process
    count alike; the optimizer's state is initialised before the warm-up (dynamo compiles a
    step for the state as the step initialised it, so a step entered with an empty state
    always compiles anew), so a constant rate compiles nothing in the timed region and a step
    decay at step 10 one graph, for the new float lr."""
    train, _ = load_digits()
    model = optcmp.problems.digits_mlp("torch").model.model

    def run(schedule: str) -> optcmp.RunResult:
        p = optcmp.problems.from_torch(model, "cross_entropy", train, compile_step=True)
        return optcmp.run(p, optcmp.adam(1e-2, batch_size=64, schedule=schedule),
                          stopping=optcmp.MaxIter(46))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = [(r.conditions.compiled, r.conditions.compiles_in_timed) for r in (
            run("constant"), run("constant"), run("step(step_size=10, gamma=0.5)"))]
    assert got == [("torch.compile", 0), ("torch.compile", 0), ("torch.compile", 1)]


def _tensor_lr(make):
    """A scheduler factory that first makes the optimizer's learning rate a tensor."""
    def factory(opt):
        for g in opt.param_groups:
            g["lr"] = torch.tensor(g["lr"])
        return make(opt)
    return factory


_LINEAR = lambda o: torch.optim.lr_scheduler.LinearLR(o, start_factor=0.1, total_iters=30)  # noqa: E731
_ONE_CYCLE = lambda o: torch.optim.lr_scheduler.OneCycleLR(o, max_lr=0.01, total_steps=31)  # noqa: E731


@pytest.mark.slow
@pytest.mark.parametrize(("scheduler", "graphs", "compiled"), [
    (_LINEAR, 2, "torch.compile"), (_tensor_lr(_LINEAR), 1, "torch.compile"),
    (_ONE_CYCLE, 8, "torch.compile -> eager fallback"),
    (_tensor_lr(_ONE_CYCLE), 8, "torch.compile -> eager fallback")],
    ids=["LinearLR-float", "LinearLR-tensor", "OneCycleLR-float", "OneCycleLR-tensor"])
def test_a_users_scheduler_under_torch_compile_recompiles_as_torch_does(scheduler, graphs,
                                                                      compiled):
    """Claimed: a compiled AdamW step with an LR scheduler is timed after a one-step warm-up.
    Right (torch 2.13, 30 steps of AdamW on one 64 x 64 weight): LinearLR with a float lr
    compiles 2 graphs (steps 1 and 2), with a tensor lr 1; OneCycleLR 8 (steps 1-8: it cycles
    beta1, a float, too) and then dynamo's recompile limit (8), after which the step runs
    eagerly. The warm-up takes the first; the rest are counted in the timed region, warned,
    and the fallback marks the run."""
    from torch._dynamo.utils import counters

    rng = np.random.default_rng(0)
    X, Y = (rng.standard_normal((256, 64)).astype(np.float32) for _ in range(2))
    torch.manual_seed(0)
    p = optcmp.problems.from_torch(torch.nn.Linear(64, 64, bias=False), "mse", (X, Y),
                                   compile_step=True, scheduler=scheduler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = optcmp.run(p, optcmp.adamw(0.01), stopping=optcmp.MaxIter(30))
    assert counters["stats"]["unique_graphs"] == graphs and r.nit == 30
    assert r.conditions.compiles_in_timed == graphs - 1 and r.conditions.compiled == compiled
    kind = "OneCycleLR" if graphs == 8 else "LinearLR"
    assert f"{kind} after each step" in r.implementation
    said = [str(w.message) for w in caught]
    assert any(f"{graphs - 1} compilation(s)" in m for m in said) == (graphs > 1)
    assert any("eager fallback" in m for m in said) == (graphs == 8)


def test_a_users_scheduler_and_a_spec_schedule_are_not_both_taken():
    """A module's scheduler and the spec's schedule both set the learning rate: refused."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((32, 4)), rng.standard_normal((32, 2))
    p = optcmp.problems.from_torch(torch.nn.Linear(4, 2), "mse", (X, Y), scheduler=_LINEAR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = optcmp.run(p, optcmp.adam(1e-2, schedule="step(step_size=2, gamma=0.5)"),
                       stopping=optcmp.MaxIter(5))
    assert r.status == "skipped" and "both set the learning rate" in r.message
    with pytest.raises(TypeError, match="scheduler must be a function"):
        optcmp.problems.from_torch(torch.nn.Linear(4, 2), "mse", (X, Y), scheduler=3)


def test_a_torch_scheduler_that_is_not_one_of_its_optimizer_is_refused():
    """``scheduler=`` must return an LR scheduler of the optimizer it is given: the optimizer
    itself (which steps twice per iteration), a scheduler of another optimizer (which changes
    nothing), ReduceLROnPlateau (which needs a metric) and a reference rule (which has no
    torch optimizer to schedule) are refused by name; a bad ``compile_step`` at once."""
    X = np.random.default_rng(0).standard_normal((256, 4))
    y = (X @ np.arange(1.0, 5.0))[:, None]
    m = torch.nn.Linear(4, 1).double()
    other = torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler
    cases = {"must return a torch LR scheduler": lambda o: o,
             "not another one": lambda o: sched.LambdaLR(other, lambda k: 0.0),
             "ReduceLROnPlateau steps on a metric": lambda o: sched.ReduceLROnPlateau(o)}
    for why, factory in cases.items():
        p = optcmp.problems.from_torch(m, "mse", (X, y), scheduler=factory)
        r = optcmp.run(p, optcmp.sgd(0.01, batch_size=32), stopping=optcmp.MaxIter(3))
        assert r.status in ("failed", "skipped") and why in r.message, r.message
    p = optcmp.problems.from_torch(m, "mse", (X, y), scheduler=lambda o: sched.LinearLR(o))
    ok = optcmp.run(p, optcmp.sgd(0.01, batch_size=32), stopping=optcmp.MaxIter(3))
    ref = optcmp.run(p, optcmp.lion(1e-3, batch_size=32), stopping=optcmp.MaxIter(3))
    assert ok.status == "max_iter" and "LinearLR after each step" in ok.implementation
    assert ref.status == "skipped" and "LR scheduler steps a torch.optim" in ref.message
    for bad in (3, 1.5, "", None):
        with pytest.raises(TypeError, match="compile_step must be True, False or the name"):
            optcmp.problems.from_torch(m, "mse", (X, y), compile_step=bad)
