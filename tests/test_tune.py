"""The tuning protocol: closed-form best step for GD, scoring rules, defaults mode, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import lr_recipe

import optcmp
from optcmp.problems import LinearRegression
from optcmp.tune_result import load_specs
from optcmp.tuning import DEFAULT_GRIDS


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def quad():
    """Least squares with condition number ~30: a quadratic with Hessian (2/n) A^T A."""
    X, y = lr_recipe(500, [1, 2, 5], [0, 0, 0], [1.5, -2.0, 0.5], 0.3, 0.1)
    p = LinearRegression.from_arrays(X, y, name="quad")
    A = p.train_data["A"]
    ev = np.linalg.eigvalsh(2.0 / A.shape[0] * A.T @ A)
    return p, float(ev[-1]), float(ev[0])


@pytest.mark.slow
def test_gd_best_step_is_within_one_grid_step_of_two_over_L_plus_mu(quad):
    p, L, mu = quad
    assert L / mu == pytest.approx(30.36, rel=1e-3)
    ratio = 2.0 ** 0.25
    grid = [0.002 * ratio**k for k in range(25)]  # 0.002 .. 0.128, not aligned on the optimum
    t = optcmp.tune(p, optcmp.gd, {"learning_rate": grid}, by="iterations", budget=5000,
                    repeats=2, tol=1e-10)
    best = t.best.hyperparameters["learning_rate"]
    eta = 2.0 / (L + mu)  # optimal constant step of GD on a quadratic
    assert abs(math.log(best / eta)) <= math.log(ratio) + 1e-12
    assert 1.0 / L <= best < 2.0 / L  # the "1/L region": above the safe step, below divergence
    # iterations fall as the step grows towards eta, and steps past 2/L never reach the target
    by_lr = {c.spec.hyperparameters["learning_rate"]: c for c in t.configs}
    below = [by_lr[g].median for g in grid if g <= best]
    assert below == sorted(below, reverse=True)
    for g in grid:
        if g > 2.0 / L:
            assert by_lr[g].successes == 0 and by_lr[g].median == 5000
            assert set(by_lr[g].statuses) == {"diverged"}
    # closed-form bound: each Hessian eigencomponent of the error shrinks by |1 - eta lambda|
    # per step, so (f_k - f*) / (f_0 - f*) <= rho^(2k) with rho = max|1 - eta lambda|
    rho = max(abs(1 - best * mu), abs(1 - best * L))
    assert by_lr[best].median <= math.ceil(math.log(1e-10) / (2 * math.log(rho)))


@pytest.mark.filterwarnings("ignore:.*edge of the grid:UserWarning")
def test_tuning_by_iterations_is_deterministic_and_feeds_compare(quad):
    p, L, mu = quad
    grid = {"learning_rate": [0.005, 0.01, 0.02, 0.03]}
    a = optcmp.tune(p, "gd", grid, by="iterations", budget=3000, repeats=2, tol=1e-8)
    b = optcmp.tune(p, "gd", grid, by="iterations", budget=3000, repeats=2, tol=1e-8)
    assert [c.scores for c in a.configs] == [c.scores for c in b.configs]
    assert a.best.hyperparameters["learning_rate"] == 0.03 and a.best.label == "gd"
    comp = optcmp.compare(p, a.specs, tol=1e-8, progress=False)
    chosen = [c for c in a.configs if c.best][0]
    assert comp[0].nit_to_target == chosen.median  # zero start: every repetition is the same
    assert a.cost["runs"] == 8 and a.cost["executed"] == 8
    assert a.cost["timed"] > 0 and a.cost["elapsed"] >= a.cost["run_wall"] * 0.5
    assert "tuning cost: 8 runs" in a.table() and "chosen: gd(learning_rate=0.03)" in a.table()


def test_runs_that_miss_the_target_score_the_budget(quad):
    p, *_ = quad
    with pytest.warns(UserWarning, match="no configuration of adadelta reached the target"):
        t = optcmp.tune(p, ["gd", "adadelta"], {"gd": {"learning_rate": [0.03, 1.0]},
                                                "adadelta": {"learning_rate": [0.001, 1.0]}},
                        by="iterations", budget=400, repeats=1, tol=1e-8)
    rows = {(c.optimizer, c.point["learning_rate"]): c for c in t.configs}
    assert rows[("gd", 1.0)].statuses == ["diverged"] and rows[("gd", 1.0)].scores == [400.0]
    # hopeless: censored once 10x slower than gd(0.03)'s time-to-target, or to its budget
    assert rows[("adadelta", 0.001)].statuses[0] in ("censored", "max_iter")
    assert rows[("adadelta", 0.001)].scores == [400.0]
    assert rows[("gd", 0.03)].statuses == ["converged"]
    assert rows[("gd", 0.03)].scores == [float(t.comparison.select(
        label="gd(learning_rate=0.03)")[0].nit_to_target)]
    assert [s.name for s in t.specs] == ["gd"] and t.missed == ["adadelta"]
    assert [c.best for c in t.configs] == [True, False, False, False]


def test_tuning_by_time_scores_time_to_target_or_the_budget(quad):
    p, *_ = quad
    budget = 2.0
    t = optcmp.tune(p, "gd", {"learning_rate": [0.03, 1.0]}, budget=budget, repeats=2)
    assert t.by == "time"
    for c in t.configs:
        runs = t.comparison.select(label=c.spec.label)
        assert c.scores == [r.time_to_target if r.success else budget for r in runs]
        assert c.median == float(np.median(c.scores))
    assert t.best.hyperparameters["learning_rate"] == 0.03  # 1.0 diverges


def test_defaults_mode_runs_documented_defaults(quad):
    p, *_ = quad
    with pytest.warns(UserWarning, match="adadelta with its defaults did not reach"):
        t = optcmp.tune(p, ["gd", optcmp.adadelta(rho=0.5), "lbfgs"], mode="defaults",
                        by="iterations", budget=500, repeats=1)
    assert t.missed == ["adadelta"]  # its defaults are run, and chosen by no one
    assert dict(t.configs[1].spec.hyperparameters) == {
        "learning_rate": 1.0, "rho": 0.95, "eps": 1e-6, "batch_size": None, "shuffle": True}
    assert [dict(s.hyperparameters) for s in t.specs] == [
        {"learning_rate": "auto"},
        # the frameworks' own L-BFGS knobs, off by default
        {"history_size": 10, "max_linesearch": 20, "ftol": 0.0, "gtol": 0.0,
         "tolerance_grad": 0.0, "tolerance_change": 0.0, "line_search_fn": "strong_wolfe",
         "max_iter_per_step": 1}]
    assert [c.point for c in t.configs] == [{}, {}, {}]
    assert t.comparison[0].hyperparameters["learning_rate"] == pytest.approx(1.0 / p.lipschitz())


def test_default_grids_are_log_spaced():
    for name, g in DEFAULT_GRIDS.items():
        optcmp.get_optimizer(name)  # every default grid belongs to a registered optimizer
        for values in g.values():
            ratios = np.diff(np.log10(np.asarray(values, dtype=float)))
            assert np.all(ratios > 0)
    lr = DEFAULT_GRIDS["gd"]["learning_rate"]
    assert lr[0] == 1e-4 and lr[-1] == 10.0 and len(lr) == 11
    np.testing.assert_allclose(np.diff(np.log10(lr)), 0.5, atol=2e-3)


def test_edge_of_grid_warns(quad):
    p, *_ = quad
    with pytest.warns(UserWarning, match="at the edge of the grid"):
        optcmp.tune(p, "gd", {"learning_rate": [0.001, 0.002, 0.004]}, by="iterations",
                    budget=20000, repeats=1, tol=1e-6)


@pytest.mark.parametrize("kwargs, err, match", [
    ({"by": "epochs"}, ValueError, "by must be one of"),
    ({"mode": "best"}, ValueError, "mode must be one of"),
    ({"budget": -1}, ValueError, "budget must be a finite number > 0"),
    ({"budget": 10.5, "by": "iterations"}, ValueError, "whole number of iterations"),
    ({"repeats": 0}, ValueError, "repeats must be a positive integer"),
    ({"grid": {"lr": [0.1]}}, TypeError, "'lr' is not one of gd's"),
    ({"grid": {"learning_rate": [0.1, -1.0]}}, ValueError, "learning_rate must be.*-1.0"),
    ({"grid": {"learning_rate": []}}, ValueError, "is empty"),
    ({"grid": {"learning_rate": 0.1}}, ValueError, "must be a list"),
    ({"grid": {"learning_rate": [0.1]}, "mode": "defaults"}, ValueError, "drop grid"),
])
def test_bad_arguments_are_named(quad, kwargs, err, match):
    p, *_ = quad
    grid = kwargs.pop("grid", {"learning_rate": [0.1]})
    with pytest.raises(err, match=match):
        optcmp.tune(p, "gd", grid, **kwargs)


@pytest.mark.filterwarnings("ignore:.*edge of the grid:UserWarning")
def test_tune_takes_a_run_config_and_keyword_settings_alike(quad):
    p, *_ = quad
    grid = {"learning_rate": [0.01, 0.03]}
    kw = dict(by="iterations", budget=2000, repeats=2, progress=False)
    a = optcmp.tune(p, "gd", grid, tol=1e-8, seed=4, threads=1, **kw)
    b = optcmp.tune(p, "gd", grid, config=optcmp.RunConfig(tol=1e-8, seed=4), **kw)
    assert [c.scores for c in a.configs] == [c.scores for c in b.configs]
    assert [r.seed for r in b.comparison] == [4, 4, 5, 5]
    c = optcmp.tune(p, "gd", grid, config=optcmp.RunConfig(tol=1e-8), execution="step",
                    eval_every=3, **kw)  # any run setting reaches the runs
    assert {r.conditions.execution for r in c.comparison} == {"step"}
    assert [c.scores for c in c.configs] == [c.scores for c in a.configs]


@pytest.mark.filterwarnings("ignore:no configuration of gd reached:UserWarning")
def test_iteration_scored_tuning_has_no_time_cap_unless_max_time_is_given(quad):
    """By iterations, max_time=None means no time cap: RunConfig's 60 s default does not reach
    the runs (a budget-ended run's stop must not depend on the machine)."""
    p, *_ = quad
    kw = dict(by="iterations", budget=50, repeats=1, progress=False)
    res = optcmp.tune(p, "gd", {"learning_rate": [0.01]}, config=optcmp.RunConfig(), **kw)
    rules = [r["rule"] for r in res.comparison.settings["stopping"]["rules"]]
    assert "MaxTime" not in rules and "MaxIter" in rules
    capped = optcmp.tune(p, "gd", {"learning_rate": [0.01]}, max_time=7.0, **kw)
    times = [r for r in capped.comparison.settings["stopping"]["rules"] if r["rule"] == "MaxTime"]
    assert [r["seconds"] for r in times] == [7.0]


def test_tune_sets_the_budgets_itself(quad):
    p, *_ = quad
    with pytest.raises(TypeError, match="'max_iter': tune sets every run's stopping rule"):
        optcmp.tune(p, "gd", {"learning_rate": [0.01]}, max_iter=10)
    with pytest.raises(ValueError, match="give a config without stopping"):
        optcmp.tune(p, "gd", {"learning_rate": [0.01]},
                    config=optcmp.RunConfig(stopping=optcmp.MaxIter(5) | optcmp.LossTarget(1)))
    with pytest.raises(TypeError, match=r"tune\(\) got unexpected keyword argument\(s\) 'lr'"):
        optcmp.tune(p, "gd", {"learning_rate": [0.01]}, lr=0.1)


def test_cli_tune_and_run_tuned(tmp_path, capsys):
    from optcmp.cli import main

    out = tmp_path / "tuned.json"
    rc = main(["tune", "--rows", "300", "--optimizers", "diag_newton", "--grid",
               "learning_rate=0.3,1,3", "--by", "iterations", "--budget", "5000",
               "--repeats", "1", "--no-progress", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "diag_newton" in text and "tuning cost: 3 runs" in text
    saved = json.loads(out.read_text())
    assert saved["format"] == "optcmp.tune" and saved["by"] == "iterations"
    specs = load_specs(out)
    assert [s.name for s in specs] == ["diag_newton"]
    best = [c for c in saved["configs"] if c["best"]][0]
    assert specs[0].hyperparameters["learning_rate"] == best["point"]["learning_rate"]
    assert main(["run", "--rows", "300", "--tuned", str(out), "--backends", "numpy",
                 "--max-iter", "5000", "--no-progress"]) == 0
    assert "diag_newton" in capsys.readouterr().out
    assert main(["tune", "--rows", "300", "--grid", "learning_rate=1", "--mode",
                 "defaults"]) == 2
    with pytest.raises(SystemExit) as info:
        main(["tune", "--rows", "300", "--grid", "nope"])
    assert info.value.code == 2
    assert "expected NAME=V1,V2" in capsys.readouterr().err


def test_cli_tune_out_records_eval_every(tmp_path, capsys):
    """The saved tuning result names the evaluation interval its runs used (5 here)."""
    from optcmp.cli import main

    out = tmp_path / "tuned.json"
    assert main(["tune", "--rows", "300", "--optimizers", "diag_newton", "--grid",
                 "learning_rate=1", "--by", "iterations", "--budget", "200", "--repeats", "1",
                 "--eval-every", "5", "--no-progress", "--out", str(out)]) == 0
    capsys.readouterr()
    settings = json.loads(out.read_text())["settings"]
    assert settings["eval_every"] == 5
    assert settings["backend"] == "numpy" and settings["dtype"] == "float64"


def test_without_any_success_no_configuration_is_chosen() -> None:
    # GD on LR-S(1e4) needs ~40 iterations at step 0.1; with a budget of 5 no configuration
    # reaches 1e-8: none is chosen (the one that got closest used to be shown as "best"), and
    # the final gaps still say which got closest (the largest step, all are stable).
    from conftest import lr_s

    p = lr_s(10_000)
    with pytest.warns(UserWarning, match="no configuration of gd reached the target within "
                      r"the budget \(5 iterations\): it has no winner"):
        res = optcmp.tune(p, optcmp.gd, grid={"learning_rate": [0.001, 0.01, 0.03, 0.1]},
                          by="iterations", budget=5, tol=1e-8, repeats=1)
    assert res.best is None and res.specs == [] and res.missed == ["gd"]
    assert not any(c.best for c in res.configs)
    assert res.table().splitlines()[-1].startswith("none reached the target: gd (no winner")
    assert "chosen:" not in res.table() and "<- best" not in res.table()
    gaps = {c.point["learning_rate"]: c.final_gap for c in res.configs}
    assert gaps[0.1] < gaps[0.03] < gaps[0.01] < gaps[0.001]


def test_tune_refuses_a_config_with_its_own_budget():
    """tune sets every run's iteration budget from ``budget``: a config's ``max_iter`` would be
    dropped silently, so it is refused."""
    p = optcmp.problems.LinearRegression(n_samples=200)
    with pytest.raises(ValueError, match="give a config without max_iter"):
        optcmp.tune(p, optcmp.gd, {"learning_rate": [0.1]}, by="iterations", budget=10,
                    repeats=1, config=optcmp.RunConfig(max_iter=5), progress=False)


def test_tuning_by_iterations_censors_no_run_whatever_the_clock():
    """Scored in iterations, a configuration 30x slower than the best one in time is no
    censored "miss" (README's sweep: diag_newton at 0.0316 reached 0/3 that way): it reaches
    the target after the same iterations on any machine, 3/3."""
    p = LinearRegression(n_samples=2000)
    t = optcmp.tune(p, optcmp.diag_newton, {"learning_rate": [0.0316, 1.0]}, by="iterations",
                    budget=10_000, tol=1e-3, progress=False)
    slow, fast = t.configs
    assert t.comparison.settings["censor_ratio"] is None
    assert slow.statuses == ["converged"] * 3 and slow.successes == 3
    assert slow.median > 20 * fast.median and fast.best


def test_a_censored_tuning_run_scores_its_bound_never_the_budget_of_a_miss():
    """Scored in time, diag_newton at 0.01 (about 100x the iterations of 1.0) is censored:
    each run scores the bound it passed, is neither reached nor missed, and its configuration's
    median is "> bound"."""
    p = LinearRegression(n_samples=2000)
    t = optcmp.tune(p, optcmp.diag_newton, {"learning_rate": [0.01, 1.0]}, by="time",
                    tol=1e-3, progress=False)
    slow, fast = t.configs
    runs = [r for r in t.comparison.runs if r.label == slow.spec.label]
    assert slow.statuses == ["censored"] * 3 and slow.censored == [True] * 3
    assert slow.scores == [r.bound.limit for r in runs] and slow.reached == [False] * 3
    assert max(slow.scores) < t.budget and math.isinf(slow.median) and fast.best
    assert "censored" in t.table() and "(budget)" not in t.table()
    curves = t.curves(n_boot=0)
    assert any("censored" in note for note in curves.notes)
    assert not curves.curve("diag_newton").p_all_miss.any()
    assert json.loads(json.dumps(t.to_dict()))["configs"][0]["median"] is None


def test_cli_tune_where_every_configuration_diverges_chooses_none(tmp_path, capsys):
    """Every step of the grid diverges (10 and 100 on 200 rows): tune used to present one as
    "best"; it says none reached the target, exits 0, and run --tuned refuses the file."""
    from optcmp.cli import main

    out = tmp_path / "tuned.json"
    assert main(["tune", "--rows", "200", "--optimizers", "gd", "--grid",
                 "learning_rate=10,100", "--by", "iterations", "--budget", "50", "--repeats",
                 "1", "--no-progress", "--out", str(out)]) == 0
    got = capsys.readouterr()
    assert "none reached the target: gd (no winner" in got.out and "<- best" not in got.out
    assert "no configuration of gd reached the target" in got.err
    saved = json.loads(out.read_text())
    assert saved["specs"] == [] and [c["statuses"] for c in saved["configs"]] == [
        ["diverged"], ["diverged"]]
    with pytest.raises(ValueError, match="no configuration reached the target in this tuning "
                       r"\(gd\): nothing to run"):
        load_specs(out)
    assert main(["run", "--rows", "200", "--tuned", str(out), "--backends", "numpy",
                 "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        f"optcmp: error: --tuned {out}: no configuration reached the target in this tuning "
        "(gd): nothing to run; tune with a larger budget or a wider grid\n")


def test_load_specs_leaves_out_an_optimizer_without_a_winner(tmp_path):
    """A file of an older optcmp kept a spec for an optimizer none of whose runs reached the
    target: it is left out, with a warning naming it."""
    old = {"format": "optcmp.tune", "specs": [optcmp.gd(0.1).to_dict(), optcmp.adam().to_dict()],
           "configs": [{"optimizer": "gd", "successes": 1}, {"optimizer": "adam", "successes": 0}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    with pytest.warns(UserWarning, match="no configuration of adam reached the target"):
        specs = load_specs(path)
    assert [(s.name, s.hyperparameters["learning_rate"]) for s in specs] == [("gd", 0.1)]


def test_a_configuration_is_censored_against_its_own_optimizer_only():
    """`optcmp tune` censored every gd configuration against lbfgs (gd needs about 150x
    lbfgs's time here), so gd had no winner; an optimizer's configurations are censored against
    the best of its own grid: a grid of one is never censored, whatever the clocks say."""
    p = LinearRegression(n_samples=100_000)
    res = optcmp.tune(p, [optcmp.lbfgs, optcmp.gd],
                      grid={"gd": {"learning_rate": ["auto"]}, "lbfgs": {"history_size": [10]}},
                      by="time", budget=5_000, repeats=2, tol=1e-4, progress=False)
    gd = [s for s in res.configs if s.optimizer == "gd"]
    assert len(gd) == 1 and not any(gd[0].censored)
    assert gd[0].successes == 2 and "gd" in {s.name for s in res.specs}
    assert len(res.comparison.runs) == 4
