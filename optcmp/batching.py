"""Minibatch order: drawn by optcmp from the run's seed, identical on every backend."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from optcmp._memory import aligned_empty

#: Bytes of row orders kept for the next run with the same rows and seed (every optimizer of
#: a comparison visits the same orders); the least recently used are dropped first.
KEPT_ORDER_BYTES = 1 << 25

_kept: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()
_kept_lock = threading.Lock()


def _aligned_range(n: int) -> np.ndarray:
    """``np.arange(n)`` (int64) starting on a 64-byte boundary, where a CPU device of TensorFlow
    or JAX reads it in place; filled by chunks, without a second array of its size."""
    idx = aligned_empty((n,), np.int64)
    for a in range(0, n, 1 << 20):
        idx[a:a + (1 << 20)] = np.arange(a, min(a + (1 << 20), n))
    return idx


def _drawn_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """The permutation of ``n`` rows drawn from ``default_rng([seed, epoch])`` (read-only)."""
    key = (n, seed, epoch)
    with _kept_lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return found
    idx = _aligned_range(n)
    np.random.default_rng([seed, epoch]).shuffle(idx)  # permutation(n), without its array
    idx.setflags(write=False)  # handed out again: nobody may change it
    if idx.nbytes <= KEPT_ORDER_BYTES:
        with _kept_lock:
            _kept[key] = idx
            while sum(a.nbytes for a in _kept.values()) > KEPT_ORDER_BYTES:
                _kept.popitem(last=False)
    return idx


class BatchOrder:
    """The sequence of minibatches of a stochastic run, the same on every backend.

    Epoch ``e`` visits ``epoch_indices(e)`` in slices of ``batch_size`` rows; the last slice may
    be shorter, unless ``drop_last`` (as in ``torch.utils.data.DataLoader``) skips its rows.
    """

    def __init__(self, n_samples: int, batch_size: int, shuffle: bool, seed: int, *,
                 drop_last: bool = False) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        if not 1 <= batch_size <= n_samples:
            raise ValueError(f"batch_size must be in [1, n_samples={n_samples}], got {batch_size}")
        self.n_samples = int(n_samples)
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.drop_last = bool(drop_last)
        self._last: tuple[int, np.ndarray] | None = None
        self.steps_per_epoch = (self.n_samples // self.batch_size if self.drop_last
                                else -(-self.n_samples // self.batch_size))

    def epoch_indices(self, epoch: int) -> np.ndarray:
        """Row order of epoch ``epoch`` (int64, shape (n_samples,), read-only)."""
        epoch = int(epoch)
        if self._last is not None and self._last[0] == epoch:
            return self._last[1]
        if not self.shuffle:
            idx = _aligned_range(self.n_samples)
            idx.setflags(write=False)
        else:
            idx = _drawn_order(self.n_samples, self.seed, epoch)
        self._last = (epoch, idx)
        return idx

    def bounds(self, step: int) -> tuple[int, int]:
        """``(start, stop)`` of global step ``step`` inside its epoch's row order."""
        i = step % self.steps_per_epoch
        a = i * self.batch_size
        return a, min(a + self.batch_size, self.n_samples)

    def batch_indices(self, step: int) -> np.ndarray:
        """Row indices of global step ``step`` (convenience; adapters slice device copies)."""
        a, b = self.bounds(step)
        return self.epoch_indices(step // self.steps_per_epoch)[a:b]
