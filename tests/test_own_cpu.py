"""Whose time ranks: the CPU time of each run's own threads where every run used one thread,
the wall time otherwise; the threads a run's CPU time counts are its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, lr_a

import optcmp
from optcmp.analysis.ranking import rank_runs
from optcmp.analysis.tables import table
from optcmp.analysis.verdict import verdict
from optcmp.cli import main as cli_main
from optcmp.frameworks.base import blas_threads
from optcmp.results import ComparisonData, RunResult
from optcmp.timing import Stopwatch, ThreadCpu, run_cpu_clock

ROOT = Path(__file__).resolve().parents[1]


def _run(backend: str, wall: float, cpu: float | None, threads: int | None = 1, *,
         contended: bool = False) -> RunResult:
    return RunResult(problem="p", optimizer="sgd", label="sgd", backend=backend,
                     status="converged", success=True, time=wall, time_to_target=wall,
                     cpu_time=cpu, cpu_time_to_target=cpu, threads=threads, nit=10,
                     nit_to_target=10, contended=contended, fun=0.1, f0=1.0,
                     contract={"cpu_clock": "own threads (the calling thread)"})


def _loaded_pair(threads: int | None = 1, contended: bool = True) -> list[RunResult]:
    """TensorFlow slower in wall time (its runs lost the CPU), faster in CPU time."""
    return [_run("numpy", 0.533, 0.520, threads, contended=contended),
            _run("tensorflow", 0.698, 0.145, threads, contended=contended)]


def test_stopwatch_adds_the_cpu_clock_it_is_given() -> None:
    wall, cpu = iter([10.0, 12.0, 20.0, 21.0]), iter([1.0, 1.5, 2.0, 2.25])
    sw = Stopwatch(clock=lambda: next(wall), cpu_clock=lambda: next(cpu))
    sw.resume()
    sw.pause()
    sw.resume()
    sw.pause()
    assert (sw.elapsed, sw.cpu_elapsed) == (3.0, 0.75)


def test_one_thread_runs_rank_by_their_cpu_column() -> None:
    """Claimed: numpy first (533 ms wall) while the CPU column shows TensorFlow 3.6x faster;
    right: runs of one thread each rank by CPU time, TensorFlow first."""
    order = [e.key[1] for e in rank_runs(_loaded_pair())]
    assert order == ["tensorflow", "numpy"]
    assert [e.key[1] for e in rank_runs(_loaded_pair(), "wall")] == ["numpy", "tensorflow"]
    # several threads: wall time, the CPU time of a pool's threads is no ranking clock
    assert [e.key[1] for e in rank_runs(_loaded_pair(threads=2))] == ["numpy", "tensorflow"]
    # a process CPU time (files of earlier versions) counts idle pools: wall time
    old = _loaded_pair()
    for r in old:
        r.conditions.contract.clear()
    assert [e.key[1] for e in rank_runs(old)] == ["numpy", "tensorflow"]


def test_table_and_verdict_say_which_clock_ranks() -> None:
    comp = ComparisonData(_loaded_pair(), settings={"target": "loss <= 0.1"})
    text = table(comp)
    header = text.splitlines()[0]
    assert "[cpu time]" in header and "[time-to-target]" not in header
    assert "ranked by: CPU time of each run's own threads" in text
    first, *_ = [ln for ln in text.splitlines()[2:] if ln.strip()]
    assert first.split()[1] == "tensorflow"
    words = verdict(comp)
    assert words.startswith("verdict: sgd on tensorflow reaches the target first (145.0ms CPU)")
    assert "timings were contended; the ranking uses CPU time" in words
    assert "ranked by: CPU time" in words
    wall = table(comp, rank_by="wall")
    assert "[time-to-target]" in wall.splitlines()[0] and "ranked by: wall time (as asked" in wall
    assert verdict(comp, rank_by="wall").startswith("verdict: sgd on numpy reaches")


def test_rank_by_is_checked() -> None:
    with pytest.raises(ValueError, match=r"rank_by must be one of \['cpu', 'wall'\].*'gpu'"):
        rank_runs(_loaded_pair(), "gpu")
    unknown = [_run("numpy", 0.533, None), _loaded_pair()[1]]
    comp = ComparisonData(unknown)
    assert {e.clock for e in rank_runs(unknown, "cpu")} == {"wall"}
    assert "ranked by: wall time (a run that reached the target has no CPU time" in table(
        comp, rank_by="cpu")


def test_the_cli_ranks_by_the_clock_asked_for(capsys) -> None:
    rc = cli_main(["run", "--rows", "2000", "--backends", "numpy", "--optimizers", "lbfgs,gd",
                   "--rank-by", "wall", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "\nranked by: wall time (as asked; --rank-by cpu for CPU time)\n" in out
    header = next(ln for ln in out.splitlines() if ln.startswith("optimizer "))
    assert "[time-to-target]" in header and "[cpu time]" not in header


def test_a_one_thread_run_counts_its_own_thread_only() -> None:
    """The threads a one-thread numpy run's CPU time counts: the calling thread, not the
    workers of a 2-thread BLAS pool nor another thread spinning beside it."""
    from threadpoolctl import threadpool_limits

    stop = threading.Event()
    spinner = threading.Thread(target=lambda: [None for _ in iter(stop.is_set, True)],
                               daemon=True)
    spinner.start()
    try:
        with threadpool_limits(2):
            a = np.ones((300, 300))
            a @ a  # the pool has worked
            clock = run_cpu_clock("numpy", 1)
            assert isinstance(clock, ThreadCpu)
            assert set(clock.read()) == {threading.get_native_id()}
            r = optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), threads=1, max_iter=5)
    finally:
        stop.set()
        spinner.join()
    assert r.conditions.contract["cpu_threads"] == 1
    assert r.conditions.contract["cpu_clock"] == "own threads (the calling thread)"
    assert not isinstance(run_cpu_clock("numpy", 2), ThreadCpu)  # a pool's threads are its own


_RUNTIME_SCRIPT = """
import json, os, threading
import numpy as np
from optcmp.timing import ThreadCpu, native_threads
from optcmp.frameworks.base import blas_threads
seen = {}
read = ThreadCpu.read
def spy(self):
    out = read(self)
    seen.setdefault(self.framework or "numpy", set()).update(out)
    return out
ThreadCpu.read = spy
np.ones((300, 300)) @ np.ones((300, 300))
before = native_threads()
import optcmp
from optcmp.problems import LinearRegression
p = LinearRegression(n_samples=2000)
for b in ("tensorflow", "jax", "numpy"):
    optcmp.run(p, optcmp.gd(), backend=b, threads=1, max_iter=20)
print(json.dumps({"blas": blas_threads(), "main": threading.get_native_id(),
                  "before": sorted(before), **{k: sorted(v) for k, v in seen.items()}}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not (HAS_TF and HAS_JAX), reason="needs tensorflow and jax")
def test_runtime_threads_are_the_frameworks_own() -> None:
    """In a process with a 2-thread BLAS pool and TensorFlow and JAX loaded: a TensorFlow or JAX
    run counts the calling thread and threads its own runtime started, none that existed before
    (the BLAS workers) and none of the other framework's; a numpy run counts the caller."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _RUNTIME_SCRIPT], env=env, check=True,
                         capture_output=True, text=True, timeout=600).stdout
    got = json.loads(out.strip().splitlines()[-1])
    main, before = got["main"], set(got["before"])
    assert got["blas"] == 2 and len(before) >= 2  # the BLAS workers were there
    tf, jx = set(got["tensorflow"]), set(got["jax"])
    assert tf & before == {main} and jx & before == {main}
    assert tf - {main} and jx - {main} and not (tf & jx) - {main}
    assert set(got["numpy"]) == {main}


_JAX_FIRST_SCRIPT = """
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
float(jnp.ones(3).sum())  # JAX started with its own thread pools, before optcmp
import warnings
import optcmp
from optcmp.problems import LinearRegression
p = LinearRegression(n_samples=200_000)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    r = optcmp.run(p, optcmp.sgd(1e-4, batch_size=64), backend="jax", threads=1,
                   max_iter=20_000, tol=1e-12)
print(r.conditions.contract["cpu_clock"], r.timing.cpu_time / r.timing.time)
"""


@pytest.mark.skipif(not HAS_JAX, reason="JAX is not installed")
def test_a_jax_run_after_jax_started_on_its_own_counts_every_thread() -> None:
    """Claimed: a JAX run with threads=1 in a process where JAX had started before optcmp
    (with its default pools, or with optcmp's one-thread flags already in XLA_FLAGS) took
    0.65 ms of CPU for 25 ms of steps (the caller's thread and threads started later); right:
    its computing threads are not known, so the process's CPU time counts (whatever the load,
    the clock's name says so; the time itself is the host's to vary)."""
    from optcmp.frameworks.ops import XLA_CPU_FLAGS

    for xla in ("", " ".join(XLA_CPU_FLAGS)):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XLA_FLAGS": xla}
        out = subprocess.run([sys.executable, "-c", _JAX_FIRST_SCRIPT], env=env, check=True,
                             capture_output=True, text=True, timeout=600).stdout
        clock, ratio = out.strip().splitlines()[-1].rsplit(" ", 1)
        assert clock == "process CPU time (every thread)" and float(ratio) > 0.0, xla


def test_overlapping_runs_share_one_thread_limit() -> None:
    """Claimed: four threads calling overlapping runs record threads=1 while a BLAS pool of 2
    was in force, and the process's BLAS threads are not restored; right: every run computes
    with the pool at 1 while it runs, and the process gets its 2 threads back."""
    from threadpoolctl import threadpool_limits

    n = 4
    started = threading.Barrier(n)
    first_done = threading.Event()
    during: list[list[int | None]] = [[] for _ in range(n)]

    def watch(i: int):
        calls = []

        def callback(res) -> None:
            calls.append(res.nit)
            if len(calls) == 1:  # every run has started
                started.wait(timeout=60)
            if i > 0 and len(calls) == 2:  # run 0 has ended
                first_done.wait(timeout=60)
            during[i].append(blas_threads())
        return callback

    def one(i: int) -> RunResult:
        try:
            return optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), threads=1,
                              max_iter=2 if i == 0 else 6, callback=watch(i))
        finally:
            if i == 0:
                first_done.set()

    with threadpool_limits(2):
        if blas_threads() != 2:
            pytest.skip("numpy's BLAS cannot be given 2 threads here")
        with ThreadPoolExecutor(n) as ex:
            runs = list(ex.map(one, range(n)))
        after = blas_threads()
    assert [r.threads for r in runs] == [1] * n
    assert all(seen and set(seen) == {1} for seen in during), during
    assert after == 2


def test_a_run_inside_a_run_of_another_thread_count_is_refused() -> None:
    seen: list[str] = []

    def inner(res) -> None:
        if not seen:
            with pytest.raises(ValueError, match="threads=2 asked for inside a run of threads=1"):
                optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), threads=2, max_iter=2)
            seen.append("refused")

    r = optcmp.run(lr_a(), optcmp.gd(learning_rate=0.1), threads=1, max_iter=3, callback=inner)
    assert seen == ["refused"] and r.nit == 3 and r.threads == 1
