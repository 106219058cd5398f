"""Upstream defaults pinned with inspect.signature, against docs/same-name-different-meaning.md."""

from __future__ import annotations

import functools
import inspect
import math
import os

import numpy as np
import pytest
from conftest import HAS_TF, HAS_TORCH, needs_tf

import optcmp

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs",
                   "same-name-different-meaning.md")


def _keras():
    """Keras on the TensorFlow backend (KERAS_BACKEND set by optcmp before the first import)."""
    import importlib

    from optcmp.frameworks.tensorflow.native import keras_backend_name

    keras_backend_name()
    return importlib.import_module("keras")


def _table() -> list[dict[str, str]]:
    with open(DOC, encoding="utf-8") as fh:
        lines = [ln.strip() for ln in fh if ln.strip().startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for ln in lines[2:]:
        cells = [c.strip() for c in ln.strip("|").split("|")]
        rows.append(dict(zip(header, cells)))
    return rows


def _same(doc_value: str, actual: object) -> bool:
    if actual is None or isinstance(actual, bool):
        return doc_value == str(actual)
    if isinstance(actual, (int, float)):
        return math.isclose(float(doc_value), float(actual), rel_tol=0, abs_tol=0)
    return doc_value == str(actual)


def _upstream(framework: str, optimizer: str) -> inspect.Signature:
    if framework == "torch":
        import torch

        return inspect.signature(getattr(torch.optim, optimizer).__init__)
    if framework == "keras":
        keras = _keras()

        return inspect.signature(getattr(keras.optimizers, optimizer).__init__)
    if framework == "optax":
        optax = pytest.importorskip("optax")

        return inspect.signature(functools.reduce(getattr, optimizer.split("."), optax))
    if framework == "scipy":
        from scipy.optimize import _lbfgsb_py

        assert optimizer == "L-BFGS-B"
        return inspect.signature(_lbfgsb_py._minimize_lbfgsb)
    raise AssertionError(framework)


ROWS = _table()


def test_docs_table_covers_every_framework_optimizer():
    seen = {(r["framework"], r["optimizer"]) for r in ROWS}
    assert seen == {("torch", "Adadelta"), ("keras", "Adadelta"), ("torch", "SGD"),
                    ("keras", "SGD"), ("torch", "LBFGS"), ("scipy", "L-BFGS-B"),
                    # the framework optimizers behind adam, adamw, rmsprop and adagrad
                    ("torch", "Adam"), ("torch", "AdamW"), ("torch", "RMSprop"),
                    ("torch", "Adagrad"), ("keras", "Adam"), ("keras", "AdamW"),
                    ("keras", "RMSprop"), ("keras", "Adagrad"),
                    # optax's, on the JAX backend
                    *{("optax", n) for n in ("sgd", "adam", "adamw", "rmsprop", "adagrad",
                                             "adadelta", "lbfgs")},
                    # the optimizers built from transforms
                    ("torch", "NAdam"), ("torch", "RAdam"), ("torch", "Adafactor"),
                    *{("keras", n) for n in ("Lion", "Nadam", "Adafactor", "Lamb")},
                    *{("optax", n) for n in ("lion", "nadam", "radam", "adafactor", "lamb")},
                    ("torch", "Muon"), ("keras", "Muon"),
                    *{("optax", f"contrib.{n}") for n in ("muon", "prodigy",
                                                          "schedule_free_adamw",
                                                          "schedule_free_sgd")}}


def test_every_native_of_every_optimizer_is_in_the_docs_table():
    """A new torch or Keras native fails here until its defaults are in the table."""
    from optcmp.optimizers import optimizer_info, optimizer_names

    seen = {(r["framework"], r["optimizer"]) for r in ROWS}
    for name in optimizer_names():
        for n in optimizer_info(name).natives:
            if n.framework in ("torch", "keras", "optax"):
                assert (n.framework, n.name) in seen, (name, n.framework, n.name)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['framework']}.{r['optimizer']}."
                                                    f"{r['parameter']}")
def test_docs_table_upstream_default_is_the_installed_one(row):
    fw = row["framework"]
    if fw == "torch" and not HAS_TORCH:
        pytest.skip("torch is not installed")
    if fw == "keras" and not HAS_TF:
        pytest.skip("tensorflow/keras is not installed")
    sig = _upstream(fw, row["optimizer"])
    param = sig.parameters[row["parameter"]]
    assert _same(row["upstream default"], param.default), (
        f"{fw} {row['optimizer']}({row['parameter']}) default is {param.default!r}, "
        f"the docs table says {row['upstream default']}: update the table")


@pytest.mark.parametrize("row", [r for r in ROWS if r["optcmp name"] in
                                 ("learning_rate", "rho", "eps", "momentum", "nesterov",
                                  "history_size", "max_linesearch", "beta1", "beta2",
                                  "weight_decay", "weight_decay_mode", "centered",
                                  "initial_accumulator_value", "clip_norm", "ftol", "gtol",
                                  "tolerance_grad", "tolerance_change", "line_search_fn",
                                  "max_iter_per_step")],
                         ids=lambda r: f"{r['optimizer']}.{r['optcmp name']}")
def test_docs_table_optcmp_default_is_optcmps(row):
    name = {"Adadelta": "adadelta", "SGD": "sgd", "LBFGS": "lbfgs", "L-BFGS-B": "lbfgs",
            "Adam": "adam", "AdamW": "adamw", "RMSprop": "rmsprop", "Adagrad": "adagrad",
            **{n: n for n in ("sgd", "adam", "adamw", "rmsprop", "adagrad", "adadelta",
                              "lbfgs", "lion", "nadam", "radam", "adafactor", "lamb")},
            "NAdam": "nadam", "Nadam": "nadam", "RAdam": "radam", "Adafactor": "adafactor",
            "Lion": "lion", "Lamb": "lamb",
            "Muon": "muon", **{f"contrib.{n}": n for n in ("muon", "prodigy",
                                                           "schedule_free_adamw",
                                                           "schedule_free_sgd")}}
    spec = optcmp.get_optimizer(name[row["optimizer"]])
    value = spec.hyperparameters[row["optcmp name"]]
    assert str(value) == row["optcmp default"] or _same(row["optcmp default"], value)


def test_upstream_defaults_pinned_with_signature():
    """The frameworks' own defaults (Adadelta's learning rate: 1.0 in torch, 0.001 in Keras),
    stated once more without the docs table."""
    if HAS_TORCH:
        import torch

        ad = inspect.signature(torch.optim.Adadelta.__init__).parameters
        assert (ad["lr"].default, ad["rho"].default, ad["eps"].default) == (1.0, 0.9, 1e-6)
        lb = inspect.signature(torch.optim.LBFGS.__init__).parameters
        assert lb["max_iter"].default == 20 and lb["line_search_fn"].default is None
        assert lb["history_size"].default == 100
        assert inspect.signature(torch.optim.SGD.__init__).parameters["lr"].default == 0.001
    if HAS_TF:
        keras = _keras()

        kad = inspect.signature(keras.optimizers.Adadelta.__init__).parameters
        assert (kad["learning_rate"].default, kad["rho"].default, kad["epsilon"].default) == (
            0.001, 0.95, 1e-7)
        assert inspect.signature(keras.optimizers.SGD.__init__).parameters[
            "learning_rate"].default == 0.01


@needs_tf
def test_keras_float32_hyperparameter_hazard_is_real():
    """Why the Keras adapters set floatx and pass momentum as numpy.float64 (docs page)."""
    keras = _keras()

    assert keras.config.floatx() == "float32"
    opt = keras.optimizers.SGD(learning_rate=0.1)
    assert float(opt.learning_rate) == float(np.float32(0.1)) != 0.1
