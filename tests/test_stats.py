"""optcmp.analysis.stats on hand-made results with known answers, plus tiny real runs."""

from __future__ import annotations

import csv
import math
import sys
import warnings

import numpy as np
import pytest
from _handmade import comparison, make_run, table_runs
from conftest import lr_s

import optcmp
from optcmp.analysis import stats
from optcmp.comparison import Comparison
from optcmp.results import Trace

INF = math.inf


# ---------------------------------------------------------------------------- censoring
@pytest.mark.parametrize("values, expected", [
    ([1, 2, 3], 2.0), ([1, 2, INF], 2.0), ([1, INF, INF], INF), ([1, 2, 3, INF], 2.5),
    ([1, 2, INF, INF], INF), ([3, 1, 2], 2.0),
])
def test_censored_median(values, expected):
    assert stats.censored_median(values) == expected


def test_censored_median_empty_is_nan():
    assert math.isnan(stats.censored_median([]))


def test_to_target_censors_unsuccessful_runs():
    ok, miss = make_run("A", 0.5, nit_to_target=7), make_run("A", None, time=3.0)
    assert stats.to_target(ok) == 0.5 and stats.to_target(ok, "nit") == 7
    assert stats.to_target(miss) == INF and stats.to_target(miss, "njev") == INF
    assert stats.spent(miss) == 3.0 and stats.spent(ok) == 0.5
    with pytest.raises(ValueError, match="metric must be one of"):
        stats.to_target(ok, "epochs")


# ---------------------------------------------------------------------------- bootstrap
def test_median_ci_percentile_known_exact_answer():
    # resamples of 3 values: P(median = 1) = P(median = 10) = 7/27 > 2.5%, so the 95%
    # percentile interval is exactly (1, 10)
    ci = stats.median_ci([1.0, 2.0, 10.0], seed=1, method="percentile")
    assert (ci.median, ci.low, ci.high, ci.method) == (2.0, 1.0, 10.0, "percentile")


def test_median_ci_with_censored_values():
    # P(resample median = 1) = 0.058 and P(resample median = inf) = 0.317, both > 2.5%
    ci = stats.median_ci([1.0, 2.0, 3.0, INF, INF], seed=0, method="percentile")
    assert (ci.median, ci.low, ci.high) == (3.0, 1.0, INF)
    assert ci.n == 5 and ci.n_censored == 2 and ci.method == "percentile"
    # BCa needs finite data: it falls back to the percentile interval and says so
    assert stats.median_ci([1.0, 2.0, 3.0, INF, INF], method="BCa").method == "percentile"


def test_median_ci_bca_contains_median_and_is_seeded():
    rng = np.random.default_rng(0)
    x = rng.lognormal(size=40)
    a = stats.median_ci(x, method="BCa", seed=3, n_resamples=2000)
    b = stats.median_ci(x, method="BCa", seed=3, n_resamples=2000)
    assert a == b and a.method == "BCa"
    assert a.low < np.median(x) < a.high
    assert x.min() <= a.low and a.high <= x.max()


def test_median_ci_degenerate_inputs():
    one = stats.median_ci([2.5])
    assert one.median == 2.5 and math.isnan(one.low) and math.isnan(one.high)
    same = stats.median_ci([4.0, 4.0, 4.0])
    assert (same.low, same.high) == (4.0, 4.0)
    allinf = stats.median_ci([INF, INF, INF])
    assert allinf.median == INF and allinf.high == INF
    with pytest.raises(ValueError, match="NaN"):
        stats.median_ci([1.0, float("nan")])
    with pytest.raises(ValueError, match="method"):
        stats.median_ci([1.0, 2.0], method="basic")
    with pytest.raises(ValueError, match="confidence_level"):
        stats.median_ci([1.0, 2.0], confidence_level=95)


# ---------------------------------------------------------------------------- aRT, summary
def test_average_runtime_counts_failures_in_the_numerator():
    runs = [make_run("A", 1.0), make_run("A", 2.0), make_run("A", None, time=3.0),
            make_run("A", None, status="skipped", time=100.0)]
    assert stats.average_runtime(runs) == pytest.approx((1 + 2 + 3) / 2)
    assert stats.average_runtime([make_run("A", None, time=3.0)]) == INF


def test_summarize_known_values():
    rows = {r["optimizer"]: r for r in stats.summarize(table_runs(), warn=False)}
    a, b = rows["A"], rows["B"]
    assert (a["runs"], a["successes"], a["success_rate"]) == (3, 3, 1.0)
    assert a["median_time"] == 3.0 and a["ci_low"] >= 1.0 and a["ci_high"] <= 4.0
    assert a["art"] == pytest.approx(8.0 / 3)
    assert a["median_nit"] == 100 and a["median_njev"] == 30
    assert (b["successes"], b["success_rate"]) == (2, pytest.approx(2 / 3))
    assert b["median_time"] == 2.0  # 2, 2, inf: the censored run is not averaged in
    assert b["ci_high"] == INF  # a resample can hold two censored runs
    assert b["art"] == pytest.approx((2 + 2 + 5) / 2)
    assert b["median_njev"] == 20
    assert b["statuses"] == "converged:2, max_iter:1"


def test_summary_censored_median_when_most_runs_fail():
    runs = [make_run("C", 1.0, repeat=0), make_run("C", None, repeat=1),
            make_run("C", None, repeat=2)]
    (row,) = stats.summarize(runs, warn=False)
    assert row["median_time"] == INF and row["median_nit"] == INF and row["successes"] == 1
    text = stats.format_summary([row])
    line = next(ln for ln in text.splitlines() if ln.startswith("C "))  # one problem: no column
    # median time, iterations, nfev and njev of a censored median: 'not reached' (the CPU
    # time is unknown, '-': these hand-made runs record none)
    assert line.count("not reached") == 4, line
    assert not any(c == "inf" for c in line.split()), line


def test_skipped_runs_are_left_out():
    runs = [make_run("A", 1.0), make_run("A", 2.0, repeat=1),
            make_run("A", None, repeat=2, status="skipped")]
    (row,) = stats.summarize(runs, warn=False)
    assert row["runs"] == 2 and row["skipped"] == 1 and row["success_rate"] == 1.0


def test_comparison_summary_frame_and_list_and_table():
    comp = comparison()
    df = comp.summary(warn=False)
    pd = pytest.importorskip("pandas")
    assert isinstance(df, pd.DataFrame) and list(df["optimizer"]) == ["A", "B"]
    rows = comp.summary(as_frame=False, warn=False)
    assert isinstance(rows, list) and rows[0]["median_time"] == 3.0
    text = comp.summary_table(warn=False)
    assert "95% CI" in text and "[" in text and "3/3" in text and "2/3" in text


def test_summary_without_pandas_returns_dicts(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    assert isinstance(comparison().summary(warn=False), list)
    with pytest.raises(ImportError, match="pandas"):
        comparison().summary(as_frame=True, warn=False)


# ---------------------------------------------------------------------------- pairwise
def test_compare_pair_too_few_repeats_is_noise():
    a = [make_run("A", t, repeat=i) for i, t in enumerate([1.0, 2.0, 3.0])]
    b = [make_run("B", t, repeat=i) for i, t in enumerate([4.0, 5.0, 6.0])]
    with pytest.warns(stats.NoiseWarning, match="smallest attainable p is 0.1"):
        pc = stats.compare_pair(a, b)
    assert pc.statistic == 0.0 and pc.p_value == pytest.approx(0.1)  # exact: 2 / C(6, 3)
    assert pc.a_faster == 1.0 and pc.rank_biserial == 1.0 and pc.magnitude == "large"
    assert not pc.significant


def test_compare_pair_significant_difference():
    a = [make_run("A", float(t), repeat=t) for t in range(1, 11)]
    b = [make_run("B", float(t), repeat=t) for t in range(11, 21)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", stats.NoiseWarning)
        pc = stats.compare_pair(b, a)
    assert pc.p_value == pytest.approx(2 / math.comb(20, 10))
    assert pc.a_faster == 0.0 and pc.rank_biserial == -1.0 and pc.significant
    assert pc.message.startswith("A (numpy) reaches the target sooner")
    # the medians follow the names: A median (5.5 s) first, then B (15.5 s)
    assert "medians 5.5s vs 15.5s" in pc.message


def test_compare_pair_ranks_censored_runs_last():
    a = [make_run("A", 1.0), make_run("A", 2.0, repeat=1), make_run("A", None, repeat=2)]
    b = [make_run("B", None, repeat=i) for i in range(3)]
    pc = stats.compare_pair(a, b, warn=False)
    # 6 pairs where a finished and b did not, 3 ties between censored runs
    assert pc.a_faster == pytest.approx((6 + 1.5) / 9)
    assert pc.median_b == INF


def test_compare_pair_identical_is_noise_and_bad_input():
    a = [make_run("A", 1.0, repeat=i) for i in range(4)]
    with pytest.warns(stats.NoiseWarning):
        pc = stats.compare_pair(a, a)
    assert pc.p_value == 1.0 and pc.a_faster == 0.5 and pc.magnitude == "negligible"
    with pytest.raises(ValueError, match="runs_b"):
        stats.compare_pair(a, [])
    with pytest.raises(ValueError, match="alpha"):
        stats.compare_pair(a, a, alpha=5)


def test_comparison_compare_optimizers():
    comp = comparison()
    pc = comp.compare_optimizers("A", {"label": "B", "backend": "numpy"}, warn=False)
    assert (pc.a, pc.b, pc.n_a, pc.n_b) == ("A", "B / numpy", 3, 3)
    with pytest.raises(ValueError, match="no run matches"):
        comp.compare_optimizers("A", "nope")


# ---------------------------------------------------------------------------- profiles
def test_performance_profile_by_hand():
    # times A: 1, 4, 3; B: 2, 2, inf -> ratios A: 1, 2, 1; B: 2, 1, inf
    prof = stats.performance_profile(table_runs(), warn=False)
    assert prof.solvers == ["A", "B"]
    np.testing.assert_array_equal(prof.values, [[1, 2], [2, 1], [1, INF]])
    np.testing.assert_array_equal(prof.x, [1.0, 2.0])
    np.testing.assert_allclose(prof.y["A"], [2 / 3, 1.0])
    np.testing.assert_allclose(prof.y["B"], [1 / 3, 2 / 3])
    assert prof.at(1.5) == pytest.approx({"A": 2 / 3, "B": 1 / 3})
    assert prof.at(1e9)["B"] == pytest.approx(2 / 3)  # B never solves instance 3


def test_performance_profile_changes_when_a_solver_is_added():
    c = [make_run("C", 0.5, repeat=r) for r in range(3)]
    prof = stats.performance_profile(table_runs() + c, warn=False)
    np.testing.assert_allclose(prof.values[:, 0], [2, 8, 6])  # A is now compared with C
    assert prof.at(1.0) == pytest.approx({"A": 0.0, "B": 0.0, "C": 1.0})


def test_performance_profile_instance_nobody_solves_counts():
    runs = table_runs() + [make_run("A", None, repeat=3), make_run("B", None, repeat=3)]
    prof = stats.performance_profile(runs, warn=False)
    assert len(prof.problems) == 4
    assert prof.at(1e9) == pytest.approx({"A": 3 / 4, "B": 2 / 4})


def test_performance_profile_other_metric_and_missing_pairs():
    prof = stats.performance_profile(table_runs(), metric="njev", warn=False)
    np.testing.assert_array_equal(prof.values, [[1, 2], [2, 1], [1, INF]])
    with pytest.warns(stats.UnfairComparisonWarning, match="no run"):
        stats.performance_profile(table_runs()[:-1], metric="njev")
    issues = stats.fairness_issues(table_runs()[:-1], by_time=False)
    assert issues == ["1 (problem instance, solver) pairs have no run: solvers were not run "
                      "on the same problems and repetitions; profiles count a missing run as "
                      "not solved"]


def test_data_profile_by_hand():
    prof = stats.data_profile(table_runs(), warn=False)
    np.testing.assert_array_equal(prof.values, [[10, 20], [40, 20], [30, INF]])
    assert prof.at(20) == pytest.approx({"A": 1 / 3, "B": 2 / 3})
    assert prof.at(30) == pytest.approx({"A": 2 / 3, "B": 2 / 3})
    assert prof.at(40) == pytest.approx({"A": 1.0, "B": 2 / 3})
    per_dim = stats.data_profile(table_runs(), per_dimension=True, warn=False)
    np.testing.assert_allclose(per_dim.values[:, 0], [2, 8, 6])  # n_params + 1 = 5


def test_first_hit_and_ecdf_by_hand():
    tr = Trace(iteration=np.arange(4, dtype=np.int64), time=np.array([0.0, 1.0, 2.0, 3.0]),
               fun=np.array([1.0, 0.1, 0.01, 1e-3]), grad_norm=np.ones(4),
               nfev=np.array([0, 1, 2, 3]), njev=np.array([0, 2, 4, 6]))
    run = make_run("A", None, trace=tr)
    assert stats.first_hit(run, 1e-1) == 1.0  # "<=": the tolerance itself counts
    assert stats.first_hit(run, 1e-2, "njev") == 4.0
    assert stats.first_hit(run, 1e-4) == INF
    prof = stats.runtime_ecdf([run], tols=(1e-1, 1e-2, 1e-4), warn=False)
    assert prof.at(0.5)["A"] == 0.0
    assert prof.at(1.5)["A"] == pytest.approx(1 / 3)
    assert prof.at(100.0)["A"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="tols"):
        stats.runtime_ecdf([run], tols=())
    with pytest.raises(ValueError, match="optimum"):
        stats.first_hit(make_run("A", 1.0, fstar=None), 1e-3)


# ---------------------------------------------------------------------------- fairness
def test_fair_table_has_no_fairness_warning():
    runs = [make_run("A", 1.0, repeat=r) for r in range(2)] + [
        make_run("B", 2.0, repeat=r) for r in range(2)]
    assert stats.fairness_issues(runs, timer_resolution=1e-9) == []


def test_unfair_dtypes_devices_targets():
    runs = [make_run("A", 1.0), make_run("B", 1.0, dtype="float32", device="cuda")]
    runs[1] = runs[1].replace(target="LossTarget(value=0.1)")
    issues = stats.fairness_issues(runs, timer_resolution=1e-9)
    text = "\n".join(issues)
    assert "different dtypes (float32, float64)" in text
    assert "different devices (cpu, cuda)" in text
    assert "different targets" in text
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        stats.summarize(runs, timer_resolution=1e-9)
    assert [str(w.message) for w in rec] == issues
    assert all(w.category is stats.UnfairComparisonWarning for w in rec)
    assert rec[0].filename == __file__  # attributed to the caller


def test_unfair_different_data():
    runs = [make_run("A", 1.0, spec={"problem": "P", "seed": 0}),
            make_run("B", 1.0, spec={"problem": "P", "seed": 1})]
    data, missing = stats.fairness_issues(runs, timer_resolution=1e-9)
    assert "different data" in data and "P (repetition 0)" in data
    assert "2 (problem instance, solver) pairs have no run" in missing
    # redrawn data across repetitions is fair when every optimizer of a repetition shares it
    fair = [make_run(lab, 1.0, repeat=r, spec={"problem": "P", "seed": r})
            for lab in "AB" for r in range(2)]
    assert stats.fairness_issues(fair, timer_resolution=1e-9) == []


def test_unfair_budget_stopped_runs_compared_by_time():
    runs = [make_run("A", 1.0), make_run("A", 1.0, repeat=1),
            make_run("B", None, status="max_iter"),
            make_run("B", None, repeat=1, status="timeout")]
    (issue,) = stats.fairness_issues(runs, timer_resolution=1e-9)
    assert "2 of 4 runs were stopped by a budget (1 max_iter, 1 timeout)" in issue
    assert "every run of B on numpy hit a budget" in issue
    assert stats.fairness_issues(runs, timer_resolution=1e-9, by_time=False) == []


def test_unfair_coarse_timer():
    runs = [make_run("A", 1e-5, nit=10), make_run("B", 1.0, nit=10)]
    (issue,) = stats.fairness_issues(runs, timer_resolution=1e-6)
    assert "timer resolution 1e-06s is coarse for 1 run(s)" in issue and "A on numpy" in issue
    assert stats.fairness_issues(runs, timer_resolution=1e-9) == []


# ---------------------------------------------------------------------------- real runs
@pytest.fixture(scope="module")
def tiny() -> Comparison:
    return optcmp.compare(lr_s(1000), [optcmp.gd(learning_rate=0.1), optcmp.lbfgs],
                          repeats=2, progress=False, max_time=5.0)


def test_first_hit_matches_recorded_time_to_target(tiny):
    for r in tiny.runs:
        assert r.success
        assert stats.first_hit(r, 1e-6) == r.time_to_target
        assert stats.first_hit(r, 1e-6, "njev") == r.njev_to_target
        assert stats.first_hit(r, 1e-6, "nit") == r.nit_to_target


def test_real_runs_profiles_and_summary(tiny):
    rows = tiny.summary(as_frame=False, warn=False)
    gd = next(r for r in rows if r["optimizer"] == "gd")
    assert gd["median_nit"] == 34 and gd["success_rate"] == 1.0  # GD at lr 0.1: 34 to 1e-6
    dp = tiny.data_profile(warn=False)
    assert dp.at(35) == {"gd": 1.0, "lbfgs": 1.0}
    ecdf = tiny.runtime_ecdf(tols=(1e-2, 1e-6), metric="nit", warn=False)
    assert ecdf.at(34)["gd"] == 1.0


def test_redraw_data_changes_data_per_repetition():
    p = optcmp.problems.LinearRegression(n_samples=300, seed=3)
    comp = optcmp.compare(p, [optcmp.lbfgs, optcmp.gd(learning_rate=1e-3)], repeats=3,
                          redraw_data=True, progress=False, max_iter=20)
    seeds = [(r.label, r.repeat, r.problem_spec["seed"]) for r in comp.runs]
    assert sorted({s for _, _, s in seeds}) == [3, 4, 5]
    assert all(s == 3 + rep for _, rep, s in seeds)
    fstars = {r.repeat: r.fstar for r in comp.runs}
    assert len(set(fstars.values())) == 3
    assert comp.settings["redraw_data"] is True
    assert not any("different data" in m for m in comp.fairness_issues())
    same = optcmp.compare(p, [optcmp.lbfgs], repeats=2, progress=False)
    assert {r.problem_spec["seed"] for r in same.runs} == {3}


def test_redraw_data_refuses_user_arrays_before_running():
    with pytest.raises(NotImplementedError, match="cannot redraw its data"):
        optcmp.compare(lr_s(100), [optcmp.lbfgs], repeats=2, redraw_data=True,
                       progress=False)
    p = optcmp.problems.LinearRegression(n_samples=50, n_features=2, noise=0.5, seed=1)
    q = p.with_seed(7)
    assert q.spec() == {**p.spec(), "seed": 7} and p.spec()["seed"] == 1
    assert not np.array_equal(q.train_data["A"], p.train_data["A"])


# ---------------------------------------------------------------------------- export
def test_csv_long_format(tmp_path):
    comp = comparison()
    n = comp.to_csv(tmp_path / "t.csv")
    assert n == sum(len(r.trace) for r in comp.runs)
    with open(tmp_path / "t.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == n
    assert {"run", "optimizer", "backend", "repeat", "time", "fun", "njev",
            "relative_suboptimality"} <= set(rows[0])
    first = rows[0]
    assert first["optimizer"] == "A" and float(first["relative_suboptimality"]) == 1.0
    assert comp.to_csv(tmp_path / "r.csv", kind="runs") == len(comp.runs)
    with pytest.raises(ValueError, match="kind"):
        comp.to_csv(tmp_path / "x.csv", kind="points")


def test_parquet_export(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    comp = comparison()
    n = comp.to_parquet(tmp_path / "t.parquet")
    table = pq.read_table(tmp_path / "t.parquet")
    assert table.num_rows == n and "relative_suboptimality" in table.column_names
    assert comp.to_parquet(tmp_path / "r.parquet", kind="runs") == len(comp.runs)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="pyarrow"):
        comp.to_parquet(tmp_path / "u.parquet")


def test_concat_pools_problems_for_profiles():
    p1 = comparison()
    p2 = comparison([make_run(lab, t, problem="Q", spec={"problem": "Q"})
                     for lab, t in (("A", 1.0), ("B", 3.0))])
    both = Comparison.concat([p1, p2])
    assert len(both) == 8 and both.problem == p1.problem
    prof = both.performance_profile(warn=False)
    assert len(prof.problems) == 4 and prof.at(1.0) == pytest.approx({"A": 3 / 4, "B": 1 / 4})
    with pytest.raises(ValueError):
        Comparison.concat([])


def test_summary_cpu_median_is_unknown_not_inf_for_runs_saved_without_cpu_time():
    # a comparison saved before CPU time was measured used to show cpu-to-target "inf" (never
    # reached) next to a median time-to-target of converged runs
    runs = [make_run("a", 0.1, repeat=0), make_run("a", 0.3, repeat=1),
            make_run("b", None, repeat=0), make_run("b", None, repeat=1)]
    (a, b) = stats.summary(Comparison(runs), as_frame=False)
    assert a["median_time"] == pytest.approx(0.2)
    assert math.isnan(a["median_cpu_time"]) and b["median_cpu_time"] == math.inf
    timed = [r.replace(cpu_time_to_target=t) for r, t in zip(runs[:2], (0.1, 0.2))]
    (a2,) = stats.summary(Comparison(timed), as_frame=False)
    assert a2["median_cpu_time"] == pytest.approx(0.15)


def test_factor_interval_of_one_run_each_resamples_its_step_times():
    """With one run each, the factor's interval comes from 2,000 resamplings (seed 0) of each
    run's step durations: equal to numpy's ``Generator.choice`` resampling of them, computed
    directly."""
    rng = np.random.default_rng(7)
    runs = []
    for label, m in (("a", 677), ("b", 1624)):
        t = np.concatenate([[0.0], np.cumsum(rng.uniform(1e-4, 3e-4, m))])
        trace = Trace(iteration=np.arange(m + 1, dtype=np.int64), time=t,
                      fun=np.logspace(0, -6, m + 1), grad_norm=np.ones(m + 1),
                      nfev=np.arange(m + 1, dtype=np.int64), njev=np.arange(m + 1, dtype=np.int64))
        runs.append(make_run(label, float(t[-1]), trace=trace, nit=m))
    lo, hi, how = stats.factor_interval([runs[0]], [runs[1]])
    ref = np.random.default_rng(0)
    sa, sb = (np.array(stats.step_times(r)) for r in runs)
    ra = ref.choice(sa, (2000, sa.size)).sum(axis=1)
    ratio = ref.choice(sb, (2000, sb.size)).sum(axis=1) / ra
    assert (lo, hi) == tuple(np.quantile(ratio, [0.025, 0.975]))
    assert "step times of one run each" in how
