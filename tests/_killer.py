"""A problem that kills its Dask worker process on one seed (imported by the workers).

Only inside a Dask worker: the same problem run in the test process behaves normally, which
gives the sequential reference results.
"""

from __future__ import annotations

import os

import numpy as np

from optcmp.problems import LinearRegression


def _in_dask_worker() -> bool:
    try:
        from distributed import get_worker

        get_worker()
    except (ImportError, ValueError):
        return False
    return True


class KillerRegression(LinearRegression):
    """LinearRegression whose ``init_params(kill_seed)`` calls ``os._exit`` in a Dask worker.

    With ``marker`` set, it kills only once (the first process to create ``marker``); without
    it, every attempt dies.
    """

    kill_seed: int = -1
    marker: str | None = None

    @classmethod
    def make(cls, kill_seed: int, marker: str | None, n: int = 300) -> KillerRegression:
        rng = np.random.default_rng(5)
        X = rng.standard_normal((n, 3)) * [1.0, 2.0, 0.5]
        y = X @ [1.5, -2.0, 0.5] + 0.3 + 0.1 * rng.standard_normal(n)
        p = cls.from_arrays(X, y, name="killer", init="normal")
        p.kill_seed = kill_seed
        p.marker = marker
        return p

    def init_params(self, seed: int = 0) -> np.ndarray:
        if seed == self.kill_seed and _in_dask_worker():
            if self.marker is None:
                os._exit(3)
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                os._exit(3)
        return super().init_params(seed)
