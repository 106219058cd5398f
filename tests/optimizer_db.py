"""The optimizer database: one row per (optimizer, problem), in the manner of torch's OptimizerInfo.

Each row gives, for every (backend, impl) the optimizer has, the iterations (and evaluations)
to the target with ``threads=1``, and, per impl, how closely the backends must agree step by
step (:func:`optcmp.check_equivalence`). ``tests/test_optimizer_db.py`` turns the rows into
tests, and checks that every registered optimizer has a row and every implementation a count:
adding an optimizer is its module plus one row here.

The counts were measured on the 0.1.0 code and were unchanged by the move to one module per
optimizer.
A (backend, impl) pair missing from ``nit`` must be one the optimizer does not implement
(``resolve_adapter`` refuses it with the available impls), unless ``skip`` says why not.

A count is exact (an ``int``) only where it is the same under every OpenBLAS kernel (``.ci/run``
runs this table under Haswell, SkylakeX where the CPU has AVX-512, and Sandybridge, one pytest
process each): well-conditioned problems, where the rounding of a reduction never decides a
step. Where the path follows the rounding (L-BFGS on an ill-conditioned or non-convex problem,
hundreds of iterations) the count is a :class:`Band` measured under those kernels, and the row
says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from conftest import lr_a, lr_b
from conftest import mls as mls_w
from matrix_problem import mls

import optcmp
from optcmp import RunResult
from optcmp.optimizers.base import OptimizerSpec
from optcmp.problems import FizzBuzzMLP, Problem

#: Backend x impl pairs, keyed as ``"backend/impl"``.
Key = str


@dataclass(frozen=True)
class Band:
    """A count that follows the floating-point rounding (the BLAS kernel, the reduction order).

    The run must still converge, with a count in ``[lo, hi]``: the range measured under the
    OpenBLAS kernels Haswell, SkylakeX and Sandybridge (and MKL's AVX2, AVX-512 and compatible
    paths for torch), widened as the comment at the row says.
    """

    lo: int
    hi: int
    #: the run may end ``stalled`` instead, or at its budget on a plateau above the target
    #: (where the rounding decides that too: a non-convex path)
    stalls: bool = False

    def __contains__(self, count: object) -> bool:
        return isinstance(count, int) and self.lo <= count <= self.hi

    def __repr__(self) -> str:
        return f"Band({self.lo}, {self.hi}{', stalls=True' if self.stalls else ''})"


def on_plateau(r: RunResult, rel: float = 1e-6) -> bool:
    """The run removed most of its initial objective and then moved by less than ``rel``
    (relative) over the second half of its iterations: a plateau, not a run still descending."""
    d = r.trace.to_dict()
    its, fun = np.asarray(d["iteration"]), np.asarray(d["fun"])
    half = fun[its >= its[-1] / 2]
    return bool(fun[-1] < 0.1 * r.f0 and (half.max() - half.min()) <= rel * abs(fun[-1]))


#: An exact count, or the band a rounding-dependent one stays in.
Count = int | Band


@dataclass(frozen=True)
class Row:
    """One optimizer on one problem.

    Attributes
    ----------
    id : str
        Test id.
    optimizer : str
        Canonical optimizer name.
    spec : callable
        ``spec(impl) -> OptimizerSpec`` with every hyperparameter of the row.
    problem : callable
        Builds the problem (``conftest`` recipes, FizzBuzz).
    tol : float or None
        Relative-suboptimality target (None: the problem's default target).
    nit : dict
        ``"backend/impl" -> nit_to_target`` (threads=1): an ``int`` where the count is the
        same under every BLAS kernel, else a :class:`Band`.
    nfev : dict
        ``"backend/impl" -> nfev_to_target`` where it differs from ``nit + 1`` (a
        :class:`Band` where ``nit`` is one; a pair with a band and no ``nfev`` entry has its
        evaluations unchecked).
    equivalence : dict
        ``impl -> tolerance`` of the largest relative difference between backends over
        ``steps`` iterations, or ``"different"`` where they are known to part.
    steps : int
        Iterations of the equivalence check.
    skip : dict
        ``"backend/impl" -> reason`` for implemented pairs deliberately not run.
    """

    id: str
    optimizer: str
    spec: Callable[[str], OptimizerSpec]
    problem: Callable[[], Problem]
    tol: float | None
    nit: dict[Key, Count]
    nfev: dict[Key, Count] = field(default_factory=dict)
    equivalence: dict[str, float | str] = field(default_factory=dict)
    steps: int = 50
    skip: dict[Key, str] = field(default_factory=dict)
    max_iter: int = 60_000


def _all(impls: dict[str, tuple[str, ...]], n: int) -> dict[Key, int]:
    return {f"{b}/{i}": n for b, ims in impls.items() for i in ims}


REFERENCE = {"numpy": ("reference",), "torch": ("reference",), "tensorflow": ("reference",),
             "jax": ("reference",)}
#: The reference on every backend plus one framework's native (the convention it implements).
TORCH_NATIVE = {**REFERENCE, "torch": ("reference", "native")}
KERAS_NATIVE = {**REFERENCE, "tensorflow": ("reference", "native")}
OPTAX_NATIVE = {**REFERENCE, "jax": ("reference", "native")}
SCIPY_KEYS = ("numpy/scipy", "torch/scipy", "tensorflow/scipy", "jax/scipy")
#: method, iterations and objective evaluations to 1e-8 on LR-A, needs a Hessian (numpy skips)
SCIPY_METHODS = [
    ("BFGS", 7, 10, False), ("CG", 3, 7, False), ("L-BFGS-B", 4, 5, False),
    ("TNC", 2, 7, False), ("SLSQP", 4, 8, False), ("Newton-CG", 4, 5, True),
    ("trust-ncg", 5, 6, True), ("trust-krylov", 4, 5, True), ("trust-exact", 2, 3, True),
    ("dogleg", 2, 3, True), ("Nelder-Mead", 205, 346, False), ("Powell", 2, 67, False),
]
#: The learning rate cut tenfold after 30 iterations (where the momentum conventions part).
CUT_AT_30 = "multistep(milestones=[30], gamma=0.1)"


def _skip_keras(what: str) -> dict[Key, str]:
    return {"tensorflow/native": f"Keras implements another {what} (recorded as skipped)"}


def _skip_torch(what: str) -> dict[Key, str]:
    return {"torch/native": f"torch implements another {what} (recorded as skipped)"}


_skip_torch_muon = _skip_torch("Muon convention")
_skip_optax_muon = {"jax/native": "optax bias-corrects Muon's momentum (recorded as skipped)"}
_skip_keras_muon = _skip_keras("Muon convention")
#: keras.optimizers.Muon's defaults in optcmp's terms
KERAS_MUON = {"momentum_form": "sum", "weight_decay": 0.004, "scale": "rms", "ns_eps": 1e-7,
              "adam_convention": "eps_hat", "adam_weight_decay": 0.004, "adam_eps": 1e-7,
              "partition": "2d_no_embedding"}


def _with_optax(nit: dict[Key, int], skip: dict[Key, str], n: int,
                runs: bool) -> tuple[dict[Key, int], dict[Key, str]]:
    """``jax/native`` (optax) counted when optax implements the row's convention, else skipped."""
    if runs:
        return {**nit, "jax/native": n}, skip
    return nit, {**skip, "jax/native": "optax implements another convention (recorded as "
                                        "skipped)"}


def _convention_rows(name: str, make: Callable[..., OptimizerSpec], torch_conv: str,
                     keras_conv: str, tol: float, nit: tuple[int, int],
                     keras_kw: dict | None = None, optax: str = "torch") -> list[Row]:
    """Two rows: the torch convention (torch native) and the Keras one (Keras native); each
    reference trajectory equals the matching native's to 1e-12 over 100 float64 steps.
    ``optax``: the conventions optax implements (``"torch"``, ``"keras"`` or ``"both"``)."""
    kk = keras_kw or {}
    nit0, skip0 = _with_optax(_all(TORCH_NATIVE, nit[0]), _skip_keras("convention"), nit[0],
                              optax in ("torch", "both"))
    nit1, skip1 = _with_optax(_all(KERAS_NATIVE, nit[1]), _skip_torch("convention"), nit[1],
                              optax in ("keras", "both"))
    return [
        Row(f"{name}-{torch_conv}-LR-A", name, lambda i: make(convention=torch_conv, impl=i),
            lr_a, tol, nit=nit0, equivalence={"reference": 1e-12, "native": 1e-12}, steps=100,
            skip=skip0),
        Row(f"{name}-{keras_conv}-LR-A", name,
            lambda i: make(convention=keras_conv, impl=i, **kk), lr_a, tol,
            nit=nit1, equivalence={"reference": 1e-12, "native": 1e-12},
            steps=100, skip=skip1),
    ]


def _minibatch_rows(name: str, make: Callable[..., OptimizerSpec], torch_conv: str,
                    keras_conv: str, tol: float, nit: tuple[int, int],
                    keras_kw: dict | None = None, optax: str = "torch") -> list[Row]:
    """:func:`_convention_rows` on minibatches of 100 rows: each native steps on the reference's
    minibatch sequence (trajectories equal to 1e-12 over 100 float64 steps, 10 epochs)."""
    kk = keras_kw or {}
    nit0, skip0 = _with_optax(_all(TORCH_NATIVE, nit[0]), _skip_keras("convention"), nit[0],
                              optax in ("torch", "both"))
    nit1, skip1 = _with_optax(_all(KERAS_NATIVE, nit[1]), _skip_torch("convention"), nit[1],
                              optax in ("keras", "both"))
    return [
        Row(f"{name}-{torch_conv}-minibatch-LR-A", name,
            lambda i: make(convention=torch_conv, batch_size=100, impl=i), lr_a, tol,
            nit=nit0, nfev=nit0, equivalence={"reference": 1e-12, "native": 1e-12}, steps=100,
            skip=skip0),
        Row(f"{name}-{keras_conv}-minibatch-LR-A", name,
            lambda i: make(convention=keras_conv, batch_size=100, impl=i, **kk), lr_a, tol,
            nit=nit1, nfev=nit1, equivalence={"reference": 1e-12, "native": 1e-12}, steps=100,
            skip=skip1),
    ]


def _mls_rows(rid: str, make: Callable[[str], OptimizerSpec], tol: float, n: int,
              natives: dict[Key, Count], bias: bool = False) -> list[Row]:
    """One row on MLS: the reference on every backend and ``natives`` take ``n`` iterations
    (the same on every backend's differently rounded path); the other natives implement
    another convention (recorded as skipped). Backends agree over 20 steps: later, steps
    normalised per coordinate (Adam's, Adafactor's, a sign) grow the rounding to about 1e-9
    by step 50 wherever a gradient coordinate crosses zero. optax's natives are checked
    against the reference in tests/test_transform_optimizers.py. ``bias``: on MLS+b (a matrix
    and a vector parameter)."""
    others = {f"{b}/native": "implements another convention (recorded as skipped)"
              for b in ("torch", "tensorflow", "jax") if f"{b}/native" not in natives}
    checked = {"native": 1e-10} if {"torch/native", "tensorflow/native"} & set(natives) else {}
    return [Row(f"{rid}-MLS" + "+b" * bias, rid.split("-")[0], make,
                (lambda: mls(bias=True)) if bias else mls_w, tol,
                nit={**_all(REFERENCE, n), **natives},
                equivalence={"reference": 1e-10, **checked}, steps=20, skip=others)]


NATIVE_TOO = {"numpy": ("reference",), "torch": ("reference", "native"),
              "tensorflow": ("reference", "native"), "jax": ("reference", "native")}

ROWS: list[Row] = [
    Row("gd-LR-A", "gd", lambda i: optcmp.gd(0.1, impl=i), lr_a, 1e-8,
        nit=_all(REFERENCE, 46), equivalence={"reference": 1e-13}),
    Row("diag_newton-LR-B", "diag_newton", lambda i: optcmp.diag_newton(impl=i), lr_b, 1e-6,
        nit=_all(REFERENCE, 24), equivalence={"reference": 1e-13}),
    Row("adadelta-LR-A", "adadelta", lambda i: optcmp.adadelta(rho=0.9, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 546), equivalence={"reference": 1e-13, "native": 1e-13}),
    Row("sgd-momentum-LR-A", "sgd",
        lambda i: optcmp.sgd(0.05, batch_size=100, momentum=0.9, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 70), nfev=_all(NATIVE_TOO, 70),
        equivalence={"reference": 1e-13, "native": 1e-13}),
    Row("lbfgs-LR-A", "lbfgs", lambda i: optcmp.lbfgs(impl=i), lr_a, 1e-10,
        nit={"numpy/scipy": 5, "torch/native": 5, "torch/scipy": 5, "tensorflow/scipy": 5,
             "jax/native": 5, "jax/scipy": 5},
        nfev={"numpy/scipy": 6, "torch/native": 6, "torch/scipy": 6, "tensorflow/scipy": 6,
              "jax/native": 7, "jax/scipy": 6},
        equivalence={"scipy": 1e-9}),
    # condition number ~1e8: the float64 rounding of the gradient moves scipy's path. Here
    # torch and TensorFlow use the problem's gradient written against ops (numpy's formula),
    # so torch/scipy follows numpy's path; with gradient="autodiff" torch/native takes 34 to 36
    # iterations (42 evaluations for 34: torch's own loop's count) and torch/scipy 24 (36).
    # The scipy paths take 26 (39)
    # under every OpenBLAS kernel; torch/scipy follows torch's kernels (24 with
    # ATEN_CPU_CAPABILITY=avx2 on an AMD EPYC); torch's own L-BFGS follows MKL's rounding: 42 iterations with
    # the AVX2, AVX-512 and compatible paths on an AMD EPYC, 35 on an Intel Xeon (AVX-512)
    Row("lbfgs-LR-B", "lbfgs", lambda i: optcmp.lbfgs(impl=i), lr_b, 1e-10,
        nit={"numpy/scipy": 26, "torch/native": Band(30, 50), "torch/scipy": Band(22, 30),
             "tensorflow/scipy": 26, "jax/native": 6},
        nfev={"numpy/scipy": 39, "torch/native": Band(35, 75), "torch/scipy": Band(33, 45),
              "tensorflow/scipy": 39, "jax/native": 60},
        equivalence={"scipy": "different"}, steps=20,
        skip={"jax/scipy": "26 iterations under OpenBLAS' Haswell kernel, 24 under Sandybridge: "
                           "scipy's path here depends on the BLAS kernel"}),
    # FizzBuzz: a non-convex loss; the backends' L-BFGS paths part after a few dozen steps, and
    # each path follows the rounding of the reductions (the BLAS kernel, the thread count).
    # torch runs the problem's backpropagation written against ops. Measured with one thread:
    # numpy/scipy 228 / 224 / 221 iterations under the Haswell / SkylakeX / Sandybridge
    # kernels, torch/scipy 221 (Haswell) and 224 (Sandybridge), torch/native 366 under both
    # (310 and 370 with gradient="autodiff" under MKL's AVX2 and compatible paths; on an Intel
    # Xeon the autodiff path stalled at 557, so its row allows that end; with
    # ATEN_CPU_CAPABILITY=avx2 or avx512 on one AMD EPYC it settled on a plateau at f = 0.0256,
    # above the target, until its budget; on another AMD EPYC, SkylakeX kernel, it converged
    # after 366 under MKL's AVX2 and AVX-512 paths, 342 with torch's default capability and 457
    # with MKL's compatible path). 216 with 2 threads.
    # Bands: the measured range widened by about 15%.
    Row("lbfgs-FizzBuzz", "lbfgs", lambda i: optcmp.lbfgs(impl=i), FizzBuzzMLP, None,
        nit={"numpy/scipy": Band(190, 260), "torch/native": Band(250, 530, stalls=True),
             "torch/scipy": Band(190, 260)},
        skip={"jax/native": "a non-convex path that parts with every reduction order (optax's "
                            "L-BFGS on LR-A above)",
              "jax/scipy": "XLA's reduction order moves this path (see tensorflow/scipy)",
              "tensorflow/scipy": "TensorFlow fixes its thread pools when it starts (threads=1 "
                                  "cannot be set after another test used it), and this path "
                                  "depends on the reduction order: 229 with 1 thread, 216 "
                                  "with 2"},
        max_iter=3000),
    # the optimizers with named conventions, one row per convention (see _convention_rows)
    *_convention_rows("adam", lambda **k: optcmp.adam(0.01, **k), "bias_corrected_eps",
                      "eps_hat", 1e-4, (448, 448), {"eps": 1e-7}),
    # decoupled weight decay 0.1 moves the minimizer, but only by 2.3e-5 in relative suboptimality
    *_convention_rows("adamw", lambda **k: optcmp.adamw(0.01, weight_decay=0.1, **k),
                      "bias_corrected_eps", "eps_hat", 1e-4, (3490, 3490)),
    # learning rate 1e-3: at 1e-2 RMSprop's normalized step oscillates near the optimum and
    # the backends' rounding grows to 5e-2 within 100 steps (a property of the algorithm)
    *_convention_rows("rmsprop", lambda **k: optcmp.rmsprop(1e-3, momentum=0.5, **k),
                      "eps_outside_sqrt", "eps_inside_sqrt", 1e-3, (976, 976), optax="both"),
    *_convention_rows("adagrad", lambda **k: optcmp.adagrad(0.5, **k), "eps_outside_sqrt",
                      "eps_inside_sqrt", 1e-6, (39, 40),
                      {"eps": 1e-7, "initial_accumulator_value": 0.1}, optax="keras"),
    # iterations to 1e-6 under the cut, torch's form 125 vs Keras' 131 (Nesterov 90 vs 98)
    *_convention_rows("momentum", lambda **k: optcmp.momentum(0.05, schedule=CUT_AT_30, **k),
                      "lr_outside", "lr_inside", 1e-6, (125, 131)),
    *_convention_rows("nesterov", lambda **k: optcmp.nesterov(0.05, schedule=CUT_AT_30, **k),
                      "lr_outside", "lr_inside", 1e-6, (90, 98)),
    # minibatches of 100 rows (10 per epoch, the order drawn from the seed, the same on every
    # backend and for the natives); the full objective is observed once per epoch, so the
    # counts are whole epochs
    *_minibatch_rows("adam", lambda **k: optcmp.adam(0.01, **k), "bias_corrected_eps",
                     "eps_hat", 1e-3, (370, 370), {"eps": 1e-7}),
    *_minibatch_rows("adamw", lambda **k: optcmp.adamw(0.01, weight_decay=0.1, **k),
                     "bias_corrected_eps", "eps_hat", 1e-3, (1390, 1390)),
    *_minibatch_rows("rmsprop", lambda **k: optcmp.rmsprop(1e-3, momentum=0.5, **k),
                     "eps_outside_sqrt", "eps_inside_sqrt", 1e-3, (990, 990), optax="both"),
    *_minibatch_rows("adagrad", lambda **k: optcmp.adagrad(0.5, **k), "eps_outside_sqrt",
                     "eps_inside_sqrt", 1e-3, (20, 20),
                     {"eps": 1e-7, "initial_accumulator_value": 0.1}, optax="keras"),
    # a constant learning rate: both natives run either momentum convention
    Row("momentum-minibatch-LR-A", "momentum",
        lambda i: optcmp.momentum(0.05, batch_size=100, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 70), nfev=_all(NATIVE_TOO, 70),
        equivalence={"reference": 1e-12, "native": 1e-12}),
    Row("nesterov-minibatch-LR-A", "nesterov",
        lambda i: optcmp.nesterov(0.05, batch_size=100, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 40), nfev=_all(NATIVE_TOO, 40),
        equivalence={"reference": 1e-12, "native": 1e-12}),
    Row("adadelta-minibatch-LR-A", "adadelta",
        lambda i: optcmp.adadelta(rho=0.9, batch_size=100, impl=i), lr_a, 1e-3,
        nit=_all(NATIVE_TOO, 570), nfev=_all(NATIVE_TOO, 570),
        equivalence={"reference": 1e-12, "native": 1e-12}),
    # the optimizers built from transforms, on MLS (one matrix parameter): one row per
    # convention, the natives that implement it counted, the others recorded as skipped
    *_mls_rows("lion", lambda i: optcmp.lion(3e-3, impl=i), 1e-2, 619,
               {"tensorflow/native": 619, "jax/native": 619}),
    *_mls_rows("nadam-dozat", lambda i: optcmp.nadam(0.02, impl=i), 1e-3, 496,
               {"torch/native": 496}),
    *_mls_rows("nadam-keras", lambda i: optcmp.nadam(0.02, momentum_decay=1.0,
                                                     mu_rounding="float32_decay", impl=i),
               1e-3, 490, {"tensorflow/native": 490}),
    *_mls_rows("nadam-constant", lambda i: optcmp.nadam(0.02, momentum_schedule="constant",
                                                        impl=i), 1e-3, 454, {"jax/native": 454}),
    *_mls_rows("radam-raw", lambda i: optcmp.radam(0.05, impl=i), 1e-3, 600,
               {"torch/native": 600}),
    *_mls_rows("radam-bias_corrected",
               lambda i: optcmp.radam(0.05, eps_placement="bias_corrected", impl=i), 1e-3, 600,
               {"jax/native": 600}),
    *_mls_rows("adafactor-clamp",
               lambda i: optcmp.adafactor(0.1, eps_form="clamp", eps1=1e-15, impl=i), 1e-3, 137,
               {"torch/native": 137}),
    # W factored (row and column means); 487 with it kept in full (min_dim_size_to_factor=17)
    # (TensorFlow's native: 137 under the SkylakeX and Sandybridge kernels, 136 under Haswell:
    # Keras' factored moments take their row and column means in another reduction order)
    *_mls_rows("adafactor-add", lambda i: optcmp.adafactor(0.1, impl=i), 1e-3, 137,
               {"tensorflow/native": Band(136, 137)}),
    *_mls_rows("adafactor-absolute",
               lambda i: optcmp.adafactor(0.03, relative_step=False, decay_rounding="float32",
                                          impl=i), 1e-3, 329, {"jax/native": 329}),
    *_mls_rows("lamb", lambda i: optcmp.lamb(0.05, impl=i), 1e-3, 125,
               {"tensorflow/native": 125, "jax/native": 125}),
    # a trust ratio for W and one for b
    *_mls_rows("lamb", lambda i: optcmp.lamb(0.05, impl=i), 1e-3, 126,
               {"tensorflow/native": 126, "jax/native": 126}, bias=True),
    # each framework's Muon convention on the matrix problem; torch's Newton-Schulz runs in
    # bfloat16, as the reference's with ns_dtype="bfloat16" (each step's update within one
    # bfloat16 ulp of torch's where a float32 and a float64 sum round apart: 20 steps within
    # 20 * lr * sqrt(2) * 2^-8 * max|update| = 1.2e-3 of weights whose largest entry is over
    # 0.3: 4e-3, 5e-3 asserted; the backends' references agree to 1e-12)
    Row("muon-torch-MLS", "muon",
        lambda i: optcmp.muon(weight_decay=0.1, ns_dtype="bfloat16", impl=i), mls, 0.1,
        nit=_all(TORCH_NATIVE, 167), equivalence={"reference": 1e-12, "native": 5e-3},
        skip={**_skip_optax_muon, **_skip_keras_muon}),
    # b by torch.optim.AdamW beside torch.optim.Muon
    Row("muon-torch-MLS+b", "muon",
        lambda i: optcmp.muon(weight_decay=0.1, ns_dtype="bfloat16", impl=i),
        lambda: mls(bias=True), 0.1, nit=_all(TORCH_NATIVE, 167),
        equivalence={"reference": 1e-12, "native": 5e-3},
        skip={**_skip_optax_muon, **_skip_keras_muon}),
    Row("muon-keras-MLS+b", "muon", lambda i: optcmp.muon(impl=i, **KERAS_MUON),
        lambda: mls(bias=True), 0.1, nit=_all(KERAS_NATIVE, 179),
        equivalence={"reference": 1e-12, "native": 1e-12},
        skip={**_skip_optax_muon, **_skip_torch_muon}),
    Row("muon-keras-minibatch-MLS+b", "muon",
        lambda i: optcmp.muon(impl=i, batch_size=64, **KERAS_MUON), lambda: mls(bias=True),
        0.1, nit=_all(KERAS_NATIVE, 180), nfev=_all(KERAS_NATIVE, 180),
        equivalence={"reference": 1e-12, "native": 1e-12},
        skip={**_skip_optax_muon, **_skip_torch_muon}),
    Row("muon-optax-MLS", "muon",
        lambda i: optcmp.muon(bias_correction=True, adam_nesterov=True, impl=i), mls, 0.1,
        nit=_all(OPTAX_NATIVE, 142), equivalence={"reference": 1e-12},
        skip={**_skip_torch_muon, **_skip_keras_muon}),
    Row("muon-optax-MLS+b", "muon",
        lambda i: optcmp.muon(bias_correction=True, adam_nesterov=True, impl=i),
        lambda: mls(bias=True), 0.1, nit=_all(OPTAX_NATIVE, 142),
        equivalence={"reference": 1e-12}, skip={**_skip_torch_muon, **_skip_keras_muon}),
    Row("muon-optax-minibatch-MLS", "muon",
        lambda i: optcmp.muon(bias_correction=True, adam_nesterov=True, batch_size=64, impl=i),
        mls, 0.1, nit=_all(OPTAX_NATIVE, 144), nfev=_all(OPTAX_NATIVE, 144),
        equivalence={"reference": 1e-12}, skip={**_skip_torch_muon, **_skip_keras_muon}),
    Row("prodigy-bias-corrected-MLS", "prodigy",
        lambda i: optcmp.prodigy(bias_correction=True, impl=i), mls, 1e-6,
        nit=_all(OPTAX_NATIVE, 154), equivalence={"reference": 1e-12}),
    # the judged sequence is evaluated apart from the step: one evaluation per step counted
    Row("schedule_free_adamw-MLS", "schedule_free_adamw",
        lambda i: optcmp.schedule_free_adamw(1e-2, impl=i), mls, 1e-2,
        nit=_all(OPTAX_NATIVE, 818), nfev=_all(OPTAX_NATIVE, 818),
        equivalence={"reference": 1e-12}),
    Row("schedule_free_sgd-MLS", "schedule_free_sgd",
        lambda i: optcmp.schedule_free_sgd(0.1, impl=i), mls, 1e-3,
        nit=_all(OPTAX_NATIVE, 1557), nfev=_all(OPTAX_NATIVE, 1557),
        equivalence={"reference": 1e-12}),
    # every unconstrained scipy.optimize.minimize method (tolerance 1e-8, scipy's own tests off)
    *[Row(f"scipy_minimize-{m}-LR-A", "scipy_minimize",
          lambda i, m=m: optcmp.scipy_minimize(m, impl=i), lr_a, 1e-8,
          nit={k: n for k in SCIPY_KEYS if not (hess and k == "numpy/scipy")},
          nfev={k: f for k in SCIPY_KEYS if not (hess and k == "numpy/scipy")},
          equivalence=({"scipy": 1e-9} if m in ("BFGS", "trust-ncg") else {}), steps=5,
          skip=({"numpy/scipy": "Hessian-vector products need autodiff (recorded as skipped)"}
                if hess else {}))
      for m, n, f, hess in SCIPY_METHODS],
]
