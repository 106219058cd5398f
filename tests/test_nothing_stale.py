"""A reused run store never hands back runs of another objective, optimum, constant, callback
or stopping rule: it re-runs them or refuses, naming what changed."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp._storefile import StoreMismatchError
from optcmp.problems import from_function
from optcmp.store import run_key


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


def _quad(center, optimum=0.0, lipschitz=2.0, **kw):
    c = float(center)
    return from_function(lambda ops, x, d: ops.sum((x - c) ** 2), np.zeros(2),
                         grad=lambda x, d: 2 * (x - c), name="quad", optimum=optimum,
                         lipschitz=lipschitz, **kw)


def _sweep(problem, store, **kw):
    return optcmp.compare(problem, ["gd"], max_iter=50, max_time=None, progress=False,
                          store=str(store), **kw)


@pytest.mark.parametrize("first, second, named", [
    (_quad(1.0), _quad(5.0), "objective's code"),            # minimum at x=1, then x=5
    (_quad(1.0, optimum=0.0), _quad(1.0, optimum=-10.0), "the optimum (0.0 -> -10.0)"),
    (_quad(1.0, lipschitz=2.0), _quad(1.0, lipschitz=200.0), "lipschitz (2.0 -> 200.0)"),
    (_quad(1.0, default_target=optcmp.stopping.LossTarget(1e-3)),
     _quad(1.0, default_target=optcmp.stopping.LossTarget(1e-1)), "the default target"),
])
def test_store_refuses_a_changed_objective_optimum_or_constant(first, second, named, tmp_path):
    store = tmp_path / "runs.jsonl"
    _sweep(first, store)
    with pytest.raises(StoreMismatchError, match=r"holds runs of problem 'quad' with another") \
            as err:
        _sweep(second, store)
    assert named in str(err.value)


def test_store_refuses_changed_data_under_the_same_name(tmp_path):
    store = tmp_path / "runs.jsonl"
    obj = lambda ops, x, d: ops.sum((x - d["c"]) ** 2)  # noqa: E731
    grad = lambda x, d: 2 * (x - d["c"]).sum(axis=0)  # noqa: E731
    _sweep(from_function(obj, np.zeros(2), {"c": np.ones((3, 2))}, grad=grad, name="q",
                         optimum=0.0, lipschitz=2.0), store)
    with pytest.raises(StoreMismatchError, match="holds runs of another problem"):
        _sweep(from_function(obj, np.zeros(2), {"c": 5 * np.ones((3, 2))}, grad=grad,
                             name="q", optimum=0.0, lipschitz=2.0), store)


def test_same_objective_resumes_from_the_store(tmp_path):
    store = tmp_path / "runs.jsonl"
    _sweep(_quad(1.0), store)
    again = _sweep(_quad(1.0), store)
    assert again.settings["store"]["reused"] == 1


def test_store_reruns_when_the_stopping_callback_is_removed(tmp_path):
    store = tmp_path / "runs.jsonl"
    p = _quad(3.0, lipschitz=20.0)  # step 1/20: more than 5 iterations

    def stop_at_5(res):
        if res.nit >= 5:
            raise StopIteration

    early = _sweep(p, store, callback=stop_at_5)
    assert early.runs[0].status == "stopped"
    full = _sweep(p, store)
    assert full.settings["store"]["reused"] == 0  # re-run, not the stopped run read back
    assert full.runs[0].status != "stopped" and full.runs[0].nit > 5


class _FirstOf(optcmp.stopping.Rule):
    kind, status = "budget", "stopped"

    def __init__(self, n):
        self.n = n

    def check(self, s):
        return s.nit >= self.n


def test_run_key_covers_a_user_stopping_rules_code():
    from optcmp.engine import RunConfig

    p = _quad(1.0)
    spec = optcmp.gd()
    rule = _FirstOf(5)
    k1 = run_key(p, spec, RunConfig(stopping=rule))

    class _FirstOf2(_FirstOf):  # same to_dict, other code
        def check(self, s):
            return s.nit >= self.n + 1

    _FirstOf2.__name__ = _FirstOf2.__qualname__ = "_FirstOf"
    assert _FirstOf2(5).to_dict() == rule.to_dict()
    assert run_key(p, spec, RunConfig(stopping=_FirstOf2(5))) != k1
    assert run_key(p, spec, RunConfig(stopping=_FirstOf(5))) == k1


def test_run_key_of_library_problems_is_unchanged():
    # a store written by optcmp 0.1.0 resumes (tests/test_store.py): optcmp's own problems add
    # nothing to the key
    from optcmp.fingerprint import problem_inputs

    assert problem_inputs(optcmp.problems.LinearRegression(n_samples=20)) == {}


CALLS: dict[str, int] = {"n": 0}


def _counted(ops, x, d):
    CALLS["n"] += 1  # state the objective updates: not a change of the objective
    return ops.sum((x - 1.0) ** 2)


def test_objective_updating_module_state_still_resumes(tmp_path):
    store = tmp_path / "runs.jsonl"

    def make():
        return from_function(_counted, np.zeros(2), grad=lambda x, d: 2 * (x - 1.0),
                             name="counted", optimum=0.0, lipschitz=2.0)

    _sweep(make(), store)
    assert CALLS["n"] > 0
    assert _sweep(make(), store).settings["store"]["reused"] == 1
