"""optcmp's warnings point at the user's line, however deep inside optcmp they are raised."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from conftest import HAS_JAX, HAS_TF

import optcmp
from optcmp.stopping import MaxIter


def test_warnings_of_compare_and_run_point_at_the_callers_line() -> None:
    p = optcmp.problems.LinearRegression(n_samples=200)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        optcmp.compare(p, [optcmp.gd(0.1)], stopping=MaxIter(5), progress=False,
                       backends=["numpy"])
        optcmp.run(p, optcmp.gd(0.1), stopping=MaxIter(5))
    ours = [w for w in rec if "has no target" in str(w.message)]
    assert len(ours) >= 2
    # the stopping rule is checked in the sweep and again by each run's executor: both the
    # user's line, never a file inside optcmp
    assert {w.filename for w in ours} == {__file__}


@pytest.mark.slow
@pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")
def test_tensorflow_start_up_notices_stay_out_of_optcmps_output() -> None:
    code = ("import optcmp\n"
            "p = optcmp.problems.LinearRegression(n_samples=100)\n"
            "optcmp.run(p, optcmp.gd(0.1), backend='tensorflow', max_iter=3)\n"
            "print('done')\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"
    for noise in ("oneDNN custom operations", "absl::InitializeLog", "retracing"):
        assert noise not in out.stderr, out.stderr


@pytest.mark.skipif(not HAS_JAX, reason="JAX is not installed")
def test_a_thread_pool_warning_points_at_the_callers_line() -> None:
    """A thread-pool warning raised inside a ``with`` block of optcmp was reported at
    contextlib.py:137; it names the line that called ``optcmp.run``."""
    p = optcmp.problems.LinearRegression(n_samples=200)
    from optcmp.frameworks.ops import xla_cpu_threads
    optcmp.run(p, optcmp.gd(0.1), backend="jax", max_iter=3, threads=1)  # XLA has started
    other = (xla_cpu_threads() or 1) + 1  # a count XLA cannot change to now
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        optcmp.run(p, optcmp.gd(0.1), backend="jax", max_iter=3, threads=other)
    pools = [w for w in rec if f"cannot change to {other}" in str(w.message)]
    assert pools and {w.filename for w in pools} == {__file__}


@pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")
def test_tensorflows_thread_pool_warning_is_given_once_per_process() -> None:
    """A comparison whose runs each ask started TensorFlow pools for another size warned once
    per run (ten times in one ``compare``); it warns once per size asked for."""
    import tensorflow as tf

    p = optcmp.problems.LinearRegression(n_samples=200)
    optcmp.run(p, optcmp.gd(0.1), backend="tensorflow", max_iter=3, threads=1)  # pools started
    other = max(tf.config.threading.get_intra_op_parallelism_threads(), 1) + 6
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        optcmp.compare(p, [optcmp.gd(0.1), optcmp.adam(0.01)], backends=["tensorflow"],
                       max_iter=3, threads=other, progress=False)
    assert sum(f"cannot change to {other}" in str(w.message) for w in rec) == 1
