"""The report shows what was measured, readably: convergence curves stop where their runs
stopped, the summary fits the page, the settings are tables, the verdict names the optimizer."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

import optcmp
from optcmp.cli import main

pytest.importorskip("matplotlib")


def _lines(fig):
    """The plotted median lines of the first panel, by label (the target line left out)."""
    return {ln.get_label(): ln for ln in fig.axes[0].get_lines()
            if not ln.get_label().startswith(("_", "target"))}


def _check_measured(comp: optcmp.Comparison) -> int:
    """Every plotted point of the convergence-in-iterations figure is the median of the runs
    still going there; nothing lies beyond the last iteration a run of its solver observed.
    Returns the number of points checked where some run had stopped already."""
    from optcmp.analysis.plots import convergence

    fig = convergence(comp, x="iterations")
    lines = _lines(fig)
    after_a_stop = 0
    for label in {r.label for r in comp.runs}:
        runs = [r for r in comp.runs if r.label == label and len(r.trace)]
        line = next(ln for name, ln in lines.items() if name.startswith(label + " ")
                    or name == label)
        xs, ys = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
        ends = [float(r.trace.iteration[-1]) for r in runs]
        assert xs.max() <= max(ends)
        for x, y in zip(xs, ys):
            going = [r for r in runs if r.trace.iteration[0] <= x <= r.trace.iteration[-1]]
            vals = []
            for r in going:
                it = np.asarray(r.trace.iteration, float)
                k = np.searchsorted(it, x, side="right") - 1
                vals.append(float(r.trace.relative_suboptimality(r.f0, r.fstar)[k]))
            assert y == pytest.approx(float(np.median(vals)), rel=1e-12), (label, x)
            after_a_stop += len(going) < len(runs)
    return after_a_stop


def test_a_curve_stops_where_its_run_stopped() -> None:
    """Three GD runs with budgets of 50, 100 and 200 iterations: the median line was drawn to
    iteration 200 from the two stopped runs' last values; beyond iteration 100 it is the
    one run still going, beyond 50 the median of two."""
    p = optcmp.problems.LinearRegression(n_samples=500, seed=0)
    runs = [optcmp.run(p, optcmp.gd, max_iter=n, threads=1).replace(repeat=i)
            for i, n in enumerate((50, 100, 200))]
    comp = optcmp.Comparison(runs)
    assert _check_measured(comp) > 0
    fig = optcmp.analysis.plots.convergence(comp, x="iterations")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[0] == "gd (median of 3; 1 at the end)"


@pytest.mark.slow
def test_the_reports_convergence_plot_draws_only_what_was_measured(tmp_path: Path) -> None:
    """optcmp run --rows 5000 --optimizers gd,diag_newton,lbfgs --backends numpy --repeats 5:
    the median of 5 drew GD flat at censored runs' last values for thousands of iterations no
    run spent there; every point is now the median of the runs still going."""
    out = tmp_path / "r.json"
    assert main(["run", "--rows", "5000", "--optimizers", "gd,diag_newton,lbfgs", "--backends",
                 "numpy", "--repeats", "5", "--no-progress", "--out", str(out)]) == 0
    comp = optcmp.Comparison.load(out)
    _check_measured(comp)
    page = comp.to_html(plots=False)
    assert _summary_width(page[page.index('id="summary"'):page.index('id="pairwise"')]) < 1200


def _summary_width(summary: str) -> float:
    """The summary table's width in px: the widest cell of each column in the report's 13 px
    font (DejaVu Sans, the fallback of its font list), with its 7 px padding each side and a
    border, and the 32 px colour key beside each optimizer."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    font = FontProperties(family="DejaVu Sans", size=13)
    rows = [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", r)
            for r in re.findall(r"<tr.*?</tr>", summary)]
    width = 0.0
    for cells in zip(*rows):
        texts = [html.unescape(re.sub(r"<[^>]+>", "", c)).replace("\u200b", "") for c in cells]
        key = 32 if any('class="key"' in c for c in cells) else 0
        width += max(TextToPath().get_text_width_height_descent(t, font, ismath=False)[0]
                     for t in texts) + 15 + key
    return width


def test_the_report_reads_at_1280_px(tmp_path: Path) -> None:
    """The summary had a problem column repeating the one problem (the table was cut at
    1,200 px), the settings were raw JSON and the verdict began "Lbfgs"."""
    p = optcmp.problems.LinearRegression(n_samples=500, seed=0)
    comp = optcmp.compare(p, ["gd", "diag_newton", "lbfgs"], max_iter=300, repeats=2,
                          progress=False, threads=1)
    page = comp.to_html(plots=False)
    summary = page[page.index('id="summary"'):page.index('id="pairwise"')]
    head = re.findall(r"<th>(.*?)</th>", summary)
    assert "problem" not in head and "dtype" not in head and "device" not in head
    assert "Every row: problem <code>linear_regression</code>; device <code>cpu</code>" in summary
    assert _summary_width(summary) < 1200  # the page's column: 1,280 px less the margins
    settings = page[page.index('id="settings"'):page.index('id="environment"')]
    assert "{" not in html.unescape(re.sub(r"<[^>]+>", "", settings))  # no raw JSON
    assert "RelativeSuboptimality(tol=1e-06) | MaxIter(n=300)" in html.unescape(settings)
    verdict = page[page.index('class="verdict"'):]
    assert re.search(r"<p>lbfgs on numpy reaches the target first", verdict)
