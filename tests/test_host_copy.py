"""Training data reach every backend without a copy per run: a problem keeps one aligned,
read-only, row-major host copy of each array it holds otherwise
(:func:`~optcmp.frameworks.base.kept_host`), and CPU devices read it, or the problem's own
arrays, in place."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import HAS_JAX, HAS_TF, HAS_TORCH

import optcmp
from optcmp._memory import aligned
from optcmp.frameworks.base import aligned_copy, host_key, kept_host
from optcmp.problems import LinearRegression

BACKENDS = ["numpy"] + [b for b, has in (("torch", HAS_TORCH), ("tensorflow", HAS_TF),
                                          ("jax", HAS_JAX)) if has]


def _address(backend: str, t) -> int:
    """The host address a CPU tensor reads."""
    if backend == "numpy":
        return int(t.ctypes.data)
    if backend == "torch":
        return int(t.data_ptr())
    if backend == "jax":
        return int(t.unsafe_buffer_pointer())
    import tensorflow as tf

    class Exported:  # numpy reads TensorFlow's buffer through DLPack, without a copy
        def __dlpack__(self, **_):
            return tf.experimental.dlpack.to_dlpack(t)

        def __dlpack_device__(self):
            return (1, 0)

    return int(np.from_dlpack(Exported()).ctypes.data)


def test_the_problem_keeps_one_copy_per_array_dtype_and_shape():
    p = LinearRegression(n_samples=50_000)
    A, y, keep = p.train_data["A"], p.train_data["y"], host_key(p)
    assert A.flags.f_contiguous and aligned(A) and aligned(y) and not A.flags.writeable
    rows = kept_host(A, np.float64, keep, "A")
    assert rows.flags.c_contiguous and aligned(rows) and not rows.flags.writeable
    assert np.array_equal(rows, A) and kept_host(A, np.float64, keep, "A") is rows
    assert kept_host(y, np.float64, keep, "y") is y  # already row-major, aligned, read-only
    single = kept_host(A, np.float32, keep, "A")
    assert single.dtype == np.float32 and np.array_equal(single, A.astype(np.float32))
    assert kept_host(A, np.float64, keep, "A") is rows  # one slot per dtype
    # a writeable array may change between runs: never kept, each run copies it
    mine = np.asfortranarray(A)
    mine = mine.copy(order="F")
    assert kept_host(mine, np.float64, keep, "A") is mine
    # another array under the same name replaces the kept copy
    other = LinearRegression(n_samples=50_000, seed=1).train_data["A"]
    assert np.array_equal(kept_host(other, np.float64, keep, "A"), other)


@pytest.mark.parametrize("backend", BACKENDS)
def test_minibatch_and_full_batch_runs_read_the_host_memory_the_problem_holds(backend):
    """SGD reads the kept row-major copy, GD the problem's own column-major matrix (held
    transposed off numpy), in every run and on every backend: no copy per run."""
    p = LinearRegression(n_samples=200_000)  # arrays over 1 MiB: TensorFlow shares them too
    b = optcmp.get_backend(backend)
    keep = host_key(p)
    rows, shared = b.place_sharing(p.train_data, "row-major", keep=keep)
    again = b.place(p.train_data, "row-major", keep=keep)
    kept = kept_host(p.train_data["A"], np.float64, keep, "A")
    assert shared and _address(backend, rows["A"]) == _address(backend, again["A"]) \
        == kept.ctypes.data
    assert _address(backend, rows["y"]) == p.train_data["y"].ctypes.data
    assert np.array_equal(b.to_numpy(rows["A"]), p.train_data["A"])
    layout, transposed = optcmp.frameworks.base.run_layout(b, p, False)
    cols, shared = b.place_sharing(p.train_data, layout, transposed, keep=keep)
    assert shared and _address(backend, cols["A_T" if transposed else "A"]) \
        == p.train_data["A"].ctypes.data
    sgd = optcmp.run(p, optcmp.sgd(1e-3, batch_size=64), backend=backend, max_iter=30)
    gd = optcmp.run(p, optcmp.gd(1e-3), backend=backend, max_iter=3)
    assert (sgd.conditions.layout, gd.conditions.layout) == ("row-major, shared",
                                                             "column-major, shared")
    assert np.array_equal(kept, p.train_data["A"])  # the runs wrote nothing into it


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b in ("tensorflow", "jax")])
def test_small_arrays_and_writeable_ones_are_copied_to_the_device(backend):
    """Below 1 MiB TensorFlow and JAX hold their own copy (recorded), and a writeable host
    array is never read in place: writing it after placement changes nothing on the device."""
    p = LinearRegression(n_samples=1000)
    r = optcmp.run(p, optcmp.sgd(1e-3, batch_size=64), backend=backend, max_iter=3)
    assert r.conditions.layout == "row-major, copied"
    b = optcmp.get_backend(backend)
    for n in (8, 1000, 300_000):
        host = aligned_copy(np.arange(n, dtype=np.float64), np.float64)  # writeable, aligned
        placed = b.asarray(host)
        host[:] = -1.0
        assert np.array_equal(b.to_numpy(placed), np.arange(n, dtype=np.float64)), n


def test_a_pickled_problem_keeps_its_data_read_only():
    """A problem shipped to a worker (dask scatters it) reads its data read-only, as built:
    the worker keeps one copy of it for its runs, never one per run."""
    import pickle

    p = LinearRegression.from_arrays(np.arange(40.0).reshape(20, 2), np.arange(20.0))
    q = pickle.loads(pickle.dumps(p))
    assert not any(v.flags.writeable for v in q.train_data.values())
    assert all(np.array_equal(q.train_data[k], v) for k, v in p.train_data.items())
    rows = kept_host(q.train_data["A"], np.float64, host_key(q), "A")
    assert rows is kept_host(q.train_data["A"], np.float64, host_key(q), "A")


def test_a_problems_data_cannot_be_made_writeable_again():
    """Claimed: ``p.train_data["A"].flags.writeable = True`` was accepted, and a write then
    reached later runs while the fingerprint, f* and the kept row-major copy stayed the old
    data's; right: the flag cannot be set back on the problem's arrays (as built, deep-copied
    or unpickled)."""
    import copy
    import pickle

    from optcmp.problems import FizzBuzzMLP

    for p in (LinearRegression(n_samples=1_000),
              LinearRegression.from_arrays(np.arange(40.0).reshape(20, 2), np.arange(20.0)),
              FizzBuzzMLP()):
        for q in (p, copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
            for a in q.train_data.values():
                with pytest.raises(ValueError, match="WRITEABLE"):
                    a.flags.writeable = True
                with pytest.raises(ValueError, match="read-only"):
                    a[0] = 1.0
            assert all(np.array_equal(q.train_data[k], v) for k, v in p.train_data.items())


def test_a_backend_that_places_its_own_way_keeps_its_placement():
    """A backend subclass overriding ``place`` (without ``keep``) is what a run places with;
    the run records its data as copied."""
    class Mine(type(optcmp.get_backend("torch" if HAS_TORCH else "numpy"))):
        def place(self, data, layout="row-major", transposed=()):
            return {k: self.asarray(np.ascontiguousarray(v)) for k, v in data.items()}

    p = LinearRegression(n_samples=100)
    placed, shared = Mine().place_sharing(p.train_data, "row-major", keep=host_key(p))
    assert not shared and sorted(placed) == ["A", "y"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_numpy_and_torch_runs_keep_the_work_array_of_the_start_gradient(backend):
    """f(x0)'s gradient on the host computes a residual of the data's size; numpy's steps and
    torch's residual reuse it, TensorFlow and JAX never read it, so their runs drop it (JAX's
    peak memory at 1e7 rows was 1.12x a loop's with it kept)."""
    from optcmp.problems import _scratch

    _scratch._local.kept = {}  # this thread's, where the run evaluates f(x0)
    p = LinearRegression(n_samples=100_000)
    r = optcmp.run(p, optcmp.gd(1e-3), backend=backend, max_iter=2, execution="step")
    sized = [k for k in _scratch._local.kept if k[0] == (p.n_samples,)]
    assert r.nit == 2 and np.isfinite(r.trace.grad_norm[0])
    assert bool(sized) == (backend in ("numpy", "torch")), (backend, sized)
