"""A JAX run's timing contract records whether its CPU dispatch was asynchronous."""

from __future__ import annotations

import pytest

import optcmp
from optcmp.problems import LinearRegression


@pytest.mark.parametrize("dispatch", [True, False])
def test_a_jax_run_records_its_cpu_async_dispatch(dispatch):
    pytest.importorskip("optcmp.frameworks.jax.ops")
    import jax

    before = jax.config.read("jax_cpu_enable_async_dispatch")
    jax.config.update("jax_cpu_enable_async_dispatch", dispatch)
    try:
        r = optcmp.run(LinearRegression(n_samples=200), "gd", backend="jax",
                       dtype="float32", max_iter=5)
    finally:
        jax.config.update("jax_cpu_enable_async_dispatch", before)
    assert r.status == "max_iter"
    assert r.conditions.contract["cpu_async_dispatch"] is dispatch
    assert "cpu_async_dispatch" not in optcmp.run(
        LinearRegression(n_samples=200), "gd", max_iter=5).conditions.contract
