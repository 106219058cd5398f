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
        return optcmp.run(lr_b(), spec, backend="torch", threads=1, max_time=None,
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

    r = optcmp.run(lr_b(), optcmp.gd(), backend="numpy", threads=1, max_iter=3)
    libs = {i["internal_api"] for i in threadpool_info()}
    assert r.threads == 1 and set(r.conditions.pools) == libs and set(r.conditions.pools.values()) == {1}
    assert RunResult.from_dict(r.to_dict()).conditions.pools == r.conditions.pools
    assert RunResult.from_dict({k: v for k, v in r.to_dict().items() if k != "pools"}).conditions.pools == {}


@needs_torch
def test_a_torch_run_records_torchs_own_pool():
    r = _run(optcmp.lbfgs(impl="native"), tol=1e-30, max_iter=2)
    assert r.conditions.pools["torch"] == 1


def _minibatch_run(drop_last: bool) -> optcmp.RunResult:
    p = optcmp.problems.LinearRegression(n_samples=1000, seed=0, drop_last=drop_last)
    spec = optcmp.sgd(learning_rate=1e-4, batch_size=300, label=f"sgd drop={drop_last}")
    return optcmp.run(p, spec, backend="numpy", threads=1, max_iter=8)


def test_minibatch_runs_record_the_last_batch_and_the_drop_policy():
    """1000 rows in batches of 300: the kept last batch has 100 rows; dropped, every batch 300."""
    from optcmp.results import RunResult

    keep, drop = _minibatch_run(False), _minibatch_run(True)
    assert (keep.conditions.last_batch, keep.conditions.drop_last) == (100, False)
    assert (drop.conditions.last_batch, drop.conditions.drop_last) == (300, True)
    assert drop.problem_spec["drop_last"] is True and "drop_last" not in keep.problem_spec
    back = RunResult.from_dict(drop.to_dict())
    assert (back.conditions.last_batch, back.conditions.drop_last) == (300, True)
    full = optcmp.run(optcmp.problems.LinearRegression(n_samples=100, seed=0), optcmp.gd(),
                          backend="numpy", threads=1, max_iter=2)
    assert (full.conditions.last_batch, full.conditions.drop_last) == (None, None)
    assert "last_batch" not in full.to_dict()


def test_a_table_mixing_drop_policies_gets_a_fairness_warning():
    from optcmp.analysis.stats.fairness import fairness_issues

    keep, drop = _minibatch_run(False), _minibatch_run(True)
    mixed = [m for m in fairness_issues([keep, drop], by_time=False) if "last batch" in m]
    assert len(mixed) == 1 and "drops the short last batch" in mixed[0]
    assert not [m for m in fairness_issues([keep, keep], by_time=False) if "last batch" in m]


def test_drop_last_must_be_a_bool():
    with pytest.raises(ValueError, match="drop_last"):
        optcmp.problems.LinearRegression(n_samples=10, drop_last="yes")  # type: ignore[arg-type]
