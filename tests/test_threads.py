"""Thread control: every backend gets the same CPU thread count, recorded in each result."""

from __future__ import annotations

import pytest
from conftest import lr_a, needs_torch

import optcmp
from optcmp.analysis import stats
from optcmp.frameworks.base import blas_threads
from optcmp.results import RunResult
from optcmp.threads import current_threads, limit_threads


def test_limit_threads_sets_and_restores_blas() -> None:
    before = blas_threads()
    with limit_threads(1, "numpy"):
        assert blas_threads() == 1
        assert current_threads("numpy") == 1
    assert blas_threads() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_thread_counts_are_rejected(bad) -> None:
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), threads=bad, max_iter=2)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        optcmp.compare(lr_a(), [optcmp.gd(learning_rate=0.1)], threads=bad, progress=False)


def test_run_records_the_thread_count_and_results_do_not_change() -> None:
    p = lr_a()
    one = optcmp.run(p, optcmp.gd(learning_rate=0.1), threads=1, max_iter=20)
    dflt = optcmp.run(p, optcmp.gd(learning_rate=0.1), max_iter=20, threads=None)
    assert one.threads == 1
    assert dflt.threads == blas_threads()  # None: the library's own count
    assert optcmp.run(p, optcmp.gd(learning_rate=0.1), max_iter=2).threads == 1  # default
    assert one.fun == pytest.approx(dflt.fun, rel=1e-12)
    assert one.nit == dflt.nit == 20


@needs_torch
def test_torch_threads_set_for_the_run_and_restored() -> None:
    import torch

    before = torch.get_num_threads()
    r = optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), backend="torch", threads=1,
                       max_iter=5)
    assert r.threads == 1
    assert torch.get_num_threads() == before


def test_fairness_flags_different_thread_counts() -> None:
    def run(backend: str, threads: int) -> RunResult:
        return RunResult(problem="p", optimizer="gd", label="gd", backend=backend,
                         status="converged", success=True, time=1.0, time_to_target=1.0,
                         threads=threads)

    issues = stats.fairness_issues([run("numpy", 1), run("torch", 2)], timer_resolution=1e-9)
    assert any("thread counts (1, 2)" in m for m in issues)
    issues = stats.fairness_issues([run("numpy", 2), run("torch", 2)], timer_resolution=1e-9)
    assert not any("thread" in m for m in issues)
