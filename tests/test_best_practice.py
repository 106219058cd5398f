"""The loops of ``benchmarks/best_practice.py`` compute what optcmp computes, and its page in
``scripts/docs_numbers.py`` quotes what the benchmark measured."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import optcmp
from optcmp.problems import FizzBuzzMLP, LinearRegression

ROOT = Path(__file__).resolve().parents[1]


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


bp = _module("best_practice", ROOT / "benchmarks" / "best_practice.py")
WORK = (("gd-1M", 4), ("sgd64-1M", 20), ("sgd64-fizzbuzz", 15), ("adam64-fizzbuzz", 15))


@pytest.fixture(scope="module")
def problems() -> dict[str, Any]:
    lin, fizz = LinearRegression(n_samples=3_000), FizzBuzzMLP()
    return {"gd-1M": lin, "sgd64-1M": lin, "sgd64-fizzbuzz": fizz, "adam64-fizzbuzz": fizz}


@pytest.mark.parametrize("backend", [
    "numpy", pytest.param("torch", marks=pytest.mark.slow), pytest.param("tensorflow", marks=pytest.mark.slow),
    pytest.param("jax", marks=pytest.mark.slow)])
def test_every_loop_variant_reaches_numpys_iterate(backend: str, problems: dict[str, Any]) -> None:
    """Layouts, gathers and backward passes change the cost, not the iterate: every variant
    ends where numpy's loop ends (float64 rounding; Keras' SGD holds its rate in float32, and
    Keras' Adam places epsilon its own way, so it is left out)."""
    pytest.importorskip({"tensorflow": "tensorflow", "jax": "optax"}.get(backend, "numpy"))
    if backend == "torch":
        pytest.importorskip("torch")
    for work, n in WORK:
        p = problems[work]
        want = np.asarray(next(iter(bp.numpy_loops(work, p, n).values()))())
        for name, loop in bp.LOOPS[backend](work, p, n).items():
            if "epsilon-hat" in name:
                continue
            got = np.asarray(loop())
            tol = 1e-8 if "keras" in name else 1e-12
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max(),
                                       err_msg=f"{backend} {work} {name}")


def test_the_gd_loop_is_optcmps_gd(problems: dict[str, Any]) -> None:
    """Four steps of numpy's column-major GD loop at 1/L are optcmp's four GD steps."""
    p = problems["gd-1M"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = optcmp.run(p, optcmp.gd("auto"), backend="numpy", stopping=optcmp.MaxIter(4),
                       threads=1)
    loop = bp.numpy_loops("gd-1M", p, 4)["column-major"]
    np.testing.assert_allclose(loop(), r.x, rtol=0, atol=1e-12)


def test_whole_data_evaluations_are_counted_on_a_copy(problems: dict[str, Any]) -> None:
    """An evaluation of every training row counts even on a copy of the data; a batch does
    not; one nested in another counts once."""
    p = problems["sgd64-fizzbuzz"]
    x, data = p.init_params(0), {k: v.copy() for k, v in p.train_data.items()}
    with bp.FullEvaluations(p) as spent:
        p.value_and_grad(x, data)
        p.value_and_grad(x, {k: v[:64] for k, v in data.items()})
        p.fun64(x)
    assert spent.count == 2
    assert "value_and_grad" not in vars(p)


def test_the_screen_is_counted_apart_and_left_out_of_the_rest(problems, capsys) -> None:
    """Building a screen (its first call inside) and calling it count twice in the screen's
    column, whose methods are the class's own again afterwards; the whole-call table's rest
    is the whole call less the steps, the judge and the screen."""
    from optcmp.engine.screen import Screen
    from optcmp.frameworks import get_backend

    p, b = problems["sgd64-fizzbuzz"], get_backend("numpy")
    own = Screen.__init__
    with bp.ScreenCalls() as spent:
        screen = Screen(b, p, p.train_data, p.init_params(0))
        assert screen(p.init_params(1)) == pytest.approx(p.fun64(p.init_params(1)), rel=1e-12)
    assert spent.count == 2 and spent.cpu > 0 and Screen.__init__ is own
    row = _row("torch", "sgd64-fizzbuzz", 1e-5, 2e-5, 5e-5)
    row["whole"].update(screen_cpu=1e-5, judged=2, screened=199)
    bp.print_whole([row])
    assert "| 20.0 | 1.0 | 10.0 | 19.0 | 2 / 199 | 5.00x |" in capsys.readouterr().out


def _row(b: str, w: str, best: float, auto: float, whole: float | None) -> dict[str, Any]:
    row: dict[str, Any] = {"backend": b, "workload": w, "steps": 3000, "best": "fast",
                           "variants": {"fast": [best, best], "slow": [2 * best, 2 * best]},
                           "auto": [auto, auto], "step": [3 * best, 3 * best]}
    if whole is not None:
        row["whole"] = {"steps": 3000, "cpu": whole, "wall": whole, "steps_cpu": auto,
                        "steps_wall": auto, "evals_cpu": 0.1 * best, "evals_wall": 0.1 * best}
    return row


def test_the_page_quotes_the_ratios_to_the_best_variant() -> None:
    """auto/best is the default's CPU per step over the fastest variant's; the largest ratio
    names its row."""
    dn = _module("docs_numbers_bp", ROOT / "scripts" / "docs_numbers.py")
    data = {"rows_1M": 1_000_000, "results": [
        _row("numpy", "gd-1M", 1e-3, 1.1e-3, None),
        _row("numpy", "sgd64-1M", 1e-5, 1.3e-5, 1.4e-5),
        _row("torch", "sgd64-1M", 2e-5, 2.2e-5, 4e-5)]}
    v = dn.Values()
    dn.best_practice_ratios(v, data)
    assert v.timing["auto_best_numpy_gd"] == "1.10x"
    assert v.timing["max_auto_best"] == "1.30x (numpy sgd64-1M)"
    assert v.timing["max_whole_best"] == "2.00x (torch sgd64-1M)"
    assert v.timing["vs_numpy_torch_sgd64"] == "1.69x"
    text = dn.best_practice_text(data)
    assert "| numpy | gd-1M | fast | 1,000.0 (1,000.0) | 1,100.0 (1,100.0) | 1.10x (1.10x) |" \
        in text["table"]
    assert "| torch | sgd64-1M | slow | 40.0 (40.0) | 2.00x |" in text["variants_table"]
