"""A reused run store never hands back runs of another objective, optimum, constant, callback
or stopping rule: it re-runs them or refuses, naming what changed."""

from __future__ import annotations

import numpy as np
import pytest

import optcmp
from optcmp._storefile import StoreMismatchError
from optcmp.fingerprint import data_fingerprint
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
        with pytest.warns(UserWarning, match=r"reads mutable state \(CALLS \(module-level "
                                             r"dict\)\)"):
            return from_function(_counted, np.zeros(2), grad=lambda x, d: 2 * (x - 1.0),
                                 name="counted", optimum=0.0, lipschitz=2.0)

    _sweep(make(), store)
    assert CALLS["n"] > 0
    assert _sweep(make(), store).settings["store"]["reused"] == 1


def _caller_arrays(n=400):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 3))
    return X, X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(n)


def _lstsq_fstar(X, y):
    A = np.c_[X, np.ones(len(X))]
    r = A @ np.linalg.lstsq(A, y, rcond=None)[0] - y
    return float(r @ r) / len(y)


def _problems_from_arrays(X, y):
    """Every constructor from a caller's arrays, and the array of ``y`` it was given."""
    import pandas as pd

    from optcmp.problems import LinearRegression, LogisticRegression

    labels = (y > 0).astype(np.float64)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y})
    return [(LinearRegression.from_arrays(X, y), y), (LogisticRegression.from_arrays(X, labels),
                                                       labels),
            (LinearRegression.from_frame(df, ["a", "b", "c"], "y"), None),
            (from_function(lambda ops, x, d: ops.mean((ops.matmul(d["X"], x) - d["y"]) ** 2),
                           np.zeros(3), {"X": X, "y": y}, name="ls"), y)]


@pytest.mark.parametrize("k", range(4))
def test_a_problem_owns_a_read_only_copy_of_the_callers_arrays(k):
    """Changing the caller's arrays in place once changed the problem (its optimum and data
    stayed cached on the old values): the problem keeps its own read-only copy."""
    X, y = _caller_arrays()
    problem, given = _problems_from_arrays(X, y)[k]
    before = {n: a.copy() for n, a in problem.train_data.items()}
    fp = data_fingerprint(problem), problem.spec()
    X *= 3.0
    if given is not None:
        given += 7.0
    for name, a in problem.train_data.items():
        np.testing.assert_array_equal(a, before[name])
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 1.0
    problem.train_data["y" if "y" in before else "X"] = np.zeros(1)  # a copy of the dict
    assert {n: a.shape for n, a in problem.train_data.items()} == {
        n: a.shape for n, a in before.items()}
    problem.__dict__.pop("_optcmp_data_sha256", None)  # computed again from the data held
    assert (data_fingerprint(problem), problem.spec()) == fp


def test_a_changed_y_is_a_new_problem_with_and_without_a_store(tmp_path):
    """After ``y += 5`` in the caller's array, a store once handed back the old run (reused 1,
    executed 0) and a store-less run kept the old f*: the problem kept its copy, so its run is
    the old data's, f* is the lstsq optimum of what it holds, and the changed data are a new
    problem (a new f*, refused by the store that holds the old one)."""
    from optcmp.problems import LinearRegression

    X, y = _caller_arrays()
    old = _lstsq_fstar(X, y)
    p = LinearRegression.from_arrays(X, y)
    store = tmp_path / "runs.jsonl"
    first = optcmp.compare(p, ["lbfgs"], store=str(store), progress=False)
    y += 5.0 * np.random.default_rng(4).standard_normal(len(y))
    new = _lstsq_fstar(X, y)
    assert new > 10 * old
    again = optcmp.compare(p, ["lbfgs"], store=str(store), progress=False)
    assert again.settings["store"]["reused"] == 1
    assert again.runs[0].fstar == first.runs[0].fstar == pytest.approx(old, rel=1e-12)
    plain = optcmp.compare(p, ["lbfgs"], progress=False).runs[0]
    assert plain.status == "converged" and plain.fun == pytest.approx(old, rel=1e-3)
    q = LinearRegression.from_arrays(X, y)
    fresh = optcmp.compare(q, ["lbfgs"], progress=False)
    assert fresh.runs[0].fstar == pytest.approx(new, rel=1e-12)
    assert fresh.runs[0].status == "converged"
    with pytest.raises(StoreMismatchError, match="holds runs of another problem"):
        optcmp.compare(q, ["lbfgs"], store=str(store), progress=False)


def test_an_objective_over_mutable_state_is_warned_about():
    """A store kept serving a run after the objective changed through a dict it closes over:
    building such a problem warns, naming the state, and a pure objective does not warn."""
    import warnings

    scale = {"k": 1.0}
    with pytest.warns(UserWarning, match=r"reads mutable state \(scale \(closure\)\)"):
        from_function(lambda ops, x, d: scale["k"] * ops.sum(x ** 2), np.ones(2),
                      grad=lambda x, d: 2 * x, name="scaled")
    k = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from_function(lambda ops, x, d: k * ops.sum(x ** 2), np.ones(2),
                      grad=lambda x, d: 2 * k * x, name="pure")


class _Started(optcmp.problems.LinearRegression):
    """Starts every run from ``start`` in each coordinate, an attribute its spec leaves out."""

    start = 0.0

    def init_params(self, seed: int = 0) -> np.ndarray:
        return np.full(self.n_params, self.start)


class _StartedInSpec(_Started):
    def spec(self) -> dict:
        return {**super().spec(), "start": self.start}


def test_an_attribute_spec_leaves_out_is_not_seen_by_a_store(tmp_path):
    """As Problem's docstring says: a store knows spec(), the data and a user class's code, so
    after ``start = 3.0`` it serves the run from 0.0 (reused 1, executed 0, the old f0); put in
    spec(), the change is seen: that store refuses the problem."""

    def sweep(cls, start, store="runs.jsonl"):
        p = cls(n_samples=200)
        p.start = start
        comp = optcmp.compare(p, [optcmp.gd(0.1)], max_iter=5, max_time=None, progress=False,
                              store=str(tmp_path / store))
        x0 = p.init_params()
        return comp, float(p.value_and_grad(x0, p.train_data)[0])

    first, f_zero = sweep(_Started, 0.0)
    stale, f_three = sweep(_Started, 3.0)
    assert f_three > f_zero and first[0].f0 == f_zero
    assert stale.settings["store"]["reused"] == 1 and stale.settings["store"]["executed"] == 0
    assert stale[0].f0 == f_zero  # the run of the old value
    assert sweep(_StartedInSpec, 0.0, "own.jsonl")[0][0].f0 == f_zero
    with pytest.raises(StoreMismatchError, match=r"holds runs of another problem: .*'init': "
                       r"'zeros', 'start': 0\.0}.*, not .*'start': 3\.0}"):
        sweep(_StartedInSpec, 3.0, "own.jsonl")
