"""The timing contract each run records, and the memory-bandwidth floor that flags a clock read
which did not wait for the work."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp.engine.contract import step_bytes, step_floor, timing_error
from optcmp.problems import LinearRegression
from optcmp.results import RunResult


def test_every_run_records_its_contract_and_it_survives_saving():
    r = optcmp.run(LinearRegression(n_samples=200), optcmp.gd(0.1), backend="numpy",
                       max_iter=5)
    assert r.conditions.contract["barrier"] == "none (synchronous)"
    assert r.conditions.contract["compute_dtype"] == "float64"
    assert r.conditions.contract["matmul_precision"] == "highest"
    assert r.conditions.contract["threads"] == r.threads
    assert r.conditions.contract["step_floor"] == 0.0  # 200 rows stay in the caches: not checked
    assert r.conditions.timing_error == ""
    back = RunResult.from_dict(r.to_dict())
    assert back.conditions.contract == r.conditions.contract and back.conditions.timing_error == ""


def test_a_file_without_the_contract_loads_with_an_empty_one():
    d = RunResult("p", "gd", "gd", "numpy", contract={"barrier": "x"}).to_dict()
    assert d["contract"] == {"barrier": "x"} and "timing_error" not in d  # empty: left out
    del d["contract"]
    r = RunResult.from_dict(d)
    assert r.conditions.contract == {} and r.conditions.timing_error == ""


def test_step_bytes_count_every_row_or_one_minibatch_share():
    X = np.zeros((1000, 4))
    p = LinearRegression.from_arrays(X, np.zeros(1000), name="zeros")
    full = step_bytes(p, "float64")
    assert full == sum(np.asarray(a).size for a in p.train_data.values()) * 8
    assert step_bytes(p, "float32") == full // 2
    assert step_bytes(p, "float64", steps_per_epoch=10) == full // 10


def test_floor_is_zero_below_the_cache_size_and_flags_only_faster_steps():
    assert step_floor(1000, "cpu") == 0.0
    floor = step_floor(64 << 20, "cpu")
    assert floor > 0.0
    assert timing_error(10 * floor, 10, floor) == ""  # exactly at the floor: possible
    # whatever the floor this machine measures: 10 x 0.007296824808853012 / 10 rounds below it
    assert timing_error(10 * 0.007296824808853012, 10, 0.007296824808853012) == ""
    assert "memory-bandwidth floor" in timing_error(0.5 * floor, 1, floor)
    assert timing_error(0.0, 0, floor) == ""  # no steps, nothing to judge


def test_a_table_mixing_contracts_warns_naming_the_difference():
    from optcmp.analysis.stats.fairness import fairness_issues

    base = {"barrier": "none (synchronous)", "compute_dtype": "float32", "threads": 1}
    a = RunResult("p", "gd", "gd", "numpy", dtype="float32", status="converged", nit=10,
                  time=1.0, contract={**base, "matmul_precision": "highest"})
    b = RunResult("p", "gd", "gd", "torch", dtype="float32", status="converged", nit=10,
                  time=1.0, contract={**base, "matmul_precision": "tf32"})
    issues = fairness_issues([a, b], timer_resolution=1e-9)
    assert any("matmul precision" in m and "tf32" in m and "torch" in m for m in issues), issues
    c = b.replace(timing_error="timing error: below the floor")
    issues = fairness_issues([a, c], timer_resolution=1e-9)
    assert any("timing error" in m for m in issues), issues


@pytest.mark.slow
def test_a_missing_barrier_is_flagged_and_the_real_one_is_not(monkeypatch):
    """A compiled block of 200 passes over a 16 MB matrix (one call): timed with
    ``block_until_ready`` it takes about a second, far above the bandwidth floor (about 20 ms);
    with the barrier replaced by a no-op the clock reads one dispatch only (microseconds, a few
    milliseconds on a loaded host), below the floor, and the run is flagged."""
    pytest.importorskip("optcmp.frameworks.jax.ops")
    import optcmp.frameworks.jax.backend as jb
    from optcmp.frameworks.jax.ops import jax
    from optcmp.timing import Stopwatch

    A = np.random.default_rng(0).standard_normal((4000, 500))
    b = jb.JaxBackend()

    def block(a, v):
        return jax.lax.fori_loop(0, 200, lambda i, v: a.T @ (a @ v) / 4000.0, v)

    f = b.compile(block, ())
    a, v = b.asarray(A), b.asarray(np.ones(500))
    f(a, v)
    b.sync()  # compiled and warm
    floor = step_floor(2 * A.nbytes, "cpu")  # each pass reads the matrix twice

    def timed() -> float:
        sw = Stopwatch(b.sync)
        sw.resume()
        out = f(a, v)
        sw.pause()
        jax.block_until_ready(out)
        return sw.elapsed

    assert timing_error(timed(), 200, floor) == ""
    monkeypatch.setattr(jb, "block_until_ready", lambda xs: None)
    assert "memory-bandwidth floor" in timing_error(timed(), 200, floor)


def test_the_table_notes_a_run_flagged_as_a_timing_error():
    from pathlib import Path

    comp = optcmp.Comparison.load(Path(__file__).parent / "data" / "saved_v0_1" / "linreg.json")
    assert "timing error" not in comp.table()
    comp.runs[0] = comp.runs[0].replace(timing_error="timing error: below the floor")
    text = comp.table()
    assert f"! timing error: {comp.runs[0].label} on {comp.runs[0].backend}" in \
        " ".join(text.split())
