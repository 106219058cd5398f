"""A native-model comparison on a dask.distributed LocalCluster (2 worker processes): the model
and its data travel to the workers pickled, and the runs end as in the sequential sweep."""

from __future__ import annotations

import logging
import os

import pytest

import optcmp

pytest.importorskip("torch")
distributed = pytest.importorskip("distributed")
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def client():
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([os.path.dirname(HERE), HERE, saved or ""])
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=":0",
                                       silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    try:
        c.wait_for_workers(2, timeout=120)
        yield c
    finally:
        c.close(timeout=60)
        cluster.close(timeout=60)
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


@pytest.mark.filterwarnings("ignore:.*shared their host:UserWarning")
@pytest.mark.filterwarnings("ignore:.*contended:UserWarning")
def test_digits_mlp_on_two_dask_workers_ends_as_the_sequential_run(client):
    p = optcmp.problems.digits_mlp("torch")
    opts = [optcmp.adam(1e-2, batch_size=64), optcmp.sgd(0.1, momentum=0.9, batch_size=64)]
    here = optcmp.compare(p, opts, progress=False, censor_ratio=None)
    there = optcmp.compare(p, opts, progress=False, censor_ratio=None, executor=client)
    assert [(r.label, r.status, r.nit) for r in there.runs] == [
        (r.label, r.status, r.nit) for r in here.runs]
    assert all(r.status == "converged" and r.impl == "native" for r in there.runs)
