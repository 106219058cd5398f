"""optcmp's reference rules on native models: the rule on a torch module's, a Keras model's and
a JAX pytree's own tensors follows the same rule on the flat problem written with
``from_function``, and ``impl="auto"`` takes it where the framework has no matching optimizer."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.problems.digits import load_digits, mlp_layers

torch = pytest.importorskip("torch")

FRAMEWORKS = ("torch", "keras", "jax")
B = 64
#: Every rule that runs per tensor, a global-norm clip, a Muon partition and Prodigy's sums
#: over every parameter among them.
RULES = {
    "sgd": optcmp.sgd(0.1, momentum=0.9, batch_size=B),
    "adam": optcmp.adam(1e-2, clip_norm=0.5, batch_size=B),
    "adamw": optcmp.adamw(1e-2, weight_decay=0.05, batch_size=B),
    "lion": optcmp.lion(1e-3, weight_decay=0.1, batch_size=B),
    "nadam": optcmp.nadam(1e-2, batch_size=B),
    "radam": optcmp.radam(1e-2, batch_size=B),
    "schedule_free_adamw": optcmp.schedule_free_adamw(1e-2, batch_size=B),
    "muon": optcmp.muon(0.02, batch_size=B),
    "lamb": optcmp.lamb(1e-2, weight_decay=0.01, batch_size=B),
    "adafactor": optcmp.adafactor(1e-2, batch_size=B),
    "prodigy": optcmp.prodigy(batch_size=B),
}


def _flat_mlp() -> optcmp.problems.FunctionProblem:
    """The digits MLP of ``digits_mlp`` written once against ops, on one flat iterate."""
    (X, y), _ = load_digits()
    (W1, b1), (W2, b2) = mlp_layers((64, 32, 10), 0)

    def loss(ops, p, d):
        h = ops.maximum(ops.matmul(d["X"], p["W1"]) + p["b1"], 0.0)
        z = ops.matmul(h, p["W2"]) + p["b2"]
        return ops.mean(ops.logsumexp(z, axis=1) - ops.sum(d["Y"] * z, axis=1))

    return optcmp.problems.from_function(
        loss, {"W1": W1, "b1": b1, "W2": W2, "b2": b2},
        {"X": X.astype(np.float64), "Y": np.eye(10)[y]}, name="digits-mlp-flat")


def _canonical(p: optcmp.problems.ModelProblem, x: np.ndarray) -> np.ndarray:
    """A model's flat iterate in the flat problem's order (each layer's weight, then its bias;
    a JAX dict's leaves come bias first) with every weight in the (in, out) layout."""
    m, parts = p.model, p.layout.unflatten(x)
    named = sorted(((n.replace(".", "/").rpartition("/")[0], "bias" in n, m.canonical(i, a))
                    for i, (n, a) in enumerate(parts.items())), key=lambda t: t[:2])
    return np.concatenate([a.reshape(-1) for _, _, a in named])


def _after_20(p, spec):
    r = optcmp.run(p, spec, stopping=optcmp.MaxIter(20), seed=5, dtype="float64",
                   backend=getattr(p, "backend_name", "torch"))
    assert r.status == "max_iter", (r.label, r.message)
    return r


@pytest.mark.slow
@pytest.mark.parametrize("name", RULES)
def test_the_reference_rule_on_each_frameworks_model_follows_it_on_the_flat_problem(name):
    """20 float64 minibatch steps of the rule on each framework's digits MLP, its tensors one
    by one, end where the rule on the same MLP as one flat vector ends, to 1e-10."""
    spec = RULES[name].replace()
    flat = _after_20(_flat_mlp(), optcmp.optimizers.get_optimizer(
        name, impl="reference", **spec.hyperparameters)).x
    for fw in FRAMEWORKS:
        p = optcmp.problems.digits_mlp(fw, dtype="float64")
        r = _after_20(p, optcmp.optimizers.get_optimizer(name, impl="reference",
                                                         **spec.hyperparameters))
        assert r.impl == "reference" and r.dtype == "float64"
        assert r.implementation.startswith("optcmp reference update rule"), r.implementation
        x = _canonical(p, r.x)
        assert np.max(np.abs(x - flat)) <= 1e-10 * max(1.0, np.max(np.abs(flat))), (fw, name)


@pytest.mark.slow
@pytest.mark.parametrize(("fw", "name"), [("torch", "sgd"), ("torch", "adamw"),
                                          ("jax", "sgd"), ("jax", "adamw")])
def test_the_reference_rule_on_a_model_follows_the_frameworks_own_optimizer(fw, name):
    """Where the framework's optimizer runs the spec's convention, it and the rule on the
    model's tensors agree to 1e-10 over 20 float64 steps."""
    p = optcmp.problems.digits_mlp(fw, dtype="float64")
    hp = RULES[name].hyperparameters
    native = _after_20(p, optcmp.optimizers.get_optimizer(name, impl="native", **hp))
    ref = _after_20(p, optcmp.optimizers.get_optimizer(name, impl="reference", **hp))
    assert (native.impl, ref.impl) == ("native", "reference")
    np.testing.assert_allclose(ref.x, native.x, rtol=0, atol=1e-10)


def test_auto_takes_the_frameworks_optimizer_where_it_matches_else_the_rule():
    """torch has no Lion and no Schedule-Free, torch.optim.Muon is not auto (bfloat16
    Newton-Schulz): those run optcmp's rule on a torch module; SGD runs torch.optim.SGD."""
    p = optcmp.problems.digits_mlp("torch", dtype="float64")
    comp = optcmp.compare(p, [RULES["sgd"], RULES["lion"], RULES["schedule_free_adamw"],
                              RULES["muon"]], stopping=optcmp.MaxIter(5), progress=False)
    assert [r.impl for r in comp.runs] == ["native", "reference", "reference", "reference"]
    assert "Muon: 2,368 parameters in 2 arrays (0.weight, 2.weight)" in comp.runs[3].implementation


@pytest.mark.slow
def test_new_optimizers_reach_the_digits_target_at_the_same_iteration_on_every_framework():
    """AdamW, Muon, Lion and Schedule-Free AdamW on the float64 digits MLP in torch, Keras and
    JAX, each by the framework's optimizer where it runs the spec and by optcmp's rule where
    not, meet val_accuracy >= 0.95 at the same iteration on every framework."""
    specs = [optcmp.adamw(1e-2, batch_size=B), RULES["muon"], RULES["lion"],
             RULES["schedule_free_adamw"]]
    stop = optcmp.MetricTarget("val_accuracy", 0.95) | optcmp.MaxIter(3000)
    counts, impls = {}, {}
    for fw in FRAMEWORKS:
        comp = optcmp.compare(optcmp.problems.digits_mlp(fw, dtype="float64"), specs,
                              stopping=stop, progress=False, threads=1)
        assert all(r.status == "converged" for r in comp.runs), [r.message for r in comp.runs]
        assert all(r.conditions.compiles_in_timed == 0 for r in comp.runs)  # warmed up
        counts[fw] = [r.nit_to_target for r in comp.runs]
        impls[fw] = [r.impl for r in comp.runs]
    assert counts["torch"] == counts["keras"] == counts["jax"], counts
    assert impls == {"torch": ["native", "reference", "reference", "reference"],
                     "keras": ["native", "reference", "native", "reference"],
                     "jax": ["native", "reference", "native", "native"]}


def test_the_reference_rule_on_a_bfloat16_model_is_skipped_with_the_reason():
    """A bfloat16 module would keep the rule's step count in bfloat16 (257 rounds to 256): the
    run is skipped and says so, torch.optim's runs as before."""
    from _models import torch_mlp

    train, _ = load_digits()
    p = optcmp.problems.from_torch(torch_mlp(0, torch.bfloat16), "cross_entropy", train)
    comp = optcmp.compare(p, [RULES["lion"], RULES["sgd"]], stopping=optcmp.MaxIter(3),
                          progress=False)
    skipped, ran = comp.runs
    assert skipped.status == "skipped" and "counting stops being exact" in skipped.message
    assert ran.impl == "native" and ran.status == "max_iter"


def test_optax_schedule_free_on_a_jax_model_is_judged_at_its_average_x():
    """optax's Schedule-Free on a ``from_jax`` model steps y and judges x (``eval_at="x"``):
    the returned point is optax's ``schedule_free_eval_params`` after 5 steps (6.6e-4 from y
    here) and equals optcmp's reference rule's to rounding; the average compiles in the
    warm-up, not between timed steps."""
    jax = pytest.importorskip("jax")
    optax = pytest.importorskip("optax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((128, 4)), rng.integers(0, 3, 128)
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"a": {"w": jax.random.normal(k1, (4, 8)) / 2, "b": jnp.zeros(8)},
              "b": {"w": jax.random.normal(k2, (8, 3)) / 3, "b": jnp.zeros(3)}}

    def apply(p, X):
        return jnp.tanh(X @ p["a"]["w"] + p["a"]["b"]) @ p["b"]["w"] + p["b"]["b"]

    p = optcmp.problems.from_jax(apply, params, "cross_entropy", (X, Y))
    runs = {impl: optcmp.run(p, optcmp.schedule_free_adamw(impl=impl),
                        stopping=optcmp.MaxIter(5), threads=1)
            for impl in ("native", "reference")}
    opt = optax.contrib.schedule_free_adamw(learning_rate=0.0025, b1=0.9, b2=0.999, eps=1e-8,
                                            weight_decay=0.0, weight_lr_power=2.0)

    def loss(q):
        return optax.softmax_cross_entropy_with_integer_labels(apply(q, X), Y).mean()

    state, y = opt.init(params), params
    for _ in range(5):
        u, state = opt.update(jax.grad(loss)(y), state, y)
        y = optax.apply_updates(y, u)
    x = optax.contrib.schedule_free_eval_params(state, y)
    flat = [np.concatenate([np.ravel(v) for v in jax.tree_util.tree_leaves(q)]) for q in (x, y)]
    assert "schedule_free_adamw" in runs["native"].implementation
    assert runs["native"].conditions.compiles_in_timed == 0
    np.testing.assert_allclose(runs["native"].x, flat[0], rtol=0, atol=1e-14)
    assert np.max(np.abs(flat[0] - flat[1])) > 1e-4  # y is not what is judged
    np.testing.assert_allclose(runs["native"].x, runs["reference"].x, rtol=0, atol=1e-14)
    assert runs["native"].fun == pytest.approx(float(loss(x)), rel=1e-13)
