"""Native models: a torch module, a Keras model and a JAX apply function as problems, trained by
their framework's own optimizers on their own parameters, to a validation target."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.batching import BatchOrder
from optcmp.problems.digits import load_digits

torch = pytest.importorskip("torch")
from _models import jax_mlp, keras_mlp, torch_mlp  # noqa: E402 - torch imported first

TARGET = 0.95
OPTIMIZERS = (optcmp.adam(1e-2, batch_size=64), optcmp.sgd(0.1, momentum=0.9, batch_size=64))


def _stop() -> optcmp.stopping.Rule:
    return optcmp.MetricTarget("val_accuracy", TARGET) | optcmp.MaxIter(3000)


def _reaches_target(p: optcmp.problems.ModelProblem, library: str) -> None:
    """Every run met the validation target with the framework's own optimizer, in float32 (no
    censoring: a status no clock decides)."""
    comp = optcmp.compare(p, OPTIMIZERS, stopping=_stop(), progress=False, censor_ratio=None)
    assert [r.backend for r in comp.runs] == [p.backend_name] * 2
    for r in comp.runs:
        assert r.status == "converged", (r.label, r.message)
        assert r.conditions.compiles_in_timed == 0
        assert r.impl == "native" and r.implementation.startswith(library), r.implementation
        assert r.dtype == "float32"
        assert r.metrics["val_accuracy"] >= TARGET
        assert r.nit % 23 == 0  # observed once an epoch: 1,437 rows in minibatches of 64
    assert "val acc" in str(comp)


def test_torch_mlp_on_digits_reaches_the_validation_target_with_torch_optim():
    model = torch_mlp()
    before = [p.detach().clone() for p in model.parameters()]
    train, valid = load_digits()
    p = optcmp.problems.from_torch(model, "cross_entropy", train, valid=valid,
                                   metrics=("accuracy",))
    _reaches_target(p, "torch.optim.")
    # every run trained its own copy: the user's module is where it was
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_torch_loss_and_gradient_are_the_closed_form_of_least_squares():
    """A bias-free Linear layer with the mean squared error: f = |Xw - y|^2 / n and
    grad = 2 X^T (Xw - y) / n, in float64."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=(50, 1))
    lin = torch.nn.Linear(3, 1, bias=False).double()
    p = optcmp.problems.from_torch(lin, "mse", (X, y))
    w = np.array([0.5, -1.0, 2.0])
    f, g = p.value_and_grad(w, p.train_data)
    r = X @ w - y[:, 0]
    assert f == pytest.approx(r @ r / 50, rel=1e-14)
    np.testing.assert_allclose(g, 2 * X.T @ r / 50, rtol=1e-13)
    assert p.layout.names == ("weight",) and p.native_dtype == "float64"


def test_torch_steps_take_optcmps_minibatches_in_order():
    """SGD on the module equals a hand-written loop over the run's BatchOrder (float64)."""
    train, _ = load_digits()
    model = torch_mlp(3, torch.float64)
    p = optcmp.problems.from_torch(model, "cross_entropy", train)
    with pytest.warns(UserWarning, match="has no target"):
        res = optcmp.run(p, optcmp.sgd(0.05, batch_size=100), backend="torch",
                         stopping=optcmp.MaxIter(40), seed=7)
    assert res.status == "max_iter" and res.dtype == "float64"
    X, y = torch.as_tensor(train[0]), torch.as_tensor(train[1])
    order = BatchOrder(len(y), 100, True, 7)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for k in range(40):
        a, b = order.bounds(k)
        rows = torch.tensor(order.epoch_indices(k // order.steps_per_epoch)[a:b])
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(X[rows]), y[rows]).backward()
        opt.step()
    flat = torch.cat([q.detach().reshape(-1) for q in model.parameters()]).numpy()
    np.testing.assert_allclose(res.x, flat, rtol=0, atol=1e-12)


def test_keras_mlp_on_digits_reaches_the_validation_target_with_keras_optimizers():
    """adam() runs keras.optimizers.Adam under Keras' own epsilon convention (recorded)."""
    train, valid = load_digits()
    p = optcmp.problems.from_keras(keras_mlp(), "cross_entropy", train, valid=valid,
                                   metrics=("accuracy",))
    assert p.layout.shapes == ((64, 32), (32,), (32, 10), (10,))
    _reaches_target(p, "keras.optimizers.")


def test_jax_mlp_on_digits_reaches_the_validation_target_with_optax():
    train, valid = load_digits()
    apply, params = jax_mlp()
    p = optcmp.problems.from_jax(apply, params, "cross_entropy", train, valid=valid,
                                 metrics=("accuracy",))
    assert p.layout.names == ("dense1/bias", "dense1/kernel", "dense2/bias", "dense2/kernel")
    _reaches_target(p, "optax.")


def test_bad_input_is_refused_with_the_value_and_what_is_allowed(monkeypatch):
    (X, y), valid = load_digits()
    m = torch_mlp()
    with pytest.raises(ValueError, match=r"X has 1437 rows and y has 1436"):
        optcmp.problems.from_torch(m, "cross_entropy", (X, y[:-1]))
    with pytest.raises(ValueError, match=r"must return a scalar .* got shape \(2,\)"):
        optcmp.problems.from_torch(m, lambda o, t: torch.nn.functional.cross_entropy(
            o, t, reduction="none"), (X, y))
    with pytest.raises(ValueError, match=r"output shape \(10,\) per row does not fit the data "
                                         r"targets of shape \(\) per row"):
        optcmp.problems.from_torch(m, "mse", (X, y))
    five = torch.nn.Linear(64, 5)
    with pytest.raises(ValueError, match=r"largest 9\) for loss 'cross_entropy'"):
        optcmp.problems.from_torch(five, "cross_entropy", (X, y))
    with pytest.raises(ValueError, match=r"\['f1'\] cannot be computed; give names of "
                                         r"\['accuracy', 'mae', 'mse'\]"):
        optcmp.problems.from_torch(m, "cross_entropy", (X, y), valid=valid, metrics=("f1",))
    with pytest.raises(ValueError, match="give valid="):
        optcmp.problems.from_torch(m, "cross_entropy", (X, y), metrics=("accuracy",))
    with pytest.raises(ValueError, match="exactly the keys 'X' and 'y'"):
        optcmp.problems.from_torch(m, "cross_entropy", {"inputs": X, "labels": y})
    with pytest.raises(ValueError, match="the model fails on data X"):
        optcmp.problems.from_torch(m, "cross_entropy", (X[:, :10], y))
    monkeypatch.setitem(__import__("sys").modules, "optcmp.frameworks.jax.model", None)
    with pytest.raises(ImportError, match=r"from_jax needs jax, .* pip install -c "
                                          r"constraints/ci.txt '\.\[jax\]' in a checkout"):
        optcmp.problems.from_jax(lambda p, x: x, {"w": np.zeros(2)}, "mse", (X, y))


def test_a_native_model_runs_on_its_framework_only_and_reports_its_metrics():
    (X, y), valid = load_digits()
    p = optcmp.problems.from_torch(torch_mlp(), "cross_entropy", (X, y), valid=valid,
                                   metrics=("accuracy",))
    with pytest.raises(ValueError, match="val_f1"):
        optcmp.compare(p, [optcmp.sgd(0.1, batch_size=64)], progress=False,
                       stopping=optcmp.MetricTarget("val_f1", 0.9) | optcmp.MaxIter(10))
    with pytest.warns(UserWarning, match="has no target"):
        comp = optcmp.compare(p, [optcmp.sgd(0.1, batch_size=64)], backends=("numpy", "torch"),
                              stopping=optcmp.MaxIter(23), progress=False)
    skipped, ran = comp.runs
    assert skipped.status == "skipped" and "runs on backend 'torch' only" in skipped.message
    assert ran.status == "max_iter" and set(ran.metrics) == {"val_loss", "val_accuracy"}
    assert ran.metrics["val_loss"] == pytest.approx(p.metrics(ran.x)["val_loss"], rel=1e-6)
    # run() and compare() take the model's framework when no backend is given
    one = optcmp.run(p, optcmp.sgd(0.1, batch_size=64),
                     stopping=optcmp.MetricTarget("val_accuracy", 0.5) | optcmp.MaxIter(460))
    assert one.backend == "torch" and one.status == "converged"


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_digits_workloads_are_one_network_in_three_frameworks_and_train_alike(kind):
    """digits_mlp/digits_cnn(fw): the same layers and initial point written in torch, Keras
    and JAX. The checker finds them equal in float64; SGD on optcmp's one minibatch order then
    takes the same iterations to the default target (val_accuracy >= 0.95) on every framework:
    the three float64 trajectories differ by rounding (and Keras' float32 learning-rate
    variable, 1e-8 relative) only, far below what moves one validation prediction across the
    decision boundary."""
    build = getattr(optcmp.problems, f"digits_{kind}")
    ps = [build(fw, dtype="float64") for fw in ("torch", "keras", "jax")]
    eq = optcmp.check_equivalence(ps)
    assert eq.passed and max(eq.grad_rel_diff.values()) < 1e-13, eq.diagnosis
    assert "initial point differs" not in eq.diagnosis
    nits = set()
    for p in ps:
        (r,) = optcmp.compare(p, [optcmp.sgd(0.1, batch_size=64)], progress=False).runs
        assert r.status == "converged" and r.dtype == "float64", r.message
        assert r.metrics["val_accuracy"] >= 0.95
        nits.add(r.nit)
    assert len(nits) == 1, nits


def test_a_cnn_port_that_flattens_channels_first_is_caught():
    """torch flattens (c, h, w), Keras (h, w, c): a port without the permutation has every
    parameter of the right shape and computes another function."""
    from optcmp.frameworks.torch.model import DigitsCNN

    class ChannelsFirst(DigitsCNN):
        def forward(self, X):
            return self.fc(torch.relu(self.conv(X.reshape(-1, 1, 8, 8))).flatten(1))

    keras_cnn = optcmp.problems.digits_cnn("keras")
    train, _ = load_digits()
    port = optcmp.problems.from_torch(ChannelsFirst(8, 10, torch.float32), "cross_entropy", train)
    res = optcmp.check_equivalence([keras_cnn, port])
    assert not res.passed and "a different activation, layer or output" in res.diagnosis


@pytest.mark.parametrize("framework", ["torch", "keras", "jax"])
def test_a_native_model_problem_travels_pickled(framework):
    """A worker gets the problem pickled (model, loss, data): it evaluates the same loss,
    gradient and metrics (the JAX evaluations are compiled again there)."""
    import pickle

    p = optcmp.problems.digits_mlp(framework)
    q = pickle.loads(pickle.dumps(p))
    x = p.init_params()
    f, g = p.value_and_grad(x, p.train_data)
    f2, g2 = q.value_and_grad(x, q.train_data)
    assert f2 == f and np.array_equal(g2, g) and q.metrics(x) == p.metrics(x)
    assert q.spec() == p.spec()


@pytest.mark.filterwarnings("ignore:.*shared their host:UserWarning")
def test_a_native_model_comparison_in_threads_ends_as_the_sequential_one():
    """Each run trains its own copy of the module; the host evaluations share the user's
    module one call at a time."""
    from concurrent.futures import ThreadPoolExecutor

    p = optcmp.problems.digits_mlp("torch")
    here = optcmp.compare(p, OPTIMIZERS, progress=False, censor_ratio=None)
    with ThreadPoolExecutor(2) as pool:
        there = optcmp.compare(p, OPTIMIZERS, progress=False, censor_ratio=None, executor=pool)
    assert [(r.status, r.nit) for r in there.runs] == [(r.status, r.nit) for r in here.runs]


def test_a_run_copies_the_module_only_while_no_evaluation_swaps_its_parameters():
    """A run that starts while another run's host evaluation has swapped the user's module's
    parameters (``functional_call``) copies the module after the swap: every parameter, at x0
    (copied during the swap, the swapped entry is a plain tensor, not a parameter)."""
    import threading
    import time

    import torch

    from optcmp.frameworks.torch.model_stepper import module_at

    p = optcmp.problems.digits_mlp("torch")
    model = p.model
    x0 = model.x0()
    swapped = threading.Event()

    def evaluate() -> None:  # what ``functional_call`` does, under the model's lock
        with model._lock:
            lin = next(m for m in model.model.modules() if isinstance(m, torch.nn.Linear))
            kept = dict(lin._parameters)
            lin.weight = torch.zeros_like(lin._parameters.pop("weight"))
            swapped.set()
            time.sleep(0.2)
            del lin.weight
            lin._parameters.clear()
            lin._parameters.update(kept)

    t = threading.Thread(target=evaluate)
    t.start()
    swapped.wait()
    module, params = module_at(model, x0)
    t.join()
    assert len(params) == len(model.names)
    got = np.concatenate([q.detach().reshape(-1).double().numpy() for q in params])
    np.testing.assert_array_equal(got, x0.astype(np.float32).astype(np.float64))


def test_a_compiled_update_takes_the_eager_steps_and_its_compiles_are_counted():
    """compile_step: torch.compile of opt.step() (and the schedule's step) as people write it;
    it computes the eager update (float32, to rounding), the run says it ran compiled, and the
    compiles the warm-up did not absorb are counted in the timed region (an integer, and
    warned about when not 0)."""
    import warnings

    train, _ = load_digits()
    model = optcmp.problems.digits_mlp("torch").model.model
    spec = optcmp.adam(1e-2, batch_size=64, schedule="warmup(warmup_steps=20, start_factor=0.1)")
    runs = []
    for how in (False, "eager"):
        p = optcmp.problems.from_torch(model, "cross_entropy", train, compile_step=how)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append(optcmp.run(p, spec, stopping=optcmp.MaxIter(46)))
    eager, compiled = runs
    assert eager.conditions.compiled == "eager" and compiled.conditions.compiled == "torch.compile"
    assert compiled.implementation.endswith("(the update under torch.compile)")
    assert isinstance(compiled.conditions.compiles_in_timed, int)
    np.testing.assert_allclose(compiled.x, eager.x, rtol=0, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["digits-mlp", "digits-cnn"])
def test_optcmp_run_digits_compares_native_optimizers_on_every_installed_framework(
        workload, tmp_path, capsys):
    """``optcmp run --problem digits-mlp|digits-cnn``: the workload written natively in every
    installed framework, each run on its own backend by its own optimizers (SGD with momentum
    and Adam at batch 64), one table; one network and one minibatch order, so SGD's validation
    accuracy after 23 steps agrees across frameworks to one of the 360 rows (float32)."""
    from optcmp import cli
    from optcmp.frameworks import available_backends

    out_file = tmp_path / "digits.json"
    assert cli.main(["run", "--no-progress", "--problem", workload, "--max-iter", "23",
                     "--out", str(out_file)]) == 0
    out = capsys.readouterr().out
    comp = optcmp.Comparison.load(out_file)
    backends = [b for b in ("torch", "tensorflow", "jax") if b in available_backends()]
    assert out.startswith(f"optcmp run: {workload} (1,437 rows); target MetricTarget("
                          "metric='val_accuracy', value=0.95")
    assert sorted((r.optimizer, r.backend) for r in comp.runs) == sorted(
        (o, b) for o in ("adam", "sgd") for b in backends)
    table = out.split("\n\n")[1]
    for b in backends:
        assert f" {b} " in table
    assert {(r.impl, r.nit, r.dtype) for r in comp.runs} == {("native", 23, "float32")}
    acc = [r.metrics["val_accuracy"] for r in comp.runs if r.optimizer == "sgd"]
    assert max(acc) - min(acc) <= 1 / 360 + 1e-12, acc


def test_torch_muon_on_a_module_takes_its_matrices_and_adamw_the_rest():
    """torch.optim.Muon takes 2-D parameters only: on an MLP its two weight matrices, with
    torch.optim.AdamW beside it on the two biases (it failed with torch's "Muon only supports 2D
    parameters")."""
    p = optcmp.problems.digits_mlp("torch")
    r = optcmp.run(p, optcmp.muon(0.02, batch_size=64, impl="native"),
                   stopping=optcmp.MetricTarget("val_accuracy", TARGET) | optcmp.MaxIter(1000))
    assert r.status == "converged" and r.impl == "native", r.message
    assert "(2 parameters; torch.optim.AdamW takes the other 2)" in r.implementation
    assert r.nit % 23 == 0
    assert r.hyperparameters["ns_dtype"] == "bfloat16"  # torch's Newton-Schulz, recorded


def test_an_accuracy_target_outside_0_1_is_refused():
    """MetricTarget("val_accuracy", 1.5) was accepted, a target no run can meet; 95 for 95%
    likewise."""
    for v in (1.5, 95):
        with pytest.raises(ValueError, match=r"an accuracy is a fraction in \[0, 1\]"):
            optcmp.MetricTarget("val_accuracy", v)
    assert optcmp.MetricTarget("val_accuracy", 1.0).value == 1.0
