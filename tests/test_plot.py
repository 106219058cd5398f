"""optcmp.analysis.plots: figures with the expected artists, safe file names, file output."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from _handmade import comparison, make_run, table_runs

pytest.importorskip("matplotlib")

from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from optcmp.analysis import plots as plot  # noqa: E402


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_visible()]


def test_import_optcmp_plot_does_not_import_matplotlib():
    code = ("import sys, optcmp, optcmp.analysis.plots, optcmp.analysis.report, optcmp.analysis.stats; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_convergence_median_band_and_target():
    fig = comparison().plot("convergence", x="time")
    assert isinstance(fig, Figure)
    (ax,) = _axes(fig)
    lines = ax.get_lines()
    assert len(lines) == 3  # median of A, median of B, the target
    assert lines[-1].get_ydata()[0] == pytest.approx(1e-6) and lines[-1].get_linestyle() == "--"
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bands) == 2  # one band per solver (3 repetitions each)
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    assert ax.get_xlabel().startswith("time")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # how many runs each median is over: 3, and 1 at the end (the others had stopped)
    assert labels == ["A (median of 3; 1 at the end)", "B (median of 3; 1 at the end)",
                      "target 1e-06"]


def test_convergence_median_values():
    # A's three runs reach 1e-6 at 1, 4 and 3 s and stop there; at t = 3.5 s only the 4 s run is
    # still going: the median is its value, 1e-5 (the stopped runs' last values not carried on)
    fig = plot.convergence([r for r in table_runs() if r.label == "A"], x="time", band=None)
    (ax,) = _axes(fig)
    (line,) = ax.get_lines()
    x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
    assert y[0] == pytest.approx(1.0)
    assert y[np.searchsorted(x, 3.5, side="right") - 1] == pytest.approx(1e-5)
    assert x.max() == 4.0  # the curve ends at the last observation
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]


@pytest.mark.parametrize("x, label", [("iterations", "iterations"),
                                      ("njev", "gradient evaluations"),
                                      ("nfev", "function evaluations")])
def test_convergence_other_axes(x, label):
    (ax,) = _axes(plot.convergence(table_runs(), x=x))
    assert ax.get_xlabel() == label


def test_convergence_loss_axis_and_errors():
    runs = [make_run("A", 1.0, fstar=None), make_run("A", 2.0, repeat=1, fstar=None)]
    (ax,) = _axes(plot.convergence(runs))
    assert ax.get_yscale() == "linear" and ax.get_ylabel() == "objective f"
    assert len(ax.get_lines()) == 1  # no target line without a tolerance
    with pytest.raises(ValueError, match="x must be one of"):
        plot.convergence(runs, x="weeks")
    with pytest.raises(ValueError, match="needs the optimum"):
        plot.convergence(runs, y="relative_suboptimality")


def test_convergence_one_panel_per_problem():
    runs = table_runs() + [make_run("A", 1.0, problem="Q"), make_run("B", 2.0, problem="Q")]
    fig = plot.convergence(runs)
    assert [ax.get_title() for ax in _axes(fig)] == ["P", "Q"]


def test_time_to_target_bars_censored_median_has_no_bar():
    runs = table_runs() + [make_run("C", None, repeat=r) for r in range(3)]
    (ax,) = _axes(comparison(runs).plot("time_to_target"))
    assert len(ax.patches) == 2  # A and B; C's median is censored
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths == [2.0, 3.0]  # medians of B and A
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == ["B  (2/3)", "A  (3/3)", "C  (0/3)"]
    assert any("median not reached" in t.get_text() for t in ax.texts)
    assert any(t.get_text() == ">" for t in ax.texts)  # B's CI is open above


@pytest.mark.parametrize("kind, scale", [("performance_profile", "log"),
                                         ("data_profile", "linear"), ("ecdf", "log")])
def test_profiles(kind, scale):
    (ax,) = _axes(comparison().plot(kind))
    assert len(ax.get_lines()) == 2
    assert ax.get_xscale() == scale
    assert ax.get_ylim() == pytest.approx((-0.02, 1.02))
    for line in ax.get_lines():
        y = np.asarray(line.get_ydata())
        assert np.all(np.diff(y) >= 0) and 0 <= y.min() and y.max() <= 1


def test_performance_profile_plot_values():
    (ax,) = _axes(comparison().plot("performance_profile"))
    a, b = ax.get_lines()
    assert a.get_ydata()[0] == pytest.approx(2 / 3) and b.get_ydata()[0] == pytest.approx(1 / 3)
    assert a.get_ydata()[-1] == pytest.approx(1.0) and b.get_ydata()[-1] == pytest.approx(2 / 3)


def test_plot_unknown_kind():
    with pytest.raises(ValueError, match="kind must be one of"):
        comparison().plot("pie")


@pytest.mark.parametrize("label", ["gd", "a/b", "a:b", "..", "", "CON", "x" * 300,
                                   "lr=1e-3 <α> $5", "../../etc/passwd", "tab\there"])
def test_safe_filename(label):
    name = plot.safe_filename(label)
    assert name and len(name) <= 100
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in name)
    assert not name.startswith((".", "-")) and name.split(".")[0].upper() != "CON"


def test_safe_filename_distinct_and_stable():
    assert plot.safe_filename("gd") == "gd"
    assert plot.safe_filename("a/b") != plot.safe_filename("a:b")
    assert plot.safe_filename("a/b") == plot.safe_filename("a/b")


def test_save_figure_formats(tmp_path):
    runs = [make_run("cost $5 <b>", 1.0), make_run("_hidden", 2.0)]  # mathtext / legend traps
    fig = plot.convergence(runs)
    (ax,) = _axes(fig)
    assert [t.get_text() for t in ax.get_legend().get_texts()][:2] == [r"cost \$5 <b>",
                                                                         "_hidden"]
    out = plot.save_figure(fig, tmp_path / "sub" / "conv", formats=["png", "svg", "pdf"])
    magic = {"png": b"\x89PNG", "svg": b"<?xml", "pdf": b"%PDF"}
    for path in out:
        with open(path, "rb") as fh:
            assert fh.read(5).startswith(magic[path.rsplit(".", 1)[1]])
    assert plot.save_figure(fig, tmp_path / "one.svg") == [str(tmp_path / "one.svg")]
    with pytest.raises(ValueError, match="cannot tell the format"):
        plot.save_figure(fig, tmp_path / "noext")
    with pytest.raises(ValueError, match="unknown format"):
        plot.save_figure(fig, tmp_path / "x", formats=["jpg"])


def test_save_plots_names(tmp_path):
    runs = [make_run(lab, t, repeat=r, problem="LR/A: test", spec={"problem": "x"})
            for lab, ts in (("A", (1.0, 2.0)), ("B", (3.0, 4.0))) for r, t in enumerate(ts)]
    files = comparison(runs).save_plots(tmp_path, formats=["svg"])
    names = sorted(p.rsplit("/", 1)[1] for p in files)
    stem = plot.safe_filename("LR/A: test")
    assert names == sorted(f"{stem}_{k}.svg" for k in (
        "convergence_time", "convergence_iterations", "convergence_njev", "time_to_target",
        "performance_profile", "data_profile", "ecdf"))


# ---------------------------------------------------------------- one style per optimizer/backend
OPTS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")
BACKS = ("numpy", "torch", "tensorflow")


def fifteen_runs():
    return [make_run(o, 0.1 * (i + 1) * (j + 1), backend=b)
            for i, o in enumerate(OPTS) for j, b in enumerate(BACKS)]


def _line_styles(ax):
    return {line.get_label(): (line.get_color(), line.get_linestyle(), line.get_marker())
            for line in ax.get_lines() if not line.get_label().startswith("_")}


def test_series_style_one_colour_per_optimizer_one_style_per_backend():
    styles = {(o, b): plot.series_style(o, b) for o in OPTS for b in BACKS}
    combos = {(s["color"], str(s["linestyle"]), s["marker"]) for s in styles.values()}
    assert len(combos) == 15  # 5 optimizers x 3 backends: 15 distinct series
    assert len({s["color"] for s in styles.values()}) == 5
    for o in OPTS:
        assert len({styles[o, b]["color"] for b in BACKS}) == 1
    for b in BACKS:
        assert len({styles[o, b]["linestyle"] for o in OPTS}) == 1
    assert styles["gd", "numpy"]["color"] == plot.OPTIMIZER_COLORS["gd"] == "#0072B2"
    # labels without a fixed colour get distinct colours, none of them a fixed one's
    labs = [f"gd(lr={k})" for k in range(12)]
    cols = [plot.series_style(lab, labels=labs)["color"] for lab in labs]
    assert len(set(cols)) == 12 and not set(cols) & set(plot.OPTIMIZER_COLORS.values())


def test_gd_has_the_same_colour_in_every_plot():
    runs = fifteen_runs()
    gd = plot.OPTIMIZER_COLORS["gd"]
    figs = {"convergence": plot.convergence(runs, x="iterations"),
            "performance_profile": plot.plot(runs, "performance_profile"),
            "data_profile": plot.plot(runs, "data_profile"),
            "ecdf": plot.plot(runs, "ecdf")}
    for kind, fig in figs.items():
        (ax,) = _axes(fig)
        styles = _line_styles(ax)
        series = {k: v for k, v in styles.items() if " / " in k}
        assert len(series) == 15, (kind, sorted(styles))
        assert len(set(series.values())) == 15, kind
        from matplotlib.colors import to_hex
        assert to_hex(styles["gd / torch"][0]).upper() == gd.upper(), kind
        assert styles["gd / torch"][1] == "--" and styles["gd / numpy"][1] == "-", kind
        # the legend sits outside the axes, right of the data
        leg = ax.get_legend()
        assert leg is not None and leg.get_bbox_to_anchor().x0 > ax.bbox.x1 - 1e-6, kind
    (ax,) = _axes(plot.time_to_target(runs))
    from matplotlib.colors import to_hex
    bars = {lab.get_text().split("  ")[0]: to_hex(p.get_facecolor()).upper()
            for lab, p in zip(ax.get_yticklabels(), ax.patches)}
    assert bars["gd / numpy"] == bars["gd / torch"] == gd.upper()
    hatches = {lab.get_text().split("  ")[0]: p.get_hatch()
               for lab, p in zip(ax.get_yticklabels(), ax.patches)}
    assert hatches["gd / torch"] == "//" and not hatches["gd / numpy"]


def test_mixed_minibatch_and_full_batch_iterations_use_epochs_or_a_log_axis():
    # 15 steps per epoch
    full = make_run("gd", 1.0).replace(hyperparameters={"learning_rate": 0.1}, n_samples=900)
    mini = make_run("sgd", 1.0, nit=14_000).replace(hyperparameters={"batch_size": 64},
                                                    n_samples=900)
    assert plot.epochs_per_iteration(mini) == pytest.approx(1 / 15)
    assert plot.epochs_per_iteration(full) == 1.0 and plot.mixes_batch_sizes([full, mini])
    (ax,) = _axes(plot.convergence([full, mini], x="iterations"))
    assert ax.get_xscale() == "log"
    (ax,) = _axes(plot.convergence([full, mini], x="epochs"))
    sgd_line = next(ln for ln in ax.get_lines() if ln.get_label() == "sgd")
    assert max(sgd_line.get_xdata()) == pytest.approx(12 / 15)  # 12 steps = 0.8 epochs
    (ax,) = _axes(plot.convergence([full, full], x="iterations"))
    assert ax.get_xscale() == "linear"
    names = {n: cap for n, cap, _ in plot.standard_plots([full, mini])}
    assert "epochs" in names["convergence_iterations"]


def test_ecdf_targets_include_the_comparisons_target():
    assert plot.ecdf_tols(1e-3) == (0.1, 0.01, 0.001)
    assert plot.ecdf_tols(None) == (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
    comp = comparison()
    tol = comp.target_tol()
    caps = {n: cap for n, cap, _ in plot.standard_plots(comp)}
    assert f"target {tol:g}" in caps["ecdf"] and f"... {tol:g}" in caps["ecdf"]
