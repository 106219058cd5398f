"""Device timings sync before reading the clock (CPU tests with a fake device, one GPU check).

The fake device queues a step instantly and does 50 ms of "device work" when it is synced, like
a CUDA stream: reading a result (``float(fun)``, ``to_numpy``) waits for the queue too. optcmp's
stopwatch syncs before every clock read, so each timed step holds its 50 ms; the same steps timed
without the sync read almost nothing (the work then happens during off-clock monitoring).
"""

from __future__ import annotations

import importlib
import time

import numpy as np
import pytest
from conftest import lr_a, needs_cuda

import optcmp
from optcmp.frameworks.numpy.backend import NumpyBackend
from optcmp.timing import Stopwatch

runner_mod = importlib.import_module("optcmp.engine.session")

WORK = 0.05  # seconds of device work per queued step


class _Pending:
    """A device scalar: converting it to float waits for the queue (like ``.item()``)."""

    def __init__(self, backend: FakeAsyncBackend, value: float) -> None:
        self.backend, self.value = backend, value

    def __float__(self) -> float:
        self.backend.sync()
        return float(self.value)


class FakeAsyncBackend(NumpyBackend):
    """numpy whose steps only enqueue; ``sync()`` does the queued work (50 ms)."""

    def __init__(self, device: str | None = None, dtype: str = "float64") -> None:
        super().__init__(None, dtype)
        self.queued = 0
        self.sync_calls = 0

    def sync(self) -> None:
        self.sync_calls += 1
        if self.queued:
            time.sleep(WORK)
            self.queued = 0

    def to_numpy(self, t):
        self.sync()
        return super().to_numpy(t)

    def compile(self, fn, example, *, rows=()):  # the reference adapter's step
        inner = super().compile(fn, example, rows=rows)

        def step(*args):
            fun, gnorm, x, state = inner(*args)
            self.queued += 1
            return _Pending(self, fun), _Pending(self, gnorm), x, state

        return step


def _run(monkeypatch, *, synced: bool):
    be = FakeAsyncBackend()
    monkeypatch.setattr(runner_mod, "get_backend", lambda *a, **k: be)
    if not synced:  # what a stopwatch without device sync would measure
        monkeypatch.setattr(runner_mod, "Stopwatch", lambda sync=None, **_: Stopwatch())
    # one framework call per step (the fake queues work in its compiled step; fused blocks are
    # timed by the same synced stopwatch, one interval per block)
    r = optcmp.run(lr_a(), optcmp.gd(0.1), backend="numpy", execution="step",
                       stopping=optcmp.MaxIter(10) | optcmp.RelativeSuboptimality(1e-300))
    return r, be


def test_each_timed_step_holds_its_device_work(monkeypatch):
    r, be = _run(monkeypatch, synced=True)
    assert r.nit == 10 and r.status == "max_iter"
    steps = np.diff(r.trace.time)  # trace time = clock at the end of each step
    assert len(steps) >= 8
    assert np.all(steps >= WORK), steps
    assert r.time >= 10 * WORK
    # sync before both clock reads of every step (plus setup/warm-up syncs)
    assert be.sync_calls >= 2 * r.nit


def test_without_sync_the_stopwatch_reads_only_the_enqueueing(monkeypatch):
    """The control: the same steps without a sync read < 1 ms, so the test above can fail."""
    r, be = _run(monkeypatch, synced=False)
    steps = np.diff(r.trace.time)
    assert np.median(steps) < 1e-3, steps
    assert r.time < WORK  # ten steps' work (0.5 s) went into off-clock monitoring


def test_warmup_and_monitoring_are_off_the_clock(monkeypatch):
    """Off-clock work (float64 re-evaluation, a callback) never shows up in timed steps."""
    slow = []

    def callback(intermediate_result):
        time.sleep(0.2)
        slow.append(intermediate_result.nit)

    be = FakeAsyncBackend()
    monkeypatch.setattr(runner_mod, "get_backend", lambda *a, **k: be)
    r = optcmp.run(lr_a(), optcmp.gd(0.1), backend="numpy", callback=callback,
                       stopping=optcmp.MaxIter(5) | optcmp.RelativeSuboptimality(1e-300))
    assert len(slow) >= 5
    # 5 steps of 50 ms each on the clock; the callbacks' 5 x 200 ms are not (>= 0.8 s if they were)
    assert 5 * WORK <= r.time < 5 * WORK + 0.3


@needs_cuda
def test_cuda_stopwatch_matches_cuda_events():  # pragma: no cover - needs a GPU
    """A published benchmark timed CUDA matmuls without a sync (0.03 ms instead of 1.36 ms); on a
    GPU, optcmp's synced time is within 20% of CUDA-event time, an unsynced one >= 10x smaller."""
    import torch

    be = optcmp.get_backend("torch", device="cuda", dtype="float32")
    a = torch.randn(4096, 4096, device=be.torch_device)
    a @ a
    be.sync()
    synced, unsynced, events = [], [], []
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        sw = Stopwatch(be.sync)
        sw.resume()
        start.record()
        a @ a
        end.record()
        sw.pause()
        synced.append(sw.elapsed)
        events.append(start.elapsed_time(end) / 1e3)
        raw = Stopwatch()
        raw.resume()
        a @ a
        unsynced.append(raw.pause())
        be.sync()
    assert np.median(synced) == pytest.approx(np.median(events), rel=0.2)
    assert np.median(unsynced) * 10 <= np.median(synced)
    p = optcmp.problems.LinearRegression(n_samples=1_000_000, n_features=3)
    r = optcmp.run(p, optcmp.gd(), backend="torch", device="cuda", dtype="float32",
                       stopping=optcmp.MaxIter(20) | optcmp.RelativeSuboptimality(1e-300))
    assert r.device.startswith("cuda") and r.nit == 20 and r.time > 0
