"""Nothing lost, nothing overwritten, bad input refused with a message naming it.

One test (or one small group) per guarantee; the signal tests run ``optcmp`` in a subprocess. Small problems and iteration budgets only: nothing here depends on timing.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import optcmp
from optcmp.problems import LinearRegression


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def small_comp():
    p = LinearRegression(n_samples=300, seed=1)
    return optcmp.compare(p, ["gd", "lbfgs"], max_iter=30, max_time=None, progress=False)


# ---------------------------------------------------------------------- atomic CSV/Parquet
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_csv_and_parquet_export_is_atomic(small_comp, tmp_path, monkeypatch, fmt):
    """A write that fails half-way leaves the old file as it was and no temporary file."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    out.mkdir()
    path = out / f"traces.{fmt}"
    path.write_bytes(b"the user's old file\n")
    import optcmp.analysis.export as export

    real_rows = export._rows

    def rows_then_fail(cols):
        for i, row in enumerate(real_rows(cols)):
            if i == 3:
                raise OSError(28, "No space left on device")
            yield row

    with monkeypatch.context() as m:
        if fmt == "csv":
            m.setattr(export, "_rows", rows_then_fail)
            with pytest.raises(OSError, match="No space left"):
                small_comp.to_csv(path)
        else:
            import pyarrow.parquet as pq

            real_write = pq.write_table

            def write_then_fail(table, where, **kw):
                real_write(table, where, **kw)  # the bytes are on disk, then the disk fills up
                raise OSError(28, "No space left on device")

            m.setattr(pq, "write_table", write_then_fail)
            with pytest.raises(OSError, match="No space left"):
                small_comp.to_parquet(path)
    assert path.read_bytes() == b"the user's old file\n"
    assert os.listdir(out) == [path.name]
    n = small_comp.to_csv(path) if fmt == "csv" else small_comp.to_parquet(path)
    assert n == sum(len(r.trace) for r in small_comp.runs) > 0
    assert os.listdir(out) == [path.name]


# ---------------------------------------------------------------------- run store on a full disk
def test_a_store_write_on_a_full_disk_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    """A run record cut by a full disk once stayed in the store as a torn partial line: the
    store's bytes are those before the failed write, and the next sweep reads every run back
    without a warning."""
    import warnings

    import optcmp.store

    p = LinearRegression(n_samples=300, seed=1)
    path = tmp_path / "runs.jsonl"
    optcmp.compare(p, ["gd"], max_iter=30, max_time=None, progress=False, store=str(path))
    real_write, kept = os.write, []

    def half_then_full(fd, data):
        if b'"record":"run"' not in bytes(data):
            return real_write(fd, data)
        kept.append(path.read_bytes())
        real_write(fd, bytes(data)[: len(data) // 2])  # part of the line reaches the disk
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(optcmp.store.os, "write", half_then_full)
        with pytest.raises(OSError, match="No space left"):
            optcmp.compare(p, ["gd", "lbfgs"], max_iter=30, max_time=None, progress=False,
                           store=str(path))
    assert len(kept) == 1 and path.read_bytes() == kept[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = optcmp.compare(p, ["gd", "lbfgs"], max_iter=30, max_time=None,
                               progress=False, store=str(path))
    assert (again.settings["store"]["reused"], again.settings["store"]["executed"]) == (1, 1)


# ---------------------------------------------------------------------- outputs vs inputs
@pytest.fixture()
def no_work(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the work started before the paths were checked")

    monkeypatch.setattr(optcmp, "compare", boom)
    monkeypatch.setattr(optcmp, "tune", boom)


def _refused(capsys, argv, *names):
    from optcmp import cli

    rc = cli.main(argv)
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("optcmp: error: "), err
    for n in names:
        assert n in err, err
    return err


@pytest.mark.parametrize("argv, names", [
    (["run", "--csv", "{d}/data.csv", "--out", "{d}/data.csv"], ["--out", "--csv", "your data"]),
    (["run", "--csv", "{d}/data.csv", "--report", "{d}/link.html"],
     ["--report", "--csv", "{d}/link.html"]),  # a symlink to the data, followed
    (["run", "--rows", "50", "--out", "{d}/runs.jsonl", "--store", "{d}/runs.jsonl"],
     ["--out", "--store", "run store"]),
    (["run", "--rows", "50", "--report", "{d}/sub/../runs.jsonl", "--store", "{d}/runs.jsonl"],
     ["--report", "--store"]),
    (["run", "--csv", "{d}/data.csv", "--store", "{d}/data.csv"], ["--store", "--csv"]),
    (["run", "--rows", "50", "--tuned", "{d}/t.json", "--out", "{d}/t.json"],
     ["--out", "--tuned"]),
    (["run", "--rows", "50", "--out", "{d}/a.json", "--report", "{d}/a.json"],
     ["--out and --report name the same file"]),
    (["report", "{d}/r.json", "-o", "{d}/r.json"], ["--output", "results"]),
    (["report", "{d}/r.json", "--csv", "{d}/hard.json"], ["--csv", "results"]),  # a hard link
    (["report", "{d}/r.json", "--csv", "{d}/x.csv", "--parquet", "{d}/x.csv"],
     ["--csv", "--parquet"]),
    (["tune", "--csv", "{d}/data.csv", "--out", "{d}/data.csv"], ["--out", "--csv"]),
    (["tune", "--rows", "50", "--out", "{d}/t.jsonl", "--store", "{d}/t.jsonl"],
     ["--out", "--store"]),
])
def test_outputs_never_replace_inputs(argv, names, tmp_path, capsys, no_work):
    """Every output path is compared with every input, store and other output path."""
    d = tmp_path
    (d / "sub").mkdir()
    (d / "data.csv").write_text("a,b,y\n1,2,3\n4,5,6\n7,8,10\n")
    os.symlink(d / "data.csv", d / "link.html")
    (d / "r.json").write_text("{}")
    os.link(d / "r.json", d / "hard.json")
    (d / "t.json").write_text("{}")
    (d / "runs.jsonl").write_text("")
    before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    argv = [a.replace("{d}", str(d)) for a in argv]
    _refused(capsys, argv, *(n.replace("{d}", str(d)) for n in names))
    assert {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()} == before


# ---------------------------------------------------------------------- --set, --tuned
@pytest.mark.parametrize("sets", [
    ["gd.learning_rate=0.1", "gd.learning_rate=0.2"],
    ["gd.learning_rate=0.1", "gradient_descent.learning_rate=0.2"],  # an alias of gd
    ["lbfgs.impl=scipy", "lbfgs.impl=reference"],
])
def test_conflicting_set_values_refused(sets, capsys, no_work):
    argv = ["run", "--rows", "50", "--optimizers", "gd,lbfgs"]
    for s in sets:
        argv += ["--set", s]
    err = _refused(capsys, argv, f"--set {sets[0]}", f"--set {sets[1]}", "two values")
    assert "give one" in err


def test_repeated_equal_set_value_is_fine(capsys, tmp_path):
    from optcmp import cli

    rc = cli.main(["run", "--rows", "50", "--optimizers", "gd", "--backends", "numpy",
                   "--max-iter", "3", "--no-progress", "--set", "gd.learning_rate=0.1",
                   "--set", "gd.learning_rate=0.1"])
    assert rc == 0, capsys.readouterr().err


@pytest.mark.parametrize("specs", [
    [{"name": "gd", "hyperparameters": {"learning_rate": -1.0}}],
    [{"name": "no_such_optimizer"}],
    [{"hyperparameters": {}}],
    [],
])
def test_tuned_file_errors_name_the_file(specs, tmp_path, capsys, no_work):
    import json

    path = tmp_path / "tuned.json"
    path.write_text(json.dumps({"format": "optcmp.tune", "specs": specs}))
    _refused(capsys, ["run", "--rows", "50", "--tuned", str(path)], f"--tuned {path}")


# ---------------------------------------------------------------------- callbacks checked
def _no_arg():
    return None


@pytest.mark.parametrize("callback, names", [
    (42, ["42", "int"]),
    ("print", ["'print'", "str"]),
    (_no_arg, ["_no_arg()", "one argument"]),
    (lambda a, b: None, ["(a, b)", "one argument"]),
])
def test_bad_callback_refused_before_any_run(callback, names, monkeypatch):
    from optcmp.engine.session import Session

    def boom(*a, **k):
        raise AssertionError("a run started")

    monkeypatch.setattr(Session, "__init__", boom)
    p = LinearRegression(n_samples=50)
    for call in (lambda: optcmp.compare(p, ["gd"], callback=callback, progress=False),
                 lambda: optcmp.run(p, "gd", callback=callback)):
        with pytest.raises(TypeError, match="callback must be callable") as info:
            call()
        for n in names:
            assert n in str(info.value)


def test_good_callbacks_accepted():
    p = LinearRegression(n_samples=50)
    seen = []
    r = optcmp.run(p, "gd", max_iter=3, callback=lambda res, *extra: seen.append(res.nit))
    assert r.status == "max_iter" and seen[:2] == [0, 2]
    assert optcmp.run(p, "gd", max_iter=3, callback=len).status == "max_iter"


# ---------------------------------------------------------------------- read-only iterate
def _numpy_variants():
    from optcmp.optimizers import optimizer_names
    from optcmp.optimizers.base import resolve_impl

    out = []
    for name in optimizer_names():
        for impl in ("reference", "scipy"):
            try:
                resolve_impl(optcmp.get_optimizer(name, impl=impl), "numpy")
            except ValueError:
                continue
            out.append((name, impl))
    return out


@pytest.mark.parametrize("name, impl", _numpy_variants())
def test_callback_gets_a_read_only_copy_of_the_iterate(name, impl):
    """A callback that tries to change its iterate changes nothing: the run is bit-identical."""
    p = LinearRegression(n_samples=200, seed=2)
    # Muon on a problem without a matrix: every parameter to its AdamW side, asked explicitly
    extra = {"partition": []} if name == "muon" else {}
    spec = optcmp.get_optimizer(name, impl=impl, **extra)
    kw = dict(max_iter=12, max_time=None, tol=1e-12)
    if spec.name in ("sgd",):
        kw["eval_every"] = 1
    plain = optcmp.run(p, spec, **kw)
    if plain.status == "diverged":  # momentum's default step is too long for these data
        spec = optcmp.get_optimizer(name, impl=impl, learning_rate=1e-4, **extra)
        plain = optcmp.run(p, spec, **kw)
    seen = {"calls": 0, "refused": 0}

    def meddle(res):
        seen["calls"] += 1
        assert not res.x.flags.writeable
        try:
            res.x[:] = 1e6
        except ValueError:
            seen["refused"] += 1
        res.x = np.full_like(res.x, np.nan)  # rebinding the field is harmless too

    r = optcmp.run(p, spec, callback=meddle, **kw)
    assert seen["calls"] >= 2 and seen["refused"] == seen["calls"]
    assert r.status == plain.status != "diverged", r.message
    assert r.nit == plain.nit and r.fun == plain.fun
    np.testing.assert_array_equal(r.x, plain.x)
    np.testing.assert_array_equal(r.trace.fun, plain.trace.fun)


# ---------------------------------------------------------------------- divergence wins
@pytest.mark.parametrize("backend", ["numpy", pytest.param("torch", marks=pytest.mark.skipif(
    __import__("importlib").util.find_spec("torch") is None, reason="torch is not installed"))])
@pytest.mark.parametrize("opt, budget", [
    ("gd", {"max_iter": 1}),    # the budget fires at a check without an objective value
    ("gd", {"max_iter": 2}),    # ... and at the check that sees the explosion
    ("gd", {"max_evals": 2}),
    ("sgd", {"max_iter": 1}),   # a minibatch step between evaluations
])
def test_divergence_beats_a_budget_at_the_same_check(opt, budget, backend):
    p = LinearRegression(n_samples=2000, seed=0)
    spec = optcmp.get_optimizer(opt, learning_rate=1e6)
    r = optcmp.run(p, spec, backend=backend, max_time=None, **budget)
    assert r.status == "diverged", (r.status, r.message)
    assert "objective exploded" in r.message or "non-finite" in r.message, r.message
    assert not (np.isfinite(r.fun) and r.fun < 1e10 * r.f0)
    # a run that does not diverge still ends on its budget
    calm = optcmp.run(p, opt, backend=backend, max_time=None, **budget)
    assert calm.status == next(iter(budget)), calm.message


def test_divergence_is_checked_before_the_budgets():
    from optcmp.engine.monitor import Monitor
    from optcmp.stopping import default_stopping
    from optcmp.timing import Stopwatch

    rule = default_stopping(1e-6, max_iter=3, max_time=None, max_evals=3)
    m = Monitor(rule, Stopwatch(), LinearRegression(n_samples=10), lambda: np.zeros(5),
                f0=10.0, fstar=1.0, confirm64=False, callback=None)
    assert m.observe(3, 2, float("nan"), 1.0, 3, 3)
    assert m.fired is not None and m.fired.kind == "divergence"


# ---------------------------------------------------------------------- data checks
def test_zero_column_names_the_zero_curvature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    X[:, 1] = 0.0
    y = X @ np.array([1.0, 2.0, -1.0]) + 0.5
    p = LinearRegression.from_arrays(X, y, feature_names=["rooms", "floors", "age"])
    r = optcmp.run(p, "diag_newton", max_iter=50)
    assert r.status == "skipped", (r.status, r.message)
    assert "curvature diagonal, which is zero at coef[1] (column 1, 'floors')" in r.message
    assert "zero in every row" in r.message
    # the other optimizers still run on it (lstsq's minimum-norm optimum)
    assert optcmp.run(p, "lbfgs", max_iter=200).status == "converged"


@pytest.mark.parametrize("scale, column, what", [
    (1e200, "'b'", "sum of squares exceeds what float64 can hold"),
    (1e-200, "'b'", "squares underflow to 0"),
])
def test_unrepresentable_scale_refused_naming_the_column(scale, column, what):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    X[:, 1] *= scale
    with pytest.raises(ValueError, match=what) as info:
        LinearRegression.from_arrays(X, X[:, 0], feature_names=["a", "b", "c"])
    assert f"X column 1 ({column})" in str(info.value) and "Rescale" in str(info.value)
    with pytest.raises(ValueError, match=r"y column 0 \('t'\)"):
        LinearRegression.from_arrays(X[:, [0]], X[:, 1], target_names=["t"])


# ---------------------------------------------------------------------- CSV and frames
@pytest.mark.parametrize("cell, hint", [
    ("1_000", "digit separators"),
    ("1_0.5", "digit separators"),
    ("\uff11\uff12", "ASCII digits"),   # fullwidth 12, read by float()
    ("\u0661\u0662", "ASCII digits"),   # Arabic-Indic 12
    ("1,5", ""),
])
def test_csv_cell_not_a_plain_number_refused(cell, hint, tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(f"a;rooms;y\n1;2;3\n4;{cell};6\n7;8;10\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3: column 'rooms' is not numeric") as info:
        LinearRegression.from_csv(path, delimiter=";")
    assert repr(cell) in str(info.value) and hint in str(info.value)


def test_csv_plain_numbers_still_read(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a,b,y\n1e3,-.5,+2.\n4,5,6\n7,8,10\n")
    p = LinearRegression.from_csv(path)
    np.testing.assert_array_equal(p.train_data["A"][0], [1000.0, -0.5, 1.0])
    assert p.train_data["y"][0] == 2.0


@pytest.mark.parametrize("categories", [[1, 2, 3], [1.5, 2.5, 3.5], ["x", "y", "z"]])
def test_categorical_columns_refused_whatever_the_categories(categories):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 2.0, 2.5, 4.0]})
    df["kind"] = pd.Categorical([categories[i % 3] for i in range(4)])
    with pytest.raises(ValueError, match="column 'kind' is categorical"):
        LinearRegression.from_frame(df, ["a", "kind"], "y")
    df["when"] = pd.to_timedelta([1, 2, 3, 4], unit="s")
    with pytest.raises(ValueError, match="column 'when' is not numeric"):
        LinearRegression.from_frame(df, ["a", "when"], "y")
    assert LinearRegression.from_frame(df, ["a"], "y").n_params == 2


@pytest.mark.parametrize("kw, match", [
    ({"feature_names": ["a", "b", "c"]}, r"feature_names has 3 name\(s\) .* X has 2 column"
                                         r"\(s\): name\(s\) \['c'\] have no column"),
    ({"feature_names": ["a"]}, r"column\(s\) \[1\] of X have no name"),
    ({"feature_names": ["a", "a"]}, r"feature_names names column\(s\) \['a'\] more than once"),
    ({"feature_names": "ab"}, "must be a list of column names"),
    ({"target_names": ["t", "u"]}, r"target_names has 2 name\(s\) .* y has 1 column"),
])
def test_feature_and_target_names_of_the_wrong_length_or_repeated_refused(kw, match):
    X = np.arange(20.0).reshape(10, 2) % 7
    with pytest.raises(ValueError, match=match):
        LinearRegression.from_arrays(X, X[:, 0] + 1.0, **kw)


# ---------------------------------------------------------------------- tol resolution
def test_tolerance_below_float64_resolution_warns_and_never_converges(capsys):
    from optcmp.stopping import AbsoluteSuboptimality, MaxIter

    p = LinearRegression(n_samples=500, seed=3)
    fstar = p.optimum().fun
    f0 = p.fun64(p.init_params(0))
    eps = np.finfo(np.float64).eps
    limit = eps * abs(fstar) / (f0 - fstar)
    for call in (lambda: optcmp.compare(p, ["lbfgs", "gd"], tol=1e-30, max_iter=300,
                                        progress=False).runs,
                 lambda: [optcmp.run(p, "lbfgs", tol=1e-30, max_iter=300)]):
        with pytest.warns(UserWarning, match="below what float64 can resolve") as rec:
            runs = call()
        text = next(str(w.message) for w in rec if "float64 can resolve" in str(w.message))
        assert f"float64 eps x |f*| = {eps * abs(fstar):.3g}" in text
        assert f"relative suboptimality of {limit:.3g}" in text and "never met" in text
        for r in runs:  # L-BFGS reaches f* to rounding: before the fix it "converged" below f*
            assert r.status != "converged" and r.time_to_target is None, r.status
    with pytest.warns(UserWarning, match="resolution limit is float64 eps"):
        r = optcmp.run(p, "lbfgs", stopping=AbsoluteSuboptimality(1e-20) | MaxIter(300))
    assert r.status != "converged"
    # a resolvable tolerance converges, and not below f* by more than rounding
    r = optcmp.run(p, "lbfgs", tol=max(1e-13, 10 * limit), max_iter=500)
    assert r.status == "converged" and r.fun - fstar >= -4 * eps * abs(fstar)
    from optcmp import cli

    assert cli.main(["run", "--rows", "500", "--seed", "3", "--tol", "1e-30", "--max-iter",
                     "300", "--optimizers", "lbfgs", "--backends", "numpy", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert " ".join(err.split()).count("resolution limit is float64 eps") == 1, err


# ---------------------------------------------------------------------- sizes
def test_absurd_repeats_refused_before_planning(monkeypatch, capsys):
    import optcmp.sweep as sweep

    def boom(*a, **k):
        raise AssertionError("the sweep planned its tasks")

    monkeypatch.setattr(sweep.plan.Plan, "tasks", boom)
    p = LinearRegression(n_samples=50)
    with pytest.raises(ValueError, match=r"repeats=1,000,000,000 x 1 backend\(s\) x 2 "
                                         r"optimizer\(s\) = 2,000,000,000 runs; one sweep holds "
                                         r"at most 1,000,000 runs"):
        optcmp.compare(p, ["gd", "lbfgs"], repeats=10**9, progress=False)
    from optcmp import cli

    assert cli.main(["run", "--rows", "50", "--repeats", "1000000000", "--backends", "numpy",
                     "--optimizers", "gd"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1,000,000,000 runs" in err


def test_rows_that_cannot_fit_refused_before_allocating(monkeypatch, capsys):
    import optcmp._io as io_mod

    monkeypatch.setattr(io_mod, "available_memory", lambda: 2 * 10**9)
    with pytest.raises(ValueError, match=r"generating 1,000,000,000 rows x 4 feature\(s\) needs "
                                         r"about 128\.0 GB of memory; 2\.0 GB is available"):
        LinearRegression(n_samples=10**9)
    assert LinearRegression(n_samples=1000).n_samples == 1000  # small: not even asked
    from optcmp import cli

    assert cli.main(["run", "--rows", "1000000000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs about 128.0 GB" in err and "2.0 GB" in err
    assert io_mod.format_bytes(1.5e12) == "1.5 TB"


def test_memory_error_is_one_line(monkeypatch, capsys):
    from optcmp import cli

    def oom(*a, **k):
        raise MemoryError("Unable to allocate 7.45 GiB for an array")

    monkeypatch.setattr(optcmp, "compare", oom)
    assert cli.main(["run", "--rows", "50", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of memory: Unable to allocate 7.45 GiB" in err
    real = __import__("optcmp._io", fromlist=["x"]).available_memory()
    assert real is None or real > 0


# ---------------------------------------------------------------------- SIGTERM / Ctrl-C
#: Runs ``optcmp run`` with its 4th run held until a signal comes from outside: the run starts,
#: writes the marker file and waits; the test process then sends the signal.
_DRIVER = """
import os, signal, sys, time
# a shell without job control starts background jobs with SIGINT ignored, and children inherit
# that: restore Python's own handler so that the test's SIGINT is a KeyboardInterrupt
signal.signal(signal.SIGINT, signal.default_int_handler)
from optcmp import cli
from optcmp.engine.session import Session

marker, argv = sys.argv[1], sys.argv[2:]
real, started = Session.start, []

def held_start(*a, **k):
    started.append(1)
    if len(started) == 4:
        open(marker, "w").close()
        time.sleep(120)  # the signal's handler raises here
    return real(*a, **k)

Session.start = held_start
sys.exit(cli.main(argv))
"""


@pytest.mark.parametrize("sig, status, said", [("SIGTERM", 143, "terminated (SIGTERM)"),
                                               ("SIGINT", 130, "interrupted")])
def test_signal_mid_sweep_writes_every_finished_run(sig, status, said, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    from optcmp.comparison import Comparison

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    marker, out, report = tmp_path / "started", tmp_path / "r.json", tmp_path / "r.html"
    argv = ["run", "--rows", "200", "--optimizers", "gd,lbfgs,sgd", "--backends", "numpy",
            "--repeats", "2", "--max-iter", "40", "--no-progress", "--out", str(out),
            "--report", str(report)]
    env = {**os.environ, "PYTHONPATH": root, "OPTCMP_ACTIVITY_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, str(marker), *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(1200):  # the 4th run has started (polling; nothing timed is asserted)
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert marker.exists(), proc.communicate()[1]
        proc.send_signal(getattr(signal, sig))
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, stderr
    assert f"optcmp: {said}: 3 of 6 runs finished" in stderr, stderr
    assert "written, marked partial, to" in stderr and str(out) in stderr, stderr
    comp = Comparison.load(out)
    assert [(r.label, r.repeat) for r in comp.runs] == [("gd", 0), ("lbfgs", 0), ("sgd", 0)]
    assert all(r.status in ("max_iter", "converged", "stalled", "projected") for r in comp.runs)
    assert comp.settings["partial"].endswith("3 of 6 runs finished")
    assert "PARTIAL" in report.read_text(encoding="utf-8")
    for label in ("gd", "lbfgs", "sgd"):
        assert label in stdout  # the table of the finished runs


_IMPORT_DRIVER = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
nth, sig, argv = int(sys.argv[1]), getattr(signal, sys.argv[2]), sys.argv[3:]
seen = [0]

class SignalAtNthScipyImport:
    def find_spec(self, name, path=None, target=None):
        if name.startswith("scipy"):
            seen[0] += 1
            if seen[0] == nth:
                os.kill(os.getpid(), sig)  # delivered inside this import
        return None

from optcmp import cli
sys.meta_path.insert(0, SignalAtNthScipyImport())
sys.exit(cli.main(argv))
"""


@pytest.mark.parametrize("nth", [1, 8, 30])
@pytest.mark.parametrize("sig, status", [("SIGTERM", 143), ("SIGINT", 130)])
def test_signal_inside_a_lazy_import_leaves_outputs_complete_or_absent(nth, sig, status,
                                                                       tmp_path):
    import subprocess
    import sys

    from optcmp.comparison import Comparison

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out, report = tmp_path / "r.json", tmp_path / "r.html"
    argv = ["run", "--rows", "200", "--optimizers", "gd,lbfgs", "--backends", "numpy",
            "--max-iter", "20", "--no-progress", "--out", str(out), "--report", str(report)]
    env = {**os.environ, "PYTHONPATH": root, "OPTCMP_ACTIVITY_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", _IMPORT_DRIVER, str(nth), sig, *argv],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    if out.exists():  # complete, and marked partial
        assert Comparison.load(out).settings["partial"]
    if report.exists():
        assert "PARTIAL" in report.read_text(encoding="utf-8")
    assert out.exists() == report.exists(), proc.stderr
