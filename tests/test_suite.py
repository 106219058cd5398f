"""Comparisons over a suite: compare(suite), More-Wild profiles, per-problem tables, CLI --suite."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import optcmp
from optcmp import cli
from optcmp.analysis import stats
from optcmp.cli.run import build_suite, run_stopping
from optcmp.results import RunResult, Trace
from optcmp.suites import Suite


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


def _run(problem, label, funs, nfev, n_params=2, f0=None):
    funs = np.asarray(funs, dtype=np.float64)
    tr = Trace(iteration=np.arange(funs.size), time=np.arange(funs.size) * 0.1, fun=funs,
               grad_norm=np.full(funs.size, np.nan), nfev=np.asarray(nfev, dtype=np.int64),
               njev=np.asarray(nfev, dtype=np.int64))
    return RunResult(problem=problem, optimizer=label, label=label, backend="numpy",
                     dtype="float64", status="max_iter", f0=float(funs[0] if f0 is None else f0),
                     n_params=n_params, trace=tr, problem_spec={"p": problem}, fun=float(funs[-1]))


def test_more_wild_test_and_simplex_gradient_budget_by_hand():
    # problem A (n = 2): f_L = 0 (solver b); with tau = 0.1 a run must reach f <= 10 from 100.
    # a: f hits 9 at nfev 6 -> 6 / 3 = 2 simplex gradients; b: f = 5 at nfev 9 -> 3.
    # problem B (n = 4): f_L = 1 (a); from 51 a run must reach f <= 6: a at nfev 10 -> 2;
    # b never gets below 30 -> unsolved.
    runs = [_run("A", "a", [100, 50, 9], [0, 3, 6]), _run("A", "b", [100, 40, 5, 0], [0, 3, 9, 12]),
            _run("B", "a", [51, 20, 1], [0, 5, 10], n_params=4),
            _run("B", "b", [51, 30], [0, 5], n_params=4)]
    low = stats.best_found(runs)
    assert sorted(low.values()) == [0.0, 1.0]
    assert stats.first_solved(runs[0], 0.1, 0.0) == 6.0
    d = stats.data_profile(runs, metric="nfev", per_dimension=True, tau=0.1, warn=False)
    assert d.solvers == ["a", "b"]
    np.testing.assert_array_equal(d.values, [[2.0, 3.0], [2.0, math.inf]])
    assert d.at(2.0) == {"a": 1.0, "b": 0.0} and d.at(3.0) == {"a": 1.0, "b": 0.5}
    text = stats.suite_profile_table(runs, tau=0.1)
    # d(1) d(10) d(100) d(1000) rho(1) rho(2) rho(4) rho(16)
    assert text.splitlines()[-2].split() == ["a", "0.00", "1.00", "1.00", "1.00", "1.00",
                                             "1.00", "1.00", "1.00"]
    assert text.splitlines()[-1].split() == ["b", "0.00", "0.50", "0.50", "0.50", "0.00",
                                             "0.50", "0.50", "0.50"]
    assert "simplex gradients" in d.xlabel
    p = stats.performance_profile(runs, metric="nfev", tau=0.1, warn=False)
    np.testing.assert_array_equal(p.values, [[1.0, 1.5], [1.0, math.inf]])
    with pytest.raises(ValueError, match="tau must be"):
        stats.data_profile(runs, tau=1.5)


def test_compare_over_a_suite_collects_every_problem():
    suite = optcmp.suites.mgh([1, 5, "wood"])
    comp = optcmp.compare(suite, [optcmp.lbfgs(impl="scipy"), optcmp.gd(learning_rate=1e-3)],
                          progress=False, max_iter=50, threads=1)
    assert {r.problem for r in comp.runs} == set(suite.names)
    assert len(comp) == 6
    assert comp.settings["suite"] == {"name": "mgh", "problems": suite.names}
    assert comp.settings["optima"]["mgh14_wood"]["kind"] == "given"
    text = comp.table()
    assert [ln for ln in text.splitlines() if ln.startswith("== ")] == [
        f"== {n}" for n in suite.names]
    assert "lstsq" not in text
    rows = comp.summary(as_frame=False, warn=False)
    assert {r["problem"] for r in rows} == set(suite.names)


def test_suite_store_is_one_file_per_problem(tmp_path):
    suite = optcmp.suites.mgh([1, 13])
    store = tmp_path / "runs.jsonl"
    optcmp.compare(suite, [optcmp.lbfgs(impl="scipy")], progress=False, max_iter=50,
                   store=store)
    assert sorted(p.name for p in tmp_path.glob("runs-*.jsonl")) == [
        "runs-mgh01_rosenbrock.jsonl", "runs-mgh13_powell_singular.jsonl"]
    again = optcmp.compare(suite, [optcmp.lbfgs(impl="scipy")], progress=False, max_iter=50,
                           store=store)
    assert len(again) == 2


def test_suite_checks_its_problems():
    with pytest.raises(ValueError, match="no problems"):
        Suite("s", [])
    with pytest.raises(TypeError, match="Problems"):
        Suite("s", [1])
    p = optcmp.problems.MGHProblem(1)
    with pytest.raises(ValueError, match="unique"):
        Suite("s", [p, p])


@pytest.mark.slow
def test_cli_suite_report_has_the_profiles_over_35_problems(tmp_path, capsys):
    html = tmp_path / "r.html"
    rc = cli.main(["run", "--suite", "mgh", "--optimizers", "lbfgs,gd", "--backends", "numpy",
                   "--max-iter", "20", "--max-time", "2", "--set", "gd.learning_rate=1e-4",
                   "--set", "lbfgs.impl=scipy", "--no-progress", "--report", str(html)])
    out, _ = capsys.readouterr()
    assert rc == 0
    assert len(re.findall(r"^== mgh\d\d_", out, flags=re.M)) == 35
    assert "profiles over 35 problems (Moré-Wild test, tau = 0.001)" in out
    assert re.search(r"^lbfgs\s+\d\.\d\d\s", out, flags=re.M)
    page = html.read_text()
    assert 'id="fig-performance_profile_suite"' in page
    assert 'id="fig-data_profile_suite"' in page
    assert page.count("over the 35 problems") == 2
    assert "simplex gradients" in page
    assert "Profiles over the suite mgh (35 problems)" in page


def test_cli_suite_refuses_single_problem_options(capsys):
    assert cli.main(["run", "--suite", "mgh", "--rows", "10"]) == 2
    assert "drop --rows" in capsys.readouterr().err
    assert cli.main(["run", "--suite", "cutest"]) == 2
    assert "unknown suite 'cutest'; valid: mgh" in capsys.readouterr().err


def test_ctrl_c_in_a_suite_keeps_the_runs_of_the_finished_problems():
    # Ctrl-C on the 3rd problem used to keep only that problem's finished runs (the first
    # two problems' 4 runs were lost, from the exception and from optcmp run --out)
    suite = Suite("three", [optcmp.problems.MGHProblem(k) for k in (1, 5, 14)])
    started = []

    def cb(r):
        if r.nit == 0:
            started.append(1)
            if len(started) == 6:  # the 2nd run of the 3rd problem
                raise KeyboardInterrupt

    with pytest.raises(optcmp.store.Interrupted) as info:
        optcmp.compare(suite, ["lbfgs", optcmp.gd(learning_rate=1e-4)], backends="numpy",
                       max_iter=20, progress=False, callback=cb)
    exc = info.value
    assert [r.problem for r in exc.comparison] == ["mgh01_rosenbrock"] * 2 + ["mgh05_beale"] * 2 \
        + ["mgh14_wood"]
    assert (exc.done, exc.total) == (5, 6)
    assert "problem 3 of 3 of suite 'three': 5 of 6 runs finished" in str(exc)
    assert exc.comparison.settings["suite"]["problems"] == ["mgh01_rosenbrock", "mgh05_beale",
                                                           "mgh14_wood"]


def test_a_list_of_problems_is_pointed_to_suite_and_a_suite_comparison_names_it():
    # compare([p1, p2]) used to say only "got list"; repr of a suite's comparison "on ?"
    probs = [optcmp.problems.MGHProblem(1), optcmp.problems.MGHProblem(5)]
    with pytest.raises(TypeError, match=r"got list; for several problems pass a suite, "
                                        r"optcmp.suites.Suite\('name', problems\)"):
        optcmp.compare(probs, ["lbfgs"], backends="numpy", progress=False)
    comp = optcmp.compare(Suite("two", probs), ["lbfgs"], backends="numpy", max_iter=5,
                          progress=False)
    assert repr(comp) == "Comparison(2 runs on suite 'two', 2 problems)"


def test_no_early_stop_applies_to_a_suite_run():
    # optcmp run --suite mgh --no-early-stop used to still stop runs early as "projected";
    # no rule of the command extrapolates a rate now, and --no-early-stop drops the stall check
    from optcmp.stopping import Stalled

    def rule(*extra):
        args = cli.build_parser().parse_args(["run", "--suite", "mgh", "--max-iter", "300",
                                              *extra])
        suite = build_suite(args)
        return run_stopping(args, suite, 1e-6, None)

    on, off = rule(), rule("--no-early-stop")
    names = [type(r).__name__ for r in on.rules()]
    assert Stalled in [type(r) for r in on.rules()] and "RateProjection" not in names
    kinds = [type(r).__name__ for r in off.rules()]
    assert "Stalled" not in kinds and "RateProjection" not in kinds
    assert "RelativeSuboptimality(tol=1e-06)" in off.describe() and "MaxIter(n=300)" in \
        off.describe()


def test_a_suite_with_a_store_keeps_its_settings_and_counts_the_runs_read_back(tmp_path):
    # with store=, the suite comparison's settings used to become {"merged": [...]}: no stopping
    # rule (target_tol() None) and no "store" counts, so optcmp run did not say what it reused
    suite = Suite("two", [optcmp.problems.MGHProblem(1), optcmp.problems.MGHProblem(5)])
    kw = dict(backends="numpy", max_iter=50, progress=False, store=tmp_path / "s.jsonl")
    first = optcmp.compare(suite, ["lbfgs", "adam"], **kw)
    again = optcmp.compare(suite, ["lbfgs", "adam"], **kw)
    for comp, (reused, executed) in ((first, (0, 4)), (again, (4, 0))):
        assert "merged" not in comp.settings and comp.target_tol() == 1e-6
        st = comp.settings["store"]
        assert (st["reused"], st["executed"]) == (reused, executed)
        assert [p.rsplit("/", 1)[-1] for p in st["paths"]] == ["s-mgh01_rosenbrock.jsonl",
                                                               "s-mgh05_beale.jsonl"]
    assert [(r.fun, r.nit) for r in again] == [(r.fun, r.nit) for r in first]
