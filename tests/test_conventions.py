"""Named conventions, schedules, weight decay and clipping: where torch and Keras run different
algorithms under one name (Adam's epsilon, momentum under a schedule, weight decay, gradient
clipping), checked against the values each framework gives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, lr_a, needs_tf, needs_torch

import optcmp
from optcmp.frameworks.numpy.ops import ops
from optcmp.optimizers import optimizer_info
from optcmp.optimizers.schedule import check_schedule, parse

CUT_AT_30 = "multistep(milestones=[30], gamma=0.1)"


def _iterates(spec, g: float, n: int = 3) -> list[float]:
    """The reference rule on one scalar parameter at 0 under a constant gradient ``g``."""
    rule = optimizer_info(spec.name).rule
    hp = dict(spec.hyperparameters)
    x = np.zeros(1)
    state = rule.init_state(ops, x)
    out = []
    for _ in range(n):
        x, state = rule.update(ops, x, np.full(1, g), state, hp, None)
        out.append(float(x[0]))
    return out


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


# ------------------------------------------------------------------ Adam's epsilon
TORCH_ADAM = optcmp.adam(1e-3, eps=1e-8)  # torch's defaults
KERAS_ADAM = optcmp.adam(1e-3, eps=1e-7, convention="eps_hat")  # Keras' defaults


def test_adam_epsilon_conventions_at_gradient_1e_6_give_torchs_and_keras_iterates():
    """Users reported that the same Adam settings run differently in Keras and PyTorch: at a
    constant gradient 1e-6, torch's first step is -9.90099e-4, Keras' -2.40251e-4 (4.12x apart)."""
    assert [f"{v:.5e}" for v in _iterates(TORCH_ADAM, 1e-6)] == [
        "-9.90099e-04", "-1.98020e-03", "-2.97030e-03"]
    # Keras' own figures come from a run with Python-float betas, which Keras casts
    # through float32 in beta ** t (0.999 -> 0.9990000128746033): 8e-6 relative off the
    # exact eps_hat rule, which optcmp runs (its Keras native passes numpy.float64 betas)
    keras_own = [-2.40251e-4, -5.49213e-4, -9.02986e-4]
    assert np.allclose(_iterates(KERAS_ADAM, 1e-6), keras_own, rtol=1e-5, atol=0)
    ratio = _iterates(TORCH_ADAM, 1e-6, 1)[0] / _iterates(KERAS_ADAM, 1e-6, 1)[0]
    assert f"{ratio:.2f}" == "4.12"


@needs_tf
def test_keras_adam_with_python_float_betas_gives_its_own_digits():
    """Why Keras' own digits are 8e-6 off the exact rule: Keras' float32 beta cast."""
    import tensorflow as tf
    from test_backends_defaults import _keras

    keras = _keras()
    v = tf.Variable(np.zeros(1))
    opt = keras.optimizers.Adam(learning_rate=1e-3)  # Keras' defaults, Python floats
    out = []
    for _ in range(3):
        opt.apply_gradients([(tf.constant([1e-6], tf.float64), v)])
        out.append(f"{float(v.numpy()[0]):.5e}")
    assert out == ["-2.40251e-04", "-5.49213e-04", "-9.02986e-04"]
    b1, b2 = float(np.float32(0.9)), float(np.float32(0.999))  # the casts in beta ** t
    first = -1e-3 * np.sqrt(1 - b2) / (1 - b1) * 1e-7 / (np.sqrt(1e-15) + 1e-7)
    assert f"{first:.5e}" == out[0]


def test_adam_epsilon_conventions_first_step_at_gradient_1e_7():
    assert f"{_iterates(TORCH_ADAM, 1e-7, 1)[0]:.4e}" == "-9.0909e-04"
    assert f"{_iterates(KERAS_ADAM, 1e-7, 1)[0]:.4e}" == "-3.0653e-05"


def test_adam_epsilon_conventions_take_the_same_step_at_gradient_1():
    a, b = _iterates(TORCH_ADAM, 1.0), _iterates(KERAS_ADAM, 1.0)
    for k, (u, v) in enumerate(zip(a, b), start=1):
        assert f"{u:.4e}" == f"{v:.4e}" == f"{-1e-3 * k:.4e}"
        assert abs(u - v) < 1e-8


@needs_tf
def test_an_adam_spec_never_runs_the_other_convention():
    p = lr_a()
    r = _quiet(optcmp.run, p, optcmp.adam(0.01, impl="native"), backend="tensorflow",
               max_iter=5, max_time=None)
    assert r.status == "skipped"
    assert "keras.optimizers.Adam implements convention='eps_hat'" in r.message
    auto = _quiet(optcmp.run, p, optcmp.adam(0.01), backend="tensorflow", max_iter=5,
                  max_time=None)
    assert auto.impl == "reference" and auto.status != "skipped"


def test_check_equivalence_between_adam_conventions_is_different():
    res = _quiet(optcmp.check_equivalence, lr_a(), [TORCH_ADAM, KERAS_ADAM],
                 backends=("numpy",), steps=20, tolerance=1e-12)
    assert res.verdict == "different"
    assert res.backends == ["numpy#0", "numpy#1"]
    assert res.first_step_above() == 1  # the first step already differs (by 3e-6 relative)


# ------------------------------------------------------------------ momentum under a schedule
def test_momentum_conventions_after_a_learning_rate_cut_scalar_iterates():
    """Users reported "the same SGD with momentum" running differently in torch and Keras once
    the learning rate changes: after a cut from 0.1 to 0.01, torch steps to -0.119, Keras -0.2."""
    ms = "multistep(milestones=[1], gamma=0.1)"  # lr 0.1 for step 1, then 0.01
    torch_form = _iterates(optcmp.momentum(0.1, schedule=ms), 1.0)
    keras_form = _iterates(optcmp.momentum(0.1, schedule=ms, convention="lr_inside"), 1.0)
    assert [round(v, 4) for v in torch_form] == [-0.1, -0.119, -0.1461]
    assert [round(v, 3) for v in keras_form] == [-0.1, -0.2, -0.3]


@pytest.mark.parametrize("make, subopt41", [
    (optcmp.momentum, ("1.250e-02", "3.764e-02")),
    (optcmp.nesterov, None),
])
def test_momentum_conventions_part_at_iteration_31_after_the_cut(make, subopt41):
    p = lr_a()
    res = _quiet(optcmp.check_equivalence, p,
                 [make(0.05, schedule=CUT_AT_30), make(0.05, schedule=CUT_AT_30,
                                                       convention="lr_inside")],
                 backends=("numpy",), steps=45, tolerance=1e-12)
    assert res.verdict == "different" and res.first_step_above() == 31
    dx = np.max(np.abs(res.x["numpy#0"] - res.x["numpy#1"]), axis=1)
    assert dx[:31].max() <= 2e-15
    if subopt41 is not None:
        assert f"{dx[31]:.3f}" == "0.055" and f"{dx[41]:.2f}" == "0.30"
        fs = p.optimum().fun
        rel = [(res.fun[k][41] - fs) / (res.fun[k][0] - fs) for k in ("numpy#0", "numpy#1")]
        assert tuple(f"{v:.3e}" for v in rel) == subopt41


@pytest.mark.skipif(not (HAS_TORCH and HAS_TF), reason="needs torch and tensorflow")
def test_torch_and_keras_momentum_natives_under_a_schedule_are_different():
    specs = [optcmp.momentum(0.05, schedule=CUT_AT_30, impl="native"),
             optcmp.momentum(0.05, schedule=CUT_AT_30, convention="lr_inside", impl="native")]
    res = _quiet(optcmp.check_equivalence, lr_a(), specs, backends=("torch", "tensorflow"),
                 steps=40, tolerance=1e-12)
    assert res.backends == ["torch#0", "tensorflow#1"]
    assert set(res.skipped) == {"tensorflow#0", "torch#1"}
    assert "implements convention='lr_inside'" in res.skipped["tensorflow#0"]
    assert res.verdict == "different" and res.first_step_above() == 31


def test_momentum_conventions_agree_at_a_constant_learning_rate():
    res = _quiet(optcmp.check_equivalence, lr_a(),
                 [optcmp.momentum(0.05), optcmp.momentum(0.05, convention="lr_inside")],
                 backends=("numpy",), steps=300, tolerance=1e-12)
    assert res.verdict == "equivalent"
    assert np.max(np.abs(res.x["numpy#0"] - res.x["numpy#1"])) <= 2e-15


# ------------------------------------------------------------------ weight decay
L2_POINT = [1.421937, -1.893544, 0.481183, 0.278720]
DECOUPLED_POINT = [1.489937, -1.983128, 0.503374, 0.302733]


def test_l2_and_decoupled_weight_decay_reach_their_own_points():
    """Users disagree about which "Adam with weight_decay 0.1" is AdamW: L2 decay (torch Adam)
    ends at f = 0.0257233, decoupled decay (torch AdamW, Keras) at f = 0.010248."""
    specs = [optcmp.adam(0.01, weight_decay=0.1),                       # torch Adam(wd)
             optcmp.adamw(0.01, weight_decay=0.1),                      # torch AdamW
             optcmp.adam(0.01, weight_decay=0.1, weight_decay_mode="decoupled",
                         convention="eps_hat"),                          # Keras Adam(wd)
             optcmp.adamw(0.01, weight_decay=0.1, convention="eps_hat")]  # Keras AdamW
    res = _quiet(optcmp.check_equivalence, lr_a(), specs, backends=("numpy",), steps=5000)
    x = {k: np.round(v[-1], 6) for k, v in res.x.items()}
    assert x["numpy#0"].tolist() == L2_POINT
    assert f"{res.fun['numpy#0'][-1]:.7f}" == "0.0257233"
    for k in ("numpy#1", "numpy#2", "numpy#3"):
        assert x[k].tolist() == DECOUPLED_POINT
        assert f"{res.fun[k][-1]:.6f}" == "0.010248"


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_TORCH and HAS_TF), reason="needs torch and tensorflow")
def test_weight_decay_natives_reach_the_same_points():
    """torch Adam(wd) (L2), torch AdamW, Keras Adam(wd), Keras AdamW, 5,000 float64 steps."""
    specs = [optcmp.adam(0.01, weight_decay=0.1, impl="native"),
             optcmp.adamw(0.01, weight_decay=0.1, impl="native"),
             optcmp.adam(0.01, weight_decay=0.1, weight_decay_mode="decoupled",
                         convention="eps_hat", impl="native"),
             optcmp.adamw(0.01, weight_decay=0.1, convention="eps_hat", impl="native")]
    res = _quiet(optcmp.check_equivalence, lr_a(), specs, backends=("torch", "tensorflow"),
                 steps=5000)
    assert res.backends == ["torch#0", "torch#1", "tensorflow#2", "tensorflow#3"]
    assert np.round(res.x["torch#0"][-1], 6).tolist() == L2_POINT
    for k in ("torch#1", "tensorflow#2", "tensorflow#3"):
        assert np.round(res.x[k][-1], 6).tolist() == DECOUPLED_POINT, k


# ------------------------------------------------------------------ clipping
CLIPPED = optcmp.momentum(0.1, momentum=0.0, clip_norm=1.0)


def test_global_norm_clipping_first_step_and_suboptimality():
    """Models ported between torch and Keras with "clip norm 1.0" trained differently (Keras'
    clipnorm clips each variable); by the global norm the first step's intercept is 0.003286."""
    p = lr_a()
    res = _quiet(optcmp.check_equivalence, p, CLIPPED, backends=("numpy",), steps=20)
    x1 = res.x["numpy"][1]
    assert np.round(x1, 6).tolist() == [0.060163, -0.076653, 0.022224, 0.003286]
    assert abs(np.linalg.norm(x1) - 0.1) < 1e-15  # optcmp's clip is exact (torch: 0.09999998)
    fs = p.optimum().fun
    assert f"{(res.fun['numpy'][20] - fs) / (res.fun['numpy'][0] - fs):.4e}" == "4.8253e-02"
    r = _quiet(optcmp.run, p, CLIPPED, backend="numpy", threads=1, tol=1e-6, max_time=None)
    assert r.nit_to_target == 47 and r.hyperparameters["clip_norm"] == 1.0


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="one backend only")
def test_natives_clip_the_global_norm_like_the_reference_rule():
    res = _quiet(optcmp.check_equivalence, lr_a(), CLIPPED, steps=50, impl="native",
                 tolerance=1e-12)
    assert res.verdict == "equivalent", str(res)
    assert set(res.backends) - {"numpy"}


def test_keras_gets_global_clipnorm_never_clipnorm():
    keras = optimizer_info("momentum").native("keras")
    opts = keras.options(CLIPPED.hyperparameters)
    assert opts["global_clipnorm"] == 1.0 and opts["clipnorm"] is None
    for name in ("adam", "adamw", "rmsprop", "adagrad", "nesterov"):
        spec = optcmp.get_optimizer(name, clip_norm=2.0)
        o = optimizer_info(name).native("keras").options(spec.hyperparameters)
        assert o["global_clipnorm"] == 2.0 and o["clipnorm"] is None, name


# ------------------------------------------------------------------ schedules
def test_schedule_formulas():
    assert [parse("step(step_size=2, gamma=0.5)").factor(k) for k in range(5)] == [
        1, 1, 0.5, 0.5, 0.25]
    assert [parse("multistep(milestones=[1, 3], gamma=0.1)").factor(k) for k in range(4)] == [
        1, 0.1, 0.1, 0.1 ** 2]
    assert parse("exponential(gamma=0.5)").factor(3) == 0.125
    cos = parse("cosine(total_steps=4, min_factor=0.2)")
    assert [round(cos.factor(k), 12) for k in (0, 2, 4, 9)] == [1.0, 0.6, 0.2, 0.2]
    assert [round(parse("warmup(warmup_steps=4, start_factor=0.2)").factor(k), 12)
            for k in (0, 2, 4, 9)] == [0.2, 0.6, 1.0, 1.0]


def test_schedule_canonical_strings_and_errors():
    from optcmp.optimizers import schedule as S

    assert check_schedule(None) == "constant"
    assert check_schedule(S.step_decay(30, 0.1)) == "step(step_size=30, gamma=0.1)"
    assert check_schedule(" step( gamma=0.1,step_size=30 ) ") == "step(step_size=30, gamma=0.1)"
    assert optcmp.adam(schedule=S.cosine(100)).hyperparameters["schedule"] == (
        "cosine(total_steps=100, min_factor=0.0)")
    with pytest.raises(ValueError, match="schedule must be one of"):
        optcmp.adam(schedule="linear")
    with pytest.raises(ValueError, match="needs step_size"):
        optcmp.adam(schedule="step(gamma=0.1)")
    with pytest.raises(ValueError, match="takes"):
        optcmp.adam(schedule="step(step_size=3, gamma=0.1, decay=2)")
    with pytest.raises(ValueError, match="positive integer"):
        optcmp.adam(schedule="step(step_size=0, gamma=0.1)")


@pytest.mark.parametrize("schedule, match", [
    # these used to say "could not convert string to float: ''" (no parameter named), or cut
    # a milestone of 30.5 down to 30 silently
    ("exponential(gamma=)", r"gamma must be a finite float >= 0, got ''"),
    ("step(step_size=x, gamma=0.1)", r"step_size must be a positive integer, got 'x'"),
    ("multistep(milestones=30;60, gamma=0.1)", r"milestones must be increasing positive "
                                               r"integers separated by commas"),
    ("multistep(milestones=[30.5, 60], gamma=0.1)", "milestones must be increasing positive"),
])
def test_schedule_parameter_errors_name_the_parameter(schedule, match):
    with pytest.raises(ValueError, match=match):
        optcmp.adam(schedule=schedule)


def test_per_epoch_schedule_is_converted_and_recorded():
    p = lr_a()
    spec = optcmp.momentum(0.05, schedule="step(step_size=10, gamma=0.5, unit='epoch')")
    r = _quiet(optcmp.run, p, spec, backend="numpy", max_iter=3, max_time=None)
    assert r.hyperparameters["schedule"] == "step(step_size=10, gamma=0.5)"  # 1 step = 1 epoch
    mb = optcmp.sgd(0.05, batch_size=100, momentum=0.9,
                    schedule="step(step_size=2, gamma=0.5, unit='epoch')")
    r = _quiet(optcmp.run, p, mb, backend="numpy", max_iter=3, max_time=None)
    assert r.hyperparameters["schedule"] == "step(step_size=2, gamma=0.5, every=10)"
    assert parse(r.hyperparameters["schedule"]).factor(19.0) == 1.0
    assert parse(r.hyperparameters["schedule"]).factor(20.0) == 0.5


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="one backend only")
@pytest.mark.parametrize("convention", ["lr_outside", "lr_inside"])
def test_minibatch_sgd_under_a_per_epoch_schedule_matches_its_native(convention):
    mb = optcmp.sgd(0.05, batch_size=100, momentum=0.9, convention=convention, clip_norm=2.0,
                    schedule="step(step_size=2, gamma=0.5, unit='epoch')")
    res = _quiet(optcmp.check_equivalence, lr_a(), mb, steps=60, impl="native",
                 tolerance=1e-12)
    assert res.verdict == "equivalent", str(res)
    assert len(res.skipped) == 1 and len(res.backends) == 2


def test_natives_run_either_momentum_convention_for_a_constant_learning_rate():
    info = optimizer_info("momentum")
    const = optcmp.momentum(0.05, convention="lr_outside").hyperparameters
    sched = optcmp.momentum(0.05, convention="lr_outside", schedule=CUT_AT_30).hyperparameters
    assert info.native("keras").unsupported(const) is None
    assert "differs under schedule=" in info.native("keras").unsupported(sched)
    assert info.native("torch").unsupported(sched) is None


def test_convention_errors_name_the_allowed_values():
    with pytest.raises(ValueError, match=r"convention must be one of \['bias_corrected_eps', "
                                         r"'eps_hat'\], got 'keras'"):
        optcmp.adam(convention="keras")
    with pytest.raises(ValueError, match="clip_norm must be None"):
        optcmp.momentum(clip_norm=0.0)
    with pytest.raises(ValueError, match="momentum must be"):
        optcmp.nesterov(momentum=0.0)


@needs_torch
def test_torch_schedule_is_torchs_lambdalr_and_recorded():
    spec = optcmp.adam(0.01, schedule="exponential(gamma=0.9)", impl="native")
    r = _quiet(optcmp.run, lr_a(), spec, backend="torch", max_iter=3, max_time=None)
    assert r.impl == "native" and "torch.optim.Adam" in r.implementation
    assert r.hyperparameters["schedule"] == "exponential(gamma=0.9)"


SCHEDULES = ["step(step_size=7, gamma=0.5)", "exponential(gamma=0.97)",
             "cosine(total_steps=40, min_factor=0.1)", "warmup(warmup_steps=10, start_factor=0.1)",
             "multistep(milestones=[5, 20], gamma=0.3)"]


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="one backend only")
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("impl", ["reference", "native"])
def test_every_schedule_is_the_same_on_every_backend(schedule, impl):
    """Reference rules and the torch/Keras natives (LambdaLR, LearningRateSchedule) agree."""
    spec = optcmp.adam(0.05, schedule=schedule, clip_norm=1.0,
                       convention="eps_hat" if impl == "native" and HAS_TF else
                       "bias_corrected_eps")
    res = _quiet(optcmp.check_equivalence, lr_a(), spec, steps=30, impl=impl, tolerance=1e-12)
    assert res.verdict == "equivalent", str(res)
