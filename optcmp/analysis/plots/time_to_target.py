"""Median time-to-target per solver as horizontal bars with their CIs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from optcmp.analysis.plots.canvas import Plottable, figure, runs_of, text
from optcmp.analysis.plots.styles import series_style
from optcmp.analysis.stats.summary import summarize

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _panel(ax: Axes, prow: list[dict[str, Any]], vary: list[str], all_labels: list[str],
           xscale: str | None, title: str) -> None:
    """Draw one problem's bars on ``ax``."""
    prow = sorted(prow, key=lambda r: (not np.isfinite(r["median_time"]), r["median_time"]))
    fin = [r["median_time"] for r in prow if np.isfinite(r["median_time"])]
    his = [r["ci_high"] for r in prow if np.isfinite(r["ci_high"])]
    edge = max(fin + his) * 1.25 if fin else 1.0
    scale = xscale or ("log" if fin and max(fin) > 100 * max(min(fin), 1e-300) else "linear")
    labels = []
    for i, r in enumerate(prow):
        name = " / ".join([r["optimizer"], *(str(r[k]) for k in vary)])
        labels.append(text(f"{name}  ({r['successes']}/{r['runs']})"))
        m = r["median_time"]
        if not np.isfinite(m):
            ax.text(0.02, i, f"median not reached ({r['successes']}/{r['runs']} runs met "
                    "the target)", transform=ax.get_yaxis_transform(), va="center",
                    fontsize="small", color="0.35")
            continue
        lo = r["ci_low"] if np.isfinite(r["ci_low"]) else m
        hi = r["ci_high"] if np.isfinite(r["ci_high"]) else edge
        st = series_style(str(r["optimizer"]), str(r["backend"]), labels=all_labels)
        ax.barh(i, m, color=st["color"], hatch=st["hatch"], edgecolor="white", alpha=0.85)
        ax.errorbar(m, i, xerr=[[max(m - lo, 0.0)], [max(hi - m, 0.0)]], fmt="none",
                    ecolor="k", capsize=4, lw=1)
        if not np.isfinite(r["ci_high"]):
            ax.text(edge, i, ">", ha="right", va="center", fontsize="large")
    ax.set_yticks(range(len(prow)), labels)
    ax.set_ylim(len(prow) - 0.4, -0.6)  # top to bottom, notes clear of the axis
    ax.set_xscale(scale)
    if scale == "linear":
        ax.set_xlim(0, edge)
    level = prow[0].get("ci_level", 0.95)
    ax.set_xlabel(f"median time-to-target (s), {level:.0%} CI")
    ax.set_title(text(title), fontsize="medium")
    ax.grid(True, axis="x", alpha=0.3)


def time_to_target(obj: Plottable, *, rows: Sequence[dict[str, Any]] | None = None,
                   xscale: str | None = None, title: str | None = None,
                   seed: int = 0) -> Figure:
    """Horizontal bars: median time-to-target per solver with its CI.

    Parameters
    ----------
    obj : ComparisonData or sequence of RunResult
    rows : sequence of dict, optional
        Rows of :func:`optcmp.analysis.stats.summary.summarize`.
    xscale : {"linear", "log"}, optional
        Default log when the medians span more than a factor 100.
    title : str, optional
    seed : int, default 0

    Returns
    -------
    matplotlib.figure.Figure
    """
    if rows is None:
        rows = summarize(runs_of(obj), warn=False, seed=seed)
    if not rows:
        raise ValueError("no runs to plot")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["problem"], []).append(row)
    vary = [k for k in ("backend", "device", "dtype") if len({r[k] for r in rows}) > 1]
    all_labels = sorted({str(r["optimizer"]) for r in rows})
    fig, axes = figure(len(groups), height=max(2.2, 0.45 * max(map(len, groups.values())) + 1.4))
    for ax, (prob, prow) in zip(axes, groups.items()):
        _panel(ax, prow, vary, all_labels, xscale, title or prob)
    return fig


__all__ = ["time_to_target"]
