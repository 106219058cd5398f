"""Bad input is refused with a message naming the value, never accepted without a word and
never a raw exception from deep inside."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import optcmp
from optcmp.problems import LinearRegression, LogisticRegression
from optcmp.stopping import AccuracyTarget, LossTarget, MaxIter, MetricTarget


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


P = LinearRegression(n_samples=50, seed=1)


@pytest.mark.parametrize("make, match", [
    (lambda: LinearRegression(n_samples=50, fit_intercept="no"), "fit_intercept must be True"),
    (lambda: LogisticRegression(n_samples=50, fit_intercept="no"), "fit_intercept must be True"),
    (lambda: LogisticRegression(n_samples=50, l2="x"), r"l2 must be a finite number >= 0, got str 'x'"),
    (lambda: LinearRegression(n_samples=50, noise=1e160), r"noise must be at most .*1e\+160"),
    (lambda: LinearRegression.from_arrays(np.ones((5, 2)), np.ones(5), name=None),
     "name must be a non-empty string"),
    (lambda: LinearRegression.from_arrays(np.ones((5, 2)), np.ones(5), fit_intercept="no"),
     "fit_intercept must be True"),
    (lambda: LinearRegression.from_arrays([[1.0, 2.0], [3.0]], [1.0, 2.0]),
     "X must be a rectangular array"),
    (lambda: LossTarget("abc"), "LossTarget value must be a finite number, got str 'abc'"),
    (lambda: LossTarget(None), "LossTarget value must be a finite number, got NoneType None"),
    (lambda: AccuracyTarget("x"), "accuracy target must be a finite number, got str 'x'"),
    (lambda: MetricTarget("acc", float("nan")), r"MetricTarget\('acc'\) value .* got nan"),
])
def test_bad_problem_or_target_value_is_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_misspelled_keyword_is_refused():
    with pytest.raises(TypeError, match="fit_intercep"):
        LinearRegression.from_arrays(np.ones((5, 2)), np.ones(5), fit_intercep=False)


@pytest.mark.parametrize("schedule, match", [
    ("step(step_size=1e400)", "step_size must be a positive integer, got '1e400'"),
    ("step(step_size=nan)", "step_size must be a positive integer, got 'nan'"),
    ("step(step_size=inf)", "step_size must be a positive integer, got 'inf'"),
    ("cosine(total_steps=1e400)", "total_steps must be a positive integer"),
    ("exponential(gamma=nan)", "gamma must be a finite float >= 0, got 'nan'"),
    ("step(step_size=3, step_size=5)", "gives step_size twice"),
])
def test_bad_schedule_parameter_is_named(schedule, match):
    with pytest.raises(ValueError, match=match):
        optcmp.sgd(schedule=schedule)


def test_schedule_through_set_is_one_line(capsys):
    from optcmp import cli

    rc = cli.main(["run", "--rows", "50", "--optimizers", "sgd", "--max-iter", "5",
                   "--no-progress", "--set", "sgd.schedule=step(step_size=1e400)"])
    err = capsys.readouterr().err
    assert rc == 2 and "step_size must be a positive integer" in err and "Traceback" not in err


def test_same_optimizer_twice_is_refused_and_different_ones_labelled():
    with pytest.raises(ValueError, match=r"gd\(learning_rate='auto'\) is listed twice"):
        optcmp.compare(P, ["gd", "gd"], max_iter=5, progress=False)


def test_backends_of_the_wrong_type_is_named():
    with pytest.raises(TypeError, match="backends must be .* got int 5"):
        optcmp.compare(P, ["gd"], backends=5, max_iter=5, progress=False)


def test_metric_target_on_a_problem_without_that_metric_is_refused():
    with pytest.raises(ValueError, match=r"needs the metric\(s\) \['accuracy'\], which problem "
                                         r"'linear_regression' does not report"):
        optcmp.compare(P, ["gd"], stopping=MetricTarget("accuracy", 0.9) | MaxIter(5),
                       progress=False)


def test_csv_cell_over_the_field_limit_names_the_file_and_line(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("a,y\n1,2\n" + "3," + "4" * (csv.field_size_limit() + 10) + "\n")
    with pytest.raises(ValueError, match=r"big.csv, line 3: cannot be read as CSV"):
        LinearRegression.from_csv(str(path))


def test_more_features_than_rows_gets_the_exact_lipschitz_constant_from_the_small_side():
    X = np.random.default_rng(0).standard_normal((20, 300))
    p = LinearRegression.from_arrays(X, np.ones(20))
    A = p.train_data["A"]
    # 2/n times the largest squared singular value of A, whichever side computes it
    assert p.lipschitz() == pytest.approx(2 * np.linalg.norm(A, 2) ** 2 / 20, rel=1e-12)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    comp = optcmp.compare(P, ["gd", "lbfgs"], max_iter=3, max_time=None, progress=False)
    path = tmp_path_factory.mktemp("saved") / "r.json"
    comp.save(path)
    return path


def _edit(saved, tmp_path, edit):
    import json

    d = json.loads(saved.read_text())
    edit(d)
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(d))
    return out


def test_results_file_with_ragged_trace_or_budget_run_with_a_time_to_target_is_refused(
        saved, tmp_path):
    def ragged(d):
        d["runs"][0]["trace"]["fun"] = d["runs"][0]["trace"]["fun"][:-1]

    path = _edit(saved, tmp_path, ragged)
    with pytest.raises(ValueError, match=r"edited.json: .*run 0 \(gd on numpy\) has trace "
                                         r"columns of different lengths"):
        optcmp.Comparison.load(path)

    def timed(d):
        run = next(r for r in d["runs"] if r["status"] == "max_iter")
        run["time_to_target"] = 0.5

    comp = optcmp.Comparison.load(saved)
    if any(r.status == "max_iter" for r in comp.runs):  # gd stops on its 3-iteration budget
        with pytest.raises(ValueError, match=r"is 'max_iter' \(a budget ended it\) but carries "
                                             "a time-to-target"):
            optcmp.Comparison.load(_edit(saved, tmp_path, timed))


@pytest.mark.parametrize("text, match", [("[" * 100_000 + "]" * 100_000, "nested too deep"),
                                         ("1" * 5000, "digits")])
def test_results_json_too_deep_or_with_a_huge_integer_names_the_file(text, match, tmp_path):
    path = tmp_path / "odd.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"odd.json: .*{match}"):
        optcmp.Comparison.load(path)


def test_tol_outside_zero_one_is_one_line_with_status_2(capsys):
    from optcmp import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--rows", "50", "--optimizers", "gd", "--no-progress", "--tol", "2"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "--tol: expected a relative suboptimality in (0, 1)" in err
    assert "Traceback" not in err


def test_no_target_warning_once_and_fairness_warnings_at_the_users_line():
    import warnings

    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        comp = optcmp.compare(P, ["gd", "lbfgs"], stopping=MaxIter(5), progress=False)
        comp.summary_table()
    no_target = [w for w in got if "has no target" in str(w.message)]
    assert len(no_target) == 1 and no_target[0].filename == __file__
    unfair = [w for w in got if type(w.message).__name__ == "UnfairComparisonWarning"]
    assert unfair and all(w.filename == __file__ for w in unfair)


def test_estimated_optimum_refuses_a_gradient_that_disagrees_with_the_objective():
    from optcmp.problems import from_function

    # a zero analytic gradient made every run "converged" at iteration 0 to f* = 27 (true f* 0):
    # from_function's own gradient check refuses it, and without that check the estimate does
    with pytest.raises(ValueError, match="gradient"):
        from_function(lambda ops, x, d: ops.sum((x - 3.0) ** 2), np.zeros(3),
                      grad=lambda x, d: np.zeros(3), optimum="estimate", name="zero_grad")
    p = from_function(lambda ops, x, d: ops.sum((x - 3.0) ** 2), np.zeros(3),
                      grad=lambda x, d: np.zeros(3), optimum="estimate", name="zero_grad",
                      check_grad=False)
    with pytest.raises(ValueError, match="gradient of problem 'zero_grad' disagrees with finite"):
        optcmp.compare(p, [optcmp.gd(0.1)], max_iter=5, progress=False)
    good = from_function(lambda ops, x, d: ops.sum((x - 3.0) ** 2), np.zeros(3),
                         grad=lambda x, d: 2 * (x - 3.0), optimum="estimate", name="right")
    assert good.optimum().fun == pytest.approx(0.0, abs=1e-12)


def test_convergence_at_iteration_0_to_an_estimated_optimum_is_flagged():
    from optcmp.problems import from_function

    # the start is the minimizer (f* = 0 at x = 3): the run meets the target before any step
    p = from_function(lambda ops, x, d: ops.sum((x - 3.0) ** 2), 3 * np.ones(2),
                      grad=lambda x, d: 2 * (x - 3.0), optimum="estimate", name="at_min")
    comp = optcmp.compare(p, [optcmp.gd(0.1)], max_iter=5, progress=False)
    assert comp.runs[0].status == "converged" and comp.runs[0].nit_to_target == 0
    assert "1 run(s) 'converged' at iteration 0 to the estimated f*" in comp.table()


def test_flags_and_arguments_name_what_they_allow(capsys):
    """--censor-ratio 0.5 passed the flag's check ("> 0") and failed later naming the Python
    argument; 'mgh:' ran problem 1; max_cpu_time=True ran a 1 s budget; check_gradient of an
    array raised AttributeError."""
    from optcmp import cli
    from optcmp.problems import LinearRegression

    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--censor-ratio", "0.5"])
    assert exc.value.code == 2
    assert "--censor-ratio: expected a finite number > 1, got '0.5'" in capsys.readouterr().err
    assert cli.main(["run", "--problem", "mgh:", "--no-progress"]) == 2
    assert "nothing after ':'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="max_cpu_time must be a number, got True"):
        optcmp.compare(LinearRegression(n_samples=100), ["gd"], max_cpu_time=True,
                       progress=False)
    with pytest.raises(TypeError, match="check_gradient needs an optcmp Problem"):
        optcmp.check_gradient(np.zeros(3))


@pytest.mark.parametrize("edit, match", [
    (lambda run: run.__setitem__("trace", 5), "a trace must be a JSON object of columns"),
    (lambda run: run["trace"].__setitem__("fun", [[1.0, 2.0]] * len(run["trace"]["fun"])),
     "trace column 'fun' must be a flat list of numbers"),
    (lambda run: run["trace"].__setitem__("iteration", [i + 0.5 for i in
                                                        run["trace"]["iteration"]]),
     "trace column 'iteration' must hold whole numbers, got 0.5"),
    (lambda run: run.update(nit_to_target=run["nit"] + 1000),
     r"nit_to_target=\d+ above nit=\d+"),
], ids=["trace-not-an-object", "trace-2d", "fractional-iteration", "count-above-total"])
def test_a_damaged_run_in_a_results_file_is_refused_naming_the_field(saved, tmp_path, edit,
                                                                      match):
    """A trace that is a number, a column of rows, an iteration 1.5, or a count to the target
    above the run's total: one line naming the file, the run and the field (the report used
    to print an AttributeError or a matplotlib shape error, or truncate 1.5 to 1)."""
    def damage(d):
        edit(d["runs"][0])

    with pytest.raises(ValueError, match=match):
        optcmp.Comparison.load(_edit(saved, tmp_path, damage))


def test_paths_that_cannot_hold_an_output_are_named_with_a_fitting_example(tmp_path, capsys):
    """A directory given to --report asks for an HTML file; a run store on a special file
    names the path and what a store must be."""
    from optcmp import cli

    base = ["run", "--rows", "50", "--optimizers", "gd", "--backends", "numpy",
            "--no-progress"]
    assert cli.main([*base, "--report", str(tmp_path)]) == 2
    assert f"give a file path (e.g. {tmp_path / 'report.html'})" in capsys.readouterr().err
    assert cli.main([*base, "--store", "/proc/self/status"]) == 2
    err = capsys.readouterr().err
    assert "cannot use /proc/self/status as the run store" in err and "Traceback" not in err


def test_odd_values_for_a_combined_target_or_a_report_image_format_are_refused():
    """A string tolerance used to be accepted and recorded as a string; an unknown image
    format was ignored."""
    from optcmp.stopping import CombinedTarget

    with pytest.raises(ValueError, match=r"CombinedTarget\(relative=...\) must be a number"):
        CombinedTarget(relative="0.5")
    assert CombinedTarget(relative=np.float64(1e-3)).to_dict()["relative"] == 1e-3
    t = optcmp.tune(P, [optcmp.gd], {"gd": {"learning_rate": [0.01, 0.1]}}, by="iterations",
                    budget=50, repeats=1, progress=False, threads=1, tol=1e-3)
    with pytest.raises(ValueError, match="images must be 'svg' or 'png', got 'gif'"):
        t.to_html(images="gif")
