"""No hidden global state: importing optcmp's framework modules changes neither ``XLA_FLAGS`` nor
JAX's x64 flag (a run sets them; x64 stays on after a float64 run, as documented), and the host gradient's batch cache gives
each thread its own batch."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, HAS_TORCH

ROOT = Path(__file__).resolve().parents[1]

IMPORT = """
import os, sys
import {module}
import jax
from jax._src import xla_bridge
print(repr(os.environ.get("XLA_FLAGS")), jax.config.read("jax_enable_x64"),
      xla_bridge.backends_are_initialized())
"""


def _fresh(code: str, xla_flags: str | None) -> str:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "TF_CPP_MIN_LOG_LEVEL": "3"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
@pytest.mark.parametrize("xla_flags", [None, "--xla_cpu_enable_fast_math=false"])
def test_importing_the_jax_modules_leaves_xla_flags_and_x64_alone(xla_flags):
    module = (
        "optcmp.frameworks.jax.ops, optcmp.frameworks.jax.backend, optcmp.frameworks.jax.native")
    out = _fresh(IMPORT.format(module=module), xla_flags)
    assert out == f"{xla_flags!r} False False"


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_JAX and HAS_TF), reason="jax or tensorflow is not installed")
def test_importing_the_tensorflow_modules_leaves_xla_flags_and_x64_alone():
    module = "optcmp.frameworks.tensorflow.ops, optcmp.frameworks.tensorflow.backend"
    assert _fresh(IMPORT.format(module=module), None) == "None False False"


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_a_jax_run_pins_xla_before_the_start_and_leaves_x64_on():
    code = ("import os, jax, optcmp\n"
            "p = optcmp.problems.LinearRegression(n_samples=100)\n"
            "r = optcmp.run(p, optcmp.gd(0.1), backend='jax', max_iter=3)\n"
            "print(repr(os.environ.get('XLA_FLAGS')), jax.config.read('jax_enable_x64'), "
            "r.threads, r.conditions.contract['compute_dtype'], r.conditions.contract['x64'])")
    out = _fresh(code, "--xla_cpu_enable_fast_math=false")
    flags = ("--xla_cpu_enable_fast_math=false --xla_cpu_multi_thread_eigen=false "
             "intra_op_parallelism_threads=1")
    assert out == f"{flags!r} True 1 float64 True"  # x64 stays on: documented


@pytest.mark.skipif(not (HAS_TORCH or HAS_TF), reason="host gradients need PyTorch or TensorFlow")
def test_threads_with_different_batches_each_get_their_own():
    """Four threads, each with a batch of its own, 3,000 calls each: a cache of one batch
    shared by the threads handed out another thread's batch (seen 6 and 122 times of 8,000)."""
    from optcmp.frameworks.host import host_value_and_grad

    def objective(o, x, batch):
        return o.sum(batch["a"] * x)

    vg = host_value_and_grad(objective)
    x = np.ones(4)
    batches = {s: {"a": np.full(4, s)} for s in (1.0, 2.0, 3.0, 4.0)}
    wrong: list[tuple[float, float]] = []
    start = threading.Barrier(len(batches))

    def work(scale: float) -> None:
        batch = batches[scale]
        start.wait()
        for _ in range(3000):
            fun, grad = vg(x, batch)
            if fun != 4.0 * scale or grad[0] != scale:
                wrong.append((scale, fun))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=work, args=(s,)) for s in batches]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []


def test_the_host_gradient_keeps_nothing_on_the_objective():
    from optcmp.frameworks.host import framework, host_value_and_grad

    if framework() is None:
        pytest.skip("host gradients need PyTorch or TensorFlow")

    def objective(o, x, batch):
        return o.sum(batch["a"] * x)

    before = dict(objective.__dict__)
    vg = host_value_and_grad(objective)
    vg(np.ones(2), {"a": np.ones(2)})
    assert objective.__dict__ == before
