"""User mistakes on the command line and in file IO: one line, exit 2, nothing run first."""

from __future__ import annotations

import os
import re
import warnings

import pytest

import optcmp
from optcmp import cli
from optcmp._io import check_output_path
from optcmp.cli.common import literal
from optcmp.comparison import Comparison
from optcmp.problems import LinearRegression
from optcmp.results import RunResult
from optcmp.store import Interrupted


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    # runs of other processes on this host would flag shared_host and print a warning
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


@pytest.fixture()
def no_work(monkeypatch):
    """compare/tune must not be reached: the mistake is caught before any run."""
    def boom(*a, **k):
        raise AssertionError("the work started before the arguments were checked")

    monkeypatch.setattr(optcmp, "compare", boom)
    monkeypatch.setattr(optcmp, "tune", boom)


def _one_line_error(capsys, argv, match) -> str:
    rc = cli.main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("optcmp: error: "), err
    assert re.search(match, err), err
    return err


def _run(label="gd", status="converged", nit=10, time=0.5, warmup=0.01, message="",
         **kw) -> RunResult:
    return RunResult(problem="linear_regression", optimizer=label, label=label, backend="numpy",
                     status=status, success=status == "converged", nit=nit, time=time,
                     warmup_time=warmup, fun=1.0, fstar=1.0 if status == "converged" else None,
                     time_to_target=time if status == "converged" else None,
                     nit_to_target=nit if status == "converged" else None,
                     message=message, **kw)


# ---------------------------------------------------------------------- 1. output paths
@pytest.mark.parametrize("argv, match", [
    (["run", "--rows", "50", "--out", "{tmp}/nope/dir/r.json"],
     r"--out: cannot write .*/nope/dir/r\.json: directory .*/nope/dir does not exist$"),
    (["run", "--rows", "50", "--report", "{tmp}/nope/r.html"],
     r"--report: cannot write .*/nope/r\.html: directory .*/nope does not exist$"),
    (["run", "--rows", "50", "--out", "{tmp}"],
     r"--out: .* is a directory; give a file path \(e\.g\. .*results\.json\)"),
    (["tune", "--rows", "50", "--out", "{tmp}/nope/t.json"],
     r"--out: cannot write .*/nope/t\.json: directory .*/nope does not exist"),
    (["tune", "--rows", "50", "--out", "{tmp}"], r"--out: .* is a directory"),
    (["run", "--rows", "50", "--out", "{tmp}/a.json", "--report", "{tmp}/a.json"],
     "--out and --report name the same file"),
])
def test_output_paths_checked_before_running(argv, match, tmp_path, capsys, no_work) -> None:
    _one_line_error(capsys, [a.replace("{tmp}", str(tmp_path)) for a in argv], match)


def test_report_outputs_checked_before_reading(tmp_path, capsys) -> None:
    src = tmp_path / "c.json"
    Comparison([_run()]).save(src)
    _one_line_error(capsys, ["report", str(src), "-o", str(tmp_path / "no" / "r.html")],
                    r"--output: cannot write .*r\.html: directory .*/no does not exist")
    _one_line_error(capsys, ["report", str(src), "--csv", str(tmp_path)],
                    "--csv: .* is a directory")
    (tmp_path / "file").write_text("x")
    _one_line_error(capsys, ["report", str(src), "--plots-dir", str(tmp_path / "file")],
                    "--plots-dir: .*file exists and is not a directory")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_unwritable_directory(tmp_path, capsys, no_work) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        _one_line_error(capsys, ["run", "--rows", "50", "--out", str(ro / "r.json")],
                        r"--out: cannot write .*r\.json: directory .*/ro is not writable")
    finally:
        ro.chmod(0o700)


def test_save_to_a_directory_names_it_and_leaves_nothing(tmp_path) -> None:
    d = tmp_path / "out"
    d.mkdir()
    comp = Comparison([_run()])
    with pytest.raises(IsADirectoryError, match=f"cannot save the comparison to {d}: it is a "
                                                "directory; give a file path"):
        comp.save(d)
    with pytest.raises(FileNotFoundError, match=r"directory .*/nope does not exist"):
        comp.save(tmp_path / "nope" / "r.json")
    assert sorted(os.listdir(tmp_path)) == ["out"] and os.listdir(d) == []
    with pytest.raises(IsADirectoryError, match="is a directory"):
        check_output_path(d)


def test_save_removes_its_temporary_file_on_error(tmp_path, monkeypatch) -> None:
    comp = Comparison([_run()])

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        comp.save(tmp_path / "r.json")
    assert os.listdir(tmp_path) == []  # no r.json, no temporary file


def test_save_writes_next_to_the_target(tmp_path, monkeypatch) -> None:
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(src)
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    Comparison([_run()]).save(tmp_path / "r.json")
    assert os.path.dirname(seen[0]) == str(tmp_path)
    assert os.listdir(tmp_path) == ["r.json"]
    assert Comparison.load(tmp_path / "r.json")[0].nit == 10


# ---------------------------------------------------------------------- 2. no tracebacks
def test_user_mistakes_are_one_line(tmp_path, capsys, no_work) -> None:
    _one_line_error(capsys, ["run", "--csv", str(tmp_path)],
                    f"--csv: {tmp_path} is a directory, not a CSV file")
    _one_line_error(capsys, ["run", "--rows", "50", "--store", str(tmp_path)],
                    r"--store: .* is a directory; give a file path \(e\.g\. .*runs\.jsonl\)")
    _one_line_error(capsys, ["run", "--rows", "50", "--store", str(tmp_path / "no" / "s.jsonl")],
                    r"--store: directory .*/no does not exist")
    _one_line_error(capsys, ["tune", "--rows", "50", "--store", str(tmp_path)],
                    "--store: .* is a directory")
    _one_line_error(capsys, ["run", "--tuned", str(tmp_path)],
                    "--tuned: .* is a directory; give the JSON file written by 'optcmp tune")


def test_store_that_is_not_a_store(tmp_path, capsys) -> None:
    f = tmp_path / "s.jsonl"
    f.write_text("hello\n")
    _one_line_error(capsys, ["run", "--rows", "50", "--optimizers", "gd", "--backends", "numpy",
                             "--store", str(f), "--no-progress"],
                    "is not an optcmp run store")


def test_report_of_a_directory_or_non_comparison(tmp_path, capsys) -> None:
    _one_line_error(capsys, ["report", str(tmp_path)],
                    f"{tmp_path} is a directory; give the comparison JSON file")
    x = tmp_path / "x.json"
    x.write_text("[1, 2]")
    _one_line_error(capsys, ["report", str(x), "-o", str(tmp_path / "r.html")],
                    f"{x}: not an optcmp comparison: expected a JSON object with format "
                    "'optcmp.Comparison', got a JSON array")
    x.write_bytes(b"\xff\xfe{}")
    _one_line_error(capsys, ["report", str(x), "-o", str(tmp_path / "r.html")],
                    r"not an optcmp comparison \(not UTF-8 text: byte 0xff at position 0\)")


@pytest.mark.parametrize("doc, match", [
    ([1, 2], "got a JSON array"),
    ("text", "got a JSON string"),
    (None, "got a JSON null"),
    (3, "got a JSON number"),
    ({"format": "optcmp.Comparison", "runs": [1]}, "'runs' must be a list of JSON objects"),
    ({"format": "optcmp.Comparison", "runs": [], "settings": [1]},
     "'settings' must be a JSON object, got a JSON array"),
    ({"format": "optcmp.Comparison", "format_version": "x"}, "format_version 'x' is not an "
                                                             "integer"),
])
def test_from_dict_rejects_non_comparisons(doc, match) -> None:
    with pytest.raises(ValueError, match=f"not an optcmp comparison: .*{match}"):
        Comparison.from_dict(doc)


def test_load_names_the_file(tmp_path) -> None:
    f = tmp_path / "x.json"
    f.write_text("[1, 2]")
    with pytest.raises(ValueError, match=f"^{re.escape(str(f))}: not an optcmp comparison"):
        Comparison.load(f)


# ---------------------------------------------------------------------- 3. ignored options
@pytest.mark.parametrize("argv, match", [
    (["run", "--csv", "{csv}", "--rows", "50"],
     "--rows applies to generated data; it cannot be used with --csv$"),
    (["run", "--csv", "{csv}", "--redraw-data"], "--redraw-data applies to generated data"),
    (["run", "--problem", "fizzbuzz", "--rows", "100"],
     r"--rows applies to linear_regression, logistic_regression only \(problem 'fizzbuzz' has "
     r"no n_samples\)$"),
    (["tune", "--problem", "fizzbuzz", "--rows", "100"], "--rows applies to linear_regression"),
    (["run", "--tuned", "t.json", "--optimizers", "gd"], "use --tuned or --optimizers, not both"),
    (["run", "--rows", "50", "--tol", "1e-3", "--target-loss", "1"],
     "give --tol or --target-loss, not both"),
    (["run", "--rows", "50", "--delimiter", ";"], "--delimiter needs --csv"),
    (["run", "--rows", "50", "--delimiter", "ab"],
     "argument --delimiter: expected one character"),
    (["run", "--rows", "50", "--target-loss", "nan"],
     "argument --target-loss: expected a finite number, got 'nan'"),
])
def test_options_that_would_be_ignored_are_errors(argv, match, tmp_path, capsys,
                                                  no_work) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("a,y\n1,2\n2,3\n")
    argv = [a.replace("{csv}", str(csv)) for a in argv]
    if match.startswith("argument"):  # argparse errors exit through SystemExit
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and re.search(match, err), err
    else:
        _one_line_error(capsys, argv, match)


def test_tol_on_a_problem_without_optimum_points_to_target_loss(capsys, no_work) -> None:
    err = _one_line_error(capsys, ["run", "--problem", "fizzbuzz", "--tol", "0.5"],
                          "--tol is a relative-suboptimality tolerance and needs the optimum, "
                          "which problem 'fizzbuzz' does not know")
    assert r"default target is LossTarget(value=0.0155" in err
    assert err.rstrip().endswith("give a loss target instead: --target-loss VALUE")


def test_target_loss_is_the_target(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    rc = cli.main(["run", "--rows", "200", "--backends", "numpy", "--optimizers", "lbfgs",
                   "--target-loss", "1.2", "--out", str(out), "--no-progress"])
    assert rc == 0
    comp = Comparison.load(out)
    assert comp.settings["target"] == "LossTarget(value=1.2)"
    (r,) = comp.runs
    assert r.status == "converged" and r.fun <= 1.2
    # the least-squares optimum of this data is 0.82 (noise 1): a loss of 1.2 is met well
    # before the default 1e-6 relative tolerance would be
    assert r.relative_suboptimality > 1e-6
    assert "target: LossTarget(value=1.2)" in capsys.readouterr().out


def test_tune_target_loss(capsys) -> None:
    rc = cli.main(["tune", "--rows", "200", "--optimizers", "gd", "--grid",
                   "learning_rate=0.0001,0.0003", "--by", "iterations", "--budget", "300",
                   "--repeats", "1", "--target-loss", "20", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    # f0 = 3175 on this data (optimum 0.82); after 300 steps lr 1e-4 is at 33, lr 3e-4 at 14
    rows = {ln.split()[1]: ln for ln in out.splitlines() if ln.startswith("gd ")}
    assert "<- best" in rows["learning_rate=0.0003"] and " 1/1" in rows["learning_rate=0.0003"]
    assert ">= 300 (budget)" in rows["learning_rate=0.0001"]


def test_tune_target_rule_in_python() -> None:
    from optcmp.stopping import LossTarget, MaxIter

    p = LinearRegression(n_samples=200)
    res = optcmp.tune(p, optcmp.gd, {"learning_rate": [3e-4]}, by="iterations", budget=300,
                      repeats=1, target=LossTarget(20.0))
    assert res.comparison.settings["target"] == "LossTarget(value=20.0)"
    (c,) = res.configs
    assert c.successes == 1 and c.median < 300
    assert res.comparison.runs[0].fun <= 20.0
    with pytest.raises(TypeError, match="target must be a target rule"):
        optcmp.tune(p, optcmp.gd, {"learning_rate": [0.01]}, target=MaxIter(3))


# ---------------------------------------------------------------------- 4. --set
@pytest.mark.parametrize("text, value", [
    ("0.1", 0.1), ("256", 256), ("1e-3", 1e-3), ("true", True), ("False", False),
    ("None", None), ("scipy", "scipy"), ("'auto'", "auto"), ("auto", "auto"),
])
def test_set_values_are_parsed(text, value) -> None:
    assert literal(text) == value and type(literal(text)) is type(value)


def test_set_applies_hyperparameters_and_impl(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    rc = cli.main(["run", "--rows", "200", "--backends", "numpy", "--optimizers", "gd,sgd,lbfgs",
                   "--set", "gd.learning_rate=0.01", "--set", "sgd.batch_size=32",
                   "--set", "SGD.learning_rate=0.001", "--set", "L-BFGS.impl=scipy",
                   "--max-iter", "5", "--out", str(out), "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    runs = {r.optimizer: r for r in Comparison.load(out)}
    assert runs["gd"].hyperparameters["learning_rate"] == 0.01
    assert runs["sgd"].hyperparameters["batch_size"] == 32
    assert runs["sgd"].hyperparameters["learning_rate"] == 0.001
    assert runs["lbfgs"].impl == "scipy"
    assert runs["gd"].label == "gd"  # the table keeps the optimizer's name
    capsys.readouterr()
    # impl reaches the spec: numpy's L-BFGS is scipy's only, so 'reference' is refused
    _one_line_error(capsys, ["run", "--rows", "50", "--backends", "numpy", "--optimizers",
                             "lbfgs", "--set", "lbfgs.impl=reference", "--no-progress"],
                    "optimizer 'lbfgs' has no impl='reference' on backend 'numpy'; available: "
                    r"\['scipy'\]")


@pytest.mark.parametrize("sets, match", [
    (["sgd.batch_size=3"], r"--set sgd\.batch_size=3: optimizer 'sgd' is not in --optimizers "
                           r"\(gd\)$"),
    (["adamax.lr=1"], r"--set adamax\.lr=1: unknown optimizer 'adamax'"),
    (["gd.lr=3"], r"--set gd\.lr=3: gd\(\) got unknown hyperparameter\(s\) \['lr'\]; valid: "
                  r"\['learning_rate'\]"),
    (["gd.learning_rate=-1"], r"--set gd\.learning_rate=-1: learning_rate must be a finite "
                              "float > 0 or 'auto', got -1"),
    (["gd.impl=bogus"], r"--set gd\.impl=bogus: impl must be one of"),
])
def test_set_errors_name_the_option(sets, match, capsys, no_work) -> None:
    argv = ["run", "--rows", "50", "--optimizers", "gd"]
    for s in sets:
        argv += ["--set", s]
    _one_line_error(capsys, argv, match)


@pytest.mark.parametrize("value", ["gd", "gd.learning_rate", "gd.=1", ".lr=1", "gd.lr="])
def test_set_syntax(value, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "--set", value])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "argument --set: expected OPTIMIZER.PARAM=VALUE (e.g. gd.learning_rate=0.1), got " \
           f"{value!r}" in err


def test_set_in_tune(tmp_path, capsys) -> None:
    out = tmp_path / "t.json"
    rc = cli.main(["tune", "--rows", "200", "--optimizers", "sgd", "--grid",
                   "learning_rate=0.001,0.003", "--set", "sgd.batch_size=16", "--by",
                   "iterations", "--budget", "200", "--tol", "0.5", "--repeats", "1", "--out",
                   str(out), "--no-progress"])
    assert rc == 0
    from optcmp.tune_result import load_specs

    (spec,) = load_specs(out)
    assert spec.hyperparameters["batch_size"] == 16
    capsys.readouterr()
    _one_line_error(capsys, ["tune", "--rows", "50", "--optimizers", "gd", "--grid",
                             "learning_rate=0.1,1", "--set", "gd.learning_rate=0.1"],
                    r"--set gd\.learning_rate=0\.1: learning_rate is tuned \(--grid "
                    r"learning_rate=\.\.\.\); a value is either fixed or tuned")
    _one_line_error(capsys, ["tune", "--rows", "50", "--optimizers", "gd", "--set",
                             "gd.learning_rate=0.1"],
                    "learning_rate is what the default grid of gd tunes")
    _one_line_error(capsys, ["tune", "--rows", "50", "--mode", "defaults", "--set",
                             "gd.learning_rate=0.1"], "--set and --mode defaults exclude")


def test_skip_reason_hints_at_set(capsys) -> None:
    rc = cli.main(["run", "--problem", "fizzbuzz", "--backends", "numpy", "--optimizers", "gd",
                   "--max-iter", "2", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 0 and "give learning_rate as a positive float" in out
    assert err == ("optcmp: hint: give hyperparameters on the command line, e.g. "
                   "--set gd.learning_rate=VALUE\n")


# ---------------------------------------------------------------------- 5. CSV
def test_csv_not_utf8(tmp_path, capsys) -> None:
    f = tmp_path / "d.csv"
    f.write_bytes(b"a,b,y\n1,2,3\n\xe9,1,2\n")
    _one_line_error(capsys, ["run", "--csv", str(f)],
                    rf"--csv {re.escape(str(f))}: not UTF-8 text \(byte 0xe9 at position 12, "
                    r"line 3\)")
    with pytest.raises(ValueError, match=r"not UTF-8 text \(byte 0xe9 at position 12"):
        LinearRegression.from_csv(f)


@pytest.mark.parametrize("sep, shown", [(";", "';'"), ("\t", "'\\\\t'"), ("|", "'\\|'")])
def test_csv_other_separator_is_named(sep, shown, tmp_path, capsys) -> None:
    f = tmp_path / "d.csv"
    f.write_text(sep.join("abcy") + "\n" + sep.join("1234") + "\n")
    header = repr(sep.join("abcy")).replace("\\", "\\\\").replace("|", "\\|")
    _one_line_error(capsys, ["run", "--csv", str(f)],
                    f"only one column found in the header {header}; is the file separated by "
                    f"{shown}\\? \\(use delimiter={shown}; on the command line --delimiter "
                    f"{shown}\\)")


def test_csv_delimiter_option(tmp_path, capsys) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a;b;y\n1;2;5.1\n2;1;4.9\n3;4;11.2\n4;3;11.0\n")
    rc = cli.main(["run", "--csv", str(f), "--delimiter", ";", "--backends", "numpy",
                   "--optimizers", "lbfgs", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0 and "n_samples=4, n_features=2" in out
    p = LinearRegression.from_csv(f, delimiter=";")
    assert p.n_samples == 4 and p.spec()["n_features"] == 2
    g = tmp_path / "t.tsv"
    g.write_text("a\tb\ty\n1\t2\t5\n2\t1\t4\n3\t3\t3\n")
    for arg in ("\\t", "tab"):
        assert cli.main(["run", "--csv", str(g), "--delimiter", arg, "--backends", "numpy",
                         "--optimizers", "lbfgs", "--no-progress"]) == 0
    assert "n_samples=3" in capsys.readouterr().out


def test_csv_duplicate_columns(tmp_path, capsys) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,a,y,y,b\n1,2,3,4,5\n")
    msg = r"duplicate column name\(s\) \['a', 'y'\] in the header \['a', 'a', 'y', 'y', 'b'\]"
    with pytest.raises(ValueError, match=msg):
        LinearRegression.from_csv(f)
    _one_line_error(capsys, ["run", "--csv", str(f)], msg)


def test_csv_byte_order_mark_is_dropped(tmp_path) -> None:
    f = tmp_path / "d.csv"
    f.write_bytes("a,b,y\n1,2,5\n2,1,4\n3,3,3\n".encode("utf-8-sig"))
    p = LinearRegression.from_csv(f, features=["a", "b"], targets="y")
    assert p.n_samples == 3 and p.spec()["n_features"] == 2


def test_csv_bad_delimiter_argument(tmp_path) -> None:
    f = tmp_path / "d.csv"
    f.write_text("a,y\n1,2\n")
    with pytest.raises(ValueError, match="delimiter must be a single character, got ';;'"):
        LinearRegression.from_csv(f, delimiter=";;")


@pytest.mark.parametrize("seed", ["a", -1, 1.5, True, None])
def test_seed_must_be_a_non_negative_integer(seed) -> None:
    with pytest.raises(ValueError, match=f"seed must be a non-negative integer, got "
                                         f"{re.escape(repr(seed))}"):
        LinearRegression(n_samples=10, seed=seed)


# ---------------------------------------------------------------------- 6. Ctrl-C
def _fake_interrupt(store):
    comp = Comparison([_run("lbfgs", nit=7)], problem={"problem": "linear_regression"})

    def compare(*a, **k):
        where = store
        msg = ("interrupted: 1 of 5 runs are finished and kept in x" if where else
               "interrupted: 1 of 5 runs finished (kept in this exception's .comparison)")
        raise Interrupted(msg, comp, where, 1, 5)

    return compare


def test_ctrl_c_prints_finished_runs_and_how_to_resume(monkeypatch, capsys) -> None:
    monkeypatch.setattr(optcmp, "compare", _fake_interrupt(None))
    rc = cli.main(["run", "--rows", "50", "--no-progress"])
    out, err = capsys.readouterr()
    assert rc == 130
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["optimizer", "backend"] and lines[2].startswith("lbfgs ")
    assert err == ("optcmp: interrupted: 1 of 5 runs finished (table above); the run(s) in "
                   "progress were discarded. To keep finished runs on disk and resume later, run "
                   "the command with --store runs.jsonl.\n")
    assert ".comparison" not in err


def test_ctrl_c_with_store_keeps_the_store_message(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.setattr(optcmp, "compare", _fake_interrupt(str(tmp_path / "s.jsonl")))
    rc = cli.main(["run", "--rows", "50", "--store", str(tmp_path / "s.jsonl")])
    out, err = capsys.readouterr()
    assert rc == 130 and "lbfgs" in out
    assert err == "optcmp: interrupted: 1 of 5 runs are finished and kept in x\n"


def test_ctrl_c_in_tune(monkeypatch, capsys) -> None:
    def tune(*a, **k):
        raise Interrupted("interrupted: ... .comparison", Comparison([]), None, 3, 10)

    monkeypatch.setattr(optcmp, "tune", tune)
    assert cli.main(["tune", "--rows", "50"]) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("optcmp: interrupted: 3 of 10 tuning runs finished; the run(s) in progress "
                   "were discarded. To keep finished runs on disk and resume later, run the "
                   "command with --store tune.jsonl.\n")


# ---------------------------------------------------------------------- 7. warnings
def test_warnings_are_one_line_each_and_once(monkeypatch, capsys) -> None:
    def compare(*a, **k):
        warnings.warn("backend 'jax' is slow;\n  be patient", UserWarning, stacklevel=2)
        warnings.warn("backend 'jax' is slow;\n  be patient", UserWarning, stacklevel=1)
        warnings.warn("another thing", RuntimeWarning, stacklevel=2)
        return Comparison([_run()])

    monkeypatch.setattr(optcmp, "compare", compare)
    before = warnings.showwarning
    assert cli.main(["run", "--rows", "50", "--no-progress"]) == 0
    assert warnings.showwarning is before  # restored
    err = capsys.readouterr().err
    assert err == ("optcmp: warning: backend 'jax' is slow; be patient\n"
                   "optcmp: warning: another thing\n")


# ---------------------------------------------------------------------- 8. tables
def test_failed_before_the_first_step_shows_no_timings() -> None:
    comp = Comparison([_run("gd", status="failed", nit=0, time=0.0, warmup=0.0,
                            message="boom"),
                       _run("sgd", status="failed", nit=0, time=0.0, warmup=0.002,
                            message="boom in step 1")])
    rows = {ln.split()[0]: ln.split() for ln in comp.table(wide=True).splitlines()[2:4]}
    assert rows["gd"][-4:-2] == ["-", "-"]  # the timed and warm-up columns
    assert rows["sgd"][-4:-2] == ["-", "2.0ms"]  # the warm-up ran: it is shown


def test_tune_table_dashes_match_the_headers() -> None:
    p = LinearRegression(n_samples=200)
    with pytest.warns(UserWarning, match="no configuration of gd reached the target"):
        res = optcmp.tune(p, optcmp.gd, {"learning_rate": [0.01, 0.02]}, by="iterations",
                          budget=50, repeats=1)
    head, dashes = res.table().splitlines()[:2]
    names = re.split(r"\s{2,}", head.strip())
    assert names == ["optimizer", "configuration", "median to target (it)", "reached"]
    # one dash run per named column, as wide as the column: none for the '<- best' marker
    assert [len(d) for d in dashes.split()] == [
        len("optimizer"), len("learning_rate=0.01"), len(names[2]), len(names[3])]


def test_a_warning_during_the_progress_bar_starts_its_own_line(capsys):
    # the warning used to be glued to the end of the bar's line:
    # "lbfgs on numpy:   0%|          | 0/1 [00:00<?, ?run/s]optcmp: warning: tol=1e-20 ..."
    assert cli.main(["run", "--rows", "1000", "--backends", "numpy", "--optimizers", "lbfgs",
                     "--tol", "1e-20", "--threads", "1"]) == 0
    err = capsys.readouterr().err
    assert "optcmp: warning: tol=1e-20 asks for" in err
    assert re.search(r"(^|\n)optcmp: warning: tol=1e-20", err.replace("\r", "\n"))
    assert not re.search(r"run/s\]optcmp: warning", err)


def test_ctrl_c_during_the_verdict_repetitions_still_writes_the_finished_table(tmp_path,
                                                                               monkeypatch):
    # every run of the table had finished, but Ctrl-C while the two fastest entries were
    # repeated for the verdict used to exit 130 without writing --out / --report
    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(optcmp.sweep, "confirm_leaders", interrupted)
    out = tmp_path / "r.json"
    assert cli.main(["run", "--rows", "1000", "--backends", "numpy", "--optimizers",
                     "lbfgs,gd", "--threads", "1", "--no-progress", "--out", str(out)]) == 130
    saved = Comparison.load(out)
    assert sorted(r.optimizer for r in saved.runs) == ["gd", "lbfgs"]
    assert not saved.settings.get("partial")
