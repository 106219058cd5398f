"""Minibatch order: drawn by optcmp from the run's seed, identical on every backend."""

from __future__ import annotations

import numpy as np


class BatchOrder:
    """The sequence of minibatches of a stochastic run.

    Epoch ``e`` visits the rows in ``epoch_indices(e)`` (a permutation drawn from
    ``numpy.random.default_rng([seed, e])`` when ``shuffle``, else ``0..n-1``), in consecutive
    slices of ``batch_size`` rows; the last slice of an epoch may be shorter (no row is dropped),
    unless ``drop_last``: then an epoch is ``n_samples // batch_size`` full slices and the
    ``n_samples % batch_size`` rows left at the end of each epoch's order are not visited in
    that epoch (like ``torch.utils.data.DataLoader(drop_last=True)``). With a mean-reduced loss
    the short last slice gives each of its rows more weight than a full slice does; dropping it
    changes both the steps per epoch and that weighting. The order depends only on
    ``(n_samples, batch_size, shuffle, seed, drop_last)``, never on the backend.

    Parameters
    ----------
    n_samples : int
        Rows in the training data.
    batch_size : int
        Rows per minibatch (capped at ``n_samples``).
    shuffle : bool
        Reshuffle the rows every epoch.
    seed : int
        The run's seed.
    drop_last : bool, default False
        Leave out each epoch's last, shorter slice (see above). No effect when ``batch_size``
        divides ``n_samples`` or is at least ``n_samples``.

    Raises
    ------
    ValueError
        Non-positive ``n_samples`` or ``batch_size``.
    """

    def __init__(self, n_samples: int, batch_size: int, shuffle: bool, seed: int, *,
                 drop_last: bool = False) -> None:
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.n_samples = int(n_samples)
        self.batch_size = min(int(batch_size), self.n_samples)
        self.shuffle = bool(shuffle)
        self.seed = int(seed)
        self.drop_last = bool(drop_last)
        self.steps_per_epoch = (self.n_samples // self.batch_size if self.drop_last
                                else -(-self.n_samples // self.batch_size))

    def epoch_indices(self, epoch: int) -> np.ndarray:
        """Row order of epoch ``epoch`` (int64, shape (n_samples,))."""
        if not self.shuffle:
            return np.arange(self.n_samples, dtype=np.int64)
        rng = np.random.default_rng([self.seed, int(epoch)])
        return rng.permutation(self.n_samples).astype(np.int64)

    def bounds(self, step: int) -> tuple[int, int]:
        """``(start, stop)`` of global step ``step`` inside its epoch's row order."""
        i = step % self.steps_per_epoch
        a = i * self.batch_size
        return a, min(a + self.batch_size, self.n_samples)

    def batch_indices(self, step: int) -> np.ndarray:
        """Row indices of global step ``step`` (convenience; adapters slice device copies)."""
        a, b = self.bounds(step)
        return self.epoch_indices(step // self.steps_per_epoch)[a:b]
