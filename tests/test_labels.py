"""Labels a run records match what the framework did: torch's own L-BFGS iteration count and
its own reason to stop."""

from __future__ import annotations

import warnings

import pytest
from conftest import lr_b, needs_torch

import optcmp


def _spy_lbfgs(monkeypatch: pytest.MonkeyPatch) -> dict[int, int]:
    """``id(optimizer) -> torch's n_iter`` after each ``LBFGS.step()`` (insertion order)."""
    import torch

    seen: dict[int, int] = {}
    step = torch.optim.LBFGS.step

    def spied(self, closure):  # type: ignore[no-untyped-def]
        out = step(self, closure)
        (p,) = self.param_groups[0]["params"]
        seen[id(self)] = int(self.state[p]["n_iter"])
        return out

    monkeypatch.setattr(torch.optim.LBFGS, "step", spied)
    return seen


def _run(spec: optcmp.OptimizerSpec, **kw: object) -> optcmp.RunResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return optcmp.run_one(lr_b(), spec, backend="torch", threads=1, max_time=None,
                              **kw)  # type: ignore[arg-type]


@needs_torch
def test_torch_lbfgs_nit_is_torchs_own_iteration_count(monkeypatch):
    """max_iter_per_step=20: the result's nit is torch's state n_iter, not the step() calls."""
    seen = _spy_lbfgs(monkeypatch)
    spec = optcmp.lbfgs(impl="native", max_iter_per_step=20)
    r = _run(spec, tol=1e-30, max_iter=25)
    # the last optimizer built is the run's (the warm-up's is a throwaway one)
    assert r.nit == list(seen.values())[-1] == 25  # the budget caps the second step() at 5
    assert r.status == "max_iter"


@needs_torch
def test_torch_lbfgs_own_tolerance_reaches_the_message(monkeypatch):
    """torch stopping by tolerance_grad ends the run with torch's reason, not 'budget'."""
    seen = _spy_lbfgs(monkeypatch)
    spec = optcmp.lbfgs(impl="native", tolerance_grad=1e-3, max_iter_per_step=20)
    r = _run(spec, tol=1e-30, max_iter=10_000)
    assert r.nit == list(seen.values())[-1] < 10_000
    assert r.status == "stalled" and "budget" not in r.message
    assert "torch: LBFGS stopped by its own tolerance" in r.message
    assert "tolerance_grad=0.001" in r.message



def test_a_run_records_the_pools_it_computed_with():
    """threads=1: every BLAS/OpenMP pool the run saw is recorded with its size, and saved."""
    from threadpoolctl import threadpool_info

    from optcmp.results import RunResult

    r = optcmp.run_one(lr_b(), optcmp.gd(), backend="numpy", threads=1, max_iter=3)
    libs = {i["internal_api"] for i in threadpool_info()}
    assert r.threads == 1 and set(r.pools) == libs and set(r.pools.values()) == {1}
    assert RunResult.from_dict(r.to_dict()).pools == r.pools
    assert RunResult.from_dict({k: v for k, v in r.to_dict().items() if k != "pools"}).pools == {}


@needs_torch
def test_a_torch_run_records_torchs_own_pool():
    r = _run(optcmp.lbfgs(impl="native"), tol=1e-30, max_iter=2)
    assert r.pools["torch"] == 1
