"""Early stops that cannot change the answer: censoring, exact stalls, divergence by trend,
budgets that do not depend on the load."""

from __future__ import annotations

import math
import multiprocessing as mp
import time

import numpy as np
import pytest

import optcmp
from optcmp.analysis.stats.censor import average_runtime, spent, to_target
from optcmp.problems import LinearRegression
from optcmp.stopping import (
    LossTarget,
    MaxCPUTime,
    MaxIter,
    Rising,
    Stalled,
    State,
    default_stopping,
    rule_from_dict,
    with_iteration_cap,
)
from optcmp.sweep.censor import FIRST_ROUND_ITER, ROUND_GROWTH, round_caps

DEFAULTS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")  # optcmp run's optimizers


def house_csv(path, n=5000, seed=7):
    """A house-price table: 5 numeric features of very different scales, one target."""
    rng = np.random.default_rng(seed)
    sqft = rng.normal(1500, 500, n).clip(300)
    beds = rng.integers(1, 6, n).astype(float)
    age = rng.uniform(0, 100, n)
    lot = rng.normal(8000, 3000, n).clip(500)
    dist = rng.uniform(0, 30, n)
    price = (50_000 + 120 * sqft + 8_000 * beds - 500 * age + 2 * lot - 3_000 * dist
             + rng.normal(0, 20_000, n))
    np.savetxt(path, np.column_stack([sqft, beds, age, lot, dist, price]), delimiter=",",
               header="sqft,bedrooms,age,lot,distance,price", comments="", fmt="%.6f")
    return path


def small_lr():
    return LinearRegression(n_samples=2000, n_features=5)


# ---------------------------------------------------------------------- divergence by trend
def test_a_steadily_rising_objective_is_diverged_not_stalled():
    """50 -> 50.41 over 200 iterations, rising at each: the default rule says ``diverged``."""
    rule = default_stopping(max_iter=10_000)
    fired = None
    for k in range(1000):
        f = 50.0 * (1.0 + 0.0082 * min(k, 200) / 200) if k <= 200 else 50.41 + 1e-3 * k
        fired = rule.first(State(nit=k + 1, iterate=k, fun=f, f0=50.0, fstar=0.0))
        if fired is not None:
            break
    assert isinstance(fired, Rising) and fired.status == "diverged" and k == 200
    assert "rose at every one of the last 200 observations, from 50 to 50.41" in fired.explain(
        State(iterate=k))


def test_rising_needs_every_step_up_and_a_rise_beyond_float64_resolution():
    r = Rising(window=3)
    assert [r.check(State(fun=f)) for f in (5.0, 6.0, 5.5, 6.0, 7.0, 8.0)] == [
        False, False, False, False, False, True]
    r.reset()
    assert not any(r.check(State(fun=1.0)) for _ in range(10))  # flat is no rise
    assert rule_from_dict(r.to_dict()) == r


@pytest.mark.parametrize("k", [2.001, 3.0, 10.0, 100.0])
def test_diverging_learning_rates_are_diverged_with_the_default_rule(k):
    """gd above 2/L on a least-squares problem diverges: explodes (3/L, 10/L, 100/L) or rises at
    every iteration (2.001/L)."""
    p = small_lr()
    r = optcmp.run(p, optcmp.gd(learning_rate=k / p.lipschitz()), max_iter=5000)
    assert r.status == "diverged" and not r.success
    assert ("exploded" if k >= 3 else "rose at every one") in r.message


# ---------------------------------------------------------------------- exact stall
def test_stalled_by_default_is_exact_and_a_given_rtol_keeps_its_meaning():
    exact = Stalled(window=2)
    assert [exact.check(State(fun=f)) for f in (1.0, 1.0 - 1e-12, 1.0 - 2e-12, 1.0 - 3e-12)] \
        == [False, False, False, False]  # still improving by 1e-12: not flat
    exact.reset()
    assert [exact.check(State(fun=1.0)) for _ in range(3)] == [False, False, True]
    assert Stalled(window=2, rtol=1e-6).to_dict()["rtol"] == 1e-6
    assert rule_from_dict({"rule": "Stalled", "window": 200, "rtol": 1e-6}).rtol == 1e-6


# ---------------------------------------------------------------------- budgets
def test_a_run_without_any_budget_is_refused_not_left_to_hang():
    with pytest.raises(ValueError, match="no budget: max_iter, max_evals, max_cpu_time and "
                                         "max_time are all None"):
        optcmp.compare(small_lr(), ["gd"], max_iter=None, max_time=None, progress=False)
    with pytest.raises(ValueError, match="has no budget"):  # a stall test may never fire
        optcmp.run(small_lr(), "gd", stopping=LossTarget(0.0) | Stalled())


def test_no_wall_clock_cap_unless_asked():
    assert optcmp.RunConfig().max_time is None
    names = [type(r).__name__ for r in default_stopping().rules()]
    assert "MaxTime" not in names and "MaxIter" in names


def test_cpu_time_budget_ends_the_run_as_max_cpu_time():
    r = optcmp.run(small_lr(), optcmp.gd(learning_rate=1e-9), max_iter=None,
                   max_cpu_time=0.02)
    assert r.status == "max_cpu_time" and r.cpu_time >= 0.02
    assert MaxCPUTime(1.0).check(State(cpu_time=1.0)) and not MaxCPUTime(1.0).check(State())
    with pytest.raises(ValueError, match="max_cpu_time must be a finite number > 0"):
        MaxCPUTime(-1)


@pytest.mark.parametrize("bad", [1, 0.5, "x", math.nan, True])
def test_censor_ratio_must_be_a_number_above_one(bad):
    with pytest.raises(ValueError, match="censor_ratio must be None or"):
        optcmp.RunConfig(censor_ratio=bad)


# ---------------------------------------------------------------------- censoring rounds
def test_round_caps_grow_to_the_run_budget():
    assert FIRST_ROUND_ITER == 100 and ROUND_GROWTH == 4
    assert round_caps(100_000) == [100, 400, 1600, 6400, 25600, None]
    assert round_caps(50) == [None]
    rule = with_iteration_cap(default_stopping(max_iter=1000), 100)
    assert [r.n for r in rule.rules() if isinstance(r, MaxIter)] == [100]
    rule = with_iteration_cap(LossTarget(0.0) | MaxCPUTime(1.0), 100)
    assert [r.n for r in rule.rules() if isinstance(r, MaxIter)] == [100]


def test_censored_runs_carry_a_true_bound_and_count_as_not_reached():
    p = small_lr()
    comp = optcmp.compare(p, list(DEFAULTS), progress=False)
    assert comp.settings["censor_ratio"] == 10.0
    by = {r.optimizer: r for r in comp}
    assert by["lbfgs"].status == "converged"
    best = min(r.cpu_time_to_target for r in comp if r.success)
    censored = [r for r in comp if r.status == "censored"]
    assert censored  # gd needs ~10^5 iterations here
    for r in censored:
        assert r.cpu_time > 10 * best  # the bound is true
        assert r.nit in round_caps(100_000)  # a round's cap: the same under any load
        assert r.message.startswith("> 10x the best time-to-target")
        assert r.message.endswith(f"iteration {r.nit})")  # and no extrapolation after it
        assert to_target(r) == math.inf and spent(r) == r.time and not r.success
    assert math.isinf(average_runtime(censored))
    assert "censored" in comp.table()


@pytest.mark.slow
def test_censored_runs_are_read_back_only_by_a_sweep_censoring_alike(tmp_path):
    store = tmp_path / "runs.jsonl"
    first = optcmp.compare(small_lr(), list(DEFAULTS), store=store, progress=False)
    n_censored = sum(r.status == "censored" for r in first)
    assert n_censored and "censored" in store.read_text()
    again = optcmp.compare(small_lr(), list(DEFAULTS), store=store, progress=False)
    assert again.settings["store"]["executed"] == 0
    assert [(r.status, r.nit) for r in again] == [(r.status, r.nit) for r in first]
    # without censoring, a censored run's bound says nothing: it runs again
    whole = optcmp.compare(small_lr(), list(DEFAULTS), store=store, censor_ratio=None,
                           progress=False)
    assert whole.settings["store"]["executed"] == n_censored
    assert "censored" not in {r.status for r in whole}


@pytest.mark.slow
def test_house_prices_csv_the_leader_is_never_stopped_early(tmp_path):
    """On a 5,000-row house-price CSV, with the defaults, every run that reaches the target
    with every early stop off, within compare()'s 100,000 iterations (20x `optcmp run`'s
    budget), reaches it after the same iterations, and the runs stopped early (censored, with
    their bound) are the ones that do not reach it within those 100,000 iterations."""
    p = LinearRegression.from_csv(house_csv(tmp_path / "house.csv"))
    default = optcmp.compare(p, list(DEFAULTS), progress=False)
    off = optcmp.compare(p, list(DEFAULTS), censor_ratio=None, progress=False,
                         stopping=optcmp.make_stopping(p, stall=False))
    d = {r.label: r for r in default}
    o = {r.label: r for r in off}
    reached = {k for k, r in o.items() if r.success}
    assert reached == {"lbfgs", "diag_newton"}
    for k in reached:
        assert d[k].status == "converged" and d[k].nit_to_target == o[k].nit_to_target
    assert all(d[k].status == "censored" for k in set(o) - reached)
    # which of the runs reaching the target is fastest is a timing question; what censoring
    # guarantees is that the fastest of either comparison is measured in both
    fastest_off = min((r for r in off if r.success), key=lambda r: r.time_to_target)
    fastest = min((r for r in default if r.success), key=lambda r: r.time_to_target)
    assert d[fastest_off.label].success and o[fastest.label].success


# ---------------------------------------------------------------------- independent of the load
def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def _outcomes(tmp_path, name):
    from optcmp import cli

    whole = optcmp.compare(small_lr(), list(DEFAULTS), censor_ratio=None, progress=False)
    censored = optcmp.compare(small_lr(), list(DEFAULTS), progress=False)
    out = tmp_path / f"{name}.json"
    assert cli.main(["run", "--rows", "2000", "--backends", "numpy", "--no-progress",
                     "--out", str(out)]) == 0
    main = optcmp.Comparison.load(out)
    return {"whole": [(r.label, r.status, r.nit) for r in whole],
            "main": [(r.label, r.status, r.nit) for r in main],
            "censored": [(r.label, r.status, r.nit, r.nit_to_target) for r in censored]}


@pytest.mark.slow
def test_statuses_and_iterations_are_the_same_with_8_cpu_burners(tmp_path, capsys):
    """Iteration budgets (a sweep without censoring) give the same statuses and iterations
    with every core busy. With censoring (a sweep, and optcmp run's main job), the load can only
    move a run across the bound (a comparison of two CPU times; GD sits near it on 2,000 rows):
    every run is then identical on both sides or censored at a round's cap on one of them, and
    the fastest is measured on both."""
    quiet = _outcomes(tmp_path, "quiet")
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    burners = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(8)]
    try:
        for b in burners:
            b.start()
        time.sleep(0.5)
        loaded = _outcomes(tmp_path, "loaded")
    finally:
        stop.set()
        for b in burners:
            b.join(5)
            if b.is_alive():
                b.terminate()
    capsys.readouterr()
    assert loaded["whole"] == quiet["whole"]
    for key, budget in (("censored", 100_000), ("main", 5_000)):
        caps = round_caps(budget)
        assert len(quiet[key]) == len(loaded[key])
        for q, ld in zip(quiet[key], loaded[key]):
            assert q == ld or "censored" in (q[1], ld[1]) and (q[2] in caps or ld[2] in caps)
    lead = {lab: nit for lab, st, _, nit in quiet["censored"] if lab == "lbfgs"}
    assert {lab: nit for lab, st, _, nit in loaded["censored"] if lab == "lbfgs"} == lead


# ---------------------------------------------------------------------- resumed, never rerun
def _count_starts(monkeypatch):
    """Count how often each (label, backend) run sets its adapter up."""
    from optcmp.engine.session import Session

    starts: dict[tuple[str, str], int] = {}
    original = Session.start

    def start(self, *args, **kwargs):
        key = (self.spec.label, self.config.backend)
        starts[key] = starts.get(key, 0) + 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Session, "start", start)
    return starts


def test_each_run_of_a_censored_comparison_starts_once(monkeypatch):
    """gd is paused at 100 iterations, resumed at 400, ... and censored; lbfgs reaches the
    target in the first round: each run sets its adapter up once."""
    starts = _count_starts(monkeypatch)
    comp = optcmp.compare(small_lr(), ["gd", "lbfgs"], progress=False)
    by = {r.label: r for r in comp}
    assert by["lbfgs"].status == "converged" and by["gd"].status == "censored"
    assert by["gd"].nit in round_caps(100_000) and by["gd"].nit > FIRST_ROUND_ITER  # resumed
    assert starts == {("gd", "numpy"): 1, ("lbfgs", "numpy"): 1}


def test_on_an_executor_a_capped_run_runs_again_from_its_start(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    starts = _count_starts(monkeypatch)
    with ThreadPoolExecutor(max_workers=1) as pool:
        comp = optcmp.compare(small_lr(), ["gd", "lbfgs"], executor=pool, progress=False)
    by = {r.label: r for r in comp}
    assert by["gd"].status == "censored" and by["gd"].bound is not None
    assert starts[("lbfgs", "numpy")] == 1
    assert starts[("gd", "numpy")] == round_caps(100_000).index(by["gd"].nit) + 1


@pytest.mark.parametrize("optimizer, kw", [
    ("gd", {}), ("gd", {"execution": "step"}), ("sgd", {}), ("sgd", {"execution": "step"}),
    ("lbfgs", {}),  # scipy's own loop: paused inside its callback
    ("diag_newton", {})])
def test_a_run_paused_and_resumed_is_the_run_never_paused(optimizer, kw):
    from optcmp.engine.runner import LiveRun

    p = small_lr()
    whole = optcmp.run(p, optimizer, max_iter=2000, **kw)
    live = LiveRun(p, optimizer, max_iter=2000, **kw)
    paused = []
    t0 = time.perf_counter()
    for cap in (3, 10, 100, 400, None):
        if live.advance(cap):
            break
        snap = live.snapshot()
        assert snap.nit == cap and snap.status == "max_iter" and snap.bound is None
        paused.append(cap)
        time.sleep(0.05)  # waiting paused is no part of the run's wall time
    elapsed = time.perf_counter() - t0
    r = live.result()
    assert paused[:2] == [3, 10]
    assert (r.status, r.nit, r.nfev, r.njev, r.nit_to_target, r.conditions.execution) == (
        whole.status, whole.nit, whole.nfev, whole.njev, whole.nit_to_target, whole.conditions.execution)
    np.testing.assert_array_equal(r.trace.iteration, whole.trace.iteration)
    np.testing.assert_array_equal(r.trace.fun, whole.trace.fun)
    np.testing.assert_array_equal(r.x, whole.x)
    assert r.fun == whole.fun
    assert r.time <= r.timing.wall <= elapsed - 0.05 * len(paused) + 0.05
    assert np.all(np.diff(r.trace.time) >= 0)
    with pytest.raises(RuntimeError, match="has ended"):
        live.advance(None)


@pytest.mark.parametrize("backend", [
    "torch", pytest.param("tensorflow", marks=pytest.mark.slow), "jax"])
def test_a_float64_run_paused_and_resumed_on_a_framework_is_the_run_never_paused(backend):
    """A JAX float64 run resumed in a later round failed ("found jax_enable_x64 off"): the
    round it paused in gave the flag back; resumed, it must end as the run never paused."""
    pytest.importorskip(backend)
    from optcmp.engine.runner import LiveRun

    p = small_lr()
    whole = optcmp.run(p, "gd", backend=backend, max_iter=300)
    live = LiveRun(p, "gd", backend=backend, max_iter=300)
    for cap in (3, 100, None):
        if live.advance(cap):
            break
    r = live.result()
    assert r.status == whole.status == "max_iter" and r.nit == whole.nit == 300, r.message
    np.testing.assert_array_equal(r.trace.fun, whole.trace.fun)
    np.testing.assert_array_equal(r.x, whole.x)


def test_what_another_run_compiles_while_a_run_is_paused_is_not_in_its_timed_region():
    """A JAX run resumed after another run compiled its programs was charged with them (5-6
    "compilations inside the timed region" in the main job); its own count is 0."""
    pytest.importorskip("jax")
    from optcmp.engine.runner import LiveRun

    live = LiveRun(small_lr(), "gd", backend="jax", max_iter=300)
    assert not live.advance(100)
    other = optcmp.run(LinearRegression(n_samples=300, n_features=3, seed=1), "adam",
                       backend="jax", max_iter=5)
    assert other.status == "max_iter"
    assert live.advance(None)
    r = live.result()
    assert (r.status, r.nit, r.conditions.compiles_in_timed) == ("max_iter", 300, 0)


def test_censored_runs_carry_their_bound_typed_and_saved(tmp_path):
    from optcmp.results import RunResult
    from optcmp.sweep.censor import reusable

    comp = optcmp.compare(small_lr(), ["gd", "lbfgs"], progress=False)
    by = {r.label: r for r in comp}
    gd, lbfgs = by["gd"], by["lbfgs"]
    b = gd.bound
    assert b is not None and lbfgs.bound is None
    assert (b.ratio, b.unit, b.leader, b.leader_backend) == (10.0, "cpu", "lbfgs", "numpy")
    assert b.seconds == lbfgs.cpu_time_to_target and gd.cpu_time > b.limit == 10 * b.seconds
    assert gd.message.startswith(f"> 10x the best time-to-target, {b.seconds:.3g} s CPU by "
                                 f"lbfgs on numpy (censored at {gd.cpu_time:.3g} s CPU, "
                                 f"iteration {gd.nit})")
    assert "bound" not in lbfgs.to_dict()
    path = tmp_path / "c.json"
    comp.save(path)
    back = {r.label: r for r in optcmp.Comparison.load(path)}
    assert back["gd"].bound == b and back["lbfgs"].bound is None
    old = gd.to_dict()
    del old["bound"]  # a run saved before runs carried their bound: read from its message
    legacy = RunResult.from_dict(old).bound
    assert legacy is not None and (legacy.ratio, legacy.unit, legacy.leader) == (
        10.0, "cpu", "lbfgs") and legacy.seconds == float(f"{b.seconds:.3g}")
    assert reusable(gd, 10.0) and not reusable(gd, 5.0) and not reusable(gd, None)
    assert not reusable(gd.replace(bound=None), 10.0)


# ---------------------------------------------------------------------- one decision per entry
def readme_sweep():
    """README's sweep: its problem and the configurations its tuning chooses."""
    return (LinearRegression(n_samples=20_000),
            [optcmp.gd(learning_rate=0.001), optcmp.diag_newton(learning_rate=1.0)])


def _work_clock(monkeypatch, jitter=(1.0,)):
    """Censoring's clock replaced by the work done: a run spent its iterations (times the
    jitter of its repetition, a load's effect made reproducible), a leader took its
    iterations to the target."""
    from optcmp.sweep import censor

    def measures(run, best):
        return (run.nit * jitter[run.repeat % len(jitter)], float(best.nit_to_target),
                "s CPU")

    monkeypatch.setattr(censor, "measures", measures)


@pytest.mark.parametrize("factor", [0.9, 0.95, 1.0, 1.05, 1.1])
def test_identical_repetitions_share_one_status_at_every_ratio_near_their_own(monkeypatch,
                                                                             factor):
    """Five repetitions of full-batch GD (2,119 iterations to the target) follow one
    trajectory; at the 1,600-iteration cap their quiet ratio to diag_newton's time-to-target is
    1600 / 49. With censor ratios from 0.9x to 1.1x of it and repetitions whose clocks differ by
    up to 16% (the load), they used to split ("converged 3, censored 2"); the five share one
    decision. The clock is the work done, so that the test does not depend on the load."""
    _work_clock(monkeypatch, jitter=(0.92, 1.04, 0.97, 1.08, 1.0))
    problem = LinearRegression(n_samples=2000)
    specs = [optcmp.gd(learning_rate=1e-4), optcmp.diag_newton(learning_rate=1.0)]
    lead = optcmp.run(problem, specs[1], tol=1e-3).nit_to_target
    assert lead == 49
    ratio = factor * 1600 / lead
    comp = optcmp.compare(problem, specs, tol=1e-3, repeats=5, censor_ratio=ratio,
                          progress=False)
    gd = [r for r in comp if r.optimizer == "gd"]
    assert len({(r.status, r.nit) for r in gd}) == 1, [(r.status, r.nit) for r in gd]
    censored = gd[0].status == "censored"
    assert censored == (1600 > ratio * lead)  # the entry's median: jitter 1.0
    if censored:
        assert len({r.message for r in gd}) == 1 and "5 identical repetitions" in gd[0].message
        assert gd[0].bound.limit == pytest.approx(ratio * lead)


def test_runs_of_different_trajectories_are_decided_one_by_one(monkeypatch):
    """Minibatch SGD draws other minibatches in each repetition: no shared decision, each
    run against its own bound (the repetitions whose clock passed it are censored)."""
    _work_clock(monkeypatch, jitter=(0.5, 2.0))
    problem = small_lr()
    comp = optcmp.compare(problem, [optcmp.sgd(batch_size=64), "lbfgs"], repeats=2,
                          censor_ratio=400 / 12, progress=False, max_iter=5000)
    sgd = [r for r in comp if r.optimizer == "sgd"]
    assert sgd[0].status != sgd[1].status or sgd[0].nit != sgd[1].nit


@pytest.mark.slow
def test_identical_repetitions_share_one_status_with_4_cpu_burners():
    """The same on the real clock, with 4 CPU-burning processes: at censor ratios from 0.9x to
    1.1x of the quiet ratio, GD's five repetitions share one status (what the load moves is
    the one decision, never a part of the five)."""
    from optcmp.sweep import censor

    problem, specs = readme_sweep()
    seen: list[float] = []
    original = censor.measures

    def spy(run, best):
        m = original(run, best)
        if run.nit == 1600 and m is not None:
            seen.append(m[0] / m[1])
        return m

    quiet = optcmp.compare(problem, specs, tol=1e-3, repeats=5, censor_ratio=1e6,
                           progress=False)
    assert {r.status for r in quiet} == {"converged"}
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    burners = [ctx.Process(target=_spin, args=(stop,), daemon=True) for _ in range(4)]
    try:
        censor.measures = spy
        optcmp.compare(problem, specs, tol=1e-3, repeats=5, censor_ratio=1e6, progress=False)
        censor.measures = original
        q = float(np.median(seen))
        for b in burners:
            b.start()
        for factor in (0.9, 0.95, 1.0, 1.05, 1.1):
            comp = optcmp.compare(problem, specs, tol=1e-3, repeats=5,
                                  censor_ratio=factor * q, progress=False)
            gd = [(r.status, r.nit) for r in comp if r.optimizer == "gd"]
            assert len(set(gd)) == 1, (factor, gd)
    finally:
        censor.measures = original
        stop.set()
        for b in burners:
            if b.is_alive():
                b.join(5)
            if b.is_alive():
                b.terminate()


def test_a_rounds_cap_is_no_budget_on_an_executor():
    """Minibatch SGD with too large a step, 625 steps an epoch: on an executor the first round's
    cap (100 steps, no objective known there) used to end it "diverged ... (budget exhausted:
    MaxIter(n=100))", a budget the user never gave; it runs on, as in this process, to the
    observation that sees it diverge."""
    from concurrent.futures import ThreadPoolExecutor

    problem = LinearRegression(n_samples=20_000)
    specs = [optcmp.sgd(learning_rate=0.2, batch_size=32), "lbfgs"]
    here = optcmp.compare(problem, specs, progress=False)
    with ThreadPoolExecutor(max_workers=1) as pool:
        there = optcmp.compare(problem, specs, progress=False, executor=pool)
    assert [(r.status, r.nit, r.message) for r in there] == [
        (r.status, r.nit, r.message) for r in here]
    sgd = here.runs[0]
    assert sgd.status == "diverged" and sgd.nit == 625 and "MaxIter" not in sgd.message
