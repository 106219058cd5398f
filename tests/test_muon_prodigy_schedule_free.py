"""Muon, Prodigy and Schedule-Free: each framework's convention as a spec, checked against the
counts the frameworks' own optimizers give on the matrix least-squares problem (MLS, float64,
the same gradient fed to each), and every optax native against the reference rule."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, HAS_TORCH
from matrix_problem import mls

import optcmp
from optcmp.problems import from_function

#: Each framework's default Muon at lr 0.02 (momentum 0.95, Nesterov, 5 NS steps) in optcmp's
#: terms, and the iteration at which that framework's own Muon reaches rel 0.1 on MLS
#: (torch.optim.Muon 167, optax.contrib.muon 142, keras.optimizers.Muon 179; all three
#: harmonised, wd 0 and scale 0.2 sqrt(max(m, n)): 178). torch's Newton-Schulz runs in
#: bfloat16, as the reference does with ns_dtype="bfloat16".
DEFAULTS = {
    "torch": ({"weight_decay": 0.1, "ns_dtype": "bfloat16"}, 167),
    "optax": ({"bias_correction": True, "adam_nesterov": True}, 142),
    "keras": ({"momentum_form": "sum", "weight_decay": 0.004, "scale": "rms", "ns_eps": 1e-7},
              179),
    "harmonised": ({"scale": "rms"}, 178),
}
#: TensorFlow compiles the unrolled Newton-Schulz steps with XLA first (over 3 s: slow).
BACKENDS = ["numpy", *(["torch"] if HAS_TORCH else []),
            *([pytest.param("tensorflow", marks=pytest.mark.slow)] if HAS_TF else []),
            *(["jax"] if HAS_JAX else [])]
needs_jax = pytest.mark.skipif(not HAS_JAX, reason="jax and optax are not installed")


def _run(spec, backend="numpy", tol=0.1, max_iter=200, problem=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optcmp.run(problem or mls(), spec, backend=backend, tol=tol, max_iter=max_iter,
                          max_time=None, threads=1)


@pytest.mark.parametrize("framework", list(DEFAULTS))
def test_each_frameworks_default_muon_gives_its_count(framework):
    kw, nit = DEFAULTS[framework]
    r = _run(optcmp.muon(0.02, **kw))
    assert r.status == "converged" and r.nit_to_target == nit


@pytest.mark.parametrize("backend", BACKENDS)
def test_harmonised_muon_reaches_the_target_at_the_same_iteration_on_every_backend(backend):
    r = _run(optcmp.muon(0.02, scale="rms", impl="reference"), backend)
    assert r.nit_to_target == 178


needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch is not installed")


@needs_torch
@pytest.mark.parametrize("batch_size", [None, 64])
def test_torch_muon_is_the_reference_with_bfloat16_newton_schulz(batch_size):
    """torch.optim.Muon orthogonalises in bfloat16 even for float64 weights: the reference with
    ns_dtype="bfloat16" follows it over 20 steps within 5e-3 (each step's update within one
    bfloat16 ulp of torch's, where a float32 and a float64 sum round apart: at most
    20 * lr * sqrt(2) * 2^-8 * max|update| (0.56) = 1.2e-3 on weights whose largest entry is
    over 0.3 on MLS: 4e-3); the spec in the run's dtype is not offered to torch's native,
    which says which convention it runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(mls(), optcmp.muon(0.02, weight_decay=0.1,
                                                          ns_dtype="bfloat16",
                                                          batch_size=batch_size),
                                       backends=("numpy", "torch"), steps=20,
                                       impl={"numpy": "reference", "torch": "native"},
                                       tolerance=5e-3)
        run64 = _run(optcmp.muon(0.02, weight_decay=0.1, impl="native"), "torch", max_iter=3)
    assert res.impls == {"numpy": "reference", "torch": "native"}
    assert res.verdict == "equivalent", res
    assert run64.status == "skipped" and "ns_dtype='bfloat16'" in run64.message


@needs_torch
def test_bfloat16_newton_schulz_is_torchs_to_one_bfloat16_ulp():
    """On MLS's gradient at W0, torch's Newton-Schulz (bfloat16) and the reference's with
    ns_dtype="bfloat16" agree exactly; the float64 one differs by 2.4e-2 (entries up to 0.56).
    On random matrices they differ by at most one bfloat16 ulp of the largest entry."""
    import torch
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    from optcmp.frameworks.numpy.ops import ops
    from optcmp.optimizers.muon import NS_COEFFS, newton_schulz

    p = mls()
    g = p.value_and_grad(p.init_params(0), p.train_data)[1].reshape(16, 32)
    rng = np.random.default_rng(1)
    for i, G in enumerate([g, *(3 * rng.standard_normal((16, 32)) for _ in range(5))]):
        for M in (G, G.T):
            want = torch_ns(torch.tensor(M), NS_COEFFS, 5, 1e-7).double().numpy()
            got = newton_schulz(ops, M, NS_COEFFS, 5, 1e-7, "bfloat16")
            assert np.abs(got - want).max() <= 2.0 ** -8 * np.abs(want).max()
            if i == 0:
                assert np.array_equal(got, want)
                f64 = np.abs(newton_schulz(ops, M, NS_COEFFS, 5, 1e-7) - want).max()
                assert 2.3e-2 < f64 < 2.5e-2


@needs_torch
def test_torch_muon_gets_torchs_layout():
    """Given the (in, out) matrix transposed, torch's default Muon reaches rel 0.1 at its own
    167; a problem without a matrix gives it nothing to take, and is skipped."""
    r = _run(optcmp.muon(0.02, weight_decay=0.1, ns_dtype="bfloat16", impl="native"), "torch")
    assert (r.impl, r.nit_to_target) == ("native", 167)
    x = np.random.default_rng(0).standard_normal((50, 3))
    vector = from_function(lambda o, w, d: 0.5 * o.mean((o.matmul(d["X"], w) - d["y"]) ** 2),
                           np.zeros(3), {"X": x, "y": x @ [1.0, 2.0, 3.0]}, optimum=0.0)
    r = _run(optcmp.muon(ns_dtype="bfloat16", impl="native"), "torch", problem=vector,
             max_iter=3)
    assert r.status == "skipped" and "no parameter torch.optim.Muon takes" in r.message


@needs_torch
@pytest.mark.parametrize("extra", [{}, {"batch_size": 64, "schedule": "exponential(gamma=0.9)"}])
def test_torch_muon_takes_the_vector_parameters_to_torchs_adamw(extra):
    """On MLS+b torch.optim.Muon takes W and torch.optim.AdamW (the spec's AdamW side: lr 0.01,
    betas (0.8, 0.99), eps 1e-6, decay 0.05) takes b: within 5e-3 of the reference with
    bfloat16 Newton-Schulz over 20 steps (as above), b within 1e-3; optax's Nesterov AdamW side
    is refused, naming the convention torch's AdamW runs."""
    spec = optcmp.muon(0.02, weight_decay=0.1, adam_learning_rate=0.01, adam_beta1=0.8,
                       adam_beta2=0.99, adam_eps=1e-6, adam_weight_decay=0.05,
                       ns_dtype="bfloat16", **extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(mls(bias=True), spec, backends=("numpy", "torch"),
                                       steps=20, impl={"numpy": "reference", "torch": "native"},
                                       tolerance=5e-3)
    assert res.impls == {"numpy": "reference", "torch": "native"}, res.skipped
    assert res.verdict == "equivalent", res
    # b (the last 32 entries) follows the reference within 1e-3 (adam_beta1 0.9 moves it 1.8e-2)
    assert np.max(np.abs(res.x["numpy"][:, -32:] - res.x["torch"][:, -32:])) < 1e-3
    r = _run(dataclasses.replace(spec, impl="native"), "torch", problem=mls(bias=True),
             max_iter=3)
    assert ("torch.optim.AdamW(lr=0.01, betas=(0.8, 0.99), eps=1e-06, weight_decay=0.05"
            in r.implementation), r.implementation
    assert "AdamW: 32 parameters in 1 array (b)" in r.implementation
    r = _run(optcmp.muon(0.02, adam_nesterov=True, ns_dtype="bfloat16", impl="native"), "torch",
             problem=mls(bias=True), max_iter=3)
    assert r.status == "skipped" and "adam_nesterov=False" in r.message, r.message


needs_tf = pytest.mark.skipif(not HAS_TF, reason="tensorflow is not installed")
#: keras.optimizers.Muon's defaults in optcmp's terms.
KERAS = {"momentum_form": "sum", "weight_decay": 0.004, "scale": "rms", "ns_eps": 1e-7,
         "adam_convention": "eps_hat", "adam_weight_decay": 0.004, "adam_eps": 1e-7,
         "partition": "2d_no_embedding"}


@needs_tf
def test_keras_muon_takes_named_variables_and_leaves_embeddings_to_adamw():
    """Keras' Muon on one variable per named parameter: the embedding matrix goes to its AdamW
    (epsilon on the uncorrected root), as the reference's partition says, to 1e-12."""
    rng = np.random.default_rng(0)
    e0, w0 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    prob = from_function(
        lambda ops, p, d: ops.sum(ops.matmul(p["token_embedding"], p["W"]) ** 2)
        + ops.sum(p["W"] ** 2), {"token_embedding": e0, "W": w0},
        grad=lambda p, d: {"token_embedding": 2 * p["token_embedding"] @ p["W"] @ p["W"].T,
                           "W": 2 * p["token_embedding"].T @ p["token_embedding"] @ p["W"]
                           + 2 * p["W"]}, optimum=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(prob, optcmp.muon(0.02, **KERAS),
                                       backends=("numpy", "tensorflow"), steps=20,
                                       impl={"numpy": "reference", "tensorflow": "native"},
                                       tolerance=1e-12)
    assert res.impls == {"numpy": "reference", "tensorflow": "native"}
    assert res.verdict == "equivalent"
    assert "exclude_embeddings=True" in res.implementations["tensorflow"]
    assert "AdamW: 12 parameters in 1 array (token_embedding)" in res.implementations["tensorflow"]


@needs_jax
def test_optax_muon_harmonised_reaches_the_target_where_the_others_do():
    """optax's bias correction moves the iterate by 1e-5 (not the iteration) once harmonised."""
    r = _run(optcmp.muon(0.02, scale="rms", bias_correction=True, adam_nesterov=True,
                         impl="native"), "jax")
    assert (r.impl, r.nit_to_target) == ("native", 178)


def test_a_mis_declared_layout_is_optax_given_torchs_weight():
    """optax's defaults on a torch-layout weight reach no rel 0.1 in 200 steps: the same run is
    optcmp's optax convention with the layout declared the wrong way round."""
    r = _run(optcmp.muon(0.02, bias_correction=True, layout="out_in"))
    assert r.status == "max_iter" and r.nit_to_target is None
    assert 0.09 < (r.fun - r.fstar) / (r.f0 - r.fstar) < 0.11


def test_partition_is_recorded_and_checked():
    r = _run(optcmp.muon(0.02), problem=mls(bias=True), max_iter=5)
    assert r.implementation.endswith("(Muon: 512 parameters in 1 array (W); AdamW: 32 "
                                     "parameters in 1 array (b))")
    r = _run(optcmp.muon(0.02, partition=[]), problem=mls(bias=True), max_iter=5)
    assert "Muon: 0 parameters in 0 arrays; AdamW: 544 parameters in 2 arrays" in r.implementation
    r = _run(optcmp.muon(0.02, partition=["b"]), problem=mls(bias=True), max_iter=5)
    assert r.status == "failed" and "partition names 'b', which has shape (32,)" in r.message


def test_keras_partition_leaves_embeddings_to_adamw():
    prob = from_function(lambda ops, p, d: ops.sum(p["embedding"] ** 2) + ops.sum(p["W"] ** 2),
                         {"embedding": np.ones((4, 3)), "W": np.ones((3, 2))},
                         grad=lambda p, d: {k: 2 * v for k, v in p.items()}, optimum=0.0)
    r = _run(optcmp.muon(0.02, partition="2d_no_embedding"), problem=prob, max_iter=2)
    assert "Muon: 6 parameters in 1 array (W); AdamW: 12 parameters in 1 array (embedding)" \
        in r.implementation


@pytest.mark.parametrize("spec, why", [
    (lambda: optcmp.muon(), "optax.contrib.muon bias-corrects its momentum"),
    (lambda: optcmp.muon(momentum_form="sum"), "momentum_form='ema'"),
    (lambda: optcmp.muon(bias_correction=True), "Nesterov on both"),
    (lambda: optcmp.prodigy(), "always applies the bias correction"),
    (lambda: optcmp.muon(scale="none", ns_dtype="bfloat16"),
     "torch.optim.Muon scales by scale='shape'"),
    (lambda: optcmp.muon(), "torch.optim.Muon implements ns_dtype='bfloat16', not 'run'"),
    (lambda: optcmp.muon(bias_correction=True, ns_dtype="bfloat16"), "does not bias-correct"),
    (lambda: optcmp.muon(**{**KERAS, "scale": "shape"}),
     "keras.optimizers.Muon implements scale='rms' or 'none', not scale='shape'"),
    (lambda: optcmp.muon(**{**KERAS, "adam_convention": "bias_corrected_eps"}),
     "keras.optimizers.Muon implements adam_convention='eps_hat'"),
    (lambda: optcmp.schedule_free_sgd(schedule="cosine(total_steps=100)"),
     "evaluates a schedule at two step counts"),
])
def test_a_native_of_another_convention_is_refused(spec, why):
    info = optcmp.optimizers.optimizer_info(spec().name)
    native = info.native("torch" if why.startswith(("torch", "does")) else
                         "keras" if why.startswith("keras") else "optax")
    assert why in native.unsupported(spec().hyperparameters)


#: Every optax native, on MLS with a bias, full batch and minibatch.
NATIVES = [
    lambda **k: optcmp.muon(0.02, bias_correction=True, adam_nesterov=True, **k),
    lambda **k: optcmp.muon(0.02, bias_correction=True, scale="rms", weight_decay=0.1,
                            adam_weight_decay=0.01, layout="out_in", nesterov=False, **k),
    lambda **k: optcmp.prodigy(bias_correction=True, weight_decay=0.01, **k),
    lambda **k: optcmp.schedule_free_adamw(1e-2, weight_decay=0.01, **k),
    lambda **k: optcmp.schedule_free_adamw(1e-2, eval_at="y", **k),
    lambda **k: optcmp.schedule_free_sgd(0.1, **k),
]


@needs_jax
@pytest.mark.parametrize("batch_size", [None, 64])
@pytest.mark.parametrize("make", NATIVES)
def test_every_optax_native_agrees_with_the_reference(make, batch_size):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(mls(bias=True), make(batch_size=batch_size),
                                       backends=("numpy", "jax"), steps=20,
                                       impl={"numpy": "reference", "jax": "native"})
    assert res.impls == {"numpy": "reference", "jax": "native"}
    assert res.verdict == "equivalent" and res.max_rel_diff <= 1e-10


@pytest.mark.parametrize("bias_correction, nit_1e3, nit_1e6", [(False, 69, 136),
                                                               (True, 87, 154)])
def test_prodigy_bias_correction_is_the_difference_between_the_packages(
        bias_correction, nit_1e3, nit_1e6):
    """prodigyopt's default (no bias correction) reaches rel 1e-3 / 1e-6 at 69 / 136 iterations,
    optax's (always on) at 87 / 154."""
    spec = optcmp.prodigy(1.0, bias_correction=bias_correction)
    assert _run(spec, tol=1e-3, max_iter=400).nit_to_target == nit_1e3
    assert _run(spec, tol=1e-6, max_iter=400).nit_to_target == nit_1e6


def test_eval_at_names_the_judged_sequence():
    """The same Schedule-Free AdamW trajectory judged at x or at y after 400 steps: x's
    suboptimality is 17% above y's (16.5%); each result records which."""
    runs = {e: _run(optcmp.schedule_free_adamw(1e-2, eval_at=e), tol=1e-12, max_iter=400,
                    problem=mls())
            for e in ("x", "y")}
    rel = {e: (r.fun - r.fstar) / (r.f0 - r.fstar) for e, r in runs.items()}
    assert 0.16 < rel["x"] / rel["y"] - 1 < 0.17
    prob = mls()
    for e, r in runs.items():
        assert r.hyperparameters["eval_at"] == e and r.nit == 400
        assert r.fun == pytest.approx(prob.fun64(r.x), rel=1e-12)
    assert np.max(np.abs(runs["x"].x - runs["y"].x)) > 1e-3


def test_convert_to_keras_is_exact_where_the_rules_are_affine():
    """torch's default Muon on the (16, 32) matrix is Keras' with rms_rate 0.25 (the same
    multiplier sqrt(2)) and the sum-form momentum, exact when Keras' fixed 1e-7 normalisation
    epsilon is ns_eps / (1 - momentum) of the averaged form: the same iterates."""
    src = optcmp.muon(0.02, weight_decay=0.1, ns_eps=5e-9)
    conv = src.convert("keras", mls().layout)
    hp = conv.spec.hyperparameters
    assert conv.exact and (hp["scale"], hp["rms_rate"], hp["momentum_form"], hp["ns_eps"]) == \
        ("rms", pytest.approx(0.25), "sum", 1e-7)
    res = optcmp.check_equivalence(mls(), [src, conv.spec], backends=("numpy",), steps=20,
                                   tolerance=1e-12)
    assert res.verdict == "equivalent"
    default = optcmp.muon(0.02, weight_decay=0.1).convert("keras", mls().layout)
    assert not default.exact and "moves from 1e-08 to 5e-09" in " ".join(default.notes)


def test_convert_rescales_the_learning_rate_or_says_why_not():
    conv = optcmp.muon(0.02, scale="rms", rms_rate=0.3).convert("torch", mls().layout)
    hp = conv.spec.hyperparameters
    assert (hp["scale"], hp["learning_rate"], hp["adam_learning_rate"]) == (
        "shape", pytest.approx(0.024), 0.02)
    assert not conv.exact and "ns_dtype='run' -> 'bfloat16'" in conv.notes
    conv = optcmp.muon(0.02, scale="rms", rms_rate=0.3).convert("optax", mls().layout)
    assert conv.spec.hyperparameters["rms_rate"] == pytest.approx(0.3)
    assert "step-dependent" in " ".join(conv.notes) and not conv.exact
    fizz = optcmp.problems.FizzBuzzMLP().layout  # W1 (10, 100), W2 (100, 4)
    with pytest.raises(ValueError, match="keras's Muon has no step multiplier equal to "
                                         "scale='shape' on every matrix"):
        optcmp.muon().convert("keras", fizz)
    with pytest.raises(ValueError, match="pass layout=problem.layout"):
        optcmp.muon().convert("keras")
    with pytest.raises(ValueError, match="'adam' declares no conversion"):
        optcmp.adam().convert("keras")


def test_muon_hyperparameters_from_the_command_line_and_json():
    spec = optcmp.muon(partition="W1, W2", ns_coeffs="3.4445,-4.775,2.0315")
    assert spec.hyperparameters["partition"] == ("W1", "W2")
    assert spec.hyperparameters["ns_coeffs"] == (3.4445, -4.775, 2.0315)
    assert optcmp.optimizers.OptimizerSpec.from_dict(spec.to_dict()) == spec
    assert optcmp.muon(partition="2D").hyperparameters["partition"] == "2d"
    with pytest.raises(ValueError, match="ns_coeffs must be three finite floats"):
        optcmp.muon(ns_coeffs=(1.0, 2.0))
    with pytest.raises(ValueError, match="corrects the averaged momentum"):
        optcmp.muon(bias_correction=True, momentum_form="sum")
    with pytest.raises(ValueError, match="adam_nesterov=True is optax's AdamW side"):
        optcmp.muon(adam_nesterov=True, adam_convention="eps_hat")


@needs_tf
def test_keras_muon_runs_a_partition_by_names():
    """A partition of names reaches Keras as an exclude_layers pattern: W2 of the FizzBuzz MLP
    goes to its AdamW with the biases, as in the reference, to 1e-12."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = optcmp.check_equivalence(optcmp.problems.FizzBuzzMLP(),
                                       optcmp.muon(0.02, **{**KERAS, "partition": ["W1"]}),
                                       backends=("numpy", "tensorflow"), steps=10,
                                       impl={"numpy": "reference", "tensorflow": "native"},
                                       tolerance=1e-12)
    assert res.impls == {"numpy": "reference", "tensorflow": "native"}
    assert res.verdict == "equivalent"
    assert "AdamW: 504 parameters in 3 arrays (b1, W2, b2)" in res.implementations["tensorflow"]


#: The code each (label, backend) runs with impl="auto": the framework's own optimizer where it
#: implements the spec's convention, optcmp's reference rule elsewhere (torch.optim.Muon is
#: never chosen by "auto": it agrees with the ns_dtype="bfloat16" reference to bfloat16's
#: rounding, not to 1e-10).
AUTO_IMPLS = {
    "adamw": {"torch": "native", "tensorflow": "reference", "jax": "native"},
    "muon(bias_correction, adam_nesterov)": {"torch": "reference", "tensorflow": "reference",
                                             "jax": "native"},
    "lion": {"torch": "reference", "tensorflow": "native", "jax": "native"},
    "schedule_free_adamw": {"torch": "reference", "tensorflow": "reference", "jax": "native"},
}


@pytest.mark.slow
def test_compare_on_fizzbuzz_names_each_convention_in_the_table_and_the_verdict():
    """AdamW, Muon in optax's convention, Lion and Schedule-Free AdamW on FizzBuzz (float64,
    target loss 0.32) on every installed backend: the table and the verdict name Muon's
    conventions, each optimizer reaches the target at the same iteration on every backend, and
    the natives that run are torch.optim.AdamW, Keras' Lion, optax's adamw, contrib.muon, lion
    and contrib.schedule_free_adamw."""
    from optcmp.problems import FizzBuzzMLP

    specs = [optcmp.adamw(0.01), optcmp.muon(0.02, bias_correction=True, adam_nesterov=True),
             optcmp.lion(1e-3), optcmp.schedule_free_adamw(0.01)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comp = optcmp.compare(FizzBuzzMLP(target_loss=0.32), specs, backends="all",
                              max_iter=30, max_time=None, threads=1, progress=False)
    table, verdict = comp.table(), comp.verdict()
    assert max(len(line) for line in table.splitlines()) <= 120
    for label, impls in AUTO_IMPLS.items():
        runs = [r for r in comp.runs if r.label == label]
        assert {r.backend: r.impl for r in runs} == {"numpy": "reference", **{
            b: i for b, i in impls.items() if b in {r.backend for r in runs}}}
        assert len(runs) == 1 + HAS_TORCH + HAS_TF + HAS_JAX
        assert len({r.nit_to_target for r in runs}) == 1 and runs[0].nit_to_target
        shown = next((ln.split(": ")[0] for ln in table.splitlines()
                      if ln.endswith(f": {label}")), label)  # a long label's legend
        assert sum(line.startswith(shown + " ") for line in table.splitlines()) == len(runs)
        assert f"  {label} (" in verdict, verdict


def test_muon_on_a_problem_without_matrices_fails_with_the_reason():
    """compare(LinearRegression(), ["muon"]) ran plain AdamW and said so only in its
    implementation text ("Muon: 0 parameters in 0 arrays"); the run fails naming the reason."""
    from optcmp.problems import LinearRegression

    r = optcmp.run(LinearRegression(n_samples=200), optcmp.muon(), backend="numpy", max_iter=3)
    assert r.status == "failed"
    assert "Muon takes 2-D parameters, and partition='2d' finds none" in r.message
    assert "{'coef': (4,), 'intercept': ()}" in r.message
